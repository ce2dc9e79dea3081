// SPDX-License-Identifier: MIT
// report-vs-perf: a function inlined into one whose name differs only by a leading
// underscore (CPython's _PyObject_Call in PyObject_Call). perf shows "_spin (inlined)"
// above "spin"; the leading-underscore equivalence is for assembler entry points only.
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) unsigned long _spin(unsigned long n)
{
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x)); /* a loop the compiler keeps */
	}
	return x;
}

__attribute__((noinline)) unsigned long spin(unsigned long n)
{
	return _spin(n) ^ n;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	unsigned long t = 0;
	for (unsigned long r = 0; r < rounds; r++)
		t += spin(1000000);
	printf("%lu\n", t);
	return 0;
}
