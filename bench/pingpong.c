/* SPDX-License-Identifier: MIT */
/*
 * bench/pingpong N [TIMEFILE]: two threads pass one byte back and forth over two pipes N
 * times (default 200000): every round trip blocks each thread once, so about 2N voluntary
 * context switches, the worst case for per-switch recording (bench/offcpu-overhead.sh).
 * With TIMEFILE, the seconds the round trips took (the workload's own wall time, without
 * a recorder's start and end) and the CPU seconds of the process (user + system: what a
 * recorder's kernel work in the workload's context adds) are appended to it, one line per
 * run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

static int ab[2], ba[2];
static long n = 200000;

static void *pong(void *arg)
{
	char c;
	(void)arg;
	for (long i = 0; i < n; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(2);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c = 'x';
	struct timespec t0, t1;

	if (argc > 1)
		n = atol(argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (n < 1 || pipe(ab) || pipe(ba) || pthread_create(&t, NULL, pong, NULL))
		return 1;
	for (long i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 2;
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (argc > 2) {
		FILE *f = fopen(argv[2], "a");
		if (!f)
			return 3;
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		fprintf(f, "%.6f %.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
			(double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
		if (fclose(f))
			return 3;
	}
	return 0;
}
