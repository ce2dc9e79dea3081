/* Included by wrap.c (see there). */
unsigned long in_inner(unsigned long n)
{
	volatile unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i + 11;
	return s;
}
