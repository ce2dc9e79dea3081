/* SPDX-License-Identifier: MIT */
/*
 * The PLT workload of record-unwind-lld: main -> outer -> loop, which calls tiny in a
 * shared library (built from this file with -DPK_TINY) through the PLT in a tight loop,
 * so that many samples land on the PLT entry's jmp. usage: plt [MILLISECONDS]
 */
#ifdef PK_TINY
__attribute__((noinline)) unsigned long tiny(unsigned long x)
{
	return x * 3 + 1;
}
#else
#include <stdlib.h>
#include <time.h>

unsigned long tiny(unsigned long x);

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long loop(unsigned long x)
{
	for (int i = 0; i < 1000000; i++)
		x = tiny(x);
	return x;
}

__attribute__((noinline)) static unsigned long outer(double until)
{
	unsigned long x = 1;
	while (now_ms() < until)
		x = loop(x);
	return x;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 300;
	sink = outer(now_ms() + ms);
	return 0;
}
#endif
