/* SPDX-License-Identifier: MIT */
/* tool/annotate-kernel.h - perfkit annotate's kernel code: -k/--vmlinux and why kernel
 * functions cannot be shown (annotate-kernel.c). */
#ifndef TOOL_ANNOTATE_KERNEL_H
#define TOOL_ANNOTATE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <perfkit/perfkit.h>

/*
 * -k/--vmlinux FILE: 0 with *ksyms (malloc'd) a kallsyms file of FILE's symbols (the
 * caller gives it to the machine, with host_known, and removes it), 1 when FILE is not
 * the recorded kernel (said: its kernel functions will not be shown), -1 on an error
 * (said).
 */
int tool_ann_vmlinux(const char *vmlinux, struct pk_data_reader *rd, char **ksyms);
/* Say once why the code of nr kernel functions cannot be shown (pk_annotate__kernel
 * found no usable vmlinux or kcore); quiet when -k's build-id was already said. */
void tool_ann_kernel_explain(const struct pk_annotate_kernel *k, size_t nr, bool vmlinux_said);
/* The causes of it (one line for the vmlinux, one for kcore, each "  ...\n") and
 * "  fix: ...\n", to f: what explain prints under its first line (the browsers' annotate
 * view shows them too). */
void tool_ann_kernel_why(const struct pk_annotate_kernel *k, FILE *f);
/* The browsers' annotate view's message for kernel symbol sym without code: a first line
 * ("... no code of the <which> kernel ...") and those of tool_ann_kernel_why, '\n'
 * between them (malloc'd; NULL without memory). */
char *tool_ann_kernel_msg(const struct pk_annotate_kernel *k, const char *sym, const char *which);
/* The modules whose functions are not shown (no code found), with their counts. */
struct tool_ann_mskip {
	struct { struct pk_annotate_kmod m; size_t nr; } v[32];
	size_t nr, more;
};
/* Symbol i of a module: 0 with *file and *bias when its code is found (*sym read again:
 * its size may be cut), 1 when not (noted in s), -1 out of memory (said). */
int tool_ann_module(struct pk_annotate *a, size_t i, struct pk_annotate_sym *sym,
		    struct tool_ann_mskip *s, const char **file, uint64_t *bias);
/* Say, per module and cause, why the functions noted in s are not shown: their count. */
size_t tool_ann_modules_explain(const struct tool_ann_mskip *s);

#endif
