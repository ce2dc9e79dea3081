/* With line information: main and the loop that calls the functions of nodebug.c and
 * wrap.c. */
#include <stdlib.h>
unsigned long nd_global(unsigned long n);
unsigned long nd_hidden(unsigned long n);
unsigned long nd_call_local(unsigned long n);
unsigned long in_inner(unsigned long n);
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100, s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += nd_global(200000) + nd_hidden(200000) + nd_call_local(200000) +
		     in_inner(200000);
	return (int)(s & 1);
}
