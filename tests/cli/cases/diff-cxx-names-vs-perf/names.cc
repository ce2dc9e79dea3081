// SPDX-License-Identifier: MIT
// diff-cxx-names-vs-perf's workload: C++ functions whose full names carry parameter
// lists, templates, namespaces, overloads and a const qualifier.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ns {
template <typename T> struct Box {
	volatile T v;
	__attribute__((noinline)) T spin(int n, const std::string &tag) const
	{
		T s = 0;
		for (int i = 0; i < n; i++)
			s += v * (T)tag.size();
		return s;
	}
};
} // namespace ns

__attribute__((noinline)) long work(int n, std::vector<int> &v)
{
	volatile long s = 0;
	for (int j = 0; j < n; j++)
		s = s + v[j % v.size()];
	return s;
}

__attribute__((noinline)) long work(int n, double scale)
{
	volatile double s = 0;
	for (int j = 0; j < n; j++)
		s = s + scale;
	return (long)s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 400;
	ns::Box<long> b{3};
	ns::Box<int> c{2};
	std::vector<int> v(1000, 1);
	std::string t("xy");
	long s = 0;
	for (int i = 0; i < n; i++) {
		s += b.spin(100000, t);
		s += c.spin(50000, t);
		s += work(50000, v);
		s += work(50000, 0.5);
	}
	printf("%ld\n", s);
	return 0;
}
