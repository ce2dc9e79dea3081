/* SPDX-License-Identifier: MIT */
/* tool/stat.h - `perfkit stat`'s options, run state and the functions its files share:
 * cmd-stat.c (options, the runs, signals), stat-run.c (opening the events, one run),
 * stat-print.c (the counts as text, CSV or JSON). */
#ifndef TOOL_STAT_H
#define TOOL_STAT_H

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

#define DEFAULT_EVENTS "task-clock,context-switches,cpu-migrations,page-faults,cycles," \
		       "instructions,branches,branch-misses"
#define NSEC_PER_SEC 1000000000ULL

enum target_kind { T_WORKLOAD, T_PID, T_TID, T_CPU };

/* stat-extra.c: --per-die, --per-node, -d, -M, --all-user/--all-kernel, --no-scale,
 * --no-merge, --filter */
enum {
	STAT_OPT_PER_DIE = 400, STAT_OPT_PER_NODE, STAT_OPT_ALL_USER, STAT_OPT_ALL_KERNEL,
	STAT_OPT_NO_SCALE, STAT_OPT_NO_MERGE, STAT_OPT_FILTER, STAT_OPT_FOR_EACH_CGROUP,
	STAT_OPT_METRIC_ONLY,
};
struct stat_filter {
	int spec;                 /* the -e it follows */
	size_t begin, end;        /* its events in the list */
	const char *text;
};
struct stat_extra {
	int detailed;             /* -d count */
	const char *metrics;      /* -M list */
	bool metric_only;         /* --metric-only: metrics alone, one row per count */
	bool mo_header_done;      /* its row of names printed */
	bool all_user, all_kernel;
	struct stat_filter *filters;
	size_t nr_filters, spec_end;
	int duration_idx;         /* duration_time's event (a dummy in its place), or -1 */
	const struct pk_evsel *duration_ev; /* it, in the run's evlist */
	const char *cg_list;      /* --for-each-cgroup */
	char **cg_names;          /* its names, and their directories' fds */
	int *cg_fds, nr_cg, per_cg; /* per_cg: events of one cgroup's copy */
};
#define STAT_EXTRA_OPTS \
	{ STAT_OPT_PER_DIE, "per-die", no_argument, NULL, "one line per die (with -a or -C)" }, \
	{ STAT_OPT_PER_NODE, "per-node", no_argument, NULL, \
	  "one line per NUMA node (with -a or -C)" }, \
	{ 'd', "detailed", no_argument, NULL, \
	  "also the cache events (-dd, -ddd: more of them), as perf" }, \
	{ 'M', "metrics", required_argument, "<metric,...>", \
	  "count the events of these metrics: CPUs_utilized, IPC,\n" \
	  "CPI, branch_miss_rate, cache_miss_rate" }, \
	{ STAT_OPT_METRIC_ONLY, "metric-only", no_argument, NULL, \
	  "print the metrics alone, in columns (one row per count)" }, \
	{ STAT_OPT_ALL_USER, "all-user", no_argument, NULL, "count user space only" }, \
	{ STAT_OPT_ALL_KERNEL, "all-kernel", no_argument, NULL, "count kernel space only" }, \
	{ STAT_OPT_NO_SCALE, "no-scale", no_argument, NULL, \
	  "print the raw counts of multiplexed events, not scaled up" }, \
	{ STAT_OPT_NO_MERGE, "no-merge", no_argument, NULL, \
	  "accepted for perf habits: perfkit prints each PMU's event\napart" }, \
	{ STAT_OPT_FILTER, "filter", required_argument, "<filter>", \
	  "tracepoint filter of the preceding -e" }, \
	{ STAT_OPT_FOR_EACH_CGROUP, "for-each-cgroup", required_argument, "<name,...>", \
	  "count the events in each of these cgroups (with -a or -C)" }

struct stat_opts {
	struct pk_event_list *events;
	enum target_kind target;
	const char *pid_list, *tid_list, *cpu_list, *cgroup;
	bool system_wide;
	enum pk_aggr_mode aggr;
	bool no_inherit;
	long interval_ms;
	int repeat;
	const char *sep;     /* CSV separator or NULL */
	bool json;
	const char *outfile;
	bool append;
	long delay_ms;
	long timeout_ms;
	bool quiet;
	bool big_num;
	int verbose;
	bool null_run;       /* -n: no counters, the elapsed time only */
	bool sync;           /* -S: sync() before each run */
	const char *pre_cmd, *post_cmd;   /* --pre/--post: shell commands around each run */
	long interval_count; /* --interval-count: stop after that many intervals */
	bool interval_clear; /* --interval-clear: clear the screen before each interval */
	bool summary;        /* --summary: the totals after the intervals */
	bool table;          /* --table: each run's elapsed time (with -r) */
	int log_fd;          /* --log-fd: counts to this fd (-1: none) */
	bool no_scale;       /* --no-scale: raw counts */
	struct stat_extra x; /* stat-extra.c */
	char **argv;         /* workload or NULL */
	FILE *out;
};

/* Per (evsel, key) statistics across -r runs (Welford). */
struct rstat {
	int n;
	double mean, m2;
	double ena, run;          /* mean enabled / running times of the counted runs */
	struct pk_count last;
};

struct run_state {
	struct pk_evlist *el;
	struct pk_aggr_key *keys;
	int nkeys;
	struct rstat *stats;      /* [evsel][key] */
	int nev;
	struct rstat wall;        /* elapsed seconds across runs */
	double *walls;            /* each run's elapsed seconds (--table) */
	uint64_t wall_ns;         /* elapsed of the last run (or of the interval) */
	double ru_user, ru_sys;
	bool use_stats;           /* -r: print means over the runs */
};

/* the signal that ended counting (0: none yet), and whether a user sent it */
extern volatile sig_atomic_t stat_got_signal;
extern volatile sig_atomic_t stat_signal_from_user;

void stat_accumulate(struct stat_opts *o, struct run_state *st);
void stat_cgroup_kick(const struct pk_evlist *el);
uint64_t stat_now_ns(void);
void stat_print_counts(struct stat_opts *o, struct run_state *st, unsigned flags, double ts);
void stat_print_counts_locale(struct stat_opts *o, struct run_state *st, unsigned flags, double ts);
void stat_print_footer(struct stat_opts *o, struct run_state *st);
void stat_print_header(struct stat_opts *o, int runs);
int stat_run_once(struct stat_opts *o, struct run_state *st, int run_idx, bool *counted);
bool stat_text_locale_begin(const struct stat_opts *o);
/* stat-extra.c: an option of STAT_EXTRA_OPTS (0, an exit status, or TOOL_OPT_UNKNOWN;
 * nspecs: the -e given so far); after the events of -e number `spec` are parsed; the
 * checks and added events after parsing (-1 to go on, else the exit status); the attrs
 * before open; the filters after open (0, -1 after the error); freeing */
int stat_extra_opt(struct stat_opts *o, int c, const char *arg, int nspecs);
void stat_extra_spec_added(struct stat_opts *o, int spec);
int stat_extra_check(struct stat_opts *o);
int stat_extra_attrs(struct stat_opts *o, struct pk_evlist *el);
/* the cgroup column of event number idx (-G, --for-each-cgroup), or NULL */
const char *stat_extra_cgroup(const struct stat_opts *o, int idx);
int stat_extra_filters(struct stat_opts *o, struct pk_evlist *el);
void stat_extra_release(struct stat_opts *o);
/* duration_time: the -e spec with it replaced by a dummy event (NULL: as it is; *owned
 * to free), the count of an evsel as printed (--no-scale's raw count; duration_time's
 * elapsed ns), its name and unit when it is duration_time (false otherwise) */
const char *stat_extra_spec(struct stat_opts *o, const char *spec, char **owned);
struct run_state;
void stat_extra_count(const struct stat_opts *o, const struct run_state *st,
		      const struct pk_evsel *ev, struct pk_count *c);
bool stat_extra_name(const struct stat_opts *o, const struct pk_evsel *ev, const char **name,
		     const char **unit);
void stat_text_locale_end(bool switched);
/* stat-extra.c: the metric perf shows beside a count */
struct stat_metric {
	bool has;
	double val;
	char unit[32];
	const char *fmt;   /* printf for the value (human output) */
};

bool stat_is_clock(struct pk_evsel *ev);
bool stat_is_hw(struct pk_evsel *ev, uint64_t config);
void stat_compute_metric(struct pk_evsel *ev, double val, double clock_ns, double cycles,
			 double branches, uint64_t wall_ns, struct stat_metric *m);
const char *stat_trim(const char *s);
size_t stat_metric_width(const struct stat_metric *m);

#endif
