/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <sched.h>
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"

static const char *const pk_err_text[PK_ERR_MAX - PK_ERR_BASE] = {
	[PK_ERR_PARSE - PK_ERR_BASE] = "Malformed text input",
	[PK_ERR_FORMAT - PK_ERR_BASE] = "Malformed binary input",
	[PK_ERR_NOPMU - PK_ERR_BASE] = "No such PMU or hardware counter on this machine",
	[PK_ERR_TRUNCATED - PK_ERR_BASE] = "Input ends inside a structure",
	[PK_ERR_EMPTY - PK_ERR_BASE] = "Empty input",
	[PK_ERR_NOT_PERF_DATA - PK_ERR_BASE] = "Not a perf.data file",
	[PK_ERR_BYTE_ORDER - PK_ERR_BASE] = "perf.data of the other byte order (not supported)",
};

PK_API const char *pk_strerror(int err)
{
	static __thread char buf[64];
	if (err < 0)
		err = -err;
	if (err >= PK_ERR_BASE && err < PK_ERR_MAX)
		return pk_err_text[err - PK_ERR_BASE];
	if (err == 0)
		return "Success";
	/* strerror_r (GNU flavour) returns a pointer that may or may not be buf */
	return strerror_r(err, buf, sizeof(buf));
}

ssize_t pk_read_prefixat(int dirfd, const char *path, char *buf, size_t max)
{
	struct stat st;
	size_t total = 0;
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		close(fd);
		return e;
	}
	/* procfs and sysfs report sizes 0 or 4096 whatever they hold: read until EOF */
	while (total < max) {
		ssize_t n = read(fd, buf + total, max - total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			close(fd);
			return e;
		}
		if (n == 0)
			break;
		total += (size_t)n;
	}
	close(fd);
	return (ssize_t)total;
}

int pk_online_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	int n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

/*
 * Huge pages for a big array, only when asked for (pk_config_opts.huge_pages). They cut page faults 512-fold, but
 * where the kernel hands freed huge pages back to a hypervisor (virtio-balloon free page
 * reporting works at 2 MiB granularity) a new huge page is often backed by the host on
 * first touch: measured in a Firecracker VM, touching 114 MB of fresh memory took 45-55 ms
 * in 4 KiB pages and 11-240 ms in huge pages, and the fp report with --children had a
 * median of 0.40 s with huge pages against 0.37 s without.
 */
void pk_thp_hint(void *p, size_t bytes)
{
	if (!pk_config_huge_pages())
		return;
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
	if (p && bytes >= (2u << 20) && e > a)
		madvise((void *)a, e - a, MADV_HUGEPAGE);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/*
 * Fault in the whole pages of fresh anonymous memory [p, p + bytes) with one call
 * (MADV_POPULATE_WRITE, Linux 5.14) instead of one page fault per page on first touch.
 * Measured in a PVM guest (Linux 6.18): 11 us per page fault against 0.5 us per page
 * populated. A no-op where the kernel does not know the advice.
 */
void pk_mem_prefault(void *p, size_t bytes)
{
	static atomic_bool unsupported;
	if (!p || atomic_load_explicit(&unsupported, memory_order_relaxed))
		return;
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
	if (e > a && madvise((void *)a, e - a, MADV_POPULATE_WRITE) && errno == EINVAL)
		atomic_store_explicit(&unsupported, true, memory_order_relaxed);
}

int pk_read_fd_alloc(int fd, size_t first, size_t max, char **out, size_t *len)
{
	size_t cap = PK_MAX(PK_MIN(first, max), (size_t)2), n = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	pk_thp_hint(buf, cap);
	for (;;) {
		if (cap - n < 2) {
			if (cap >= max) {
				free(buf);
				return -EFBIG;
			}
			size_t nc = PK_MIN(cap * 2, max);
			char *b = realloc(buf, nc);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
			cap = nc;
			pk_thp_hint(buf, cap);
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(buf);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

ssize_t pk_read_small_fileat(int dirfd, const char *path, char *buf, size_t max)
{
	if (max == 0)
		return -EINVAL;
	/* max bytes read means more than max - 1 (the NUL's room) in the file */
	ssize_t n = pk_read_prefixat(dirfd, path, buf, max);
	if (n < 0)
		return n;
	if ((size_t)n == max) {
		buf[max - 1] = '\0';
		return -EFBIG;
	}
	buf[n] = '\0';
	return n;
}

ssize_t pk_read_small_file(const char *path, char *buf, size_t max)
{
	return pk_read_small_fileat(AT_FDCWD, path, buf, max);
}

int pk_read_int_file(const char *path, long long *out)
{
	char buf[64], *end;
	ssize_t n = pk_read_small_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	char *s = pk_strtrim(buf);
	if (!*s)
		return -PK_ERR_PARSE;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (errno || *end)
		return -PK_ERR_PARSE;
	*out = v;
	return 0;
}

size_t pk_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	if (!len)
		return 0;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	return (size_t)n >= len ? len - 1 : (size_t)n;
}

char *pk_strtrim(char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

char *pk_strndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

int pk_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (len == 0)
		return -PK_ERR_PARSE;
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (len > 1 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < len; i++) {
		unsigned d;
		char c = s[i];
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -PK_ERR_PARSE;
		if (d >= base)
			return -PK_ERR_PARSE;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void pk_strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

char **pk_dir_list_sorted(int dirfd, const char *path, size_t max, bool dirs_only, size_t *n,
			  bool *truncated)
{
	int dfd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	char **v = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	*n = 0;
	if (truncated)
		*truncated = false;
	if (dfd < 0)
		return NULL;
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return NULL;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (dirs_only && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (*n >= max) {
			if (truncated)
				*truncated = true;
			break;
		}
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 32;
			char **nv = realloc(v, nc * sizeof(*v));
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		if (!(v[*n] = strdup(de->d_name)))
			break;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_strp);
	return v;
}

int pk_build_id_dir(const char *dir, char *out, size_t n)
{
	int len;

	if (!dir) {
		/* perf's default place, for the account we run as */
		struct passwd pw, *res = NULL;
		char buf[4096];
		if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &res) || !res ||
		    !res->pw_dir || res->pw_dir[0] != '/')
			return -ENOENT;
		len = snprintf(out, n, "%s/.debug", res->pw_dir);
		if (len <= 0 || (size_t)len >= n)
			return -ENAMETOOLONG;
		return 0;
	}
	if (!*dir)
		return -ENOENT;
	len = snprintf(out, n, "%s", dir);
	if (len <= 0 || (size_t)len >= n)
		return -ENAMETOOLONG;
	while (len > 1 && out[len - 1] == '/')
		out[--len] = 0;
	return 0;
}
