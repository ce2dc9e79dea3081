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
 * alike; the disassembly of kernel code is not supported yet (-EOPNOTSUPP).
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
 * loaded: the path, or perf's build-id cache copy when the recorded build-id differs),
 * calling fn for every instruction in address order with the counts on it. Returns 0 or
 * a negative errno: -EOPNOTSUPP (kernel code, JIT code, or a machine other than x86-64
 * and AArch64), -ENOENT (the DSO's file is missing), -ESTALE (its build-id differs from
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
