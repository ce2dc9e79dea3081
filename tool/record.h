/* SPDX-License-Identifier: MIT */
/* tool/record.h - what `perfkit record`'s files share: its options (cmd-record.c) and its
 * messages (record-messages.c: notices, open failures, the status line, the summary). */
#ifndef PK_TOOL_RECORD_H
#define PK_TOOL_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <perfkit/perfkit.h>
#include "record-rotate.h"

struct tool_push_args;
struct tool_pusher;
/* perf record's finer options (record-extra.c) */
enum {
	REC_OPT_STRICT_FREQ = 400, REC_OPT_FILTER, REC_OPT_EXCLUDE_PERF, REC_OPT_USER_REGS,
	REC_OPT_ALL_USER, REC_OPT_ALL_KERNEL, REC_OPT_BUILDID_ALL, REC_OPT_CONTROL,
	REC_OPT_DRY_RUN, REC_OPT_GROUP, REC_OPT_PHYS_DATA, REC_OPT_DATA_PAGE_SIZE,
	REC_OPT_CODE_PAGE_SIZE, REC_OPT_KCORE,
};
struct rec_extra {
	bool strict_freq, dry_run, delay_set, ctl_owned, kcore;
	int delay_ms;                /* -D: > 0 ms after the start, -1 until --control */
	uint64_t enable_at;          /* CLOCK_MONOTONIC ms of the delayed enable, or 0 */
	char **filters;              /* per event index, NULL = none */
	size_t nr_filters;
	const char *uid_arg;         /* -u */
	char *uid_pids;              /* its processes as a -p list */
	int ctl_fd, ack_fd;          /* --control, -1 = none */
	char ctl_buf[256];
	size_t ctl_len;
};
/* The rows of record's option table that record-extra.c takes. */
#define REC_EXTRA_OPTS \
	{ 'P', "period", no_argument, NULL, "record the sample period (perfkit always does)" }, \
	{ REC_OPT_STRICT_FREQ, "strict-freq", no_argument, NULL, \
	  "fail when -F is over perf_event_max_sample_rate\ninstead of lowering it" }, \
	{ REC_OPT_FILTER, "filter", required_argument, "<filter>", \
	  "tracepoint filter of the preceding -e event\n(\"common_pid != 1 && prev_state == 0\")" }, \
	{ REC_OPT_EXCLUDE_PERF, "exclude-perf", no_argument, NULL, \
	  "add 'common_pid != <perfkit's pid>' to the filter of the\npreceding -e tracepoint" }, \
	{ 'D', "delay", required_argument, "<ms>", \
	  "enable the events this long after the start (-1: only\nwhen --control says enable)" }, \
	{ 'k', "clockid", required_argument, "<clock>", \
	  "timestamps from this clock: monotonic, monotonic_raw,\nrealtime, boottime, tai, or a number" }, \
	{ REC_OPT_USER_REGS, "user-regs", optional_argument, "<regs>", \
	  "sample these user registers (default all; =? lists)" }, \
	{ 'I', "intr-regs", optional_argument, "<regs>", \
	  "sample these registers at the interrupt (default all;\n=? lists)" }, \
	{ REC_OPT_ALL_USER, "all-user", no_argument, NULL, "every event counts user space only (exclude_kernel)" }, \
	{ REC_OPT_ALL_KERNEL, "all-kernel", no_argument, NULL, "every event counts kernel space only (exclude_user)" }, \
	{ 'u', "uid", required_argument, "<user>", "record the processes of this user (name or uid)" }, \
	{ 'B', "no-buildid", no_argument, NULL, \
	  "no build-ids in the file (and none cached; implies -N)" }, \
	{ REC_OPT_BUILDID_ALL, "buildid-all", no_argument, NULL, \
	  "build-ids of every mapped binary (perfkit always lists\nthem all)" }, \
	{ REC_OPT_CONTROL, "control", required_argument, "<fifo:ctl[,ack]|fd:ctl[,ack]>", \
	  "read enable, disable, snapshot, stop and ping commands;\nwrite \"ack\" after each" }, \
	{ REC_OPT_DRY_RUN, "dry-run", no_argument, NULL, "check the options, record nothing" }, \
	{ REC_OPT_GROUP, "group", no_argument, NULL, "put the events into one group" }, \
	{ REC_OPT_PHYS_DATA, "phys-data", no_argument, NULL, \
	  "record each sample's physical data address" }, \
	{ REC_OPT_DATA_PAGE_SIZE, "data-page-size", no_argument, NULL, \
	  "record the page size of each sample's data address" }, \
	{ REC_OPT_CODE_PAGE_SIZE, "code-page-size", no_argument, NULL, \
	  "record the page size of each sample's code address" }, \
	{ REC_OPT_KCORE, "kcore", no_argument, NULL, \
	  "perf's copy of /proc/kcore: refused with the reason\n(see the doc)" }

struct rec_opts {
	struct pk_recorder_opts ro;  /* what the library needs */
	struct pk_event_list *events;
	const char *cgroup;          /* -G name, opened here */
	const char *output;
	bool quiet;
	int verbose;
	char **argv;                 /* workload or NULL */
	/* --switch-output, --switch-max-files, --max-size; and the hook called with each
	 * finished file of a rotation (rot.on_file_closed: see record-rotate.h) */
	struct tool_rotate rot;
	/* --push URL and the push options (record-push.c) */
	struct tool_push_args *push;
	bool push_on;
	struct tool_pusher *pusher;
	struct rec_extra x;          /* record-extra.c */
};

/* record-push.c: a push option (TOOL_OPT_UNKNOWN if c is none, 129 after an error); the
 * checks after parsing (0 or 129); starting the pusher and attaching it to the
 * rotation's hook (0, or -1 after the error); at the end, the file of a recording
 * without rotation is pushed, the pusher finished (its summary printed): 1 when a
 * profile was not delivered. */
int rec_push_opt(struct rec_opts *o, int c, const char *arg);
int rec_push_check(struct rec_opts *o);
int rec_push_start(struct rec_opts *o);
int rec_push_finish(struct rec_opts *o, bool file_ok);

/* record-extra.c: an option of REC_EXTRA_OPTS (0, 129, or TOOL_OPT_UNKNOWN); the checks
 * after parsing (-1 to go on, else the exit status); the delayed enable and --control
 * while recording: say "Events disabled" after the open, the drain timeout to use, and
 * one poll per pass (true: a "stop" command) */
int rec_extra_opt(struct rec_opts *o, int c, const char *arg);
int rec_extra_check(struct rec_opts *o);
void rec_extra_init(struct rec_extra *x);
void rec_extra_release(struct rec_extra *x);
void rec_extra_started(struct rec_opts *o);
int rec_extra_timeout(const struct rec_opts *o, int timeout_ms);
bool rec_extra_poll(struct rec_opts *o, struct pk_recorder *r);

void rec_on_notice(const struct pk_recorder_notice *n, void *ctx);
void rec_print_open(const struct pk_evsel *ev, const struct perf_event_attr *attr, pid_t pid,
		    int cpu, int group_fd, unsigned long flags, int fd, void *ctx);
void rec_report_failure(const struct pk_recorder *r, const char *output);
void rec_status_line(const struct pk_recorder *r);
void rec_summary(const struct rec_opts *o, const struct pk_recorder_stats *st, bool reader_gone);
/* A file of a rotation was closed as `path` (a line unless -q; with -v the switch time) */
void rec_dumped(const struct rec_opts *o, const char *path, const struct pk_recorder_file *f,
		double ms);
void rec_lost_warnings(const struct rec_opts *o, const struct pk_recorder_stats *st);
void rec_bid_cache_report(const struct rec_opts *o, const struct pk_recorder_stats *st);

#endif
