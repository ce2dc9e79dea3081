/* SPDX-License-Identifier: MIT */
/*
 * The library takes its configuration from options structs and pk_set_config, never from
 * the environment (docs/architecture.md, "Configuration"): with every variable the tool
 * reads set to a value that would change something, a machine, the build-id cache
 * directory, tracefs discovery, the huge-page hint and an explicit pk_regions__init do
 * what their arguments say, and only that.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "internal.h"
#include "symbol/symbol-internal.h"
#include "testutil.h"

/* every variable the tool reads for the library, each set to change behaviour */
static void set_all(const char *dir)
{
	setenv("PERFKIT_UNWIND", "libdwfl", 1);
	setenv("PERFKIT_SCOPES", "libdw", 1);
	setenv("PK_NO_CACHE", "1", 1);
	setenv("XDG_CACHE_HOME", dir, 1);
	setenv("HOME", dir, 1);
	setenv("PERF_BUILDID_DIR", dir, 1);
	setenv("PERFKIT_TRACEFS", dir, 1);
	setenv("PERFKIT_THP", "1", 1);
}

/* ~/.debug of our passwd entry, or "" */
static void passwd_debug(char *buf, size_t len)
{
	struct passwd *pw = getpwuid(geteuid());
	buf[0] = '\0';
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
		snprintf(buf, len, "%s/.debug", pw->pw_dir);
}

static void test_machine_opts_win(void **state)
{
	(void)state;
	char *dir = pk_test_mkdtemp("env");
	set_all(dir);

	/* explicit opts: exactly them */
	PK_OPTS(pk_machine_opts, o, .buildid_dir = "/b", .cache_dir = "/c");
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	assert_false(m->uw_libdwfl_only);
	assert_false(m->scopes_libdw);
	assert_string_equal(m->buildid_dir, "/b");
	assert_null(m->perf_buildid_dir);
	assert_string_equal(m->cache_dir, "/c");
	pk_machine__free(m);

	/* no opts: the documented defaults, none of them from the environment */
	char want[PATH_MAX];
	passwd_debug(want, sizeof(want));
	m = pk_machine__new(NULL);
	assert_non_null(m);
	assert_false(m->uw_libdwfl_only);
	assert_false(m->scopes_libdw);
	assert_null(m->cache_dir);
	assert_null(m->perf_buildid_dir);
	if (want[0])
		assert_string_equal(m->buildid_dir, want);
	else
		assert_null(m->buildid_dir);
	pk_machine__free(m);

	/* and the knobs do what the opts say with the environment unset */
	unsetenv("PERFKIT_UNWIND");
	unsetenv("PERFKIT_SCOPES");
	PK_OPTS(pk_machine_opts, k, .unwind_libdwfl_only = true, .scopes_libdw = true,
		.buildid_dir = "", .extra_buildid_dir = "/x/.debug", .cache_dir = "");
	m = pk_machine__new(&k);
	assert_non_null(m);
	assert_true(m->uw_libdwfl_only);
	assert_true(m->scopes_libdw);
	assert_null(m->buildid_dir);
	assert_string_equal(m->perf_buildid_dir, "/x/.debug");
	assert_null(m->cache_dir);
	pk_machine__free(m);

	/* the extra directory is left out when it is the first one */
	PK_OPTS(pk_machine_opts, same, .buildid_dir = "/y/.debug/", .extra_buildid_dir = "/y/.debug");
	m = pk_machine__new(&same);
	assert_non_null(m);
	assert_string_equal(m->buildid_dir, "/y/.debug");
	assert_null(m->perf_buildid_dir);
	pk_machine__free(m);

	/* the build-id cache's default directory likewise */
	char got[PATH_MAX];
	if (want[0]) {
		assert_int_equal(pk_build_id_cache__dir(NULL, got, sizeof(got)), 0);
		assert_string_equal(got, want);
	}
	pk_test_rmtree(dir);
	free(dir);
}

/* A fake tracefs with one event, sys:ev of id 42. */
static char *fake_tracefs(void)
{
	char *dir = pk_test_mkdtemp("tracefs");
	pk_test_write_file(dir, "events/sys/ev/id", "42\n");
	return dir;
}

static void test_global_settings(void **state)
{
	(void)state;
	char *fake = fake_tracefs();
	set_all(fake);

	/* $PERFKIT_TRACEFS alone does nothing */
	const char *root = pk_tracefs__root();
	assert_true(!root || strcmp(root, fake));
	assert_false(pk_config_huge_pages());

	/* pk_set_config does */
	PK_OPTS(pk_config_opts, c, .tracefs_root = fake, .huge_pages = true);
	assert_int_equal(pk_set_config(&c), 0);
	root = pk_tracefs__root();
	assert_non_null(root);
	assert_string_equal(root, fake);
	assert_int_equal(pk_tracepoint__id(NULL, "sys", "ev"), 42);
	assert_true(pk_config_huge_pages());

	/* a directory without events/ is passed over */
	char empty[PATH_MAX];
	snprintf(empty, sizeof(empty), "%s/events/sys", fake);
	PK_OPTS(pk_config_opts, e, .tracefs_root = empty);
	assert_int_equal(pk_set_config(&e), 0);
	root = pk_tracefs__root();
	assert_true(!root || strcmp(root, empty));
	assert_false(pk_config_huge_pages());

	/* bad settings change nothing */
	char *lng = malloc(PATH_MAX + 2);
	assert_non_null(lng);
	memset(lng, 'a', PATH_MAX + 1);
	lng[0] = '/';
	lng[PATH_MAX + 1] = '\0';
	PK_OPTS(pk_config_opts, l, .tracefs_root = lng);
	assert_int_equal(pk_set_config(&l), -ENAMETOOLONG);
	free(lng);
	struct pk_config_opts bad = { .sz = 3 };
	pk_test_quiet_log();
	assert_int_equal(pk_set_config(&bad), -EINVAL);

	/* back to the defaults */
	assert_int_equal(pk_set_config(NULL), 0);
	root = pk_tracefs__root();
	assert_true(!root || strcmp(root, fake));
	assert_false(pk_config_huge_pages());
	pk_test_rmtree(fake);
	free(fake);
}

/* In a child (the region set-up is once per process): 0 when the events and the exit
 * report are as expected. */
static int regions_child(bool use_env)
{
	setenv("PERFKIT_EVENTS", "page-faults", 1);
	setenv("PERFKIT_REGION_REPORT", "env-report.txt", 1);
	PK_OPTS(pk_regions_opts, ro, .use_env = use_env);
	if (pk_regions__init(NULL, &ro) < 0)
		return 2;
	if (pk_region_begin("r") < 0 || pk_region_end("r") < 0)
		return 3;
	const char *first = pk_regions__event_name(0);
	if (use_env)
		return pk_regions__nr_events() == 1 && !strcmp(first, "page-faults") ? 0 : 4;
	return pk_regions__nr_events() >= 3 && !strcmp(first, "task-clock") ? 0 : 5;
}

static void test_regions_explicit_init(void **state)
{
	(void)state;
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	for (int use_env = 0; use_env < 2; use_env++) {
		unlink("env-report.txt");
		fflush(stdout);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			exit(regions_child(use_env)); /* atexit writes a report if one was set */
		int st;
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		struct stat sb;
		assert_int_equal(stat("env-report.txt", &sb) == 0, use_env);
	}
	unlink("env-report.txt");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_machine_opts_win),
		cmocka_unit_test(test_global_settings),
		cmocka_unit_test(test_regions_explicit_init),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
