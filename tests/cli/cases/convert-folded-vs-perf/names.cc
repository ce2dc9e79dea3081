// C++ names for the folded-vs-perf test: a template method that GCC clones (.isra),
// a template function over std::iostream (perf prints the abbreviation), a lambda
// called through a template, an anonymous namespace.
#include <cstdlib>
#include <iostream>
namespace ns {
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T spin(T n) const
	{
		T s = v;
		for (T i = 0; i < n; i++) {
			s = s * 31 + (i ^ (s >> 7));
			__asm__ volatile("" : "+r"(s));
		}
		return s;
	}
};
} // namespace ns
template <typename S> __attribute__((noinline)) long stream_spin(long n)
{
	ns::Box<long> b{ (long)sizeof(S) };
	long s = b.spin(n);
	for (long i = 0; i < n; i++) {
		s = s * 17 + (i ^ (s >> 5));
		__asm__ volatile("" : "+r"(s));
	}
	return s;
}
namespace {
template <typename F> __attribute__((noinline)) long apply(F f, long n)
{
	return f(n) + 2;
}
} // namespace
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	long t = 0;
	for (long r = 0; r < n; r++) {
		t += stream_spin<std::iostream>(200000);
		t += apply([](long k) __attribute__((noinline)) {
			ns::Box<int> b{ 5 };
			return (long)b.spin((int)k);
		}, 200000);
	}
	return (int)(t & 1);
}
