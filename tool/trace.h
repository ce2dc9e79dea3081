/* SPDX-License-Identifier: MIT */
/* tool/trace.h - what cmd-trace.c (options, the live run) and trace-print.c (lines and
 * the summary) share. */
#ifndef TOOL_TRACE_H
#define TOOL_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <perfkit/perfkit.h>

struct trace_opts {
	/* targets */
	const char *pids, *tids;
	bool system_wide;
	char **argv;
	const char *input;      /* -i: read a recording instead */
	/* what is shown */
	bool summary, with_summary; /* -s: only the summary; -S: lines and the summary */
	bool failure;           /* --failure: only failed calls */
	uint64_t duration_ns;   /* --duration: only calls at least this long */
	bool comm;              /* comm/tid (default) or tid alone */
	uint8_t *filter;        /* per syscall nr: shown (NULL: all) */
	long filter_max;
	const char *output;     /* -o */
	size_t mmap_pages;
	int verbose;
	unsigned faults;        /* -F: TRACE_PF_MAJ | TRACE_PF_MIN */
	/* the run */
	FILE *out;
	struct pk_syscall_stats *stats;
	uint64_t first_time;
	pid_t self;             /* perfkit's own pid, left out of system-wide traces */
	struct trace_pf { uint32_t tid; uint64_t maj, min; } *pf; /* -F -s: per thread */
	size_t npf, cappf;
	int err;                /* first output error */
};

/* pk_systrace on_call: print the line (unless -s) and count the call. */
int trace_on_call(void *ctx, const struct pk_syscall_call *c);
#define TRACE_PF_MAJ 1u
#define TRACE_PF_MIN 2u
/* pk_systrace on_fault: print the fault (unless -s) and count it per thread. */
int trace_on_fault(void *ctx, const struct pk_syscall_fault *f);
/* The summary (-s / -S) to o->out. */
void trace_print_summary(struct trace_opts *o);
/* Parse -e's list ("openat,read", "!getppid"): 0, or an exit status after a message. */
int trace_parse_filter(struct trace_opts *o, const char *list);

/* trace-pump.c: a thread moving the bytes of the pipe `in` (non-blocking from then on) to
 * `out` through a buffer of `cap` bytes, until `in` ends; `out` is closed then. NULL with
 * errno. */
struct trace_pump;
struct trace_pump *trace_pump_start(int in, int out, size_t cap);
pid_t trace_pump_tid(const struct trace_pump *p);   /* the pump thread's */
size_t trace_pump_queued(const struct trace_pump *p); /* bytes in the buffer now */
size_t trace_pump_cap(const struct trace_pump *p);
/* Wait for the end of the stream (the writer of `in` closed it), free the pump. */
void trace_pump_join(struct trace_pump *p);

#endif
