/* SPDX-License-Identifier: MIT */
/* lib/export/diff.c - per-symbol comparison of two profiles (perfkit diff). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "export-internal.h"

static int find_event(const struct pk_profile *p, const char *name)
{
	for (uint32_t e = 0; e < p->nr_event; e++)
		if (!strcmp(pk_xstr(p, p->event[e].name), name))
			return (int)e;
	return -1;
}

/* Add the self weight of every leaf function of `event` into w[slot] of the scratch
 * profile's frame ids. */
static int collect(struct pk_profile *scratch, const struct pk_profile *p, int event,
		   enum pk_export_weight wt, uint64_t **w, const char ***names, uint32_t *cap,
		   int slot)
{
	for (uint32_t a = 0; a < p->nr_agg; a++) {
		const struct pk_xagg *g = &p->agg[a];
		if (g->event != (uint32_t)event)
			continue;
		/* leaf = innermost non-comm frame */
		uint32_t n = g->node;
		while (n != PK_NONE && p->func[p->loc[p->node[n].loc].func].kind == PK_FRAME_COMM)
			n = p->node[n].parent;
		struct pk_export_frame fr = { .name = "[no stack]" };
		if (n != PK_NONE) {
			const struct pk_xfunc *fn = &p->func[p->loc[p->node[n].loc].func];
			fr.name = pk_xstr(p, fn->name);
			fr.dso = pk_xstr(p, fn->dso);
		}
		uint32_t id;
		int err = pk_profile__intern_frame(scratch, &fr, &id);
		if (err)
			return err;
		if (id >= *cap) {
			uint32_t ncap = *cap ? *cap : 256;
			while (ncap <= id)
				ncap *= 2;
			for (int s = 0; s < 2; s++) {
				uint64_t *nw = realloc(w[s], (size_t)ncap * sizeof(*nw));
				if (!nw)
					return -ENOMEM;
				memset(nw + *cap, 0, (size_t)(ncap - *cap) * sizeof(*nw));
				w[s] = nw;
				const char **nn = realloc(names[s], (size_t)ncap * sizeof(*nn));
				if (!nn)
					return -ENOMEM;
				memset(nn + *cap, 0, (size_t)(ncap - *cap) * sizeof(*nn));
				names[s] = nn;
			}
			*cap = ncap;
		}
		w[slot][id] += wt == PK_WEIGHT_SAMPLES ? g->samples : g->period;
		if (!names[0][id]) { /* strings of the input profiles outlive the scratch one */
			names[0][id] = n == PK_NONE ? "[no stack]" : fr.name;
			names[1][id] = n == PK_NONE ? "" : fr.dso;
		}
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct pk_diff_entry *x = a, *y = b;
	double dx = fabs(x->after_pct - x->before_pct), dy = fabs(y->after_pct - y->before_pct);
	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (x->after != y->after)
		return x->after > y->after ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->dso, y->dso);
}

int pk_profile__diff(const struct pk_profile *before, const struct pk_profile *after,
		     const char *event_name, enum pk_export_weight wt, struct pk_diff_entry **out)
{
	if (!before || !after || !out)
		return pk_err(-EINVAL);
	*out = NULL;
	if (!after->nr_event || !before->nr_event)
		return pk_err(-ENOENT);
	const char *name = event_name ? event_name : pk_xstr(after, after->event[0].name);
	int ea = find_event(after, name), eb = find_event(before, name);
	if (!event_name && eb < 0 && before->nr_event == 1 && after->nr_event == 1)
		eb = 0;
	if (ea < 0 || eb < 0)
		return pk_err(-ENOENT);
	struct pk_profile *scratch = pk_profile__new(NULL);
	if (!scratch)
		return pk_err(-ENOMEM);
	uint64_t *w[2] = { NULL, NULL };
	const char **names[2] = { NULL, NULL };
	uint32_t cap = 0;
	int err = collect(scratch, after, ea, wt, w, names, &cap, 1);
	if (!err)
		err = collect(scratch, before, eb, wt, w, names, &cap, 0);
	struct pk_diff_entry *e = NULL;
	uint32_t nr = 0;
	if (!err && scratch->nr_loc) {
		e = calloc(scratch->nr_loc, sizeof(*e));
		if (!e)
			err = -ENOMEM;
	}
	if (!err) {
		double tb = (double)(wt == PK_WEIGHT_SAMPLES ? before->event[eb].samples
							      : before->event[eb].period);
		double ta = (double)(wt == PK_WEIGHT_SAMPLES ? after->event[ea].samples
							     : after->event[ea].period);
		for (uint32_t i = 0; i < scratch->nr_loc && i < cap; i++) {
			if (!w[0][i] && !w[1][i])
				continue;
			e[nr].name = names[0][i];
			e[nr].dso = names[1][i];
			e[nr].before = w[0][i];
			e[nr].after = w[1][i];
			e[nr].before_pct = tb > 0 ? 100.0 * (double)w[0][i] / tb : 0;
			e[nr].after_pct = ta > 0 ? 100.0 * (double)w[1][i] / ta : 0;
			nr++;
		}
		if (nr)
			qsort(e, nr, sizeof(*e), cmp_entry);
	}
	free(w[0]);
	free(w[1]);
	free(names[0]);
	free(names[1]);
	pk_profile__free(scratch);
	if (err) {
		free(e);
		return pk_err(err);
	}
	*out = e;
	return (int)nr;
}
