/* Test program of the dynamic-probe cases: f is called N times (argv[1]), out of line,
 * and also inlined into h_inl's callers; g (libtest) M times (argv[2]); two files define
 * a static "twin". f's two arguments are (i, i * 3) so samples can be checked. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

long g(long x);            /* libtest.c */
int other_file(int x);     /* twin.c: calls its own static twin */

static __attribute__((noinline)) int twin(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) long f(long a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a + b;
}

/* f inlined here: the out-of-line copy is what the probe sees */
static inline __attribute__((always_inline)) long f_inl(long a, long b) { return a * 2 + b; }

volatile long sink;

__attribute__((noinline)) void caller_of_f(long i)
{
	sink += f(i, i * 3);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5, m = argc > 2 ? atol(argv[2]) : 3;
	if (argc > 3) { /* wait for the file argv[3] (a tracer attaching with -p) */
		printf("%d\n", getpid());
		fflush(stdout);
		for (int i = 0; i < 10000 && access(argv[3], F_OK); i++)
			usleep(1000);
	}
	for (long i = 0; i < n; i++) {
		caller_of_f(i);
		sink += f_inl(i, i);
	}
	for (long i = 0; i < m; i++)
		sink += g(i);
	sink += twin((int)sink) + other_file((int)sink);
	return 0;
}
