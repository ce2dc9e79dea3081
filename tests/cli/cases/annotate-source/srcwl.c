/* a workload with debug info for annotate's source lines: two hot loops, one of them
 * calling an inline function of another file (srcwl.h) */
#include <stdio.h>
#include <stdlib.h>
#include "srcwl.h"

__attribute__((noinline)) static unsigned long loop_mix(long n)
{
	unsigned long x = 88172645463325252UL;
	for (long i = 0; i < n; i++)
		x = mix(x) + (unsigned long)i;
	return x;
}

__attribute__((noinline)) static unsigned long loop_lcg(long n)
{
	unsigned long x = 1;
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL
		    + 1442695040888963407UL;
		if (x % 7 == 3)
			x ^= (unsigned long)i;
	}
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000L;
	printf("%lu %lu\n", loop_mix(n), loop_lcg(n / 2));
	return 0;
}
