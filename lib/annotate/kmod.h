/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/kmod.h - the code of a kernel module for annotate (kmod.c): its `.ko` (a
 * relocatable ELF object, perhaps gzip-compressed) found where perf 6.1 looks, checked
 * against the recorded build-id, its .text placed at the module's recorded load address;
 * else /proc/kcore in the boot that recorded. Internal; the unit tests and the fuzz
 * harness use it.
 */
#ifndef PK_ANNOTATE_KMOD_H
#define PK_ANNOTATE_KMOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/annotate.h>

/* what the parse of a .ko found */
struct pk_kmod_elf {
	uint16_t machine;
	uint64_t text_off, text_size, text_addr;        /* .text: file offset, size, sh_addr */
	uint8_t bid[PK_BUILD_ID_MAX];
	size_t bid_len;                                 /* 0: no GNU build-id note */
};

/* reads [off, off + len) of the object: bytes read (short at its end), or -errno */
typedef long (*pk_kmod_read_fn)(void *ctx, uint64_t off, void *buf, size_t len);

/*
 * Parse a 64-bit little-endian relocatable ELF object of `size` bytes through rd: its
 * section headers (extended counts through section 0), their names, .text and the GNU
 * build-id note, every offset and size checked against size. 0, -EINVAL (not such an
 * object, or corrupt), -ENODATA (no .text with bytes), -ENOMEM, or rd's error.
 */
int pk_kmod_elf_parse(pk_kmod_read_fn rd, void *ctx, uint64_t size, struct pk_kmod_elf *out);
/* the same over a buffer */
int pk_kmod_elf_parse_mem(const void *buf, size_t len, struct pk_kmod_elf *out);
/* the compression of a file by its first bytes: 0 none, 'g' gzip, 'x' xz, 'z' zstd */
int pk_kmod_compression(const void *head, size_t len);
/* gzip data into a malloc'd buffer of at most max bytes: 0, -EINVAL (corrupt), -EFBIG,
 * -ENOMEM */
int pk_kmod_gunzip(const void *in, size_t len, size_t max, uint8_t **out, size_t *out_len);

struct pk_kmod_opts {
	const char *name;               /* "[x]": the module's name as its map's */
	const char *path;               /* the recorded path of its .ko (NULL: none) */
	const char *release;            /* the recorded `uname -r` (NULL: none) */
	const char *buildid_dirs[3];    /* build-id caches (NULL: none) */
	const char *symfs;              /* perf's --symfs (NULL: none) */
	const char *modules_dir;        /* NULL: /lib/modules (under symfs) */
	const uint8_t *want_bid;        /* the recorded build-id of the module (len 0: none) */
	size_t want_bid_len;
	uint64_t map_start;             /* the recorded load address (of its .text) */
	bool have_map;                  /* map_start is known (else nothing is read) */
	bool kcore_ok;                  /* the kernel's code is this boot's kcore (bias 0) */
	int kcore_err;                  /* else why kcore is not read (the kernel's reason) */
	const char *proc_modules;       /* NULL: /proc/modules */
};

struct pk_kmod;
/* Choose the module's code (never fails but for -ENOMEM; pk_kmod_info says why not). */
int pk_kmod_open(const struct pk_kmod_opts *o, struct pk_kmod **out);
void pk_kmod_free(struct pk_kmod *k);
void pk_kmod_info(const struct pk_kmod *k, struct pk_annotate_kmod *out);
/* The .ko's code at recorded address addr: bytes read, -ENOENT (no .ko chosen: kcore is
 * read by the caller), -ENODATA (outside .text). */
long pk_kmod_read(struct pk_kmod *k, uint64_t addr, void *buf, size_t len, uint16_t *e_machine);

/* the recorded address where the .ko's .text ends (0: no .ko chosen) */
uint64_t pk_kmod_text_end(const struct pk_kmod *k);

/* the modules of one annotate session, each chosen once */
struct pk_kmods;
struct pk_kmod *pk_kmods_get(struct pk_kmods **set, const void *key);
int pk_kmods_add(struct pk_kmods **set, const void *key, struct pk_kmod *k);
void pk_kmods_free(struct pk_kmods *set);

#endif
