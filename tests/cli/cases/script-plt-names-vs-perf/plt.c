/* Calls a libc function through the PLT in a loop, so that samples land in the stub
 * (and, from libc's own PLT, in the stubs of its internal calls). */
#include <stdlib.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) static void work(void)
{
	for (int i = 0; i < 1000; i++)
		sink += rand();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		work();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
