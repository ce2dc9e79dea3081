/* SPDX-License-Identifier: MIT */
/*
 * tool/report-tui.c - `perfkit report` on a terminal: the browser of `perfkit top`
 * (tool/browser.c) over the histogram of a file, as perf report opens its TUI by
 * default. The table is one snapshot of the event with the most samples (Tab: the next
 * event); `a` annotates
 * the selected symbol by reading the file once more through pk_annotate (kept for the
 * next symbols).
 */
#include <signal.h>
#include "annotate-kernel.h"
#include "report.h"
#include "top.h"

/* rows whose call graphs are built before the first screen; the others' when selected */
#define RT_CC_ROWS 64

struct rtui {
	struct report *R;
	struct pk_report *rep;
	const struct pk_hist *h;
	struct top_snap *pending;       /* the one snapshot, until the browser takes it */
	struct pk_data_reader *ard;     /* annotate's reader and result, loaded once */
	struct pk_annotate *ann;
	int ann_err;
};

static struct top_snap *rt_take(void *ctx)
{
	struct rtui *t = ctx;
	struct top_snap *s = t->pending;
	t->pending = NULL;
	return s;
}

static int ann_load(struct rtui *t)
{
	if (t->ann || t->ann_err)
		return t->ann_err;
	if (!strcmp(t->R->input, "-"))
		return t->ann_err = -ESPIPE;
	PK_OPTS(pk_data_reader_opts, ro);
	t->ard = pk_data_reader__open(t->R->input, &ro);
	if (!t->ard)
		return t->ann_err = -errno;
	/* kernel code and symbols as annotate -k finds them: -k/--vmlinux's symbols when it
	 * is the recorded kernel (said before the browser when not), its code, or perf's
	 * search, then /proc/kcore */
	struct pk_machine_opts mo = *tool_machine_opts();
	bool ksyms = t->R->kallsyms && *t->R->kallsyms;
	if (ksyms) {
		mo.kallsyms = t->R->kallsyms;
		mo.host = t->R->vmlinux || mo.host;
	}
	PK_OPTS(pk_annotate_opts, ao, .reader_thread = tool_threads_allowed(),
		.machine_opts = &mo, .event = t->h ? t->h->name : NULL,
		.intel_syntax = t->R->intel_syntax, .host_known = ksyms && t->R->vmlinux,
		.vmlinux = t->R->vmlinux, .kcore = tool_kcore_path());
	t->ann = pk_annotate__load(t->ard, &ao);
	if (!t->ann)
		t->ann_err = -errno;
	return t->ann_err;
}

static struct top_ann *rt_annotate(void *ctx, const char *dso_long, const char *sym)
{
	struct rtui *t = ctx;
	if (!sym)
		return NULL;
	struct top_ann *a = top_ann__new(dso_long, sym);
	if (!a)
		return NULL;
	char why[300] = "";
	int err = ann_load(t);
	if (err) {
		snprintf(why, sizeof(why), "cannot read '%s' again for annotate: %s", t->R->input,
			 err == -ESPIPE ? "it was read from a pipe" : pk_strerror(err));
	} else {
		size_t i, n = pk_annotate__nr_symbols(t->ann);
		struct pk_annotate_sym s = { .sz = sizeof(s) };
		for (i = 0; i < n; i++)
			if (!pk_annotate__symbol(t->ann, i, &s) && !strcmp(s.name, sym) &&
			    !strcmp(s.dso_name, dso_long))
				break;
		struct pk_annotate_kernel K = { .sz = sizeof(K) };
		struct pk_annotate_kmod M = { .sz = sizeof(M) };
		bool kmain = i < n && s.kernel && !strncmp(s.dso_name, "[kernel.kallsyms]", 17);
		uint64_t bias = 0; /* a kernel symbol: the address shown is the file read's */
		if (kmain && !pk_annotate__kernel(t->ann, &K))
			bias = K.bias;
		if (i < n && s.kernel && !kmain && !pk_annotate__module(t->ann, i, &M) &&
		    M.source != PK_ANNOTATE_KSRC_NONE) {
			bias = M.bias;
			pk_annotate__symbol(t->ann, i, &s); /* (its size cut to the .ko's) */
		}
		if (kmain && K.source == PK_ANNOTATE_KSRC_NONE) {
			/* annotate --stdio's reasons, per cause, and the fix */
			a->error = tool_ann_kernel_msg(&K, sym, "recorded");
			if (!a->error)
				snprintf(why, sizeof(why), "out of memory");
		} else if (i < n) {
			/* with the source lines annotate --stdio shows (none on ENOMEM); a
			 * kernel symbol with the addresses of the file read, as --stdio */
			top_ann__source(a, s.dso, s.start, s.size, bias);
			err = pk_annotate__disasm(t->ann, i, top_ann__add_insn, a);
			top_ann__source_end(a);
		}
		if (i == n)
			snprintf(why, sizeof(why), "no samples of '%s' in '%s' to annotate", sym,
				 dso_long);
		else if (err < 0 && !a->nr && !a->error)
			snprintf(why, sizeof(why), "cannot disassemble '%s': %s%s", sym,
				 pk_strerror(err), kmain ? err == -ENODATA ?
				 " (the kernel image read holds no code there)" : "" : s.kernel ?
				 " (no code of the module found: perfkit annotate --stdio says why)"
				 : err == -EOPNOTSUPP ?
				 " (JIT code, and machines other than x86-64 and AArch64, are not "
				 "disassembled)" : err == -ESTALE ?
				 " (the file was rebuilt since the recording)" : "");
	}
	if (why[0] && !(a->error = strdup(why))) {
		top_ann__free(a);
		return NULL;
	}
	return a;
}

/* the next event with samples, in the file's order, after the one shown */
static bool rt_next_event(void *ctx)
{
	struct rtui *t = ctx;
	size_t n = pk_report__nr_hists(t->rep), cur = 0;
	for (size_t i = 0; i < n; i++)
		if (pk_report__hist(t->rep, i) == t->h)
			cur = i;
	for (size_t k = 1; k < n; k++) {
		const struct pk_hist *h = pk_report__hist(t->rep, (cur + k) % n);
		if (!h || !h->nr_samples || h == t->h)
			continue;
		struct top_snap *s = top_snap__build(t->rep, h, RT_CC_ROWS,
						     t->R->order == PK_CG_ORDER_CALLEE);
		if (!s)
			return false;
		top_snap__free(t->pending);
		t->pending = s;
		t->h = h;
		/* annotate counts the event shown: loaded again for this one */
		pk_annotate__free(t->ann);
		pk_data_reader__free(t->ard);
		t->ann = NULL;
		t->ard = NULL;
		t->ann_err = 0;
		return true;
	}
	return false;
}

static void rt_fill_cc(void *ctx, struct top_snap *s, size_t i)
{
	struct rtui *t = ctx;
	/* (the snapshot's rows are the hist's entries in order) */
	if (i < t->h->nr_entries)
		top_row__fill_cc(t->rep, t->h->entries[i], &s->rows[i],
				 t->R->order == PK_CG_ORDER_CALLEE);
}

static void rt_header(void *ctx, char *buf, size_t len, const struct top_snap *s)
{
	struct rtui *t = ctx;
	(void)s;
	char n[32];
	rpt_fmt_samples(n, sizeof(n), t->h ? t->h->nr_samples : 0);
	snprintf(buf, len, "Samples: %s of event '%s', Event count (approx.): %" PRIu64 "  [%s]",
		 n, t->h && t->h->name ? t->h->name : "?", t->h ? t->h->total_period : 0,
		 t->R->input);
}

/* messages of the library while the screen is up would scribble on it */
static void quiet_log(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)level, (void)msg, (void)ctx;
}

static volatile sig_atomic_t rt_signal;

static void on_signal(int sig)
{
	rt_signal = sig;
}

int rpt_tui_run(struct report *R, struct pk_report *rep)
{
	struct rtui t = { .R = R, .rep = rep, .h = top_main_hist(rep) };
	if (!t.h || !t.h->nr_samples) {
		tool_error("no samples in '%s'", R->input);
		return 1;
	}
	struct top_opts o = { .percent_limit = R->percent_limit, .children = R->children == 1,
			      .nr_sort = R->nr_sort, .targets = R->input };
	for (size_t k = 0; k < R->nr_sort && k < PK_SORT__MAX; k++)
		o.sort[k] = R->sort[k];
	t.pending = top_snap__build(rep, t.h, RT_CC_ROWS, R->order == PK_CG_ORDER_CALLEE);
	if (!t.pending) {
		tool_error("out of memory");
		return 1;
	}
	static const struct browser_ops ops = {
		.name = "report", .no_cc_hint = "no call graph: record with -g",
		.take = rt_take, .annotate = rt_annotate, .header = rt_header,
		.next_event = rt_next_event, .fill_cc = rt_fill_cc,
	};
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);
	sigaction(SIGHUP, &sa, &old[2]);
	pk_set_log(quiet_log, NULL, PK_LOG_ERROR);
	int st = browser_run(&ops, &t, &o, &rt_signal);
	tool_setup_log(R->verbose);
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	sigaction(SIGHUP, &old[2], NULL);
	top_snap__free(t.pending);
	pk_annotate__free(t.ann);
	pk_data_reader__free(t.ard);
	return st;
}

bool rpt_tui_wanted(int argc, char **argv)
{
	bool tui = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tui"))
			tui = true;
		else if (!strcmp(argv[i], "--stdio") || !strcmp(argv[i], "--json") ||
			 !strcmp(argv[i], "--header") || !strcmp(argv[i], "--header-only") ||
			 !strcmp(argv[i], "--stats") || !strcmp(argv[i], "--tasks"))
			return false;
		else if (!strcmp(argv[i], "--"))
			break;
	}
	return tui;
}
