/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol: symbols, PLT stubs, source lines and inline frames of a program compiled
 * by the test (PIE and non-PIE, stripped with a debuglink), load bias from a live
 * process's maps, build-id checks, kallsyms, perf-PID.map, vdso, hostile paths, and
 * timings (printed).
 *
 * Oracles are independent of the code under test: nm / objdump for addresses, __LINE__-
 * style markers in the fixture source for lines, the fixture's own printout of its
 * function addresses, dladdr() for libc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static const char fixture_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"volatile int pk_sink;\n"
	"__attribute__((noinline)) int pk_fixture_leaf(int x) { pk_sink += x; return pk_sink * 3; } /* M_LEAF */\n"
	"static inline __attribute__((always_inline)) int pk_inl(int x)\n"
	"{\n"
	"\treturn pk_fixture_leaf(x) + 1; /* M_INL */\n"
	"}\n"
	"__attribute__((noinline)) int pk_fixture_outer(int x)\n"
	"{\n"
	"\treturn pk_inl(x) * 2; /* M_CALLSITE */\n"
	"}\n"
	"static __attribute__((noinline)) int pk_fixture_static(int x)\n"
	"{\n"
	"\treturn x ^ pk_sink; /* M_STATIC */\n"
	"}\n"
	"__attribute__((noinline)) int pk_cxx(int x) __asm__(\"_ZN2ns3fooEi\");\n"
	"int pk_cxx(int x) { return x + pk_sink; }\n"
	"__attribute__((noinline)) int pk_rust(int x) __asm__(\"_ZN4core3fmt5write17h0123456789abcdefE\");\n"
	"int pk_rust(int x) { return x - pk_sink; }\n"
	"__attribute__((noinline)) int pk_rust_v0(int x) __asm__(\"_RNvCs6GmmlP4bgsG_1r8hot_loop\");\n"
	"int pk_rust_v0(int x) { return x * pk_sink; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\tprintf(\"%p %p %p\\n\", (void *)pk_fixture_outer, (void *)pk_fixture_leaf,\n"
	"\t       (void *)pk_fixture_static);\n"
	"\tfflush(stdout);\n"
	"\tif (argc > 1) { char b[8]; while (read(0, b, sizeof b) > 0) ; }\n"
	"\treturn pk_fixture_outer(argc) + pk_fixture_static(argc) + pk_cxx(argc) +\n"
	"\t       pk_rust(argc) + (getpid() == 0);\n"
	"}\n";

static char dir[PATH_MAX];
static char pie[PATH_MAX + 32], nopie[PATH_MAX + 32], stripped[PATH_MAX + 32],
	bare[PATH_MAX + 32], src[PATH_MAX + 32];
static bool have_tools;

static int marker_line(const char *marker)
{
	int line = 1;
	const char *p = fixture_src, *m = strstr(fixture_src, marker);
	assert_non_null(m);
	for (; p < m; p++)
		line += *p == '\n';
	return line;
}

static uint64_t sh_hex(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	return s;
}

/* First line of a command's output, parsed as a hex number. 0 if none. */
static uint64_t sh_hex(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX], line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	uint64_t v = 0;
	if (fgets(line, sizeof(line), f))
		v = strtoull(line, NULL, 16);
	pclose(f);
	return v;
}

static uint64_t nm_addr(const char *bin, const char *sym)
{
	return sh_hex("nm '%s' | awk '$3 == \"%s\" { print $1 }'", bin, sym);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(getcwd(dir, sizeof(dir)));
	snprintf(src, sizeof(src), "%s/fixture.c", dir);
	snprintf(pie, sizeof(pie), "%s/fixture-pie", dir);
	snprintf(nopie, sizeof(nopie), "%s/fixture-nopie", dir);
	snprintf(stripped, sizeof(stripped), "%s/fixture-stripped", dir);
	snprintf(bare, sizeof(bare), "%s/fixture-bare", dir);
	FILE *f = fopen(src, "w");
	assert_non_null(f);
	fputs(fixture_src, f);
	fclose(f);
	have_tools = pk_test_sh("command -v cc nm objdump objcopy >/dev/null 2>&1") == 0;
	if (!have_tools)
		return 0;
	if (pk_test_sh("cc -g -O1 -fPIE -pie -o '%s' '%s'", pie, src) ||
	    pk_test_sh("cc -g -O1 -fno-pie -no-pie -o '%s' '%s'", nopie, src) ||
	    pk_test_sh("cd '%s' && objcopy --only-keep-debug fixture-pie fixture-stripped.debug && "
	       "objcopy --strip-all --add-gnu-debuglink=fixture-stripped.debug fixture-pie "
	       "fixture-stripped && objcopy --strip-all fixture-pie fixture-bare", dir))
		have_tools = false;
	return 0;
}

#define NEED_TOOLS()                                                              \
	do {                                                                      \
		if (!have_tools)                                                  \
			PK_SKIP("cc/nm/objdump/objcopy missing or failed");        \
	} while (0)

static struct pk_machine *machine_o(const struct pk_machine_opts *o)
{
	struct pk_machine *m = pk_machine__new(o);
	assert_non_null(m);
	return m;
}

/* (no build-id cache: what ~/.debug holds depends on which recordings ran before, and a
 * copy there with a recorded build-id would stand in for a changed file) */
static struct pk_machine *machine(bool host)
{
	PK_OPTS(pk_machine_opts, o, .host = host, .buildid_dir = "");
	return machine_o(&o);
}

static void check_symbols(const char *bin, const char *oracle)
{
	static const char *names[] = { "pk_fixture_leaf", "pk_fixture_outer", "pk_fixture_static",
				       "main" };
	struct pk_machine *m = machine(false);
	struct pk_dso *d = pk_machine__dso(m, bin);
	assert_non_null(d);
	assert_true(pk_dso__load(d) > 4);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t a = nm_addr(oracle, names[i]), start = 0, size = 0, b = 0;
		assert_true(a != 0);
		const char *s = pk_dso__symbol(d, a, &start, &size);
		assert_non_null(s);
		assert_string_equal(s, names[i]);
		assert_int_equal(start, a);
		assert_true(size > 0);
		s = pk_dso__symbol(d, a + size - 1, &start, NULL);
		assert_non_null(s);
		assert_string_equal(s, names[i]);
		assert_int_equal(pk_dso__symbol_addr(d, names[i], &b), 0);
		assert_int_equal(b, a);
	}
	/* demangling, in perf's form: C++ (no parameter list), Rust legacy (no hash) and v0 */
	uint64_t a = nm_addr(oracle, "_ZN2ns3fooEi");
	const char *s = pk_dso__symbol(d, a, NULL, NULL);
	assert_non_null(s);
	assert_string_equal(s, "ns::foo");
	a = nm_addr(oracle, "_RNvCs6GmmlP4bgsG_1r8hot_loop");
	s = pk_dso__symbol(d, a, NULL, NULL);
	assert_non_null(s);
	assert_string_equal(s, "r::hot_loop");
	a = nm_addr(oracle, "_ZN4core3fmt5write17h0123456789abcdefE");
	s = pk_dso__symbol(d, a, NULL, NULL);
	assert_non_null(s);
	assert_string_equal(s, "core::fmt::write");
	/* below the first symbol: nothing */
	assert_null(pk_dso__symbol(d, 0x10, NULL, NULL));
	pk_machine__free(m);
}

static void test_symbols_pie(void **state)
{
	(void)state;
	NEED_TOOLS();
	check_symbols(pie, pie);
}

static void test_symbols_nopie(void **state)
{
	(void)state;
	NEED_TOOLS();
	check_symbols(nopie, nopie);
}

/* pk_fixture_leaf's line, looked up in d (a build of the fixture, maybe stripped) */
static void assert_leaf_line(struct pk_dso *d)
{
	const char *file;
	unsigned int line;
	assert_int_equal(pk_dso__srcline(d, nm_addr(pie, "pk_fixture_leaf"), &file, &line), 0);
	assert_int_equal(line, marker_line("M_LEAF"));
}

/* a stripped file finds its symbols and lines through .gnu_debuglink */
static void test_debuglink(void **state)
{
	(void)state;
	NEED_TOOLS();
	check_symbols(stripped, pie);
	struct pk_machine *m = machine(false);
	assert_leaf_line(pk_machine__dso(m, stripped));
	const char *file;
	unsigned int line;
	/* control: the same stripped file without a debuglink has no static symbols */
	struct pk_dso *b = pk_machine__dso(m, bare);
	pk_dso__load(b);
	assert_null(pk_dso__symbol(b, nm_addr(pie, "pk_fixture_static"), NULL, NULL));
	assert_int_equal(pk_dso__srcline(b, nm_addr(pie, "pk_fixture_leaf"), &file, &line),
			 -ENOENT);
	pk_machine__free(m);
}

/* address of the `call <pk_fixture_leaf>` instruction inside pk_fixture_outer */
static uint64_t call_site(const char *bin)
{
	return sh_hex("objdump -d --no-show-raw-insn '%s' | awk '/<pk_fixture_outer>:/ {f=1; next} "
		      "f && /^$/ {exit} f && /call.*<pk_fixture_leaf>/ { sub(\":\", \"\", $1); "
		      "print $1; exit }'", bin);
}

static void check_lines(const char *bin)
{
	struct pk_machine *m = machine(false);
	struct pk_dso *d = pk_machine__dso(m, bin);
	const char *file;
	unsigned int line;
	uint64_t leaf = nm_addr(bin, "pk_fixture_leaf");
	assert_int_equal(pk_dso__srcline(d, leaf, &file, &line), 0);
	assert_non_null(strstr(file, "fixture.c"));
	assert_int_equal(line, marker_line("M_LEAF"));
	/* cached: same answer, same pointer */
	const char *file2;
	unsigned int line2;
	assert_int_equal(pk_dso__srcline(d, leaf, &file2, &line2), 0);
	assert_ptr_equal(file, file2);
	assert_int_equal(line2, line);

	/* parameters from DWARF at a function's entry: leaf's int x is in the first argument
	 * register; main has two, more than asked for (counted, one filled) */
	struct pk_param ps[4];
	assert_int_equal(pk_dso__params(d, leaf, ps, 4), 1);
	assert_string_equal(ps[0].name, "x");
	assert_string_equal(ps[0].type, "int");
	assert_int_equal(ps[0].size, 4);
	assert_true(ps[0].is_signed);
	assert_false(ps[0].is_pointer);
#if defined(__x86_64__)
	assert_int_equal(ps[0].reg, pk_probe__arg_reg(0));
#endif
	uint64_t main_pc = nm_addr(bin, "main");
	memset(ps, 0x5a, sizeof(ps));
	assert_int_equal(pk_dso__params(d, main_pc, ps, 1), 2);
	assert_string_equal(ps[0].name, "argc");
	assert_int_equal((unsigned char)ps[1].name[0], 0x5a); /* max respected */
	assert_int_equal(pk_dso__params(d, main_pc, ps, 4), 2);
	assert_string_equal(ps[1].name, "argv");
	assert_string_equal(ps[1].type, "char **");
	assert_true(ps[1].is_pointer);
	assert_int_equal(ps[1].size, sizeof(void *));
	assert_true(pk_dso__params(d, 0x10, ps, 4) < 0);
	assert_true(pk_dso__params(NULL, leaf, ps, 4) < 0);

	uint64_t call = call_site(bin);
	assert_true(call != 0);
	assert_int_equal(pk_dso__srcline(d, call, &file, &line), 0);
	assert_int_equal(line, marker_line("M_INL"));
	const struct pk_inline_frame *fr;
	/* names only first (no line table read): no locations; then the full chain */
	int n = pk_dso__inline_names(d, call, &fr);
	assert_int_equal(n, 2);
	assert_string_equal(fr[0].func, "pk_inl");
	assert_string_equal(fr[1].func, "pk_fixture_outer");
	assert_null(fr[0].file);
	assert_int_equal(fr[1].line, 0);
	n = pk_dso__inlines(d, call, &fr);
	assert_int_equal(n, 2);
	assert_string_equal(fr[0].func, "pk_inl");
	assert_int_equal(fr[0].line, marker_line("M_INL"));
	assert_non_null(strstr(fr[0].file, "fixture.c"));
	assert_string_equal(fr[1].func, "pk_fixture_outer");
	assert_int_equal(fr[1].line, marker_line("M_CALLSITE"));
	assert_non_null(strstr(fr[1].file, "fixture.c"));
	/* no inlining at the leaf: one frame, the function itself */
	n = pk_dso__inlines(d, leaf, &fr);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].func, "pk_fixture_leaf");
	/* names after a full look-up: the same entry, locations included */
	n = pk_dso__inline_names(d, call, &fr);
	assert_int_equal(n, 2);
	assert_int_equal(fr[1].line, marker_line("M_CALLSITE"));
	/* an address outside any CU */
	assert_true(pk_dso__inlines(d, 0x10, &fr) < 0);
	assert_true(pk_dso__srcline(d, 0x10, &file, &line) < 0);
	pk_machine__free(m);
}

/*
 * Inline chains from the CU scope trees (dso.c) equal libdw's own scope walks
 * (dwarf_getscopes + dwarf_getscopes_die, opts.scopes_libdw) at every address sampled
 * over the text of this test program (our library, inlined everywhere at -O2) and of
 * libc (with its debug file, if installed): functions, files and lines.
 */
static void compare_scopes(const char *bin, size_t max_addrs, size_t *compared, size_t *inlined)
{
	uint64_t vma = sh_hex("objdump -h '%s' | awk '$2 == \".text\" { print $4; exit }'", bin);
	uint64_t size = sh_hex("objdump -h '%s' | awk '$2 == \".text\" { print $3; exit }'", bin);
	if (!vma || !size)
		return;
	PK_OPTS(pk_machine_opts, lo, .scopes_libdw = true);
	struct pk_machine *ml = machine_o(&lo);
	struct pk_machine *mt = machine(false);
	struct pk_dso *dl = pk_machine__dso(ml, bin), *dt = pk_machine__dso(mt, bin);
	assert_non_null(dl);
	assert_non_null(dt);
	uint64_t step = size / max_addrs + 1;
	for (uint64_t a = vma; a < vma + size; a += step) {
		const struct pk_inline_frame *fl, *ft;
		int nl = pk_dso__inlines(dl, a, &fl), nt = pk_dso__inlines(dt, a, &ft);
		if (nl != nt)
			fail_msg("%s %#llx: %d frames by libdw, %d by the scope tree", bin,
				 (unsigned long long)a, nl, nt);
		for (int i = 0; i < nl; i++) {
			assert_string_equal(fl[i].func, ft[i].func);
			assert_string_equal(fl[i].file ? fl[i].file : "-", ft[i].file ? ft[i].file : "-");
			assert_int_equal(fl[i].line, ft[i].line);
		}
		(*compared)++;
		*inlined += nl > 1;
	}
	pk_machine__free(ml);
	pk_machine__free(mt);
}

/* A program made of nested always-inline functions (inlined whatever the -O level),
 * some inside lexical blocks, called from several functions: inline chains up to 8 deep. */
static void write_inline_fixture(const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("#define AI static inline __attribute__((always_inline))\n"
	      "volatile int sink;\n"
	      "AI int g0(int x) { return x * 3 + 1; }\n", f);
	for (int i = 1; i < 8; i++)
		fprintf(f, "AI int g%d(int x) { int r = g%d(x ^ %d);\n"
			   "  { int t = r + x; if (t & %d) r += g%d(t); }\n  return r; }\n",
			i, i - 1, i * 7, 1 << i, i - 1);
	for (int i = 0; i < 12; i++)
		fprintf(f, "__attribute__((noinline)) int caller%d(int x) "
			   "{ return g%d(x + %d) + g%d(x); }\n", i, 7 - i % 8, i, (i * 3) % 8);
	fputs("int main(int c, char **v) { (void)v; int s = 0;\n", f);
	for (int i = 0; i < 12; i++)
		fprintf(f, "  s += caller%d(c);\n", i);
	fputs("  sink = s; return 0; }\n", f);
	fclose(f);
}

static void test_scope_trees(void **state)
{
	(void)state;
	NEED_TOOLS();
	char isrc[PATH_MAX + 32], ibin[PATH_MAX + 32];
	snprintf(isrc, sizeof(isrc), "%s/inl.c", dir);
	snprintf(ibin, sizeof(ibin), "%s/inl", dir);
	write_inline_fixture(isrc);
	assert_int_equal(pk_test_sh("cc -g -O1 -o '%s' '%s'", ibin, isrc), 0);
	size_t compared = 0, inlined = 0;
	compare_scopes(ibin, 20000, &compared, &inlined);
	/* the test must have looked at real inline chains */
	assert_true(compared > 500);
	assert_true(inlined > 100);
	/* more: this program (our library, inlined everywhere when built with -O2) and libc
	 * (inline chains with its debug file installed) */
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	size_t c1 = 0, i1 = 0, c2 = 0, i2 = 0;
	compare_scopes(self, 20000, &c1, &i1);
	Dl_info info;
	if (dladdr((void *)qsort, &info) && info.dli_fname)
		compare_scopes(info.dli_fname, 20000, &c2, &i2);
	print_message("(addresses with inline chains: %zu of %zu in the fixture, %zu of %zu in "
		      "this program, %zu of %zu in libc)\n", inlined, compared, i1, c1, i2, c2);
}

static void test_srcline_inline(void **state)
{
	(void)state;
	NEED_TOOLS();
	check_lines(pie);
	check_lines(nopie);
}

/*
 * A debug file with compressed sections is inflated once into the cache directory and
 * read from there afterwards; same lines and inline frames either way. A cache entry
 * that others could write, or with another build id, is not used (it is made again).
 */
static void test_debug_cache(void **state)
{
	(void)state;
	NEED_TOOLS();
	if (pk_test_sh("cd '%s' && objcopy --only-keep-debug --compress-debug-sections=zlib "
		       "fixture-pie fixture-z.debug && objcopy --strip-all "
		       "--add-gnu-debuglink=fixture-z.debug fixture-pie fixture-z && "
		       "readelf -SW fixture-z.debug | grep '[.]debug_info' | grep -q ' C '", dir))
		PK_SKIP("objcopy could not write compressed debug sections");
	char xdg[PATH_MAX + 16], cdir[PATH_MAX + 32], zbin[PATH_MAX + 16];
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	snprintf(cdir, sizeof(cdir), "%s/perfkit", xdg);
	snprintf(zbin, sizeof(zbin), "%s/fixture-z", dir);
	assert_int_equal(pk_test_sh("rm -rf '%s'", xdg), 0);
	/* the tool's PK_NO_CACHE is no business of the library: the opts decide */
	setenv("PK_NO_CACHE", "1", 1);
	PK_OPTS(pk_machine_opts, co, .cache_dir = cdir);
	uint64_t call = call_site(pie);
	assert_true(call != 0);
	for (int round = 0; round < 4; round++) {
		if (round == 2) /* writable by others: not trusted */
			assert_int_equal(pk_test_sh("chmod 666 '%s'/perfkit/debug/*.debug", xdg), 0);
		if (round == 3) /* another file's content under this build id */
			assert_int_equal(pk_test_sh("cp '%s/fixture-nopie' '%s'/perfkit/debug/*.debug",
						    dir, xdg), 0);
		struct pk_machine *m = machine_o(&co);
		struct pk_dso *d = pk_machine__dso(m, zbin);
		assert_leaf_line(d);
		const struct pk_inline_frame *fr;
		assert_int_equal(pk_dso__inlines(d, call, &fr), 2);
		assert_string_equal(fr[0].func, "pk_inl");
		assert_string_equal(fr[1].func, "pk_fixture_outer");
		pk_machine__free(m);
		/* one entry, ours alone, decompressed, with the debug file's build id */
		assert_int_equal(pk_test_sh("cd '%s'/perfkit/debug && test $(ls | wc -l) = 1 && "
					    "test \"$(stat -c %%a *.debug)\" = 600 && "
					    "! readelf -SW *.debug | grep '[.]debug_' | grep -q ' C ' && "
					    "readelf -n *.debug | grep -q \"$(readelf -n '%s/fixture-z.debug' "
					    "| awk '/Build ID/ { print $3 }')\"", xdg, dir), 0);
	}
	/* no cache directory: nothing written, even with the environment naming one */
	assert_int_equal(pk_test_sh("rm -rf '%s'", xdg), 0);
	unsetenv("PK_NO_CACHE");
	const char *old_xdg = getenv("XDG_CACHE_HOME");
	char *saved = old_xdg ? strdup(old_xdg) : NULL;
	setenv("XDG_CACHE_HOME", xdg, 1);
	struct pk_machine *m = machine(false);
	assert_leaf_line(pk_machine__dso(m, zbin));
	pk_machine__free(m);
	assert_int_equal(pk_test_sh("test ! -e '%s/perfkit'", xdg), 0);
	if (saved)
		setenv("XDG_CACHE_HOME", saved, 1);
	else
		unsetenv("XDG_CACHE_HOME");
	free(saved);
}

static void test_plt(void **state)
{
	(void)state;
	NEED_TOOLS();
	const char *bins[] = { pie, nopie };
	for (int i = 0; i < 2; i++) {
		uint64_t plt = sh_hex("objdump -d '%s' | awk '/<getpid@plt>:/ { print $1; exit }'",
				      bins[i]);
		if (!plt)
			PK_SKIP("the compiler emitted no PLT stub for getpid");
		struct pk_machine *m = machine(false);
		struct pk_dso *d = pk_machine__dso(m, bins[i]);
		uint64_t start;
		const char *s = pk_dso__symbol(d, plt + 4, &start, NULL);
		/* perf 6.1's answer (plt-perf.c): its own "getpid@plt", or the zero-sized
		 * symbol before the PLT that it stretched over it (_init), or none */
		if (s && !strcmp(s, "getpid@plt"))
			assert_int_equal(start, plt);
		else if (s)
			assert_true(start < plt && (!strcmp(s, "_init") || !strcmp(s, "_fini")));
		pk_machine__free(m);
	}
}

/* Feed the machine a process's /proc/PID/maps as MMAP2 records. */
static void feed_maps(struct pk_machine *m, pid_t pid)
{
	char path[64], line[PATH_MAX + 256];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &lo, &hi, perms, &off, &pos) < 4)
			continue;
		char *name = trim(line + pos);
		if (perms[2] != 'x' || !*name)
			continue;
		struct pk_mmap_event ev = { .pid = (uint32_t)pid, .tid = (uint32_t)pid, .addr = lo,
					    .len = hi - lo, .pgoff = off, .filename = name };
		assert_int_equal(pk_machine__mmap(m, &ev), 0);
	}
	fclose(f);
}

static void check_live(const char *bin)
{
	int in[2], out[2];
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(bin, bin, "wait", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	char buf[256] = "";
	FILE *f = fdopen(out[0], "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	unsigned long long outer, leaf, st;
	assert_int_equal(sscanf(buf, "%llx %llx %llx", &outer, &leaf, &st), 3);

	struct pk_machine *m = machine(true);
	assert_int_equal(pk_machine__comm(m, (uint32_t)pid, (uint32_t)pid, "fixture", true), 0);
	feed_maps(m, pid);
	close(in[1]);
	waitpid(pid, NULL, 0);
	fclose(f);

	struct pk_addr_loc loc;
	assert_int_equal(pk_machine__resolve(m, (uint32_t)pid, (uint32_t)pid, outer + 3,
					     PK_CPUMODE_USER, &loc), 0);
	assert_string_equal(loc.sym, "pk_fixture_outer");
	assert_int_equal(loc.sym_off, 3);
	assert_string_equal(loc.dso_name, bin);
	assert_int_equal(loc.dso_addr, nm_addr(bin, "pk_fixture_outer") + 3);
	assert_int_equal(pk_machine__resolve(m, (uint32_t)pid, (uint32_t)pid, st,
					     PK_CPUMODE_USER, &loc), 0);
	assert_string_equal(loc.sym, "pk_fixture_static");
	assert_int_equal(loc.sym_off, 0);
	assert_int_equal(pk_machine__resolve(m, (uint32_t)pid, (uint32_t)pid, leaf,
					     PK_CPUMODE_USER, &loc), 0);
	assert_string_equal(loc.sym, "pk_fixture_leaf");
	pk_machine__free(m);
}

static void test_load_bias_live(void **state)
{
	(void)state;
	NEED_TOOLS();
	check_live(pie);
	check_live(nopie);
}

/* libc in our own process, against dladdr() */
static void test_libc_self(void **state)
{
	(void)state;
	struct pk_machine *m = machine(true);
	feed_maps(m, getpid());
	void *fns[] = { (void *)getpid, (void *)strlen, (void *)qsort, (void *)fopen };
	for (size_t i = 0; i < 4; i++) {
		Dl_info info;
		assert_true(dladdr(fns[i], &info) != 0);
		if (!info.dli_saddr)
			continue;
		struct pk_addr_loc loc;
		uint64_t a = (uint64_t)(uintptr_t)info.dli_saddr;
		assert_int_equal(pk_machine__resolve(m, (uint32_t)getpid(), (uint32_t)getpid(),
						     a + 1, PK_CPUMODE_USER, &loc), 0);
		assert_int_equal(loc.sym_off, 1);
		/* aliases share an address and we keep one name: compare addresses */
		assert_int_equal(loc.sym_start, loc.dso_addr - 1);
		uint64_t b;
		assert_int_equal(pk_dso__symbol_addr(loc.dso, loc.sym, &b), 0);
		assert_int_equal(b, loc.sym_start);
		assert_int_equal(a - loc.map_start + loc.map_pgoff,
				 a - (uint64_t)(uintptr_t)info.dli_fbase);
	}
	pk_machine__free(m);
}

static void test_build_id(void **state)
{
	(void)state;
	NEED_TOOLS();
	uint8_t idp[20], idn[20];
	size_t lp = sizeof(idp), ln = sizeof(idn);
	assert_int_equal(pk_build_id__read(pie, idp, &lp), 0);
	assert_int_equal(pk_build_id__read(nopie, idn, &ln), 0);
	assert_true(lp == ln && memcmp(idp, idn, lp));

	/* matching id: no warning */
	pk_test_log_clear();
	struct pk_machine *m = machine(false);
	assert_int_equal(pk_machine__add_build_id(m, pie, idp, lp), 0);
	struct pk_dso *d = pk_machine__dso(m, pie);
	assert_true(pk_dso__load(d) > 0);
	const uint8_t *got;
	assert_int_equal(pk_dso__build_id(d, &got), lp);
	assert_memory_equal(got, idp, lp);
	assert_null(strstr(pk_test_log_text(), "mismatch"));
	pk_machine__free(m);

	/* the file at the recorded path changed (nopie copied over it): warn, no symbols */
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/changed", dir);
	assert_int_equal(pk_test_sh("cp '%s' '%s'", nopie, path), 0);
	pk_test_log_clear();
	m = machine(false);
	pk_machine__add_build_id(m, path, idp, lp);
	d = pk_machine__dso(m, path);
	assert_int_equal(pk_dso__load(d), -ESTALE);
	assert_null(pk_dso__symbol(d, nm_addr(nopie, "main"), NULL, NULL));
	assert_null(pk_dso__symbol(d, nm_addr(nopie, "main"), NULL, NULL));
	const char *log = pk_test_log_text();
	const char *w = strstr(log, "build-id mismatch");
	assert_non_null(w);
	assert_null(strstr(w + 1, "build-id mismatch")); /* once */
	pk_machine__free(m);

	/* ... unless a debug file with the recorded build-id exists */
	char dd[PATH_MAX + 32];
	snprintf(dd, sizeof(dd), "%s/debugroot", dir);
	char rest[64] = "";
	for (size_t i = 1; i < lp; i++)
		sprintf(rest + 2 * (i - 1), "%02x", idp[i]);
	assert_int_equal(pk_test_sh("mkdir -p '%s/.build-id/%02x' && cp '%s/fixture-stripped.debug' "
			    "'%s/.build-id/%02x/%s.debug'", dd, idp[0], dir, dd, idp[0], rest), 0);
	PK_OPTS(pk_machine_opts, o, .debug_dir = dd);
	m = pk_machine__new(&o);
	pk_machine__add_build_id(m, path, idp, lp);
	d = pk_machine__dso(m, path);
	assert_true(pk_dso__load(d) > 0);
	uint64_t start;
	const char *s = pk_dso__symbol(d, nm_addr(pie, "pk_fixture_static"), &start, NULL);
	assert_non_null(s);
	assert_string_equal(s, "pk_fixture_static");
	pk_machine__free(m);

	/* perf's build-id cache (<dir>/.build-id/xx/yyyy/elf) holds the recorded binary:
	 * used for a changed file and for a deleted one, silently */
	char bc[PATH_MAX + 32], gone[PATH_MAX + 32];
	snprintf(bc, sizeof(bc), "%s/buildid-cache", dir);
	snprintf(gone, sizeof(gone), "%s/deleted-binary", dir);
	assert_int_equal(pk_test_sh("mkdir -p '%s/.build-id/%02x/%s' && cp '%s' '%s/.build-id/%02x/%s/elf'",
			    bc, idp[0], rest, pie, bc, idp[0], rest), 0);
	const char *paths[] = { path, gone };
	for (int k = 0; k < 2; k++) {
		pk_test_log_clear();
		PK_OPTS(pk_machine_opts, oc, .buildid_dir = bc, .debug_dir = "/nonexistent");
		m = pk_machine__new(&oc);
		pk_machine__add_build_id(m, paths[k], idp, lp);
		d = pk_machine__dso(m, paths[k]);
		assert_true(pk_dso__load(d) > 0);
		s = pk_dso__symbol(d, nm_addr(pie, "pk_fixture_static"), NULL, NULL);
		assert_non_null(s);
		assert_string_equal(s, "pk_fixture_static");
		assert_null(strstr(pk_test_log_text(), "mismatch"));
		pk_machine__free(m);
	}
	/* a cache entry with another build-id is not used; "" turns the cache off */
	assert_int_equal(pk_test_sh("cp '%s' '%s/.build-id/%02x/%s/elf'", nopie, bc, idp[0], rest), 0);
	const char *dirs[] = { bc, "" };
	for (int k = 0; k < 2; k++) {
		PK_OPTS(pk_machine_opts, oc, .buildid_dir = dirs[k], .debug_dir = "/nonexistent");
		m = pk_machine__new(&oc);
		pk_machine__add_build_id(m, gone, idp, lp);
		d = pk_machine__dso(m, gone);
		assert_true(pk_dso__load(d) < 0);
		pk_machine__free(m);
	}
}

/* the finder callback of pk_machine_opts: counts its calls, answers with `answer` */
struct finder_state {
	int calls;
	const char *answer;
	uint8_t id[20];
	size_t len;
};

static int finder(void *ctx, const uint8_t *id, size_t len, char **path)
{
	struct finder_state *f = ctx;
	f->calls++;
	f->len = len < sizeof(f->id) ? len : sizeof(f->id);
	memcpy(f->id, id, f->len);
	if (!f->answer)
		return -ENOENT;
	int fd = open(f->answer, O_RDONLY);
	if (fd < 0)
		return -errno;
	*path = strdup(f->answer);
	return fd;
}

static void test_symfs_and_finder(void **state)
{
	(void)state;
	NEED_TOOLS();
	uint8_t id[20];
	size_t len = sizeof(id);
	assert_int_equal(pk_build_id__read(pie, id, &len), 0);
	char rest[64] = "";
	for (size_t i = 1; i < len; i++)
		sprintf(rest + 2 * (i - 1), "%02x", id[i]);
	uint64_t st = nm_addr(pie, "pk_fixture_static");

	/* --symfs: /recorded/path is read as <symfs>/recorded/path */
	char root[PATH_MAX + 32], rec[] = "/opt/pk-symfs-test/app";
	snprintf(root, sizeof(root), "%s/symfs-root", dir);
	assert_int_equal(pk_test_sh("mkdir -p '%s/opt/pk-symfs-test' && cp '%s' '%s%s'", root,
				    pie, root, rec), 0);
	PK_OPTS(pk_machine_opts, o, .symfs = root, .buildid_dir = "");
	struct pk_machine *m = machine_o(&o);
	struct pk_dso *d = pk_machine__dso(m, rec);
	assert_true(pk_dso__load(d) > 0);
	const char *s = pk_dso__symbol(d, st, NULL, NULL);
	assert_non_null(s);
	assert_string_equal(s, "pk_fixture_static");
	pk_machine__free(m);

	/* an extracted archive as the symfs: <symfs>/.build-id/xx/yyyy/elf for a path that
	 * is not there */
	char ar[PATH_MAX + 32];
	snprintf(ar, sizeof(ar), "%s/symfs-archive", dir);
	assert_int_equal(pk_test_sh("mkdir -p '%s/.build-id/%02x/%s' && cp '%s' "
				    "'%s/.build-id/%02x/%s/elf'", ar, id[0], rest, pie, ar, id[0],
				    rest), 0);
	PK_OPTS(pk_machine_opts, oa, .symfs = ar, .buildid_dir = "");
	m = machine_o(&oa);
	pk_machine__add_build_id(m, rec, id, len);
	d = pk_machine__dso(m, rec);
	assert_true(pk_dso__load(d) > 0);
	s = pk_dso__symbol(d, st, NULL, NULL);
	assert_non_null(s);
	assert_string_equal(s, "pk_fixture_static");
	pk_machine__free(m);

	/* a stripped binary without debuglink: the finder is asked once, with its
	 * build-id, and its answer gives the static symbols */
	struct finder_state f = { 0 };
	char dbg[PATH_MAX + 32];
	snprintf(dbg, sizeof(dbg), "%s/fixture-stripped.debug", dir);
	for (int k = 0; k < 2; k++) {
		f.calls = 0;
		f.answer = k ? dbg : NULL;
		PK_OPTS(pk_machine_opts, of, .debug_dir = "/nonexistent", .buildid_dir = "",
			.find_debuginfo = finder, .find_debuginfo_ctx = &f);
		m = machine_o(&of);
		d = pk_machine__dso(m, bare);
		pk_dso__load(d);
		s = pk_dso__symbol(d, st, NULL, NULL);
		const char *file;
		unsigned int line;
		pk_dso__srcline(d, nm_addr(pie, "pk_fixture_leaf"), &file, &line);
		assert_int_equal(f.calls, 1);
		assert_int_equal(f.len, len);
		assert_memory_equal(f.id, id, len);
		if (k) {
			assert_non_null(s);
			assert_string_equal(s, "pk_fixture_static");
		} else {
			assert_null(s);
		}
		pk_machine__free(m);
	}
	/* an answer with another build-id is not used */
	f.calls = 0;
	f.answer = nopie;
	PK_OPTS(pk_machine_opts, ow, .debug_dir = "/nonexistent", .buildid_dir = "",
		.find_debuginfo = finder, .find_debuginfo_ctx = &f);
	m = machine_o(&ow);
	d = pk_machine__dso(m, bare);
	pk_dso__load(d);
	assert_null(pk_dso__symbol(d, st, NULL, NULL));
	assert_int_equal(f.calls, 1);
	pk_machine__free(m);

	/* perf's build-id cache holds the debug file (<cache>/.build-id/xx/yyyy/debug):
	 * used before any finder */
	char bc[PATH_MAX + 32];
	snprintf(bc, sizeof(bc), "%s/debug-cache-bid", dir);
	assert_int_equal(pk_test_sh("mkdir -p '%s/.build-id/%02x/%s' && cp '%s' "
				    "'%s/.build-id/%02x/%s/debug'", bc, id[0], rest, dbg, bc, id[0],
				    rest), 0);
	f.calls = 0;
	f.answer = NULL;
	PK_OPTS(pk_machine_opts, oc, .debug_dir = "/nonexistent", .buildid_dir = bc,
		.find_debuginfo = finder, .find_debuginfo_ctx = &f);
	m = machine_o(&oc);
	d = pk_machine__dso(m, bare);
	pk_dso__load(d);
	s = pk_dso__symbol(d, st, NULL, NULL);
	assert_non_null(s);
	assert_string_equal(s, "pk_fixture_static");
	assert_int_equal(f.calls, 0);
	pk_machine__free(m);
}

static void test_kallsyms_fake(void **state)
{
	(void)state;
	char *tmp = pk_test_mkdtemp("ksyms");
	pk_test_write_file(tmp, "kallsyms",
			   "ffffffff81000000 T _text\n"
			   "ffffffff81000000 T _stext\n"
			   "ffffffff81001000 T do_one\n"
			   "ffffffff81001100 t do_two\n"
			   "ffffffff81002000 D some_data\n"
			   "ffffffff81003000 W weak_fn\n"
			   "ffffffffc0001000 t mod_fn\t[ext4]\n"
			   "garbage line\n"
			   "ffffffffc0002000 t\n");
	char ks[PATH_MAX];
	snprintf(ks, sizeof(ks), "%s/kallsyms", tmp);
	PK_OPTS(pk_machine_opts, o, .host = true, .kallsyms = ks);
	struct pk_machine *m = pk_machine__new(&o);
	struct pk_addr_loc loc;
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffff81001010ULL, PK_CPUMODE_KERNEL,
					     &loc), 0);
	assert_string_equal(loc.sym, "do_one");
	assert_int_equal(loc.sym_off, 0x10);
	assert_true(loc.kernel);
	pk_machine__resolve(m, 0, 0, 0xffffffff81001100ULL, PK_CPUMODE_KERNEL, &loc);
	assert_string_equal(loc.sym, "do_two");
	/* data symbols are not code: do_two extends to weak_fn */
	pk_machine__resolve(m, 0, 0, 0xffffffff81002010ULL, PK_CPUMODE_KERNEL, &loc);
	assert_string_equal(loc.sym, "do_two");
	pk_machine__resolve(m, 0, 0, 0xffffffffc0001004ULL, PK_CPUMODE_KERNEL, &loc);
	assert_string_equal(loc.sym, "mod_fn");
	pk_machine__free(m);

	/* the recording's _text is 2 MiB higher (another KASLR slide): symbols follow */
	m = pk_machine__new(&o);
	struct pk_mmap_event k = { .pid = (uint32_t)-1, .addr = 0xffffffff81200000ULL,
				   .len = 0x1000000, .pgoff = 0xffffffff81200000ULL,
				   .filename = "[kernel.kallsyms]_text", .kernel = true };
	pk_machine__mmap(m, &k);
	pk_machine__resolve(m, 0, 0, 0xffffffff81201010ULL, PK_CPUMODE_KERNEL, &loc);
	assert_non_null(loc.sym);
	assert_string_equal(loc.sym, "do_one");
	pk_machine__free(m);

	/* not from this machine: unresolved */
	PK_OPTS(pk_machine_opts, o2, .host = false, .kallsyms = ks);
	m = pk_machine__new(&o2);
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffff81001010ULL, PK_CPUMODE_KERNEL,
					     &loc), -ENODATA);
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");
	pk_machine__free(m);

	/* ... unless a build-id cache (an extracted perfkit archive) holds the kallsyms of
	 * the recorded kernel build-id: [kernel.kallsyms]/<id>/kallsyms via .build-id */
	static const uint8_t kid[20] = { 0xab, 0xcd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
					 14, 15, 16, 17, 18 };
	assert_int_equal(pk_test_sh("cd '%s' && mkdir -p 'bc/[kernel.kallsyms]/abcd01020304050607"
				    "08090a0b0c0d0e0f101112' bc/.build-id/ab && cp kallsyms "
				    "'bc/[kernel.kallsyms]/abcd0102030405060708090a0b0c0d0e0f101112/' && "
				    "ln -s '../../[kernel.kallsyms]/abcd0102030405060708090a0b0c0d0e0f"
				    "101112' bc/.build-id/ab/cd0102030405060708090a0b0c0d0e0f101112",
				    tmp), 0);
	char bc[PATH_MAX];
	snprintf(bc, sizeof(bc), "%s/bc", tmp);
	for (int w = 0; w < 3; w++) {
		/* w = 0: as the build-id cache; 1: as the symfs; 2: another build-id */
		PK_OPTS(pk_machine_opts, o4, .host = false, .buildid_dir = w == 1 ? "" : bc,
			.symfs = w == 1 ? bc : NULL);
		m = pk_machine__new(&o4);
		uint8_t id2[20];
		memcpy(id2, kid, sizeof(id2));
		id2[19] ^= w == 2;
		pk_machine__add_build_id(m, "[kernel.kallsyms]", id2, sizeof(id2));
		int rc = pk_machine__resolve(m, 0, 0, 0xffffffff81001010ULL, PK_CPUMODE_KERNEL,
					     &loc);
		if (w < 2) {
			assert_int_equal(rc, 0);
			assert_string_equal(loc.sym, "do_one");
		} else {
			assert_int_equal(rc, -ENODATA);
		}
		pk_machine__free(m);
	}

	/* kptr_restrict: all zeros means unavailable */
	pk_test_write_file(tmp, "zeros", "0000000000000000 T _text\n0000000000000000 T schedule\n");
	snprintf(ks, sizeof(ks), "%s/zeros", tmp);
	PK_OPTS(pk_machine_opts, o3, .host = true, .kallsyms = ks);
	m = pk_machine__new(&o3);
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0x10, PK_CPUMODE_KERNEL, &loc), -ENODATA);
	pk_machine__free(m);
	pk_test_rmtree(tmp);
	free(tmp);
}

static void test_kallsyms_real(void **state)
{
	(void)state;
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		PK_SKIP("no /proc/kallsyms");
	char line[512];
	unsigned long long a = 0;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		unsigned long long v;
		if (sscanf(line, "%llx %c %255s", &v, &type, name) == 3 &&
		    !strcmp(name, "schedule")) {
			a = v;
			break;
		}
	}
	fclose(f);
	if (!a)
		PK_SKIP("kallsyms hides addresses (not root or kptr_restrict)");
	struct pk_machine *m = machine(true);
	struct pk_addr_loc loc;
	assert_int_equal(pk_machine__resolve(m, 0, 0, a + 1, PK_CPUMODE_KERNEL, &loc), 0);
	assert_string_equal(loc.sym, "schedule");
	assert_int_equal(loc.sym_off, 1);
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");
	pk_machine__free(m);
}

static void test_jit_map(void **state)
{
	(void)state;
	char *tmp = pk_test_mkdtemp("jit");
	pk_test_write_file(tmp, "perf-4242.map",
			   "7f0000001000 100 LazyCompile:~foo bar.js:1\n"
			   "0x7f0000001200 0x80 Builtin:Baz\n"
			   "nonsense\n"
			   "7f0000002000 zz broken\n");
	PK_OPTS(pk_machine_opts, o, .jit_dir = tmp);
	struct pk_machine *m = pk_machine__new(&o);
	struct pk_mmap_event ev = { .pid = 4242, .tid = 4242, .addr = 0x7f0000000000ULL,
				    .len = 0x10000, .filename = "//anon" };
	assert_int_equal(pk_machine__mmap(m, &ev), 0);
	struct pk_addr_loc loc;
	assert_int_equal(pk_machine__resolve(m, 4242, 4242, 0x7f0000001010ULL, PK_CPUMODE_USER,
					     &loc), 0);
	assert_string_equal(loc.sym, "LazyCompile:~foo bar.js:1");
	assert_int_equal(loc.sym_off, 0x10);
	assert_non_null(strstr(loc.dso_name, "perf-4242.map"));
	pk_machine__resolve(m, 4242, 4242, 0x7f0000001210ULL, PK_CPUMODE_USER, &loc);
	assert_string_equal(loc.sym, "Builtin:Baz");
	/* a gap between JIT symbols */
	assert_int_equal(pk_machine__resolve(m, 4242, 4242, 0x7f0000001150ULL, PK_CPUMODE_USER,
					     &loc), -ENODATA);
	assert_string_equal(pk_dso__short_name(loc.dso), "[JIT] tid 4242");
	/* another process without a map file: unresolved, still JIT code of that process
	 * (perf's "[JIT] tid PID", whichever thread ran it) */
	ev.pid = ev.tid = 4343;
	pk_machine__mmap(m, &ev);
	assert_int_equal(pk_machine__resolve(m, 4343, 4344, 0x7f0000001010ULL, PK_CPUMODE_USER,
					     &loc), -ENODATA);
	assert_non_null(strstr(loc.dso_name, "perf-4343.map"));
	assert_string_equal(pk_dso__short_name(loc.dso), "[JIT] tid 4343");
	pk_machine__free(m);
	pk_test_rmtree(tmp);
	free(tmp);
}

static void test_vdso(void **state)
{
	(void)state;
	uint64_t lo = 0, hi = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &a, &b) == 2)
			lo = a, hi = b;
	}
	if (f)
		fclose(f);
	if (!lo)
		PK_SKIP("no vdso");
	for (int host = 1; host >= 0; host--) {
		struct pk_machine *m = machine(host);
		struct pk_mmap_event ev = { .pid = 9, .tid = 9, .addr = lo, .len = hi - lo,
					    .filename = "[vdso]" };
		pk_machine__mmap(m, &ev);
		int found = 0;
		for (uint64_t a = lo; a < hi; a += 4) {
			struct pk_addr_loc loc;
			if (pk_machine__resolve(m, 9, 9, a, PK_CPUMODE_USER, &loc) == 0) {
				found++;
				assert_string_equal(loc.dso_name, "[vdso]");
				assert_true(strstr(loc.sym, "time") || strstr(loc.sym, "getcpu") ||
					    strstr(loc.sym, "sgx") || strstr(loc.sym, "clock") ||
					    strstr(loc.sym, "vdso"));
			}
		}
		if (host)
			assert_true(found > 0);
		else
			assert_int_equal(found, 0);
		pk_machine__free(m);
	}

	/* another machine's vdso (or none visible, as under valgrind): perf's build-id
	 * cache keeps its image as <dir>/.build-id/xx/yyyy/vdso */
	char img[PATH_MAX + 32], bc[PATH_MAX + 32];
	snprintf(img, sizeof(img), "%s/vdso-image", dir);
	FILE *o = fopen(img, "w");
	assert_non_null(o);
	assert_int_equal(fwrite((const void *)(uintptr_t)lo, 1, hi - lo, o), hi - lo);
	fclose(o);
	uint8_t id[20];
	size_t il = sizeof(id);
	if (pk_build_id__read(img, id, &il) < 0 || il < 2)
		return; /* a vdso without a build-id note: nothing to look up */
	char rest[64] = "";
	for (size_t i = 1; i < il; i++)
		sprintf(rest + 2 * (i - 1), "%02x", id[i]);
	snprintf(bc, sizeof(bc), "%s/vdso-cache", dir);
	assert_int_equal(pk_test_sh("mkdir -p '%s/.build-id/%02x/%s' && cp '%s' '%s/.build-id/%02x/%s/vdso'",
			    bc, id[0], rest, img, bc, id[0], rest), 0);
	PK_OPTS(pk_machine_opts, oc, .host = false, .buildid_dir = bc);
	struct pk_machine *m = pk_machine__new(&oc);
	assert_non_null(m);
	assert_int_equal(pk_machine__add_build_id(m, "[vdso]", id, il), 0);
	struct pk_mmap_event ev = { .pid = 9, .tid = 9, .addr = lo, .len = hi - lo,
				    .filename = "[vdso]" };
	pk_machine__mmap(m, &ev);
	int found = 0;
	for (uint64_t a = lo; a < hi; a += 4) {
		struct pk_addr_loc loc;
		found += pk_machine__resolve(m, 9, 9, a, PK_CPUMODE_USER, &loc) == 0;
	}
	assert_true(found > 0);
	pk_machine__free(m);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_hostile(void **state)
{
	(void)state;
	char *tmp = pk_test_mkdtemp("hostile");
	char p[16][PATH_MAX];
	int n = 0;
	snprintf(p[n], PATH_MAX, "%s/fifo", tmp);
	assert_int_equal(mkfifo(p[n++], 0600), 0);
	snprintf(p[n++], PATH_MAX, "/dev/zero");
	snprintf(p[n++], PATH_MAX, "/dev/tty");
	snprintf(p[n++], PATH_MAX, "%s", tmp); /* a directory */
	snprintf(p[n], PATH_MAX, "%s/loop1", tmp);
	char l2[PATH_MAX];
	snprintf(l2, sizeof(l2), "%s/loop2", tmp);
	assert_int_equal(symlink(l2, p[n]), 0);
	assert_int_equal(symlink(p[n++], l2), 0);
	snprintf(p[n], PATH_MAX, "%s/sparse", tmp);
	int fd = open(p[n++], O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 10LL << 30), 0);
	close(fd);
	snprintf(p[n++], PATH_MAX, "%s/does-not-exist", tmp);
	if (have_tools) {
		/* a real ELF cut short, and one whose section headers point past its end */
		snprintf(p[n], PATH_MAX, "%s/truncated", tmp);
		assert_int_equal(pk_test_sh("head -c 3000 '%s' > '%s'", pie, p[n++]), 0);
		snprintf(p[n], PATH_MAX, "%s/badshoff", tmp);
		assert_int_equal(pk_test_sh("cp '%s' '%s' && printf '\\377\\377\\377\\177' | dd of='%s' "
				    "bs=1 seek=40 conv=notrunc status=none", pie, p[n], p[n]), 0);
		n++;
		snprintf(p[n], PATH_MAX, "%s/empty", tmp);
		pk_test_write_file(tmp, "empty", "");
		n++;
	}
	pk_test_log_clear();
	double t0 = now_s();
	struct pk_machine *m = machine(true);
	for (int i = 0; i < n; i++) {
		struct pk_mmap_event ev = { .pid = 77, .tid = 77, .addr = 0x10000ULL * (i + 1),
					    .len = 0x10000, .filename = p[i] };
		assert_int_equal(pk_machine__mmap(m, &ev), 0);
		for (int k = 0; k < 3; k++) {
			struct pk_addr_loc loc;
			assert_int_equal(pk_machine__resolve(m, 77, 77, 0x10000ULL * (i + 1) + 0x40,
							     PK_CPUMODE_USER, &loc), -ENODATA);
			assert_null(loc.sym);
			/* an executable /dev/zero map is anonymous memory: JIT code, as perf
			 * names it, of the perf-77.map that is not there */
			if (!strcmp(p[i], "/dev/zero"))
				assert_non_null(strstr(loc.dso_name, "/perf-77.map"));
			else
				assert_string_equal(loc.dso_name, p[i]);
			const char *file;
			unsigned int line;
			assert_true(pk_dso__srcline(loc.dso, loc.dso_addr, &file, &line) < 0);
			const struct pk_inline_frame *fr;
			assert_true(pk_dso__inlines(loc.dso, loc.dso_addr, &fr) < 0);
			struct pk_param ps[2];
			assert_true(pk_dso__params(loc.dso, loc.dso_addr, ps, 2) < 0);
		}
		assert_true(pk_dso__load(pk_machine__dso(m, p[i])) < 0);
	}
	/* and unwinding over such maps gives up cleanly */
	uint64_t regs[3] = { 0x10040, 0x7ffc0000, 0x7ffc0000 };
	uint8_t stack[64] = { 0 };
	struct pk_sample s;
	memset(&s, 0, sizeof(s));
	s.type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_TID;
	s.pid = s.tid = 77;
	s.regs_user.abi = PERF_SAMPLE_REGS_ABI_64;
	s.regs_user.mask = (1ULL << 6) | (1ULL << 7) | (1ULL << 8); /* BP SP IP */
	s.regs_user.nr = 3;
	regs[0] = 0x7ffc0000; /* BP */
	regs[1] = 0x7ffc0000; /* SP */
	regs[2] = 0x10040;    /* IP */
	s.regs_user.regs = regs;
	s.stack_user.size = sizeof(stack);
	s.stack_user.dyn_size = sizeof(stack);
	s.stack_user.data = stack;
	uint64_t ips[8];
	int k = pk_machine__unwind(m, &s, ips, 8);
	assert_true(k >= 1);
	assert_int_equal(ips[0], 0x10040);
	pk_machine__free(m);
	double dt = now_s() - t0;
	printf("hostile paths: %d DSOs rejected in %.3f s\n", n, dt);
	assert_true(dt < 5.0);
	/* exactly one warning per (warned) DSO */
	for (int i = 0; i < n; i++) {
		char needle[PATH_MAX + 8];
		snprintf(needle, sizeof(needle), "'%.4000s'", p[i]);
		const char *w = strstr(pk_test_log_text(), needle);
		if (w)
			assert_null(strstr(w + 1, needle));
	}
	pk_test_rmtree(tmp);
	free(tmp);
}

/* Timings (printed; asserted only loosely). */
static void test_bench(void **state)
{
	(void)state;
	struct pk_machine *m = machine(true);
	Dl_info info;
	/* getpid: not intercepted by the sanitizers, so dladdr names libc */
	assert_true(dladdr((void *)getpid, &info) != 0);
	struct pk_dso *libc = pk_machine__dso(m, info.dli_fname);
	int nsyms = pk_dso__load(libc);
	assert_true(nsyms > 100);
	uint64_t lo = UINT64_MAX, hi = 0, a;
	/* the span of libc's text-ish symbols, from a few well-known ones */
	const char *names[] = { "strlen", "printf", "malloc", "qsort", "fopen", "getpid", "exit" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (pk_dso__symbol_addr(libc, names[i], &a) == 0)
			lo = a < lo ? a : lo, hi = a > hi ? a : hi;
	assert_true(hi > lo);
	uint64_t x = 88172645463325252ULL, hits = 0;
	const int N = 1000000;
	double t0 = now_s();
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (pk_dso__symbol(libc, lo + x % (hi - lo), NULL, NULL))
			hits++;
	}
	double dt = now_s() - t0;
	printf("symbolize: %d random libc addresses, %.1f ns/lookup (%llu hits, %d symbols)\n", N,
	       dt * 1e9 / N, (unsigned long long)hits, nsyms);
	assert_true(hits > (uint64_t)(N / 2));

	/* srcline: distinct addresses in our own executable (built with -g) */
	char exe[PATH_MAX];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(el > 0);
	exe[el] = '\0';
	struct pk_dso *self = pk_machine__dso(m, exe);
	/* the span of libperfkit's code linked into this test (built with -g) */
	const char *lib_fns[] = { "pk_machine__new", "pk_dso__load", "pk_sample__decode",
				  "pk_record__decode", "pk_data_reader__open", "pk_strerror",
				  "pk_machine__callchain", "pk_data_writer__open" };
	lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < sizeof(lib_fns) / sizeof(lib_fns[0]); i++)
		if (pk_dso__symbol_addr(self, lib_fns[i], &a) == 0)
			lo = a < lo ? a : lo, hi = a > hi ? a : hi;
	if (hi <= lo) {
		pk_machine__free(m);
		PK_SKIP("no symbols in the test executable");
	}
	const char *file;
	unsigned int line;
	int ok = 0, M = 20000;
	/* load DWARF outside the timing; a build without -g (Release) has no line table */
	bool have_lines = pk_dso__srcline(self, lo, &file, &line) == 0;
	t0 = now_s();
	for (int i = 0; i < M; i++)
		ok += pk_dso__srcline(self, lo + (hi - lo) * (uint64_t)i / (uint64_t)M, &file,
				      &line) == 0;
	dt = now_s() - t0;
	printf("srcline: %d distinct addresses, %.0f lookups/s uncached (%d with a line)\n", M,
	       M / dt, ok);
	t0 = now_s();
	for (int r = 0; r < 10; r++)
		for (int i = 0; i < M; i++)
			pk_dso__srcline(self, lo + (hi - lo) * (uint64_t)i / (uint64_t)M, &file,
					&line);
	dt = now_s() - t0;
	printf("srcline: %.0f lookups/s cached\n", 10.0 * M / dt);
	const struct pk_inline_frame *fr;
	t0 = now_s();
	for (int i = 0; i < M; i++)
		pk_dso__inlines(self, lo + (hi - lo) * (uint64_t)i / (uint64_t)M + 1, &fr);
	dt = now_s() - t0;
	printf("inlines: %.0f lookups/s uncached\n", M / dt);
	if (have_lines)
		assert_true(ok > M / 2);
	pk_machine__free(m);
}

/* Mangled names in perf's display form (pk_symbol__demangle); the expected strings are
 * what perf 6.1 shows for these symbols (libiberty's demanglers without DMGL_PARAMS). */
static void test_demangle_table(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		/* Rust v0 (rustc 1.95's default) and legacy (the hash is dropped) */
		{ "_RNvCs6GmmlP4bgsG_1r8hot_loop", "r::hot_loop" },
		{ "_RNvMCs6GmmlP4bgsG_1rINtB2_4WrapmE4spinB2_", "<r::Wrap<u32>>::spin" },
		{ "_RNvNtCs1234_4core3fmt5write", "core::fmt::write" },
		{ "_RINvCs1234_1a1fjEB2_", "a::f::<usize>" },
		/* a non-ASCII identifier (Punycode), from rustc 1.95 */
		{ "_RNvCsjGcoDi6Dqao_2puu28gdel_stze_ber_lnge_qtbj67a0e",
		  "pu::g\xc3\xb6" "del_s\xc3\xa4" "tze_\xc3\xbc" "ber_l\xc3\xa4" "nge" },
		{ "_ZN1r8hot_loop17ha18a3a36c35e60f4E", "r::hot_loop" },
		{ "_ZN1r13Wrap$LT$T$GT$4spin17h0df54fcbf7e603c6E", "r::Wrap<T>::spin" },
		/* C++: no parameters, qualifiers, clone suffixes or template return types */
		{ "_ZNK2ns3BoxIlE4spinEl.isra.0", "ns::Box<long>::spin" },
		{ "_ZNK2ns3BoxIlE4spinEl", "ns::Box<long>::spin" },
		{ "_ZL4workli", "work" },
		{ "_Z1fv.cold", "f" },
		{ "_Z1fIiEvT_", "f<int>" },
		{ "_Z4spinISdEll", "spin<std::iostream>" },
		{ "_ZNKSs12find_last_ofEPKcmm", "std::string::find_last_of" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back" },
		{ "_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()" },
		{ "_ZN12_GLOBAL__N_13bazEv", "(anonymous namespace)::baz" },
		{ "_ZN3FooD1Ev", "Foo::~Foo" },
		{ "_ZN3FoocviEv", "Foo::operator int" },
		{ "_ZTV3Foo", "vtable for Foo" },
		{ "_ZThn8_N3Foo3barEv", "non-virtual thunk to Foo::bar()" },
		/* OCaml, decoded by perf itself (these are perf 6.1's report rows) */
		{ "camlStdlib__List__map_154", "Stdlib.List.map_154" },
		{ "camlFoo$3ebar__baz_12", "Foo>bar.baz_12" },
		{ "camlA__$5f__x", "A._.x" },
		{ "camlX$3E__a", "X>.a" },
		{ "camlX$zz__b", "X$zz.b" },
		{ "camlX___c", "X._c" },
		{ "camlX__d$4", "X.d$4" },
		{ "camlX$00y__e", "X" },
		{ "camlX____f", "X..f" },
		{ "camlX$c3$a9__g", "X\xc3\xa9.g" },
		/* a symbol-versioned .symtab alias: the version goes, as with perf */
		{ "_ZNSt6vectorIiSaIiEED2Ev@@GLIBCXX_3.4", "std::vector<int, std::allocator<int> >::~vector" },
	};
	char buf[512];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = pk_symbol__demangle(cases[i][0], buf, sizeof(buf));
		if (n < 0 || strcmp(buf, cases[i][1]) || (size_t)n != strlen(buf))
			fail_msg("'%s' -> %d '%s', expected '%s'", cases[i][0], n, buf, cases[i][1]);
	}
	/* not mangled, or garbage after a mangling prefix: -EINVAL, shown as it is */
	static const char *const plain[] = { "main", "_start", "__libc_start_main", "_Z", "_R",
		"_Zgarbage", "_Rgarbage", "_RNv", "_ZN3foo", "_ZN1r8hot_loop17hXYZE", "", "_",
		"memcpy@plt", "_ZN\xff\xfe", "caml", "camlfoo__bar", "caml_alloc", "caml$41" };
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		buf[0] = 'x';
		int n = pk_symbol__demangle(plain[i], buf, sizeof(buf));
		if (n != -EINVAL || buf[0] != '\0')
			fail_msg("'%s' -> %d '%s', expected -EINVAL", plain[i], n, buf);
	}
	assert_int_equal(pk_symbol__demangle(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(pk_symbol__demangle("_Z1fv", NULL, 8), -EINVAL);
	assert_int_equal(pk_symbol__demangle("_Z1fv", buf, 0), -EINVAL);
	/* the result must fit with its NUL */
	assert_int_equal(pk_symbol__demangle("_ZNK2ns3BoxIlE4spinEl", buf, 19), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(pk_symbol__demangle("_ZNK2ns3BoxIlE4spinEl", buf, 20), 19);
	assert_string_equal(buf, "ns::Box<long>::spin");
	assert_int_equal(pk_symbol__demangle("camlStdlib__List__map_154", buf, 19), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(pk_symbol__demangle("camlStdlib__List__map_154", buf, 20), 19);
	assert_string_equal(buf, "Stdlib.List.map_154");
}

/* Hostile lengths: a name longer than PK_DEMANGLE_MAX stays mangled (the demangler's
 * stack use grows with it); one just within it is decoded; a short name whose template
 * substitutions expand exponentially stops at the end of the buffer instead of printing
 * ~10^12 bytes (hours without the stop). */
static void test_demangle_bounds(void **state)
{
	(void)state;
	static char name[PK_DEMANGLE_MAX + 64], buf[4 * PK_DEMANGLE_MAX];
	/* a Rust v0 name of exactly PK_DEMANGLE_MAX bytes, "_RNvCs1234_1a<k>bbb...b": decoded
	 * to "a::bbb...b"; one byte more: left alone */
	size_t n = 0;
	int r;
	for (int extra = 0; extra < 2; extra++) {
		size_t last = PK_DEMANGLE_MAX - 13 - 4 + (size_t)extra;
		n = (size_t)snprintf(name, sizeof(name), "_RNvCs1234_1a%zu", last);
		memset(name + n, 'b', last);
		name[n + last] = '\0';
		assert_int_equal(strlen(name), PK_DEMANGLE_MAX + (size_t)extra);
		buf[0] = 'x';
		r = pk_symbol__demangle(name, buf, sizeof(buf));
		if (extra) {
			assert_int_equal(r, -ENAMETOOLONG);
			assert_string_equal(buf, "");
		} else {
			assert_int_equal(r, 3 + (int)last);
			assert_int_equal(strlen(buf), (size_t)r);
			assert_int_equal(memcmp(buf, "a::bbb", 6), 0);
		}
	}
	/* C++ names over 1024 bytes stay mangled, as in perf: libiberty's demangler refuses
	 * them (its parse arrays live on the stack) */
	n = (size_t)snprintf(name, sizeof(name), "_ZN");
	for (int k = 0; k < 10; k++) {
		n += (size_t)snprintf(name + n, sizeof(name) - n, "100");
		memset(name + n, 'a', 100);
		n += 100;
	}
	memcpy(name + n, "1bE", 4);
	assert_int_equal(pk_symbol__demangle(name, buf, sizeof(buf)), -EINVAL);
	name[3 + 9 * 103] = '1';
	memcpy(name + 3 + 9 * 103 + 1, "bE", 3);
	assert_true(pk_symbol__demangle(name, buf, sizeof(buf)) > 900);
	/* f<P<A,A>, P<P<A,A>,P<A,A>>, ...>: each step refers to the previous type twice */
	n = (size_t)snprintf(name, sizeof(name), "_Z1fI1PI1AS1_E");
	for (int k = 0; k < 70; k++) {
		char id[8];
		int v = 1 + k; /* substitution S<v-1 in base 36>_ is candidate v */
		const char *dg = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
		if (v < 36)
			snprintf(id, sizeof(id), "%c", dg[v]);
		else
			snprintf(id, sizeof(id), "%c%c", dg[v / 36], dg[v % 36]);
		n += (size_t)snprintf(name + n, sizeof(name) - n, "S0_IS%s_S%s_E", id, id);
	}
	snprintf(name + n, sizeof(name) - n, "EvT_");
	double t0 = now_s();
	assert_int_equal(pk_symbol__demangle(name, buf, 4096), -ENOSPC);
	assert_true(now_s() - t0 < 1.0);
	/* Rust v0: a generic function whose type arguments are tuples of two back-references
	 * to the previous argument (2^40 copies of "(i32, i32)" in the last) */
	n = (size_t)snprintf(name, sizeof(name), "_RINvC1a1f");
	size_t prev = n - 2; /* back-references count from after "_R" */
	n += (size_t)snprintf(name + n, sizeof(name) - n, "TllE");
	for (int k = 1; k < 40; k++) {
		size_t here = n - 2;
		char ref[16];
		const char *d62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
		size_t v = prev - 1; /* base-62 digits of prev - 1, then '_' */
		int rl = 0;
		char tmp[16];
		do {
			tmp[rl++] = d62[v % 62];
			v /= 62;
		} while (v);
		for (int i = 0; i < rl; i++)
			ref[i] = tmp[rl - 1 - i];
		ref[rl] = '\0';
		n += (size_t)snprintf(name + n, sizeof(name) - n, "TB%s_B%s_E", ref, ref);
		prev = here;
	}
	snprintf(name + n, sizeof(name) - n, "E");
	t0 = now_s();
	assert_int_equal(pk_symbol__demangle(name, buf, 4096), -ENOSPC);
	assert_true(now_s() - t0 < 1.0);
	assert_int_equal(pk_symbol__demangle(name, buf, 16), -ENOSPC);
	/* the same name within a buffer that fits after a few steps: decoded */
	snprintf(name, sizeof(name), "_Z1fI1PI1AS1_ES0_IS2_S2_EEvT_");
	assert_true(pk_symbol__demangle(name, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "f<P<A, A>, P<P<A, A>, P<A, A> > >");
}

/* A result that does not fit, cut in the middle of a Punycode identifier (which the
 * Rust demangler decodes into a heap buffer): nothing leaks. */
static void test_demangle_no_leak(void **state)
{
	(void)state;
	static const char v0[] = "_RNvCsjGcoDi6Dqao_2puu28gdel_stze_ber_lnge_qtbj67a0e";
	char buf[64];
	int full = pk_symbol__demangle(v0, buf, sizeof(buf));
	assert_true(full > 8);
	struct mallinfo2 a = mallinfo2();
	for (int k = 0; k < 200; k++)
		for (int l = 1; l <= full; l++)
			assert_int_equal(pk_symbol__demangle(v0, buf, (size_t)l), -ENOSPC);
	struct mallinfo2 b = mallinfo2();
	/* a leak here is ~128 bytes per call: 200 x 30 calls */
	assert_true(b.uordblks < a.uordblks + 4096);
	assert_int_equal(pk_symbol__demangle(v0, buf, (size_t)full + 1), full);
}

/* Symbol tables hold perf's names: a C++ program with a template method cloned by GCC
 * (".isra"/".constprop") resolves to "ns::Box<long>::spin", not the full signature. */
static void test_demangled_symbols(void **state)
{
	(void)state;
	if (system("command -v g++ >/dev/null") != 0)
		skip();
	char tdir[] = "/tmp/pk-demangle-XXXXXX";
	assert_non_null(mkdtemp(tdir));
	char cmd[1024], bin[512];
	snprintf(bin, sizeof(bin), "%s/cpp", tdir);
	snprintf(cmd, sizeof(cmd),
		 "printf '%%s\\n' 'namespace ns { template <typename T> struct Box { T v;"
		 " __attribute__((noinline)) T spin(T n) const { T s = v;"
		 " for (T i = 0; i < n; i++) s = s * 31 + (i ^ (s >> 7)); return s; } }; }'"
		 " 'int main(int c, char **) { ns::Box<long> b{3}; return (int)b.spin(c * 1000); }'"
		 " > %s/c.cc && g++ -O2 -o %s %s/c.cc", tdir, bin, tdir);
	int rc = system(cmd);
	if (rc != 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tdir);
		(void)!system(cmd);
		skip();
	}
	PK_OPTS(pk_machine_opts, mo);
	struct pk_machine *m = pk_machine__new(&mo);
	assert_non_null(m);
	struct pk_dso *d = pk_machine__dso(m, bin);
	assert_true(pk_dso__load(d) > 0);
	uint64_t a = 0, start = 0;
	assert_int_equal(pk_dso__symbol_addr(d, "ns::Box<long>::spin", &a), 0);
	const char *s = pk_dso__symbol(d, a, &start, NULL);
	assert_non_null(s);
	assert_string_equal(s, "ns::Box<long>::spin");
	assert_int_equal(start, a);
	assert_int_equal(pk_dso__symbol_addr(d, "main", &a), 0);
	pk_machine__free(m);
	/* no_demangle: the table keeps the mangled name */
	PK_OPTS(pk_machine_opts, mo2, .no_demangle = true);
	m = pk_machine__new(&mo2);
	assert_non_null(m);
	d = pk_machine__dso(m, bin);
	assert_true(pk_dso__load(d) > 0);
	assert_int_equal(pk_dso__symbol_addr(d, "ns::Box<long>::spin", &a), -ENOENT);
	pk_machine__free(m);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tdir);
	(void)!system(cmd);
}

/* When a DWARF function name is the ELF symbol itself (no "(inlined)" line), as perf */
static void test_same_function(void **state)
{
	(void)state;
	assert_true(pk_symbol__same_function("main", "main"));
	assert_true(pk_symbol__same_function("clock_nanosleep", "clock_nanosleep@GLIBC_2.2.5"));
	assert_true(pk_symbol__same_function("__clone3", "clone3"));
	/* a GCC clone and a glibc internal alias are other functions to perf */
	assert_false(pk_symbol__same_function("msort", "msort.constprop.0"));
	assert_false(pk_symbol__same_function("__GI___fstatat64", "fstatat64"));
	assert_false(pk_symbol__same_function("now_ms", "run"));
	assert_false(pk_symbol__same_function("run", "run_all"));
	assert_false(pk_symbol__same_function(NULL, "run"));
	assert_false(pk_symbol__same_function("run", NULL));
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbols_pie),
		cmocka_unit_test(test_symbols_nopie),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_debug_cache),
		cmocka_unit_test(test_srcline_inline),
		cmocka_unit_test(test_scope_trees),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_load_bias_live),
		cmocka_unit_test(test_libc_self),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_symfs_and_finder),
		cmocka_unit_test(test_kallsyms_fake),
		cmocka_unit_test(test_kallsyms_real),
		cmocka_unit_test(test_jit_map),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_bench),
		cmocka_unit_test(test_demangle_table),
		cmocka_unit_test(test_demangle_bounds),
		cmocka_unit_test(test_demangle_no_leak),
		cmocka_unit_test(test_demangled_symbols),
		cmocka_unit_test(test_same_function),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
