/* SPDX-License-Identifier: MIT */
/*
 * tool/report-hier.c - `perfkit report --hierarchy`: perf's hierarchical layout, where
 * each sort key is a level of a tree (comm, then the DSOs of that comm, then their
 * symbols), each level indented by three more spaces and carrying the sum of the
 * entries below it. The entries are the report's usual ones (all keys); the levels are
 * made here by grouping them on each key's identity (pk_report__entry_key: the value
 * the flat report aggregates by, as perf's per-key comparison), not on its text: two
 * static functions of one name are two rows of the symbol level, as in perf.
 */
#include "report.h"

#define HIER_INDENT 3

struct hnode {
	const struct pk_hist_entry *e;  /* the first entry (in the flat order) below it */
	size_t first;                   /* its position in the flat order (ties) */
	uint64_t period, samples;       /* self sums of the entries below */
	struct hnode *kid;              /* children, sorted (kid[0..nkid)) */
	size_t nkid;
};

struct hier {
	struct report *R;
	const struct pk_hist *h;
	size_t nl;                      /* levels: the sort keys */
	char **txt;                     /* txt[i * nl + l]: entry i's text of level l */
	uint64_t *id;                   /* id[i * nl + l]: entry i's identity at level l */
	size_t *ord;                    /* entries ordered by their ids, level by level */
};

static int ord_cmp(const void *pa, const void *pb, void *arg)
{
	const struct hier *H = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	for (size_t l = 0; l < H->nl; l++) {
		uint64_t x = H->id[a * H->nl + l], y = H->id[b * H->nl + l];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return (a > b) - (a < b);
}

static uint64_t node_weight(const struct report *R, const struct hnode *n)
{
	return R->by_samples ? n->samples : n->period;
}

static const struct report *kid_sort_R;
static size_t kid_sort_level;

static int str_cmp(const char *a, const char *b)
{
	return a == b ? 0 : strcmp(a ? a : "", b ? b : "");
}

#define NUM_CMP(x, y) (((x) > (y)) - ((x) < (y)))

/* the order of two rows tied on overhead by one key's values, as the library's (and
 * perf's) sort of the flat rows */
static int key_cmp(enum pk_sort_key k, const struct pk_hist_entry *a, const struct pk_hist_entry *b)
{
	switch (k) {
	case PK_SORT_COMM: return str_cmp(a->comm, b->comm);
	case PK_SORT_PID: return NUM_CMP(a->pid, b->pid);
	case PK_SORT_TID: return NUM_CMP(a->tid, b->tid);
	case PK_SORT_CPU: return NUM_CMP(a->cpu, b->cpu);
	case PK_SORT_DSO: return str_cmp(a->dso, b->dso);
	case PK_SORT_SYM:
		if (a->sym && b->sym)
			return str_cmp(a->sym, b->sym);
		if (a->sym || b->sym)
			return a->sym ? -1 : 1;
		return NUM_CMP(a->addr, b->addr);
	case PK_SORT_SRCLINE: return str_cmp(a->srcline, b->srcline);
	case PK_SORT_PARENT:
		if (a->parent && b->parent)
			return strcmp(a->parent, b->parent);
		return a->parent || b->parent ? (a->parent ? -1 : 1) : 0;
	case PK_SORT_TIME: return NUM_CMP(a->time, b->time);
	case PK_SORT_SOCKET: return NUM_CMP(a->socket, b->socket);
	case PK_SORT_SRCFILE: return str_cmp(a->srcfile, b->srcfile);
	case PK_SORT_SYMOFF: return str_cmp(a->symoff, b->symoff);
	default: return 0;
	}
}

/* perf's order of one level: by overhead, then (ties) by the level's key */
static int kid_cmp(const void *pa, const void *pb)
{
	const struct hnode *a = pa, *b = pb;
	uint64_t x = node_weight(kid_sort_R, a), y = node_weight(kid_sort_R, b);
	if (x != y)
		return x > y ? -1 : 1;
	int c = key_cmp(kid_sort_R->sort[kid_sort_level], a->e, b->e);
	if (c)
		return c;
	return (a->first > b->first) - (a->first < b->first);
}

/* whether entries ord[i] and ord[j] are one value of level l */
static bool same_key(const struct hier *H, size_t l, size_t i, size_t j)
{
	return H->id[H->ord[i] * H->nl + l] == H->id[H->ord[j] * H->nl + l];
}

/* The children of level l over ord[lo, hi) (equal ids up to level l - 1). */
static int build(struct hier *H, struct hnode *parent, size_t l, size_t lo, size_t hi)
{
	size_t n = 0;
	for (size_t i = lo; i < hi; i++)
		if (i == lo || !same_key(H, l, i, i - 1))
			n++;
	parent->kid = calloc(n ? n : 1, sizeof(*parent->kid));
	if (!parent->kid)
		return -ENOMEM;
	parent->nkid = n;
	size_t k = 0, start = lo;
	for (size_t i = lo + 1; i <= hi; i++) {
		if (i < hi && same_key(H, l, i, i - 1))
			continue;
		struct hnode *c = &parent->kid[k++];
		c->first = SIZE_MAX;
		for (size_t j = start; j < i; j++) {
			const struct pk_hist_entry *e = H->h->entries[H->ord[j]];
			c->period += e->self_period;
			c->samples += e->self_samples;
			if (H->ord[j] < c->first) {
				c->first = H->ord[j];
				c->e = e;
			}
		}
		if (l + 1 < H->nl && build(H, c, l + 1, start, i))
			return -ENOMEM;
		start = i;
	}
	kid_sort_R = H->R;
	kid_sort_level = l;
	qsort(parent->kid, parent->nkid, sizeof(*parent->kid), kid_cmp);
	return 0;
}

static void free_node(struct hnode *n)
{
	for (size_t i = 0; i < n->nkid; i++)
		free_node(&n->kid[i]);
	free(n->kid);
}

/* the overhead columns (percentages and counts) come first, then the levels */
static bool is_value_col(enum col c)
{
	return c <= COL_PERIOD;
}

/* the columns perf gives a fixed width, whatever their texts (CPU: 3, "-001" too) */
static bool fixed_width(enum col c)
{
	return c == COL_CPU;
}

/* the columns perf prints without padding in this layout */
static bool unpadded(enum col c)
{
	return c == COL_SYM || c == COL_SRCLINE || c == COL_SRCFILE || c == COL_TIME ||
	       c == COL_SYMOFF;
}

/* the level's text as perf prints it: left-aligned, padded to the column's width except
 * where perf prints the key unpadded (symbols, source lines), and without leading
 * spaces (numbers' alignment, the pid's "%7d") */
static void put_key(struct report *R, size_t l, const char *t)
{
	enum col c = R->sort_col[l];
	size_t n = strlen(t), lead = 0;
	while (t[lead] == ' ')
		lead++;
	rpt_lb_put(R, t + lead, n - lead);
	if (rpt_col_numeric(c))
		return;
	if (!unpadded(c) && (int)n < R->width[l])
		rpt_lb_fill(R, ' ', (size_t)R->width[l] - n);
}

static void print_level(struct hier *H, const struct hnode *parent, size_t l,
			const size_t *vc, size_t nvc)
{
	struct report *R = H->R;
	char buf[2048];
	for (size_t i = 0; i < parent->nkid; i++) {
		const struct hnode *n = &parent->kid[i];
		uint64_t w = node_weight(R, n);
		if (!w)
			continue;
		if (R->percent_limit > 0 && rpt_pct(R, w) < R->percent_limit)
			continue;
		rpt_lb_fill(R, ' ', l * HIER_INDENT);
		for (size_t k = 0; k < nvc; k++) {
			enum col c = R->cols[vc[k]];
			int len;
			if (c == COL_SAMPLES)
				len = snprintf(buf, sizeof(buf), "%" PRIu64, n->samples);
			else if (c == COL_PERIOD)
				len = snprintf(buf, sizeof(buf), "%" PRIu64, n->period);
			else
				len = snprintf(buf, sizeof(buf), "%.2f%%", rpt_pct(R, w));
			size_t bl = len < 0 ? 0 : (size_t)len;
			int width = R->width[H->nl + k];
			if (R->field_sep && k)
				rpt_lb_put(R, R->field_sep, strlen(R->field_sep));
			else if (!R->field_sep)
				rpt_lb_put(R, "  ", 2);
			const char *color = c <= COL_OVERHEAD ? rpt_pct_color(R, rpt_pct(R, w)) : "";
			rpt_lb_put(R, color, strlen(color));
			if ((int)bl < width)
				rpt_lb_fill(R, ' ', (size_t)width - bl);
			rpt_lb_put(R, buf, bl);
			if (*color)
				rpt_lb_put(R, RPT_COLOR_RESET, sizeof(RPT_COLOR_RESET) - 1);
		}
		if (!R->field_sep)
			rpt_lb_fill(R, ' ', (H->nl - 1) * HIER_INDENT);
		rpt_lb_put(R, R->field_sep ? R->field_sep : "  ", R->field_sep ? strlen(R->field_sep) : 2);
		put_key(R, l, H->txt[n->first * H->nl + l]);
		rpt_lb_putc(R, '\n');
		rpt_lb_flush(R);
		if (l + 1 == H->nl) {
			rpt_print_callchain(R, n->e);
			pk_report__callchain_release(R->rep);
			continue;
		}
		print_level(H, n, l + 1, vc, nvc);
		/* perf: a level whose children are all below --percent-limit says so */
		bool any = false;
		for (size_t j = 0; j < n->nkid && !any; j++) {
			uint64_t cw = node_weight(R, &n->kid[j]);
			any = cw && !(R->percent_limit > 0 && rpt_pct(R, cw) < R->percent_limit);
		}
		if (!any && R->percent_limit > 0) {
			int ow = 0;
			for (size_t k = 0; k < nvc; k++)
				ow += R->width[H->nl + k] + (k ? 2 : 0);
			if (!R->field_sep)
				rpt_lb_fill(R, ' ', (H->nl + l) * HIER_INDENT);
			rpt_lb_fill(R, ' ', (size_t)ow + 4);
			int len = snprintf(buf, sizeof(buf), "no entry >= %.2f%%\n", R->percent_limit);
			rpt_lb_put(R, buf, len < 0 ? 0 : (size_t)len);
			rpt_lb_flush(R);
		}
	}
}

/* One event's table in the hierarchy layout (after its "# Samples" lines). 0 or -ENOMEM. */
int rpt_print_hier(struct report *R, const struct pk_hist *h)
{
	FILE *f = R->out;
	struct hier H = { .R = R, .h = h, .nl = R->nr_sort };
	size_t vc[16], nvc = 0;
	struct hnode root = { 0 };
	int err = -ENOMEM;
	char buf[2048];

	for (size_t c = 0; c < R->nr_cols; c++)
		if (is_value_col(R->cols[c]) && nvc < 16 - PK_SORT__MAX)
			vc[nvc++] = c;
	if (!H.nl)
		return 0;
	R->comm_w = rpt_comm_width(&h, 1);
	H.txt = calloc(h->nr_entries * H.nl + 1, sizeof(*H.txt));
	H.id = calloc(h->nr_entries * H.nl + 1, sizeof(*H.id));
	H.ord = calloc(h->nr_entries + 1, sizeof(*H.ord));
	if (!H.txt || !H.id || !H.ord)
		goto out;
	/* widths: each level's column as the flat report sizes it, the values' columns */
	for (size_t l = 0; l < H.nl; l++) {
		R->width[l] = (int)strlen(rpt_col_title(R->sort_col[l]));
		if (R->sort_col[l] == COL_TIME)
			R->width[l] = R->ns ? 16 : 12; /* perf's */
	}
	for (size_t k = 0; k < nvc; k++) {
		enum col c = R->cols[vc[k]];
		R->width[H.nl + k] = (int)strlen(rpt_col_title(c));
		if (c <= COL_OVERHEAD && R->width[H.nl + k] < 8)
			R->width[H.nl + k] = 8;
		if ((c == COL_SAMPLES || c == COL_PERIOD) && R->width[H.nl + k] < 12)
			R->width[H.nl + k] = 12;
	}
	for (size_t i = 0; i < h->nr_entries; i++) {
		H.ord[i] = i;
		for (size_t l = 0; l < H.nl; l++) {
			int w = rpt_col_text(R, R->sort_col[l], h->entries[i], buf, sizeof(buf));
			if (w < 0)
				w = 0;
			if (w >= (int)sizeof(buf))
				w = (int)sizeof(buf) - 1;
			if (w > R->width[l] && !fixed_width(R->sort_col[l]))
				R->width[l] = w;
			if (!(H.txt[i * H.nl + l] = strdup(buf)))
				goto out;
			/* (every level is a sort key of the report, every entry one of its) */
			if (pk_report__entry_key(R->rep, h->entries[i], R->sort[l],
						 &H.id[i * H.nl + l])) {
				err = -EINVAL;
				goto out;
			}
		}
	}
	qsort_r(H.ord, h->nr_entries, sizeof(*H.ord), ord_cmp, &H);
	if (h->nr_entries && build(&H, &root, 0, 0, h->nr_entries))
		goto out;

	/* the titles: the values', then the levels' joined by " / " */
	if (!R->quiet) {
		size_t ind = (H.nl - 1) * HIER_INDENT;
		const char *sep = R->field_sep ? R->field_sep : "  ";
		fputs("# ", f);
		if (!R->field_sep)
			fprintf(f, "%*s", (int)ind, "");
		for (size_t k = 0; k < nvc; k++)
			fprintf(f, "%*s%s", R->width[H.nl + k], rpt_col_title(R->cols[vc[k]]), sep);
		size_t tw = 0;
		for (size_t l = 0; l < H.nl; l++) {
			const char *t = rpt_col_title(R->sort_col[l]);
			while (*t == ' ')
				t++;
			if (l)
				tw += (size_t)fprintf(f, " / ");
			tw += (size_t)fprintf(f, "%s", t);
		}
		if (!R->field_sep) {
			fputs("\n# ", f);
			for (size_t i = 0; i < ind; i++)
				fputc('.', f);
			for (size_t k = 0; k < nvc; k++) {
				if (k)
					fputs("..", f);
				for (int i = 0; i < R->width[H.nl + k]; i++)
					fputc('.', f);
			}
			for (size_t l = 0; l < H.nl; l++)
				if (l * HIER_INDENT + (size_t)R->width[l] > tw)
					tw = l * HIER_INDENT + (size_t)R->width[l];
			fputs("  ", f);
			for (size_t i = 0; i < tw; i++)
				fputc('.', f);
		}
		fputs("\n#\n", f);
	}
	print_level(&H, &root, 0, vc, nvc);
	err = R->lb_oom ? -ENOMEM : 0;
out:
	free_node(&root);
	if (H.txt)
		for (size_t i = 0; i < h->nr_entries * H.nl; i++)
			free(H.txt[i]);
	free(H.txt);
	free(H.id);
	free(H.ord);
	return err;
}
