/* SPDX-License-Identifier: MIT */
/* tool/report.h - `perfkit report`'s state and the functions its files share: cmd-report.c
 * (the options table, the run), report-options.c (option values), report-table.c (rows,
 * one event's section, the line buffer), report-header.c (the header block),
 * report-graph.c (call graphs), report-group.c (event groups and the sections),
 * report-json.c (--json), report-tui.c (the browser on a terminal). */
#ifndef TOOL_REPORT_H
#define TOOL_REPORT_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "out.h"

enum cg_mode { CG_GRAPH, CG_FRACTAL, CG_FLAT, CG_FOLDED, CG_NONE };

enum col {
	COL_CHILDREN, COL_SELF, COL_OVERHEAD, COL_SAMPLES, COL_PERIOD,
	COL_COMM, COL_PID, COL_TID, COL_DSO, COL_SYM, COL_SRCLINE, COL_CPU, COL_PARENT,
	COL_OFFCPU_MS, /* the offcpu-time section's blocked time (added by rpt_print_hist) */
	COL_TIME, COL_SOCKET, COL_SRCFILE, COL_SYMOFF,
};

struct report {
	const char *input;
	int children;           /* -1 auto */
	enum cg_mode cg;
	bool cg_given;
	double cg_threshold;
	enum pk_cg_order order;
	double percent_limit;
	bool show_nr;
	bool show_period;       /* --show-total-period: a Period column */
	bool relative;          /* --percentage relative: of the samples the filters keep */
	const char *field_sep;  /* -t: cells joined by it, unpadded numbers (perf's layout) */
	bool by_samples;
	bool header, header_only, json, quiet, no_inline, all_inline, show_empty;
	bool stats, tasks;      /* --stats, --tasks (report-stats.c) */
	bool no_demangle;       /* --no-demangle: C++/Rust names as the symbol tables hold them */
	const char *kallsyms;   /* --kallsyms FILE: the kernel's symbols from it */
	const char *vmlinux;    /* --vmlinux FILE (report-vmlinux.c) */
	bool threads;           /* -T: the per-thread counts table (report-threads.c) */
	bool hide_unresolved;   /* -U */
	bool intel_syntax;      /* -M intel: annotate (browser) in Intel syntax */
	const char *parent_re;  /* -p: adds the parent key */
	bool exclude_other;     /* -x */
	const char *ignore_callees; /* --ignore-callees */
	bool parent_on;         /* the parent key is among the sort keys */
	bool mmaps;             /* --mmaps: --tasks with each process's maps */
	bool dump_raw;          /* -D: --stats with every record dumped first */
	bool show_info;         /* -I: the topology sections in full */
	int group;              /* -1: as the file's GROUP_DESC says; 0 --no-group; 1 --group */
	int verbose;
	unsigned int max_stack;
	enum pk_sort_key sort[PK_SORT__MAX];
	enum col sort_col[PK_SORT__MAX]; /* the column of each key */
	size_t nr_sort;
	bool sym_first;
	enum col cols[16];
	size_t nr_cols;
	bool fields_given;
	int32_t *pids, *tids, *cpus;
	size_t nr_pids, nr_tids, nr_cpus;
	char **comms, **dsos, **syms;
	size_t nr_comms, nr_dsos, nr_syms;
	const char *time_spec;
	FILE *out;
	struct pk_report *rep;
	/* per hist */
	uint64_t total;
	int width[16];
	int comm_w;             /* the Command column's width, the comm part of Pid:Command's */
	/* the line being formatted (see lb_*) */
	char *lb;
	size_t lbn, lbcap;
	bool lb_oom;
	int color_mode;         /* --stdio-color: -1 never, 0 auto, 1 always */
	bool color;             /* percentages in colour (perf's thresholds) */
	bool hierarchy;         /* --hierarchy: each sort key a level (report-hier.c) */
	bool ns;                /* --ns: the time key in nanoseconds */
	uint64_t time_quantum;  /* --time-quantum, ns (0: perf's 100 ms) */
	/* perf's output fields given as sort keys (-s sample,period,overhead): columns at
	 * their place among the keys' (xcol[i] before key xpos[i]); no_keys: none other */
	enum col xcol[8];
	size_t xpos[8], nr_xcol;
	bool no_keys;
};
/* report-table.c: perf's colour of a percentage ("" below 0.5%), and its reset */
const char *rpt_pct_color(const struct report *R, double pct);
#define RPT_COLOR_RESET "\033[m"

void rpt_cg_name(const struct pk_callnode *n, char *buf, size_t len);
bool rpt_col_numeric(enum col c);
int rpt_col_text(const struct report *R, enum col c, const struct pk_hist_entry *e, char *buf, size_t len);
const char *rpt_col_title(enum col c);
int rpt_comm_width(const struct pk_hist *const *h, size_t nr);
int rpt_fmt_2f(char *b, double x);
void rpt_fmt_samples(char *buf, size_t len, uint64_t n);
void rpt_json_hist(struct report *R, const struct pk_hist *h);
void rpt_lb_fill(struct report *R, char c, size_t n);
void rpt_lb_flush(struct report *R);
void rpt_lb_put(struct report *R, const char *s, size_t n);
void rpt_lb_putc(struct report *R, char c);
bool rpt_lb_reserve(struct report *R, size_t n);
double rpt_pct(const struct report *R, uint64_t v);
void rpt_print_callchain(struct report *R, const struct pk_hist_entry *e);
void rpt_print_header(struct report *R, struct pk_data_reader *rd);
void rpt_put_cell(struct report *R, enum col c, const char *buf, size_t bl, size_t pad,
		  bool last);
void rpt_print_hist(struct report *R, const struct pk_hist *h);
int rpt_print_sections(struct report *R, struct pk_data_reader *rd, struct pk_report *rep);
uint64_t rpt_weight_self(const struct report *R, const struct pk_hist_entry *e);
uint64_t rpt_weight_total(const struct report *R, const struct pk_hist_entry *e);
/* report-hier.c: one event's table in perf's --hierarchy layout (0 or -ENOMEM) */
int rpt_print_hier(struct report *R, const struct pk_hist *h);
/* report-tui.c: the browser over the report (0, or 1 when it cannot start) */
int rpt_tui_run(struct report *R, struct pk_report *rep);
/* report-stats.c: --stats and --tasks (0 or a negative errno, said) */
struct pk_session_ops;
int rpt_run_side_session(struct pk_data_reader *rd, bool file_order,
			 const struct pk_session_ops *ops, void *ctx, const char *input);
int rpt_print_stats(struct report *R, struct pk_data_reader *rd);
int rpt_print_tasks(struct report *R, struct pk_data_reader *rd);
/* report-vmlinux.c: --vmlinux's symbols as a temporary kallsyms file (*path, to unlink
 * and free): 0, 1 (not the recorded kernel: none), -1 (said) */
int rpt_vmlinux_kallsyms(const char *vmlinux, struct pk_data_reader *rd, char **path);
/* the build-id the recording names for [kernel.kallsyms]: false when none */
bool rpt_kernel_bid(struct pk_data_reader *rd, const uint8_t **id, size_t *len);
/* report-threads.c: -T's table of READ counts per thread (0 or a negative errno, said) */
int rpt_print_threads(struct report *R);
const char *rpt_record_type_name(unsigned type); /* perf's, NULL: none */
/* report-dump.c: the records as perf report -D prints them (those with a time held
 * until rpt_dump_finish) */
struct rpt_dump;
struct rpt_dump *rpt_dump_new(const struct report *R, struct pk_data_reader *rd);
void rpt_dump_rec(struct rpt_dump *D, const struct report *R, struct pk_data_reader *rd,
		  const struct pk_data_event *ev, const struct pk_record *rec);
int rpt_dump_finish(struct rpt_dump *D, FILE *out);
void rpt_dump_lead(const struct report *R, struct pk_data_reader *rd,
		   void (*count)(void *ctx, unsigned int type), void *ctx);
/* report-mmaps.c: the maps of --mmaps (fed the records --tasks reads) */
struct rpt_maps;
struct rpt_maps *rpt_maps_new(void);
void rpt_maps_free(struct rpt_maps *M);
int rpt_maps_rec(struct rpt_maps *M, const struct pk_data_event *ev, const struct pk_record *rec);
int rpt_maps_print(const struct rpt_maps *M, FILE *f, int32_t pid, int indent);
/* report-options.c */
/* the tool's machine options with the report's symbol options (--no-demangle); preload:
 * symbol tables read ahead on a thread of the machine's */
const struct pk_machine_opts *rpt_machine_opts(const struct report *R, bool preload);
bool rpt_looks_like_cg_spec(const char *s);
enum col rpt_key_col(enum pk_sort_key k);
int rpt_parse_cg(struct report *R, const char *s);
/* report.children and report.percent-limit of perf's configuration (before the options) */
void rpt_config_defaults(struct report *R);
int rpt_parse_fields(struct report *R, const char *s);
int rpt_parse_sort(struct report *R, const char *s);
/* the default columns of the sort keys (and -s's output fields among them), after the
 * percentages */
void rpt_add_key_cols(struct report *R);
/* --time-quantum N[ns|us|ms|s] (default unit ms, as perf) */
int rpt_parse_quantum(struct report *R, const char *s);
/* with no_keys: h as one entry of all its samples (in *one, *e, *ep) */
const struct pk_hist *rpt_one_entry(const struct pk_hist *h, struct pk_hist *one,
				    struct pk_hist_entry *e, const struct pk_hist_entry **ep);
/* --percentage relative|absolute (-EINVAL, said, for another word) */
int rpt_parse_percentage(struct report *R, const char *s);
/* the total percentages are of: the event's, or with --percentage relative the sum of
 * the entries the filters kept (*nr: their samples) */
uint64_t rpt_hist_total(const struct report *R, const struct pk_hist *h, uint64_t *nr,
			uint64_t *period);
/* -p: the parent key after the others (perf's), unless there; sets R->parent_on */
void rpt_add_parent_key(struct report *R);

#endif
