/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/disasm.h - capstone's walk over a symbol's bytes with the counts of each
 * instruction's addresses (disasm.c): what pk_annotate__disasm and
 * pk_annotate__disasm_bytes share. Internal.
 */
#ifndef PK_ANNOTATE_DISASM_H
#define PK_ANNOTATE_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/annotate.h>

struct pk_dso;

/* the samples and period at one address of a symbol */
struct ann_hit {
	uint64_t addr, samples, period;
};

struct pk_ann_dis {
	uint64_t bias;          /* a hit's address - the address shown (kernel code) */
	const struct ann_hit *hits;
	size_t nr_hits, next_hit;
	pk_annotate_insn_fn fn;
	void *ctx;
	bool intel;
};

/*
 * Disassemble len bytes of code at addr (em: the ELF machine, EM_X86_64 or 0 for x86-64,
 * EM_AARCH64), calling dc->fn per instruction with the counts of dc->hits (sorted by
 * address) that fall inside it; direct jump and call targets are named from dso's
 * symbols (NULL: not named). 0, -EOPNOTSUPP (another machine), -ENOMEM, or what
 * dc->fn returned.
 */
int pk_ann_disasm(const uint8_t *code, size_t len, uint64_t addr, uint16_t em,
		  struct pk_dso *dso, struct pk_ann_dis *dc);

#endif
