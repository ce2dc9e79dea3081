/* Parameters of several kinds for record --args with DWARF names: k(s, n, c, neg, pp) is
 * called argv[1] times with a string, a negative int, an unsigned char, a negative short
 * and a struct pointer; the program prints the pointers it passed. */
#include <stdio.h>
#include <stdlib.h>

struct pt { int x, y; };

__attribute__((noipa)) int k(const char *s, int n, unsigned char c, short neg, struct pt *pp)
{
	return s[0] + n + c + neg + pp->x;
}

int main(int argc, char **argv)
{
	static struct pt q = { 1, 2 };
	static const char msg[] = "hello";
	long r = 0, times = argc > 1 ? atol(argv[1]) : 1;
	printf("%p|%p\n", (const void *)msg, (void *)&q);
	for (long i = 0; i < times; i++)
		r += k(msg, -5 - (int)i, (unsigned char)(200 + i), (short)(-7 * (i + 1)), &q);
	return r == 0;
}
