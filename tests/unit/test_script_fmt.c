/* SPDX-License-Identifier: MIT */
/* perfkit script's fast number formatters (tool/script-fmt.h) against printf: edge values,
 * every hex digit count, and pseudo-random values of every magnitude. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>
#include "../../tool/script-fmt.h"

static void check(uint64_t v)
{
	char want[64], got[64];
	/* fmt_hex_fast writes 16 bytes whatever the length: the rest of the buffer is kept
	 * apart and must come back as it was */
	memset(got, 'Z', sizeof(got));
	snprintf(want, sizeof(want), "%" PRIx64, v);
	*fmt_hex_fast(got, v) = 0;
	assert_string_equal(got, want);
	assert_true(got[17] == 'Z');
	snprintf(want, sizeof(want), "%16" PRIx64, v);
	*fmt_hex16_fast(got, v) = 0;
	assert_string_equal(got, want);
	snprintf(want, sizeof(want), "%" PRIu64, v);
	*fmt_u64_fast(got, v) = 0;
	assert_string_equal(got, want);
	snprintf(want, sizeof(want), "%" PRIu32, (uint32_t)v);
	*fmt_u32_fast(got, (uint32_t)v) = 0;
	assert_string_equal(got, want);
	snprintf(want, sizeof(want), "%" PRId32, (int32_t)v);
	*fmt_pid_fast(got, (uint32_t)v) = 0;
	assert_string_equal(got, want);
}

static void test_edges(void **state)
{
	(void)state;
	static const uint64_t v[] = { 0, 1, 9, 10, 15, 16, 99, 100, 99999999, 100000000,
		100000001, 1234567890123ull, 9999999999999999ull, 10000000000000000ull,
		0x7fffffffffffffffull, 0x8000000000000000ull, UINT64_MAX,
		0xffffffff81000000ull, 0x7f0012345678ull, 0x400000ull };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		check(v[i]);
	/* every digit count, and a digit count's bounds */
	for (int b = 0; b < 64; b++) {
		check(1ull << b);
		check((1ull << b) - 1);
		check((2ull << b) - 1);
	}
}

static void test_random(void **state)
{
	(void)state;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		check(x >> (x % 64)); /* all magnitudes */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
