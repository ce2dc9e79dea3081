/* SPDX-License-Identifier: MIT */
/* tool/record.h - what `perfkit record`'s files share: its options (cmd-record.c) and its
 * messages (record-messages.c: notices, open failures, the status line, the summary). */
#ifndef PK_TOOL_RECORD_H
#define PK_TOOL_RECORD_H

#include <stdbool.h>
#include <perfkit/perfkit.h>
#include "record-rotate.h"

struct tool_push_args;
struct tool_pusher;
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
