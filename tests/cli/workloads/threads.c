/* SPDX-License-Identifier: MIT */
/* threads N MS [segv]: start N threads that each burn MS milliseconds of their own CPU
 * time, join them, then exit 0 - or, with "segv", crash with a real invalid access. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double ms = 2;

static void *burn(void *arg)
{
	volatile unsigned long x = 1;
	struct timespec ts;
	(void)arg;
	for (;;) {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005UL + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		if (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 >= ms)
			return NULL;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	pthread_t *t;
	if (argc > 2)
		ms = atof(argv[2]);
	if (n < 0 || n > 10000)
		return 2;
	t = calloc((size_t)n + 1, sizeof(*t));
	if (!t)
		return 2;
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, burn, NULL)) {
			fprintf(stderr, "threads: pthread_create failed at %d\n", i);
			return 2;
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	if (argc > 3 && !strcmp(argv[3], "segv")) {
		volatile int *volatile p = NULL;
		*p = 1;
	}
	return 0;
}
