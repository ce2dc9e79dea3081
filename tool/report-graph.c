/* SPDX-License-Identifier: MIT */
/* tool/report-graph.c - perfkit report: call graphs under each entry (graph, fractal, flat, folded), as
 * perf report --stdio draws them. */
#include "report.h"

/* ---- call graphs ---- */

/* last node of the single-child run starting at n (perf's radix-tree node) */
static const struct pk_callnode *run_end(const struct pk_callnode *n)
{
	while (n->child && !n->child->next && !n->self_period)
		n = n->child;
	return n;
}

void rpt_cg_name(const struct pk_callnode *n, char *buf, size_t len)
{
	if (n->sym)
		snprintf(buf, len, "%s", n->sym);
	else
		snprintf(buf, len, "0x%" PRIx64, n->addr);
}

/* a frame's name in text output: perf prints an unresolved frame's sampled address with
 * "%#llx", which has no 0x prefix for a zero address */
static void cg_text_name(const struct pk_callnode *n, char *buf, size_t len)
{
	if (n->sym)
		snprintf(buf, len, "%s", n->sym);
	else
		snprintf(buf, len, "%#" PRIx64, n->ip);
}

/* cg_name into the line buffer (names longer than cg_name's 1023 bytes are cut the same) */
static void lb_name(struct report *R, const struct pk_callnode *n)
{
	if (n->sym) {
		size_t l = strlen(n->sym);
		rpt_lb_put(R, n->sym, l < 1023 ? l : 1023);
	} else {
		/* perf prints the sampled address here ("%#llx": "0" for zero), where the
		 * entry's own column shows the address in the object */
		char b[24] = "0x";
		if (!n->ip)
			rpt_lb_put(R, "0", 1);
		else
			rpt_lb_put(R, b, (size_t)(fmt_hex(b + 2, n->ip) - b));
	}
}

#define MARGIN "            "
#define MARGIN_LEN 12

static bool printable(const struct report *R, const struct pk_callnode *n, uint64_t parent_total)
{
	uint64_t base = R->cg == CG_FRACTAL ? parent_total : R->total;
	return (double)n->period >= (double)base * R->cg_threshold / 100.0 && n->period;
}

static void graph_level(struct report *R, const struct pk_callnode *first, uint64_t total,
			int depth, uint64_t mask, int lm);

static void graph_node_lines(struct report *R, const struct pk_callnode *n, uint64_t total,
			     int depth, uint64_t mask, int lm)
{
	const struct pk_callnode *end = run_end(n);
	int i = 0;
	for (const struct pk_callnode *c = n;; c = c->child, i++) {
		if (!rpt_lb_reserve(R, MARGIN_LEN + (size_t)lm + (size_t)depth * 11 + 56))
			return;
		char *p = R->lb + R->lbn;
		memcpy(p, MARGIN, MARGIN_LEN);
		p += MARGIN_LEN;
		memset(p, ' ', (size_t)lm);
		p += lm;
		for (int d = 0; d < depth; d++) {
			*p++ = mask & (1ULL << d) ? '|' : ' ';
			if (!i && d == depth - 1) {
				double pct = total ? 100.0 * (double)n->period / (double)total : 0.0;
				const char *color = rpt_pct_color(R, pct);
				memcpy(p, "--", 2);
				p += 2;
				memcpy(p, color, strlen(color));
				p += strlen(color);
				p += rpt_fmt_2f(p, pct);
				*p++ = '%';
				if (*color) {
					memcpy(p, RPT_COLOR_RESET, sizeof(RPT_COLOR_RESET) - 1);
					p += sizeof(RPT_COLOR_RESET) - 1;
				}
				memcpy(p, "--", 2);
				p += 2;
			} else {
				memset(p, ' ', 10);
				p += 10;
			}
		}
		R->lbn = (size_t)(p - R->lb);
		lb_name(R, c);
		rpt_lb_putc(R, '\n');
		rpt_lb_flush(R);
		if (c == end)
			break;
	}
}

static void graph_level(struct report *R, const struct pk_callnode *first, uint64_t total,
			int depth, uint64_t mask, int lm)
{
	uint64_t parent_total = total;
	const struct pk_callnode *c = first;
	while (c && !printable(R, c, parent_total))
		c = c->next;
	while (c) {
		const struct pk_callnode *nx = c->next;
		while (nx && !printable(R, nx, parent_total))
			nx = nx->next;
		uint64_t nmask = mask;
		if (!nx && depth <= 63)
			nmask &= ~(1ULL << (depth - 1));
		/* separator line keeps the old mask */
		rpt_lb_put(R, MARGIN, MARGIN_LEN);
		rpt_lb_fill(R, ' ', (size_t)lm);
		for (int d = 0; d < depth; d++)
			rpt_lb_put(R, mask & (1ULL << d) ? "|          " : "           ", 11);
		rpt_lb_putc(R, '\n');
		rpt_lb_flush(R);
		uint64_t pct_base = R->cg == CG_FRACTAL ? parent_total : R->total;
		graph_node_lines(R, c, pct_base, depth, nmask, lm);
		const struct pk_callnode *end = run_end(c);
		uint64_t ntotal = R->cg == CG_FRACTAL ? end->period : R->total;
		if (depth < 63)
			graph_level(R, end->child, ntotal, depth + 1, nmask | (1ULL << depth), lm);
		c = nx;
	}
}

/* (eperiod: the entry's period, children included) */
static void print_graph(struct report *R, const struct pk_callnode *root, uint64_t eperiod)
{
	const struct pk_callnode *first = root->child;
	int lm = 0;
	const struct pk_callnode *c = first;
	uint64_t total = R->cg == CG_FRACTAL ? root->period : R->total;
	bool printed = false;
	if (first && !first->next && printable(R, first, total) && first->period == eperiod) {
		/* one top-level chain that holds all of the entry: printed with '---' (perf
		 * shows the share of one that does not: samples of a dropped chain count in
		 * the entry, not in its tree) */
		const struct pk_callnode *end = run_end(first);
		int i = 0;
		for (c = first;; c = c->child, i++) {
			if (!(i == 0 && R->sym_first)) {
				rpt_lb_put(R, MARGIN, MARGIN_LEN);
				if (!printed) {
					rpt_lb_put(R, "|\n" MARGIN "---", 2 + MARGIN_LEN + 3);
					lm = 3;
					printed = true;
				} else {
					rpt_lb_fill(R, ' ', (size_t)lm);
				}
				lb_name(R, c);
				rpt_lb_putc(R, '\n');
				rpt_lb_flush(R);
			}
			if (c == end)
				break;
		}
		first = end->child;
		if (R->cg == CG_FRACTAL)
			total = end->period;
	}
	graph_level(R, first, total, 1, 1, lm);
	if (printed || (first && printable(R, first, total)))
		fputc('\n', R->out);
}

/* flat and folded: one line per path that ends (self period) */
static void print_paths(struct report *R, const struct pk_callnode *n, const struct pk_callnode **stack,
			int depth)
{
	if (depth >= 1024)
		return;
	if (n->sym || n->dso || n->addr)
		stack[depth++] = n;
	if (n->self_period && depth && (double)n->self_period >= (double)R->total * R->cg_threshold / 100.0) {
		char nb[1024];
		double p = R->total ? 100.0 * (double)n->self_period / (double)R->total : 0.0;
		/* paths are stored in display order (the caller first under -g caller, the
		 * default of --children); perf prints them as stored, root first */
		if (R->cg == CG_FOLDED) {
			fprintf(R->out, "%.2f%% ", p);
			for (int i = 0; i < depth; i++) {
				cg_text_name(stack[i], nb, sizeof(nb));
				fprintf(R->out, "%s%s", i ? ";" : "", nb);
			}
			fputc('\n', R->out);
		} else {
			fprintf(R->out, "           %.2f%%\n", p); /* (perf: 11 spaces) */
			for (int i = 0; i < depth; i++) {
				cg_text_name(stack[i], nb, sizeof(nb));
				fprintf(R->out, "                %s\n", nb);
			}
			fputc('\n', R->out);
		}
	}
	for (const struct pk_callnode *c = n->child; c; c = c->next)
		print_paths(R, c, stack, depth);
}

/* An entry's tree (built on demand). The graph view never descends into a node that is
 * not printable(), i.e. below an absolute period: those need no children. */
static const struct pk_callnode *entry_tree(struct report *R, const struct pk_hist_entry *e)
{
	uint64_t min = 0;
	if (R->cg == CG_GRAPH && R->cg_threshold > 0) {
		double x = (double)R->total * R->cg_threshold / 100.0;
		/* floor: a superset of the printable nodes keeps their children */
		if (x >= 1.0 && x < 1e18)
			min = (uint64_t)x;
	}
	return pk_report__callchain(R->rep, e, min);
}

void rpt_print_callchain(struct report *R, const struct pk_hist_entry *e)
{
	if (R->cg == CG_NONE)
		return;
	/* no node of the graph is printable (printable()) if the root is not: every node's
	 * period is at most the root's, the entry's total; most entries of a big report are
	 * such (their trees are not even built) */
	if (R->cg == CG_GRAPH && (double)e->total_period < (double)R->total * R->cg_threshold / 100.0)
		return;
	const struct pk_callnode *root = entry_tree(R, e);
	if (!root)
		return;
	if (R->cg == CG_GRAPH || R->cg == CG_FRACTAL) {
		print_graph(R, root, e->total_period);
		return;
	}
	const struct pk_callnode **stack = calloc(1024, sizeof(*stack));
	if (!stack)
		return;
	print_paths(R, root, stack, 0);
	free(stack);
}
