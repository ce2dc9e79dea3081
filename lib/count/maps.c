/* SPDX-License-Identifier: MIT */
/* lib/count/maps.c - cpu maps, thread maps and CPU topology for counting. */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/count.h>

#define PK_MAX_CPUS 4096

struct pk_cpu_map {
	int nr;
	int cpus[];
};

struct pk_thread_map {
	int nr;
	struct {
		pid_t tid;
		char *comm;
	} t[];
};

static const char *skip_ws(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

static int parse_num(const char **sp, long *out)
{
	const char *s = *sp;
	long v = 0;
	if (!isdigit((unsigned char)*s))
		return -PK_ERR_PARSE;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (*s - '0');
		if (v >= PK_MAX_CPUS)
			return -ERANGE;
		s++;
	}
	*sp = s;
	*out = v;
	return 0;
}

PK_API int pk_cpu_list__parse(const char *list, int *cpus, size_t max)
{
	/* a bitmap keeps the result sorted and free of duplicates */
	uint64_t bits[PK_MAX_CPUS / 64] = { 0 };
	const char *s;
	int n = 0, err;

	if (!list)
		return pk_err(-EINVAL);
	s = skip_ws(list);
	if (!*s)
		return pk_err(-PK_ERR_PARSE);
	for (;;) {
		long lo, hi;
		if ((err = parse_num(&s, &lo)))
			return pk_err(err);
		hi = lo;
		if (*s == '-') {
			s++;
			if ((err = parse_num(&s, &hi)))
				return pk_err(err);
			if (hi < lo)
				return pk_err(-PK_ERR_PARSE);
		}
		for (long c = lo; c <= hi; c++)
			bits[c / 64] |= 1ULL << (c % 64);
		s = skip_ws(s);
		if (!*s)
			break;
		if (*s != ',')
			return pk_err(-PK_ERR_PARSE);
		s = skip_ws(s + 1);
	}
	for (int c = 0; c < PK_MAX_CPUS; c++) {
		if (!(bits[c / 64] & (1ULL << (c % 64))))
			continue;
		if ((size_t)n < max && cpus)
			cpus[n] = c;
		n++;
	}
	return n;
}

static struct pk_cpu_map *cpu_map_alloc(int nr)
{
	struct pk_cpu_map *m = calloc(1, sizeof(*m) + (size_t)nr * sizeof(int));
	if (!m)
		return pk_err_ptr(-ENOMEM);
	m->nr = nr;
	return m;
}

static struct pk_cpu_map *cpu_map_from_list(const char *list)
{
	int n = pk_cpu_list__parse(list, NULL, 0);
	struct pk_cpu_map *m;
	if (n < 0)
		return pk_err_ptr(n);
	if (!(m = cpu_map_alloc(n)))
		return NULL;
	pk_cpu_list__parse(list, m->cpus, (size_t)n);
	return m;
}

PK_API struct pk_cpu_map *pk_cpu_map__new_online(const char *sysfs_root)
{
	char path[PATH_MAX], buf[4096];
	ssize_t r;

	pk_snprintf(path, sizeof(path), "%s/devices/system/cpu/online",
		    sysfs_root ? sysfs_root : "/sys");
	r = pk_read_small_file(path, buf, sizeof(buf));
	if (r < 0) {
		/* no sysfs: fall back to what the C library knows */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		struct pk_cpu_map *m;
		if (n <= 0 || n > PK_MAX_CPUS)
			return pk_err_ptr((int)r);
		if (!(m = cpu_map_alloc((int)n)))
			return NULL;
		for (int i = 0; i < n; i++)
			m->cpus[i] = i;
		return m;
	}
	return cpu_map_from_list(buf);
}

PK_API struct pk_cpu_map *pk_cpu_map__new(const char *list)
{
	if (!list || !*skip_ws(list))
		return pk_cpu_map__new_online(NULL);
	return cpu_map_from_list(list);
}

PK_API struct pk_cpu_map *pk_cpu_map__new_dummy(void)
{
	struct pk_cpu_map *m = cpu_map_alloc(1);
	if (m)
		m->cpus[0] = -1;
	return m;
}

PK_API void pk_cpu_map__free(struct pk_cpu_map *map)
{
	free(map);
}

PK_API int pk_cpu_map__nr(const struct pk_cpu_map *map)
{
	return map ? map->nr : 0;
}

PK_API int pk_cpu_map__cpu(const struct pk_cpu_map *map, int idx)
{
	if (!map || idx < 0 || idx >= map->nr)
		return -1;
	return map->cpus[idx];
}

/* ---- thread maps ---- */

static struct pk_thread_map *thread_map_alloc(int nr)
{
	struct pk_thread_map *m = calloc(1, sizeof(*m) + (size_t)nr * sizeof(m->t[0]));
	if (!m)
		return pk_err_ptr(-ENOMEM);
	m->nr = nr;
	return m;
}

PK_API struct pk_thread_map *pk_thread_map__new_dummy(void)
{
	struct pk_thread_map *m = thread_map_alloc(1);
	if (m)
		m->t[0].tid = -1;
	return m;
}

PK_API struct pk_thread_map *pk_thread_map__new_array(const pid_t *tids, int nr)
{
	struct pk_thread_map *m;
	if (nr <= 0 || !tids)
		return pk_err_ptr(-EINVAL);
	if (!(m = thread_map_alloc(nr)))
		return NULL;
	for (int i = 0; i < nr; i++)
		m->t[i].tid = tids[i];
	return m;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

PK_API struct pk_thread_map *pk_thread_map__new_pid(pid_t pid, const char *procfs_root)
{
	char path[PATH_MAX];
	struct pk_thread_map *m;
	struct dirent *de;
	pid_t *tids = NULL;
	size_t n = 0, cap = 0;
	DIR *d;

	if (pid <= 0)
		return pk_err_ptr(-EINVAL);
	pk_snprintf(path, sizeof(path), "%s/%d/task", procfs_root ? procfs_root : "/proc", (int)pid);
	if (!(d = opendir(path)))
		return pk_err_ptr(errno == ENOENT ? -ESRCH : -errno);
	while ((de = readdir(d))) {
		uint64_t v;
		if (pk_parse_u64(de->d_name, strlen(de->d_name), &v) || v == 0 || v > INT_MAX)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			pid_t *nt = realloc(tids, ncap * sizeof(*nt));
			if (!nt) {
				free(tids);
				closedir(d);
				return pk_err_ptr(-ENOMEM);
			}
			tids = nt;
			cap = ncap;
		}
		tids[n++] = (pid_t)v;
	}
	closedir(d);
	if (!n) {
		free(tids);
		return pk_err_ptr(-ESRCH);
	}
	/* the main thread (tid == pid) first, the rest ascending, as perf lists them */
	qsort(tids, n, sizeof(*tids), cmp_pid);
	m = pk_thread_map__new_array(tids, (int)n);
	free(tids);
	return m;
}

PK_API struct pk_thread_map *pk_thread_map__new_list(const char *list)
{
	pid_t tids[1024];
	int n = 0;
	const char *s = list;

	if (!s)
		return pk_err_ptr(-EINVAL);
	for (;;) {
		const char *start;
		uint64_t v;
		s = skip_ws(s);
		start = s;
		while (isdigit((unsigned char)*s))
			s++;
		if (s == start || pk_parse_u64(start, (size_t)(s - start), &v) || v == 0 ||
		    v > INT_MAX)
			return pk_err_ptr(-PK_ERR_PARSE);
		if (n == (int)PK_ARRAY_SIZE(tids))
			return pk_err_ptr(-E2BIG);
		tids[n++] = (pid_t)v;
		s = skip_ws(s);
		if (!*s)
			break;
		if (*s != ',')
			return pk_err_ptr(-PK_ERR_PARSE);
		s++;
	}
	return pk_thread_map__new_array(tids, n);
}

PK_API void pk_thread_map__free(struct pk_thread_map *map)
{
	if (!map)
		return;
	for (int i = 0; i < map->nr; i++)
		free(map->t[i].comm);
	free(map);
}

PK_API int pk_thread_map__nr(const struct pk_thread_map *map)
{
	return map ? map->nr : 0;
}

PK_API pid_t pk_thread_map__tid(const struct pk_thread_map *map, int idx)
{
	if (!map || idx < 0 || idx >= map->nr)
		return -1;
	return map->t[idx].tid;
}

PK_API const char *pk_thread_map__comm(struct pk_thread_map *map, int idx)
{
	char path[64], buf[64];
	if (!map || idx < 0 || idx >= map->nr)
		return "?";
	if (map->t[idx].comm)
		return map->t[idx].comm;
	pk_snprintf(path, sizeof(path), "/proc/%d/comm", (int)map->t[idx].tid);
	if (map->t[idx].tid <= 0 || pk_read_small_file(path, buf, sizeof(buf)) < 0)
		return "?";
	map->t[idx].comm = strdup(pk_strtrim(buf));
	return map->t[idx].comm ? map->t[idx].comm : "?";
}

/* ---- topology ---- */

static int topo_value(const char *root, int cpu, const char *file, int def)
{
	char path[PATH_MAX];
	long long v;
	pk_snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology/%s", root, cpu, file);
	if (pk_read_int_file(path, &v) < 0 || v < INT_MIN || v > INT_MAX)
		return def;
	return (int)v;
}

PK_API int pk_cpu_topology__read(int cpu, struct pk_cpu_topology *out, const char *sysfs_root)
{
	const char *root = sysfs_root ? sysfs_root : "/sys";
	if (!out || cpu < 0)
		return pk_err(-EINVAL);
	out->core = topo_value(root, cpu, "core_id", -1);
	out->socket = topo_value(root, cpu, "physical_package_id", -1);
	out->die = topo_value(root, cpu, "die_id", 0);
	if (out->die < 0)
		out->die = 0;
	if (out->core < 0 && out->socket < 0)
		return pk_err(-ENOENT);
	return 0;
}
