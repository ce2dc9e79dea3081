/* A call chain deeper than perf's 127-frame max-stack: recurse(300) down to a leaf that
 * spins (and, with a third argument, makes system calls, so that samples carry kernel
 * frames above the deep user stack). Built with frame pointers. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static int syscalls;

__attribute__((noinline)) static unsigned long leaf(unsigned long x)
{
	if (syscalls)
		for (int i = 0; i < 200; i++)
			x += (unsigned long)getppid();
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) static unsigned long recurse(int depth, unsigned long x)
{
	if (depth == 0)
		return leaf(x);
	unsigned long r = recurse(depth - 1, x + 1);
	sink += r;
	return r ^ (unsigned long)depth;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 300;
	double secs = argc > 2 ? atof(argv[2]) : 0.3;
	struct timespec t0, t;

	syscalls = argc > 3;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sink += recurse(depth, sink);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
