/* SPDX-License-Identifier: MIT */
/*
 * perfkit/self.h - self-monitoring: counting, reading, sampling and watching one's own
 * process from inside it (docs/self-monitoring.md).
 *
 *  - fast reads (pk_self_reader): the counters of a set of events of the calling thread in one
 *    call: without any system call when the kernel allows user-space counter reads (the
 *    mmap page says cap_user_rdpmc and index != 0: rdpmc on x86), else one read(2) with
 *    PERF_FORMAT_GROUP for the whole group. The choice is made on every read, without
 *    configuration; the rdpmc arithmetic is a pure function over the mmap page
 *    (pk_mmap_page__read_self) with the instructions behind a counter-source interface.
 *  - time (pk_time_conv, pk_clock_offset): perf timestamps <-> TSC <-> CLOCK_MONOTONIC.
 *  - overflow notification: signals (O_ASYNC, F_SETOWN_EX, F_SETSIG), epoll, REFRESH.
 *  - in-process sampling (pk_sampler): a ring buffer per CPU or thread, records decoded
 *    and handed to a callback.
 *  - regions (pk_region_begin/end): named, nested, per-thread, lazily opened counters with
 *    a table/JSON report.
 *  - breakpoints/watchpoints (pk_watch).
 *  - the self counter (pk_self_counter): a perf -e event list on the calling thread.
 * Implemented in lib/self, on top of lib/count (evlists) and lib/sample (rings).
 */
#ifndef PERFKIT_SELF_H
#define PERFKIT_SELF_H

#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>
#include <perfkit/common.h>
#include <perfkit/sys.h>
#include <perfkit/readfmt.h>
#include <perfkit/count.h>
#include <perfkit/record.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================================== */
/* Counter source and the mmap-page read algorithm                                     */

/*
 * Where user-space counter values come from. read_pmc(ctx, idx) returns hardware counter
 * idx (the page's index - 1) as the instruction does (rdpmc on x86: pmc_width valid
 * bits); read_cycles(ctx) returns the cycle counter the page's time_* fields describe
 * (rdtsc on x86, cntvct_el0 on arm64). Tests substitute fakes.
 */
struct pk_counter_source {
	uint64_t (*read_pmc)(void *ctx, uint32_t idx);
	uint64_t (*read_cycles)(void *ctx);
	void *ctx;
};

/* The instructions of this architecture (x86_64, aarch64), or NULL where there are none
 * (then only read(2) is used). Static storage. */
PK_API const struct pk_counter_source *pk_counter_source__native(void);

/* Capability bits of perf_event_mmap_page.capabilities. */
#define PK_CAP_USER_RDPMC      (1ULL << 2)
#define PK_CAP_USER_TIME       (1ULL << 3)
#define PK_CAP_USER_TIME_ZERO  (1ULL << 4)
#define PK_CAP_USER_TIME_SHORT (1ULL << 5)

/* Seqlock attempts before pk_mmap_page__read_self gives up with -EAGAIN. */
#define PK_SELF_READ_MAX_RETRIES 1000

struct pk_self_read {
	uint64_t count;      /* offset + sign-extended counter value (two's complement) */
	uint64_t enabled;    /* time_enabled, extended to now when cap_user_time */
	uint64_t running;    /* time_running, likewise */
	uint32_t retries;    /* seqlock retries needed */
	uint32_t index;      /* the page's index (hardware counter + 1) */
};

/*
 * Read a counter through its mmap control page without a system call (the man page's
 * loop, "MMAP layout"): seq = lock; read time_enabled/running, index, offset, the time_*
 * fields; if cap_user_rdpmc && index: pmc = read_pmc(index - 1) sign-extended from
 * pmc_width bits; retry while lock changed (or is odd). With cap_user_time the times are
 * extended by time_offset + cyc * time_mult >> time_shift (cyc folded with time_cycles /
 * time_mask under cap_user_time_short); running only while the counter is on hardware.
 * Pure: touches only *pc and the source. Returns 0; -EOPNOTSUPP when the page does not
 * allow it now (cap_user_rdpmc clear, index == 0, src NULL): read(2) the fd instead;
 * -EAGAIN if the lock never settled; -EINVAL for NULL pc/out.
 */
PK_API int pk_mmap_page__read_self(const struct perf_event_mmap_page *pc,
				   const struct pk_counter_source *src, struct pk_self_read *out);

/* ================================================================================== */
/* Fast reader: the events of one thread, read together                                */

struct pk_self_reader;

enum pk_read_path {
	PK_READ_NONE = 0,   /* not read yet */
	PK_READ_RDPMC = 1,  /* every counter through its mmap page, no system call */
	PK_READ_GROUP = 2,  /* one read(2) of the group leader with PERF_FORMAT_GROUP */
	PK_READ_SINGLE = 3, /* one read(2) per fd (separate events, or one event) */
};

struct pk_self_reader_opts {
	size_t sz;
	pid_t tid;          /* thread to count: 0 (default) = the calling thread. Other
			     * threads are never read with rdpmc (the values would be ours). */
	bool separate;      /* open each event alone (no group); read them one by one */
	bool no_rdpmc;      /* never read through the mmap page, always read(2) */
	bool disabled;      /* open disabled; pk_self_reader__enable starts counting */
	bool inherit;       /* also count threads the target creates later (no rdpmc) */
	bool exclude_kernel;/* count user space only (also retried automatically on EACCES) */
	const struct pk_counter_source *source; /* NULL = pk_counter_source__native() */
	size_t :0;
};

/*
 * Open the events of `spec` (perf -e syntax; braces are ignored: all supported events form
 * one group unless opts->separate). Events the machine lacks (ENOENT, EOPNOTSUPP, ENODEV:
 * hardware events without a PMU) are kept as unsupported and read as zero. If the group
 * cannot be opened (EINVAL) the events are reopened separately. Each event that may live
 * on a hardware counter gets its control page mmapped (one page) for rdpmc reads; a
 * failing mmap only disables that path. NULL + errno: PK_ERR_PARSE, ENOENT (unknown
 * event), EACCES/EPERM, ENOMEM; ENODEV if no event at all is supported.
 */
PK_API struct pk_self_reader *pk_self_reader__open(const char *spec,
						   const struct pk_self_reader_opts *opts);
/* Same from attrs (copied; read_format, disabled, inherit, pinned are set by the reader)
 * and names (copied; NULL = "event<i>"). */
PK_API struct pk_self_reader *
pk_self_reader__open_attrs(const struct pk_attr *attrs, const char *const *names, int nr,
			   const struct pk_self_reader_opts *opts);
/* Unmap and close everything. NULL is fine. */
PK_API void pk_self_reader__free(struct pk_self_reader *r);
PK_API int pk_self_reader__nr(const struct pk_self_reader *r);
PK_API const char *pk_self_reader__name(const struct pk_self_reader *r, int idx);
PK_API bool pk_self_reader__supported(const struct pk_self_reader *r, int idx);
/* fd of event idx (-1 if unsupported or out of range). */
PK_API int pk_self_reader__fd(const struct pk_self_reader *r, int idx);
/* The mmapped control page of event idx, NULL if none. */
PK_API const struct perf_event_mmap_page *pk_self_reader__page(const struct pk_self_reader *r,
								int idx);
/* true if the events were opened as one group. */
PK_API bool pk_self_reader__grouped(const struct pk_self_reader *r);
PK_API int pk_self_reader__enable(struct pk_self_reader *r);
PK_API int pk_self_reader__disable(struct pk_self_reader *r);
PK_API int pk_self_reader__reset(struct pk_self_reader *r);
/*
 * Read every event into out[0..max): raw value, time enabled and running (an unsupported
 * event reads all zero). Uses rdpmc when every supported event's page allows it, else one
 * read(2) for the group (or one per separate fd). Returns the number of events, or -errno
 * of a failed read. Thread-compatible: one thread per reader (the owner's, for rdpmc).
 */
PK_API int pk_self_reader__read(struct pk_self_reader *r, struct pk_count_value *out, size_t max);
/* The path the last pk_self_reader__read took. */
PK_API enum pk_read_path pk_self_reader__last_path(const struct pk_self_reader *r);
PK_API const char *pk_read_path__name(enum pk_read_path p);

/* ================================================================================== */
/* Time conversion                                                                     */

struct pk_time_conv {
	uint64_t capabilities;  /* PK_CAP_* bits as found */
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	uint64_t time_offset;
	uint64_t time_cycles;   /* only with PK_CAP_USER_TIME_SHORT */
	uint64_t time_mask;     /* all ones unless PK_CAP_USER_TIME_SHORT */
};

/*
 * Copy the time parameters of a control page under its seqlock. Returns 0 when
 * cap_user_time_zero is set (conversions valid), -EOPNOTSUPP when it is not (tc is still
 * filled; on x86 the kernel clears it when sched_clock is not a stable TSC and for events
 * with use_clockid), -EAGAIN if the lock never settled.
 */
PK_API int pk_time_conv__from_page(struct pk_time_conv *tc, const struct perf_event_mmap_page *pc);
/* Same from a fresh dummy software event of the calling thread (opened, page mapped,
 * read, closed). */
PK_API int pk_time_conv__read(struct pk_time_conv *tc);
/* Cycle counter value -> perf timestamp (ns), the man page's cap_user_time formula. */
PK_API uint64_t pk_time_conv__cyc_to_perf(const struct pk_time_conv *tc, uint64_t cyc);
/* Perf timestamp -> cycle counter value (the inverse, exact up to rounding). */
PK_API uint64_t pk_time_conv__perf_to_cyc(const struct pk_time_conv *tc, uint64_t ns);
/* Now, as a perf timestamp, from the native cycle counter (-EOPNOTSUPP without one or
 * without cap_user_time_zero). */
PK_API int pk_time_conv__now(const struct pk_time_conv *tc, uint64_t *ns);

/*
 * Offset between the perf clock of sample timestamps (the kernel's local clock, unless the
 * event uses use_clockid) and a POSIX clock: clock = perf + offset_ns. Measured by making
 * the kernel timestamp a record (a PERF_RECORD_COMM of the calling thread on a dummy event)
 * between two clock_gettime() calls; the best of several rounds is kept and `error_ns` is
 * half its bracket. Events opened with attr.use_clockid = 1 and attr.clockid = clk have
 * timestamps in clk directly and need no offset.
 */
struct pk_clock_offset {
	clockid_t clockid;
	int64_t offset_ns;
	uint64_t error_ns;
};
/* Measure (rounds 0 = 5). 0 or -errno (from perf_event_open/mmap; -EIO if no record came). */
PK_API int pk_clock_offset__measure(struct pk_clock_offset *out, clockid_t clk, int rounds);
PK_API uint64_t pk_clock_offset__to_clock(const struct pk_clock_offset *o, uint64_t perf_ns);
PK_API uint64_t pk_clock_offset__to_perf(const struct pk_clock_offset *o, uint64_t clock_ns);
/*
 * The perf timestamp of "now" as the kernel would write it for an event of the calling
 * thread with the given clock (use_clockid when clk >= 0, the perf clock when clk < 0),
 * bracketed by clock_gettime(CLOCK_MONOTONIC) readings before/after (may be NULL).
 */
PK_API int pk_perf_clock__stamp(clockid_t clk, uint64_t *perf_ns, uint64_t *mono_before,
				uint64_t *mono_after);

/* ================================================================================== */
/* Overflow notification                                                               */

/*
 * Deliver overflow notifications of `fd` as signal `sig` to thread `tid` (0 = the calling
 * thread): O_ASYNC, F_SETOWN_EX with F_OWNER_TID, F_SETSIG. With a real-time `sig` every
 * overflow queues one signal whose siginfo has si_fd = fd and si_code POLL_IN (or POLL_HUP
 * for the overflow that exhausts a PERF_EVENT_IOC_REFRESH count; the event is then
 * disabled). `sig` 0 means SIGIO without siginfo details. The caller installs the handler
 * (SA_SIGINFO) before; the library never does. 0 or -errno.
 */
PK_API int pk_overflow__set_signal(int fd, int sig, pid_t tid);
/* Stop signal delivery (clears O_ASYNC). */
PK_API int pk_overflow__clear_signal(int fd);
/*
 * Arm `fd` for exactly `n` more overflows (PERF_EVENT_IOC_REFRESH): the event is enabled,
 * notifies on each overflow and disables itself on the n-th (POLL_HUP). Not for inherited
 * events. 0 or -errno (-EINVAL for n <= 0).
 */
PK_API int pk_overflow__refresh(int fd, int n);
/* Signal information of an overflow signal (from an SA_SIGINFO handler). */
struct pk_overflow_sig {
	int fd;      /* si_fd */
	int code;    /* si_code: POLL_IN, POLL_HUP, ... */
	bool hup;    /* code == POLL_HUP: the refresh count is exhausted */
};
/* Async-signal-safe. Returns 0, or -EINVAL if si is not an I/O signal. */
PK_API int pk_overflow__decode_siginfo(const siginfo_t *si, struct pk_overflow_sig *out);

/*
 * epoll over perf fds. The kernel reports POLLIN for an fd only when it has a ring buffer
 * mapped (wakeup_events / wakeup_watermark decide when); an fd without one polls as
 * POLLHUP. POLLHUP also means the monitored task exited.
 */
struct pk_overflow_poll;
struct pk_overflow_event {
	int fd;
	void *ctx;
	bool in;     /* POLLIN */
	bool hup;    /* POLLHUP */
	bool err;    /* POLLERR */
};
PK_API struct pk_overflow_poll *pk_overflow_poll__new(void);
PK_API void pk_overflow_poll__free(struct pk_overflow_poll *p);
PK_API int pk_overflow_poll__add(struct pk_overflow_poll *p, int fd, void *ctx);
PK_API int pk_overflow_poll__del(struct pk_overflow_poll *p, int fd);
/* Wait up to timeout_ms (-1 forever). Returns the number of events (0 on timeout) or
 * -errno (-EINTR is returned, not retried). */
PK_API int pk_overflow_poll__wait(struct pk_overflow_poll *p, struct pk_overflow_event *evs,
				  int max, int timeout_ms);
/* The epoll fd, for integration into the caller's own loop. */
PK_API int pk_overflow_poll__fd(const struct pk_overflow_poll *p);

/* ================================================================================== */
/* In-process sampler                                                                  */

struct pk_sampler;

enum pk_sampler_scope {
	PK_SAMPLER_THREAD = 0,  /* the calling thread (or opts.tid): one ring */
	PK_SAMPLER_PROCESS = 1, /* every thread of this process now, and (inherit) the
				 * threads they create: one ring per CPU */
};

/* Called for every record; return non-zero to stop the current drain. `rec` is valid only
 * during the call. Samples are decoded with pk_sample__decode (rec->sample). */
typedef int (*pk_sampler_cb)(struct pk_sampler *s, const struct pk_record *rec, void *ctx);

struct pk_sampler_opts {
	size_t sz;
	const char *event;        /* event spec, NULL = "cpu-clock" (first event used) */
	const struct perf_event_attr *attr; /* instead of event: this attr (copied) */
	uint64_t sample_type;     /* 0 = IP|TID|TIME|CPU|PERIOD */
	uint64_t read_format;     /* with PERF_SAMPLE_READ (0 = plain value) */
	uint64_t period;          /* sample every `period` events ... */
	uint64_t freq;            /* ... or at `freq` Hz (default 1000 Hz if neither) */
	enum pk_sampler_scope scope;
	pid_t tid;                /* PK_SAMPLER_THREAD: thread to sample, 0 = caller */
	size_t pages;             /* data pages per ring, power of two; 0 = 64 */
	unsigned wakeup_events;   /* poll wakes after this many samples (0 = 1 page of data) */
	bool start_enabled;       /* otherwise pk_sampler__enable starts sampling */
	bool exclude_kernel;
	bool task;                /* also deliver FORK/EXIT records */
	pk_sampler_cb cb;
	void *ctx;
	size_t :0;
};

/* Open and map. NULL + errno (EINVAL bad options, errno of perf_event_open / mmap). */
PK_API struct pk_sampler *pk_sampler__new(const struct pk_sampler_opts *opts);
PK_API void pk_sampler__free(struct pk_sampler *s);
PK_API int pk_sampler__enable(struct pk_sampler *s);
PK_API int pk_sampler__disable(struct pk_sampler *s);
/* Read every ring now and call the callback for each record. Returns the number of
 * records delivered or -errno (-PK_ERR_FORMAT for a corrupt ring, which is discarded). */
PK_API int pk_sampler__drain(struct pk_sampler *s);
/* Wait up to timeout_ms for data (poll), then drain. */
PK_API int pk_sampler__poll(struct pk_sampler *s, int timeout_ms);
/* The attr actually used (for pk_sample_layout__init etc.). */
PK_API const struct perf_event_attr *pk_sampler__attr(const struct pk_sampler *s);
PK_API const struct pk_sample_layout *pk_sampler__layout(const struct pk_sampler *s);
/* Counters of the sampler. */
struct pk_sampler_stats {
	uint64_t samples;      /* PERF_RECORD_SAMPLE delivered */
	uint64_t records;      /* all records delivered */
	uint64_t lost;         /* sum of PERF_RECORD_LOST.lost */
	uint64_t bad;          /* records that failed to decode */
	uint64_t throttles;    /* THROTTLE records */
};
PK_API void pk_sampler__stats(const struct pk_sampler *s, struct pk_sampler_stats *out);
/* Number of fds and fd i (every fd, for ioctls such as PERF_EVENT_IOC_PERIOD). */
PK_API int pk_sampler__nr_fds(const struct pk_sampler *s);
PK_API int pk_sampler__fd(const struct pk_sampler *s, int idx);

/* ================================================================================== */
/* Regions                                                                             */

/*
 * Named code regions counted per thread:
 *
 *     pk_region_begin("solve");  ... pk_region_end("solve");
 *
 * The first call in a thread opens that thread's counters (a pk_self_reader on the calling
 * thread, so every thread counts itself: no zero counts for threads other than the first).
 * Regions nest (inner counts are included in outer ones) and must end in LIFO order.
 * Totals are accumulated per region and thread as sums of multiplex-scaled deltas.
 * Thread-safe; begin/end cost one counter read each (no lock on the path once a region
 * name is known).
 *
 * Events: pk_regions__init(spec) before the first region, else $PERFKIT_EVENTS, else
 * "task-clock,context-switches,page-faults" plus cycles and instructions if the machine
 * has them. A report is written at exit only if asked for (opts.report_at_exit or
 * $PERFKIT_REGION_REPORT = a path, "stderr" or "stdout"; JSON if the name ends in .json).
 * The two variables are read only by the implicit set-up of a program that never calls
 * pk_regions__init (so it can be configured without a rebuild), or when opts.use_env
 * asks for them; an explicit pk_regions__init otherwise takes only its arguments.
 */
struct pk_region;

struct pk_regions_opts {
	size_t sz;
	const char *report_at_exit;  /* path, "stderr", "stdout"; NULL = none */
	bool json_at_exit;           /* JSON instead of the table */
	/* Take the event set from $PERFKIT_EVENTS when spec is NULL, and the exit report
	 * from $PERFKIT_REGION_REPORT when report_at_exit is NULL, as the implicit set-up
	 * does. Off: no environment variable is read. */
	bool use_env;
	size_t :0;
};

/* Choose the event set (NULL spec = the default; $PERFKIT_EVENTS first with
 * opts.use_env). Must come before the first region: -EBUSY afterwards. 0, -PK_ERR_PARSE,
 * -ENOENT. */
PK_API int pk_regions__init(const char *spec, const struct pk_regions_opts *opts);
/* The handle of region `name` (created on first use; lives until exit). NULL + errno
 * (EINVAL empty name, ENOSPC too many regions: PK_REGIONS_MAX). */
#define PK_REGIONS_MAX 4096
PK_API struct pk_region *pk_region__get(const char *name);
PK_API const char *pk_region__name(const struct pk_region *r);
/* Begin / end a region in the calling thread. end must match the innermost open region
 * (-EINVAL otherwise, nothing changes). 0 or -errno (counters could not be opened). */
PK_API int pk_region__begin(struct pk_region *r);
PK_API int pk_region__end(struct pk_region *r);
PK_API int pk_region_begin(const char *name);
PK_API int pk_region_end(const char *name);

/* Events counted (after the first region or pk_regions__init): number and names. */
PK_API int pk_regions__nr_events(void);
PK_API const char *pk_regions__event_name(int idx);

/* Totals of one region in one thread. */
struct pk_region_stat {
	const char *region;
	pid_t tid;
	uint64_t calls;               /* completed begin/end pairs */
	int nr;                       /* events */
	const char *const *names;     /* nr event names */
	const struct pk_count *counts;/* nr scaled totals (status NOT_SUPPORTED if absent) */
};
typedef int (*pk_region_cb)(const struct pk_region_stat *st, void *ctx);
/* Call cb for every (region, thread) with at least one completed call, threads in order of
 * first use, regions in order of creation. A non-zero return stops and is returned. */
PK_API int pk_regions__foreach(pk_region_cb cb, void *ctx);

enum pk_region_format { PK_REGION_TABLE = 0, PK_REGION_JSON = 1 };
/* Write the report (a table with one row per region and thread plus a per-region total,
 * or one JSON document). 0 or -EIO. */
PK_API int pk_regions__report(FILE *f, enum pk_region_format fmt);
/* Zero every total (open regions keep running). */
PK_API void pk_regions__reset(void);
/* Close the calling thread's counters now (also done automatically at thread exit). */
PK_API void pk_regions__thread_exit(void);

/* ================================================================================== */
/* Breakpoints and watchpoints                                                         */

/* Access kinds (HW_BREAKPOINT_R/W/RW/X values). */
#define PK_WATCH_R  1u
#define PK_WATCH_W  2u
#define PK_WATCH_RW 3u
#define PK_WATCH_X  4u

struct pk_watch;
struct pk_watch_opts {
	size_t sz;
	pid_t tid;               /* 0 = the calling thread */
	uint64_t sample_period;  /* 0: count hits; N: a sample every N hits (mmap the fd) */
	uint64_t sample_type;    /* with sample_period (0 = IP|TID|ADDR) */
	bool disabled;           /* open disabled */
	bool inherit;            /* also watch threads created later */
	size_t :0;
};

/*
 * Fill a breakpoint attr: type PERF_TYPE_BREAKPOINT, bp_addr, bp_type, bp_len (X: the size
 * of a long, as the kernel requires). -EINVAL for len not 1/2/4/8, addr not aligned to
 * len, unknown type.
 */
PK_API int pk_watch__attr(struct perf_event_attr *attr, const void *addr, size_t len, unsigned type);
/* Watch [addr, addr + len) for `type` accesses. NULL + errno (EINVAL, ENOSPC when the
 * debug registers are all taken, errno of perf_event_open). */
PK_API struct pk_watch *pk_watch__open(const void *addr, size_t len, unsigned type,
				       const struct pk_watch_opts *opts);
PK_API void pk_watch__free(struct pk_watch *w);
PK_API int pk_watch__fd(const struct pk_watch *w);
/* Move the watch (PERF_EVENT_IOC_MODIFY_ATTRIBUTES: only address, kind and length change;
 * the count is kept). 0 or -errno. */
PK_API int pk_watch__move(struct pk_watch *w, const void *addr, size_t len, unsigned type);
/* Hits counted so far. 0 or -errno. */
PK_API int pk_watch__hits(struct pk_watch *w, uint64_t *hits);
/*
 * Do hardware breakpoints fire here? Watches a local variable for writes, writes it, and
 * counts. Returns 1 (they fire), 0 (they open but never fire, as in some VMs), or -errno
 * if a breakpoint cannot even be opened.
 */
PK_API int pk_watch__selftest(void);

/* ---- counting one's own thread: start/stop/read deltas (pk_self_reader underneath) ---- */

struct pk_self_counter;

/*
 * Open the events of `spec` (perf -e syntax, e.g. "task-clock,page-faults" or
 * "{cycles,instructions}") on the calling thread, disabled: as one group when the spec
 * has braces, else each on its own (so that they multiplex). Unsupported hardware events
 * are kept and report PK_COUNT_NOT_SUPPORTED. Reads go through the control page (rdpmc)
 * where it allows, else read(2). NULL + errno (PK_ERR_PARSE etc.; ENODEV when no event at
 * all is supported here).
 */
PK_API struct pk_self_counter *pk_self_counter__open(const char *spec);
PK_API int pk_self_counter__start(struct pk_self_counter *sc);  /* reset + enable */
PK_API int pk_self_counter__stop(struct pk_self_counter *sc);   /* disable */
PK_API int pk_self_counter__nr(const struct pk_self_counter *sc);
PK_API const char *pk_self_counter__name(const struct pk_self_counter *sc, int idx);
/* Scaled values of every event into out[0..max); returns the number of events. */
PK_API int pk_self_counter__read(struct pk_self_counter *sc, struct pk_count *out, size_t max);
/* The underlying reader (its fds, control pages, read path), for callers that need more. */
PK_API struct pk_self_reader *pk_self_counter__reader(struct pk_self_counter *sc);
PK_API void pk_self_counter__free(struct pk_self_counter *sc);

#ifdef __cplusplus
}
#endif
#endif
