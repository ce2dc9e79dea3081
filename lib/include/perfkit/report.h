/* SPDX-License-Identifier: MIT */
/*
 * perfkit/report.h - the aggregation behind `perfkit report`, a client of the session
 * (perfkit/session.h): histogram entries keyed by sort keys (comm, pid, tid, dso, sym,
 * srcline, cpu, parent, time, socket, srcfile, symoff), self and children (cumulative through call chains) periods and sample
 * counts, call-graph trees per entry, and filters.
 *
 * Report protocol:
 *     rep = pk_report__new(&opts);
 *     err = pk_report__process(rep, reader, progress_fn, ctx);   (reads the whole stream)
 *     for i < pk_report__nr_hists(rep): h = pk_report__hist(rep, i); entries ...
 *     pk_report__free(rep);
 */
#ifndef PERFKIT_REPORT_H
#define PERFKIT_REPORT_H

#include <perfkit/common.h>
#include <perfkit/data.h>
#include <perfkit/session.h>
#include <perfkit/symbol.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* Aggregation                                                                          */
/* ------------------------------------------------------------------------------------ */

enum pk_sort_key {
	PK_SORT_COMM = 0,
	PK_SORT_PID,
	PK_SORT_TID,
	PK_SORT_DSO,
	PK_SORT_SYM,
	PK_SORT_SRCLINE,
	PK_SORT_CPU,
	PK_SORT_PARENT,         /* perf's parent: the chain's first symbol matching parent_regex */
	PK_SORT_TIME,           /* perf's time: the sample time cut to time_quantum */
	PK_SORT_SOCKET,         /* the CPU's socket (HEADER_CPU_TOPOLOGY; -1 unknown) */
	PK_SORT_SRCFILE,        /* the source file of the sampled address ("" unknown) */
	PK_SORT_SYMOFF,         /* symbol and offset of the address (later perf's symoff; not
				 * with srcline or srcfile) */
	PK_SORT__MAX,
};

/* Key name ("comm", "pid", "tid", "dso", "sym"/"symbol", "srcline", "cpu", "parent",
 * "time", "socket", "srcfile", "symoff") -> key, or -EINVAL. */
PK_API int pk_sort_key__parse(const char *name);
/* Canonical name of a key ("sym" for PK_SORT_SYM), or NULL. */
PK_API const char *pk_sort_key__name(enum pk_sort_key k);

/* Order of call-chain trees: callee = the sampled function first, then its callers
 * (perf's default without children); caller = from the outermost caller down. */
enum pk_cg_order {
	PK_CG_ORDER_DEFAULT = 0, /* caller with children, callee without */
	PK_CG_ORDER_CALLEE,
	PK_CG_ORDER_CALLER,
};

struct pk_report_opts {
	size_t sz;
	/* Sort keys in order; NULL/0 = comm, dso, sym. At most PK_SORT__MAX keys. */
	const enum pk_sort_key *sort;
	size_t nr_sort;
	bool children;          /* also accumulate through call chains ("Children") */
	bool callgraph;         /* build a call-chain tree under every entry */
	enum pk_cg_order order;
	bool no_callchain;      /* use only the sampled ip even if callchains exist */
	unsigned int max_stack; /* frames of a chain used (0 = 127, perf's default) */
	bool inlines;           /* expand inlined functions into the call-chain frames that
				 * DWARF unwinding gave (perf 6.1's --inline, its default) */
	/* Machine model (see pk_machine_opts). */
	bool host;
	const char *kallsyms;
	/* Filters (a sample is dropped unless it matches every given filter; percentages
	 * stay relative to the total of all samples of the event, as perf's default). */
	const int32_t *pids; size_t nr_pids;
	const int32_t *tids; size_t nr_tids;
	const int32_t *cpus; size_t nr_cpus;
	const char *const *comms; size_t nr_comms;
	const char *const *dsos; size_t nr_dsos;     /* short or full DSO names */
	const char *const *symbols; size_t nr_symbols;
	uint64_t time_start, time_end; /* sample time window [start, end]; 0 = open */
	/* Do not build every entry's tree at pk_report__finish (entries' callchain stays
	 * NULL): get them with pk_report__callchain, which builds only what is asked for. */
	bool lazy_callchains;
	/* With inlines: expand the frames of recorded (frame-pointer, kernel) call chains
	 * too. perf 6.1 does not look them up; newer perf versions do. */
	bool inlines_all;
	/* Read, order and decode the input on the caller's thread. By default a second
	 * thread does that when two or more CPUs are available and the input is a file,
	 * and a third aggregates call chains (the result is the same either way). */
	bool no_reader_thread;
	/* The rest of the machine's options (build-id and cache directories, check knobs);
	 * its host and kallsyms are replaced by the two fields above. NULL: the defaults
	 * of pk_machine_opts. */
	const struct pk_machine_opts *machine_opts;
	/* Drop the samples whose own location has no symbol, from the totals too (perf
	 * report -U). */
	bool hide_unresolved;
	/* The parent sort key: the first frame of a sample's chain (in the display order)
	 * whose symbol matches this POSIX extended regex (NULL: perf's "^sys_|^do_page_fault");
	 * exclude_other drops the samples with none (the totals stay, as perf -x). */
	const char *parent_regex;
	bool exclude_other;
	/* perf --ignore-callees: a chain frame whose symbol matches this POSIX extended regex
	 * takes the sample (its entry) and the frames it called are dropped (in callee order
	 * the outermost match; in caller order, as perf 6.1, the innermost, its callers
	 * dropped). NULL: none. */
	const char *ignore_callees;
	/* The time key's unit in nanoseconds (perf's --time-quantum; 0: perf's 100 ms).
	 * Reports keyed on time or socket aggregate each sample as it comes (slower). */
	uint64_t time_quantum;
	size_t :0;
};

struct pk_report;

/* One node of a call-chain tree. Children are sorted by period, largest first. */
struct pk_callnode {
	const char *sym;        /* NULL: unresolved (show addr) */
	const char *dso;        /* short DSO name */
	const char *srcline;    /* "file.c:12" when callgraph srclines were requested, else NULL */
	uint64_t addr;          /* DSO-relative address (unresolved frames) */
	bool kernel;
	uint64_t period;        /* period of the chains through this node */
	uint64_t samples;
	uint64_t self_period;   /* period of the chains that end here */
	const struct pk_callnode *child; /* first child */
	const struct pk_callnode *next;  /* next sibling */
	uint64_t ip;            /* an address as sampled (the first seen for this frame):
				 * what perf prints for an unresolved frame of a call graph */
};

struct pk_hist_entry {
	const char *comm;
	int32_t pid, tid, cpu;
	const char *dso;        /* short name ("libc.so.6", "[kernel.kallsyms]", "[unknown]") */
	const char *dso_long;   /* full path */
	const char *sym;        /* NULL: unresolved (show addr) */
	uint64_t addr;          /* DSO-relative address of an unresolved symbol */
	bool kernel;            /* "[k]" */
	const char *srcline;    /* "file.c:12" (srcline key only), else NULL */
	uint64_t self_period, self_samples;
	uint64_t total_period, total_samples; /* children mode: self + callees; else = self */
	const struct pk_callnode *callchain;  /* virtual root (its children are the top
					       * frames), NULL without callgraph */
	/* The last comm of thread `tid` (the thread of the entry's first sample) when the
	 * input was read: what perf shows in its "Pid:Command" column and sizes the
	 * Command column by. `comm` when the thread is unknown. */
	const char *thread_comm;
	const char *parent;     /* parent key: the matching symbol, NULL: perf's "[other]" */
	/* time key: the start of the entry's time slice (ns, a multiple of time_quantum) */
	uint64_t time;
	int32_t socket;         /* socket key: the socket of cpu (-1: unknown) */
	const char *srcfile;    /* srcfile key: the source file of srcline ("" unknown), else NULL */
	const char *symoff;     /* symoff key: "sym+0x1f" (NULL: unresolved, or key off) */
};

struct pk_hist {
	const struct pk_data_attr *attr;
	const char *name;       /* event name */
	uint64_t nr_samples;    /* samples of this event (before filters) */
	uint64_t total_period;  /* their period sum */
	uint64_t nr_filtered;   /* samples dropped by filters */
	uint64_t nr_lost;       /* LOST records' counts attributed to this event */
	bool has_callchains;
	size_t nr_entries;
	/* sorted: by total (children mode) or self period, descending */
	const struct pk_hist_entry *const *entries;
};

/* Create a report session. NULL with errno EINVAL (bad opts) / ENOMEM. */
PK_API struct pk_report *pk_report__new(const struct pk_report_opts *opts);
PK_API void pk_report__free(struct pk_report *rep);

typedef void (*pk_report_progress_fn)(uint64_t bytes_done, uint64_t records, void *ctx);

/*
 * Read every record of `r` in time order, feed the machine model, resolve and aggregate
 * samples. `progress` (may be NULL) is called every 64 Ki records. Returns 0, or a
 * negative error from the reader (what was read before the error stays aggregated).
 */
PK_API int pk_report__process(struct pk_report *rep, struct pk_data_reader *r,
			      pk_report_progress_fn progress, void *ctx);

/*
 * Live aggregation (`perfkit top`): the records of a stream that does not end soon (a
 * pipe a pk_recorder writes) aggregated as pk_report__process does, with the caller
 * called between records, where the report may be read and changed.
 */
struct pk_report_live_ops {
	size_t sz;
	/* After each FINISHED_ROUND, between records: pk_report__finish, pk_report__hist,
	 * pk_report__callchain and pk_report__decay may be called (entries stay valid until
	 * the callback returns). Return 0 to go on, PK_SESSION_STOP to end without error, or
	 * a negative errno. */
	int (*round)(void *ctx, struct pk_report *rep);
	/* Each sample after it was counted (NULL: none); for what the report does not keep,
	 * such as the addresses inside one symbol. Same return values. */
	int (*sample)(void *ctx, struct pk_report *rep, const struct pk_data_event *ev,
		      const struct pk_sample *s);
	/* Each record that is neither a sample nor FINISHED_ROUND, after the machine and the
	 * report took it (LOST, THROTTLE, ...; rec NULL for a user record). */
	int (*record)(void *ctx, struct pk_report *rep, const struct pk_data_event *ev,
		      const struct pk_record *rec);
	size_t :0;
};
/*
 * Read r to its end as pk_report__process does (on the caller's thread: the reader
 * thread option does not apply), calling ops with ctx. The machine model keeps processes
 * that exited and maps that were unmapped (their samples keep their names). Returns 0 at
 * the end or on PK_SESSION_STOP, else a negative errno (the reader's or a callback's).
 * The report is finished (pk_report__finish) before it returns.
 */
PK_API int pk_report__process_live(struct pk_report *rep, struct pk_data_reader *r,
				   const struct pk_report_live_ops *ops, void *ctx);

/*
 * Age the counts: every entry's and call-chain node's periods and sample counts, and each
 * hist's total_period and nr_samples, become count * num / den (rounded down; perf top
 * keeps 7/8 at each refresh; num 0 zeroes the history). Entries that reach zero are
 * dropped, as perf top drops them (a later sample makes them again). Call
 * pk_report__finish afterwards to see the new values. Returns 0, -EINVAL (den 0,
 * num > den) or -ENOMEM.
 */
PK_API int pk_report__decay(struct pk_report *rep, uint32_t num, uint32_t den);

/*
 * Feed one decoded sample directly (synthetic streams, tests): `frames` are its resolved
 * chain innermost first (frames[0] = the sampled location). Entries are created on the
 * hist of attr index `attr_idx` (named `name` at its first use).
 */
struct pk_report_frame {
	const char *dso;        /* short name; NULL = "[unknown]" */
	const char *sym;        /* NULL = unresolved */
	uint64_t addr;
	bool kernel;
	const char *srcline;    /* NULL = "??:0"-like unknown */
};
/* One sample for pk_report__add_sample (fill with PK_OPTS: it carries its size, so that
 * fields can be added). */
struct pk_report_sample {
	size_t sz;
	int attr_idx;           /* the hist (event) it counts on */
	const char *name;       /* the event's name, used when the hist is created */
	const char *comm;
	int32_t pid, tid, cpu;  /* cpu -1: unknown */
	uint64_t time, period;
	const struct pk_report_frame *frames; /* innermost first; at least one */
	size_t nr_frames;
	size_t :0;
};
/* Returns 0, -EINVAL (no frames, bad size) or -ENOMEM. */
PK_API int pk_report__add_sample(struct pk_report *rep, const struct pk_report_sample *s);

/* Sort entries and build the trees (pk_report__process does it; call it after
 * pk_report__add_sample). Idempotent until more samples are added. */
PK_API int pk_report__finish(struct pk_report *rep);

/*
 * The call-chain tree of entry `e` (virtual root, as pk_hist_entry.callchain). Without
 * lazy_callchains this is e->callchain. With it, the tree is built on the first request:
 * the root and every node with period >= min_period get their children with period >=
 * min_period, sorted, followed by the two largest of the others, if any (so a node
 * with several children never looks like one with a single child); nodes below
 * min_period have
 * child == NULL (0 = the whole tree). That is all a
 * printer that does not descend into nodes below an absolute period needs. A request
 * with a smaller min_period than the tree was built with builds it again (a larger one
 * gets the tree already built). Owned by the report, valid until the next
 * pk_report__finish or pk_report__free. NULL with errno ENOENT (no tree), ENOMEM.
 */
PK_API const struct pk_callnode *pk_report__callchain(struct pk_report *rep,
						      const struct pk_hist_entry *e,
						      uint64_t min_period);

/*
 * With lazy_callchains: free every tree pk_report__callchain has returned so far (their
 * pointers become invalid; a later request builds them again). A printer that is done with
 * an entry's tree calls this to keep memory at one tree at a time. No-op otherwise.
 */
PK_API void pk_report__callchain_release(struct pk_report *rep);

/*
 * The identity of entry e's value of sort key `key` (one of the report's sort keys) in *id:
 * two entries of one report have the same id for a key exactly when the report's
 * aggregation takes them as one value of it, as perf's per-key comparison does: for sym,
 * the symbol itself (its object and range; an address without a symbol by its address),
 * not its name, so that two static functions of one name are two values; for dso, the
 * object's short name. `perfkit report --hierarchy` groups each level by it. Returns 0,
 * or -EINVAL (key not a sort key of the report, e not an entry of its histograms).
 */
PK_API int pk_report__entry_key(const struct pk_report *rep, const struct pk_hist_entry *e,
				enum pk_sort_key key, uint64_t *id);
PK_API size_t pk_report__nr_hists(const struct pk_report *rep);
PK_API const struct pk_hist *pk_report__hist(const struct pk_report *rep, size_t idx);
/* Samples without a symbol, per DSO name: calls fn for each such DSO with the number of
 * samples (for "install debug info" hints). */
PK_API void pk_report__for_each_unresolved_dso(const struct pk_report *rep,
					       void (*fn)(const char *dso, uint64_t samples,
							  void *ctx),
					       void *ctx);
/* The machine model (for header output, symbol lookups). Owned by the report. */
PK_API struct pk_machine *pk_report__machine(struct pk_report *rep);
/* Time ordering statistics of the last pk_report__process. */
PK_API void pk_report__ordered_stats(const struct pk_report *rep, struct pk_ordered_stats *st);

#ifdef __cplusplus
}
#endif
#endif
