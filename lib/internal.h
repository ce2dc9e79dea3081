/* SPDX-License-Identifier: MIT */
/* lib/internal.h - helpers shared inside the library. Never installed. */
#ifndef PK_INTERNAL_H
#define PK_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <perfkit/common.h>

#define PK_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PK_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PK_MAX(a, b) ((a) > (b) ? (a) : (b))
#define PK_UNUSED __attribute__((unused))
#define PK_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Set errno to -err and return err (err is a negative errno). */
static inline int pk_err(int err)
{
	errno = err < 0 ? -err : err;
	return err < 0 ? err : -err;
}
/* For pointer-returning functions: set errno and return NULL. */
static inline void *pk_err_ptr(int err)
{
	errno = err < 0 ? -err : err;
	return NULL;
}

/*
 * Owned arrays of pointers behind the public "set"/"list" accessors: free every element with
 * DEL and then the array; read element I of N, or fail with ERR (a negative errno) when the
 * container is missing or I is out of range.
 */
#define PK_PTRS_FREE(arr, n, del)                      \
	do {                                           \
		for (size_t pk_i_ = 0; pk_i_ < (n); pk_i_++) \
			del((arr)[pk_i_]);             \
		free(arr);                             \
	} while (0)
#define PK_PTRS_AT(c, arr, n, i, err) ((c) && (i) < (c)->n ? (c)->arr[i] : pk_err_ptr(err))

void pk_log(enum pk_log_level level, const char *fmt, ...) PK_PRINTF(2, 3);
#define pk_warn(...) pk_log(PK_LOG_WARN, __VA_ARGS__)
#define pk_info(...) pk_log(PK_LOG_INFO, __VA_ARGS__)
#define pk_debug(...) pk_log(PK_LOG_DEBUG, __VA_ARGS__)
#define pk_error(...) pk_log(PK_LOG_ERROR, __VA_ARGS__)

/*
 * Options-struct validation (the libbpf pattern): a struct from a caller compiled against
 * an older header is shorter (fine: missing fields read as zero); one from a newer header
 * is longer and its unknown tail must be all zero.
 */
bool pk_opts_valid(const void *opts, size_t user_sz, size_t our_sz, const char *type);
#define PK_OPTS_VALID(opts, TYPE) \
	(!(opts) || pk_opts_valid((opts), (opts)->sz, sizeof(struct TYPE), #TYPE))
/* Field of an options struct, or `def` if the caller's struct is too short or opts NULL. */
#define PK_OPTS_GET(opts, field, def)                                              \
	(((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field)) \
		 ? (opts)->field : (def))

/*
 * Read at most `max` bytes of a small text file (sysfs/procfs) into buf, NUL-terminated,
 * opening only regular files (O_NONBLOCK so a FIFO can never block us). Returns the number
 * of bytes read or a negative errno (-EFBIG if the file holds more than max bytes).
 */
ssize_t pk_read_small_file(const char *path, char *buf, size_t max);
/* Same, relative to a directory fd. */
ssize_t pk_read_small_fileat(int dirfd, const char *path, char *buf, size_t max);
/* Up to max bytes of a regular file (no NUL added; procfs files read to EOF): the count,
 * or -errno (-EISDIR, -EINVAL for a non-regular file). */
ssize_t pk_read_prefixat(int dirfd, const char *path, char *buf, size_t max);
/* All of fd (procfs files report size 0: read to EOF) into a malloc'ed, NUL-terminated
 * buffer starting at `first` bytes and doubling; -EFBIG when the data needs more than
 * max - 1 bytes. Buffers of 2 MiB or more get a huge-page hint. */
int pk_read_fd_alloc(int fd, size_t first, size_t max, char **out, size_t *len);
/* MADV_HUGEPAGE over the whole pages of a buffer of 2 MiB or more (just a hint), when
 * pk_set_config asked for huge pages. */
void pk_thp_hint(void *p, size_t bytes);
/* (config.c) pk_set_config's settings: the tracefs root copied into buf (false when none
 * was set), and whether huge pages were asked for. */
bool pk_config_tracefs_root(char *buf, size_t len);
bool pk_config_huge_pages(void);
/* (lib/symbol/machine.c) Load the kernel's symbols now, as the first kernel address
 * would. */
struct pk_machine;
int pk_machine_preload_kernel(struct pk_machine *m);
/* (lib/symbol/kinfo.c) What the machine knows of the recorded kernel (the pointers are
 * the machine's): for the reader of kernel code (lib/annotate/kcode.c). */
struct pk_machine_kinfo {
	bool host, have_text;
	uint64_t text;          /* the recorded _text (the kernel map's pgoff) */
	const char *kallsyms, *buildid_dir, *extra_buildid_dir, *symfs;
	const uint8_t *bid;     /* the recorded kernel's build-id (bid_len 0: none) */
	size_t bid_len;
};
void pk_machine_kinfo(struct pk_machine *m, struct pk_machine_kinfo *out);
/* (lib/symbol/kinfo.c) What a machine knows of the kernel module whose object is mod,
 * at recorded address addr: its recorded map and .ko path, and the build-id recorded for
 * it (under its name or that path). -ENOENT when no module map holds addr. */
struct pk_machine_kmod {
	const char *name, *path;        /* "[x]", the recorded .ko (NULL: none) */
	uint64_t start, end;            /* its map */
	const uint8_t *bid;             /* NULL: none recorded */
	size_t bid_len;
};
struct pk_dso;
int pk_machine_kmod(struct pk_machine *m, struct pk_dso *mod, uint64_t addr,
		    struct pk_machine_kmod *out);

/* (lib/symbol/dso-preload.c) Read DSO d's symbol table on the machine's preload thread
 * now (as pk_machine_opts.preload does for the objects it queues itself), whether or
 * not the machine was made with preload: for a client that knows which objects it will
 * resolve in. The same conditions: an ELF object whose build-id is known, not loaded
 * or queued yet, and no find_debuginfo. For the kernel or a module of a host machine
 * with a cache directory: the kallsyms cache's check and opening, once. What the
 * caller sees is unchanged (messages at the first use, on its thread). true when d was
 * queued by this call. */
struct pk_dso;
bool pk_machine_preload_dso(struct pk_machine *m, struct pk_dso *d);
/* (lib/symbol/dso-preload.c) Run fn(arg) once on the machine's preload thread (started
 * if need be), after the objects queued before it (one call at a time: false when one is
 * already waiting, or there is no thread). A call not started when the machine is freed
 * is not made; one started is finished before pk_machine__free returns. */
bool pk_machine_preload_call(struct pk_machine *m, void (*fn)(void *), void *arg);
/* (lib/symbol/dso-preload.c) From now on the preload thread also opens the DWARF of
 * each ELF object whose table it reads and indexes its compile units
 * (pk_dso_warm_lines), for a caller that will ask for source lines: the first
 * pk_dso__srcline then finds them ready. */
void pk_machine_preload_lines(struct pk_machine *m, bool on);
/* (lib/symbol/dso-preload.c) With pk_machine_opts.preload: queue the user-space objects
 * of a recording's build-id list (the objects with samples; their build-ids given to
 * the machine first), at most PK_PRELOAD_LISTED_MAX of them, in the list's order, so
 * that their tables are read while the first records are worked through. */
#define PK_PRELOAD_LISTED_MAX 256
struct pk_data_build_id;
void pk_machine_preload_build_ids(struct pk_machine *m, const struct pk_data_build_id *ids,
				  size_t nr);
struct pk_dso;
/* The order in which the machine made DSO d (0 first): perf's dso objects, compared by
 * address where its call-graph ties are ordered, come in about that order. */
uint32_t pk_dso_seq(const struct pk_dso *d);
/* (machine.c) pk_machine__resolve up to the DSO address, without the symbol look-up
 * (unless it took one: loc->sym is set then, for a kernel address outside every kernel
 * map, found by its kallsyms symbol): 0 with loc->dso set, -ENOENT no map (loc: the
 * unmapped range), -EINVAL, -ENOMEM. */
struct pk_addr_loc;
int pk_machine_resolve_map(struct pk_machine *m, uint32_t pid, uint32_t tid, uint64_t addr,
			   uint8_t cpumode, struct pk_addr_loc *loc);
/* pk_machine_resolve_map that does not load an ELF DSO: its loc->dso_addr is then the
 * file offset (pk_dso__offset_to_addr makes it the address) and *is_offset true. */
int pk_machine_resolve_map_lazy(struct pk_machine *m, uint32_t pid, uint32_t tid, uint64_t addr,
				uint8_t cpumode, struct pk_addr_loc *loc, bool *is_offset);
/* (report/hist.c) Mapped addresses a report looked the symbol up for (past its caches):
 * for tests. */
struct pk_report;
uint64_t pk_report_symbol_lookups(const struct pk_report *rep);
/* Fault in the whole pages of fresh anonymous memory at once (best effort). */
void pk_mem_prefault(void *p, size_t bytes);
/* (decode.c) pk_record__decode of a SAMPLE into `out` that holds the last successful
 * decode of a sample with the same layout `l` (so every field l leaves alone is zero):
 * nothing is cleared first, which saves writing the whole record. Other records: as
 * pk_record__decode. */
struct pk_sample_layout;
struct perf_event_header;
struct pk_record;
int pk_record_decode_sample_again(const struct pk_sample_layout *l,
				  const struct perf_event_header *rec, struct pk_record *out);
/* (decode.c) A SAMPLE's fixed fields only, IDENTIFIER..PERIOD (id, ip, pid/tid, time,
 * addr, stream_id, cpu, period, and the header's cpumode); every later field (read
 * values, call chain, raw data, branches, registers, stack, ...) stays zero and is
 * neither read nor checked, so a sample whose tail is malformed still decodes. `again`:
 * `out` holds the last prefix decode of a sample (nothing is cleared first). Other
 * records: as pk_record__decode. */
int pk_record_decode_sample_prefix(const struct pk_sample_layout *l,
				   const struct perf_event_header *rec, struct pk_record *out,
				   bool again);
/* (lib/data/reader-records.c) The records at the reader's position that need nothing of
 * it (kernel records, FINISHED_ROUND) in its memory image: up to max bytes of whole
 * records at *p (file offset *off), the reader moved past them; 0 when the next record
 * needs pk_data_reader__next. pk_rd_span_attr: the attr of such a record. */
struct pk_data_reader;
struct pk_data_attr;
struct perf_event_header;
size_t pk_rd_next_span(struct pk_data_reader *r, size_t max, const uint8_t **p, uint64_t *off);
const struct pk_data_attr *pk_rd_span_attr(struct pk_data_reader *r,
					   const struct perf_event_header *h);
/* (lib/data/reader-records.c) Drop every page of the reader's mapping of the file, if
 * it has one (madvise MADV_DONTNEED): for a caller done with the records, on another
 * thread, so that the unmapping at pk_data_reader__free finds nothing left to tear down.
 * Changes nothing of the reader; must return before the reader is freed. */
void pk_rd_drop_pages(struct pk_data_reader *r);
/* (lib/data/reader-records.c) A mapping of the file up to bytes long keeps the pages
 * iteration has passed (0, the default: dropped behind it, to bound the RSS), for a
 * caller that drops them at once when done (pk_rd_drop_pages). */
void pk_rd_keep_mapped(struct pk_data_reader *r, uint64_t bytes);
/*
 * Binary search in a sorted array of n elements: the index of the first element whose
 * key is above x, i.e. the number of elements with key <= x. LE is an expression in
 * `mid` that says whether element mid's key is <= x.
 */
#define PK_UPPER_BOUND(n, LE)                                \
	({                                                   \
		size_t lo_ = 0, hi_ = (n);                   \
		while (lo_ < hi_) {                          \
			size_t mid = lo_ + (hi_ - lo_) / 2;  \
			if (LE)                              \
				lo_ = mid + 1;               \
			else                                 \
				hi_ = mid;                   \
		}                                            \
		lo_;                                         \
	})

/* v rounded up to a multiple of a (a > 0) */
static inline uint64_t pk_align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/*
 * Streaming (non-temporal) copy for memory another thread reads next: an ordinary store
 * first fetches the line back from the CPU that read it last (a round trip of 900 ns
 * between the two vCPUs of a PVM guest); a streaming store writes it without reading, and
 * the reader fetches it from memory. dst is 8-byte aligned; n rounded up to 8 bytes is
 * written. Weakly ordered: pk_store_fence() before publishing the data. Plain stores
 * under ThreadSanitizer (it checks those) and off x86-64.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PK_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define PK_UNDER_TSAN 1
#endif
static inline void pk_copy_streaming(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__) && !defined(PK_UNDER_TSAN)
	const uint8_t *s = src;
	uint8_t *d = dst;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		long long w;
		memcpy(&w, s + i, 8);
		__builtin_ia32_movnti64((long long *)(void *)(d + i), w);
	}
	if (i < n) {
		long long w = 0;
		memcpy(&w, s + i, n - i);
		__builtin_ia32_movnti64((long long *)(void *)(d + i), w);
	}
#else
	memcpy(dst, src, n);
#endif
}

static inline void pk_store_fence(void)
{
#if defined(__x86_64__) && !defined(PK_UNDER_TSAN)
	__builtin_ia32_sfence();
#endif
}

/* CPUs this thread may run on (its affinity mask), at least 1. */
int pk_online_cpus(void);
/* CRC-32C of len bytes, continuing from crc (0 to start): the check value of our cache
 * files. pk_crc32c_sw is the portable path (tests compare the two). */
uint32_t pk_crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t pk_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* The CRC-32C of A followed by B, from those of A and B and the length of B. */
uint32_t pk_crc32c_join(uint32_t crc_a, uint32_t crc_b, size_t len_b);
/* Read an integer file ("2\n"). Returns 0 or a negative errno (-PK_ERR_PARSE if not a number). */
int pk_read_int_file(const char *path, long long *out);

/* snprintf that never overflows and always NUL-terminates; returns chars written (clamped). */
size_t pk_snprintf(char *buf, size_t len, const char *fmt, ...) PK_PRINTF(3, 4);

/* Strip leading/trailing ASCII whitespace in place; returns the start. */
char *pk_strtrim(char *s);

/* Safe string duplication with a bound; NULL on ENOMEM. */
char *pk_strndup(const char *s, size_t n);

/*
 * Sorted names of the entries of a directory (dot entries skipped), at most `max`;
 * *truncated (may be NULL) says whether more existed. `dirfd` may be AT_FDCWD; `path` may
 * be "." to list dirfd itself (dirfd is kept either way). With `dirs_only`, entries known
 * not to be directories are skipped. Opened O_NONBLOCK. NULL with *n = 0 on error or when
 * empty. Free with pk_strv_free(v, n).
 */
char **pk_dir_list_sorted(int dirfd, const char *path, size_t max, bool dirs_only, size_t *n,
			  bool *truncated);
void pk_strv_free(char **v, size_t n);

/* Parse an unsigned integer in C notation (0x.., 0.., decimal) from [s, s+len) exactly.
 * Returns 0 or -PK_ERR_PARSE / -ERANGE. */
int pk_parse_u64(const char *s, size_t len, uint64_t *out);

/* perf's build-id cache directory into out: `dir` when given (empty: -ENOENT), else
 * .debug in the home directory of the effective user's passwd entry (never $HOME: the
 * caller passes what the environment says); trailing '/' removed. Returns 0, -ENOENT
 * (no directory known) or -ENAMETOOLONG. */
int pk_build_id_dir(const char *dir, char *out, size_t n);

/* The value of a hex digit (either case), or -1. */
static inline int pk_hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* (lib/self/rdpmc.c) (cyc * mult) >> shift without overflow (128-bit product), the
 * kernel's mul_u64_u32_shr; and the low `width` bits of v sign-extended (width 0 or >= 64:
 * v unchanged). Arithmetic of the mmap page's fields, for the time and rdpmc readers. */
uint64_t pk_mul_u64_u32_shr(uint64_t cyc, uint32_t mult, unsigned shift);
int64_t pk_sign_extend(uint64_t v, unsigned width);
/* Copy a whole output struct *src into the caller's *dst, a struct that starts with
 * size_t sz (0: the full size): at most dst->sz bytes, then dst->sz = the bytes filled. */
#define PK_OUT_COPY(dst, src)                                                              \
	do {                                                                               \
		size_t pk_oc_sz = (dst)->sz && (dst)->sz < sizeof(*(src)) ? (dst)->sz        \
									   : sizeof(*(src));  \
		if (pk_oc_sz >= sizeof(size_t)) {                                          \
			memcpy((dst), (src), pk_oc_sz);                                    \
			(dst)->sz = pk_oc_sz;                                              \
		}                                                                          \
	} while (0)
/* (lib/sample/decode.c) u64 positions in a sample of sample_type st: of the id in the
 * body (-1: none), of the id counted from the end of a sample_id trailer (1 = last; -1:
 * none), of the time in the body (-1: none). The one place that computes them. */
int pk_sample_id_pos(uint64_t st);
int pk_sample_is_pos(uint64_t st);
/* (a macro: the ordering queue asks it of every record; PERF_SAMPLE_* from the user's
 * <linux/perf_event.h>) */
#define pk_sample_time_pos(st)                                                          \
	(((st) & PERF_SAMPLE_TIME) ? !!((st) & PERF_SAMPLE_IDENTIFIER) +                   \
					     !!((st) & PERF_SAMPLE_IP) + !!((st) & PERF_SAMPLE_TID) \
				   : -1)
#endif
