/* SPDX-License-Identifier: MIT */
/*
 * perfkit/data.h - the perf.data file format: a writer (file mode and pipe mode, feature
 * sections, optional zstd compression) whose output the stock `perf report`/`perf script`
 * read, and a streaming reader for files written by us and by `perf record`.
 *
 * Only files in the byte order of this machine are supported; a byte-swapped file is
 * rejected with -PK_ERR_FORMAT and a log message saying so.
 *
 * Writer protocol:
 *     w = pk_data_writer__open("perf.data", &opts);
 *     pk_data_writer__add_attr(w, &attr, "cpu-clock", ids, nr_ids);   (every attr first)
 *     pk_data_writer__set_tracing_data(w, blob, len)  (tracepoints; before any record)
 *     loop: pk_data_writer__write(w, bytes, len)  (raw record bytes, e.g. ring chunks)
 *           pk_data_writer__write_record(w, hdr)   (one record)
 *           pk_data_writer__finish_round(w)        (after draining every buffer once)
 *     pk_data_writer__add_build_id(w, ...)         (any time before finish)
 *     err = pk_data_writer__finish(w);             (features, header, closes the file)
 *     pk_data_writer__free(w);
 *
 * Reader protocol:
 *     r = pk_data_reader__open("perf.data", &opts);          ("-" reads stdin)
 *     env = pk_data_reader__env(r);  attrs: pk_data_reader__attr(r, i)
 *     while ((err = pk_data_reader__next(r, &ev)) > 0) { ... ev.hdr, ev.attr ... }
 *     err == 0: end of data; err < 0: the file is corrupt from ev.offset on (logged).
 *     pk_data_reader__free(r);
 */
#ifndef PERFKIT_DATA_H
#define PERFKIT_DATA_H

#include <linux/perf_event.h>
#include <perfkit/common.h>
#include <perfkit/sys.h>
#include <perfkit/record.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Feature bits of the perf.data header (bit numbers as perf's HEADER_* features). */
enum pk_data_feat {
	PK_FEAT_TRACING_DATA = 1,
	PK_FEAT_BUILD_ID = 2,
	PK_FEAT_HOSTNAME = 3,
	PK_FEAT_OSRELEASE = 4,
	PK_FEAT_VERSION = 5,
	PK_FEAT_ARCH = 6,
	PK_FEAT_NRCPUS = 7,
	PK_FEAT_CPUDESC = 8,
	PK_FEAT_CPUID = 9,
	PK_FEAT_TOTAL_MEM = 10,
	PK_FEAT_CMDLINE = 11,
	PK_FEAT_EVENT_DESC = 12,
	PK_FEAT_CPU_TOPOLOGY = 13,
	PK_FEAT_NUMA_TOPOLOGY = 14,
	PK_FEAT_BRANCH_STACK = 15,
	PK_FEAT_PMU_MAPPINGS = 16,
	PK_FEAT_GROUP_DESC = 17,
	PK_FEAT_AUXTRACE = 18,
	PK_FEAT_STAT = 19,
	PK_FEAT_CACHE = 20,
	PK_FEAT_SAMPLE_TIME = 21,
	PK_FEAT_MEM_TOPOLOGY = 22,
	PK_FEAT_CLOCKID = 23,
	PK_FEAT_DIR_FORMAT = 24,
	PK_FEAT_BPF_PROG_INFO = 25,
	PK_FEAT_BPF_BTF = 26,
	PK_FEAT_COMPRESSED = 27,
	PK_FEAT_CPU_PMU_CAPS = 28,
	PK_FEAT_CLOCK_DATA = 29,
	PK_FEAT_HYBRID_TOPOLOGY = 30,
	PK_FEAT_PMU_CAPS = 31,
	PK_FEAT_LAST_PERF61 = 32, /* one past the last bit perf 6.1 knows */
	PK_FEAT_BITS = 256,
};

/* User-space record types (type >= 64) that perf.data files carry. */
enum pk_data_user_record {
	PK_RECORD_HEADER_ATTR = 64,
	PK_RECORD_HEADER_EVENT_TYPE = 65,
	PK_RECORD_HEADER_TRACING_DATA = 66,
	PK_RECORD_HEADER_BUILD_ID = 67,
	PK_RECORD_FINISHED_ROUND = 68,
	PK_RECORD_ID_INDEX = 69,
	PK_RECORD_AUXTRACE_INFO = 70,
	PK_RECORD_AUXTRACE = 71,
	PK_RECORD_AUXTRACE_ERROR = 72,
	PK_RECORD_THREAD_MAP = 73,
	PK_RECORD_CPU_MAP = 74,
	PK_RECORD_STAT_CONFIG = 75,
	PK_RECORD_STAT = 76,
	PK_RECORD_STAT_ROUND = 77,
	PK_RECORD_EVENT_UPDATE = 78,
	PK_RECORD_TIME_CONV = 79,
	PK_RECORD_HEADER_FEATURE = 80,
	PK_RECORD_COMPRESSED = 81,
	PK_RECORD_FINISHED_INIT = 82,
};

#define PK_BUILD_ID_MAX 20  /* bytes of a build-id perf.data can carry */

/*
 * Read the GNU build-id note (NT_GNU_BUILD_ID) of the ELF file `path` with libelf.
 * Only regular files are opened (non-blocking, so a FIFO never hangs us); files larger
 * than 4 GiB or with more than 64 Ki sections are refused. On entry *len is the capacity
 * of buf; on success it receives the build-id length (<= capacity: a longer id is
 * truncated to the capacity, as perf does with its 20 bytes). Returns 0, -ENOENT (no
 * note), -EINVAL (not a regular file / not ELF) or another negative errno.
 */
PK_API int pk_build_id__read(const char *path, uint8_t *buf, size_t *len);

/*
 * perf's build-id cache (what `perf record` fills and `perf report` / pk_machine read
 * when a recorded binary has since been rebuilt or deleted), in perf's layout:
 *   <dir>/<real path>/<hex id>/elf            the file (hard link, else a copy)
 *   <dir>/[kernel.kallsyms]/<hex id>/kallsyms a copy of /proc/kallsyms
 *   <dir>/.build-id/<2 hex>/<rest of hex>     symlink to ../../<real path>/<hex id>
 */
#define PK_BUILD_ID_CACHE_MAX_COPY (512ULL << 20) /* default max_copy */
struct pk_build_id_cache_opts {
	size_t sz;
	/* NULL: .debug in the home directory of the effective user's passwd entry (perf's
	 * default place); $PERF_BUILDID_DIR and $HOME are not read (pass them here). */
	const char *dir;
	uint64_t max_copy;  /* larger files are not copied (-EFBIG); 0: the default */
	size_t :0;
};
/*
 * The cache directory these functions use: opts->dir, else ~/.debug of the effective
 * user (passwd entry), without trailing '/', into buf. Returns 0, -ENOENT (none: an
 * empty dir, or no home directory known) or -ENAMETOOLONG (does not fit len bytes).
 */
PK_API int pk_build_id_cache__dir(const struct pk_build_id_cache_opts *opts, char *buf,
				  size_t len);
/*
 * Store the ELF file `path` (absolute) under the build-id `id` (1..PK_BUILD_ID_MAX bytes,
 * normally just read with pk_build_id__read). Already cached: 0, nothing written. The
 * stored file's build-id is checked; a file that changed meanwhile is not kept (-ESTALE).
 * Returns 0 or a negative errno: -EINVAL (bad arguments, not a regular file, an all-zero
 * id), -ENOENT (no cache directory: dir "" or no home directory known), -EFBIG (a copy
 * was needed and the file is larger than max_copy), -EACCES/-EROFS/-ENOSPC (cache not
 * writable), -ENAMETOOLONG.
 */
PK_API int pk_build_id_cache__add(const char *path, const uint8_t *id, size_t len,
				  const struct pk_build_id_cache_opts *opts);
/*
 * Store a copy of `kallsyms` (NULL: /proc/kallsyms) for the running kernel's build-id
 * `id` (pk_kernel_build_id). Returns 0 (also when already cached), -EACCES when every
 * address reads as 0 (kptr_restrict), or the errors above.
 */
PK_API int pk_build_id_cache__add_kallsyms(const char *kallsyms, const uint8_t *id, size_t len,
					   const struct pk_build_id_cache_opts *opts);
/*
 * Store a vdso image (read from fd: a process's [vdso] mapping, copied) under its
 * build-id `id`, where perf keeps it ([vdso]/<id>/vdso, with the .build-id link), so that
 * [vdso] frames resolve where the reader cannot map this kernel's vdso itself. Returns 0
 * (also when already cached), -ESTALE when the copy does not carry `id`, or the errors
 * of pk_build_id_cache__add.
 */
PK_API int pk_build_id_cache__add_vdso(int fd, const uint8_t *id, size_t len,
				       const struct pk_build_id_cache_opts *opts);

/* ------------------------------------------------------------------------------------ */
/* Writer                                                                               */
/* ------------------------------------------------------------------------------------ */

struct pk_data_writer;

struct pk_data_writer_opts {
	size_t sz;
	/* Pipe mode (`-o -`): 16-byte header, attrs and features as records, no seeking.
	 * Forced when the fd given to __fdopen cannot seek. */
	bool pipe;
	/* zstd level 1..22 for PERF_RECORD_COMPRESSED; 0 = no compression. */
	int compress_level;
	/* The command line stored in CMDLINE (argv[0] is replaced by the absolute path of the
	 * running binary, as perf does). NULL: taken from /proc/self/cmdline. */
	const char *const *argv;
	int argc;
	/* VERSION string; NULL = "perfkit <version>". */
	const char *version;
	/* CLOCKID feature: the resolution (ns) of the clock the attrs use (use_clockid). 0 =
	 * derived with clock_getres() from the first attr that has use_clockid set. */
	uint64_t clockid_res_ns;
	/* Do not add a sample_time feature computed from the data (see __set_sample_time). */
	bool no_sample_time;
	/* Root of sysfs/procfs for the host features (tests); NULL = "/sys", "/proc". */
	const char *sysfs_root;
	const char *procfs_root;
	/* Lock `path` for the writer's lifetime (pk_data_lock__acquire, below) before
	 * anything is renamed or created: a second writer of the same path fails with EBUSY
	 * and touches nothing. Released when the file is closed (__finish or __free). */
	bool lock;
	/* Rename an existing regular file `path` to `path`.old first (after the lock). */
	bool keep_old;
	/* With `lock`: out, optional; see pk_data_lock_opts.holder and .stale. */
	int32_t *lock_holder;
	int32_t *lock_stale;
	size_t :0;
};

/*
 * Create (O_TRUNC) the file `path` and start a perf.data file; "-" means stdout in pipe
 * mode (no lock, no rename). With opts.lock, the lock is taken first, then an existing
 * file is renamed (opts.keep_old), then the new one is created. Returns NULL with errno
 * set on failure: EBUSY (another writer holds the lock; *opts.lock_holder its pid),
 * ENOLCK/EOPNOTSUPP (the file system cannot lock: retry without opts.lock to write
 * unprotected), or open(2)'s errors.
 */
PK_API struct pk_data_writer *pk_data_writer__open(const char *path,
						   const struct pk_data_writer_opts *opts);
/*
 * Same on an fd the caller opened (the writer does not close it). File mode needs a
 * seekable fd positioned anywhere (the file is written from offset 0; open it O_RDWR so
 * that the recovery after a write error described at __close can re-read the data); a
 * pipe, FIFO, socket or terminal switches to pipe mode.
 */
PK_API struct pk_data_writer *pk_data_writer__fdopen(int fd,
						     const struct pk_data_writer_opts *opts);

/*
 * Add an event: its attr (all attrs are stored with one ABI size: the smallest covering
 * the non-zero fields of every attr, at most VER7 = 128 so that perf 6.1 accepts the file;
 * -E2BIG if a field beyond byte 128 is set), a display name for EVENT_DESC (NULL:
 * none) and the kernel sample IDs of every fd opened for it (PERF_EVENT_IOC_ID). Must be
 * called before the first record is written (-EBUSY afterwards). Returns the attr index.
 */
PK_API int pk_data_writer__add_attr(struct pk_data_writer *w, const struct pk_attr *attr,
				    const char *name, const uint64_t *ids, size_t nr_ids);

/*
 * Declare an event group for the GROUP_DESC feature: the attrs leader_idx ..
 * leader_idx + nr_members - 1 (indexes returned by __add_attr, which must already have
 * been added) form one group; name NULL for an unnamed group (written "{anon_group}" as
 * perf does). The feature is written when at least one group was declared. Returns 0,
 * -EINVAL (nr_members < 2, a range beyond the attrs, overlapping a declared group) or
 * -ENOMEM.
 */
PK_API int pk_data_writer__add_group(struct pk_data_writer *w, const char *name,
				     uint32_t leader_idx, uint32_t nr_members);

/*
 * Append raw record bytes to the data section, exactly as they came from a ring buffer:
 * the stream must consist of whole records, but one record may be split across two
 * calls (the two chunks of a wrapped ring). Nothing is parsed except record headers (to
 * keep sample statistics and the last complete record boundary). Returns 0 or a negative
 * errno (-ENOSPC, -EIO, ...). After a failed write the writer is in an error state: every
 * later call returns the same error, and __close still finalises the file so that it
 * holds every record completely written before the failure (see __close).
 */
PK_API int pk_data_writer__write(struct pk_data_writer *w, const void *buf, size_t len);

/* Append one record (hdr->size bytes starting at hdr). -EINVAL if hdr->size < 8. */
PK_API int pk_data_writer__write_record(struct pk_data_writer *w,
					const struct perf_event_header *hdr);

/* Append a PERF_RECORD_FINISHED_ROUND (flushing pending compressed data first). */
PK_API int pk_data_writer__finish_round(struct pk_data_writer *w);

/*
 * Add a BUILD_ID feature entry (file mode only; pipe mode ignores them like perf):
 * pid (-1 for the host kernel and host DSOs, as perf writes), cpumode (PERF_RECORD_MISC_
 * KERNEL / _USER / ...), 1..20 build-id bytes, the DSO path ("[kernel.kallsyms]",
 * "[vdso]", "/usr/lib/..."). Copies everything.
 */
PK_API int pk_data_writer__add_build_id(struct pk_data_writer *w, int32_t pid,
					uint16_t cpumode, const uint8_t *build_id,
					size_t build_id_len, const char *filename);

/*
 * Override the SAMPLE_TIME feature (first and last sample timestamp). By default the
 * writer tracks it from the TIME field of the samples it is given (when every attr puts
 * TIME at the same place in a sample).
 */
PK_API int pk_data_writer__set_sample_time(struct pk_data_writer *w, uint64_t first,
					   uint64_t last);

/*
 * Attach a tracing-data blob (the TRACING_DATA feature: tracefs event formats, see
 * pk_tracing_data__build) so that perf can decode the RAW data of tracepoint samples.
 * Copies blob. File mode: written as feature bit 1 at __close (any time before it).
 * Pipe mode: sent as a PERF_RECORD_HEADER_TRACING_DATA record right after the header
 * features, so it must be set before the first record is written (-EBUSY afterwards).
 * A second call replaces the blob; len 0 removes it. -E2BIG above 256 MiB (pipe mode:
 * above the u32 size field).
 */
PK_API int pk_data_writer__set_tracing_data(struct pk_data_writer *w, const void *blob,
					    size_t len);

/* The first and last sample time seen so far (the TIME field of the samples written, or
 * what __set_sample_time set): 0, or -ENODATA when no sample carried a time yet. */
PK_API int pk_data_writer__sample_time(const struct pk_data_writer *w, uint64_t *first,
				       uint64_t *last);

/* Statistics: bytes handed to the data section so far (uncompressed), records and samples
 * seen, file bytes written. Any pointer may be NULL. */
PK_API void pk_data_writer__stats(const struct pk_data_writer *w, uint64_t *data_bytes,
				  uint64_t *nr_records, uint64_t *nr_samples,
				  uint64_t *file_bytes);

/*
 * Finish the file and close it (a descriptor the caller passed stays open); the writer
 * stays allocated until pk_data_writer__free and writes nothing more (-EINVAL). Calling it
 * again returns the first call's result. File mode: flush compressed data,
 * write the feature sections after the data, seek back and write the final header.
 * After an earlier write error the header is still written, with data.size covering only
 * the records written completely before the failure (features are attempted and dropped
 * if they cannot be written), so the file stays readable by perf and by us. If even the
 * header cannot be written, data.size stays 0 and our reader still reads the file up to
 * its last complete record (with a truncation warning).
 * Returns 0 or the first error encountered (negative errno).
 */
PK_API int pk_data_writer__finish(struct pk_data_writer *w);

/* Free the writer (NULL is accepted). One not finished leaves its file as written so far,
 * without the final header (our reader still reads its complete records). */
PK_API void pk_data_writer__free(struct pk_data_writer *w);

/*
 * Output locks: one writer per path.
 *
 * pk_data_lock__acquire takes an exclusive flock(2) on the lock file `<path>.lock` (created
 * if needed, never renamed, holding the owner's pid) without waiting. The kernel drops the
 * lock when the owner exits in any way, SIGKILL included, so a lock file left behind by a
 * writer that died is taken over at once (and its pid reported in *opts.stale); two
 * newcomers finding it race through flock and only one wins. __release unlinks the lock
 * file and drops the lock. Use it around any output a second process must not write at
 * the same time (pk_data_writer_opts.lock does it for perf.data); works on local file
 * systems, tmpfs and NFS.
 *
 * Returns NULL with errno: EBUSY (held by a live process: *opts.holder is its pid, 0 if
 * it had not written it yet), ENOLCK / EOPNOTSUPP (no locking on this file system), EINVAL
 * (the lock path names something other than a regular file), open(2)'s errors (EACCES,
 * EROFS, ...), ENOMEM.
 */
struct pk_data_lock;
struct pk_data_lock_opts {
	size_t sz;
	int32_t *holder;  /* out, optional: on EBUSY the owner's pid (0: unknown) */
	int32_t *stale;   /* out, optional: the pid of a dead owner whose lock was taken
			   * over (0: the lock was free) */
	size_t :0;
};
PK_API struct pk_data_lock *pk_data_lock__acquire(const char *path,
						  const struct pk_data_lock_opts *opts);
/* Unlink the lock file and release the lock (NULL is accepted). */
PK_API void pk_data_lock__release(struct pk_data_lock *l);
/* The lock file of `path` ("<path>.lock"), malloc'd (free it); NULL + errno EINVAL/ENOMEM. */
PK_API char *pk_data_lock__path(const char *path);

/* ------------------------------------------------------------------------------------ */
/* Reader                                                                               */
/* ------------------------------------------------------------------------------------ */

struct pk_data_reader;

/* One event (attr) of a perf.data file. Owned by the reader; stable until __free. */
struct pk_data_attr {
	struct pk_attr attr;     /* zero-filled beyond the size stored in the file */
	uint32_t file_attr_size; /* attr.size as stored (0 is read as 64) */
	int idx;                 /* position in the file's attr list */
	const char *name;        /* EVENT_DESC / EVENT_UPDATE name, or NULL */
	const uint64_t *ids;     /* sample IDs of this attr */
	size_t nr_ids;
	int id_pos;              /* u64 index of the ID in a sample body, -1 none */
	int is_pos;              /* u64 index of the ID from the end of a sample_id trailer
				  * (1 = last), -1 none */
	struct pk_sample_layout layout; /* for pk_sample__decode / pk_record__decode */
	bool layout_ok;          /* false: the attr has sample bits the decoder rejects */
};

struct pk_data_build_id {
	int32_t pid;
	uint16_t cpumode;        /* misc & PERF_RECORD_MISC_CPUMODE_MASK */
	uint8_t build_id[PK_BUILD_ID_MAX];
	uint8_t build_id_size;
	const char *filename;
};

struct pk_data_cpu_topo {
	uint32_t core_id;        /* (u32)-1 for an offline CPU */
	uint32_t socket_id;
	uint32_t die_id;         /* (u32)-1 when the file has no die information */
};

/* NUMA_TOPOLOGY: one memory node. */
struct pk_data_numa_node {
	uint32_t node;
	uint64_t mem_total_kb, mem_free_kb;
	const char *cpus;        /* its CPUs as a list, e.g. "0-3" */
};

/* PMU_MAPPINGS: a PMU's name and its perf_event_attr.type. */
struct pk_data_pmu_map {
	uint32_t type;
	const char *name;
};

/* CACHE: one CPU cache, as sysfs describes it. */
struct pk_data_cache {
	uint32_t level, line_size, sets, ways;
	const char *type;        /* "Data", "Instruction", "Unified" */
	const char *size;        /* sysfs's text, e.g. "32K" */
	const char *map;         /* the CPUs sharing it, e.g. "0-1" */
};

/* MEM_TOPOLOGY: one memory node and the memory blocks (of env's mem_block_size bytes)
 * it holds. */
struct pk_data_mem_node {
	uint64_t node;
	uint64_t size;           /* the file's size field: blocks spanned (the bitmap's length
				  * as perf writes it); the node's memory is the bits set */
	const uint64_t *blocks;  /* bitmap: block b is bit b % 64 of blocks[b / 64] */
	uint64_t nr_blocks;      /* bits in the bitmap */
};

/* One event group of GROUP_DESC: attrs leader_idx .. leader_idx + nr_members - 1. */
struct pk_data_group {
	const char *name;        /* NULL for an unnamed group ("{anon_group}" in the file) */
	uint32_t leader_idx;     /* attr index of the leader (checked < nr_attrs) */
	uint32_t nr_members;     /* leader included; >= 1, checked against nr_attrs */
};

/* Feature sections parsed into structs. A string is NULL when its feature is absent. */
struct pk_data_env {
	uint64_t features[PK_FEAT_BITS / 64]; /* bits present in the header (and parsed) */
	const char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	const char *const *cmdline;   /* nr_cmdline strings */
	uint32_t nr_cmdline;
	const struct pk_data_build_id *build_ids;
	size_t nr_build_ids;
	/* CPU_TOPOLOGY */
	const char *const *package_cpus;  /* sibling lists, e.g. "0-3" */
	uint32_t nr_package_cpus;
	const char *const *core_cpus;     /* SMT sibling lists */
	uint32_t nr_core_cpus;
	const char *const *die_cpus;
	uint32_t nr_die_cpus;
	const struct pk_data_cpu_topo *cpu; /* nr_cpu_topo entries (0 if absent) */
	uint32_t nr_cpu_topo;
	/* SAMPLE_TIME */
	uint64_t first_sample_time, last_sample_time;
	/* CLOCKID */
	uint64_t clockid_res_ns;
	/* COMPRESSED */
	uint32_t comp_version, comp_type, comp_level, comp_ratio, comp_mmap_len;
	/* GROUP_DESC (a section naming a group beyond the attrs is dropped whole) */
	const struct pk_data_group *groups;
	uint32_t nr_groups;
	/* The file's layout (0 in the pipe format): header version (1 for "PERFILE2"),
	 * offset and size of the data section, offset of the feature section table. */
	uint32_t header_version;
	uint64_t data_offset, data_size, feat_offset;
	/* NUMA_TOPOLOGY */
	const struct pk_data_numa_node *numa_nodes;
	uint32_t nr_numa_nodes;
	/* PMU_MAPPINGS, in the file's order */
	const struct pk_data_pmu_map *pmu_mappings;
	uint32_t nr_pmu_mappings;
	/* CACHE */
	const struct pk_data_cache *caches;
	uint32_t nr_caches;
	/* MEM_TOPOLOGY */
	uint64_t mem_block_size;
	const struct pk_data_mem_node *mem_nodes;
	uint32_t nr_mem_nodes;
};

struct pk_data_reader_opts {
	size_t sz;
	/* Read with read(2) even if the file could be mmapped. */
	bool no_mmap;
	/* Deliver the payload of HEADER_TRACING_DATA in ev.payload (bounded by
	 * max_payload); by default it is skipped like an AUXTRACE payload. */
	bool keep_tracing_data;
	/* Also deliver PERF_RECORD_COMPRESSED records themselves (before their contents). */
	bool show_compressed;
	/* Upper bound for kept payloads (0 = 64 MiB). */
	size_t max_payload;
	/* Out, optional: when the open fails with PK_ERR_NOT_PERF_DATA or PK_ERR_BYTE_ORDER,
	 * the first bytes of the input (to say what it is). */
	struct pk_data_head *head;
	size_t :0;
};
struct pk_data_head {
	uint8_t bytes[8];
	size_t len;             /* fewer than 8 when the input is that short */
};

/*
 * Open a perf.data file (file or pipe format; "-" reads stdin). Parses the header, the
 * attrs and every known feature section; in pipe mode the leading HEADER_ATTR and
 * HEADER_FEATURE records are consumed here so that attrs and env are available at once.
 * Returns NULL with errno set: ENOENT etc., EISDIR (a directory), PK_ERR_EMPTY (no byte
 * at all: an empty file, or a pipe/FIFO closed without data), PK_ERR_NOT_PERF_DATA (does
 * not start with "PERFILE2"; opts.head gets what it starts with), PK_ERR_BYTE_ORDER
 * (perf.data of the other byte order: not supported), PK_ERR_FORMAT (corrupt or truncated
 * header, legacy PERFFILE: a log message names the field and offset), ENOMEM. The first
 * three are logged at debug level only: the caller words them.
 */
PK_API struct pk_data_reader *pk_data_reader__open(const char *path,
						   const struct pk_data_reader_opts *opts);
/* Same on an fd (not closed by the reader; pipes and stdin are fine). */
PK_API struct pk_data_reader *pk_data_reader__fdopen(int fd,
						     const struct pk_data_reader_opts *opts);
/* Same on a memory buffer that must outlive the reader (fuzzing, embedded data). */
PK_API struct pk_data_reader *pk_data_reader__open_mem(const void *buf, size_t len,
						       const struct pk_data_reader_opts *opts);

PK_API void pk_data_reader__free(struct pk_data_reader *r);

/*
 * The tracing-data blob of the file: the TRACING_DATA feature section (file mode) or the
 * payload of the first PERF_RECORD_HEADER_TRACING_DATA record (pipe mode; one that
 * precedes the first data record is consumed by __open like HEADER_ATTR, a later one is
 * picked up when __next reaches it). *len receives its size (pipe mode: including the
 * zero padding to 8 bytes). Owned by the reader. NULL (errno ENOENT) when the file has
 * none or it was larger than max_payload (pipe) / 64 MiB (file). Parse it with
 * pk_tracing_data__parse.
 */
PK_API const void *pk_data_reader__tracing_data(const struct pk_data_reader *r, size_t *len);

/* true for the pipe format. */
PK_API bool pk_data_reader__is_pipe(const struct pk_data_reader *r);
/*
 * Pipe format: the leading HEADER_ATTR, HEADER_FEATURE, EVENT_UPDATE and
 * HEADER_TRACING_DATA records that __open consumed (and __next will not deliver), one
 * after the other as in the input (without a TRACING_DATA record's payload, whose size is
 * in the record), for a caller that shows every record (perfkit report -D). At most
 * 16 MiB of them are kept. *len receives their size. Owned by the reader; NULL (and *len
 * 0) in file mode or when there were none.
 */
PK_API const void *pk_data_reader__pipe_lead(const struct pk_data_reader *r, size_t *len);
/* true if the file was not finalised (data.size 0, or ended inside the data) */
PK_API bool pk_data_reader__truncated(const struct pk_data_reader *r);

/*
 * The memory image records are delivered from (an mmapped file or the __open_mem buffer),
 * *len its size; NULL for pread/pipe input. A record whose hdr lies inside the image stays
 * valid until the reader is freed (others, e.g. decompressed or realigned records, only
 * until the next __next call), so consumers that queue records may reference instead of
 * copying them.
 */
PK_API const void *pk_data_reader__image(const struct pk_data_reader *r, size_t *len);
/*
 * Tell the reader that the caller references no image record before file offset
 * `offset` any more: pages of a mapped file below it may be given back to keep the RSS
 * bounded (they are read back from the page cache if touched again). Without this call
 * the reader drops pages 32 MiB behind its read position. No-op for other inputs.
 */
PK_API void pk_data_reader__release_before(struct pk_data_reader *r, uint64_t offset);

PK_API const struct pk_data_env *pk_data_reader__env(const struct pk_data_reader *r);
/* Whether the file was recorded on the running system: its osrelease (HOSTNAME/OSRELEASE
 * feature) is the running kernel's (uname). A file without one counts as recorded here.
 * What decides whether kernel and [vdso] addresses may be resolved from this system. */
PK_API bool pk_data_env__same_host(const struct pk_data_env *env);

/* Attrs known so far (pipe mode may add more while iterating). */
PK_API size_t pk_data_reader__nr_attrs(const struct pk_data_reader *r);
PK_API const struct pk_data_attr *pk_data_reader__attr(const struct pk_data_reader *r,
						       size_t idx);
/*
 * The name of an event as perf shows it: the file's name for it (EVENT_DESC / EVENT_UPDATE),
 * else perf's name of a generic hardware, software or hardware-cache event ("cpu-clock",
 * "L1-dcache-load-misses"), "raw 0x<config>", "mem:0x<addr>:<rwx>" for breakpoints, or
 * "unknown ..." naming the type. Returns a string of the attr's or of the static tables,
 * or buf (len bytes) written with the fallback; never NULL.
 */
PK_API const char *pk_data_attr__name(const struct pk_data_attr *a, char *buf, size_t len);
/* The attr a sample ID belongs to, or NULL. */
PK_API const struct pk_data_attr *pk_data_reader__attr_by_id(const struct pk_data_reader *r,
							     uint64_t id);

/* One record as delivered by __next. Valid until the next call. */
struct pk_data_event {
	const struct perf_event_header *hdr; /* hdr->size bytes, 8-byte aligned */
	const struct pk_data_attr *attr;     /* attr of a kernel record (by ID, or the first
					      * attr), NULL for user records / unknown ID */
	uint64_t offset;                     /* file offset of the record (inside a
					      * COMPRESSED record: the offset of that one) */
	bool compressed;                     /* came out of a COMPRESSED record */
	const void *payload;                 /* TRACING_DATA payload if kept, else NULL */
	uint64_t payload_size;               /* payload bytes following the record (AUXTRACE,
					      * TRACING_DATA), kept or skipped */
};

/*
 * Next record of the data section, in file order (COMPRESSED records are expanded;
 * HEADER_ATTR / HEADER_FEATURE / EVENT_UPDATE update the attrs/env before they are
 * delivered). Returns 1 with *ev filled, 0 at the end, or a negative error:
 * -PK_ERR_FORMAT / -PK_ERR_TRUNCATED with a log message naming the offset and the number
 * of records read so far. Records of unknown type are delivered, never fatal. After an
 * error, further calls return the same error; after the end, 0.
 */
PK_API int pk_data_reader__next(struct pk_data_reader *r, struct pk_data_event *ev);

/* Records delivered so far and the sample count among them. */
PK_API void pk_data_reader__stats(const struct pk_data_reader *r, uint64_t *nr_records,
				  uint64_t *nr_samples);

/* ------------------------------------------------------------------------------------ */
/* Tracing data (the TRACING_DATA feature)                                              */
/* ------------------------------------------------------------------------------------ */

/*
 * Layout of the blob (perf's "tracing data", version 0.6; all numbers in the byte order
 * named by the endianness byte):
 *     u8 23, 8, 68; "tracing" (7 bytes); version "0.6\0"; u8 big_endian; u8 sizeof(long);
 *     u32 page_size;
 *     "header_page\0" u64 size, bytes (tracefs events/header_page);
 *     "header_event\0" u64 size, bytes;
 *     u32 nr; nr x { u64 size, format text }               (events of the ftrace system)
 *     u32 nr_systems; per system { "sys\0"; u32 nr; nr x { u64 size, format text } }
 *     u32 size, kallsyms text (perfkit writes 0: perf resolves symbols itself)
 *     u32 size, printk_formats text
 *     u64 size, saved_cmdlines text                        (version >= 0.6 only)
 */

/*
 * Build the tracing-data blob for the tracepoints with ids tp_ids[0..nr) (the config of
 * PERF_TYPE_TRACEPOINT attrs; duplicates are fine) from tracefs at `tracefs_root` (NULL:
 * pk_tracefs__root()). Only the formats of those tracepoints are included, grouped by
 * system. On success *blob (malloc'd, caller frees) and *len are set and 0 is returned;
 * otherwise -ENOENT (no tracefs, or an id that no tracepoint has: logged), -EINVAL,
 * -ENOMEM or the errno of a failed read.
 */
PK_API int pk_tracing_data__build(const char *tracefs_root, const uint64_t *tp_ids, size_t nr,
				  void **blob, size_t *len);

struct pk_tracing_data;

/* One event format of a parsed blob. Strings are NUL-terminated, owned by the parse. */
struct pk_tracing_event {
	const char *system;      /* "sched"; "ftrace" for the ftrace section */
	const char *name;        /* the "name:" line of the format ("" if it has none) */
	long long id;            /* the "ID:" line, -1 if absent or not a number */
	const char *format;      /* the format text as stored (format_len bytes + NUL) */
	size_t format_len;
};

/* Everything else a blob carries. Text pointers are NUL-terminated (len excludes it). */
struct pk_tracing_info {
	const char *version;     /* "0.6" */
	bool big_endian;         /* byte order of the recording machine */
	uint8_t long_size;       /* sizeof(long) there */
	uint32_t page_size;
	const char *header_page, *header_event, *kallsyms, *printk, *saved_cmdlines;
	size_t header_page_len, header_event_len, kallsyms_len, printk_len, saved_cmdlines_len;
	size_t parsed_len;       /* bytes of the blob used (the rest is padding) */
};

/*
 * Parse a tracing-data blob (written by us or by perf, either byte order). Every count
 * and size is checked against the blob, so hostile input is safe. Returns NULL with errno
 * PK_ERR_FORMAT (malformed: logged at debug level with the offset), EINVAL or ENOMEM.
 * The result does not point into blob.
 */
PK_API struct pk_tracing_data *pk_tracing_data__parse(const void *blob, size_t len);
PK_API void pk_tracing_data__free(struct pk_tracing_data *td);
PK_API const struct pk_tracing_info *pk_tracing_data__info(const struct pk_tracing_data *td);
/* Event formats in blob order (ftrace section first, then per system). */
PK_API size_t pk_tracing_data__nr_events(const struct pk_tracing_data *td);
PK_API const struct pk_tracing_event *pk_tracing_data__event(const struct pk_tracing_data *td,
							     size_t idx);
/* Iteration: NULL prev gives the first; NULL at the end. */
PK_API const struct pk_tracing_event *
pk_tracing_data__next_event(const struct pk_tracing_data *td, const struct pk_tracing_event *prev);
#define pk_tracing_data__for_each_event(pos, td)                                   \
	for ((pos) = pk_tracing_data__next_event((td), NULL); (pos);                 \
	     (pos) = pk_tracing_data__next_event((td), (pos)))
/* The format of the event with this id, or NULL. */
PK_API const struct pk_tracing_event *
pk_tracing_data__find_id(const struct pk_tracing_data *td, long long id);

/* A field of a tracepoint format ("field:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;"). */
struct pk_tp_field {
	uint32_t offset, size;
	bool is_signed;
};
/*
 * Find field `name` (for an array, its name without the brackets) in a format text of
 * len bytes (pk_tracing_event.format, or a tracefs format file). Returns 0 and fills *out,
 * -ENOENT if there is no such field, -PK_ERR_FORMAT if its line is malformed. Bounded by
 * len: the text need not be NUL-terminated.
 */
PK_API int pk_tp_format__field(const char *format, size_t len, const char *name,
			       struct pk_tp_field *out);

#ifdef __cplusplus
}
#endif
#endif
