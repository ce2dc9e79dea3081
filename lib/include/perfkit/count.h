/* SPDX-License-Identifier: MIT */
/*
 * perfkit/count.h - counting mode: events (evsel) and sets of events (evlist) opened over
 * a cpu_map x thread_map, group reads, multiplex scaling, aggregation, launched workloads,
 * and a small API for counting a region of one's own code.
 *
 * Typical use (what `perfkit stat` does):
 *
 *     struct pk_evlist *el = pk_evlist__new();
 *     pk_evlist__add(el, pk_evsel__new(&attr, "task-clock"));     // evlist owns it
 *     pk_evlist__set_maps(el, pk_cpu_map__new_dummy(), pk_thread_map__new_array(&pid, 1));
 *     pk_evlist__open(el, &opts);       // leaders first per (cpu, thread), group_fd wired
 *     ... workload runs (enable_on_exec) or pk_evlist__enable(el) ...
 *     pk_evlist__read(el);              // one read(2) per group leader / ungrouped fd
 *     pk_evsel__aggregate(ev, PK_AGGR_GLOBAL, NULL, 0, &count);   // scaled sum
 *     pk_evlist__free(el);              // closes every fd
 */
#ifndef PERFKIT_COUNT_H
#define PERFKIT_COUNT_H

#include <sys/types.h>
#include <perfkit/common.h>
#include <perfkit/sys.h>
#include <perfkit/readfmt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- scaling ---- */

enum pk_count_status {
	PK_COUNT_OK = 0,            /* counted the whole time enabled */
	PK_COUNT_SCALED = 1,        /* multiplexed: val is raw * ena / run */
	PK_COUNT_NOT_COUNTED = 2,   /* never ran (run == 0): val is 0 and meaningless */
	PK_COUNT_NOT_SUPPORTED = 3, /* the event could not be opened on this machine */
};

/* A count ready for display. */
/*
 * Growth rule: callers allocate pk_count, often in arrays whose stride is sizeof, so its
 * size is fixed for the 1.x series. New fields take the place of `reserved` words, which
 * the library always writes as 0 (a field added later reads 0 from an older library,
 * and an older caller's array keeps its layout). A field that does not fit there goes
 * into a new struct with a size member, returned by a new function.
 */
struct pk_count {
	uint64_t val;          /* scaled value (== raw unless status is PK_COUNT_SCALED) */
	uint64_t raw;          /* sum of the values the kernel returned */
	uint64_t ena, run;     /* time enabled / running (ns) */
	enum pk_count_status status;
	double running_pct;    /* 100 * run / ena (100 when not multiplexed or ena == 0) */
	uint64_t reserved[4];  /* 0: room for fields to come (see above) */
};

/*
 * The one scaling function: val * ena / run computed in 128 bits (no overflow, result
 * saturates at UINT64_MAX), rounded to nearest. run == 0 gives PK_COUNT_NOT_COUNTED (never
 * a division); ena < run (not meaningful, seen with inherited counters racing) is treated
 * as ena == run: no scaling. Returns the status also stored in out->status.
 */
PK_API enum pk_count_status pk_count__scale(uint64_t val, uint64_t ena, uint64_t run,
					    struct pk_count *out);

/* ---- cpu and thread maps ---- */

struct pk_cpu_map;
struct pk_thread_map;

/* CPUs from a list such as "0-3,6" (ascending, duplicates removed). NULL or "" means the
 * online CPUs. NULL + errno (EINVAL for a malformed list, ERANGE for CPUs >= 4096). */
PK_API struct pk_cpu_map *pk_cpu_map__new(const char *list);
/* Online CPUs from <sysfs_root>/devices/system/cpu/online (sysfs_root NULL = "/sys"). */
PK_API struct pk_cpu_map *pk_cpu_map__new_online(const char *sysfs_root);
/* The map {-1}: "any CPU", for per-thread counting. */
PK_API struct pk_cpu_map *pk_cpu_map__new_dummy(void);
PK_API void pk_cpu_map__free(struct pk_cpu_map *map);
PK_API int pk_cpu_map__nr(const struct pk_cpu_map *map);
PK_API int pk_cpu_map__cpu(const struct pk_cpu_map *map, int idx);   /* -1 if out of range */
/*
 * Parse a CPU list into cpus[0..max): returns the number of CPUs in the list (may exceed
 * max) or -PK_ERR_PARSE / -ERANGE. Accepts "N", "N-M", commas, surrounding whitespace.
 */
PK_API int pk_cpu_list__parse(const char *list, int *cpus, size_t max);

/* The map {-1}: "any thread", for CPU-wide counting. */
PK_API struct pk_thread_map *pk_thread_map__new_dummy(void);
/* Every thread of process `pid` (<procfs_root>/PID/task; procfs_root NULL = "/proc").
 * ESRCH if the process does not exist. */
PK_API struct pk_thread_map *pk_thread_map__new_pid(pid_t pid, const char *procfs_root);
/* Explicit thread ids. */
PK_API struct pk_thread_map *pk_thread_map__new_array(const pid_t *tids, int nr);
/* Comma-separated list of ids ("12,14"); each id used as given (a thread, not its process). */
PK_API struct pk_thread_map *pk_thread_map__new_list(const char *list);
PK_API void pk_thread_map__free(struct pk_thread_map *map);
PK_API int pk_thread_map__nr(const struct pk_thread_map *map);
PK_API pid_t pk_thread_map__tid(const struct pk_thread_map *map, int idx); /* -1 out of range */
/* The thread's comm from /proc (read on first use and cached; "?" if it is gone). The
 * string is owned by the map. */
PK_API const char *pk_thread_map__comm(struct pk_thread_map *map, int idx);

/* CPU topology from <sysfs_root>/devices/system/cpu/cpuN/topology (NULL = "/sys"). */
struct pk_cpu_topology {
	int core;    /* core_id, -1 if unknown */
	int die;     /* die_id, 0 if unknown */
	int socket;  /* physical_package_id, -1 if unknown */
};
PK_API int pk_cpu_topology__read(int cpu, struct pk_cpu_topology *out, const char *sysfs_root);

/* ---- evsel: one event ---- */

struct pk_evsel;
struct pk_evlist;

/*
 * A new event from `attr` (copied) named `name` (copied; NULL = "event"). read_format gets
 * TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING added at open (and ID | GROUP for leaders of
 * groups with members). NULL + ENOMEM.
 */
PK_API struct pk_evsel *pk_evsel__new(const struct pk_attr *attr, const char *name);
/* Free an evsel that was never added to an evlist (closes its fds). */
PK_API void pk_evsel__free(struct pk_evsel *ev);
PK_API const char *pk_evsel__name(const struct pk_evsel *ev);
/* The attr; may be changed until the evsel is opened. */
PK_API struct pk_attr *pk_evsel__attr(struct pk_evsel *ev);
/* Make `ev` a member of `leader`'s group (both in the same evlist, leader added first). */
PK_API int pk_evsel__set_leader(struct pk_evsel *ev, struct pk_evsel *leader);
PK_API struct pk_evsel *pk_evsel__leader(const struct pk_evsel *ev);
/* PK_EVF_* flags from event.h (PK_EVF_WEAK_GROUP matters here). */
PK_API void pk_evsel__set_flags(struct pk_evsel *ev, unsigned flags);
/* Display scale/unit (sysfs .scale/.unit): kept for the caller, not applied by the library. */
PK_API void pk_evsel__set_scale(struct pk_evsel *ev, double scale, const char *unit);
/* Count only the tasks of the cgroup whose directory fd is given (PERF_FLAG_PID_CGROUP;
 * needs CPUs), overriding the open's cgroup_fd; -1: back to the open's. The fd is borrowed
 * until pk_evlist__open returns. -EINVAL once opened. */
PK_API int pk_evsel__set_cgroup(struct pk_evsel *ev, int cgroup_fd);
PK_API double pk_evsel__scale(const struct pk_evsel *ev);
PK_API const char *pk_evsel__unit(const struct pk_evsel *ev);
/* After open: false if the kernel said the event does not exist here (ENOENT, EOPNOTSUPP,
 * ENODEV for hardware/cache/raw/PMU events) and the evlist skipped it. */
PK_API bool pk_evsel__supported(const struct pk_evsel *ev);
/* fd of (cpu index, thread index), -1 if not open. */
PK_API int pk_evsel__fd(const struct pk_evsel *ev, int cpu_idx, int thread_idx);
/* Kernel id (PERF_EVENT_IOC_ID) of (cpu index, thread index), 0 if unknown. */
PK_API uint64_t pk_evsel__id(const struct pk_evsel *ev, int cpu_idx, int thread_idx);
/* Last values read by pk_evlist__read for (cpu index, thread index); -EINVAL out of range. */
PK_API int pk_evsel__counts(const struct pk_evsel *ev, int cpu_idx, int thread_idx,
			    struct pk_count_value *out);

/* ---- aggregation ---- */

enum pk_aggr_mode {
	PK_AGGR_GLOBAL,  /* everything summed: one key */
	PK_AGGR_CPU,     /* one key per CPU of the map */
	PK_AGGR_THREAD,  /* one key per thread of the map */
	PK_AGGR_CORE,    /* one key per (socket, die, core) */
	PK_AGGR_SOCKET,  /* one key per socket */
	PK_AGGR_DIE,     /* one key per (socket, die): id = die */
	PK_AGGR_NODE,    /* one key per NUMA node (sysfs cpuN/nodeM; 0 if none): id = node */
};

struct pk_aggr_key {
	int id;      /* cpu number / tid / core id / socket id (-1 for GLOBAL) */
	int socket;  /* for CORE and SOCKET (and CPU when topology is known) */
	int die;
	int idx;     /* cpu or thread index for CPU / THREAD */
	int nr;      /* how many cpus (or threads) the key covers */
};

/* Aggregation keys of `mode` for the evlist's maps into keys[0..max); returns how many
 * there are (may exceed max). Topology is read from sysfs for CORE/SOCKET. */
PK_API int pk_evlist__aggr_keys(struct pk_evlist *el, enum pk_aggr_mode mode,
				struct pk_aggr_key *keys, size_t max);

#define PK_AGGR_DELTA (1u << 0) /* aggregate (last read - saved) instead of the last read */
/*
 * Sum the counts of `ev` over the (cpu, thread) pairs that belong to `key` (NULL = all):
 * each fd's value is scaled first (pk_count__scale), then values, times and raw values are
 * summed; the status is NOT_SUPPORTED if the evsel was skipped, NOT_COUNTED if no fd ran,
 * SCALED if any was scaled. Returns 0 or -EINVAL.
 */
PK_API int pk_evsel__aggregate(const struct pk_evsel *ev, enum pk_aggr_mode mode,
			       const struct pk_aggr_key *key, unsigned flags, struct pk_count *out);

/* ---- evlist: a set of events over the same targets ---- */

PK_API struct pk_evlist *pk_evlist__new(void);
/* Close every fd and free the evsels and maps. NULL is fine. */
PK_API void pk_evlist__free(struct pk_evlist *el);
/* Append `ev`; the evlist owns it from now on (also on failure). 0 or -EINVAL/-EBUSY (open). */
PK_API int pk_evlist__add(struct pk_evlist *el, struct pk_evsel *ev);
PK_API int pk_evlist__nr_evsels(const struct pk_evlist *el);
struct pk_event_list;
/*
 * Append one evsel per parsed event (name, attr, group, PK_EVF_* flags, scale/unit from
 * the parser's pk_event_spec). 0 or -ENOMEM/-EINVAL.
 */
PK_API int pk_evlist__add_events(struct pk_evlist *el, const struct pk_event_list *list);
/* Iteration: pk_evlist__next(el, NULL) is the first evsel; NULL after the last. */
PK_API struct pk_evsel *pk_evlist__next(const struct pk_evlist *el, const struct pk_evsel *prev);
#define pk_evlist__for_each_evsel(el, pos) \
	for ((pos) = pk_evlist__next((el), NULL); (pos); (pos) = pk_evlist__next((el), (pos)))
/* Targets. The evlist takes ownership of both maps (also on failure; NULL = dummy). */
PK_API int pk_evlist__set_maps(struct pk_evlist *el, struct pk_cpu_map *cpus,
			       struct pk_thread_map *threads);
PK_API struct pk_cpu_map *pk_evlist__cpus(const struct pk_evlist *el);
PK_API struct pk_thread_map *pk_evlist__threads(const struct pk_evlist *el);

/* Called for every perf_event_open attempt (for `perfkit stat -v`): fd >= 0 or -errno. */
typedef void (*pk_open_cb)(const struct pk_evsel *ev, const struct perf_event_attr *attr,
			   pid_t pid, int cpu, int group_fd, unsigned long flags, int fd, void *ctx);

struct pk_evlist_open_opts {
	size_t sz;
	bool inherit;              /* attr.inherit: count threads/children created later */
	bool enable_on_exec;       /* leaders start disabled and are enabled by exec(2) */
	bool start_enabled;        /* leaders open enabled (otherwise disabled until __enable) */
	bool skip_unsupported;     /* mark ENOENT/EOPNOTSUPP/ENODEV events unsupported, go on */
	int cgroup_fd;             /* >= 0: count this cgroup (PERF_FLAG_PID_CGROUP); needs CPUs */
	pk_open_cb on_open;
	void *ctx;
	/* On EACCES/EPERM for an event that counts kernel space (exclude_kernel == 0), retry
	 * it user-space only (exclude_kernel = exclude_hv = 1, ":u" added to its name), as perf
	 * does when perf_event_paranoid forbids kernel counting to an unprivileged user. */
	bool user_fallback;
	/* A thread of the map that no longer exists (ESRCH: it exited after the map was
	 * made, as threads of a whole system often do) is left out: its fds stay closed, its
	 * counts "not counted", and the open goes on. Otherwise ESRCH fails the open. */
	bool skip_missing_threads;
	/* Sampling fds (perf record): read_format is PERF_FORMAT_ID, plus PERF_FORMAT_GROUP
	 * only on the events of a group that sample with PERF_SAMPLE_READ, as perf record
	 * sets it; no enabled/running times (counts read from such fds are not scaled). */
	bool sampling;
	size_t :0;
};

/*
 * Open every evsel on every (cpu, thread): for each cpu, for each thread, every evsel in
 * list order, so a group leader is always open before its members (group_fd = the leader's
 * fd for the same cpu and thread). On failure everything opened so far is closed and the
 * negative errno returned; pk_evlist__open_failure tells what failed. A weak group
 * (PK_EVF_WEAK_GROUP on its leader) whose open fails is reopened as separate events.
 */
PK_API int pk_evlist__open(struct pk_evlist *el, const struct pk_evlist_open_opts *opts);
/* After a failed open: the evsel, pid, cpu and group_fd of the failing perf_event_open. */
PK_API const struct pk_evsel *pk_evlist__open_failure(const struct pk_evlist *el, pid_t *pid,
						      int *cpu, int *group_fd,
						      struct perf_event_attr *attr);
PK_API void pk_evlist__close(struct pk_evlist *el);
/* Enable / disable / reset every leader (with PERF_IOC_FLAG_GROUP). 0 or first -errno. */
PK_API int pk_evlist__enable(struct pk_evlist *el);
PK_API int pk_evlist__disable(struct pk_evlist *el);
PK_API int pk_evlist__reset(struct pk_evlist *el);
/*
 * Read every counter: one read(2) per group leader (PERF_FORMAT_GROUP, every member's value
 * matched by id) and one per ungrouped fd. Values go to pk_evsel__counts. 0 or -errno.
 */
PK_API int pk_evlist__read(struct pk_evlist *el);
/* Remember the last read as the base for PK_AGGR_DELTA (interval mode). */
PK_API void pk_evlist__save_counts(struct pk_evlist *el);

/* ---- launched workloads ---- */

struct pk_workload;

/*
 * Create a child that waits (blocked on a pipe) for pk_workload__start and then execvp()s
 * argv. Open counters on pk_workload__pid with enable_on_exec before starting it, so that
 * nothing of the parent or of the waiting child is counted. The child is a clone(CLONE_VM)
 * (like posix_spawn) where supported, else a fork. The exec'ed program starts with the
 * caller's signal mask, ignored signals still ignored except SIGPIPE, and every caught
 * signal at its default. NULL + errno.
 */
PK_API struct pk_workload *pk_workload__prepare(char *const argv[]);
PK_API pid_t pk_workload__pid(const struct pk_workload *w);
/*
 * Let the child exec and wait until it has (the error pipe is CLOEXEC: EOF means exec
 * succeeded). Returns 0, or the negative errno of a failed execvp (e.g. -ENOENT): the
 * child has then exited with 127 and is reaped.
 */
PK_API int pk_workload__start(struct pk_workload *w);
/*
 * Wait for the child. `block` false: return -EAGAIN if it is still running. On success
 * *status receives the waitpid status. EINTR is returned (not retried) so that callers can
 * notice signals.
 */
PK_API int pk_workload__wait(struct pk_workload *w, bool block, int *status);
/* Send a signal to the child if it has not been reaped. */
PK_API int pk_workload__kill(struct pk_workload *w, int sig);
/* Kill (SIGKILL) and reap the child if still there, free. NULL is fine. */
PK_API void pk_workload__free(struct pk_workload *w);
/* The process exit code a shell would report for a wait status: code, or 128 + signal. */
PK_API int pk_wait_status__exit_code(int status);

#ifdef __cplusplus
}
#endif
#endif
