/* SPDX-License-Identifier: MIT */
/*
 * lib/session/relaxed.c - pk_session_opts.samples_unordered: the session's delivery
 * without sorting the samples.
 *
 * A sample's place in the time-ordered stream matters only against the records that
 * are not samples: those change the machine model (a map, a process, a name), samples
 * never do. So this follows the ordered queue's rule (pk_ordered: flushes at each
 * FINISHED_ROUND up to the largest time seen before the previous one, the oldest half
 * early when the queued bytes pass the limit, records without a time at once) exactly
 * for the non-sample records, and decides for each sample only which of them it comes
 * between: at a flush, the non-sample records it delivers are sorted (they are few),
 * and each sample of the flush goes into the stretch before the first of them that is
 * later in (time, arrival) order. The stretches are delivered in turn, and the samples
 * of one stretch in the order they were read. A client thus sees every sample with the
 * machine as the time-ordered delivery would leave it, and the non-sample records in the
 * same order as that delivery, while the samples, most of the records, are neither
 * copied nor sorted: they wait as 48-byte references into the reader's memory image
 * (a record outside it, inflated or misaligned, is copied into an arena).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "core/intern.h"
#include "relaxed.h"

#define NO_TIME ((uint64_t)-1)
/* seq's low bit: the record is a copy in a chunk, behind its offset and chunk index */
#define RX_COPY 1u
#define RX_CHUNK ((size_t)1 << 20)
#define RX_DEFAULT_MAX_BYTES ((size_t)256 << 20)
#define RX_LOW_WATER_STEP ((uint64_t)1 << 20)

/* a queued record: a sample, or any other record with a time (32 bytes: the samples
 * wait in these, about two rounds of them, and are copied once at a flush) */
struct rx_ent {
	const struct perf_event_header *hdr; /* in the reader's image, or a copy */
	const struct pk_data_attr *attr;
	uint64_t time;
	uint64_t seq;           /* arrival number << 1 | RX_COPY */
};

struct rx_chunk {
	uint8_t *mem;
	size_t size, used, live;
};

struct rx {
	struct pk_data_reader *r;
	const uint8_t *img;
	size_t img_len;
	struct pk_rx_client cl;
	bool prefix;
	bool little;            /* a little-endian host (fast_prefix splits u64s) */
	size_t max_bytes;
	/* queued samples and other records, each in arrival order */
	struct rx_ent *smp, *oth, *tmp, *fl;
	size_t nr_smp, cap_smp, nr_oth, cap_oth, cap_tmp, cap_fl;
	uint32_t *flb;          /* at a flush: the stretch of each flushed sample (fl) */
	size_t cap_flb;
	size_t *order;          /* flushed samples by stretch (indexes into fl) */
	size_t cap_order;
	size_t *cnt;            /* per stretch counts at a flush */
	size_t cap_cnt;
	size_t bytes;
	uint64_t seq, max_time, next_flush, last_flushed;
	bool any_flushed;
	struct rx_chunk *chunks;
	size_t nr_chunks, cur;
	/* the decode of the last sample (pk_record_decode_sample_prefix's `again`) */
	struct pk_record rec;
	bool z;
	uint64_t ztype;
	uint32_t zflags;
	uint64_t lw_next;
	struct pk_ordered_stats st;
	/* the fixed fields of the last sample layout decoded (fast_prefix): u64 index of
	 * each in the body, -1 if absent */
	const struct pk_data_attr *fa;
	const struct pk_data_attr *ta; /* the attr of tpos (sample_fast) */
	int tpos;               /* u64 index of its samples' time, -1 none */
	int8_t f_ident, f_ip, f_tid, f_time, f_addr, f_id, f_sid, f_cpu, f_period;
};

static bool in_image(const struct rx *x, const struct perf_event_header *h)
{
	uintptr_t p = (uintptr_t)h, b = (uintptr_t)x->img;
	return x->img && p >= b && p - b <= x->img_len && x->img_len - (p - b) >= h->size &&
	       !(p & 7);
}

/* ---- copies of records outside the image ---- */

static int chunk_copy(struct rx *x, const struct perf_event_header *h, uint64_t offset,
		      struct rx_ent *e)
{
	size_t need = pk_align_up(h->size, 8) + 16; /* offset, chunk, record */
	struct rx_chunk *c = x->cur < x->nr_chunks ? &x->chunks[x->cur] : NULL;
	if (!c || c->size - c->used < need) {
		size_t idx = x->nr_chunks;
		for (size_t i = 0; i < x->nr_chunks; i++) {
			if (!x->chunks[i].live && x->chunks[i].size >= need) {
				idx = i;
				break;
			}
		}
		if (idx == x->nr_chunks) {
			struct rx_chunk *n = realloc(x->chunks, (x->nr_chunks + 1) * sizeof(*n));
			if (!n)
				return -ENOMEM;
			x->chunks = n;
			size_t sz = PK_MAX(need, RX_CHUNK);
			n[idx] = (struct rx_chunk){ .mem = malloc(sz), .size = sz };
			if (!n[idx].mem)
				return -ENOMEM;
			x->nr_chunks++;
		}
		x->cur = idx;
		c = &x->chunks[idx];
		c->used = 0;
	}
	uint64_t pre[2] = { offset, x->cur };
	memcpy(c->mem + c->used, pre, sizeof(pre));
	memcpy(c->mem + c->used + sizeof(pre), h, h->size);
	e->hdr = (const struct perf_event_header *)(c->mem + c->used + sizeof(pre));
	e->seq |= RX_COPY;
	c->used += need;
	c->live++;
	return 0;
}

/* the file offset of a queued record */
static uint64_t ent_offset(const struct rx *x, const struct rx_ent *e)
{
	if (e->seq & RX_COPY)
		return ((const uint64_t *)(const void *)e->hdr)[-2];
	return (uint64_t)((const uint8_t *)e->hdr - x->img);
}

static void chunk_put(struct rx *x, const struct rx_ent *e)
{
	if (!(e->seq & RX_COPY))
		return;
	size_t ci = (size_t)((const uint64_t *)(const void *)e->hdr)[-1];
	struct rx_chunk *c = &x->chunks[ci];
	if (!--c->live && ci != x->cur)
		c->used = 0;
}

/* ---- delivery ---- */

/* where the fixed fields of attr a's samples are (see fast_prefix) */
static void fast_layout(struct rx *x, const struct pk_data_attr *a)
{
	uint64_t st = a->layout.sample_type;
	int8_t at = 0;
	x->fa = a;
#define RX_FIELD(f, bit) x->f = (st & (bit)) ? at++ : -1
	RX_FIELD(f_ident, PERF_SAMPLE_IDENTIFIER);
	RX_FIELD(f_ip, PERF_SAMPLE_IP);
	RX_FIELD(f_tid, PERF_SAMPLE_TID);
	RX_FIELD(f_time, PERF_SAMPLE_TIME);
	RX_FIELD(f_addr, PERF_SAMPLE_ADDR);
	RX_FIELD(f_id, PERF_SAMPLE_ID);
	RX_FIELD(f_sid, PERF_SAMPLE_STREAM_ID);
	RX_FIELD(f_cpu, PERF_SAMPLE_CPU);
	RX_FIELD(f_period, PERF_SAMPLE_PERIOD);
#undef RX_FIELD
}

/*
 * pk_record_decode_sample_prefix for an aligned sample of attr a's layout, with the
 * fields' places worked out once per layout (the prefix decode tests each sample_type
 * bit per sample). Only the fields the layout has are written: the others are zero since
 * the last memset (again == false) and no decode of this layout writes them.
 */
static int fast_prefix(struct rx *x, const struct pk_data_attr *a,
		       const struct perf_event_header *h, bool again)
{
	const struct pk_sample_layout *l = &a->layout;
	struct pk_record *r = &x->rec;
	if (!again)
		memset(r, 0, sizeof(*r));
	if (x->fa != a)
		fast_layout(x, a);
	struct pk_sample *s = &r->sample;
	r->hdr = h;
	r->type = h->type;
	r->misc = h->misc;
	r->size = h->size;
	unsigned m = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	r->cpumode = (uint8_t)(m <= PK_CPUMODE_GUEST_USER ? m : PK_CPUMODE_INVALID);
	if (h->size < l->min_sample_size)
		return -PK_ERR_FORMAT;
	const uint64_t *u = (const uint64_t *)(h + 1);
	s->type = l->sample_type;
	s->misc = h->misc;
	s->cpumode = r->cpumode;
	s->exact_ip = !!(h->misc & PERF_RECORD_MISC_EXACT_IP);
	if (x->f_ident >= 0)
		s->id = u[x->f_ident];
	if (x->f_ip >= 0)
		s->ip = u[x->f_ip];
	if (x->f_tid >= 0) {
		s->pid = (uint32_t)u[x->f_tid];
		s->tid = (uint32_t)(u[x->f_tid] >> 32);
	}
	if (x->f_time >= 0)
		s->time = u[x->f_time];
	if (x->f_addr >= 0)
		s->addr = u[x->f_addr];
	if (x->f_id >= 0 && x->f_ident < 0)
		s->id = u[x->f_id];
	if (x->f_sid >= 0)
		s->stream_id = u[x->f_sid];
	if (x->f_cpu >= 0) {
		s->cpu = (uint32_t)u[x->f_cpu];
		s->cpu_res = (uint32_t)(u[x->f_cpu] >> 32);
	}
	if (x->f_period >= 0)
		s->period = u[x->f_period];
	return 0;
}

/* a sample (e->seq: RX_COPY if it is a copy to give back) at file offset `offset` */
static int deliver_sample(struct rx *x, const struct rx_ent *e, uint64_t offset)
{
	const struct pk_data_attr *a = e->attr;
	if (x->cl.raw_sample) {
		int err = x->cl.raw_sample(x->cl.sample_arg, e->hdr, a);
		chunk_put(x, e);
		return err;
	}
	const struct pk_sample_layout *l = a && a->layout_ok ? &a->layout : NULL;
	bool again = x->z && l && x->ztype == l->sample_type && x->zflags == l->flags;
	int d = x->prefix ? (l && !((uintptr_t)e->hdr & 7) && x->little
				     ? fast_prefix(x, a, e->hdr, again)
				     : pk_record_decode_sample_prefix(l, e->hdr, &x->rec, again))
			  : again ? pk_record_decode_sample_again(l, e->hdr, &x->rec)
				  : pk_record__decode(l, e->hdr, &x->rec, NULL);
	x->z = !d;
	if (!d) {
		x->ztype = l->sample_type;
		x->zflags = l->flags;
	}
	struct pk_data_event ev = { .hdr = e->hdr, .attr = a, .offset = offset };
	int err = x->cl.sample(x->cl.sample_arg, &ev, d ? NULL : &x->rec);
	chunk_put(x, e);
	return err;
}

/* a record that is not a sample (decoded as the feed does) */
static int deliver_other(struct rx *x, const struct pk_data_event *ev)
{
	const struct perf_event_header *h = ev->hdr;
	const struct pk_data_attr *a = ev->attr;
	x->z = false;
	bool ok = h->type < 64 && h->type &&
		  !pk_record__decode(a && a->layout_ok ? &a->layout : NULL, h, &x->rec, NULL);
	return x->cl.other(x->cl.other_arg, ev, ok ? &x->rec : NULL);
}

static int deliver_queued_other(struct rx *x, const struct rx_ent *e)
{
	struct pk_data_event ev = { .hdr = e->hdr, .attr = e->attr,
				    .offset = ent_offset(x, e) };
	int err = deliver_other(x, &ev);
	chunk_put(x, e);
	return err;
}

/* (time, seq) order */
static inline bool key_le(uint64_t t, uint64_t s, uint64_t lt, uint64_t ls)
{
	return t < lt || (t == lt && s <= ls);
}

static int ent_cmp(const void *pa, const void *pb)
{
	const struct rx_ent *a = pa, *b = pb;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/*
 * Deliver every queued record with (time, seq) <= (lt, ls), as the ordered queue would
 * order them against each other where it matters: the other records in (time, seq)
 * order, each sample before the first of them that is later than it.
 */
static int flush(struct rx *x, uint64_t lt, uint64_t ls)
{
	/* the other records of the flush, sorted; the rest stay in arrival order */
	size_t m = 0, keep = 0;
	for (size_t i = 0; i < x->nr_oth; i++)
		m += key_le(x->oth[i].time, x->oth[i].seq, lt, ls);
	if (m) {
		if (pk_grow((void **)&x->tmp, &x->cap_tmp, m, sizeof(*x->tmp)) ||
		    pk_grow((void **)&x->cnt, &x->cap_cnt, m + 2, sizeof(*x->cnt)))
			return -ENOMEM;
		size_t k = 0;
		for (size_t i = 0; i < x->nr_oth; i++) {
			const struct rx_ent *e = &x->oth[i];
			if (key_le(e->time, e->seq, lt, ls))
				x->tmp[k++] = *e;
			else
				x->oth[keep++] = *e;
		}
		x->nr_oth = keep;
		qsort(x->tmp, m, sizeof(*x->tmp), ent_cmp);
	}
	uint64_t maxt = m ? x->tmp[m - 1].time : 0;
	bool any = m > 0;
	int err = 0;
	size_t i = 0;
	keep = 0;
	if (!m) {
		/* one stretch: the samples as they came */
		for (; i < x->nr_smp; i++) {
			const struct rx_ent *e = &x->smp[i];
			if (i + 8 < x->nr_smp)
				__builtin_prefetch(x->smp[i + 8].hdr);
			if (!key_le(e->time, e->seq, lt, ls)) {
				x->smp[keep++] = *e;
				continue;
			}
			x->bytes -= pk_align_up(e->hdr->size, 8);
			maxt = any && maxt > e->time ? maxt : e->time;
			any = true;
			if ((err = deliver_sample(x, e, ent_offset(x, e))) != 0) {
				i++;
				break;
			}
		}
		/* (after an error the rest stays queued; nothing more is delivered) */
		for (; i < x->nr_smp; i++)
			x->smp[keep++] = x->smp[i];
		x->nr_smp = keep;
		goto out;
	}
	/* the flushed samples move to fl (their stretch noted), the kept ones up */
	size_t n = 0;
	for (; i < x->nr_smp; i++)
		n += key_le(x->smp[i].time, x->smp[i].seq, lt, ls);
	if (pk_grow((void **)&x->fl, &x->cap_fl, n, sizeof(*x->fl)) ||
	    pk_grow((void **)&x->flb, &x->cap_flb, n, sizeof(*x->flb)) ||
	    pk_grow((void **)&x->order, &x->cap_order, n, sizeof(*x->order)))
		return -ENOMEM;
	memset(x->cnt, 0, (m + 2) * sizeof(*x->cnt));
	n = 0;
	const struct rx_ent *o = x->tmp;
	size_t b = 0;
	for (i = 0; i < x->nr_smp; i++) {
		struct rx_ent *e = &x->smp[i];
		if (!key_le(e->time, e->seq, lt, ls)) {
			x->smp[keep++] = *e;
			continue;
		}
		/* the stretch: others o[0..b) before the sample, o[b..m) after; samples come
		 * nearly in time order, so first the previous sample's stretch */
		if ((b && !key_le(o[b - 1].time, o[b - 1].seq, e->time, e->seq)) ||
		    (b < m && key_le(o[b].time, o[b].seq, e->time, e->seq)))
			b = PK_UPPER_BOUND(m, key_le(o[mid].time, o[mid].seq, e->time, e->seq));
		x->flb[n] = (uint32_t)b;
		x->cnt[b + 1]++;
		x->fl[n++] = *e;
	}
	x->nr_smp = keep;
	/* a stable counting sort by stretch: order[] holds indexes into fl */
	for (size_t k = 1; k <= m + 1; k++)
		x->cnt[k] += x->cnt[k - 1];
	for (size_t j = 0; j < n; j++)
		x->order[x->cnt[x->flb[j]]++] = j;
	/* (cnt[b] is now the end of stretch b) */
	size_t j = 0;
	for (b = 0; b <= m && !err; b++) {
		for (; j < x->cnt[b] && !err; j++) {
			const struct rx_ent *e = &x->fl[x->order[j]];
			x->bytes -= pk_align_up(e->hdr->size, 8);
			maxt = maxt > e->time ? maxt : e->time;
			err = deliver_sample(x, e, ent_offset(x, e));
		}
		if (b < m && !err) {
			x->bytes -= pk_align_up(x->tmp[b].hdr->size, 8);
			err = deliver_queued_other(x, &x->tmp[b]);
		}
	}
out:
	if (any && (!x->any_flushed || maxt > x->last_flushed))
		x->last_flushed = maxt;
	x->any_flushed |= any;
	return err;
}

/* the ordered queue's early flush: the oldest half of what is queued */
static int flush_half(struct rx *x)
{
	size_t n = x->nr_smp + x->nr_oth;
	struct rx_ent *all = malloc(n * sizeof(*all));
	if (!all)
		return -ENOMEM;
	if (x->nr_smp) /* (an empty array may be NULL) */
		memcpy(all, x->smp, x->nr_smp * sizeof(*all));
	if (x->nr_oth)
		memcpy(all + x->nr_smp, x->oth, x->nr_oth * sizeof(*all));
	qsort(all, n, sizeof(*all), ent_cmp);
	const struct rx_ent *lim = &all[(n + 1) / 2 - 1];
	uint64_t lt = lim->time, ls = lim->seq;
	free(all);
	x->st.early_flushes++;
	return flush(x, lt, ls);
}

/* queue a record with a time (a copy if it is not in the image) */
static int enqueue(struct rx *x, const struct pk_data_event *ev, uint64_t t, bool sample)
{
	struct rx_ent **arr = sample ? &x->smp : &x->oth;
	size_t *nr = sample ? &x->nr_smp : &x->nr_oth, *cap = sample ? &x->cap_smp : &x->cap_oth;
	if (*nr == *cap && pk_grow((void **)arr, cap, *nr + 1, sizeof(**arr)))
		return -ENOMEM;
	struct rx_ent *e = &(*arr)[*nr];
	*e = (struct rx_ent){ .hdr = ev->hdr, .attr = ev->attr, .time = t, .seq = x->seq++ << 1 };
	if (!in_image(x, ev->hdr)) {
		int err = chunk_copy(x, ev->hdr, ev->offset, e);
		if (err)
			return err;
	}
	(*nr)++;
	x->bytes += pk_align_up(ev->hdr->size, 8);
	if (x->bytes > x->st.max_queued_bytes)
		x->st.max_queued_bytes = x->bytes;
	return 0;
}

/* the lowest image offset still queued (dflt if none) */
static uint64_t low_water(const struct rx *x, uint64_t dflt)
{
	uint64_t lw = dflt;
	if (x->nr_smp && !(x->smp[0].seq & RX_COPY))
		lw = PK_MIN(lw, ent_offset(x, &x->smp[0]));
	for (size_t i = 0; i < x->nr_oth; i++)
		if (!(x->oth[i].seq & RX_COPY))
			lw = PK_MIN(lw, ent_offset(x, &x->oth[i]));
	return lw;
}

/* the timestamp of a record (pk_ordered__timestamp) */
static inline uint64_t rec_time(const struct perf_event_header *h, const struct pk_data_attr *a)
{
	if (!a || !a->layout_ok || h->type >= 64)
		return NO_TIME;
	const struct pk_sample_layout *l = &a->layout;
	if (!(l->sample_type & PERF_SAMPLE_TIME))
		return NO_TIME;
	if (h->type == PERF_RECORD_SAMPLE) {
		size_t pos = (size_t)pk_sample_time_pos(l->sample_type);
		return pos < (h->size - sizeof(*h)) / 8 ? ((const uint64_t *)(h + 1))[pos] : NO_TIME;
	}
	return pk_ordered__timestamp(h, a);
}

/* one record as read */
static int one(struct rx *x, const struct pk_data_event *ev)
{
	const struct perf_event_header *h = ev->hdr;
	int err;
	if (h->type == PK_RECORD_FINISHED_ROUND) {
		x->st.rounds++;
		x->st.immediate++;
		if ((err = flush(x, x->next_flush, UINT64_MAX)) != 0)
			return err;
		x->next_flush = x->max_time;
		return deliver_other(x, ev);
	}
	uint64_t t = rec_time(h, ev->attr);
	if (t == NO_TIME) {
		x->st.immediate++;
		if (h->type != PERF_RECORD_SAMPLE)
			return deliver_other(x, ev);
		struct rx_ent e = { .hdr = h, .attr = ev->attr };
		return deliver_sample(x, &e, ev->offset);
	}
	x->st.queued++;
	if (x->any_flushed && t < x->last_flushed)
		x->st.out_of_order++;
	if (t > x->max_time)
		x->max_time = t;
	if ((err = enqueue(x, ev, t, h->type == PERF_RECORD_SAMPLE)) != 0)
		return err;
	if (x->bytes > x->max_bytes && x->nr_smp + x->nr_oth > 1 && (err = flush_half(x)) != 0)
		return err;
	return 0;
}

/* one(), for a sample of a span (in the image, aligned, its size a multiple of 8) with
 * a time: 0 queued, < 0 an error, 1 not such a sample (one() takes it) */
static inline int sample_fast(struct rx *x, const struct pk_data_event *ev)
{
	const struct perf_event_header *h = ev->hdr;
	if (ev->attr != x->ta) {
		const struct pk_data_attr *a = ev->attr;
		x->ta = a;
		x->tpos = a->layout_ok && (a->layout.sample_type & PERF_SAMPLE_TIME)
				  ? (int)pk_sample_time_pos(a->layout.sample_type) : -1;
	}
	if (x->tpos < 0 || (size_t)x->tpos >= (h->size - sizeof(*h)) / 8 ||
	    x->nr_smp == x->cap_smp)
		return 1;
	uint64_t t = ((const uint64_t *)(h + 1))[x->tpos];
	if (t == NO_TIME)
		return 1;
	x->st.queued++;
	if (x->any_flushed && t < x->last_flushed)
		x->st.out_of_order++;
	if (t > x->max_time)
		x->max_time = t;
	x->smp[x->nr_smp++] = (struct rx_ent){ .hdr = h, .attr = ev->attr, .time = t,
					       .seq = x->seq++ << 1 };
	x->bytes += h->size;
	if (x->bytes > x->st.max_queued_bytes)
		x->st.max_queued_bytes = x->bytes;
	if (x->bytes > x->max_bytes && x->nr_smp + x->nr_oth > 1)
		return flush_half(x);
	return 0;
}

/* a span is walked twice, by the reader (sizes) and here: small enough to stay in the
 * first-level cache in between (256 KiB spans: the header loads here missed it,
 * deep.data's reading thread 1 ms more) */
#define RX_SPAN ((size_t)32 << 10)

static int run(struct rx *x)
{
	void (*progress)(void *, uint64_t, uint64_t) = x->cl.progress;
	void *pctx = x->cl.progress_arg;
	struct pk_data_event ev;
	uint64_t nrec = 0;
	int err;
	for (;;) {
		/* the plain records of the image in spans; the rest through the reader */
		const uint8_t *p;
		uint64_t off;
		size_t len = pk_rd_next_span(x->r, RX_SPAN, &p, &off);
		if (len) {
			bool one_attr = pk_data_reader__nr_attrs(x->r) == 1;
			const struct pk_data_attr *a0 = pk_data_reader__attr(x->r, 0);
			memset(&ev, 0, sizeof(ev));
			for (size_t at = 0; at < len;) {
				const struct perf_event_header *h = (const void *)(p + at);
				ev.hdr = h;
				ev.attr = h->type >= 64 ? NULL
					  : one_attr ? a0 : pk_rd_span_attr(x->r, h);
				ev.offset = off + at;
				at += h->size;
				if (h->type == PERF_RECORD_SAMPLE && ev.attr &&
				    (err = sample_fast(x, &ev)) <= 0) {
					if (err)
						return err;
				} else if ((err = one(x, &ev)) != 0) {
					return err;
				}
				if (progress && !(++nrec & 0xffff))
					progress(pctx, ev.offset, nrec);
			}
		} else {
			if ((err = pk_data_reader__next(x->r, &ev)) <= 0)
				break;
			if ((err = one(x, &ev)) != 0)
				return err;
			if (progress && !(++nrec & 0xffff))
				progress(pctx, ev.offset, nrec);
		}
		if (x->img && ev.offset >= x->lw_next) {
			pk_data_reader__release_before(x->r, low_water(x, ev.offset));
			x->lw_next = ev.offset + RX_LOW_WATER_STEP;
		}
	}
	/* the end, or an error of the reader: what was read before it is delivered */
	int ferr = flush(x, UINT64_MAX, UINT64_MAX);
	return ferr ? ferr : err;
}

int pk_session_relaxed(struct pk_data_reader *r, size_t max_bytes, bool prefix,
		       const struct pk_rx_client *cl, struct pk_ordered_stats *st)
{
	struct rx *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->r = r;
	x->img = pk_data_reader__image(r, &x->img_len);
	x->cl = *cl;
	x->prefix = prefix;
	x->little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	x->max_bytes = max_bytes ? max_bytes : RX_DEFAULT_MAX_BYTES;
	x->cur = SIZE_MAX;
	int err = run(x);
	if (st) {
		x->st.sz = sizeof(x->st);
		*st = x->st;
	}
	for (size_t i = 0; i < x->nr_chunks; i++)
		free(x->chunks[i].mem);
	free(x->chunks);
	pk_arr_free(x->smp, x->cap_smp * sizeof(*x->smp));
	pk_arr_free(x->oth, x->cap_oth * sizeof(*x->oth));
	pk_arr_free(x->tmp, x->cap_tmp * sizeof(*x->tmp));
	pk_arr_free(x->fl, x->cap_fl * sizeof(*x->fl));
	pk_arr_free(x->flb, x->cap_flb * sizeof(*x->flb));
	pk_arr_free(x->order, x->cap_order * sizeof(*x->order));
	pk_arr_free(x->cnt, x->cap_cnt * sizeof(*x->cnt));
	free(x);
	return err;
}
