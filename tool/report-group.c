/* SPDX-License-Identifier: MIT */
/* tool/report-group.c - perfkit report: event groups (GROUP_DESC) shown as one section with a column per
 * member, and the loop over every event's section. */
#include "report.h"

/* ---- event groups (GROUP_DESC) ---- */

/* A row of a group section: the entry of each member hist with that key (or NULL). */
struct grow {
	const struct pk_hist_entry **e; /* nr members */
	size_t *rank;                   /* position in each member's own order */
	char *key;
};

struct gsort {
	const struct report *R;
	size_t nr;
};
static struct gsort gsort_ctx;

static bool col_weight(enum col c)
{
	return c <= COL_PERIOD;
}

static uint64_t row_weight(const struct report *R, const struct grow *r, size_t m)
{
	if (!r->e[m])
		return 0;
	return R->children == 1 ? rpt_weight_total(R, r->e[m]) : rpt_weight_self(R, r->e[m]);
}

/* the leader's weight first, then each member's (perf sorts a group this way), then the
 * order the entries have in their own hists */
static int grow_cmp(const void *pa, const void *pb)
{
	const struct grow *a = pa, *b = pb;
	for (size_t m = 0; m < gsort_ctx.nr; m++) {
		uint64_t x = row_weight(gsort_ctx.R, a, m), y = row_weight(gsort_ctx.R, b, m);
		if (x != y)
			return x > y ? -1 : 1;
	}
	for (size_t m = 0; m < gsort_ctx.nr; m++) {
		if (a->e[m] && b->e[m] && a->rank[m] != b->rank[m])
			return a->rank[m] < b->rank[m] ? -1 : 1;
		if (!a->e[m] != !b->e[m])
			return a->e[m] ? -1 : 1;
	}
	return 0;
}

/* The key of an entry: the text of every column that is not a weight. */
static char *entry_key(const struct report *R, const struct pk_hist_entry *e)
{
	char buf[2048];
	size_t len = 0, cap = 256;
	char *k = malloc(cap);
	if (!k)
		return NULL;
	for (size_t c = 0; c < R->nr_cols; c++) {
		if (col_weight(R->cols[c]))
			continue;
		int w = rpt_col_text(R, R->cols[c], e, buf, sizeof(buf));
		size_t bl = w < 0 ? 0 : (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1;
		if (len + bl + 2 > cap) {
			while (len + bl + 2 > cap)
				cap *= 2;
			char *n = realloc(k, cap);
			if (!n) {
				free(k);
				return NULL;
			}
			k = n;
		}
		memcpy(k + len, buf, bl);
		len += bl;
		k[len++] = '\x1f';
	}
	k[len] = 0;
	return k;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/* The text of member m's share of weight column c in row r ("" when it has no entry). */
static int gcol_text(const struct report *R, enum col c, const struct grow *r, size_t m,
		     const uint64_t *totals, char *buf, size_t len)
{
	static const struct pk_hist_entry zero;
	struct report tmp = *R;
	tmp.total = totals[m];
	return rpt_col_text(&tmp, c, r->e[m] ? r->e[m] : &zero, buf, len);
}

/*
 * One section for a group, as perf shows it: "of events 'anon group { a, b }'", the sum of
 * the members' samples and periods, and every weight column once per member (each member's
 * share of its own total), on the rows of all members merged by their keys.
 */
static int print_group(struct report *R, const struct pk_hist *const *h, size_t nr,
		       const char *gname)
{
	FILE *f = R->out;
	char nb[32], buf[2048];
	uint64_t samples = 0, filtered = 0, period = 0;
	uint64_t *totals = calloc(nr, sizeof(*totals));
	size_t nrows = 0, cap = 0, hcap = 0, all = 0;
	struct grow *rows = NULL;
	size_t *slots = NULL;
	int ret = -ENOMEM;

	if (!totals)
		return -ENOMEM;
	for (size_t m = 0; m < nr; m++) {
		samples += h[m]->nr_samples;
		filtered += h[m]->nr_filtered;
		period += h[m]->total_period;
		totals[m] = rpt_hist_total(R, h[m], NULL, NULL);
		all += h[m]->nr_entries;
	}
	for (hcap = 16; hcap < all * 2; hcap *= 2)
		;
	R->comm_w = INT_MAX; /* rows are merged by whole comms, not the cut ones shown */
	slots = malloc(hcap * sizeof(*slots));
	if (!slots)
		goto out;
	memset(slots, 0xff, hcap * sizeof(*slots));
	for (size_t m = 0; m < nr; m++)
		for (size_t i = 0; i < h[m]->nr_entries; i++) {
			const struct pk_hist_entry *e = h[m]->entries[i];
			char *k = entry_key(R, e);
			if (!k)
				goto out;
			size_t sl = (size_t)str_hash(k) & (hcap - 1);
			while (slots[sl] != (size_t)-1 && strcmp(rows[slots[sl]].key, k))
				sl = (sl + 1) & (hcap - 1);
			if (slots[sl] == (size_t)-1) {
				if (nrows == cap) {
					size_t nc = cap ? cap * 2 : 64;
					struct grow *n = realloc(rows, nc * sizeof(*n));
					if (!n) {
						free(k);
						goto out;
					}
					rows = n;
					cap = nc;
				}
				struct grow *r = &rows[nrows];
				r->e = calloc(nr, sizeof(*r->e));
				r->rank = calloc(nr, sizeof(*r->rank));
				r->key = k;
				if (!r->e || !r->rank) {
					free(r->e);
					free(r->rank);
					free(k);
					goto out;
				}
				slots[sl] = nrows++;
			} else {
				free(k);
			}
			struct grow *r = &rows[slots[sl]];
			if (!r->e[m]) {
				r->e[m] = e;
				r->rank[m] = i;
			}
		}
	gsort_ctx.R = R;
	gsort_ctx.nr = nr;
	qsort(rows, nrows, sizeof(*rows), grow_cmp);
	R->comm_w = rpt_comm_width(h, nr);

	rpt_fmt_samples(nb, sizeof(nb), samples - filtered);
	if (!R->quiet) {
		fprintf(f, "# Samples: %s of events '%s'\n", nb, gname);
		if (filtered)
			fprintf(f, "# (%" PRIu64 " samples filtered out)\n", filtered);
		fprintf(f, "# Event count (approx.): %" PRIu64 "\n#\n", period);
	}
	/* widths: a weight column holds nr fields of width[c] each */
	for (size_t c = 0; c < R->nr_cols; c++) {
		int t = (int)strlen(rpt_col_title(R->cols[c]));
		if (col_weight(R->cols[c]))
			R->width[c] = R->cols[c] <= COL_OVERHEAD ? 8 : 12; /* perf's widths */
		else
			R->width[c] = t;
	}
	for (size_t i = 0; i < nrows; i++) {
		const struct pk_hist_entry *any = NULL;
		for (size_t m = 0; m < nr && !any; m++)
			any = rows[i].e[m];
		for (size_t c = 0; any && c < R->nr_cols; c++)
			for (size_t m = 0; m < (col_weight(R->cols[c]) ? nr : 1); m++) {
				int w = col_weight(R->cols[c])
					? gcol_text(R, R->cols[c], &rows[i], m, totals, buf, sizeof(buf))
					: rpt_col_text(R, R->cols[c], any, buf, sizeof(buf));
				if (w > R->width[c])
					R->width[c] = w < (int)sizeof(buf) ? w : (int)sizeof(buf) - 1;
			}
	}
	for (size_t c = 0; c < R->nr_cols; c++) {
		int t = (int)strlen(rpt_col_title(R->cols[c]));
		if (col_weight(R->cols[c]) && R->width[c] * (int)nr < t)
			R->width[c] = (t + (int)nr - 1) / (int)nr;
	}
	for (size_t c = 0; !R->quiet && c < R->nr_cols; c++) {
		const char *t = rpt_col_title(R->cols[c]);
		int w = col_weight(R->cols[c]) ? R->width[c] * (int)nr : R->width[c];
		fputs(c ? "  " : "# ", f);
		if (rpt_col_numeric(R->cols[c]))
			fprintf(f, "%*s", w, t);
		else
			fprintf(f, "%-*s", w, t);
	}
	for (size_t c = 0; !R->quiet && c < R->nr_cols; c++) {
		int w = col_weight(R->cols[c]) ? R->width[c] * (int)nr : R->width[c];
		fputs(c ? "  " : "\n# ", f);
		for (int i = 0; i < w; i++)
			fputc('.', f);
	}
	if (!R->quiet)
		fputs("\n#\n", f);
	for (size_t i = 0; i < nrows; i++) {
		const struct grow *r = &rows[i];
		const struct pk_hist_entry *any = NULL;
		bool shown = false;
		for (size_t m = 0; m < nr && !any; m++)
			any = r->e[m];
		for (size_t m = 0; m < nr; m++)
			if (row_weight(R, r, m))
				shown = true;
		if (!shown || !any)
			continue;
		if (R->percent_limit > 0) {
			R->total = totals[0];
			if (rpt_pct(R, row_weight(R, r, 0)) < R->percent_limit)
				continue;
		}
		rpt_lb_put(R, "  ", 2);
		for (size_t c = 0; c < R->nr_cols; c++) {
			bool last = c + 1 == R->nr_cols;
			if (c)
				rpt_lb_put(R, "  ", 2);
			for (size_t m = 0; m < (col_weight(R->cols[c]) ? nr : 1); m++) {
				int w = col_weight(R->cols[c])
					? gcol_text(R, R->cols[c], r, m, totals, buf, sizeof(buf))
					: rpt_col_text(R, R->cols[c], any, buf, sizeof(buf));
				size_t bl = w < 0 ? 0 : (size_t)w < sizeof(buf) ? (size_t)w
										  : sizeof(buf) - 1;
				size_t pad = (size_t)R->width[c] > bl ? (size_t)R->width[c] - bl : 0;
				rpt_put_cell(R, R->cols[c], buf, bl, pad, last);
			}
		}
		rpt_lb_putc(R, '\n');
		rpt_lb_flush(R);
		if (r->e[0]) {
			R->total = totals[0];
			rpt_print_callchain(R, r->e[0]);
			pk_report__callchain_release(R->rep);
		}
	}
	fputs("\n\n", f);
	ret = 0;
out:
	for (size_t i = 0; i < nrows; i++) {
		free(rows[i].e);
		free(rows[i].rank);
		free(rows[i].key);
	}
	free(rows);
	free(slots);
	free(totals);
	return ret;
}

/* The group (of env) whose leader is hist attr index idx, or NULL; *member: idx is a
 * member (not the leader) of some group. */
static const struct pk_data_group *group_of(const struct pk_data_env *env, int idx,
					    bool *member)
{
	*member = false;
	for (uint32_t g = 0; env && idx >= 0 && g < env->nr_groups; g++) {
		const struct pk_data_group *d = &env->groups[g];
		if ((uint32_t)idx == d->leader_idx)
			return d->nr_members > 1 ? d : NULL;
		if ((uint32_t)idx > d->leader_idx && (uint32_t)idx - d->leader_idx < d->nr_members)
			*member = true;
	}
	return NULL;
}

/* Print the text sections: a group (GROUP_DESC, unless --no-group) as one section, every
 * other event as its own. Returns 0 or -ENOMEM. */
int rpt_print_sections(struct report *R, struct pk_data_reader *rd, struct pk_report *rep)
{
	const struct pk_data_env *env = R->group ? pk_data_reader__env(rd) : NULL;
	size_t nh = pk_report__nr_hists(rep);

	for (size_t i = 0; i < nh; i++) {
		const struct pk_hist *h = pk_report__hist(rep, i);
		bool member;
		if (!h)
			continue;
		const struct pk_data_group *g = group_of(env, h->attr ? h->attr->idx : -1, &member);
		if (member && env)
			continue;
		if (!g) {
			if (h->nr_samples || R->show_empty)
				rpt_print_hist(R, h);
			continue;
		}
		const struct pk_hist *mh[64];
		size_t n = 0;
		uint64_t samples = 0;
		char gname[1024];
		int gl = snprintf(gname, sizeof(gname), "%s { ", g->name ? g->name : "anon group");
		for (size_t j = 0; j < nh && n < sizeof(mh) / sizeof(mh[0]); j++) {
			const struct pk_hist *x = pk_report__hist(rep, j);
			if (!x || !x->attr || x->attr->idx < (int)g->leader_idx ||
			    (uint32_t)x->attr->idx - g->leader_idx >= g->nr_members)
				continue;
			mh[n++] = x;
			samples += x->nr_samples;
			if (gl >= 0 && (size_t)gl < sizeof(gname))
				gl += snprintf(gname + gl, sizeof(gname) - (size_t)gl, "%s%s",
					       n > 1 ? ", " : "", x->name);
		}
		if (gl >= 0 && (size_t)gl < sizeof(gname))
			snprintf(gname + gl, sizeof(gname) - (size_t)gl, " }");
		if (!samples && !R->show_empty)
			continue;
		int err = print_group(R, mh, n, gname);
		if (err)
			return err;
	}
	return 0;
}
