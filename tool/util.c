/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

const char *tool_cmd_name;

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	if (tool_cmd_name)
		fprintf(stderr, "perfkit %s: %s", tool_cmd_name, kind);
	else
		fprintf(stderr, "perfkit: %s", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void tool_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void tool_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

bool tool_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
		if (argv[i][0] != '-')
			return false; /* a workload command starts here */
	}
	return false;
}

int tool_finish_stdout(int status)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	if (errno == EPIPE)
		return status; /* reader went away (| head): not our failure */
	tool_error("cannot write output: %s", strerror(errno));
	return 1;
}

static void tool_log(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level <= PK_LOG_WARN)
		tool_warn("%s", msg);
	else
		fprintf(stderr, "perfkit %s: %s\n", tool_cmd_name ? tool_cmd_name : "", msg);
}

/*
 * When every CPU is busy a reader thread only adds work (the hand-overs, the lines passed
 * between CPUs); with autogroup scheduling the process gets the same CPU share whatever
 * its number of threads. annotate on a 2-CPU machine at load 1.5: the thread cost 9-73 %
 * more CPU on every bench file and saved wall time on one (sys.data, 7 %); report at
 * load 4-6: the threaded report took 4-36 % longer than the single-threaded one.
 * Threads are used unless, besides this process, as many tasks are runnable as there
 * are CPUs.
 */
bool tool_threads_worthwhile(void)
{
	if (!tool_threads_allowed())
		return false;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 2)
		return true; /* (the library keeps one thread there anyway) */
	/* the tasks runnable now (the 4th field of /proc/loadavg, "running/total", this
	 * process included), not the 1-minute average: that lags a minute behind a build
	 * that just ended and would keep an idle machine's report on one thread */
	char buf[128] = "";
	FILE *f = fopen("/proc/loadavg", "re");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	double l1, l5, l15;
	long running, total;
	if (sscanf(buf, "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &running, &total) != 5 || running < 1)
		return true;
	return running - 1 < cpus; /* not every CPU taken by others (a passing kworker
				    * must not keep an idle machine on one thread) */
}

void tool_setup_log(int verbose)
{
	enum pk_log_level max = verbose >= 2 ? PK_LOG_DEBUG : verbose == 1 ? PK_LOG_INFO : PK_LOG_WARN;
	pk_set_log(tool_log, NULL, max);
}

bool tool_ensure_tracefs(void)
{
	struct stat st;
	if (pk_tracefs__root())
		return true;
	if (geteuid() != 0 || stat("/sys/kernel/tracing", &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0)
		return false;
	return pk_tracefs__root() != NULL;
}

void tool_json_str(FILE *f, const char *s)
{
	pk_json__write_str(f, s, 0);
}

bool tool_raise_nofile(void)
{
	struct rlimit rl;
	/* one fd per event x cpu x thread adds up quickly; perf raises the limit too */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return false;
	rlim_t old = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return false;
	tool_warn("too many open files at %llu: raised the soft RLIMIT_NOFILE to its hard "
		     "limit %llu and retrying", (unsigned long long)old,
		     (unsigned long long)rl.rlim_cur);
	return true;
}

/* ---- targets shared by stat and record ---- */

int tool_add_threads_of(pid_t pid, pid_t **tids, size_t *n, size_t *cap)
{
	struct pk_thread_map *t = pk_thread_map__new_pid(pid, NULL);
	if (!t)
		return -errno;
	for (int i = 0; i < pk_thread_map__nr(t); i++) {
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 256;
			pid_t *nt = realloc(*tids, ncap * sizeof(*nt));
			if (!nt) {
				pk_thread_map__free(t);
				return -ENOMEM;
			}
			*tids = nt;
			*cap = ncap;
		}
		(*tids)[(*n)++] = pk_thread_map__tid(t, i);
	}
	pk_thread_map__free(t);
	return 0;
}

struct pk_thread_map *tool_threads_of_pids(const char *list, bool whole_process)
{
	/* -p 12,34: every thread of each; -t 12,34: exactly these */
	struct pk_thread_map *ids = pk_thread_map__new_list(list), *all;
	pid_t *tids = NULL;
	size_t n = 0, cap = 0;
	if (!ids || !whole_process)
		return ids;
	for (int i = 0; i < pk_thread_map__nr(ids); i++) {
		int err = tool_add_threads_of(pk_thread_map__tid(ids, i), &tids, &n, &cap);
		if (err) {
			free(tids);
			pk_thread_map__free(ids);
			errno = -err;
			return NULL;
		}
	}
	pk_thread_map__free(ids);
	all = pk_thread_map__new_array(tids, (int)n);
	free(tids);
	return all;
}

/* Find where the perf_event cgroup hierarchy is mounted; open <mount>/<name>. */
int tool_open_cgroup(const char *name)
{
	char line[1024], path[PATH_MAX], mnt[512] = "";
	FILE *f = fopen("/proc/self/mounts", "re");
	int fd;
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char dev[256], dir[512], type[64], opts[512];
			if (sscanf(line, "%255s %511s %63s %511s", dev, dir, type, opts) != 4)
				continue;
			if (!strcmp(type, "cgroup2") && !mnt[0])
				snprintf(mnt, sizeof(mnt), "%s", dir);
			else if (!strcmp(type, "cgroup") && strstr(opts, "perf_event")) {
				snprintf(mnt, sizeof(mnt), "%s", dir);
				break;
			}
		}
		fclose(f);
	}
	if (!mnt[0]) {
		tool_error("cannot use cgroup '%s': no cgroup2 or perf_event cgroup hierarchy is "
			      "mounted (mount -t cgroup2 none /sys/fs/cgroup)", name);
		return -1;
	}
	while (*name == '/')
		name++;
	snprintf(path, sizeof(path), "%s/%s", mnt, name);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		tool_error("cannot open cgroup '%s' (%s): %s", name, path, strerror(errno));
	return fd;
}

/* ---- option values shared by the readers (report, script) ---- */

/* "a,b,c" -> strings, appended to *out */
int tool_split_list(const char *s, char ***out, size_t *nr)
{
	char *dup = strdup(s);
	if (!dup)
		return -ENOMEM;
	for (char *save = NULL, *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char **n = realloc(*out, (*nr + 1) * sizeof(*n));
		if (!n) {
			free(dup);
			return -ENOMEM;
		}
		*out = n;
		if (!(n[*nr] = strdup(t))) {
			free(dup);
			return -ENOMEM;
		}
		(*nr)++;
	}
	free(dup);
	return 0;
}

/* "1,3-5" -> ints */
int tool_parse_ints(const char *s, int32_t **out, size_t *nr)
{
	const char *p = s;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;
		if (end == p)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b - a > 65536)
				return -EINVAL;
		}
		for (long v = a; v <= b; v++) {
			int32_t *n = realloc(*out, (*nr + 1) * sizeof(*n));
			if (!n)
				return -ENOMEM;
			*out = n;
			(*out)[(*nr)++] = (int32_t)v;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	return 0;
}

/* perf's --time: "START,END" in seconds (either side may be empty) or "A%-B%" of the
 * file's sample time span; 0 for an open end */
int tool_parse_time_window(const char *s, struct pk_data_reader *rd, uint64_t *start,
			   uint64_t *end)
{
	*start = *end = 0;
	if (!s)
		return 0;
	const struct pk_data_env *e = pk_data_reader__env(rd);
	if (strchr(s, '%')) {
		double a, b;
		if (sscanf(s, "%lf%%-%lf%%", &a, &b) != 2 || a < 0 || b > 100 || a > b)
			return -EINVAL;
		if (!e->first_sample_time && !e->last_sample_time) {
			tool_error("--time with percentages needs the file's sample_time feature");
			return -EINVAL;
		}
		double span = (double)(e->last_sample_time - e->first_sample_time);
		*start = e->first_sample_time + (uint64_t)(span * a / 100.0);
		*end = e->first_sample_time + (uint64_t)(span * b / 100.0);
		if (!*start)
			*start = 1;
		return 0;
	}
	const char *comma = strchr(s, ',');
	if (!comma)
		return -EINVAL;
	if (comma > s)
		*start = (uint64_t)(strtod(s, NULL) * 1e9 + 0.5);
	if (comma[1])
		*end = (uint64_t)(strtod(comma + 1, NULL) * 1e9 + 0.5);
	return 0;
}

void tool_probe_check(const struct pk_event_list *events)
{
	/* a probed binary replaced meanwhile: its probe stayed on the old file */
	for (size_t i = 0; i < pk_event_list__count(events); i++) {
		const struct pk_event_spec *e = pk_event_list__get(events, i);
		int r = pk_event_spec__probe_check(e);
		if (r < 0)
			tool_warn("'%s': '%s' was %s while perfkit ran: the probe stayed on the "
				  "file as it was when perfkit started, so runs of the new file were "
				  "not seen; run perfkit again",
				  pk_event_spec__name(e), pk_event_spec__probe_file(e),
				  r == -ESTALE ? "replaced" : "removed");
	}
}

void tool_no_tracefs_error(const char *events)
{
	const char *dir = "/sys/kernel/tracing";
	struct stat st;
	if (stat(dir, &st) == 0 && access(dir, R_OK | X_OK) < 0 && geteuid() != 0)
		tool_error("the %s tracepoints are needed, but uid %d cannot read tracefs at %s "
			   "(%s; it is root-only by default). Fix: run as root, or as root `chmod "
			   "-R go+rX %s` (see perfkit check)", events, (int)geteuid(), dir,
			   strerror(errno), dir);
	else
		tool_error("the %s tracepoints are needed, but tracefs is not mounted. Fix: "
			   "`mount -t tracefs nodev %s` as root (perfkit mounts it itself when run "
			   "as root)", events, dir);
}
