/* SPDX-License-Identifier: MIT */
/*
 * blocker [SCALE [GO_FILE]]: threads that block in three distinct call paths for known times
 * (times SCALE, default 1): sleep_path sleeps 6 x 100 ms (600 ms), pipe_path reads a pipe
 * 3 times that a timer thread fills every 100 ms (300 ms), mutex_path waits 150 ms for a
 * mutex another thread holds; the sleeping thread first spins 200 ms on the CPU
 * (spin_path). Each path's blocking call sits two noinline frames down so
 * that a frame-pointer chain names the path even when libc's wrapper keeps no frame.
 * With GO_FILE, nothing starts before that file exists (a recorder attaching with -p or
 * -a first). Prints, for each of the three threads, its tid, its wall time (ns, from its first
 * instruction to its last) and the time it spent in its blocking calls as measured around
 * them (ns: the nominal times plus the scheduler's wake-up latency on a busy machine).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static long scale = 1;
static int pfd[2];
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_t waiter;
static unsigned long long blocked[3];

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

NOINLINE static void sleep_once(void)
{
	unsigned long long t0 = now_ns();
	msleep(100 * scale);
	blocked[0] += now_ns() - t0;
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void spin_path(void)
{
	unsigned long long end = now_ns() + 200000000ULL * (unsigned long long)scale;
	while (now_ns() < end)
		__asm__ volatile("" ::: "memory");
}

NOINLINE static void sleep_path(void)
{
	for (int i = 0; i < 6; i++)
		sleep_once();
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void pipe_read_once(void)
{
	char c;
	unsigned long long t0 = now_ns();
	if (read(pfd[0], &c, 1) != 1)
		exit(2);
	blocked[1] += now_ns() - t0;
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void pipe_path(void)
{
	for (int i = 0; i < 3; i++)
		pipe_read_once();
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void mutex_lock_once(void)
{
	unsigned long long t0 = now_ns();
	pthread_mutex_lock(&mtx);
	blocked[2] += now_ns() - t0;
	pthread_mutex_unlock(&mtx);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void mutex_path(void)
{
	mutex_lock_once();
	__asm__ volatile("" ::: "memory");
}

static unsigned long tids[3];

static void *run(void *arg)
{
	unsigned long long t0 = now_ns();
	tids[(intptr_t)arg] = (unsigned long)syscall(SYS_gettid);
	switch ((intptr_t)arg) {
	case 0: spin_path(); sleep_path(); break;
	case 1: pipe_path(); break;
	default: mutex_path(); break;
	}
	unsigned long long t1 = now_ns();
	return (void *)(uintptr_t)(t1 - t0);
}

static void *timer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		msleep(100 * scale);
		if (write(pfd[1], "x", 1) != 1)
			exit(2);
	}
	return NULL;
}

/* holds the mutex for 150 ms from before the waiter starts */
static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mtx);
	if (pthread_create(&waiter, NULL, run, (void *)(intptr_t)2))
		exit(2);
	msleep(150 * scale);
	pthread_mutex_unlock(&mtx);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b, t, h;
	void *wa, *wb, *wc;

	scale = argc > 1 ? atol(argv[1]) : 1;
	if (scale < 1 || pipe(pfd))
		return 1;
	for (int i = 0; argc > 2 && access(argv[2], F_OK) && i < 12000; i++) /* 2 min */
		msleep(10);
	if (pthread_create(&a, NULL, run, (void *)(intptr_t)0) ||
	    pthread_create(&b, NULL, run, (void *)(intptr_t)1) ||
	    pthread_create(&t, NULL, timer, NULL) || pthread_create(&h, NULL, holder, NULL))
		return 1;
	pthread_join(h, NULL);
	pthread_join(a, &wa);
	pthread_join(b, &wb);
	pthread_join(t, NULL);
	pthread_join(waiter, &wc);
	printf("sleep_path %lu %llu %llu\npipe_path %lu %llu %llu\nmutex_path %lu %llu %llu\n",
	       tids[0], (unsigned long long)(uintptr_t)wa, blocked[0], tids[1],
	       (unsigned long long)(uintptr_t)wb, blocked[1], tids[2],
	       (unsigned long long)(uintptr_t)wc, blocked[2]);
	return 0;
}
