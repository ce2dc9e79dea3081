/* SPDX-License-Identifier: MIT */
/*
 * wallspin MS [CHILDREN]: spin in rotate_spin() for MS milliseconds of wall-clock time;
 * a third of the way in, fork CHILDREN processes that spin in child_spin() until the same
 * end (they exist only in the later part of a recording). At the end print the CPU time
 * all of them used, in milliseconds (this process and its waited children: user +
 * system), which a recording of task-clock with -c 1000000 (one sample per CPU
 * millisecond) must match whatever the load of the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void rotate_spin(double until)
{
	unsigned long x = 1;
	while (now_ms() < until) {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) static void child_spin(double until)
{
	unsigned long x = 7;
	while (now_ms() < until) {
		for (int i = 0; i < 20000; i++)
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		sink = x;
	}
}

static double tv_ms(struct timeval tv)
{
	return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1000;
	int children = argc > 2 ? atoi(argv[2]) : 0;
	double start = now_ms(), end = start + ms;

	rotate_spin(start + ms / 3);
	for (int i = 0; i < children; i++) {
		pid_t p = fork();
		if (p == 0) {
			child_spin(end);
			_exit(0);
		}
	}
	rotate_spin(end);
	while (wait(NULL) > 0)
		;
	struct rusage self, kids;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("%.0f\n", tv_ms(self.ru_utime) + tv_ms(self.ru_stime) + tv_ms(kids.ru_utime) +
			 tv_ms(kids.ru_stime));
	return 0;
}
