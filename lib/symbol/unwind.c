/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/unwind.c - DWARF unwinding of `--call-graph dwarf` samples with libdwfl's
 * thread/frame API, and call-chain assembly.
 *
 * perf builds a new Dwfl for every sample (re-opening every ELF file and re-parsing its
 * CFI); we keep one Dwfl per process (per map set), report each mapped ELF once, attach
 * one thread-state callback set to it, and only swap the per-sample registers and stack
 * copy that the callbacks read. Modules of maps added later are reported incrementally.
 */
#include <dwarf.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "internal.h"
#include "symbol-internal.h"
#include "core/oahash.h"

#define PK_UNWIND_MAX_FRAMES 512

struct pk_reported {
	struct pk_dso *dso;
	uint64_t base;
};

/*
 * The CFI row of one address, reduced to what x86-64 code uses: the CFA as register +
 * offset and, per register, undefined / same value / saved at CFA+N / CFA+N / another
 * register. Anything else (DWARF expressions: PLT entries, signal trampolines) makes the
 * row "complex", and the sample goes through libdwfl.
 */
enum { PK_RR_UNDEF, PK_RR_SAME, PK_RR_OFFSET, PK_RR_VAL_OFFSET, PK_RR_REG };
enum { PK_ROW_EMPTY, PK_ROW_CFI, PK_ROW_NOCFI, PK_ROW_COMPLEX };
#define PK_UW_NREGS 17          /* x86-64: DWARF registers 0..16, 16 = return address */
#define PK_UW_RA 16
#define PK_UW_NONE 0xff
#define PK_UW_ROWS_MAX 16384    /* per process; the table is cleared when full */

struct pk_cfi_rule {
	uint8_t kind, reg;
	int32_t off;
};

struct pk_cfi_row {
	uint64_t pc;            /* the lookup address (the key) */
	uint8_t status, signal, cfa_reg;
	int32_t cfa_off;
	struct pk_cfi_rule r[PK_UW_NREGS];
};

/* One frame's register state, as libdwfl keeps it: a value and a "set" bit per
 * register; the pc separately (the frame-pointer step sets it without register 16). */
struct pk_uw_state {
	uint64_t regs[PK_UW_NREGS];
	uint32_t mask;
	uint64_t pc;
	bool initial, signal;
};

struct pk_unwind_ctx {
	Dwfl *dwfl;
	uint64_t gen;           /* map set generation last reported */
	bool attached;
	bool slow_only;         /* PERFKIT_UNWIND=libdwfl: never the cached rows */
	struct pk_machine *m;   /* for statistics */
	const struct pk_uw_arch *arch; /* of the sample being unwound */
	struct pk_cfi_row *rows;
	size_t nrows, caprows;
	/* DWARF register -> index in the sample's register block, for regs_mask */
	uint64_t regs_mask;
	int8_t regs_idx[PK_UW_NREGS];
	struct pk_reported *rep;
	size_t nrep, caprep;
	/* per sample */
	const struct pk_sample *s;
	uint64_t sp;
	const uint8_t *stack;
	uint64_t stack_len;
	bool stack_cut;         /* the copy holds all it asked for: the stack goes on */
	bool beyond;            /* a read past the copy was answered 0 (perf's way) */
	uint32_t tid;
	uint64_t *ips;
	size_t nr, max;
};

void pk_unwind_ctx_free(struct pk_unwind_ctx *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u->rows);
	free(u->rep);
	free(u);
}

/* x86_64: perf_regs.h order -> DWARF register numbers 0..16 (16 = return address). */
enum {
	PK_X86_AX, PK_X86_BX, PK_X86_CX, PK_X86_DX, PK_X86_SI, PK_X86_DI, PK_X86_BP, PK_X86_SP,
	PK_X86_IP, PK_X86_FLAGS, PK_X86_CS, PK_X86_SS, PK_X86_DS, PK_X86_ES, PK_X86_FS,
	PK_X86_GS, PK_X86_R8, PK_X86_R9, PK_X86_R10, PK_X86_R11, PK_X86_R12, PK_X86_R13,
	PK_X86_R14, PK_X86_R15,
};
static const uint8_t pk_x86_64_dwarf_to_perf[17] = {
	PK_X86_AX, PK_X86_DX, PK_X86_CX, PK_X86_BX, PK_X86_SI, PK_X86_DI, PK_X86_BP, PK_X86_SP,
	PK_X86_R8, PK_X86_R9, PK_X86_R10, PK_X86_R11, PK_X86_R12, PK_X86_R13, PK_X86_R14,
	PK_X86_R15, PK_X86_IP,
};

/* arm64: perf_regs.h numbers x0..x30 (x30 = lr) and sp as 0..31 and pc as 32; DWARF
 * numbers x0..x30 and sp the same way (the pc has none: libdwfl takes it apart). */
enum { PK_ARM64_FP = 29, PK_ARM64_SP = 31, PK_ARM64_PC = 32 };
static const uint8_t pk_arm64_dwarf_to_perf[32] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};

/*
 * How a user register block maps to what the unwinders read, by the ELF machine of the
 * process's code (perf records the registers of the architecture it runs on, and a file
 * from an arm64 machine is read on x86 hosts too). The cached walk models the x86-64
 * register file only; arm64 samples are unwound by libdwfl, as perf does.
 */
struct pk_uw_arch {
	uint16_t em;
	uint8_t nregs;                  /* DWARF registers 0..nregs-1 handed to libdwfl */
	const uint8_t *dwarf_to_perf;   /* the perf_regs.h number of each */
	uint8_t ip, sp, fp;             /* perf_regs.h numbers */
	bool cached;                    /* the cached-row walk applies */
};

static const struct pk_uw_arch pk_uw_arches[] = {
	{ EM_X86_64, 17, pk_x86_64_dwarf_to_perf, PK_X86_IP, PK_X86_SP, PK_X86_BP, true },
	{ EM_AARCH64, 32, pk_arm64_dwarf_to_perf, PK_ARM64_PC, PK_ARM64_SP, PK_ARM64_FP, false },
};

static const struct pk_uw_arch *pk_uw_arch_find(uint16_t em)
{
	for (size_t i = 0; i < PK_ARRAY_SIZE(pk_uw_arches); i++)
		if (pk_uw_arches[i].em == em)
			return &pk_uw_arches[i];
	return NULL;
}

/* Value of perf register `r` in a REGS_USER block, false if not sampled. */
static bool pk_perf_reg(const struct pk_sample_regs *rg, unsigned int r, uint64_t *v)
{
	if (r >= 64 || !(rg->mask & (1ULL << r)))
		return false;
	unsigned int idx = (unsigned int)__builtin_popcountll(rg->mask & ((1ULL << r) - 1));
	if (idx >= rg->nr)
		return false;
	*v = rg->regs[idx];
	return true;
}

int pk_uw_initial_regs(uint16_t em, const struct pk_sample_regs *rg, uint64_t *dwarf,
		       size_t max, uint64_t *pc)
{
	const struct pk_uw_arch *a = pk_uw_arch_find(em);
	if (!a)
		return -EOPNOTSUPP;
	if (!rg || !dwarf || !pc || max < a->nregs)
		return -EINVAL;
	for (unsigned int i = 0; i < a->nregs; i++) {
		uint64_t v = 0;
		pk_perf_reg(rg, a->dwarf_to_perf[i], &v);
		dwarf[i] = v;
	}
	*pc = 0;
	pk_perf_reg(rg, a->ip, pc);
	return a->nregs;
}

static pid_t pk_uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct pk_unwind_ctx *u = arg;
	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->tid;
}

static bool pk_uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct pk_unwind_ctx *u = arg;
	(void)dwfl;
	if ((uint32_t)tid != u->tid)
		return false;
	*thread_argp = u;
	return true;
}

static bool pk_uw_read_file(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	if (!mod)
		return false;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (!elf)
		return false;
	size_t rsz = 0;
	const char *raw = elf_rawfile(elf, &rsz);
	size_t phnum;
	if (!raw || elf_getphdrnum(elf, &phnum) < 0)
		return false;
	uint64_t va = addr - bias;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (va < ph.p_vaddr || ph.p_filesz < 8 || va - ph.p_vaddr > ph.p_filesz - 8)
			continue;
		uint64_t off = va - ph.p_vaddr + ph.p_offset;
		if (off > rsz || rsz - off < 8)
			return false;
		memcpy(result, raw + off, 8);
		return true;
	}
	return false;
}

/*
 * Stack reads as perf 6.1 makes them (its libunwind access_mem): a word is read from the
 * copy only if it ends before the copy's last byte (addr + 8 < end: the last word never
 * is); any other address is looked up in the thread's maps, and one without a readable
 * file - the [stack] mapping, which perf records with --call-graph dwarf - reads as 0,
 * successfully. That mapping holds the copy's last word, and when the copy holds all
 * it asked for (the stack goes on beyond it) everything past it too; when the kernel
 * copied less, the copy ends where the stack mapping does and nothing beyond is mapped.
 * libunwind takes a return address read as 0 for a frame at address 0, which perf shows
 * as ffffffffffffffff [unknown] below the last frame inside the copy; pk_unwind_user
 * adds that frame when a read here was answered 0 (the walk ends at that read: the
 * return address is the highest word of a frame).
 */
#define PK_UW_STACK_MAP_MAX (8ULL << 20)        /* the default stack limit */

static bool pk_uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct pk_unwind_ctx *u = arg;
	if (addr >= u->sp && u->stack_len >= 8) {
		uint64_t off = addr - u->sp;
		if (off < u->stack_len - 8) {
			memcpy(result, u->stack + off, 8);
			return true;
		}
		if (off < u->stack_len || (u->stack_cut && off - u->stack_len < PK_UW_STACK_MAP_MAX)) {
			*result = 0;
			u->beyond = true;
			return true;
		}
	}
	return pk_uw_read_file(dwfl, addr, result);
}

static bool pk_uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct pk_unwind_ctx *u = arg;
	uint64_t regs[64], pc;
	int n = pk_uw_initial_regs(u->arch->em, &u->s->regs_user, regs, PK_ARRAY_SIZE(regs), &pc);
	if (n <= 0)
		return false;
	Dwarf_Word w[64];
	for (int i = 0; i < n; i++)
		w[i] = regs[i];
	if (!dwfl_thread_state_registers(thread, 0, (unsigned int)n, w))
		return false;
	dwfl_thread_state_register_pc(thread, pc);
	return true;
}

static const Dwfl_Thread_Callbacks pk_uw_callbacks = {
	.next_thread = pk_uw_next_thread,
	.get_thread = pk_uw_get_thread,
	.memory_read = pk_uw_memory_read,
	.set_initial_registers = pk_uw_set_initial_registers,
};

static int pk_uw_frame(Dwfl_Frame *state, void *arg)
{
	struct pk_unwind_ctx *u = arg;
	Dwarf_Addr pc;
	bool act = false;
	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	/* a return address points after the call: step back into it (as perf does) */
	if (!act && pc)
		pc--;
	if (!pc)
		return DWARF_CB_ABORT;
	u->ips[u->nr++] = pc;
	return u->nr >= u->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/*
 * The cached path. libdwfl interprets the CFI program of every frame of every sample
 * anew (and allocates while doing it); the rules of an address never change, so each
 * address's row is computed once per process with libdw and the walk itself is a few
 * loads. It reproduces libdwfl 0.188's frame_unwind.c step by step: .eh_frame first,
 * then .debug_frame, then the backend's frame-pointer step when neither has the address;
 * registers whose rule cannot be evaluated stay unset; the pc is register 16 after a
 * CFI step; a frame is an activation (its pc not moved back into the call) if it is the
 * first, or it or the frame it unwinds to is a signal frame.
 */
static bool pk_fits_i32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* A register's rule from libdw's expression for it (dwarf_frame_register's forms). */
static bool pk_cfi_rule_of(Dwarf_Frame *fr, int regno, struct pk_cfi_rule *out)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;
	*out = (struct pk_cfi_rule){ PK_RR_UNDEF, 0, 0 };
	if (dwarf_frame_register(fr, regno, mem, &ops, &n) != 0)
		return true;            /* libdwfl leaves it unset */
	if (n == 0) {
		if (ops == NULL)
			out->kind = PK_RR_SAME;
		else if (ops != mem)
			return false;
		return true;
	}
	if (n == 1 && ops[0].atom == DW_OP_regx) {
		if (ops[0].number < PK_UW_NREGS)
			*out = (struct pk_cfi_rule){ PK_RR_REG, (uint8_t)ops[0].number, 0 };
		return true;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	size_t i = 1;
	int64_t off = 0;
	if (i < n && ops[i].atom == DW_OP_plus_uconst) {
		off = (int64_t)ops[i].number;
		i++;
	}
	bool value = false;
	if (i < n && ops[i].atom == DW_OP_stack_value) {
		value = true;
		i++;
	}
	if (i != n || !pk_fits_i32(off))
		return false;
	*out = (struct pk_cfi_rule){ value ? PK_RR_VAL_OFFSET : PK_RR_OFFSET, 0, (int32_t)off };
	return true;
}

static void pk_cfi_row_fill(struct pk_unwind_ctx *u, uint64_t pc, struct pk_cfi_row *row)
{
	memset(row, 0, sizeof(*row));
	row->pc = pc;
	row->status = PK_ROW_NOCFI;
	Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, pc);
	if (!mod)
		return;
	Dwarf_Addr bias = 0;
	Dwarf_Frame *fr = NULL;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0) {
		fr = NULL;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0)
			return;
	}
	Dwarf_Addr start, end;
	bool sig = false;
	row->status = PK_ROW_COMPLEX;
	if (dwarf_frame_info(fr, &start, &end, &sig) != PK_UW_RA)
		goto out;
	row->signal = sig;
	Dwarf_Op *ops = NULL;
	size_t n = 0;
	row->cfa_reg = PK_UW_NONE;
	if (dwarf_frame_cfa(fr, &ops, &n) == 0 && ops && n) {
		if (n != 1 || ops[0].atom != DW_OP_bregx)
			goto out;
		int64_t off = (int64_t)ops[0].number2;
		if (!pk_fits_i32(off))
			goto out;
		if (ops[0].number < PK_UW_NREGS) {
			row->cfa_reg = (uint8_t)ops[0].number;
			row->cfa_off = (int32_t)off;
		}
	}
	for (int r = 0; r < PK_UW_NREGS; r++)
		if (!pk_cfi_rule_of(fr, r, &row->r[r]))
			goto out;
	row->status = PK_ROW_CFI;
out:
	free(fr);
}

static inline size_t pk_row_slot(uint64_t pc, size_t cap)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

static bool pk_row_empty(const struct pk_cfi_row *r)
{
	return r->status == PK_ROW_EMPTY;
}

static size_t pk_row_home(const struct pk_cfi_row *r, size_t cap)
{
	return pk_row_slot(r->pc, cap);
}

PK_DEFINE_OA_REHASH(pk_rows_rehash, struct pk_cfi_row, pk_row_empty, pk_row_home)

/* The row for lookup address pc; NULL only when out of memory. */
static const struct pk_cfi_row *pk_cfi_row_get(struct pk_unwind_ctx *u, uint64_t pc)
{
	if (u->caprows) {
		for (size_t i = pk_row_slot(pc, u->caprows);; i = (i + 1) & (u->caprows - 1)) {
			struct pk_cfi_row *r = &u->rows[i];
			if (r->status == PK_ROW_EMPTY)
				break;
			if (r->pc == pc)
				return r;
		}
	}
	if ((u->nrows + 1) * 4 > u->caprows * 3) {
		size_t nc = u->caprows ? u->caprows * 2 : 256;
		if (nc > PK_UW_ROWS_MAX) {      /* bounded: start over */
			memset(u->rows, 0, u->caprows * sizeof(*u->rows));
			u->nrows = 0;
		} else {
			struct pk_cfi_row *nr = pk_rows_rehash(u->rows, u->caprows, nc);
			if (!nr)
				return NULL;
			free(u->rows);
			u->rows = nr;
			u->caprows = nc;
		}
	}
	size_t i = pk_row_slot(pc, u->caprows);
	while (u->rows[i].status != PK_ROW_EMPTY)
		i = (i + 1) & (u->caprows - 1);
	pk_cfi_row_fill(u, pc, &u->rows[i]);
	u->nrows++;
	u->m->uw_rows++;
	return &u->rows[i];
}

enum { PK_STEP_FAIL, PK_STEP_PC_UNDEF, PK_STEP_PC_SET, PK_STEP_COMPLEX };

static bool pk_uw_read(struct pk_unwind_ctx *u, uint64_t addr, uint64_t *v)
{
	Dwarf_Word w;
	if (!pk_uw_memory_read(u->dwfl, addr, &w, u))
		return false;
	*v = w;
	return true;
}

/*
 * Whether pc is the first instruction of a lazy-binding PLT entry: jmp *GOT(%rip)
 * (ff 25 rel32), push $index (68 imm32), jmp PLT0 (e9 rel32). GNU ld describes .plt in
 * .eh_frame; lld does not, and libdwfl's frame-pointer guess then skips the caller (the
 * caller's rbp is no frame pointer). perf 6.1 as Debian builds it unwinds with
 * libunwind, which recognizes this entry by its code when there is no CFI (x86-64
 * Gstep.c) and takes the return address from the stack pointer: so does this. With the
 * GOT filled in (-z now, or any call after the first) a sample in the PLT is always on
 * that jmp.
 */
static bool pk_uw_plt_entry(struct pk_unwind_ctx *u, uint64_t pc)
{
	Dwarf_Word w0, w1;
	if (pc > UINT64_MAX - 16 || !pk_uw_read_file(u->dwfl, pc, &w0) ||
	    !pk_uw_read_file(u->dwfl, pc + 8, &w1))
		return false;
	return (w0 & 0xffff) == 0x25ff && (w0 >> 48 & 0xff) == 0x68 && (w1 >> 24 & 0xff) == 0xe9;
}

/* One unwinding step from cur (libdwfl's __libdwfl_frame_unwind). */
static int pk_uw_step(struct pk_unwind_ctx *u, const struct pk_uw_state *cur,
		      struct pk_uw_state *next)
{
	uint64_t pc = cur->pc;
	if (!cur->initial && !cur->signal)
		pc--;
	const struct pk_cfi_row *row = pk_cfi_row_get(u, pc);
	if (!row || row->status == PK_ROW_COMPLEX)
		return PK_STEP_COMPLEX;
	next->initial = false;
	next->mask = 0;
	if (row->status == PK_ROW_NOCFI && pk_uw_plt_entry(u, cur->pc)) {
		/* a PLT entry: nothing pushed yet, the return address is at the stack
		 * pointer, every other register is the caller's */
		const uint32_t sp = 1u << 7;
		uint64_t ret;
		if (!(cur->mask & sp) || !pk_uw_read(u, cur->regs[7], &ret))
			return PK_STEP_FAIL;
		memcpy(next->regs, cur->regs, sizeof(next->regs));
		next->mask = cur->mask;
		next->regs[7] = cur->regs[7] + 8;
		next->regs[PK_UW_RA] = ret;
		next->mask |= 1u << PK_UW_RA;
		next->pc = ret;
		next->signal = false;
		return ret ? PK_STEP_PC_SET : PK_STEP_PC_UNDEF;
	}
	if (row->status == PK_ROW_NOCFI) {
		/* the x86-64 backend's frame-pointer step (x86_64_unwind) */
		const uint32_t bp = 1u << 6, sp = 1u << 7;
		if (!(cur->mask & bp) || !cur->regs[6])
			return PK_STEP_FAIL;
		uint64_t fp = cur->regs[6], osp = cur->mask & sp ? cur->regs[7] : 0;
		uint64_t prev, ret;
		if (!pk_uw_read(u, fp, &prev))
			prev = 0;
		if (!pk_uw_read(u, fp + 8, &ret))
			return PK_STEP_FAIL;
		next->regs[6] = prev;
		next->regs[7] = fp + 16;
		next->mask = bp | sp;
		next->pc = ret;
		next->signal = false;
		return osp >= fp + 16 ? PK_STEP_FAIL : PK_STEP_PC_SET;
	}
	bool cfa_ok = row->cfa_reg != PK_UW_NONE && (cur->mask >> row->cfa_reg & 1);
	uint64_t cfa = cfa_ok ? cur->regs[row->cfa_reg] + (uint64_t)(int64_t)row->cfa_off : 0;
	bool ra_undef = false;
	for (unsigned int r = 0; r < PK_UW_NREGS; r++) {
		const struct pk_cfi_rule *ru = &row->r[r];
		uint64_t v;
		switch (ru->kind) {
		case PK_RR_UNDEF:
			if (r == PK_UW_RA)
				ra_undef = true;
			continue;
		case PK_RR_SAME:
			if (!(cur->mask >> r & 1))
				continue;
			v = cur->regs[r];
			break;
		case PK_RR_OFFSET:
			if (!cfa_ok || !pk_uw_read(u, cfa + (uint64_t)(int64_t)ru->off, &v))
				continue;
			break;
		case PK_RR_VAL_OFFSET:
			if (!cfa_ok)
				continue;
			v = cfa + (uint64_t)(int64_t)ru->off;
			break;
		default: /* PK_RR_REG */
			if (!(cur->mask >> ru->reg & 1))
				continue;
			v = cur->regs[ru->reg];
			break;
		}
		next->regs[r] = v;
		next->mask |= 1u << r;
	}
	next->signal = row->signal;
	if (ra_undef || !(next->mask >> PK_UW_RA & 1) || !next->regs[PK_UW_RA])
		return PK_STEP_PC_UNDEF;
	next->pc = next->regs[PK_UW_RA];
	return PK_STEP_PC_SET;
}

/* The walk dwfl_getthread_frames + pk_uw_frame would make; -1 when a row needs libdwfl. */
static int pk_uw_fast(struct pk_unwind_ctx *u, uint64_t *ips, size_t max)
{
	struct pk_uw_state st[2];
	struct pk_uw_state *cur = &st[0], *next = &st[1];
	const struct pk_sample_regs *rg = &u->s->regs_user;
	if (u->regs_mask != rg->mask || !u->regs_mask) {
		/* the position of each register in the block: the same for every sample of
		 * an event, so not counted again per sample */
		for (unsigned int i = 0; i < PK_UW_NREGS; i++) {
			unsigned int r = pk_x86_64_dwarf_to_perf[i];
			u->regs_idx[i] = rg->mask & (1ULL << r)
				? (int8_t)__builtin_popcountll(rg->mask & ((1ULL << r) - 1)) : -1;
		}
		u->regs_mask = rg->mask;
	}
	for (unsigned int i = 0; i < PK_UW_NREGS; i++) {
		int k = u->regs_idx[i];
		cur->regs[i] = k >= 0 && (uint64_t)k < rg->nr ? rg->regs[k] : 0;
	}
	cur->mask = (1u << PK_UW_NREGS) - 1;
	cur->pc = cur->regs[PK_UW_RA];
	cur->initial = true;
	cur->signal = false;
	size_t n = 0;
	for (;;) {
		int r = pk_uw_step(u, cur, next);
		if (r == PK_STEP_COMPLEX)
			return -1;
		bool act = cur->initial || cur->signal || (r == PK_STEP_PC_SET && next->signal);
		uint64_t pc = cur->pc;
		if (!act && pc)
			pc--;
		if (!pc)
			break;
		ips[n++] = pc;
		if (n >= max || r != PK_STEP_PC_SET)
			break;
		struct pk_uw_state *t = cur;
		cur = next;
		next = t;
	}
	return (int)n;
}

/*
 * libdwfl unwinds with .eh_frame first and, when that fails for a frame (no FDE, or -
 * at the end of nearly every sample - a read beyond the stack copy), asks for the
 * module's DWARF to try .debug_frame. Opening a separate debug file decompresses all
 * its .debug_* sections (libc's: megabytes of zlib, once per process), yet distro debug
 * files usually carry no .debug_frame at all (.eh_frame stays in the stripped file), so
 * libdw would find no CFI there anyway. The unwinding session therefore takes a debug
 * file only if it has a .debug_frame with contents: the CFI libdwfl sees is unchanged.
 * (Symbols, lines and inline frames use each DSO's own session, not this one.)
 */
static bool pk_elf_fd_has_debug_frame(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	bool found = false;
	if (!elf)
		return false;
	if (elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !found;
		     scn = elf_nextscn(elf, scn)) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
				continue;
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
			found = name && (!strcmp(name, ".debug_frame") ||
					 !strcmp(name, ".zdebug_frame"));
		}
	}
	elf_end(elf);
	return found;
}

static int pk_uw_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *file_name,
				const char *debuglink_file, GElf_Word debuglink_crc,
				char **debuginfo_file_name)
{
	int fd = pk_dwfl_callbacks()->find_debuginfo(mod, userdata, modname, base, file_name,
						     debuglink_file, debuglink_crc,
						     debuginfo_file_name);
	if (fd < 0 || pk_elf_fd_has_debug_frame(fd))
		return fd;
	close(fd);
	/* libdwfl would open a file name left behind itself */
	free(*debuginfo_file_name);
	*debuginfo_file_name = NULL;
	return -1;
}

/* the DSO sessions' callbacks (dso.c), with the debug-file filter above */
static const Dwfl_Callbacks pk_uw_dwfl_callbacks = {
	.find_elf = NULL,
	.find_debuginfo = pk_uw_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = NULL,
};

/* Report every ELF map of the process not reported yet. */
static void pk_uw_report(struct pk_unwind_ctx *u, struct pk_mapset *ms)
{
	bool began = false;
	for (size_t i = 0; i < ms->nr; i++) {
		const struct pk_mapent *e = &ms->v[i];
		struct pk_dso *d = e->dso;
		if (!d || (d->kind != PK_DSO_ELF && d->kind != PK_DSO_VDSO))
			continue;
		if (pk_dso_ensure_loaded(d) || !d->load_path || !d->nr_segs)
			continue;
		uint64_t base = d->is_dyn ? e->start - pk_dso_map_vaddr(d, e->pgoff) : 0;
		bool seen = false;
		for (size_t k = 0; k < u->nrep && !seen; k++)
			seen = u->rep[k].dso == d && u->rep[k].base == base;
		if (seen)
			continue;
		if (u->nrep == u->caprep) {
			size_t nc = u->caprep ? u->caprep * 2 : 32;
			struct pk_reported *n = realloc(u->rep, nc * sizeof(*n));
			if (!n)
				return;
			u->rep = n;
			u->caprep = nc;
		}
		/* remembered even if reporting fails, so a bad file is tried once */
		u->rep[u->nrep++] = (struct pk_reported){ d, base };
		int fd = pk_open_regular(d->load_path, PK_DSO_MAX_FILE, NULL);
		if (fd < 0)
			continue;
		if (!began) {
			dwfl_report_begin_add(u->dwfl);
			began = true;
		}
		/* base is the load bias: add_p_vaddr, or libdwfl takes it for the address of
		 * the first segment (the same only when that segment's address is 0) */
		Dwfl_Module *mod = dwfl_report_elf(u->dwfl, d->short_name, d->load_path, fd, base,
						   true);
		if (!mod) {
			close(fd);
			continue;
		}
		void **udp = NULL;
		dwfl_module_info(mod, &udp, NULL, NULL, NULL, NULL, NULL, NULL);
		if (udp)
			*udp = d;
	}
	if (began) {
		dwfl_report_end(u->dwfl, NULL, NULL);
		/* an address without a module may have one now */
		if (u->caprows)
			memset(u->rows, 0, u->caprows * sizeof(*u->rows));
		u->nrows = 0;
	}
	u->gen = ms->gen;
}

/*
 * The mode an address of a kernel-context chain really has: a kernel chain can end in
 * user addresses without a PERF_CONTEXT_USER marker (an interrupt taken in user space),
 * and such an address is the process's, not the kernel's (perf falls back the same
 * way). Kernel addresses are those at or above the lowest kernel map, or in the upper
 * half of the address space when no kernel map was recorded.
 */
static uint8_t chain_mode(const struct pk_machine *m, uint8_t mode, uint64_t ip)
{
	if (mode != PK_CPUMODE_KERNEL && mode != PK_CPUMODE_GUEST_KERNEL)
		return mode;
	bool kernel = m->kmaps && m->kmaps->nr ? ip >= m->kmaps->v[0].start : ip >> 63;
	if (kernel)
		return mode;
	return mode == PK_CPUMODE_KERNEL ? PK_CPUMODE_USER : PK_CPUMODE_GUEST_USER;
}

/* chain_mode() of the entries e[0..n), entered in one kernel mode (the test stays out of
 * the loop over the chain, where most entries are user ones) */
static void chain_modes(const struct pk_machine *m, struct pk_chain_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		e[i].cpumode = chain_mode(m, e[i].cpumode, e[i].ip);
}

static bool mode_is_kernel(uint8_t mode)
{
	return mode == PK_CPUMODE_KERNEL || mode == PK_CPUMODE_GUEST_KERNEL;
}

static int pk_unwind_user(struct pk_machine *m, struct pk_mapset *ms, const struct pk_sample *s,
			  const struct pk_uw_arch *arch, uint64_t *ips, size_t max)
{
	struct pk_unwind_ctx *u = ms->unwind;
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return -ENOMEM;
		u->dwfl = dwfl_begin(&pk_uw_dwfl_callbacks);
		if (!u->dwfl) {
			free(u);
			return -ENOMEM;
		}
		u->gen = UINT64_MAX;
		u->slow_only = m->uw_libdwfl_only;
		u->m = m;
		ms->unwind = u;
	}
	if (u->gen != ms->gen)
		pk_uw_report(u, ms);
	if (!u->attached) {
		if (!dwfl_attach_state(u->dwfl, NULL, (pid_t)ms->pid, &pk_uw_callbacks, u))
			return -ENOENT;  /* no module with an ELF yet */
		u->attached = true;
	}
	uint64_t sp = 0, ip = 0;
	pk_perf_reg(&s->regs_user, arch->sp, &sp);
	pk_perf_reg(&s->regs_user, arch->ip, &ip);
	/* code without any CFI (no .eh_frame, no .debug_frame): libdwfl would guess from
	 * the frame pointer and may skip a frame; our own frame-pointer walk is exact */
	const struct pk_mapent *e = pk_mapset_find(ms, ip);
	if (e && e->dso && e->dso->cfi == 0) {
		Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, ip);
		Dwarf_Addr b;
		e->dso->cfi = mod && !dwfl_module_eh_cfi(mod, &b) && !dwfl_module_dwarf_cfi(mod, &b)
				      ? -1 : 1;
	}
	if (e && e->dso && e->dso->cfi < 0)
		return -EOPNOTSUPP;
	u->s = s;
	u->arch = arch;
	u->sp = sp;
	u->stack = s->stack_user.data;
	u->stack_len = PK_MIN(s->stack_user.dyn_size, s->stack_user.size);
	u->stack_cut = s->stack_user.dyn_size >= s->stack_user.size;
	u->beyond = false;
	u->tid = s->tid;
	u->ips = ips;
	u->nr = 0;
	u->max = max;
	int fast = u->slow_only || !arch->cached ? -1 : pk_uw_fast(u, ips, max);
	if (fast >= 0) {
		u->nr = (size_t)fast;
	} else {
		m->uw_libdwfl++;
		u->beyond = false;
		dwfl_getthread_frames(u->dwfl, (pid_t)s->tid, pk_uw_frame, u);
	}
	size_t n = u->nr;
	if (!n && ip)
		ips[n++] = ip;
	/* perf's frame for a return address read past the copy (pk_uw_memory_read) */
	if (u->beyond && n < max)
		ips[n++] = UINT64_MAX;
	u->s = NULL;
	u->ips = NULL;
	return (int)n;
}

/* Frame-pointer walk over the stack copy (the fallback when CFI is missing). */
static size_t pk_unwind_fp(const struct pk_uw_arch *arch, const struct pk_sample *s,
			   uint64_t *ips, size_t max)
{
	/* x86-64's rbp and arm64's x29 both point at {caller's frame pointer, return
	 * address} */
	uint64_t ip = 0, bp = 0, sp = 0;
	size_t n = 0;
	if (!pk_perf_reg(&s->regs_user, arch->ip, &ip) ||
	    !pk_perf_reg(&s->regs_user, arch->fp, &bp) ||
	    !pk_perf_reg(&s->regs_user, arch->sp, &sp) || !max)
		return 0;
	uint64_t len = PK_MIN(s->stack_user.dyn_size, s->stack_user.size);
	const uint8_t *st = s->stack_user.data;
	ips[n++] = ip;
	while (n < max && bp >= sp && len >= 16 && bp - sp <= len - 16) {
		uint64_t next, ret;
		memcpy(&next, st + (bp - sp), 8);
		memcpy(&ret, st + (bp - sp) + 8, 8);
		if (!ret)
			break;
		ips[n++] = ret - 1;
		if (next <= bp)
			break;
		bp = next;
	}
	return n;
}

/*
 * The ELF machine of a process's code: that of its first ELF map (all are the same
 * architecture, and the registers perf sampled are that architecture's). A process
 * without any readable ELF file is taken for this machine's architecture.
 */
static uint16_t pk_uw_machine_of(const struct pk_mapset *ms)
{
	for (size_t i = 0; i < ms->nr; i++) {
		struct pk_dso *d = ms->v[i].dso;
		if (d && d->kind == PK_DSO_ELF && !pk_dso_ensure_loaded(d) && d->e_machine)
			return d->e_machine;
	}
#if defined(__aarch64__)
	return EM_AARCH64;
#else
	return EM_X86_64;
#endif
}

static const char *pk_uw_machine_name(uint16_t em)
{
	switch (em) {
	case EM_386: return "i386";
	case EM_ARM: return "arm";
	case EM_PPC: return "powerpc";
	case EM_PPC64: return "powerpc64";
	case EM_S390: return "s390";
	case EM_RISCV: return "riscv";
	case EM_LOONGARCH: return "loongarch";
	case EM_MIPS: return "mips";
	case EM_SPARCV9: return "sparc64";
	default: return "unknown-architecture";
	}
}

static bool pk_sample_has_user_stack(const struct pk_sample *s)
{
	return (s->type & PERF_SAMPLE_REGS_USER) && (s->type & PERF_SAMPLE_STACK_USER) &&
	       s->regs_user.abi == PERF_SAMPLE_REGS_ABI_64 && s->regs_user.nr &&
	       s->stack_user.size && s->stack_user.data;
}

PK_API int pk_machine__unwind(struct pk_machine *m, const struct pk_sample *s, uint64_t *ips,
			      size_t max)
{
	if (!m || !s || !ips || !max)
		return pk_err(-EINVAL);
	if (!pk_sample_has_user_stack(s))
		return pk_err(-ENODATA);
	struct pk_thread *t = pk_machine_thread(m, s->pid, s->tid, true);
	if (!t || !t->maps)
		return pk_err(-ENOENT);
	uint16_t em = pk_uw_machine_of(t->maps);
	const struct pk_uw_arch *arch = pk_uw_arch_find(em);
	if (!arch) {
		if (!m->uw_arch_warned)
			pk_warn("DWARF call chains: the user stacks of %s programs are not unwound "
				"(only x86-64 and arm64 are): their call chains stop at the "
				"sampled address", pk_uw_machine_name(em));
		m->uw_arch_warned = true;
		return pk_err(-EOPNOTSUPP);
	}
	int n = pk_unwind_user(m, t->maps, s, arch, ips, max);
	bool no_cfi = n == -EOPNOTSUPP;
	if (n < 0)
		n = 0;
	m->uw_samples++;
	/* no CFI, or stopped early? a frame-pointer walk of the same stack may get further */
	if (no_cfi || ((size_t)n < max && n < 3)) {
		uint64_t fp[PK_UNWIND_MAX_FRAMES];
		size_t k = pk_unwind_fp(arch, s, fp, PK_MIN(max, PK_ARRAY_SIZE(fp)));
		if (k > (size_t)n) {
			memcpy(ips, fp, k * sizeof(*fp));
			n = (int)k;
			m->uw_fallbacks++;
		}
	}
	m->uw_frames += (uint64_t)n;
	return n ? n : pk_err(-ENOENT);
}

static uint8_t pk_ctx_mode(enum pk_callchain_ctx c, uint8_t cur)
{
	switch (c) {
	case PK_CTX_HV: return PK_CPUMODE_HYPERVISOR;
	case PK_CTX_KERNEL: return PK_CPUMODE_KERNEL;
	case PK_CTX_USER:
	case PK_CTX_USER_DEFERRED: return PK_CPUMODE_USER;
	case PK_CTX_GUEST_KERNEL: return PK_CPUMODE_GUEST_KERNEL;
	case PK_CTX_GUEST_USER: return PK_CPUMODE_GUEST_USER;
	default: return cur;
	}
}

/* pk_machine__callchain of a sample with a user stack copy (kept out of line: its frame
 * holds two arrays of PK_UNWIND_MAX_FRAMES addresses, which the common case does without) */
static __attribute__((noinline)) int pk_callchain_dwarf(struct pk_machine *m,
							const struct pk_sample *s,
							struct pk_chain_entry *out, size_t max)
{
	size_t n = 0;
	bool dwarf = true;
	uint64_t fpu[PK_UNWIND_MAX_FRAMES];
	size_t nfpu = 0;
	uint8_t mode = s->cpumode;

	if ((s->type & PERF_SAMPLE_CALLCHAIN) && s->callchain.nr) {
		for (uint64_t i = 0; i < s->callchain.nr; i++) {
			uint64_t ip = s->callchain.ips[i];
			/* (markers are the top 4095 values: most entries are not one) */
			enum pk_callchain_ctx c = ip < (uint64_t)PERF_CONTEXT_MAX ? PK_CTX_NONE
						  : pk_callchain__context(ip);
			if (c == PK_CTX_UNKNOWN) {
				/* corrupted: the recorded entries are dropped, the user stack is
				 * still unwound (perf) */
				n = nfpu = 0;
				break;
			}
			if (c != PK_CTX_NONE) {
				mode = pk_ctx_mode(c, mode);
				continue;
			}
			if (dwarf && mode == PK_CPUMODE_USER) {
				if (nfpu < PK_ARRAY_SIZE(fpu))
					fpu[nfpu++] = ip;
				continue;
			}
			if (n < max)
				out[n++] = (struct pk_chain_entry){ ip, chain_mode(m, mode, ip), 0 };
		}
	} else if (!dwarf || s->cpumode != PK_CPUMODE_USER) {
		if (n < max)
			out[n++] = (struct pk_chain_entry){ s->ip, s->cpumode, 0 };
	}
	if (dwarf && n < max) {
		uint64_t ips[PK_UNWIND_MAX_FRAMES];
		int k = pk_machine__unwind(m, s, ips, PK_MIN(max - n, PK_ARRAY_SIZE(ips)));
		if (k < 0)
			k = 0;
		if (!k && !nfpu && s->cpumode == PK_CPUMODE_USER) {
			/* nothing unwound (an architecture not unwound, no maps): the sampled
			 * address still is the leaf */
			out[n++] = (struct pk_chain_entry){ s->ip, PK_CPUMODE_USER, 0 };
		} else if ((size_t)k < nfpu) {
			m->uw_fallbacks++;
			for (size_t i = 0; i < nfpu && n < max; i++)
				out[n++] = (struct pk_chain_entry){ fpu[i], PK_CPUMODE_USER, 0 };
		} else {
			for (int i = 0; i < k && n < max; i++)
				out[n++] = (struct pk_chain_entry){ ips[i], PK_CPUMODE_USER,
								   PK_CHAIN_UNWOUND };
		}
	}
	return (int)n;
}

PK_API int pk_machine__callchain(struct pk_machine *m, const struct pk_sample *s,
				 struct pk_chain_entry *out, size_t max)
{
	if (!m || !s || !out)
		return pk_err(-EINVAL);
	if (pk_sample_has_user_stack(s))
		return pk_callchain_dwarf(m, s, out, max);
	size_t n = 0, from = 0; /* out[from..n) were all entered in the current mode */
	uint8_t mode = s->cpumode;
	if ((s->type & PERF_SAMPLE_CALLCHAIN) && s->callchain.nr) {
		for (uint64_t i = 0; i < s->callchain.nr; i++) {
			uint64_t ip = s->callchain.ips[i];
			if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
				enum pk_callchain_ctx c = pk_callchain__context(ip);
				if (c == PK_CTX_UNKNOWN)
					return 0; /* corrupted: perf discards the whole chain */
				if (c != PK_CTX_NONE) {
					if (n > from && mode_is_kernel(mode))
						chain_modes(m, out + from, n - from);
					from = n;
					mode = pk_ctx_mode(c, mode);
					continue;
				}
			}
			if (n < max)
				out[n++] = (struct pk_chain_entry){ ip, mode, 0 };
		}
		if (n > from && mode_is_kernel(mode))
			chain_modes(m, out + from, n - from);
	} else if (n < max) {
		out[n++] = (struct pk_chain_entry){ s->ip, s->cpumode, 0 };
	}
	return (int)n;
}

PK_API void pk_machine__unwind_stats(const struct pk_machine *m, uint64_t *samples,
				     uint64_t *frames, uint64_t *fallbacks)
{
	if (samples)
		*samples = m ? m->uw_samples : 0;
	if (frames)
		*frames = m ? m->uw_frames : 0;
	if (fallbacks)
		*fallbacks = m ? m->uw_fallbacks : 0;
}

PK_API int pk_machine__get_unwind_stats(const struct pk_machine *m, struct pk_unwind_stats *st)
{
	if (!m || !st || st->sz < sizeof(size_t))
		return pk_err(-EINVAL);
	struct pk_unwind_stats v = {
		.sz = st->sz,
		.samples = m->uw_samples,
		.frames = m->uw_frames,
		.fp_fallbacks = m->uw_fallbacks,
		.libdwfl_samples = m->uw_libdwfl,
		.cfi_rows = m->uw_rows,
	};
	memcpy(st, &v, PK_MIN(st->sz, sizeof(v)));
	return 0;
}
