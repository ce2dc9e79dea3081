/* SPDX-License-Identifier: MIT */
/*
 * perfkit/export.h - profiles for other tools: an aggregating "profile builder" fed with
 * symbolised samples, and writers for an interactive HTML flame graph (also differential),
 * folded stacks (flamegraph.pl / inferno), pprof (gzip-compressed profile.proto),
 * speedscope JSON, the Firefox Profiler's Gecko format and our JSON sample stream.
 *
 * The builder is independent of perf.data: whoever reads samples (a perf.data reader plus
 * symbolisation, a live ring buffer, a test) hands it samples whose frames are already
 * named. Protocol:
 *
 *     PK_OPTS(pk_profile_opts, o, .timeline = true);
 *     p = pk_profile__new(&o);
 *     ev = pk_profile__add_event(p, "cpu-clock", "nanoseconds");   (each event once)
 *     loop: pk_profile__add_sample(p, &sample);                    (any order)
 *     pk_export__folded(p, stdout, &fopts);  pk_export__pprof(p, f, NULL); ...
 *     pk_profile__free(p);
 *
 * Memory: strings, functions, frames ("locations") and call stacks are interned in hash
 * tables, and a stack is one node of a prefix tree (a node = parent node + frame), so a
 * recording of millions of samples costs memory in proportion to its distinct stacks,
 * not to its samples. Only with `timeline` (needed by the time-ordered formats:
 * speedscope, gecko, json) does each sample keep 32 bytes (time, thread, event, period
 * and its stack node).
 *
 * Writers never close the FILE, check ferror() at the end and return 0, the negative
 * errno of the write that failed (-ENOSPC, -EPIPE, ...; -EIO when the stream no longer
 * tells), -EINVAL (bad arguments, e.g. a time-ordered format on a profile built without
 * `timeline`) or -ENOMEM.
 */
#ifndef PERFKIT_EXPORT_H
#define PERFKIT_EXPORT_H

#include <stdio.h>
#include <perfkit/common.h>
#include <perfkit/data.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What kind of code a frame is; the flame graph colours by it. */
enum pk_frame_kind {
	PK_FRAME_UNKNOWN = 0,
	PK_FRAME_USER = 1,      /* user-space code from a file */
	PK_FRAME_KERNEL = 2,    /* kernel or module */
	PK_FRAME_JIT = 3,       /* JIT code (perf-PID.map, anonymous executable memory) */
	PK_FRAME_COMM = 4,      /* synthetic root frame naming the thread (root_comm) */
};

/* One frame of a sample. Strings are copied by the builder; any may be NULL. */
struct pk_export_frame {
	const char *name;       /* function; NULL: the builder names it "[unknown]" (or
				 * by address, "0x7f..", when addr != 0) */
	const char *dso;        /* path or bracketed name of the object ("[kernel.kallsyms]") */
	uint64_t addr;          /* instruction address as sampled (0: unknown) */
	const char *file;       /* source file of addr, NULL if unknown */
	uint32_t line;          /* source line, 0 if unknown */
	uint8_t kind;           /* enum pk_frame_kind */
	bool inlined;           /* an inline frame: inlined into frames[i + 1], same addr */
};

/* One sample. frames[0] is the LEAF (the sampled instruction), frames[nr - 1] the
 * outermost caller (root), as call chains come from the kernel. */
struct pk_export_sample {
	uint32_t event;         /* index returned by pk_profile__add_event */
	uint32_t pid, tid;
	const char *comm;       /* thread name (NULL: "[unknown]") */
	uint64_t time;          /* ns (perf clock); 0 if unknown */
	uint64_t period;        /* the event's period (weight); 0 is counted as 1 */
	const struct pk_export_frame *frames;
	size_t nr_frames;       /* 0 allowed: a sample with an empty stack */
};

struct pk_profile;

struct pk_profile_opts {
	size_t sz;
	/* Keep one entry per sample in arrival order (sorted by time when exported) for
	 * speedscope, gecko and json. Off: only aggregated stacks are kept. */
	bool timeline;
	/* Add the thread's comm as a synthetic root frame (PK_FRAME_COMM) of every stack,
	 * as stackcollapse-perf does; pprof, speedscope and gecko leave it out. */
	bool root_comm;
	/* Keep frames at different addresses (and lines) of one function apart (pprof
	 * locations); off: a function is one frame wherever it was sampled, which keeps the
	 * number of distinct stacks down. Source file and line of the first frame seen stay
	 * available either way. */
	bool addresses;
	/* Drop frames beyond this depth from the root side (0: 1024). */
	uint32_t max_depth;
	size_t :0;
};

/* Create an empty profile. NULL with errno EINVAL (bad opts) or ENOMEM. */
PK_API struct pk_profile *pk_profile__new(const struct pk_profile_opts *opts);
/* NULL is accepted. */
PK_API void pk_profile__free(struct pk_profile *p);

/*
 * Declare an event (a sample type) with a display name ("cpu-clock") and the unit of
 * its period ("nanoseconds", "count", "bytes"; NULL: "count"). Returns its index
 * (0, 1, ...) or -ENOMEM.
 */
PK_API int pk_profile__add_event(struct pk_profile *p, const char *name, const char *unit);
PK_API size_t pk_profile__nr_events(const struct pk_profile *p);

/* Add one sample (copied). Returns 0, -EINVAL (unknown event index) or -ENOMEM. */
PK_API int pk_profile__add_sample(struct pk_profile *p, const struct pk_export_sample *s);

/*
 * The fast path for readers that see the same addresses again and again: intern a frame
 * once (its id is stable for the profile's lifetime; equal frames get equal ids) and add
 * samples by frame ids (leaf first, as frames[]; s->frames is ignored).
 * Return 0, -EINVAL (unknown event or frame id) or -ENOMEM.
 */
PK_API int pk_profile__intern_frame(struct pk_profile *p, const struct pk_export_frame *fr,
				    uint32_t *id);
PK_API int pk_profile__add_sample_ids(struct pk_profile *p, const struct pk_export_sample *s,
				      const uint32_t *frame_ids, size_t nr);

/*
 * Describe an object file for pprof mappings: where it is mapped (start..end, the
 * addresses of the samples' frames, and the file offset of `start`, as in an MMAP record)
 * and its build-id (raw bytes, written in hex). Each call with end > start adds one range
 * of the object (an object mapped several times, in several segments or processes, is
 * described once per mapping; repeating a range is a no-op), and each range that holds
 * sampled addresses becomes one pprof Mapping. start == end only sets the build id; a
 * build id applies to every range of the name. Optional: addresses in no described range
 * of their object get one Mapping spanning them, with file offset 0. -EINVAL if end <
 * start.
 */
PK_API int pk_profile__set_dso(struct pk_profile *p, const char *dso, uint64_t start,
			       uint64_t end, uint64_t pgoff, const uint8_t *build_id,
			       size_t build_id_len);

/* Set informational metadata: a title shown by viewers (NULL: "perfkit"), the profile's
 * start time in ns since the epoch (pprof time_nanos; 0 unknown) and its duration. */
PK_API int pk_profile__set_info(struct pk_profile *p, const char *title, uint64_t epoch_ns,
				uint64_t duration_ns);

struct pk_profile_stats {
	size_t sz;              /* set by the caller (see pk_ordered_stats) */
	uint64_t samples;       /* samples added */
	uint64_t strings, functions, frames, stack_nodes, threads;
	uint64_t bytes;         /* memory held by the tables (approximate) */
};
PK_API void pk_profile__stats(const struct pk_profile *p, struct pk_profile_stats *st);

/* Totals of one event: samples and summed period. -EINVAL for an unknown event. */
PK_API int pk_profile__totals(const struct pk_profile *p, uint32_t event, uint64_t *samples,
			      uint64_t *period);

/* ------------------------------------------------------------------------------------ */
/* Loading a perf.data file                                                             */

struct pk_machine_opts;
struct pk_profile_load_opts {
	size_t sz;
	bool timeline;          /* keep per-sample times (speedscope, gecko, json) */
	bool root_comm;         /* thread name as the root frame (folded, flame graph) */
	bool addresses;         /* keep addresses apart, with the real mappings (pprof, json) */
	bool srcline;           /* look up the source file:line of every frame (DWARF) */
	bool inlines;           /* expand inlined functions into frames (DWARF) */
	bool unknown_hex;       /* name unresolved frames by address (else "[unknown]") */
	bool no_callchain;      /* only the sampled IP */
	bool reader_thread;     /* read and order on a second thread (pk_session_opts) */
	const char *event;      /* keep only the event of this name (NULL: all) */
	const char *title;      /* pk_profile__set_info's title (NULL: "perfkit") */
	/* Options of the session's machine (pk_session_opts.machine_opts: its host is
	 * still the file's same-host check). NULL: the defaults. */
	const struct pk_machine_opts *machine_opts;
	size_t :0;
};

struct pk_profile_load_stats {
	size_t sz;              /* set by the caller (0: the caller's struct is this one) */
	uint64_t samples;       /* samples added */
	uint64_t unresolved;    /* distinct addresses (per process) with no symbol */
	/* 0, or the reader's error: the input is corrupt or cut after the samples loaded,
	 * which make the profile (pk_data_reader__truncated says whether it was cut) */
	int reader_error;
	/* Filled only when sz covers them (callers built before they existed pass a smaller
	 * sz): the time of the first and of the last sample loaded (the recording's perf
	 * clock, ns; 0 without samples), and the thread name (comm) with the most samples
	 * ("" without samples; among the first 64 names seen). `perfkit push` labels and
	 * dates a profile with them. */
	uint64_t first_time, last_time;
	char top_comm[16];
};

/*
 * Load the samples of reader r into a new profile, as a client of the session (time
 * order, machine model, symbols: perfkit/session.h): one profile event per event name of
 * the file (attrs of one name, one per CPU in perf's files, are one event); the call chain
 * of every sample symbolised, leaf first. Attrs announced in the middle of a pipe are left
 * out (with a warning through the log callback). *st (optional) is filled also on error.
 * NULL with errno EINVAL (bad arguments), ENOENT (opts.event names no event of the file)
 * or ENOMEM.
 */
PK_API struct pk_profile *pk_profile__load(struct pk_data_reader *r,
					   const struct pk_profile_load_opts *opts,
					   struct pk_profile_load_stats *st);

/* ------------------------------------------------------------------------------------ */
/* Writers                                                                              */

enum pk_export_weight {
	PK_WEIGHT_PERIOD = 0,   /* sum of periods (perf report's default) */
	PK_WEIGHT_SAMPLES = 1,  /* number of samples */
};

struct pk_folded_opts {
	size_t sz;
	int event;              /* event index; -1 = every event summed */
	enum pk_export_weight weight;
	/* Append "_[k]" to kernel frames and "_[j]" to JIT frames (stackcollapse-perf's
	 * --all annotations, coloured by flamegraph.pl --colors=java). */
	bool annotate_kind;
	size_t :0;
};
/*
 * Brendan Gregg's collapsed stacks: one line per distinct stack, "root;...;leaf N\n",
 * sorted by stack text (as stackcollapse does). ';' and newlines inside names are
 * replaced by ':' and ' '. Stacks with weight 0 are left out.
 */
PK_API int pk_export__folded(const struct pk_profile *p, FILE *f,
			     const struct pk_folded_opts *opts);

/*
 * The options of the pprof, speedscope and JSON exporters. None exists yet: pass NULL.
 * The structs are there so that options can be added without new functions.
 */
struct pk_pprof_opts { size_t sz; size_t :0; };
struct pk_speedscope_opts { size_t sz; size_t :0; };
struct pk_json_export_opts { size_t sz; size_t :0; };

/*
 * pprof: a gzip-compressed perftools.profiles.Profile. Sample types are, per event,
 * ("samples", "count") and (event name, event unit); the default sample type is the
 * period of the first event. Locations carry addresses, mappings (per object, with
 * build-id), and a line per location with its function (name, file).
 */
PK_API int pk_export__pprof(const struct pk_profile *p, FILE *f,
			    const struct pk_pprof_opts *opts);

/* speedscope's file format: one "sampled" profile per (event, thread), samples in time
 * order, weights = periods; the event's unit when speedscope knows it, else "none".
 * Needs `timeline`. */
PK_API int pk_export__speedscope(const struct pk_profile *p, FILE *f,
				 const struct pk_speedscope_opts *opts);

/* The Firefox Profiler's Gecko profile format (meta, libs, one thread per thread of the
 * recording with samples/stackTable/frameTable/stringTable; times in ms from the first
 * sample). Multi-event profiles: samples of `event` only (0). Needs `timeline`. */
struct pk_gecko_opts {
	size_t sz;
	uint32_t event;
	size_t :0;
};
PK_API int pk_export__gecko(const struct pk_profile *p, FILE *f,
			    const struct pk_gecko_opts *opts);

/*
 * Our JSON sample stream (JSON Lines, documented in docs/perfkit-convert.md), one
 * {"type":"SAMPLE",...} object per sample in time order with the fields of `perfkit
 * script --json` (event name, pid, tid, comm, time, period, ip, callchain) plus "stack":
 * the symbolised frames, leaf first. Addresses are 0 unless the profile was built with
 * `addresses`. Needs `timeline`.
 */
PK_API int pk_export__json(const struct pk_profile *p, FILE *f,
			   const struct pk_json_export_opts *opts);

struct pk_flamegraph_opts {
	size_t sz;
	const char *title;      /* page title (NULL: the profile's title or "perfkit") */
	/* Frames whose total is below this percentage of their event's total are pruned
	 * (their weight stays in the parent); 0 means 0.01 %. The value used is printed on
	 * the page. Negative: prune nothing. */
	double min_percent;
	/* Hard cap on drawn frames per event (0: 250000); the threshold is raised until
	 * the tree fits. */
	uint32_t max_nodes;
	enum pk_export_weight weight;
	bool icicle;            /* start in icicle (top-down) orientation */
	/* On- and off-CPU time in one picture: the first event in nanoseconds (cpu-clock,
	 * task-clock) and "offcpu-time" (record --off-cpu) drawn as one tree, frames coloured
	 * by their off-CPU share, with a page toggle that hides the off-CPU time. -ENOENT
	 * when the profile lacks either event. */
	bool off_cpu;
	size_t :0;
};
/*
 * A self-contained interactive HTML flame graph (no external resources): one tree per
 * event, selectable on the page; hover details, click to zoom, search with matched share,
 * flame/icicle toggle, colours by frame kind / DSO.
 */
PK_API int pk_export__flamegraph(const struct pk_profile *p, FILE *f,
				 const struct pk_flamegraph_opts *opts);
/*
 * Differential flame graph: frame widths from `after`, colour by the change of each
 * frame's share from `before` to `after` (red = grew, blue = shrank); events are matched
 * by name. Frames only in `before` are not drawn (their share is in the tooltip of the
 * parent).
 */
PK_API int pk_export__flamegraph_diff(const struct pk_profile *before,
				      const struct pk_profile *after, FILE *f,
				      const struct pk_flamegraph_opts *opts);

/*
 * JSON strings. Every JSON text perfkit writes (the library's writers and the tool's
 * --json outputs) escapes its strings with this one function, so the output is valid
 * UTF-8 and valid JSON whatever bytes came in (comm, symbol and file names are bytes
 * chosen by whoever made the recording). The rule, byte by byte:
 *  - '"' and '\\' become \" and \\; newline, tab and carriage return become \n \t \r;
 *    every other byte below 0x20 (NUL included, if it is within `n`) becomes \u00XX
 *    (lower-case hex). 0x7f and the rest of ASCII are copied.
 *  - A well-formed UTF-8 sequence (RFC 3629: shortest form, no surrogates U+D800..U+DFFF,
 *    nothing above U+10FFFF) is copied unchanged.
 *  - Any other byte (a stray continuation byte, 0xc0, 0xc1, 0xf5..0xff, a lead byte whose
 *    sequence is cut short or is an overlong form, a surrogate or beyond U+10FFFF) becomes
 *    \ufffd, one per byte, and decoding resumes at the next byte: "w\xff\xfeq" is written
 *    "w\ufffd\ufffdq".
 *  - With PK_JSON_HTML also '<' '>' '&' (\u003c \u003e \u0026) and U+2028, U+2029
 *    (\u2028 \u2029), so that the text can sit inside an HTML <script> element.
 * Plain ASCII is copied eight bytes at a time.
 */
#define PK_JSON_HTML 0x1u
/* Output bytes that n input bytes can need at most (quotes not included). */
#define PK_JSON_ESCAPED_MAX(n) ((n) * 6)
/*
 * Escape n bytes of `src` into `dst` (no quotes, no NUL terminator) and return the number
 * of bytes written. Stops before the first character whose escaped form does not fit in
 * `cap` bytes and stores the number of source bytes consumed in *consumed (may be NULL
 * when cap >= PK_JSON_ESCAPED_MAX(n), which always consumes everything). With cap >= 6
 * at least one source byte is consumed; a multi-byte character is never split.
 */
PK_API size_t pk_json__escape(char *dst, size_t cap, const char *src, size_t n,
			      unsigned flags, size_t *consumed);
/*
 * Write the NUL-terminated `s` (NULL: the empty string) to `f` as a quoted JSON string.
 * Returns 0, or -EIO if the stream reported an error (check ferror() at the end instead
 * when writing many strings).
 */
PK_API int pk_json__write_str(FILE *f, const char *s, unsigned flags);

/* One row of a per-symbol comparison (pk_profile__diff). */
struct pk_diff_entry {
	const char *name;       /* symbol, owned by the profiles */
	const char *dso;
	double before_pct, after_pct; /* self share of the event's total, 0..100 */
	uint64_t before, after; /* self weight */
};
/*
 * Per-symbol self-weight comparison of `event_name` (NULL: the first event of `after`)
 * between two profiles, sorted by |delta| descending (then by name). Returns the number of
 * entries and a malloc'd array in *out (free() it), or a negative errno (-ENOENT: no such
 * event in one of the profiles).
 */
PK_API int pk_profile__diff(const struct pk_profile *before, const struct pk_profile *after,
			    const char *event_name, enum pk_export_weight weight,
			    struct pk_diff_entry **out);

#ifdef __cplusplus
}
#endif
#endif
