/* SPDX-License-Identifier: MIT */
/* lib/symbol: the machine model - threads and maps over fork / exec / mmap / exit. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "internal.h"
#include "symbol/symbol-internal.h"
#include "symbol/dso-internal.h"
#include "testutil.h"

#define KTEXT 0xffffffff81000000ULL
#define KMOD 0xffffffffc0400000ULL

static struct pk_machine *new_machine(void)
{
	PK_OPTS(pk_machine_opts, o, .host = false);
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	return m;
}

static void mmap_user(struct pk_machine *m, uint32_t pid, uint32_t tid, uint64_t addr,
		      uint64_t len, uint64_t pgoff, const char *file)
{
	struct pk_mmap_event ev = { .pid = pid, .tid = tid, .addr = addr, .len = len,
				    .pgoff = pgoff, .filename = file };
	assert_int_equal(pk_machine__mmap(m, &ev), 0);
}

/* dso name at (pid, tid, addr) in user mode, or "-" if no map */
static const char *dso_at(struct pk_machine *m, uint32_t pid, uint32_t tid, uint64_t addr)
{
	struct pk_addr_loc loc;
	int err = pk_machine__resolve(m, pid, tid, addr, PK_CPUMODE_USER, &loc);
	if (err == -ENOENT) {
		assert_null(loc.dso);
		assert_string_equal(loc.dso_name, "[unknown]");
		return "-";
	}
	assert_non_null(loc.dso);
	return loc.dso_name;
}

static void test_fork_exec_mmap(void **state)
{
	(void)state;
	struct pk_machine *m = new_machine();
	assert_int_equal(pk_machine__comm(m, 100, 100, "sh", false), 0);
	mmap_user(m, 100, 100, 0x400000, 0x10000, 0, "/fake/sh");
	mmap_user(m, 100, 100, 0x7f0000000000, 0x200000, 0x1000, "/fake/libc.so.6");
	assert_string_equal(dso_at(m, 100, 100, 0x400010), "/fake/sh");
	assert_string_equal(dso_at(m, 100, 100, 0x7f0000001000), "/fake/libc.so.6");
	assert_string_equal(dso_at(m, 100, 100, 0x500000), "-");
	/* a thread first seen in a sample is named ":TID", tid -1 as perf prints it */
	assert_string_equal(dso_at(m, 4242, 4242, 0x500000), "-");
	assert_string_equal(pk_machine__comm_of(m, 4242), ":4242");
	assert_string_equal(dso_at(m, UINT32_MAX, UINT32_MAX, 0x500000), "-");
	assert_string_equal(pk_machine__comm_of(m, UINT32_MAX), ":-1");

	/* fork: the child sees a copy of the parent's maps and its comm */
	assert_int_equal(pk_machine__fork(m, 200, 100, 200, 100), 0);
	assert_string_equal(pk_machine__comm_of(m, 200), "sh");
	assert_string_equal(dso_at(m, 200, 200, 0x400010), "/fake/sh");
	assert_string_equal(dso_at(m, 200, 200, 0x7f00001fffff), "/fake/libc.so.6");

	/* a map added to the child after the fork is not seen by the parent */
	mmap_user(m, 200, 200, 0x600000, 0x1000, 0, "/fake/child-only");
	assert_string_equal(dso_at(m, 200, 200, 0x600000), "/fake/child-only");
	assert_string_equal(dso_at(m, 100, 100, 0x600000), "-");

	/* exec: perf's rule, the old image's maps stay until the new image's mappings
	 * cut them (a sample inside execve, after the COMM and before the new MMAPs, is
	 * still named from the old libc); the parent's are untouched */
	assert_int_equal(pk_machine__comm(m, 200, 200, "ls", true), 0);
	assert_string_equal(pk_machine__comm_of(m, 200), "ls");
	assert_string_equal(dso_at(m, 200, 200, 0x400010), "/fake/sh");
	assert_string_equal(dso_at(m, 200, 200, 0x7f0000001000), "/fake/libc.so.6");
	assert_string_equal(dso_at(m, 200, 200, 0x600000), "/fake/child-only");
	mmap_user(m, 200, 200, 0x400000, 0x8000, 0, "/fake/ls");
	assert_string_equal(dso_at(m, 200, 200, 0x400010), "/fake/ls");
	assert_string_equal(dso_at(m, 200, 200, 0x407fff), "/fake/ls");
	assert_string_equal(dso_at(m, 200, 200, 0x408000), "/fake/sh"); /* (not cut yet) */
	assert_string_equal(dso_at(m, 100, 100, 0x400010), "/fake/sh");
	assert_string_equal(pk_machine__comm_of(m, 100), "sh");

	/* a COMM without the exec flag (prctl) keeps the maps */
	assert_int_equal(pk_machine__comm(m, 100, 100, "renamed", false), 0);
	assert_string_equal(dso_at(m, 100, 100, 0x400010), "/fake/sh");

	/* exit retires the thread but late samples still resolve */
	assert_int_equal(pk_machine__exit(m, 200, 200), 0);
	assert_string_equal(dso_at(m, 200, 200, 0x400010), "/fake/ls");

	/* the tid reused by a new fork gets the new parent's maps */
	assert_int_equal(pk_machine__fork(m, 200, 100, 200, 100), 0);
	assert_string_equal(dso_at(m, 200, 200, 0x400010), "/fake/sh");
	pk_machine__free(m);
}

static void test_threads_share_maps(void **state)
{
	(void)state;
	struct pk_machine *m = new_machine();
	assert_int_equal(pk_machine__comm(m, 300, 300, "app", false), 0);
	mmap_user(m, 300, 300, 0x10000, 0x1000, 0, "/fake/app");
	/* a thread of 300 */
	assert_int_equal(pk_machine__fork(m, 300, 300, 301, 300), 0);
	assert_string_equal(dso_at(m, 300, 301, 0x10000), "/fake/app");
	/* a dlopen in the thread is seen by the main thread and vice versa */
	mmap_user(m, 300, 301, 0x20000, 0x1000, 0, "/fake/plugin.so");
	assert_string_equal(dso_at(m, 300, 300, 0x20000), "/fake/plugin.so");
	mmap_user(m, 300, 300, 0x30000, 0x1000, 0, "/fake/late.so");
	assert_string_equal(dso_at(m, 300, 301, 0x30000), "/fake/late.so");
	/* a thread never announced by FORK joins its process's maps */
	assert_string_equal(dso_at(m, 300, 399, 0x30000), "/fake/late.so");
	assert_string_equal(pk_machine__comm_of(m, 399), "app");
	/* a sample for an unknown process: no maps, no crash */
	assert_string_equal(dso_at(m, 777, 778, 0x10000), "-");
	pk_machine__free(m);
}

static void test_overlap(void **state)
{
	(void)state;
	struct pk_machine *m = new_machine();
	struct pk_addr_loc loc;
	mmap_user(m, 1, 1, 0x1000, 0x4000, 0, "/fake/A");
	mmap_user(m, 1, 1, 0x2000, 0x1000, 0x7000, "/fake/B");
	assert_int_equal(pk_machine__resolve(m, 1, 1, 0x1800, PK_CPUMODE_USER, &loc), -ENODATA);
	assert_string_equal(loc.dso_name, "/fake/A");
	assert_int_equal(loc.map_start, 0x1000);
	assert_int_equal(loc.map_end, 0x2000);
	pk_machine__resolve(m, 1, 1, 0x2800, PK_CPUMODE_USER, &loc);
	assert_string_equal(loc.dso_name, "/fake/B");
	assert_int_equal(loc.map_pgoff, 0x7000);
	/* the right remainder of A keeps the file offset it had */
	pk_machine__resolve(m, 1, 1, 0x4000, PK_CPUMODE_USER, &loc);
	assert_string_equal(loc.dso_name, "/fake/A");
	assert_int_equal(loc.map_start, 0x3000);
	assert_int_equal(loc.map_end, 0x5000);
	assert_int_equal(loc.map_pgoff, 0x2000);
	/* one map covering several: they vanish */
	mmap_user(m, 1, 1, 0x0, 0x10000, 0, "/fake/C");
	assert_string_equal(dso_at(m, 1, 1, 0x2800), "/fake/C");
	assert_string_equal(dso_at(m, 1, 1, 0x4000), "/fake/C");
	assert_string_equal(dso_at(m, 1, 1, 0x10000), "-");

	/* memory is bounded by maps, not records: remapping the same range 100k times */
	for (int i = 0; i < 100000; i++)
		mmap_user(m, 1, 1, 0x100000 + (uint64_t)(i % 7) * 0x1000, 0x1000, 0, "/fake/D");
	struct pk_thread *t = pk_machine_thread(m, 1, 1, false);
	assert_non_null(t);
	assert_int_equal(t->maps->nr, 1 + 7);
	/* and the sorted array stays sorted and disjoint */
	for (size_t i = 1; i < t->maps->nr; i++)
		assert_true(t->maps->v[i - 1].end <= t->maps->v[i].start);
	pk_machine__free(m);
}

static void test_kernel_maps(void **state)
{
	(void)state;
	struct pk_machine *m = new_machine();
	struct pk_addr_loc loc;
	struct pk_mmap_event k = { .pid = (uint32_t)-1, .tid = 0, .addr = KTEXT,
				   .len = 0xffffffffffffffffULL - KTEXT, .pgoff = KTEXT,
				   .filename = "[kernel.kallsyms]_text", .kernel = true };
	assert_int_equal(pk_machine__mmap(m, &k), 0);
	struct pk_mmap_event mod = { .pid = (uint32_t)-1, .addr = KMOD, .len = 0x20000,
				     .filename = "/lib/modules/6.1.0/kernel/fs/ext4/ext4.ko.xz",
				     .kernel = true };
	assert_int_equal(pk_machine__mmap(m, &mod), 0);
	struct pk_mmap_event mod2 = { .pid = (uint32_t)-1, .addr = KMOD + 0x40000, .len = 0x1000,
				      .filename = "/lib/modules/x/nf-tables.ko", .kernel = true };
	assert_int_equal(pk_machine__mmap(m, &mod2), 0);

	pk_machine__resolve(m, 5, 5, KTEXT + 0x1234, PK_CPUMODE_KERNEL, &loc);
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");
	assert_true(loc.kernel);
	assert_true(pk_dso__is_kernel(loc.dso));
	assert_int_equal(loc.dso_addr, KTEXT + 0x1234);
	assert_null(loc.sym); /* not host: kernel symbols stay unresolved */

	pk_machine__resolve(m, 5, 5, KMOD + 0x10, PK_CPUMODE_KERNEL, &loc);
	assert_string_equal(loc.dso_name, "[ext4]");
	assert_true(loc.kernel);
	pk_machine__resolve(m, 5, 5, KMOD + 0x40010, PK_CPUMODE_KERNEL, &loc);
	assert_string_equal(loc.dso_name, "[nf_tables]");
	/* the kernel map continues after the module */
	pk_machine__resolve(m, 5, 5, KMOD + 0x30000, PK_CPUMODE_KERNEL, &loc);
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");
	/* a user-mode lookup of a kernel address does not see kernel maps */
	assert_int_equal(pk_machine__resolve(m, 5, 5, KTEXT + 8, PK_CPUMODE_USER, &loc), -ENOENT);
	/* cpumode unknown: process maps first, then the kernel's */
	pk_machine__resolve(m, 5, 5, KTEXT + 8, PK_CPUMODE_UNKNOWN, &loc);
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");
	pk_machine__free(m);

	/* no kernel map at all: a kernel address is still "[kernel.kallsyms]" */
	m = new_machine();
	pk_machine__resolve(m, 5, 5, KTEXT + 8, PK_CPUMODE_KERNEL, &loc);
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");
	pk_machine__free(m);
}

/* A kernel address that no recorded map holds is named through kallsyms only when one
 * of its symbols holds it, with the ends perf gives them (symbols__fixup_end): the last
 * kernel symbol before the modules (or module symbol before the kernel's) ends at its
 * start + 4 KiB rounded up to a page, the last of all a page after its page. Anything else is "[unknown]", as in perf. */
static void test_kernel_outside_maps(void **state)
{
	(void)state;
	char *tmp = pk_test_mkdtemp("kfall");
	pk_test_write_file(tmp, "kallsyms",
			   "ffffffff81000000 T _text\n"
			   "ffffffff81001000 T do_one\n"
			   "ffffffff81002000 D some_data\n"
			   "ffffffff82000010 T _einittext\n"
			   "ffffffffc0001000 t mod_fn\t[ext4]\n"
			   "ffffffffc0001800 t mod_fn2\t[ext4]\n"
			   "ffffffffc0005000 t bpf_prog_6deef7357e7b4530_sd_fw\t[bpf]\n"
			   "ffffffffc0008000 T back_in_kernel\n");
	char ks[PATH_MAX];
	snprintf(ks, sizeof(ks), "%s/kallsyms", tmp);
	PK_OPTS(pk_machine_opts, o, .host = true, .kallsyms = ks);
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	/* the recorded kernel map ends before the modules (as perf record's does) */
	struct pk_mmap_event k = { .pid = (uint32_t)-1, .addr = 0xffffffff81000000ULL,
				   .len = 0x1001000, .pgoff = 0xffffffff81000000ULL,
				   .filename = "[kernel.kallsyms]_text", .kernel = true };
	assert_int_equal(pk_machine__mmap(m, &k), 0);
	struct pk_addr_loc loc;
	/* in the map: the symbols as before */
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffff81001010ULL, PK_CPUMODE_KERNEL,
					     &loc), 0);
	assert_string_equal(loc.sym, "do_one");
	/* past the map, inside _einittext's last page: still _einittext */
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffff82001ff0ULL, PK_CPUMODE_KERNEL,
					     &loc), 0);
	assert_string_equal(loc.sym, "_einittext");
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");
	/* far past it (before the modules): no map, no symbol */
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffff82002000ULL, PK_CPUMODE_KERNEL,
					     &loc), -ENOENT);
	assert_string_equal(loc.dso_name, "[unknown]");
	assert_null(loc.sym);
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffffbe809000ULL, PK_CPUMODE_KERNEL,
					     &loc), -ENOENT);
	/* module and BPF symbols without a recorded map: named from kallsyms */
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffffc0001900ULL, PK_CPUMODE_KERNEL,
					     &loc), 0);
	assert_string_equal(loc.sym, "mod_fn2");
	/* (the symbol of the look-up that found it, whole) */
	assert_true(loc.sym_start == 0xffffffffc0001800ULL);
	assert_true(loc.sym_off == 0x100);
	assert_true(loc.dso_addr == 0xffffffffc0001900ULL);
	/* a module symbol extends to the next module symbol ([bpf] is one too) */
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffffc0004000ULL, PK_CPUMODE_KERNEL,
					     &loc), 0);
	assert_string_equal(loc.sym, "mod_fn2");
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffffc0005040ULL, PK_CPUMODE_KERNEL,
					     &loc), 0);
	assert_string_equal(loc.sym, "bpf_prog_6deef7357e7b4530_sd_fw");
	/* the last module symbol before kernel text: to its start + 4 KiB, rounded up to
	 * a page */
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffffc0005ff0ULL, PK_CPUMODE_KERNEL,
					     &loc), 0);
	assert_string_equal(loc.sym, "bpf_prog_6deef7357e7b4530_sd_fw");
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffffc0006000ULL, PK_CPUMODE_KERNEL,
					     &loc), -ENOENT);
	/* the last symbol of all: to one page after its page */
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffffc0008ff0ULL, PK_CPUMODE_KERNEL,
					     &loc), 0);
	assert_string_equal(loc.sym, "back_in_kernel");
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xffffffffc0009000ULL, PK_CPUMODE_KERNEL,
					     &loc), -ENOENT);
	assert_int_equal(pk_machine__resolve(m, 0, 0, 0xfffffffffffff000ULL, PK_CPUMODE_KERNEL,
					     &loc), -ENOENT);
	pk_machine__free(m);
	pk_test_rmtree(tmp);
	free(tmp);
}

static int ksym(struct pk_machine *m, uint64_t addr, uint32_t len, uint16_t type, bool unreg,
		const char *name)
{
	struct pk_record r;
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_KSYMBOL;
	r.cpumode = PK_CPUMODE_KERNEL;
	r.ksymbol = (struct pk_rec_ksymbol){ .addr = addr, .len = len, .ksym_type = type,
					     .flags = unreg, .unregister = unreg, .name = name };
	return pk_machine__process(m, &r);
}

/* "dso sym+off" of a kernel address, "dso" without a symbol, "-" without a map */
static const char *kname(struct pk_machine *m, uint64_t addr)
{
	static char buf[256];
	struct pk_addr_loc loc;
	int err = pk_machine__resolve(m, 5, 5, addr, PK_CPUMODE_KERNEL, &loc);
	if (err == -ENOENT)
		return "-";
	if (err)
		snprintf(buf, sizeof(buf), "%s", loc.dso_name);
	else
		snprintf(buf, sizeof(buf), "%s %s+%#" PRIx64, loc.dso_name, loc.sym, loc.sym_off);
	return buf;
}

/* KSYMBOL records: maps of their own in the kernel maps, as perf 6.1 makes them. */
static void test_ksymbol(void **state)
{
	(void)state;
	struct pk_machine *m = new_machine();
	struct pk_mmap_event k = { .pid = (uint32_t)-1, .addr = KTEXT, .len = 0x1000000,
				   .pgoff = KTEXT, .filename = "[kernel.kallsyms]_text",
				   .kernel = true };
	assert_int_equal(pk_machine__mmap(m, &k), 0);
	const uint64_t bpf = 0xffffffffc0001000ULL;
	uint64_t gen = pk_machine__maps_gen(m, 5, 5, PK_CPUMODE_KERNEL);
	assert_int_equal(ksym(m, bpf, 0x80, PERF_RECORD_KSYMBOL_TYPE_BPF, false, "bpf_prog_1_x"), 0);
	assert_true(pk_machine__maps_gen(m, 5, 5, PK_CPUMODE_KERNEL) != gen);
	assert_string_equal(kname(m, bpf), "bpf_prog_1_x bpf_prog_1_x+0");
	assert_string_equal(kname(m, bpf + 0x7f), "bpf_prog_1_x bpf_prog_1_x+0x7f");
	struct pk_addr_loc loc;
	assert_int_equal(pk_machine__resolve(m, 5, 5, bpf + 0x10, PK_CPUMODE_KERNEL, &loc), 0);
	assert_true(loc.kernel);
	assert_true(pk_dso__is_kernel(loc.dso));
	assert_int_equal(loc.dso_addr, 0x10);   /* relative to its map, as perf's */
	assert_int_equal(loc.map_start, bpf);
	assert_int_equal(loc.map_end, bpf + 0x80);
	/* past its end: the kernel fallback (no map), not the program */
	assert_string_equal(kname(m, bpf + 0x80), "[kernel.kallsyms]");
	/* a register inside it adds a symbol at its start (perf's rule) */
	assert_int_equal(ksym(m, bpf + 0x40, 0x20, 1, false, "nested"), 0);
	assert_string_equal(kname(m, bpf + 0x48), "bpf_prog_1_x bpf_prog_1_x+0x48");
	/* out-of-line code and a trampoline: named the same way */
	assert_int_equal(ksym(m, bpf + 0x2000, 0x100, PERF_RECORD_KSYMBOL_TYPE_OOL, false,
			      "kprobe_insn_page"), 0);
	assert_string_equal(kname(m, bpf + 0x2020), "kprobe_insn_page kprobe_insn_page+0x20");
	/* one inside the kernel's map adds nothing */
	assert_int_equal(ksym(m, KTEXT + 0x100, 0x10, 1, false, "bpf_in_text"), 0);
	assert_string_equal(kname(m, KTEXT + 0x100), "[kernel.kallsyms]");
	/* bounds: len 0 and a range past 2^64 make nothing; a range running into the next
	 * map stops at it */
	assert_int_equal(ksym(m, bpf + 0x4000, 0, 1, false, "len0"), 0);
	assert_string_equal(kname(m, bpf + 0x4000), "[kernel.kallsyms]");
	assert_int_equal(ksym(m, 0xfffffffffffff000ULL, 0x1000, 1, false, "wraps"), 0);
	assert_string_equal(kname(m, 0xfffffffffffff800ULL), "[kernel.kallsyms]");
	assert_int_equal(ksym(m, 0xffffffffffff0000ULL, 0xffff, 1, false, "top"), 0);
	assert_string_equal(kname(m, 0xfffffffffffffffeULL), "top top+0xfffe");
	assert_int_equal(ksym(m, KTEXT - 0x100, 0x10000, 1, false, "runs_in"), 0);
	assert_string_equal(kname(m, KTEXT - 0x10), "runs_in runs_in+0xf0");
	assert_string_equal(kname(m, KTEXT + 0x10), "[kernel.kallsyms]");
	assert_int_equal(ksym(m, bpf + 0x5000, 0x10, 1, false, NULL), 0);   /* no name */
	assert_string_equal(kname(m, bpf + 0x5000), "[kernel.kallsyms]");
	/* unregister: the whole map holding the address goes; the kernel's stays */
	gen = pk_machine__maps_gen(m, 5, 5, PK_CPUMODE_KERNEL);
	assert_int_equal(ksym(m, bpf + 0x10, 0x80, 1, true, "bpf_prog_1_x"), 0);
	assert_true(pk_machine__maps_gen(m, 5, 5, PK_CPUMODE_KERNEL) != gen);
	assert_string_equal(kname(m, bpf + 0x10), "[kernel.kallsyms]");
	assert_string_equal(kname(m, bpf + 0x2020), "kprobe_insn_page kprobe_insn_page+0x20");
	assert_int_equal(ksym(m, KTEXT + 0x10, 0x10, 1, true, "bpf_in_text"), 0);
	assert_int_equal(ksym(m, bpf + 0x9000, 0x10, 1, true, "never"), 0);
	assert_int_equal(pk_machine__resolve(m, 5, 5, KTEXT + 0x10, PK_CPUMODE_KERNEL, &loc), -ENODATA);
	assert_int_equal(loc.map_start, KTEXT);
	/* registered again with another length: a new object, as perf's */
	assert_int_equal(ksym(m, bpf + 0x8, 0x8, 1, false, "bpf_prog_1_x"), 0);
	assert_string_equal(kname(m, bpf + 0xc), "bpf_prog_1_x bpf_prog_1_x+0x4");
	assert_string_equal(kname(m, bpf + 0x10), "[kernel.kallsyms]");
	/* a name the kernel's own: still an object of its own */
	assert_int_equal(ksym(m, bpf + 0x6000, 0x10, 1, false, "[kernel.kallsyms]"), 0);
	assert_int_equal(pk_machine__resolve(m, 5, 5, bpf + 0x6004, PK_CPUMODE_KERNEL, &loc), 0);
	assert_string_equal(loc.sym, "[kernel.kallsyms]");
	/* many registers inside one map: bounded, the first ones kept */
	for (int i = 0; i < PK_KSYM_SYMS_MAX + 10; i++)
		assert_int_equal(ksym(m, bpf + 0x2001, 0x1, 1, false, "many"), 0);
	assert_string_equal(kname(m, bpf + 0x2020), "kprobe_insn_page kprobe_insn_page+0x20");
	pk_machine__free(m);
}

/* The same timeline fed as decoded records through pk_machine__process. */
static void test_process_records(void **state)
{
	(void)state;
	struct pk_machine *m = new_machine();
	struct pk_record r;

	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_COMM;
	r.comm = (struct pk_rec_comm){ .pid = 10, .tid = 10, .comm = "bash" };
	assert_int_equal(pk_machine__process(m, &r), 0);

	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_MMAP2;
	r.cpumode = PK_CPUMODE_USER;
	r.mmap2 = (struct pk_rec_mmap2){ .pid = 10, .tid = 10, .addr = 0x55550000, .len = 0x1000,
					 .pgoff = 0, .filename = "/fake/bash", .prot = 5 };
	assert_int_equal(pk_machine__process(m, &r), 0);

	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_FORK;
	r.task = (struct pk_rec_task){ .pid = 11, .ppid = 10, .tid = 11, .ptid = 10 };
	assert_int_equal(pk_machine__process(m, &r), 0);
	assert_string_equal(dso_at(m, 11, 11, 0x55550100), "/fake/bash");

	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_COMM;
	r.misc = PERF_RECORD_MISC_COMM_EXEC;
	r.comm = (struct pk_rec_comm){ .pid = 11, .tid = 11, .comm = "true", .exec = true };
	assert_int_equal(pk_machine__process(m, &r), 0);
	/* (the old image's maps stay until new mappings cut them, as in perf) */
	assert_string_equal(pk_machine__comm_of(m, 11), "true");
	assert_string_equal(dso_at(m, 11, 11, 0x55550100), "/fake/bash");

	/* an MMAP with the data flag is not an executable map */
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_MMAP;
	r.cpumode = PK_CPUMODE_USER;
	r.mmap = (struct pk_rec_mmap){ .pid = 11, .tid = 11, .addr = 0x1000, .len = 0x1000,
				       .filename = "/fake/data", .data = true };
	assert_int_equal(pk_machine__process(m, &r), 0);
	assert_string_equal(dso_at(m, 11, 11, 0x1000), "-");
	/* ... but data addresses are found in it (and code maps still come first) */
	struct pk_addr_loc dl;
	assert_int_equal(pk_machine__resolve_data(m, 11, 11, 0x1800, PK_CPUMODE_USER, &dl), -ENODATA);
	assert_non_null(dl.dso);
	assert_string_equal(dl.dso_name, "/fake/data");
	assert_int_equal(dl.map_start, 0x1000);
	assert_int_equal(pk_machine__resolve_data(m, 11, 11, 0x2000, PK_CPUMODE_USER, &dl), -ENOENT);
	assert_null(dl.dso);
	/* the unmapped range around an address: of the code maps for a code look-up, of
	 * both kinds for a data look-up (script skips the look-ups of addresses in it) */
	assert_int_equal(dl.map_start, 0x2000);
	assert_int_equal(dl.map_end, 0x55550000);  /* (bash's map, kept across the exec) */
	assert_int_equal(pk_machine__resolve_data(m, 11, 11, 0x800, PK_CPUMODE_USER, &dl), -ENOENT);
	assert_int_equal(dl.map_start, 0);
	assert_int_equal(dl.map_end, 0x1000);
	assert_int_equal(pk_machine__resolve(m, 11, 11, 0x800, PK_CPUMODE_USER, &dl), -ENOENT);
	assert_true(dl.map_start == 0 && dl.map_end == 0x55550000);

	/* kernel MMAP (pid -1) */
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_MMAP;
	r.cpumode = PK_CPUMODE_KERNEL;
	r.mmap = (struct pk_rec_mmap){ .pid = (uint32_t)-1, .addr = KTEXT, .len = 0x1000000,
				       .pgoff = KTEXT, .filename = "[kernel.kallsyms]_text" };
	assert_int_equal(pk_machine__process(m, &r), 0);
	struct pk_addr_loc loc;
	pk_machine__resolve(m, 11, 11, KTEXT + 5, PK_CPUMODE_KERNEL, &loc);
	assert_string_equal(loc.dso_name, "[kernel.kallsyms]");

	/* EXIT and unrelated records are accepted */
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_EXIT;
	r.task = (struct pk_rec_task){ .pid = 11, .ppid = 10, .tid = 11, .ptid = 10 };
	assert_int_equal(pk_machine__process(m, &r), 0);
	memset(&r, 0, sizeof(r));
	r.type = PERF_RECORD_LOST;
	assert_int_equal(pk_machine__process(m, &r), 0);
	pk_machine__free(m);
}

/* pk_machine__maps_gen: one number per state of an address space, shared by its threads */
static void test_maps_gen(void **state)
{
	(void)state;
	struct pk_machine *m = new_machine();
	const uint8_t U = PK_CPUMODE_USER, K = PK_CPUMODE_KERNEL;
	mmap_user(m, 100, 100, 0x400000, 0x10000, 0, "/fake/sh");
	uint64_t g = pk_machine__maps_gen(m, 100, 100, U);
	assert_true(g != 0);
	assert_int_equal(pk_machine__maps_gen(m, 100, 100, U), g); /* stable without changes */

	/* a thread of the process shares the address space and its generation */
	assert_int_equal(pk_machine__fork(m, 100, 100, 101, 100), 0);
	assert_int_equal(pk_machine__maps_gen(m, 100, 101, U), g);

	/* a new process: a copy of the maps, but a generation of its own */
	assert_int_equal(pk_machine__fork(m, 200, 100, 200, 100), 0);
	uint64_t c = pk_machine__maps_gen(m, 200, 200, U);
	assert_true(c != g);

	/* an mmap changes the process's generation, not the child's or the kernel's */
	uint64_t k = pk_machine__maps_gen(m, 0, 0, K);
	mmap_user(m, 100, 101, 0x7f0000000000, 0x1000, 0, "/fake/libc.so.6");
	uint64_t g2 = pk_machine__maps_gen(m, 100, 100, U);
	assert_true(g2 != g);
	assert_int_equal(pk_machine__maps_gen(m, 100, 101, U), g2);
	assert_int_equal(pk_machine__maps_gen(m, 200, 200, U), c);
	assert_int_equal(pk_machine__maps_gen(m, 0, 0, K), k);

	/* a data mapping (record -d) too: the data lookup answers differently */
	struct pk_mmap_event ev = { .pid = 100, .tid = 100, .addr = 0x600000, .len = 0x1000,
				    .filename = "/fake/heap", .data = true };
	assert_int_equal(pk_machine__mmap(m, &ev), 0);
	uint64_t g3 = pk_machine__maps_gen(m, 100, 100, U);
	assert_true(g3 != g2);

	/* exec: a new generation (another program, the same maps until new ones come) */
	assert_int_equal(pk_machine__comm(m, 100, 100, "ls", true), 0);
	uint64_t g4 = pk_machine__maps_gen(m, 100, 100, U);
	assert_true(g4 != g3 && g4 != g && g4 != c);

	/* a kernel map: the kernel's generation, and the one of a mode searching both */
	uint64_t both = pk_machine__maps_gen(m, 200, 200, PK_CPUMODE_UNKNOWN);
	struct pk_mmap_event kev = { .pid = UINT32_MAX, .tid = 0, .addr = KMOD, .len = 0x1000,
				     .filename = "/lib/modules/x/ext4.ko", .kernel = true };
	assert_int_equal(pk_machine__mmap(m, &kev), 0);
	assert_true(pk_machine__maps_gen(m, 0, 0, K) != k);
	assert_true(pk_machine__maps_gen(m, 200, 200, PK_CPUMODE_UNKNOWN) != both);
	assert_int_equal(pk_machine__maps_gen(m, 200, 200, U), c);

	/* a thread seen before its process: its generation changes when it joins it */
	uint64_t lone = pk_machine__maps_gen(m, UINT32_MAX, 300, U);
	mmap_user(m, 300, 300, 0x400000, 0x10000, 0, "/fake/x");
	uint64_t joined = pk_machine__maps_gen(m, 300, 300, U);
	assert_true(lone != joined);
	assert_int_equal(pk_machine__maps_gen(NULL, 1, 1, U), 0);
	pk_machine__free(m);
}

static void test_callchain_fp(void **state)
{
	(void)state;
	struct pk_machine *m = new_machine();
	uint64_t chain[] = { (uint64_t)-128 /* PERF_CONTEXT_KERNEL */, KTEXT + 1, KTEXT + 2,
			     (uint64_t)-512 /* PERF_CONTEXT_USER */, 0x401000, 0x402000 };
	struct pk_sample s;
	memset(&s, 0, sizeof(s));
	s.type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	s.cpumode = PK_CPUMODE_KERNEL;
	s.ip = KTEXT + 1;
	s.pid = s.tid = 42;
	s.callchain.nr = 6;
	s.callchain.ips = chain;
	struct pk_chain_entry out[8];
	int n = pk_machine__callchain(m, &s, out, 8);
	assert_int_equal(n, 4);
	assert_int_equal(out[0].ip, KTEXT + 1);
	assert_int_equal(out[0].cpumode, PK_CPUMODE_KERNEL);
	assert_int_equal(out[1].cpumode, PK_CPUMODE_KERNEL);
	assert_int_equal(out[2].ip, 0x401000);
	assert_int_equal(out[2].cpumode, PK_CPUMODE_USER);
	assert_int_equal(out[3].cpumode, PK_CPUMODE_USER);
	/* bounded by max */
	assert_int_equal(pk_machine__callchain(m, &s, out, 3), 3);
	/* a kernel chain running on into user addresses without a PERF_CONTEXT_USER marker
	 * (an interrupt in user space): those are the process's, as perf takes them; the
	 * kernel's maps start at the lowest kernel map, or the upper half without one */
	uint64_t chain2[] = { (uint64_t)-128, KTEXT + 1, 0x401000 };
	s.callchain.nr = 3;
	s.callchain.ips = chain2;
	assert_int_equal(pk_machine__callchain(m, &s, out, 8), 2);
	assert_int_equal(out[0].cpumode, PK_CPUMODE_KERNEL);
	assert_int_equal(out[1].ip, 0x401000);
	assert_int_equal(out[1].cpumode, PK_CPUMODE_USER);
	struct pk_mmap_event kev = { .pid = UINT32_MAX, .addr = KTEXT, .len = 0x1000000,
				     .filename = "[kernel.kallsyms]_text", .kernel = true };
	assert_int_equal(pk_machine__mmap(m, &kev), 0);
	uint64_t chain3[] = { (uint64_t)-128, KTEXT + 1, KTEXT - 0x1000 };
	s.callchain.ips = chain3;
	assert_int_equal(pk_machine__callchain(m, &s, out, 8), 2);
	assert_int_equal(out[1].cpumode, PK_CPUMODE_USER); /* below the kernel's maps */
	s.callchain.nr = 6;
	s.callchain.ips = chain;
	/* without a callchain: just the ip */
	s.type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	assert_int_equal(pk_machine__callchain(m, &s, out, 8), 1);
	assert_int_equal(out[0].ip, KTEXT + 1);
	/* no user stack: unwinding has nothing to do */
	uint64_t ips[4];
	assert_int_equal(pk_machine__unwind(m, &s, ips, 4), -ENODATA);
	pk_machine__free(m);
}

/* a data object of this program, for the data-symbol test */
unsigned long pk_test_data_object[64] = { 1 };

static int first_bias(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	*(uint64_t *)ctx = info->dlpi_addr; /* the first entry: the program itself */
	return 1;
}

/* this test program's path into exe[PATH_MAX], and its load bias */
static uint64_t self_exe(char *exe)
{
	ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
	assert_true(n > 0);
	exe[n] = 0;
	uint64_t bias = 0;
	dl_iterate_phdr(first_bias, &bias);
	return bias;
}

/* Data objects of an object's symbol table name data addresses, unless the machine was
 * told to read none (pk_machine_opts.no_data_symbols, perfkit top's setting). */
static void test_no_data_symbols(void **state)
{
	(void)state;
	char exe[PATH_MAX];
	uint64_t bias = self_exe(exe);
	uint64_t addr = (uint64_t)(uintptr_t)&pk_test_data_object[3] - bias;
	for (int off = 0; off < 2; off++) {
		PK_OPTS(pk_machine_opts, o, .no_data_symbols = off == 1, .buildid_dir = "");
		struct pk_machine *m = pk_machine__new(&o);
		assert_non_null(m);
		struct pk_dso *d = pk_dso_findnew(m, exe);
		assert_non_null(d);
		uint64_t start = 0, size = 0;
		const char *name = pk_dso_data_symbol(d, addr, true, &start, &size);
		if (off) {
			assert_null(name);
		} else {
			assert_non_null(name);
			assert_string_equal(name, "pk_test_data_object");
			/* (AddressSanitizer's red zone makes the symbol larger) */
			assert_true(size >= sizeof(pk_test_data_object));
		}
		/* code still resolves either way */
		uint64_t fs = 0, fz = 0;
		assert_non_null(pk_dso__symbol(d, (uint64_t)(uintptr_t)test_no_data_symbols - bias,
					       &fs, &fz));
		pk_machine__free(m);
	}
}

/* With close_files the object's file is closed after its symbols are read, and opened
 * again to read its code: the bytes are this program's own. */
static void test_close_files(void **state)
{
	(void)state;
	char exe[PATH_MAX];
	uint64_t bias = self_exe(exe);
	const uint8_t *code = (const uint8_t *)(uintptr_t)test_close_files;
	uint64_t addr = (uint64_t)(uintptr_t)code - bias;
	PK_OPTS(pk_machine_opts, o, .close_files = true, .buildid_dir = "");
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	struct pk_dso *d = pk_dso_findnew(m, exe);
	uint64_t fs = 0, fz = 0;
	assert_string_equal(pk_dso__symbol(d, addr, &fs, &fz), "test_close_files");
	assert_null(d->mod);            /* closed after the load */
	assert_true(d->file_closed);
	uint8_t buf[32];
	uint16_t mach = 0;
	assert_int_equal(pk_dso__read(d, addr, buf, sizeof(buf), &mach), (long)sizeof(buf));
	assert_memory_equal(buf, code, sizeof(buf));
	assert_non_null(d->mod);        /* open again */

	/* the names (libdwfl's while the table was read, then packed) outlive the file:
	 * each as the table of a machine that keeps its files gives it */
	PK_OPTS(pk_machine_opts, ko, .buildid_dir = "");
	struct pk_machine *k = pk_machine__new(&ko);
	assert_non_null(k);
	struct pk_dso *kd = pk_dso_findnew(k, exe);
	assert_true(pk_dso__load(kd) > 100);
	size_t same = 0;
	for (size_t i = 0; i < d->nr_syms; i++) {
		const char *nm = pk_dso_sym_name(d, &d->syms[i]);
		uint64_t ks = 0, kz = 0;
		const char *kn = pk_dso__symbol(kd, d->syms[i].start, &ks, &kz);
		if (strstr(nm, "@plt") || (kn && strstr(kn, "@plt")))
			continue; /* (perf's PLT names only with the files kept) */
		assert_non_null(kn);
		assert_string_equal(nm, kn);
		assert_true(ks == d->syms[i].start);
		same++;
	}
	assert_true(same > 100);
	pk_machine__free(k);
	/* a PLT entry is named as its relocation says */
	uint64_t plt = 0;
	if (pk_dso__symbol_addr(d, "dl_iterate_phdr@plt", &plt) == 0) /* (a build with PLT) */
		assert_string_equal(pk_dso__symbol(d, plt + 4, &fs, &fz), "dl_iterate_phdr@plt");
	pk_machine__free(m);
}

/* A code mapping of this program, whose build-id the recording listed, for pid 7 */
static struct pk_dso *preload_map(struct pk_machine *m, const char *exe, bool with_bid)
{
	uint8_t bid[20];
	size_t bl = sizeof(bid);
	assert_int_equal(pk_build_id__read(exe, bid, &bl), 0);
	if (with_bid)
		assert_int_equal(pk_machine__add_build_id(m, exe, bid, bl), 0);
	struct pk_mmap_event ev = { .pid = 7, .tid = 7, .addr = 0x400000, .len = 0x100000,
				    .filename = exe, .prot = 5 };
	assert_int_equal(pk_machine__mmap(m, &ev), 0);
	struct pk_dso *d = pk_machine__dso(m, exe);
	assert_non_null(d);
	return d;
}

/* With preload the tables are read on the machine's thread, or ahead of their first
 * use, or taken back while still queued: the same symbols each way; objects without a
 * recorded build-id are not queued; a machine freed with work queued stops cleanly. */
static void test_preload(void **state)
{
	(void)state;
	char exe[PATH_MAX];
	uint64_t bias = self_exe(exe);
	uint64_t addr = (uint64_t)(uintptr_t)test_preload - bias;
	for (int mode = 0; mode < 4; mode++) {
		PK_OPTS(pk_machine_opts, o, .preload = true, .buildid_dir = "");
		struct pk_machine *m = pk_machine__new(&o);
		assert_non_null(m);
		struct pk_dso *d = preload_map(m, exe, mode != 3);
		if (mode == 3) {
			/* no build-id known: read where it is used */
			assert_int_equal(pk_preload_state(d), PK_PRE_NONE);
		} else {
			assert_int_not_equal(pk_preload_state(d), PK_PRE_NONE);
		}
		if (mode == 1) {
			/* read ahead: wait (at most 10 s) until the thread is done with it */
			for (int i = 0; i < 10000 &&
			     pk_preload_state(d) != PK_PRE_DONE; i++)
				usleep(1000);
			assert_int_equal(pk_preload_state(d), PK_PRE_DONE);
			assert_false(d->loaded); /* not taken yet */
		}
		if (mode == 2) {
			pk_machine__free(m); /* queued or being read: stopped, then freed */
			continue;
		}
		uint64_t fs = 0, fz = 0;
		assert_string_equal(pk_dso__symbol(d, addr, &fs, &fz), "test_preload");
		assert_true(d->loaded);
		assert_int_equal(d->load_err, 0);
		/* a build-id given once the object is read changes nothing */
		uint8_t other[20] = { 1 };
		assert_int_equal(pk_machine__add_build_id(m, exe, other, sizeof(other)), 0);
		assert_string_equal(pk_dso__symbol(d, addr, &fs, &fz), "test_preload");
		pk_machine__free(m);
	}
}

/* More objects queued than the queue's first room (64), some taken by the thread
 * meanwhile: each one queued once (the queue grows, pk_grow), none lost, the machine
 * freed cleanly with work left (ASan: no leak of the queue). The files do not exist:
 * the thread's reads fail, which is a state it ends in too. */
static void test_preload_queue_grows(void **state)
{
	(void)state;
	PK_OPTS(pk_machine_opts, o, .preload = true, .buildid_dir = "");
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	enum { N = 300 };
	struct pk_dso *d[N];
	for (int i = 0; i < N; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/nonexistent/pk-preload/lib%d.so", i);
		uint8_t bid[20] = { (uint8_t)i, (uint8_t)(i >> 8), 7 };
		assert_int_equal(pk_machine__add_build_id(m, path, bid, sizeof(bid)), 0);
		struct pk_mmap_event ev = { .pid = 7, .tid = 7,
					    .addr = 0x400000 + (uint64_t)i * 0x10000,
					    .len = 0x10000, .filename = path, .prot = 5 };
		assert_int_equal(pk_machine__mmap(m, &ev), 0);
		assert_non_null(d[i] = pk_machine__dso(m, path));
	}
	for (int i = 0; i < N; i++)
		assert_int_not_equal(pk_preload_state(d[i]), PK_PRE_NONE);
	pk_machine__free(m);
}

/* pk_machine_preload_dso: an object asked for by the client is read on the preload
 * thread whether the machine was made with preload or not, once, with the same
 * symbols at its first use; not without a known build-id, not with a debug finder. */
static int no_finder(void *ctx, const uint8_t *id, size_t len, char **path)
{
	(void)ctx; (void)id; (void)len; (void)path;
	return -ENOENT;
}

static void test_preload_dso(void **state)
{
	(void)state;
	char exe[PATH_MAX];
	uint64_t bias = self_exe(exe);
	uint64_t addr = (uint64_t)(uintptr_t)test_preload_dso - bias;
	assert_false(pk_machine_preload_dso(NULL, NULL));
	for (int mode = 0; mode < 4; mode++) {
		/* 0: machine without preload, 1: with, 2: no build-id, 3: a debug finder */
		PK_OPTS(pk_machine_opts, o, .preload = mode == 1, .buildid_dir = "",
			.find_debuginfo = mode == 3 ? no_finder : NULL);
		struct pk_machine *m = pk_machine__new(&o);
		assert_non_null(m);
		/* preload_map queues at the MMAP only with opts.preload */
		struct pk_dso *d = preload_map(m, exe, mode != 2);
		bool want = mode == 0;
		assert_int_equal(pk_machine_preload_dso(m, d), want);
		assert_false(pk_machine_preload_dso(m, d)); /* once */
		if (mode == 0 || mode == 1) {
			assert_int_not_equal(pk_preload_state(d), PK_PRE_NONE);
			for (int i = 0; i < 10000 && pk_preload_state(d) != PK_PRE_DONE; i++)
				usleep(1000);
			assert_int_equal(pk_preload_state(d), PK_PRE_DONE);
			assert_false(d->loaded);
		} else {
			assert_int_equal(pk_preload_state(d), PK_PRE_NONE);
		}
		uint64_t fs = 0, fz = 0;
		assert_string_equal(pk_dso__symbol(d, addr, &fs, &fz), "test_preload_dso");
		assert_int_equal(d->load_err, 0);
		/* read: not queued again */
		assert_false(pk_machine_preload_dso(m, d));
		pk_machine__free(m);
	}
}

struct call_seen {
	pthread_t by;
	_Atomic int n;
};

static void note_call(void *arg)
{
	struct call_seen *c = arg;
	c->by = pthread_self();
	atomic_fetch_add(&c->n, 1);
}

/* pk_machine_preload_call: fn runs once, on the preload thread (started for it); a
 * second call waits for the first to be made; one asked for right before the machine
 * is freed is made or not, never after */
static void test_preload_call(void **state)
{
	(void)state;
	struct pk_machine *m = pk_machine__new(NULL);
	assert_non_null(m);
	struct call_seen c = { 0 };
	assert_false(pk_machine_preload_call(m, NULL, &c));
	assert_true(pk_machine_preload_call(m, note_call, &c));
	for (int i = 0; i < 5000 && !atomic_load(&c.n); i++)
		usleep(1000);
	assert_int_equal(atomic_load(&c.n), 1);
	assert_false(pthread_equal(c.by, pthread_self()));
	/* the thread clears the call after making it: a second one is taken then */
	bool again = false;
	for (int i = 0; i < 5000 && !(again = pk_machine_preload_call(m, note_call, &c)); i++)
		usleep(1000);
	assert_true(again);
	for (int i = 0; i < 5000 && atomic_load(&c.n) < 2; i++)
		usleep(1000);
	assert_int_equal(atomic_load(&c.n), 2);
	struct call_seen late = { 0 };
	for (int i = 0; i < 5000 && !pk_machine_preload_call(m, note_call, &late); i++)
		usleep(1000);
	pk_machine__free(m);
	int n = atomic_load(&late.n);
	assert_true(n == 0 || n == 1);
	usleep(10000);
	assert_int_equal(atomic_load(&late.n), n);
}

/* pk_machine_preload_lines: the preload thread also opens the object's DWARF (and
 * libdwfl's address ranges) after its table, before it hands the object over; the
 * source line and inline chain of an address are then the same as when all of it is
 * read on the machine's thread (the TSan build checks the hand-over). */
static void test_preload_lines(void **state)
{
	(void)state;
	char exe[PATH_MAX];
	uint64_t bias = self_exe(exe);
	uint64_t addr = (uint64_t)(uintptr_t)test_preload_lines - bias;
	char want[600] = "";
	pk_machine_preload_lines(NULL, true); /* (no machine: nothing) */
	for (int mode = 0; mode < 3; mode++) {
		/* 0: no preload, 1: tables ahead, 2: tables and DWARF ahead */
		PK_OPTS(pk_machine_opts, o, .buildid_dir = "");
		struct pk_machine *m = pk_machine__new(&o);
		assert_non_null(m);
		struct pk_dso *d = preload_map(m, exe, true);
		pk_machine_preload_lines(m, mode == 2);
		if (mode) {
			assert_true(pk_machine_preload_dso(m, d));
			for (int i = 0; i < 10000 && pk_preload_state(d) != PK_PRE_DONE; i++)
				usleep(1000);
			assert_int_equal(pk_preload_state(d), PK_PRE_DONE);
			assert_false(d->loaded);
		}
		const char *file = NULL, *func = NULL;
		unsigned int line = 0;
		int err = pk_dso__srcline(d, addr, &file, &line);
		const struct pk_inline_frame *fr = NULL;
		int nf = pk_dso__inline_names(d, addr, &fr);
		if (nf > 0)
			func = fr[0].func;
		char got[600];
		snprintf(got, sizeof(got), "%d %s:%u %d %s", err, err ? "" : file, err ? 0 : line,
			 nf, nf > 0 && func ? func : "");
		if (!mode)
			snprintf(want, sizeof(want), "%s", got);
		assert_string_equal(got, want);
		pk_machine__free(m);
	}
}

/* A recording's build-id list queued at once (pk_machine_preload_build_ids): user-space
 * objects with a build-id only, at most PK_PRELOAD_LISTED_MAX of them; nothing without
 * preload; the object queued this way gives the same symbols at its first use. */
static void test_preload_listed(void **state)
{
	(void)state;
	char exe[PATH_MAX];
	uint64_t bias = self_exe(exe);
	uint64_t addr = (uint64_t)(uintptr_t)test_preload_listed - bias;
	enum { NR = PK_PRELOAD_LISTED_MAX + 8 };
	static struct pk_data_build_id ids[NR + 2];
	static char names[NR][64];
	memset(ids, 0, sizeof(ids));
	size_t bl = PK_BUILD_ID_MAX;
	assert_int_equal(pk_build_id__read(exe, ids[0].build_id, &bl), 0);
	ids[0].build_id_size = (uint8_t)bl;
	ids[0].cpumode = PERF_RECORD_MISC_USER;
	ids[0].filename = exe;
	/* a kernel-mode entry (a module's file) is not queued */
	ids[1] = ids[0];
	ids[1].cpumode = PERF_RECORD_MISC_KERNEL;
	ids[1].filename = "/nonexistent/mod.ko";
	for (size_t i = 2; i < NR + 2; i++) {
		ids[i] = ids[0];
		snprintf(names[i - 2], sizeof(names[0]), "/nonexistent/lib%zu.so", i);
		ids[i].filename = names[i - 2];
	}
	for (int on = 0; on < 2; on++) {
		PK_OPTS(pk_machine_opts, o, .preload = on, .buildid_dir = "");
		struct pk_machine *m = pk_machine__new(&o);
		assert_non_null(m);
		for (size_t i = 0; i < NR + 2; i++)
			assert_int_equal(pk_machine__add_build_id(m, ids[i].filename,
								  ids[i].build_id,
								  ids[i].build_id_size), 0);
		pk_machine_preload_build_ids(m, ids, NR + 2);
		size_t queued = 0;
		for (size_t i = 0; i < NR + 2; i++) {
			struct pk_dso *d = pk_machine__dso(m, ids[i].filename);
			assert_non_null(d);
			if (pk_preload_state(d) != PK_PRE_NONE) {
				assert_int_equal(ids[i].cpumode, PERF_RECORD_MISC_USER);
				queued++;
			}
		}
		assert_int_equal(queued, on ? PK_PRELOAD_LISTED_MAX : 0);
		struct pk_dso *d = preload_map(m, exe, false);
		uint64_t fs = 0, fz = 0;
		assert_string_equal(pk_dso__symbol(d, addr, &fs, &fz), "test_preload_listed");
		assert_int_equal(d->load_err, 0);
		pk_machine__free(m);
	}
}

/* pk_machine__trim: an object's symbol table is freed once no live thread has mapped it
 * for more than `idle` calls, read again when an address of it is looked up; one whose
 * code was read (its file open) keeps it; names are packed into one block at the load. */
static void test_trim(void **state)
{
	(void)state;
	char exe[PATH_MAX];
	uint64_t bias = self_exe(exe);
	uint64_t addr = (uint64_t)(uintptr_t)test_trim - bias;
	PK_OPTS(pk_machine_opts, o, .close_files = true, .buildid_dir = "");
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	assert_int_equal(pk_machine__trim(NULL, 0), 0);
	assert_int_equal(pk_machine__comm(m, 100, 100, "prog", true), 0);
	mmap_user(m, 100, 100, 0x400000, 0x100000, 0, exe);
	struct pk_dso *d = pk_machine__dso(m, exe);
	assert_non_null(d);
	uint64_t fs = 0, fz = 0;
	assert_string_equal(pk_dso__symbol(d, addr, &fs, &fz), "test_trim");
	uint64_t fs0 = fs, fz0 = fz;
	assert_non_null(d->syms);
	/* packed: the names' bytes, and a small block for the name looked up since (the
	 * chunks' headers aside) */
	size_t names = 0;
	for (size_t i = 0; i < d->nr_syms; i++)
		names += strlen(d->syms[i].name) + 1;
	for (size_t i = 0; i < d->nr_dsyms; i++)
		names += strlen(d->dsyms[i].name) + 1;
	assert_true(pk_arena_size(&d->arena) <= names + 1024 + 128);
	/* mapped by a live thread: kept however often it is asked */
	for (int i = 0; i < 4; i++)
		assert_int_equal(pk_machine__trim(m, 1), 0);
	assert_non_null(d->syms);
	/* its last process exits: kept for `idle` calls, then freed */
	assert_int_equal(pk_machine__exit(m, 100, 100), 0);
	assert_int_equal(pk_machine__trim(m, 1), 0);
	assert_non_null(d->syms);
	assert_string_equal(dso_at(m, 100, 100, 0x400000), exe); /* (late samples) */
	assert_int_equal(pk_machine__trim(m, 1), 1);
	assert_null(d->syms);
	/* the dead thread's maps are let go with it, its name stays */
	assert_string_equal(dso_at(m, 100, 100, 0x400000), "-");
	assert_string_equal(pk_machine__comm_of(m, 100), "prog");
	assert_null(d->arena.head);
	assert_int_equal(pk_machine__trim(m, 1), 0); /* (nothing left to free) */
	/* read again on demand: the same answer */
	fs = fz = 0;
	assert_string_equal(pk_dso__symbol(d, addr, &fs, &fz), "test_trim");
	assert_int_equal(fs, fs0);
	assert_int_equal(fz, fz0);
	assert_non_null(d->syms);
	/* freed once already: unmapped, it now waits twice as long (4 calls) */
	for (int i = 0; i < 3; i++)
		assert_int_equal(pk_machine__trim(m, 1), 0);
	assert_int_equal(pk_machine__trim(m, 1), 1);
	assert_null(d->syms);
	assert_string_equal(pk_dso__symbol(d, addr, &fs, &fz), "test_trim");
	/* a process mapping it again keeps it */
	assert_int_equal(pk_machine__comm(m, 200, 200, "prog", true), 0);
	mmap_user(m, 200, 200, 0x400000, 0x100000, 0, exe);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pk_machine__trim(m, 0), 0);
	assert_non_null(d->syms);
	/* once its code was read (its file open for that), it is kept even unmapped */
	uint8_t buf[16];
	uint16_t mach = 0;
	assert_int_equal(pk_dso__read(d, addr, buf, sizeof(buf), &mach), (long)sizeof(buf));
	assert_int_equal(pk_machine__exit(m, 200, 200), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pk_machine__trim(m, 0), 0);
	assert_non_null(d->syms);
	pk_machine__free(m);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_exec_mmap),
		cmocka_unit_test(test_threads_share_maps),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_kernel_maps),
		cmocka_unit_test(test_process_records),
		cmocka_unit_test(test_callchain_fp),
		cmocka_unit_test(test_maps_gen),
		cmocka_unit_test(test_no_data_symbols),
		cmocka_unit_test(test_close_files),
		cmocka_unit_test(test_preload),
		cmocka_unit_test(test_preload_queue_grows),
		cmocka_unit_test(test_preload_listed),
		cmocka_unit_test(test_preload_dso),
		cmocka_unit_test(test_preload_lines),
		cmocka_unit_test(test_preload_call),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_ksymbol),
		cmocka_unit_test(test_kernel_outside_maps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
