/* Built without -g: no line table covers these; binutils (and so perf 6.1) names their
 * source file from the symbol table: "nodebug.c" for the local function, none ("??") for
 * the global one (globals follow every file symbol), "" for the hidden one (the linker
 * lists it under an empty file symbol). */
static unsigned long spin(unsigned long n, unsigned long k)
{
	volatile unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i * k;
	return s;
}

static __attribute__((noinline)) unsigned long nd_local(unsigned long n)
{
	return spin(n, 3);
}

unsigned long nd_global(unsigned long n)
{
	volatile unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i ^ 5;
	return s;
}

__attribute__((visibility("hidden"))) unsigned long nd_hidden(unsigned long n)
{
	volatile unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i | 7;
	return s;
}

unsigned long nd_call_local(unsigned long n)
{
	return nd_local(n);
}
