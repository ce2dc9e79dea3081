/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol: DWARF unwinding by the architecture of the recorded process. The register
 * blocks perf writes for x86-64 and arm64 (sample_regs_user, perf_regs.h numbering) map
 * to the DWARF registers libdwfl starts from; an arm64 stack is unwound on this host from
 * a synthetic sample of an arm64 ELF file (built with clang and lld when present); a
 * process of an architecture not unwound gets its sampled address as the only user frame
 * and one warning.
 */
#include <errno.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "symbol/symbol-internal.h"
#include "testutil.h"

/* perf_regs.h: arch/arm64 PERF_REG_ARM64_{X0..X28,X29,LR,SP,PC} = 0..32 */
#define ARM64_NREGS 33
/* arch/x86 PERF_REG_X86_{AX,BX,CX,DX,SI,DI,BP,SP,IP,...,R8..R15} */
enum { X_AX, X_BX, X_CX, X_DX, X_SI, X_DI, X_BP, X_SP, X_IP, X_R8 = 16, X_R15 = 23 };

static void test_arm64_regs_full_mask(void **state)
{
	(void)state;
	uint64_t vals[ARM64_NREGS];
	for (int i = 0; i < ARM64_NREGS; i++)
		vals[i] = 0x1000 + (uint64_t)i;
	struct pk_sample_regs rg = { .abi = 2, .mask = (1ULL << ARM64_NREGS) - 1,
				     .nr = ARM64_NREGS, .regs = vals };
	uint64_t dw[64], pc;
	int n = pk_uw_initial_regs(EM_AARCH64, &rg, dw, 64, &pc);
	/* DWARF x0..x30 = 0..30, sp = 31; the pc separately */
	assert_int_equal(n, 32);
	for (int i = 0; i < 32; i++)
		assert_int_equal(dw[i], 0x1000 + (uint64_t)i);
	assert_int_equal(pc, 0x1000 + 32);
}

static void test_arm64_regs_sparse_mask(void **state)
{
	(void)state;
	/* only x29, lr, sp and pc sampled: values in ascending register-bit order */
	uint64_t vals[] = { 0x29, 0x30, 0x31, 0x32 };
	struct pk_sample_regs rg = { .abi = 2, .mask = 0xfULL << 29, .nr = 4, .regs = vals };
	uint64_t dw[64], pc;
	assert_int_equal(pk_uw_initial_regs(EM_AARCH64, &rg, dw, 64, &pc), 32);
	for (int i = 0; i < 29; i++)
		assert_int_equal(dw[i], 0);
	assert_int_equal(dw[29], 0x29);
	assert_int_equal(dw[30], 0x30);
	assert_int_equal(dw[31], 0x31);
	assert_int_equal(pc, 0x32);
	/* too small an output, and a machine not unwound */
	assert_int_equal(pk_uw_initial_regs(EM_AARCH64, &rg, dw, 31, &pc), -EINVAL);
	assert_int_equal(pk_uw_initial_regs(EM_RISCV, &rg, dw, 64, &pc), -EOPNOTSUPP);
}

static void test_x86_64_regs(void **state)
{
	(void)state;
	/* perf's x86-64 DWARF mask: AX..R15 without the segment registers (0xff0fff) */
	uint64_t mask = 0xff0fffULL, vals[24];
	uint32_t nr = 0;
	for (int r = 0; r < 24; r++)
		if (mask >> r & 1)
			vals[nr++] = 0x100 + (uint64_t)r;
	struct pk_sample_regs rg = { .abi = 2, .mask = mask, .nr = nr, .regs = vals };
	uint64_t dw[64], pc;
	assert_int_equal(pk_uw_initial_regs(EM_X86_64, &rg, dw, 64, &pc), 17);
	/* DWARF rax rdx rcx rbx rsi rdi rbp rsp r8..r15 ra */
	const int want[17] = { X_AX, X_DX, X_CX, X_BX, X_SI, X_DI, X_BP, X_SP,
			       X_R8, X_R8 + 1, X_R8 + 2, X_R8 + 3, X_R8 + 4, X_R8 + 5, X_R8 + 6,
			       X_R15, X_IP };
	for (int i = 0; i < 17; i++)
		assert_int_equal(dw[i], 0x100 + (uint64_t)want[i]);
	assert_int_equal(pc, 0x100 + X_IP);
}

/*
 * pk_c (a leaf: the return address in lr) <- pk_b (saves x29/lr with stp, 16 bytes)
 * <- pk_a (32-byte frame, lr at sp+24) <- _start (lr undefined: the end). Local calls
 * (the symbols hidden), so no PLT in between.
 */
static const char arm64_src[] =
	"\t.text\n"
	"\t.globl pk_c, pk_b, pk_a, pk_start, pk_b_ret, pk_a_ret, pk_start_ret\n"
	"\t.hidden pk_c, pk_b, pk_a, pk_start\n"
	"pk_c:\n\t.cfi_startproc\n\tnop\n\tnop\n\tret\n\t.cfi_endproc\n"
	"pk_b:\n\t.cfi_startproc\n"
	"\tstp x29, x30, [sp, #-16]!\n\t.cfi_def_cfa_offset 16\n"
	"\t.cfi_offset 29, -16\n\t.cfi_offset 30, -8\n"
	"\tmov x29, sp\n\tbl pk_c\npk_b_ret:\n\tldp x29, x30, [sp], #16\n"
	"\t.cfi_restore 30\n\t.cfi_restore 29\n\t.cfi_def_cfa_offset 0\n\tret\n\t.cfi_endproc\n"
	"pk_a:\n\t.cfi_startproc\n"
	"\tsub sp, sp, #32\n\t.cfi_def_cfa_offset 32\n"
	"\tstr x30, [sp, #24]\n\t.cfi_offset 30, -8\n"
	"\tbl pk_b\npk_a_ret:\n\tldr x30, [sp, #24]\n\tadd sp, sp, #32\n"
	"\t.cfi_def_cfa_offset 0\n\tret\n\t.cfi_endproc\n"
	"pk_start:\n\t.cfi_startproc\n\t.cfi_undefined 30\n"
	"\tbl pk_a\npk_start_ret:\n\tb pk_start\n\t.cfi_endproc\n";

/* build a shared object for a clang target from assembly (target NULL: this host's cc
 * and linker); false if this host cannot */
static bool build_so(const char *target, const char *src, const char *out)
{
	FILE *f = fopen("a.S", "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	if (!target)
		return pk_test_sh("cc -shared -nostdlib -Wl,--eh-frame-hdr -o %s a.S 2>/dev/null",
				  out) == 0;
	return pk_test_sh("clang --target=%s -c -o a.o a.S 2>/dev/null && "
			  "ld.lld -shared --eh-frame-hdr -o %s a.o 2>/dev/null", target, out) == 0;
}

/* a symbol's address in an ELF file (nm), 0 if absent */
static uint64_t sym_addr(const char *file, const char *name)
{
	char cmd[512], line[256];
	snprintf(cmd, sizeof(cmd), "nm %s", file);
	FILE *p = popen(cmd, "r");
	uint64_t v = 0;
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char t, n[128];
		if (sscanf(line, "%llx %c %127s", &a, &t, n) == 3 && !strcmp(n, name))
			v = a;
	}
	pclose(p);
	return v;
}

/* the executable PT_LOAD's address and file offset (readelf), false if none */
static bool exec_segment(const char *file, uint64_t *vaddr, uint64_t *off)
{
	char cmd[512], line[256];
	snprintf(cmd, sizeof(cmd), "readelf -lW %s", file);
	FILE *p = popen(cmd, "r");
	bool found = false;
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long o, v;
		if (!found && strstr(line, " R E ") &&
		    sscanf(line, " LOAD 0x%llx 0x%llx", &o, &v) == 2) {
			*off = o;
			*vaddr = v;
			found = true;
		}
	}
	pclose(p);
	return found;
}

static struct pk_machine *machine_knob(const char *so, uint64_t base, bool libdwfl)
{
	PK_OPTS(pk_machine_opts, o, .host = false, .buildid_dir = "",
		.unwind_libdwfl_only = libdwfl);
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	char path[4096];
	assert_non_null(realpath(so, path));
	assert_int_equal(pk_machine__comm(m, 7, 7, "prog", false), 0);
	/* the text segment's mapping as ld.so makes it with 4 KiB pages: from its offset
	 * and address rounded down (lld: file page 0, where every segment starts) */
	uint64_t vaddr = 0, off = 0;
	assert_true(exec_segment(so, &vaddr, &off));
	struct pk_mmap_event ev = { .pid = 7, .tid = 7, .addr = base + (vaddr & ~0xfffULL),
				    .len = 0x1000, .pgoff = off & ~0xfffULL,
				    .prot = PROT_READ | PROT_EXEC, .filename = path };
	assert_int_equal(pk_machine__mmap(m, &ev), 0);
	return m;
}

static struct pk_machine *machine_with(const char *so, uint64_t base)
{
	return machine_knob(so, base, false);
}

/* a user-mode sample of pid 7 with a register block and a stack copy of dyn bytes (of
 * size asked for) */
static struct pk_sample user_sample(uint64_t *regs, uint32_t nregs, uint64_t ip,
				    const uint64_t *stack, uint64_t dyn, uint64_t size)
{
	struct pk_sample s = { 0 };
	s.type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	s.cpumode = PK_CPUMODE_USER;
	s.pid = s.tid = 7;
	s.ip = ip;
	s.regs_user = (struct pk_sample_regs){ .abi = PERF_SAMPLE_REGS_ABI_64,
					       .mask = (1ULL << nregs) - 1, .nr = nregs,
					       .regs = regs };
	s.stack_user.size = size;
	s.stack_user.dyn_size = dyn;
	s.stack_user.data = stack;
	return s;
}

/* unwind s with a new machine holding so; with the cached rows or libdwfl only */
static int unwind_with(const char *so, uint64_t base, const struct pk_sample *s, bool libdwfl,
		       uint64_t *ips, size_t max)
{
	struct pk_machine *m = machine_knob(so, base, libdwfl);
	int n = pk_machine__unwind(m, s, ips, max);
	pk_machine__free(m);
	return n;
}

static void test_arm64_unwind(void **state)
{
	(void)state;
	if (!build_so("aarch64-linux-gnu", arm64_src, "arm64.so"))
		PK_SKIP("clang cannot assemble for aarch64 or ld.lld is missing");
	uint64_t c = sym_addr("arm64.so", "pk_c"), bret = sym_addr("arm64.so", "pk_b_ret"),
		 aret = sym_addr("arm64.so", "pk_a_ret"),
		 sret = sym_addr("arm64.so", "pk_start_ret");
	assert_true(c && bret && aret && sret);
	const uint64_t base = 0x7f0000000000ULL, sp = 0x7ffff0000000ULL;

	uint64_t regs[ARM64_NREGS] = { 0 };
	regs[29] = 0x1234;              /* x29: not a frame pointer pk_b's rules need */
	regs[30] = base + bret;         /* lr: into pk_b */
	regs[31] = sp;
	regs[32] = base + c + 4;        /* pc: pk_c's second instruction */
	/* pk_b's frame {x29, lr}, then pk_a's 32 bytes with lr at +24, then the rest of
	 * the stack up to its end (the kernel copied less than asked) */
	uint64_t stack[8] = { 0x5678, base + aret, 0, 0, 0, base + sret, 0, 0 };
	struct pk_sample s = user_sample(regs, ARM64_NREGS, regs[32], stack, 64, 128);
	uint64_t ips[16];
	assert_int_equal(unwind_with("arm64.so", base, &s, false, ips, 16), 4);
	assert_int_equal(ips[0], base + c + 4);
	assert_int_equal(ips[1], base + bret - 1);
	assert_int_equal(ips[2], base + aret - 1);
	assert_int_equal(ips[3], base + sret - 1);
}

/*
 * x86-64, through the cached rows and through libdwfl: pk_c (leaf) <- pk_b (pushes rbx)
 * <- pk_a (32-byte frame) <- pk_start (rip undefined: the end).
 */
static const char x86_src[] =
	"\t.text\n"
	"\t.globl pk_c, pk_b, pk_a, pk_start, pk_b_ret, pk_a_ret, pk_start_ret\n"
	"\t.hidden pk_c, pk_b, pk_a, pk_start\n"
	"pk_c:\n\t.cfi_startproc\n\tnop\n\tnop\n\tret\n\t.cfi_endproc\n"
	"pk_b:\n\t.cfi_startproc\n\tpush %rbx\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset rbx, -16\n"
	"\tcall pk_c\npk_b_ret:\n\tpop %rbx\n\t.cfi_def_cfa_offset 8\n\tret\n\t.cfi_endproc\n"
	"pk_a:\n\t.cfi_startproc\n\tsub $24, %rsp\n\t.cfi_def_cfa_offset 32\n"
	"\tcall pk_b\npk_a_ret:\n\tadd $24, %rsp\n\t.cfi_def_cfa_offset 8\n\tret\n\t.cfi_endproc\n"
	"pk_start:\n\t.cfi_startproc\n\t.cfi_undefined rip\n"
	"\tcall pk_a\npk_start_ret:\n\tjmp pk_start\n\t.cfi_endproc\n";

static void test_x86_64_stack_end_like_perf(void **state)
{
	(void)state;
	if (!build_so(NULL, x86_src, "x86.so"))
		PK_SKIP("cc cannot build an x86-64 shared object here");
	uint64_t c = sym_addr("x86.so", "pk_c"), bret = sym_addr("x86.so", "pk_b_ret"),
		 aret = sym_addr("x86.so", "pk_a_ret"), sret = sym_addr("x86.so", "pk_start_ret");
	assert_true(c && bret && aret && sret);
	const uint64_t base = 0x7f0000000000ULL, sp = 0x7ffff0000000ULL;
	uint64_t vals[24] = { 0 };
	vals[X_SP] = sp;
	vals[X_IP] = base + c + 1;
	vals[X_BP] = 0x1234;
	/* pk_c's return address, pk_b's rbx and return address, pk_a's 24 bytes and
	 * return address, one more word */
	uint64_t stack[8] = { base + bret, 0x77, base + aret, 0, 0, 0, base + sret, 0 };
	uint64_t ips[16];
	for (int libdwfl = 0; libdwfl < 2; libdwfl++) {
		/* the whole stack, up to where the kernel's copy stopped */
		struct pk_sample s = user_sample(vals, 24, vals[X_IP], stack, 64, 128);
		assert_int_equal(unwind_with("x86.so", base, &s, libdwfl, ips, 16), 4);
		assert_int_equal(ips[0], base + c + 1);
		assert_int_equal(ips[1], base + bret - 1);
		assert_int_equal(ips[2], base + aret - 1);
		assert_int_equal(ips[3], base + sret - 1);
		/* a copy of all it asked for that ends at pk_a's return address: perf reads
		 * that last word, as anything past the copy, as 0 from the [stack] map and
		 * shows a frame ffffffffffffffff instead of pk_start */
		s = user_sample(vals, 24, vals[X_IP], stack, 56, 56);
		assert_int_equal(unwind_with("x86.so", base, &s, libdwfl, ips, 16), 4);
		assert_int_equal(ips[2], base + aret - 1);
		assert_int_equal(ips[3], UINT64_MAX);
		/* cut inside pk_a's frame: the same */
		s = user_sample(vals, 24, vals[X_IP], stack, 40, 40);
		assert_int_equal(unwind_with("x86.so", base, &s, libdwfl, ips, 16), 4);
		assert_int_equal(ips[3], UINT64_MAX);
		/* the copy ends at the end of the stack mapping (less than asked): nothing
		 * is mapped past it, and the walk just stops */
		s = user_sample(vals, 24, vals[X_IP], stack, 40, 128);
		assert_int_equal(unwind_with("x86.so", base, &s, libdwfl, ips, 16), 3);
		assert_int_equal(ips[2], base + aret - 1);
	}
}

static void test_unsupported_arch_leaf_and_warning(void **state)
{
	(void)state;
	static const char src[] = "\t.text\n\t.globl f\nf:\n\t.cfi_startproc\n\tnop\n\tret\n"
				  "\t.cfi_endproc\n";
	if (!build_so("riscv64-linux-gnu", src, "riscv.so"))
		PK_SKIP("clang cannot assemble for riscv64 or ld.lld is missing");
	uint64_t f = sym_addr("riscv.so", "f");
	const uint64_t base = 0x3f00000000ULL;
	struct pk_machine *m = machine_with("riscv.so", base);
	uint64_t regs[33] = { 0 }, stack[4] = { 0 };
	regs[0] = base + f;
	struct pk_sample s = user_sample(regs, 33, base + f, stack, sizeof(stack), sizeof(stack));
	pk_test_quiet_log();
	pk_test_log_clear();
	uint64_t ips[8];
	assert_int_equal(pk_machine__unwind(m, &s, ips, 8), -EOPNOTSUPP);
	struct pk_chain_entry ch[8];
	assert_int_equal(pk_machine__callchain(m, &s, ch, 8), 1);
	assert_int_equal(ch[0].ip, base + f);
	const char *log = pk_test_log_text();
	assert_non_null(strstr(log, "riscv"));
	/* said once */
	const char *first = strstr(log, "not unwound");
	assert_non_null(first);
	assert_null(strstr(first + 1, "not unwound"));
	pk_machine__free(m);
}

/*
 * Which segment a mapping's pgoff names in lld's packed layout (pk_dso_map_vaddr): the
 * executable one starting in file page 0 (the r-- one starts there too), and for a
 * mapping of the text's last page (split by mprotect) the text, although the next
 * segment starts in that page.
 */
static void test_map_vaddr_packed_segments(void **state)
{
	(void)state;
	static const char src[] = "\t.text\n\t.globl f\nf:\n\tret\n\t.space 0x2100\n"
				  "\t.data\n\t.quad 1\n";
	if (!build_so("x86_64-linux-gnu", src, "packed.so"))
		PK_SKIP("clang or ld.lld is missing");
	uint64_t vaddr = 0, off = 0;
	assert_true(exec_segment("packed.so", &vaddr, &off));
	uint64_t last = (off + 0x2100) & ~0xfffULL;
	if (!(off & 0xfff) || last == (off & ~0xfffULL))
		PK_SKIP("this lld did not pack the segments");
	const uint64_t base = 0x7f0000000000ULL;
	struct pk_machine *m = machine_with("packed.so", base);
	struct pk_addr_loc loc;
	assert_int_equal(pk_machine__resolve(m, 7, 7, base + vaddr, PK_CPUMODE_USER, &loc), 0);
	assert_non_null(loc.dso);
	assert_int_equal(pk_dso_map_vaddr(loc.dso, off & ~0xfffULL), vaddr - (off & 0xfff));
	assert_int_equal(pk_dso_map_vaddr(loc.dso, last), vaddr - (off - last));
	pk_machine__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm64_regs_full_mask),
		cmocka_unit_test(test_arm64_regs_sparse_mask),
		cmocka_unit_test(test_x86_64_regs),
		cmocka_unit_test(test_map_vaddr_packed_segments),
		cmocka_unit_test(test_arm64_unwind),
		cmocka_unit_test(test_x86_64_stack_end_like_perf),
		cmocka_unit_test(test_unsupported_arch_leaf_and_warning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
