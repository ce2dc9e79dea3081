/* SPDX-License-Identifier: MIT */
/*
 * overflow-signal: count the overflows of a sampling event (task-clock, one overflow per
 * millisecond of CPU time) two ways, as the man page's "Overflow handling" describes:
 *
 *  1. signals: O_ASYNC + F_SETOWN_EX (this thread) + F_SETSIG (a real-time signal, so
 *     every overflow queues one signal and si_fd says which event fired);
 *  2. PERF_EVENT_IOC_REFRESH(N): the event runs for exactly N overflows, POLL_IN for each
 *     but the last, POLL_HUP for the last, and then disables itself.
 *
 * usage: overflow-signal [MILLISECONDS] [N]   (default 100 ms, N = 5)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>

static volatile sig_atomic_t n_in, n_hup, n_other;
static volatile int expected_fd = -1;

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	struct pk_overflow_sig o;
	(void)sig;
	(void)uc;
	if (pk_overflow__decode_siginfo(si, &o) < 0 || o.fd != expected_fd)
		n_other++;
	else if (o.hup)
		n_hup++;
	else
		n_in++;
}

static uint64_t count(int fd)
{
	uint64_t v = 0;
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* burn CPU until the counter `fd` has advanced by ns */
static void burn(int fd, uint64_t ns)
{
	uint64_t start = count(fd);
	while (count(fd) - start < ns)
		for (volatile int i = 0; i < 20000; i++)
			;
}

static int open_event(uint64_t period, int disabled)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
				     .sample_period = period, .disabled = disabled,
				     .exclude_kernel = 1, .exclude_hv = 1 };
	return pk_sys_perf_event_open(&a, 0, -1, -1, 0);
}

int main(int argc, char **argv)
{
	unsigned long ms = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;
	int n = argc > 2 ? atoi(argv[2]) : 5;
	int sig = SIGRTMIN + 2;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_overflow;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);

	int clock = open_event(0, 0);              /* plain counter: our CPU time */
	int fd = open_event(1000000, 1);           /* an overflow per ms of CPU time */
	if (clock < 0 || fd < 0) {
		fprintf(stderr, "overflow-signal: cannot open task-clock: %s\n",
			pk_strerror(clock < 0 ? clock : fd));
		return 1;
	}
	expected_fd = fd;
	if (pk_overflow__set_signal(fd, sig, 0) < 0) {
		fprintf(stderr, "overflow-signal: cannot route signals: %s\n", pk_strerror(errno));
		return 1;
	}

	/* 1. free-running: one signal per overflow */
	pk_ioc_enable(fd, false);
	burn(clock, ms * 1000000ULL);
	pk_ioc_disable(fd, false);
	uint64_t c = count(fd);
	printf("signals: %d overflows (POLL_IN) in %.1f ms of task-clock, %.1f expected at 1 per ms\n",
	       (int)n_in, c / 1e6, c / 1e6);
	printf("signals: %d POLL_HUP, %d from another fd\n", (int)n_hup, (int)n_other);

	/* 2. REFRESH(n): exactly n overflows, the last one POLL_HUP */
	n_in = n_hup = 0;
	pk_ioc_reset(fd, false);
	if (pk_overflow__refresh(fd, n) < 0) {
		fprintf(stderr, "overflow-signal: refresh failed: %s\n", pk_strerror(errno));
		return 1;
	}
	burn(clock, (uint64_t)(n + 20) * 1000000ULL); /* room for n + 20 overflows */
	uint64_t c1 = count(fd);
	burn(clock, 5000000);
	uint64_t c2 = count(fd);
	printf("refresh(%d): %d POLL_IN + %d POLL_HUP = %d overflows\n", n, (int)n_in, (int)n_hup,
	       (int)(n_in + n_hup));
	printf("refresh(%d): event %s after the last overflow (count %.2f ms, then %.2f ms)\n", n,
	       c1 == c2 ? "disabled itself" : "still running", c1 / 1e6, c2 / 1e6);
	close(fd);
	close(clock);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}
