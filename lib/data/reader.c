/* SPDX-License-Identifier: MIT */
/*
 * lib/data: streaming perf.data reader (file and pipe format). This file opens the input
 * and reads what precedes the records: the file header and its sections, the attrs and
 * their id map (the leading meta records of a pipe), the accessors, and freeing. The
 * stream and the records are in reader-records.c, feature sections in reader-features.c.
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

int pk_rd_fail(struct pk_data_reader *r, int err, uint64_t off, const char *fmt, ...)
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

/* ---- id map: sample id -> attr index + 1 ---- */

static int idmap_put(struct pk_data_reader *r, uint64_t id, uint32_t idx)
{
	if (pk_u64map_get(&r->ids, id))
		return 0; /* first attr listing an id wins */
	return pk_u64map_put(&r->ids, id, (void *)(uintptr_t)(idx + 1));
}

PK_API const struct pk_data_attr *pk_data_reader__attr_by_id(const struct pk_data_reader *r,
							     uint64_t id)
{
	uintptr_t v = r ? (uintptr_t)pk_u64map_get(&r->ids, id) : 0;
	return v ? &r->attrs[v - 1]->pub : NULL;
}

/* ---- attrs ---- */

/* Add an attr from `raw` (attr bytes, `avail` readable) and its ids. */
int pk_rd_add_attr(struct pk_data_reader *r, const uint8_t *raw, size_t avail,
		   const uint64_t *ids_src, const uint8_t *ids_bytes, size_t nr_ids,
		   uint64_t off)
{
	uint32_t sz;

	if (avail < PK_ATTR_SIZE_VER0)
		return pk_rd_fail(r, -PK_ERR_FORMAT, off, "attr of %zu bytes is shorter than 64", avail);
	memcpy(&sz, raw + 4, sizeof(sz));
	if (sz == 0)
		sz = PK_ATTR_SIZE_VER0;
	if (sz < PK_ATTR_SIZE_VER0 || sz > PK_ATTR_SIZE_MAX)
		return pk_rd_fail(r, -PK_ERR_FORMAT, off,
				  "attr.size %u is outside the supported range 64..%d", sz,
				  PK_ATTR_SIZE_MAX);
	if (sz > avail)
		return pk_rd_fail(r, -PK_ERR_FORMAT, off, "attr.size %u exceeds its %zu-byte slot", sz,
				  avail);
	if (r->nr_attrs >= MAX_ATTRS)
		return pk_rd_fail(r, -PK_ERR_FORMAT, off, "more than %d attrs", MAX_ATTRS);
	if (nr_ids > MAX_IDS - r->nr_ids_total)
		return pk_rd_fail(r, -PK_ERR_FORMAT, off, "more than %u sample ids", MAX_IDS);
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
		return pk_rd_fail(r, -PK_ERR_FORMAT, 16, "attr_size %llu is outside 80..%d",
				  (unsigned long long)fh->attr_size, PK_ATTR_SIZE_MAX + 16);
	if (fh->attrs.size % fh->attr_size)
		return pk_rd_fail(r, -PK_ERR_FORMAT, 32,
				  "attrs section size %llu is not a multiple of attr_size %llu",
				  (unsigned long long)fh->attrs.size, (unsigned long long)fh->attr_size);
	n = fh->attrs.size / fh->attr_size;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = fh->attrs.offset + i * fh->attr_size;
		uint32_t sz;
		struct pk_file_section ids;
		int ret = pk_rd_src_read(r, off, buf, (size_t)fh->attr_size);
		if (ret)
			return pk_rd_fail(r, ret, off, "attr %llu lies beyond the end of the file",
					  (unsigned long long)i);
		memcpy(&sz, buf + 4, sizeof(sz));
		if (sz == 0)
			sz = PK_ATTR_SIZE_VER0;
		if (sz > PK_ATTR_SIZE_MAX || sz < PK_ATTR_SIZE_VER0)
			return pk_rd_fail(r, -PK_ERR_FORMAT, off + 4,
					  "attr.size %u is outside the supported range 64..%d", sz,
					  PK_ATTR_SIZE_MAX);
		if ((uint64_t)sz + 16 != fh->attr_size)
			return pk_rd_fail(r, -PK_ERR_FORMAT, off + 4,
					  "attr.size %u does not match attr_size %llu (expected %llu)", sz,
					  (unsigned long long)fh->attr_size,
					  (unsigned long long)fh->attr_size - 16);
		memcpy(&ids, buf + sz, sizeof(ids));
		if (ids.size % 8 || ids.offset > r->size || ids.size > r->size - ids.offset)
			return pk_rd_fail(r, -PK_ERR_FORMAT, off + sz,
					  "id array of attr %llu {%#llx, %llu} lies outside the file",
					  (unsigned long long)i, (unsigned long long)ids.offset,
					  (unsigned long long)ids.size);
		size_t nr = (size_t)(ids.size / 8);
		uint64_t *idv = NULL;
		if (nr) {
			if (nr > MAX_IDS)
				return pk_rd_fail(r, -PK_ERR_FORMAT, off + sz, "too many ids");
			idv = malloc(nr * 8);
			if (!idv)
				return -ENOMEM;
			ret = pk_rd_src_read(r, ids.offset, idv, nr * 8);
			if (ret) {
				free(idv);
				return pk_rd_fail(r, ret, ids.offset, "cannot read id array");
			}
		}
		ret = pk_rd_add_attr(r, buf, sz, idv, NULL, nr, off);
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
		return pk_rd_fail(r, -PK_ERR_FORMAT, 0, "file too short for a perf.data header");
	if (fh->size == PK_DATA_HEADER_SIZE) {
		if (pk_rd_src_read(r, 0, fh, PK_DATA_HEADER_SIZE))
			return pk_rd_fail(r, -PK_ERR_FORMAT, 0, "file too short for a perf.data header");
	} else if (fh->size != PK_DATA_HEADER_SIZE_OLD) {
		return pk_rd_fail(r, -PK_ERR_FORMAT, 8, "header size %llu is neither 104 nor 72",
				  (unsigned long long)fh->size);
	}
	if (fh->attr_size == 0)
		return pk_rd_fail(r, -PK_ERR_FORMAT, 16, "attr_size is 0");
	if (!section_in_file(&fh->attrs, r->size))
		return pk_rd_fail(r, -PK_ERR_FORMAT, 24,
				  "attrs section {%#llx, %llu} lies outside the %llu-byte file",
				  (unsigned long long)fh->attrs.offset, (unsigned long long)fh->attrs.size,
				  (unsigned long long)r->size);
	if (fh->attrs.size && fh->attrs.offset < fh->size)
		return pk_rd_fail(r, -PK_ERR_FORMAT, 24, "attrs section overlaps the header");
	if (fh->data.offset < fh->size || fh->data.offset > r->size)
		return pk_rd_fail(r, -PK_ERR_FORMAT, 40,
				  "data offset %#llx overlaps the header or lies beyond the file",
				  (unsigned long long)fh->data.offset);
	if (ranges_overlap(&fh->attrs, &fh->data))
		return pk_rd_fail(r, -PK_ERR_FORMAT, 40, "attrs and data sections overlap");
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

/* A copy of a leading record consumed by open_pipe_mode, for pk_data_reader__pipe_lead
 * (at most 16 MiB of them: past that the copy stops, the records are still read) */
static void keep_lead(struct pk_data_reader *r, const void *rec, size_t size)
{
	if (r->lead_len + size > (16u << 20))
		return;
	if (r->lead_len + size > r->lead_cap) {
		size_t nc = PK_MAX(r->lead_cap * 2, r->lead_len + size);
		uint8_t *n = realloc(r->lead, nc);
		if (!n)
			return;
		r->lead = n;
		r->lead_cap = nc;
	}
	memcpy(r->lead + r->lead_len, rec, size);
	r->lead_len += size;
}

static int open_pipe_mode(struct pk_data_reader *r)
{
	r->pipe = true;
	r->env.header_version = 1; /* "PERFILE2" too; no sections to locate */
	r->pos = PK_DATA_PIPE_HEADER_SIZE;
	/* consume the leading HEADER_ATTR / HEADER_FEATURE records (and EVENT_UPDATE: names) */
	for (;;) {
		uint64_t avail;
		const uint8_t *p = pk_rd_stream_peek(r, 8, &avail);
		struct perf_event_header h;
		if (!p)
			return 0;
		memcpy(&h, p, sizeof(h));
		if (h.type != PK_RECORD_HEADER_ATTR && h.type != PK_RECORD_HEADER_FEATURE &&
		    h.type != PK_RECORD_HEADER_TRACING_DATA && h.type != PK_RECORD_EVENT_UPDATE)
			return 0;
		if (h.size < 8)
			return 0; /* reported by __next */
		p = pk_rd_stream_peek(r, h.size, &avail);
		if (!p)
			return 0;
		if (h.type == PK_RECORD_HEADER_TRACING_DATA) {
			/* keep the first one; a later one, or one too large, goes to __next */
			uint64_t psize = pk_rd_trailing_payload((const struct perf_event_header *)p);
			if (r->tracing || h.size < 12 || !psize || psize > r->max_payload)
				return 0;
			uint8_t *blob = malloc((size_t)psize);
			if (!blob)
				return -ENOMEM;
			uint64_t start = r->pos;
			keep_lead(r, p, h.size);
			r->pos += h.size;
			if (!pk_rd_stream_copy(r, blob, psize)) {
				free(blob);
				if (r->kind == SRC_STREAM) {
					/* consumed: the input ended inside the payload, stop here
					 * (never parse the rest of the payload as records) */
					r->end = r->pos;
					return pk_rd_truncated_end(r, start, "inside a payload");
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
		int ret = pk_rd_process_user_meta(r, (const struct perf_event_header *)copy, r->pos);
		if (ret)
			return ret;
		keep_lead(r, copy, h.size);
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
	r->head = PK_OPTS_GET(opts, head, NULL);
	if (!r->max_payload)
		r->max_payload = 64u << 20;
	if (!r->scratch) {
		free(r);
		return NULL;
	}
	return r;
}

/* Not perf.data at all: say what the input is rather than "malformed" (the distinct
 * errors of pk_data_reader__open); the first bytes go to opts.head for the message. */
static struct pk_data_reader *not_perf_data(struct pk_data_reader *r, int err,
					    const uint8_t *head, size_t hlen, const char *what)
{
	if (r->head) {
		memset(r->head, 0, sizeof(*r->head));
		memcpy(r->head->bytes, head, PK_MIN(hlen, sizeof(r->head->bytes)));
		r->head->len = PK_MIN(hlen, sizeof(r->head->bytes));
	}
	pk_debug("perf.data: %s", what);
	pk_data_reader__free(r);
	return pk_err_ptr(err);
}

static struct pk_data_reader *reader_start(struct pk_data_reader *r)
{
	uint64_t magic = 0, avail = 0;
	uint8_t head[8];
	size_t hlen;
	const uint8_t *p = NULL;
	int ret;

	if (r->kind == SRC_STREAM) {
		r->end = UINT64_MAX;
		r->win = malloc(WIN_SIZE);
		pk_mem_prefault(r->win, WIN_SIZE);
		if (!r->win) {
			pk_data_reader__free(r);
			return pk_err_ptr(-ENOMEM);
		}
		p = pk_rd_stream_peek(r, 16, &avail);
		/* short of 16 bytes the window holds what came before the end of the stream */
		hlen = (size_t)PK_MIN(avail, (uint64_t)sizeof(head));
		memcpy(head, p ? p : r->win, hlen);
	} else {
		if (r->kind == SRC_PREAD) {
			r->win = malloc(WIN_SIZE);
			pk_mem_prefault(r->win, WIN_SIZE);
			if (!r->win) {
				pk_data_reader__free(r);
				return pk_err_ptr(-ENOMEM);
			}
		}
		hlen = (size_t)PK_MIN(r->size, (uint64_t)sizeof(head));
		if (hlen && pk_rd_src_read(r, 0, head, hlen)) {
			pk_warn("perf.data: cannot read the header");
			pk_data_reader__free(r);
			return pk_err_ptr(-PK_ERR_FORMAT);
		}
	}
	if (!hlen)
		return not_perf_data(r, -PK_ERR_EMPTY, head, 0, "the input is empty");
	if (hlen == 8)
		memcpy(&magic, head, 8);
	if (magic == PK_DATA_MAGIC_SWAPPED)
		return not_perf_data(r, -PK_ERR_BYTE_ORDER, head, hlen,
				     "written on a machine of the other byte order");
	if (!memcmp(&magic, "PERFFILE", 8)) {
		pk_warn("perf.data: legacy v1 (PERFFILE) format is not supported");
		pk_data_reader__free(r);
		return pk_err_ptr(-PK_ERR_FORMAT);
	}
	if (memcmp(head, "PERFILE2", hlen))
		return not_perf_data(r, -PK_ERR_NOT_PERF_DATA, head, hlen, "bad magic");
	if (hlen < 8 || (r->kind == SRC_STREAM && !p)) {
		pk_warn("perf.data: input too short for a perf.data header");
		pk_data_reader__free(r);
		return pk_err_ptr(-PK_ERR_FORMAT);
	}
	if (r->kind == SRC_STREAM) {
		uint64_t size;
		memcpy(&size, p + 8, 8);
		if (size != PK_DATA_PIPE_HEADER_SIZE) {
			pk_warn("perf.data: a file-format perf.data cannot be read from a "
				"non-seekable input; pass the file itself (or record with -o -)");
			pk_data_reader__free(r);
			return pk_err_ptr(-PK_ERR_FORMAT);
		}
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
	pk_u64map_release(&r->ids);
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
	pk_rd_free_env_arrays(r);
	ZSTD_freeDCtx(r->dctx);
	free(r->cin);
	free(r->dec);
	free(r->payload);
	free(r->tracing);
	free(r->lead);
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

PK_API const void *pk_data_reader__pipe_lead(const struct pk_data_reader *r, size_t *len)
{
	if (len)
		*len = r && r->lead ? r->lead_len : 0;
	return r ? r->lead : NULL;
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
	pk_rd_stream_release_pages(r);
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

