/* SPDX-License-Identifier: MIT */
/*
 * perfkit/trace.h - system calls from the raw_syscalls tracepoints, as `perf trace` and
 * `strace` show them (the engine of `perfkit trace`).
 *
 *   - names and numbers: the x86-64 system call table (pk_syscall__name, __nr);
 *   - arguments and return values as text, decoded where the value itself carries the
 *     meaning (fds, AT_FDCWD, open/mmap/prot flags, signals, errno names). Strings and
 *     structs behind user pointers are not in the tracepoints: pointers stay numbers;
 *   - pairing: pk_systrace__process reads a recording of raw_syscalls:sys_enter and
 *     sys_exit through the session (perfkit/session.h) and calls back once per system
 *     call with its arguments, return value and duration;
 *   - summaries: pk_syscall_stats adds calls up per thread and system call (calls,
 *     errors, total/min/max and the sum of squares for a standard deviation).
 */
#ifndef PERFKIT_TRACE_H
#define PERFKIT_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/common.h>
#include <perfkit/data.h>
#include <perfkit/symbol.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The x86-64 name of system call nr ("openat"), or NULL for a number without one. */
PK_API const char *pk_syscall__name(long nr);
/* The x86-64 number of a system call name, or -1 (errno ENOENT) if there is none. */
PK_API long pk_syscall__nr(const char *name);
/* One past the highest x86-64 system call number known. */
PK_API long pk_syscall__max(void);
/* The symbolic name of an errno value ("ENOENT"), or NULL if unknown. */
PK_API const char *pk_errno__name(int err);

/*
 * The arguments of a call of system call nr as text into buf (len bytes, always
 * NUL-terminated when len > 0): "dfd: CWD, filename: 0x7ffc..., flags: RDONLY|CLOEXEC".
 * Known calls show their arguments by name and kind; others every non-zero argument as
 * "argN: 0x...". Returns the length the full text needs (as snprintf).
 */
PK_API int pk_syscall__format_args(long nr, const uint64_t args[6], char *buf, size_t len);
/*
 * The return value ret of system call nr as text: "3", "0x7f12...000" for calls that
 * return addresses, "-1 ENOENT (No such file or directory)" for an error (-4095..-1).
 * Returns the length the full text needs (as snprintf).
 */
PK_API int pk_syscall__format_ret(long nr, int64_t ret, char *buf, size_t len);
/* Whether ret is an error return (-4095..-1, the kernel's IS_ERR_VALUE range). */
PK_API bool pk_syscall__failed(int64_t ret);

/* One system call: what sys_enter and sys_exit of one thread said. */
struct pk_syscall_call {
	uint32_t pid, tid, cpu;
	long nr;
	bool entered;           /* sys_enter seen: args and enter_time are valid */
	bool returned;          /* sys_exit seen: ret and exit_time are valid (false for a
				 * call still running at the end, such as exit_group) */
	uint64_t enter_time, exit_time; /* perf clock ns */
	uint64_t args[6];
	int64_t ret;
	const char *comm;       /* the thread's command at that time ("" if unknown) */
	bool child_return;      /* a new task's return from clone/clone3/fork/vfork: the
				 * parent's call, seen again in the child (not counted by
				 * pk_syscall_stats) */
};

typedef int (*pk_syscall_fn)(void *ctx, const struct pk_syscall_call *c);

/* One page fault of a traced thread: a sample of the software event major-faults or
 * minor-faults (perf trace -F; recorded with PERF_SAMPLE_ADDR for the address). */
struct pk_syscall_fault {
	uint32_t pid, tid, cpu;
	uint64_t time;          /* perf clock ns */
	uint64_t ip;            /* where it faulted */
	uint64_t addr;          /* the address that faulted (0 without PERF_SAMPLE_ADDR) */
	uint8_t cpumode;        /* of ip: PERF_RECORD_MISC_USER, _KERNEL, ... */
	bool major;             /* major-faults (else minor-faults) */
	const char *comm;       /* the thread's command at that time ("" if unknown) */
	struct pk_machine *machine; /* the session's (borrowed, for pk_machine__resolve and
				     * __resolve_data during the callback), or NULL */
};

typedef int (*pk_fault_fn)(void *ctx, const struct pk_syscall_fault *f);

struct pk_systrace_opts {
	size_t sz;
	pk_syscall_fn on_call;  /* every call, at its sys_exit (or at the end); returns 0,
				 * PK_SESSION_STOP or a negative errno as session callbacks */
	void *ctx;
	/* Options of the machine model the session makes (comms); NULL: the defaults. */
	const struct pk_machine_opts *machine_opts;
	bool reader_thread;     /* as pk_session_opts.reader_thread */
	pk_fault_fn on_fault;   /* every page fault sample (NULL: they are ignored) */
	size_t :0;
};

struct pk_systrace_stats {
	size_t sz;
	uint64_t enters, exits; /* samples of each tracepoint */
	uint64_t unpaired;      /* exits without their enter (lost, or recording started
				 * inside the call) */
	uint64_t lost;          /* events the kernel lost for a full ring (LOST records) */
	bool found;             /* the recording has raw_syscalls:sys_enter or sys_exit */
	uint64_t majfaults, minfaults; /* page fault samples (major-faults, minor-faults) */
};

/*
 * Read a recording of raw_syscalls:sys_enter / sys_exit (perf trace record, perf record
 * -e 'raw_syscalls:*', perfkit trace) through a session, pairing the events of each
 * thread and calling opts->on_call once per call. Other events are ignored. st (may be
 * NULL; st->sz as for other output structs) receives the counts. Returns 0, a callback's
 * negative return, the session's error, or -ENOENT when the recording has neither
 * tracepoint (st->found false).
 */
PK_API int pk_systrace__process(struct pk_data_reader *r, const struct pk_systrace_opts *opts,
				struct pk_systrace_stats *st);

/* Sums over calls, per (tid, nr). */
struct pk_syscall_stats;
struct pk_syscall_stat {
	uint32_t pid, tid;
	long nr;
	uint64_t calls, errors;
	uint64_t total_ns, min_ns, max_ns; /* over the calls with a duration */
	uint64_t timed;         /* calls with a duration (entered and returned) */
	double sumsq_ns;        /* sum of squared durations, for the standard deviation */
	char comm[16];          /* the thread's last comm */
};
/* NULL + errno ENOMEM. */
PK_API struct pk_syscall_stats *pk_syscall_stats__new(void);
PK_API void pk_syscall_stats__free(struct pk_syscall_stats *s);
/* Count one call: a returned call (error if pk_syscall__failed). 0 or -ENOMEM. */
PK_API int pk_syscall_stats__add(struct pk_syscall_stats *s, const struct pk_syscall_call *c);
/* The entries in order of first appearance of the thread, then of the call. */
PK_API size_t pk_syscall_stats__nr(const struct pk_syscall_stats *s);
PK_API const struct pk_syscall_stat *pk_syscall_stats__get(const struct pk_syscall_stats *s,
							   size_t idx);

#ifdef __cplusplus
}
#endif

#endif
