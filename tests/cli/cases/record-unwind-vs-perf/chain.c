/* SPDX-License-Identifier: MIT */
/*
 * The workload of the record-unwind-* cases: main -> outer -> inner -> spin, where spin
 * holds nearly every sample and calls nothing, so a complete unwind of any sample reaches
 * main. usage: chain [MILLISECONDS] (default 300)
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long spin(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) static unsigned long inner(double until)
{
	unsigned long x = 1;
	while (now_ms() < until)
		x = spin(x);
	return x;
}

__attribute__((noinline)) static unsigned long outer(double ms)
{
	return inner(now_ms() + ms) + 1;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 300;
	sink = outer(ms);
	return 0;
}
