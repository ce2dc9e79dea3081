/* SPDX-License-Identifier: MIT */
/* touch-pages N: write one byte to each of N fresh anonymous pages (no huge pages), so
 * the program takes N page faults plus its start-up's. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long page = sysconf(_SC_PAGESIZE);
	char *m;
	if (n <= 0)
		return 2;
	m = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED) {
		perror("touch-pages: mmap");
		return 1;
	}
	madvise(m, (size_t)(n * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		((volatile char *)m)[i * page] = (char)i;
	return 0;
}
