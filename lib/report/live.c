/* SPDX-License-Identifier: MIT */
/*
 * lib/report/live.c - a report fed by a stream that does not end soon (`perfkit top`): the
 * caller is called between records at every FINISHED_ROUND, and counts age with
 * pk_report__decay.
 */
#include "report-internal.h"

struct live {
	struct pk_report *rep;
	const struct pk_report_live_ops *ops;
	void *ctx;
};

static int live_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct live *l = ctx;
	int err = pk_rep_on_sample(l->rep, ev, r);
	int (*fn)(void *, struct pk_report *, const struct pk_data_event *,
		  const struct pk_sample *) = PK_OPTS_GET(l->ops, sample, NULL);
	if (err || !fn || !r)
		return err;
	return fn(l->ctx, l->rep, ev, &r->sample);
}

static int live_round(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct live *l = ctx;
	(void)ev;
	(void)r;
	int (*fn)(void *, struct pk_report *) = PK_OPTS_GET(l->ops, round, NULL);
	return fn ? fn(l->ctx, l->rep) : 0;
}

static int live_other(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct live *l = ctx;
	int err = pk_rep_on_record(l->rep, ev, r);
	int (*fn)(void *, struct pk_report *, const struct pk_data_event *,
		  const struct pk_record *) = PK_OPTS_GET(l->ops, record, NULL);
	if (err || !fn)
		return err;
	return fn(l->ctx, l->rep, ev, r);
}

int pk_report__process_live(struct pk_report *rep, struct pk_data_reader *r,
			    const struct pk_report_live_ops *ops, void *ctx)
{
	if (!rep || !r || !PK_OPTS_VALID(ops, pk_report_live_ops))
		return pk_err(-EINVAL);
	PK_OPTS(pk_session_opts, so, .machine = rep->m, .host_known = true);
	struct live l = { .rep = rep, .ops = ops, .ctx = ctx };
	PK_OPTS(pk_session_ops, sops, .sample = live_sample, .finished_round = live_round,
		.other = live_other);
	return pk_rep_process(rep, r, &so, &sops, &l);
}

/* v * num / den without overflow (num <= den) */
static uint64_t scale(uint64_t v, uint32_t num, uint32_t den)
{
	return (v / den) * num + (v % den) * num / den;
}

static bool ent_zero(const struct ent *e)
{
	return !e->self_period && !e->self_samples && !e->total_period && !e->total_samples;
}

/* Drop the entries that decayed to zero (a live profile of a system meets new addresses,
 * say of JIT code, all the time). Entries are found through their frame's first entry
 * (ent1) and the entry index: both are made again for the entries kept. The call-chain
 * nodes of dropped entries stay (unreachable) until the report is freed. */
static void drop_zero_entries(struct pk_report *rep)
{
	bool any = false;
	for (size_t i = 0; i < rep->nr_hists && !any; i++)
		for (size_t j = 0; j < rep->hists[i].nr_ents && !any; j++)
			any = ent_zero(&rep->hists[i].ents[j]);
	if (!any)
		return;
	for (size_t i = 0; i < rep->nr_fagg; i++)
		rep->fagg[i].ent1 = NONE32;
	for (size_t i = 0; i < rep->nr_hists; i++) {
		struct hist *h = &rep->hists[i];
		size_t n = 0;
		for (size_t j = 0; j < h->nr_ents; j++) {
			if (ent_zero(&h->ents[j]))
				continue;
			if (n != j)
				h->ents[n] = h->ents[j];
			struct ent *e = &h->ents[n];
			if (e->k.frame && rep->fagg[e->frame].ent1 == NONE32) {
				rep->fagg[e->frame].ent1 = (uint32_t)n;
				rep->fagg[e->frame].ent1_hist = (uint16_t)i;
			}
			n++;
		}
		h->nr_ents = n;
		pk_index_release(&h->eidx); /* rebuilt over the entries kept at the next look-up */
	}
}

int pk_report__decay(struct pk_report *rep, uint32_t num, uint32_t den)
{
	if (!rep || !den || num > den)
		return pk_err(-EINVAL);
	int err = pk_rep_flush_pending(rep);
	if (err)
		return pk_err(err);
	for (size_t i = 0; i < rep->nr_hists; i++) {
		struct hist *h = &rep->hists[i];
		for (size_t j = 0; j < h->nr_ents; j++) {
			struct ent *e = &h->ents[j];
			e->self_period = scale(e->self_period, num, den);
			e->self_samples = scale(e->self_samples, num, den);
			e->total_period = scale(e->total_period, num, den);
			e->total_samples = scale(e->total_samples, num, den);
		}
		h->pub.total_period = scale(h->pub.total_period, num, den);
		h->pub.nr_samples = scale(h->pub.nr_samples, num, den);
		h->pub.nr_filtered = scale(h->pub.nr_filtered, num, den);
	}
	/* a node's own period is its period minus its children's: rounding each down keeps
	 * the children's sum at most the parent's */
	for (size_t i = 0; i < rep->nr_nodes; i++) {
		rep->nodes[i].period = scale(rep->nodes[i].period, num, den);
		rep->nodes[i].samples = scale(rep->nodes[i].samples, num, den);
	}
	drop_zero_entries(rep);
	rep->finished = false;
	return 0;
}
