/* SPDX-License-Identifier: MIT */
/* lib/record/offcpu.c: the pairing of switch-outs (context-switches samples) and switch-ins
 * (context-switch records) into offcpu-time samples, and of wake-ups into offcpu-waker
 * samples, from hand-made ring bytes. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include <perfkit/perfkit.h>
#include "../../lib/record/record-internal.h"

#define SW_ID 77
#define OUT_ID 0x8000000000000ffcULL
#define MISC_SWITCH_OUT (1u << 13)

static struct perf_event_attr sw_attr(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			PERF_SAMPLE_CALLCHAIN;
	a.sample_id_all = 1;
	a.context_switch = 1;
	return a;
}

/* ring bytes under construction */
struct ring {
	uint64_t buf[4096];
	size_t n; /* u64s */
};

static void put(struct ring *r, uint64_t v)
{
	assert_true(r->n < 4096);
	r->buf[r->n++] = v;
}

static void header(struct ring *r, size_t at, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, (uint16_t)((r->n - at) * 8) };
	memcpy(&r->buf[at], &h, sizeof(h));
}

/* a sched_switch sample: thread `tid` leaves the CPU at `time`, chain kernel + 2 user */
static void out(struct ring *r, uint32_t tid, uint64_t time, uint64_t id)
{
	size_t at = r->n;
	put(r, 0);
	put(r, id);
	put(r, 0xffffffff81000000ULL);
	put(r, (uint64_t)100 | (uint64_t)tid << 32);
	put(r, time);
	put(r, 1); /* cpu 1 */
	put(r, 1);
	put(r, 4);
	put(r, PERF_CONTEXT_KERNEL);
	put(r, 0xffffffff81000000ULL);
	put(r, PERF_CONTEXT_USER);
	put(r, 0x400000 + tid);
	header(r, at, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
}

/* a context-switch record of thread `tid` at `time` (trailer TID, TIME, CPU, IDENTIFIER) */
static void sw(struct ring *r, uint32_t tid, uint64_t time, bool is_out)
{
	size_t at = r->n;
	put(r, 0);
	put(r, (uint64_t)100 | (uint64_t)tid << 32);
	put(r, time);
	put(r, 1);
	put(r, SW_ID);
	header(r, at, PERF_RECORD_SWITCH, is_out ? MISC_SWITCH_OUT : 0);
}

static void rec(struct ring *r, uint32_t type, uint32_t tid, uint64_t time)
{
	size_t at = r->n;
	put(r, 0);
	put(r, (uint64_t)100 | (uint64_t)100 << 32);   /* pid, ppid */
	put(r, (uint64_t)tid | (uint64_t)100 << 32);   /* tid, ptid */
	put(r, time);
	header(r, at, type, 0);
}

/* the bytes passed through (not consumed) */
static uint8_t passed[65536];
static size_t npassed;

static int collect(const void *p, size_t len, void *ctx)
{
	(void)ctx;
	assert_true(npassed + len <= sizeof(passed));
	memcpy(passed + npassed, p, len);
	npassed += len;
	return 0;
}

/* scan the ring as one span, or split at byte `split` into two */
static void scan(struct pk_rec_offcpu *oc, struct ring *r, size_t split)
{
	struct pk_ring_chunk c[2] = { { r->buf, r->n * 8 }, { NULL, 0 } };
	int n = 1;
	if (split && split < r->n * 8) {
		c[0].len = split;
		c[1].ptr = (const uint8_t *)r->buf + split;
		c[1].len = r->n * 8 - split;
		n = 2;
	}
	assert_int_equal(pk_rec_offcpu__scan(oc, c, n, collect, NULL), 0);
	r->n = 0;
}

struct got {
	uint32_t tid;
	uint64_t time, period, nr, user_ip;
};

/* the synthesised samples so far, decoded with the offcpu-time attr */
static size_t output(struct pk_rec_offcpu *oc, const struct pk_attr *oa, struct got *g, size_t max)
{
	struct pk_sample_layout l;
	size_t len, off = 0, n = 0;
	const uint8_t *p = pk_rec_offcpu__output(oc, &len);
	assert_int_equal(pk_sample_layout__init(&l, &oa->attr), 0);
	while (off < len) {
		const struct perf_event_header *h = (const void *)(p + off);
		struct pk_sample s;
		assert_int_equal(pk_sample__decode(&l, h, &s, NULL), 0);
		assert_int_equal(s.id, OUT_ID);
		assert_true(n < max);
		g[n++] = (struct got){ s.tid, s.time, s.period, s.callchain.nr,
				       s.callchain.nr ? s.callchain.ips[s.callchain.nr - 1] : 0 };
		off += h->size;
	}
	pk_rec_offcpu__consumed(oc);
	return n;
}

static struct pk_rec_offcpu *make(uint64_t thresh, struct pk_attr *oa)
{
	struct perf_event_attr a = sw_attr();
	uint64_t id = SW_ID;
	struct pk_rec_offcpu *oc = pk_rec_offcpu__new(&a, &id, 1, thresh, OUT_ID, oa);
	assert_non_null(oc);
	assert_int_equal(oa->attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(oa->attr.config, 10); /* PERF_COUNT_SW_BPF_OUTPUT */
	npassed = 0;
	return oc;
}

static void test_pair(void **state)
{
	(void)state;
	struct pk_attr oa;
	struct pk_rec_offcpu *oc = make(0, &oa);
	struct ring r = { .n = 0 };
	struct got g[8];

	rec(&r, PERF_RECORD_COMM, 5, 50);    /* not ours: passed through */
	out(&r, 5, 100, SW_ID);
	sw(&r, 5, 101, true);
	out(&r, 6, 120, SW_ID + 1);          /* another event's sample: passed through */
	sw(&r, 5, 350, false);
	size_t comm = 4 * 8, other = 12 * 8;
	scan(oc, &r, 0);
	assert_int_equal(npassed, comm + other);
	pk_rec_offcpu__flush(oc, true);
	assert_int_equal(output(oc, &oa, g, 8), 1);
	assert_int_equal(g[0].tid, 5);
	assert_int_equal(g[0].period, 250);
	assert_int_equal(g[0].time, 350);       /* the switch-in */
	assert_int_equal(g[0].nr, 4);           /* the switch-out's chain */
	assert_int_equal(g[0].user_ip, 0x400005);
	uint64_t emitted, dropped, filtered;
	pk_rec_offcpu__stats(oc, &emitted, &dropped, &filtered);
	assert_int_equal(emitted, 1);
	assert_int_equal(filtered, 1);
	pk_rec_offcpu__free(oc);
}

/* a thread that left CPU 0 and came back on CPU 1: the rings are drained one after the
 * other, so the second ring brings the earlier switch-in */
static void test_reordered(void **state)
{
	(void)state;
	struct pk_attr oa;
	struct pk_rec_offcpu *oc = make(0, &oa);
	struct ring r = { .n = 0 };
	struct got g[8];

	out(&r, 7, 100, SW_ID);  /* CPU 0's ring */
	sw(&r, 7, 900, false);
	scan(oc, &r, 0);
	sw(&r, 7, 300, false);   /* CPU 1's ring */
	out(&r, 7, 800, SW_ID);
	scan(oc, &r, 5 * 8 + 8); /* split inside the sample: reassembled */
	pk_rec_offcpu__flush(oc, false);
	/* nothing is older than the previous pass's newest time yet */
	assert_int_equal(output(oc, &oa, g, 8), 0);
	pk_rec_offcpu__flush(oc, true);
	assert_int_equal(output(oc, &oa, g, 8), 2);
	assert_int_equal(g[0].period, 200);
	assert_int_equal(g[1].period, 100);
	pk_rec_offcpu__free(oc);
}

/* horizon: a pass pairs what is older than the previous pass's newest time */
static void test_passes(void **state)
{
	(void)state;
	struct pk_attr oa;
	struct pk_rec_offcpu *oc = make(0, &oa);
	struct ring r = { .n = 0 };
	struct got g[8];

	out(&r, 8, 100, SW_ID);
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, false);
	assert_int_equal(output(oc, &oa, g, 8), 0);
	sw(&r, 8, 400, false);
	out(&r, 8, 450, SW_ID);
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, false);     /* up to 100: the switch-out only */
	assert_int_equal(output(oc, &oa, g, 8), 0);
	sw(&r, 8, 470, false);
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, false);     /* up to 450 */
	assert_int_equal(output(oc, &oa, g, 8), 1);
	assert_int_equal(g[0].period, 300);
	pk_rec_offcpu__flush(oc, true);
	assert_int_equal(output(oc, &oa, g, 8), 1);
	assert_int_equal(g[0].period, 20);
	pk_rec_offcpu__free(oc);
}

static void test_thresh_lost_exit(void **state)
{
	(void)state;
	struct pk_attr oa;
	struct pk_rec_offcpu *oc = make(150, &oa);
	struct ring r = { .n = 0 };
	struct got g[8];
	uint64_t emitted, dropped, filtered;

	out(&r, 9, 100, SW_ID);
	sw(&r, 9, 200, false);   /* 100 ns: under the threshold */
	out(&r, 9, 300, SW_ID);
	sw(&r, 9, 600, false);   /* 300 ns: kept */
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, true);
	assert_int_equal(output(oc, &oa, g, 8), 1);
	assert_int_equal(g[0].period, 300);
	pk_rec_offcpu__stats(oc, &emitted, &dropped, &filtered);
	assert_int_equal(dropped, 1);

	/* a loss between a switch-out and its switch-in: no interval across it */
	out(&r, 9, 1000, SW_ID);
	size_t at = r.n;
	put(&r, 0);
	put(&r, 1);
	put(&r, 5);
	header(&r, at, PERF_RECORD_LOST, 0);
	sw(&r, 9, 5000, false);
	/* a thread that exits after blocking: closed at its exit (100 ns, under the
	 * threshold here) */
	out(&r, 10, 1000, SW_ID);
	rec(&r, PERF_RECORD_EXIT, 10, 1100);
	sw(&r, 10, 6000, false);
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, true);
	assert_int_equal(output(oc, &oa, g, 8), 0);
	pk_rec_offcpu__free(oc);
}

/* a LOST record with its sample_id (TID, TIME, CPU, IDENTIFIER): the time the kernel
 * wrote it, after the records it lost */
static void lost(struct ring *r, uint64_t time)
{
	size_t at = r->n;
	put(r, 0);
	put(r, SW_ID);
	put(r, 2);                                     /* records lost */
	put(r, (uint64_t)100 | (uint64_t)100 << 32);
	put(r, time);
	put(r, 1);
	put(r, SW_ID);
	header(r, at, PERF_RECORD_LOST, 0);
}

/* Thread 9 leaves at 100 (one ring); another ring loses its switch-in at 200 and its
 * switch-out at 300, writes the LOST record at 400 and then the switch-in at 500: no
 * interval may pair 100 with 500 (it would count 200..300 on the CPU as blocked: the
 * loss used to be placed at the last switch before it in its ring, 60 here, or at 0 at
 * a ring's start, where it cleared nothing). Thread 5's interval before the gap stays. */
static void test_lost_gap(void **state)
{
	(void)state;
	struct pk_attr oa;
	struct got g[8];
	struct ring r = { .n = 0 };

	for (int variant = 0; variant < 4; variant++) {
		bool spool = variant & 1, at_start = variant & 2;
		struct pk_rec_offcpu *oc = make(0, &oa);
		if (spool)
			pk_rec_offcpu__set_spool(oc, 1 << 20);
		out(&r, 9, 100, SW_ID);
		scan(oc, &r, 0);
		if (!at_start) {
			out(&r, 5, 50, SW_ID);
			sw(&r, 5, 60, false);
		}
		lost(&r, 400);
		sw(&r, 9, 500, false);
		scan(oc, &r, 0);
		pk_rec_offcpu__flush(oc, PK_OFFCPU_PASS);
		pk_rec_offcpu__flush(oc, PK_OFFCPU_ALL);
		size_t n = output(oc, &oa, g, 8);
		assert_int_equal(n, at_start ? 0 : 1);
		if (n) {
			assert_int_equal(g[0].tid, 5);
			assert_int_equal(g[0].period, 10);
		}
		pk_rec_offcpu__free(oc);
	}
}

/* a wake-up sample of WK_ID: waker `waker` wakes `wakee` at `time` (raw: the tracepoint's
 * 8 common bytes, comm[16], pid at offset 24) */
#define WK_ID 88
#define WK_OUT 0x8000000000000ffdULL
static void waking(struct ring *r, uint32_t waker, uint32_t wakee, uint64_t time)
{
	size_t at = r->n;
	uint8_t raw[36] = { 0 };
	uint64_t words[5];
	uint32_t size = 36;
	put(r, 0);
	put(r, WK_ID);
	put(r, (uint64_t)waker | (uint64_t)waker << 32);
	put(r, time);
	put(r, 0); /* cpu 0 */
	memcpy(raw + 24, &wakee, 4);
	memcpy(words, &size, 4);
	memcpy((uint8_t *)words + 4, raw, sizeof(raw));
	for (size_t i = 0; i < 5; i++)
		put(r, words[i]);
	header(r, at, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
}

/* intervals still open at the end (closed at the newest time) or at the thread's exit
 * (closed there), and the waker of an interval a recorded wake-up ended */
static void test_open_and_wakers(void **state)
{
	(void)state;
	struct pk_attr oa, wa;
	struct pk_rec_offcpu *oc = make(0, &oa);
	struct perf_event_attr wk;
	uint64_t wid = WK_ID;
	struct ring r = { .n = 0 };

	memset(&wk, 0, sizeof(wk));
	wk.size = sizeof(wk);
	wk.type = PERF_TYPE_TRACEPOINT;
	wk.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	wk.sample_id_all = 1;
	assert_int_equal(pk_rec_offcpu__set_waker(oc, &wk, &wid, 1, 24, 2, WK_OUT, &wa), 0);
	assert_int_equal(wa.attr.type, PERF_TYPE_SOFTWARE);
	assert_true(wa.attr.sample_type & PERF_SAMPLE_RAW);

	out(&r, 14, 5000, SW_ID);
	waking(&r, 50, 14, 5100);
	waking(&r, 51, 99, 5150);      /* a thread not recorded: ignored */
	waking(&r, 52, 11, 5160);      /* in an interrupt: not a waker */
	r.buf[r.n - 5] |= (uint64_t)0x08 << 48; /* common_flags (raw byte 2): HARDIRQ */
	sw(&r, 14, 5200, false);
	out(&r, 13, 4000, SW_ID);
	rec(&r, PERF_RECORD_EXIT, 13, 4500);
	out(&r, 11, 1000, SW_ID);      /* blocked until the end (6000) */
	out(&r, 12, 5500, SW_ID);
	sw(&r, 12, 6000, false);
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, true);

	struct pk_sample_layout lo, lw;
	size_t len, off = 0, nout = 0, nwk = 0;
	uint64_t per[64] = { 0 }, wper = 0;
	uint32_t waker = 0, woken = 0;
	const uint8_t *p = pk_rec_offcpu__output(oc, &len);
	assert_int_equal(pk_sample_layout__init(&lo, &oa.attr), 0);
	assert_int_equal(pk_sample_layout__init(&lw, &wa.attr), 0);
	while (off < len) {
		const struct perf_event_header *h = (const void *)(p + off);
		struct pk_sample s;
		uint64_t id;
		memcpy(&id, h + 1, 8);
		if (id == WK_OUT) {
			assert_int_equal(pk_sample__decode(&lw, h, &s, NULL), 0);
			assert_int_equal(s.raw.size, 12);
			memcpy(&woken, (const uint8_t *)s.raw.data + 4, 4);
			waker = s.tid;
			wper = s.period;
			nwk++;
		} else {
			assert_int_equal(id, OUT_ID);
			assert_int_equal(pk_sample__decode(&lo, h, &s, NULL), 0);
			assert_true(s.tid < 64);
			per[s.tid] = s.period;
			nout++;
		}
		off += h->size;
	}
	assert_int_equal(nout, 4);
	assert_int_equal(per[14], 200);
	assert_int_equal(per[13], 500);  /* closed at its exit */
	assert_int_equal(per[11], 5000); /* closed at the end of the recording */
	assert_int_equal(per[12], 500);
	assert_int_equal(nwk, 1);
	assert_int_equal(waker, 50);
	assert_int_equal(woken, 14);
	assert_int_equal(wper, 200);
	assert_int_equal(pk_rec_offcpu__wakers(oc), 1);
	pk_rec_offcpu__consumed(oc);
	pk_rec_offcpu__free(oc);
}

/* deferred (a spool): a pass only copies; the pairing waits for a batch, a nearly full
 * spool or the end, and gives what the scans would have given at once */
static void spool_passes(struct pk_rec_offcpu *oc, struct ring *r)
{
	out(r, 7, 100, SW_ID);   /* CPU 0's ring */
	sw(r, 7, 101, true);     /* a switch-out record: dropped, the sample says it */
	rec(r, PERF_RECORD_COMM, 7, 102);
	sw(r, 7, 900, false);
	scan(oc, r, 0);
	sw(r, 7, 300, false);    /* CPU 1's ring: the earlier switch-in */
	out(r, 7, 800, SW_ID);
	scan(oc, r, 5 * 8 + 8);
}

static void test_spool(void **state)
{
	(void)state;
	struct pk_attr oa;
	struct got g[8];
	struct ring r = { .n = 0 };

	/* at the end */
	struct pk_rec_offcpu *oc = make(0, &oa);
	pk_rec_offcpu__set_spool(oc, 1 << 20);
	spool_passes(oc, &r);
	assert_int_equal(npassed, 4 * 8);       /* the COMM only */
	pk_rec_offcpu__flush(oc, PK_OFFCPU_PASS);
	assert_int_equal(output(oc, &oa, g, 8), 0);
	uint64_t emitted, dropped, filtered;
	pk_rec_offcpu__stats(oc, &emitted, &dropped, &filtered);
	assert_int_equal(filtered, 0);          /* not even decoded yet */
	pk_rec_offcpu__flush(oc, PK_OFFCPU_ALL);
	assert_int_equal(output(oc, &oa, g, 8), 2);
	assert_int_equal(g[0].period, 200);
	assert_int_equal(g[0].time, 300);
	assert_int_equal(g[0].nr, 4);
	assert_int_equal(g[0].user_ip, 0x400007);
	assert_int_equal(g[1].period, 100);
	pk_rec_offcpu__stats(oc, &emitted, &dropped, &filtered);
	assert_int_equal(emitted, 2);
	assert_int_equal(filtered, 2);
	pk_rec_offcpu__free(oc);

	/* a batch (a rotation) pairs up to the previous flush's newest time, as a pass
	 * does without a spool: here nothing yet, then all at the end */
	oc = make(0, &oa);
	pk_rec_offcpu__set_spool(oc, 1 << 20);
	spool_passes(oc, &r);
	pk_rec_offcpu__flush(oc, PK_OFFCPU_BATCH);
	assert_int_equal(output(oc, &oa, g, 8), 0);
	out(&r, 7, 1000, SW_ID);
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, PK_OFFCPU_BATCH); /* up to 900 */
	assert_int_equal(output(oc, &oa, g, 8), 2);
	pk_rec_offcpu__flush(oc, PK_OFFCPU_ALL);   /* the last one, blocked until the end */
	assert_int_equal(output(oc, &oa, g, 8), 0);
	pk_rec_offcpu__free(oc);

	/* a spool too small for anything: read at the scan, as without one */
	oc = make(0, &oa);
	pk_rec_offcpu__set_spool(oc, 16);
	spool_passes(oc, &r);
	pk_rec_offcpu__flush(oc, PK_OFFCPU_ALL);
	assert_int_equal(output(oc, &oa, g, 8), 2);
	assert_int_equal(g[0].period, 200);
	pk_rec_offcpu__free(oc);
}

/* the ends of the passes are marked in the spool: its replay pairs up to the horizon
 * the passes would have reached (test_passes, deferred) */
static void test_spool_horizon(void **state)
{
	(void)state;
	struct pk_attr oa;
	struct pk_rec_offcpu *oc = make(0, &oa);
	struct ring r = { .n = 0 };
	struct got g[8];

	pk_rec_offcpu__set_spool(oc, 1 << 20);
	out(&r, 8, 100, SW_ID);
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, PK_OFFCPU_PASS);
	sw(&r, 8, 400, false);
	out(&r, 8, 450, SW_ID);
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, PK_OFFCPU_PASS);
	sw(&r, 8, 470, false);
	scan(oc, &r, 0);
	pk_rec_offcpu__flush(oc, PK_OFFCPU_PASS);
	assert_int_equal(output(oc, &oa, g, 8), 0);  /* all spooled */
	pk_rec_offcpu__flush(oc, PK_OFFCPU_BATCH);   /* up to 450, as the third pass */
	assert_int_equal(output(oc, &oa, g, 8), 1);
	assert_int_equal(g[0].period, 300);
	pk_rec_offcpu__flush(oc, PK_OFFCPU_ALL);
	assert_int_equal(output(oc, &oa, g, 8), 1);
	assert_int_equal(g[0].period, 20);
	pk_rec_offcpu__free(oc);
}

/* a spool that fills: replayed in order, the losses still cut intervals */
static void test_spool_full(void **state)
{
	(void)state;
	struct pk_attr oa;
	struct got g[64];
	struct ring r = { .n = 0 };
	struct pk_rec_offcpu *oc = make(0, &oa);
	uint64_t t = 1000;

	pk_rec_offcpu__set_spool(oc, 1024); /* 7 switches */
	for (int i = 0; i < 40; i++) {
		out(&r, 9, t, SW_ID);
		sw(&r, 9, t + 10, false);
		t += 100;
		if (i == 20) {
			out(&r, 9, t, SW_ID); /* a loss between a switch-out and its switch-in */
			size_t at = r.n;
			put(&r, 0);
			put(&r, 1);
			put(&r, 5);
			header(&r, at, PERF_RECORD_LOST, 0);
			sw(&r, 9, t + 50, false);
			t += 100;
		}
		if (i % 10 == 9) { /* 10 switches a pass: more than the spool holds */
			scan(oc, &r, 0);
			pk_rec_offcpu__flush(oc, PK_OFFCPU_PASS);
		}
	}
	pk_rec_offcpu__flush(oc, PK_OFFCPU_ALL);
	size_t n = output(oc, &oa, g, 64);
	assert_int_equal(n, 40);               /* 41 switch-outs, one lost its switch-in */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(g[i].period, 10);
	pk_rec_offcpu__free(oc);
}

/* garbage in the ring: no crash, nothing made of it */
static void test_garbage(void **state)
{
	(void)state;
	struct pk_attr oa;
	struct pk_rec_offcpu *oc = make(0, &oa);
	struct ring r = { .n = 0 };
	struct got g[8];
	srand(1);
	for (int round = 0; round < 200; round++) {
		out(&r, 11, 100, SW_ID);
		sw(&r, 11, 200, false);
		for (size_t i = 0; i < r.n; i++)
			if (rand() % 3 == 0)
				r.buf[i] ^= (uint64_t)rand() << (rand() % 48);
		scan(oc, &r, (size_t)(rand() % 20) * 8);
		pk_rec_offcpu__flush(oc, round % 2);
		(void)output(oc, &oa, g, 8);
		npassed = 0;
	}
	pk_rec_offcpu__free(oc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_reordered),
		cmocka_unit_test(test_passes),
		cmocka_unit_test(test_thresh_lost_exit),
		cmocka_unit_test(test_lost_gap),
		cmocka_unit_test(test_open_and_wakers),
		cmocka_unit_test(test_spool),
		cmocka_unit_test(test_spool_horizon),
		cmocka_unit_test(test_spool_full),
		cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
