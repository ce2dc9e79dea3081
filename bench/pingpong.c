/* SPDX-License-Identifier: MIT */
/*
 * bench/pingpong N: two threads pass one byte back and forth over two pipes N times
 * (default 200000): every round trip blocks each thread once, so about 2N voluntary
 * context switches, the worst case for per-switch recording (bench/offcpu-overhead.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

	if (argc > 1)
		n = atol(argv[1]);
	if (n < 1 || pipe(ab) || pipe(ba) || pthread_create(&t, NULL, pong, NULL))
		return 1;
	for (long i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 2;
	pthread_join(t, NULL);
	return 0;
}
