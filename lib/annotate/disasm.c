/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/disasm.c - a symbol's bytes disassembled with capstone (x86-64, AArch64),
 * each instruction handed out with the counts of its addresses and its branch target
 * named.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <capstone/capstone.h>
#include "internal.h"
#include "annotate/disasm.h"

static bool insn_is_branch(const cs_insn *in)
{
	const cs_detail *dt = in->detail;
	for (uint8_t g = 0; dt && g < dt->groups_count; g++)
		if (dt->groups[g] == CS_GRP_JUMP || dt->groups[g] == CS_GRP_CALL)
			return true;
	return false;
}

/* the immediate target of a direct jump or call, if it has one */
static bool insn_target(cs_arch arch, const cs_insn *in, uint64_t *t)
{
	if (!insn_is_branch(in))
		return false;
	const cs_detail *dt = in->detail;
	if (arch == CS_ARCH_X86) {
		if (dt->x86.op_count != 1 || dt->x86.operands[0].type != X86_OP_IMM)
			return false;
		*t = (uint64_t)dt->x86.operands[0].imm;
		return true;
	}
	for (uint8_t i = 0; i < dt->arm64.op_count; i++) {
		/* cbz/tbz carry a register (and a bit) before the label: the last immediate */
		if (dt->arm64.operands[i].type == ARM64_OP_IMM)
			*t = (uint64_t)dt->arm64.operands[i].imm;
	}
	return dt->arm64.op_count &&
	       dt->arm64.operands[dt->arm64.op_count - 1].type == ARM64_OP_IMM;
}

int pk_ann_disasm(const uint8_t *code, size_t len, uint64_t addr, uint16_t em,
		  struct pk_dso *dso, struct pk_ann_dis *dc)
{
	cs_arch arch;
	cs_mode mode;
	if (em == EM_X86_64 || em == 0) {
		arch = CS_ARCH_X86;
		mode = CS_MODE_64;
	} else if (em == EM_AARCH64) {
		arch = CS_ARCH_ARM64;
		mode = CS_MODE_ARM;
	} else {
		return -EOPNOTSUPP;
	}
	csh h;
	if (cs_open(arch, mode, &h) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	if (arch == CS_ARCH_X86)
		cs_option(h, CS_OPT_SYNTAX, dc->intel ? CS_OPT_SYNTAX_INTEL
						      : CS_OPT_SYNTAX_ATT); /* perf's (objdump) */
	cs_insn *in = cs_malloc(h);
	if (!in) {
		cs_close(&h);
		return -ENOMEM;
	}
	const uint8_t *p = code;
	size_t left = len;
	uint64_t pc = addr;
	int err = 0;
	/* a jump's operand with its target's name: as long as the name (C++ names run to
	 * kilobytes), so grown as needed and kept for the next */
	char ops_small[256], *ops = ops_small, *ops_heap = NULL;
	size_t ops_cap = sizeof(ops_small);
	while (!err && left && cs_disasm_iter(h, &p, &left, &pc, in)) {
		struct pk_annotate_insn ai = {
			.addr = in->address,
			.len = (uint8_t)PK_MIN((size_t)in->size, sizeof(ai.bytes)),
			.mnemonic = in->mnemonic,
			.operands = in->op_str,
		};
		memcpy(ai.bytes, in->bytes, ai.len);
		/* the counts of the addresses inside this instruction (a sampled address is
		 * normally an instruction start; one that is not still counts here) */
		while (dc->next_hit < dc->nr_hits &&
		       dc->hits[dc->next_hit].addr - dc->bias < in->address + in->size) {
			if (dc->hits[dc->next_hit].addr - dc->bias >= in->address) {
				ai.samples += dc->hits[dc->next_hit].samples;
				ai.period += dc->hits[dc->next_hit].period;
			}
			dc->next_hit++;
		}
		if (insn_target(arch, in, &ai.target)) {
			ai.has_target = true;
			uint64_t ts = 0;
			const char *tn = dso ? pk_dso__symbol(dso, ai.target + dc->bias, &ts, NULL)
					     : NULL;
			if (tn) {
				ai.target_sym = tn;
				ai.target_off = ai.target + dc->bias - ts;
				/* "addr <name+0xoff>": 16 + 2 + 3 + 16 + 1 + NUL */
				size_t need = strlen(tn) + 40;
				if (need > ops_cap) {
					char *n = realloc(ops_heap, need);
					if (!n) {
						err = -ENOMEM;
						break;
					}
					ops = ops_heap = n;
					ops_cap = need;
				}
				if (ai.target_off)
					snprintf(ops, ops_cap, "%" PRIx64 " <%s+0x%" PRIx64 ">",
						 ai.target, tn, ai.target_off);
				else
					snprintf(ops, ops_cap, "%" PRIx64 " <%s>", ai.target, tn);
			} else {
				snprintf(ops, ops_cap, "%" PRIx64, ai.target);
			}
			ai.operands = ops;
		}
		err = dc->fn(dc->ctx, &ai);
	}
	free(ops_heap);
	cs_free(in, 1);
	cs_close(&h);
	return err;
}
