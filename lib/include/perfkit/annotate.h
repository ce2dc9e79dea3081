/* SPDX-License-Identifier: MIT */
/*
 * perfkit/annotate.h - where inside its functions an event's samples fell: the samples
 * and period of every sampled instruction address, per (DSO, symbol), and the
 * disassembly of a symbol (capstone: x86-64, AArch64) with those counts on each
 * instruction. What `perfkit annotate` prints (the role of perf annotate).
 *
 *     r = pk_data_reader__open("perf.data", NULL);
 *     a = pk_annotate__load(r, &opts);           // r must outlive a
 *     for (i = 0; i < pk_annotate__nr_symbols(a); i++) {   // hottest first
 *             pk_annotate__symbol(a, i, &sym);
 *             pk_annotate__disasm(a, i, print_insn, ctx);
 *     }
 *     pk_annotate__free(a); pk_data_reader__free(r);
 *
 * Only the sampled address (the leaf of each sample) counts, in user and kernel mode
 * alike. Kernel code ([kernel.kallsyms]) is read from a vmlinux image or /proc/kcore
 * (pk_annotate__kernel); kernel modules' code is not supported yet (-EOPNOTSUPP).
 */
#ifndef PERFKIT_ANNOTATE_H
#define PERFKIT_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/common.h>
#include <perfkit/data.h>
#include <perfkit/symbol.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ---- source text ----
 * The lines of source files, for showing them between instructions (perfkit annotate).
 * Source files are read as hostile input: only regular files are opened (a FIFO or a
 * device never blocks or streams), a file above max_file_bytes is not read (-EFBIG),
 * and the text kept at once stays under max_total_bytes (the files used longest ago are
 * dropped and read again when asked for). A file that cannot be read is tried once: its
 * error is remembered.
 */
struct pk_source_cache;

struct pk_source_cache_opts {
	size_t sz;
	size_t max_file_bytes;  /* 0: 16 MiB */
	size_t max_total_bytes; /* 0: 64 MiB */
	size_t :0;
};
/* NULL with errno EINVAL or ENOMEM. */
PK_API struct pk_source_cache *pk_source_cache__new(const struct pk_source_cache_opts *opts);
PK_API void pk_source_cache__free(struct pk_source_cache *c);
/*
 * The number of lines of file `path` (read on first use): 0 and *nr_lines, or the
 * negative errno of why it cannot be read (-ENOENT, -EACCES, -EISDIR, -EINVAL not a
 * regular file, -EFBIG above the limit, -EMFILE too many files asked for, -ENOMEM). A
 * last line without a newline counts.
 */
PK_API int pk_source_cache__lines(struct pk_source_cache *c, const char *path,
				  size_t *nr_lines);
/*
 * Line `line` (1 = the first) of file `path`: *text (not NUL-terminated, without its
 * newline, owned by c and valid until the next call on c) and *len. 0, the errors of
 * pk_source_cache__lines, or -ERANGE (line 0 or past the end of the file).
 */
PK_API int pk_source_cache__line(struct pk_source_cache *c, const char *path, size_t line,
				 const char **text, size_t *len);
/* Use len bytes at data as the text of `path` (copied; for tests and callers that hold
 * the text already). 0, -EINVAL, -EFBIG (above max_file_bytes), -EMFILE, -ENOMEM. */
PK_API int pk_source_cache__put(struct pk_source_cache *c, const char *path, const void *data,
				size_t len);

struct pk_annotate;

struct pk_annotate_opts {
	size_t sz;
	/* A second thread reads the symbol tables of the objects that hold min_percent of
	 * the period read so far (every object with samples, without min_percent) while
	 * the file is read, on the machine's preload thread (pk_machine_opts.preload;
	 * objects whose build-id the recording lists, not with find_debuginfo). The
	 * results are the same with or without. (The load reads the file on the caller's
	 * thread: pk_session_opts.samples_unordered.) */
	bool reader_thread;
	/* Options of the machine model the session makes (NULL: its defaults). */
	const struct pk_machine_opts *machine_opts;
	/* The event whose samples count, by name (pk_data_attr__name); NULL: the first
	 * event of the file. */
	const char *event;
	/* x86: Intel syntax in pk_annotate__disasm (default AT&T, perf's) */
	bool intel_syntax;
	/* Symbols below this share of the event's period (percent) may be left out: the
	 * symbols of an object whose samples are all below it are not loaded (its samples
	 * count in stats.skipped). 0 (default): every symbol. */
	double min_percent;
	/* The machine_opts' `host` is the caller's answer, not the file's same-host check
	 * (pk_session_opts.host_known): a caller that hands kernel symbols of its own
	 * (machine_opts.kallsyms, e.g. those of a vmlinux) sets host and this. */
	bool host_known;
	/* Kernel code: an ELF image of the recorded kernel (perf annotate's -k/--vmlinux:
	 * only it is tried); NULL: perf's search (pk_annotate__kernel). */
	const char *vmlinux;
	/* Where the running kernel's code is read (NULL: "/proc/kcore"; "": not tried).
	 * For tests: an ELF core file whose PT_LOAD segments map kernel addresses. */
	const char *kcore;
	/* With reader_thread: the caller will ask for source lines (pk_dso__srcline,
	 * pk_dso__inline_names) of the symbols shown, so the preload thread also opens the
	 * DWARF of each object whose table it reads and indexes its compile units (the
	 * symbol-independent part of the first look-up). The results are the same. */
	bool preload_lines;
	size_t :0;
};

/*
 * Read every sample of the chosen event of r through a pk_session and count, per
 * (DSO, symbol), the samples and period at each sampled address. r is borrowed and must
 * outlive the result (the session and its machine stay open for pk_annotate__disasm).
 * A file corrupt past some point keeps what was read before it (see
 * pk_annotate__stats().reader_error). NULL with errno: EINVAL (bad arguments), ENOENT (no
 * event of that name, or no event), ENOMEM.
 */
PK_API struct pk_annotate *pk_annotate__load(struct pk_data_reader *r,
					     const struct pk_annotate_opts *opts);
/* Free the result, its session and machine. NULL is accepted. */
PK_API void pk_annotate__free(struct pk_annotate *a);

struct pk_annotate_stats {
	size_t sz;              /* caller: sizeof its struct (0: this header's) */
	uint64_t samples;       /* samples of the event, resolved or not */
	uint64_t period;        /* their period */
	uint64_t unresolved;    /* samples with no symbol (not annotated) */
	int reader_error;       /* 0, or the reader's error that ended the file early */
	uint64_t skipped;       /* samples in objects below opts.min_percent: not resolved
				 * (neither among the symbols nor the unresolved) */
	uint64_t preloaded;     /* objects whose symbol table was asked for on a second
				 * thread while the file was read (opts.reader_thread) */
};
/*
 * Resolve the objects the load left out (opts.min_percent; stats.skipped): their symbols
 * join the list (hottest first again: indices from pk_annotate__symbol change) and their
 * samples without a symbol the unresolved. 0 (also with nothing left out), -ENOMEM.
 */
PK_API int pk_annotate__load_skipped(struct pk_annotate *a);
/* Totals of the load. */
PK_API void pk_annotate__stats(const struct pk_annotate *a, struct pk_annotate_stats *st);
/* The objects that samples without a symbol fell in (stats.unresolved, split): how many,
 * and object i's name (a map's path or bracketed name; "[unknown]" for addresses outside
 * every map), its count in *samples. NULL + errno ERANGE past the end. */
PK_API size_t pk_annotate__nr_unresolved(const struct pk_annotate *a);
PK_API const char *pk_annotate__unresolved(const struct pk_annotate *a, size_t i,
					   uint64_t *samples);
/* The name of the event counted (owned by a). */
PK_API const char *pk_annotate__event(const struct pk_annotate *a);

/* Symbols that had samples, hottest (by period) first. */
PK_API size_t pk_annotate__nr_symbols(const struct pk_annotate *a);

struct pk_annotate_sym {
	size_t sz;              /* caller: sizeof its struct (0: this header's) */
	struct pk_dso *dso;     /* owned by a's machine */
	const char *dso_name;   /* the map's path or bracketed name (owned by a) */
	const char *name;       /* the symbol as perf shows it (owned by a) */
	uint64_t start, size;   /* DSO addresses (pk_addr_loc.sym_start / sym_size) */
	uint64_t samples, period;
	bool kernel;            /* kernel or module */
};
/* Symbol i (0 = hottest). Returns 0, or -ERANGE / -EINVAL. */
PK_API int pk_annotate__symbol(const struct pk_annotate *a, size_t i,
			       struct pk_annotate_sym *out);

/* Where the code of kernel symbols is read from (pk_annotate__kernel). */
enum pk_annotate_ksrc {
	PK_ANNOTATE_KSRC_NONE = 0,      /* nowhere: the errors below say why */
	PK_ANNOTATE_KSRC_VMLINUX = 1,   /* an ELF image of the recorded kernel */
	PK_ANNOTATE_KSRC_KCORE = 2,     /* the running kernel's memory (/proc/kcore) */
};
struct pk_annotate_kernel {
	size_t sz;              /* caller: sizeof its struct (0: this header's) */
	int source;             /* enum pk_annotate_ksrc */
	const char *path;       /* the file read, NULL with none */
	/* recorded address - address in that file: the KASLR offset for a vmlinux (whose
	 * addresses pk_annotate__disasm then shows, as perf does), the difference of the
	 * recorded and the running kernel's _text for kcore */
	uint64_t bias;
	const char *release;    /* the kernel release of the vmlinux paths (/boot/vmlinux-R) */
	const uint8_t *recorded_bid;    /* the recording's kernel build-id, NULL: none */
	size_t recorded_bid_len;
	/* Why no vmlinux: -ENOENT (none found; with opts.vmlinux: that file is missing),
	 * -ESTALE (vmlinux_path has another build-id: vmlinux_bid, or none), -ENODATA (it
	 * holds no code: a separate debug file), -EINVAL (not a 64-bit little-endian ELF
	 * image, or corrupt), -EACCES and other open errors. 0 when one is used. */
	int vmlinux_err;
	const char *vmlinux_path;       /* the file vmlinux_err is about */
	const uint8_t *vmlinux_bid;
	size_t vmlinux_bid_len;
	/* Why not kcore: 0 (not tried: a vmlinux was given or used, or --symfs), -ESTALE
	 * (the running kernel is not the recorded one: running_bid, or another release),
	 * -ENOENT (no such file: a kernel without CONFIG_PROC_KCORE), -EACCES / -EPERM (it
	 * needs CAP_SYS_RAWIO), -EINVAL (not an ELF core file), -ENODATA (it does not map
	 * the kernel's text). */
	int kcore_err;
	const char *kcore_path;
	const uint8_t *running_bid;     /* the running kernel's build-id, NULL: unknown */
	size_t running_bid_len;
};
/*
 * Where kernel code comes from, chosen at the first call (or the first disassembly of
 * a kernel symbol) and kept: the pointers are owned by a. Nothing is looked for before:
 * a recording without kernel symbols to show costs nothing. 0, -EINVAL, -ENOMEM.
 */
PK_API int pk_annotate__kernel(struct pk_annotate *a, struct pk_annotate_kernel *out);

/*
 * The code of a live machine's kernel, the running one (perfkit top's annotate view):
 * the file chosen as pk_annotate__kernel chooses it (the given vmlinux only, else the
 * build-id caches and perf's vmlinux paths, then kcore), the running kernel's build-id
 * wanted. NULL+errno only for -EINVAL and -ENOMEM: without a usable file,
 * pk_annotate_kcode__info says why (per cause) and reads fail with -ENOENT.
 */
struct pk_annotate_kcode;
struct pk_annotate_kcode_opts {
	size_t sz;
	const char *vmlinux;    /* an image of the running kernel (-k): only it is tried */
	const char *kcore;      /* NULL: "/proc/kcore"; "": not tried */
	size_t :0;
};
PK_API struct pk_annotate_kcode *pk_annotate_kcode__open(struct pk_machine *m,
							 const struct pk_annotate_kcode_opts *o);
/* The choice (bias: sampled address - address in the file), or why none. */
PK_API void pk_annotate_kcode__info(const struct pk_annotate_kcode *k,
				    struct pk_annotate_kernel *out);
/* The code at sampled address addr into buf: bytes read, or -ENOENT (no file), -ENODATA
 * (not in it), -EINVAL, or pread's error. *e_machine (optional): the file's ELF machine. */
PK_API long pk_annotate_kcode__read(struct pk_annotate_kcode *k, uint64_t addr, void *buf,
				    size_t len, uint16_t *e_machine);
PK_API void pk_annotate_kcode__free(struct pk_annotate_kcode *k);
/* The code of a kernel module's symbol (pk_annotate__module). */
enum { PK_ANNOTATE_KSRC_MODULE = 3 };   /* the module's .ko file */
struct pk_annotate_kmod {
	size_t sz;              /* caller: sizeof its struct (0: this header's) */
	int source;             /* PK_ANNOTATE_KSRC_MODULE, _KCORE, or _NONE (errors say why) */
	const char *path;       /* the file read, NULL with none */
	/* recorded address - address shown: the load address less .text's (a .ko's
	 * addresses are .text's, as perf's objdump shows them); 0 for kcore */
	uint64_t bias;
	const char *name;               /* "[x]" */
	const char *recorded_path;      /* the .ko the recording names, NULL: none */
	const uint8_t *recorded_bid;    /* its recorded build-id, NULL: none */
	size_t recorded_bid_len;
	/* Why no .ko: -ENOENT (none found), -ESTALE (ko_path has another build-id:
	 * ko_bid, or none), -EOPNOTSUPP (ko_path is compressed in a format not read:
	 * ko_comp 'x' xz, 'z' zstd), -EINVAL (not a 64-bit relocatable ELF object, or
	 * corrupt), -ENODATA (no .text), -EFBIG (too large uncompressed), open errors. */
	int ko_err;
	const char *ko_path;
	const uint8_t *ko_bid;
	size_t ko_bid_len;
	int ko_comp;
	/* Why not kcore: -ESTALE (not the boot that recorded: the module is not loaded at
	 * the recorded address now), or the kernel's kcore_err (pk_annotate__kernel) */
	int kcore_err;
};
/*
 * Where the code of symbol i, of a kernel module, comes from (chosen at the first call
 * for its module, or its first disassembly, and kept; pointers owned by a). With a .ko,
 * the symbol's size is cut where the .ko's .text ends (kallsyms gives a module's last
 * symbol the rest of the module's map). 0, -EINVAL
 * (not a module's symbol), -ERANGE, -ENOMEM.
 */
PK_API int pk_annotate__module(struct pk_annotate *a, size_t i, struct pk_annotate_kmod *out);

/* One disassembled instruction (valid during the callback only). */
struct pk_annotate_insn {
	uint64_t addr;          /* DSO address */
	uint8_t bytes[16];
	uint8_t len;
	const char *mnemonic;   /* AT&T syntax on x86 */
	const char *operands;   /* direct branches: "<target hex> <sym+0xoff>" when the
				 * target resolves to a symbol, else the target in hex */
	uint64_t samples, period;
	bool has_target;        /* a direct jump or call */
	uint64_t target;        /* its target (DSO address) */
	const char *target_sym; /* the symbol of the target, or NULL */
	uint64_t target_off;    /* target - start of that symbol */
};
/* Return 0 to go on, a negative errno to stop with it. */
typedef int (*pk_annotate_insn_fn)(void *ctx, const struct pk_annotate_insn *insn);

/*
 * Disassemble symbol i from the bytes of its DSO's ELF file (the file the machine
 * loaded: the path, or perf's build-id cache copy when the recorded build-id differs;
 * for the kernel the file of pk_annotate__kernel, for a module that of
 * pk_annotate__module, whose addresses the instructions then carry), calling fn for every
 * instruction in address order with the counts on it.
 * Returns 0 or a negative errno: -EOPNOTSUPP (JIT code, or a machine other than x86-64
 * and AArch64), -ENOENT (the DSO's file is missing; for the kernel or a module: no
 * usable file, pk_annotate__kernel / pk_annotate__module say why), -ESTALE (its build-id differs from
 * the recorded one and no copy with that build-id was found), -ENODATA (the file holds no
 * code at that address, a separate debug file), -EINVAL (not ELF or corrupt), -ERANGE,
 * -ENOMEM, or fn's return.
 */
PK_API int pk_annotate__disasm(struct pk_annotate *a, size_t i, pk_annotate_insn_fn fn,
			       void *ctx);

struct pk_annotate_disasm_opts {
	size_t sz;
	/* EM_X86_64 (0: that) or EM_AARCH64 */
	uint16_t e_machine;
	/* names branch targets with its symbols (NULL: targets stay unnamed) */
	struct pk_dso *dso;
	/* x86: Intel syntax (default AT&T, perf's) */
	bool intel_syntax;
	/* DSO address - addr's (a kernel's code shown at its image's addresses): branch
	 * targets are named with dso's symbol at target + dso_bias */
	uint64_t dso_bias;
	size_t :0;
};
/*
 * Disassemble len bytes of code that starts at DSO address addr (no counts), calling fn
 * per instruction; stops at the first byte that does not decode. Returns 0, -EINVAL,
 * -EOPNOTSUPP (machine), -ENOMEM, or fn's return.
 */
PK_API int pk_annotate__disasm_bytes(const void *code, size_t len, uint64_t addr,
				     const struct pk_annotate_disasm_opts *opts,
				     pk_annotate_insn_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
