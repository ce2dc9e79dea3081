/* SPDX-License-Identifier: MIT */
/*
 * tool/annotate-src.h - the source lines perfkit annotate shows between instructions
 * (what perf annotate 6.1 shows from `objdump -l -S`), and the srclines of -l.
 */
#ifndef TOOL_ANNOTATE_SRC_H
#define TOOL_ANNOTATE_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/perfkit.h>

/* at most this many lines before one instruction: a function name and 6 source lines */
#define ANN_SRC_MAX 8

enum ann_src_kind {
	ANN_SRC_FUNC,   /* "name():" - the function of the code that follows changed */
	ANN_SRC_TEXT,   /* line `line` of `file`: text (trimmed, tabs expanded) */
	ANN_SRC_LOC,    /* the source cannot be shown: text says where the code is from */
};

struct ann_src_line {
	enum ann_src_kind kind;
	const char *file;       /* TEXT, LOC: the file (as the line table names it) */
	unsigned int line;      /* TEXT, LOC: its line number */
	char text[1040];
};

struct ann_src;

struct ann_src *ann_src_new(void);
void ann_src_free(struct ann_src *s);
/* warnings (a source file that cannot be read) are kept, not printed: for a screen */
void ann_src_quiet(struct ann_src *s);
/* the first warning kept since ann_src_quiet, or NULL */
const char *ann_src_first_warning(const struct ann_src *s);
/* a new symbol: objdump's state starts again (perf runs objdump once per symbol) */
void ann_src_symbol(struct ann_src *s, struct pk_dso *dso, const char *sym_name,
		    uint64_t start);
/* the lines to show before the instruction at DSO address addr (the next of the
 * symbol, in address order); the count (0..ANN_SRC_MAX) */
int ann_src_before(struct ann_src *s, uint64_t addr, struct ann_src_line *out);
/* the width of the line-number column of a symbol's source lines: the hex digits of its
 * last address (perf aligns the numbers with the addresses) */
int ann_src_addr_width(uint64_t start, uint64_t size);
/* longest text ann_src_format writes, with its terminating NUL */
#define ANN_SRC_LINE_MAX 1100
/* one source line as perf annotate --stdio shows it, without the newline:
 * "         : 12  text" (a blank share column, the number as wide as the addresses) */
void ann_src_format(char *buf, size_t len, const struct ann_src_line *l, int addr_width);
/* an instruction's text as annotate shows it: the mnemonic, then (when it has operands)
 * padded to 6 columns and its operands (pad; JSON: one space). In buf (cap bytes) when it
 * fits, else in a malloc'd string the caller frees (it is not buf); NULL: no memory.
 * Operands run long: a jump names its target in full. */
char *ann_insn_text(const struct pk_annotate_insn *in, bool pad, char *buf, size_t cap);
/* perf's srcline of addr for -l: "file.c:12" (base name), "??:0", or "dso[addr]" */
void ann_src_srcline(struct pk_dso *dso, const char *dso_name, uint64_t addr, char *buf,
		     size_t len);

#endif
