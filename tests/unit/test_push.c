/* SPDX-License-Identifier: MIT */
/* The push command's pieces that need no server (tool/push-text.c, tool/push-spool.c):
 * query escaping, sizes, and the spool: entries named by range (one per profile), the
 * oldest dropped first over the bound, an entry taken by one sender at a time, damaged
 * entries refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "../../tool/push-text.c"
#include "../../tool/push-spool.c"

/* the tool's message functions (tool/util.c) */
static int warnings;
void tool_error(const char *fmt, ...)
{
	(void)fmt;
}
void tool_warn(const char *fmt, ...)
{
	(void)fmt;
	warnings++;
}

static void test_escape(void **state)
{
	(void)state;
	char buf[64];
	assert_int_equal(push_url_escape(buf, sizeof(buf), "app{host=a.b,k=v_1~}"), 30);
	assert_string_equal(buf, "app%7Bhost%3Da.b%2Ck%3Dv_1~%7D");
	assert_int_equal(push_url_escape(buf, 4, "{"), 3);
	assert_int_equal(push_url_escape(buf, 3, "{"), -1);   /* no room for the NUL */
	assert_int_equal(push_url_escape(buf, 2, "ab"), -1);
	assert_int_equal(push_url_escape(buf, sizeof(buf), "\xff "), 6);
	assert_string_equal(buf, "%FF%20");
}

static void test_base64(void **state)
{
	(void)state;
	char buf[16];
	assert_int_equal(push_base64(buf, "", 0), 0);
	assert_int_equal(push_base64(buf, "f", 1), 4);
	assert_string_equal(buf, "Zg==");
	assert_int_equal(push_base64(buf, "fo", 2), 4);
	assert_string_equal(buf, "Zm8=");
	assert_int_equal(push_base64(buf, "foo", 3), 4);
	assert_string_equal(buf, "Zm9v");
	assert_int_equal(push_base64(buf, "\xff\xfe\xfd\x00", 4), 8);
	assert_string_equal(buf, "//79AA==");
}

static void test_size(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(push_parse_size("100M", &v), 0);
	assert_true(v == 100ull << 20);
	assert_int_equal(push_parse_size("512", &v), 0);
	assert_true(v == 512);
	assert_int_equal(push_parse_size("2GB", &v), 0);
	assert_true(v == 2ull << 30);
	assert_int_equal(push_parse_size("-1", &v), -1);
	assert_int_equal(push_parse_size("1T", &v), -1);
	assert_int_equal(push_parse_size("", &v), -1);
	assert_int_equal(push_parse_size("99999999999999999999G", &v), -1);
	assert_int_equal(push_parse_size("17179869184G", &v), -1);   /* 2^34 G overflows */
}

static size_t count(struct push_spool *s)
{
	char **v;
	size_t n;
	assert_int_equal(push_spool_list(s, &v, &n), 0);
	push_spool_names_free(v, n);
	return n;
}

static void test_spool(void **state)
{
	(void)state;
	char dir[] = "spool.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sub[64];
	snprintf(sub, sizeof(sub), "%s/a/b", dir);   /* created with its parents */
	char body[1000];
	memset(body, 'x', sizeof(body));
	struct push_spool *s = push_spool_open(sub, 2500);
	assert_non_null(s);
	unsigned dropped = 0;
	assert_int_equal(push_spool_put(s, 1000, 2000, "name=a&from=1&until=2", body, 1000, PUSH_PPROF,
					&dropped), 0);
	/* the same profile again: one entry */
	assert_int_equal(push_spool_put(s, 1000, 2000, "name=a&from=1&until=2", body, 1000, PUSH_PPROF,
					&dropped), 0);
	assert_int_equal(count(s), 1);
	assert_int_equal(push_spool_put(s, 3000, 4000, "name=a&from=3&until=4", body, 1000, PUSH_FOLDED,
					&dropped), 0);
	assert_int_equal(dropped, 0);
	/* a third is over 2500 bytes: the oldest (from 1000) goes */
	warnings = 0;
	assert_int_equal(push_spool_put(s, 5000, 6000, "name=a&from=5&until=6", body, 1000, PUSH_PPROF,
					&dropped), 0);
	assert_int_equal(dropped, 1);
	assert_int_equal(warnings, 1);
	char **v;
	size_t n;
	assert_int_equal(push_spool_list(s, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_true(!strncmp(v[0], "00000000000000003000-", 21));
	assert_true(strstr(v[0], ".folded") != NULL);
	/* taken: query and body as put; a second taker is refused while the first holds it */
	struct push_spool_entry e, e2;
	assert_int_equal(push_spool_take(s, v[0], &e), 0);
	assert_string_equal(e.query, "name=a&from=3&until=4");
	assert_int_equal(e.len, 1000);
	assert_int_equal(e.format, PUSH_FOLDED);
	assert_memory_equal(e.body, body, 1000);
	assert_int_equal(push_spool_take(s, v[0], &e2), -EBUSY);
	push_spool_release(s, &e2, false);
	push_spool_release(s, &e, true);   /* delivered: removed */
	assert_int_equal(count(s), 1);
	assert_int_equal(push_spool_take(s, v[0], &e), -ENOENT);
	push_spool_release(s, &e, false);
	/* a damaged entry (no query line) is refused, and set aside */
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", sub, v[1]);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("PKSPOOL1\nname=a b", f);
	fclose(f);
	assert_int_equal(push_spool_take(s, v[1], &e), -EBADMSG);
	push_spool_release(s, &e, false);
	push_spool_set_aside(s, v[1]);
	assert_int_equal(count(s), 0);
	/* a name that is no entry is never opened */
	assert_int_equal(push_spool_take(s, "../../etc/passwd", &e), -EINVAL);
	push_spool_release(s, &e, false);
	/* one profile alone over the bound is dropped too */
	dropped = 0;
	char *big = calloc(1, 4000);
	assert_non_null(big);
	assert_int_equal(push_spool_put(s, 7000, 8000, "name=b&from=7&until=8", big, 4000, PUSH_PARCA,
					&dropped), 0);
	assert_int_equal(dropped, 1);
	assert_int_equal(count(s), 0);
	free(big);
	push_spool_names_free(v, n);
	push_spool_free(s);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_spool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
