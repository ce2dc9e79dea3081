/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static char log_buf[16384];
static size_t log_len;

static void quiet_log(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	size_t n = strlen(msg);
	if (log_len + n + 2 < sizeof(log_buf)) {
		memcpy(log_buf + log_len, msg, n);
		log_len += n;
		log_buf[log_len++] = '\n';
		log_buf[log_len] = '\0';
	}
}

void pk_test_quiet_log(void)
{
	pk_set_log(quiet_log, NULL, PK_LOG_DEBUG);
}

const char *pk_test_log_text(void)
{
	return log_buf;
}

void pk_test_log_clear(void)
{
	log_len = 0;
	log_buf[0] = '\0';
}

static void mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	}
}

void pk_test_write_file(const char *root, const char *relpath, const char *content)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, relpath);
	mkdirs(path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
}

char *pk_test_mkdtemp(const char *prefix)
{
	char *p;
	assert_true(asprintf(&p, "%s.XXXXXX", prefix) > 0);
	assert_non_null(mkdtemp(p));
	char *abs = realpath(p, NULL);
	free(p);
	assert_non_null(abs);
	return abs;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void pk_test_rmtree(const char *path)
{
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

bool pk_test_can_perf(void)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_TASK_CLOCK, .exclude_kernel = 1,
				     .exclude_hv = 1 };
	int fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool pk_test_have_tracefs(void)
{
	return pk_tracefs__root() != NULL;
}

bool pk_test_is_root(void)
{
	return geteuid() == 0;
}

void pk_test_cpu_clock_attr(struct pk_attr *a, uint64_t period, uint64_t sample_type)
{
	memset(a, 0, sizeof(*a));
	a->attr.type = PERF_TYPE_SOFTWARE;
	a->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	a->attr.sample_period = period;
	a->attr.sample_type = sample_type;
	a->attr.sample_id_all = 1;
}

struct pk_dso *pk_test_self_dso(struct pk_machine **m)
{
	char self[PATH_MAX];
	assert_non_null(realpath("/proc/self/exe", self));
	*m = pk_machine__new(NULL);
	assert_non_null(*m);
	struct pk_dso *d = pk_machine__dso(*m, self);
	assert_non_null(d);
	return d;
}

int pk_test_sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
