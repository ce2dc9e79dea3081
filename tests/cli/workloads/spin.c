/* SPDX-License-Identifier: MIT */
/* spin MS: burn MS milliseconds of this thread's CPU time. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 200;
	volatile unsigned long x = 1;
	struct timespec ts;
	for (;;) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		if (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 >= ms)
			break;
	}
	return 0;
}
