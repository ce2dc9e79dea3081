/* SPDX-License-Identifier: MIT */
/* tool/record.h - what `perfkit record`'s files share: its options (cmd-record.c) and its
 * messages (record-messages.c: notices, open failures, the status line, the summary). */
#ifndef PK_TOOL_RECORD_H
#define PK_TOOL_RECORD_H

#include <stdbool.h>
#include <perfkit/perfkit.h>
#include "record-rotate.h"

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
};

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
