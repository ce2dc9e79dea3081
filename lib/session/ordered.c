/* SPDX-License-Identifier: MIT */
/*
 * lib/session/ordered.c - re-sort records by timestamp within FINISHED_ROUND rounds.
 *
 * Records are copied into 1 MiB chunks; a chunk is recycled once every record in it has
 * been delivered, so memory follows what is queued (about two rounds), not the file.
 * Records that lie in the reader's memory image (an mmapped file) are referenced instead
 * of copied (pk_ordered__next only), and the reader is told the lowest offset still
 * queued so that it can give back the pages before it.
 * Queued records are described by slots of a pool; what is sorted is a small key per
 * record (time, arrival number, slot). At a flush the pending keys are sorted with a
 * natural merge sort (a round is the concatenation of a few already sorted per-CPU runs,
 * so this is close to linear) and the slots of the deliverable prefix move to the ready
 * FIFO.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/session.h>
#include "internal.h"

#define CHUNK_SIZE (1u << 20)
#define DEFAULT_MAX_BYTES ((size_t)256 << 20)
#define NO_TIME ((uint64_t)-1)
#define NO_CHUNK UINT32_MAX
#define LOW_WATER_STEP ((uint64_t)1 << 20) /* re-announce the low-water mark this often */

struct chunk {
	uint8_t *mem;
	size_t size, used;
	size_t live;            /* records in it not yet delivered */
};

struct qent {
	const uint8_t *rec;     /* the record: in a chunk, or in the reader's image */
	uint32_t chunk;         /* NO_CHUNK: referenced in the reader's image */
	uint32_t size;
	const struct pk_data_attr *attr;
	uint64_t offset;
	const void *payload;
	uint64_t payload_size;
	bool compressed;
	bool used;              /* queued (the slot is taken) */
};

/* sort key of a pending record */
struct qkey {
	uint64_t time;
	uint64_t seq;           /* arrival order: ties keep it */
	uint32_t slot;
};

struct pk_ordered {
	size_t chunk_size;      /* of a new chunk (pk_ordered_chunk_size) */
	size_t max_bytes;
	struct chunk *chunks;
	size_t nr_chunks, cap_chunks;
	size_t cur;             /* chunk being filled, SIZE_MAX none */
	size_t *free_chunks;    /* indexes of empty chunks */
	size_t nr_free;
	/* record slots (ents), taken round-robin from ring (see slot_get) */
	struct qent *ents;
	size_t cap_ents, nr_used, ring;
	/* pending keys pend[phead..nr_pend) (not yet deliverable) and ready slots (FIFO,
	 * ready[rhead..nr_ready)) */
	struct qkey *pend, *tmp;
	size_t phead, nr_pend, cap_pend, cap_tmp;
	uint32_t *ready;
	size_t nr_ready, rhead, cap_ready;
	uint64_t seq;
	size_t round_peak;      /* most slots taken since the queue was last empty */
	unsigned small_rounds;  /* emptyings in a row that used under a quarter of ents */
	uint64_t max_time;      /* largest timestamp queued so far */
	uint64_t next_flush;    /* deliver up to this at the next round */
	uint64_t last_flushed;  /* largest time delivered */
	bool any_flushed;
	size_t bytes;           /* record bytes held in pending + ready */
	long release_chunk;     /* chunk of the record handed out last (-1 none) */
	struct pk_ordered_stats st;
	/* pass-through record for __next (no copy) */
	bool have_direct;
	struct pk_data_event direct;
	/* the reader's memory image (__next): records in it are referenced */
	const struct pk_data_reader *img_reader;
	const uint8_t *img;
	size_t img_len;
	uint64_t lw_next;       /* input offset at which to recompute the low-water mark */
	uint64_t hold;          /* image offset the caller still reads (pk_ordered_hold) */
	/* pk_ordered_hold_chunks: records handed out stay valid until the caller is done
	 * with them; emptied chunks wait in retired[] (FIFO, stamped with the number of
	 * records delivered when they emptied) until `done` reaches their stamp */
	bool hold_chunks;
	uint64_t delivered;     /* records given out of a chunk or the image (pops) */
	uint64_t done;          /* the caller is done with the first `done` of them */
	struct retired { size_t chunk; uint64_t stamp; } *retired;
	size_t rhead_ret, nr_ret, cap_ret;
};

struct pk_ordered *pk_ordered__new(const struct pk_ordered_opts *opts)
{
	if (!PK_OPTS_VALID(opts, pk_ordered_opts))
		return pk_err_ptr(-EINVAL);
	struct pk_ordered *q = calloc(1, sizeof(*q));
	if (!q)
		return pk_err_ptr(-ENOMEM);
	q->max_bytes = PK_OPTS_GET(opts, max_bytes, 0);
	if (!q->max_bytes)
		q->max_bytes = DEFAULT_MAX_BYTES;
	q->cur = SIZE_MAX;
	q->chunk_size = CHUNK_SIZE;
	q->release_chunk = -1;
	q->hold = UINT64_MAX;
	return q;
}

void pk_ordered__free(struct pk_ordered *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->nr_chunks; i++)
		free(q->chunks[i].mem);
	free(q->chunks);
	free(q->free_chunks);
	free(q->ents);
	free(q->pend);
	free(q->tmp);
	free(q->ready);
	free(q->retired);
	free(q);
}

uint64_t pk_ordered__timestamp(const struct perf_event_header *hdr,
			       const struct pk_data_attr *attr)
{
	if (!attr || !attr->layout_ok || hdr->type >= 64)
		return NO_TIME;
	const struct pk_sample_layout *l = &attr->layout;
	if (!(l->sample_type & PERF_SAMPLE_TIME))
		return NO_TIME;
	const uint64_t *u = (const uint64_t *)(hdr + 1);
	size_t nu = (hdr->size - sizeof(*hdr)) / 8;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		size_t pos = (size_t)pk_sample_time_pos(l->sample_type); /* TIME is set */
		return pos < nu ? u[pos] : NO_TIME;
	}
	if (!l->sample_id_all || !l->id_size || hdr->size < sizeof(*hdr) + l->id_size)
		return NO_TIME;
	const uint8_t *t = (const uint8_t *)hdr + hdr->size - l->id_size;
	if (l->sample_type & PERF_SAMPLE_TID)
		t += 8;
	uint64_t v;
	memcpy(&v, t, sizeof(v));
	return v;
}

/* ---- chunk arena ---- */

/* an empty chunk, not the current one, goes to the free list (its memory given back if it
 * was a one-off big chunk or there are spare ones enough) */
static void chunk_free(struct pk_ordered *q, size_t ci)
{
	struct chunk *c = &q->chunks[ci];
	c->used = 0;
	size_t kept = 0;
	for (size_t i = 0; i < q->nr_free; i++)
		kept += q->chunks[q->free_chunks[i]].mem != NULL;
	/* give back one-off big chunks and anything beyond a few spare ones (more when the
	 * caller holds records handed out: what it holds is bounded by it, and a chunk
	 * given back and allocated again costs its pages' first touch again) */
	if (c->size > q->chunk_size || kept >= (q->hold_chunks ? 16u : 4u)) {
		free(c->mem);
		c->mem = NULL;
		c->size = 0;
	}
	q->free_chunks[q->nr_free++] = ci;
}

/* An emptied chunk: free, or retired until the caller is done with its records. */
static int chunk_retire(struct pk_ordered *q, size_t ci)
{
	if (!q->hold_chunks) {
		chunk_free(q, ci);
		return 0;
	}
	if (q->rhead_ret && q->nr_ret == q->cap_ret) {
		memmove(q->retired, q->retired + q->rhead_ret,
			(q->nr_ret - q->rhead_ret) * sizeof(*q->retired));
		q->nr_ret -= q->rhead_ret;
		q->rhead_ret = 0;
	}
	if (q->nr_ret == q->cap_ret) {
		size_t nc = q->cap_ret ? q->cap_ret * 2 : 16;
		struct retired *n = realloc(q->retired, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		q->retired = n;
		q->cap_ret = nc;
	}
	q->retired[q->nr_ret++] = (struct retired){ .chunk = ci, .stamp = q->delivered };
	return 0;
}

static int chunk_alloc(struct pk_ordered *q, size_t need, uint32_t *ci, uint32_t *off)
{
	/* retired chunks the caller is done with are free again */
	while (q->rhead_ret < q->nr_ret && q->retired[q->rhead_ret].stamp <= q->done)
		chunk_free(q, q->retired[q->rhead_ret++].chunk);
	if (q->cur != SIZE_MAX) {
		struct chunk *c = &q->chunks[q->cur];
		if (!c->live && (long)q->cur != q->release_chunk && !q->hold_chunks)
			c->used = 0; /* everything in it was delivered: start over */
		if (c->size - c->used >= need) {
			*ci = (uint32_t)q->cur;
			*off = (uint32_t)c->used;
			c->used += need;
			c->live++;
			return 0;
		}
	}
	size_t idx = SIZE_MAX;
	for (size_t i = 0; i < q->nr_free; i++) {
		if (q->chunks[q->free_chunks[i]].size >= need) {
			idx = q->free_chunks[i];
			q->free_chunks[i] = q->free_chunks[--q->nr_free];
			break;
		}
	}
	if (idx == SIZE_MAX) {
		if (q->nr_chunks == q->cap_chunks) {
			size_t nc = q->cap_chunks ? q->cap_chunks * 2 : 16;
			struct chunk *n = realloc(q->chunks, nc * sizeof(*n));
			if (!n)
				return -ENOMEM;
			q->chunks = n;
			size_t *nf = realloc(q->free_chunks, nc * sizeof(*nf));
			if (!nf)
				return -ENOMEM;
			q->free_chunks = nf;
			q->cap_chunks = nc;
		}
		/* reuse a slot whose memory was given back, else a new slot */
		for (size_t i = 0; i < q->nr_free; i++) {
			if (!q->chunks[q->free_chunks[i]].mem) {
				idx = q->free_chunks[i];
				q->free_chunks[i] = q->free_chunks[--q->nr_free];
				break;
			}
		}
		size_t sz = need > q->chunk_size ? need : q->chunk_size;
		uint8_t *mem = malloc(sz);
		pk_mem_prefault(mem, sz); /* (one call, not a fault per page) */
		if (!mem) {
			if (idx != SIZE_MAX)
				q->free_chunks[q->nr_free++] = idx;
			return -ENOMEM;
		}
		if (idx == SIZE_MAX)
			idx = q->nr_chunks++;
		q->chunks[idx] = (struct chunk){ .mem = mem, .size = sz };
	}
	/* the chunk we leave goes to the free list once it is empty (see chunk_put) */
	if (q->cur != SIZE_MAX && !q->chunks[q->cur].live && (long)q->cur != q->release_chunk &&
	    chunk_retire(q, q->cur)) {
		q->free_chunks[q->nr_free++] = idx;
		return -ENOMEM;
	}
	q->cur = idx;
	struct chunk *c = &q->chunks[idx];
	c->used = need;
	c->live = 1;
	*ci = (uint32_t)idx;
	*off = 0;
	return 0;
}

static void chunk_put(struct pk_ordered *q, size_t ci)
{
	struct chunk *c = &q->chunks[ci];
	if (!c->live || --c->live)
		return;
	if (ci == q->cur)
		return; /* reset at the next allocation */
	/* (out of memory for the retired list: the chunk is not reused, only freed with
	 * the queue) */
	(void)chunk_retire(q, ci);
}

/* ---- sorting ---- */

static inline bool qless(const struct qkey *a, const struct qkey *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static size_t pend_count(const struct pk_ordered *q)
{
	return q->nr_pend - q->phead;
}

/* Natural merge sort of the pending keys (stable; nearly linear for a few sorted runs). */
static int sort_pending(struct pk_ordered *q)
{
	size_t n = pend_count(q);
	if (n < 2)
		return 0;
	struct qkey *base = q->pend + q->phead;
	/* already sorted? (common for single-CPU recordings) */
	size_t i = 1;
	while (i < n && !qless(&base[i], &base[i - 1]))
		i++;
	if (i == n)
		return 0;
	if (q->phead) { /* sort from the start of the array: drop the consumed prefix */
		memmove(q->pend, base, n * sizeof(*base));
		q->phead = 0;
		q->nr_pend = n;
		base = q->pend;
	}
	if (q->cap_tmp < n) {
		struct qkey *t = realloc(q->tmp, n * sizeof(*t));
		if (!t)
			return -ENOMEM;
		pk_mem_prefault(t + q->cap_tmp, (n - q->cap_tmp) * sizeof(*t));
		q->tmp = t;
		q->cap_tmp = n;
	}
	struct qkey *src = q->pend, *dst = q->tmp;
	for (;;) {
		size_t runs = 0, a = 0;
		while (a < n) {
			size_t b = a + 1;
			while (b < n && !qless(&src[b], &src[b - 1]))
				b++;
			size_t c = b;
			if (b < n) {
				c = b + 1;
				while (c < n && !qless(&src[c], &src[c - 1]))
					c++;
			}
			/* merge [a,b) and [b,c) into dst[a..c) */
			size_t x = a, y = b, o = a;
			while (x < b && y < c)
				dst[o++] = qless(&src[y], &src[x]) ? src[y++] : src[x++];
			while (x < b)
				dst[o++] = src[x++];
			while (y < c)
				dst[o++] = src[y++];
			runs++;
			a = c;
		}
		struct qkey *t = src;
		src = dst;
		dst = t;
		if (runs <= 1)
			break;
	}
	if (src != q->pend) {
		size_t c = q->cap_tmp;
		q->tmp = q->pend;
		q->pend = src;
		q->cap_tmp = q->cap_pend;
		q->cap_pend = c;
	}
	return 0;
}

static int ready_reserve(struct pk_ordered *q, size_t more)
{
	if (q->rhead && q->rhead == q->nr_ready) {
		q->rhead = q->nr_ready = 0;
	}
	if (q->nr_ready + more <= q->cap_ready)
		return 0;
	if (q->rhead) { /* compact */
		memmove(q->ready, q->ready + q->rhead, (q->nr_ready - q->rhead) * sizeof(*q->ready));
		q->nr_ready -= q->rhead;
		q->rhead = 0;
		if (q->nr_ready + more <= q->cap_ready)
			return 0;
	}
	size_t nc = q->cap_ready ? q->cap_ready * 2 : 1024;
	while (nc < q->nr_ready + more)
		nc *= 2;
	uint32_t *r = realloc(q->ready, nc * sizeof(*r));
	if (!r)
		return -ENOMEM;
	pk_mem_prefault(r + q->cap_ready, (nc - q->cap_ready) * sizeof(*r));
	q->ready = r;
	q->cap_ready = nc;
	return 0;
}

/* Move the sorted pending records with time <= limit (or the first `count`) to ready. */
static int flush_upto(struct pk_ordered *q, uint64_t limit, size_t count)
{
	int err = sort_pending(q);
	if (err)
		return err;
	size_t n = pend_count(q);
	if (!n)
		return 0;
	const struct qkey *base = q->pend + q->phead;
	size_t k = 0;
	while (k < n && k < count && base[k].time <= limit)
		k++;
	if (!k)
		return 0;
	err = ready_reserve(q, k);
	if (err)
		return err;
	for (size_t i = 0; i < k; i++)
		q->ready[q->nr_ready + i] = base[i].slot;
	q->nr_ready += k;
	uint64_t t = base[k - 1].time;
	if (!q->any_flushed || t > q->last_flushed)
		q->last_flushed = t;
	q->any_flushed = true;
	q->phead += k;
	if (q->phead == q->nr_pend)
		q->phead = q->nr_pend = 0;
	return 0;
}

/* true if ev's record lies in the reader's image (stays valid: reference it) */
static bool in_image(const struct pk_ordered *q, const struct pk_data_event *ev)
{
	uintptr_t p = (uintptr_t)ev->hdr, b = (uintptr_t)q->img;
	return q->img && p >= b && p - b <= q->img_len && q->img_len - (p - b) >= ev->hdr->size;
}

/*
 * Slots are taken in a circle: records are delivered roughly in the order they came, so
 * the slots a delivery reads follow each other in memory (a stack of free slots scattered
 * them: reading the slot of each delivered record was a cache miss, 8 % of a report's
 * reader thread). A slot still taken is stepped over; the circle grows when more than half
 * of it is taken, so a few records held for long (a far-future timestamp) cannot make it
 * grow without bound.
 */
static int slot_get(struct pk_ordered *q, uint32_t *slot)
{
	if ((q->nr_used + 1) * 2 > q->cap_ents) {
		size_t old = q->cap_ents, nc = old ? old * 2 : 4096;
		if (nc > UINT32_MAX)
			return -ENOMEM;
		struct qent *n = realloc(q->ents, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		pk_mem_prefault(n + old, (nc - old) * sizeof(*n));
		for (size_t i = old; i < nc; i++)
			n[i].used = false;
		q->ents = n;
		q->cap_ents = nc;
		q->ring = old; /* continue in the new half */
	}
	/* fewer than half taken: a free slot is found (usually at once) */
	while (q->ents[q->ring].used)
		q->ring = (q->ring + 1) % q->cap_ents;
	*slot = (uint32_t)q->ring;
	q->ring = (q->ring + 1) % q->cap_ents;
	q->ents[*slot].used = true;
	if (++q->nr_used > q->round_peak)
		q->round_peak = q->nr_used;
	return 0;
}

static void slot_put(struct pk_ordered *q, uint32_t slot)
{
	q->ents[slot].used = false;
	q->nr_used--;
}

static int enqueue(struct pk_ordered *q, const struct pk_data_event *ev, uint64_t time,
		   bool to_ready, bool ref)
{
	const struct perf_event_header *h = ev->hdr;
	size_t need = (h->size + 7u) & ~7u;
	uint32_t ci = NO_CHUNK, off = 0, slot;
	const uint8_t *rec = (const uint8_t *)h;
	int err;
	/* reserve the queue space first: nothing to undo on failure */
	if (to_ready) {
		err = ready_reserve(q, 1);
	} else if (q->nr_pend == q->cap_pend && q->phead && q->phead >= q->cap_pend / 4) {
		/* a quarter or more of the array was consumed: slide instead of growing */
		memmove(q->pend, q->pend + q->phead, pend_count(q) * sizeof(*q->pend));
		q->nr_pend -= q->phead;
		q->phead = 0;
		err = 0;
	} else if (q->nr_pend == q->cap_pend) {
		size_t nc = q->cap_pend ? q->cap_pend * 2 : 4096;
		struct qkey *p = realloc(q->pend, nc * sizeof(*p));
		err = p ? 0 : -ENOMEM;
		if (p) {
			pk_mem_prefault(p + q->cap_pend, (nc - q->cap_pend) * sizeof(*p));
			q->pend = p;
			q->cap_pend = nc;
		}
	} else {
		err = 0;
	}
	if (err || (err = slot_get(q, &slot)))
		return err;
	if (!ref) {
		err = chunk_alloc(q, need ? need : 8, &ci, &off);
		if (err) {
			slot_put(q, slot);
			return err;
		}
		if (q->hold_chunks) /* the copy is read by the consumer thread of feed.c */
			pk_copy_streaming(q->chunks[ci].mem + off, h, h->size);
		else
			memcpy(q->chunks[ci].mem + off, h, h->size);
		rec = q->chunks[ci].mem + off;
	}
	q->ents[slot] = (struct qent){
		.rec = rec, .chunk = ci, .size = h->size, .attr = ev->attr, .offset = ev->offset,
		.payload = ev->payload, .payload_size = ev->payload_size,
		.compressed = ev->compressed, .used = true,
	};
	/* referenced records count too: the queue's limit and flush points do not depend
	 * on the input kind, so the delivery order is the same */
	q->bytes += need;
	if (q->bytes > q->st.max_queued_bytes)
		q->st.max_queued_bytes = q->bytes;
	if (to_ready) {
		q->seq++;
		q->ready[q->nr_ready++] = slot;
		return 0;
	}
	q->pend[q->nr_pend++] = (struct qkey){ .time = time, .seq = q->seq++, .slot = slot };
	return 0;
}

static void release_last(struct pk_ordered *q)
{
	if (q->release_chunk >= 0) {
		chunk_put(q, (size_t)q->release_chunk);
		q->release_chunk = -1;
	}
}

/* (t: ev's timestamp if known, else T_UNKNOWN) */
#define T_UNKNOWN ((uint64_t)-2)
static int push(struct pk_ordered *q, const struct pk_data_event *ev, bool ref, uint64_t t)
{
	int err;
	release_last(q);
	if (ev->hdr->type == PK_RECORD_FINISHED_ROUND) {
		q->st.rounds++;
		if (q->next_flush != NO_TIME || pend_count(q)) {
			err = flush_upto(q, q->next_flush, SIZE_MAX);
			if (err)
				return pk_err(err);
		}
		q->next_flush = q->max_time;
		q->st.immediate++;
		err = enqueue(q, ev, NO_TIME, true, ref);
		return err ? pk_err(err) : 0;
	}
	if (t == T_UNKNOWN)
		t = pk_ordered__timestamp(ev->hdr, ev->attr);
	if (t == NO_TIME) {
		q->st.immediate++;
		err = enqueue(q, ev, t, true, ref);
		return err ? pk_err(err) : 0;
	}
	q->st.queued++;
	if (q->any_flushed && t < q->last_flushed)
		q->st.out_of_order++;
	if (t > q->max_time)
		q->max_time = t;
	err = enqueue(q, ev, t, false, ref);
	if (err)
		return pk_err(err);
	if (q->bytes > q->max_bytes && pend_count(q) > 1) {
		q->st.early_flushes++;
		err = flush_upto(q, NO_TIME, (pend_count(q) + 1) / 2);
		if (err)
			return pk_err(err);
	}
	return 0;
}

int pk_ordered__push(struct pk_ordered *q, const struct pk_data_event *ev)
{
	if (!q || !ev || !ev->hdr || ev->hdr->size < sizeof(*ev->hdr))
		return pk_err(-EINVAL);
	return push(q, ev, false, T_UNKNOWN);
}

void pk_ordered__finish(struct pk_ordered *q)
{
	if (!q)
		return;
	if (flush_upto(q, NO_TIME, SIZE_MAX) < 0) {
		/* no memory to sort: deliver in arrival order rather than lose records */
		size_t n = pend_count(q);
		if (ready_reserve(q, n) == 0) {
			for (size_t i = 0; i < n; i++)
				q->ready[q->nr_ready + i] = q->pend[q->phead + i].slot;
			q->nr_ready += n;
			q->phead = q->nr_pend = 0;
		}
	}
}

/*
 * An empty queue gives back the arrays a burst grew (a live stream's first round holds
 * the synthesised state of every process of the system: tens of thousands of records),
 * so that a long-lived session (perfkit top) does not keep its largest round's size.
 * Only after TRIM_ROUNDS emptyings in a row that used under a quarter of the slots: a
 * file whose rounds are all large keeps its arrays (freeing and growing them again at
 * every round cost report 15 % of its time in page faults on a 1M-sample file).
 */
#define TRIM_ABOVE 16384
#define TRIM_ROUNDS 16
static void trim_empty(struct pk_ordered *q)
{
	size_t peak = q->round_peak;

	if (!peak) /* (the same emptying, popped again) */
		return;
	q->round_peak = 0;
	if (q->cap_ents <= TRIM_ABOVE)
		return;
	q->small_rounds = peak < q->cap_ents / 4 ? q->small_rounds + 1 : 0;
	if (q->small_rounds < TRIM_ROUNDS)
		return;
	q->small_rounds = 0;
	free(q->ents);
	q->ents = NULL;
	q->cap_ents = q->ring = 0;
	if (q->phead >= q->nr_pend && q->cap_pend > TRIM_ABOVE) {
		free(q->pend);
		q->pend = NULL;
		q->cap_pend = q->phead = q->nr_pend = 0;
	}
	if (q->cap_tmp > TRIM_ABOVE) {
		free(q->tmp);
		q->tmp = NULL;
		q->cap_tmp = 0;
	}
	if (q->rhead >= q->nr_ready && q->cap_ready > TRIM_ABOVE) {
		free(q->ready);
		q->ready = NULL;
		q->cap_ready = q->rhead = q->nr_ready = 0;
	}
}

int pk_ordered__pop(struct pk_ordered *q, struct pk_data_event *ev)
{
	if (!q || !ev)
		return pk_err(-EINVAL);
	release_last(q);
	q->have_direct = false;
	if (!q->nr_used)
		trim_empty(q);
	if (q->rhead >= q->nr_ready)
		return 0;
	uint32_t slot = q->ready[q->rhead++];
	const struct qent *e = &q->ents[slot];
	slot_put(q, slot);
	q->delivered++;
	memset(ev, 0, sizeof(*ev));
	ev->hdr = (const struct perf_event_header *)e->rec;
	ev->attr = e->attr;
	ev->offset = e->offset;
	ev->compressed = e->compressed;
	ev->payload = e->payload;
	ev->payload_size = e->payload_size;
	q->bytes -= (e->size + 7u) & ~7u;
	if (e->chunk != NO_CHUNK)
		q->release_chunk = (long)e->chunk;
	return 1;
}

/* Lowest image offset still referenced by a queued record (`dflt` if none). */
void pk_ordered_hold(struct pk_ordered *q, uint64_t offset)
{
	q->hold = offset;
}

void pk_ordered_hold_chunks(struct pk_ordered *q, bool on)
{
	q->hold_chunks = on;
}

void pk_ordered_chunk_size(struct pk_ordered *q, size_t size)
{
	q->chunk_size = size ? size : CHUNK_SIZE;
}

uint64_t pk_ordered_delivered(const struct pk_ordered *q)
{
	return q->delivered;
}

void pk_ordered_done(struct pk_ordered *q, uint64_t done)
{
	if (done > q->done)
		q->done = done;
}

bool pk_ordered_last_in_chunk(const struct pk_ordered *q)
{
	return q->release_chunk >= 0;
}

static uint64_t low_water(const struct pk_ordered *q, uint64_t dflt)
{
	uint64_t lw = PK_MIN(dflt, q->hold);
	for (size_t i = q->phead; i < q->nr_pend; i++) {
		const struct qent *e = &q->ents[q->pend[i].slot];
		if (e->chunk == NO_CHUNK && (uint64_t)(e->rec - q->img) < lw)
			lw = (uint64_t)(e->rec - q->img);
	}
	for (size_t i = q->rhead; i < q->nr_ready; i++) {
		const struct qent *e = &q->ents[q->ready[i]];
		if (e->chunk == NO_CHUNK && (uint64_t)(e->rec - q->img) < lw)
			lw = (uint64_t)(e->rec - q->img);
	}
	return lw;
}

int pk_ordered__next(struct pk_ordered *q, struct pk_data_reader *r, struct pk_data_event *ev)
{
	if (!q || !r || !ev)
		return pk_err(-EINVAL);
	if (q->img_reader != r) {
		/* records of another reader may still be queued: reference only if empty */
		bool empty = !pend_count(q) && q->rhead >= q->nr_ready;
		q->img_reader = r;
		q->img = empty ? pk_data_reader__image(r, &q->img_len) : NULL;
		q->lw_next = 0;
	}
	for (;;) {
		int got = pk_ordered__pop(q, ev);
		if (got)
			return got;
		int err = pk_data_reader__next(r, ev);
		if (err <= 0) {
			pk_ordered__finish(q);
			got = pk_ordered__pop(q, ev);
			if (got)
				return got;
			return err;
		}
		/* Fast path: a record without a timestamp while nothing is ready is delivered
		 * straight from the reader (no copy); FINISHED_ROUND needs the queue. */
		uint64_t t = T_UNKNOWN;
		if (ev->hdr->type != PK_RECORD_FINISHED_ROUND &&
		    (t = pk_ordered__timestamp(ev->hdr, ev->attr)) == NO_TIME) {
			q->st.immediate++;
			return 1;
		}
		if (ev->hdr->size < sizeof(*ev->hdr))
			return pk_err(-EINVAL);
		bool ref = in_image(q, ev);
		err = push(q, ev, ref, t);
		if (err)
			return err;
		if (q->img && ev->offset >= q->lw_next) {
			const uint8_t *p = (const uint8_t *)ev->hdr;
			uint64_t here = ref ? (uint64_t)(p - q->img) : ev->offset;
			pk_data_reader__release_before(r, low_water(q, here));
			q->lw_next = ev->offset + LOW_WATER_STEP;
		}
	}
}

void pk_ordered__stats(const struct pk_ordered *q, struct pk_ordered_stats *st)
{
	if (q && st)
		PK_OUT_COPY(st, &q->st);
}
