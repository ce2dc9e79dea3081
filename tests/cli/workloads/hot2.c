/* SPDX-License-Identifier: MIT */
/*
 * hot2 MS [THREADS]: THREADS threads (default 2) each spin for MS milliseconds in rounds
 * that do twice as much work in hot_a (called by caller_a) as in hot_b (called by
 * caller_b), so that any window of a live profile shows hot_a at two thirds of their
 * samples. Build with -O0 for call-graph checks (at -O1 the leaf hot_a has no frame
 * and frame-pointer chains skip caller_a).
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double ms = 1000;

__attribute__((noinline)) static unsigned long hot_a(unsigned long x, int n)
{
	for (int i = 0; i < n; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

__attribute__((noinline)) static unsigned long hot_b(unsigned long x, int n)
{
	for (int i = 0; i < n; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

__attribute__((noinline)) static unsigned long caller_a(unsigned long x)
{
	return hot_a(x, 200000) + 1; /* not a tail call: caller_a stays in the chain */
}

__attribute__((noinline)) static unsigned long caller_b(unsigned long x)
{
	return hot_b(x, 100000) + 1;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *spin(void *arg)
{
	unsigned long x = 7 + (unsigned long)(size_t)arg;
	double end = now_ms() + ms;
	while (now_ms() < end)
		x = caller_b(caller_a(x));
	sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t t[64];
	if (argc > 1)
		ms = atof(argv[1]);
	if (n < 1 || n > 64)
		n = 2;
	for (int i = 1; i < n; i++)
		pthread_create(&t[i], NULL, spin, (void *)(size_t)i);
	spin(NULL);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
