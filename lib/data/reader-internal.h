/* SPDX-License-Identifier: MIT */
/* lib/data/reader-internal.h - the perf.data reader's state, shared by reader.c (opening,
 * the header, attrs), reader-records.c (streaming, records) and reader-features.c (the
 * header's feature sections). */
#ifndef PK_DATA_READER_INTERNAL_H
#define PK_DATA_READER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <zstd.h>
#include "data-internal.h"
#include "core/intern.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define WIN_SIZE (512 * 1024)        /* fd window; > 2 x the largest record (64 KiB) */
#define DEC_SIZE (256 * 1024)        /* zstd output buffer */
#define MAX_ATTRS 65536
#define MAX_IDS (16u << 20)
#define MAX_FEATURE_SIZE (64u << 20)
#define DONTNEED_STEP (32u << 20)
#define KEEP_STEP (2u << 20)         /* granularity of pk_data_reader__release_before */
#define POPULATE_STEP (2u << 20)     /* mapping faulted in ahead of iteration, at once */

enum src_kind { SRC_MEM, SRC_PREAD, SRC_STREAM };

struct rattr {
	struct pk_data_attr pub;
	uint64_t *ids;
	char *name;
};

struct pk_data_reader {
	struct pk_data_head *head;  /* opts.head (out) */
	enum src_kind kind;
	int fd;
	bool own_fd;
	const uint8_t *mem;         /* SRC_MEM */
	uint64_t size;              /* input size (SRC_MEM / SRC_PREAD); UINT64_MAX stream */
	void *map;                  /* our own mapping (munmap at free) */
	size_t map_len;
	uint64_t dropped;           /* mapping bytes already madvised away */
	uint64_t populated;         /* mapping bytes faulted in ahead of pos (POPULATE_STEP) */
	uint64_t keep_mapped;       /* a mapping up to this long is not dropped behind
				     * (pk_rd_keep_mapped) */
	uint64_t keep_from;         /* caller still uses the image from here (UINT64_MAX:
				     * no caller limit, keep DONTNEED_STEP behind pos) */

	bool pipe;
	bool no_populate;           /* the kernel has no MADV_POPULATE_READ */
	bool truncated;
	bool scan_to_eof;           /* data.size unusable: read records until the end */
	int err;                    /* sticky iteration error */
	struct pk_file_header fh;

	/* stream state */
	uint64_t pos, end;          /* current and end offset of the data stream */
	uint8_t *win;               /* SRC_PREAD / SRC_STREAM window */
	size_t win_len;             /* valid bytes in win */
	uint64_t win_off;           /* input offset of win[0] */
	bool eof;                   /* stream source hit EOF */

	uint8_t *scratch;           /* 8-aligned copy of a misaligned record (64 KiB + 8) */

	/* attrs */
	struct rattr **attrs;
	size_t nr_attrs;
	struct pk_u64map ids;       /* sample id -> attr idx + 1 */
	size_t nr_ids_total;
	int id_pos, is_pos;
	bool sample_id_all;

	/* env */
	struct pk_data_env env;
	char **strs[6];
	char **cmdline;
	struct pk_data_build_id *bids;
	char **topo_lists[3];

	/* compression */
	ZSTD_DCtx *dctx;
	uint8_t *cin;               /* payload of the current COMPRESSED record */
	size_t cin_len, cin_pos;
	uint8_t *dec;               /* decompressed bytes [dec_pos, dec_len) pending */
	size_t dec_pos, dec_len;
	uint64_t dec_skip;          /* payload bytes to skip inside the decompressed stream */
	uint64_t dec_total, dec_limit;
	uint64_t comp_off;          /* file offset of the current COMPRESSED record */

	/* tracing data (TRACING_DATA feature / first HEADER_TRACING_DATA payload) */
	uint8_t *tracing;
	size_t tracing_len;
	uint8_t *lead;              /* pipe mode: the leading records __open consumed */
	size_t lead_len, lead_cap;

	/* payload kept for the caller */
	void *payload;
	size_t max_payload;
	bool keep_tracing, show_compressed;

	uint64_t nr_records, nr_samples;
	/* pk_rd_truncated_end: the data ended there; later calls end there too (never read
	 * on from inside what was cut, such as a payload whose header was passed) */
	bool ended;
	/* pk_rd_span_attr: the attr of the last sample id (span_nr_attrs: attrs then) */
	uint64_t span_id;
	const struct pk_data_attr *span_attr;
	size_t span_nr_attrs;
};

/* (reader.c) len bytes of the input at off into dst: 0, or a negative errno */
int pk_rd_src_read(struct pk_data_reader *r, uint64_t off, void *dst, size_t len);
/* (reader.c) warn with the offset and the records read so far, keep the first error as
 * the sticky one; returns err */
int pk_rd_fail(struct pk_data_reader *r, int err, uint64_t off, const char *fmt, ...)
	PK_PRINTF(4, 5);
/* (reader.c) add an attr from raw (avail readable bytes) and its nr_ids ids, given as
 * u64s (ids_src) or as unaligned bytes (ids_bytes) */
int pk_rd_add_attr(struct pk_data_reader *r, const uint8_t *raw, size_t avail,
		   const uint64_t *ids_src, const uint8_t *ids_bytes, size_t nr_ids,
		   uint64_t off);
/* (reader-records.c) the stream: contiguous len (<= 64 KiB + 64) bytes at r->pos, or NULL
 * at the end of input (*avail: the bytes left); copy n bytes and advance (false if the
 * input ended first); drop or fault in mapping pages around r->pos */
const uint8_t *pk_rd_stream_peek(struct pk_data_reader *r, size_t len, uint64_t *avail);
bool pk_rd_stream_copy(struct pk_data_reader *r, uint8_t *dst, uint64_t n);
void pk_rd_stream_release_pages(struct pk_data_reader *r);
/* (reader-records.c) apply HEADER_ATTR, HEADER_FEATURE, EVENT_UPDATE(NAME) records */
int pk_rd_process_user_meta(struct pk_data_reader *r, const struct perf_event_header *h,
			    uint64_t off);
/* (reader-records.c) payload bytes after header.size (AUXTRACE, HEADER_TRACING_DATA) */
uint64_t pk_rd_trailing_payload(const struct perf_event_header *h);
/* (reader-records.c) note a truncated input ending at off; returns 0 (end of records) */
int pk_rd_truncated_end(struct pk_data_reader *r, uint64_t off, const char *what);
/* (reader-features.c) */
const char *pk_rd_feat_name(int feat);
void pk_rd_free_groups(struct pk_data_reader *r);
void pk_rd_free_strv(char **v, size_t n);
int pk_rd_parse_feature(struct pk_data_reader *r, int feat, const uint8_t *p, size_t len);
void pk_rd_read_features(struct pk_data_reader *r, uint64_t table);
void pk_rd_free_env_arrays(struct pk_data_reader *r); /* NUMA, PMU maps, caches, memory */

#endif
