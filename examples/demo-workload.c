/* SPDX-License-Identifier: MIT */
/*
 * demo-workload: the bundled workload that `make demo` measures. Deterministic in what it
 * does, so its counts are predictable:
 *   - touches PAGES fresh pages (>= PAGES page faults),
 *   - sleeps SLEEPS times for 1 ms (>= SLEEPS context switches),
 *   - spins in two named functions on two threads, one twice as long as the other, so a
 *     profile shows hot_loop_a at about two thirds of the samples.
 * usage: demo-workload [MILLISECONDS] (default 300)
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGES 1000
#define SLEEPS 20

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long hot_loop_a(double until)
{
	unsigned long x = 1;
	while (now_ms() < until)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) static unsigned long hot_loop_b(double until)
{
	unsigned long x = 7;
	while (now_ms() < until)
		for (int i = 0; i < 10000; i++)
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

static void *thread_b(void *arg)
{
	double ms = *(double *)arg;
	sink += hot_loop_b(now_ms() + ms / 2);
	return NULL;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 300;
	long page = sysconf(_SC_PAGESIZE);
	char *mem = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("demo-workload: mmap");
		return 1;
	}
	for (long i = 0; i < PAGES; i++)
		mem[i * page] = (char)i;
	for (int i = 0; i < SLEEPS; i++)
		usleep(1000);

	pthread_t t;
	pthread_create(&t, NULL, thread_b, &ms);
	sink += hot_loop_a(now_ms() + ms);
	pthread_join(t, NULL);
	munmap(mem, PAGES * page);
	printf("demo-workload: done (%.0f ms, %d pages, %d sleeps)\n", ms, PAGES, SLEEPS);
	return 0;
}
