/* SPDX-License-Identifier: MIT */
/*
 * pk_dso__srcline gives binutils' addr2line's answers (those perf 6.1 shows): every
 * address of the .text of a program made of an object with DWARF, one without (a static,
 * a global and a hidden function: the symbol table's STT_FILE fallback, "??" and "") and
 * one whose code all comes from a file it includes (DWARF 5 rows before a sequence's
 * first set_file, which binutils 2.40 names by file entry 0) is compared with addr2line's
 * text for it: "file:line" (base names), "file:?" (line 0), "??:?" (-ENODATA) and "??:0"
 * (-ENOENT). Skipped without cc or addr2line.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static const char main_src[] =
	"unsigned long nd_global(unsigned long n);\n"
	"unsigned long nd_hidden(unsigned long n);\n"
	"unsigned long nd_call_local(unsigned long n);\n"
	"unsigned long in_inner(unsigned long n);\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\treturn (int)(nd_global((unsigned long)argc) + nd_hidden(2) + nd_call_local(3) +\n"
	"\t\t     in_inner(4));\n"
	"}\n";

static const char nodebug_src[] =
	"static __attribute__((noinline)) unsigned long nd_local(unsigned long n)\n"
	"{ volatile unsigned long s = 0; for (unsigned long i = 0; i < n; i++) s += i * 3;\n"
	"  return s; }\n"
	"unsigned long nd_global(unsigned long n)\n"
	"{ volatile unsigned long s = 0; for (unsigned long i = 0; i < n; i++) s += i ^ 5;\n"
	"  return s; }\n"
	"__attribute__((visibility(\"hidden\"))) unsigned long nd_hidden(unsigned long n)\n"
	"{ volatile unsigned long s = 0; for (unsigned long i = 0; i < n; i++) s += i | 7;\n"
	"  return s; }\n"
	"unsigned long nd_call_local(unsigned long n) { return nd_local(n); }\n";

static const char wrap_src[] = "#include \"inner.c\"\n";

static const char inner_src[] =
	"unsigned long in_inner(unsigned long n)\n"
	"{\n"
	"\tvolatile unsigned long s = 0;\n"
	"\tfor (unsigned long i = 0; i < n; i++)\n"
	"\t\ts += i + 11;\n"
	"\treturn s;\n"
	"}\n";

/* pk_dso__srcline's answer in addr2line's words (base name of the file) */
static void ours(struct pk_dso *d, uint64_t a, char *out, size_t len)
{
	const char *file = NULL;
	unsigned int line = 0;
	int err = pk_dso__srcline(d, a, &file, &line);
	if (err == -ENOENT) {
		snprintf(out, len, "??:0");
	} else if (err == -ENODATA) {
		snprintf(out, len, "??:?");
	} else {
		assert_int_equal(err, 0);
		assert_non_null(file);
		const char *b = strrchr(file, '/');
		b = b ? b + 1 : file;
		if (line)
			snprintf(out, len, "%s:%u", b, line);
		else
			snprintf(out, len, "%s:?", b);
	}
}

static void test_srcline_as_addr2line(void **state)
{
	(void)state;
	if (pk_test_sh("command -v cc addr2line readelf nm >/dev/null 2>&1"))
		PK_SKIP("cc, addr2line, readelf or nm is missing");
	pk_test_write_file(".", "a.c", main_src);
	pk_test_write_file(".", "nd.c", nodebug_src);
	pk_test_write_file(".", "w.c", wrap_src);
	pk_test_write_file(".", "inner.c", inner_src);
	if (pk_test_sh("cc -O1 -g -c -o a.o a.c && cc -O1 -g0 -c -o nd.o nd.c && "
		       "cc -O1 -gdwarf-5 -c -o w.o w.c && cc -o prog a.o nd.o w.o"))
		PK_SKIP("the compiler could not build the fixture");
	/* every address of .text, and addr2line's answer for each */
	assert_int_equal(pk_test_sh("readelf -SW prog | awk '$2 == \".text\" { print $4, $6 }' "
				    "> text.txt"), 0);
	FILE *f = fopen("text.txt", "r");
	assert_non_null(f);
	unsigned long long lo = 0, sz = 0;
	assert_int_equal(fscanf(f, "%llx %llx", &lo, &sz), 2);
	fclose(f);
	assert_true(sz > 0 && sz < (1u << 20));
	f = fopen("addrs.txt", "w");
	assert_non_null(f);
	for (unsigned long long a = lo; a < lo + sz; a++)
		fprintf(f, "%#llx\n", a);
	fclose(f);
	assert_int_equal(pk_test_sh("addr2line -e prog < addrs.txt | "
				    "sed 's/ (discriminator [0-9]*)$//; s|.*/||' > a2l.txt"), 0);

	char cwd[PATH_MAX], prog[PATH_MAX + 8];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(prog, sizeof(prog), "%s/prog", cwd);
	PK_OPTS(pk_machine_opts, o, .buildid_dir = "");
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	struct pk_dso *d = pk_machine__dso(m, prog);
	assert_non_null(d);
	f = fopen("a2l.txt", "r");
	assert_non_null(f);
	char want[PATH_MAX], got[PATH_MAX];
	size_t n = 0, bad = 0, symtab = 0, entry0 = 0;
	for (unsigned long long a = lo; a < lo + sz && fgets(want, sizeof(want), f); a++, n++) {
		want[strcspn(want, "\n")] = 0;
		ours(d, a, got, sizeof(got));
		if (strcmp(want, got) && bad++ < 10)
			print_message("%#llx: addr2line '%s', perfkit '%s'\n", a, want, got);
		symtab += !strcmp(want, "nd.c:?") || !strcmp(want, "??:?") || !strcmp(want, ":?");
		entry0 += !strncmp(want, "w.c:", 4);
	}
	fclose(f);
	pk_machine__free(m);
	assert_int_equal(n, sz);
	assert_int_equal(bad, 0);
	/* the cases the test is about were there */
	assert_true(symtab > 20);
	assert_true(entry0 > 5);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srcline_as_addr2line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
