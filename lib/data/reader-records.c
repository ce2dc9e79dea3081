/* SPDX-License-Identifier: MIT */
/*
 * lib/data/reader-records.c - the data section of a perf.data input: one stream over the
 * three kinds of source (memory image, pread window, pipe window) handing out contiguous
 * bytes, the pages of a mapping dropped or faulted in as iteration moves, and the records
 * read from it one by one (user meta records applied, COMPRESSED ones inflated, payloads
 * kept for the caller). Opening and the header are in reader.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>
#include "internal.h"
#include "data-internal.h"
#include "reader-internal.h"

/* ---- streaming ---- */

/* Contiguous `len` (<= 64 KiB + 64) bytes at r->pos, or NULL at end of input (then
 * *avail holds how many bytes were left). */
const uint8_t *pk_rd_stream_peek(struct pk_data_reader *r, size_t len, uint64_t *avail)
{
	uint64_t limit = r->end;

	if (r->kind == SRC_MEM) {
		uint64_t have = limit > r->pos ? limit - r->pos : 0;
		*avail = have;
		/* records are read in order: a line 4 KiB ahead is asked for meanwhile (a
		 * prefetch never faults; see pk_rd_next_span) */
		__builtin_prefetch(r->mem + r->pos + 4096);
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
					pk_rd_fail(r, -PK_ERR_TRUNCATED, off,
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
		if (!pk_rd_stream_peek(r, chunk, &avail)) {
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
bool pk_rd_stream_copy(struct pk_data_reader *r, uint8_t *dst, uint64_t n)
{
	while (n) {
		uint64_t avail;
		size_t chunk = (size_t)PK_MIN(n, (uint64_t)WIN_SIZE / 2);
		const uint8_t *q = pk_rd_stream_peek(r, chunk, &avail);
		if (!q)
			return false;
		memcpy(dst, q, chunk);
		dst += chunk;
		n -= chunk;
		r->pos += chunk;
	}
	return true;
}

void pk_rd_stream_release_pages(struct pk_data_reader *r)
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
	if (r->map_len <= r->keep_mapped)
		return;
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

/* (internal.h) the whole mapping's pages dropped (callable from another thread: it
 * changes nothing of the reader; a page touched again is read back from the page cache) */
void pk_rd_drop_pages(struct pk_data_reader *r)
{
	if (r && r->map && r->map_len)
		madvise(r->map, r->map_len, MADV_DONTNEED);
}

/* (internal.h) */
void pk_rd_keep_mapped(struct pk_data_reader *r, uint64_t bytes)
{
	if (r)
		r->keep_mapped = bytes;
}

/* ---- record processing ---- */

/* HEADER_ATTR, HEADER_FEATURE, EVENT_UPDATE(NAME): update attrs / env. */
int pk_rd_process_user_meta(struct pk_data_reader *r, const struct perf_event_header *h,
			    uint64_t off)
{
	const uint8_t *p = (const uint8_t *)h;
	size_t size = h->size;

	if (h->type == PK_RECORD_HEADER_ATTR) {
		uint32_t asz;
		if (size < 8 + PK_ATTR_SIZE_VER0)
			return pk_rd_fail(r, -PK_ERR_FORMAT, off, "HEADER_ATTR record of %zu bytes",
					  size);
		memcpy(&asz, p + 12, sizeof(asz));
		if (asz == 0)
			asz = PK_ATTR_SIZE_VER0;
		if (asz < PK_ATTR_SIZE_VER0 || asz > PK_ATTR_SIZE_MAX || 8 + asz > size)
			return pk_rd_fail(r, -PK_ERR_FORMAT, off + 12,
					  "HEADER_ATTR attr.size %u invalid for a %zu-byte record", asz,
					  size);
		size_t ids_at = 8 + pk_align_up(asz, 8);
		if (ids_at > size)
			ids_at = size;
		size_t nr = (size - ids_at) / 8;
		return pk_rd_add_attr(r, p + 8, asz, NULL, p + ids_at, nr, off);
	}
	if (h->type == PK_RECORD_HEADER_FEATURE) {
		uint64_t feat;
		if (size < 16)
			return pk_rd_fail(r, -PK_ERR_FORMAT, off, "HEADER_FEATURE record of %zu bytes",
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
uint64_t pk_rd_trailing_payload(const struct perf_event_header *h)
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
			return pk_rd_fail(r, -ENOMEM, off, "out of memory for decompression");
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
			return pk_rd_fail(r, -PK_ERR_FORMAT, r->comp_off,
					  "COMPRESSED record: zstd error: %s", ZSTD_getErrorName(ret));
		r->dec_total += out.pos - r->dec_len;
		if (out.pos == r->dec_len && in.pos == r->cin_pos)
			break; /* no progress: needs more input than this record has */
		r->dec_len = out.pos;
		r->cin_pos = in.pos;
		if (r->dec_total > r->dec_limit)
			return pk_rd_fail(r, -PK_ERR_FORMAT, r->comp_off,
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
			return pk_rd_fail(r, -PK_ERR_FORMAT, r->comp_off,
					  "record of size %u inside a COMPRESSED record", h.size);
		if (dec_fill(r, h.size))
			return r->err;
		if (r->dec_len - r->dec_pos < h.size)
			return 0;
		const struct perf_event_header *rec = aligned_rec(r, r->dec + r->dec_pos, h.size);
		r->dec_pos += h.size;
		if (h.type == PK_RECORD_COMPRESSED)
			return pk_rd_fail(r, -PK_ERR_FORMAT, r->comp_off, "nested COMPRESSED record");
		int ret = pk_rd_process_user_meta(r, rec, r->comp_off);
		if (ret)
			return ret;
		memset(ev, 0, sizeof(*ev));
		ev->hdr = rec;
		ev->attr = record_attr(r, rec);
		ev->offset = r->comp_off;
		ev->compressed = true;
		ev->payload_size = pk_rd_trailing_payload(rec);
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

int pk_rd_truncated_end(struct pk_data_reader *r, uint64_t off, const char *what)
{
	r->truncated = true;
	r->ended = true;
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
		const uint8_t *p = pk_rd_stream_peek(r, 8, &avail);
		if (!p) {
			if (r->err)
				return r->err; /* the file shrank (stream_peek) */
			if (avail == 0)
				return 0;
			if (r->scan_to_eof || r->pipe)
				return pk_rd_truncated_end(r, r->pos, "inside a record header");
			return pk_rd_fail(r, -PK_ERR_FORMAT, r->pos,
					  "%llu bytes left at the end of the data section, less than a "
					  "record header", (unsigned long long)avail);
		}
		struct perf_event_header h;
		memcpy(&h, p, sizeof(h));
		if (h.size < 8) {
			if (r->scan_to_eof && h.size == 0 && h.type == 0)
				return pk_rd_truncated_end(r, r->pos, "zero-filled tail");
			return pk_rd_fail(r, -PK_ERR_FORMAT, r->pos,
					  "record of type %u has size %u (< 8)", h.type, h.size);
		}
		p = pk_rd_stream_peek(r, h.size, &avail);
		if (!p) {
			if (r->err)
				return r->err;
			if (r->scan_to_eof || r->pipe)
				return pk_rd_truncated_end(r, r->pos, "inside a record");
			return pk_rd_fail(r, -PK_ERR_FORMAT, r->pos,
					  "record of type %u claims %u bytes but only %llu remain in the "
					  "data section", h.type, h.size, (unsigned long long)avail);
		}
		uint64_t off = r->pos;
		const struct perf_event_header *rec = aligned_rec(r, p, h.size);
		r->pos += h.size;
		pk_rd_stream_release_pages(r);

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
		int ret = pk_rd_process_user_meta(r, rec, off);
		if (ret)
			return ret;
		memset(ev, 0, sizeof(*ev));
		ev->hdr = rec;
		ev->attr = record_attr(r, rec);
		ev->offset = off;
		ev->payload_size = pk_rd_trailing_payload(rec);
		if (ev->payload_size) {
			bool tdata = h.type == PK_RECORD_HEADER_TRACING_DATA &&
				     ev->payload_size <= r->max_payload;
			bool keep = tdata && (r->keep_tracing || !r->tracing);
			if (keep) {
				free(r->payload);
				r->payload = malloc((size_t)ev->payload_size);
				if (!r->payload)
					return pk_rd_fail(r, -ENOMEM, off, "out of memory for payload");
				/* rec may live in the window: copy the header first */
				memmove(r->scratch, rec, h.size);
				ev->hdr = (const struct perf_event_header *)r->scratch;
				if (!pk_rd_stream_copy(r, r->payload, ev->payload_size))
					return pk_rd_truncated_end(r, r->pos, "inside a payload");
				if (!r->tracing) {
					r->tracing = malloc((size_t)ev->payload_size);
					if (!r->tracing)
						return pk_rd_fail(r, -ENOMEM, off,
								  "out of memory for payload");
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
						return pk_rd_truncated_end(r, off, "inside a payload");
					return pk_rd_fail(r, -PK_ERR_FORMAT, off,
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
	if (r->ended)
		return 0;
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

/*
 * (internal.h) The records at the reader's position that need nothing of it, kernel
 * records and FINISHED_ROUND, straight from its memory image: up to `max` bytes of them,
 * whole records, at *p (file offset *off); the reader moves past them (counted as
 * read). 0 when the next record needs pk_data_reader__next: no image, a COMPRESSED one
 * being inflated, a user record, a misaligned or malformed one, the end, an error.
 */
size_t pk_rd_next_span(struct pk_data_reader *r, size_t max, const uint8_t **p, uint64_t *off)
{
	if (!r || r->kind != SRC_MEM || r->err || r->ended || (r->dctx && r->cin_len) ||
	    (r->pos & 7) || ((uintptr_t)r->mem & 7) || r->pos >= r->end)
		return 0;
	const uint8_t *base = r->mem + r->pos;
	uint64_t left = PK_MIN(r->end - r->pos, (uint64_t)max), at = 0;
	uint64_t nrec = 0, nsmp = 0;
	while (left - at >= sizeof(struct perf_event_header)) {
		const struct perf_event_header *h = (const void *)(base + at);
		if (h->size < sizeof(*h) || (h->size & 7) || h->size > left - at ||
		    (h->type >= 64 && h->type != PK_RECORD_FINISHED_ROUND))
			break;
		nsmp += h->type == PERF_RECORD_SAMPLE;
		nrec++;
		at += h->size;
		/* the walk chases sizes: a line 4 KiB ahead is asked for meanwhile (a
		 * prefetch never faults, past the end or not); deep.data's walk 14 -> 8 ms */
		__builtin_prefetch(base + at + 4096);
	}
	if (!at)
		return 0;
	*p = base;
	*off = r->pos;
	r->pos += at;
	r->nr_records += nrec;
	r->nr_samples += nsmp;
	pk_rd_stream_release_pages(r);
	return (size_t)at;
}

/* (internal.h) the attr of a record handed out by pk_rd_next_span (that of the last
 * sample's id again: a look-up in the id map per sample was 4 % of annotate on a file
 * with an attr per CPU) */
const struct pk_data_attr *pk_rd_span_attr(struct pk_data_reader *r,
					   const struct perf_event_header *h)
{
	if (h->type != PERF_RECORD_SAMPLE || r->nr_attrs == 1 || r->id_pos < 0 ||
	    8 + 8 * (size_t)(r->id_pos + 1) > h->size)
		return record_attr(r, h);
	uint64_t id;
	memcpy(&id, (const uint8_t *)h + 8 + 8 * r->id_pos, 8);
	if (r->span_nr_attrs != r->nr_attrs || id != r->span_id) {
		r->span_attr = record_attr(r, h);
		r->span_id = id;
		r->span_nr_attrs = r->nr_attrs;
	}
	return r->span_attr;
}
