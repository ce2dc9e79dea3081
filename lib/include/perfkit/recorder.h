/* SPDX-License-Identifier: MIT */
/*
 * perfkit/recorder.h - record samples into a perf.data file, as `perf record` does (the
 * engine of `perfkit record`; perfkit/record.h is the *decoding* of records).
 *
 * Usage:
 *     PK_OPTS(pk_recorder_opts, o, .events = list, .workload = w, .output = "perf.data");
 *     struct pk_recorder *r = pk_recorder__new(&o);     // validates and copies the opts
 *     if (pk_recorder__open(r) < 0) ...                 // pk_recorder__failure says what
 *     pk_workload__start(w);
 *     while (!stop && pk_recorder__drain(r, 250) >= 0)  // one pass of the drain loop
 *         ;
 *     pk_workload__wait(w, true, &status);
 *     int err = pk_recorder__finish(r);                 // final drain, build-ids, close
 *     pk_recorder__stats(r, &st);
 *     pk_recorder__free(r);
 *
 * Policy (perf 6.1's evsel__config): IP, TID, TIME and PERIOD in every sample, IDENTIFIER
 * when the file has more than one attr, CPU system-wide, a frequency of 4000 Hz clamped to
 * perf_event_max_sample_rate, sample_id_all, the side-band bits (mmap, comm, task, ...) on
 * the first event or on a dummy event when there are several events or CPU targets, cycles
 * replaced by cpu-clock where there is no hardware PMU, leader sampling for "{a,b}:S".
 * The initial state (kernel map, COMM/FORK/MMAP2 of the targets, FINISHED_INIT) is
 * synthesised after the header; the BUILD_ID feature lists the executable files that
 * MMAP records named.
 *
 * The recorder never prints and installs no signal handler: the caller handles signals
 * (see opts.sigmask), messages come through opts.on_notice and pk_recorder__failure.
 */
#ifndef PERFKIT_RECORDER_H
#define PERFKIT_RECORDER_H

#include <signal.h>
#include <sys/select.h> /* sigset_t, also under a strict -std=c11 */
#include <sys/types.h>
#include <perfkit/common.h>
#include <perfkit/sys.h>
#include <perfkit/count.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pk_recorder;
struct pk_event_list;
struct pk_workload;

enum pk_recorder_callgraph {
	PK_RECORDER_CG_NONE = 0,
	PK_RECORDER_CG_FP,      /* frame pointers (PERF_SAMPLE_CALLCHAIN) */
	PK_RECORDER_CG_DWARF,   /* user registers and a copy of the user stack (implies addr) */
};

/* Something worth telling the user that is not an error (the caller words it). */
enum pk_recorder_notice_kind {
	PK_RECORDER_FREQ_CLAMPED = 1,  /* asked -> used Hz: over perf_event_max_sample_rate */
	PK_RECORDER_CYCLES_FALLBACK,   /* event `name` needs a hardware PMU: cpu-clock instead */
	PK_RECORDER_PAGES_REDUCED,     /* asked -> used ring pages: over the locked-memory limit */
	PK_RECORDER_NO_TRACING_DATA,   /* tracefs formats not readable (err): perf cannot read
					* the tracepoint samples of the file */
	PK_RECORDER_LOCK_TAKEN_OVER,   /* the output `name` was locked by `pid`, which died
					* without releasing it (SIGKILL): its lock is taken
					* over (pk_data_lock) */
};
struct pk_recorder_notice {
	enum pk_recorder_notice_kind kind;
	const char *name;       /* event name (CYCLES_FALLBACK), else NULL */
	uint64_t asked, used;   /* FREQ_CLAMPED, PAGES_REDUCED */
	int err;                /* NO_TRACING_DATA: negative errno */
	int32_t pid;            /* LOCK_TAKEN_OVER */
};
typedef void (*pk_recorder_notice_fn)(const struct pk_recorder_notice *n, void *ctx);

struct pk_recorder_opts {
	size_t sz;
	/* ---- events ---- */
	/* The events (borrowed until pk_recorder__free). NULL: event_str is parsed; both NULL
	 * (or an empty list): "cycles" (cpu-clock without a hardware PMU). */
	const struct pk_event_list *events;
	const char *event_str;
	long freq;              /* Hz; 0 = 4000 */
	bool freq_max;          /* perf_event_max_sample_rate */
	uint64_t period;        /* sample every `period` events instead (excludes freq) */
	enum pk_recorder_callgraph callgraph;
	uint32_t stack_size;    /* DWARF: user stack bytes, 8..65528 (0 = 8192) */
	bool addr;              /* -d: ADDR and DATA_SRC, data mappings */
	bool sample_cpu;        /* CPU in samples (always system-wide) */
	bool switch_events;     /* context switch records */
	bool namespaces;        /* NAMESPACES records (and synthesised ones) */
	bool all_cgroups;       /* CGROUP records and each sample's cgroup id */
	bool no_inherit;        /* do not follow threads and children created later */
	bool per_thread;        /* one ring per thread (no CPU targets, no inherit) */
	bool overwrite;         /* flight recorder: see pk_recorder__snapshot */
	bool stat;              /* inherit_stat: PERF_RECORD_READ at thread exit */
	size_t mmap_pages;      /* data pages per ring, a power of two (0 = 128); halved
				 * while over the locked-memory limit (PAGES_REDUCED) */
	int compress_level;     /* zstd 1..22 (PERF_RECORD_COMPRESSED); 0 = none */
	bool no_buildid_cache;  /* do not copy the recorded binaries into the cache */
	const char *buildid_dir;/* the build-id cache; NULL = ~/.debug of the effective user
				 * (pk_build_id_cache_opts.dir; no environment read) */
	pk_open_cb on_open;     /* every perf_event_open attempt (verbose output) */
	pk_recorder_notice_fn on_notice;
	void *ctx;              /* for on_open and on_notice */
	/* ---- targets: one of pids, tids, system_wide, workload ---- */
	const char *pids;       /* "12,34": every thread of these processes */
	const char *tids;       /* exactly these threads */
	bool system_wide;       /* every CPU (or `cpus`) */
	const char *cpus;       /* "0-3,6" (implies system_wide) */
	bool cgroup;            /* only tasks of the cgroup directory open as cgroup_fd */
	int cgroup_fd;          /* borrowed; needs system_wide */
	struct pk_workload *workload; /* prepared, not started (borrowed): it is recorded from
				       * its exec (enable_on_exec) */
	/* ---- output ---- */
	const char *output;     /* path ("-" = stdout in pipe mode); NULL: output_fd */
	int output_fd;          /* borrowed */
	bool pipe;              /* pipe format (forced for "-" and for unseekable fds) */
	bool keep_old;          /* rename an existing regular file `output` to output.old */
	/* A path `output` is locked first (pk_data_lock: `output`.lock) and the rename and
	 * creation follow; a second recorder of the path fails at __open with stage
	 * PK_RECORDER_FAIL_OUTPUT, err -EBUSY and the owner's pid in the failure's `pid`,
	 * having touched nothing. */
	/* The signal mask to wait with in pk_recorder__drain (as ppoll's: the caller blocks
	 * its stop signals and lets them in only while the recorder sleeps, so none is
	 * missed). Copied. NULL: the mask is left alone. */
	const sigset_t *sigmask;
	/* ---- off-CPU time ---- */
	/* Also record where target threads block: the software event context-switches (one
	 * sample per switch-out, in the context of the thread leaving) with a call chain (a
	 * frame-pointer one when callgraph is NONE) and context-switch records; each
	 * interval from a thread's switch-out to its next switch-in becomes one sample of an
	 * extra event "offcpu-time" (as perf's BPF off-CPU profiler names it: software,
	 * PERF_COUNT_SW_BPF_OUTPUT) with period = nanoseconds blocked, time = the switch-in,
	 * and the switch-out's call chain. No tracefs needed. The chain of a switch-out is
	 * its user-space part only, as perf's --off-cpu records it (the kernel unwind at
	 * every context switch would double the cost), unless off_cpu_kernel. */
	bool off_cpu;
	uint64_t off_cpu_thresh;  /* drop blocked intervals shorter than this many ns */
	/* Samples of dynamic probes (u:, r:, sdt: events) carry the user registers of the
	 * calling convention's arguments and return value (PERF_SAMPLE_REGS_USER; x86-64:
	 * rdi rsi rdx rcx r8 r9 and rax): perfkit script --args prints them. */
	bool probe_args;
	/* A tracepoint filter (tracefs's filter syntax: "common_pid != 123 && id == 39") set
	 * with PERF_EVENT_IOC_SET_FILTER on every tracepoint event after open; NULL: none.
	 * A filter the kernel rejects fails __open (PK_RECORDER_FAIL_OPEN, -EINVAL). */
	const char *tp_filter;
	/* off_cpu: the switch-out chains include their kernel part (where the thread blocked
	 * in the kernel: pipe_read, futex_wait, ...; perf_event_paranoid <= 1 or CAP_PERFMON),
	 * at the price of a kernel stack walk at every context switch of the targets. */
	bool off_cpu_kernel;
	/* off_cpu: who woke each blocked thread. sched:sched_waking (sched_wakeup where there
	 * is none) is recorded on the targets, in the waker's context: a wake-up by a target
	 * thread is seen (by another process or in an interrupt, depending on the kernel: not
	 * on 6.18 for a per-thread recording; a wake-up made in an interrupt is never
	 * attributed to the thread it interrupted).
	 * Each blocked interval that ended with a wake-up then also gives one sample of a
	 * second extra event "offcpu-waker" whose pid/tid are the waker's, period the
	 * interval's nanoseconds, ip 0, and PERF_SAMPLE_RAW the woken thread
	 * (u32 pid, u32 tid, u32 0): `report -e offcpu-waker --sort comm,tid` weighs the
	 * wakers by the blocked time they ended. Costs one more sample per wake-up. */
	bool off_cpu_wakers;
	/* ---- perf record's finer options ---- */
	/* Per event of `events` (by index, nr_event_filters entries; NULL = none): a filter
	 * set with PERF_EVENT_IOC_SET_FILTER on each of the event's fds after open (perf's
	 * --filter after -e: a tracepoint filter, or an address filter where the PMU has
	 * them). It replaces tp_filter for that event; a filter the kernel refuses fails
	 * __open as tp_filter does. */
	const char *const *event_filters;
	size_t nr_event_filters;
	bool all_user;          /* every event user space only: exclude_kernel (--all-user) */
	bool all_kernel;        /* every event kernel space only: exclude_user (--all-kernel) */
	bool use_clockid;       /* every attr uses `clockid` (perf's -k; CLOCKID feature) */
	int clockid;
	uint64_t sample_regs_user;  /* PERF_SAMPLE_REGS_USER of these registers (--user-regs;
				     * added to DWARF call graphs' own) */
	uint64_t sample_regs_intr;  /* PERF_SAMPLE_REGS_INTR of these registers (-I) */
	/* __open enables nothing (no enable_on_exec either): the caller enables the events
	 * with pk_recorder__enable (perf's -D delay and --control). */
	bool start_disabled;
	bool no_buildid;        /* no BUILD_ID feature and no build-id cache (perf's -B) */
	bool group;             /* the events not in a {group} form one group led by the
				 * first event (perf's --group) */
	/* More of PERF_SAMPLE_PHYS_ADDR, _DATA_PAGE_SIZE and _CODE_PAGE_SIZE in every event's
	 * sample_type (perf's --phys-data, --data-page-size, --code-page-size); other bits
	 * make pk_recorder__new fail with EINVAL. */
	uint64_t sample_type_extra;
	size_t :0;
};

/*
 * Validate and copy the options (strings and event list are borrowed until __free).
 * Nothing is opened yet. NULL + errno: EINVAL (no target, or more than one; pids/tids
 * with a workload; cgroup without system_wide; per_thread with system_wide; period with
 * freq; mmap_pages not a power of two; sample_type_extra with other bits; compress_level or stack_size out of range; no
 * output), ENOMEM. Free with pk_recorder__free.
 */
PK_API struct pk_recorder *pk_recorder__new(const struct pk_recorder_opts *opts);

/*
 * Build the evlist (the policy above), open every event on the targets, map the rings,
 * open the output and write the header, attrs and synthesised state, then enable the
 * events (with a workload: they start at its exec). Returns 0 or a negative errno;
 * pk_recorder__failure then says which step failed and why. A failed open of the events
 * (PK_RECORDER_FAIL_OPEN) may be retried (e.g. after raising RLIMIT_NOFILE on -EMFILE).
 * -EALREADY if already open.
 */
PK_API int pk_recorder__open(struct pk_recorder *r);

enum pk_recorder_stage {
	PK_RECORDER_FAIL_NONE = 0,
	PK_RECORDER_FAIL_SETUP,     /* evlist: out of memory, bad event list, no DWARF regs */
	PK_RECORDER_FAIL_CPUS,      /* `what` = the CPU list */
	PK_RECORDER_FAIL_THREADS,   /* `what` = the pid/tid list */
	PK_RECORDER_FAIL_OPEN,      /* perf_event_open: event, attr, pid, cpu, group_fd;
				     * with `what` set: the filter `what` was refused (of
				     * `event`, when known) */
	PK_RECORDER_FAIL_MMAP,      /* the ring buffers */
	PK_RECORDER_FAIL_OUTPUT,    /* creating the output, `what` = its path; err -EBUSY:
				     * another writer holds it, `pid` = that writer (0: unknown) */
	PK_RECORDER_FAIL_WRITE,     /* writing it */
};
struct pk_recorder_failure {
	size_t sz;
	enum pk_recorder_stage stage;
	int err;                    /* negative errno */
	const char *what;           /* see the stages; owned by the recorder */
	const char *event;          /* OPEN: display name; NULL if no evsel is to blame */
	struct perf_event_attr attr;/* OPEN: the attr as passed to perf_event_open */
	pid_t pid;
	int cpu, group_fd;
};
/* What the last failed __open (or __drain/__finish write) failed at; stage NONE if
 * nothing failed. `out->sz` bounds what is written (0: the whole struct). */
PK_API void pk_recorder__failure(const struct pk_recorder *r, struct pk_recorder_failure *out);

/*
 * One pass of the drain loop: every ring's bytes go to the file as raw spans (one scan of
 * the record headers counts samples and losses and notes MMAP file names); a
 * FINISHED_ROUND follows. In overwrite mode only the side-band rings are drained (the
 * data rings at pk_recorder__snapshot and __finish). When nothing was pending, waits up to
 * timeout_ms (0: no wait) for a ring wake-up, with opts.sigmask; with opts.off_cpu, after a
 * pass that wrote too (every context switch of the targets writes: the next pass waits
 * for a ring half full or the time-out instead of following them switch by switch).
 * Returns 1 when bytes were written, 0 when nothing was pending (after the wait),
 * PK_RECORDER_HUNGUP when every target has gone (all fds hung up: -p/-t threads exited;
 * never system-wide), or a negative errno when the file cannot be written (-EPIPE: the
 * reader of a pipe went away); after a write error the events are disabled and every
 * later call returns the same error.
 */
#define PK_RECORDER_HUNGUP 2
PK_API int pk_recorder__drain(struct pk_recorder *r, int timeout_ms);

/* Enable (on) or disable every recorded event (the side band stays on, so mappings of
 * the disabled span are still known). 0 or -errno; -EINVAL when not open. */
PK_API int pk_recorder__enable(struct pk_recorder *r, bool on);

/* Overwrite mode: write what the data rings hold now (the newest data). 0 or -errno;
 * -EINVAL when not recording in overwrite mode. */
PK_API int pk_recorder__snapshot(struct pk_recorder *r);

/*
 * End the recording: drain what is left (the overwrite snapshot included), disable the
 * events, add the BUILD_ID feature (file mode) and fill the build-id cache (never fatal:
 * see the stats), finish and close the file. Returns 0 or the first write error (-EPIPE:
 * the reader went away). -EINVAL if not open.
 */
PK_API int pk_recorder__finish(struct pk_recorder *r);

/*
 * Rotation (perf record --switch-output): what one finished output file holds.
 * `sz` is the caller's sizeof; the library fills at most that.
 */
struct pk_recorder_file {
	size_t sz;
	uint64_t samples;           /* SAMPLE records in the file */
	uint64_t first_ns, last_ns; /* time of its first and last sample (perf clock, the
				     * samples' TIME); both 0 when it holds none */
	uint64_t bytes;             /* the file's size */
};

/*
 * End the current output file and go on in a new one at the same path, without losing or
 * repeating a record: every ring is drained once, up to where the kernel had written when
 * this is called (in overwrite mode the side-band rings only: call __snapshot first to
 * dump the flight recorder into the file); the file gets its BUILD_ID feature (and the
 * build-id cache its copies), is finished and renamed to `rename_to` (an existing file of
 * that name is replaced). The new file at opts.output holds the same attrs, features and
 * tracing data, and the state of the targets at the switch (kernel map, COMM/MMAP2 of
 * the target processes alive now, and of the workload's descendants; FINISHED_INIT), so
 * that it is read, and symbolised, without the earlier files; what the rings hold beyond
 * the drain goes into it. The output path stays locked throughout.
 * `closed` (may be NULL) describes the renamed file.
 * Returns 0 or a negative errno: -EINVAL (not recording, already finished, pipe or fd
 * output), the rename's (-EXDEV, -EACCES, ...: the file stays at opts.output, finished,
 * and the recording goes on in a new one there) or a write error (then as __drain's).
 */
PK_API int pk_recorder__switch_output(struct pk_recorder *r, const char *rename_to,
				      struct pk_recorder_file *closed);

/*
 * __finish, then (file output, rename_to not NULL) rename the file to rename_to before
 * the output path is unlocked: the last file of a rotation. `closed` (may be NULL)
 * describes it. Returns as __finish, or the rename's negative errno.
 */
PK_API int pk_recorder__finish_as(struct pk_recorder *r, const char *rename_to,
				  struct pk_recorder_file *closed);

struct pk_recorder_stats {
	size_t sz;                  /* the caller's sizeof; the library fills at most that */
	uint64_t samples;           /* SAMPLE records written */
	uint64_t lost;              /* events lost in LOST records */
	uint64_t lost_records;      /* LOST records */
	uint64_t lost_samples;      /* LOST_SAMPLES total */
	uint64_t keepup;            /* times an overwrite ring was overrun while read */
	uint64_t bytes;             /* ring bytes written */
	uint64_t file_bytes;        /* size of the current file so far (after __finish: of
				     * the file; with rotation, of the last one) */
	uint64_t wakeups;           /* ring wake-ups, plus one for the end (as perf counts) */
	uint64_t freq;              /* Hz in use (0 with a period) */
	uint64_t mmap_pages;        /* data pages per ring in use */
	uint64_t build_ids;         /* BUILD_ID entries written */
	/* build-id cache: the first error that stopped filling it (0: none) and the file it
	 * happened at (owned by the recorder), and the files not copied for their size */
	int buildid_cache_err;
	const char *buildid_cache_err_file;
	uint64_t buildid_cache_too_big;
	uint64_t offcpu_samples;    /* offcpu-time samples written */
	uint64_t offcpu_dropped;    /* blocked intervals under off_cpu_thresh (or no memory) */
};
/* Counters so far (complete after __finish). */
PK_API void pk_recorder__stats(const struct pk_recorder *r, struct pk_recorder_stats *st);

/* Close everything not yet closed (an unfinished file is finalised as it is) and free.
 * The workload, event list and cgroup fd are the caller's. NULL is fine. */
PK_API void pk_recorder__free(struct pk_recorder *r);

#ifdef __cplusplus
}
#endif
#endif
