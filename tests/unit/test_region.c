/* SPDX-License-Identifier: MIT */
/* lib/self/region.c: named regions per thread (lazy per-thread counters, nesting,
 * totals, reports, $PERFKIT_EVENTS, the exit report) and the multithreaded check that
 * every thread's task-clock is non-zero and the threads sum to the process. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static void burn(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[65536];
	size_t n;
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Runs first, in a child, before this process touches regions: the event set comes from
 * $PERFKIT_EVENTS and $PERFKIT_REGION_REPORT writes the report at exit. */
static void test_env_and_exit_report(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	unlink("exit-report.json");
	fflush(stdout);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("PERFKIT_EVENTS", "page-faults,task-clock", 1);
		setenv("PERFKIT_REGION_REPORT", "exit-report.json", 1);
		if (pk_region_begin("env-region") < 0)
			_exit(2);
		burn(1000000);
		if (pk_region_end("env-region") < 0)
			_exit(3);
		if (pk_regions__nr_events() != 2 || strcmp(pk_regions__event_name(0), "page-faults"))
			_exit(4);
		exit(0); /* atexit writes the report */
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	char *rep = slurp("exit-report.json");
	assert_non_null(rep);
	assert_non_null(strstr(rep, "{\"events\":[\"page-faults\",\"task-clock\"]"));
	assert_non_null(strstr(rep, "\"name\":\"env-region\""));
	assert_non_null(strstr(rep, "\"calls\":1"));
}

static void test_init_and_handles(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	unsetenv("PERFKIT_EVENTS");
	unsetenv("PERFKIT_REGION_REPORT");
	assert_int_equal(pk_regions__init("no-such-event-qq", NULL) < 0, 1);
	assert_int_equal(pk_regions__init(NULL, NULL), 0); /* the default set */
	assert_int_equal(pk_regions__init(NULL, NULL), -EBUSY);
	int n = pk_regions__nr_events();
	assert_true(n >= 3);
	assert_string_equal(pk_regions__event_name(0), "task-clock");
	assert_string_equal(pk_regions__event_name(1), "context-switches");
	assert_string_equal(pk_regions__event_name(2), "page-faults");
	/* cycles/instructions only where they exist */
	struct pk_self_reader *hw = pk_self_reader__open("cycles", NULL);
	assert_int_equal(n, hw ? 5 : 3);
	pk_self_reader__free(hw);

	struct pk_region *a = pk_region__get("alpha"), *b = pk_region__get("beta");
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_ptr_equal(pk_region__get("alpha"), a);
	assert_string_equal(pk_region__name(b), "beta");
	assert_null(pk_region__get(""));
	assert_null(pk_region__get(NULL));
}

struct collect {
	const char *region;
	int n;
	pid_t tid[16];
	uint64_t calls[16];
	struct pk_count tc[16];   /* task-clock */
	struct pk_count pf[16];   /* page-faults */
};

static int collect_cb(const struct pk_region_stat *st, void *ctx)
{
	struct collect *c = ctx;
	if (strcmp(st->region, c->region) || c->n >= 16)
		return 0;
	assert_string_equal(st->names[0], "task-clock");
	c->tid[c->n] = st->tid;
	c->calls[c->n] = st->calls;
	c->tc[c->n] = st->counts[0];
	c->pf[c->n] = st->counts[2];
	c->n++;
	return 0;
}

static void test_nested_and_errors(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct pk_region *outer = pk_region__get("outer"), *inner = pk_region__get("inner");
	assert_int_equal(pk_region__end(outer), -EINVAL);   /* never begun */
	for (int k = 0; k < 3; k++) {
		assert_int_equal(pk_region__begin(outer), 0);
		burn(2000000);
		assert_int_equal(pk_region__begin(inner), 0);
		burn(4000000);
		assert_int_equal(pk_region__end(outer), -EINVAL); /* inner is still open */
		assert_int_equal(pk_region__end(inner), 0);
		burn(2000000);
		assert_int_equal(pk_region__end(outer), 0);
	}
	struct collect co = { .region = "outer" }, ci = { .region = "inner" };
	assert_int_equal(pk_regions__foreach(collect_cb, &co), 0);
	assert_int_equal(pk_regions__foreach(collect_cb, &ci), 0);
	assert_int_equal(co.n, 1);
	assert_int_equal(ci.n, 1);
	assert_int_equal(co.calls[0], 3);
	assert_int_equal(ci.calls[0], 3);
	assert_int_equal(co.tid[0], (pid_t)syscall(SYS_gettid));
	/* inclusive: the outer region contains the inner one and more */
	assert_true(ci.tc[0].val > 0);
	assert_true(co.tc[0].val > ci.tc[0].val);
	assert_true(co.tc[0].status == PK_COUNT_OK || co.tc[0].status == PK_COUNT_SCALED);
	/* the name API is the same regions */
	assert_int_equal(pk_region_begin("inner"), 0);
	assert_int_equal(pk_region_end("inner"), 0);
	ci.n = 0;
	pk_regions__foreach(collect_cb, &ci);
	assert_int_equal(ci.calls[0], 4);

	/* report formats */
	FILE *f = fopen("report.txt", "w+");
	assert_non_null(f);
	assert_int_equal(pk_regions__report(f, PK_REGION_TABLE), 0);
	fclose(f);
	char *t = slurp("report.txt");
	assert_non_null(strstr(t, "region"));
	assert_non_null(strstr(t, "task-clock"));
	assert_non_null(strstr(t, "outer"));
	assert_non_null(strstr(t, "total"));
	f = fopen("report.json", "w+");
	assert_int_equal(pk_regions__report(f, PK_REGION_JSON), 0);
	fclose(f);
	t = slurp("report.json");
	assert_non_null(strstr(t, "\"name\":\"inner\""));
	assert_non_null(strstr(t, "\"task-clock\":{\"value\":"));

	/* reset: totals start again */
	pk_regions__reset();
	co.n = 0;
	pk_regions__foreach(collect_cb, &co);
	assert_int_equal(co.n, 0);
	assert_int_equal(pk_region__begin(outer), 0);
	assert_int_equal(pk_region__end(outer), 0);
	pk_regions__foreach(collect_cb, &co);
	assert_int_equal(co.n, 1);
	assert_int_equal(co.calls[0], 1);
}

#define NTHREADS 4
struct worker {
	pid_t tid;
	long loops;
	int err;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	w->tid = (pid_t)syscall(SYS_gettid);
	/* the first region call of the thread opens its counters */
	for (int k = 0; k < 10 && !w->err; k++) {
		if ((w->err = pk_region_begin("mt-work")) < 0)
			break;
		burn(w->loops / 10);
		w->err = pk_region_end("mt-work");
	}
	return NULL;
}

/* The "zero counts on other threads" failure: each thread must count itself, and the
 * threads together must account for the process's task-clock. */
static void test_threads_sum_to_process(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
				     .inherit = 1, .disabled = 1 };
	int proc = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	assert_true(proc >= 0);
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	assert_int_equal(pk_ioc_enable(proc, false), 0);
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ .loops = 80000000L * (i + 1) };
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(pk_ioc_disable(proc, false), 0);
	uint64_t total = 0;
	assert_int_equal(read(proc, &total, sizeof(total)), sizeof(total));
	close(proc);

	struct collect c = { .region = "mt-work" };
	assert_int_equal(pk_regions__foreach(collect_cb, &c), 0);
	assert_int_equal(c.n, NTHREADS);
	uint64_t sum = 0;
	for (int i = 0; i < NTHREADS; i++) {
		assert_int_equal(w[i].err, 0);
		int k = -1;
		for (int j = 0; j < c.n; j++)
			if (c.tid[j] == w[i].tid)
				k = j;
		assert_true(k >= 0); /* a row for every worker, under its own tid */
		assert_int_equal(c.calls[k], 10);
		printf("# thread %d: task-clock %.2f ms\n", (int)c.tid[k], c.tc[k].val / 1e6);
		assert_true(c.tc[k].val > 1000000); /* non-zero: more than 1 ms each */
		sum += c.tc[k].val;
	}
	/* more work, more time: thread 4 did four times the loops of thread 1 */
	printf("# threads %.2f ms, process %.2f ms (%.2f %%)\n", sum / 1e6, total / 1e6,
	       100.0 * (double)sum / (double)total);
	assert_true((double)sum >= 0.95 * (double)total);
	assert_true((double)sum <= 1.05 * (double)total);
}

/* A thread that begins regions but never completes one leaves nothing behind; one that
 * completed regions keeps its row after it exited. */
static void *short_thread(void *p)
{
	(void)p;
	pk_region_begin("left-open");
	return NULL;
}

static void test_thread_exit(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, short_thread, NULL), 0);
	pthread_join(th, NULL);
	struct collect c = { .region = "left-open" };
	pk_regions__foreach(collect_cb, &c);
	assert_int_equal(c.n, 0);
	/* the calling thread can drop its counters and get new ones */
	assert_int_equal(pk_region_begin("again"), 0);
	pk_regions__thread_exit();
	assert_int_equal(pk_region_end("again"), -EINVAL); /* its stack went with it */
	assert_int_equal(pk_region_begin("again"), 0);
	assert_int_equal(pk_region_end("again"), 0);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_and_exit_report),
		cmocka_unit_test(test_init_and_handles),
		cmocka_unit_test(test_nested_and_errors),
		cmocka_unit_test(test_threads_sum_to_process),
		cmocka_unit_test(test_thread_exit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
