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

/* build a shared object for a clang target from assembly; false if this host cannot */
static bool build_so(const char *target, const char *src, const char *out)
{
	FILE *f = fopen("a.S", "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
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

static struct pk_machine *machine_with(const char *so, uint64_t base, uint64_t text_off)
{
	PK_OPTS(pk_machine_opts, o, .host = false, .buildid_dir = "");
	struct pk_machine *m = pk_machine__new(&o);
	assert_non_null(m);
	char path[4096];
	assert_non_null(realpath(so, path));
	assert_int_equal(pk_machine__comm(m, 7, 7, "prog", false), 0);
	/* the text segment's mapping as ld.so makes it with 4 KiB pages: from its offset
	 * rounded down (lld: file page 0, where every segment of this file starts) */
	struct pk_mmap_event ev = { .pid = 7, .tid = 7, .addr = base + text_off,
				    .len = 0x1000, .pgoff = 0, .prot = PROT_READ | PROT_EXEC,
				    .filename = path };
	assert_int_equal(pk_machine__mmap(m, &ev), 0);
	return m;
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
	struct pk_machine *m = machine_with("arm64.so", base, c & ~0xfffULL);

	uint64_t regs[ARM64_NREGS] = { 0 };
	regs[29] = 0x1234;              /* x29: not a frame pointer pk_b's rules need */
	regs[30] = base + bret;         /* lr: into pk_b */
	regs[31] = sp;
	regs[32] = base + c + 4;        /* pc: pk_c's second instruction */
	/* pk_b's frame {x29, lr}, then pk_a's 32 bytes with lr at +24 */
	uint64_t stack[6] = { 0x5678, base + aret, 0, 0, 0, base + sret };
	struct pk_sample s = { 0 };
	s.type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	s.cpumode = PK_CPUMODE_USER;
	s.pid = s.tid = 7;
	s.ip = regs[32];
	s.regs_user = (struct pk_sample_regs){ .abi = PERF_SAMPLE_REGS_ABI_64,
					       .mask = (1ULL << ARM64_NREGS) - 1,
					       .nr = ARM64_NREGS, .regs = regs };
	s.stack_user.size = sizeof(stack);
	s.stack_user.dyn_size = sizeof(stack);
	s.stack_user.data = stack;
	uint64_t ips[16];
	int n = pk_machine__unwind(m, &s, ips, 16);
	assert_int_equal(n, 4);
	assert_int_equal(ips[0], base + c + 4);
	assert_int_equal(ips[1], base + bret - 1);
	assert_int_equal(ips[2], base + aret - 1);
	assert_int_equal(ips[3], base + sret - 1);
	pk_machine__free(m);
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
	struct pk_machine *m = machine_with("riscv.so", base, f & ~0xfffULL);
	uint64_t regs[33] = { 0 }, stack[4] = { 0 };
	regs[0] = base + f;
	struct pk_sample s = { 0 };
	s.type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	s.cpumode = PK_CPUMODE_USER;
	s.pid = s.tid = 7;
	s.ip = base + f;
	s.regs_user = (struct pk_sample_regs){ .abi = PERF_SAMPLE_REGS_ABI_64,
					       .mask = (1ULL << 33) - 1, .nr = 33, .regs = regs };
	s.stack_user.size = s.stack_user.dyn_size = sizeof(stack);
	s.stack_user.data = stack;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm64_regs_full_mask),
		cmocka_unit_test(test_arm64_regs_sparse_mask),
		cmocka_unit_test(test_x86_64_regs),
		cmocka_unit_test(test_arm64_unwind),
		cmocka_unit_test(test_unsupported_arch_leaf_and_warning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
