/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/kcode.h - the kernel's code bytes for annotate (kcode.c): an ELF file's
 * loadable segments read with pread (a vmlinux image, or /proc/kcore: an ELF core file
 * whose PT_LOAD segments map the running kernel's virtual addresses), and the choice of
 * that file as perf 6.1 makes it. Internal; the unit tests and the fuzz harness use it.
 */
#ifndef PK_ANNOTATE_KCODE_H
#define PK_ANNOTATE_KCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/annotate.h>

/* at most this many program headers are read (56 bytes each) */
#define PK_KC_MAX_PHDRS 65536u

struct pk_kc_seg {
	uint64_t vaddr, offset, filesz;
	uint32_t flags;
};

struct pk_kc_elf {
	uint16_t type, machine;
	struct pk_kc_seg *segs; /* the PT_LOAD segments with file bytes, in file order */
	size_t nr;
};

/*
 * Read the ELF header and program headers of fd (a 64-bit little-endian ELF file of
 * `size` bytes; 0: size unknown, as /proc/kcore's): every count and offset checked, an
 * extended count (PN_XNUM) taken from section header 0. A segment whose file bytes lie
 * past `size`, or whose addresses wrap, is cut or left out. 0, -EINVAL (not such an
 * ELF file, or corrupt), -E2BIG (more than PK_KC_MAX_PHDRS), -ENOMEM, or pread's error.
 */
int pk_kc_elf_read(int fd, uint64_t size, struct pk_kc_elf *e);
void pk_kc_elf_release(struct pk_kc_elf *e);
/*
 * The bytes at virtual addresses [vaddr, vaddr + len) into buf, from the segments that
 * hold them (the first in file order where segments overlap), up to the first address no
 * segment holds or the end of the file. Returns the bytes read (> 0), -ENODATA when no
 * segment holds vaddr, or pread's error.
 */
long pk_kc_elf_pread(int fd, const struct pk_kc_elf *e, uint64_t vaddr, void *buf, size_t len);

/* what the choice of a kernel code file is made from (all but the paths optional) */
struct pk_kcode_opts {
	const char *vmlinux;            /* given (-k): only it is tried */
	const char *kcore;              /* NULL: /proc/kcore; "": not tried */
	const char *kallsyms;           /* the running kernel's _text: NULL /proc/kallsyms */
	const char *release;            /* the recorded `uname -r` (NULL: this system's) */
	const char *buildid_dirs[3];    /* build-id caches searched (NULL: none) */
	const char *symfs;              /* perf's --symfs (NULL: none) */
	const uint8_t *want_bid;        /* the recorded kernel's build-id (len 0: none) */
	size_t want_bid_len;
	const uint8_t *run_bid;         /* the running kernel's (len 0: unknown) */
	size_t run_bid_len;
	bool host;                      /* the recording's release is this system's */
	bool have_text;                 /* the recorded _text (the kernel map's pgoff) */
	uint64_t text;
};

struct pk_kcode;
/* Choose the file (perf's order: the given vmlinux, else the build-id caches, then
 * perf's vmlinux paths, then kcore when the running kernel is the recorded one). Never
 * fails but for -ENOMEM: without a usable file, pk_kcode_info says why. */
int pk_kcode_open(const struct pk_kcode_opts *o, struct pk_kcode **out);
void pk_kcode_free(struct pk_kcode *k);
/* The choice and, without one, why each source was not usable (strings owned by k). */
void pk_kcode_info(const struct pk_kcode *k, struct pk_annotate_kernel *out);
/* The code at recorded address addr (bias taken off): bytes read, or -errno (-ENOENT:
 * no file chosen, -ENODATA: not in it). *e_machine: the file's ELF machine. */
long pk_kcode_read(struct pk_kcode *k, uint64_t addr, void *buf, size_t len, uint16_t *e_machine);

#endif
