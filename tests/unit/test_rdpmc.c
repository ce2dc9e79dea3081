/* SPDX-License-Identifier: MIT */
/* lib/self/rdpmc.c: the mmap-page read algorithm on synthetic pages with a fake counter
 * source, and the pk_self_reader fast-read object on live software events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"
#include "internal.h"

/* ---- a fake counter source ---------------------------------------------------------------- */

struct fake {
	struct perf_event_mmap_page *pc;
	uint64_t pmc;        /* value "rdpmc" returns */
	uint64_t cycles;     /* value "rdtsc" returns */
	uint32_t last_idx;   /* idx the last read_pmc was asked for */
	int pmc_calls;
	int bump_lock;       /* act as a concurrent writer this many times */
	int64_t new_offset;  /* what the "writer" stores into offset */
};

static uint64_t fake_pmc(void *ctx, uint32_t idx)
{
	struct fake *f = ctx;
	f->last_idx = idx;
	f->pmc_calls++;
	if (f->bump_lock > 0) {
		/* the kernel updated the page while we were reading it */
		f->bump_lock--;
		f->pc->lock += 2;
		f->pc->offset = f->new_offset;
	}
	return f->pmc;
}

static uint64_t fake_cycles(void *ctx)
{
	return ((struct fake *)ctx)->cycles;
}

static struct perf_event_mmap_page *new_page(void)
{
	struct perf_event_mmap_page *pc = calloc(1, sizeof(*pc));
	assert_non_null(pc);
	pc->capabilities = PK_CAP_USER_RDPMC;
	pc->pmc_width = 48;
	pc->index = 3;
	pc->lock = 10;
	return pc;
}

static void test_sign_extension_48(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct fake f = { .pc = pc, .pmc = 0xFFFFFFFFFFFFULL };
	struct pk_counter_source src = { fake_pmc, fake_cycles, &f };
	struct pk_self_read r;

	pc->offset = 1000;
	pc->time_enabled = 500;
	pc->time_running = 500;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	/* 48 bits of ones are -1: offset - 1 (without sign extension it would be 2^48 + 999) */
	assert_int_equal((int64_t)r.count, 999);
	assert_int_equal(f.last_idx, 2); /* index - 1 */
	assert_int_equal(r.enabled, 500);
	assert_int_equal(r.running, 500);
	assert_int_equal(r.retries, 0);

	/* the top bit of a 48-bit value set: negative */
	f.pmc = 0x800000000000ULL;
	pc->offset = 0;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	assert_int_equal((int64_t)r.count, -(int64_t)0x800000000000LL);
	/* bits above pmc_width are ignored: rdpmc may return junk there */
	f.pmc = 0xABCD000000000005ULL;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	assert_int_equal((int64_t)r.count, 5);
	/* a realistic case: the kernel keeps offset = count - (counter start value) */
	pc->offset = (int64_t)1000000 - (int64_t)pk_sign_extend(0xFFFFFFFF0000ULL, 48);
	f.pmc = 0xFFFFFFFF0000ULL + 250;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	assert_int_equal(r.count, 1000250);
	/* width 64: no extension */
	pc->pmc_width = 64;
	pc->offset = 0;
	f.pmc = 0xFFFFFFFFFFFFULL;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	assert_int_equal(r.count, 0xFFFFFFFFFFFFULL);
	free(pc);

	assert_int_equal(pk_sign_extend(0x7f, 8), 127);
	assert_int_equal(pk_sign_extend(0x80, 8), -128);
	assert_int_equal(pk_sign_extend(0xFFFFFFFFFFFFULL, 48), -1);
	assert_int_equal(pk_sign_extend(0x5, 0), 5);
}

static void test_fallback_conditions(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct fake f = { .pc = pc, .pmc = 7 };
	struct pk_counter_source src = { fake_pmc, fake_cycles, &f };
	struct pk_self_read r;

	/* index 0: not on a hardware counter now: read() instead, rdpmc never executed */
	pc->index = 0;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), -EOPNOTSUPP);
	assert_int_equal(f.pmc_calls, 0);
	/* capability absent */
	pc->index = 1;
	pc->capabilities = 0;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), -EOPNOTSUPP);
	pc->capabilities = PK_CAP_USER_TIME; /* time alone is not enough */
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), -EOPNOTSUPP);
	assert_int_equal(f.pmc_calls, 0);
	/* no source (an architecture without the instruction) */
	pc->capabilities = PK_CAP_USER_RDPMC;
	assert_int_equal(pk_mmap_page__read_self(pc, NULL, &r), -EOPNOTSUPP);
	/* and it works again when everything is there */
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	assert_int_equal(r.count, 7);
	assert_int_equal(f.last_idx, 0);
	assert_int_equal(pk_mmap_page__read_self(NULL, &src, &r), -EINVAL);
	free(pc);
}

static void test_seqlock_retry(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct fake f = { .pc = pc, .pmc = 5, .bump_lock = 3, .new_offset = 100 };
	struct pk_counter_source src = { fake_pmc, fake_cycles, &f };
	struct pk_self_read r;

	pc->offset = 1;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	/* three torn reads were thrown away; the value uses the offset the writer stored */
	assert_int_equal(r.retries, 3);
	assert_int_equal(f.pmc_calls, 4);
	assert_int_equal(r.count, 105);

	/* an odd lock (update in progress) is never trusted */
	f.pmc_calls = 0;
	pc->lock = 11;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), -EAGAIN);
	assert_int_equal(f.pmc_calls, 0);
	/* a writer that never stops: bounded, then -EAGAIN (the reader falls back to read) */
	pc->lock = 12;
	f.bump_lock = 1 << 30;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), -EAGAIN);
	assert_int_equal(f.pmc_calls, PK_SELF_READ_MAX_RETRIES);
	free(pc);
}

static uint64_t ref_delta(uint64_t cyc, uint32_t mult, unsigned shift, uint64_t offset)
{
	/* the man page's quotient/remainder form */
	uint64_t quot = cyc >> shift, rem = cyc & (((uint64_t)1 << shift) - 1);
	return offset + quot * mult + ((rem * mult) >> shift);
}

static void test_time_extension(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct fake f = { .pc = pc, .pmc = 0x100 };
	struct pk_counter_source src = { fake_pmc, fake_cycles, &f };
	struct pk_self_read r;

	/* 2.5 GHz TSC: mult/2^shift = 0.4 ns per cycle */
	pc->capabilities = PK_CAP_USER_RDPMC | PK_CAP_USER_TIME;
	pc->time_mult = 1717986918; /* round(0.4 * 2^32) */
	pc->time_shift = 32;
	pc->time_offset = (uint64_t)-4000000000LL; /* "now" at the last update, negated */
	pc->time_enabled = 3000;
	pc->time_running = 1000; /* multiplexed: enabled != running */
	f.cycles = 10000000000ULL + 12345; /* 4 s + a bit after the reference */
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	uint64_t d = ref_delta(f.cycles, pc->time_mult, pc->time_shift, pc->time_offset);
	assert_true(d > 4000 && d < 5000); /* ~ 12345 * 0.4 */
	assert_int_equal(r.enabled, 3000 + d);
	assert_int_equal(r.running, 1000 + d);
	assert_int_equal(pk_mul_u64_u32_shr(f.cycles, pc->time_mult, 32) + pc->time_offset, d);
	/* scaling of the extended values: count * enabled / running */
	struct pk_count c;
	pk_count__scale(r.count, r.enabled, r.running, &c);
	assert_int_equal(c.status, PK_COUNT_SCALED);
	assert_true(c.val > r.count);

	/* a large cycle count where cyc * mult overflows 64 bits: still exact */
	f.cycles = 0x0123456789ABCDEFULL;
	pc->time_shift = 20;
	pc->time_mult = 0xFFFFF;
	pc->time_offset = 0;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	assert_int_equal(r.enabled - 3000, ref_delta(f.cycles, 0xFFFFF, 20, 0));
	free(pc);
}

static void test_time_short_wrap(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct fake f = { .pc = pc, .pmc = 1 };
	struct pk_counter_source src = { fake_pmc, fake_cycles, &f };
	struct pk_self_read r;

	/* a 32-bit cycle counter that wrapped since the kernel's last update */
	pc->capabilities = PK_CAP_USER_RDPMC | PK_CAP_USER_TIME | PK_CAP_USER_TIME_SHORT;
	pc->time_cycles = 0xFFFFFF00ULL;
	pc->time_mask = 0xFFFFFFFFULL;
	pc->time_mult = 1;
	pc->time_shift = 0;
	pc->time_offset = (uint64_t)-(int64_t)0xFFFFFF00LL; /* delta 0 at time_cycles */
	pc->time_enabled = pc->time_running = 1000;
	f.cycles = 0x10; /* wrapped: 0x110 cycles after time_cycles */
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	assert_int_equal(r.enabled, 1000 + 0x110);
	assert_int_equal(r.running, 1000 + 0x110);
	/* without the short-counter flag the same raw value would go backwards by ~4e9 */
	pc->capabilities &= ~PK_CAP_USER_TIME_SHORT;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	assert_int_equal(r.enabled, 1000 + 0x10 - 0xFFFFFF00ULL);

	/* the same folding in the time converter */
	struct pk_time_conv tc = { .capabilities = PK_CAP_USER_TIME_ZERO | PK_CAP_USER_TIME_SHORT,
				   .time_mult = 1, .time_shift = 0, .time_zero = 0,
				   .time_cycles = 0xFFFFFF00ULL, .time_mask = 0xFFFFFFFFULL };
	assert_int_equal(pk_time_conv__cyc_to_perf(&tc, 0x10), 0x100000010ULL);
	free(pc);
}

static void test_running_zero(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct fake f = { .pc = pc, .pmc = 42 };
	struct pk_counter_source src = { fake_pmc, fake_cycles, &f };
	struct pk_self_read r;
	struct pk_count c;

	/* enabled but never ran (no time capability: the page's values as they are) */
	pc->time_enabled = 5000;
	pc->time_running = 0;
	pc->offset = 0;
	assert_int_equal(pk_mmap_page__read_self(pc, &src, &r), 0);
	assert_int_equal(r.running, 0);
	assert_int_equal(pk_count__scale(r.count, r.enabled, r.running, &c), PK_COUNT_NOT_COUNTED);
	assert_int_equal(c.val, 0); /* never a division by zero */
	free(pc);
}

/* ---- the reader on this machine ------------------------------------------------------------ */

static void burn(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static void test_reader_group_of_four(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct pk_self_reader *r =
		pk_self_reader__open("task-clock,cpu-clock,context-switches,page-faults", NULL);
	struct pk_count_value v[4], w[4];
	assert_non_null(r);
	assert_int_equal(pk_self_reader__nr(r), 4);
	assert_true(pk_self_reader__grouped(r));
	assert_string_equal(pk_self_reader__name(r, 2), "context-switches");
	assert_int_equal(pk_self_reader__read(r, v, 4), 4);
	/* software events never sit on a hardware counter: one group read(2) */
	assert_int_equal(pk_self_reader__last_path(r), PK_READ_GROUP);
	burn(20000000);
	char *m = mmap(NULL, 64 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 64; i++)
		m[i << 12] = 1;
	munmap(m, 64 << 12);
	assert_int_equal(pk_self_reader__read(r, w, 4), 4);
	printf("# task-clock +%llu ns, cpu-clock +%llu ns, page-faults +%llu\n",
	       (unsigned long long)(w[0].val - v[0].val), (unsigned long long)(w[1].val - v[1].val),
	       (unsigned long long)(w[3].val - v[3].val));
	assert_true(w[0].val > v[0].val + 1000000); /* task-clock ns: > 1 ms burnt */
	assert_true(w[1].val > v[1].val + 1000000);
	assert_true(w[3].val >= v[3].val + 64);     /* page-faults */
	/* one group: every member shares the group's times */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(w[i].ena, w[0].ena);
		assert_true(w[i].run <= w[i].ena);
		assert_true(w[i].id != 0);
	}
	/* disable stops all four at once */
	assert_int_equal(pk_self_reader__disable(r), 0);
	assert_int_equal(pk_self_reader__read(r, v, 4), 4);
	burn(5000000);
	assert_int_equal(pk_self_reader__read(r, w, 4), 4);
	assert_int_equal(w[0].val, v[0].val);
	assert_int_equal(w[1].val, v[1].val);
	/* a short buffer gets the first events only */
	assert_int_equal(pk_self_reader__read(r, w, 2), 4);
	pk_self_reader__free(r);
}

/* Regression: members must count from the moment the reader is open. Attaching members
 * to a leader that is already enabled left them inactive until the next context switch
 * (page faults lost) on kernel 6.18; the reader now enables the whole group at once. */
static void test_reader_members_count_from_open(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	for (int it = 0; it < 30; it++) {
		struct pk_self_reader *r = pk_self_reader__open("task-clock,context-switches,page-faults", NULL);
		struct pk_count_value v[3], w[3];
		struct rusage u0, u1;
		assert_non_null(r);
		assert_true(pk_self_reader__grouped(r));
		assert_int_equal(pk_self_reader__read(r, v, 3), 3);
		getrusage(RUSAGE_THREAD, &u0);
		char *m = mmap(NULL, 64 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		for (int i = 0; i < 64; i++)
			m[i << 12] = 1;
		munmap(m, 64 << 12);
		getrusage(RUSAGE_THREAD, &u1);
		assert_int_equal(pk_self_reader__read(r, w, 3), 3);
		long flt = u1.ru_minflt - u0.ru_minflt;
		assert_true(flt > 0);
		assert_true((long)(w[2].val - v[2].val) >= flt);
		pk_self_reader__free(r);
	}
}

static void test_reader_single_and_separate(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	PK_OPTS(pk_self_reader_opts, o, .separate = true, .disabled = true);
	struct pk_self_reader *r = pk_self_reader__open("task-clock,page-faults", &o);
	struct pk_count_value v[2];
	assert_non_null(r);
	assert_false(pk_self_reader__grouped(r));
	assert_int_equal(pk_self_reader__read(r, v, 2), 2);
	assert_int_equal(pk_self_reader__last_path(r), PK_READ_SINGLE);
	assert_int_equal(v[0].val, 0); /* opened disabled */
	assert_int_equal(pk_self_reader__enable(r), 0);
	burn(5000000);
	assert_int_equal(pk_self_reader__read(r, v, 2), 2);
	assert_true(v[0].val > 0);
	assert_int_equal(v[0].ena, v[0].run);
	pk_self_reader__free(r);

	/* one event: the plain single layout */
	r = pk_self_reader__open("task-clock", NULL);
	assert_non_null(r);
	assert_false(pk_self_reader__grouped(r));
	assert_int_equal(pk_self_reader__read(r, v, 1), 1);
	assert_int_equal(pk_self_reader__last_path(r), PK_READ_SINGLE);
	assert_true(v[0].val > 0);
	pk_self_reader__free(r);
}

static void test_reader_unsupported_kept(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct pk_self_reader *r = pk_self_reader__open("task-clock,instructions,page-faults", NULL);
	struct pk_count_value v[3];
	assert_non_null(r);
	assert_int_equal(pk_self_reader__nr(r), 3);
	assert_true(pk_self_reader__supported(r, 0));
	assert_true(pk_self_reader__supported(r, 2));
	assert_int_equal(pk_self_reader__read(r, v, 3), 3);
	if (!pk_self_reader__supported(r, 1)) {
		/* no PMU: the hole reads as zero and the others are still grouped */
		assert_int_equal(v[1].val, 0);
		assert_int_equal(v[1].ena, 0);
		assert_int_equal(pk_self_reader__fd(r, 1), -1);
		assert_true(pk_self_reader__grouped(r));
		assert_int_equal(pk_self_reader__last_path(r), PK_READ_GROUP);
	}
	assert_true(v[0].val > 0);
	pk_self_reader__free(r);
	/* nothing at all supported */
	errno = 0;
	r = pk_self_reader__open("instructions,cycles", NULL);
	if (r) {
		pk_self_reader__free(r); /* a machine with a PMU */
	} else {
		assert_int_equal(errno, ENODEV);
	}
	assert_null(pk_self_reader__open("no-such-event-xyz", NULL));
}

/* A page that the reader mapped on this machine: if the kernel grants rdpmc the reader
 * must use it with no configuration, otherwise it must fall back to read(2). */
static void test_reader_path_selects_itself(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct pk_self_reader *r = pk_self_reader__open("instructions", NULL);
	const char *what = "instructions";
	if (!r) {
		/* no PMU here: a PMU event that still has a control page: msr/tsc/ */
		r = pk_self_reader__open("msr/tsc/", NULL);
		what = "msr/tsc/";
	}
	if (!r)
		PK_SKIP("neither a hardware event nor msr/tsc/ can be opened here");
	const struct perf_event_mmap_page *pc = pk_self_reader__page(r, 0);
	assert_non_null(pc); /* a PMU event of the calling thread gets its page mapped */
	struct pk_count_value v;
	assert_int_equal(pk_self_reader__read(r, &v, 1), 1);
	uint64_t caps = __atomic_load_n(&pc->capabilities, __ATOMIC_RELAXED);
	uint32_t idx = __atomic_load_n(&pc->index, __ATOMIC_RELAXED);
	printf("# %s: capabilities 0x%llx index %u -> %s\n", what, (unsigned long long)caps, idx,
	       pk_read_path__name(pk_self_reader__last_path(r)));
	if ((caps & PK_CAP_USER_RDPMC) && idx && pk_counter_source__native())
		assert_int_equal(pk_self_reader__last_path(r), PK_READ_RDPMC);
	else
		assert_int_equal(pk_self_reader__last_path(r), PK_READ_SINGLE);
	pk_self_reader__free(r);

	/* with no_rdpmc the page is not even mapped */
	PK_OPTS(pk_self_reader_opts, o, .no_rdpmc = true);
	r = pk_self_reader__open(what, &o);
	assert_non_null(r);
	assert_null(pk_self_reader__page(r, 0));
	pk_self_reader__free(r);
}

/* The native source's cycle counter runs (rdpmc itself is never executed here: without
 * a granted counter it faults). */
static void test_native_source(void **state)
{
	const struct pk_counter_source *src = pk_counter_source__native();
#if defined(__x86_64__) || defined(__aarch64__)
	assert_non_null(src);
	uint64_t a = src->read_cycles(src->ctx);
	burn(100000);
	uint64_t b = src->read_cycles(src->ctx);
	assert_true(b > a);
#else
	if (!src)
		PK_SKIP("no native counter source on this architecture");
#endif
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign_extension_48),
		cmocka_unit_test(test_fallback_conditions),
		cmocka_unit_test(test_seqlock_retry),
		cmocka_unit_test(test_time_extension),
		cmocka_unit_test(test_time_short_wrap),
		cmocka_unit_test(test_running_zero),
		cmocka_unit_test(test_reader_group_of_four),
		cmocka_unit_test(test_reader_members_count_from_open),
		cmocka_unit_test(test_reader_single_and_separate),
		cmocka_unit_test(test_reader_unsupported_kept),
		cmocka_unit_test(test_reader_path_selects_itself),
		cmocka_unit_test(test_native_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
