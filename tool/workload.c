/* SPDX-License-Identifier: MIT */
/*
 * tool/workload.c - the command that record and trace run under the recorder: starting
 * it, and at the end stopping it, reaping it and turning its wait status into ours. One
 * copy, so the commands give the same exit statuses and messages.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "workload.h"

int tool_workload_start(struct pk_workload **w, const char *name)
{
	int err;

	if (!*w || (err = pk_workload__start(*w)) >= 0)
		return 0;
	/* the shell's convention: 127 for "command not found / not runnable" */
	tool_error("cannot run '%s': %s", name, strerror(-err));
	pk_workload__free(*w);
	*w = NULL;
	return 127;
}

int tool_workload_end(struct pk_workload *w, bool reaped, int kill_sig, int *wstatus,
		      const char *name)
{
	if (!reaped) {
		if (kill_sig)
			pk_workload__kill(w, kill_sig);
		while (pk_workload__wait(w, true, wstatus) == -EINTR)
			;
	}
	if (WIFSIGNALED(*wstatus) && WTERMSIG(*wstatus) != SIGINT)
		tool_error("'%s' was killed by signal %d (%s)", name, WTERMSIG(*wstatus),
			   strsignal(WTERMSIG(*wstatus)));
	return pk_wait_status__exit_code(*wstatus);
}

void tool_catch_signals(const struct sigaction *sa, const int *sigs, int n, sigset_t *orig)
{
	for (int i = 0; i < n; i++)
		sigaction(sigs[i], sa, NULL);
	sigprocmask(SIG_SETMASK, NULL, orig);
}

void tool_block_signals(const struct sigaction *sa, const int *sigs, int n)
{
	sigset_t block;

	sigemptyset(&block);
	for (int i = 0; i < n; i++) {
		sigaction(sigs[i], sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, NULL);
}

bool tool_run_over(int drained, int stop_sig, volatile sig_atomic_t *chld, struct pk_workload *w,
		   int *wstatus, bool *reaped)
{
	bool over = stop_sig != 0;

	/* The signals are let in only while the recorder waits for data; rings that always
	 * have data (a recording of the recorder's own system calls, a flood) never wait,
	 * so a pending stop signal or SIGCHLD is let in here, to be seen at the next pass. */
	if (drained == 1) {
		static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR2 };
		sigset_t pend, in;
		sigemptyset(&in);
		if (sigpending(&pend) == 0)
			for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
				if (sigismember(&pend, sigs[i]))
					sigaddset(&in, sigs[i]);
		if (!sigisemptyset(&in)) {
			sigprocmask(SIG_UNBLOCK, &in, NULL);
			sigprocmask(SIG_BLOCK, &in, NULL);
		}
	}

	if (*chld && w) {
		*chld = 0;
		if (pk_workload__wait(w, false, wstatus) == 0)
			*reaped = over = true;
	}
	if (drained == PK_RECORDER_HUNGUP && !w)
		over = true; /* every target thread has gone (-p/-t) */
	return over;
}
