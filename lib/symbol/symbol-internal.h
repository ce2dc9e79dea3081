/* SPDX-License-Identifier: MIT */
/* lib/symbol internals: machine, maps, DSOs, symbol tables, caches. Never installed. */
#ifndef PK_SYMBOL_INTERNAL_H
#define PK_SYMBOL_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <elfutils/libdwfl.h>
#include <perfkit/symbol.h>
#include "core/intern.h"

#define PK_DSO_MAX_FILE (4ULL << 30)   /* refuse ELF files above 4 GiB */
#define PK_JIT_MAP_MAX (256u << 20)    /* refuse perf-PID.map files above 256 MiB */
#define PK_BUILD_ID_BYTES 20

/* ---- string arena: many small strings freed together ---- */
struct pk_arena {
	struct pk_arena_chunk *head;
	size_t chunk;           /* the next chunk's size (0: the default, 32 KiB) */
};
char *pk_arena_strdup(struct pk_arena *a, const char *s);
char *pk_arena_strcat(struct pk_arena *a, const char *s, const char *t); /* s then t */
void *pk_arena_alloc(struct pk_arena *a, size_t len);   /* 8-byte aligned, zeroed */
void pk_arena_release(struct pk_arena *a);
/* Bytes the arena holds (its chunks). */
size_t pk_arena_size(const struct pk_arena *a);
/* Copy the strings *strs[0 .. nr) into one chunk of their exact size, point them there,
 * and free everything else the arena held (what a load left: aliases dropped, scratch
 * copies, alignment, the last chunk's tail). 0 or -ENOMEM (then nothing changed). */
int pk_arena_pack(struct pk_arena *a, const char **strs[], size_t nr);

/* ---- symbols ---- */
struct pk_sym {
	uint64_t start, end;    /* [start, end) in DSO addresses */
	const char *name;       /* in the DSO's arena */
	uint8_t bind;           /* STB_* (for choosing among aliases) */
	bool raw;               /* name is the symbol table's, not demangled yet: a DSO's
				 * symbols are demangled when first looked up (pk_dso_sym_name),
				 * the only one of aliases when they are ranked */
	uint32_t seq;           /* input order (set by pk_syms_finish) */
};

enum pk_dso_kind {
	PK_DSO_ELF = 0,         /* a user ELF file named by a map */
	PK_DSO_KERNEL,          /* [kernel.kallsyms] */
	PK_DSO_MODULE,          /* [modname] */
	PK_DSO_VDSO,
	PK_DSO_VSYSCALL,
	PK_DSO_ANON,            /* //anon, [heap], [stack], memfd: ... (JIT if perf-PID.map) */
	PK_DSO_JIT,             /* perf-PID.map symbols */
	PK_DSO_UNKNOWN,         /* [unknown] */
	PK_DSO_KSYM,            /* kernel code of a KSYMBOL record (a BPF program, a
				 * trampoline, out-of-line code): its symbols are the
				 * records', relative to its map, in record order; not in
				 * the machine's table by name (pk_dso_new_ksym) */
};

struct pk_cu_range {
	uint64_t lo, hi;        /* [lo, hi) in DWARF addresses */
	uint64_t die_off;       /* offset of the CU DIE */
};

/* srcline.c: a function symbol as binutils' symbol-table fallback sees it (the source
 * file of an address without line information) */
struct pk_fnfile {
	uint64_t start, size;   /* size >= 1 */
	uint64_t sec_lo, sec_hi; /* its section's addresses */
	const char *file;       /* the STT_FILE name it takes (in the arena), or NULL */
	uint32_t order;         /* index in the symbol table */
};

struct pk_load_seg {            /* PT_LOAD */
	uint64_t offset, vaddr, filesz, memsz;
	uint32_t flags;         /* PF_* */
};

struct pk_machine;

struct pk_dso {
	struct pk_machine *machine;
	char *name;             /* key: path or bracketed name */
	char *short_name;
	enum pk_dso_kind kind;
	uint32_t jit_pid;       /* PK_DSO_JIT */
	uint32_t seq;           /* creation order in its machine (0 first) */
	struct pk_dso *hnext;   /* machine's name hash chain */
	/* build-ids: the recorded one (expected) and the loaded file's */
	uint8_t want_bid[PK_BUILD_ID_BYTES];
	size_t want_bid_len;
	uint8_t bid[PK_BUILD_ID_BYTES];
	size_t bid_len;
	/* loading state */
	bool loaded;            /* attempted */
	int load_err;           /* 0 or negative errno of the attempt */
	bool warned;
	bool finder_asked;      /* machine->find_debuginfo was called for it */
	bool mapped_code;       /* some map of it is a code mapping */
	bool data_only;         /* mapped, but only as data (record -d): not being ELF is
				 * no surprise (ld.so.cache), so no warning */
	bool is_dyn;            /* ET_DYN */
	uint16_t e_machine;     /* EM_* (0 until loaded) */
	struct pk_load_seg *segs;
	size_t nr_segs;
	struct pk_sym *syms;
	size_t nr_syms;
	struct pk_sym *dsyms;   /* data objects (STT_OBJECT), for data addresses only */
	size_t nr_dsyms;
	struct pk_arena arena;
	/* DWARF (lazily): a libdwfl session holding just this file at bias 0 */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	bool file_closed;       /* closed after loading (machine close_files) */
	bool dwarf_tried;
	int8_t cfi;              /* unwinding: 0 unknown, 1 has CFI, -1 has none */
	/* CU address ranges from the CU DIEs, for files without .debug_aranges (clang's
	 * default), which libdw 0.188 cannot map addresses to CUs without */
	struct pk_cu_range *cus;
	size_t nr_cus;
	bool cus_built;
	struct pk_fnfile *fnfiles; /* srcline.c, built at the first address without lines */
	size_t nr_fnfiles;
	bool fnfiles_built;
	int memfd;              /* vdso image copy, -1 otherwise */
	char *load_path;        /* the file actually used (may be a debug file) */
	char *kmod_path;        /* a module's: the .ko its first recorded map names */
	/* caches: dso_addr -> struct pk_srcline_ent / struct pk_inline_ent */
	struct pk_u64map srclines;
	struct pk_u64map inlines;
	/* srcline.c: a DIE's place in its debug section -> its function name (an inline
	 * chain's frames repeat from one address to the next) */
	struct pk_u64map funcnames;
	/* CU DIE offset -> struct pk_scope_cu (srcline.c: the scope tree of a CU, for inline
	 * chains); all of them in a list, for freeing */
	struct pk_u64map scope_cus;
	struct pk_scope_cu *scope_list;
	struct pk_plt_view *plt_view; /* plt-perf.c: read at open, used at load */
	bool debug_warn;        /* loaded from a debug file for a changed file: said at
				 * the end of pk_dso_ensure_loaded (on the machine's thread) */
	/* dso-preload.c: PK_PRE_* (under the preloader's mutex), and its pk_dso_load_elf
	 * result */
	int pstate;
	int pre_err;
	/* trim.c: the last pk_machine__trim that found it mapped by a live thread, how
	 * many calls in a row have not, and how often its tables were freed */
	uint32_t trim_seen, trim_idle;
	uint8_t trim_drops;
};

/* ---- maps and threads ---- */
struct pk_mapent {
	uint64_t start, end, pgoff;
	struct pk_dso *dso;
	uint32_t prot, flags;
};

struct pk_unwind_ctx;

struct pk_mapset {
	struct pk_mapent *v;    /* sorted by start, non-overlapping */
	size_t nr, cap;
	int refcnt;
	uint64_t gen;           /* a machine-wide stamp, new on every change */
	uint32_t pid;
	struct pk_unwind_ctx *unwind; /* per-process libdwfl session */
	struct pk_mapset *data; /* the process's data mappings (record -d), or NULL */
	uint32_t trim_seen;     /* trim.c: the last pk_machine__trim that walked it */
};

struct pk_thread {
	uint32_t pid, tid;
	bool dead;
	uint32_t trim_dead;     /* trim.c: pk_machine__trim calls since it died */
	char comm[32];
	struct pk_mapset *maps;
};

struct pk_ksym_cache_rec;
/* A cache used in place: records and names inside a checked buffer or mapping. */
struct pk_ksym_view {
	const struct pk_ksym_cache_rec *recs;   /* sorted by start, ranges non-empty */
	size_t nr;
	const char *names;
	uint64_t text_addr;
	void *map;              /* the file's mapping (pk_ksym_cache_map), or NULL */
	size_t map_len;
	/* with a mapping: the start of every PK_KSYM_IDX_STRIDE-th record, so that a lookup
	 * touches one page of records rather than a binary search's dozen (NULL: none) */
	uint64_t *idx;
	size_t nr_idx;
	/* read through a file descriptor instead (pk_ksym_cache_open: records and names
	 * neither mapped nor copied; a look-up reads one block of records and the name it
	 * finds, and the names found are kept in `arena`, by name offset in `seen`) */
	bool by_fd;
	int fd;
	uint64_t names_off;     /* file offset of the names (by_fd) */
	size_t names_len;
	struct pk_u64map seen;
	struct pk_arena arena;
};
#define PK_KSYM_IDX_STRIDE 128

struct pk_machine {
	bool host;
	bool no_demangle;
	char *kallsyms_path, *jit_dir, *debug_dir;
	char *buildid_dir;      /* perf's build-id cache; NULL = none */
	char *perf_buildid_dir; /* opts.extra_buildid_dir (unless it is buildid_dir); NULL = none */
	char *cache_dir;        /* opts.cache_dir; NULL = no on-disk caches */
	char *symfs;            /* opts.symfs; NULL = none */
	int (*find_debuginfo)(void *ctx, const uint8_t *id, size_t len, char **path);
	void *find_debuginfo_ctx;
	struct pk_u64map threads;       /* tid -> struct pk_thread */
	struct pk_mapset *kmaps;        /* kernel + modules */
	uint64_t maps_stamp;            /* the last map set generation given out */
	struct pk_dso **dso_hash;
	size_t dso_hash_cap, nr_dsos;
	struct pk_dso *ksym_dsos;       /* PK_DSO_KSYM objects, chained by hnext */
	/* kallsyms (host only): loaded once */
	bool ksyms_loaded;
	struct pk_sym *ksyms;
	size_t nr_ksyms;
	struct pk_arena karena;
	/* or the kallsyms cache used in place (ksyms NULL), shifted by kview_delta */
	struct pk_ksym_view kview;
	uint64_t kview_delta;
	struct pk_sym kscratch;         /* the last symbol found in kview */
	uint64_t kernel_text_pgoff;     /* pgoff of the [kernel.kallsyms]_text map (= _text) */
	bool have_kernel_text;
	/* unwinding statistics */
	uint64_t uw_samples, uw_frames, uw_fallbacks, uw_libdwfl, uw_rows;
	bool uw_libdwfl_only;   /* opts.unwind_libdwfl_only: no cached CFI rows */
	bool uw_arch_warned;    /* said once that an architecture's stacks are not unwound */
	bool scopes_libdw;      /* opts.scopes_libdw: inline chains by libdw's
				 * scope walks, not the scope trees (srcline.c) */
	bool no_data_syms;      /* opts.no_data_symbols: no STT_OBJECT tables */
	bool close_files;       /* opts.close_files: end a DSO's libdwfl session once its
				 * symbols are read (pk_dso_module opens it again) */
	bool preload;           /* opts.preload (and no find_debuginfo) */
	struct pk_preload *pre; /* dso-preload.c: the loader thread, once started */
	bool preload_lines;     /* pk_machine_preload_lines (read by that thread under
				 * its mutex) */
	uint32_t trim_stamp;    /* pk_machine__trim's calls */
};

/* dso.c (objects), dso-load.c (pk_dso_ensure_loaded), syms.c (pk_syms_*) */
struct pk_dso *pk_dso_findnew(struct pk_machine *m, const char *name);
void pk_dso_free(struct pk_dso *d);
/* A new object of a KSYMBOL record named `name` (perf gives each register that makes a
 * map an object of its own: two of one name are two objects), owned by m; NULL. */
struct pk_dso *pk_dso_new_ksym(struct pk_machine *m, const char *name);
/* Add the symbol [start, start + len) named `name` to a PK_DSO_KSYM object: 0, -ENOMEM,
 * -ENOSPC past PK_KSYM_SYMS_MAX of them (a look-up scans them all). */
#define PK_KSYM_SYMS_MAX 256
int pk_dso_ksym_add(struct pk_dso *d, uint64_t start, uint64_t len, const char *name);
int pk_dso_ensure_loaded(struct pk_dso *d);
/* The loaded object's libdwfl module (its file opened again when the machine closes
 * files after reading symbols, opts.close_files), or NULL. */
Dwfl_Module *pk_dso_module(struct pk_dso *d);
/*
 * unwind.c: the DWARF registers 0..n-1 (and the pc) libdwfl starts from, out of a
 * user register block of an ELF machine (EM_X86_64, EM_AARCH64) laid out as perf's
 * sample_regs_user of that architecture; a register not in the block is 0. Returns n,
 * -EOPNOTSUPP for another machine, -EINVAL if max < n.
 */
int pk_uw_initial_regs(uint16_t em, const struct pk_sample_regs *rg, uint64_t *dwarf,
		       size_t max, uint64_t *pc);
/* ELF address at which an executable mapping made at file offset pgoff starts (dso.c) */
uint64_t pk_dso_map_vaddr(struct pk_dso *d, uint64_t pgoff);
const struct pk_sym *pk_syms_find(const struct pk_sym *syms, size_t nr, uint64_t addr);
const char *pk_dso_data_symbol(struct pk_dso *d, uint64_t addr, bool in_data, uint64_t *start,
			       uint64_t *size);
size_t pk_syms_finish(struct pk_sym *syms, size_t nr, bool kallsyms);
/* syms by start, stably (syms.c) */
void pk_syms_sort_start(struct pk_sym *syms, size_t nr);
/* The name of s, one of d's symbols, demangled now if it is not yet (dso.c) */
const char *pk_dso_sym_name(struct pk_dso *d, const struct pk_sym *s);
/* perf's preference between two symbols at one address (its choose_best_symbol): one
 * with a size over a zero-sized one, non-weak over weak, global over local, fewer leading
 * underscores, the longer name. > 0 when a wins, < 0 when b does, 0 when they tie. */
int pk_sym_rank(bool sized_a, unsigned bind_a, const char *name_a, bool sized_b,
		unsigned bind_b, const char *name_b);
/* r_info of relocation i of a SHT_RELA (rela) or SHT_REL section's data; false past it */
bool pk_elf_rel_info(Elf_Data *d, bool rela, size_t i, uint64_t *info);
const char *pk_plt_stub_name(struct pk_dso *d, Elf *e, Elf_Data *sd, size_t strndx,
			     bool elf64, uint64_t info);

/* plt-perf.c: perf 6.1's names of PLT addresses. _read takes what perf reads from the
 * ELF file (NULL: no PLT, not x86-64, or no memory); _apply replays perf's symbol tree
 * from d->mod's symbol table and rewrites the symbols of the PLT sections in v (not yet
 * finished) so that pk_syms_find gives perf's answer there. 0 or -ENOMEM. */
struct pk_plt_view;
struct pk_plt_view *pk_plt_view_read(struct pk_dso *d, Elf *e);
int pk_plt_view_apply(struct pk_dso *d, struct pk_plt_view *p, struct pk_sym **v,
		      size_t *nr, size_t *cap);
void pk_plt_view_free(struct pk_plt_view *p);
/* a symbol-table entry, in table order, for pk_plt_view_apply (p may be NULL) */
void pk_plt_view_note(const struct pk_dso *d, struct pk_plt_view *p, const char *name,
		      const GElf_Sym *sym, GElf_Addr addr, GElf_Word shndx, Elf *elf);
/* Open a path only if it is a regular file of sane size; returns fd or -errno. */
int pk_open_regular(const char *path, uint64_t max_size, uint64_t *size);
/* Demangle if the machine wants it; returns an arena copy (the name itself if plain). */
const char *pk_demangle_into(struct pk_machine *m, struct pk_arena *a, const char *name);
/* the same with sfx appended, in one copy ("name@plt") */
const char *pk_demangle_sfx_into(struct pk_machine *m, struct pk_arena *a, const char *name,
				 const char *sfx);

/* kernel.c */
int pk_kernel_syms_load(struct pk_machine *m);
int pk_dso_load_jit(struct pk_dso *d);
int pk_vdso_memfd(void);

/* ksym-cache.c: the parsed kallsyms table cached on disk (see the file's comment) */
#define PK_KSYM_KEY_LEN 64
struct pk_ksym_cache_src {
	const char *kallsyms, *boot_id, *modules;   /* /proc/kallsyms, ... */
	/* the running kernel's: the ids of its loaded BPF programs join the key (their
	 * symbols sit at the end of kallsyms); no key when they cannot be listed */
	bool live_bpf;
};
/* The key of the table `src` would parse to; -errno if a source is unreadable. */
int pk_ksym_cache_key(const struct pk_ksym_cache_src *src, uint8_t key[PK_KSYM_KEY_LEN]);
/* The cache file's path in the cache directory `dir` (creating it, 0700, if asked). */
int pk_ksym_cache_path(const char *dir, char *buf, size_t len, bool create);
/* kernel.c: what a host machine's kallsyms load begins with, the cache's key, path and
 * view (mapped, or by descriptor with close_files), worked out from the machine's
 * settings alone: callable from the preloader's thread (pk_machine_preload_dso of a
 * kernel object). `cache`: a cache is to be used (key and path known); rc: the view's
 * result (0: kv describes it). */
struct pk_kcache_pre {
	bool cache;
	int rc;
	uint8_t key[PK_KSYM_KEY_LEN];
	char cpath[PATH_MAX];
	struct pk_ksym_view kv;
};
void pk_kcache_prepare(const struct pk_machine *m, struct pk_kcache_pre *k);
/* The cache directory `dir` (a machine's cache_dir; NULL or "": -ENOENT, no cache) into
 * buf, created with its parent if asked. */
int pk_cache_dir(const char *dir, char *buf, size_t len, bool create);

/* debug-cache.c */
/* An fd of the decompressed cached copy of the debug file src_fd (build id id) in the
 * cache directory of m, made now if needed, and its path in *path_out; -ENOENT when m
 * has no cache directory, when the file has nothing compressed (use it as it is) or on
 * any failure (-errno). */
int pk_debug_cache_open(const struct pk_machine *m, int src_fd, const uint8_t *id,
			size_t idlen, char **path_out);
/* Write a finished table (names: one block holding every v[i].name), atomically. */
int pk_ksym_cache_store(const char *path, const uint8_t key[PK_KSYM_KEY_LEN],
			const struct pk_sym *v, size_t nr, const char *names, size_t names_len,
			uint64_t text_addr);
/* Read a cache back: *out malloc'ed, names in `arena`. -ESTALE: other key; -EINVAL:
 * corrupt; -EPERM: not owned by us or writable by others. */
int pk_ksym_cache_load(const char *path, const uint8_t key[PK_KSYM_KEY_LEN],
		       struct pk_arena *arena, struct pk_sym **out, size_t *nr,
		       uint64_t *text_addr);
/* Check a cache image in memory (8-byte aligned) exactly as pk_ksym_cache_decode does
 * and describe it in *kv (pointing into data). Same errors. Fuzzed. */
int pk_ksym_cache_view(const void *data, size_t len, const uint8_t key[PK_KSYM_KEY_LEN],
		       struct pk_ksym_view *kv);
/* Map a cache file (owner and mode checked as pk_ksym_cache_load) and view it. */
int pk_ksym_cache_map(const char *path, const uint8_t key[PK_KSYM_KEY_LEN],
		      struct pk_ksym_view *kv);
void pk_ksym_view_release(struct pk_ksym_view *kv);
/* Read a cache file through its descriptor, kept open (checked as pk_ksym_cache_load
 * checks it, in pieces): a long-lived machine (pk_machine_opts.close_files) then holds
 * neither a copy nor a mapping of it, only the names it looked up. Same errors. */
int pk_ksym_cache_open(const char *path, const uint8_t key[PK_KSYM_KEY_LEN],
		       struct pk_ksym_view *kv);
/* Record i as a symbol (name inside the view, or kept in its arena); false when it
 * cannot be read any more (a view by_fd). */
bool pk_ksym_view_get(struct pk_ksym_view *kv, size_t i, struct pk_sym *out);
/* The record whose [start, end) holds addr, as pk_syms_find would find it. */
bool pk_ksym_view_find(struct pk_ksym_view *kv, uint64_t addr, struct pk_sym *out);
/* The start of the first record named name (in record order): 0, or -ENOENT. */
int pk_ksym_view_find_name(struct pk_ksym_view *kv, const char *name, uint64_t *start);
/* The validating decoder behind pk_ksym_cache_load (hostile input; fuzzed). */
int pk_ksym_cache_decode(const void *data, size_t len, const uint8_t key[PK_KSYM_KEY_LEN],
			 struct pk_arena *arena, struct pk_sym **out, size_t *nr_out,
			 uint64_t *text_addr);

/* trim.c: the names of a loaded DSO's tables packed into one block of their size */
int pk_dso_pack_names(struct pk_dso *d);

/* machine.c */
struct pk_thread *pk_machine_thread(struct pk_machine *m, uint32_t pid, uint32_t tid,
				    bool create);
const struct pk_mapent *pk_mapset_find(const struct pk_mapset *ms, uint64_t addr);
/* A dead thread's maps replaced by an empty set (its share of them let go); -ENOMEM. */
int pk_thread_drop_maps(struct pk_machine *m, struct pk_thread *t);

/* debuginfo.c: libdwfl callbacks with our hostile-safe debuginfo finder */
const Dwfl_Callbacks *pk_dwfl_callbacks(void);

/* unwind.c */
void pk_unwind_ctx_free(struct pk_unwind_ctx *u);

#endif
