/* SPDX-License-Identifier: MIT */
/*
 * lib/data: streaming perf.data reader (file and pipe format).
 *
 * Input sources: a memory image (mmapped file or caller buffer: random access), a
 * seekable fd read with pread (random access), or a non-seekable fd (pipe format only,
 * read sequentially). Record iteration goes through one "stream" abstraction that hands
 * out contiguous record bytes; memory is bounded by one window buffer (fd input) or by
 * dropping consumed pages of the mapping (mmap input), plus a fixed zstd output buffer.
 *
 * Every offset and size read from the input is validated before use; errors name the
 * file offset and how many records were read before.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "internal.h"
#include "data-internal.h"
#include "reader-internal.h"


static int fail(struct pk_data_reader *r, int err, uint64_t off, const char *fmt, ...)
	PK_PRINTF(4, 5);
static int fail(struct pk_data_reader *r, int err, uint64_t off, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pk_warn("perf.data: %s at offset %#llx (%llu records read before)", msg,
		(unsigned long long)off, (unsigned long long)r->nr_records);
	if (!r->err)
		r->err = err;
	return err;
}

/* ---- random access (header, attrs, features) ---- */

int pk_rd_src_read(struct pk_data_reader *r, uint64_t off, void *dst, size_t len)
{
	if (off > r->size || len > r->size - off)
		return -PK_ERR_TRUNCATED;
	if (r->kind == SRC_MEM) {
		memcpy(dst, r->mem + off, len);
		return 0;
	}
	uint8_t *p = dst;
	while (len) {
		ssize_t n = pread(r->fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -PK_ERR_TRUNCATED;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- streaming ---- */

/* Contiguous `len` (<= 64 KiB + 64) bytes at r->pos, or NULL at end of input (then
 * *avail holds how many bytes were left). */
static const uint8_t *stream_peek(struct pk_data_reader *r, size_t len, uint64_t *avail)
{
	uint64_t limit = r->end;

	if (r->kind == SRC_MEM) {
		uint64_t have = limit > r->pos ? limit - r->pos : 0;
		*avail = have;
		return have >= len ? r->mem + r->pos : NULL;
	}
	/* window covers [win_off, win_off + win_len) */
	if (r->pos < r->win_off || r->pos > r->win_off + r->win_len) {
		r->win_off = r->pos;
		r->win_len = 0;
	}
	size_t at = (size_t)(r->pos - r->win_off);
	if (r->win_len - at < len) {
		/* slide what is left to the front and refill */
		memmove(r->win, r->win + at, r->win_len - at);
		r->win_len -= at;
		r->win_off = r->pos;
		at = 0;
		while (r->win_len < len && !r->eof) {
			size_t want = WIN_SIZE - r->win_len;
			uint64_t off = r->win_off + r->win_len;
			if (limit != UINT64_MAX && off >= limit)
				break;
			if (limit != UINT64_MAX && want > limit - off)
				want = (size_t)(limit - off);
			ssize_t n = r->kind == SRC_PREAD ? pread(r->fd, r->win + r->win_len, want,
								  (off_t)off)
							  : read(r->fd, r->win + r->win_len, want);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				r->eof = true; /* reported as truncation by the caller */
				pk_warn("perf.data: read error: %s", strerror(errno));
				break;
			}
			if (n == 0) {
				r->eof = true;
				if (r->kind == SRC_PREAD && off < r->size)
					/* (mapped, the same would have been a SIGBUS) */
					fail(r, -PK_ERR_TRUNCATED, off,
					     "the file, %llu bytes when opened, shrank while "
					     "it was being read (another program truncated or "
					     "rewrote it: run again on a copy that nothing "
					     "writes); it ended",
					     (unsigned long long)r->size);
				break;
			}
			r->win_len += (size_t)n;
		}
	}
	*avail = r->win_len - at;
	if (limit != UINT64_MAX && *avail > limit - r->pos)
		*avail = limit - r->pos;
	return *avail >= len ? r->win + at : NULL;
}

/* Skip n bytes (payloads). Returns false if the input ended first. */
static bool stream_skip(struct pk_data_reader *r, uint64_t n)
{
	if (r->kind != SRC_STREAM) {
		if (n > r->end - r->pos)
			return false;
		r->pos += n;
		return true;
	}
	while (n) {
		uint64_t avail;
		size_t chunk = (size_t)PK_MIN(n, (uint64_t)WIN_SIZE / 2);
		if (!stream_peek(r, chunk, &avail)) {
			if (!avail)
				return false;
			chunk = (size_t)avail;
		}
		r->pos += chunk;
		n -= chunk;
	}
	return true;
}

/* Copy n bytes at r->pos into dst and advance. false if the input ended first (r->pos is
 * then somewhere inside the range). */
static bool stream_copy(struct pk_data_reader *r, uint8_t *dst, uint64_t n)
{
	while (n) {
		uint64_t avail;
		size_t chunk = (size_t)PK_MIN(n, (uint64_t)WIN_SIZE / 2);
		const uint8_t *q = stream_peek(r, chunk, &avail);
		if (!q)
			return false;
		memcpy(dst, q, chunk);
		dst += chunk;
		n -= chunk;
		r->pos += chunk;
	}
	return true;
}

static void stream_release_pages(struct pk_data_reader *r)
{
	/* keep the RSS of a big mapping bounded: drop what iteration has passed (the
	 * mapping is read-only and file-backed, so a dropped page that is touched again
	 * is only read back from the page cache) */
	if (!r->map)
		return;
	if (r->pos + POPULATE_STEP / 2 > r->populated && r->populated < r->map_len &&
	    !r->no_populate) {
		/* the pages ahead in one call: a page fault per 16 pages (the kernel's
		 * fault-around) cost 11 us each in a PVM guest, far more than reading */
		uint64_t from = PK_MAX(r->populated, r->pos & ~(uint64_t)4095);
		uint64_t to = PK_MIN(from + POPULATE_STEP, (uint64_t)r->map_len);
		if (madvise((uint8_t *)r->map + from, (size_t)(to - from), MADV_POPULATE_READ) &&
		    errno == EINVAL)
			r->no_populate = true;
		r->populated = to;
	}
	uint64_t upto;
	if (r->keep_from != UINT64_MAX) {
		/* the caller said what it still references: drop up to there */
		uint64_t lim = PK_MIN(r->keep_from, r->pos);
		if (lim < r->dropped + KEEP_STEP)
			return;
		upto = lim & ~((uint64_t)KEEP_STEP - 1);
	} else {
		if (r->pos < r->dropped + 2 * (uint64_t)DONTNEED_STEP)
			return;
		upto = (r->pos - DONTNEED_STEP) & ~((uint64_t)DONTNEED_STEP - 1);
	}
	if (upto > r->map_len)
		upto = r->map_len & ~((uint64_t)4095);
	if (upto > r->dropped) {
		madvise((uint8_t *)r->map + r->dropped, (size_t)(upto - r->dropped), MADV_DONTNEED);
		r->dropped = upto;
	}
}

/* ---- id map ---- */

static uint64_t id_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static int idmap_put(struct pk_data_reader *r, uint64_t id, uint32_t idx)
{
	if (r->map_used + 1 > r->map_cap / 2) {
		size_t cap = r->map_cap ? r->map_cap * 2 : 64;
		uint64_t *k = calloc(cap, sizeof(*k));
		uint32_t *v = calloc(cap, sizeof(*v));
		if (!k || !v) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < r->map_cap; i++) {
			if (!r->map_vals[i])
				continue;
			size_t h = id_hash(r->map_keys[i]) & (cap - 1);
			while (v[h])
				h = (h + 1) & (cap - 1);
			k[h] = r->map_keys[i];
			v[h] = r->map_vals[i];
		}
		free(r->map_keys);
		free(r->map_vals);
		r->map_keys = k;
		r->map_vals = v;
		r->map_cap = cap;
	}
	size_t h = id_hash(id) & (r->map_cap - 1);
	while (r->map_vals[h]) {
		if (r->map_keys[h] == id)
			return 0; /* first attr listing an id wins */
		h = (h + 1) & (r->map_cap - 1);
	}
	r->map_keys[h] = id;
	r->map_vals[h] = idx + 1;
	r->map_used++;
	return 0;
}

PK_API const struct pk_data_attr *pk_data_reader__attr_by_id(const struct pk_data_reader *r,
							     uint64_t id)
{
	if (!r || !r->map_cap)
		return NULL;
	size_t h = id_hash(id) & (r->map_cap - 1);
	while (r->map_vals[h]) {
		if (r->map_keys[h] == id)
			return &r->attrs[r->map_vals[h] - 1]->pub;
		h = (h + 1) & (r->map_cap - 1);
	}
	return NULL;
}

/* ---- attrs ---- */

/* Add an attr from `raw` (attr bytes, `avail` readable) and its ids. */
static int add_attr(struct pk_data_reader *r, const uint8_t *raw, size_t avail,
		    const uint64_t *ids_src, const uint8_t *ids_bytes, size_t nr_ids,
		    uint64_t off)
{
	uint32_t sz;

	if (avail < PK_ATTR_SIZE_VER0)
		return fail(r, -PK_ERR_FORMAT, off, "attr of %zu bytes is shorter than 64", avail);
	memcpy(&sz, raw + 4, sizeof(sz));
	if (sz == 0)
		sz = PK_ATTR_SIZE_VER0;
	if (sz < PK_ATTR_SIZE_VER0 || sz > PK_ATTR_SIZE_MAX)
		return fail(r, -PK_ERR_FORMAT, off,
			    "attr.size %u is outside the supported range 64..%d", sz,
			    PK_ATTR_SIZE_MAX);
	if (sz > avail)
		return fail(r, -PK_ERR_FORMAT, off, "attr.size %u exceeds its %zu-byte slot", sz,
			    avail);
	if (r->nr_attrs >= MAX_ATTRS)
		return fail(r, -PK_ERR_FORMAT, off, "more than %d attrs", MAX_ATTRS);
	if (nr_ids > MAX_IDS - r->nr_ids_total)
		return fail(r, -PK_ERR_FORMAT, off, "more than %u sample ids", MAX_IDS);
	struct rattr **na = realloc(r->attrs, (r->nr_attrs + 1) * sizeof(*na));
	if (!na)
		return -ENOMEM;
	r->attrs = na;
	struct rattr *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->ids = nr_ids ? malloc(nr_ids * sizeof(uint64_t)) : NULL;
	if (nr_ids && !a->ids) {
		free(a);
		return -ENOMEM;
	}
	if (nr_ids && ids_src)
		memcpy(a->ids, ids_src, nr_ids * sizeof(uint64_t));
	else if (nr_ids && ids_bytes)
		memcpy(a->ids, ids_bytes, nr_ids * sizeof(uint64_t));
	memcpy(a->pub.attr.raw, raw, sz);
	a->pub.file_attr_size = sz;
	a->pub.attr.attr.size = sz;
	a->pub.idx = (int)r->nr_attrs;
	a->pub.ids = a->ids;
	a->pub.nr_ids = nr_ids;
	a->pub.id_pos = pk_sample_id_pos(a->pub.attr.attr.sample_type);
	a->pub.is_pos = a->pub.attr.attr.sample_id_all ?
			pk_sample_is_pos(a->pub.attr.attr.sample_type) : -1;
	a->pub.layout_ok = pk_sample_layout__init(&a->pub.layout, &a->pub.attr.attr) == 0;
	r->attrs[r->nr_attrs++] = a;
	r->nr_ids_total += nr_ids;
	for (size_t i = 0; i < nr_ids; i++)
		if (idmap_put(r, a->ids[i], (uint32_t)a->pub.idx))
			return -ENOMEM;
	if (a->pub.idx == 0) {
		r->id_pos = a->pub.id_pos;
		r->is_pos = a->pub.is_pos;
		r->sample_id_all = a->pub.attr.attr.sample_id_all;
	} else if (a->pub.id_pos != r->id_pos || a->pub.is_pos != r->is_pos) {
		pk_warn("perf.data: attr %d puts the sample id elsewhere than attr 0 (non matching "
			"sample_type); its records cannot be told apart", a->pub.idx);
	}
	return 0;
}

static int read_file_attrs(struct pk_data_reader *r)
{
	const struct pk_file_header *fh = &r->fh;
	uint64_t n;
	uint8_t buf[PK_ATTR_SIZE_MAX + 16];

	if (fh->attrs.size == 0)
		return 0;
	if (fh->attr_size < PK_ATTR_SIZE_VER0 + 16 || fh->attr_size > PK_ATTR_SIZE_MAX + 16)
		return fail(r, -PK_ERR_FORMAT, 16, "attr_size %llu is outside 80..%d",
			    (unsigned long long)fh->attr_size, PK_ATTR_SIZE_MAX + 16);
	if (fh->attrs.size % fh->attr_size)
		return fail(r, -PK_ERR_FORMAT, 32,
			    "attrs section size %llu is not a multiple of attr_size %llu",
			    (unsigned long long)fh->attrs.size, (unsigned long long)fh->attr_size);
	n = fh->attrs.size / fh->attr_size;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = fh->attrs.offset + i * fh->attr_size;
		uint32_t sz;
		struct pk_file_section ids;
		int ret = pk_rd_src_read(r, off, buf, (size_t)fh->attr_size);
		if (ret)
			return fail(r, ret, off, "attr %llu lies beyond the end of the file",
				    (unsigned long long)i);
		memcpy(&sz, buf + 4, sizeof(sz));
		if (sz == 0)
			sz = PK_ATTR_SIZE_VER0;
		if (sz > PK_ATTR_SIZE_MAX || sz < PK_ATTR_SIZE_VER0)
			return fail(r, -PK_ERR_FORMAT, off + 4,
				    "attr.size %u is outside the supported range 64..%d", sz,
				    PK_ATTR_SIZE_MAX);
		if ((uint64_t)sz + 16 != fh->attr_size)
			return fail(r, -PK_ERR_FORMAT, off + 4,
				    "attr.size %u does not match attr_size %llu (expected %llu)", sz,
				    (unsigned long long)fh->attr_size,
				    (unsigned long long)fh->attr_size - 16);
		memcpy(&ids, buf + sz, sizeof(ids));
		if (ids.size % 8 || ids.offset > r->size || ids.size > r->size - ids.offset)
			return fail(r, -PK_ERR_FORMAT, off + sz,
				    "id array of attr %llu {%#llx, %llu} lies outside the file",
				    (unsigned long long)i, (unsigned long long)ids.offset,
				    (unsigned long long)ids.size);
		size_t nr = (size_t)(ids.size / 8);
		uint64_t *idv = NULL;
		if (nr) {
			if (nr > MAX_IDS)
				return fail(r, -PK_ERR_FORMAT, off + sz, "too many ids");
			idv = malloc(nr * 8);
			if (!idv)
				return -ENOMEM;
			ret = pk_rd_src_read(r, ids.offset, idv, nr * 8);
			if (ret) {
				free(idv);
				return fail(r, ret, ids.offset, "cannot read id array");
			}
		}
		ret = add_attr(r, buf, sz, idv, NULL, nr, off);
		free(idv);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- open ---- */

static bool ranges_overlap(const struct pk_file_section *a, const struct pk_file_section *b)
{
	if (!a->size || !b->size)
		return false;
	return a->offset < b->offset + b->size && b->offset < a->offset + a->size;
}

static bool section_in_file(const struct pk_file_section *s, uint64_t size)
{
	return s->offset <= size && s->size <= size - s->offset;
}

/* Is there a plausible feature table at `table`? (distinguishes a finalised file with an
 * empty data section from one whose header was never finalised) */
static bool plausible_feature_table(struct pk_data_reader *r, uint64_t table)
{
	size_t nr = 0;
	for (int b = 0; b < PK_FEAT_BITS; b++)
		nr += (r->fh.features[b / 64] >> (b % 64)) & 1;
	if (!nr || table > r->size || nr * 16 > r->size - table)
		return false;
	for (size_t i = 0; i < nr; i++) {
		struct pk_file_section s;
		if (pk_rd_src_read(r, table + 16 * i, &s, sizeof(s)) || s.offset < table + nr * 16 ||
		    !section_in_file(&s, r->size))
			return false;
	}
	return true;
}

static int open_file_mode(struct pk_data_reader *r)
{
	struct pk_file_header *fh = &r->fh;
	int ret;

	memset(fh, 0, sizeof(*fh));
	ret = pk_rd_src_read(r, 0, fh, PK_DATA_HEADER_SIZE_OLD);
	if (ret)
		return fail(r, -PK_ERR_FORMAT, 0, "file too short for a perf.data header");
	if (fh->size == PK_DATA_HEADER_SIZE) {
		if (pk_rd_src_read(r, 0, fh, PK_DATA_HEADER_SIZE))
			return fail(r, -PK_ERR_FORMAT, 0, "file too short for a perf.data header");
	} else if (fh->size != PK_DATA_HEADER_SIZE_OLD) {
		return fail(r, -PK_ERR_FORMAT, 8, "header size %llu is neither 104 nor 72",
			    (unsigned long long)fh->size);
	}
	if (fh->attr_size == 0)
		return fail(r, -PK_ERR_FORMAT, 16, "attr_size is 0");
	if (!section_in_file(&fh->attrs, r->size))
		return fail(r, -PK_ERR_FORMAT, 24,
			    "attrs section {%#llx, %llu} lies outside the %llu-byte file",
			    (unsigned long long)fh->attrs.offset, (unsigned long long)fh->attrs.size,
			    (unsigned long long)r->size);
	if (fh->attrs.size && fh->attrs.offset < fh->size)
		return fail(r, -PK_ERR_FORMAT, 24, "attrs section overlaps the header");
	if (fh->data.offset < fh->size || fh->data.offset > r->size)
		return fail(r, -PK_ERR_FORMAT, 40,
			    "data offset %#llx overlaps the header or lies beyond the file",
			    (unsigned long long)fh->data.offset);
	if (ranges_overlap(&fh->attrs, &fh->data))
		return fail(r, -PK_ERR_FORMAT, 40, "attrs and data sections overlap");
	ret = read_file_attrs(r);
	if (ret)
		return ret;

	r->env.header_version = 1;
	r->env.data_offset = fh->data.offset;
	r->env.data_size = fh->data.size;
	r->env.feat_offset = fh->data.offset + fh->data.size;
	r->pos = fh->data.offset;
	if (fh->data.size == 0 &&
	    !plausible_feature_table(r, fh->data.offset)) {
		if (r->size > fh->data.offset) {
			pk_warn("perf.data: data size field is 0 (the recorder did not finalise the "
				"file); reading records up to the end of the file");
			r->truncated = true;
			r->scan_to_eof = true;
		}
		r->end = r->size;
		return 0;
	}
	if (!section_in_file(&fh->data, r->size)) {
		pk_warn("perf.data: the data section {%#llx, %llu} extends beyond the %llu-byte "
			"file: the file is truncated; reading what is there",
			(unsigned long long)fh->data.offset, (unsigned long long)fh->data.size,
			(unsigned long long)r->size);
		r->truncated = true;
		r->scan_to_eof = true;
		r->end = r->size;
		return 0;
	}
	r->end = fh->data.offset + fh->data.size;
	if (fh->size == PK_DATA_HEADER_SIZE)
		pk_rd_read_features(r, r->end);
	return 0;
}

static int process_user_meta(struct pk_data_reader *r, const struct perf_event_header *h,
			     uint64_t off);

static int next_raw(struct pk_data_reader *r, struct pk_data_event *ev);
static uint64_t trailing_payload(const struct perf_event_header *h);
static int truncated_end(struct pk_data_reader *r, uint64_t off, const char *what);

static int open_pipe_mode(struct pk_data_reader *r)
{
	r->pipe = true;
	r->env.header_version = 1; /* "PERFILE2" too; no sections to locate */
	r->pos = PK_DATA_PIPE_HEADER_SIZE;
	/* consume the leading HEADER_ATTR / HEADER_FEATURE records */
	for (;;) {
		uint64_t avail;
		const uint8_t *p = stream_peek(r, 8, &avail);
		struct perf_event_header h;
		if (!p)
			return 0;
		memcpy(&h, p, sizeof(h));
		if (h.type != PK_RECORD_HEADER_ATTR && h.type != PK_RECORD_HEADER_FEATURE &&
		    h.type != PK_RECORD_HEADER_TRACING_DATA)
			return 0;
		if (h.size < 8)
			return 0; /* reported by __next */
		p = stream_peek(r, h.size, &avail);
		if (!p)
			return 0;
		if (h.type == PK_RECORD_HEADER_TRACING_DATA) {
			/* keep the first one; a later one, or one too large, goes to __next */
			uint64_t psize = trailing_payload((const struct perf_event_header *)p);
			if (r->tracing || h.size < 12 || !psize || psize > r->max_payload)
				return 0;
			uint8_t *blob = malloc((size_t)psize);
			if (!blob)
				return -ENOMEM;
			uint64_t start = r->pos;
			r->pos += h.size;
			if (!stream_copy(r, blob, psize)) {
				free(blob);
				if (r->kind == SRC_STREAM) {
					/* consumed: the input ended inside the payload, stop here
					 * (never parse the rest of the payload as records) */
					r->end = r->pos;
					return truncated_end(r, start, "inside a payload");
				}
				r->pos = start;     /* let __next report it */
				return 0;
			}
			r->tracing = blob;
			r->tracing_len = (size_t)psize;
			r->nr_records++;
			continue;
		}
		uint8_t *copy = r->scratch;
		memcpy(copy, p, h.size);
		int ret = process_user_meta(r, (const struct perf_event_header *)copy, r->pos);
		if (ret)
			return ret;
		r->pos += h.size;
		r->nr_records++;
	}
}

static struct pk_data_reader *reader_new(const struct pk_data_reader_opts *opts)
{
	struct pk_data_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = -1;
	r->id_pos = r->is_pos = -1;
	r->keep_from = UINT64_MAX;
	r->scratch = aligned_alloc(8, 65536 + 64);
	r->keep_tracing = PK_OPTS_GET(opts, keep_tracing_data, false);
	r->show_compressed = PK_OPTS_GET(opts, show_compressed, false);
	r->max_payload = PK_OPTS_GET(opts, max_payload, (size_t)0);
	if (!r->max_payload)
		r->max_payload = 64u << 20;
	if (!r->scratch) {
		free(r);
		return NULL;
	}
	return r;
}

static struct pk_data_reader *reader_start(struct pk_data_reader *r)
{
	uint64_t magic = 0, avail;
	int ret;

	if (r->kind == SRC_STREAM) {
		r->end = UINT64_MAX;
		r->win = malloc(WIN_SIZE);
		pk_mem_prefault(r->win, WIN_SIZE);
		if (!r->win) {
			pk_data_reader__free(r);
			return pk_err_ptr(-ENOMEM);
		}
		const uint8_t *p = stream_peek(r, 16, &avail);
		if (!p) {
			pk_warn("perf.data: input too short for a perf.data header");
			pk_data_reader__free(r);
			return pk_err_ptr(-PK_ERR_FORMAT);
		}
		memcpy(&magic, p, 8);
		uint64_t size;
		memcpy(&size, p + 8, 8);
		if (magic == PK_DATA_MAGIC && size != PK_DATA_PIPE_HEADER_SIZE) {
			pk_warn("perf.data: a file-format perf.data cannot be read from a "
				"non-seekable input; pass the file itself (or record with -o -)");
			pk_data_reader__free(r);
			return pk_err_ptr(-PK_ERR_FORMAT);
		}
	} else {
		if (r->kind == SRC_PREAD) {
			r->win = malloc(WIN_SIZE);
			pk_mem_prefault(r->win, WIN_SIZE);
			if (!r->win) {
				pk_data_reader__free(r);
				return pk_err_ptr(-ENOMEM);
			}
		}
		if (pk_rd_src_read(r, 0, &magic, 8)) {
			pk_warn("perf.data: input too short for a perf.data header");
			pk_data_reader__free(r);
			return pk_err_ptr(-PK_ERR_FORMAT);
		}
	}
	if (magic == PK_DATA_MAGIC_SWAPPED) {
		pk_warn("perf.data: the file was written on a machine of the other byte order; "
			"cross-endian files are not supported");
		pk_data_reader__free(r);
		return pk_err_ptr(-PK_ERR_FORMAT);
	}
	if (!memcmp(&magic, "PERFFILE", 8)) {
		pk_warn("perf.data: legacy v1 (PERFFILE) format is not supported");
		pk_data_reader__free(r);
		return pk_err_ptr(-PK_ERR_FORMAT);
	}
	if (magic != PK_DATA_MAGIC) {
		pk_warn("perf.data: not a perf.data file (bad magic)");
		pk_data_reader__free(r);
		return pk_err_ptr(-PK_ERR_FORMAT);
	}
	uint64_t hsize = 0;
	if (r->kind == SRC_STREAM) {
		hsize = PK_DATA_PIPE_HEADER_SIZE;
	} else if (pk_rd_src_read(r, 8, &hsize, 8)) {
		pk_warn("perf.data: input too short for a perf.data header");
		pk_data_reader__free(r);
		return pk_err_ptr(-PK_ERR_FORMAT);
	}
	if (hsize == PK_DATA_PIPE_HEADER_SIZE) {
		if (r->kind != SRC_STREAM)
			r->end = r->size;
		ret = open_pipe_mode(r);
	} else {
		ret = open_file_mode(r);
	}
	if (ret) {
		pk_data_reader__free(r);
		return pk_err_ptr(ret);
	}
	r->err = 0;
	return r;
}

PK_API struct pk_data_reader *pk_data_reader__open_mem(const void *buf, size_t len,
						       const struct pk_data_reader_opts *opts)
{
	if ((!buf && len) || !PK_OPTS_VALID(opts, pk_data_reader_opts))
		return pk_err_ptr(-EINVAL);
	struct pk_data_reader *r = reader_new(opts);
	if (!r)
		return pk_err_ptr(-ENOMEM);
	r->kind = SRC_MEM;
	r->mem = buf;
	r->size = len;
	return reader_start(r);
}

PK_API struct pk_data_reader *pk_data_reader__fdopen(int fd,
						     const struct pk_data_reader_opts *opts)
{
	struct stat st;

	if (fd < 0 || !PK_OPTS_VALID(opts, pk_data_reader_opts))
		return pk_err_ptr(-EINVAL);
	if (fstat(fd, &st) < 0)
		return pk_err_ptr(-errno);
	if (S_ISDIR(st.st_mode))
		return pk_err_ptr(-EISDIR);
	struct pk_data_reader *r = reader_new(opts);
	if (!r)
		return pk_err_ptr(-ENOMEM);
	r->fd = fd;
	if (S_ISREG(st.st_mode)) {
		r->size = (uint64_t)st.st_size;
		r->kind = SRC_PREAD;
		if (!PK_OPTS_GET(opts, no_mmap, false) && st.st_size > 0 &&
		    (uint64_t)st.st_size <= SIZE_MAX) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
			if (m != MAP_FAILED) {
				madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
				r->map = m;
				r->map_len = (size_t)st.st_size;
				r->mem = m;
				r->kind = SRC_MEM;
			}
		}
	} else {
		r->kind = SRC_STREAM;
		r->size = UINT64_MAX;
	}
	return reader_start(r);
}

PK_API struct pk_data_reader *pk_data_reader__open(const char *path,
						   const struct pk_data_reader_opts *opts)
{
	if (!path)
		return pk_err_ptr(-EINVAL);
	if (!strcmp(path, "-"))
		return pk_data_reader__fdopen(STDIN_FILENO, opts);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return pk_err_ptr(-errno);
	/* a FIFO was opened non-blocking so that open cannot hang; reads must block */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	struct pk_data_reader *r = pk_data_reader__fdopen(fd, opts);
	if (!r) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	r->own_fd = true;
	return r;
}

PK_API void pk_data_reader__free(struct pk_data_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_attrs; i++) {
		free(r->attrs[i]->ids);
		free(r->attrs[i]->name);
		free(r->attrs[i]);
	}
	free(r->attrs);
	free(r->map_keys);
	free(r->map_vals);
	free((char *)r->env.hostname);
	free((char *)r->env.osrelease);
	free((char *)r->env.version);
	free((char *)r->env.arch);
	free((char *)r->env.cpudesc);
	free((char *)r->env.cpuid);
	pk_rd_free_strv(r->cmdline, r->env.nr_cmdline);
	for (size_t i = 0; i < r->env.nr_build_ids; i++)
		free((char *)r->bids[i].filename);
	free(r->bids);
	pk_rd_free_strv(r->topo_lists[0], r->env.nr_package_cpus);
	pk_rd_free_strv(r->topo_lists[1], r->env.nr_core_cpus);
	pk_rd_free_strv(r->topo_lists[2], r->env.nr_die_cpus);
	free((void *)r->env.cpu);
	pk_rd_free_groups(r);
	pk_rd_free_numa(r);
	pk_rd_free_pmu_mappings(r);
	pk_rd_free_caches(r);
	pk_rd_free_mem_nodes(r);
	ZSTD_freeDCtx(r->dctx);
	free(r->cin);
	free(r->dec);
	free(r->payload);
	free(r->tracing);
	free(r->win);
	free(r->scratch);
	if (r->map)
		munmap(r->map, r->map_len);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r);
}

PK_API const void *pk_data_reader__tracing_data(const struct pk_data_reader *r, size_t *len)
{
	if (len)
		*len = r && r->tracing ? r->tracing_len : 0;
	if (!r || !r->tracing)
		return pk_err_ptr(-ENOENT);
	return r->tracing;
}

PK_API bool pk_data_reader__is_pipe(const struct pk_data_reader *r)
{
	return r && r->pipe;
}

PK_API const void *pk_data_reader__image(const struct pk_data_reader *r, size_t *len)
{
	if (len)
		*len = 0;
	if (!r || r->kind != SRC_MEM || r->size > SIZE_MAX)
		return NULL;
	if (len)
		*len = (size_t)r->size;
	return r->mem;
}

PK_API void pk_data_reader__release_before(struct pk_data_reader *r, uint64_t offset)
{
	if (!r || r->kind != SRC_MEM)
		return;
	r->keep_from = offset;
	stream_release_pages(r);
}

PK_API bool pk_data_reader__truncated(const struct pk_data_reader *r)
{
	return r && r->truncated;
}

PK_API const struct pk_data_env *pk_data_reader__env(const struct pk_data_reader *r)
{
	return r ? &r->env : NULL;
}

PK_API size_t pk_data_reader__nr_attrs(const struct pk_data_reader *r)
{
	return r ? r->nr_attrs : 0;
}

PK_API const struct pk_data_attr *pk_data_reader__attr(const struct pk_data_reader *r,
						       size_t idx)
{
	return r && idx < r->nr_attrs ? &r->attrs[idx]->pub : NULL;
}

PK_API void pk_data_reader__stats(const struct pk_data_reader *r, uint64_t *nr_records,
				  uint64_t *nr_samples)
{
	if (nr_records)
		*nr_records = r ? r->nr_records : 0;
	if (nr_samples)
		*nr_samples = r ? r->nr_samples : 0;
}

/* ---- record processing ---- */

/* HEADER_ATTR, HEADER_FEATURE, EVENT_UPDATE(NAME): update attrs / env. */
static int process_user_meta(struct pk_data_reader *r, const struct perf_event_header *h,
			     uint64_t off)
{
	const uint8_t *p = (const uint8_t *)h;
	size_t size = h->size;

	if (h->type == PK_RECORD_HEADER_ATTR) {
		uint32_t asz;
		if (size < 8 + PK_ATTR_SIZE_VER0)
			return fail(r, -PK_ERR_FORMAT, off, "HEADER_ATTR record of %zu bytes", size);
		memcpy(&asz, p + 12, sizeof(asz));
		if (asz == 0)
			asz = PK_ATTR_SIZE_VER0;
		if (asz < PK_ATTR_SIZE_VER0 || asz > PK_ATTR_SIZE_MAX || 8 + asz > size)
			return fail(r, -PK_ERR_FORMAT, off + 12,
				    "HEADER_ATTR attr.size %u invalid for a %zu-byte record", asz,
				    size);
		size_t ids_at = 8 + pk_align_up(asz, 8);
		if (ids_at > size)
			ids_at = size;
		size_t nr = (size - ids_at) / 8;
		return add_attr(r, p + 8, asz, NULL, p + ids_at, nr, off);
	}
	if (h->type == PK_RECORD_HEADER_FEATURE) {
		uint64_t feat;
		if (size < 16)
			return fail(r, -PK_ERR_FORMAT, off, "HEADER_FEATURE record of %zu bytes",
				    size);
		memcpy(&feat, p + 8, sizeof(feat));
		if (feat >= PK_FEAT_BITS)
			return 0; /* end marker or unknown */
		if (feat == PK_FEAT_TRACING_DATA || feat == PK_FEAT_AUXTRACE)
			return 0;
		if (pk_rd_parse_feature(r, (int)feat, p + 16, size - 16))
			pk_warn("perf.data: HEADER_FEATURE %s at offset %#llx is malformed; skipped",
				pk_rd_feat_name((int)feat), (unsigned long long)off);
		return 0;
	}
	if (h->type == PK_RECORD_EVENT_UPDATE && size > 24) {
		uint64_t type, id;
		memcpy(&type, p + 8, 8);
		memcpy(&id, p + 16, 8);
		if (type != 2) /* PERF_EVENT_UPDATE__NAME */
			return 0;
		const struct pk_data_attr *a = pk_data_reader__attr_by_id(r, id);
		if (!a && r->nr_attrs == 1)
			a = &r->attrs[0]->pub;
		if (!a)
			return 0;
		struct rattr *ra = r->attrs[a->idx];
		char *name = pk_strndup((const char *)p + 24, size - 24);
		if (!name)
			return -ENOMEM;
		free(ra->name);
		ra->name = name;
		ra->pub.name = name;
	}
	return 0;
}

static const struct pk_data_attr *record_attr(struct pk_data_reader *r,
					      const struct perf_event_header *h)
{
	uint64_t id;
	const uint8_t *p = (const uint8_t *)h;

	if (h->type >= 64 || !r->nr_attrs)
		return NULL;
	if (r->nr_attrs == 1)
		return &r->attrs[0]->pub;
	if (h->type == PERF_RECORD_SAMPLE) {
		if (r->id_pos < 0 || 8 + 8 * (size_t)(r->id_pos + 1) > h->size)
			return &r->attrs[0]->pub;
		memcpy(&id, p + 8 + 8 * r->id_pos, 8);
	} else {
		if (!r->sample_id_all || r->is_pos < 0 || 8 + 8 * (size_t)r->is_pos > h->size)
			return &r->attrs[0]->pub;
		memcpy(&id, p + h->size - 8 * r->is_pos, 8);
	}
	if (id == 0)
		return &r->attrs[0]->pub;
	return pk_data_reader__attr_by_id(r, id);
}

/* 8-byte aligned record pointer (copies a misaligned one to scratch) */
static const struct perf_event_header *aligned_rec(struct pk_data_reader *r, const uint8_t *p,
						   size_t size)
{
	if (((uintptr_t)p & 7) == 0)
		return (const struct perf_event_header *)p;
	memcpy(r->scratch, p, size);
	return (const struct perf_event_header *)r->scratch;
}

/* payload size that follows header.size for AUXTRACE / HEADER_TRACING_DATA */
static uint64_t trailing_payload(const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)h;
	if (h->type == PK_RECORD_AUXTRACE && h->size >= 16) {
		uint64_t v;
		memcpy(&v, p + 8, 8);
		return v;
	}
	if (h->type == PK_RECORD_HEADER_TRACING_DATA && h->size >= 12) {
		uint32_t v;
		memcpy(&v, p + 8, 4);
		return v;
	}
	return 0;
}

static int start_compressed(struct pk_data_reader *r, const struct perf_event_header *h,
			    uint64_t off)
{
	if (!r->dctx) {
		r->dctx = ZSTD_createDCtx();
		r->cin = malloc(65536);
		r->dec = malloc(DEC_SIZE);
		if (!r->dctx || !r->cin || !r->dec)
			return fail(r, -ENOMEM, off, "out of memory for decompression");
	}
	r->cin_len = h->size - 8u;
	memcpy(r->cin, (const uint8_t *)h + 8, r->cin_len);
	r->cin_pos = 0;
	r->comp_off = off;
	r->dec_total = 0;
	/* perf decompresses each record into a buffer of comp_mmap_len bytes; allow that
	 * much (within sane bounds) so that a crafted frame cannot expand without limit */
	uint64_t lim = r->env.comp_mmap_len;
	r->dec_limit = lim < (1u << 20) ? (1u << 20) : lim > (256u << 20) ? (256u << 20) : lim;
	return 0;
}

/* Fill the decompression buffer so that at least `need` bytes are pending, as far as the
 * current COMPRESSED record allows. */
static int dec_fill(struct pk_data_reader *r, size_t need)
{
	if (r->dec_len - r->dec_pos >= need)
		return 0;
	memmove(r->dec, r->dec + r->dec_pos, r->dec_len - r->dec_pos);
	r->dec_len -= r->dec_pos;
	r->dec_pos = 0;
	while (r->dec_len < need) {
		ZSTD_inBuffer in = { r->cin, r->cin_len, r->cin_pos };
		ZSTD_outBuffer out = { r->dec, DEC_SIZE, r->dec_len };
		size_t ret = ZSTD_decompressStream(r->dctx, &out, &in);
		if (ZSTD_isError(ret))
			return fail(r, -PK_ERR_FORMAT, r->comp_off,
				    "COMPRESSED record: zstd error: %s", ZSTD_getErrorName(ret));
		r->dec_total += out.pos - r->dec_len;
		if (out.pos == r->dec_len && in.pos == r->cin_pos)
			break; /* no progress: needs more input than this record has */
		r->dec_len = out.pos;
		r->cin_pos = in.pos;
		if (r->dec_total > r->dec_limit)
			return fail(r, -PK_ERR_FORMAT, r->comp_off,
				    "COMPRESSED record expands to more than %llu bytes",
				    (unsigned long long)r->dec_limit);
	}
	return 0;
}

/* Next record from the decompressed stream: 1 delivered, 0 need more input. */
static int next_decompressed(struct pk_data_reader *r, struct pk_data_event *ev)
{
	for (;;) {
		if (r->dec_skip) {
			if (dec_fill(r, 1) || r->err)
				return r->err;
			size_t n = (size_t)PK_MIN(r->dec_skip, (uint64_t)(r->dec_len - r->dec_pos));
			if (!n)
				return 0;
			r->dec_pos += n;
			r->dec_skip -= n;
			continue;
		}
		if (dec_fill(r, 8))
			return r->err;
		if (r->dec_len - r->dec_pos < 8)
			return 0;
		struct perf_event_header h;
		memcpy(&h, r->dec + r->dec_pos, sizeof(h));
		if (h.size < 8)
			return fail(r, -PK_ERR_FORMAT, r->comp_off,
				    "record of size %u inside a COMPRESSED record", h.size);
		if (dec_fill(r, h.size))
			return r->err;
		if (r->dec_len - r->dec_pos < h.size)
			return 0;
		const struct perf_event_header *rec = aligned_rec(r, r->dec + r->dec_pos, h.size);
		r->dec_pos += h.size;
		if (h.type == PK_RECORD_COMPRESSED)
			return fail(r, -PK_ERR_FORMAT, r->comp_off, "nested COMPRESSED record");
		int ret = process_user_meta(r, rec, r->comp_off);
		if (ret)
			return ret;
		memset(ev, 0, sizeof(*ev));
		ev->hdr = rec;
		ev->attr = record_attr(r, rec);
		ev->offset = r->comp_off;
		ev->compressed = true;
		ev->payload_size = trailing_payload(rec);
		r->dec_skip = ev->payload_size;
		return 1;
	}
}

static int deliver(struct pk_data_reader *r, struct pk_data_event *ev)
{
	r->nr_records++;
	if (ev->hdr->type == PERF_RECORD_SAMPLE)
		r->nr_samples++;
	return 1;
}

static int truncated_end(struct pk_data_reader *r, uint64_t off, const char *what)
{
	r->truncated = true;
	pk_warn("perf.data: the file is truncated at offset %#llx (%s); %llu records read",
		(unsigned long long)off, what, (unsigned long long)r->nr_records);
	return 0;
}

static int next_raw(struct pk_data_reader *r, struct pk_data_event *ev)
{
	for (;;) {
		if (r->dctx && r->cin_len) {
			int ret = next_decompressed(r, ev);
			if (ret)
				return ret;
			r->cin_len = 0; /* this COMPRESSED record is used up */
		}
		uint64_t avail;
		const uint8_t *p = stream_peek(r, 8, &avail);
		if (!p) {
			if (r->err)
				return r->err; /* the file shrank (stream_peek) */
			if (avail == 0)
				return 0;
			if (r->scan_to_eof || r->pipe)
				return truncated_end(r, r->pos, "inside a record header");
			return fail(r, -PK_ERR_FORMAT, r->pos,
				    "%llu bytes left at the end of the data section, less than a "
				    "record header", (unsigned long long)avail);
		}
		struct perf_event_header h;
		memcpy(&h, p, sizeof(h));
		if (h.size < 8) {
			if (r->scan_to_eof && h.size == 0 && h.type == 0)
				return truncated_end(r, r->pos, "zero-filled tail");
			return fail(r, -PK_ERR_FORMAT, r->pos, "record of type %u has size %u (< 8)",
				    h.type, h.size);
		}
		p = stream_peek(r, h.size, &avail);
		if (!p) {
			if (r->err)
				return r->err;
			if (r->scan_to_eof || r->pipe)
				return truncated_end(r, r->pos, "inside a record");
			return fail(r, -PK_ERR_FORMAT, r->pos,
				    "record of type %u claims %u bytes but only %llu remain in the "
				    "data section", h.type, h.size, (unsigned long long)avail);
		}
		uint64_t off = r->pos;
		const struct perf_event_header *rec = aligned_rec(r, p, h.size);
		r->pos += h.size;
		stream_release_pages(r);

		if (h.type == PK_RECORD_COMPRESSED) {
			int ret = start_compressed(r, rec, off);
			if (ret)
				return ret;
			if (r->show_compressed) {
				memset(ev, 0, sizeof(*ev));
				ev->hdr = rec;
				ev->offset = off;
				return 1;
			}
			continue;
		}
		int ret = process_user_meta(r, rec, off);
		if (ret)
			return ret;
		memset(ev, 0, sizeof(*ev));
		ev->hdr = rec;
		ev->attr = record_attr(r, rec);
		ev->offset = off;
		ev->payload_size = trailing_payload(rec);
		if (ev->payload_size) {
			bool tdata = h.type == PK_RECORD_HEADER_TRACING_DATA &&
				     ev->payload_size <= r->max_payload;
			bool keep = tdata && (r->keep_tracing || !r->tracing);
			if (keep) {
				free(r->payload);
				r->payload = malloc((size_t)ev->payload_size);
				if (!r->payload)
					return fail(r, -ENOMEM, off, "out of memory for payload");
				/* rec may live in the window: copy the header first */
				memmove(r->scratch, rec, h.size);
				ev->hdr = (const struct perf_event_header *)r->scratch;
				if (!stream_copy(r, r->payload, ev->payload_size))
					return truncated_end(r, r->pos, "inside a payload");
				if (!r->tracing) {
					r->tracing = malloc((size_t)ev->payload_size);
					if (!r->tracing)
						return fail(r, -ENOMEM, off, "out of memory for payload");
					memcpy(r->tracing, r->payload, (size_t)ev->payload_size);
					r->tracing_len = (size_t)ev->payload_size;
				}
				if (r->keep_tracing)
					ev->payload = r->payload;
			} else {
				/* the header must survive the skip: copy it out of the window */
				memmove(r->scratch, rec, h.size);
				ev->hdr = (const struct perf_event_header *)r->scratch;
				if (!stream_skip(r, ev->payload_size)) {
					if (r->scan_to_eof || r->pipe)
						return truncated_end(r, off, "inside a payload");
					return fail(r, -PK_ERR_FORMAT, off,
						    "record of type %u: its %llu-byte payload runs "
						    "past the end of the data section", h.type,
						    (unsigned long long)ev->payload_size);
				}
			}
		}
		return 1;
	}
}

PK_API int pk_data_reader__next(struct pk_data_reader *r, struct pk_data_event *ev)
{
	if (!r || !ev)
		return pk_err(-EINVAL);
	if (r->err)
		return pk_err(r->err);
	int ret = next_raw(r, ev);
	if (ret < 0)
		return pk_err(ret);
	if (ret == 0) {
		if (r->dctx && (r->dec_len > r->dec_pos || r->dec_skip))
			pk_warn("perf.data: the compressed data ends inside a record");
		return 0;
	}
	return deliver(r, ev);
}
