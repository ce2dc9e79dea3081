/* SPDX-License-Identifier: MIT */
/*
 * lib/export/flamegraph.c - the self-contained HTML flame graph (and its differential
 * variant): the page template (flamegraph.html.in, embedded as flamegraph-template.c)
 * with the call trees of every event inserted as JSON.
 *
 * Data layout (read by the page's script): per event the drawn frames in preorder, as
 * parallel arrays n (name string), d (dso string), f (source file string), k (kind),
 * v (weight, subtree total), s (samples, subtree total), a (diff only: the weight in the
 * "before" profile), o (off-CPU picture only: the off-CPU part of v) and c (number of drawn
 * children).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "export-internal.h"

static void html_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: putc(*s, f);
		}
	}
}

struct fg_ctx {
	FILE *f;
	struct pk_profile *strs;   /* scratch profile used as a string table */
	double min_percent;
	uint32_t max_nodes;
	enum pk_export_weight weight;
	bool diff;
};

/* A string's index in the page's string table. */
static uint32_t sid(struct fg_ctx *c, const char *s)
{
	uint32_t id = pk_xintern(c->strs, s);
	return id == PK_NONE ? 0 : id;
}

static void put_array_u64(FILE *f, const char *key, const uint32_t *order, uint32_t n,
			  const uint64_t *vals)
{
	fprintf(f, ",\"%s\":[", key);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, vals[order[i]]);
	putc(']', f);
}

/*
 * Write one event's tree: after = (profile, event) giving widths; before = optional
 * (profile, event) for the diff colouring; off >= 0: the off-CPU event of `after`, added
 * to the widths and written apart as o.
 */
static int write_event(struct fg_ctx *c, bool first, const struct pk_profile *after,
		       uint32_t ev, const struct pk_profile *before, int bev, int off)
{
	struct pk_ftree t;
	uint32_t *first_kid = NULL, *kids = NULL, *order = NULL, *nkids = NULL, *stack = NULL;
	uint32_t *tmp = NULL;
	int err = pk_ftree_init(&t);
	if (!err)
		err = pk_ftree_add(&t, after, (int)ev, 0, c->weight);
	if (!err)
		err = pk_ftree_add(&t, after, (int)ev, 1, PK_WEIGHT_SAMPLES);
	if (!err && before && bev >= 0)
		err = pk_ftree_add(&t, before, bev, 2, c->weight);
	if (!err && off >= 0)
		err = pk_ftree_add(&t, after, off, 0, c->weight);
	if (!err && off >= 0)
		err = pk_ftree_add(&t, after, off, 1, PK_WEIGHT_SAMPLES);
	if (!err && off >= 0)
		err = pk_ftree_add(&t, after, off, 2, c->weight);
	if (err)
		goto out;
	pk_ftree_totals(&t);
	err = pk_ftree_children(&t, &first_kid, &kids);
	if (err)
		goto out;
	order = malloc((size_t)t.n * sizeof(*order));
	nkids = calloc((size_t)t.n, sizeof(*nkids));
	stack = malloc(((size_t)t.n + 1) * sizeof(*stack));
	tmp = malloc(((size_t)t.n + 1) * sizeof(*tmp));
	if (!order || !nkids || !stack || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	/* threshold: min_percent of the total, raised until the tree fits max_nodes */
	uint64_t total = t.total[0][0];
	double pctv = c->min_percent;
	uint64_t thr = pctv > 0 ? (uint64_t)((double)total * pctv / 100.0) : 0;
	if (thr == 0 && pctv > 0)
		thr = 1;
	uint32_t kept;
	for (;;) {
		kept = 0;
		for (uint32_t i = 0; i < t.n; i++)
			if (i == 0 || (t.total[0][i] && t.total[0][i] >= thr))
				kept++;
		if (kept <= c->max_nodes)
			break;
		thr = thr ? thr * 2 : 1;
		pctv = total ? 100.0 * (double)thr / (double)total : 0;
	}
	/* preorder walk of the kept frames (a kept frame's parent is always kept) */
	uint32_t nr = 0, sp = 0, pruned = 0;
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp];
		order[nr++] = i;
		uint32_t nk = 0;
		for (uint32_t k = first_kid[i]; k < first_kid[i + 1]; k++) {
			uint32_t j = kids[k];
			if (t.total[0][j] && t.total[0][j] >= thr)
				tmp[nk++] = j;
			else if (t.total[0][j])
				pruned++;
		}
		nkids[nr - 1] = nk;
		/* push in reverse so that the children come out in name order */
		for (uint32_t k = nk; k-- > 0;)
			stack[sp++] = tmp[k];
	}
	FILE *f = c->f;
	const struct pk_xevent *e = &after->event[ev];
	fputs(first ? "{\"name\":" : ",{\"name\":", f);
	if (off >= 0) {
		char both[300];
		snprintf(both, sizeof(both), "%s + %s", pk_xstr(after, e->name),
			 pk_xstr(after, after->event[off].name));
		pk_xjson_str(f, both);
	} else {
		pk_xjson_str(f, pk_xstr(after, e->name));
	}
	fputs(",\"unit\":", f);
	pk_xjson_str(f, c->weight == PK_WEIGHT_SAMPLES ? "samples" : pk_xstr(after, e->unit));
	fprintf(f, ",\"total\":%" PRIu64 ",\"minPercent\":%.4g,\"pruned\":%" PRIu32, total,
		pctv > 0 ? pctv : 0, pruned);
	if (c->diff)
		fprintf(f, ",\"totalBefore\":%" PRIu64, t.total[2][0]);
	fputs(",\"n\":[", f);
	for (uint32_t i = 0; i < nr; i++)
		fprintf(f, i ? ",%" PRIu32 : "%" PRIu32, sid(c, t.name[order[i]]));
	fputs("],\"d\":[", f);
	for (uint32_t i = 0; i < nr; i++)
		fprintf(f, i ? ",%" PRIu32 : "%" PRIu32, sid(c, t.dso[order[i]]));
	fputs("],\"f\":[", f);
	for (uint32_t i = 0; i < nr; i++)
		fprintf(f, i ? ",%" PRIu32 : "%" PRIu32, sid(c, t.file[order[i]]));
	fputs("],\"k\":[", f);
	for (uint32_t i = 0; i < nr; i++)
		fprintf(f, i ? ",%u" : "%u", (unsigned)t.kind[order[i]]);
	putc(']', f);
	put_array_u64(f, "v", order, nr, t.total[0]);
	put_array_u64(f, "s", order, nr, t.total[1]);
	if (c->diff)
		put_array_u64(f, "a", order, nr, t.total[2]);
	if (off >= 0)
		put_array_u64(f, "o", order, nr, t.total[2]);
	fputs(",\"c\":[", f);
	for (uint32_t i = 0; i < nr; i++)
		fprintf(f, i ? ",%" PRIu32 : "%" PRIu32, nkids[i]);
	fputs("]}", f);
out:
	free(first_kid);
	free(kids);
	free(order);
	free(nkids);
	free(stack);
	free(tmp);
	pk_ftree_release(&t);
	return err;
}

/*
 * The template's parts are large: stdio writes them straight through, and after a
 * failure nothing may be left for the final flush to fail on and report. Keep the errno
 * of the first failed part (ENOSPC rather than a bare EIO).
 */
static void put_part(FILE *f, const char *s, size_t n, int *werr)
{
	errno = 0;
	if (fwrite(s, 1, n, f) != n && !*werr)
		*werr = errno > 0 ? errno : EIO;
}

static int write_page(const struct pk_profile *before, const struct pk_profile *after, FILE *f,
		      const struct pk_flamegraph_opts *opts)
{
	if (!after || !f || !PK_OPTS_VALID(opts, pk_flamegraph_opts))
		return pk_err(-EINVAL);
	struct fg_ctx c = { .f = f, .diff = before != NULL };
	const char *title = PK_OPTS_GET(opts, title, NULL);
	if (!title)
		title = pk_xstr(after, after->title);
	c.min_percent = PK_OPTS_GET(opts, min_percent, 0.0);
	if (c.min_percent == 0)
		c.min_percent = 0.01;
	c.max_nodes = PK_OPTS_GET(opts, max_nodes, 0);
	if (!c.max_nodes)
		c.max_nodes = 250000;
	c.weight = PK_OPTS_GET(opts, weight, PK_WEIGHT_PERIOD);
	bool icicle = PK_OPTS_GET(opts, icicle, false);
	int on = -1, off = -1;
	if (PK_OPTS_GET(opts, off_cpu, false) && !before) {
		for (uint32_t e = 0; e < after->nr_event; e++) {
			if (!strcmp(pk_xstr(after, after->event[e].name), PK_OFFCPU_EVENT))
				off = off < 0 ? (int)e : off;
			else if (on < 0 && !strcmp(pk_xstr(after, after->event[e].unit), "nanoseconds"))
				on = (int)e;
		}
		if (on < 0 || off < 0)
			return pk_err(-ENOENT);
	}
	c.strs = pk_profile__new(NULL);
	if (!c.strs)
		return pk_err(-ENOMEM);

	const char *tmpl = pk_flamegraph_template;
	const char *t_title = strstr(tmpl, "@PK_TITLE@");
	const char *t_data = t_title ? strstr(t_title, "@PK_DATA@") : NULL;
	if (!t_title || !t_data) {
		pk_profile__free(c.strs);
		return pk_err(-EINVAL);
	}
	int werr = 0;
	put_part(f, tmpl, (size_t)(t_title - tmpl), &werr);
	html_escape(f, title);
	t_title += strlen("@PK_TITLE@");
	put_part(f, t_title, (size_t)(t_data - t_title), &werr);

	fputs("{\"title\":", f);
	pk_xjson_str(f, title);
	fprintf(f, ",\"weight\":\"%s\",\"diff\":%s,\"icicle\":%s,\"events\":[",
		c.weight == PK_WEIGHT_SAMPLES ? "samples" : "period", c.diff ? "true" : "false",
		icicle ? "true" : "false");
	int err = 0;
	bool first = true;
	if (on >= 0) {
		/* the on+off-CPU picture first, then each event alone */
		err = write_event(&c, true, after, (uint32_t)on, NULL, -1, off);
		first = false;
	}
	for (uint32_t e = 0; e < after->nr_event && !err; e++) {
		int bev = -1;
		if (before)
			for (uint32_t b = 0; b < before->nr_event; b++)
				if (!strcmp(pk_xstr(before, before->event[b].name),
					    pk_xstr(after, after->event[e].name)))
					bev = (int)b;
		if (before && bev < 0 && before->nr_event == 1 && after->nr_event == 1)
			bev = 0; /* one event each: compare them whatever their names */
		err = write_event(&c, first, after, e, before, bev, -1);
		first = false;
	}
	fputs("],\"strings\":[", f);
	for (uint32_t i = 0; i < c.strs->nr_str; i++) {
		if (i)
			putc(',', f);
		pk_xjson_str(f, c.strs->str[i]);
	}
	fputs("]}", f);
	t_data += strlen("@PK_DATA@");
	put_part(f, t_data, strlen(t_data), &werr);
	pk_profile__free(c.strs);
	if (err)
		return pk_err(err);
	err = pk_xfinish(f);
	return err && werr ? pk_err(-werr) : err;
}

int pk_export__flamegraph(const struct pk_profile *p, FILE *f,
			  const struct pk_flamegraph_opts *opts)
{
	return write_page(NULL, p, f, opts);
}

int pk_export__flamegraph_diff(const struct pk_profile *before, const struct pk_profile *after,
			       FILE *f, const struct pk_flamegraph_opts *opts)
{
	if (!before)
		return pk_err(-EINVAL);
	return write_page(before, after, f, opts);
}
