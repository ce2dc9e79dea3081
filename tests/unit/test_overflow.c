/* SPDX-License-Identifier: MIT */
/* lib/self/overflow.c: overflow signals (si_fd, si_code, the right thread), epoll,
 * REFRESH-limited counting, PERF_EVENT_IOC_PERIOD, prctl enable/disable of all counters. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

#define MAXSIG 4096
static volatile int nsig;
static struct {
	int fd, code;
	pid_t tid;
} sigs[MAXSIG];

static void handler(int sig, siginfo_t *si, void *uc)
{
	struct pk_overflow_sig o;
	(void)sig;
	(void)uc;
	int n = __atomic_fetch_add(&nsig, 1, __ATOMIC_RELAXED);
	if (n >= MAXSIG || pk_overflow__decode_siginfo(si, &o) < 0)
		return;
	sigs[n].fd = o.fd;
	sigs[n].code = o.code;
	sigs[n].tid = (pid_t)syscall(SYS_gettid);
}

static int the_sig(void)
{
	return SIGRTMIN + 1;
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(the_sig(), &sa, NULL), 0);
	nsig = 0;
}

/* task-clock sampling on the calling thread, one overflow per `period_ns` of CPU time */
static int open_sampling(uint64_t config, uint64_t period_ns, bool disabled)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = config,
				     .sample_period = period_ns, .sample_type = PERF_SAMPLE_IP,
				     .wakeup_events = 1, .disabled = disabled,
				     .exclude_kernel = 1, .exclude_hv = 1 };
	return pk_sys_perf_event_open(&a, 0, -1, -1, 0);
}

static uint64_t read_count(int fd)
{
	uint64_t v = 0;
	assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
	return v;
}

/* burn CPU until the event has counted `ns` more (task-clock counts our CPU time) */
static void burn_ns(int fd, uint64_t ns)
{
	uint64_t start = read_count(fd);
	while (read_count(fd) - start < ns)
		for (volatile int i = 0; i < 20000; i++)
			;
}

static void burn_loops(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static void test_signal_si_fd(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	/* Up to three tries: in a loaded VM the hrtimer behind the 4 ms event has been seen
	 * to deliver nothing in 80 ms while the 1 ms one fired 72 times (CI, tests running
	 * in parallel). A broken signal setup fails every try. */
	for (int attempt = 1;; attempt++) {
		install();
		int a = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 1000000, true);
		int b = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 4000000, true);
		int counter = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 0, false); /* plain counting */
		assert_true(a >= 0 && b >= 0 && counter >= 0);
		assert_int_equal(pk_overflow__set_signal(a, the_sig(), 0), 0);
		assert_int_equal(pk_overflow__set_signal(b, the_sig(), 0), 0);
		assert_int_equal(pk_ioc_enable(a, false), 0);
		assert_int_equal(pk_ioc_enable(b, false), 0);
		burn_ns(counter, 80000000); /* 80 ms of CPU */
		assert_int_equal(pk_ioc_disable(a, false), 0);
		assert_int_equal(pk_ioc_disable(b, false), 0);
		int n = nsig, na = 0, nb = 0;
		pid_t me = (pid_t)syscall(SYS_gettid);
		uint64_t ca = read_count(a), cb = read_count(b);
		for (int i = 0; i < n && i < MAXSIG; i++) {
			assert_int_equal(sigs[i].code, POLL_IN);
			assert_int_equal(sigs[i].tid, me);
			if (sigs[i].fd == a)
				na++;
			else if (sigs[i].fd == b)
				nb++;
			else
				fail_msg("signal with si_fd %d (events are %d and %d)", sigs[i].fd, a, b);
		}
		printf("# fd %d: %d signals for %.1f ms; fd %d: %d signals for %.1f ms\n", a, na,
		       ca / 1e6, b, nb, cb / 1e6);
		close(a);
		close(b);
		close(counter);
		/* at most one signal per overflow period; the hrtimer behind task-clock may fire
		 * late in a loaded VM (one overflow for an overrun), so allow fewer, never more
		 * (under ThreadSanitizer or heavy load far fewer): the lower bound is only "some" */
		assert_true(na <= (int)(ca / 1000000) + 1);
		assert_true(nb <= (int)(cb / 4000000) + 1);
		if ((na < 1 || nb < 1 || na <= nb) && attempt < 3) {
			printf("# try %d: too few signals under load; again\n", attempt);
			continue;
		}
		assert_true(na >= 1 && nb >= 1);
		assert_true(na > nb); /* 4x the period: fewer signals for b */
		break;
	}
}

struct sleeper {
	pid_t tid;
	volatile int stop;
	volatile int ready;
};

static void *sleeper_main(void *p)
{
	struct sleeper *s = p;
	s->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
		poll(NULL, 0, 1);
	return NULL;
}

/* The event counts this thread, but its signals go to another thread (F_OWNER_TID). */
static void test_signal_right_thread(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	/* Up to three tries: with tests running in parallel the sleeper may not run before
	 * it is stopped, and signals still pending for a thread that exits are dropped (seen
	 * once in CI: under 20 of ~30). Signals to the wrong thread fail every try. */
	for (int attempt = 1;; attempt++) {
		install();
		struct sleeper s = { 0 };
		pthread_t th;
		assert_int_equal(pthread_create(&th, NULL, sleeper_main, &s), 0);
		while (!__atomic_load_n(&s.ready, __ATOMIC_ACQUIRE))
			poll(NULL, 0, 1);
		int fd = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 1000000, true);
		assert_true(fd >= 0);
		assert_int_equal(pk_overflow__set_signal(fd, the_sig(), s.tid), 0);
		assert_int_equal(pk_ioc_enable(fd, false), 0);
		burn_ns(fd, 30000000);
		assert_int_equal(pk_ioc_disable(fd, false), 0);
		/* let the sleeper take its signals: until none came for 50 ms (at most 2 s) */
		for (int waited = 0, last = -1;
		     waited < 2000 && __atomic_load_n(&nsig, __ATOMIC_RELAXED) != last; waited += 50) {
			last = __atomic_load_n(&nsig, __ATOMIC_RELAXED);
			poll(NULL, 0, 50);
		}
		__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		int n = nsig;
		for (int i = 0; i < n && i < MAXSIG; i++) {
			assert_int_equal(sigs[i].tid, s.tid);
			assert_int_equal(sigs[i].fd, fd);
		}
		close(fd);
		if (n >= 20)
			break;
		printf("# attempt %d: %d signals for 30 ms of CPU at 1 ms\n", attempt, n);
		assert_true(attempt < 3);
	}
}

static void test_refresh_hup(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	install();
	int counter = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 0, false);
	int fd = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 1000000, true);
	assert_true(fd >= 0 && counter >= 0);
	assert_int_equal(pk_overflow__set_signal(fd, the_sig(), 0), 0);
	assert_int_equal(pk_overflow__refresh(fd, 0), -EINVAL);
	/* REFRESH(5) enables the event for exactly five overflows */
	assert_int_equal(pk_overflow__refresh(fd, 5), 0);
	burn_ns(counter, 40000000); /* room for ~40 overflows */
	int n = nsig;
	assert_int_equal(n, 5);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(sigs[i].fd, fd);
		assert_int_equal(sigs[i].code, POLL_IN);
	}
	/* the fifth exhausts the count: POLL_HUP, and the event disabled itself */
	assert_int_equal(sigs[4].code, POLL_HUP);
	uint64_t c1 = read_count(fd);
	burn_ns(counter, 5000000);
	assert_int_equal(read_count(fd), c1);
	/* stopped at the fifth overflow: at least 5 periods, far less than the 40 ms burnt
	 * (the hrtimer may fire late under load) */
	assert_true(c1 >= 5 * 1000000ULL && c1 < 25 * 1000000ULL);
	assert_int_equal(nsig, 5);
	/* and can be refreshed again */
	assert_int_equal(pk_overflow__refresh(fd, 2), 0);
	burn_ns(counter, 10000000);
	assert_int_equal(nsig, 7);
	assert_int_equal(sigs[5].code, POLL_IN);
	assert_int_equal(sigs[6].code, POLL_HUP);
	close(fd);
	close(counter);
}

static void test_period_ioctl(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	install();
	int counter = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 0, false);
	int fd = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 1000000, true);
	assert_true(fd >= 0 && counter >= 0);
	assert_int_equal(pk_overflow__set_signal(fd, the_sig(), 0), 0);
	assert_int_equal(pk_ioc_enable(fd, false), 0);
	burn_ns(counter, 30000000);
	int fast = nsig;
	/* ten times the period: about a tenth of the signals */
	assert_int_equal(pk_ioc_period(fd, 10000000), 0);
	nsig = 0;
	burn_ns(counter, 60000000);
	int slow = nsig;
	assert_int_equal(pk_ioc_disable(fd, false), 0);
	printf("# 1 ms period: %d overflows in 30 ms; 10 ms period: %d in 60 ms\n", fast, slow);
	assert_true(fast >= 18 && fast <= 31);
	assert_true(slow >= 2 && slow <= 7);
	assert_int_equal(pk_ioc_period(fd, 0), -EINVAL); /* a period of 0 is refused */
	/* signals off again: no more deliveries */
	assert_int_equal(pk_overflow__clear_signal(fd), 0);
	nsig = 0;
	assert_int_equal(pk_ioc_enable(fd, false), 0);
	burn_ns(counter, 25000000);
	assert_int_equal(nsig, 0);
	close(fd);
	close(counter);
}

static void test_epoll(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	int fd = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 1000000, true);
	int bare = open_sampling(PERF_COUNT_SW_CPU_CLOCK, 1000000, false);
	assert_true(fd >= 0 && bare >= 0);
	struct pk_ring *ring = pk_ring__mmap(fd, 1, 0);
	assert_non_null(ring);
	struct pk_overflow_poll *p = pk_overflow_poll__new();
	struct pk_overflow_event ev[4];
	int tag = 7;
	assert_non_null(p);
	assert_true(pk_overflow_poll__fd(p) >= 0);
	assert_int_equal(pk_overflow_poll__add(p, fd, &tag), 0);
	/* nothing yet */
	assert_int_equal(pk_overflow_poll__wait(p, ev, 4, 0), 0);
	assert_int_equal(pk_ioc_enable(fd, false), 0);
	burn_loops(30000000);
	assert_int_equal(pk_ioc_disable(fd, false), 0);
	int n = pk_overflow_poll__wait(p, ev, 4, 1000);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].fd, fd);
	assert_ptr_equal(ev[0].ctx, &tag);
	assert_true(ev[0].in);
	assert_false(ev[0].hup);
	/* the POLLIN is consumed by the poll: the samples are in the ring */
	assert_int_equal(pk_ring__read_init(ring), 0);
	assert_true(pk_ring__pending(ring) > 0);
	pk_ring__discard(ring);
	pk_ring__read_done(ring);
	/* an fd without a ring buffer polls as POLLHUP (kernel behaviour, documented) */
	assert_int_equal(pk_overflow_poll__add(p, bare, NULL), 0);
	n = pk_overflow_poll__wait(p, ev, 4, 100);
	assert_true(n >= 1);
	bool saw = false;
	for (int i = 0; i < n; i++)
		if (ev[i].fd == bare) {
			assert_true(ev[i].hup);
			saw = true;
		}
	assert_true(saw);
	assert_int_equal(pk_overflow_poll__del(p, bare), 0);
	assert_int_equal(pk_overflow_poll__del(p, bare), -ENOENT);
	pk_overflow_poll__free(p);
	pk_ring__munmap(ring);
	close(fd);
	close(bare);
}

static void test_prctl_all(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	int fd = open_sampling(PERF_COUNT_SW_TASK_CLOCK, 0, false);
	assert_true(fd >= 0);
	burn_loops(2000000);
	assert_int_equal(pk_prctl_disable_all(), 0);
	uint64_t c1 = read_count(fd);
	burn_loops(5000000);
	uint64_t c2 = read_count(fd);
	assert_int_equal(pk_prctl_enable_all(), 0);
	burn_loops(5000000);
	uint64_t c3 = read_count(fd);
	assert_int_equal(c1, c2);  /* nothing counted while disabled */
	assert_true(c3 > c2 + 100000);
	close(fd);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_si_fd),
		cmocka_unit_test(test_signal_right_thread),
		cmocka_unit_test(test_refresh_hup),
		cmocka_unit_test(test_period_ioctl),
		cmocka_unit_test(test_epoll),
		cmocka_unit_test(test_prctl_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
