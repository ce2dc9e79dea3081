/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/dso-internal.h - what the files of a DSO share among themselves: dso.c (the
 * objects and public API), dso-load.c (loading), debuginfo.c (debug files) and srcline.c
 * (source lines, inline chains). Never installed.
 */
#ifndef PK_SYMBOL_DSO_INTERNAL_H
#define PK_SYMBOL_DSO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbol-internal.h"

/* debuginfo.c: <debug_dir>/.build-id/xx/yyyy....debug (malloc'ed; NULL for ids under two
 * bytes or without memory) */
char *pk_build_id_path(const char *debug_dir, const uint8_t *id, size_t len);
/* debuginfo.c: perf's build-id cache copy: <dir>/.build-id/xx/yyyy.../elf (".../vdso" for
 * the vdso); malloc'ed or NULL */
char *pk_build_id_cache_path(const char *dir, const uint8_t *id, size_t len, bool vdso);
/* debuginfo.c: does the ELF file at path carry this build-id? */
bool pk_file_has_build_id(const char *path, const uint8_t *id, size_t len);

/* srcline.c: free the DSO's scope trees (pk_dso_free) */
void pk_scope_cus_free(struct pk_dso *d);

#endif
