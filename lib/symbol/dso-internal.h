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

/* dso-load.c: read the ELF file of d (PK_DSO_ELF or PK_DSO_VDSO) into its tables;
 * touches d alone (and reads the machine's settings), says nothing: callable from the
 * preloader's thread. 0 or -errno. */
int pk_dso_load_elf(struct pk_dso *d);

/* dso-preload.c: tables read ahead on a thread of the machine's (opts.preload).
 * PK_PRE_NONE: not queued (or taken back); QUEUED: waiting for the thread; LOADING: the
 * thread reads it; DONE: read, pre_err is pk_dso_load_elf's result. */
enum { PK_PRE_NONE, PK_PRE_QUEUED, PK_PRE_LOADING, PK_PRE_DONE };
struct pk_machine;
/* Queue d if the machine preloads and d qualifies (see pk_machine_opts.preload). */
void pk_preload_queue(struct pk_machine *m, struct pk_dso *d);
/* On the machine's thread, before loading d: true when the thread read it (waited
 * for if it is being read), *err its result; false: the caller reads it itself (d
 * taken out of the queue if it was in it). */
bool pk_preload_take(struct pk_dso *d, int *err);
/* On the machine's thread, at the kallsyms load: true when the thread worked out the
 * cache's key, path and view (pk_kcache_prepare; waited for if it is at it), *k the
 * result, now the caller's; false: the caller works them out. */
struct pk_kcache_pre;
bool pk_preload_take_kcache(struct pk_machine *m, struct pk_kcache_pre *k);
/* that work's PK_PRE_* (tests) */
int pk_preload_kcache_state(struct pk_machine *m);
/* d's PK_PRE_* (read under the preloader's lock) */
int pk_preload_state(struct pk_dso *d);
/* Stop the thread (after the object it is reading, if any) and free its state. */
void pk_preload_stop(struct pk_machine *m);

/* srcline.c: open d's DWARF and index its compile units (libdwfl's address ranges, or
 * the unit table of srcline.c when those miss: every unit header interned), so that
 * the first source line look-up reads only its unit's line table. Touches d alone
 * (through d->mod, never reopening the file): callable from the preloader's thread
 * while it owns d. */
void pk_dso_warm_lines(struct pk_dso *d);
/* srcline.c: free the DSO's scope trees (pk_dso_free) */
void pk_scope_cus_free(struct pk_dso *d);

#endif
