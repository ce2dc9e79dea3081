/* SPDX-License-Identifier: MIT */
/* deep MS: spin for MS ms of CPU time 100 calls deep (a deep-stack flame graph, like a
 * Python program's). The variable-length array keeps a frame pointer in every frame at any
 * optimisation level, so `record -g` sees the whole chain. */
#include <stdlib.h>
#include <time.h>

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long level(int n, double ms)
{
	volatile char pad[(n & 7) + 1];
	pad[0] = (char)n;
	unsigned long x = (unsigned long)pad[0];
	if (n > 0)
		x += level(n - 1, ms);
	else
		while (cpu_ms() < ms)
			for (int i = 0; i < 100000; i++)
				x = x * 6364136223846793005UL + 1;
	return x + (unsigned long)pad[0];
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 200;
	return (int)(level(100, ms) & 1) * 0;
}
