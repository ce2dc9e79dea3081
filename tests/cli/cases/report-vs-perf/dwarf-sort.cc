// SPDX-License-Identifier: MIT
// report-vs-perf's C++ DWARF case: real (noinline) functions that DWARF names with
// their parameters ("sorter(int)"), and std::sort's inline frames with long template
// names, which perf shows in their short form.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

static std::vector<int> v;

__attribute__((noinline)) void build(int n)
{
	v.resize(n);
	unsigned s = 1;
	for (int i = 0; i < n; i++) {
		s = s * 1103515245u + 12345u;
		v[i] = (int)(s >> 8);
	}
}

__attribute__((noinline)) long sorter(int n)
{
	build(n);
	std::sort(v.begin(), v.end());
	return v[n / 2];
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	long t = 0;
	for (int r = 0; r < rounds; r++)
		t += sorter(200000);
	printf("%ld\n", t);
	return 0;
}
