/* SPDX-License-Identifier: MIT */
/*
 * tool/top.h - `perfkit top`, shared by cmd-top.c (options, the stdio loop, the screen's
 * glue) and top-engine.c (the recorder's drain thread and the aggregation thread:
 * pk_recorder -> pipe -> pk_report__process_live); and the histogram browser both
 * `top` and `report` open on a terminal: hist-snap.c (what it shows, from a pk_report)
 * and browser.c (the ncurses screen); report-tui.c is report's side of it.
 */
#ifndef TOOL_TOP_H
#define TOOL_TOP_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <perfkit/perfkit.h>

/* One line of a row's call graph (callers of the entry, callee order), flattened. */
struct top_cc_line {
	int depth;
	double pct;             /* of the entry; < 0: a line continuing the one above */
	char *text;
};

/* One row of the table: a copy (the report's strings belong to another thread). */
struct top_row {
	char *comm, *dso, *dso_long, *sym, *srcline, *parent;
	int32_t pid, tid, cpu;
	uint64_t addr;
	bool kernel;
	uint64_t period, samples;
	uint64_t self;          /* the self period (period is self + callees with children) */
	struct top_cc_line *cc;
	size_t nr_cc;
	bool cc_pending;        /* call graph not built yet (browser_ops.fill_cc builds it) */
};

/* What one refresh saw; built by the aggregation thread, handed over whole. */
struct top_snap {
	struct top_row *rows;   /* sorted, hottest first, zero rows left out */
	size_t nr;
	uint64_t total_period;  /* of the event (decayed) */
	uint64_t rest_period;   /* of the visible entries left out (top_snap__build_some) */
	uint64_t new_samples;   /* samples since the previous refresh */
	double secs;            /* length of that interval */
	uint64_t lost, lost_samples, throttle, samples_all;
	char event[64];         /* its name */
	bool has_cc;
	bool ended;             /* the targets have gone (command exited, -p ended) */
	/* the annotate view of the symbol asked for (NULL: none asked or ready) */
	struct top_ann *ann;
};

/* A line of the annotate view: an instruction, or a source line shown before the
 * instruction at addr, as `perfkit annotate --stdio` shows it (tool/annotate-src.c). */
struct top_ann_line {
	uint64_t addr;
	char *text;             /* instruction: "addr:   insn"; source: the whole --stdio line */
	uint64_t samples;
	bool src;               /* a source line (never has samples) */
};
struct ann_src;
struct top_ann {
	char *dso, *sym;
	char *error;            /* why there is no disassembly, or NULL */
	char *note;             /* why some source lines are shown as file:line, or NULL */
	struct top_ann_line *lines;
	size_t nr;
	uint64_t total;
	bool has_src;           /* some lines are source lines */
	/* while top_ann__add_insn builds it (top_ann__source .. top_ann__source_end) */
	struct ann_src *src;
	int addr_width;
};

struct top_opts {
	struct pk_recorder_opts ro;
	struct pk_event_list *events;
	char **argv;            /* -- command */
	double delay;           /* -d seconds */
	bool zero;              /* -z */
	bool hide_kernel, hide_user;
	bool stdio;
	double percent_limit;
	long rows;              /* -E; 0: the screen's height (stdio: all above the limit) */
	enum pk_sort_key sort[PK_SORT__MAX];
	size_t nr_sort;
	const char **comms, **dsos, **symbols;
	size_t nr_comms, nr_dsos, nr_symbols;
	int verbose;
	const char *targets;    /* for the header: "system-wide", "pid 12", ... */
	bool children;          /* a Self column beside the period's (report's browser) */
	const char *vmlinux;    /* -k: annotate's kernel code (else perf's search, kcore) */
};

/* The engine: the recorder and the two threads. */
struct top_engine;
/* Open the events (messages printed; NULL on failure, the exit status in *status). */
struct top_engine *top_engine__start(struct top_opts *o, int *status);
/* The newest snapshot not yet taken (the caller frees it), or NULL. */
struct top_snap *top_engine__take(struct top_engine *e);
/* Ask for a refresh now (the next snapshot is made at once). */
void top_engine__kick(struct top_engine *e);
/* Ask for the annotate view of a symbol (NULL: none); comes with the next snapshots. */
void top_engine__annotate(struct top_engine *e, const char *dso_long, const char *sym);
/* Snapshots of only the first rows (0: all) that -K/-U show. */
void top_engine__set_rows(struct top_engine *e, long rows);
/* Decay (7/8) or zero at each refresh. */
void top_engine__set_zero(struct top_engine *e, bool zero);
/* Whether the targets are gone (the command exited, -p processes ended). */
bool top_engine__done(struct top_engine *e);
/* Stop, join and free; returns the command's exit status (0 without one). */
int top_engine__stop(struct top_engine *e);

/* tool/hist-snap.c */
void top_snap__free(struct top_snap *s);
void top_ann__free(struct top_ann *a);
/* An empty annotate view of sym in dso (NULL on ENOMEM). */
struct top_ann *top_ann__new(const char *dso, const char *sym);
/* A pk_annotate_insn_fn adding a line (its period as the count) to the top_ann ctx,
 * after the source lines before it when top_ann__source was called. */
int top_ann__add_insn(void *ctx, const struct pk_annotate_insn *in);
/* The instructions added next are those of the symbol sym at start (size bytes) of dso,
 * shown at start - bias (a kernel's: the file read's addresses): add the source lines
 * perfkit annotate --stdio shows between them (its rules and fallbacks; messages kept in
 * a->note, never printed), the address column as wide as its. 0 or -ENOMEM. */
int top_ann__source(struct top_ann *a, struct pk_dso *dso, uint64_t start, uint64_t size,
		    uint64_t bias);
/* Done adding: the source files read are let go. */
void top_ann__source_end(struct top_ann *a);
/* The hist with the most samples (NULL: none). */
const struct pk_hist *top_main_hist(struct pk_report *rep);
/* A snapshot of h's entries (after pk_report__finish), the call graphs of the first
 * max_cc_rows flattened; skip_own_frame: callee order, whose first level is the entry's
 * own frame. Only the rows, event, totals and has_cc are filled. NULL on ENOMEM. */
struct top_snap *top_snap__build(struct pk_report *rep, const struct pk_hist *h,
				 size_t max_cc_rows, bool skip_own_frame);
/* The same, of the rows a view v (-K/-U only; NULL: all) shows, and of those only the
 * first max_rows (0: all) copied: the weight of the others is rest_period (what a table
 * of max_rows rows needs: system-wide, the entries are tens of thousands). */
struct top_view;
struct top_snap *top_snap__build_some(struct pk_report *rep, const struct pk_hist *h,
				      size_t max_cc_rows, bool skip_own_frame,
				      const struct top_view *v, size_t max_rows);
/* The call graph of entry he into row r (after pk_report__finish); 0 or -ENOMEM. */
int top_row__fill_cc(struct pk_report *rep, const struct pk_hist_entry *he, struct top_row *r,
		     bool skip_own_frame);
/* A call-graph line as text, perf's graph style. */
void top_cc_format(char *buf, size_t len, const struct top_cc_line *l);

/* Rows as shown: the row passes -K/-U, zoom, the percent limit. */
struct top_view {
	bool hide_kernel, hide_user;
	const char *zoom_dso, *zoom_comm;
	int32_t zoom_tid;       /* -1 none */
};
bool top_row_visible(const struct top_view *v, const struct top_row *r);
/* Column text of row r for key k into buf. */
const char *top_row_key(const struct top_row *r, enum pk_sort_key k, char *buf, size_t len);
/* Write the table as `perf top --stdio` does (header line then rows) to f. */
void top_print_table(FILE *f, const struct top_opts *o, const char *event,
		     const struct top_snap *s, const struct top_view *v, long max_rows,
		     bool header);
/* The header line text. */
void top_header(char *buf, size_t len, const struct top_opts *o, const char *event,
		const struct top_snap *s);

/* Why pk_recorder__open failed, as an error message. */
void top_open_failure(const struct pk_recorder *r);

/* The ncurses screen until q or the end; returns 0 or an exit status. */
int top_tui_run(struct top_opts *o, struct top_engine *e, volatile sig_atomic_t *stop);

/* The browser (tool/browser.c): what feeds it. */
struct browser_ops {
	const char *name;       /* the command, for the help's title */
	bool live;              /* counts decay (the z key, "decayed" in annotate) */
	const char *no_cc_hint; /* why a row has no call graph when the data has none */
	/* the newest snapshot not yet taken (the browser frees it), or NULL */
	struct top_snap *(*take)(void *ctx);
	/* open the annotate view of sym in dso (NULL, NULL: closed); returns it when ready
	 * at once (the browser frees it), NULL when it comes with a later snapshot */
	struct top_ann *(*annotate)(void *ctx, const char *dso_long, const char *sym);
	void (*set_zero)(void *ctx, bool zero);        /* NULL unless live */
	/* build the call graph of row i of snapshot s (rows marked cc_pending) */
	void (*fill_cc)(void *ctx, struct top_snap *s, size_t i);
	/* Tab: the next event of several (its snapshot comes from take); NULL: one event */
	bool (*next_event)(void *ctx);
	/* the first line of the screen */
	void (*header)(void *ctx, char *buf, size_t len, const struct top_snap *s);
};
/* Browse until q (or *stop); o gives the columns, limits and -K/-U. Returns 0, or 1
 * when the terminal cannot be set up (said on stderr). */
int browser_run(const struct browser_ops *ops, void *ctx, const struct top_opts *o,
		volatile sig_atomic_t *stop);

#endif
