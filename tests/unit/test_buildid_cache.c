/* SPDX-License-Identifier: MIT */
/*
 * lib/data/buildid-cache.c: filling perf's build-id cache. A file is stored as a hard link
 * in perf's layout and found again through the machine's build-id lookup; a second add
 * changes nothing; a file on another file system is copied (and refused above max_copy);
 * an id the file does not have is not kept; bad arguments and an unusable cache directory
 * are errors; kallsyms is copied unless every address reads as zero.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

#define PK_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static char self[PATH_MAX];
static uint8_t self_id[PK_BUILD_ID_MAX];
static size_t self_len;

static int setup(void **state)
{
	(void)state;
	pk_test_quiet_log();
	if (!realpath("/proc/self/exe", self))
		return -1;
	self_len = sizeof(self_id);
	return pk_build_id__read(self, self_id, &self_len);
}

static void hex_of(const uint8_t *id, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
}

/* <cache>/.build-id/xx/yyy[/elf] for the id */
static void link_path(const char *cache, const uint8_t *id, size_t len, const char *leaf,
		      char *out, size_t n)
{
	char hex[2 * PK_BUILD_ID_MAX + 1];
	hex_of(id, len, hex);
	int r = snprintf(out, n, "%s/.build-id/%.2s/%s%s%s", cache, hex, hex + 2, leaf ? "/" : "",
			 leaf ? leaf : "");
	assert_true(r > 0 && (size_t)r < n);
}

static ino_t inode_of(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? st.st_ino : 0;
}

static void test_add_link_and_lookup(void **state)
{
	(void)state;
	char *cache = pk_test_mkdtemp("bidc");
	char cachedir[PATH_MAX], lp[PATH_MAX], target[PATH_MAX], want[2 * PATH_MAX], hex[64];
	PK_OPTS(pk_build_id_cache_opts, o, .dir = cachedir);

	/* a cache directory that does not exist yet is created */
	snprintf(cachedir, sizeof(cachedir), "%s/sub/dir/", cache);
	assert_int_equal(pk_build_id_cache__add(self, self_id, self_len, &o), 0);
	snprintf(cachedir, sizeof(cachedir), "%s/sub/dir", cache);
	link_path(cachedir, self_id, self_len, NULL, lp, sizeof(lp));
	ssize_t n = readlink(lp, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = 0;
	hex_of(self_id, self_len, hex);
	snprintf(want, sizeof(want), "../../%s/%s", self + 1, hex);
	assert_string_equal(target, want);
	link_path(cachedir, self_id, self_len, "elf", lp, sizeof(lp));
	/* the cache and this binary are on the same file system: a hard link */
	assert_true(inode_of(lp) == inode_of(self));

	/* a second add keeps what is there */
	struct stat a, b;
	assert_int_equal(lstat(lp, &a), 0);
	assert_int_equal(pk_build_id_cache__add(self, self_id, self_len, &o), 0);
	assert_int_equal(lstat(lp, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec &&
		    a.st_ctim.tv_sec == b.st_ctim.tv_sec);

	/* the machine finds the cached copy when the path now holds another file */
	char moved[PATH_MAX + 16];
	snprintf(moved, sizeof(moved), "%s/prog", cache);
	assert_int_equal(pk_test_sh("cp '%s' '%s'", self, moved), 0);
	uint8_t id2[PK_BUILD_ID_MAX];
	size_t len2 = sizeof(id2);
	assert_int_equal(pk_build_id__read(moved, id2, &len2), 0);
	PK_OPTS(pk_build_id_cache_opts, o2, .dir = cachedir);
	assert_int_equal(pk_build_id_cache__add(moved, id2, len2, &o2), 0);
	/* rebuild it as a linker does: a new file (a new inode) at the same path */
	assert_int_equal(unlink(moved), 0);
	pk_test_write_file(cache, "prog", "#!/bin/sh\n");
	PK_OPTS(pk_machine_opts, mo, .buildid_dir = cachedir);
	struct pk_machine *m = pk_machine__new(&mo);
	assert_non_null(m);
	assert_int_equal(pk_machine__add_build_id(m, moved, id2, len2), 0);
	struct pk_dso *d = pk_machine__dso(m, moved);
	assert_non_null(d);
	assert_true(pk_dso__load(d) > 0);
	uint64_t addr;
	assert_int_equal(pk_dso__symbol_addr(d, "test_add_link_and_lookup", &addr), 0);
	pk_machine__free(m);

	pk_test_rmtree(cache);
	free(cache);
}

/*
 * perf record writes its cache in $HOME/.debug whatever PERF_BUILDID_DIR says: a machine
 * given another buildid_dir still finds perf's copies in its extra_buildid_dir (the tool
 * passes $HOME/.debug there). The variables themselves are not read by the library.
 */
static void test_lookup_in_perfs_home_cache(void **state)
{
	(void)state;
	char *top = pk_test_mkdtemp("bidhome");
	char home[PATH_MAX], other[PATH_MAX], dotdebug[PATH_MAX + 16], moved[PATH_MAX + 16];
	snprintf(home, sizeof(home), "%s/home", top);
	snprintf(other, sizeof(other), "%s/elsewhere", top);
	snprintf(dotdebug, sizeof(dotdebug), "%s/.debug", home);
	snprintf(moved, sizeof(moved), "%s/prog", top);
	assert_int_equal(pk_test_sh("mkdir -p '%s' '%s' && cp '%s' '%s'", home, other, self, moved), 0);
	uint8_t id[PK_BUILD_ID_MAX];
	size_t len = sizeof(id);
	assert_int_equal(pk_build_id__read(moved, id, &len), 0);
	PK_OPTS(pk_build_id_cache_opts, o, .dir = dotdebug);
	assert_int_equal(pk_build_id_cache__add(moved, id, len, &o), 0);
	assert_int_equal(unlink(moved), 0);
	pk_test_write_file(top, "prog", "#!/bin/sh\n");
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("HOME", home, 1);
	setenv("PERF_BUILDID_DIR", other, 1);
	PK_OPTS(pk_machine_opts, xo, .buildid_dir = other, .extra_buildid_dir = dotdebug);
	struct pk_machine *m = pk_machine__new(&xo);
	assert_non_null(m);
	assert_int_equal(pk_machine__add_build_id(m, moved, id, len), 0);
	struct pk_dso *d = pk_machine__dso(m, moved);
	assert_non_null(d);
	assert_true(pk_dso__load(d) > 0);
	uint64_t addr;
	assert_int_equal(pk_dso__symbol_addr(d, "test_lookup_in_perfs_home_cache", &addr), 0);
	pk_machine__free(m);
	/* without the extra directory only buildid_dir is searched, $HOME notwithstanding */
	PK_OPTS(pk_machine_opts, mo, .buildid_dir = other);
	m = pk_machine__new(&mo);
	assert_non_null(m);
	assert_int_equal(pk_machine__add_build_id(m, moved, id, len), 0);
	d = pk_machine__dso(m, moved);
	assert_non_null(d);
	assert_int_not_equal(pk_dso__symbol_addr(d, "test_lookup_in_perfs_home_cache", &addr), 0);
	pk_machine__free(m);
	unsetenv("PERF_BUILDID_DIR");
	if (old_home) {
		setenv("HOME", old_home, 1);
		free(old_home);
	} else {
		unsetenv("HOME");
	}
	pk_test_rmtree(top);
	free(top);
}

static void test_copy_across_file_systems(void **state)
{
	(void)state;
	struct stat a, b;
	char shm[] = "/dev/shm/pk-bidc-XXXXXX";
	if (stat("/dev/shm", &a) < 0 || stat(".", &b) < 0 || !mkdtemp(shm))
		PK_SKIP("no /dev/shm");
	char prog[PATH_MAX], lp[PATH_MAX];
	snprintf(prog, sizeof(prog), "%s/prog", shm);
	assert_int_equal(pk_test_sh("cp '%s' '%s'", self, prog), 0);
	char *cache = pk_test_mkdtemp("bidc");
	if (a.st_dev == b.st_dev) {
		pk_test_rmtree(shm);
		PK_SKIP("/dev/shm is on the same file system as the build tree");
	}
	/* too large for the copy limit: refused, nothing left behind */
	PK_OPTS(pk_build_id_cache_opts, small, .dir = cache, .max_copy = 4096);
	assert_int_equal(pk_build_id_cache__add(prog, self_id, self_len, &small), -EFBIG);
	link_path(cache, self_id, self_len, NULL, lp, sizeof(lp));
	assert_true(access(lp, F_OK) < 0);
	/* default limit: a copy with the same bytes */
	PK_OPTS(pk_build_id_cache_opts, o, .dir = cache);
	assert_int_equal(pk_build_id_cache__add(prog, self_id, self_len, &o), 0);
	link_path(cache, self_id, self_len, "elf", lp, sizeof(lp));
	assert_true(inode_of(lp) != 0 && inode_of(lp) != inode_of(prog));
	assert_int_equal(pk_test_sh("cmp -s '%s' '%s'", lp, prog), 0);
	pk_test_rmtree(shm);
	pk_test_rmtree(cache);
	free(cache);
}

static void test_errors(void **state)
{
	(void)state;
	char *cache = pk_test_mkdtemp("bidc");
	char dir[PATH_MAX], lp[PATH_MAX];
	PK_OPTS(pk_build_id_cache_opts, o, .dir = cache);
	uint8_t zero[PK_BUILD_ID_MAX] = {0}, other[PK_BUILD_ID_MAX];

	assert_int_equal(pk_build_id_cache__add("relative/path", self_id, self_len, &o), -EINVAL);
	assert_int_equal(pk_build_id_cache__add(NULL, self_id, self_len, &o), -EINVAL);
	assert_int_equal(pk_build_id_cache__add(self, zero, sizeof(zero), &o), -EINVAL);
	assert_int_equal(pk_build_id_cache__add(self, self_id, 0, &o), -EINVAL);
	assert_int_equal(pk_build_id_cache__add(self, self_id, PK_BUILD_ID_MAX + 1, &o), -EINVAL);
	assert_int_equal(pk_build_id_cache__add("/dev/null", self_id, self_len, &o), -EINVAL);
	assert_int_equal(pk_build_id_cache__add("/no/such/file", self_id, self_len, &o), -ENOENT);
	struct pk_build_id_cache_opts bad = { .sz = 3 };
	assert_int_equal(pk_build_id_cache__add(self, self_id, self_len, &bad), -EINVAL);

	/* an id the file does not carry (it was rebuilt after being read): not kept */
	memcpy(other, self_id, self_len);
	other[0] ^= 0xff;
	assert_int_equal(pk_build_id_cache__add(self, other, self_len, &o), -ESTALE);
	link_path(cache, other, self_len, NULL, lp, sizeof(lp));
	assert_true(access(lp, F_OK) < 0);

	/* a cache below a regular file cannot be created */
	pk_test_write_file(cache, "afile", "x");
	snprintf(dir, sizeof(dir), "%s/afile/cache", cache);
	PK_OPTS(pk_build_id_cache_opts, nd, .dir = dir);
	assert_int_equal(pk_build_id_cache__add(self, self_id, self_len, &nd), -ENOTDIR);

	/* no directory at all: "" means none */
	PK_OPTS(pk_build_id_cache_opts, none, .dir = "");
	assert_int_equal(pk_build_id_cache__add(self, self_id, self_len, &none), -ENOENT);
	char got[PATH_MAX], want[PATH_MAX];
	assert_int_equal(pk_build_id_cache__dir(&none, got, sizeof(got)), -ENOENT);
	/* the default is ~/.debug of our passwd entry: $HOME and $PERF_BUILDID_DIR are the
	 * tool's to read, not the library's */
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *bd = getenv("PERF_BUILDID_DIR") ? strdup(getenv("PERF_BUILDID_DIR")) : NULL;
	setenv("HOME", "/h", 1);
	setenv("PERF_BUILDID_DIR", cache, 1);
	struct passwd *pw = getpwuid(geteuid());
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/') {
		snprintf(want, sizeof(want), "%s/.debug", pw->pw_dir);
		assert_int_equal(pk_build_id_cache__dir(NULL, got, sizeof(got)), 0);
		assert_string_equal(got, want);
		PK_OPTS(pk_build_id_cache_opts, def, .dir = NULL);
		assert_int_equal(pk_build_id_cache__dir(&def, got, sizeof(got)), 0);
		assert_string_equal(got, want);
		assert_int_equal(pk_build_id_cache__dir(NULL, got, 5), -ENAMETOOLONG);
	} else {
		assert_int_equal(pk_build_id_cache__dir(NULL, got, sizeof(got)), -ENOENT);
	}
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	if (bd)
		setenv("PERF_BUILDID_DIR", bd, 1);
	else
		unsetenv("PERF_BUILDID_DIR");
	free(home);
	free(bd);
	/* the directory given wins; trailing '/' removed */
	PK_OPTS(pk_build_id_cache_opts, slash, .dir = "/d//");
	assert_int_equal(pk_build_id_cache__dir(&slash, got, sizeof(got)), 0);
	assert_string_equal(got, "/d");
	assert_int_equal(pk_build_id_cache__dir(&slash, got, 2), -ENAMETOOLONG);
	snprintf(want, sizeof(want), "%s/", cache);
	PK_OPTS(pk_build_id_cache_opts, ts, .dir = want);
	assert_int_equal(pk_build_id_cache__dir(&ts, got, sizeof(got)), 0);
	assert_string_equal(got, cache);
	assert_int_equal(pk_build_id_cache__add(self, self_id, self_len, &ts), 0);
	link_path(cache, self_id, self_len, "elf", lp, sizeof(lp));
	assert_true(inode_of(lp) == inode_of(self));
	pk_test_rmtree(cache);
	free(cache);
}

static void test_kallsyms(void **state)
{
	(void)state;
	char *cache = pk_test_mkdtemp("bidc");
	char src[PATH_MAX], lp[PATH_MAX];
	const uint8_t kid[20] = { 0x4a, 0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 };
	PK_OPTS(pk_build_id_cache_opts, o, .dir = cache);

	/* kptr_restrict: every address 0 */
	pk_test_write_file(cache, "hidden", "0000000000000000 A fixed_percpu_data\n"
					    "0000000000000000 T _text\n");
	snprintf(src, sizeof(src), "%s/hidden", cache);
	assert_int_equal(pk_build_id_cache__add_kallsyms(src, kid, sizeof(kid), &o), -EACCES);
	link_path(cache, kid, sizeof(kid), NULL, lp, sizeof(lp));
	assert_true(access(lp, F_OK) < 0);

	/* per-CPU symbols at 0 first, then real addresses */
	const char *ks = "0000000000000000 A fixed_percpu_data\n"
			 "ffffffff81000000 T _text\n"
			 "ffffffff81000100 T start_kernel\n";
	pk_test_write_file(cache, "kallsyms.src", ks);
	snprintf(src, sizeof(src), "%s/kallsyms.src", cache);
	assert_int_equal(pk_build_id_cache__add_kallsyms(src, kid, sizeof(kid), &o), 0);
	char target[PATH_MAX];
	ssize_t n = readlink(lp, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = 0;
	assert_string_equal(target, "../../[kernel.kallsyms]/4a5a0102030405060708090a0b0c0d0e0f101112");
	link_path(cache, kid, sizeof(kid), "kallsyms", lp, sizeof(lp));
	assert_int_equal(pk_test_sh("cmp -s '%s' '%s'", lp, src), 0);
	/* already there: the source is not read again */
	assert_int_equal(pk_build_id_cache__add_kallsyms("/no/such", kid, sizeof(kid), &o), 0);
	pk_test_rmtree(cache);
	free(cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_link_and_lookup),
		cmocka_unit_test(test_lookup_in_perfs_home_cache),
		cmocka_unit_test(test_copy_across_file_systems),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_kallsyms),
	};
	(void)PK_ARRAY_SIZE(tests);
	return cmocka_run_group_tests(tests, setup, NULL);
}
