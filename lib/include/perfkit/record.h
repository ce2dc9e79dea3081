/* SPDX-License-Identifier: MIT */
/*
 * perfkit/record.h - decoding of the records the kernel writes into a perf ring buffer
 * (and that perf.data files carry): PERF_RECORD_SAMPLE with every sample_type bit, every
 * kernel record type 1..22, the sample_id_all trailer, and the misc bits.
 *
 * Usage:
 *     struct pk_sample_layout l;
 *     pk_sample_layout__init(&l, &attr);            // once per attr
 *     struct pk_record r;
 *     const char *bad;
 *     int err = pk_record__decode(&l, hdr, &r, &bad); // per record, zero copy
 *     if (err == PK_RECORD_SKIPPED) ...              // unknown type: skip hdr->size bytes
 *     else if (err < 0) ... bad names the field that did not fit
 *
 * Zero copy: every pointer in a decoded struct points into the record, so it stays valid
 * as long as the record's bytes do (for a ring record: until pk_ring__next/consume).
 *
 * Alignment: the record must start on an 8-byte boundary (kernel records always do; the
 * ring reader and its scratch copy guarantee it). A file reader holding a misaligned record
 * must copy it to an aligned buffer first; decode returns -EINVAL otherwise.
 *
 * The caller guarantees that header.size bytes are readable at the record (the ring reader
 * does; a file reader must check header.size against what it has). Within those bytes every
 * length field is checked; nothing is read beyond header.size.
 */
#ifndef PERFKIT_RECORD_H
#define PERFKIT_RECORD_H

#include <perfkit/common.h>
#include <perfkit/sys.h>
#include <perfkit/readfmt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Constants missing from older uapi headers (harmless redefinitions of enum values). */
#ifndef PERF_SAMPLE_CGROUP
#define PERF_SAMPLE_CGROUP (1ULL << 21)
#endif
#ifndef PERF_SAMPLE_DATA_PAGE_SIZE
#define PERF_SAMPLE_DATA_PAGE_SIZE (1ULL << 22)
#endif
#ifndef PERF_SAMPLE_CODE_PAGE_SIZE
#define PERF_SAMPLE_CODE_PAGE_SIZE (1ULL << 23)
#endif
#ifndef PERF_SAMPLE_WEIGHT_STRUCT
#define PERF_SAMPLE_WEIGHT_STRUCT (1ULL << 24)
#endif
#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1ULL << 4)
#endif
#ifndef PERF_RECORD_AUX_OUTPUT_HW_ID
#define PERF_RECORD_AUX_OUTPUT_HW_ID 21
#endif
#ifndef PERF_SAMPLE_BRANCH_HW_INDEX
#define PERF_SAMPLE_BRANCH_HW_INDEX (1ULL << 17)
#endif
#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif
/* Newer than any uapi header we build against. */
#define PK_SAMPLE_BRANCH_COUNTERS (1ULL << 19)     /* branch_sample_type: nr x u64 counters */
#define PK_RECORD_CALLCHAIN_DEFERRED 22            /* kernel >= 6.16-ish */
#define PK_CONTEXT_USER_DEFERRED ((uint64_t)-640)  /* callchain marker */

/* Every sample_type bit this decoder knows; others make pk_sample_layout__init fail. */
#define PK_SAMPLE_KNOWN_MASK ((1ULL << 25) - 1)
/* The six sample_type bits that form the sample_id_all trailer. */
#define PK_SAMPLE_ID_ALL_MASK                                                        \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |   \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* pk_record__decode's return for a record type it does not know (skip header.size bytes). */
#define PK_RECORD_SKIPPED 1

/* ---------------------------------------------------------------------------------- */
/* Layout: everything about an attr that decoding needs, computed once.                */

#define PK_LAYOUT_BRANCH_HW_INDEX 0x1u  /* branch stack carries hw_idx after nr */
#define PK_LAYOUT_BRANCH_COUNTERS 0x2u  /* branch stack carries nr x u64 counters */

struct pk_sample_layout {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t sample_regs_user;
	uint64_t sample_regs_intr;
	uint64_t branch_sample_type;
	uint32_t nr_regs_user;     /* popcount(sample_regs_user) */
	uint32_t nr_regs_intr;     /* popcount(sample_regs_intr) */
	uint32_t flags;            /* PK_LAYOUT_* */
	uint32_t sample_id_all;    /* 0 or 1 */
	uint32_t id_size;          /* bytes of the trailer on non-sample records (0 without
				    * sample_id_all) */
	uint32_t min_sample_size;  /* header + the fixed 8-byte fields IDENTIFIER..PERIOD */
	int32_t id_pos;            /* u64 index of the id in a sample body, -1 if none */
	int32_t is_pos;            /* u64 index of the id counted from the end of a non-sample
				    * record, 1 = last u64; -1 if none (or no sample_id_all) */
	uint64_t reserved[8];      /* zero; room to grow without changing the size */
};

/*
 * Fill `l` from an attr (only sample_type, read_format, sample_regs_user/intr,
 * branch_sample_type and sample_id_all are read; an attr read from a file with a smaller
 * attr.size must be zero-extended to sizeof(struct perf_event_attr) first).
 * Returns 0, or -EINVAL for unknown sample_type/read_format bits or WEIGHT together with
 * WEIGHT_STRUCT (the kernel rejects both).
 */
PK_API int pk_sample_layout__init(struct pk_sample_layout *l, const struct perf_event_attr *attr);

/*
 * The sample id of any record, as perf's reader locates it: a SAMPLE
 * reads body u64 [id_pos]; other kernel records (sample_id_all) read the u64 is_pos from
 * the end. Returns 0 and *id, -ENOENT if this layout puts no id in this kind of record
 * (no ID/IDENTIFIER, or a non-sample record without sample_id_all, or a user-space record
 * type >= 64), -PK_ERR_FORMAT if the record is too short to hold it.
 * Records of several attrs can only be told apart if all layouts agree on id_pos/is_pos.
 */
PK_API int pk_sample_layout__record_id(const struct pk_sample_layout *l,
				       const struct perf_event_header *rec, uint64_t *id);

/* ---------------------------------------------------------------------------------- */
/* Misc bits.                                                                          */

enum pk_cpumode {
	PK_CPUMODE_UNKNOWN = 0,      /* PERF_RECORD_MISC_CPUMODE_UNKNOWN */
	PK_CPUMODE_KERNEL = 1,
	PK_CPUMODE_USER = 2,
	PK_CPUMODE_HYPERVISOR = 3,
	PK_CPUMODE_GUEST_KERNEL = 4,
	PK_CPUMODE_GUEST_USER = 5,
	PK_CPUMODE_INVALID = 6,      /* 6 and 7 are not defined by the kernel */
};

/* cpumode of header.misc (misc & PERF_RECORD_MISC_CPUMODE_MASK; 6/7 -> INVALID). */
PK_API enum pk_cpumode pk_misc__cpumode(uint16_t misc);
/* "kernel", "user", "hypervisor", "guest-kernel", "guest-user", "unknown", "invalid". */
PK_API const char *pk_cpumode__name(enum pk_cpumode m);

/* Kernel record type name ("MMAP", "SAMPLE", ...), or NULL for a type we do not know. */
PK_API const char *pk_record_type__name(uint32_t type);

/* ---------------------------------------------------------------------------------- */
/* Samples.                                                                            */

/* Callchain entries >= PERF_CONTEXT_MAX are markers that set the address space of the
 * entries after them. */
enum pk_callchain_ctx {
	PK_CTX_NONE = 0,        /* an ordinary address */
	PK_CTX_HV,
	PK_CTX_KERNEL,
	PK_CTX_USER,
	PK_CTX_USER_DEFERRED,
	PK_CTX_GUEST,
	PK_CTX_GUEST_KERNEL,
	PK_CTX_GUEST_USER,
	PK_CTX_UNKNOWN,         /* >= PERF_CONTEXT_MAX but not a marker we know */
};
/* Classify a callchain entry. */
PK_API enum pk_callchain_ctx pk_callchain__context(uint64_t ip);
/* "hv", "kernel", "user", "user-deferred", "guest", "guest-kernel", "guest-user",
 * "unknown-context", or "address" for PK_CTX_NONE. */
PK_API const char *pk_callchain_ctx__name(enum pk_callchain_ctx c);

/* One branch-stack entry as the kernel writes it. Decode `flags` with pk_branch__flags. */
struct pk_branch_entry {
	uint64_t from;
	uint64_t to;
	uint64_t flags;
};
struct pk_branch_flags {
	uint8_t mispred;    /* bit 0 */
	uint8_t predicted;  /* bit 1 */
	uint8_t in_tx;      /* bit 2 */
	uint8_t abort;      /* bit 3 */
	uint16_t cycles;    /* bits 4..19 */
	uint8_t type;       /* bits 20..23 (PERF_BR_*) */
	uint8_t spec;       /* bits 24..25 */
	uint8_t new_type;   /* bits 26..29 */
	uint8_t priv;       /* bits 30..32 */
};
PK_API struct pk_branch_flags pk_branch__flags(uint64_t flags);

/* REGS_USER / REGS_INTR: abi 0 (PERF_SAMPLE_REGS_ABI_NONE) means no registers. */
struct pk_sample_regs {
	uint64_t abi;
	uint64_t mask;          /* the attr's register mask (bit i set = register i present) */
	uint32_t nr;            /* 0 when abi == 0, else popcount(mask) */
	const uint64_t *regs;   /* nr values in ascending register-bit order */
};

/*
 * A decoded sample. A field is meaningful only if its bit is in `type` (= the layout's
 * sample_type); others are zero.
 *
 * How pk_sample and pk_record grow (they are allocated by callers and filled by
 * pk_sample__decode / pk_record__decode, so their size is part of the ABI): a new
 * PERF_SAMPLE_* bit or record type adds fields at the end only, never in the middle; the
 * release that grows them exports new versions of the functions that fill them (a new
 * node in libperfkit.map, the old symbol version kept and filling only the old size), so
 * a program built against older headers keeps working with a newer library. Until 1.0
 * (soname 0) the struct may still change with a soname bump instead.
 */
struct pk_sample {
	uint64_t type;
	uint16_t misc;          /* header.misc */
	uint8_t cpumode;        /* enum pk_cpumode */
	uint8_t exact_ip;       /* PERF_RECORD_MISC_EXACT_IP */
	uint64_t id;            /* IDENTIFIER or ID (equal when both are set) */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu, cpu_res;
	uint64_t period;
	struct {                /* READ: the raw block, decode with pk_sample__read_values */
		const void *data;
		size_t size;
		uint64_t nr;    /* counters in the block (1 without PERF_FORMAT_GROUP) */
	} read;
	struct {                /* CALLCHAIN: markers (pk_callchain__context) left in place */
		uint64_t nr;
		const uint64_t *ips;
	} callchain;
	struct {                /* RAW: size includes the kernel's padding */
		uint32_t size;
		const void *data;
	} raw;
	struct {                /* BRANCH_STACK */
		uint64_t nr;
		uint64_t hw_idx;        /* valid if has_hw_idx */
		bool has_hw_idx;        /* layout has PK_LAYOUT_BRANCH_HW_INDEX */
		const struct pk_branch_entry *entries;
		const uint64_t *counters; /* nr values with PK_LAYOUT_BRANCH_COUNTERS, else NULL */
	} branch;
	struct pk_sample_regs regs_user;
	struct {                /* STACK_USER: dyn_size valid only when size != 0 */
		uint64_t size;
		const void *data;
		uint64_t dyn_size;
	} stack_user;
	uint64_t weight;        /* WEIGHT, or WEIGHT_STRUCT's full 64 bits */
	struct {                /* WEIGHT_STRUCT split (also filled for WEIGHT) */
		uint32_t var1_dw;
		uint16_t var2_w;
		uint16_t var3_w;
	} weight_struct;
	uint64_t data_src;
	uint64_t transaction;
	struct pk_sample_regs regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	struct {                /* AUX */
		uint64_t size;
		const void *data;
	} aux;
};

/*
 * Decode a PERF_RECORD_SAMPLE with layout `l`. Returns 0, -EINVAL (not a SAMPLE, record
 * misaligned, NULL args), or -PK_ERR_FORMAT when a field does not fit in header.size or
 * bytes are left over; then *bad_field (if non-NULL) names the field ("callchain.nr", ...).
 */
PK_API int pk_sample__decode(const struct pk_sample_layout *l, const struct perf_event_header *rec,
			     struct pk_sample *out, const char **bad_field);

/*
 * Decode the READ block of a sample (or of a PERF_RECORD_READ: pass r->read.values etc.
 * through pk_read_format__decode directly) into out[0..max). Returns the number of
 * counters (may exceed max) or a negative error as pk_read_format__decode.
 */
PK_API int pk_sample__read_values(const struct pk_sample_layout *l, const struct pk_sample *s,
				  struct pk_count_value *out, size_t max);

/*
 * Periods from PERF_SAMPLE_READ totals, as perf derives them: a sample's read values are
 * running totals per counter; the period of counter `id` in this sample is its total minus
 * the total of the previous sample that read the same id (the first time: the total
 * itself). Sample ids are per fd, so the deltas are per event, thread and CPU. Feed the
 * values in file order. __update returns 0 with *delta set, -EINVAL, -ENOMEM, or -E2BIG
 * beyond 4M distinct ids (pass only ids the file's attrs list).
 */
struct pk_read_delta;
PK_API struct pk_read_delta *pk_read_delta__new(void); /* NULL + errno ENOMEM */
PK_API void pk_read_delta__free(struct pk_read_delta *d);
PK_API int pk_read_delta__update(struct pk_read_delta *d, uint64_t id, uint64_t value,
				 uint64_t *delta);

/* ---------------------------------------------------------------------------------- */
/* Records.                                                                            */

/* The sample_id_all trailer. `type` holds the PK_SAMPLE_ID_ALL_MASK bits present. */
struct pk_sample_id {
	uint64_t type;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;            /* ID or IDENTIFIER */
	uint64_t stream_id;
	uint32_t cpu, cpu_res;
};

struct pk_rec_mmap {            /* MMAP (1) */
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	const char *filename;   /* NUL-terminated within the record */
	bool data;              /* PERF_RECORD_MISC_MMAP_DATA: not an executable mapping */
};
struct pk_rec_lost {            /* LOST (2) */
	uint64_t id, lost;
};
struct pk_rec_comm {            /* COMM (3) */
	uint32_t pid, tid;
	const char *comm;
	bool exec;              /* PERF_RECORD_MISC_COMM_EXEC */
};
struct pk_rec_task {            /* EXIT (4), FORK (7) */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
struct pk_rec_throttle {        /* THROTTLE (5), UNTHROTTLE (6) */
	uint64_t time, id, stream_id;
};
struct pk_rec_read {            /* READ (8): values in the layout's read_format */
	uint32_t pid, tid;
	const void *values;
	size_t size;
	uint64_t nr;            /* counters in the block */
};
struct pk_rec_mmap2 {           /* MMAP2 (10) */
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	bool has_build_id;      /* PERF_RECORD_MISC_MMAP_BUILD_ID variant */
	uint32_t maj, min;      /* inode variant */
	uint64_t ino, ino_generation;
	uint8_t build_id_size;  /* build-id variant; <= 20 (else -PK_ERR_FORMAT) */
	const uint8_t *build_id;/* 20 bytes in the record, build_id_size of them valid */
	uint32_t prot, flags;
	const char *filename;
	bool data;              /* PERF_RECORD_MISC_MMAP_DATA */
};
struct pk_rec_aux {             /* AUX (11) */
	uint64_t aux_offset, aux_size, flags; /* PERF_AUX_FLAG_* */
	bool truncated, overwrite, partial, collision;
	uint8_t pmu_format;     /* (flags & 0xff00) >> 8 */
};
struct pk_rec_itrace_start {    /* ITRACE_START (12) */
	uint32_t pid, tid;
};
struct pk_rec_lost_samples {    /* LOST_SAMPLES (13) */
	uint64_t lost;
};
struct pk_rec_switch {          /* SWITCH (14), SWITCH_CPU_WIDE (15) */
	bool out;               /* PERF_RECORD_MISC_SWITCH_OUT */
	bool preempt;           /* PERF_RECORD_MISC_SWITCH_OUT_PREEMPT */
	uint32_t next_prev_pid, next_prev_tid; /* CPU_WIDE only */
};
struct pk_ns_link {
	uint64_t dev, ino;
};
struct pk_rec_namespaces {      /* NAMESPACES (16): index order net, uts, ipc, pid, user,
				 * mnt, cgroup (NET_NS_INDEX ...) */
	uint32_t pid, tid;
	uint64_t nr;
	const struct pk_ns_link *ns;
};
struct pk_rec_ksymbol {         /* KSYMBOL (17) */
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;     /* PERF_RECORD_KSYMBOL_TYPE_* */
	uint16_t flags;         /* PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER */
	bool unregister;
	const char *name;
};
struct pk_rec_bpf_event {       /* BPF_EVENT (18) */
	uint16_t type;          /* PERF_BPF_EVENT_* */
	uint16_t flags;
	uint32_t id;
	const uint8_t *tag;     /* 8 bytes (BPF_TAG_SIZE) */
};
struct pk_rec_cgroup {          /* CGROUP (19) */
	uint64_t id;
	const char *path;
};
struct pk_rec_text_poke {       /* TEXT_POKE (20) */
	uint64_t addr;
	uint16_t old_len, new_len;
	const uint8_t *old_bytes, *new_bytes;
};
struct pk_rec_aux_output_hw_id {/* AUX_OUTPUT_HW_ID (21) */
	uint64_t hw_id;
};
struct pk_rec_callchain_deferred { /* CALLCHAIN_DEFERRED (22) */
	uint64_t cookie;
	uint64_t nr;
	const uint64_t *ips;
};

struct pk_record {
	const struct perf_event_header *hdr;
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	uint8_t cpumode;        /* enum pk_cpumode of misc */
	bool has_sid;           /* non-sample record with a sample_id_all trailer decoded */
	struct pk_sample_id sid;
	union {
		struct pk_rec_mmap mmap;
		struct pk_rec_lost lost;
		struct pk_rec_comm comm;
		struct pk_rec_task task;           /* EXIT, FORK */
		struct pk_rec_throttle throttle;   /* THROTTLE, UNTHROTTLE */
		struct pk_rec_read read;
		struct pk_sample sample;
		struct pk_rec_mmap2 mmap2;
		struct pk_rec_aux aux;
		struct pk_rec_itrace_start itrace_start;
		struct pk_rec_lost_samples lost_samples;
		struct pk_rec_switch sw;           /* SWITCH, SWITCH_CPU_WIDE */
		struct pk_rec_namespaces namespaces;
		struct pk_rec_ksymbol ksymbol;
		struct pk_rec_bpf_event bpf_event;
		struct pk_rec_cgroup cgroup;
		struct pk_rec_text_poke text_poke;
		struct pk_rec_aux_output_hw_id aux_output_hw_id;
		struct pk_rec_callchain_deferred callchain_deferred;
	};
};

/*
 * Decode any kernel record (types 1..22) with layout `l` (which gives the sample format and
 * the trailer; l may be NULL for records of an unknown attr: then samples fail with -EINVAL
 * and no trailer is assumed). The trailer is taken from the END of the record
 * (header.size - l->id_size) and the body must fit before it.
 * Returns 0; PK_RECORD_SKIPPED (1) for an unknown type (out->hdr/type/misc/size are
 * filled; skip header.size bytes); -EINVAL for a NULL or misaligned record;
 * -PK_ERR_FORMAT if header.size < 8, a field does not fit, a string is not NUL-terminated
 * inside the record, or a fixed-size body has the wrong size (*bad_field names the field).
 */
PK_API int pk_record__decode(const struct pk_sample_layout *l, const struct perf_event_header *rec,
			     struct pk_record *out, const char **bad_field);

/*
 * Decode only the sample_id_all trailer of a non-sample record. Returns 0 (out->type is
 * 0 if the layout has no trailer), -EINVAL for a SAMPLE or user record (type >= 64),
 * -PK_ERR_FORMAT if the record is shorter than header + trailer.
 */
PK_API int pk_record__sample_id(const struct pk_sample_layout *l, const struct perf_event_header *rec,
				struct pk_sample_id *out);

#ifdef __cplusplus
}
#endif
#endif
