/* SPDX-License-Identifier: MIT */
/*
 * tool/hist-snap.c - what the browser (tool/browser.c) shows, built from a pk_report: a
 * snapshot of one histogram's sorted entries with the callers or callees of the hottest
 * ones flattened into lines, and the annotate lines of a symbol. `top` builds one at
 * every refresh on its aggregation thread; `report` once over its file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "annotate-src.h"
#include "builtin.h"
#include "top.h"

#define MAX_CC_LINES 48
#define MAX_CC_DEPTH 24

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

void top_ann__free(struct top_ann *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr; i++)
		free(a->lines[i].text);
	free(a->lines);
	free(a->dso);
	free(a->sym);
	free(a->error);
	free(a->note);
	ann_src_free(a->src);
	free(a);
}

void top_snap__free(struct top_snap *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr; i++) {
		struct top_row *r = &s->rows[i];
		free(r->comm), free(r->dso), free(r->dso_long), free(r->sym), free(r->srcline);
		free(r->parent);
		for (size_t j = 0; j < r->nr_cc; j++)
			free(r->cc[j].text);
		free(r->cc);
	}
	free(s->rows);
	top_ann__free(s->ann);
	free(s);
}

struct top_ann *top_ann__new(const char *dso, const char *sym)
{
	struct top_ann *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->dso = xstrdup(dso);
	a->sym = xstrdup(sym);
	if ((dso && !a->dso) || (sym && !a->sym)) {
		top_ann__free(a);
		return NULL;
	}
	return a;
}

int top_ann__source(struct top_ann *a, struct pk_dso *dso, uint64_t start, uint64_t size,
		    uint64_t bias)
{
	/* the address column as wide as the symbol's last address shown, as --stdio's */
	a->addr_width = ann_src_addr_width(start - bias, size);
	ann_src_free(a->src);
	if (!(a->src = ann_src_new()))
		return -ENOMEM;
	ann_src_quiet(a->src);
	ann_src_symbol(a->src, dso, a->sym, start);
	return 0;
}

void top_ann__source_end(struct top_ann *a)
{
	const char *why = a->src ? ann_src_first_warning(a->src) : NULL;
	if (why && !a->note)
		a->note = strdup(why);
	ann_src_free(a->src);
	a->src = NULL;
}

static int ann_add_line(struct top_ann *t, uint64_t addr, const char *text, uint64_t samples,
			bool src)
{
	if (t->nr % 64 == 0) {
		void *n = realloc(t->lines, (t->nr + 64) * sizeof(*t->lines));
		if (!n)
			return -ENOMEM;
		t->lines = n;
	}
	t->lines[t->nr] = (struct top_ann_line){ .addr = addr, .text = strdup(text),
						 .samples = samples, .src = src };
	if (!t->lines[t->nr].text)
		return -ENOMEM;
	t->total += samples;
	t->nr++;
	t->has_src |= src;
	return 0;
}

int top_ann__add_insn(void *ctx, const struct pk_annotate_insn *in)
{
	struct top_ann *t = ctx;
	if (t->src) {
		struct ann_src_line L[ANN_SRC_MAX];
		int n = ann_src_before(t->src, in->addr, L);
		for (int i = 0; i < n; i++) {
			char buf[ANN_SRC_LINE_MAX];
			ann_src_format(buf, sizeof(buf), &L[i], t->addr_width);
			if (ann_add_line(t, in->addr, buf, 0, true))
				return -ENOMEM;
		}
	}
	/* the columns of annotate --stdio after its share: two spaces, the address as wide
	 * as the symbol's last one, "   insn" */
	char small[300], buf[400];
	char *txt = ann_insn_text(in, true, small, sizeof(small));
	if (!txt)
		return -ENOMEM;
	size_t need = strlen(txt) + 48;
	char *line = need <= sizeof(buf) ? buf : malloc(need);
	int err = -ENOMEM;
	if (line) {
		snprintf(line, need, "  %*" PRIx64 ":   %s", t->addr_width, in->addr, txt);
		err = ann_add_line(t, in->addr, line, in->period, false);
	}
	if (line != buf)
		free(line);
	if (txt != small)
		free(txt);
	return err;
}

/* the last node of a run of single children (one line of perf's graph, one depth) */
static const struct pk_callnode *run_end(const struct pk_callnode *n)
{
	while (n->child && !n->child->next && !n->self_period)
		n = n->child;
	return n;
}

static void cc_walk(struct top_row *row, const struct pk_callnode *n, int depth, uint64_t total)
{
	for (; n && row->nr_cc < MAX_CC_LINES; n = n->next) {
		if (!total || n->period * 200 < total)
			continue; /* under 0.5 % of the entry */
		/* a chain without branches stays at one depth, as perf draws it */
		const struct pk_callnode *end = run_end(n);
		for (const struct pk_callnode *c = n; row->nr_cc < MAX_CC_LINES; c = c->child) {
			char buf[256];
			if (c->sym)
				snprintf(buf, sizeof(buf), "%s", c->sym);
			else
				snprintf(buf, sizeof(buf), "%#" PRIx64 " (%s)", c->ip ? c->ip : c->addr,
					 c->dso ? c->dso : "[unknown]");
			struct top_cc_line *l = &row->cc[row->nr_cc];
			l->depth = depth;
			l->pct = c == n ? 100.0 * (double)n->period / (double)total : -1;
			l->text = strdup(buf);
			if (!l->text)
				return;
			row->nr_cc++;
			if (c == end)
				break;
		}
		if (depth < MAX_CC_DEPTH)
			cc_walk(row, end->child, depth + 1, total);
	}
}

const struct pk_hist *top_main_hist(struct pk_report *rep)
{
	const struct pk_hist *best = NULL;
	for (size_t i = 0; i < pk_report__nr_hists(rep); i++) {
		const struct pk_hist *h = pk_report__hist(rep, i);
		if (h && (!best || h->nr_samples > best->nr_samples))
			best = h;
	}
	return best;
}

struct top_snap *top_snap__build(struct pk_report *rep, const struct pk_hist *h,
				 size_t max_cc_rows, bool skip_own_frame)
{
	return top_snap__build_some(rep, h, max_cc_rows, skip_own_frame, NULL, 0);
}

struct top_snap *top_snap__build_some(struct pk_report *rep, const struct pk_hist *h,
				      size_t max_cc_rows, bool skip_own_frame,
				      const struct top_view *v, size_t max_rows)
{
	struct top_snap *s = calloc(1, sizeof(*s));
	if (!s || !h)
		return s;
	snprintf(s->event, sizeof(s->event), "%s", h->name ? h->name : "?");
	s->total_period = h->total_period;
	s->has_cc = h->has_callchains;
	size_t cap = max_rows && max_rows < h->nr_entries ? max_rows : h->nr_entries;
	s->rows = calloc(cap + 1, sizeof(*s->rows));
	for (size_t i = 0; s->rows && i < h->nr_entries; i++) {
		const struct pk_hist_entry *he = h->entries[i];
		if (!he->total_period)
			break; /* sorted: the rest are zero too */
		if (v && ((v->hide_kernel && he->kernel) || (v->hide_user && !he->kernel)))
			continue; /* never shown: only the shares of the rows shown count */
		if (s->nr == cap) {
			/* past the rows shown: only their weight, for the shares */
			s->rest_period += he->total_period;
			continue;
		}
		struct top_row *r = &s->rows[s->nr++];
		r->comm = xstrdup(he->thread_comm ? he->thread_comm : he->comm);
		r->dso = xstrdup(he->dso);
		r->dso_long = xstrdup(he->dso_long);
		r->sym = xstrdup(he->sym);
		r->srcline = xstrdup(he->srcline);
		r->parent = xstrdup(he->parent);
		r->pid = he->pid, r->tid = he->tid, r->cpu = he->cpu;
		r->addr = he->addr, r->kernel = he->kernel;
		r->period = he->total_period, r->samples = he->total_samples;
		r->self = he->self_period;
		if (!s->has_cc)
			continue;
		if (i >= max_cc_rows)
			r->cc_pending = true;
		else
			top_row__fill_cc(rep, he, r, skip_own_frame);
	}
	return s;
}

int top_row__fill_cc(struct pk_report *rep, const struct pk_hist_entry *he, struct top_row *r,
		     bool skip_own_frame)
{
	r->cc_pending = false;
	if (r->cc)
		return 0;
	const struct pk_callnode *cc = pk_report__callchain(rep, he, he->total_period / 200);
	r->cc = calloc(MAX_CC_LINES, sizeof(*r->cc));
	if (skip_own_frame) {
		/* callee order: the first level is the entry's own frame, its callers follow */
		for (const struct pk_callnode *n = cc ? cc->child : NULL; n && r->cc; n = n->next)
			cc_walk(r, n->child, 0, he->total_period);
	} else if (cc && r->cc) {
		cc_walk(r, cc->child, 0, he->total_period);
	}
	pk_report__callchain_release(rep);
	return r->cc ? 0 : -ENOMEM;
}

void top_cc_format(char *buf, size_t len, const struct top_cc_line *l)
{
	/* perf's graph: a column of '|' per level, 11 wide */
	char ind[MAX_CC_DEPTH * 11 + 1];
	size_t n = 0;
	for (int d = 0; d < l->depth && d < MAX_CC_DEPTH; d++, n += 11)
		memcpy(ind + n, "|          ", 11);
	ind[n] = 0;
	if (l->pct >= 0)
		snprintf(buf, len, "            %s|--%.2f%%--%s", ind, l->pct, l->text);
	else
		snprintf(buf, len, "            %s|          %s", ind, l->text);
}
