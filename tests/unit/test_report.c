/* SPDX-License-Identifier: MIT */
/* lib/report: the time-ordering layer and aggregation on synthetic record streams. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"
#include "session/feed.h"
#include "internal.h"

/* pk_report__add_sample with the fields as arguments */
static int add_sample(struct pk_report *rep, int attr_idx, const char *name, const char *comm,
		      int32_t pid, int32_t tid, int32_t cpu, uint64_t time, uint64_t period,
		      const struct pk_report_frame *frames, size_t nr)
{
	PK_OPTS(pk_report_sample, s, .attr_idx = attr_idx, .name = name, .comm = comm,
		.pid = pid, .tid = tid, .cpu = cpu, .time = time, .period = period,
		.frames = frames, .nr_frames = nr);
	return pk_report__add_sample(rep, &s);
}

/* An attr with IP|TID|TIME samples and sample_id_all (TID|TIME trailer). */
static struct pk_data_attr make_attr(void)
{
	struct pk_data_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.attr.size = sizeof(a.attr.attr);
	a.attr.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.attr.attr.sample_id_all = 1;
	assert_int_equal(pk_sample_layout__init(&a.layout, &a.attr.attr), 0);
	a.layout_ok = true;
	a.id_pos = a.is_pos = -1;
	return a;
}

struct rec {
	uint64_t u[8];
};

/* A SAMPLE: header, ip, pid/tid, time. */
static void make_sample(struct rec *r, uint64_t time, uint32_t tid)
{
	memset(r, 0, sizeof(*r));
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
				       .size = 8 + 3 * 8 };
	memcpy(&r->u[0], &h, 8);
	r->u[1] = 0x1000 + tid;
	r->u[2] = (uint64_t)tid << 32 | tid;
	r->u[3] = time;
}

/* An EXIT record with a TID|TIME trailer. */
static void make_exit(struct rec *r, uint64_t time)
{
	memset(r, 0, sizeof(*r));
	struct perf_event_header h = { .type = PERF_RECORD_EXIT, .size = 8 + 24 + 16 };
	memcpy(&r->u[0], &h, 8);
	r->u[3] = time; /* task.time */
	r->u[4] = 7;    /* trailer pid/tid */
	r->u[5] = time; /* trailer time */
}

static void make_round(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	struct perf_event_header h = { .type = PK_RECORD_FINISHED_ROUND, .size = 8 };
	memcpy(&r->u[0], &h, 8);
}

static int push(struct pk_ordered *q, const struct pk_data_attr *a, const struct rec *r)
{
	struct pk_data_event ev = { .hdr = (const struct perf_event_header *)r, .attr = a };
	return pk_ordered__push(q, &ev);
}

static void test_timestamp(void **state)
{
	(void)state;
	struct pk_data_attr a = make_attr();
	struct rec r;
	make_sample(&r, 12345, 3);
	assert_int_equal(pk_ordered__timestamp((void *)&r, &a), 12345);
	make_exit(&r, 777);
	assert_int_equal(pk_ordered__timestamp((void *)&r, &a), 777);
	assert_int_equal(pk_ordered__timestamp((void *)&r, NULL), (uint64_t)-1);
	make_round(&r);
	assert_int_equal(pk_ordered__timestamp((void *)&r, &a), (uint64_t)-1);
}

/* Records of two "CPUs" interleaved out of order within rounds come out sorted, and
 * only what perf's two-round rule allows is delivered before the end. */
static void test_rounds(void **state)
{
	(void)state;
	struct pk_data_attr a = make_attr();
	struct pk_ordered *q = pk_ordered__new(NULL);
	assert_non_null(q);
	struct rec r;
	struct pk_data_event ev;
	/* round 1: cpu0 10,30  cpu1 20,40 (written cpu by cpu) */
	uint64_t r1[] = { 10, 30, 20, 40 };
	for (size_t i = 0; i < 4; i++) {
		make_sample(&r, r1[i], 1);
		assert_int_equal(push(q, &a, &r), 0);
	}
	make_round(&r);
	assert_int_equal(push(q, &a, &r), 0);
	/* after the first round nothing timed is deliverable yet: only the round record */
	assert_int_equal(pk_ordered__pop(q, &ev), 1);
	assert_int_equal(ev.hdr->type, PK_RECORD_FINISHED_ROUND);
	assert_int_equal(pk_ordered__pop(q, &ev), 0);
	/* round 2: a late record (35) older than round 1's maximum, and newer ones */
	uint64_t r2[] = { 50, 35, 60, 45 };
	for (size_t i = 0; i < 4; i++) {
		make_sample(&r, r2[i], 2);
		assert_int_equal(push(q, &a, &r), 0);
	}
	make_round(&r);
	assert_int_equal(push(q, &a, &r), 0);
	/* now everything <= 40 (round 1's maximum) comes out, sorted: 10 20 30 35 40 */
	uint64_t want[] = { 10, 20, 30, 35, 40 };
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(pk_ordered__pop(q, &ev), 1);
		assert_int_equal(ev.hdr->type, PERF_RECORD_SAMPLE);
		assert_int_equal(pk_ordered__timestamp(ev.hdr, ev.attr), want[i]);
	}
	assert_int_equal(pk_ordered__pop(q, &ev), 1);
	assert_int_equal(ev.hdr->type, PK_RECORD_FINISHED_ROUND);
	assert_int_equal(pk_ordered__pop(q, &ev), 0);
	/* a record without timestamp is delivered at once */
	make_sample(&r, 1, 1);
	struct pk_data_event raw = { .hdr = (void *)&r, .attr = NULL };
	assert_int_equal(pk_ordered__push(q, &raw), 0);
	assert_int_equal(pk_ordered__pop(q, &ev), 1);
	assert_null(ev.attr);
	/* the end flushes the rest in order: 45 50 60 */
	pk_ordered__finish(q);
	uint64_t rest[] = { 45, 50, 60 };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(pk_ordered__pop(q, &ev), 1);
		assert_int_equal(pk_ordered__timestamp(ev.hdr, ev.attr), rest[i]);
	}
	assert_int_equal(pk_ordered__pop(q, &ev), 0);
	struct pk_ordered_stats st = { .sz = sizeof(st) };
	pk_ordered__stats(q, &st);
	assert_int_equal(st.rounds, 2);
	assert_int_equal(st.queued, 8);
	pk_ordered__free(q);
}

/* A burst larger than the arrays an emptied queue gives back (a live stream's first
 * round), emptied, then 20 small rounds (the arrays are given back after 16 of them),
 * then a burst again: still delivered in order, after the arrays were freed and grown
 * again. */
static void test_trim_after_burst(void **state)
{
	(void)state;
	struct pk_data_attr a = make_attr();
	struct pk_ordered *q = pk_ordered__new(NULL);
	assert_non_null(q);
	struct rec r;
	struct pk_data_event ev;
	uint64_t base = 1000;
	for (int pass = 0; pass < 22; pass++) {
		size_t n = pass == 0 || pass == 21 ? 40000 : 50;
		for (size_t i = 0; i < n; i++) {
			/* descending within the burst: every record needs sorting */
			make_sample(&r, base + n - i, (uint32_t)(i & 1));
			assert_int_equal(push(q, &a, &r), 0);
		}
		/* two rounds: the second delivers everything up to the first's maximum */
		make_round(&r);
		assert_int_equal(push(q, &a, &r), 0);
		make_round(&r);
		assert_int_equal(push(q, &a, &r), 0);
		uint64_t last = 0;
		size_t samples = 0;
		while (pk_ordered__pop(q, &ev) == 1) {
			if (ev.hdr->type != PERF_RECORD_SAMPLE)
				continue;
			uint64_t t = pk_ordered__timestamp(ev.hdr, ev.attr);
			assert_true(t > last);
			last = t;
			samples++;
		}
		assert_int_equal(samples, n);
		assert_int_equal(last, base + n);
		base += n + 10;
	}
	pk_ordered__free(q);
}

/* Many rounds of shuffled records: global order holds, memory stays at a couple of
 * rounds; without rounds the byte limit bounds memory. */
static void bounded(size_t chunk)
{
	struct pk_data_attr a = make_attr();
	struct pk_ordered *q = pk_ordered__new(NULL);
	assert_non_null(q);
	pk_ordered_chunk_size(q, chunk);
	struct rec r;
	struct pk_data_event ev;
	uint64_t last = 0, got = 0, t = 0;
	unsigned seed = 1;
	const int per_round = 1000, rounds = 200;
	for (int k = 0; k < rounds; k++) {
		for (int i = 0; i < per_round; i++) {
			/* within a round: times t..t+per_round in a scrambled order */
			seed = seed * 1103515245u + 12345u;
			make_sample(&r, t + (seed >> 8) % per_round, 1);
			assert_int_equal(push(q, &a, &r), 0);
		}
		t += per_round;
		make_round(&r);
		assert_int_equal(push(q, &a, &r), 0);
		while (pk_ordered__pop(q, &ev) == 1) {
			if (ev.hdr->type != PERF_RECORD_SAMPLE)
				continue;
			uint64_t ts = pk_ordered__timestamp(ev.hdr, ev.attr);
			assert_true(ts >= last);
			last = ts;
			got++;
		}
	}
	pk_ordered__finish(q);
	while (pk_ordered__pop(q, &ev) == 1) {
		uint64_t ts = pk_ordered__timestamp(ev.hdr, ev.attr);
		assert_true(ts >= last);
		last = ts;
		got++;
	}
	assert_int_equal(got, (uint64_t)per_round * rounds);
	struct pk_ordered_stats st = { .sz = sizeof(st) };
	pk_ordered__stats(q, &st);
	/* 32-byte records: at most ~3 rounds were ever held, never the whole stream */
	assert_true(st.max_queued_bytes <= (uint64_t)(3 * per_round * 32 + 64));
	pk_ordered__free(q);

	/* no rounds at all: a 64 KiB limit keeps memory bounded (half flushed early) */
	PK_OPTS(pk_ordered_opts, o, .max_bytes = 64 * 1024);
	q = pk_ordered__new(&o);
	assert_non_null(q);
	last = 0;
	got = 0;
	for (int i = 0; i < 100000; i++) {
		make_sample(&r, (uint64_t)i * 10 + (uint64_t)(i % 7), 1);
		assert_int_equal(push(q, &a, &r), 0);
		while (pk_ordered__pop(q, &ev) == 1) {
			uint64_t ts = pk_ordered__timestamp(ev.hdr, ev.attr);
			assert_true(ts >= last);
			last = ts;
			got++;
		}
	}
	pk_ordered__finish(q);
	while (pk_ordered__pop(q, &ev) == 1)
		got++;
	assert_int_equal(got, 100000);
	pk_ordered__stats(q, &st);
	assert_true(st.early_flushes > 0);
	assert_true(st.max_queued_bytes <= 64 * 1024 + 64);
	pk_ordered__free(q);
}

static void test_bounded(void **state)
{
	(void)state;
	bounded(0);
	/* a pipe's chunk size (feed.c), and chunks of a few records each */
	bounded(128 * 1024);
	bounded(100);
}

/* ---- aggregation ---- */

#define FR(d, s) { .dso = d, .sym = s }

static const struct pk_hist_entry *find(const struct pk_hist *h, const char *sym, const char *comm)
{
	for (size_t i = 0; i < h->nr_entries; i++) {
		const struct pk_hist_entry *e = h->entries[i];
		if ((!sym || (e->sym && !strcmp(e->sym, sym))) && (!comm || !strcmp(e->comm, comm)))
			return e;
	}
	return NULL;
}

static void feed(struct pk_report *rep)
{
	/* a: main -> f -> g (3 samples, period 10), main -> f (1, period 10),
	 * b: main -> h (2 samples, period 5), recursion x -> x (1 sample, period 1) */
	const struct pk_report_frame c1[] = { FR("app", "g"), FR("app", "f"), FR("app", "main") };
	const struct pk_report_frame c2[] = { FR("app", "f"), FR("app", "main") };
	const struct pk_report_frame c3[] = { FR("lib.so", "h"), FR("app", "main") };
	const struct pk_report_frame c4[] = { FR("app", "x"), FR("app", "x"), FR("app", "main") };
	for (int i = 0; i < 3; i++)
		assert_int_equal(add_sample(rep, 0, "ev", "a", 1, 1, 0, 100, 10, c1, 3), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "a", 1, 1, 1, 200, 10, c2, 2), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(add_sample(rep, 0, "ev", "b", 2, 2, 1, 300, 5, c3, 2), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "a", 1, 1, 0, 400, 1, c4, 3), 0);
	assert_int_equal(pk_report__finish(rep), 0);
}

static void test_self(void **state)
{
	(void)state;
	PK_OPTS(pk_report_opts, o, .callgraph = true);
	struct pk_report *rep = pk_report__new(&o);
	assert_non_null(rep);
	feed(rep);
	const struct pk_hist *h = pk_report__hist(rep, 0);
	assert_non_null(h);
	assert_int_equal(h->nr_samples, 7);
	assert_int_equal(h->total_period, 51);
	/* self: g 30, f 10, h 10 (comm b), x 1; main never sampled itself */
	assert_int_equal(h->nr_entries, 4);
	assert_string_equal(h->entries[0]->sym, "g");
	assert_int_equal(h->entries[0]->self_period, 30);
	assert_int_equal(h->entries[0]->self_samples, 3);
	assert_int_equal(find(h, "f", NULL)->self_period, 10);
	assert_string_equal(find(h, "h", NULL)->comm, "b");
	assert_string_equal(find(h, "h", NULL)->dso, "lib.so");
	assert_null(find(h, "main", NULL));
	/* callee-order tree under g: g -> f -> main, period 30 */
	const struct pk_callnode *n = h->entries[0]->callchain;
	assert_non_null(n);
	assert_int_equal(n->period, 30);
	assert_string_equal(n->child->sym, "g");
	assert_string_equal(n->child->child->sym, "f");
	assert_string_equal(n->child->child->child->sym, "main");
	assert_int_equal(n->child->child->child->self_period, 30);
	pk_report__free(rep);
}

/* pk_report__entry_key: an entry's value per key as the aggregation tells them apart
 * (what --hierarchy groups by): `main` of comm a and of comm b are one symbol and one
 * object under two comms; g and h two symbols of two objects; a key that is not a sort
 * key, or an entry that is not the report's, is refused */
static void test_entry_key(void **state)
{
	(void)state;
	PK_OPTS(pk_report_opts, o, .callgraph = true, .children = true);
	struct pk_report *rep = pk_report__new(&o);
	assert_non_null(rep);
	feed(rep);
	const struct pk_hist *h = pk_report__hist(rep, 0);
	assert_non_null(h);
	const struct pk_hist_entry *ma = NULL, *mb = NULL;
	for (size_t i = 0; i < h->nr_entries; i++)
		if (h->entries[i]->sym && !strcmp(h->entries[i]->sym, "main"))
			*(strcmp(h->entries[i]->comm, "a") ? &mb : &ma) = h->entries[i];
	assert_non_null(ma);
	assert_non_null(mb);
	const struct pk_hist_entry *g = find(h, "g", NULL), *hh = find(h, "h", NULL);
	assert_non_null(g);
	assert_non_null(hh);
	uint64_t x = 0, y = 0;
	const enum pk_sort_key same[] = { PK_SORT_DSO, PK_SORT_SYM };
	for (size_t k = 0; k < 2; k++) {
		assert_int_equal(pk_report__entry_key(rep, ma, same[k], &x), 0);
		assert_int_equal(pk_report__entry_key(rep, mb, same[k], &y), 0);
		assert_true(x == y);
		assert_int_equal(pk_report__entry_key(rep, g, same[k], &x), 0);
		assert_int_equal(pk_report__entry_key(rep, hh, same[k], &y), 0);
		assert_true(x != y);
	}
	assert_int_equal(pk_report__entry_key(rep, ma, PK_SORT_COMM, &x), 0);
	assert_int_equal(pk_report__entry_key(rep, mb, PK_SORT_COMM, &y), 0);
	assert_true(x != y);
	assert_int_equal(pk_report__entry_key(rep, g, PK_SORT_COMM, &y), 0);
	assert_true(x == y);
	assert_int_equal(pk_report__entry_key(rep, ma, PK_SORT_CPU, &x), -EINVAL);
	struct pk_hist_entry other = *ma;
	assert_int_equal(pk_report__entry_key(rep, &other, PK_SORT_SYM, &x), -EINVAL);
	assert_int_equal(pk_report__entry_key(rep, ma, PK_SORT__MAX, &x), -EINVAL);
	assert_int_equal(pk_report__entry_key(NULL, ma, PK_SORT_SYM, &x), -EINVAL);
	pk_report__free(rep);
}

/* hide_unresolved (perf report -U): a sample whose own frame has no symbol is gone, from
 * the totals too; one with an unresolved caller stays */
static void test_hide_unresolved(void **state)
{
	(void)state;
	for (int hide = 0; hide < 2; hide++) {
		PK_OPTS(pk_report_opts, o, .hide_unresolved = hide);
		struct pk_report *rep = pk_report__new(&o);
		assert_non_null(rep);
		const struct pk_report_frame known[] = { { .sym = "f", .dso = "a.out", .addr = 0x10 },
							 { .dso = "a.out", .addr = 0x99 } };
		const struct pk_report_frame unknown[] = { { .dso = "a.out", .addr = 0x20 } };
		assert_int_equal(add_sample(rep, 0, "ev", "a", 1, 1, 0, 100, 10, known, 2), 0);
		assert_int_equal(add_sample(rep, 0, "ev", "a", 1, 1, 0, 200, 7, unknown, 1), 0);
		assert_int_equal(add_sample(rep, 0, "ev", "a", 1, 1, 0, 300, 7, unknown, 1), 0);
		assert_int_equal(pk_report__finish(rep), 0);
		const struct pk_hist *h = pk_report__hist(rep, 0);
		assert_non_null(h);
		assert_int_equal(h->nr_samples, hide ? 1 : 3);
		assert_int_equal(h->total_period, hide ? 10 : 24);
		assert_int_equal(h->nr_entries, hide ? 1 : 2);
		/* the unresolved entry (period 14) leads unless hidden */
		if (hide)
			assert_string_equal(h->entries[0]->sym, "f");
		else
			assert_null(h->entries[0]->sym);
		pk_report__free(rep);
	}
}

/* the parent key (perf -p): the chain's first symbol matching the regex, NULL ("[other]")
 * without one, [other] sorted last; exclude_other drops those samples, totals kept */
static void test_parent_key(void **state)
{
	(void)state;
	for (int excl = 0; excl < 2; excl++) {
		enum pk_sort_key keys[] = { PK_SORT_PARENT, PK_SORT_SYM };
		PK_OPTS(pk_report_opts, o, .sort = keys, .nr_sort = 2, .parent_regex = "^sys_",
			.exclude_other = excl);
		struct pk_report *rep = pk_report__new(&o);
		assert_non_null(rep);
		const struct pk_report_frame a[] = { { .sym = "f", .dso = "x" }, { .sym = "sys_read", .dso = "x" },
						     { .sym = "sys_outer", .dso = "x" } };
		const struct pk_report_frame b[] = { { .sym = "g", .dso = "x" }, { .sym = "main", .dso = "x" } };
		assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 100, 5, b, 2), 0);
		assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 200, 5, a, 3), 0);
		assert_int_equal(pk_report__finish(rep), 0);
		const struct pk_hist *h = pk_report__hist(rep, 0);
		assert_non_null(h);
		assert_int_equal(h->total_period, 10);
		assert_int_equal(h->nr_entries, excl ? 1 : 2);
		assert_string_equal(h->entries[0]->sym, "f");
		assert_string_equal(h->entries[0]->parent, "sys_read"); /* the innermost (callee order) */
		if (!excl) {
			assert_string_equal(h->entries[1]->sym, "g");
			assert_null(h->entries[1]->parent);
		}
		pk_report__free(rep);
	}
	/* a bad regex is refused */
	enum pk_sort_key k1[] = { PK_SORT_PARENT };
	PK_OPTS(pk_report_opts, bad, .sort = k1, .nr_sort = 1, .parent_regex = "(");
	assert_null(pk_report__new(&bad));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pk_sort_key__parse("parent"), PK_SORT_PARENT);
}

/* the time key (slices of time_quantum), srcfile (the file of each srcline) and socket
 * (no topology without a recording: -1) */
static void test_time_srcfile_socket_keys(void **state)
{
	(void)state;
	enum pk_sort_key kt[] = { PK_SORT_TIME };
	PK_OPTS(pk_report_opts, o, .sort = kt, .nr_sort = 1, .time_quantum = 100000000);
	struct pk_report *rep = pk_report__new(&o);
	assert_non_null(rep);
	const struct pk_report_frame f[] = { { .sym = "f", .dso = "x", .srcline = "a.c:1" } };
	assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 150000000, 2, f, 1), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 199999999, 3, f, 1), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 200000000, 4, f, 1), 0);
	assert_int_equal(pk_report__finish(rep), 0);
	const struct pk_hist *h = pk_report__hist(rep, 0);
	assert_non_null(h);
	assert_int_equal(h->nr_entries, 2);
	assert_int_equal(h->entries[0]->time, 100000000);
	assert_int_equal(h->entries[0]->self_period, 5);
	assert_int_equal(h->entries[1]->time, 200000000);
	assert_int_equal(h->entries[1]->self_period, 4);
	pk_report__free(rep);

	enum pk_sort_key kf[] = { PK_SORT_SRCFILE, PK_SORT_SOCKET };
	PK_OPTS(pk_report_opts, o2, .sort = kf, .nr_sort = 2);
	rep = pk_report__new(&o2);
	assert_non_null(rep);
	const struct pk_report_frame a1[] = { { .sym = "f", .dso = "x", .srcline = "a.c:1" } };
	const struct pk_report_frame a2[] = { { .sym = "g", .dso = "x", .srcline = "a.c:7" } };
	const struct pk_report_frame b[] = { { .sym = "h", .dso = "x", .srcline = "b.c:3" } };
	const struct pk_report_frame u[] = { { .sym = "k", .dso = "x", .srcline = "k+12" } };
	assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 1, 2, a1, 1), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 2, 3, a2, 1), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 3, 4, b, 1), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 4, 1, u, 1), 0);
	assert_int_equal(pk_report__finish(rep), 0);
	h = pk_report__hist(rep, 0);
	assert_non_null(h);
	assert_int_equal(h->nr_entries, 3);
	assert_string_equal(h->entries[0]->srcfile, "a.c");
	assert_int_equal(h->entries[0]->self_period, 5);
	assert_string_equal(h->entries[1]->srcfile, "b.c");
	assert_string_equal(h->entries[2]->srcfile, ""); /* no line: perf's "" */
	assert_int_equal(h->entries[0]->socket, -1);
	pk_report__free(rep);
	assert_int_equal(pk_sort_key__parse("time"), PK_SORT_TIME);
	assert_int_equal(pk_sort_key__parse("socket"), PK_SORT_SOCKET);
	assert_int_equal(pk_sort_key__parse("srcfile"), PK_SORT_SRCFILE);
}

/* ignore_callees (perf --ignore-callees): in callee order the outermost matching frame
 * takes the sample and its callees leave the chain */
static void test_ignore_callees(void **state)
{
	(void)state;
	PK_OPTS(pk_report_opts, o, .callgraph = true, .ignore_callees = "^lock_");
	struct pk_report *rep = pk_report__new(&o);
	assert_non_null(rep);
	const struct pk_report_frame a[] = { { .sym = "spin", .dso = "x" }, { .sym = "lock_inner", .dso = "x" },
					     { .sym = "lock_outer", .dso = "x" }, { .sym = "main", .dso = "x" } };
	const struct pk_report_frame b[] = { { .sym = "spin", .dso = "x" }, { .sym = "main", .dso = "x" } };
	assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 100, 7, a, 4), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "c", 1, 1, 0, 200, 3, b, 2), 0);
	assert_int_equal(pk_report__finish(rep), 0);
	const struct pk_hist *h = pk_report__hist(rep, 0);
	assert_non_null(h);
	assert_int_equal(h->total_period, 10);
	assert_int_equal(h->nr_entries, 2);
	assert_string_equal(h->entries[0]->sym, "lock_outer");
	assert_int_equal(h->entries[0]->self_period, 7);
	assert_string_equal(h->entries[1]->sym, "spin");
	assert_int_equal(h->entries[1]->self_period, 3);
	/* lock_outer's chain: lock_outer -> main, no spin or lock_inner */
	const struct pk_callnode *n = h->entries[0]->callchain;
	assert_non_null(n);
	assert_string_equal(n->child->sym, "lock_outer");
	assert_string_equal(n->child->child->sym, "main");
	assert_null(n->child->child->child);
	pk_report__free(rep);
	PK_OPTS(pk_report_opts, bad, .ignore_callees = "(");
	assert_null(pk_report__new(&bad));
}

/* pk_report__decay: perf top's 7/8 at each refresh, aggregation going on after a finish,
 * and num 0 zeroing the history */
static void test_decay(void **state)
{
	(void)state;
	PK_OPTS(pk_report_opts, o, .callgraph = true);
	struct pk_report *rep = pk_report__new(&o);
	assert_non_null(rep);
	feed(rep);
	assert_int_equal(pk_report__decay(rep, 1, 0), -EINVAL);
	assert_int_equal(pk_report__decay(rep, 9, 8), -EINVAL);
	assert_int_equal(pk_report__decay(NULL, 7, 8), -EINVAL);
	assert_int_equal(pk_report__decay(rep, 7, 8), 0);
	assert_int_equal(pk_report__finish(rep), 0);
	const struct pk_hist *h = pk_report__hist(rep, 0);
	assert_int_equal(h->total_period, 51 * 7 / 8);
	assert_int_equal(h->nr_samples, 7 * 7 / 8);
	assert_string_equal(h->entries[0]->sym, "g");
	assert_int_equal(h->entries[0]->self_period, 30 * 7 / 8);
	assert_int_equal(h->entries[0]->self_samples, 3 * 7 / 8);
	assert_int_equal(find(h, "f", NULL)->self_period, 10 * 7 / 8);
	assert_int_equal(h->entries[0]->callchain->period, 30 * 7 / 8);
	assert_int_equal(h->entries[0]->callchain->child->period, 30 * 7 / 8);
	/* new samples after the decay count in full: f overtakes g */
	const struct pk_report_frame c2[] = { FR("app", "f"), FR("app", "main") };
	for (int i = 0; i < 2; i++)
		assert_int_equal(add_sample(rep, 0, "ev", "a", 1, 1, 1, 500, 10, c2, 2), 0);
	assert_int_equal(pk_report__finish(rep), 0);
	h = pk_report__hist(rep, 0);
	assert_string_equal(h->entries[0]->sym, "f");
	assert_int_equal(h->entries[0]->self_period, 10 * 7 / 8 + 20);
	assert_int_equal(h->total_period, 51 * 7 / 8 + 20);
	/* -z: everything to zero, the entries are dropped */
	assert_int_equal(pk_report__decay(rep, 0, 1), 0);
	assert_int_equal(pk_report__finish(rep), 0);
	h = pk_report__hist(rep, 0);
	assert_int_equal(h->total_period, 0);
	assert_int_equal(h->nr_entries, 0);
	/* entries made again after the drop, one of them dropped again: f of a, f of b (the
	 * same frame in two entries) and h of b stay distinct and are found again, never
	 * made twice */
	const struct pk_report_frame c3[] = { FR("lib.so", "h"), FR("app", "main") };
	for (int i = 0; i < 2; i++)
		assert_int_equal(add_sample(rep, 0, "ev", "a", 1, 1, 1, 600, 10, c2, 2), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "b", 2, 2, 1, 600, 5, c3, 2), 0);
	assert_int_equal(pk_report__finish(rep), 0);
	assert_int_equal(pk_report__hist(rep, 0)->nr_entries, 2);
	assert_int_equal(pk_report__decay(rep, 1, 8), 0); /* f: 20 -> 2, h: 5 -> 0 (dropped) */
	assert_int_equal(pk_report__finish(rep), 0);
	h = pk_report__hist(rep, 0);
	assert_int_equal(h->nr_entries, 1);
	assert_int_equal(h->entries[0]->self_period, 2);
	assert_int_equal(add_sample(rep, 0, "ev", "b", 2, 2, 1, 700, 5, c3, 2), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "b", 2, 2, 1, 700, 10, c2, 2), 0);
	assert_int_equal(add_sample(rep, 0, "ev", "a", 1, 1, 1, 700, 10, c2, 2), 0);
	assert_int_equal(pk_report__finish(rep), 0);
	h = pk_report__hist(rep, 0);
	assert_int_equal(h->nr_entries, 3);
	assert_int_equal(find(h, "f", "a")->self_period, 12);
	assert_int_equal(find(h, "f", "b")->self_period, 10);
	assert_int_equal(find(h, "h", "b")->self_period, 5);
	pk_report__free(rep);
}

static void test_children(void **state)
{
	(void)state;
	PK_OPTS(pk_report_opts, o, .children = true, .callgraph = true);
	struct pk_report *rep = pk_report__new(&o);
	assert_non_null(rep);
	feed(rep);
	const struct pk_hist *h = pk_report__hist(rep, 0);
	/* main: every chain of comm a (30+10+1) ... and comm b is a separate entry (10) */
	const struct pk_hist_entry *ma = find(h, "main", "a"), *mb = find(h, "main", "b");
	assert_non_null(ma);
	assert_non_null(mb);
	assert_int_equal(ma->total_period, 41);
	assert_int_equal(ma->self_period, 0);
	assert_int_equal(mb->total_period, 10);
	/* f: 30 (under g) + 10 (self) */
	assert_int_equal(find(h, "f", NULL)->total_period, 40);
	assert_int_equal(find(h, "f", NULL)->self_period, 10);
	/* recursion counts once per sample */
	assert_int_equal(find(h, "x", NULL)->total_period, 1);
	assert_int_equal(find(h, "x", NULL)->total_samples, 1);
	/* sorted by children: main(a) first */
	assert_ptr_equal(h->entries[0], ma);
	/* caller-order tree of main(a): main -> {f (40) -> g (30)}, x (1) */
	const struct pk_callnode *root = ma->callchain;
	assert_non_null(root);
	assert_string_equal(root->child->sym, "main");
	assert_null(root->child->next);
	const struct pk_callnode *f = root->child->child;
	assert_string_equal(f->sym, "f");
	assert_int_equal(f->period, 40);
	assert_int_equal(f->self_period, 10);
	assert_string_equal(f->child->sym, "g");
	assert_string_equal(f->next->sym, "x");
	pk_report__free(rep);
}

/* perf's entry order on the sort keys comm, dso, sym (ent_cmp with no depth rule) */
static int ref_cmp(const struct pk_hist_entry *a, const struct pk_hist_entry *b, bool children)
{
	uint64_t av = children ? a->total_period : a->self_period;
	uint64_t bv = children ? b->total_period : b->self_period;
	if (av != bv)
		return av > bv ? -1 : 1;
	if (children && a->self_period != b->self_period)
		return a->self_period > b->self_period ? -1 : 1;
	int c = strcmp(a->comm ? a->comm : "", b->comm ? b->comm : "");
	if (!c)
		c = strcmp(a->dso ? a->dso : "", b->dso ? b->dso : "");
	if (c)
		return c;
	if (a->sym && b->sym)
		return strcmp(a->sym, b->sym);
	if (a->sym || b->sym)
		return a->sym ? -1 : 1;
	/* two addresses: perf's output sort ties them, they come in the order of its
	 * collapse tree, by the sign of the difference, which is not transitive (these
	 * addresses are 2^63 apart): no order of neighbours to check */
	return 0;
}

/* Entries tied on the period are ordered by the names as strcmp orders them, whatever
 * order the names were first seen in (the sort compares string ranks, not ids), an
 * unresolved entry after the resolved ones. */
static void test_sort_ties_by_name(void **state)
{
	(void)state;
	static const char *const comms[] = { "zeta", "alpha", "", "mid", "alphabet" };
	static const char *const dsos[] = { "z.so", "a.so", "m.so", "a" };
	static const char *const syms[] = { "zz", NULL, "aa", "m", "", "ab" };
	for (int children = 0; children < 2; children++) {
		PK_OPTS(pk_report_opts, o, .children = children != 0, .callgraph = false);
		struct pk_report *rep = pk_report__new(&o);
		assert_non_null(rep);
		uint32_t x = 12345;
		for (int i = 0; i < 600; i++) {
			x = x * 1103515245u + 12345u;
			struct pk_report_frame fr[2] = {
				{ .dso = dsos[(x >> 8) % 4], .sym = syms[(x >> 12) % 6],
				  .addr = (x & 1) ? 0x8000000000000000ULL + (x >> 20) : x >> 20 },
				{ .dso = dsos[(x >> 16) % 4], .sym = syms[(x >> 18) % 6],
				  .addr = x >> 4 },
			};
			/* periods 1-3: most entries tie with many others */
			assert_int_equal(add_sample(rep, 0, "ev", comms[(x >> 4) % 5], 10, 10 + (x >> 24) % 3,
						    0, (uint64_t)i, 1 + (x >> 28) % 3, fr, 2), 0);
		}
		assert_int_equal(pk_report__finish(rep), 0);
		const struct pk_hist *h = pk_report__hist(rep, 0);
		assert_non_null(h);
		assert_true(h->nr_entries > 50);
		for (size_t i = 1; i < h->nr_entries; i++)
			assert_true(ref_cmp(h->entries[i - 1], h->entries[i], children != 0) <= 0);
		pk_report__free(rep);
	}
}

static void test_sort_keys_and_filters(void **state)
{
	(void)state;
	assert_int_equal(pk_sort_key__parse("symbol"), PK_SORT_SYM);
	assert_int_equal(pk_sort_key__parse("srcline"), PK_SORT_SRCLINE);
	assert_true(pk_sort_key__parse("bogus") < 0);
	assert_string_equal(pk_sort_key__name(PK_SORT_DSO), "dso");

	/* by dso only: app (30+10+1) and lib.so (10) */
	enum pk_sort_key keys[] = { PK_SORT_DSO };
	PK_OPTS(pk_report_opts, o, .sort = keys, .nr_sort = 1);
	struct pk_report *rep = pk_report__new(&o);
	assert_non_null(rep);
	feed(rep);
	const struct pk_hist *h = pk_report__hist(rep, 0);
	assert_int_equal(h->nr_entries, 2);
	assert_string_equal(h->entries[0]->dso, "app");
	assert_int_equal(h->entries[0]->self_period, 41);
	assert_int_equal(h->entries[1]->self_period, 10);
	pk_report__free(rep);

	/* by cpu, then comm */
	enum pk_sort_key k2[] = { PK_SORT_CPU, PK_SORT_COMM };
	PK_OPTS(pk_report_opts, o2, .sort = k2, .nr_sort = 2);
	rep = pk_report__new(&o2);
	feed(rep);
	h = pk_report__hist(rep, 0);
	assert_int_equal(h->nr_entries, 3); /* (0,a) 31, (1,a) 10, (1,b) 10 */
	assert_int_equal(h->entries[0]->cpu, 0);
	assert_int_equal(h->entries[0]->self_period, 31);
	pk_report__free(rep);

	/* filters: pid 2 only; --time window; cpu 0 */
	int32_t pid2 = 2;
	PK_OPTS(pk_report_opts, o3, .pids = &pid2, .nr_pids = 1);
	rep = pk_report__new(&o3);
	feed(rep);
	h = pk_report__hist(rep, 0);
	assert_int_equal(h->nr_entries, 1);
	assert_int_equal(h->nr_filtered, 5);
	assert_int_equal(h->total_period, 51); /* percentages stay relative to everything */
	pk_report__free(rep);

	PK_OPTS(pk_report_opts, o4, .time_start = 150, .time_end = 350);
	rep = pk_report__new(&o4);
	feed(rep);
	h = pk_report__hist(rep, 0);
	assert_int_equal(h->nr_samples - h->nr_filtered, 3);
	pk_report__free(rep);

	const char *syms[] = { "g" };
	PK_OPTS(pk_report_opts, o5, .symbols = syms, .nr_symbols = 1);
	rep = pk_report__new(&o5);
	feed(rep);
	h = pk_report__hist(rep, 0);
	assert_int_equal(h->nr_entries, 1);
	assert_string_equal(h->entries[0]->sym, "g");
	pk_report__free(rep);
}

/* ---- lazily built call-chain trees ---- */

/* a and b have the same fields; b's child lists are complete wherever a has one, and
 * a has one exactly for the root and the nodes with period >= min */
static void same_tree(const struct pk_callnode *a, const struct pk_callnode *b, uint64_t min,
		      bool root)
{
	assert_int_equal(a->period, b->period);
	assert_int_equal(a->samples, b->samples);
	assert_int_equal(a->self_period, b->self_period);
	assert_int_equal(a->addr, b->addr);
	assert_true(a->kernel == b->kernel);
	assert_true((a->sym == NULL) == (b->sym == NULL));
	if (a->sym)
		assert_string_equal(a->sym, b->sym);
	if (!root && a->period < min) {
		assert_null(a->child);
		return;
	}
	if (!a->child && b->child)
		fail_msg("a node at or above the minimum lacks its children");
	/* the children at or above the minimum, in order, then (if the full list has
	 * more) up to two more: the largest of the rest */
	const struct pk_callnode *x = a->child, *y = b->child;
	for (; x && y && (!min || y->period >= min); x = x->next, y = y->next)
		same_tree(x, y, min, false);
	for (int extra = 0; extra < 2 && y; extra++, x = x->next, y = y->next) {
		assert_non_null(x);
		assert_int_equal(x->period, y->period);
		assert_true(x->period < min);
		assert_null(x->child);
	}
	assert_null(x);
}

static void test_lazy_callchains(void **state)
{
	(void)state;
	for (int children = 0; children < 2; children++) {
		PK_OPTS(pk_report_opts, o, .children = children, .callgraph = true);
		PK_OPTS(pk_report_opts, ol, .children = children, .callgraph = true,
			.lazy_callchains = true);
		struct pk_report *full = pk_report__new(&o), *lazy = pk_report__new(&ol);
		assert_non_null(full);
		assert_non_null(lazy);
		feed(full);
		feed(lazy);
		const struct pk_hist *hf = pk_report__hist(full, 0), *hl = pk_report__hist(lazy, 0);
		assert_int_equal(hf->nr_entries, hl->nr_entries);
		const uint64_t mins[] = { 1000, 35, 11, 5, 0 };
		for (size_t m = 0; m < sizeof(mins) / sizeof(mins[0]); m++) {
			/* decreasing minimums: each request builds a more complete tree */
			for (size_t i = 0; i < hl->nr_entries; i++) {
				const struct pk_hist_entry *ef = hf->entries[i], *el = hl->entries[i];
				assert_null(el->callchain);
				assert_int_equal(el->total_period, ef->total_period);
				/* without lazy_callchains it is the entry's own tree */
				assert_ptr_equal(pk_report__callchain(full, ef, mins[m]), ef->callchain);
				const struct pk_callnode *t = pk_report__callchain(lazy, el, mins[m]);
				assert_non_null(t);
				same_tree(t, ef->callchain, mins[m], true);
				/* asked again with a larger minimum: the tree already built */
				assert_ptr_equal(pk_report__callchain(lazy, el, mins[m] + 1), t);
			}
		}
		/* an entry of another report is not ours */
		assert_null(pk_report__callchain(lazy, hf->entries[0], 0));
		pk_report__free(full);
		pk_report__free(lazy);
	}
}

/* ---- records referenced in a mapped file ---- */

/* A perf.data at path with one cpu-clock attr (IP|TID|TIME, id 1), records to follow. */
/* A perf.data writer with one cpu-clock attr (id 1) of the given sample_type. */
static struct pk_data_writer *open_writer_with(const char *path, uint64_t sample_type)
{
	struct pk_attr at;
	pk_test_cpu_clock_attr(&at, 1000, sample_type);
	struct pk_data_writer *w = pk_data_writer__open(path, NULL);
	assert_non_null(w);
	uint64_t id = 1;
	assert_int_equal(pk_data_writer__add_attr(w, &at, "cpu-clock", &id, 1), 0);
	return w;
}

static struct pk_data_writer *open_writer(const char *path)
{
	return open_writer_with(path, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
}

/* A report of the file at path with options o (*rep and *r to free): its first event. */
static const struct pk_hist *report_file(const char *path, const struct pk_report_opts *o,
					 struct pk_report **rep, struct pk_data_reader **r)
{
	*rep = pk_report__new(o);
	*r = pk_data_reader__open(path, NULL);
	assert_non_null(*rep);
	assert_non_null(*r);
	assert_int_equal(pk_report__process(*rep, *r, NULL, NULL), 0);
	const struct pk_hist *h = pk_report__hist(*rep, 0);
	assert_non_null(h);
	return h;
}

#define CHAIN_SAMPLES (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | \
		       PERF_SAMPLE_CALLCHAIN)

static void test_ordered_mapped(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("ordmap");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	struct pk_data_writer *w = open_writer(path);
	/* 4 MiB of samples in rounds of 2000, scrambled inside each round */
	const int per_round = 2000, rounds = 64;
	unsigned seed = 7;
	struct rec r;
	for (int k = 0; k < rounds; k++) {
		for (int i = 0; i < per_round; i++) {
			seed = seed * 1103515245u + 12345u;
			make_sample(&r, (uint64_t)k * per_round + (seed >> 8) % per_round + 1,
				    (uint32_t)i);
			assert_int_equal(pk_data_writer__write_record(w,
					(const struct perf_event_header *)&r), 0);
		}
		assert_int_equal(pk_data_writer__finish_round(w), 0);
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);

	PK_OPTS(pk_data_reader_opts, nm, .no_mmap = true);
	struct pk_data_reader *rm = pk_data_reader__open(path, NULL);
	struct pk_data_reader *rp = pk_data_reader__open(path, &nm);
	assert_non_null(rm);
	assert_non_null(rp);
	size_t ilen = 0;
	const uint8_t *img = pk_data_reader__image(rm, &ilen);
	assert_non_null(img);
	assert_true(ilen > (size_t)per_round * rounds * 32);
	size_t plen = 1;
	assert_null(pk_data_reader__image(rp, &plen));
	assert_int_equal(plen, 0);
	struct pk_ordered *qm = pk_ordered__new(NULL), *qp = pk_ordered__new(NULL);
	struct pk_data_event em, ep;
	uint64_t n = 0, last = 0, inside = 0;
	int a, b;
	while ((a = pk_ordered__next(qm, rm, &em)) > 0) {
		b = pk_ordered__next(qp, rp, &ep);
		assert_int_equal(b, 1);
		/* the same records in the same order, whatever the input kind */
		assert_int_equal(em.hdr->size, ep.hdr->size);
		assert_memory_equal(em.hdr, ep.hdr, em.hdr->size);
		assert_int_equal(em.offset, ep.offset);
		const uint8_t *hp = (const uint8_t *)em.hdr;
		inside += hp >= img && hp < img + ilen;
		if (em.hdr->type == PERF_RECORD_SAMPLE) {
			uint64_t t = pk_ordered__timestamp(em.hdr, em.attr);
			assert_true(t >= last);
			last = t;
			n++;
		}
		if (n == 1000) /* dropping pages still referenced only costs a re-read */
			pk_data_reader__release_before(rm, UINT64_MAX);
	}
	assert_int_equal(a, 0);
	assert_int_equal(pk_ordered__next(qp, rp, &ep), 0);
	assert_int_equal(n, (uint64_t)per_round * rounds);
	/* the mapped reader's records were handed out from the mapping (not copied) */
	assert_true(inside >= n);
	pk_ordered__free(qm);
	pk_ordered__free(qp);
	pk_data_reader__free(rm);
	pk_data_reader__free(rp);
	pk_test_rmtree(dir);
	free(dir);
}

/* ---- the reader thread ---- */

static int pk_online_cpus_for_test(void)
{
	cpu_set_t set;
	return sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
}

/* Expected self period of the no-children entries, by comm ("t1".."t4", "renamed3")
 * and sampled ip (unresolved: keyed by address). */
struct feed_expect {
	uint64_t period[5][4]; /* [tid 1..4, 0 = renamed3][ip variant] */
};

/* A file of `n` samples with 1..3-frame call chains over four threads (in runs of three
 * samples per thread, so that a thread often repeats its last sample exactly), in
 * scrambled rounds, with COMM records (one renaming thread 3 half-way). */
static void write_feed_file(const char *path, int n, struct feed_expect *ex)
{
	struct pk_data_writer *w = open_writer_with(path, CHAIN_SAMPLES);
	memset(ex, 0, sizeof(*ex));
	uint64_t u[32];
	unsigned seed = 11;
	const int per_round = 997;
	/* when thread 3 is renamed (the COMM written at sample n/2) */
	const uint64_t rename_time = (uint64_t)((n / 2) / per_round) * per_round * 10 + 1 +
				     (uint64_t)((n / 2) % per_round) * 10 + 5;
	for (int i = 0; i < n; i++) {
		uint64_t t = (uint64_t)(i / per_round) * per_round * 10 + 1;
		if (i % per_round == 0 || i == n / 2) {
			/* COMM of threads 1..4 ("t1".."t4"; thread 3 becomes "renamed3"); the
			 * times (odd) never tie with a sample's */
			uint64_t ct = t + (uint64_t)(i % per_round) * 10 + 5;
			if (i == n / 2)
				assert_int_equal(ct, rename_time);
			for (uint32_t tid = 1; tid <= 4; tid++) {
				memset(u, 0, sizeof(u));
				struct perf_event_header h = { .type = PERF_RECORD_COMM,
							       .size = 8 + 8 + 16 + 16 };
				memcpy(&u[0], &h, 8);
				u[1] = (uint64_t)tid << 32 | 100;
				snprintf((char *)&u[2], 16, "%s%u",
					 tid == 3 && i >= n / 2 ? "renamed" : "t", tid);
				u[4] = (uint64_t)tid << 32 | 100;
				u[5] = ct;
				assert_int_equal(pk_data_writer__write_record(w,
						(const struct perf_event_header *)u), 0);
			}
		}
		seed = seed * 1103515245u + 12345u;
		uint32_t tid = 1 + (uint32_t)(i / 3) % 4;
		uint32_t v = (seed >> 18) % 4;
		uint32_t nr = 1 + v % 3;
		uint64_t time = t + (uint64_t)((seed >> 5) % per_round) * 10; /* scrambled */
		uint64_t period = 1 + (seed >> 20) % 3;
		memset(u, 0, sizeof(u));
		struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
					       .misc = PERF_RECORD_MISC_USER,
					       .size = (uint16_t)(8 + 5 * 8 + nr * 8) };
		memcpy(&u[0], &h, 8);
		u[1] = 0x400000 + v * 0x10;                            /* ip */
		u[2] = (uint64_t)tid << 32 | 100;                      /* pid 100 */
		u[3] = time;
		u[4] = period;
		u[5] = nr;
		u[6] = u[1];
		for (uint32_t k = 1; k < nr; k++)
			u[6 + k] = 0x500000 + v * 0x100 + k;
		assert_int_equal(pk_data_writer__write_record(w,
				(const struct perf_event_header *)u), 0);
		if (i % per_round == per_round - 1)
			assert_int_equal(pk_data_writer__finish_round(w), 0);
		/* the rename is decided by time: the records are re-sorted by it */
		bool renamed = tid == 3 && time > rename_time;
		ex->period[renamed ? 0 : tid][v] += period;
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
}

/* Every number of a report of `path`, as text (entries in their sorted order). */
static char *report_dump_with(const char *path, bool children, bool no_thread, bool no_mmap,
			      int *perr)
{
	PK_OPTS(pk_report_opts, o, .children = children, .callgraph = true,
		.no_reader_thread = no_thread);
	struct pk_report *rep = pk_report__new(&o);
	assert_non_null(rep);
	/* no_mmap: records are copies of the ordering queue, which the reader thread hands
	 * over by reference (pk_ordered_hold_chunks) */
	PK_OPTS(pk_data_reader_opts, ro, .no_mmap = no_mmap);
	struct pk_data_reader *r = pk_data_reader__open(path, &ro);
	assert_non_null(r);
	*perr = pk_report__process(rep, r, NULL, NULL);
	size_t cap = 1 << 20, len = 0;
	char *out = malloc(cap);
	assert_non_null(out);
	const struct pk_hist *h = pk_report__hist(rep, 0);
	if (h) {
		len += (size_t)snprintf(out + len, cap - len, "%s %llu %llu %zu\n", h->name,
					(unsigned long long)h->nr_samples,
					(unsigned long long)h->total_period, h->nr_entries);
		for (size_t i = 0; i < h->nr_entries && len + 256 < cap; i++) {
			const struct pk_hist_entry *e = h->entries[i];
			len += (size_t)snprintf(out + len, cap - len, "%s %s %s %llx %llu %llu %llu\n",
						e->comm, e->dso, e->sym ? e->sym : "-",
						(unsigned long long)e->addr,
						(unsigned long long)e->self_period,
						(unsigned long long)e->total_period,
						(unsigned long long)e->total_samples);
		}
	}
	pk_report__free(rep);
	pk_data_reader__free(r);
	return out;
}

static char *report_dump(const char *path, bool children, bool no_thread, int *perr)
{
	return report_dump_with(path, children, no_thread, false, perr);
}

static void test_reader_thread(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("feed");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	const int n = 40000;
	struct feed_expect ex;
	write_feed_file(path, n, &ex);
	/* the no-children entries are exactly the expected (comm, ip) self periods: checks
	 * the per-thread repeat cache and the comm cache against an independent count */
	{
		PK_OPTS(pk_report_opts, o, .callgraph = true);
		struct pk_report *rep;
		struct pk_data_reader *r;
		const struct pk_hist *h = report_file(path, &o, &rep, &r);
		size_t nonzero = 0;
		for (int c = 0; c < 5; c++)
			for (int v = 0; v < 4; v++)
				nonzero += ex.period[c][v] != 0;
		assert_int_equal(h->nr_entries, nonzero);
		for (size_t i = 0; i < h->nr_entries; i++) {
			const struct pk_hist_entry *e = h->entries[i];
			int c = !strcmp(e->comm, "renamed3") ? 0 : e->comm[1] - '0';
			assert_true(c >= 0 && c <= 4);
			assert_true(e->addr >= 0x400000 && e->addr < 0x400040);
			assert_int_equal(e->self_period, ex.period[c][(e->addr - 0x400000) / 0x10]);
		}
		pk_report__free(rep);
		pk_data_reader__free(r);
	}
	for (int children = 0; children < 2; children++) {
		int e1, e2;
		char *a = report_dump(path, children, false, &e1);
		char *b = report_dump(path, children, true, &e2);
		assert_int_equal(e1, 0);
		assert_int_equal(e2, 0);
		/* the same report, with or without the reader thread */
		assert_string_equal(a, b);
		/* and read with pread rather than mapped, with or without the thread */
		for (int nt = 0; nt < 2; nt++) {
			int e3;
			char *c = report_dump_with(path, children, nt, true, &e3);
			assert_int_equal(e3, 0);
			assert_string_equal(a, c);
			free(c);
		}
		char head[64];
		snprintf(head, sizeof(head), "cpu-clock %d ", n);
		assert_true(!strncmp(a, head, strlen(head)));
		/* the rename half-way through is seen by the samples after it only */
		assert_non_null(strstr(a, "\nrenamed3 "));
		assert_non_null(strstr(a, "\nt3 "));
		free(a);
		free(b);
	}
	/* a file cut short: both read the same records and report the same error */
	FILE *fp = fopen(path, "r+");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	long size = ftell(fp);
	fclose(fp);
	assert_int_equal(truncate(path, size * 3 / 5), 0);
	int e1, e2;
	char *a = report_dump(path, true, false, &e1);
	char *b = report_dump(path, true, true, &e2);
	assert_int_equal(e1, e2);
	assert_string_equal(a, b);
	free(a);
	free(b);
	if (pk_online_cpus_for_test() < 2)
		print_message("(one CPU: the reader thread was not used)\n");
	pk_test_rmtree(dir);
	free(dir);
}

/* Read path through a threaded feed, sleeping pause_us after every 1024 records; with
 * wait_full, first (after the first record) until the reader has slept on a full ring, at
 * most 20 s. Returns how the reader thread waited for this consumer. */
static struct pk_feed_waits feed_reader_waits(const char *path, unsigned pause_us, bool wait_full,
					      int n_expect)
{
	struct pk_data_reader *r = pk_data_reader__open(path, NULL);
	assert_non_null(r);
	struct pk_feed *f;
	assert_int_equal(pk_feed__start(&f, r, true, 0), 0);
	const struct pk_feed_item *it;
	int err, nr = 0;
	while ((err = pk_feed__next(f, &it)) > 0) {
		if (it->ev.hdr->type == PERF_RECORD_SAMPLE)
			nr++;
		for (int i = 0; wait_full && i < 20000 && !pk_feed_full_sleeps(f); i++)
			usleep(1000);
		wait_full = false;
		if (pause_us && !(nr & 1023))
			usleep(pause_us);
	}
	assert_int_equal(err, 0);
	struct pk_feed_waits w;
	memset(&w, 0xff, sizeof(w));
	pk_feed__stop_waits(f, NULL, &w);
	pk_data_reader__free(r);
	assert_int_equal(nr, n_expect);
	return w;
}

/*
 * A reader far ahead of a slow consumer (the ring of batches full) sleeps rather than
 * spin, and is woken once half the ring is free, not at every batch given back: a
 * spinning reader took as much CPU time as the aggregation on files where that is the
 * slower side, and on a machine whose CPUs are shared that time is taken from the
 * consumer. Counted, not timed: the consumer stops after its first record until the
 * reader has slept on the full ring (a reader that spun instead never would: the test
 * then fails after 20 s), then goes on with a pause per 1024 records; every sleep must
 * last until half the ring is free (a reader woken per batch would sleep about once per
 * batch), however fast either side runs (sanitizer builds, a loaded machine).
 */
static void test_feed_reader_sleeps_when_ahead(void **state)
{
	(void)state;
	if (pk_online_cpus_for_test() < 2)
		skip();
	char *dir = pk_test_mkdtemp("feedsleep");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	const int n = 100000;
	struct feed_expect ex;
	write_feed_file(path, n, &ex);
	struct pk_feed_waits w = feed_reader_waits(path, 1500, true, n);
	print_message("reader: %llu batches in a ring of %llu, %llu sleeps on a full ring\n",
		      (unsigned long long)w.batches, (unsigned long long)w.ring,
		      (unsigned long long)w.full_sleeps);
	assert_true(w.ring >= 2 && w.batches > 2 * w.ring); /* the file fills the ring */
	assert_true(w.full_sleeps >= 1);
	assert_true(w.full_sleeps <= (w.batches - w.ring) / (w.ring / 2) + 1);
	/* a consumer that never waits: no more sleeps than that bound either */
	w = feed_reader_waits(path, 0, false, n);
	assert_true(w.full_sleeps <= (w.batches - w.ring) / (w.ring / 2) + 1);
	pk_test_rmtree(dir);
	free(dir);
}

/*
 * The ordering queue's copies handed out with pk_ordered_hold_chunks stay intact until
 * pk_ordered_done says the caller is done with them, however far the reader went on
 * (the reader thread hands them over by reference: a copy reused early would be read
 * by the consumer as another record). Without the hold, the same run reuses them: the
 * check can fail.
 */
static size_t hold_run(const char *path, bool hold, size_t lag, size_t *nr_chunk_recs)
{
	PK_OPTS(pk_data_reader_opts, ro, .no_mmap = true);
	struct pk_data_reader *r = pk_data_reader__open(path, &ro);
	assert_non_null(r);
	struct pk_ordered *q = pk_ordered__new(NULL);
	assert_non_null(q);
	pk_ordered_hold_chunks(q, hold);
	size_t cap = (size_t)1 << 18, n = 0, changed = 0, checked = 0;
	const uint8_t **ptr = calloc(cap, sizeof(*ptr));
	uint8_t(*copy)[64] = calloc(cap, sizeof(*copy));
	uint64_t *seq = calloc(cap, sizeof(*seq));
	assert_true(ptr && copy && seq);
	struct pk_data_event ev;
	int err;
	while ((err = pk_ordered__next(q, r, &ev)) > 0) {
		if (!pk_ordered_last_in_chunk(q))
			continue;
		assert_true(n < cap);
		ptr[n] = (const uint8_t *)ev.hdr;
		seq[n] = pk_ordered_delivered(q); /* this record is the seq[n]-th given */
		memcpy(copy[n], ev.hdr, ev.hdr->size < sizeof(copy[n]) ? ev.hdr->size : sizeof(copy[n]));
		n++;
		uint64_t d = pk_ordered_delivered(q);
		if (d > lag && !(d % 997))
			pk_ordered_done(q, d - lag);
		/* every record not yet done with is as it was */
		if (!(n % 4096)) {
			for (size_t i = 0; i < n; i++) {
				if (hold && seq[i] + lag <= d)
					continue; /* (possibly done with: may be reused) */
				size_t sz = ((const struct perf_event_header *)copy[i])->size;
				checked++;
				changed += memcmp(ptr[i], copy[i], sz < sizeof(copy[i]) ? sz : sizeof(copy[i])) != 0;
			}
		}
	}
	assert_int_equal(err, 0);
	pk_ordered__free(q);
	pk_data_reader__free(r);
	free(ptr);
	free(copy);
	free(seq);
	*nr_chunk_recs = n;
	assert_true(checked > 0);
	return changed;
}

static void test_ordered_hold_chunks(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("hold");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	struct feed_expect ex;
	write_feed_file(path, 100000, &ex); /* ~6.5 MB: several 1 MiB chunks */
	size_t n1, n2;
	/* held: nothing the caller still uses changed (a lag of 40000 records spans 2-3 chunks) */
	assert_int_equal(hold_run(path, true, 40000, &n1), 0);
	assert_true(n1 > 90000);
	/* not held: the same walk sees copies reused under it */
	assert_true(hold_run(path, false, 40000, &n2) > 0);
	assert_int_equal(n1, n2);
	pk_test_rmtree(dir);
	free(dir);
}

/* ---- call chains through addresses outside every map ---- */

/*
 * Samples whose callers lie outside every map (a chain walked with frame pointers through
 * code built without them: garbage addresses, mostly new at every sample) take shortcuts
 * in the aggregation: no resolved-address entry, pending keys with a new frame not indexed,
 * first nodes and entries found through their frame. This checks every number of both
 * modes against an independent count, with unique callers, callers seen again much later
 * (the second key finds no indexed twin), immediate repeats and shared callers mixed.
 */
#define UM_N 6000
#define UM_MAXNR 4
struct um_chain {
	int nr;
	uint64_t ip[UM_MAXNR];
};

static int um_cmp_u64x3(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static int um_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "count path" lines of every node of a tree with chains ending at it (self period) */
static void um_paths(const struct pk_callnode *n, char *prefix, char **out, size_t *nout)
{
	for (const struct pk_callnode *c = n->child; c; c = c->next) {
		size_t len = strlen(prefix);
		snprintf(prefix + len, 512 - len, "%s%llx", len ? "," : "", (unsigned long long)c->addr);
		if (c->self_period) {
			char buf[600];
			snprintf(buf, sizeof(buf), "%llu %s", (unsigned long long)c->self_period, prefix);
			out[(*nout)++] = strdup(buf);
		}
		um_paths(c, prefix, out, nout);
		prefix[len] = 0;
	}
}

/*
 * The aggregation worker (lib/report/aggw.c) must give what aggregating on the caller's
 * thread gives, entry for entry and node for node, in the same order: a file big enough
 * for many hand-overs of pending samples, with frames made while the worker runs (new
 * addresses in every chain) and repeated chains, reported with and without threads.
 */
#define AW_N 40000
#define AW_MAXNR 12

static void aw_same_tree(const struct pk_callnode *a, const struct pk_callnode *b)
{
	for (; a && b; a = a->next, b = b->next) {
		assert_int_equal(a->addr, b->addr);
		assert_int_equal(a->period, b->period);
		assert_int_equal(a->samples, b->samples);
		assert_int_equal(a->self_period, b->self_period);
		assert_int_equal(a->ip, b->ip);
		aw_same_tree(a->child, b->child);
	}
	assert_true(!a && !b);
}

/* lib/report/tree.c's threshold for sorting the output order on a thread of its own */
extern size_t pk_rep_sort_thread_min;

static void test_agg_worker_same(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("aggw");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	struct pk_data_writer *w = open_writer_with(path, CHAIN_SAMPLES);
	unsigned seed = 11;
	uint64_t next_unique = 0x7000000, prev[AW_MAXNR + 1] = { 0 };
	for (int i = 0; i < AW_N; i++) {
		uint64_t u[8 + AW_MAXNR];
		memset(u, 0, sizeof(u));
		seed = seed * 1103515245u + 12345u;
		int nr;
		if (i && (seed >> 16) % 3 == 0) {
			nr = (int)prev[0]; /* a chain seen before */
			memcpy(&u[6], &prev[1], (size_t)nr * 8);
		} else {
			nr = 1 + (int)((seed >> 20) % AW_MAXNR);
			for (int k = 0; k < nr; k++) {
				seed = seed * 1103515245u + 12345u;
				unsigned r = (seed >> 16) % 10;
				u[6 + k] = k == 0 ? 0x400000 + ((seed >> 12) % 64) * 0x10
					 : r < 6 ? 0x500000 + (seed >> 8) % 40 : next_unique++;
			}
			prev[0] = (uint64_t)nr;
			memcpy(&prev[1], &u[6], (size_t)nr * 8);
		}
		struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
					       .misc = PERF_RECORD_MISC_USER,
					       .size = (uint16_t)(8 + 5 * 8 + nr * 8) };
		memcpy(&u[0], &h, 8);
		u[1] = u[6];
		uint64_t tid = 1 + (seed >> 4) % 3;
		u[2] = tid << 32 | 1;
		u[3] = 1000 + (uint64_t)i;
		u[4] = 1 + (seed >> 10) % 7; /* period */
		u[5] = (uint64_t)nr;
		assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)u), 0);
		if (i % 500 == 499)
			assert_int_equal(pk_data_writer__finish_round(w), 0);
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);

	for (int children = 0; children < 2; children++) {
		struct pk_report *rep[2];
		struct pk_data_reader *r[2];
		const struct pk_hist *hh[2];
		for (int t = 0; t < 2; t++) {
			PK_OPTS(pk_report_opts, o, .callgraph = true, .children = children,
				.no_reader_thread = !t);
			/* threaded: the entries' output order sorted on a thread too, however
			 * few they are (one thread: never) */
			size_t min = pk_rep_sort_thread_min;
			pk_rep_sort_thread_min = t ? 1 : SIZE_MAX;
			hh[t] = report_file(path, &o, &rep[t], &r[t]);
			pk_rep_sort_thread_min = min;
		}
		assert_int_equal(hh[0]->nr_samples, AW_N);
		assert_int_equal(hh[0]->nr_entries, hh[1]->nr_entries);
		assert_true(hh[0]->nr_entries > (children ? 1000u : 100u));
		for (size_t i = 0; i < hh[0]->nr_entries; i++) {
			const struct pk_hist_entry *a = hh[0]->entries[i], *b = hh[1]->entries[i];
			assert_int_equal(a->addr, b->addr);
			assert_int_equal(a->pid, b->pid);
			assert_int_equal(a->tid, b->tid);
			assert_string_equal(a->comm, b->comm);
			assert_int_equal(a->self_period, b->self_period);
			assert_int_equal(a->self_samples, b->self_samples);
			assert_int_equal(a->total_period, b->total_period);
			assert_int_equal(a->total_samples, b->total_samples);
			assert_true(!a->callchain == !b->callchain);
			if (a->callchain)
				aw_same_tree(a->callchain, b->callchain);
		}
		for (int t = 0; t < 2; t++) {
			pk_report__free(rep[t]);
			pk_data_reader__free(r[t]);
		}
	}
	pk_test_rmtree(dir);
	free(dir);
}

static void test_unmapped_callers(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("unmapped");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	struct pk_data_writer *w = open_writer_with(path, CHAIN_SAMPLES);
	struct um_chain *ch = calloc(UM_N, sizeof(*ch));
	assert_non_null(ch);
	unsigned seed = 5;
	uint64_t next_unique = 0x7000000;
	for (int i = 0; i < UM_N; i++) {
		seed = seed * 1103515245u + 12345u;
		struct um_chain *c = &ch[i];
		if (i && (seed >> 16) % 4 == 0) {
			*c = ch[i - 1]; /* the same sample again */
		} else {
			c->nr = 1 + (int)((seed >> 20) % UM_MAXNR);
			c->ip[0] = 0x400000 + ((seed >> 12) % 2) * 0x10;
			for (int k = 1; k < c->nr; k++) {
				seed = seed * 1103515245u + 12345u;
				unsigned r = (seed >> 16) % 10;
				if (r < 4)              /* shared callers */
					c->ip[k] = 0x500000 + (seed >> 8) % 5;
				else if (r < 5 && i > 100) /* a caller of an older sample */
					c->ip[k] = ch[(seed >> 4) % (unsigned)(i - 50)].ip[
						ch[(seed >> 4) % (unsigned)(i - 50)].nr - 1];
				else                    /* new every time */
					c->ip[k] = next_unique++;
			}
		}
		uint64_t u[16];
		memset(u, 0, sizeof(u));
		struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
					       .size = (uint16_t)(8 + 5 * 8 + c->nr * 8) };
		memcpy(&u[0], &h, 8);
		u[1] = c->ip[0];
		u[2] = (uint64_t)1 << 32 | 1;
		u[3] = 1000 + (uint64_t)i;
		u[4] = 1; /* period */
		u[5] = (uint64_t)c->nr;
		for (int k = 0; k < c->nr; k++)
			u[6 + k] = c->ip[k];
		assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)u), 0);
		if (i % 500 == 499)
			assert_int_equal(pk_data_writer__finish_round(w), 0);
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);

	/* expected, no-children: "count path" per distinct chain (callee order) */
	char **want = calloc(UM_N, sizeof(char *)), **got = calloc(UM_N * UM_MAXNR, sizeof(char *));
	assert_non_null(want);
	assert_non_null(got);
	size_t nwant = 0;
	{
		char **paths = calloc(UM_N, sizeof(char *));
		assert_non_null(paths);
		for (int i = 0; i < UM_N; i++) {
			char buf[512] = "";
			for (int k = 0; k < ch[i].nr; k++)
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%llx", k ? "," : "",
					 (unsigned long long)ch[i].ip[k]);
			paths[i] = strdup(buf);
		}
		qsort(paths, UM_N, sizeof(char *), um_cmp_str);
		for (size_t i = 0; i < UM_N;) {
			size_t j = i;
			while (j < UM_N && !strcmp(paths[j], paths[i]))
				j++;
			char buf[600];
			snprintf(buf, sizeof(buf), "%zu %s", j - i, paths[i]);
			want[nwant++] = strdup(buf);
			i = j;
		}
		for (int i = 0; i < UM_N; i++)
			free(paths[i]);
		free(paths);
		qsort(want, nwant, sizeof(char *), um_cmp_str);
	}
	/* expected, children: (address, samples whose chain holds it, samples it is the
	 * leaf of) per distinct address */
	uint64_t (*tot)[3] = calloc((size_t)UM_N * UM_MAXNR, sizeof(*tot));
	assert_non_null(tot);
	size_t ntot = 0;
	for (int i = 0; i < UM_N; i++)
		for (int k = 0; k < ch[i].nr; k++) {
			bool seen = false;
			for (int j = 0; j < k; j++)
				seen |= ch[i].ip[j] == ch[i].ip[k];
			if (!seen) {
				tot[ntot][0] = ch[i].ip[k];
				tot[ntot][1] = 1;
				tot[ntot][2] = k == 0;
				ntot++;
			}
		}
	qsort(tot, ntot, sizeof(*tot), um_cmp_u64x3);
	size_t nd = 0;
	for (size_t i = 0; i < ntot; i++) {
		if (nd && tot[nd - 1][0] == tot[i][0]) {
			tot[nd - 1][1] += tot[i][1];
			tot[nd - 1][2] += tot[i][2];
		} else {
			memcpy(tot[nd++], tot[i], sizeof(*tot));
		}
	}

	for (int thread = 0; thread < 2; thread++) {
		/* no-children: each self address's tree holds exactly the chains */
		PK_OPTS(pk_report_opts, o, .callgraph = true, .no_reader_thread = !thread);
		struct pk_report *rep;
		struct pk_data_reader *r;
		const struct pk_hist *hh = report_file(path, &o, &rep, &r);
		assert_int_equal(hh->nr_samples, UM_N);
		assert_int_equal(hh->nr_entries, 2);
		size_t ngot = 0;
		for (size_t i = 0; i < hh->nr_entries; i++) {
			assert_string_equal(hh->entries[i]->dso, "[unknown]");
			char prefix[512] = "";
			um_paths(hh->entries[i]->callchain, prefix, got, &ngot);
		}
		qsort(got, ngot, sizeof(char *), um_cmp_str);
		assert_int_equal(ngot, nwant);
		for (size_t i = 0; i < ngot; i++) {
			assert_string_equal(got[i], want[i]);
			free(got[i]);
		}
		pk_report__free(rep);
		pk_data_reader__free(r);

		/* children: one entry per address, counted once per chain */
		PK_OPTS(pk_report_opts, oc, .children = true, .callgraph = true,
			.no_reader_thread = !thread);
		hh = report_file(path, &oc, &rep, &r);
		assert_int_equal(hh->nr_entries, nd);
		uint64_t (*e3)[3] = calloc(nd, sizeof(*e3));
		assert_non_null(e3);
		for (size_t i = 0; i < nd; i++) {
			const struct pk_hist_entry *e = hh->entries[i];
			e3[i][0] = e->addr;
			e3[i][1] = e->total_samples;
			e3[i][2] = e->self_samples;
			assert_int_equal(e->total_period, e->total_samples);
			assert_non_null(e->callchain);
			assert_int_equal(e->callchain->period, e->total_period);
		}
		qsort(e3, nd, sizeof(*e3), um_cmp_u64x3);
		assert_memory_equal(e3, tot, nd * sizeof(*e3));
		free(e3);
		pk_report__free(rep);
		pk_data_reader__free(r);
	}
	for (size_t i = 0; i < nwant; i++)
		free(want[i]);
	free(want);
	free(got);
	free(tot);
	free(ch);
	pk_test_rmtree(dir);
	free(dir);
}

/* An address outside every map, then mapped by an MMAP: samples after the MMAP resolve
 * in the new map (the memory of the unmapped range an address fell in does not outlive
 * the process's map generation). */
/*
 * The same DSO addresses sampled in many processes (a system-wide recording: each
 * compiler run maps the same binaries; every process enters the same kernel) are looked
 * up once, not once per process: NP processes map one library at two different
 * addresses (odd and even pids), and sample three of its addresses under a kernel frame.
 */
static void test_dso_addresses_shared(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("dsoaddr");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	struct pk_data_writer *w = open_writer_with(path, CHAIN_SAMPLES);
	uint64_t u[32];
	enum { NP = 40 };
	for (uint32_t pid = 1; pid <= NP; pid++) {
		memset(u, 0, sizeof(u));
		struct perf_event_header h = { .type = PERF_RECORD_MMAP, .size = 8 + 8 + 24 + 24 + 16 };
		memcpy(&u[0], &h, 8);
		u[1] = (uint64_t)pid << 32 | pid;
		u[2] = pid % 2 ? 0x7000000 : 0x9000000; /* start */
		u[3] = 0x10000;                          /* len */
		u[4] = 0x1000;                           /* pgoff */
		snprintf((char *)&u[5], 24, "/nonexistent/lib.so");
		u[8] = (uint64_t)pid << 32 | pid;
		u[9] = pid;
		assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)u), 0);
	}
	for (uint32_t pid = 1; pid <= NP; pid++) {
		for (uint64_t k = 0; k < 3; k++) {
			/* kernel ip, then the user chain: ip in lib.so called from lib.so */
			uint64_t base = pid % 2 ? 0x7000000 : 0x9000000;
			memset(u, 0, sizeof(u));
			struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
						       .misc = PERF_RECORD_MISC_KERNEL,
						       .size = 8 + 5 * 8 + 5 * 8 };
			memcpy(&u[0], &h, 8);
			u[1] = 0xffffffff81000100ULL;
			u[2] = (uint64_t)pid << 32 | pid;
			u[3] = 1000 + pid * 10 + k;
			u[4] = 1;
			u[5] = 5;
			u[6] = (uint64_t)-128; /* PERF_CONTEXT_KERNEL */
			u[7] = 0xffffffff81000100ULL;
			u[8] = (uint64_t)-512; /* PERF_CONTEXT_USER */
			u[9] = base + 0x100 + k * 0x10;
			u[10] = base + 0x200;
			assert_int_equal(pk_data_writer__write_record(w,
					(const struct perf_event_header *)u), 0);
		}
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	static const enum pk_sort_key keys[] = { PK_SORT_DSO, PK_SORT_SYM };
	for (int children = 0; children < 2; children++) {
		PK_OPTS(pk_report_opts, o, .callgraph = true, .children = children, .sort = keys,
			.nr_sort = 2);
		struct pk_report *rep;
		struct pk_data_reader *r;
		const struct pk_hist *h = report_file(path, &o, &rep, &r);
		assert_int_equal(h->nr_samples, NP * 3);
		/* the kernel address and the library's four: 5, whatever NP */
		assert_int_equal(pk_report_symbol_lookups(rep), 5);
		/* and the entries are what they were: one self entry (the kernel address);
		 * with children, the library's frames by absolute address (as perf keys
		 * unresolved cumulative entries), four at each of the two map addresses */
		size_t lib = 0;
		for (size_t i = 0; i < h->nr_entries; i++) {
			const struct pk_hist_entry *e = h->entries[i];
			if (!strcmp(e->dso, "lib.so")) {
				lib++;
				assert_null(e->sym);
			}
		}
		assert_int_equal(lib, children ? 2 * 4 : 0);
		assert_int_equal(h->nr_entries, children ? 2 * 4 + 1 : 1);
		pk_report__free(rep);
		pk_data_reader__free(r);
	}
	pk_test_rmtree(dir);
	free(dir);
}

/*
 * Twenty processes sampled in turn at the same addresses, mapped (lib.so) in the odd ones
 * only (the even ones map something else): the unmapped range an even process's address
 * fell in must not make the same address of an odd process unmapped (the ranges are kept
 * per process, in slots some processes share).
 */
static void test_unmapped_many_processes(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("gaps");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	struct pk_data_writer *w = open_writer_with(path, CHAIN_SAMPLES);
	uint64_t u[32];
	enum { NP = 20 }; /* more processes than slots, odd and even ones sharing some */
	for (uint32_t pid = 1; pid <= NP; pid++) {
		/* MMAP of [0x7000000, 0x7001000) in odd processes, of [0x9000000, 0x9001000) in
		 * even ones (one map each: the same map generation) */
		memset(u, 0, sizeof(u));
		struct perf_event_header h = { .type = PERF_RECORD_MMAP, .size = 8 + 8 + 24 + 24 + 16 };
		memcpy(&u[0], &h, 8);
		u[1] = (uint64_t)pid << 32 | pid;
		u[2] = pid % 2 ? 0x7000000 : 0x9000000;
		u[3] = 0x1000;
		snprintf((char *)&u[5], 24, pid % 2 ? "/nonexistent/lib.so" : "/nonexistent/b.so");
		u[8] = (uint64_t)pid << 32 | pid;
		u[9] = 10;
		assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)u), 0);
	}
	const int rounds = 30;
	for (int k = 0; k < rounds; k++) {
		for (uint32_t pid = 1; pid <= NP; pid++) {
			/* a sample at 0x7000100 called from 0x7000200 + k */
			memset(u, 0, sizeof(u));
			struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
						       .misc = PERF_RECORD_MISC_USER,
						       .size = 8 + 5 * 8 + 2 * 8 };
			memcpy(&u[0], &h, 8);
			u[1] = 0x7000100;
			u[2] = (uint64_t)pid << 32 | pid;
			u[3] = 100 + (uint64_t)k * 10 + pid;
			u[4] = 1;
			u[5] = 2;
			u[6] = 0x7000100;
			u[7] = 0x7000200 + (uint64_t)k;
			assert_int_equal(pk_data_writer__write_record(w,
					(const struct perf_event_header *)u), 0);
		}
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	static const enum pk_sort_key keys[] = { PK_SORT_PID, PK_SORT_DSO, PK_SORT_SYM };
	for (int thread = 0; thread < 2; thread++) {
		PK_OPTS(pk_report_opts, o, .callgraph = true, .no_reader_thread = !thread,
			.sort = keys, .nr_sort = 3);
		struct pk_report *rep;
		struct pk_data_reader *r;
		const struct pk_hist *h = report_file(path, &o, &rep, &r);
		assert_int_equal(h->nr_samples, rounds * NP);
		assert_int_equal(h->nr_entries, NP);
		for (size_t i = 0; i < h->nr_entries; i++) {
			const struct pk_hist_entry *e = h->entries[i];
			const char *want = e->pid % 2 ? "lib.so" : "[unknown]";
			assert_string_equal(e->dso, want);
			assert_int_equal(e->self_samples, rounds);
			size_t callers = 0;
			for (const struct pk_callnode *c = e->callchain->child->child; c; c = c->next) {
				assert_string_equal(c->dso, want);
				callers++;
			}
			assert_int_equal(callers, rounds);
		}
		pk_report__free(rep);
		pk_data_reader__free(r);
	}
	pk_test_rmtree(dir);
	free(dir);
}

static void test_unmapped_then_mapped(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("remap");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	struct pk_data_writer *w = open_writer_with(path, CHAIN_SAMPLES);
	uint64_t u[32];
	for (int k = 0; k < 3; k++) {
		memset(u, 0, sizeof(u));
		if (k == 1) { /* MMAP of [0x7000000, 0x7001000) by process 1, at time 200 */
			struct perf_event_header h = { .type = PERF_RECORD_MMAP,
						       .size = 8 + 8 + 24 + 24 + 16 };
			memcpy(&u[0], &h, 8);
			u[1] = (uint64_t)1 << 32 | 1;
			u[2] = 0x7000000;
			u[3] = 0x1000;
			u[4] = 0;
			snprintf((char *)&u[5], 24, "/nonexistent/lib.so");
			u[8] = (uint64_t)1 << 32 | 1;
			u[9] = 200;
		} else { /* a sample at 0x7000100 called from 0x7000200 */
			struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
						       .misc = PERF_RECORD_MISC_USER,
						       .size = 8 + 5 * 8 + 2 * 8 };
			memcpy(&u[0], &h, 8);
			u[1] = 0x7000100;
			u[2] = (uint64_t)1 << 32 | 1;
			u[3] = 100 + 100 * (uint64_t)k;
			u[4] = 1;
			u[5] = 2;
			u[6] = 0x7000100;
			u[7] = 0x7000200;
		}
		assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)u), 0);
		assert_int_equal(pk_data_writer__finish_round(w), 0);
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	for (int thread = 0; thread < 2; thread++) {
		PK_OPTS(pk_report_opts, o, .callgraph = true, .no_reader_thread = !thread);
		struct pk_report *rep;
		struct pk_data_reader *r;
		const struct pk_hist *h = report_file(path, &o, &rep, &r);
		assert_int_equal(h->nr_samples, 2);
		assert_int_equal(h->nr_entries, 2);
		bool unknown = false, mapped = false;
		for (size_t i = 0; i < h->nr_entries; i++) {
			const struct pk_hist_entry *e = h->entries[i];
			const struct pk_callnode *caller = e->callchain->child->child;
			assert_non_null(caller);
			if (!strcmp(e->dso, "[unknown]")) {
				unknown = true;
				assert_int_equal(e->addr, 0x7000100);
				assert_string_equal(caller->dso, "[unknown]");
			} else {
				mapped = true;
				assert_string_equal(e->dso, "lib.so");
				assert_string_equal(caller->dso, "lib.so");
			}
		}
		assert_true(unknown && mapped);
		pk_report__free(rep);
		pk_data_reader__free(r);
	}
	pk_test_rmtree(dir);
	free(dir);
}

/* A sample of a task that was exiting carries pid/tid -1 (the kernel's s32): perf script
 * prints -1, and so must `perfkit script`, in text and JSON (not 4294967295). */
static void test_script_pid_minus_one(void **state)
{
	(void)state;
	/* (the ThreadSanitizer build makes only the library's tests, not the tool) */
	if (access(PK_TOOL_PATH, X_OK))
		PK_SKIP("the perfkit tool is not built in this build directory");
	char *dir = pk_test_mkdtemp("pidm1");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	struct pk_data_writer *w = open_writer(path);
	struct rec r;
	make_sample(&r, 1000, UINT32_MAX);
	assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)&r), 0);
	make_sample(&r, 2000, 42);
	assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)&r), 0);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	assert_int_equal(pk_test_sh("cd '%s' && '%s' script -i t.data -F pid,tid > text.out && "
				    "'%s' script -i t.data --json > json.out", dir, PK_TOOL_PATH,
				    PK_TOOL_PATH), 0);
	assert_int_equal(pk_test_sh("cd '%s' && grep -q '^ *-1/-1 *$' text.out && "
				    "grep -q '^ *42/42 *$' text.out && "
				    "grep -q '\"pid\":-1,\"tid\":-1,' json.out && "
				    "grep -q '\"pid\":42,\"tid\":42,' json.out && "
				    "! grep -q 4294967295 text.out json.out", dir), 0);
	pk_test_rmtree(dir);
	free(dir);
}

/* An MMAP record (pid = tid) of [start, start + 0x10000) to `name` at time t. */
static void write_mmap(struct pk_data_writer *w, uint32_t pid, uint64_t start, const char *name,
		       uint64_t t)
{
	uint64_t u[16];
	memset(u, 0, sizeof(u));
	struct perf_event_header h = { .type = PERF_RECORD_MMAP, .misc = PERF_RECORD_MISC_USER,
				       .size = 8 + 8 + 24 + 24 + 16 };
	memcpy(&u[0], &h, 8);
	u[1] = (uint64_t)pid << 32 | pid;
	u[2] = start;
	u[3] = 0x10000;
	snprintf((char *)&u[5], 24, "%s", name);
	u[8] = (uint64_t)pid << 32 | pid;
	u[9] = t;
	assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)u), 0);
}

/* A user-mode sample (IP|TID|TIME) of process pid at ip, time t. */
static void write_user_sample(struct pk_data_writer *w, uint32_t pid, uint64_t ip, uint64_t t)
{
	uint64_t u[4];
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
				       .size = 8 + 3 * 8 };
	memcpy(&u[0], &h, 8);
	u[1] = ip;
	u[2] = (uint64_t)pid << 32 | pid;
	u[3] = t;
	assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)u), 0);
}

/*
 * perfkit script keeps the text of each frame per process; a record that changes the
 * maps of one process makes that process's texts stale, and only that process's (it used
 * to empty the whole cache, at every such record of a system-wide file). Two processes
 * map different libraries at the same address; process 1 then maps another one there:
 * its next sample shows the new library, process 2's still its own.
 */
static void test_script_maps_per_process(void **state)
{
	(void)state;
	if (access(PK_TOOL_PATH, X_OK))
		PK_SKIP("the perfkit tool is not built in this build directory");
	char *dir = pk_test_mkdtemp("scrmaps");
	char path[512];
	snprintf(path, sizeof(path), "%s/t.data", dir);
	struct pk_data_writer *w = open_writer(path);
	write_mmap(w, 1, 0x7000000, "/nonexistent/a.so", 10);
	write_mmap(w, 2, 0x7000000, "/nonexistent/c.so", 11);
	write_user_sample(w, 1, 0x7000100, 100);
	write_user_sample(w, 2, 0x7000100, 110);
	write_mmap(w, 1, 0x7000000, "/nonexistent/b.so", 200);
	write_user_sample(w, 1, 0x7000100, 300);
	write_user_sample(w, 2, 0x7000100, 310);
	write_mmap(w, 2, 0x7000000, "/nonexistent/d.so", 400);
	write_user_sample(w, 1, 0x7000100, 500);
	write_user_sample(w, 2, 0x7000100, 510);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	for (int json = 0; json < 2; json++) {
		assert_int_equal(pk_test_sh("cd '%s' && '%s' script -i t.data %s > out && "
					    "grep -o '[abcd]\\.so' out | tr '\\n' ' ' > libs",
					    dir, PK_TOOL_PATH, json ? "--json" : ""), 0);
		assert_int_equal(pk_test_sh("cd '%s' && [ \"$(cat libs)\" = "
					    "'a.so c.so b.so c.so b.so d.so ' ]", dir), 0);
	}
	pk_test_rmtree(dir);
	free(dir);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timestamp),
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_trim_after_burst),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_entry_key),
		cmocka_unit_test(test_hide_unresolved),
		cmocka_unit_test(test_parent_key),
		cmocka_unit_test(test_ignore_callees),
		cmocka_unit_test(test_children),
		cmocka_unit_test(test_sort_keys_and_filters),
		cmocka_unit_test(test_sort_ties_by_name),
		cmocka_unit_test(test_lazy_callchains),
		cmocka_unit_test(test_ordered_mapped),
		cmocka_unit_test(test_reader_thread),
		cmocka_unit_test(test_feed_reader_sleeps_when_ahead),
		cmocka_unit_test(test_ordered_hold_chunks),
		cmocka_unit_test(test_unmapped_many_processes),
		cmocka_unit_test(test_dso_addresses_shared),
		cmocka_unit_test(test_unmapped_callers),
		cmocka_unit_test(test_agg_worker_same),
		cmocka_unit_test(test_unmapped_then_mapped),
		cmocka_unit_test(test_script_pid_minus_one),
		cmocka_unit_test(test_script_maps_per_process),
		cmocka_unit_test(test_decay),
		cmocka_unit_test(test_time_srcfile_socket_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
