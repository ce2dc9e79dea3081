/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol: DWARF unwinding of a real `perf record --call-graph dwarf` recording of a
 * program with a known stack shape (main -> pk_a -> pk_b -> pk_c spinning), read with the
 * perf.data reader and decoded with record.h. Also the frame-pointer fallback on a build
 * without CFI. Skips if perf or cc is absent or perf cannot record here.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static const char fixture_src[] =
	"#include <stdlib.h>\n"
	"volatile unsigned long pk_spin;\n"
	"__attribute__((noinline)) void pk_c(unsigned long n)\n"
	"{ for (unsigned long i = 0; i < n; i++) pk_spin += i; }\n"
	"__attribute__((noinline)) void pk_b(unsigned long n) { pk_c(n); pk_spin++; }\n"
	"__attribute__((noinline)) void pk_a(unsigned long n) { pk_b(n); pk_spin++; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tunsigned long n = argc > 1 ? strtoul(argv[1], 0, 0) : 100000000UL;\n"
	"\tpk_a(n);\n"
	"\tpk_spin++;\n"
	"\treturn 0;\n"
	"}\n";

/* Frames that need more than register + offset rules: a signal handler's frame above
 * the kernel's sigreturn trampoline (DWARF expressions), PLT calls, and libc's qsort
 * calling back into the program. */
static const char mixed_src[] =
	"#include <signal.h>\n"
	"#include <stdlib.h>\n"
	"#include <sys/time.h>\n"
	"volatile unsigned long pk_spin;\n"
	"static int pk_cmp(const void *a, const void *b)\n"
	"{\n"
	"\tfor (int i = 0; i < 50; i++) pk_spin++;\n"
	"\tint x = *(const int *)a, y = *(const int *)b;\n"
	"\treturn (x > y) - (x < y);\n"
	"}\n"
	"__attribute__((noinline)) static void pk_sort(int depth)\n"
	"{\n"
	"\tif (depth) { pk_sort(depth - 1); pk_spin++; return; }\n"
	"\tint v[512];\n"
	"\tfor (int i = 0; i < 512; i++) v[i] = rand();\n"
	"\tqsort(v, 512, sizeof(int), pk_cmp);\n"
	"}\n"
	"static void pk_handler(int sig) { (void)sig; for (int i = 0; i < 200000; i++) pk_spin++; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tunsigned long n = argc > 1 ? strtoul(argv[1], 0, 0) : 2000;\n"
	"\tsignal(SIGPROF, pk_handler);\n"
	"\tstruct itimerval it = { { 0, 2000 }, { 0, 2000 } };\n"
	"\tsetitimer(ITIMER_PROF, &it, 0);\n"
	"\tfor (unsigned long i = 0; i < n; i++) pk_sort((int)(i % 8));\n"
	"\treturn 0;\n"
	"}\n";

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct result {
	int samples;        /* samples of the fixture whose leaf is pk_c */
	int complete;       /* ... with pk_c, pk_b, pk_a, main in order */
	int total;          /* all samples of the fixture */
	double unwind_s;    /* time in pk_machine__callchain */
	double first_s;     /* ... of the first sample (loads ELF files and CFI) */
	int unwound;
};

static void analyse(const char *data, const char *comm, struct result *res)
{
	memset(res, 0, sizeof(*res));
	struct pk_data_reader *r = pk_data_reader__open(data, NULL);
	assert_non_null(r);
	PK_OPTS(pk_machine_opts, o, .host = true);
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	struct pk_data_event ev;
	int err;
	static struct pk_chain_entry chain[256];
	while ((err = pk_data_reader__next(r, &ev)) > 0) {
		if (!ev.attr || !ev.attr->layout_ok || ev.hdr->type >= 64)
			continue;
		struct pk_record rec;
		const char *bad;
		if (pk_record__decode(&ev.attr->layout, ev.hdr, &rec, &bad) != 0)
			continue;
		if (rec.type != PERF_RECORD_SAMPLE) {
			pk_machine__process(m, &rec);
			continue;
		}
		const struct pk_sample *s = &rec.sample;
		const char *c = pk_machine__comm_of(m, s->tid);
		if (!c || strcmp(c, comm))
			continue;
		res->total++;
		double t0 = now_s();
		int n = pk_machine__callchain(m, s, chain, 256);
		double dt = now_s() - t0;
		if (!res->unwound)
			res->first_s = dt;
		res->unwind_s += dt;
		res->unwound++;
		const char *names[256];
		int nu = 0;
		for (int i = 0; i < n; i++) {
			struct pk_addr_loc loc;
			if (chain[i].cpumode != PK_CPUMODE_USER)
				continue;
			pk_machine__resolve(m, s->pid, s->tid, chain[i].ip, chain[i].cpumode, &loc);
			names[nu++] = loc.sym ? loc.sym : "?";
		}
		if (!nu || strcmp(names[0], "pk_c"))
			continue;
		res->samples++;
		if (nu >= 4 && !strcmp(names[1], "pk_b") && !strcmp(names[2], "pk_a") &&
		    !strcmp(names[3], "main"))
			res->complete++;
		else if (res->samples - res->complete <= 3) {
			printf("incomplete chain:");
			for (int i = 0; i < nu; i++)
				printf(" %s", names[i]);
			printf("\n");
		}
	}
	assert_int_equal(err, 0);
	pk_data_reader__free(r);

	/* steady state: unwind every sample of the file again with everything cached */
	r = pk_data_reader__open(data, NULL);
	assert_non_null(r);
	int again = 0;
	double t_again = 0;
	while ((err = pk_data_reader__next(r, &ev)) > 0) {
		struct pk_record rec;
		const char *bad;
		if (!ev.attr || !ev.attr->layout_ok || ev.hdr->type != PERF_RECORD_SAMPLE ||
		    pk_record__decode(&ev.attr->layout, ev.hdr, &rec, &bad) != 0)
			continue;
		double t0 = now_s();
		pk_machine__callchain(m, &rec.sample, chain, 256);
		t_again += now_s() - t0;
		again++;
	}
	if (again)
		printf("%s: cached pass: %.2f us/sample over %d samples\n", comm,
		       t_again * 1e6 / again, again);
	uint64_t us, uf, ufb;
	pk_machine__unwind_stats(m, &us, &uf, &ufb);
	printf("%s: %d samples, %d in pk_c, %d complete; unwind %.1f us/sample after the "
	       "first (%.1f ms) (%llu unwound, %.1f frames avg, %llu fp fallbacks)\n",
	       comm, res->total, res->samples, res->complete,
	       res->unwound > 1 ? (res->unwind_s - res->first_s) * 1e6 / (res->unwound - 1) : 0.0,
	       res->first_s * 1e3, (unsigned long long)us,
	       us ? (double)uf / (double)us : 0.0, (unsigned long long)ufb);
	pk_machine__free(m);
	pk_data_reader__free(r);
}

static bool prepare(void)
{
	if (pk_test_sh("command -v perf cc objcopy >/dev/null 2>&1"))
		return false;
	FILE *f = fopen("uwfix.c", "w");
	assert_non_null(f);
	fputs(fixture_src, f);
	fclose(f);
	return true;
}

/* Record ./prog (fixture built beforehand) with DWARF call graphs into `data` and analyse
 * it; skips the test when perf cannot record here or too few samples land in pk_c. */
static void record_and_analyse(const char *prog, const char *data, struct result *res)
{
	if (pk_test_sh("perf record -q -e cpu-clock -F 2000 --call-graph dwarf -o %s "
		       "./%s 150000000 >/dev/null 2>perf.err", data, prog))
		PK_SKIP("perf record failed here (see perf.err)");
	analyse(data, prog, res);
	if (res->samples < 20)
		PK_SKIP("too few samples (%d) to judge", res->samples);
}

static void test_dwarf_unwind(void **state)
{
	(void)state;
	if (!prepare())
		PK_SKIP("perf or cc not installed");
	assert_int_equal(pk_test_sh("cc -g -O1 -fomit-frame-pointer -o uwfix uwfix.c"), 0);
	struct result res;
	record_and_analyse("uwfix", "uw.data", &res);
	/* most samples in pk_c unwind all the way to main */
	assert_true(res.complete * 10 >= res.samples * 9);
}

static void test_fp_fallback(void **state)
{
	(void)state;
	if (!prepare())
		PK_SKIP("perf or cc not installed");
	/* no CFI at all: only the frame-pointer chain can get past pk_c (-O0: gcc 12 drops
	 * the frame of leaf functions at -O1 even with -fno-omit-frame-pointer) */
	assert_int_equal(pk_test_sh("cc -g0 -O0 -fno-omit-frame-pointer -fno-asynchronous-unwind-tables "
			    "-fno-unwind-tables -o uwfp.tmp uwfix.c && objcopy "
			    "--remove-section=.eh_frame --remove-section=.eh_frame_hdr uwfp.tmp "
			    "uwfp"), 0);
	struct result res;
	record_and_analyse("uwfp", "fp.data", &res);
	assert_true(res.complete * 10 >= res.samples * 8);
}

static void test_debug_frame_in_debug_file(void **state)
{
	(void)state;
	if (!prepare())
		PK_SKIP("perf or cc not installed");
	/* the program's CFI only as .debug_frame in a separate debug file (found through
	 * .gnu_debuglink): the unwinder must still load that debug file; no frame pointers */
	assert_int_equal(pk_test_sh("cc -g -O1 -fomit-frame-pointer -fno-asynchronous-unwind-tables "
			    "-fno-unwind-tables -o uwdf uwfix.c && "
			    "objcopy --only-keep-debug uwdf uwdf.debug && "
			    "objcopy --strip-debug --add-gnu-debuglink=uwdf.debug uwdf"), 0);
	if (pk_test_sh("readelf -SW uwdf.debug 2>/dev/null | grep -q ' .debug_frame '") ||
	    !pk_test_sh("readelf -SW uwdf 2>/dev/null | grep -q ' .debug_frame '"))
		PK_SKIP("this compiler did not put .debug_frame in the debug file only");
	struct result res;
	record_and_analyse("uwdf", "df.data", &res);
	assert_true(res.complete * 10 >= res.samples * 9);
}

/*
 * The per-address CFI rows cached per process must give exactly libdwfl's walk: every
 * sample of a recording unwound by two machines, one of them created with
 * unwind_libdwfl_only (libdwfl interprets every frame), chains compared entry by entry.
 */
static void test_cached_rows_match_libdwfl(void **state)
{
	(void)state;
	if (pk_test_sh("command -v perf cc >/dev/null 2>&1"))
		PK_SKIP("perf or cc not installed");
	FILE *f = fopen("uwmix.c", "w");
	assert_non_null(f);
	fputs(mixed_src, f);
	fclose(f);
	assert_int_equal(pk_test_sh("cc -g -O2 -o uwmix uwmix.c"), 0);
	if (pk_test_sh("perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o mix.data "
		       "./uwmix 2500 >/dev/null 2>perf.err"))
		PK_SKIP("perf record failed here (see perf.err)");
	struct pk_data_reader *r = pk_data_reader__open("mix.data", NULL);
	assert_non_null(r);
	PK_OPTS(pk_machine_opts, o, .host = true);
	PK_OPTS(pk_machine_opts, os, .host = true, .unwind_libdwfl_only = true);
	struct pk_machine *fast = pk_machine__new(&o);
	struct pk_machine *slow = pk_machine__new(&os);
	assert_non_null(fast);
	assert_non_null(slow);
	static struct pk_chain_entry a[256], b[256];
	struct pk_data_event ev;
	int err, samples = 0, in_cmp = 0, in_handler = 0;
	while ((err = pk_data_reader__next(r, &ev)) > 0) {
		struct pk_record rec;
		const char *bad;
		if (!ev.attr || !ev.attr->layout_ok || ev.hdr->type >= 64 ||
		    pk_record__decode(&ev.attr->layout, ev.hdr, &rec, &bad) != 0)
			continue;
		if (rec.type != PERF_RECORD_SAMPLE) {
			pk_machine__process(fast, &rec);
			pk_machine__process(slow, &rec);
			continue;
		}
		const struct pk_sample *s = &rec.sample;
		int na = pk_machine__callchain(fast, s, a, 256);
		int nb = pk_machine__callchain(slow, s, b, 256);
		assert_int_equal(na, nb);
		for (int i = 0; i < na; i++) {
			if (a[i].ip != b[i].ip || a[i].cpumode != b[i].cpumode ||
			    a[i].flags != b[i].flags)
				fail_msg("sample %d (time %llu), frame %d: %#llx vs libdwfl's %#llx",
					 samples, (unsigned long long)s->time, i,
					 (unsigned long long)a[i].ip, (unsigned long long)b[i].ip);
			struct pk_addr_loc loc;
			if (a[i].cpumode != PK_CPUMODE_USER ||
			    pk_machine__resolve(fast, s->pid, s->tid, a[i].ip, a[i].cpumode, &loc) ||
			    !loc.sym)
				continue;
			/* the comparison function called from inside libc's qsort; the handler
			 * with frames of the interrupted code above it */
			if (!strcmp(loc.sym, "pk_cmp") && i + 1 < na)
				in_cmp++;
			if (!strcmp(loc.sym, "pk_handler") && i + 2 < na)
				in_handler++;
		}
		samples++;
	}
	assert_int_equal(err, 0);
	PK_OPTS(pk_unwind_stats, fs);
	PK_OPTS(pk_unwind_stats, ss);
	assert_int_equal(pk_machine__get_unwind_stats(fast, &fs), 0);
	assert_int_equal(pk_machine__get_unwind_stats(slow, &ss), 0);
	printf("%d samples (%d in pk_cmp, %d in pk_handler); cached rows: %llu rows, %llu of "
	       "%llu samples through libdwfl; PERFKIT_UNWIND=libdwfl: %llu of %llu\n",
	       samples, in_cmp, in_handler, (unsigned long long)fs.cfi_rows,
	       (unsigned long long)fs.libdwfl_samples, (unsigned long long)fs.samples,
	       (unsigned long long)ss.libdwfl_samples, (unsigned long long)ss.samples);
	if (samples < 200)
		PK_SKIP("too few samples (%d) to judge", samples);
	assert_true(in_cmp > 0);
	/* both walks really ran: the cached one for most samples, libdwfl for all of the
	 * other machine's */
	assert_true(fs.cfi_rows > 0 && fs.libdwfl_samples * 2 < fs.samples);
	assert_true(ss.cfi_rows == 0 && ss.libdwfl_samples * 10 >= ss.samples * 9);
	assert_int_equal(fs.frames, ss.frames);
	pk_machine__free(fast);
	pk_machine__free(slow);
	pk_data_reader__free(r);
}

/* perf's max-stack rule: recorded (kernel, frame-pointer) and unwound entries each cut at
 * max_stack, in place, order kept */
static void test_callchain_cut(void **state)
{
	(void)state;
	struct pk_chain_entry c[12];
	for (int i = 0; i < 12; i++)
		c[i] = (struct pk_chain_entry){ 0x1000u + (uint64_t)i,
						i < 4 ? PK_CPUMODE_KERNEL : PK_CPUMODE_USER,
						i < 4 ? 0 : PK_CHAIN_UNWOUND };
	assert_int_equal(pk_callchain__cut(c, 12, 127), 12);
	assert_int_equal(pk_callchain__cut(c, 12, 3), 6);
	uint64_t want[6] = { 0x1000, 0x1001, 0x1002, 0x1004, 0x1005, 0x1006 };
	for (int i = 0; i < 6; i++)
		assert_int_equal(c[i].ip, want[i]);
	assert_int_equal(c[3].flags, PK_CHAIN_UNWOUND);
	assert_int_equal(pk_callchain__cut(c, 6, 0), 0);
	/* a frame-pointer chain: kernel and user frames count together */
	for (int i = 0; i < 12; i++)
		c[i] = (struct pk_chain_entry){ 0x1000u + (uint64_t)i,
						i < 4 ? PK_CPUMODE_KERNEL : PK_CPUMODE_USER, 0 };
	assert_int_equal(pk_callchain__cut(c, 12, 5), 5);
	assert_int_equal(c[4].ip, 0x1004);
	assert_int_equal(pk_callchain__cut(NULL, 0, 5), 0);
	assert_int_equal(pk_callchain__cut(NULL, 1, 5), -EINVAL);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dwarf_unwind),
		cmocka_unit_test(test_fp_fallback),
		cmocka_unit_test(test_debug_frame_in_debug_file),
		cmocka_unit_test(test_cached_rows_match_libdwfl),
		cmocka_unit_test(test_callchain_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
