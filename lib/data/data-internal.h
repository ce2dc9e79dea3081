/* SPDX-License-Identifier: MIT */
/* lib/data internals: byte buffers, feature encoders, file-format constants. */
#ifndef PK_DATA_INTERNAL_H
#define PK_DATA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <perfkit/data.h>
#include "internal.h"

#define PK_DATA_MAGIC 0x32454c4946524550ULL    /* "PERFILE2" read as a native u64 */
#define PK_DATA_MAGIC_SWAPPED 0x50455246494c4532ULL
#define PK_DATA_HEADER_SIZE 104
#define PK_DATA_HEADER_SIZE_OLD 72             /* no feature bitmap */
#define PK_DATA_PIPE_HEADER_SIZE 16
#define PK_DATA_NAME_ALIGN 64

/* On-disk file header (host byte order). */
struct pk_file_section {
	uint64_t offset;
	uint64_t size;
};
struct pk_file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct pk_file_section attrs;
	struct pk_file_section data;
	struct pk_file_section event_types;
	uint64_t features[PK_FEAT_BITS / 64];
};
_Static_assert(sizeof(struct pk_file_header) == PK_DATA_HEADER_SIZE, "file header size");

/* Growable byte buffer; an allocation failure sticks in `err` (checked once at the end). */
struct pk_dbuf {
	uint8_t *p;
	size_t len, cap;
	int err;
};
void pk_dbuf_put(struct pk_dbuf *b, const void *data, size_t len);
void pk_dbuf_zero(struct pk_dbuf *b, size_t len);
void pk_dbuf_u16(struct pk_dbuf *b, uint16_t v);
void pk_dbuf_u32(struct pk_dbuf *b, uint32_t v);
void pk_dbuf_u64(struct pk_dbuf *b, uint64_t v);
/* perf_header_string: u32 len = pad64(strlen + 1); bytes; zero padding */
void pk_dbuf_str(struct pk_dbuf *b, const char *s);
void pk_dbuf_release(struct pk_dbuf *b);

/* Host feature encoders (lib/data/host.c). Each appends one feature payload to b and
 * returns 0, or a negative errno when the information is unavailable (feature skipped). */
struct pk_host_info {
	const char *sysfs_root; /* "/sys" */
	const char *procfs_root; /* "/proc" */
};
int pk_host__uname(struct pk_dbuf *b, int feat);           /* HOSTNAME, OSRELEASE, ARCH */
int pk_host__nrcpus(struct pk_dbuf *b, const struct pk_host_info *h, uint32_t *avail);
int pk_host__cpudesc(struct pk_dbuf *b, const struct pk_host_info *h);
int pk_host__cpuid(struct pk_dbuf *b, const struct pk_host_info *h);
int pk_host__total_mem(struct pk_dbuf *b, const struct pk_host_info *h);
int pk_host__cmdline(struct pk_dbuf *b, const struct pk_host_info *h,
		     const char *const *argv, int argc);
int pk_host__cpu_topology(struct pk_dbuf *b, const struct pk_host_info *h, uint32_t nr_avail);

/* Sample-body u64 index of ID / TIME for a sample_type (-1 when absent). */

/* pk_tracing_data__build with a hint per id: the event's name ("sys:name", NULL: none),
 * which spares the scan of every tracepoint when the hints are right. */
int pk_tracing_data_build_hinted(const char *tracefs_root, const uint64_t *tp_ids,
				 const char *const *hints, size_t nr, void **blob, size_t *len);

#endif
