/* SPDX-License-Identifier: MIT */
/*
 * perfkit record's rotation (tool/record-rotate.c): the --switch-output / --max-size
 * parsers, perf's names of rotated files, and --switch-max-files' deletion of the oldest
 * files with the hook called for every file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "../../tool/record-rotate.c"

static void test_size(void **state)
{
	uint64_t v = 0;
	(void)state;
	assert_int_equal(tool_rotate_parse_size("100M", &v), 0);
	assert_true(v == 100ULL << 20);
	assert_int_equal(tool_rotate_parse_size("1G", &v), 0);
	assert_true(v == 1ULL << 30);
	assert_int_equal(tool_rotate_parse_size("64K", &v), 0);
	assert_true(v == 65536);
	assert_int_equal(tool_rotate_parse_size("4096B", &v), 0);
	assert_true(v == 4096);
	assert_int_equal(tool_rotate_parse_size("17179869183G", &v), 0); /* 2^64 - 2^30 */
	assert_true(v == 17179869183ULL << 30);
	v = 7;
	const char *bad[] = { "", "M", "100", "100m", "100k", "1.5M", "-1M", " 1M", "1M ",
			      "1MB", "0M", "0B", "1T", "+1M", "1 M" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(tool_rotate_parse_size(bad[i], &v), -EINVAL);
	assert_int_equal(tool_rotate_parse_size(NULL, &v), -EINVAL);
	assert_int_equal(tool_rotate_parse_size("17179869184G", &v), -ERANGE);
	assert_int_equal(tool_rotate_parse_size("99999999999999999999B", &v), -ERANGE);
	assert_true(v == 7); /* untouched on error */
}

static void test_time(void **state)
{
	uint64_t v = 0;
	(void)state;
	assert_int_equal(tool_rotate_parse_time("30s", &v), 0);
	assert_true(v == 30);
	assert_int_equal(tool_rotate_parse_time("5m", &v), 0);
	assert_true(v == 300);
	assert_int_equal(tool_rotate_parse_time("1h", &v), 0);
	assert_true(v == 3600);
	assert_int_equal(tool_rotate_parse_time("2d", &v), 0);
	assert_true(v == 172800);
	const char *bad[] = { "", "s", "30", "30S", "5M", "0s", "1.5s", "-1s", "30sec", "1w" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(tool_rotate_parse_time(bad[i], &v), -EINVAL);
	assert_int_equal(tool_rotate_parse_time("999999999999999999d", &v), -ERANGE);
}

static void test_switch_output(void **state)
{
	struct tool_rotate r = { 0 };
	(void)state;
	assert_int_equal(tool_rotate_parse(NULL, &r), 0);
	assert_int_equal(r.mode, TOOL_ROTATE_SIGNAL);
	memset(&r, 0, sizeof(r));
	assert_int_equal(tool_rotate_parse("signal", &r), 0);
	assert_int_equal(r.mode, TOOL_ROTATE_SIGNAL);
	/* upper case is a size, lower case a time: 5M and 5m differ */
	assert_int_equal(tool_rotate_parse("5M", &r), 0);
	assert_int_equal(r.mode, TOOL_ROTATE_SIZE);
	assert_true(r.size == 5ULL << 20);
	assert_int_equal(tool_rotate_parse("5m", &r), 0);
	assert_int_equal(r.mode, TOOL_ROTATE_TIME);
	assert_true(r.secs == 300);
	struct tool_rotate before = r;
	assert_int_equal(tool_rotate_parse("5x", &r), -EINVAL);
	assert_int_equal(tool_rotate_parse("Signal", &r), -EINVAL);
	assert_int_equal(tool_rotate_parse("", &r), -EINVAL);
	assert_int_equal(tool_rotate_parse("100", &r), -EINVAL);
	assert_int_equal(tool_rotate_parse("99999999999999999999G", &r), -ERANGE);
	assert_memory_equal(&r, &before, sizeof(r));
}

static void test_timestamp(void **state)
{
	char buf[32];
	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	/* 2015-12-25 20:10:30.46 UTC: perf's example "2015122520103046" */
	struct timeval tv = { .tv_sec = 1451074230, .tv_usec = 469999 };
	assert_int_equal(tool_rotate_timestamp(buf, sizeof(buf), &tv), 0);
	assert_string_equal(buf, "2015122520103046");
	tv.tv_usec = 0;
	assert_int_equal(tool_rotate_timestamp(buf, sizeof(buf), &tv), 0);
	assert_string_equal(buf, "2015122520103000");
	tv.tv_usec = 999999;
	assert_int_equal(tool_rotate_timestamp(buf, sizeof(buf), &tv), 0);
	assert_string_equal(buf, "2015122520103099");
	assert_int_equal(tool_rotate_timestamp(buf, 16, &tv), -EINVAL);
	assert_int_equal(tool_rotate_timestamp(buf, 17, &tv), 0);
	assert_int_equal(strlen(buf), 16);
}

/* never the same name twice, never an existing file's */
static void test_names(void **state)
{
	struct tool_rotate r = { 0 };
	char a[64], b[64], c[64];
	(void)state;
	assert_int_equal(tool_rotate_name(&r, "rot.data", a, sizeof(a)), 0);
	assert_int_equal(strlen(a), strlen("rot.data.") + 16);
	assert_int_equal(strncmp(a, "rot.data.", 9), 0);
	assert_int_equal(tool_rotate_name(&r, "rot.data", b, sizeof(b)), 0);
	assert_string_not_equal(a, b);
	/* a file of the next name exists: taken names are skipped */
	FILE *f = fopen(b, "w");
	assert_non_null(f);
	fclose(f);
	struct tool_rotate r2 = { 0 };
	assert_int_equal(tool_rotate_name(&r2, "rot.data", c, sizeof(c)), 0);
	assert_string_not_equal(c, b);
	unlink(b);
	char tiny[12];
	assert_int_equal(tool_rotate_name(&r, "rot.data", tiny, sizeof(tiny)), -ENAMETOOLONG);
}

static int hook_calls;
static char hook_last[64];
static void hook(const char *path, uint64_t first, uint64_t last, void *arg)
{
	assert_ptr_equal(arg, &hook_calls);
	assert_true(first <= last);
	/* the file is there when the hook runs */
	assert_int_equal(access(path, F_OK), 0);
	snprintf(hook_last, sizeof(hook_last), "%s", path);
	hook_calls++;
}

static void test_max_files(void **state)
{
	struct tool_rotate r = { .max_files = 2, .on_file_closed = hook,
				 .on_file_closed_arg = &hook_calls };
	char names[5][16];
	(void)state;
	for (int i = 0; i < 5; i++) {
		snprintf(names[i], sizeof(names[i]), "mf.%d", i);
		FILE *f = fopen(names[i], "w");
		assert_non_null(f);
		fclose(f);
		int del = tool_rotate_closed(&r, names[i], 100 * (uint64_t)i, 100 * (uint64_t)i + 50);
		assert_int_equal(del, i >= 2 ? 1 : 0);
		assert_string_equal(hook_last, names[i]);
	}
	assert_int_equal(hook_calls, 5);
	/* the two newest remain */
	for (int i = 0; i < 5; i++)
		assert_int_equal(access(names[i], F_OK) == 0, i >= 3);
	tool_rotate_release(&r);
	unlink(names[3]);
	unlink(names[4]);
	/* max_files 0: all are kept */
	struct tool_rotate all = { 0 };
	assert_int_equal(tool_rotate_closed(&all, "whatever", 0, 0), 0);
	tool_rotate_release(&all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_switch_output),
		cmocka_unit_test(test_timestamp),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_max_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
