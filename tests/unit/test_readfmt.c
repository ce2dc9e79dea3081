/* SPDX-License-Identifier: MIT */
/* lib/count/readfmt.c: every read_format layout, decoded from synthetic buffers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif
#define ALL_BITS 0x1fu

/* Build the bytes the kernel would return: values 1000+i, id 500+i, lost 7+i, ena/run. */
static size_t build(uint64_t rf, unsigned nr, uint64_t ena, uint64_t run, uint64_t *w)
{
	size_t n = 0;
	if (rf & PERF_FORMAT_GROUP) {
		w[n++] = nr;
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			w[n++] = ena;
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			w[n++] = run;
		for (unsigned i = 0; i < nr; i++) {
			w[n++] = 1000 + i;
			if (rf & PERF_FORMAT_ID)
				w[n++] = 500 + i;
			if (rf & PERF_FORMAT_LOST)
				w[n++] = 7 + i;
		}
	} else {
		w[n++] = 1000;
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			w[n++] = ena;
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			w[n++] = run;
		if (rf & PERF_FORMAT_ID)
			w[n++] = 500;
		if (rf & PERF_FORMAT_LOST)
			w[n++] = 7;
	}
	return n * 8;
}

static void check_values(uint64_t rf, unsigned nr, const struct pk_count_value *v)
{
	for (unsigned i = 0; i < nr; i++) {
		assert_int_equal(v[i].val, 1000 + i);
		assert_int_equal(v[i].ena, (rf & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 2000 : 0);
		assert_int_equal(v[i].run, (rf & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 1500 : 0);
		assert_int_equal(v[i].id, (rf & PERF_FORMAT_ID) ? 500 + i : 0);
		assert_int_equal(v[i].lost, (rf & PERF_FORMAT_LOST) ? 7 + i : 0);
	}
}

/* All 32 combinations of TOTAL_TIME_ENABLED/RUNNING, ID, GROUP, LOST. */
static void test_every_combination(void **state)
{
	for (uint64_t rf = 0; rf <= ALL_BITS; rf++) {
		unsigned nr = (rf & PERF_FORMAT_GROUP) ? 3 : 1;
		uint64_t w[64];
		struct pk_count_value v[8];
		size_t len = build(rf, nr, 2000, 1500, w);
		memset(v, 0xa5, sizeof(v));
		assert_int_equal(pk_read_format__size(rf, nr), len);
		assert_int_equal(pk_read_format__decode(rf, w, len, v, 8, NULL), (int)nr);
		check_values(rf, nr, v);
	}
}

/* A group of five: every member's value comes back, not only the leader's. */
static void test_group_members(void **state)
{
	uint64_t rf = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
		      PERF_FORMAT_TOTAL_TIME_RUNNING;
	uint64_t w[64];
	struct pk_count_value v[5];
	size_t len = build(rf, 5, 2000, 1500, w);
	assert_int_equal(pk_read_format__decode(rf, w, len, v, 5, NULL), 5);
	check_values(rf, 5, v);
	/* fewer slots than members: the count is still reported, only max are written */
	memset(v, 0, sizeof(v));
	assert_int_equal(pk_read_format__decode(rf, w, len, v, 2, NULL), 5);
	assert_int_equal(v[1].val, 1001);
	assert_int_equal(v[2].val, 0);
}

/* Every strict prefix of a valid buffer is rejected; so is a longer buffer. */
static void test_truncated(void **state)
{
	for (uint64_t rf = 0; rf <= ALL_BITS; rf++) {
		unsigned nr = (rf & PERF_FORMAT_GROUP) ? 3 : 1;
		uint64_t w[64];
		struct pk_count_value v[4];
		size_t len = build(rf, nr, 1, 1, w);
		for (size_t cut = 0; cut < len; cut++)
			assert_int_equal(pk_read_format__decode(rf, w, cut, v, 4, NULL),
					 -PK_ERR_FORMAT);
		assert_int_equal(pk_read_format__decode(rf, w, len + 8, v, 4, NULL), -PK_ERR_FORMAT);
	}
}

/* nr larger than the buffer can hold, including values that overflow size arithmetic. */
static void test_nr_overflow(void **state)
{
	uint64_t rf = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST;
	const uint64_t bad[] = { 4, 1000, UINT32_MAX, (uint64_t)INT32_MAX + 1, UINT64_MAX,
				 UINT64_MAX / 24 + 1 };
	uint64_t w[64];
	struct pk_count_value v[4];
	size_t len = build(rf, 3, 0, 0, w);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		w[0] = bad[i];
		assert_int_equal(pk_read_format__decode(rf, w, len, v, 4, NULL), -PK_ERR_FORMAT);
	}
	/* nr == 0 is a valid (empty) group */
	w[0] = 0;
	assert_int_equal(pk_read_format__decode(rf, w, 8, v, 4, NULL), 0);
}

/* With `consumed`, trailing bytes are allowed (PERF_SAMPLE_READ inside a sample). */
static void test_consumed(void **state)
{
	uint64_t rf = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED;
	uint64_t w[64];
	struct pk_count_value v[4];
	size_t used = 0, len = build(rf, 2, 9, 0, w);
	w[len / 8] = 0xdead;
	assert_int_equal(pk_read_format__decode(rf, w, len + 8, v, 4, &used), 2);
	assert_int_equal(used, len);
	assert_int_equal(v[1].ena, 9);
	assert_int_equal(pk_read_format__decode(rf, w, len - 1, v, 4, &used), -PK_ERR_FORMAT);
}

static void test_unknown_bits(void **state)
{
	uint64_t w[8] = { 0 };
	struct pk_count_value v[1];
	assert_int_equal(pk_read_format__decode(1u << 5, w, 8, v, 1, NULL), -EINVAL);
	assert_int_equal(pk_read_format__decode(1ull << 63, w, 8, v, 1, NULL), -EINVAL);
	/* NULL out / max 0: decode still validates and counts */
	assert_int_equal(pk_read_format__decode(0, w, 8, NULL, 0, NULL), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_combination),
		cmocka_unit_test(test_group_members),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_nr_overflow),
		cmocka_unit_test(test_consumed),
		cmocka_unit_test(test_unknown_bits),
	};
	pk_test_quiet_log();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
