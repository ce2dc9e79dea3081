/* SPDX-License-Identifier: MIT */
/*
 * lib/report/feed.c - the time-ordered record stream of a report, read on a second
 * thread.
 *
 * Reading and re-sorting records by time (pk_ordered) are about a third of a report's
 * work and need nothing of the aggregation's state, so with two CPUs a reader thread does
 * them while the caller decodes and aggregates. The reader puts each record's event (a
 * pointer into the mmapped file, or into the batch's byte area for a copy, and its attr)
 * into a batch and hands full batches over; the consumer decodes each record as it takes
 * it, and sees exactly the sequence that pk_ordered__next would give, so the result does
 * not depend on the thread. (The reader used to decode too, into 488-byte items: the
 * consumer then pulled eight cache lines per record from the other CPU, where a 48-byte
 * event and the record itself suffice; with a cache-line round trip of 900 ns between
 * the vCPUs of a PVM guest, the threaded report was slower than the single-threaded one.)
 *
 * What the consumer may touch while the reader runs: the items of a batch it was given,
 * and of each attr only what is fixed once the reader is open (idx, attr, layout). The
 * reader's own state (its attr list, names, env, memory image) stays on the reader
 * thread. Input that can add attrs on the way (pipe mode) is read on the caller's thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "feed.h"
#include "internal.h"

#define NR_BATCHES 16
#define BATCH_ITEMS 1024
#define BATCH_BYTES ((size_t)512 << 10) /* several times the largest record (64 KiB) */

/* Each part written by one thread alone starts a cache line of its own: a line written by
 * one CPU and read by the other travels between them at every change (measured: 900 ns
 * for a round trip between the two vCPUs of a PVM guest). The consumer's position used to
 * share the line the reader polls while it waits: every item the consumer took cost the
 * reader's next poll, and the consumer's next item, a transfer. */
#define LINE 64

struct batch {
	struct pk_data_event items[BATCH_ITEMS];
	_Alignas(LINE) size_t n;
	uint8_t *buf;
	size_t used;
	int status;             /* after the items: 0 more batches, 1 end, < 0 error */
	uint64_t min_ref;       /* lowest image offset of a record referenced, not copied */
	uint64_t seq_end;       /* pk_ordered_delivered after the batch was filled */
};

struct pk_feed {
	struct pk_data_reader *r;
	struct pk_ordered *q;
	bool threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *b;        /* NR_BATCHES */
	_Alignas(LINE) atomic_size_t filled; /* batches handed over (monotonic; written by
				              * the reader) */
	_Alignas(LINE) atomic_size_t consumed; /* batches given back (monotonic; written by
						* the consumer) */
	atomic_bool stop;       /* the consumer quit early */
	_Alignas(LINE) atomic_int sleepers; /* threads about to wait or waiting on cv */
	atomic_size_t wake_at;  /* the reader, asleep on a full ring, wants waking when
				 * consumed reaches this (see reader_sleep) */
	/* consumer position */
	_Alignas(LINE) struct batch *cur;
	size_t pos;
	int end;                /* 0 running, 1 end, < 0 error: nothing more */
	/* the consumer's decoded record (single-threaded: the caller's thread reads too) */
	struct pk_feed_item one;
	bool sample_prefix;     /* samples: the fixed fields only (pk_feed_sample_prefix) */
	/* how the reader thread waited (written by it alone, read after the join) */
	struct pk_feed_waits waits;
};

/*
 * Hand-over between the threads: each side publishes its counter with an atomic store
 * and waits for the other's by spinning first, for up to SPIN_NS (a batch takes the other
 * side some 50-500 us; sleeping on the condition variable and being woken costs a
 * system call, an IPI to a halted virtual CPU and a reschedule: a spin bounded by a count
 * of 2000 pauses, ~30 us on a recent AMD core, ended in some 500 sleeps per report),
 * then sleeping. A waker takes the mutex only when the other side announced it is about
 * to sleep (sleepers, sequentially consistent with the counters, so a wake-up cannot be
 * missed).
 */
#define SPIN_NS 2000000u

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void feed_wake(struct pk_feed *f)
{
	if (atomic_load(&f->sleepers)) {
		pthread_mutex_lock(&f->mu);
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
	}
}

/* the reader may fill batch k (or must stop) */
static bool reader_may(struct pk_feed *f, size_t k)
{
	return atomic_load(&f->stop) || k - atomic_load(&f->consumed) < NR_BATCHES;
}

/* the consumer has a batch to read */
static bool consumer_may(struct pk_feed *f)
{
	return atomic_load(&f->filled) > atomic_load_explicit(&f->consumed, memory_order_relaxed);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void feed_wait(struct pk_feed *f, bool (*ok)(struct pk_feed *, size_t), size_t k)
{
	uint64_t t0 = 0;
	for (unsigned i = 0;; i++) {
		if (ok(f, k))
			return;
		cpu_relax();
		if (!(i & 63)) {
			uint64_t t = mono_ns();
			if (!t0)
				t0 = t;
			else if (t - t0 > SPIN_NS)
				break;
		}
	}
	pthread_mutex_lock(&f->mu);
	atomic_fetch_add(&f->sleepers, 1);
	while (!ok(f, k))
		pthread_cond_wait(&f->cv, &f->mu);
	atomic_fetch_sub(&f->sleepers, 1);
	pthread_mutex_unlock(&f->mu);
}

static bool consumer_may_k(struct pk_feed *f, size_t k)
{
	(void)k;
	return consumer_may(f);
}

/* Items are written with streaming stores (pk_copy_streaming): the consumer read the same
 * lines a few batches ago; the reader thread spent most of its time fetching them back
 * before its ordinary stores. */
/* Decode the item's record. A sample decoded into an item whose last decode was a sample
 * of the same layout only writes the fields of that layout: clearing the whole decoded
 * record (416 bytes) first was a third of the reader thread's time on call-graph files,
 * the item's cache lines having last been read by the other thread. */
static void decode_item(struct pk_feed_item *it, bool prefix)
{
	const struct perf_event_header *hdr = it->ev.hdr;
	const struct pk_data_attr *a = it->ev.attr;
	const struct pk_sample_layout *l = a && a->layout_ok ? &a->layout : NULL;
	bool again = it->z && l && hdr->type == PERF_RECORD_SAMPLE &&
		     it->ztype == l->sample_type && it->zflags == l->flags;
	it->dec = 1;
	it->z = false;
	if (hdr->type >= 64 || !hdr->type)
		return;
	int d;
	if (prefix && hdr->type == PERF_RECORD_SAMPLE)
		d = pk_record_decode_sample_prefix(l, hdr, &it->rec, again);
	else
		d = again ? pk_record_decode_sample_again(l, hdr, &it->rec)
			  : pk_record__decode(l, hdr, &it->rec, NULL);
	it->dec = d != 0;
	if (!d && hdr->type == PERF_RECORD_SAMPLE) {
		it->z = true;
		it->ztype = l->sample_type;
		it->zflags = l->flags;
	}
}

/*
 * Records that lie in the reader's memory image (an mmapped file) are referenced, not
 * copied (a DWARF sample carries kilobytes of stack: copying them was 15 % of the reader):
 * the image is read-only and stays mapped, and the ordered queue is told to keep the pages
 * of every batch not yet given back (pages it gives back would only be read in again).
 * Everything else (decompressed records, the queue's own copies) is copied.
 */
/* The reader may fill batch k once half the ring is free again. */
static bool reader_may_half(struct pk_feed *f, size_t k)
{
	return atomic_load(&f->stop) || k - atomic_load(&f->consumed) <= NR_BATCHES / 2;
}

/*
 * The ring is full: the consumer has NR_BATCHES batches of work before it needs this
 * thread again, so the reader sleeps at once (no spin) until half of them are given back,
 * and the consumer wakes it only then (one wake-up per NR_BATCHES / 2 batches). A reader
 * that spun here for its SPIN_NS spent as much CPU time as the consumer on a file whose
 * aggregation is the slower side (the bench's xz recording: 0.11 s of CPU against 0.04 s
 * single-threaded); where the CPUs are shared with other work (and with autogroup
 * scheduling, between the two threads of one session) that time was taken from the
 * consumer: the threaded report was 1.6-1.8x slower than the single-threaded one on a
 * loaded 2-CPU machine.
 */
static void reader_sleep(struct pk_feed *f, size_t k)
{
	__atomic_fetch_add(&f->waits.full_sleeps, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&f->mu);
	atomic_store(&f->wake_at, k - NR_BATCHES / 2);
	atomic_fetch_add(&f->sleepers, 1);
	while (!reader_may_half(f, k))
		pthread_cond_wait(&f->cv, &f->mu);
	atomic_fetch_sub(&f->sleepers, 1);
	pthread_mutex_unlock(&f->mu);
}

static void *reader_main(void *arg)
{
	struct pk_feed *f = arg;
	size_t img_len = 0;
	const uint8_t *img = pk_data_reader__image(f->r, &img_len);
	for (size_t k = 0;; k++) {
		struct batch *b = &f->b[k % NR_BATCHES];
		if (k >= NR_BATCHES && !reader_may(f, k))
			reader_sleep(f, k);
		if (atomic_load(&f->stop))
			return NULL;
		/* the batches the consumer has not given back yet (it may give back more
		 * meanwhile: this is then lower than needed, never higher) */
		uint64_t held = UINT64_MAX;
		size_t c = atomic_load(&f->consumed);
		for (size_t j = c; j < k; j++)
			held = PK_MIN(held, f->b[j % NR_BATCHES].min_ref);
		/* the queue's copies in the batches given back may be reused (batch c - 1's
		 * slot is only rewritten below, if it is batch k's) */
		if (c)
			pk_ordered_done(f->q, f->b[(c - 1) % NR_BATCHES].seq_end);
		size_t n = 0, refd = 0;
		b->used = 0;
		b->status = 0;
		b->min_ref = UINT64_MAX;
		while (n < BATCH_ITEMS) {
			struct pk_data_event ev;
			/* room for the largest record (header.size is 16 bits) or the batch ends;
			 * records referenced in the image count too: what the batches hold
			 * of the mapping stays resident (16 batches of DWARF samples with 4
			 * KiB stacks each held 64 MiB of the file) */
			if (b->used + refd + ((size_t)1 << 16) > BATCH_BYTES)
				break;
			pk_ordered_hold(f->q, PK_MIN(held, b->min_ref));
			int err = pk_ordered__next(f->q, f->r, &ev);
			if (err <= 0) {
				b->status = err < 0 ? err : 1;
				break;
			}
			size_t sz = ev.hdr->size;
			struct pk_data_event *it = &b->items[n++];
			const uint8_t *p = (const uint8_t *)ev.hdr;
			ev.payload = NULL; /* the reader's memory: not the consumer's */
			if (img && p >= img && (size_t)(p - img) <= img_len &&
			    img_len - (size_t)(p - img) >= sz && !((uintptr_t)p & 7)) {
				b->min_ref = PK_MIN(b->min_ref, (uint64_t)(p - img));
				refd += sz;
			} else if (pk_ordered_last_in_chunk(f->q)) {
				refd += sz; /* the queue's copy: kept until given back */
			} else {
				memcpy(b->buf + b->used, ev.hdr, sz);
				ev.hdr = (const struct perf_event_header *)(b->buf + b->used);
				b->used += pk_align_up(sz, 8);
			}
			pk_copy_streaming(it, &ev, sizeof(ev));
		}
		b->n = n;
		b->seq_end = pk_ordered_delivered(f->q);
		pk_store_fence();
		f->waits.batches = k + 1;
		atomic_store(&f->filled, k + 1);
		feed_wake(f);
		if (b->status)
			return NULL;
	}
}

int pk_feed__start(struct pk_feed **out, struct pk_data_reader *r, bool threaded,
		   size_t max_bytes)
{
	struct pk_feed *f = aligned_alloc(LINE, sizeof(*f));
	if (!f)
		return -ENOMEM;
	memset(f, 0, sizeof(*f));
	f->r = r;
	PK_OPTS(pk_ordered_opts, qo, .max_bytes = max_bytes);
	f->q = pk_ordered__new(&qo);
	if (!f->q) {
		free(f);
		return -ENOMEM;
	}
	/* a pipe's rounds are what one drain of the rings brings (a live session, perfkit
	 * top: tens of KB): smaller chunks, fewer pages held */
	if (pk_data_reader__is_pipe(r))
		pk_ordered_chunk_size(f->q, 128 * 1024);
	if (threaded && !pk_data_reader__is_pipe(r)) {
		f->b = aligned_alloc(LINE, NR_BATCHES * sizeof(*f->b));
		bool ok = f->b != NULL;
		if (ok) {
			pk_mem_prefault(f->b, NR_BATCHES * sizeof(*f->b));
			memset(f->b, 0, NR_BATCHES * sizeof(*f->b));
		}
		for (size_t i = 0; ok && i < NR_BATCHES; i++)
			ok = (f->b[i].buf = malloc(BATCH_BYTES)) != NULL;
		if (ok && !pthread_mutex_init(&f->mu, NULL)) {
			if (!pthread_cond_init(&f->cv, NULL)) {
				/* (set before the thread runs; without it the queue would hold
				 * its copies for a consumer that never says it is done) */
				pk_ordered_hold_chunks(f->q, true);
				if (!pthread_create(&f->thread, NULL, reader_main, f)) {
					f->threaded = true;
				} else {
					pthread_cond_destroy(&f->cv);
					pk_ordered_hold_chunks(f->q, false);
				}
			}
			if (!f->threaded)
				pthread_mutex_destroy(&f->mu);
		}
		/* no thread: the caller's thread reads, as without `threaded` */
	}
	*out = f;
	return 0;
}

int pk_feed__next(struct pk_feed *f, const struct pk_feed_item **it)
{
	if (!f->threaded) {
		int err = pk_ordered__next(f->q, f->r, &f->one.ev);
		if (err <= 0)
			return err;
		decode_item(&f->one, f->sample_prefix);
		*it = &f->one;
		return 1;
	}
	for (;;) {
		if (f->end)
			return f->end < 0 ? f->end : 0;
		if (f->cur && f->pos < f->cur->n) {
			f->one.ev = f->cur->items[f->pos++];
			decode_item(&f->one, f->sample_prefix);
			*it = &f->one;
			return 1;
		}
		if (f->cur) {
			/* done with it: its status says whether more follow */
			int st = f->cur->status;
			f->cur = NULL;
			size_t c = atomic_fetch_add(&f->consumed, 1) + 1;
			/* only the reader can be asleep now (on a full ring: reader_sleep) */
			if (atomic_load(&f->sleepers) && c >= atomic_load(&f->wake_at))
				feed_wake(f);
			if (st) {
				f->end = st;
				continue;
			}
		}
		feed_wait(f, consumer_may_k, 0);
		f->cur = &f->b[atomic_load_explicit(&f->consumed, memory_order_relaxed) % NR_BATCHES];
		f->pos = 0;
	}
}

void pk_feed_sample_prefix(struct pk_feed *f)
{
	f->sample_prefix = true;
}

uint64_t pk_feed_full_sleeps(const struct pk_feed *f)
{
	return __atomic_load_n(&f->waits.full_sleeps, __ATOMIC_RELAXED);
}

void pk_feed__stop(struct pk_feed *f, struct pk_ordered_stats *st)
{
	pk_feed__stop_waits(f, st, NULL);
}

void pk_feed__stop_waits(struct pk_feed *f, struct pk_ordered_stats *st,
			 struct pk_feed_waits *waits)
{
	if (!f)
		return;
	if (f->threaded) {
		atomic_store(&f->stop, true);
		feed_wake(f);
		pthread_join(f->thread, NULL);
		pthread_cond_destroy(&f->cv);
		pthread_mutex_destroy(&f->mu);
	}
	for (size_t i = 0; f->b && i < NR_BATCHES; i++)
		free(f->b[i].buf);
	free(f->b);
	if (st)
		pk_ordered__stats(f->q, st);
	if (waits) {
		*waits = f->waits;
		waits->ring = NR_BATCHES;
	}
	pk_ordered__free(f->q);
	free(f);
}
