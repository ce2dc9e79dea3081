/* Functions with OCaml native symbol names (perf decodes "camlModule__fn_N" itself) and
 * two that look close but are not OCaml's, for report-names-vs-perf. */
static volatile long sink;
#define SPIN(fn, sym)                                                                    \
	__attribute__((noinline)) void fn(long n) __asm__(sym);                          \
	void fn(long n)                                                                  \
	{                                                                                \
		for (long i = 0; i < n; i++)                                             \
			sink += i ^ (sink >> 3);                                         \
	}
SPIN(f1, "camlStdlib__List__map_154")
SPIN(f2, "camlFoo$3ebar__baz_12")
SPIN(f3, "camlX___c")
SPIN(f4, "camlfoo__bar")
SPIN(f5, "caml_alloc")
int main(void)
{
	for (int r = 0; r < 10; r++) {
		f1(3000000);
		f2(3000000);
		f3(3000000);
		f4(3000000);
		f5(3000000);
	}
	return 0;
}
