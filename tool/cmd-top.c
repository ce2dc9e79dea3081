/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-top.c - `perfkit top`: a live profile of the system, processes, threads or a
 * command, refreshed every -d seconds (perf top). Options, the table's text, and the
 * --stdio loop (a snapshot of the table at every refresh); the ncurses screen is
 * top-tui.c, the recorder and the aggregation top-engine.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "builtin.h"
#include "top.h"

#define bad(...) (tool_error(__VA_ARGS__), 129)

enum { OPT_CALLGRAPH = 256, OPT_SORT, OPT_COMMS, OPT_DSOS, OPT_SYMBOLS, OPT_PLIMIT, OPT_STDIO };

static const struct tool_opt opts[] = {
	{ 'e', "event", required_argument, "<spec>",
	  "event to sample (default cycles, or cpu-clock without a\nhardware PMU)" },
	{ 'F', "freq", required_argument, "<hz>", "sampling frequency (default 4000)" },
	{ 'c', "count", required_argument, "<n>", "sample every n events instead" },
	{ 'g', NULL, no_argument, NULL, "frame-pointer call chains (expand rows with Enter)" },
	{ OPT_CALLGRAPH, "call-graph", required_argument, "<fp|dwarf>", "call chains" },
	{ 'p', "pid", required_argument, "<pid,...>", "profile these processes" },
	{ 't', "tid", required_argument, "<tid,...>", "profile these threads" },
	{ 'a', "all-cpus", no_argument, NULL, "system-wide (the default)" },
	{ 'C', "cpu", required_argument, "<list>", "system-wide on these CPUs" },
	{ 'd', "delay", required_argument, "<secs>", "refresh every secs seconds (default 2)" },
	{ 'z', "zero", no_argument, NULL, "zero the history at each refresh (default:\nkeep 7/8)" },
	{ 'K', "hide_kernel_symbols", no_argument, NULL, "hide kernel symbols" },
	{ 'U', "hide_user_symbols", no_argument, NULL, "hide user symbols" },
	{ 'k', "vmlinux", required_argument, "<file>",
	  "annotate's kernel code from this image of the running\nkernel (else perf's places, then /proc/kcore)" },
	{ 's', "sort", required_argument, "<keys>",
	  "sort keys: comm,pid,tid,dso,sym,srcline,cpu\n(default dso,sym)" },
	{ OPT_SORT, "sort", required_argument, NULL, NULL },
	{ OPT_COMMS, "comms", required_argument, "<list>", "only these commands" },
	{ OPT_DSOS, "dsos", required_argument, "<list>", "only these objects" },
	{ OPT_SYMBOLS, "symbols", required_argument, "<list>", "only these symbols" },
	{ OPT_PLIMIT, "percent-limit", required_argument, "<pct>", "hide rows under pct %" },
	{ 'E', "entries", required_argument, "<n>", "show at most n rows" },
	{ OPT_STDIO, "stdio", no_argument, NULL, "print the table at each refresh (no screen)" },
	{ 'v', "verbose", no_argument, NULL, "more messages" },
	{ 0 },
};

const struct tool_help cmd_top_help = {
	.synopsis = "usage: perfkit top [<options>] [-- <command> [<args>]]\n",
	.intro = "Live profile: where the samples of the system (or of -p/-t/-C targets, or of\n"
		 "<command>) go, as a table refreshed every -d seconds. Counts decay by 7/8 at each\n"
		 "refresh (-z: start again). On a terminal keys move, expand (-g), zoom, annotate;\n"
		 "press h for them. Without a terminal, or with --stdio, the table is printed at\n"
		 "every refresh.\n",
	.opts = opts,
	.outro = "Exit status: 0; the command's status with -- <command>; 1 on errors.\n",
};

/* comma-separated list into a growing array (strings borrowed from argv, cut in place) */
static int split_list(char *arg, const char ***out, size_t *n)
{
	for (char *save = NULL, *t = strtok_r(arg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const char **nv = realloc(*out, (*n + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*out = nv;
		nv[(*n)++] = t;
	}
	return 0;
}

/* an option of the command's own (tool_recorder_parse) */
static int take_opt(int c, char *arg, void *ctx)
{
	struct top_opts *o = ctx;
	char *end;

	switch (c) {
	case 'd':
		o->delay = strtod(arg, &end);
		if (*end || !(o->delay >= 0.1 && o->delay <= 3600))
			return bad("invalid delay '%s' (0.1 to 3600 seconds)", arg);
		break;
	case 'z': o->zero = true; break;
	case 'K': o->hide_kernel = true; break;
	case 'U': o->hide_user = true; break;
	case 'k': o->vmlinux = optarg; break;
	case 's':
	case OPT_SORT:
		o->nr_sort = 0;
		for (char *save = NULL, *t = strtok_r(arg, ",", &save); t;
		     t = strtok_r(NULL, ",", &save)) {
			int k = pk_sort_key__parse(t);
			if (k < 0)
				return bad("unknown sort key '%s' (comm, pid, tid, dso, sym, "
					   "srcline, cpu)", t);
			if (o->nr_sort == PK_SORT__MAX)
				return bad("too many sort keys");
			o->sort[o->nr_sort++] = (enum pk_sort_key)k;
		}
		break;
	case OPT_COMMS:
		if (split_list(arg, &o->comms, &o->nr_comms))
			return bad("out of memory");
		break;
	case OPT_DSOS:
		if (split_list(arg, &o->dsos, &o->nr_dsos))
			return bad("out of memory");
		break;
	case OPT_SYMBOLS:
		if (split_list(arg, &o->symbols, &o->nr_symbols))
			return bad("out of memory");
		break;
	case OPT_PLIMIT:
		o->percent_limit = strtod(arg, &end);
		if (*end || !(o->percent_limit >= 0 && o->percent_limit <= 100))
			return bad("invalid --percent-limit '%s' (0 to 100)", arg);
		break;
	case 'E':
		o->rows = strtol(arg, &end, 10);
		if (*end || o->rows <= 0)
			return bad("invalid -E '%s': a positive row count", arg);
		break;
	case OPT_STDIO: o->stdio = true; break;
	case 'v': o->verbose++; break;
	default:
		return TOOL_OPT_UNKNOWN;
	}
	return 0;
}

static int parse_args(struct top_opts *o, int argc, char **argv)
{
	const struct tool_recorder_cmdline cl = {
		.help = &cmd_top_help, .callgraph_id = OPT_CALLGRAPH, .ro = &o->ro,
		.events = o->events, .take = take_opt, .ctx = o,
	};

	if (tool_recorder_parse(&cl, argc, argv, &o->argv))
		return 129;
	int ntargets = !!o->ro.pids + !!o->ro.tids + !!o->ro.system_wide + !!o->argv;
	if (ntargets > 1 && !(ntargets == 2 && o->ro.system_wide && !o->ro.cpus && !o->argv))
		return bad("-p, -t, -a/-C and a command exclude each other");
	if (o->ro.period && o->ro.freq)
		return bad("-c and -F exclude each other");
	if (o->ro.system_wide && (o->ro.pids || o->ro.tids))
		o->ro.system_wide = false; /* -a with -p: perf takes the processes */
	if (!ntargets)
		o->ro.system_wide = true;
	if (o->hide_kernel && o->hide_user)
		return bad("-K and -U together hide every row");
	if (o->vmlinux && access(o->vmlinux, R_OK))
		return bad("-k/--vmlinux '%s': %s", o->vmlinux, strerror(errno));
	static char tbuf[160];
	if (o->argv)
		snprintf(tbuf, sizeof(tbuf), "command '%s'", o->argv[0]);
	else if (o->ro.pids)
		snprintf(tbuf, sizeof(tbuf), "pid %s", o->ro.pids);
	else if (o->ro.tids)
		snprintf(tbuf, sizeof(tbuf), "tid %s", o->ro.tids);
	else if (o->ro.cpus)
		snprintf(tbuf, sizeof(tbuf), "CPUs %s", o->ro.cpus);
	else
		snprintf(tbuf, sizeof(tbuf), "system-wide, %d CPUs", (int)sysconf(_SC_NPROCESSORS_ONLN));
	o->targets = tbuf;
	return -1;
}

/* ---- the table's text ---- */

bool top_row_visible(const struct top_view *v, const struct top_row *r)
{
	if ((v->hide_kernel && r->kernel) || (v->hide_user && !r->kernel))
		return false;
	if (v->zoom_dso && strcmp(v->zoom_dso, r->dso_long ? r->dso_long : ""))
		return false;
	if (v->zoom_comm && strcmp(v->zoom_comm, r->comm ? r->comm : ""))
		return false;
	return v->zoom_tid < 0 || v->zoom_tid == r->tid;
}

const char *top_row_key(const struct top_row *r, enum pk_sort_key k, char *buf, size_t len)
{
	switch (k) {
	case PK_SORT_COMM: return r->comm ? r->comm : "?";
	case PK_SORT_PID: snprintf(buf, len, "%d:%s", r->pid, r->comm ? r->comm : "?"); break;
	case PK_SORT_TID: snprintf(buf, len, "%d:%s", r->tid, r->comm ? r->comm : "?"); break;
	case PK_SORT_DSO: return r->dso ? r->dso : "[unknown]";
	case PK_SORT_SRCLINE: return r->srcline ? r->srcline : "??:0";
	case PK_SORT_CPU: snprintf(buf, len, "%03d", r->cpu); break;
	case PK_SORT_PARENT: return r->parent ? r->parent : "[other]";
	case PK_SORT_SYM:
		if (r->sym)
			snprintf(buf, len, "[%c] %s", r->kernel ? 'k' : '.', r->sym);
		else
			snprintf(buf, len, "[%c] %#" PRIx64, r->kernel ? 'k' : '.', r->addr);
		break;
	default: return "";
	}
	return buf;
}

void top_header(char *buf, size_t len, const struct top_opts *o, const char *event,
		const struct top_snap *s)
{
	double rate = s && s->secs > 0 ? (double)s->new_samples / s->secs : 0;
	snprintf(buf, len, "   PerfTop: %8.0f samples/s  event: %s  lost: %" PRIu64 "/%" PRIu64
		 "  throttled: %" PRIu64 "  [%s%s]%s", rate, event, s ? s->lost : 0,
		 s ? s->lost_samples : 0, s ? s->throttle : 0, o->targets,
		 s && s->ended ? ", ended" : "", o->zero ? "  (zero)" : "");
}

static const enum pk_sort_key default_keys[] = { PK_SORT_DSO, PK_SORT_SYM };

void top_print_table(FILE *f, const struct top_opts *o, const char *event,
		     const struct top_snap *s, const struct top_view *v, long max_rows,
		     bool header)
{
	char hb[512], kb[PK_SORT__MAX][256];
	const enum pk_sort_key *keys = o->nr_sort ? o->sort : default_keys;
	size_t nk = o->nr_sort ? o->nr_sort : 2;
	if (header) {
		top_header(hb, sizeof(hb), o, event, s);
		fprintf(f, "%s\n", hb);
		fprintf(f, "------------------------------------------------------------------------"
			   "-------\n\n");
	}
	uint64_t total = s->rest_period;
	for (size_t i = 0; i < s->nr; i++)
		if (top_row_visible(v, &s->rows[i]))
			total += s->rows[i].period;
	if (o->children)
		total = s->total_period; /* rows overlap: shares of the event's total */
	/* widths of the columns before the last */
	size_t w[PK_SORT__MAX] = { 0 };
	long shown = 0;
	for (size_t i = 0; i < s->nr && (!max_rows || shown < max_rows); i++) {
		const struct top_row *r = &s->rows[i];
		double pct = total ? 100.0 * (double)r->period / (double)total : 0;
		if (!top_row_visible(v, r) || pct < o->percent_limit)
			continue;
		shown++;
		for (size_t k = 0; k + 1 < nk; k++) {
			size_t l = strlen(top_row_key(r, keys[k], kb[k], sizeof(kb[k])));
			if (l > w[k])
				w[k] = l;
		}
	}
	shown = 0;
	/* (a write error, or a write interrupted by Ctrl-C on a stalled reader: stop) */
	for (size_t i = 0; i < s->nr && (!max_rows || shown < max_rows) && !ferror(f); i++) {
		const struct top_row *r = &s->rows[i];
		double pct = total ? 100.0 * (double)r->period / (double)total : 0;
		if (!top_row_visible(v, r) || pct < o->percent_limit)
			continue;
		shown++;
		fprintf(f, "%9.2f%%", pct);
		if (o->children)
			fprintf(f, "  %7.2f%%", total ? 100.0 * (double)r->self / (double)total : 0.0);
		for (size_t k = 0; k < nk; k++)
			fprintf(f, "  %-*s", k + 1 < nk ? (int)w[k] : 0,
				top_row_key(r, keys[k], kb[k], sizeof(kb[k])));
		fputc('\n', f);
		for (size_t j = 0; j < r->nr_cc; j++) {
			char line[1024];
			top_cc_format(line, sizeof(line), &r->cc[j]);
			fprintf(f, "%s\n", line);
		}
	}
}

/* ---- the run ---- */

void top_open_failure(const struct pk_recorder *r)
{
	PK_OPTS(pk_recorder_failure, f);
	pk_recorder__failure(r, &f);
	if (!tool_report_target_failure(&f))
		tool_error("cannot open the events: %s", pk_strerror(f.err ? f.err : -ENOMEM));
}


static volatile sig_atomic_t got_signal;

/* ---- the screen: the browser over the engine's snapshots ---- */

static struct top_snap *tui_take(void *ctx)
{
	return top_engine__take(ctx);
}

static struct top_ann *tui_annotate(void *ctx, const char *dso_long, const char *sym)
{
	top_engine__annotate(ctx, dso_long, sym);
	if (sym)
		top_engine__kick(ctx);
	return NULL; /* comes with the next snapshot */
}

static void tui_set_zero(void *ctx, bool zero)
{
	top_engine__set_zero(ctx, zero);
}

static const struct top_opts *tui_opts;

static void tui_header(void *ctx, char *buf, size_t len, const struct top_snap *s)
{
	(void)ctx;
	top_header(buf, len, tui_opts, s && s->event[0] ? s->event : "?", s);
}

int top_tui_run(struct top_opts *o, struct top_engine *e, volatile sig_atomic_t *stop)
{
	static const struct browser_ops ops = {
		.name = "top", .live = true, .no_cc_hint = "no call graph: run with -g",
		.take = tui_take, .annotate = tui_annotate, .set_zero = tui_set_zero,
		.header = tui_header,
	};
	tui_opts = o;
	return browser_run(&ops, e, o, stop);
}

static void on_signal(int sig)
{
	got_signal = sig;
}

/* The rows of a table on a terminal: its height less the header's lines, as perf top
 * --stdio prints them (25 lines when the terminal does not say) */
static long tty_rows(void)
{
	struct winsize ws;
	long lines = ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row ? ws.ws_row : 25;
	return lines > 6 ? lines - 5 : 1;
}

static int run_stdio(struct top_opts *o, struct top_engine *e)
{
	struct top_view v = { .hide_kernel = o->hide_kernel, .hide_user = o->hide_user,
			      .zoom_tid = -1 };
	bool tty = isatty(1), final = false;
	long rows = o->rows ? o->rows : tty ? tty_rows() : 0;
	/* the snapshots then hold only the rows printed */
	top_engine__set_rows(e, rows);
	while (!got_signal) {
		struct top_snap *s = top_engine__take(e);
		if (s) {
			if (tty)
				fputs("\033[H\033[2J", stdout); /* perf top --stdio clears too */
			top_print_table(stdout, o, s->event, s, &v, rows, true);
			long now = tty && !o->rows ? tty_rows() : rows;
			if (now != rows)
				top_engine__set_rows(e, rows = now); /* resized */
			fputc('\n', stdout);
			fflush(stdout);
			top_snap__free(s);
			if (ferror(stdout))
				break;
		}
		if (top_engine__done(e)) {
			/* the targets have gone: one last table of what came since */
			if (final)
				break;
			final = true;
			top_engine__kick(e);
			poll(NULL, 0, 300);
			continue;
		}
		poll(NULL, 0, 50);
	}
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o = { .ro = { .sz = sizeof(o.ro) }, .delay = 2 };
	int r;
	tool_setup_log(0);
	o.events = pk_event_list__new();
	if (!o.events) {
		tool_error("out of memory");
		return 1;
	}
	r = parse_args(&o, argc, argv);
	if (r >= 0)
		goto out;
	if (pk_event_list__count(o.events) > 1) {
		r = bad("one event at a time (-e given %zu times)", pk_event_list__count(o.events));
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	struct top_engine *e = top_engine__start(&o, &r);
	if (!e)
		goto out;
	bool tui = !o.stdio && isatty(0) && isatty(1);
	int st = tui ? top_tui_run(&o, e, &got_signal) : run_stdio(&o, e);
	r = top_engine__stop(e);
	if (st)
		r = st;
out:
	pk_event_list__free(o.events);
	free(o.comms), free(o.dsos), free(o.symbols);
	return tool_finish_stdout(r);
}
