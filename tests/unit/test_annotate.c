/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate: disassembly of known x86-64 and AArch64 byte sequences (mnemonics,
 * direct branch targets, indirect ones left alone, undecodable bytes), and of a function
 * of this test binary read from its ELF file through pk_dso__read, where the call to its
 * callee must be named after it; and the counts of pk_annotate__load over a written file
 * whose samples alternate between one function and more distinct unmapped addresses than
 * the memo of resolved addresses has slots, over one whose periods pass 32 bits, and
 * over one whose maps generations change between rounds over the same addresses.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "testutil.h"
#include "annotate/order.h"

#define MAX_INSNS 64

struct seen {
	size_t n;
	uint64_t addr[MAX_INSNS];
	char mnem[MAX_INSNS][32];
	char ops[MAX_INSNS][160];
	bool has_target[MAX_INSNS];
	uint64_t target[MAX_INSNS];
	char target_sym[MAX_INSNS][64];
	uint64_t target_off[MAX_INSNS];
};

static int collect(void *ctx, const struct pk_annotate_insn *in)
{
	struct seen *s = ctx;
	if (s->n >= MAX_INSNS)
		return -E2BIG;
	size_t i = s->n++;
	s->addr[i] = in->addr;
	snprintf(s->mnem[i], sizeof(s->mnem[i]), "%s", in->mnemonic);
	snprintf(s->ops[i], sizeof(s->ops[i]), "%s", in->operands);
	s->has_target[i] = in->has_target;
	s->target[i] = in->target;
	snprintf(s->target_sym[i], sizeof(s->target_sym[i]), "%s",
		 in->target_sym ? in->target_sym : "");
	s->target_off[i] = in->target_off;
	return 0;
}

static void test_x86_bytes(void **state)
{
	(void)state;
	static const unsigned char code[] = {
		0x55,                         /* 1000 push %rbp */
		0xe8, 0x05, 0x00, 0x00, 0x00, /* 1001 call 100b */
		0x75, 0xfc,                   /* 1006 jne 1004 */
		0x90,                         /* 1008 nop */
		0xff, 0xd0,                   /* 1009 call *%rax */
		0xc3,                         /* 100b ret */
	};
	struct seen s = { 0 };
	assert_int_equal(pk_annotate__disasm_bytes(code, sizeof(code), 0x1000, NULL, collect, &s), 0);
	assert_int_equal(s.n, 6);
	uint64_t addrs[] = { 0x1000, 0x1001, 0x1006, 0x1008, 0x1009, 0x100b };
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(s.addr[i], addrs[i]);
	assert_non_null(strstr(s.mnem[0], "push"));
	assert_non_null(strstr(s.mnem[1], "call"));
	assert_true(s.has_target[1]);
	assert_int_equal(s.target[1], 0x100b);
	assert_string_equal(s.ops[1], "100b");
	assert_string_equal(s.mnem[2], "jne");
	assert_true(s.has_target[2]);
	assert_int_equal(s.target[2], 0x1004);
	assert_string_equal(s.mnem[3], "nop");
	assert_false(s.has_target[3]);
	assert_non_null(strstr(s.mnem[4], "call"));
	assert_false(s.has_target[4]); /* indirect: no target */
	assert_non_null(strstr(s.mnem[5], "ret"));
}

/* intel_syntax: the same bytes in Intel syntax (operands destination first, no '%') */
static void test_x86_intel_syntax(void **state)
{
	(void)state;
	static const unsigned char code[] = { 0x48, 0x89, 0xe5 }; /* mov %rsp,%rbp */
	struct seen att = { 0 }, intel = { 0 };
	assert_int_equal(pk_annotate__disasm_bytes(code, sizeof(code), 0x1000, NULL, collect, &att), 0);
	PK_OPTS(pk_annotate_disasm_opts, o, .intel_syntax = true);
	assert_int_equal(pk_annotate__disasm_bytes(code, sizeof(code), 0x1000, &o, collect, &intel), 0);
	assert_int_equal(att.n, 1);
	assert_int_equal(intel.n, 1);
	assert_non_null(strstr(att.ops[0], "%rsp"));
	assert_true(strstr(att.ops[0], "%rsp") < strstr(att.ops[0], "%rbp"));
	assert_null(strchr(intel.ops[0], '%'));
	assert_non_null(strstr(intel.ops[0], "rbp, rsp"));
}

static void test_aarch64_bytes(void **state)
{
	(void)state;
	static const unsigned char code[] = {
		0x02, 0x00, 0x00, 0x14, /* 2000 b 2008 */
		0x01, 0x00, 0x00, 0x94, /* 2004 bl 2008 */
		0xc0, 0x03, 0x5f, 0xd6, /* 2008 ret */
	};
	PK_OPTS(pk_annotate_disasm_opts, o, .e_machine = EM_AARCH64);
	struct seen s = { 0 };
	assert_int_equal(pk_annotate__disasm_bytes(code, sizeof(code), 0x2000, &o, collect, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.mnem[0], "b");
	assert_true(s.has_target[0]);
	assert_int_equal(s.target[0], 0x2008);
	assert_string_equal(s.mnem[1], "bl");
	assert_int_equal(s.target[1], 0x2008);
	assert_string_equal(s.mnem[2], "ret");
	assert_false(s.has_target[2]);
}

static void test_bad_input(void **state)
{
	(void)state;
	static const unsigned char bad[] = { 0x06, 0x06, 0x06 }; /* invalid in 64-bit mode */
	struct seen s = { 0 };
	assert_int_equal(pk_annotate__disasm_bytes(bad, sizeof(bad), 0, NULL, collect, &s), 0);
	assert_int_equal(s.n, 0);
	/* a truncated instruction: nothing past the last whole one */
	static const unsigned char cut[] = { 0x90, 0xe8, 0x01 };
	assert_int_equal(pk_annotate__disasm_bytes(cut, sizeof(cut), 0, NULL, collect, &s), 0);
	assert_int_equal(s.n, 1);
	PK_OPTS(pk_annotate_disasm_opts, o, .e_machine = EM_RISCV);
	assert_int_equal(pk_annotate__disasm_bytes(bad, sizeof(bad), 0, &o, collect, &s),
			 -EOPNOTSUPP);
	assert_int_equal(pk_annotate__disasm_bytes(bad, sizeof(bad), 0, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(pk_annotate__disasm_bytes(NULL, 4, 0, NULL, collect, &s), -EINVAL);
	assert_null(pk_annotate__load(NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pk_annotate__nr_symbols(NULL), 0);
	pk_annotate__free(NULL);
}

volatile int pk_ann_sink;

__attribute__((noinline)) int pk_ann_callee(int x)
{
	pk_ann_sink += x;
	return pk_ann_sink * 3;
}

__attribute__((noinline)) int pk_ann_caller(int x)
{
	int r = pk_ann_callee(x);
	pk_ann_sink = r;
	return r + 1;
}

static void test_own_elf(void **state)
{
	(void)state;
#ifndef __x86_64__
	PK_SKIP("the call check is written for x86-64");
#else
	assert_int_equal(pk_ann_caller(1), 4);
	struct pk_machine *m;
	struct pk_dso *d = pk_test_self_dso(&m);
	uint64_t addr = 0, start = 0, size = 0, callee = 0;
	assert_int_equal(pk_dso__symbol_addr(d, "pk_ann_caller", &addr), 0);
	assert_int_equal(pk_dso__symbol_addr(d, "pk_ann_callee", &callee), 0);
	assert_non_null(pk_dso__symbol(d, addr, &start, &size));
	assert_int_equal(start, addr);
	assert_true(size > 0 && size < 4096);
	unsigned char *buf = malloc(size);
	assert_non_null(buf);
	uint16_t em = 0;
	assert_int_equal(pk_dso__read(d, start, buf, size, &em), (long)size);
	assert_int_equal(em, EM_X86_64);
	PK_OPTS(pk_annotate_disasm_opts, o, .dso = d);
	struct seen s = { 0 };
	assert_int_equal(pk_annotate__disasm_bytes(buf, size, start, &o, collect, &s), 0);
	assert_true(s.n > 1);
	assert_int_equal(s.addr[0], start);
	bool named = false;
	for (size_t i = 0; i < s.n; i++) {
		if (s.has_target[i] && s.target[i] == callee) {
			assert_string_equal(s.target_sym[i], "pk_ann_callee");
			assert_int_equal(s.target_off[i], 0);
			assert_non_null(strstr(s.ops[i], "<pk_ann_callee>"));
			named = true;
		}
	}
	assert_true(named);
	/* shown 0x1000 lower (a kernel image's addresses): targets named at + dso_bias */
	PK_OPTS(pk_annotate_disasm_opts, ob, .dso = d, .dso_bias = 0x1000);
	static struct seen sb;
	assert_int_equal(pk_annotate__disasm_bytes(buf, size, start - 0x1000, &ob, collect, &sb), 0);
	assert_int_equal(sb.n, s.n);
	named = false;
	for (size_t i = 0; i < sb.n; i++) {
		assert_true(sb.addr[i] == s.addr[i] - 0x1000);
		if (sb.has_target[i] && sb.target[i] == callee - 0x1000) {
			assert_string_equal(sb.target_sym[i], "pk_ann_callee");
			assert_int_equal(sb.target_off[i], 0);
			named = true;
		}
	}
	assert_true(named);
	/* no section holds that address: no bytes */
	assert_int_equal(pk_dso__read(d, (uint64_t)1 << 60, buf, size, NULL), -ENODATA);
	free(buf);
	/* kernel code is not read from ELF files here */
	struct pk_dso *k = pk_machine__dso(m, "[kernel.kallsyms]");
	unsigned char b;
	if (k && pk_dso__is_kernel(k))
		assert_int_equal(pk_dso__read(k, 0, &b, 1, NULL), -EOPNOTSUPP);
	/* a file that is gone */
	struct pk_dso *g = pk_machine__dso(m, "/nonexistent/pk-annotate-test");
	assert_non_null(g);
	assert_true(pk_dso__read(g, 0x1000, &b, 1, NULL) < 0);
	pk_machine__free(m);
#endif
}

static void put_rec(struct pk_data_writer *w, const uint64_t *u)
{
	assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)u), 0);
}

/* a user-mode sample (IP, TID, TIME) of process 100 */
static void put_sample(struct pk_data_writer *w, uint64_t time, uint64_t ip)
{
	uint64_t u[4];
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
				       .size = sizeof(u) };
	memcpy(&u[0], &h, 8);
	u[1] = ip;
	u[2] = (uint64_t)100 << 32 | 100;
	u[3] = time;
	put_rec(w, u);
}

struct sum {
	uint64_t samples, period, first_samples;
	size_t n;
};

static int sum_insn(void *ctx, const struct pk_annotate_insn *in)
{
	struct sum *s = ctx;
	if (!s->n++)
		s->first_samples = in->samples;
	s->samples += in->samples;
	s->period += in->period;
	return 0;
}

#define NR_COLD 100000 /* more than the memo's slots: hot entries get evicted */

/* the mapping of this binary that holds ip, as the process has it: false if none */
static bool own_map(uint64_t ip, unsigned long long *lo, unsigned long long *hi,
		    unsigned long long *off, char path[PATH_MAX])
{
	FILE *mf = fopen("/proc/self/maps", "r");
	assert_non_null(mf);
	char line[4096];
	bool found = false;
	path[0] = 0;
	while (!found && fgets(line, sizeof(line), mf)) {
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", lo, hi, off, path) == 4 &&
		    ip >= *lo && ip < *hi)
			found = true;
	}
	fclose(mf);
	return found && path[0] == '/';
}

/* MMAP of [lo, hi) of path into process 100, with its sample_id trailer (TID, TIME) */
static void put_mmap(struct pk_data_writer *w, unsigned long long lo, unsigned long long hi,
		     unsigned long long off, const char *path)
{
	uint64_t u[8 + PATH_MAX / 8];
	memset(u, 0, sizeof(u));
	size_t flen = (strlen(path) + 1 + 7) / 8 * 8;
	struct perf_event_header h = { .type = PERF_RECORD_MMAP, .misc = PERF_RECORD_MISC_USER,
				       .size = (uint16_t)(8 + 32 + flen + 16) };
	memcpy(&u[0], &h, 8);
	u[1] = (uint64_t)100 << 32 | 100;
	u[2] = lo;
	u[3] = hi - lo;
	u[4] = off;
	memcpy(&u[5], path, strlen(path));
	u[5 + flen / 8] = (uint64_t)100 << 32 | 100;
	u[6 + flen / 8] = 1;
	put_rec(w, u);
}

/* A recording a.data in dir (its path in file[PATH_MAX]) with one cpu-clock event (id
 * 1) sampling ip, tid and time, and what `more` adds */
static struct pk_data_writer *open_cpu_clock_file(const char *dir, char *file, uint64_t more)
{
	snprintf(file, PATH_MAX, "%s/a.data", dir);
	struct pk_attr at;
	pk_test_cpu_clock_attr(&at, 1000, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					  more);
	struct pk_data_writer *w = pk_data_writer__open(file, NULL);
	assert_non_null(w);
	uint64_t id = 1;
	assert_int_equal(pk_data_writer__add_attr(w, &at, "cpu-clock", &id, 1), 0);
	return w;
}

static void test_load_counts(void **state)
{
	(void)state;
	/* the mapping of this binary that holds pk_ann_caller, as the process has it */
	uint64_t ip = (uint64_t)(uintptr_t)&pk_ann_caller;
	char path[PATH_MAX];
	unsigned long long lo = 0, hi = 0, off = 0;
	if (!own_map(ip, &lo, &hi, &off, path))
		PK_SKIP("no file mapping of this binary's code in /proc/self/maps");
	char *dir = pk_test_mkdtemp("annotate");
	char file[PATH_MAX];
	struct pk_data_writer *w = open_cpu_clock_file(dir, file, 0);
	/* the object's build-id in the file's list: what lets its table be read ahead */
	uint8_t bid[PK_BUILD_ID_MAX];
	size_t bl = sizeof(bid);
	bool have_bid = pk_build_id__read(path, bid, &bl) == 0;
	if (have_bid)
		assert_int_equal(pk_data_writer__add_build_id(w, -1, PERF_RECORD_MISC_USER, bid,
							      bl, path), 0);
	put_mmap(w, lo, hi, off, path);
	uint64_t t = 2;
	for (uint64_t i = 0; i < NR_COLD; i++) {
		put_sample(w, t++, ip);
		/* no map there: samples without a symbol */
		put_sample(w, t++, 0x100000000000ull + i * 16);
		if (i == NR_COLD / 2) {
			/* a record between samples: the machine may have changed */
			uint64_t c[6] = { 0 };
			struct perf_event_header ch = { .type = PERF_RECORD_COMM, .size = sizeof(c) };
			memcpy(&c[0], &ch, 8);
			c[1] = (uint64_t)100 << 32 | 100;
			snprintf((char *)&c[2], 16, "%s", "annotated");
			c[4] = (uint64_t)100 << 32 | 100;
			c[5] = t++;
			put_rec(w, c);
		}
		if (!(i % 1000))
			assert_int_equal(pk_data_writer__finish_round(w), 0);
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	/* the source line of the symbol's start, without and with the second thread, and
	 * with it opening the object's DWARF ahead (preload_lines): the same */
	char line0[512] = "";
	for (int mode = 0; mode < 3; mode++) {
		bool threaded = mode > 0;
		struct pk_data_reader *r = pk_data_reader__open(file, NULL);
		assert_non_null(r);
		PK_OPTS(pk_annotate_opts, o, .reader_thread = threaded, .preload_lines = mode == 2);
		struct pk_annotate *a = pk_annotate__load(r, &o);
		assert_non_null(a);
		struct pk_annotate_stats st = { .sz = sizeof(st) };
		pk_annotate__stats(a, &st);
		assert_int_equal(st.samples, 2 * NR_COLD);
		assert_int_equal(st.period, 2 * NR_COLD * 1000);
		assert_int_equal(st.unresolved, NR_COLD);
		assert_int_equal(st.reader_error, 0);
		/* read ahead on the second thread (without min_percent: at its first sample) */
		assert_int_equal(st.preloaded, threaded && have_bid ? 1 : 0);
		assert_int_equal(pk_annotate__nr_unresolved(a), 1);
		uint64_t n = 0;
		assert_string_equal(pk_annotate__unresolved(a, 0, &n), "[unknown]");
		assert_int_equal(n, NR_COLD);
		assert_int_equal(pk_annotate__nr_symbols(a), 1);
		struct pk_annotate_sym sym = { .sz = sizeof(sym) };
		assert_int_equal(pk_annotate__symbol(a, 0, &sym), 0);
		assert_string_equal(sym.name, "pk_ann_caller");
		assert_int_equal(sym.samples, NR_COLD);
		assert_int_equal(sym.period, NR_COLD * 1000);
		const char *sf = NULL;
		unsigned int sl = 0;
		char here[512];
		int serr = pk_dso__srcline(sym.dso, sym.start, &sf, &sl);
		snprintf(here, sizeof(here), "%d %s:%u", serr, serr ? "" : sf, serr ? 0 : sl);
		if (!mode)
			snprintf(line0, sizeof(line0), "%s", here);
		assert_string_equal(here, line0);
#ifdef __x86_64__
		/* every sample on the function's first instruction */
		struct sum s = { 0 };
		assert_int_equal(pk_annotate__disasm(a, 0, sum_insn, &s), 0);
		assert_true(s.n > 1);
		assert_int_equal(s.samples, NR_COLD);
		assert_int_equal(s.first_samples, NR_COLD);
		assert_int_equal(s.period, NR_COLD * 1000);
#endif
		pk_annotate__free(a);
		pk_data_reader__free(r);
	}
	/* min_percent: the object holds half of the period; at 50 % its symbol is kept, above
	 * it the object is left out unresolved (its samples skipped, not unresolved) */
	for (int run = 0; run < 4; run++) {
		/* with the second thread (preload) or without: the same results; it reads the
		 * object ahead only while it holds min_percent of the period read so far */
		bool above = run & 1, threaded = run & 2;
		struct pk_data_reader *r = pk_data_reader__open(file, NULL);
		assert_non_null(r);
		PK_OPTS(pk_annotate_opts, o, .min_percent = above ? 50.5 : 50.0,
			.reader_thread = threaded);
		struct pk_annotate *a = pk_annotate__load(r, &o);
		assert_non_null(a);
		struct pk_annotate_stats st = { .sz = sizeof(st) };
		pk_annotate__stats(a, &st);
		assert_int_equal(st.preloaded, threaded && have_bid && !above ? 1 : 0);
		assert_int_equal(st.samples, 2 * NR_COLD);
		assert_int_equal(st.unresolved, NR_COLD);
		assert_int_equal(st.skipped, above ? NR_COLD : 0);
		assert_int_equal(pk_annotate__nr_symbols(a), above ? 0 : 1);
		assert_int_equal(pk_annotate__nr_unresolved(a), 1);
		/* what was left out, resolved after all: as without the threshold */
		assert_int_equal(pk_annotate__load_skipped(a), 0);
		pk_annotate__stats(a, &st);
		assert_int_equal(st.skipped, 0);
		assert_int_equal(st.unresolved, NR_COLD);
		assert_int_equal(pk_annotate__nr_symbols(a), 1);
		struct pk_annotate_sym sym = { .sz = sizeof(sym) };
		assert_int_equal(pk_annotate__symbol(a, 0, &sym), 0);
		assert_string_equal(sym.name, "pk_ann_caller");
		assert_int_equal(sym.samples, NR_COLD);
		assert_int_equal(sym.period, NR_COLD * 1000);
		assert_int_equal(pk_annotate__load_skipped(a), 0);
		assert_int_equal(pk_annotate__nr_symbols(a), 1);
		pk_annotate__free(a);
		pk_data_reader__free(r);
	}
	assert_int_equal(pk_annotate__load_skipped(NULL), -EINVAL);
	pk_test_sh("rm -rf '%s'", dir);
	free(dir);
}

/*
 * Periods past 32 bits (the memo slot counts 32 bits of period): samples of one address
 * whose periods overflow the slot's count, one period that does not fit it at all, and
 * small ones; the symbol gets every sample and the exact sum.
 */
static void test_load_big_periods(void **state)
{
	(void)state;
	uint64_t ip = (uint64_t)(uintptr_t)&pk_ann_caller;
	char path[PATH_MAX];
	unsigned long long lo = 0, hi = 0, off = 0;
	if (!own_map(ip, &lo, &hi, &off, path))
		PK_SKIP("no file mapping of this binary's code in /proc/self/maps");
	char *dir = pk_test_mkdtemp("annotate-period");
	char file[PATH_MAX];
	struct pk_data_writer *w = open_cpu_clock_file(dir, file, PERF_SAMPLE_PERIOD);
	put_mmap(w, lo, hi, off, path);
	const uint64_t periods[] = { 3000000000ull, 7, 3000000000ull, 5000000000ull, 1,
				     (uint64_t)1 << 40, 4294967295ull, 4294967295ull, 2 };
	const size_t np = sizeof(periods) / sizeof(periods[0]);
	uint64_t sum = 0;
	for (size_t i = 0; i < np; i++) {
		uint64_t u[5];
		struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
					       .misc = PERF_RECORD_MISC_USER, .size = sizeof(u) };
		memcpy(&u[0], &h, 8);
		u[1] = ip;
		u[2] = (uint64_t)100 << 32 | 100;
		u[3] = 2 + i;
		u[4] = periods[i];
		put_rec(w, u);
		sum += periods[i];
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	struct pk_data_reader *r = pk_data_reader__open(file, NULL);
	assert_non_null(r);
	PK_OPTS(pk_annotate_opts, o, .reader_thread = false);
	struct pk_annotate *a = pk_annotate__load(r, &o);
	assert_non_null(a);
	struct pk_annotate_stats st = { .sz = sizeof(st) };
	pk_annotate__stats(a, &st);
	assert_int_equal(st.samples, np);
	assert_int_equal(st.period, sum);
	assert_int_equal(pk_annotate__nr_symbols(a), 1);
	struct pk_annotate_sym sym = { .sz = sizeof(sym) };
	assert_int_equal(pk_annotate__symbol(a, 0, &sym), 0);
	assert_string_equal(sym.name, "pk_ann_caller");
	assert_int_equal(sym.samples, np);
	assert_int_equal(sym.period, sum);
	pk_annotate__free(a);
	pk_data_reader__free(r);
	pk_test_sh("rm -rf '%s'", dir);
	free(dir);
}

/* the weight of the byte at offset k of a function in test_load_regens (samples a round) */
static uint64_t regen_weight(uint64_t k)
{
	return 1 + k % 5;
}

struct regen_sum {
	uint64_t start, rounds, bad, samples;
};

/* every instruction's samples: the weights of its bytes, a round each */
static int regen_insn(void *ctx, const struct pk_annotate_insn *in)
{
	struct regen_sum *s = ctx;
	uint64_t want = 0;
	for (uint64_t a = in->addr; a < in->addr + in->len; a++)
		want += regen_weight(a - s->start) * s->rounds;
	s->bad += in->samples != want;
	s->samples += in->samples;
	return 0;
}

/*
 * Many maps generations over the same addresses (a new mapping elsewhere between rounds):
 * every (generation, address) is a new memo entry, more of them than the memo has slots,
 * each looked up in the (object, address) table some misses later; each byte of two
 * functions gets its own count a round. Every instruction's count must be the sum of its
 * bytes', with and without the second thread.
 */
static void test_load_regens(void **state)
{
	(void)state;
	const uint64_t fn[2] = { (uint64_t)(uintptr_t)&pk_ann_caller,
				 (uint64_t)(uintptr_t)&pk_ann_callee };
	char path[PATH_MAX];
	unsigned long long lo = 0, hi = 0, off = 0;
	if (!own_map(fn[0], &lo, &hi, &off, path) || fn[1] < lo || fn[1] >= hi)
		PK_SKIP("no file mapping of this binary's code in /proc/self/maps");
	struct pk_machine *m;
	struct pk_dso *d = pk_test_self_dso(&m);
	const char *names[2] = { "pk_ann_caller", "pk_ann_callee" };
	uint64_t size[2] = { 0, 0 };
	for (int i = 0; i < 2; i++) {
		uint64_t addr = 0, start = 0;
		assert_int_equal(pk_dso__symbol_addr(d, names[i], &addr), 0);
		assert_non_null(pk_dso__symbol(d, addr, &start, &size[i]));
		assert_true(size[i] > 0 && size[i] < 4096);
	}
	pk_machine__free(m);
	char *dir = pk_test_mkdtemp("annotate-regen");
	char file[PATH_MAX];
	struct pk_data_writer *w = open_cpu_clock_file(dir, file, 0);
	put_mmap(w, lo, hi, off, path);
	const uint64_t rounds = 1000;
	uint64_t t = 2, total[2] = { 0, 0 };
	for (uint64_t r = 0; r < rounds; r++) {
		/* a new generation of process 100's maps: an unrelated mapping */
		put_mmap(w, 0x200000000000ull + r * 4096, 0x200000000000ull + r * 4096 + 4096, 0,
			 "/nonexistent/pk-annotate-regen");
		for (uint64_t rep = 0; rep < 5; rep++)
			for (int f = 0; f < 2; f++)
				for (uint64_t k = 0; k < size[f]; k++)
					if (regen_weight(k) > rep) {
						put_sample(w, t++, fn[f] + k);
						total[f]++;
					}
		if (!(r % 64))
			assert_int_equal(pk_data_writer__finish_round(w), 0);
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	for (int run = 0; run < 3; run++) {
		struct pk_data_reader *r = pk_data_reader__open(file, NULL);
		assert_non_null(r);
		PK_OPTS(pk_annotate_opts, o, .reader_thread = run > 0,
			.min_percent = run == 2 ? 10.0 : 0.0);
		struct pk_annotate *a = pk_annotate__load(r, &o);
		assert_non_null(a);
		struct pk_annotate_stats st = { .sz = sizeof(st) };
		pk_annotate__stats(a, &st);
		assert_int_equal(st.samples, total[0] + total[1]);
		assert_int_equal(st.unresolved, 0);
		assert_int_equal(st.skipped, 0);
		assert_int_equal(pk_annotate__nr_symbols(a), 2);
		for (size_t i = 0; i < 2; i++) {
			struct pk_annotate_sym sym = { .sz = sizeof(sym) };
			assert_int_equal(pk_annotate__symbol(a, i, &sym), 0);
			int f = !strcmp(sym.name, names[1]);
			assert_string_equal(sym.name, names[f]);
			assert_int_equal(sym.samples, total[f]);
			assert_int_equal(sym.period, total[f] * 1000);
#ifdef __x86_64__
			struct regen_sum s = { .start = sym.start, .rounds = rounds };
			assert_int_equal(pk_annotate__disasm(a, i, regen_insn, &s), 0);
			assert_int_equal(s.bad, 0);
			assert_int_equal(s.samples, total[f]);
#endif
		}
		pk_annotate__free(a);
		pk_data_reader__free(r);
	}
	pk_test_sh("rm -rf '%s'", dir);
	free(dir);
}

/* the radix sort of the addresses' look-up order: by key (every byte position used, some
 * the same in every key), equal keys in their first order; against a plain sort */
static int kv_cmp(const void *pa, const void *pb)
{
	const struct pk_ann_kv *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static void test_kv_sort(void **state)
{
	(void)state;
	const size_t n = 5000;
	struct pk_ann_kv *kv = malloc(n * sizeof(*kv)), *want = malloc(n * sizeof(*kv));
	struct pk_ann_kv *tmp = malloc(n * sizeof(*kv));
	assert_non_null(kv);
	assert_non_null(want);
	assert_non_null(tmp);
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* bytes 5 and 6 the same everywhere; few distinct values in the low ones
		 * (ties), and the top byte from a handful */
		uint64_t k = (x & 0x3f) | (x & 0xffffff0000ull) | ((x >> 60) << 56) |
			     (uint64_t)0x42 << 40 | (uint64_t)0x17 << 48;
		kv[i] = (struct pk_ann_kv){ k, (uint32_t)i };
	}
	memcpy(want, kv, n * sizeof(*kv));
	qsort(want, n, sizeof(*want), kv_cmp);
	assert_int_equal(pk_ann_kv_sort(kv, tmp, n), 0);
	for (size_t i = 0; i < n; i++) {
		assert_true(kv[i].key == want[i].key);
		assert_int_equal(kv[i].idx, want[i].idx);
	}
	/* one key, and one element: unchanged */
	for (size_t i = 0; i < n; i++)
		kv[i] = (struct pk_ann_kv){ 7, (uint32_t)(n - i) };
	assert_int_equal(pk_ann_kv_sort(kv, tmp, n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(kv[i].idx, n - i);
	assert_int_equal(pk_ann_kv_sort(kv, tmp, 1), 0);
	assert_int_equal(kv[0].idx, n);
	free(kv);
	free(want);
	free(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_bytes),
		cmocka_unit_test(test_x86_intel_syntax),
		cmocka_unit_test(test_aarch64_bytes),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_own_elf),
		cmocka_unit_test(test_load_counts),
		cmocka_unit_test(test_load_big_periods),
		cmocka_unit_test(test_load_regens),
		cmocka_unit_test(test_kv_sort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
