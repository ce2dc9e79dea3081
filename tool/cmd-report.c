/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-report.c - `perfkit report`: the perf report --stdio view of a perf.data file
 * (overhead per comm/dso/symbol, children and self, call graphs, header block), or the
 * same numbers as JSON. Aggregation lives in lib/report; this file parses options and
 * formats.
 */
#include "report.h"

enum { O_CHILDREN = 256, O_NO_CHILDREN, O_PCT, O_PID, O_TID, O_COMM, O_TIME, O_HEADER,
       O_HEADER_ONLY, O_JSON, O_STDIO, O_NO_CG, O_MAX_STACK, O_WEIGHT,
       O_NO_INLINE, O_INLINE, O_SHOW_EMPTY, O_GROUP, O_NO_GROUP };

static const struct pk_tool_opt opts[] = {
	{ 'i', "input", required_argument, "<file>", "input file (default perf.data; '-' reads stdin)" },
	{ 's', "sort", required_argument, "<keys>",
	  "sort keys: comm,pid,tid,dso,sym,srcline,cpu\n"
	  "(default comm,dso,sym; pid: per thread, shown as\n"
	  "tid:comm like perf's, tid: the thread id alone)" },
	{ 'F', "fields", required_argument, "<fields>",
	  "output columns: overhead,children,self,samples,period\n"
	  "and sort keys (the keys among them become the sort)" },
	{ O_CHILDREN, "children", no_argument, NULL,
	  "accumulate callees into callers (default with callchains)" },
	{ O_NO_CHILDREN, "no-children", no_argument, NULL, "self overhead only" },
	{ 'g', "call-graph", optional_argument, "<spec>",
	  "graph|flat|folded|fractal|none[,threshold][,caller|callee]\n"
	  "(default graph,0.5; caller order with --children)" },
	{ 'G', "inverted", no_argument, NULL, "caller-based call graphs" },
	{ O_NO_CG, "no-call-graph", no_argument, NULL, "do not show call graphs (same as -g none)" },
	{ O_PCT, "percent-limit", required_argument, "<p>", "hide entries below p percent" },
	{ 'n', "show-nr-samples", no_argument, NULL, "add a Samples column" },
	{ O_WEIGHT, "weight", required_argument, "<w>", "overhead by 'period' (default) or by 'samples'" },
	{ O_PID, "pid", required_argument, "<pids>", "only these processes (comma separated)" },
	{ O_TID, "tid", required_argument, "<tids>", "only these threads" },
	{ O_COMM, "comm", required_argument, "<comms>", "only these command names" },
	{ O_COMM, "comms", required_argument, NULL, NULL },
	{ 'd', "dso", required_argument, "<dsos>", "only these DSOs" },
	{ 'd', "dsos", required_argument, NULL, NULL },
	{ 'S', "symbols", required_argument, "<syms>", "only these symbols" },
	{ 'C', "cpu", required_argument, "<cpus>", "only these CPUs (list or ranges: 0,2-3)" },
	{ O_TIME, "time", required_argument, "<start,end>",
	  "only samples in [start,end] (seconds, perf's timestamps),\n"
	  "or a share of the run: 10%-20%" },
	{ O_HEADER, "header", no_argument, NULL, "print the perf.data header block first" },
	{ O_HEADER_ONLY, "header-only", no_argument, NULL, "print only the header block" },
	{ 'I', "show-info", no_argument, NULL,
	  "with --header/--header-only: the CPU and NUMA\n"
	  "topology, caches and memory nodes in full" },
	{ O_JSON, "json", no_argument, NULL, "print a JSON document (same numbers, whole trees)" },
	{ O_INLINE, "inline", no_argument, NULL,
	  "expand inlined functions in every call-chain frame\n"
	  "(default: in DWARF-unwound frames only, as perf 6.1)" },
	{ O_NO_INLINE, "no-inline", no_argument, NULL, "do not expand inlined functions in call chains" },
	{ O_SHOW_EMPTY, "show-empty", no_argument, NULL, "also events without samples" },
	{ O_GROUP, "group", no_argument, NULL,
	  "show an event group of the file as one section with\n"
	  "a column per member (default: when the file has groups)" },
	{ O_NO_GROUP, "no-group", no_argument, NULL, "one section per event, groups or not" },
	{ O_MAX_STACK, "max-stack", required_argument, "<n>",
	  "use at most n frames of every call chain (default 127)" },
	{ O_STDIO, "stdio", no_argument, NULL, "text output (the default; accepted for perf habits)" },
	{ 'q', "quiet", no_argument, NULL, "no warnings" },
	{ 'v', "verbose", no_argument, NULL, "more messages" },
	{ 0 },
};

const struct pk_tool_help cmd_report_help = {
	.synopsis = "usage: perfkit report [<options>]\n",
	.intro = "Show where the samples of a perf.data file went, like `perf report --stdio`.\n",
	.opts = opts,
};

/* ---- line buffer: output text is assembled by hand and written a line at a time ---- */

bool rpt_lb_reserve(struct report *R, size_t n)
{
	if (R->lbcap - R->lbn >= n)
		return true;
	size_t nc = R->lbcap ? R->lbcap : 4096;
	while (nc - R->lbn < n)
		nc *= 2;
	char *b = realloc(R->lb, nc);
	if (!b) {
		R->lb_oom = true;
		return false;
	}
	R->lb = b;
	R->lbcap = nc;
	return true;
}

void rpt_lb_put(struct report *R, const char *s, size_t n)
{
	if (!rpt_lb_reserve(R, n))
		return;
	memcpy(R->lb + R->lbn, s, n);
	R->lbn += n;
}

void rpt_lb_putc(struct report *R, char c)
{
	if (!rpt_lb_reserve(R, 1))
		return;
	R->lb[R->lbn++] = c;
}

void rpt_lb_fill(struct report *R, char c, size_t n)
{
	if (!rpt_lb_reserve(R, n))
		return;
	memset(R->lb + R->lbn, c, n);
	R->lbn += n;
}

void rpt_lb_flush(struct report *R)
{
	if (R->lbn)
		fwrite(R->lb, 1, R->lbn, R->out);
	R->lbn = 0;
}

/* "%.2f" of x into b (at least 32 bytes); returns the length. printf rounds the exact
 * binary value; away from a tie of the third decimal that is the nearest of x * 100, and
 * the rare values close to a tie are left to snprintf. */
int rpt_fmt_2f(char *b, double x)
{
	double t = x * 100.0;
	if (!(t >= 0.0 && t < 1e8))
		return snprintf(b, 32, "%.2f", x);
	uint64_t fl = (uint64_t)t;
	double fr = t - (double)fl;
	if (fr > 0.5 - 1e-6 && fr < 0.5 + 1e-6)
		return snprintf(b, 32, "%.2f", x);
	uint64_t r = fl + (fr > 0.5);
	char tmp[24];
	int n = 0;
	uint64_t ip = r / 100;
	do {
		tmp[n++] = (char)('0' + ip % 10);
		ip /= 10;
	} while (ip);
	int len = 0;
	while (n)
		b[len++] = tmp[--n];
	b[len++] = '.';
	b[len++] = (char)('0' + r % 100 / 10);
	b[len++] = (char)('0' + r % 10);
	b[len] = 0;
	return len;
}

int rpt_fmt_hex(char *b, uint64_t v)
{
	static const char hx[] = "0123456789abcdef";
	char tmp[16];
	int n = 0, len = 0;
	do {
		tmp[n++] = hx[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		b[len++] = tmp[--n];
	b[len] = 0;
	return len;
}

/* ---- option helpers ---- */

static int split_list(const char *s, char ***out, size_t *nr)
{
	char *dup = strdup(s);
	if (!dup)
		return -ENOMEM;
	for (char *save = NULL, *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char **n = realloc(*out, (*nr + 1) * sizeof(*n));
		if (!n) {
			free(dup);
			return -ENOMEM;
		}
		*out = n;
		(*out)[(*nr)++] = strdup(t);
	}
	free(dup);
	return 0;
}

/* "1,3-5" -> ints */
static int parse_ints(const char *s, int32_t **out, size_t *nr)
{
	const char *p = s;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;
		if (end == p)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b - a > 65536)
				return -EINVAL;
		}
		for (long v = a; v <= b; v++) {
			int32_t *n = realloc(*out, (*nr + 1) * sizeof(*n));
			if (!n)
				return -ENOMEM;
			*out = n;
			(*out)[(*nr)++] = (int32_t)v;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	return 0;
}

/* The column of a sort key (pid: see parse_sort) */
static enum col key_col(enum pk_sort_key k)
{
	static const enum col kc[PK_SORT__MAX] = {
		[PK_SORT_COMM] = COL_COMM, [PK_SORT_PID] = COL_PID,
		[PK_SORT_TID] = COL_TID, [PK_SORT_DSO] = COL_DSO,
		[PK_SORT_SYM] = COL_SYM, [PK_SORT_SRCLINE] = COL_SRCLINE,
		[PK_SORT_CPU] = COL_CPU,
	};
	return (unsigned)k < PK_SORT__MAX ? kc[k] : COL_SYM;
}

static int parse_sort(struct report *R, const char *s)
{
	char **keys = NULL;
	size_t n = 0;
	int err = split_list(s, &keys, &n);
	R->nr_sort = 0;
	for (size_t i = 0; !err && i < n; i++) {
		int k = pk_sort_key__parse(keys[i]);
		enum col col = k >= 0 ? key_col((enum pk_sort_key)k) : COL_SYM;
		if (!strcmp(keys[i], "pid")) {
			/* perf's pid key is the thread: its tid and last comm */
			k = PK_SORT_TID;
			col = COL_PID;
		}
		if (k < 0) {
			pk_tool_error("unknown sort key '%s' (known: comm,pid,tid,dso,sym,srcline,cpu)",
				      keys[i]);
			err = -EINVAL;
		} else if (R->nr_sort < PK_SORT__MAX) {
			bool dup = false;
			for (size_t j = 0; j < R->nr_sort; j++)
				dup |= R->sort[j] == (enum pk_sort_key)k;
			if (!dup) {
				R->sort_col[R->nr_sort] = col;
				R->sort[R->nr_sort++] = (enum pk_sort_key)k;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return err;
}

static int parse_fields(struct report *R, const char *s)
{
	static const struct { const char *name; enum col c; int key; } tab[] = {
		{ "overhead", COL_OVERHEAD, -1 }, { "children", COL_CHILDREN, -1 },
		{ "overhead_children", COL_CHILDREN, -1 }, { "self", COL_SELF, -1 },
		{ "sample", COL_SAMPLES, -1 }, { "samples", COL_SAMPLES, -1 },
		{ "period", COL_PERIOD, -1 }, { "comm", COL_COMM, PK_SORT_COMM },
		{ "pid", COL_PID, PK_SORT_TID }, { "tid", COL_TID, PK_SORT_TID },
		{ "dso", COL_DSO, PK_SORT_DSO }, { "sym", COL_SYM, PK_SORT_SYM },
		{ "symbol", COL_SYM, PK_SORT_SYM }, { "srcline", COL_SRCLINE, PK_SORT_SRCLINE },
		{ "cpu", COL_CPU, PK_SORT_CPU },
	};
	char **f = NULL;
	size_t n = 0;
	int err = split_list(s, &f, &n);
	R->nr_cols = 0;
	R->nr_sort = 0;
	for (size_t i = 0; !err && i < n; i++) {
		size_t j;
		for (j = 0; j < (sizeof(tab) / sizeof(tab[0])); j++)
			if (!strcmp(f[i], tab[j].name))
				break;
		if (j == (sizeof(tab) / sizeof(tab[0]))) {
			pk_tool_error("unknown field '%s'", f[i]);
			err = -EINVAL;
			break;
		}
		if (R->nr_cols < 16)
			R->cols[R->nr_cols++] = tab[j].c;
		if (tab[j].key >= 0 && R->nr_sort < PK_SORT__MAX) {
			R->sort_col[R->nr_sort] = tab[j].c;
			R->sort[R->nr_sort++] = (enum pk_sort_key)tab[j].key;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(f[i]);
	free(f);
	R->fields_given = !err;
	return err;
}

static int parse_cg(struct report *R, const char *s)
{
	char **t = NULL;
	size_t n = 0;
	int err = split_list(s, &t, &n);
	R->cg_given = true;
	for (size_t i = 0; !err && i < n; i++) {
		char *e;
		if (!strcmp(t[i], "graph"))
			R->cg = CG_GRAPH;
		else if (!strcmp(t[i], "fractal"))
			R->cg = CG_FRACTAL;
		else if (!strcmp(t[i], "flat"))
			R->cg = CG_FLAT;
		else if (!strcmp(t[i], "folded"))
			R->cg = CG_FOLDED;
		else if (!strcmp(t[i], "none"))
			R->cg = CG_NONE;
		else if (!strcmp(t[i], "caller"))
			R->order = PK_CG_ORDER_CALLER;
		else if (!strcmp(t[i], "callee"))
			R->order = PK_CG_ORDER_CALLEE;
		else if (!strcmp(t[i], "function") || !strcmp(t[i], "percent"))
			; /* perf's defaults, accepted */
		else if ((R->cg_threshold = strtod(t[i], &e)), e != t[i] && !*e)
			;
		else {
			pk_tool_error("bad call-graph spec '%s'", t[i]);
			err = -EINVAL;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(t[i]);
	free(t);
	return err;
}

static bool looks_like_cg_spec(const char *s)
{
	static const char *const w[] = { "graph", "flat", "folded", "fractal", "none",
					 "caller", "callee", NULL };
	if (!s || !*s)
		return false;
	if ((*s >= '0' && *s <= '9') || *s == '.')
		return true;
	for (int i = 0; w[i]; i++)
		if (!strncmp(s, w[i], strlen(w[i])))
			return true;
	return false;
}

/* ---- rows ---- */

const char *rpt_col_title(enum col c)
{
	switch (c) {
	case COL_CHILDREN: return "Children";
	case COL_SELF: return "Self";
	case COL_OVERHEAD: return "Overhead";
	case COL_SAMPLES: return "Samples";
	case COL_PERIOD: return "Period";
	case COL_COMM: return "Command";
	case COL_PID: return "    Pid:Command"; /* perf's title, spaces included */
	case COL_TID: return "Tid";
	case COL_DSO: return "Shared Object";
	case COL_SYM: return "Symbol";
	case COL_SRCLINE: return "Source:Line";
	case COL_CPU: return "CPU";
	}
	return "?";
}

double rpt_pct(const struct report *R, uint64_t v)
{
	return R->total ? 100.0 * (double)v / (double)R->total : 0.0;
}

uint64_t rpt_weight_self(const struct report *R, const struct pk_hist_entry *e)
{
	return R->by_samples ? e->self_samples : e->self_period;
}

uint64_t rpt_weight_total(const struct report *R, const struct pk_hist_entry *e)
{
	return R->by_samples ? e->total_samples : e->total_period;
}

static int pct_text(const struct report *R, uint64_t v, char *buf, size_t len)
{
	if (len < 33)
		return snprintf(buf, len, "%.2f%%", rpt_pct(R, v));
	int n = rpt_fmt_2f(buf, rpt_pct(R, v));
	buf[n++] = '%';
	buf[n] = 0;
	return n;
}

/* snprintf(buf, len, "%s", s) */
static int str_text(const char *s, char *buf, size_t len)
{
	size_t l = strlen(s);
	size_t c = l < len ? l : len - 1;
	memcpy(buf, s, c);
	buf[c] = 0;
	return (int)l;
}

static int sym_text(const struct pk_hist_entry *e, char *buf, size_t len)
{
	if (e->sym) {
		size_t sl = strlen(e->sym);
		if (sl + 5 > len)
			return snprintf(buf, len, "[%c] %s", e->kernel ? 'k' : '.', e->sym);
		buf[0] = '[';
		buf[1] = e->kernel ? 'k' : '.';
		buf[2] = ']';
		buf[3] = ' ';
		memcpy(buf + 4, e->sym, sl + 1);
		return (int)sl + 4;
	}
	/* perf prints "%#.16x": no 0x prefix for a zero address */
	if (len < 32)
		return snprintf(buf, len, "[%c] %s%016" PRIx64, e->kernel ? 'k' : '.',
				e->addr ? "0x" : "", e->addr);
	char *p = buf;
	*p++ = '[';
	*p++ = e->kernel ? 'k' : '.';
	*p++ = ']';
	*p++ = ' ';
	if (e->addr) {
		*p++ = '0';
		*p++ = 'x';
	}
	char hx[24];
	int n = rpt_fmt_hex(hx, e->addr);
	for (int i = n; i < 16; i++)
		*p++ = '0';
	memcpy(p, hx, (size_t)n + 1);
	return (int)(p - buf) + n;
}

/* A comm as perf prints it in a column comm_w wide: cut to comm_w characters, padded to
 * it (the padding is the caller's) */
static int comm_text(const struct report *R, const char *comm, char *buf, size_t len)
{
	int n = str_text(comm ? comm : "", buf, len);
	if (n > R->comm_w && R->comm_w >= 0 && (size_t)R->comm_w < len) {
		buf[R->comm_w] = 0;
		n = R->comm_w;
	}
	return n;
}

/* perf's "pid" column: "%7d:" the thread id, then its last comm in comm_w characters */
static int pid_text(const struct report *R, const struct pk_hist_entry *e, char *buf, size_t len)
{
	const char *tc = e->thread_comm ? e->thread_comm : e->comm ? e->comm : "";
	if (len < 16)
		return snprintf(buf, len, "%7d:%s", e->tid, tc);
	int n = snprintf(buf, len, "%7d:", e->tid);
	if (n < 0 || (size_t)n >= len)
		return n;
	int m = comm_text(R, tc, buf + n, len - (size_t)n);
	int w = R->comm_w <= 1024 ? R->comm_w : 0;
	/* padded here: the comm part is as wide as the Command column */
	while (m < w && (size_t)(n + m) + 1 < len)
		buf[n + m++] = ' ';
	buf[n + m] = 0;
	return n + m;
}

/* perf's width of the Command column (and of Pid:Command's comm part): the longest last
 * comm of the entries' threads (not the entries' own comms), at least "Command"'s 7 */
int rpt_comm_width(const struct pk_hist *const *h, size_t nr)
{
	size_t w = 7;
	for (size_t m = 0; m < nr; m++)
		for (size_t i = 0; i < h[m]->nr_entries; i++) {
			const struct pk_hist_entry *e = h[m]->entries[i];
			const char *tc = e->thread_comm ? e->thread_comm : e->comm;
			size_t l = tc ? strlen(tc) : 0;
			if (l > w)
				w = l;
		}
	return w < 1024 ? (int)w : 1024;
}

int rpt_col_text(const struct report *R, enum col c, const struct pk_hist_entry *e,
		    char *buf, size_t len)
{
	switch (c) {
	case COL_CHILDREN: return pct_text(R, rpt_weight_total(R, e), buf, len);
	case COL_SELF:
	case COL_OVERHEAD: return pct_text(R, rpt_weight_self(R, e), buf, len);
	case COL_SAMPLES: return snprintf(buf, len, "%" PRIu64, e->self_samples);
	case COL_PERIOD: return snprintf(buf, len, "%" PRIu64, e->self_period);
	case COL_COMM: return comm_text(R, e->comm, buf, len);
	case COL_PID: return pid_text(R, e, buf, len);
	case COL_TID: return snprintf(buf, len, "%d", e->tid);
	case COL_DSO: return str_text(e->dso ? e->dso : "[unknown]", buf, len);
	case COL_SYM: return sym_text(e, buf, len);
	case COL_SRCLINE: return str_text(e->srcline ? e->srcline : "??:0", buf, len);
	case COL_CPU: return snprintf(buf, len, "%03d", e->cpu);
	}
	return 0;
}

bool rpt_col_numeric(enum col c)
{
	return c <= COL_PERIOD || c == COL_TID || c == COL_CPU;
}

/* One cell of a row: numbers right-aligned in the pad, text left-aligned (the last
 * column's symbol or srcline not padded, as perf prints it) */
void rpt_put_cell(struct report *R, enum col c, const char *buf, size_t bl, size_t pad,
		  bool last)
{
	if (rpt_col_numeric(c)) {
		rpt_lb_fill(R, ' ', pad);
		rpt_lb_put(R, buf, bl);
	} else if (last && (c == COL_SYM || c == COL_SRCLINE)) {
		rpt_lb_put(R, buf, bl);
	} else {
		rpt_lb_put(R, buf, bl);
		rpt_lb_fill(R, ' ', pad);
	}
}

/* ---- one event section ---- */

void rpt_fmt_samples(char *buf, size_t len, uint64_t n)
{
	char unit = ' ';
	if (n > 1000) { n /= 1000; unit = 'K'; }
	if (n > 1000) { n /= 1000; unit = 'M'; }
	if (n > 1000) { n /= 1000; unit = 'G'; }
	snprintf(buf, len, "%" PRIu64 "%c", n, unit);
}

void rpt_print_hist(struct report *R, const struct pk_hist *h)
{
	FILE *f = R->out;
	char nb[32], buf[2048];
	uint64_t shown = h->nr_samples - h->nr_filtered;
	R->total = R->by_samples ? h->nr_samples : h->total_period;
	rpt_fmt_samples(nb, sizeof(nb), shown);
	/* -q: perf prints no "#" line at all, only the rows and call graphs */
	if (!R->quiet) {
		fprintf(f, "# Samples: %s of event '%s'\n", nb, h->name);
		if (h->nr_filtered)
			fprintf(f, "# (%" PRIu64 " samples filtered out)\n", h->nr_filtered);
		fprintf(f, "# Event count (approx.): %" PRIu64 "\n#\n", h->total_period);
	}
	/* widths */
	R->comm_w = rpt_comm_width(&h, 1);
	for (size_t c = 0; c < R->nr_cols; c++) {
		R->width[c] = (int)strlen(rpt_col_title(R->cols[c]));
		if (R->cols[c] <= COL_OVERHEAD && R->width[c] < 8)
			R->width[c] = 8;
	}
	for (size_t i = 0; i < h->nr_entries; i++)
		for (size_t c = 0; c < R->nr_cols; c++) {
			int w = rpt_col_text(R, R->cols[c], h->entries[i], buf, sizeof(buf));
			if (w > R->width[c])
				R->width[c] = w < (int)sizeof(buf) ? w : (int)sizeof(buf) - 1;
		}
	for (size_t c = 0; !R->quiet && c < R->nr_cols; c++) {
		const char *t = rpt_col_title(R->cols[c]);
		fputs(c ? "  " : "# ", f);
		if (rpt_col_numeric(R->cols[c]))
			fprintf(f, "%*s", R->width[c], t);
		else
			fprintf(f, "%-*s", R->width[c], t);
	}
	for (size_t c = 0; !R->quiet && c < R->nr_cols; c++) {
		fputs(c ? "  " : "\n# ", f);
		for (int i = 0; i < R->width[c]; i++)
			fputc('.', f);
	}
	if (!R->quiet)
		fputs("\n#\n", f);
	for (size_t i = 0; i < h->nr_entries; i++) {
		const struct pk_hist_entry *e = h->entries[i];
		uint64_t key = R->children == 1 ? rpt_weight_total(R, e) : rpt_weight_self(R, e);
		if (!key)
			continue;
		if (R->percent_limit > 0 && rpt_pct(R, key) < R->percent_limit)
			continue;
		rpt_lb_put(R, "  ", 2);
		for (size_t c = 0; c < R->nr_cols; c++) {
			int w = rpt_col_text(R, R->cols[c], e, buf, sizeof(buf));
			size_t bl = w < 0 ? 0 : (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1;
			size_t pad = (size_t)R->width[c] > bl ? (size_t)R->width[c] - bl : 0;
			bool last = c + 1 == R->nr_cols;
			if (c)
				rpt_lb_put(R, "  ", 2);
			rpt_put_cell(R, R->cols[c], buf, bl, pad, last);
		}
		rpt_lb_putc(R, '\n');
		rpt_lb_flush(R);
		rpt_print_callchain(R, e);
		pk_report__callchain_release(R->rep); /* one tree in memory at a time */
	}
	fputs("\n\n", f);
}

/* ---- progress and warnings ---- */

struct progress {
	uint64_t size;
	time_t start;
	bool shown;
};

static void progress_cb(uint64_t done, uint64_t records, void *ctx)
{
	struct progress *p = ctx;
	time_t now = time(NULL);
	if (now - p->start < 1)
		return;
	if (p->size)
		fprintf(stderr, "\rperfkit report: processing %3.0f%% (%" PRIu64 " records)",
			100.0 * (double)done / (double)p->size, records);
	else
		fprintf(stderr, "\rperfkit report: processing %" PRIu64 " records", records);
	p->shown = true;
}

struct warn_ctx {
	uint64_t total;
	int shown;
};

static void warn_unresolved(const char *dso, uint64_t samples, void *ctx)
{
	struct warn_ctx *w = ctx;
	if (!dso || w->shown >= 8 || samples * 100 < w->total)
		return; /* only DSOs with at least 1% of the samples */
	if (dso[0] == '[' && strcmp(dso, "[kernel.kallsyms]"))
		return;
	w->shown++;
	const char *base = strrchr(dso, '/');
	base = base ? base + 1 : dso;
	if (!strncmp(base, "perf-", 5) && strstr(base, ".map"))
		pk_tool_warn("%" PRIu64 " samples in JIT code have no symbol: '%s' names none "
			     "(JIT compilers write it when asked, e.g. node --perf-basic-prof)",
			     samples, dso);
	else if (!strcmp(dso, "[kernel.kallsyms]"))
		pk_tool_warn("%" PRIu64 " samples in the kernel have no symbol: the recording is "
			     "from another kernel, or /proc/kallsyms hides addresses "
			     "(kernel.kptr_restrict)", samples);
	else
		pk_tool_warn("%" PRIu64 " samples in '%s' have no symbol: install its debug info "
			     "(e.g. the -dbg/-dbgsym package, or debuginfod) or rebuild with -g",
			     samples, dso);
}

/* ---- time filter ---- */

static int parse_time(struct report *R, struct pk_data_reader *rd, uint64_t *start, uint64_t *end)
{
	const char *s = R->time_spec;
	*start = *end = 0;
	if (!s)
		return 0;
	const struct pk_data_env *e = pk_data_reader__env(rd);
	if (strchr(s, '%')) {
		double a, b;
		if (sscanf(s, "%lf%%-%lf%%", &a, &b) != 2 || a < 0 || b > 100 || a > b)
			return -EINVAL;
		if (!e->first_sample_time && !e->last_sample_time) {
			pk_tool_error("--time with percentages needs the file's sample_time feature");
			return -EINVAL;
		}
		double span = (double)(e->last_sample_time - e->first_sample_time);
		*start = e->first_sample_time + (uint64_t)(span * a / 100.0);
		*end = e->first_sample_time + (uint64_t)(span * b / 100.0);
		if (!*start)
			*start = 1;
		return 0;
	}
	const char *comma = strchr(s, ',');
	if (!comma)
		return -EINVAL;
	if (comma > s)
		*start = (uint64_t)(strtod(s, NULL) * 1e9 + 0.5);
	if (comma[1])
		*end = (uint64_t)(strtod(comma + 1, NULL) * 1e9 + 0.5);
	return 0;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* (volatile: stores to a static nothing reads would otherwise be optimised away, and the
 * memory counted as lost) */
static struct pk_report *volatile exit_keep_rep;
static struct pk_data_reader *volatile exit_keep_rd;

int cmd_report(int argc, char **argv)
{
	struct report R = { .input = "perf.data", .children = -1, .group = -1, .cg = CG_GRAPH,
			    .cg_threshold = 0.5, .out = stdout };
	int c, err = 0, status = 1;
	struct pk_data_reader *rd = NULL;
	struct pk_report *rep = NULL;

	/* "-g graph,0.5" (perf's habit): join the optional argument */
	char **av = calloc((size_t)argc + 1, sizeof(*av));
	char **joined = calloc((size_t)argc + 1, sizeof(*joined));
	int ac = 0;
	if (!av || !joined) {
		free(av);
		free(joined);
		pk_tool_error("out of memory");
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		if ((!strcmp(argv[i], "-g") || !strcmp(argv[i], "--call-graph")) && i + 1 < argc &&
		    looks_like_cg_spec(argv[i + 1])) {
			size_t l = strlen(argv[i + 1]) + 16;
			joined[i] = malloc(l);
			if (joined[i]) {
				snprintf(joined[i], l, "--call-graph=%s", argv[i + 1]);
				av[ac++] = joined[i];
				i++;
				continue;
			}
		}
		av[ac++] = argv[i];
	}

	/* a larger stdio buffer than a file's block size: fewer write(2)s for big reports
	 * (glibc ignores the size when it is to allocate the buffer itself) */
	static char outbuf[(size_t)256 << 10];
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	opterr = 0;
	optind = 1;
	while ((c = pk_tool_getopt(ac, av, opts, 0)) != -1) {
		switch (c) {
		case 'i': R.input = optarg; break;
		case 's': err = parse_sort(&R, optarg); break;
		case 'F': err = parse_fields(&R, optarg); break;
		case O_CHILDREN: R.children = 1; break;
		case O_NO_CHILDREN: R.children = 0; break;
		case 'g': err = optarg ? parse_cg(&R, optarg) : 0; R.cg_given = true; break;
		case 'G': R.order = PK_CG_ORDER_CALLER; break;
		case O_NO_CG: R.cg = CG_NONE; R.cg_given = true; break;
		case O_PCT: R.percent_limit = strtod(optarg, NULL); break;
		case 'n': R.show_nr = true; break;
		case O_WEIGHT:
			if (!strcmp(optarg, "samples"))
				R.by_samples = true;
			else if (strcmp(optarg, "period"))
				err = -EINVAL;
			break;
		case O_PID: err = parse_ints(optarg, &R.pids, &R.nr_pids); break;
		case O_TID: err = parse_ints(optarg, &R.tids, &R.nr_tids); break;
		case 'C': err = parse_ints(optarg, &R.cpus, &R.nr_cpus); break;
		case O_COMM: err = split_list(optarg, &R.comms, &R.nr_comms); break;
		case 'd': err = split_list(optarg, &R.dsos, &R.nr_dsos); break;
		case 'S': err = split_list(optarg, &R.syms, &R.nr_syms); break;
		case O_TIME: R.time_spec = optarg; break;
		case O_HEADER: R.header = true; break;
		case O_HEADER_ONLY: R.header_only = true; break;
		case 'I': R.show_info = true; break;
		case O_JSON: R.json = true; break;
		case O_STDIO: break;
		case O_MAX_STACK: R.max_stack = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'q': R.quiet = true; break;
		case O_NO_INLINE: R.no_inline = true; R.all_inline = false; break;
		case O_INLINE: R.all_inline = true; R.no_inline = false; break;
		case O_SHOW_EMPTY: R.show_empty = true; break;
		case O_GROUP: R.group = 1; break;
		case O_NO_GROUP: R.group = 0; break;
		case 'v': R.verbose++; break;
		default:
			pk_tool_error("unknown or incomplete option '%s'", av[optind - 1]);
			pk_tool_print_usage(stderr, &cmd_report_help);
			status = 129;
			goto out;
		}
		if (err) {
			if (err == -EINVAL)
				pk_tool_error("bad value for option '%s'", av[optind - 1]);
			status = 129;
			goto out;
		}
	}
	if (optind < ac) {
		pk_tool_error("unexpected argument '%s'", av[optind]);
		status = 129;
		goto out;
	}
	pk_tool_setup_log(R.verbose);
	if (R.quiet)
		pk_set_log(NULL, NULL, PK_LOG_ERROR);

	PK_OPTS(pk_data_reader_opts, ro);
	ro.no_mmap = !pk_tool_read_mmap();
	rd = pk_data_reader__open(R.input, &ro);
	if (!rd) {
		if (errno == ENOENT && !strcmp(R.input, "perf.data"))
			pk_tool_error("cannot open 'perf.data': no such file (record one with "
				      "'perfkit record', or give -i FILE)");
		else
			pk_tool_error("cannot read '%s': %s", R.input, pk_strerror(errno));
		goto out;
	}
	if (pk_data_reader__truncated(rd) && !R.quiet)
		pk_tool_warn("'%s' was not finalised (recording interrupted?); reading what is there",
			     R.input);
	/* perf -q prints no header block: -q --header is the report alone, and so is
	 * -q --header-only (perf 6.1 then goes on to the report) */
	if (R.quiet)
		R.header = R.header_only = false;
	if (R.header || R.header_only)
		rpt_print_header(&R, rd);
	if (R.header_only) {
		status = pk_tool_finish_stdout(0);
		goto out;
	}

	/* callchains present? (decides the children default, like perf) */
	bool any_cc = false;
	for (size_t i = 0; i < pk_data_reader__nr_attrs(rd); i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(rd, i);
		if (a && (a->attr.attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)))
			any_cc = true;
	}
	if (R.children < 0)
		R.children = any_cc && R.cg != CG_NONE ? 1 : 0;
	if (!R.nr_sort) {
		R.sort[0] = PK_SORT_COMM;
		R.sort[1] = PK_SORT_DSO;
		R.sort[2] = PK_SORT_SYM;
		for (size_t k = 0; k < 3; k++)
			R.sort_col[k] = key_col(R.sort[k]);
		R.nr_sort = 3;
	}
	R.sym_first = R.sort[0] == PK_SORT_SYM;
	if (!R.fields_given) {
		R.nr_cols = 0;
		if (R.children == 1) {
			R.cols[R.nr_cols++] = COL_CHILDREN;
			R.cols[R.nr_cols++] = COL_SELF;
		} else {
			R.cols[R.nr_cols++] = COL_OVERHEAD;
		}
		if (R.show_nr)
			R.cols[R.nr_cols++] = COL_SAMPLES;
		for (size_t k = 0; k < R.nr_sort; k++)
			R.cols[R.nr_cols++] = R.sort_col[k];
	} else if (!R.nr_sort) {
		R.sort[R.nr_sort++] = PK_SORT_SYM;
	}

	/* DWARF call chains (unwinding, inline frames of every frame) read much debug
	 * information through libdw, in small allocations: the heap for them in one go.
	 * (Not for --sort srcline alone: it gained little, and the reserve was 40 % of its
	 * peak RSS.) */
	bool heavy_debug = R.all_inline;
	for (size_t i = 0; i < pk_data_reader__nr_attrs(rd); i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(rd, i);
		heavy_debug |= a && (a->attr.attr.sample_type & PERF_SAMPLE_STACK_USER);
	}
	if (heavy_debug)
		pk_tool_heap_reserve((size_t)24 << 20);

	uint64_t t0, t1;
	if (parse_time(&R, rd, &t0, &t1)) {
		pk_tool_error("bad --time '%s' (START,END in seconds, or A%%-B%%)", R.time_spec);
		status = 129;
		goto out;
	}
	PK_OPTS(pk_report_opts, o, .sort = R.sort, .nr_sort = R.nr_sort,
		.children = R.children == 1, .callgraph = any_cc && R.cg != CG_NONE,
		.order = R.order, .max_stack = R.max_stack, .host = pk_data_env__same_host(pk_data_reader__env(rd)),
		.inlines = !R.no_inline,
		.inlines_all = R.all_inline,
		.no_reader_thread = !pk_tool_threads_allowed(),
		.pids = R.pids, .nr_pids = R.nr_pids, .tids = R.tids, .nr_tids = R.nr_tids,
		.cpus = R.cpus, .nr_cpus = R.nr_cpus,
		.comms = (const char *const *)R.comms, .nr_comms = R.nr_comms,
		.dsos = (const char *const *)R.dsos, .nr_dsos = R.nr_dsos,
		.symbols = (const char *const *)R.syms, .nr_symbols = R.nr_syms,
		.time_start = t0, .time_end = t1, .lazy_callchains = true,
		.machine_opts = pk_tool_machine_opts());
	if (R.order == PK_CG_ORDER_DEFAULT)
		R.order = R.children == 1 ? PK_CG_ORDER_CALLER : PK_CG_ORDER_CALLEE;
	o.order = R.order;
	rep = pk_report__new(&o);
	if (!rep) {
		pk_tool_error("cannot set up the report: %s", pk_strerror(errno));
		goto out;
	}
	R.rep = rep;
	struct progress prog = { .start = time(NULL) };
	struct stat st;
	bool tty = isatty(2) && !R.quiet;
	if (tty && strcmp(R.input, "-") && stat(R.input, &st) == 0)
		prog.size = (uint64_t)st.st_size;
	err = pk_report__process(rep, rd, tty ? progress_cb : NULL, &prog);
	if (prog.shown)
		fprintf(stderr, "\r%60s\r", "");
	if (err < 0) {
		pk_tool_error("'%s' %s: %s (showing what was read before)", R.input,
			      err == -PK_ERR_TRUNCATED ? "ended early" : "is corrupt",
			      pk_strerror(err));
		pk_report__finish(rep);
	}

	if (!R.quiet) {
		uint64_t total = 0;
		for (size_t i = 0; i < pk_report__nr_hists(rep); i++) {
			const struct pk_hist *h = pk_report__hist(rep, i);
			if (h)
				total += h->nr_samples;
		}
		struct warn_ctx w = { .total = total };
		pk_report__for_each_unresolved_dso(rep, warn_unresolved, &w);
	}

	if (R.json) {
		fprintf(R.out, "{\"input\":");
		pk_json_str(R.out, R.input);
		fprintf(R.out, ",\"events\":[");
		bool first = true;
		for (size_t i = 0; i < pk_report__nr_hists(rep); i++) {
			const struct pk_hist *h = pk_report__hist(rep, i);
			if (!h || (!h->nr_samples && !R.show_empty))
				continue;
			if (!first)
				fputc(',', R.out);
			rpt_json_hist(&R, h);
			first = false;
		}
		fprintf(R.out, "]}\n");
	} else {
		uint64_t lost = 0;
		for (size_t i = 0; i < pk_report__nr_hists(rep); i++) {
			const struct pk_hist *h = pk_report__hist(rep, i);
			if (h)
				lost += h->nr_lost;
		}
		if (!R.header && !R.quiet)
			fprintf(R.out, "# To display the perf.data header info, please use "
				"--header/--header-only options.\n#\n");
		if (!R.quiet)
			fprintf(R.out, "#\n# Total Lost Samples: %" PRIu64 "\n#\n", lost);
		if (rpt_print_sections(&R, rd, rep) < 0) {
			pk_tool_error("out of memory");
			err = -ENOMEM;
		}
	}
	status = pk_tool_finish_stdout(err < 0 ? 1 : 0);
	/* The process ends now: its memory goes back with it faster than freeing it piece
	 * by piece (unmapping populated arrays was ~2 ms of a 0.1 s report in a PVM guest).
	 * Kept reachable, so that leak checkers do not count it. */
	exit_keep_rep = rep;
	exit_keep_rd = rd;
	rep = NULL;
	rd = NULL;
out:
	pk_report__free(rep);
	pk_data_reader__free(rd);
	for (int i = 0; i < argc; i++)
		free(joined[i]);
	free(joined);
	free(av);
	free(R.pids);
	free(R.tids);
	free(R.cpus);
	free_strs(R.comms, R.nr_comms);
	free_strs(R.dsos, R.nr_dsos);
	free_strs(R.syms, R.nr_syms);
	free(R.lb);
	return status;
}
