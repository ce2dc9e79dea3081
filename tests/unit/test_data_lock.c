/* SPDX-License-Identifier: MIT */
/* lib/data: output locks (pk_data_lock) and the writer's lock / keep_old order. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static char *dir;

static int setup(void **state)
{
	(void)state;
	pk_test_quiet_log();
	dir = pk_test_mkdtemp("pk-lock");
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	pk_test_rmtree(dir);
	free(dir);
	return 0;
}

static char *path_of(const char *name)
{
	char *p = NULL;
	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static void test_lock_exclusive(void **state)
{
	(void)state;
	char *p = path_of("a.data");
	char *lp = pk_data_lock__path(p);
	int32_t holder = -1, stale = -1;
	PK_OPTS(pk_data_lock_opts, o, .holder = &holder, .stale = &stale);

	struct pk_data_lock *l = pk_data_lock__acquire(p, &o);
	assert_non_null(l);
	assert_int_equal(stale, 0);
	assert_true(exists(lp));
	/* a second owner, even in the same process (another open file description) */
	struct pk_data_lock *l2 = pk_data_lock__acquire(p, &o);
	assert_null(l2);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(holder, getpid());
	pk_data_lock__release(l);
	assert_false(exists(lp));
	l2 = pk_data_lock__acquire(p, &o);
	assert_non_null(l2);
	assert_int_equal(stale, 0);
	pk_data_lock__release(l2);
	pk_data_lock__release(NULL);
	assert_null(pk_data_lock__acquire(NULL, NULL));
	assert_int_equal(errno, EINVAL);
	free(lp);
	free(p);
}

/* The owner dies by SIGKILL: the kernel drops its flock, its lock file stays and names
 * it; the next owner takes over and reports that pid. */
static void test_lock_stale(void **state)
{
	(void)state;
	char *p = path_of("b.data");
	char *lp = pk_data_lock__path(p);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct pk_data_lock *l = pk_data_lock__acquire(p, NULL);
		char c = l ? 'y' : 'n';
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c = 0;
	assert_int_equal(read(fds[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	int32_t holder = 0, stale = 0;
	PK_OPTS(pk_data_lock_opts, o, .holder = &holder, .stale = &stale);
	assert_null(pk_data_lock__acquire(p, &o));
	assert_int_equal(errno, EBUSY);
	assert_int_equal(holder, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_true(exists(lp));
	struct pk_data_lock *l = pk_data_lock__acquire(p, &o);
	assert_non_null(l);
	assert_int_equal(stale, child);
	pk_data_lock__release(l);
	assert_false(exists(lp));
	close(fds[0]);
	close(fds[1]);
	free(lp);
	free(p);
}

/* A lock path that is not a regular file is not used. */
static void test_lock_not_regular(void **state)
{
	(void)state;
	char *p = path_of("c.data");
	char *lp = pk_data_lock__path(p);
	assert_int_equal(mkfifo(lp, 0600), 0);
	assert_null(pk_data_lock__acquire(p, NULL));
	assert_int_equal(errno, EINVAL);
	unlink(lp);
	free(lp);
	free(p);
}

static struct pk_data_writer *open_writer(const char *p, int32_t *holder)
{
	PK_OPTS(pk_data_writer_opts, wo, .lock = true, .keep_old = true, .lock_holder = holder);
	return pk_data_writer__open(p, &wo);
}

/* The writer: lock, then rename to .old, then create; a refused writer touches nothing. */
static void test_writer_lock(void **state)
{
	(void)state;
	char *p = path_of("w.data");
	char *old = path_of("w.data.old");
	pk_test_write_file(dir, "w.data", "previous");
	pk_test_write_file(dir, "w.data.old", "older");

	struct pk_data_writer *w = open_writer(p, NULL);
	assert_non_null(w);
	int32_t holder = 0;
	struct pk_data_writer *w2 = open_writer(p, &holder);
	assert_null(w2);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(holder, getpid());
	/* the first writer's rename happened once: .old is "previous", not its new file */
	char buf[16] = "";
	FILE *f = fopen(old, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "previous");
	assert_int_equal(pk_data_writer__finish(w), 0);
	/* finished: the lock is released before __free */
	w2 = open_writer(p, NULL);
	assert_non_null(w2);
	pk_data_writer__free(w2);
	pk_data_writer__free(w);
	char *lp = pk_data_lock__path(p);
	assert_false(exists(lp));
	free(lp);
	free(old);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_exclusive),
		cmocka_unit_test(test_lock_stale),
		cmocka_unit_test(test_lock_not_regular),
		cmocka_unit_test(test_writer_lock),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
