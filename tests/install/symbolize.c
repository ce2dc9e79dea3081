/* SPDX-License-Identifier: MIT */
/*
 * symbolize: built by tests/install/run.sh against an installed perfkit. It loads its own
 * executable as a DSO and prints the symbol and source line of one of its functions, so
 * that the link needs the libdw/libelf half of the library (and, statically, everything
 * libdw needs in turn), which count-printf never touches.
 *
 *     symbolize    ->  "target_function at symbolize.c:NN"
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>

int target_function(int x);
__attribute__((noinline)) int target_function(int x)
{
	return x * 3 + 1;
}

int main(void)
{
	char exe[PATH_MAX];
	struct pk_machine *m;
	struct pk_dso *d;
	const char *sym, *file;
	unsigned int line = 0;
	uint64_t addr, start = 0;
	int n;

	if (!realpath("/proc/self/exe", exe)) {
		fprintf(stderr, "symbolize: /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	PK_OPTS(pk_machine_opts, mo, .buildid_dir = "");
	m = pk_machine__new(&mo);
	if (!m) {
		fprintf(stderr, "symbolize: cannot create a machine: %s\n", strerror(errno));
		return 1;
	}
	d = pk_machine__dso(m, exe);
	n = d ? pk_dso__load(d) : -errno;
	if (n <= 0 || pk_dso__symbol_addr(d, "target_function", &addr) < 0) {
		fprintf(stderr, "symbolize: no symbols in %s (%d)\n", exe, n);
		pk_machine__free(m);
		return 1;
	}
	sym = pk_dso__symbol(d, addr + 1, &start, NULL);
	if (pk_dso__srcline(d, addr, &file, &line) < 0)
		file = "??";
	printf("%s at %s:%u\n", sym ? sym : "??", strrchr(file, '/') ? strrchr(file, '/') + 1 : file,
	       line);
	pk_machine__free(m);
	return target_function(0) == 1 && sym && start == addr ? 0 : 1;
}
