/* Test program of the dynamic-probe cases: f is called N times (argv[1]) out of line,
 * through a pointer the compiler cannot see through, and N more times inlined into main
 * (a probe on f must count only the out-of-line calls); g (libtest) M times (argv[2]);
 * two files define a static "twin". f's out-of-line arguments are (i, i * 3) so samples
 * can be checked. */
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

/* an inline definition with an external one (C99 6.7.4): direct calls are inlined, the
 * out-of-line copy (symbol f) is what calls through f_ptr reach */
extern long f(long a, long b);
inline __attribute__((always_inline)) long f(long a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a + b;
}

long (*volatile f_ptr)(long, long) = f;
volatile long sink;

__attribute__((noinline)) void caller_of_f(long i)
{
	sink += f_ptr(i, i * 3);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5, m = argc > 2 ? atol(argv[2]) : 3;
	if (argc > 3) { /* wait for the file argv[3] (a tracer attaching with -p) */
		printf("%d\n", getpid());
		fflush(stdout);
		for (int i = 0; i < 120000 && access(argv[3], F_OK); i++) /* ~2 min */
			usleep(1000);
	}
	for (long i = 0; i < n; i++) {
		caller_of_f(i);
		sink += f(i, sink); /* inlined: not a call of the symbol f */
	}
	for (long i = 0; i < m; i++)
		sink += g(i);
	sink += twin((int)sink) + other_file((int)sink);
	return 0;
}
