/* SPDX-License-Identifier: MIT */
/* lib/self/sampler.c: in-process sampling of the calling thread and of every thread of
 * the process; PERF_EVENT_IOC_ID, SET_OUTPUT (two events, one buffer), PAUSE_OUTPUT. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static void burn(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

struct seen {
	int samples, others;
	uint64_t last_time;
	bool time_monotonic;
	pid_t tids[64];
	int ntids;
	int stop_after;
	uint64_t last_count;
	bool counts_grow;
	const struct pk_sample_layout *layout;
};

static int on_record(struct pk_sampler *s, const struct pk_record *rec, void *ctx)
{
	struct seen *z = ctx;
	if (rec->type != PERF_RECORD_SAMPLE) {
		z->others++;
		return 0;
	}
	const struct pk_sample *sm = &rec->sample;
	z->samples++;
	if (sm->time < z->last_time)
		z->time_monotonic = false;
	z->last_time = sm->time;
	bool known = false;
	for (int i = 0; i < z->ntids; i++)
		known |= z->tids[i] == (pid_t)sm->tid;
	if (!known && z->ntids < 64)
		z->tids[z->ntids++] = (pid_t)sm->tid;
	if (sm->type & PERF_SAMPLE_READ) {
		struct pk_count_value v;
		assert_int_equal(pk_sample__read_values(pk_sampler__layout(s), sm, &v, 1), 1);
		if (v.val < z->last_count)
			z->counts_grow = false;
		z->last_count = v.val;
	}
	return z->stop_after && z->samples >= z->stop_after;
}

static void test_thread_sampler(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct seen z = { .time_monotonic = true, .counts_grow = true };
	PK_OPTS(pk_sampler_opts, o, .event = "task-clock", .period = 1000000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_READ | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
		.cb = on_record, .ctx = &z);
	struct pk_sampler *s = pk_sampler__new(&o);
	assert_non_null(s);
	assert_int_equal(pk_sampler__nr_fds(s), 1);
	assert_true(pk_sampler__attr(s)->disabled);
	assert_int_equal(pk_sampler__drain(s), 0); /* not started */
	assert_int_equal(pk_sampler__enable(s), 0);
	burn(100000000);
	assert_int_equal(pk_sampler__disable(s), 0);
	int n = pk_sampler__drain(s);
	struct pk_sampler_stats st;
	pk_sampler__stats(s, &st);
	printf("# %d records, %llu samples\n", n, (unsigned long long)st.samples);
	assert_true(st.samples >= 10);
	assert_int_equal(z.samples, (int)st.samples);
	assert_int_equal(st.bad, 0);
	assert_true(z.time_monotonic);
	assert_true(z.counts_grow);
	assert_int_equal(z.ntids, 1);
	assert_int_equal(z.tids[0], gettid_());
	/* a callback can stop the drain early; the rest stays for the next drain */
	z = (struct seen){ .time_monotonic = true, .counts_grow = true, .stop_after = 3 };
	assert_int_equal(pk_sampler__enable(s), 0);
	burn(30000000);
	assert_int_equal(pk_sampler__disable(s), 0);
	assert_int_equal(pk_sampler__drain(s), 3);
	z.stop_after = 0;
	assert_true(pk_sampler__poll(s, 0) >= 1);
	pk_sampler__free(s);
}

struct spinner {
	volatile int *go;
	pid_t tid;
};

static void *spin_main(void *p)
{
	struct spinner *sp = p;
	sp->tid = gettid_();
	while (!__atomic_load_n(sp->go, __ATOMIC_ACQUIRE))
		;
	burn(60000000);
	return NULL;
}

static void test_process_sampler(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	volatile int go = 0;
	struct spinner before = { .go = &go }, after = { .go = &go };
	pthread_t t1, t2;
	struct seen z = { .time_monotonic = true, .counts_grow = true };

	/* a thread that exists before the sampler ... */
	assert_int_equal(pthread_create(&t1, NULL, spin_main, &before), 0);
	PK_OPTS(pk_sampler_opts, o, .event = "task-clock", .freq = 500,
		.scope = PK_SAMPLER_PROCESS, .start_enabled = true, .cb = on_record, .ctx = &z);
	struct pk_sampler *s = pk_sampler__new(&o);
	assert_non_null(s);
	assert_true(pk_sampler__nr_fds(s) >= 2);
	/* ... and one created after it (inherit) */
	assert_int_equal(pthread_create(&t2, NULL, spin_main, &after), 0);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	burn(60000000);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	assert_int_equal(pk_sampler__disable(s), 0);
	assert_true(pk_sampler__drain(s) > 0);
	bool main_seen = false, before_seen = false, after_seen = false;
	for (int i = 0; i < z.ntids; i++) {
		main_seen |= z.tids[i] == gettid_();
		before_seen |= z.tids[i] == before.tid;
		after_seen |= z.tids[i] == after.tid;
	}
	printf("# %d samples from %d threads\n", z.samples, z.ntids);
	assert_true(main_seen);
	assert_true(before_seen);
	assert_true(after_seen);
	pk_sampler__free(s);
}

static void test_bad_opts(void **state)
{
	PK_OPTS(pk_sampler_opts, o, .pages = 3);
	assert_null(pk_sampler__new(&o));
	assert_int_equal(errno, EINVAL);
	PK_OPTS(pk_sampler_opts, o2, .event = "no-such-event-zz");
	assert_null(pk_sampler__new(&o2));
}

/* Two events of this thread, one ring: SET_OUTPUT; samples told apart by their ids. */
static void test_set_output_and_id(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
				     .size = sizeof(a), .sample_period = 1000000, .disabled = 1,
				     .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID,
				     .exclude_kernel = 1 };
	struct perf_event_attr b = a;
	b.config = PERF_COUNT_SW_CPU_CLOCK;
	b.sample_period = 2000000;
	int fa = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	int fb = pk_sys_perf_event_open(&b, 0, -1, -1, 0);
	assert_true(fa >= 0 && fb >= 0);
	uint64_t ida = 0, idb = 0;
	assert_int_equal(pk_ioc_id(fa, &ida), 0);
	assert_int_equal(pk_ioc_id(fb, &idb), 0);
	assert_true(ida && idb && ida != idb);
	struct pk_ring *r = pk_ring__mmap(fa, 16, 0);
	assert_non_null(r);
	assert_int_equal(pk_ioc_set_output(fb, fa), 0);
	assert_int_equal(pk_ioc_enable(fa, false), 0);
	assert_int_equal(pk_ioc_enable(fb, false), 0);
	burn(60000000);
	assert_int_equal(pk_ioc_disable(fa, false), 0);
	assert_int_equal(pk_ioc_disable(fb, false), 0);

	struct pk_sample_layout l;
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	const struct perf_event_header *h;
	int na = 0, nb = 0;
	assert_int_equal(pk_ring__read_init(r), 0);
	while (pk_ring__next(r, &h) == 1) {
		uint64_t id;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		assert_int_equal(pk_sample_layout__record_id(&l, h, &id), 0);
		if (id == ida)
			na++;
		else if (id == idb)
			nb++;
		else
			fail_msg("sample with unknown id %llu", (unsigned long long)id);
	}
	pk_ring__read_done(r);
	printf("# one ring: %d samples of event a, %d of event b\n", na, nb);
	assert_true(na >= 5);
	assert_true(nb >= 2);
	assert_true(na > nb);
	/* stop the redirection: the kernel wants (unsigned long)-1, a sign-extended long */
	assert_int_equal(ioctl(fb, PERF_EVENT_IOC_SET_OUTPUT, (long)-1), 0);
	pk_ring__munmap(r);
	close(fa);
	close(fb);
}

static void test_pause_output(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
				     .size = sizeof(a), .sample_period = 500000,
				     .sample_type = PERF_SAMPLE_IP, .exclude_kernel = 1 };
	int fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	struct pk_ring *r = pk_ring__mmap(fd, 16, 0);
	assert_non_null(r);
	struct perf_event_mmap_page *pc = pk_ring__control(r);
	assert_int_equal(pk_ioc_pause_output(fd, true), 0);
	uint64_t h0 = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	burn(30000000);
	uint64_t h1 = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	assert_int_equal(pk_ioc_pause_output(fd, false), 0);
	burn(30000000);
	uint64_t h2 = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	printf("# head while paused %llu -> %llu, resumed -> %llu\n", (unsigned long long)h0,
	       (unsigned long long)h1, (unsigned long long)h2);
	assert_int_equal(h1, h0);  /* nothing written while paused */
	assert_true(h2 > h1);      /* resumed: samples (and a LOST record) again */
	pk_ring__munmap(r);
	close(fd);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_sampler),
		cmocka_unit_test(test_process_sampler),
		cmocka_unit_test(test_bad_opts),
		cmocka_unit_test(test_set_output_and_id),
		cmocka_unit_test(test_pause_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
