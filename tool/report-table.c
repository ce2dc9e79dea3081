/* SPDX-License-Identifier: MIT */
/*
 * tool/report-table.c - `perfkit report`'s rows: the line buffer text is assembled in,
 * number formatting, the columns (titles, widths, cell text) and one event's table of
 * entries with its "#" lines.
 */
#include "report.h"

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
	if (!n || !rpt_lb_reserve(R, n)) /* (nothing: the buffer may not exist yet) */
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
	if (!n || !rpt_lb_reserve(R, n))
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
	case COL_PARENT: return "Parent symbol";
	case COL_OFFCPU_MS: return "Off-CPU ms";
	case COL_TIME: return "Time";
	case COL_SOCKET: return "Socket";
	case COL_SRCFILE: return "Source File";
	case COL_SYMOFF: return "Symbol Offset";
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

/* the unrounded percentage pct_text last formatted, for its colour (perf compares the
 * value, not its text: 0.4996% prints as 0.50% and stays uncoloured); -1: none */
static double last_pct = -1;

static int pct_text(const struct report *R, uint64_t v, char *buf, size_t len)
{
	last_pct = rpt_pct(R, v);
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
	int n = (int)(fmt_hex(hx, e->addr) - hx);
	hx[n] = 0;
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
			if (i + 8 < h[m]->nr_entries)
				__builtin_prefetch(h[m]->entries[i + 8]);
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
	case COL_CPU: return snprintf(buf, len, "%.3d", e->cpu); /* perf: -1 is "-001" */
	case COL_PARENT: return str_text(e->parent ? e->parent : "[other]", buf, len);
	case COL_TIME: /* perf's: seconds with microseconds (--ns: nanoseconds) */
		return R->ns ? snprintf(buf, len, "%" PRIu64 ".%09" PRIu64, e->time / 1000000000,
					e->time % 1000000000)
			     : snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, e->time / 1000000000,
					e->time % 1000000000 / 1000);
	case COL_SOCKET: return snprintf(buf, len, "%.3d", e->socket);
	case COL_SRCFILE: return str_text(e->srcfile ? e->srcfile : "", buf, len);
	case COL_SYMOFF: /* later perf's: "[.] sym+0x1f", the symbol's text when unresolved */
		if (!e->symoff)
			return sym_text(e, buf, len);
		return snprintf(buf, len, "[%c] %s", e->kernel ? 'k' : '.', e->symoff);
	case COL_OFFCPU_MS: {
		uint64_t ns = R->children == 1 ? e->total_period : e->self_period;
		return snprintf(buf, len, "%.3f", (double)ns / 1e6);
	}
	}
	return 0;
}

/* What rpt_col_text returns for the text columns whose length is known without writing
 * them (-1: the others). The widths are taken over every entry before any is printed: on
 * a --children report of a system-wide recording, 185k rows, each cell made twice. */
static int col_len(const struct report *R, enum col c, const struct pk_hist_entry *e)
{
	switch (c) {
	case COL_DSO: return (int)strlen(e->dso ? e->dso : "[unknown]");
	case COL_SYM: /* "[.] sym", or "[.] 0x" and 16 hex digits (no 0x for 0) */
		return e->sym ? (int)strlen(e->sym) + 4 : e->addr ? 22 : 20;
	case COL_COMM: {
		int n = (int)strlen(e->comm ? e->comm : "");
		return n > R->comm_w && R->comm_w >= 0 ? R->comm_w : n;
	}
	default: return -1;
	}
}

bool rpt_col_numeric(enum col c)
{
	return c <= COL_PERIOD || c == COL_TID || c == COL_CPU || c == COL_OFFCPU_MS ||
	       c == COL_SOCKET;
}

/* perf's percent_color: red from 5%, green above 0.5%, else none */
const char *rpt_pct_color(const struct report *R, double pct)
{
	if (!R->color)
		return "";
	return pct >= 5.0 ? "\033[31m" : pct > 0.5 ? "\033[32m" : "";
}

/* One cell of a row: numbers right-aligned in the pad, text left-aligned (the last
 * column's symbol or srcline not padded, as perf prints it); a percentage in colour,
 * padding included, as perf */
void rpt_put_cell(struct report *R, enum col c, const char *buf, size_t bl, size_t pad,
		  bool last)
{
	const char *color = "";
	if (c <= COL_OVERHEAD)
		color = rpt_pct_color(R, last_pct >= 0 ? last_pct : strtod(buf, NULL));
	last_pct = -1;
	if (*color) {
		rpt_lb_put(R, color, strlen(color));
		rpt_lb_fill(R, ' ', pad);
		rpt_lb_put(R, buf, bl);
		rpt_lb_put(R, RPT_COLOR_RESET, sizeof(RPT_COLOR_RESET) - 1);
	} else if (rpt_col_numeric(c)) {
		rpt_lb_fill(R, ' ', pad);
		rpt_lb_put(R, buf, bl);
	} else if (last && (c == COL_SYM || c == COL_SRCLINE || c == COL_SRCFILE || c == COL_TIME ||
			    c == COL_SYMOFF)) {
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

/* The off-CPU section (perfkit record --off-cpu, perf record --off-cpu): its periods are
 * nanoseconds blocked, shown in ms in a column after the percentages. */
static bool offcpu_cols(struct report *R, const struct pk_hist *h, enum col *saved)
{
	size_t at = 0;
	if (!h->name || strcmp(h->name, "offcpu-time") || R->nr_cols >= 16)
		return false;
	memcpy(saved, R->cols, sizeof(R->cols));
	while (at < R->nr_cols && R->cols[at] <= COL_OVERHEAD)
		at++;
	memmove(&R->cols[at + 1], &R->cols[at], (R->nr_cols - at) * sizeof(R->cols[0]));
	R->cols[at] = COL_OFFCPU_MS;
	R->nr_cols++;
	return true;
}

void rpt_print_hist(struct report *R, const struct pk_hist *h)
{
	FILE *f = R->out;
	char nb[32], buf[2048];
	uint64_t shown, period;
	enum col saved[16];
	struct pk_hist one;
	struct pk_hist_entry one_e;
	const struct pk_hist_entry *one_p;
	if (R->no_keys)
		h = rpt_one_entry(h, &one, &one_e, &one_p);
	bool offcpu = offcpu_cols(R, h, saved);
	R->total = rpt_hist_total(R, h, &shown, &period);
	rpt_fmt_samples(nb, sizeof(nb), shown);
	/* -q: perf prints no "#" line at all, only the rows and call graphs */
	if (!R->quiet) {
		fprintf(f, "# Samples: %s of event '%s'\n", nb, h->name);
		if (h->nr_filtered && !R->relative)
			fprintf(f, "# (%" PRIu64 " samples filtered out)\n", h->nr_filtered);
		fprintf(f, "# Event count (approx.): %" PRIu64 "\n#\n", period);
		if (offcpu)
			fprintf(f, "# Off-CPU time: %.3f ms (periods are nanoseconds blocked)\n#\n",
				(double)h->total_period / 1e6);
	}
	if (R->hierarchy) {
		rpt_print_hier(R, h);
		goto done;
	}
	/* widths */
	R->comm_w = rpt_comm_width(&h, 1);
	for (size_t c = 0; c < R->nr_cols; c++) {
		R->width[c] = (int)strlen(rpt_col_title(R->cols[c]));
		if (R->cols[c] <= COL_OVERHEAD && R->width[c] < 8)
			R->width[c] = 8;
		/* perf gives the raw counts 12 characters at least */
		if ((R->cols[c] == COL_SAMPLES || R->cols[c] == COL_PERIOD) && R->width[c] < 12)
			R->width[c] = 12;
		if (R->cols[c] == COL_TIME && R->width[c] < (R->ns ? 16 : 12))
			R->width[c] = R->ns ? 16 : 12; /* perf's */
	}
	/* one pass over the entries (in sorted order, scattered in memory: each one read
	 * ahead); a percentage's text is the longest for the largest value ("%.2f" of
	 * x >= 0): only the largest ones are written */
	const struct pk_hist_entry *maxe[16] = { 0 };
	for (size_t i = 0; i < h->nr_entries; i++) {
		const struct pk_hist_entry *e = h->entries[i];
		if (i + 8 < h->nr_entries)
			__builtin_prefetch(h->entries[i + 8]);
		for (size_t c = 0; c < R->nr_cols; c++) {
			int w;
			if (R->cols[c] <= COL_OVERHEAD) {
				const struct pk_hist_entry *m = maxe[c];
				if (!m || (R->cols[c] == COL_CHILDREN
					   ? rpt_weight_total(R, e) > rpt_weight_total(R, m)
					   : rpt_weight_self(R, e) > rpt_weight_self(R, m)))
					maxe[c] = e;
				continue;
			}
			if ((w = col_len(R, R->cols[c], e)) < 0)
				w = rpt_col_text(R, R->cols[c], e, buf, sizeof(buf));
			if (w > R->width[c] && R->cols[c] != COL_CPU) /* perf's CPU: 3 wide, "-001" too */
				R->width[c] = w < (int)sizeof(buf) ? w : (int)sizeof(buf) - 1;
		}
	}
	for (size_t c = 0; c < R->nr_cols; c++) {
		if (!maxe[c])
			continue;
		int w = rpt_col_text(R, R->cols[c], maxe[c], buf, sizeof(buf));
		if (w > R->width[c])
			R->width[c] = w < (int)sizeof(buf) ? w : (int)sizeof(buf) - 1;
	}
	last_pct = -1;
	const char *sep = R->field_sep ? R->field_sep : "  ";
	for (size_t c = 0; !R->quiet && c < R->nr_cols; c++) {
		const char *t = rpt_col_title(R->cols[c]);
		fputs(c ? sep : "# ", f);
		if (rpt_col_numeric(R->cols[c]))
			fprintf(f, "%*s", R->width[c], t);
		else
			fprintf(f, "%-*s", R->width[c], t);
	}
	/* -t: perf prints neither the dotted rule nor the "#" line under the titles */
	for (size_t c = 0; !R->quiet && !R->field_sep && c < R->nr_cols; c++) {
		fputs(c ? "  " : "\n# ", f);
		for (int i = 0; i < R->width[c]; i++)
			fputc('.', f);
	}
	if (!R->quiet)
		fputs(R->field_sep ? "\n" : "\n#\n", f);
	for (size_t i = 0; i < h->nr_entries; i++) {
		const struct pk_hist_entry *e = h->entries[i];
		if (i + 4 < h->nr_entries)
			__builtin_prefetch(h->entries[i + 4]);
		uint64_t key = R->children == 1 ? rpt_weight_total(R, e) : rpt_weight_self(R, e);
		if (!key)
			continue;
		if (R->percent_limit > 0 && rpt_pct(R, key) < R->percent_limit)
			continue;
		if (!R->field_sep)
			rpt_lb_put(R, "  ", 2);
		for (size_t c = 0; c < R->nr_cols; c++) {
			int w = rpt_col_text(R, R->cols[c], e, buf, sizeof(buf));
			size_t bl = w < 0 ? 0 : (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1;
			size_t pad = (size_t)R->width[c] > bl ? (size_t)R->width[c] - bl : 0;
			bool last = c + 1 == R->nr_cols;
			if (c)
				rpt_lb_put(R, sep, strlen(sep));
			if (R->field_sep && rpt_col_numeric(R->cols[c])) {
				/* perf's -t cell of a number: a space, then the number left-aligned */
				rpt_lb_putc(R, ' ');
				rpt_lb_put(R, buf, bl);
				rpt_lb_fill(R, ' ', pad ? pad - 1 : 0);
				last_pct = -1;
				continue;
			}
			rpt_put_cell(R, R->cols[c], buf, bl, pad, last);
		}
		rpt_lb_putc(R, '\n');
		rpt_lb_flush(R);
		rpt_print_callchain(R, e);
		pk_report__callchain_release(R->rep); /* one tree in memory at a time */
	}
done:
	fputs("\n\n", f);
	if (offcpu) {
		memcpy(R->cols, saved, sizeof(R->cols));
		R->nr_cols--;
	}
}
