/* SPDX-License-Identifier: MIT */
/*
 * perfkit/symbol.h - the machine model (threads and their memory maps over time, built
 * from COMM / FORK / EXIT / MMAP / MMAP2 records), symbolisation of user and kernel
 * addresses (ELF symbol tables through elfutils, PLT stubs, separate debug files,
 * /proc/kallsyms, the vdso, /tmp/perf-PID.map JIT maps), source lines and inline frames
 * from DWARF, and DWARF unwinding of `--call-graph dwarf` samples.
 *
 * Protocol (a report or script tool):
 *     m = pk_machine__new(&opts);                 // opts.host: recorded on this machine
 *     for each BUILD_ID feature entry: pk_machine__add_build_id(m, ...);
 *     for each record in time order:
 *         if not a sample: pk_machine__process(m, &rec);  (ignores what it does not use)
 *         else: pk_machine__resolve(m, pid, tid, ip, cpumode, &loc);
 *               n = pk_machine__callchain(m, &sample, frames, max);
 *               pk_dso__srcline(loc.dso, loc.dso_addr, ...), pk_dso__inlines(...)
 *     pk_machine__free(m);
 *
 * Everything is loaded lazily and cached for the machine's lifetime: a DSO's symbol
 * table is read and sorted once (at its first lookup), source lines and inline chains are
 * cached per address, and DWARF unwinding keeps one libdwfl session per process. Strings
 * and arrays returned by lookups stay valid until pk_machine__free. Memory grows with the
 * number of threads, maps, DSOs and distinct looked-up addresses, never with the number
 * of records.
 *
 * Hostile input: paths named by MMAP records are opened only if they are regular files
 * (O_NONBLOCK, so FIFOs never block; devices, directories and symlink loops are refused;
 * files over 4 GiB and ELF files whose sections or segments lie outside the file are
 * refused). Such DSOs give unresolved symbols and one warning each (through the log
 * callback). A machine is not thread-safe: use one per thread.
 */
#ifndef PERFKIT_SYMBOL_H
#define PERFKIT_SYMBOL_H

#include <perfkit/common.h>
#include <perfkit/record.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pk_machine;
struct pk_dso;

struct pk_machine_opts {
	size_t sz;
	/* The recording was made on this machine during this boot (the caller compared the
	 * file's osrelease / kernel build-id with the running system): kernel symbols come
	 * from /proc/kallsyms and [vdso] from this process's own vdso image. Otherwise
	 * kernel and vdso addresses stay unresolved. */
	bool host;
	/* Keep C++/Rust names mangled (otherwise they are demangled as perf shows them,
	 * pk_symbol__demangle). */
	bool no_demangle;
	/* Overrides for tests (NULL: the system paths). */
	const char *kallsyms;   /* "/proc/kallsyms"; "" = no kernel symbols, quietly */
	const char *jit_dir;    /* directory of perf-PID.map files, "/tmp" */
	const char *debug_dir;  /* global debug directory, "/usr/lib/debug" */
	/* perf's build-id cache (copies of recorded binaries, filled by `perf record`):
	 * NULL = ~/.debug, the home directory being that of the effective user's passwd
	 * entry (perf's default place; $HOME and $PERF_BUILDID_DIR are not read: pass them
	 * here); "" = not used. A file whose recorded build-id no longer matches the one on
	 * disk (rebuilt, or deleted), and a [vdso] not readable here, is read from
	 * <dir>/.build-id/xx/yyyy.../elf (or .../vdso) when that copy has the recorded
	 * build-id. */
	const char *buildid_dir;
	/* A second build-id cache searched after buildid_dir (NULL or "": none; ignored
	 * when it is buildid_dir). perf record writes its copies to $HOME/.debug whatever
	 * $PERF_BUILDID_DIR says, so a caller that takes buildid_dir from that variable
	 * passes $HOME/.debug here to find them. */
	const char *extra_buildid_dir;
	/* perfkit's own cache directory (the parsed /proc/kallsyms, debug files with their
	 * sections decompressed), created 0700 with its parent when first written. NULL or
	 * "" = no persistent cache: everything is parsed again by every machine. The tool
	 * passes $XDG_CACHE_HOME/perfkit or ~/.cache/perfkit unless $PK_NO_CACHE is set. */
	const char *cache_dir;
	/* Check knobs, for comparing perfkit's fast paths with libdw's own answers (slower):
	 * every DWARF unwinding step through libdwfl's CFI interpretation (no cached CFI
	 * rows), and inline chains from libdw's scope walks (dwarf_getscopes) rather than
	 * the per-CU scope trees. */
	bool unwind_libdwfl_only;
	bool scopes_libdw;
	/* perf's --symfs: a directory the recorded files are looked up under (<symfs>/<path>,
	 * and the debug directory <symfs>/usr/lib/debug unless debug_dir is given), which is
	 * also searched as a build-id cache (<symfs>/.build-id/xx/yyyy.../elf, the layout of
	 * an extracted `perfkit archive`). NULL or "": the files where they were recorded. */
	const char *symfs;
	/*
	 * A finder of debug files called when a DSO needs its separate debug file (a stripped
	 * binary's symbol table, DWARF for lines and inline frames) and none with its build-id
	 * is found locally (the debug directory, the debuglink, the build-id caches). It gets
	 * the build-id and returns an open fd of a candidate file and its path in *path
	 * (malloc'ed; the machine frees it), or a negative errno (-ENOENT: none). The machine
	 * checks the file's build-id, asks once per build-id and calls it on the thread that
	 * loads symbols. The tool fetches from debuginfod servers with it; NULL: none.
	 */
	int (*find_debuginfo)(void *ctx, const uint8_t *build_id, size_t len, char **path);
	void *find_debuginfo_ctx;
	/* Read no data objects (STT_OBJECT) from the objects' symbol tables: data addresses
	 * (pk_machine__resolve_data) then resolve to functions only. For clients that look
	 * up code addresses alone and live long (perfkit top), whose every loaded object's
	 * table stays in memory. */
	bool no_data_symbols;
	/* Close each object's file once its symbols are read (it is opened again, once,
	 * when its code or debug information is asked for: pk_dso__read, source lines). A
	 * long-lived machine then holds no mapping of every object it met, whose symbol
	 * and string tables stay resident after the load (perfkit top: a third of its
	 * resident set, system-wide). A file replaced in between by one with another
	 * build-id is not used. The kallsyms cache (cache_dir) is then read through its
	 * descriptor, a block of records and a name per look-up, instead of mapped: the
	 * page cache's large folios put the whole 7 MB file into the resident set of a
	 * system-wide profile within a second. */
	bool close_files;
	/* Load the symbol tables of objects on a thread of the machine's own, ahead of the
	 * samples that need them: an object is queued when a code mapping of it is added
	 * (pk_machine__mmap) and its build-id is known by then (the recording's build-id
	 * list names the objects with samples), so that its table is read while the
	 * caller works through the records in between. What the caller sees is the same
	 * as without (messages included, on the caller's thread, at the first use); a
	 * build-id given (pk_machine__add_build_id) after the object was queued is
	 * ignored. Not with find_debuginfo (the caller's finder is called on the caller's
	 * thread only). A pk_session queues at its opening the user-space objects of the
	 * recording's build-id list (at most 256, in the list's order), for more lead
	 * time. All calls on the machine must still come from one thread. */
	bool preload;
	size_t :0;
};

/* Create an empty machine. Returns NULL with errno (EINVAL bad opts, ENOMEM). */
PK_API struct pk_machine *pk_machine__new(const struct pk_machine_opts *opts);
/* Free the machine, its threads, maps, DSOs and every cached lookup. NULL is accepted. */
PK_API void pk_machine__free(struct pk_machine *m);

/*
 * Feed one decoded record: COMM, FORK, EXIT, MMAP and MMAP2 change the model (MMAP/MMAP2
 * with pid -1 or a kernel cpumode add kernel maps: `[kernel.kallsyms]_text` and modules);
 * every other type is ignored (returns 0). Records must come in time order.
 * Returns 0 or -ENOMEM.
 */
PK_API int pk_machine__process(struct pk_machine *m, const struct pk_record *r);

/* The same operations one by one (synthesised models, tests). */
PK_API int pk_machine__comm(struct pk_machine *m, uint32_t pid, uint32_t tid,
			    const char *comm, bool exec);
/* FORK: a new thread `tid` of process `pid`, created by `ptid` of `ppid`. pid == ppid
 * means a thread of the same process (shares its maps); otherwise the maps of the
 * parent are copied. */
PK_API int pk_machine__fork(struct pk_machine *m, uint32_t pid, uint32_t ppid,
			    uint32_t tid, uint32_t ptid);
/* EXIT: the thread is retired (its maps stay readable for late samples until the tid is
 * reused by a later FORK/COMM, or pk_machine__trim lets them go). */
PK_API int pk_machine__exit(struct pk_machine *m, uint32_t pid, uint32_t tid);

struct pk_mmap_event {
	uint32_t pid, tid;      /* pid (uint32_t)-1: a kernel map */
	uint64_t addr, len, pgoff;
	uint32_t prot, flags;   /* MMAP2 only (0 otherwise) */
	const char *filename;
	const uint8_t *build_id;/* MMAP2 build-id variant, else NULL */
	size_t build_id_size;
	bool kernel;            /* cpumode was kernel (or pid == -1) */
	bool data;              /* PERF_RECORD_MISC_MMAP_DATA: only data lookups see it
				 * (pk_machine__resolve_data) */
};
PK_API int pk_machine__mmap(struct pk_machine *m, const struct pk_mmap_event *ev);

/*
 * Tell the machine the build-id recorded for a DSO path (BUILD_ID feature, or the MMAP2
 * build-id variant). When the file on disk has another build-id, one warning is logged
 * and the file's symbols are not used (a separate debug file with the recorded build-id,
 * /usr/lib/debug/.build-id/xx/yyy.debug, is used instead if present).
 */
PK_API int pk_machine__add_build_id(struct pk_machine *m, const char *filename,
				    const uint8_t *build_id, size_t len);

/*
 * The generation of the maps that resolving an address of thread (pid, tid) in cpumode
 * searches: it changes whenever those maps may answer differently (an mmap into the
 * process, an exec, a new process behind a reused tid, a thread attached to its process,
 * a kernel map for kernel modes), and threads sharing an address space share it. Two
 * lookups of one address under the same generation resolve alike, so a consumer keys its
 * memo of resolved addresses by (generation, cpumode, address) and need not follow the
 * records that change the machine. Generations are unique within a machine (a mode that
 * searches both the process's and the kernel's maps, PK_CPUMODE_UNKNOWN, combines the
 * two). 0 if m is NULL or the thread could not be created (no memory).
 */
PK_API uint64_t pk_machine__maps_gen(struct pk_machine *m, uint32_t pid, uint32_t tid,
				     uint8_t cpumode);

/* The command name of a thread, or NULL if the tid is unknown. */
PK_API const char *pk_machine__comm_of(struct pk_machine *m, uint32_t tid);

/*
 * Give back what a long-lived machine (a live profile of the system) no longer needs:
 * - the symbol tables of the objects that no live thread (one whose EXIT has not come)
 *   has mapped at the last idle + 1 calls in a row (twice as many calls for an object
 *   each time its tables were freed before: programs run again and again) are freed, and
 *   read again, from the file then at the object's path, when an address of theirs is
 *   looked up; objects whose source lines, inline frames or code were asked for keep
 *   theirs;
 * - the maps of threads that exited idle + 1 calls ago (their addresses then resolve to
 *   no map; the threads keep their command names);
 * - the pages of the kallsyms cache that look-ups touched (back to the page cache).
 * Symbol names given out for a freed object (pk_dso__symbol, pk_machine__resolve) are
 * invalid after the call: copy what outlives it. Call it between records, on the thread
 * that feeds the machine. Returns the number of objects whose tables were freed.
 */
PK_API size_t pk_machine__trim(struct pk_machine *m, unsigned int idle);

/* Result of an address lookup. Strings are owned by the machine. */
struct pk_addr_loc {
	struct pk_dso *dso;     /* NULL when no map covers the address */
	const char *dso_name;   /* the map's path, "[kernel.kallsyms]", "[ext4]", "[vdso]",
				 * "//anon", or "[unknown]" */
	uint64_t map_start, map_end, map_pgoff; /* no map (USER mode): map_start..map_end
						 * is the unmapped range around the address */
	uint64_t dso_addr;      /* the address in the DSO's own address space (ELF virtual
				 * address, after PIE/ET_DYN load bias; the absolute address for
				 * kernel, JIT and anonymous maps): what pk_dso__* take */
	const char *sym;        /* symbol name as perf shows it (pk_symbol__demangle), NULL
				 * if unresolved */
	uint64_t sym_start;     /* dso address of the symbol */
	uint64_t sym_size;
	uint64_t sym_off;       /* dso_addr - sym_start */
	uint8_t cpumode;        /* enum pk_cpumode the lookup used */
	bool kernel;            /* kernel or module map: perf's "[k]" */
};

/*
 * Find the map covering `addr` in the address space of thread `tid` (process `pid`;
 * an unknown thread is created and joins process `pid`) for the given cpumode (KERNEL /
 * GUEST_KERNEL look in the kernel maps; USER in the process's; UNKNOWN tries the
 * process first, then the kernel), then its symbol. Always fills *loc (dso_name
 * "[unknown]" without a map). Returns 0 when a symbol was found, -ENOENT when no map
 * covers the address, -ENODATA when the map has no symbol for it.
 */
PK_API int pk_machine__resolve(struct pk_machine *m, uint32_t pid, uint32_t tid, uint64_t addr,
			       uint8_t cpumode, struct pk_addr_loc *loc);

/*
 * pk_machine__resolve for a data address (PERF_SAMPLE_ADDR of a page fault, say): the
 * data mappings of the process (recorded with MMAP_DATA: record -d) count too, and the
 * symbol is a data object of the ELF symbol table (STT_OBJECT, zero-sized ones
 * reaching to the next) or else a function. Same errors as pk_machine__resolve; with
 * -ENOENT in USER mode, map_start..map_end is the range around the address that neither
 * a code nor a data mapping covers.
 */
PK_API int pk_machine__resolve_data(struct pk_machine *m, uint32_t pid, uint32_t tid,
				    uint64_t addr, uint8_t cpumode, struct pk_addr_loc *loc);

/*
 * The DSO for a path (created on first use; owned by the machine), for direct lookups
 * without a map. NULL with errno ENOMEM.
 */
PK_API struct pk_dso *pk_machine__dso(struct pk_machine *m, const char *path);

PK_API const char *pk_dso__name(const struct pk_dso *d);
/* basename of the path ("libc.so.6"), or the bracketed name ("[kernel.kallsyms]"). */
PK_API const char *pk_dso__short_name(const struct pk_dso *d);
/* true for the kernel and kernel modules. */
PK_API bool pk_dso__is_kernel(const struct pk_dso *d);

/*
 * Load the DSO's symbols now (normally done at the first lookup). Returns the number of
 * symbols, or a negative errno: -EINVAL (not a regular file / not ELF / corrupt),
 * -EFBIG (too large), -ESTALE (build-id mismatch and no debug file), -ENOENT, ...
 * A failure is remembered (and logged once); later lookups return no symbol.
 */
PK_API int pk_dso__load(struct pk_dso *d);

/* The build-id of the file that was loaded (after pk_dso__load). Returns its length (0 if
 * none) and sets *id (owned by the DSO). */
PK_API size_t pk_dso__build_id(struct pk_dso *d, const uint8_t **id);

/*
 * Translate a file offset of the DSO (map pgoff + (addr - map start)) to its ELF virtual
 * address through the program headers (the PIE / ET_DYN / prelink rule). For non-ELF
 * DSOs the offset is returned unchanged.
 */
PK_API uint64_t pk_dso__offset_to_addr(struct pk_dso *d, uint64_t offset);

/*
 * Copy up to len bytes of the DSO's code or data at ELF virtual address dso_addr from the
 * file the symbols were loaded from (a section's file contents; stops at the end of that
 * section). *e_machine (if non-NULL) gets the file's EM_* machine. Returns the bytes
 * copied, or a negative errno: -EOPNOTSUPP (kernel, module or JIT DSO), the load's
 * error (-ENOENT missing file, -ESTALE build-id differs, -EINVAL not ELF), -ENODATA (no
 * file contents at that address: a separate debug file or .bss).
 */
PK_API long pk_dso__read(struct pk_dso *d, uint64_t dso_addr, void *buf, size_t len,
			 uint16_t *e_machine);

/*
 * The symbol containing `dso_addr`: its name (owned by the DSO) and, if non-NULL, its
 * start and size. PLT stubs are named "func@plt". NULL if none.
 */
PK_API const char *pk_dso__symbol(struct pk_dso *d, uint64_t dso_addr, uint64_t *start,
				  uint64_t *size);
/* The start address of a symbol by exact (demangled) name, for tests and `--symbols`.
 * Returns 0 and *addr, or -ENOENT. Linear in the number of symbols. */
PK_API int pk_dso__symbol_addr(struct pk_dso *d, const char *name, uint64_t *addr);

/*
 * Source file and line of `dso_addr` from the DSO's DWARF line table (or its separate
 * debug file). Cached per address. Returns 0, or -ENOENT (no line information).
 * *file is owned by the DSO.
 * An address no line table covers gets perf 6.1's answer (binutils' addr2line's): the
 * file of the nearest function symbol at or below it, named by the symbol table's
 * STT_FILE entries (libgcc's "cpuinfo.o"; may be ""), with line 0; -ENODATA when there
 * is such a function but no file for it (perf's "??:0"); -ENOENT when there is none.
 */
PK_API int pk_dso__srcline(struct pk_dso *d, uint64_t dso_addr, const char **file,
			   unsigned int *line);

/*
 * The compilation directory (DW_AT_comp_dir) of the DWARF unit holding `dso_addr`: what a
 * relative file name of pk_dso__srcline is relative to. Owned by the DSO; NULL with errno
 * ENOENT (no unit there, or it names none) or EINVAL.
 */
PK_API const char *pk_dso__comp_dir(struct pk_dso *d, uint64_t dso_addr);

/* One function of an inline chain. */
struct pk_inline_frame {
	const char *func;       /* function name (demangled as pk_symbol__demangle does);
				 * "??" if DWARF has none */
	const char *file;       /* for frames[0]: the source location of the address;
				 * for frames[i], i > 0: where frames[i-1] was inlined into
				 * this function (its DW_AT_call_file) */
	unsigned int line;      /* matching line, 0 if unknown */
};
/*
 * The inline chain at `dso_addr`, innermost first, ending with the out-of-line function
 * that contains them (so an address outside any inlined code gives one frame). Cached.
 * Returns the number of frames (>= 1) with *frames owned by the DSO, or -ENOENT (no
 * DWARF for the address).
 */
PK_API int pk_dso__inlines(struct pk_dso *d, uint64_t dso_addr,
			   const struct pk_inline_frame **frames);
/* The same chain with function names only: file NULL and line 0 unless an earlier
 * pk_dso__inlines call at this address looked them up (skips reading the CU's line table,
 * for callers that print only names). */
PK_API int pk_dso__inline_names(struct pk_dso *d, uint64_t dso_addr,
				const struct pk_inline_frame **frames);

/* A parameter of a function from DWARF (pk_dso__params). */
struct pk_param {
	char name[64];
	char type[96];          /* C spelling: "long", "const char *", "struct s" */
	int reg;                /* perf register number (bit of sample_regs_user) holding the
				 * value at the address asked for; -1: not in one register
				 * there (stack, split, optimised out) or unknown */
	uint8_t size;           /* bytes of an integer, enum or pointer value (1..8); 0: the
				 * value is not a scalar (a struct passed by value, a float) */
	bool is_signed;         /* a signed integer */
	bool is_pointer;        /* a pointer or reference (char * too: never dereferenced) */
};
/*
 * The parameters of the function whose code contains `dso_addr` (the innermost
 * out-of-line function; a function's entry for a uprobe), in declaration order, with
 * where each is at that address according to its DWARF location list. Fills at most
 * `max` entries of out and returns the number of parameters (which may exceed max), or
 * -ENOENT (no DWARF, or no function at the address).
 */
PK_API int pk_dso__params(struct pk_dso *d, uint64_t dso_addr, struct pk_param *out, size_t max);

/* Names longer than this stay mangled (see pk_symbol__demangle). */
#define PK_DEMANGLE_MAX 8192
/*
 * A mangled name in the form perf shows it (`perf report`, `perf script`): C++ names
 * (Itanium ABI, "_Z...") and Rust names (legacy "_ZN...17h<hash>E" and v0 "_R...")
 * decoded by libiberty's demanglers as perf calls them, without parameter lists, cv/ref
 * qualifiers, GCC clone suffixes or Rust hashes ("_ZNK2ns3BoxIlE4spinEl.isra.0" ->
 * "ns::Box<long>::spin", "_RNvCs6GmmlP4bgsG_1r8hot_loop" -> "r::hot_loop"), and OCaml
 * names as perf decodes them ("camlStdlib__List__map_154" -> "Stdlib.List.map_154").
 * This is the form every symbol name of this library has (pk_addr_loc.sym,
 * pk_dso__symbol, inline frames) unless the machine was created with no_demangle.
 * Writes the NUL-terminated result to `buf` (`len` bytes) and returns its length, or:
 * -EINVAL: not a name these schemes decode (show it as it is); -ENAMETOOLONG: longer
 * than PK_DEMANGLE_MAX bytes (the demanglers' stack use grows with the input);
 * -ENOSPC: the result does not fit in `len` bytes. Thread-safe; allocates nothing.
 */
PK_API int pk_symbol__demangle(const char *name, char *buf, size_t len);

/*
 * Whether a DWARF function name (of an inline chain, pk_dso__inlines) names the same
 * function as an ELF symbol, as perf decides when it marks frames "(inlined)": equal
 * names, or equal but for leading underscores (__clone3 / clone3) and an ELF symbol
 * version suffix ("@GLIBC_2.2.5"). glibc's internal aliases (__GI___fstatat64 for
 * fstatat64) and GCC clones ("msort.constprop.0") are other functions, as for perf.
 */
PK_API bool pk_symbol__same_function(const char *dwarf_name, const char *elf_name);

/* One entry of a resolved call chain. */
struct pk_chain_entry {
	uint64_t ip;            /* as the kernel / unwinder gave it (caller frames of DWARF
				 * unwinding are return address - 1, as perf reports them) */
	uint8_t cpumode;        /* enum pk_cpumode of the address space of ip */
	uint8_t flags;          /* PK_CHAIN_UNWOUND */
};
/* the entry comes from DWARF unwinding (not from the recorded frame-pointer chain) */
#define PK_CHAIN_UNWOUND 0x1u

/*
 * Unwind the user stack of a `--call-graph dwarf` sample (REGS_USER + STACK_USER) with
 * libdwfl, reading memory from the sample's stack copy and the mapped ELF files. ips[0]
 * is the sample's user ip; caller frames are return address - 1. Uses a cached libdwfl
 * session per process. The register block is read as perf's sample_regs_user of the
 * architecture of the process's ELF files: x86-64 and arm64 are unwound (a file recorded
 * on an arm64 machine is read on any host, given its binaries). Returns the number of
 * ips (>= 1 if the sample has user regs), -ENODATA without REGS_USER / STACK_USER,
 * -ENOENT for an unknown thread, -EOPNOTSUPP for another architecture (said once per
 * machine through the log callback; pk_machine__callchain then gives the sampled
 * address as the only user frame).
 */
PK_API int pk_machine__unwind(struct pk_machine *m, const struct pk_sample *s, uint64_t *ips,
			      size_t max);

/*
 * The call chain of a sample, innermost first: the kernel part of s->callchain (markers
 * removed, cpumode tracked), then the user part from DWARF unwinding when the sample has
 * REGS_USER + STACK_USER (falling back to the frame-pointer entries of s->callchain when
 * the unwinder gives fewer frames), else the callchain as recorded; without a callchain,
 * just s->ip. Returns the number of entries written (<= max). A recorded chain holding a
 * value in the marker range that is no context marker (PK_CTX_UNKNOWN: a corrupted chain)
 * is dropped whole, as perf drops it: 0 entries (but the unwound user frames of a
 * `--call-graph dwarf` sample, which perf unwinds all the same).
 */
PK_API int pk_machine__callchain(struct pk_machine *m, const struct pk_sample *s,
				 struct pk_chain_entry *out, size_t max);

/*
 * Cut a resolved call chain (from pk_machine__callchain) as perf does with --max-stack N
 * (perf's default 127, PERF_MAX_STACK_DEPTH): at most max_stack of the recorded entries
 * (kernel and frame-pointer frames) and, separately, at most max_stack of the DWARF-unwound
 * ones (PK_CHAIN_UNWOUND), keeping their order. Works in place; returns the new number of
 * entries, or -EINVAL (chain NULL with n > 0), -ERANGE (n > INT_MAX). Callers asking
 * pk_machine__callchain for max_stack frames alone would let kernel frames take the place
 * of unwound user frames; ask it for the chain's full capacity, then cut.
 */
PK_API int pk_callchain__cut(struct pk_chain_entry *chain, size_t n, unsigned int max_stack);

/* Statistics for benchmarks: unwound samples, their total frames, and samples where the
 * frame-pointer fallback was used. Any pointer may be NULL. */
PK_API void pk_machine__unwind_stats(const struct pk_machine *m, uint64_t *samples,
				     uint64_t *frames, uint64_t *fallbacks);

/* The same and more, in a struct that carries its size (PK_OPTS declares one). */
struct pk_unwind_stats {
	size_t sz;
	uint64_t samples;       /* samples unwound */
	uint64_t frames;        /* their frames */
	uint64_t fp_fallbacks;  /* samples that kept a frame-pointer chain instead */
	/* samples walked by libdwfl itself: an address whose CFI row is more than register
	 * + offset rules (PLT entries, signal trampolines), or PERFKIT_UNWIND=libdwfl set
	 * when the machine was created; the rest use per-address rows cached per process */
	uint64_t libdwfl_samples;
	uint64_t cfi_rows;      /* rows computed (cache misses) */
};
PK_API int pk_machine__get_unwind_stats(const struct pk_machine *m, struct pk_unwind_stats *st);

#ifdef __cplusplus
}
#endif
#endif
