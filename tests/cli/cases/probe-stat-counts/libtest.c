/* the shared library of the probe cases */
__attribute__((noinline)) long g(long x)
{
	__asm__ volatile("" ::: "memory");
	return x ^ 0x55;
}
