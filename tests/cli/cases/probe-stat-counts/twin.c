/* a second static "twin" in another file: u:PROG:twin is ambiguous */
static int __attribute__((noinline)) twin(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 7;
}
int other_file(int x) { return twin(x); }
