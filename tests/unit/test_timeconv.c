/* SPDX-License-Identifier: MIT */
/* lib/self/timeconv.c: perf time <-> cycles on synthetic pages, perf clock <-> POSIX
 * clocks live (use_clockid and the measured offset). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static void test_from_page(void **state)
{
	struct perf_event_mmap_page *pc = calloc(1, sizeof(*pc));
	struct pk_time_conv tc;
	assert_non_null(pc);
	pc->lock = 4;
	pc->capabilities = PK_CAP_USER_TIME | PK_CAP_USER_TIME_ZERO;
	pc->time_mult = 1717986918;
	pc->time_shift = 32;
	pc->time_zero = 123456789;
	pc->time_cycles = 77;       /* ignored without cap_user_time_short */
	pc->time_mask = 0xFF;
	assert_int_equal(pk_time_conv__from_page(&tc, pc), 0);
	assert_int_equal(tc.time_mult, 1717986918);
	assert_int_equal(tc.time_shift, 32);
	assert_int_equal(tc.time_zero, 123456789);
	assert_int_equal(tc.time_mask, ~0ULL);
	assert_int_equal(tc.time_cycles, 0);
	/* without time_zero the parameters are returned but flagged unusable */
	pc->capabilities = PK_CAP_USER_TIME | PK_CAP_USER_TIME_SHORT;
	assert_int_equal(pk_time_conv__from_page(&tc, pc), -EOPNOTSUPP);
	assert_int_equal(tc.time_mask, 0xFF);
	assert_int_equal(tc.time_cycles, 77);
	/* a page whose lock stays odd (writer in progress) is never accepted */
	pc->lock = 5;
	assert_int_equal(pk_time_conv__from_page(&tc, pc), -EAGAIN);
	free(pc);
}

static void test_cyc_perf_roundtrip(void **state)
{
	/* 2.5 GHz: 0.4 ns per cycle */
	struct pk_time_conv tc = { .capabilities = PK_CAP_USER_TIME_ZERO, .time_mult = 1717986918,
				   .time_shift = 32, .time_zero = 1000000, .time_mask = ~0ULL };
	assert_int_equal(pk_time_conv__cyc_to_perf(&tc, 0), 1000000);
	/* 2.5e9 cycles = 1 s (mult is rounded: within a few ns) */
	uint64_t t = pk_time_conv__cyc_to_perf(&tc, 2500000000ULL);
	assert_true(t >= 1000000 + 1000000000ULL - 2 && t <= 1000000 + 1000000000ULL + 2);
	/* the man page's quotient/remainder formula (cap_user_time), for a huge cycle count */
	uint64_t cyc = 0x00FEDCBA98765432ULL;
	uint64_t quot = cyc >> 32, rem = cyc & 0xFFFFFFFFULL;
	assert_int_equal(pk_time_conv__cyc_to_perf(&tc, cyc),
			 1000000 + quot * 1717986918ULL + ((rem * 1717986918ULL) >> 32));
	/* inverse: within one cycle */
	for (uint64_t c = 1; c < (1ULL << 60); c = c * 7 + 3) {
		uint64_t ns = pk_time_conv__cyc_to_perf(&tc, c);
		uint64_t back = pk_time_conv__perf_to_cyc(&tc, ns);
		assert_true(back <= c + 1 && back + 3 >= c);
	}
	/* a shift of 10 (typical of a 1 GHz counter with mult 1024) */
	struct pk_time_conv t2 = { .capabilities = PK_CAP_USER_TIME_ZERO, .time_mult = 1024,
				   .time_shift = 10, .time_zero = 5, .time_mask = ~0ULL };
	assert_int_equal(pk_time_conv__cyc_to_perf(&t2, 1000), 1005);
	assert_int_equal(pk_time_conv__perf_to_cyc(&t2, 1005), 1000);
}

static void test_live_page(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct pk_time_conv tc;
	int err = pk_time_conv__read(&tc);
	printf("# live page: capabilities 0x%llx mult %u shift %u zero %llu -> %d\n",
	       (unsigned long long)tc.capabilities, tc.time_mult, tc.time_shift,
	       (unsigned long long)tc.time_zero, err);
	if (err == -EOPNOTSUPP) {
		/* e.g. a KVM guest whose sched_clock is not the TSC: say so, do not convert */
		uint64_t ns;
		assert_int_equal(pk_time_conv__now(&tc, &ns), -EOPNOTSUPP);
		PK_SKIP("the kernel does not set cap_user_time_zero here (capabilities 0x%llx)",
			(unsigned long long)tc.capabilities);
	}
	assert_int_equal(err, 0);
	/* TSC "now" converted must match a kernel timestamp taken right after */
	uint64_t now, stamp;
	assert_int_equal(pk_time_conv__now(&tc, &now), 0);
	assert_int_equal(pk_perf_clock__stamp(-1, &stamp, NULL, NULL), 0);
	assert_true(stamp >= now && stamp - now < 50000000ULL);
}

static void test_use_clockid_monotonic(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	uint64_t t, b, a;
	int err = pk_perf_clock__stamp(CLOCK_MONOTONIC, &t, &b, &a);
	if (err == -EINVAL)
		PK_SKIP("the kernel rejects use_clockid");
	assert_int_equal(err, 0);
	/* a timestamp in CLOCK_MONOTONIC directly: inside the bracket */
	assert_true(b <= t);
	assert_true(t <= a);
}

static void test_measured_offset(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct pk_clock_offset o;
	assert_int_equal(pk_clock_offset__measure(&o, CLOCK_MONOTONIC, 8), 0);
	printf("# perf clock -> CLOCK_MONOTONIC: offset %lld ns +- %llu\n", (long long)o.offset_ns,
	       (unsigned long long)o.error_ns);
	assert_true(o.error_ns < 10000000); /* a bracket of a few syscalls */
	/* an independent stamp in the perf clock, converted, lands in its monotonic bracket */
	uint64_t t, b, a;
	assert_int_equal(pk_perf_clock__stamp(-1, &t, &b, &a), 0);
	uint64_t m = pk_clock_offset__to_clock(&o, t);
	/* allow the measurement error plus a little drift */
	uint64_t slack = o.error_ns + 200000;
	assert_true(m + slack >= b);
	assert_true(m <= a + slack);
	assert_int_equal(pk_clock_offset__to_perf(&o, m), t);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_page),
		cmocka_unit_test(test_cyc_perf_roundtrip),
		cmocka_unit_test(test_live_page),
		cmocka_unit_test(test_use_clockid_monotonic),
		cmocka_unit_test(test_measured_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
