/* SPDX-License-Identifier: MIT */
/*
 * perfkit/probe.h - dynamic probes by name: a binary named by path or library name, a
 * function found in its symbols (or a debug file), its address turned into the file
 * offset the uprobe PMU takes, an offset into it proved to start an instruction, and the
 * SDT (USDT) markers of .note.stapsdt with their semaphores.
 *
 * The event parser uses these for u:BINARY:FUNCTION[+OFFSET], r:BINARY:FUNCTION,
 * u:BINARY:%PROVIDER:NAME and sdt:PROVIDER:NAME (perfkit/event.h); they are public so a
 * tool can list what a binary offers and show where a probe would go.
 *
 * Every function that can fail returns a negative errno and, when `msg` is not NULL,
 * writes why into it (NUL-terminated, at most msglen bytes): -ENOENT (no such binary,
 * function or marker), -EISDIR / -EINVAL (not a regular file, not an ELF file of a kind
 * that can be probed), -ENOTUNIQ (ambiguous: the message lists the candidates), -EILSEQ
 * (an offset that is not an instruction start, or cannot be proved to be one).
 */
#ifndef PERFKIT_PROBE_H
#define PERFKIT_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PK_PROBE_PATH_MAX 4096

struct pk_probe_opts {
	size_t sz;
	int pid;              /* > 0: library names are looked up in this process's maps first */
	size_t :0;
};

/* Where a probe goes. */
struct pk_probe_point {
	char path[PK_PROBE_PATH_MAX]; /* the binary, as resolved */
	char symbol[256];             /* the function or "provider:name" */
	uint64_t vaddr;               /* the address in the ELF file (symbol + offset) */
	uint64_t offset;              /* the file offset the uprobe PMU takes (probe_offset) */
	uint64_t ref_ctr_offset;      /* SDT semaphore's file offset, 0 = none */
	uint64_t sym_size;            /* the function's size (0: unknown) */
	uint64_t dev, ino;            /* the file resolved (a later open can check it is the same) */
	bool from_dynsym;             /* found in .dynsym (no .symtab, no debug file) */
	bool from_debug;              /* found in a separate debug file */
};

/* A function of a binary (pk_probe__for_each_function). */
struct pk_probe_func {
	const char *name;
	const char *file;   /* source file of a local symbol (STT_FILE), or NULL */
	uint64_t vaddr, offset, size;
	bool local;
};

/* An SDT marker (pk_probe__for_each_sdt). */
struct pk_sdt_marker {
	const char *provider, *name, *args;
	uint64_t vaddr, offset;           /* the probe point */
	uint64_t sem_vaddr, sem_offset;   /* the semaphore, 0 = none */
};

/*
 * Resolve BINARY as the dynamic linker would find it: a name with a '/' is a path; else,
 * with opts->pid, a file mapped by that process whose name matches ("libc" matches
 * libc.so.6), then the directories of /etc/ld.so.conf and the system library
 * directories, then the current directory. Writes the path to out (len bytes).
 */
PK_API int pk_probe__find_binary(const char *binary, const struct pk_probe_opts *opts, char *out,
				 size_t len, char *msg, size_t msglen);

/*
 * Resolve FUNCTION[+plus] in BINARY: .symtab, else .dynsym, else the debug file found by
 * build-id or .gnu_debuglink under /usr/lib/debug; the address becomes a file offset
 * through the PT_LOAD program headers. A non-zero `plus` must start an instruction
 * (checked by disassembling the function from its start) and lie within the function.
 */
PK_API int pk_probe__resolve(const char *binary, const char *function, uint64_t plus,
			     const struct pk_probe_opts *opts, struct pk_probe_point *pt, char *msg,
			     size_t msglen);

/* Resolve the SDT marker PROVIDER:NAME of BINARY (offset and semaphore). Several
 * markers of that name (one marker expanded at several sites) fail with -ENOTUNIQ. */
PK_API int pk_probe__resolve_sdt(const char *binary, const char *provider, const char *name,
				 const struct pk_probe_opts *opts, struct pk_probe_point *pt,
				 char *msg, size_t msglen);

/* Call cb for each function symbol of the table resolve would use, in table order, whose
 * name matches `glob` (fnmatch; NULL = all). A non-zero return of cb stops and is
 * returned. The pointers passed are valid during the call only. */
typedef int (*pk_probe_func_cb)(const struct pk_probe_func *f, void *ctx);
PK_API int pk_probe__for_each_function(const char *binary, const char *glob,
				       const struct pk_probe_opts *opts, pk_probe_func_cb cb,
				       void *ctx, char *msg, size_t msglen);

/* Call cb for each SDT marker of BINARY's .note.stapsdt notes, in file order. */
typedef int (*pk_sdt_marker_cb)(const struct pk_sdt_marker *m, void *ctx);
PK_API int pk_probe__for_each_sdt(const char *binary, const struct pk_probe_opts *opts,
				  pk_sdt_marker_cb cb, void *ctx, char *msg, size_t msglen);

/* ---- probe arguments ---- */

/* perf's register numbers (bits of sample_regs_user) of this machine's calling
 * convention: the i-th integer argument (i from 0; x86-64: rdi rsi rdx rcx r8 r9) or -1
 * past the last, the return value (x86-64: rax; -1 unknown), and the mask of all of them
 * (0: not known for this architecture). */
PK_API int pk_probe__arg_reg(unsigned i);
PK_API int pk_probe__ret_reg(void);
PK_API uint64_t pk_probe__args_mask(void);

#ifdef __cplusplus
}
#endif
#endif
