/* SPDX-License-Identifier: MIT */
/*
 * lib/report/aggw.c - the aggregation worker: a thread that aggregates full pools of
 * pending samples (hist.c) while the caller's thread resolves the next ones.
 *
 * A report's time on a call-graph recording splits between resolving (addresses to
 * frames, the pending key of each sample) and aggregating (entries, call-chain nodes):
 * on a system-wide recording of a compile, aggregating was a third of the caller's
 * thread with --children, a sixth without. The two share little: the aggregation reads
 * the frames (written once when made, never changed: what it writes per frame is in
 * rep->fagg) and writes only its own state (hists' entries, nodes, the unresolved DSO
 * counts). The hand-over keeps the result the same as aggregating on the caller's
 * thread: a pool is handed only once the worker is idle (pools are aggregated in
 * order, one at a time), with the frames array as it was then (rep->afr); the caller
 * never frees or moves that array while the worker runs (a new, bigger one is made and
 * the old one freed once the worker is idle again), and waits for the worker before it
 * touches anything else the worker reads (a new hist, inline keys) and at the end.
 * Reports with filters or regular expressions (which read the string table, which the
 * caller grows) aggregate on the caller's thread, as before.
 */
#include <pthread.h>
#include "resolve.h"

struct aggw {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool busy, quit;
	int err;                /* the first error of the worker's aggregation */
	/* the pool being (or last) aggregated: swapped with the report's at each hand-over */
	uint32_t *ppool;
	size_t nr_ppool, cap_ppool;
	struct pchain *pch;
	size_t nr_pch, cap_pch;
	/* frames arrays replaced while the worker ran: freed when it is idle */
	struct { struct frame *p; size_t cap; } old[8];
	size_t nr_old;
};

static void *aggw_main(void *arg)
{
	struct pk_report *rep = arg;
	struct aggw *w = rep->aw;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->busy && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->busy)
			break;
		pthread_mutex_unlock(&w->mu);
		int err = pk_rep_aggregate_pending(rep, w->ppool, w->pch, w->nr_pch);
		pthread_mutex_lock(&w->mu);
		if (err && !w->err)
			w->err = err;
		w->busy = false;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void free_old(struct aggw *w)
{
	for (size_t i = 0; i < w->nr_old; i++)
		pk_arr_free(w->old[i].p, w->old[i].cap * sizeof(struct frame));
	w->nr_old = 0;
}

int pk_rep_aggw_wait(struct pk_report *rep)
{
	struct aggw *w = rep->aw;
	if (!w)
		return 0;
	pthread_mutex_lock(&w->mu);
	while (w->busy)
		pthread_cond_wait(&w->cv, &w->mu);
	int err = w->err;
	pthread_mutex_unlock(&w->mu);
	free_old(w);
	return err;
}

void pk_rep_aggw_stop(struct pk_report *rep)
{
	struct aggw *w = rep->aw;
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free_old(w);
	pk_arr_free(w->ppool, w->cap_ppool * sizeof(*w->ppool));
	pk_arr_free(w->pch, w->cap_pch * sizeof(*w->pch));
	free(w);
	rep->aw = NULL;
}

/* the worker, started at the first hand-over; false: none (no memory, no thread) */
static bool aggw_start(struct pk_report *rep)
{
	if (rep->aw)
		return true;
	struct aggw *w = calloc(1, sizeof(*w));
	if (!w)
		return false;
	if (pthread_mutex_init(&w->mu, NULL)) {
		free(w);
		return false;
	}
	if (pthread_cond_init(&w->cv, NULL)) {
		pthread_mutex_destroy(&w->mu);
		free(w);
		return false;
	}
	rep->aw = w;
	if (pthread_create(&w->th, NULL, aggw_main, rep)) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		rep->aw = NULL;
		return false;
	}
	return true;
}

/* The worker is idle (pk_rep_aggw_wait) and rep->afr, rep->fagg are ready: hand it the
 * report's pending pool, and give the report the worker's old one (emptied). */
int pk_rep_aggw_hand(struct pk_report *rep)
{
	if (!rep->nr_pch)
		return 1;
	if (!aggw_start(rep)) {
		rep->agg_async = false; /* from now on, here */
		return 0;
	}
	struct aggw *w = rep->aw;
	uint32_t *pp = w->ppool;
	size_t cpp = w->cap_ppool;
	struct pchain *pc = w->pch;
	size_t cpc = w->cap_pch;
	pthread_mutex_lock(&w->mu);
	w->ppool = rep->ppool;
	w->cap_ppool = rep->cap_ppool;
	w->nr_ppool = rep->nr_ppool;
	w->pch = rep->pch;
	w->cap_pch = rep->cap_pch;
	w->nr_pch = rep->nr_pch;
	w->busy = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	rep->ppool = pp;
	rep->cap_ppool = cpp;
	rep->pch = pc;
	rep->cap_pch = cpc;
	rep->nr_ppool = rep->nr_pch = 0;
	return 1;
}

/* Room for one more frame. The worker may be reading the array it was given at the last
 * hand-over (rep->afr): that one is not moved while the worker runs, a bigger one is made
 * and the old one kept until the worker is idle. */
int pk_rep_frames_grow(struct pk_report *rep)
{
	struct aggw *w = rep->aw;
	size_t need = rep->nr_frames + 1;
	bool busy = false;
	if (w && rep->afr == rep->frames) {
		pthread_mutex_lock(&w->mu);
		busy = w->busy;
		pthread_mutex_unlock(&w->mu);
	}
	if (busy && w->nr_old == PK_ARRAY_SIZE(w->old)) {
		int err = pk_rep_aggw_wait(rep); /* (never: one array per hand-over) */
		if (err)
			return err;
		busy = false;
	}
	if (!busy)
		return pk_grow((void **)&rep->frames, &rep->cap_frames, need, sizeof(struct frame));
	size_t nc = rep->cap_frames ? rep->cap_frames * 2 : 64;
	while (nc < need)
		nc *= 2;
	struct frame *n = pk_arr_calloc(nc * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memcpy(n, rep->frames, rep->nr_frames * sizeof(*n));
	w->old[w->nr_old].p = rep->frames;
	w->old[w->nr_old].cap = rep->cap_frames;
	w->nr_old++;
	rep->frames = n;
	rep->cap_frames = nc;
	return 0;
}
