/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/source.c: the lines of source files for annotate. Lines by number across
 * the index's steps (with and without a last newline, CRLF, empty lines), the errors of
 * files that cannot be read (missing, a directory, a FIFO that must not block, above the
 * size limit) and that they are remembered, line 0 and lines past the end, the bound on
 * the text kept at once (older files dropped and read again), text given with put; and
 * pk_dso__comp_dir of this test's own code, the directory its relative names start from.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

#define PK_MIN_T(a, b) ((a) < (b) ? (a) : (b))

static void expect_line(struct pk_source_cache *c, const char *path, size_t n, const char *want)
{
	const char *t = NULL;
	size_t len = 0;
	assert_int_equal(pk_source_cache__line(c, path, n, &t, &len), 0);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(t, want, len);
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void test_lines(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("srccache");
	char path[512];
	snprintf(path, sizeof(path), "%s/a.c", dir);
	/* 100 lines "line N", across several index steps (one per 32 lines) */
	char buf[2000];
	size_t n = 0;
	for (int i = 1; i <= 100; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "line %d\n", i);
	write_file(path, buf, n);
	struct pk_source_cache *c = pk_source_cache__new(NULL);
	assert_non_null(c);
	size_t nr = 0;
	assert_int_equal(pk_source_cache__lines(c, path, &nr), 0);
	assert_int_equal(nr, 100);
	expect_line(c, path, 1, "line 1");
	expect_line(c, path, 32, "line 32");
	expect_line(c, path, 33, "line 33");
	expect_line(c, path, 64, "line 64");
	expect_line(c, path, 65, "line 65");
	expect_line(c, path, 100, "line 100");
	expect_line(c, path, 7, "line 7");
	const char *t;
	size_t len;
	assert_int_equal(pk_source_cache__line(c, path, 0, &t, &len), -ERANGE);
	assert_int_equal(pk_source_cache__line(c, path, 101, &t, &len), -ERANGE);
	assert_int_equal(pk_source_cache__line(c, path, (size_t)-1, &t, &len), -ERANGE);
	/* the text read once: a change on disk is not seen (one version per run) */
	write_file(path, "x\n", 2);
	expect_line(c, path, 50, "line 50");

	/* no last newline, CRLF kept as text, empty lines */
	assert_int_equal(pk_source_cache__put(c, "mem.c", "a\r\n\n\nlast", 9), 0);
	assert_int_equal(pk_source_cache__lines(c, "mem.c", &nr), 0);
	assert_int_equal(nr, 4);
	expect_line(c, "mem.c", 1, "a\r");
	expect_line(c, "mem.c", 2, "");
	expect_line(c, "mem.c", 4, "last");
	assert_int_equal(pk_source_cache__put(c, "empty.c", "", 0), 0);
	assert_int_equal(pk_source_cache__lines(c, "empty.c", &nr), 0);
	assert_int_equal(nr, 0);
	assert_int_equal(pk_source_cache__line(c, "empty.c", 1, &t, &len), -ERANGE);
	/* put replaces */
	assert_int_equal(pk_source_cache__put(c, "mem.c", "b\n", 2), 0);
	expect_line(c, "mem.c", 1, "b");

	assert_int_equal(pk_source_cache__line(NULL, path, 1, &t, &len), -EINVAL);
	assert_int_equal(pk_source_cache__line(c, NULL, 1, &t, &len), -EINVAL);
	assert_int_equal(pk_source_cache__line(c, path, 1, NULL, &len), -EINVAL);
	assert_int_equal(pk_source_cache__put(c, "x", NULL, 3), -EINVAL);
	pk_source_cache__free(c);
	pk_source_cache__free(NULL);
	pk_test_sh("rm -rf '%s'", dir);
	free(dir);
}

static void test_unreadable(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("srccache");
	char p[512];
	PK_OPTS(pk_source_cache_opts, o, .max_file_bytes = 1000);
	struct pk_source_cache *c = pk_source_cache__new(&o);
	assert_non_null(c);
	size_t nr;
	snprintf(p, sizeof(p), "%s/missing.c", dir);
	assert_int_equal(pk_source_cache__lines(c, p, &nr), -ENOENT);
	/* remembered: made now, it is still not read */
	write_file(p, "int x;\n", 7);
	assert_int_equal(pk_source_cache__lines(c, p, &nr), -ENOENT);
	assert_int_equal(pk_source_cache__lines(c, dir, &nr), -EISDIR);
	snprintf(p, sizeof(p), "%s/fifo.c", dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(pk_source_cache__lines(c, p, &nr), -EINVAL); /* and did not block */
	assert_int_equal(pk_source_cache__lines(c, "/dev/zero", &nr), -EINVAL);
	snprintf(p, sizeof(p), "%s/big.c", dir);
	char big[1001];
	memset(big, '\n', sizeof(big));
	write_file(p, big, sizeof(big));
	assert_int_equal(pk_source_cache__lines(c, p, &nr), -EFBIG);
	assert_int_equal(pk_source_cache__put(c, "big2.c", big, sizeof(big)), -EFBIG);
	/* exactly the limit is read: 1000 empty lines */
	snprintf(p, sizeof(p), "%s/limit.c", dir);
	write_file(p, big, 1000);
	assert_int_equal(pk_source_cache__lines(c, p, &nr), 0);
	assert_int_equal(nr, 1000);
	pk_source_cache__free(c);
	/* a bad options struct */
	struct { struct pk_source_cache_opts o; char more[8]; } longer;
	memset(&longer, 0, sizeof(longer));
	longer.o.sz = sizeof(longer);
	longer.more[3] = 1;
	assert_null(pk_source_cache__new(&longer.o));
	assert_int_equal(errno, EINVAL);
	pk_test_sh("rm -rf '%s'", dir);
	free(dir);
}

static void test_bounded(void **state)
{
	(void)state;
	/* room for two files of 300 bytes at once: a third drops the one used longest ago,
	 * which is read again (from the disk) when asked for */
	char *dir = pk_test_mkdtemp("srccache");
	PK_OPTS(pk_source_cache_opts, o, .max_file_bytes = 300, .max_total_bytes = 700);
	struct pk_source_cache *c = pk_source_cache__new(&o);
	assert_non_null(c);
	char text[300], p[3][512];
	for (int i = 0; i < 3; i++) {
		memset(text, 'a' + i, sizeof(text));
		text[sizeof(text) - 1] = '\n';
		snprintf(p[i], sizeof(p[i]), "%s/f%d.c", dir, i);
		write_file(p[i], text, sizeof(text));
	}
	size_t nr;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 3; i++) {
			const char *t;
			size_t len;
			assert_int_equal(pk_source_cache__line(c, p[i], 1, &t, &len), 0);
			assert_int_equal(len, 299);
			assert_int_equal(t[0], 'a' + i);
			assert_int_equal(t[298], 'a' + i);
		}
	}
	assert_int_equal(pk_source_cache__lines(c, p[0], &nr), 0);
	assert_int_equal(nr, 1);
	pk_source_cache__free(c);
	pk_test_sh("rm -rf '%s'", dir);
	free(dir);
}

static void test_comp_dir(void **state)
{
	(void)state;
	struct pk_machine *m;
	struct pk_dso *d = pk_test_self_dso(&m);
	uint64_t addr = 0;
	assert_int_equal(pk_dso__symbol_addr(d, "test_comp_dir", &addr), 0);
	const char *file = NULL;
	unsigned int line = 0;
	if (pk_dso__srcline(d, addr, &file, &line) || !line) {
		pk_machine__free(m);
		PK_SKIP("this test binary has no line table (built without -g)");
		return;
	}
	const char *dir = pk_dso__comp_dir(d, addr);
	assert_non_null(dir);
	assert_int_equal(dir[0], '/');
	struct stat st;
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* the line names this file, relative to dir or absolute */
	char path[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s%s%s", file[0] == '/' ? "" : dir, file[0] == '/' ? "" : "/",
		 file);
	assert_non_null(strstr(path, "test_source_cache.c"));
	struct pk_source_cache *c = pk_source_cache__new(NULL);
	assert_non_null(c);
	const char *t;
	size_t len;
	assert_int_equal(pk_source_cache__line(c, path, line, &t, &len), 0);
	/* the function's first line: its name or its opening brace */
	char text[256];
	snprintf(text, sizeof(text), "%.*s", (int)PK_MIN_T(len, 255), t);
	assert_true(strstr(text, "test_comp_dir") || strchr(text, '{'));
	pk_source_cache__free(c);
	/* no unit there; bad arguments */
	errno = 0;
	assert_null(pk_dso__comp_dir(d, (uint64_t)1 << 60));
	assert_int_equal(errno, ENOENT);
	assert_null(pk_dso__comp_dir(NULL, addr));
	assert_int_equal(errno, EINVAL);
	pk_machine__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_comp_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
