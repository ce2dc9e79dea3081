/* SPDX-License-Identifier: MIT */
/* tool/workload.h - running a command under the recorder (record, trace): tool/workload.c. */
#ifndef TOOL_WORKLOAD_H
#define TOOL_WORKLOAD_H

#include <signal.h>
#include <stdbool.h>

/* tool/workload.c: the command run under the recorder (record, trace). Start *w (NULL:
 * none, 0): if it cannot run, the error, *w freed and NULL, and 127. At the end, unless
 * it has been reaped already: send it kill_sig (0: none), wait for it into *wstatus; its
 * exit status (128 + signal), with an error if a signal other than SIGINT killed it. */
struct pk_workload;
int tool_workload_start(struct pk_workload **w, const char *name);
int tool_workload_end(struct pk_workload *w, bool reaped, int kill_sig, int *wstatus,
		      const char *name);

/* After a pass of the drain loop (drained: pk_recorder__drain's return), whether the run
 * is over: a stop signal came (stop_sig), the command ended (reaped then: *reaped set and
 * its status in *wstatus; *chld is the SIGCHLD flag, cleared here), or, without a
 * command, every target thread has gone (PK_RECORDER_HUNGUP). */
bool tool_run_over(int drained, int stop_sig, volatile sig_atomic_t *chld, struct pk_workload *w,
		   int *wstatus, bool *reaped);

/* Signals, in two steps. tool_catch_signals: sa for the first n of sigs, from the very
 * start (a stop signal while the events are opened ends the run after set-up instead of
 * killing us), and the mask as it is into *orig (what the recorder waits with).
 * tool_block_signals: sa for all n and each blocked, so that none is missed between the
 * recorder's waits (it unblocks them with *orig while it waits). */
void tool_catch_signals(const struct sigaction *sa, const int *sigs, int n, sigset_t *orig);
void tool_block_signals(const struct sigaction *sa, const int *sigs, int n);

/* The end of the usage text of a command that runs one. */
#define TOOL_WORKLOAD_OUTRO                                                                 \
	"The exit status is the command's (128 + signal if a signal killed it); 127 if it could\n" \
	"not be executed; 1 for errors of perfkit itself.\n"

#endif
