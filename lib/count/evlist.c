/* SPDX-License-Identifier: MIT */
/*
 * lib/count/evlist.c - evsel/evlist: open over cpu_map x thread_map with groups wired by
 * group_fd, group reads that return every member, multiplex scaling, aggregation.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "internal.h"
#include <perfkit/count.h>
#include <perfkit/event.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif
#define TIMES (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

struct pk_evsel {
	struct pk_attr attr;
	char *name;
	char *name_before_fallback;   /* kept alive: callers may hold the old pk_evsel__name */
	char *unit;
	double scale;
	unsigned flags;
	struct pk_evsel *leader;      /* as configured (self when ungrouped) */
	struct pk_evsel *eff_leader;  /* as opened: self if the group was broken up */
	struct pk_evlist *evlist;
	bool unsupported;
	bool opened;
	int cgroup_fd1;               /* own cgroup dir fd + 1 (0: the open's); borrowed */
	uint64_t open_rf;             /* read_format the fds were opened with */
	int nr_open_members;          /* leaders: opened members including the leader */
	int ncpus, nthreads;
	int *fds;                     /* [cpu][thread] */
	uint64_t *ids;
	struct pk_count_value *cur, *prev;
};

struct pk_evlist {
	struct pk_evsel **ev;
	int nr, cap;
	struct pk_cpu_map *cpus;
	struct pk_thread_map *threads;
	bool open;
	/* what failed in the last open */
	const struct pk_evsel *fail_ev;
	pid_t fail_pid;
	int fail_cpu, fail_group_fd;
	struct perf_event_attr fail_attr;
	/* topology per cpu index, loaded on first CORE/SOCKET use */
	struct pk_cpu_topology *topo;
	int *node;              /* NUMA node per cpu index, with topo */
	/* scratch for group reads */
	void *rbuf;
	size_t rbuf_len;
	struct pk_count_value *rvals;
	size_t rvals_len;
};

/* ---- scaling ---- */

PK_API enum pk_count_status pk_count__scale(uint64_t val, uint64_t ena, uint64_t run,
					    struct pk_count *out)
{
	struct pk_count c = { .raw = val, .ena = ena, .run = run };

	if (run == 0) {
		c.val = 0;
		c.status = PK_COUNT_NOT_COUNTED;
		c.running_pct = 0;
	} else if (ena <= run) {
		/* ena < run cannot happen for one counter; treat it as "ran all the time" */
		c.val = val;
		c.status = PK_COUNT_OK;
		c.running_pct = 100.0;
	} else {
		unsigned __int128 x = (unsigned __int128)val * ena + run / 2;
		x /= run;
		c.val = x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
		c.status = PK_COUNT_SCALED;
		c.running_pct = 100.0 * (double)run / (double)ena;
	}
	if (out)
		*out = c;
	return c.status;
}

/* ---- evsel ---- */

PK_API struct pk_evsel *pk_evsel__new(const struct pk_attr *attr, const char *name)
{
	struct pk_evsel *ev;
	if (!attr)
		return pk_err_ptr(-EINVAL);
	if (!(ev = calloc(1, sizeof(*ev))))
		return pk_err_ptr(-ENOMEM);
	ev->attr = *attr;
	ev->name = strdup(name ? name : "event");
	if (!ev->name) {
		free(ev);
		return pk_err_ptr(-ENOMEM);
	}
	ev->scale = 1.0;
	ev->leader = ev;
	ev->eff_leader = ev;
	return ev;
}

static void evsel_close(struct pk_evsel *ev)
{
	int n = ev->ncpus * ev->nthreads;
	for (int i = 0; ev->fds && i < n; i++) {
		if (ev->fds[i] >= 0)
			close(ev->fds[i]);
		ev->fds[i] = -1;
	}
	ev->opened = false;
}

static void evsel_free_arrays(struct pk_evsel *ev)
{
	evsel_close(ev);
	free(ev->fds);
	free(ev->ids);
	free(ev->cur);
	free(ev->prev);
	ev->fds = NULL;
	ev->ids = NULL;
	ev->cur = ev->prev = NULL;
	ev->ncpus = ev->nthreads = 0;
}

PK_API void pk_evsel__free(struct pk_evsel *ev)
{
	if (!ev)
		return;
	evsel_free_arrays(ev);
	free(ev->name);
	free(ev->name_before_fallback);
	free(ev->unit);
	free(ev);
}

PK_API const char *pk_evsel__name(const struct pk_evsel *ev)
{
	return ev ? ev->name : NULL;
}

PK_API struct pk_attr *pk_evsel__attr(struct pk_evsel *ev)
{
	return ev ? &ev->attr : NULL;
}

PK_API int pk_evsel__set_leader(struct pk_evsel *ev, struct pk_evsel *leader)
{
	if (!ev || !leader || leader->leader != leader || ev->opened)
		return pk_err(-EINVAL);
	if (ev->evlist && leader->evlist != ev->evlist)
		return pk_err(-EINVAL);
	ev->leader = leader;
	ev->eff_leader = leader;
	return 0;
}

PK_API struct pk_evsel *pk_evsel__leader(const struct pk_evsel *ev)
{
	return ev ? ev->leader : NULL;
}

PK_API void pk_evsel__set_flags(struct pk_evsel *ev, unsigned flags)
{
	if (ev)
		ev->flags = flags;
}

PK_API void pk_evsel__set_scale(struct pk_evsel *ev, double scale, const char *unit)
{
	if (!ev)
		return;
	ev->scale = scale;
	free(ev->unit);
	ev->unit = unit ? strdup(unit) : NULL;
}

PK_API int pk_evsel__set_cgroup(struct pk_evsel *ev, int cgroup_fd)
{
	if (!ev || cgroup_fd < -1 || cgroup_fd == INT_MAX || ev->opened)
		return -EINVAL;
	ev->cgroup_fd1 = cgroup_fd + 1;
	return 0;
}

PK_API double pk_evsel__scale(const struct pk_evsel *ev)
{
	return ev ? ev->scale : 1.0;
}

PK_API const char *pk_evsel__unit(const struct pk_evsel *ev)
{
	return ev ? ev->unit : NULL;
}

PK_API bool pk_evsel__supported(const struct pk_evsel *ev)
{
	return ev && !ev->unsupported;
}

static int slot(const struct pk_evsel *ev, int ci, int ti)
{
	if (!ev || !ev->fds || ci < 0 || ti < 0 || ci >= ev->ncpus || ti >= ev->nthreads)
		return -1;
	return ci * ev->nthreads + ti;
}

PK_API int pk_evsel__fd(const struct pk_evsel *ev, int ci, int ti)
{
	int s = slot(ev, ci, ti);
	return s < 0 ? -1 : ev->fds[s];
}

PK_API uint64_t pk_evsel__id(const struct pk_evsel *ev, int ci, int ti)
{
	int s = slot(ev, ci, ti);
	return s < 0 ? 0 : ev->ids[s];
}

PK_API int pk_evsel__counts(const struct pk_evsel *ev, int ci, int ti, struct pk_count_value *out)
{
	int s = slot(ev, ci, ti);
	if (s < 0 || !out)
		return pk_err(-EINVAL);
	*out = ev->cur[s];
	return 0;
}

/* ---- evlist ---- */

PK_API struct pk_evlist *pk_evlist__new(void)
{
	struct pk_evlist *el = calloc(1, sizeof(*el));
	if (!el)
		return pk_err_ptr(-ENOMEM);
	return el;
}

PK_API void pk_evlist__close(struct pk_evlist *el)
{
	if (!el)
		return;
	for (int i = 0; i < el->nr; i++)
		evsel_close(el->ev[i]);
	el->open = false;
}

PK_API void pk_evlist__free(struct pk_evlist *el)
{
	if (!el)
		return;
	for (int i = 0; i < el->nr; i++)
		pk_evsel__free(el->ev[i]);
	free(el->ev);
	pk_cpu_map__free(el->cpus);
	pk_thread_map__free(el->threads);
	free(el->topo);
	free(el->node);
	free(el->rbuf);
	free(el->rvals);
	free(el);
}

PK_API int pk_evlist__add(struct pk_evlist *el, struct pk_evsel *ev)
{
	if (!el || !ev || ev->evlist || el->open) {
		if (ev && !ev->evlist)
			pk_evsel__free(ev);
		return pk_err(el && el->open ? -EBUSY : -EINVAL);
	}
	if (ev->leader != ev && ev->leader->evlist != el) {
		pk_evsel__free(ev);
		return pk_err(-EINVAL);
	}
	if (el->nr == el->cap) {
		int ncap = el->cap ? el->cap * 2 : 8;
		struct pk_evsel **n = realloc(el->ev, (size_t)ncap * sizeof(*n));
		if (!n) {
			pk_evsel__free(ev);
			return pk_err(-ENOMEM);
		}
		el->ev = n;
		el->cap = ncap;
	}
	ev->evlist = el;
	el->ev[el->nr++] = ev;
	return 0;
}

PK_API int pk_evlist__nr_evsels(const struct pk_evlist *el)
{
	return el ? el->nr : 0;
}

PK_API struct pk_evsel *pk_evlist__next(const struct pk_evlist *el, const struct pk_evsel *prev)
{
	if (!el || !el->nr)
		return NULL;
	if (!prev)
		return el->ev[0];
	for (int i = 0; i < el->nr - 1; i++)
		if (el->ev[i] == prev)
			return el->ev[i + 1];
	return NULL;
}

PK_API int pk_evlist__set_maps(struct pk_evlist *el, struct pk_cpu_map *cpus,
			       struct pk_thread_map *threads)
{
	if (!el || el->open) {
		pk_cpu_map__free(cpus);
		pk_thread_map__free(threads);
		return pk_err(el ? -EBUSY : -EINVAL);
	}
	if (!cpus)
		cpus = pk_cpu_map__new_dummy();
	if (!threads)
		threads = pk_thread_map__new_dummy();
	if (!cpus || !threads) {
		pk_cpu_map__free(cpus);
		pk_thread_map__free(threads);
		return pk_err(-ENOMEM);
	}
	pk_cpu_map__free(el->cpus);
	pk_thread_map__free(el->threads);
	free(el->topo);
	free(el->node);
	el->topo = NULL;
	el->node = NULL;
	el->cpus = cpus;
	el->threads = threads;
	return 0;
}

PK_API struct pk_cpu_map *pk_evlist__cpus(const struct pk_evlist *el)
{
	return el ? el->cpus : NULL;
}

PK_API struct pk_thread_map *pk_evlist__threads(const struct pk_evlist *el)
{
	return el ? el->threads : NULL;
}

static int evsel_alloc(struct pk_evsel *ev, int ncpus, int nthreads)
{
	size_t n = (size_t)ncpus * (size_t)nthreads;
	evsel_free_arrays(ev);
	ev->fds = malloc(n * sizeof(*ev->fds));
	ev->ids = calloc(n, sizeof(*ev->ids));
	ev->cur = calloc(n, sizeof(*ev->cur));
	ev->prev = calloc(n, sizeof(*ev->prev));
	if (!ev->fds || !ev->ids || !ev->cur || !ev->prev) {
		evsel_free_arrays(ev);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ev->fds[i] = -1;
	ev->ncpus = ncpus;
	ev->nthreads = nthreads;
	return 0;
}

/* Errors meaning "this event does not exist on this machine" for hardware-ish events. */
static bool unsupported_error(const struct pk_evsel *ev, int err)
{
	uint32_t type = ev->attr.attr.type;
	if (err != -ENOENT && err != -EOPNOTSUPP && err != -ENODEV && err != -ENXIO)
		return false;
	return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE ||
	       type == PERF_TYPE_RAW || type >= PERF_TYPE_MAX;
}

/* Effective leader: a member whose leader was skipped or whose weak group broke counts alone. */
static struct pk_evsel *effective_leader(struct pk_evsel *ev)
{
	struct pk_evsel *l = ev->eff_leader;
	if (l != ev && l->unsupported)
		return ev;
	return l;
}

static int group_size(const struct pk_evlist *el, const struct pk_evsel *leader)
{
	int n = 0;
	for (int i = 0; i < el->nr; i++)
		if (el->ev[i]->eff_leader == leader && !el->ev[i]->unsupported)
			n++;
	return n;
}

/* Make `ev` count user space only and mark its name the way perf does ("task-clock:u"). */
static int fallback_user_only(struct pk_evsel *ev)
{
	size_t n = strlen(ev->name);
	char *name = malloc(n + 3);

	if (!name)
		return -ENOMEM;
	memcpy(name, ev->name, n);
	/* an existing modifier list gets the letter appended; otherwise start one */
	if (strchr(ev->name, ':') && !strchr(ev->name, '/'))
		memcpy(name + n, "u", 2);
	else
		memcpy(name + n, ":u", 3);
	pk_info("%s: kernel-space counting refused (perf_event_paranoid); counting user space "
		"only as %s", ev->name, name);
	free(ev->name_before_fallback);
	ev->name_before_fallback = ev->name;
	ev->name = name;
	ev->attr.attr.exclude_kernel = 1;
	ev->attr.attr.exclude_hv = 1;
	return 0;
}

static int open_all(struct pk_evlist *el, const struct pk_evlist_open_opts *opts, bool *retry)
{
	int ncpus = pk_cpu_map__nr(el->cpus), nthreads = pk_thread_map__nr(el->threads);
	bool inherit = PK_OPTS_GET(opts, inherit, false);
	bool on_exec = PK_OPTS_GET(opts, enable_on_exec, false);
	bool enabled = PK_OPTS_GET(opts, start_enabled, false);
	bool skip = PK_OPTS_GET(opts, skip_unsupported, false);
	bool user_fallback = PK_OPTS_GET(opts, user_fallback, false);
	bool skip_missing = PK_OPTS_GET(opts, skip_missing_threads, false);
	bool sampling = PK_OPTS_GET(opts, sampling, false);
	int cgroup_fd = opts ? PK_OPTS_GET(opts, cgroup_fd, -1) : -1;
	pk_open_cb cb = PK_OPTS_GET(opts, on_open, NULL);
	void *ctx = PK_OPTS_GET(opts, ctx, NULL);

	*retry = false;
	for (int ci = 0; ci < ncpus; ci++) {
		for (int ti = 0; ti < nthreads; ti++) {
			for (int i = 0; i < el->nr; i++) {
				struct pk_evsel *ev = el->ev[i];
				int cg = ev->cgroup_fd1 ? ev->cgroup_fd1 - 1 : cgroup_fd;
				struct pk_evsel *leader;
				struct pk_attr a;
				pid_t pid = pk_thread_map__tid(el->threads, ti);
				int cpu = pk_cpu_map__cpu(el->cpus, ci);
				int group_fd = -1, fd, s = ci * nthreads + ti;
				unsigned long flags = 0;
				bool is_leader;

				if (ev->unsupported)
					continue;
				/* members whose leader was skipped stand alone from now on */
				if (ev->eff_leader != ev && ev->eff_leader->unsupported)
					ev->eff_leader = ev;
				leader = effective_leader(ev);
				is_leader = leader == ev;
				a = ev->attr;
				a.attr.read_format |= (sampling ? 0 : TIMES) | PERF_FORMAT_ID;
				if (group_size(el, leader) > 1 &&
				    (!sampling || (a.attr.sample_type & PERF_SAMPLE_READ)))
					a.attr.read_format |= PERF_FORMAT_GROUP;
				a.attr.disabled = is_leader && !enabled;
				a.attr.enable_on_exec = is_leader && on_exec;
				if (cg >= 0) {
					pid = cg;
					flags |= PERF_FLAG_PID_CGROUP;
				} else if (pid >= 0 && inherit && !(ev->flags & PK_EVF_NO_INHERIT)) {
					a.attr.inherit = 1;
				}
				if (!is_leader)
					group_fd = leader->fds[s];
				fd = pk_sys_perf_event_open(&a.attr, pid, cpu, group_fd, flags);
				if (cb)
					cb(ev, &a.attr, pid, cpu, group_fd, flags, fd, ctx);
				if (fd >= 0) {
					ev->fds[s] = fd;
					ev->open_rf = a.attr.read_format;
					ev->opened = true;
					if (pk_ioc_id(fd, &ev->ids[s]) < 0)
						ev->ids[s] = 0;
					continue;
				}
				if (skip_missing && fd == -ESRCH && pid > 0 && cg < 0) {
					/* the thread is gone: none of the events (the rest of a
					 * group included) is opened on it */
					pk_debug("thread %d is gone: not counted", (int)pid);
					break;
				}
				if (skip && s == 0 && unsupported_error(ev, fd)) {
					pk_debug("%s: not supported here (%s), skipped", ev->name,
						 pk_strerror(fd));
					ev->unsupported = true;
					continue;
				}
				if (user_fallback && (fd == -EACCES || fd == -EPERM) &&
				    !ev->attr.attr.exclude_kernel && !ev->attr.attr.exclude_user &&
				    cg < 0 && pid >= 0) {
					if (fallback_user_only(ev) == 0) {
						*retry = true;
						return fd;
					}
				}
				if (!is_leader && (leader->flags & PK_EVF_WEAK_GROUP)) {
					/* weak group: break it up and start over */
					pk_info("weak group of %s failed (%s): reopening its events separately",
						leader->name, pk_strerror(fd));
					for (int j = 0; j < el->nr; j++)
						if (el->ev[j]->eff_leader == leader)
							el->ev[j]->eff_leader = el->ev[j];
					*retry = true;
					return fd;
				}
				el->fail_ev = ev;
				el->fail_pid = pid;
				el->fail_cpu = cpu;
				el->fail_group_fd = group_fd;
				el->fail_attr = a.attr;
				return fd;
			}
		}
	}
	return 0;
}

PK_API int pk_evlist__open(struct pk_evlist *el, const struct pk_evlist_open_opts *opts)
{
	int ncpus, nthreads, err;
	bool retry;

	if (!el || !PK_OPTS_VALID(opts, pk_evlist_open_opts))
		return pk_err(-EINVAL);
	if (el->open)
		return pk_err(-EBUSY);
	if (!el->cpus || !el->threads) {
		err = pk_evlist__set_maps(el, el->cpus, el->threads);
		if (err)
			return err;
	}
	ncpus = pk_cpu_map__nr(el->cpus);
	nthreads = pk_thread_map__nr(el->threads);
	if (ncpus <= 0 || nthreads <= 0 || !el->nr)
		return pk_err(-EINVAL);
	el->fail_ev = NULL;
	for (int i = 0; i < el->nr; i++) {
		el->ev[i]->unsupported = false;
		el->ev[i]->eff_leader = el->ev[i]->leader;
		if ((err = evsel_alloc(el->ev[i], ncpus, nthreads))) {
			pk_evlist__close(el);
			return pk_err(err);
		}
	}
	do {
		err = open_all(el, opts, &retry);
		if (err)
			pk_evlist__close(el);
	} while (err && retry);
	if (err)
		return pk_err(err);
	for (int i = 0; i < el->nr; i++) {
		struct pk_evsel *ev = el->ev[i];
		ev->eff_leader = effective_leader(ev);
		ev->nr_open_members = ev->eff_leader == ev ? group_size(el, ev) : 0;
	}
	el->open = true;
	return 0;
}

PK_API const struct pk_evsel *pk_evlist__open_failure(const struct pk_evlist *el, pid_t *pid,
						      int *cpu, int *group_fd,
						      struct perf_event_attr *attr)
{
	if (!el || !el->fail_ev)
		return NULL;
	if (pid)
		*pid = el->fail_pid;
	if (cpu)
		*cpu = el->fail_cpu;
	if (group_fd)
		*group_fd = el->fail_group_fd;
	if (attr)
		*attr = el->fail_attr;
	return el->fail_ev;
}

typedef int (*ioc_fn)(int fd, bool group);

static int for_each_leader_fd(struct pk_evlist *el, ioc_fn fn)
{
	int first = 0;
	if (!el)
		return pk_err(-EINVAL);
	for (int i = 0; i < el->nr; i++) {
		struct pk_evsel *ev = el->ev[i];
		if (ev->unsupported || ev->eff_leader != ev || !ev->fds)
			continue;
		for (int s = 0; s < ev->ncpus * ev->nthreads; s++) {
			int r;
			if (ev->fds[s] < 0)
				continue;
			r = fn(ev->fds[s], true);
			if (r < 0 && !first)
				first = r;
		}
	}
	return first ? pk_err(first) : 0;
}

PK_API int pk_evlist__enable(struct pk_evlist *el)
{
	return for_each_leader_fd(el, pk_ioc_enable);
}

PK_API int pk_evlist__disable(struct pk_evlist *el)
{
	return for_each_leader_fd(el, pk_ioc_disable);
}

PK_API int pk_evlist__reset(struct pk_evlist *el)
{
	return for_each_leader_fd(el, pk_ioc_reset);
}

static int scratch(struct pk_evlist *el, size_t len, size_t nvals)
{
	if (len > el->rbuf_len) {
		void *n = realloc(el->rbuf, len);
		if (!n)
			return -ENOMEM;
		el->rbuf = n;
		el->rbuf_len = len;
	}
	if (nvals > el->rvals_len) {
		struct pk_count_value *n = realloc(el->rvals, nvals * sizeof(*n));
		if (!n)
			return -ENOMEM;
		el->rvals = n;
		el->rvals_len = nvals;
	}
	return 0;
}

static ssize_t read_fd(int fd, void *buf, size_t len)
{
	ssize_t r;
	do
		r = read(fd, buf, len);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* One read(2) of a group leader; every member's value is placed by its id. */
static int read_group(struct pk_evlist *el, struct pk_evsel *leader, int s)
{
	uint64_t rf = leader->open_rf;
	/* room for members added behind our back is not needed: nr is what we opened */
	size_t nmem = (size_t)leader->nr_open_members;
	size_t len = pk_read_format__size(rf, nmem);
	ssize_t r;
	int n, err;

	if ((err = scratch(el, len, nmem)))
		return err;
	r = read_fd(leader->fds[s], el->rbuf, len);
	if (r < 0)
		return (int)r;
	if (r == 0) {
		/* event in error state (e.g. pinned and unschedulable): counts as not run */
		for (int i = 0; i < el->nr; i++)
			if (el->ev[i]->eff_leader == leader && !el->ev[i]->unsupported)
				memset(&el->ev[i]->cur[s], 0, sizeof(el->ev[i]->cur[s]));
		return 0;
	}
	n = pk_read_format__decode(rf, el->rbuf, (size_t)r, el->rvals, nmem, NULL);
	if (n < 0)
		return n;
	for (int k = 0; k < n && (size_t)k < nmem; k++) {
		for (int i = 0; i < el->nr; i++) {
			struct pk_evsel *ev = el->ev[i];
			if (ev->eff_leader != leader || ev->unsupported || ev->ids[s] != el->rvals[k].id)
				continue;
			ev->cur[s] = el->rvals[k];
			break;
		}
	}
	return 0;
}

static int read_single(struct pk_evsel *ev, int s)
{
	uint64_t buf[8];
	size_t len = pk_read_format__size(ev->open_rf & ~(uint64_t)PERF_FORMAT_GROUP, 1);
	ssize_t r = read_fd(ev->fds[s], buf, len);
	int n;
	if (r < 0)
		return (int)r;
	if (r == 0) {
		memset(&ev->cur[s], 0, sizeof(ev->cur[s]));
		return 0;
	}
	n = pk_read_format__decode(ev->open_rf & ~(uint64_t)PERF_FORMAT_GROUP, buf, (size_t)r,
				   &ev->cur[s], 1, NULL);
	return n < 0 ? n : 0;
}

PK_API int pk_evlist__read(struct pk_evlist *el)
{
	int first = 0;
	if (!el || !el->open)
		return pk_err(-EINVAL);
	for (int i = 0; i < el->nr; i++) {
		struct pk_evsel *ev = el->ev[i];
		if (ev->unsupported)
			continue;
		if (ev->eff_leader != ev && (ev->eff_leader->open_rf & PERF_FORMAT_GROUP))
			continue; /* filled in by the leader's group read */
		for (int s = 0; s < ev->ncpus * ev->nthreads; s++) {
			int r;
			if (ev->fds[s] < 0)
				continue;
			if (ev->open_rf & PERF_FORMAT_GROUP)
				r = read_group(el, ev, s);
			else
				r = read_single(ev, s);
			if (r < 0 && !first)
				first = r;
		}
	}
	return first ? pk_err(first) : 0;
}

PK_API void pk_evlist__save_counts(struct pk_evlist *el)
{
	if (!el)
		return;
	for (int i = 0; i < el->nr; i++) {
		struct pk_evsel *ev = el->ev[i];
		if (ev->cur)
			memcpy(ev->prev, ev->cur, (size_t)ev->ncpus * ev->nthreads * sizeof(*ev->cur));
	}
}

/* ---- aggregation ---- */

/* The NUMA node of a cpu: the nodeM entry of /sys/devices/system/cpu/cpuN (0 without) */
static int cpu_node(int cpu)
{
	char path[64];
	struct dirent *de;
	int node = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "node", 4) || !isdigit((unsigned char)de->d_name[4]))
			continue;
		long v = strtol(de->d_name + 4, &end, 10);
		if (!*end && v >= 0 && v < 1 << 20) {
			node = (int)v;
			break;
		}
	}
	closedir(d);
	return node;
}

static int load_topology(struct pk_evlist *el)
{
	int n = pk_cpu_map__nr(el->cpus);
	if (el->topo)
		return 0;
	el->topo = calloc((size_t)(n > 0 ? n : 1), sizeof(*el->topo));
	el->node = calloc((size_t)(n > 0 ? n : 1), sizeof(*el->node));
	if (!el->topo || !el->node) {
		free(el->topo);
		free(el->node);
		el->topo = NULL;
		el->node = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		int cpu = pk_cpu_map__cpu(el->cpus, i);
		el->node[i] = cpu < 0 ? 0 : cpu_node(cpu);
		if (cpu < 0 || pk_cpu_topology__read(cpu, &el->topo[i], NULL) < 0) {
			el->topo[i].core = cpu;
			el->topo[i].socket = cpu < 0 ? -1 : 0;
			el->topo[i].die = 0;
		}
	}
	return 0;
}

static bool key_has_cpu(const struct pk_evlist *el, enum pk_aggr_mode mode,
			const struct pk_aggr_key *k, int ci)
{
	const struct pk_cpu_topology *t;
	switch (mode) {
	case PK_AGGR_CPU:
		return k->idx == ci;
	case PK_AGGR_CORE:
		t = &el->topo[ci];
		return t->core == k->id && t->socket == k->socket && t->die == k->die;
	case PK_AGGR_SOCKET:
		return el->topo[ci].socket == k->socket;
	case PK_AGGR_DIE:
		return el->topo[ci].socket == k->socket && el->topo[ci].die == k->die;
	case PK_AGGR_NODE:
		return el->node[ci] == k->id;
	default:
		return true;
	}
}

PK_API int pk_evlist__aggr_keys(struct pk_evlist *el, enum pk_aggr_mode mode,
				struct pk_aggr_key *keys, size_t max)
{
	int ncpus, n = 0;
	if (!el || !el->cpus || !el->threads)
		return pk_err(-EINVAL);
	ncpus = pk_cpu_map__nr(el->cpus);
	switch (mode) {
	case PK_AGGR_GLOBAL:
		if (max && keys)
			keys[0] = (struct pk_aggr_key){ .id = -1, .socket = -1, .idx = -1,
							.nr = ncpus };
		return 1;
	case PK_AGGR_THREAD:
		for (int i = 0; i < pk_thread_map__nr(el->threads); i++, n++)
			if ((size_t)n < max && keys)
				keys[n] = (struct pk_aggr_key){ .id = pk_thread_map__tid(el->threads, i),
								.socket = -1, .idx = i, .nr = 1 };
		return n;
	case PK_AGGR_CPU:
	case PK_AGGR_CORE:
	case PK_AGGR_SOCKET:
	case PK_AGGR_DIE:
	case PK_AGGR_NODE: {
		struct pk_aggr_key *all;
		if (load_topology(el) || !(all = calloc((size_t)ncpus + 1, sizeof(*all))))
			return pk_err(-ENOMEM);
		for (int ci = 0; ci < ncpus; ci++) {
			const struct pk_cpu_topology *t = &el->topo[ci];
			struct pk_aggr_key k = { .id = pk_cpu_map__cpu(el->cpus, ci), .idx = ci,
						 .socket = t->socket, .die = t->die, .nr = 1 };
			bool dup = false;
			if (mode == PK_AGGR_CORE)
				k.id = t->core;
			else if (mode == PK_AGGR_SOCKET)
				k.id = t->socket;
			else if (mode == PK_AGGR_DIE)
				k.id = t->die;
			else if (mode == PK_AGGR_NODE)
				k = (struct pk_aggr_key){ .id = el->node[ci], .idx = ci, .socket = -1,
							  .nr = 1 };
			/* keys are unique, in first-seen order of the cpu map */
			for (int j = 0; j < n && mode != PK_AGGR_CPU; j++) {
				if (all[j].id == k.id && all[j].socket == k.socket &&
				    (mode == PK_AGGR_SOCKET || mode == PK_AGGR_NODE ||
				     all[j].die == k.die)) {
					all[j].nr++;
					dup = true;
					break;
				}
			}
			if (!dup)
				all[n++] = k;
		}
		if (keys)
			memcpy(keys, all, (size_t)PK_MIN((size_t)n, max) * sizeof(*keys));
		free(all);
		return n;
	}
	}
	return pk_err(-EINVAL);
}

PK_API int pk_evsel__aggregate(const struct pk_evsel *ev, enum pk_aggr_mode mode,
			       const struct pk_aggr_key *key, unsigned flags, struct pk_count *out)
{
	struct pk_count sum = { 0 };
	bool ran = false, scaled = false;

	if (!ev || !out || (key && (mode < PK_AGGR_GLOBAL || mode > PK_AGGR_NODE)))
		return pk_err(-EINVAL);
	if (ev->unsupported) {
		memset(out, 0, sizeof(*out));
		out->status = PK_COUNT_NOT_SUPPORTED;
		return 0;
	}
	if (key && mode >= PK_AGGR_CORE && load_topology(ev->evlist) < 0)
		return pk_err(-ENOMEM);
	for (int ci = 0; ci < ev->ncpus; ci++) {
		if (key && mode != PK_AGGR_GLOBAL && mode != PK_AGGR_THREAD &&
		    !key_has_cpu(ev->evlist, mode, key, ci))
			continue;
		for (int ti = 0; ti < ev->nthreads; ti++) {
			int s = ci * ev->nthreads + ti;
			struct pk_count_value v = ev->cur[s];
			struct pk_count c;
			if (key && mode == PK_AGGR_THREAD && key->idx != ti)
				continue;
			if (ev->fds[s] < 0 && !v.ena)
				continue;
			if (flags & PK_AGGR_DELTA) {
				const struct pk_count_value *p = &ev->prev[s];
				v.val = v.val >= p->val ? v.val - p->val : 0;
				v.ena = v.ena >= p->ena ? v.ena - p->ena : 0;
				v.run = v.run >= p->run ? v.run - p->run : 0;
			}
			pk_count__scale(v.val, v.ena, v.run, &c);
			if (c.status == PK_COUNT_NOT_COUNTED)
				continue;
			ran = true;
			scaled |= c.status == PK_COUNT_SCALED;
			sum.val = sum.val + c.val < sum.val ? UINT64_MAX : sum.val + c.val;
			sum.raw += c.raw;
			sum.ena += c.ena;
			sum.run += c.run > c.ena ? c.ena : c.run;
		}
	}
	if (!ran) {
		sum.status = PK_COUNT_NOT_COUNTED;
		sum.running_pct = 0;
	} else if (scaled) {
		sum.status = PK_COUNT_SCALED;
		sum.running_pct = sum.ena ? 100.0 * (double)sum.run / (double)sum.ena : 100.0;
	} else {
		sum.status = PK_COUNT_OK;
		sum.running_pct = 100.0;
	}
	*out = sum;
	return 0;
}
