/* SPDX-License-Identifier: MIT */
/*
 * blocker [SCALE]: threads that block in three distinct call paths for known times
 * (times SCALE, default 1): sleep_path sleeps 6 x 100 ms (600 ms), pipe_path reads a pipe
 * 3 times that a timer thread fills every 100 ms (300 ms), mutex_path waits 150 ms for a
 * mutex another thread holds. Each path's blocking call sits two noinline frames down so
 * that a frame-pointer chain names the path even when libc's wrapper keeps no frame.
 * Prints the wall time of each blocking thread in ns.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static long scale = 1;
static int pfd[2];
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_t waiter;

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
	msleep(100 * scale);
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
	if (read(pfd[0], &c, 1) != 1)
		exit(2);
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
	pthread_mutex_lock(&mtx);
	pthread_mutex_unlock(&mtx);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void mutex_path(void)
{
	mutex_lock_once();
	__asm__ volatile("" ::: "memory");
}

static void *run(void *arg)
{
	unsigned long long t0 = now_ns();
	switch ((intptr_t)arg) {
	case 0: sleep_path(); break;
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
	if (pthread_create(&a, NULL, run, (void *)(intptr_t)0) ||
	    pthread_create(&b, NULL, run, (void *)(intptr_t)1) ||
	    pthread_create(&t, NULL, timer, NULL) || pthread_create(&h, NULL, holder, NULL))
		return 1;
	pthread_join(h, NULL);
	pthread_join(a, &wa);
	pthread_join(b, &wb);
	pthread_join(t, NULL);
	pthread_join(waiter, &wc);
	printf("sleep_path %llu\npipe_path %llu\nmutex_path %llu\n",
	       (unsigned long long)(uintptr_t)wa, (unsigned long long)(uintptr_t)wb,
	       (unsigned long long)(uintptr_t)wc);
	return 0;
}
