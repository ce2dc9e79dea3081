/* hot() reached through parent_a (2/3 of the work) and through plain() (1/3) */
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void hot(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}
__attribute__((noinline)) void parent_a(unsigned long n) { hot(n); sink++; }
__attribute__((noinline)) void plain(unsigned long n) { hot(n); sink++; }
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	for (int r = 0; r < 10; r++) {
		parent_a(n * 20000);
		plain(n * 10000);
	}
	return 0;
}
