/* SPDX-License-Identifier: MIT */
/* syscalls N M K [STATUS]: N getppid calls, M openat calls that fail with ENOENT, K writes
 * of 2 bytes to stdout, then exit with STATUS (default 0): known counts for `trace`. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, m = argc > 2 ? atol(argv[2]) : 0;
	long k = argc > 3 ? atol(argv[3]) : 0;
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid); /* not cached by any libc */
	for (long i = 0; i < m; i++)
		openat(AT_FDCWD, "/nonexistent/perfkit-trace", O_RDONLY | O_CLOEXEC);
	for (long i = 0; i < k; i++)
		if (write(1, "x\n", 2) != 2)
			return 1;
	return argc > 4 ? atoi(argv[4]) : 0;
}
