/* SPDX-License-Identifier: MIT */
/*
 * lib/data: perf.data writer.
 *
 * File mode layout (as perf record's; perf's perf.data-file-format.txt):
 *   0    header (written first with data.size 0 and no feature bits, rewritten at close)
 *   104  ID arrays of all attrs
 *        attrs section (n x (attr.size + 16))
 *        data section (records, or PERF_RECORD_COMPRESSED records wrapping them)
 *        feature section table, feature payloads
 * A file whose header was never finalised has data.size 0 and an empty feature bitmap;
 * our reader reads it up to its last complete record.
 *
 * Pipe mode: 16-byte header, HEADER_ATTR records, HEADER_FEATURE records (only ids perf
 * 6.1 knows, no end marker), HEADER_TRACING_DATA (tracepoints), one EVENT_UPDATE(NAME)
 * per attr, then the data records. The names travel twice, as perf record sends them:
 * in EVENT_DESC and in EVENT_UPDATE. perf 6.1 applies an EVENT_DESC name only to an
 * event that has no name yet, and perf script names each event from its attr as soon as
 * the HEADER_ATTR arrives ("task-clock:HG"); only EVENT_UPDATE(NAME) replaces that name.
 * HEADER_ATTR always carries a 128-byte attr (attr.size = PERF_ATTR_SIZE_VER7): perf up to
 * 6.5 ignores attr.size there and expects the id array at the fixed offset
 * 8 + sizeof(struct perf_event_attr) (128 in 6.1). With a shorter attr it read our ids and
 * the bytes after the record as config2, branch_sample_type, sample_regs_user, ... and, when
 * a garbage branch_sample_type had PERF_SAMPLE_BRANCH_CALL_STACK set, resolved call chains
 * as LBR call stacks from a branch stack the samples do not have: a NULL dereference
 * (perf script/report crashed on `-o - -g` streams whenever an event id had bit 11 set).
 * Newer perf locates the ids with attr.size, so 128 is right for both.
 *
 * Compression: records are staged in a buffer of PK_COMP_CHUNK bytes; each full stage is
 * compressed with one ZSTD_e_flush step of a single long-lived zstd stream into one
 * PERF_RECORD_COMPRESSED record (the stage size keeps the compressed bound under the
 * u16 record size, and each record decompresses to at most PK_COMP_MMAP_LEN bytes, the
 * buffer size perf allocates from the COMPRESSED feature).
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include "internal.h"
#include "data-internal.h"

#define PK_OBUF_SIZE (256 * 1024)
#define PK_COMP_CHUNK (60 * 1024)
#define PK_COMP_MMAP_LEN (64 * 1024)
#define PK_SCAN_MAX 48

struct wattr {
	struct pk_attr attr;
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct wbid {
	int32_t pid;
	uint16_t cpumode;
	uint8_t id[PK_BUILD_ID_MAX];
	uint8_t len;
	char *name;
};

struct pk_data_writer {
	int fd;
	bool own_fd;
	struct pk_data_lock *lock; /* opts.lock: held until the file is closed */
	bool pipe;
	bool started;
	bool finished;           /* pk_data_writer__finish ran: nothing more is written */
	int finish_ret;          /* and what it returned */
	int err;                 /* first error; sticky */
	uint64_t pos;            /* logical file offset of the next byte */
	uint64_t flushed;        /* file bytes the kernel accepted */
	uint8_t *obuf;
	size_t olen;
	uint64_t data_off;
	uint32_t attr_size;      /* common attr.size written for every attr */

	struct wattr *attrs;
	size_t nr_attrs;
	struct wbid *bids;
	size_t nr_bids;
	uint8_t *tdata;          /* TRACING_DATA blob, or NULL */
	size_t tdata_len;
	struct wgroup { char *name; uint32_t leader, nr; } *groups; /* GROUP_DESC */
	size_t nr_groups;

	/* options */
	int level;
	char **argv;
	int argc;
	char *version;
	uint64_t clockid_res;
	bool no_sample_time;
	struct pk_host_info host;

	/* compression */
	ZSTD_CCtx *cctx;
	uint8_t *cstage;
	size_t cstage_len;
	uint8_t *cout;
	size_t cout_cap;
	uint64_t comp_in, comp_out;

	/* record scanner over the uncompressed stream */
	uint8_t stash[PK_SCAN_MAX];
	size_t stash_len;
	uint64_t skip;
	bool scan_broken;
	int time_pos;            /* -1: samples carry no common TIME slot */
	bool have_time, user_time;
	uint64_t tmin, tmax;
	uint64_t nr_records, nr_samples, data_bytes;
	uint64_t last_boundary;  /* data_bytes at the end of the last complete record */
};

/* ---- low-level output ---- */

static int set_err(struct pk_data_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

/* write(2) everything, retrying EINTR/EAGAIN; counts accepted bytes into w->flushed */
static int write_full(struct pk_data_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(w->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = { .fd = w->fd, .events = POLLOUT };
				poll(&pfd, 1, 1000);
				continue;
			}
			return set_err(w, -errno);
		}
		if (n == 0)
			return set_err(w, -EIO);
		p += n;
		len -= (size_t)n;
		w->flushed += (uint64_t)n;
	}
	return 0;
}

static int out_flush(struct pk_data_writer *w)
{
	if (w->err)
		return w->err;
	if (!w->olen)
		return 0;
	int ret = write_full(w, w->obuf, w->olen);
	w->olen = 0;
	return ret;
}

static int out_write(struct pk_data_writer *w, const void *buf, size_t len)
{
	if (w->err)
		return w->err;
	w->pos += len;
	if (len >= PK_OBUF_SIZE / 2) {
		if (out_flush(w))
			return w->err;
		return write_full(w, buf, len);
	}
	if (w->olen + len > PK_OBUF_SIZE && out_flush(w))
		return w->err;
	memcpy(w->obuf + w->olen, buf, len);
	w->olen += len;
	return 0;
}

static int pwrite_full(struct pk_data_writer *w, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(w->fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* ---- compression ---- */

static int comp_flush(struct pk_data_writer *w)
{
	ZSTD_inBuffer in = { w->cstage, w->cstage_len, 0 };
	ZSTD_outBuffer out = { w->cout + 8, w->cout_cap - 8, 0 };
	size_t r;

	if (w->err)
		return w->err;
	if (!w->cstage_len)
		return 0;
	r = ZSTD_compressStream2(w->cctx, &out, &in, ZSTD_e_flush);
	/* the output buffer holds ZSTD_compressBound(stage): one call always completes */
	if (ZSTD_isError(r) || r != 0 || in.pos != in.size) {
		pk_warn("zstd compression failed: %s", ZSTD_isError(r) ? ZSTD_getErrorName(r) :
			"flush incomplete");
		return set_err(w, -EIO);
	}
	struct perf_event_header h = { .type = PK_RECORD_COMPRESSED, .misc = 0,
				       .size = (uint16_t)(8 + out.pos) };
	memcpy(w->cout, &h, sizeof(h));
	w->comp_in += w->cstage_len;
	w->comp_out += 8 + out.pos;
	w->cstage_len = 0;
	return out_write(w, w->cout, 8 + out.pos);
}

static int data_emit(struct pk_data_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!w->cctx)
		return out_write(w, buf, len);
	while (len) {
		size_t n = PK_MIN(len, PK_COMP_CHUNK - w->cstage_len);
		memcpy(w->cstage + w->cstage_len, p, n);
		w->cstage_len += n;
		p += n;
		len -= n;
		if (w->cstage_len == PK_COMP_CHUNK && comp_flush(w))
			return w->err;
	}
	return 0;
}

/* ---- record scanner (headers and the TIME slot of samples only) ---- */

static void scan_record(struct pk_data_writer *w, const uint8_t *rec, size_t have)
{
	struct perf_event_header h;

	memcpy(&h, rec, sizeof(h));
	w->nr_records++;
	if (h.type == PERF_RECORD_SAMPLE) {
		w->nr_samples++;
		size_t need = 8 + 8 * ((size_t)w->time_pos + 1);
		if (w->time_pos >= 0 && !w->user_time && h.size >= need && have >= need) {
			uint64_t t;
			memcpy(&t, rec + 8 + 8 * w->time_pos, sizeof(t));
			if (!w->have_time || t < w->tmin)
				w->tmin = t;
			if (!w->have_time || t > w->tmax)
				w->tmax = t;
			w->have_time = true;
		}
	} else if (h.type == PK_RECORD_AUXTRACE && have >= 16) {
		uint64_t sz;
		memcpy(&sz, rec + 8, sizeof(sz));
		w->skip += sz;
	} else if (h.type == PK_RECORD_HEADER_TRACING_DATA && have >= 12) {
		uint32_t sz;
		memcpy(&sz, rec + 8, sizeof(sz));
		w->skip += sz;
	}
}

static void scan(struct pk_data_writer *w, const uint8_t *p, size_t len)
{
	while (!w->scan_broken) {
		if (w->skip) {
			if (!len)
				break;
			size_t n = (size_t)PK_MIN((uint64_t)len, w->skip);
			w->skip -= n;
			p += n;
			len -= n;
			if (!w->skip && !w->stash_len)
				w->last_boundary = w->data_bytes - len;
			continue;
		}
		size_t want = 8;
		struct perf_event_header h;
		if (w->stash_len >= 8) {
			memcpy(&h, w->stash, sizeof(h));
			if (h.size < 8) {
				pk_warn("perf.data writer: record of size %u at data byte %llu; "
					"the data is not a record stream",
					h.size, (unsigned long long)(w->data_bytes - len));
				w->scan_broken = true;
				return;
			}
			want = PK_MIN((size_t)h.size, sizeof(w->stash));
		}
		if (w->stash_len < want) {
			if (!len)
				break;
			size_t n = PK_MIN(len, want - w->stash_len);
			memcpy(w->stash + w->stash_len, p, n);
			w->stash_len += n;
			p += n;
			len -= n;
			continue;
		}
		w->skip = h.size - w->stash_len;
		scan_record(w, w->stash, w->stash_len);
		w->stash_len = 0;
		if (!w->skip)
			w->last_boundary = w->data_bytes - len;
	}
}

/* ---- attrs ---- */

static const char *attr_default_name(const struct pk_attr *a, char *buf, size_t len)
{
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults",
		"context-switches", "cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output", "cgroup-switches" };
	static const char *const hw[] = { "cycles", "instructions", "cache-references",
		"cache-misses", "branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles" };

	if (a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config < PK_ARRAY_SIZE(sw))
		return sw[a->attr.config];
	if (a->attr.type == PERF_TYPE_HARDWARE && a->attr.config < PK_ARRAY_SIZE(hw))
		return hw[a->attr.config];
	pk_snprintf(buf, len, "raw:%u:0x%llx", a->attr.type, (unsigned long long)a->attr.config);
	return buf;
}

PK_API int pk_data_writer__add_attr(struct pk_data_writer *w, const struct pk_attr *attr,
				    const char *name, const uint64_t *ids, size_t nr_ids)
{
	if (!w || !attr || (nr_ids && !ids))
		return pk_err(-EINVAL);
	if (w->started)
		return pk_err(-EBUSY);
	uint32_t sz = pk_attr__min_size(attr);
	if (sz > PK_ATTR_SIZE_VER7) {
		pk_warn("perf.data writer: attr field '%s' is beyond the 128-byte attr perf 6.1 "
			"reads", pk_attr__field_name(PK_ATTR_SIZE_VER7) ?
			pk_attr__field_name(PK_ATTR_SIZE_VER7) : "?");
		return pk_err(-E2BIG);
	}
	if (nr_ids > (1u << 24) || w->nr_attrs >= 65536)
		return pk_err(-E2BIG);
	struct wattr *n = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*n));
	if (!n)
		return pk_err(-ENOMEM);
	w->attrs = n;
	struct wattr *a = &w->attrs[w->nr_attrs];
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, attr, sizeof(*attr));
	char tmp[64];
	a->name = strdup(name ? name : attr_default_name(attr, tmp, sizeof(tmp)));
	a->ids = nr_ids ? malloc(nr_ids * sizeof(uint64_t)) : NULL;
	if (!a->name || (nr_ids && !a->ids)) {
		free(a->name);
		free(a->ids);
		return pk_err(-ENOMEM);
	}
	if (nr_ids)
		memcpy(a->ids, ids, nr_ids * sizeof(uint64_t));
	a->nr_ids = nr_ids;
	if (sz > w->attr_size)
		w->attr_size = sz;
	return (int)w->nr_attrs++;
}

/* attr bytes exactly as stored: w->attr_size bytes with the size field set */
static void put_attr(struct pk_data_writer *w, struct pk_dbuf *b, const struct wattr *a)
{
	struct pk_attr copy = a->attr;
	copy.attr.size = w->attr_size;
	pk_dbuf_put(b, copy.raw, w->attr_size);
}

/* ---- features ---- */

PK_API int pk_data_writer__add_group(struct pk_data_writer *w, const char *name,
				     uint32_t leader_idx, uint32_t nr_members)
{
	if (!w || nr_members < 2 || leader_idx >= w->nr_attrs ||
	    nr_members > w->nr_attrs - leader_idx)
		return pk_err(-EINVAL);
	for (size_t i = 0; i < w->nr_groups; i++)
		if (leader_idx < w->groups[i].leader + w->groups[i].nr &&
		    w->groups[i].leader < leader_idx + nr_members)
			return pk_err(-EINVAL);
	struct wgroup *n = realloc(w->groups, (w->nr_groups + 1) * sizeof(*n));
	if (!n)
		return pk_err(-ENOMEM);
	w->groups = n;
	n[w->nr_groups].name = strdup(name ? name : "{anon_group}");
	if (!n[w->nr_groups].name)
		return pk_err(-ENOMEM);
	n[w->nr_groups].leader = leader_idx;
	n[w->nr_groups].nr = nr_members;
	w->nr_groups++;
	return 0;
}

/* GROUP_DESC: u32 nr_groups, then per group a string name, u32 leader index, u32 members */
static int put_group_desc(struct pk_data_writer *w, struct pk_dbuf *b)
{
	if (!w->nr_groups)
		return -ENOENT;
	pk_dbuf_u32(b, (uint32_t)w->nr_groups);
	for (size_t i = 0; i < w->nr_groups; i++) {
		pk_dbuf_str(b, w->groups[i].name);
		pk_dbuf_u32(b, w->groups[i].leader);
		pk_dbuf_u32(b, w->groups[i].nr);
	}
	return b->err;
}

static int build_feature(struct pk_data_writer *w, int feat, struct pk_dbuf *b,
			 uint32_t *nr_avail)
{
	switch (feat) {
	case PK_FEAT_TRACING_DATA:
		if (!w->tdata_len)
			return -ENOENT;
		pk_dbuf_put(b, w->tdata, w->tdata_len);
		return b->err;
	case PK_FEAT_BUILD_ID:
		if (!w->nr_bids)
			return -ENOENT;
		for (size_t i = 0; i < w->nr_bids; i++) {
			const struct wbid *e = &w->bids[i];
			size_t nlen = strlen(e->name);
			size_t padded = pk_align_up(nlen + 1, PK_DATA_NAME_ALIGN);
			if (36 + padded > UINT16_MAX)
				continue;
			pk_dbuf_u32(b, 0);
			pk_dbuf_u16(b, (uint16_t)(e->cpumode | 0x8000)); /* BUILD_ID_SIZE valid */
			pk_dbuf_u16(b, (uint16_t)(36 + padded));
			pk_dbuf_u32(b, (uint32_t)e->pid);
			uint8_t id[PK_BUILD_ID_MAX] = { 0 };
			memcpy(id, e->id, e->len);
			pk_dbuf_put(b, id, sizeof(id));
			uint8_t sz[4] = { e->len, 0, 0, 0 };
			pk_dbuf_put(b, sz, sizeof(sz));
			pk_dbuf_put(b, e->name, nlen);
			pk_dbuf_zero(b, padded - nlen);
		}
		return b->err;
	case PK_FEAT_HOSTNAME:
	case PK_FEAT_OSRELEASE:
	case PK_FEAT_ARCH:
		return pk_host__uname(b, feat);
	case PK_FEAT_VERSION:
		pk_dbuf_str(b, w->version);
		return b->err;
	case PK_FEAT_NRCPUS:
		return pk_host__nrcpus(b, &w->host, nr_avail);
	case PK_FEAT_CPUDESC:
		return pk_host__cpudesc(b, &w->host);
	case PK_FEAT_CPUID:
		return pk_host__cpuid(b, &w->host);
	case PK_FEAT_TOTAL_MEM:
		return pk_host__total_mem(b, &w->host);
	case PK_FEAT_CMDLINE:
		return pk_host__cmdline(b, &w->host, (const char *const *)w->argv, w->argc);
	case PK_FEAT_EVENT_DESC:
		if (!w->nr_attrs)
			return -ENOENT;
		pk_dbuf_u32(b, (uint32_t)w->nr_attrs);
		pk_dbuf_u32(b, w->attr_size);
		for (size_t i = 0; i < w->nr_attrs; i++) {
			put_attr(w, b, &w->attrs[i]);
			pk_dbuf_u32(b, (uint32_t)w->attrs[i].nr_ids);
			pk_dbuf_str(b, w->attrs[i].name);
			pk_dbuf_put(b, w->attrs[i].ids, w->attrs[i].nr_ids * sizeof(uint64_t));
		}
		return b->err;
	case PK_FEAT_CPU_TOPOLOGY:
		if (!*nr_avail)
			return -ENOENT;
		return pk_host__cpu_topology(b, &w->host, *nr_avail);
	case PK_FEAT_SAMPLE_TIME:
		if (w->no_sample_time || !w->have_time)
			return -ENOENT;
		pk_dbuf_u64(b, w->tmin);
		pk_dbuf_u64(b, w->tmax);
		return b->err;
	case PK_FEAT_CLOCKID: {
		uint64_t res = w->clockid_res;
		for (size_t i = 0; !res && i < w->nr_attrs; i++) {
			struct timespec ts;
			if (w->attrs[i].attr.attr.use_clockid &&
			    clock_getres(w->attrs[i].attr.attr.clockid, &ts) == 0)
				res = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		}
		if (!res)
			return -ENOENT;
		pk_dbuf_u64(b, res);
		return b->err;
	}
	case PK_FEAT_GROUP_DESC:
		return put_group_desc(w, b);
	case PK_FEAT_COMPRESSED: {
		if (!w->level)
			return -ENOENT;
		uint32_t ratio = w->comp_out ? (uint32_t)((w->comp_in + w->comp_out / 2) /
							  w->comp_out) : 0;
		pk_dbuf_u32(b, 0);              /* version */
		pk_dbuf_u32(b, 1);              /* zstd */
		pk_dbuf_u32(b, (uint32_t)w->level);
		pk_dbuf_u32(b, ratio);
		pk_dbuf_u32(b, PK_COMP_MMAP_LEN);
		return b->err;
	}
	default:
		return -ENOENT;
	}
}

static const int file_features[] = {
	PK_FEAT_TRACING_DATA, PK_FEAT_BUILD_ID, PK_FEAT_HOSTNAME, PK_FEAT_OSRELEASE, PK_FEAT_VERSION, PK_FEAT_ARCH,
	PK_FEAT_NRCPUS, PK_FEAT_CPUDESC, PK_FEAT_CPUID, PK_FEAT_TOTAL_MEM, PK_FEAT_CMDLINE,
	PK_FEAT_EVENT_DESC, PK_FEAT_CPU_TOPOLOGY, PK_FEAT_GROUP_DESC, PK_FEAT_SAMPLE_TIME,
	PK_FEAT_CLOCKID, PK_FEAT_COMPRESSED,
};

/* ---- start of data ---- */

static int start_file(struct pk_data_writer *w)
{
	struct pk_file_header fh = { 0 };
	struct pk_dbuf b = { 0 };
	uint64_t ids_size = 0;

	for (size_t i = 0; i < w->nr_attrs; i++)
		ids_size += w->attrs[i].nr_ids * sizeof(uint64_t);
	fh.magic = PK_DATA_MAGIC;
	fh.size = PK_DATA_HEADER_SIZE;
	fh.attr_size = w->attr_size + 16;
	fh.attrs.offset = PK_DATA_HEADER_SIZE + ids_size;
	fh.attrs.size = w->nr_attrs * fh.attr_size;
	fh.data.offset = fh.attrs.offset + fh.attrs.size;
	pk_dbuf_put(&b, &fh, sizeof(fh));
	for (size_t i = 0; i < w->nr_attrs; i++)
		pk_dbuf_put(&b, w->attrs[i].ids, w->attrs[i].nr_ids * sizeof(uint64_t));
	uint64_t id_off = PK_DATA_HEADER_SIZE;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		put_attr(w, &b, &w->attrs[i]);
		pk_dbuf_u64(&b, id_off);
		pk_dbuf_u64(&b, w->attrs[i].nr_ids * sizeof(uint64_t));
		id_off += w->attrs[i].nr_ids * sizeof(uint64_t);
	}
	if (b.err) {
		pk_dbuf_release(&b);
		return set_err(w, b.err);
	}
	w->data_off = fh.data.offset;
	int ret = out_write(w, b.p, b.len);
	pk_dbuf_release(&b);
	return ret;
}

static int emit_user_record(struct pk_data_writer *w, uint32_t type, const void *a, size_t alen,
			    const void *payload, size_t plen)
{
	size_t size = 8 + alen + plen;
	if (size > UINT16_MAX)
		return -E2BIG;
	struct perf_event_header h = { .type = type, .misc = 0, .size = (uint16_t)size };
	if (out_write(w, &h, sizeof(h)) || out_write(w, a, alen) || out_write(w, payload, plen))
		return w->err;
	return 0;
}

/*
 * EVENT_UPDATE of type NAME (2) for attr i: u64 type, u64 id, then the NUL-terminated
 * name padded to 8 bytes. The id is the attr's first; an attr without ids can only be
 * the single event of the stream, which perf (and our reader) pick for an unknown id.
 */
static int emit_event_name(struct pk_data_writer *w, size_t i)
{
	const struct wattr *a = &w->attrs[i];
	uint64_t head[2] = { 2, a->nr_ids ? a->ids[0] : 0 };
	size_t nlen = strlen(a->name);
	uint8_t zero[8] = { 0 };

	if (!a->nr_ids && w->nr_attrs > 1)
		return 0;
	if (24 + pk_align_up(nlen + 1, 8) > UINT16_MAX)
		return 0;
	struct perf_event_header h = { .type = PK_RECORD_EVENT_UPDATE, .misc = 0,
				       .size = (uint16_t)(24 + pk_align_up(nlen + 1, 8)) };
	if (out_write(w, &h, sizeof(h)) || out_write(w, head, sizeof(head)) ||
	    out_write(w, a->name, nlen) ||
	    out_write(w, zero, pk_align_up(nlen + 1, 8) - nlen))
		return w->err;
	return 0;
}

static int start_pipe(struct pk_data_writer *w)
{
	uint64_t hdr[2] = { PK_DATA_MAGIC, PK_DATA_PIPE_HEADER_SIZE };
	uint32_t nr_avail = 0;

	if (out_write(w, hdr, sizeof(hdr)))
		return w->err;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		struct pk_dbuf b = { 0 };
		put_attr(w, &b, &w->attrs[i]);
		pk_dbuf_zero(&b, pk_align_up(w->attr_size, 8) - w->attr_size);
		if (b.err)
			return set_err(w, b.err);
		int ret = emit_user_record(w, PK_RECORD_HEADER_ATTR, b.p, b.len, w->attrs[i].ids,
					   w->attrs[i].nr_ids * sizeof(uint64_t));
		pk_dbuf_release(&b);
		if (ret == -E2BIG) {
			pk_warn("perf.data writer: attr %zu has too many ids for a pipe-mode "
				"HEADER_ATTR record", i);
			return set_err(w, -E2BIG);
		}
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < PK_ARRAY_SIZE(file_features); i++) {
		int feat = file_features[i];
		struct pk_dbuf b = { 0 };
		/* build-ids are not sent in pipe mode (as perf); sample time is unknown yet;
		 * tracing data has its own record type */
		if (feat == PK_FEAT_BUILD_ID || feat == PK_FEAT_SAMPLE_TIME ||
		    feat == PK_FEAT_TRACING_DATA)
			continue;
		uint64_t id = (uint64_t)feat;
		if (build_feature(w, feat, &b, &nr_avail) == 0 && !b.err) {
			if (emit_user_record(w, PK_RECORD_HEADER_FEATURE, &id, sizeof(id), b.p,
					     b.len) == -E2BIG)
				pk_warn("perf.data writer: feature %d too large for a pipe record",
					feat);
		}
		pk_dbuf_release(&b);
		if (w->err)
			return w->err;
	}
	if (w->tdata_len) {
		/* header.size covers {size, pad} only; the blob follows, padded to 8 */
		uint64_t padded = pk_align_up(w->tdata_len, 8);
		struct perf_event_header h = { .type = PK_RECORD_HEADER_TRACING_DATA, .misc = 0,
					       .size = 16 };
		uint32_t sz[2] = { (uint32_t)padded, 0 };
		uint8_t zero[8] = { 0 };
		if (out_write(w, &h, sizeof(h)) || out_write(w, sz, sizeof(sz)) ||
		    out_write(w, w->tdata, w->tdata_len) ||
		    out_write(w, zero, (size_t)(padded - w->tdata_len)))
			return w->err;
	}
	for (size_t i = 0; i < w->nr_attrs; i++)
		if (emit_event_name(w, i))
			return w->err;
	return 0;
}

static int start(struct pk_data_writer *w)
{
	if (w->started)
		return w->err;
	w->started = true;
	/* common TIME slot for the sample-time tracker */
	w->time_pos = -1;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		int tp = pk_sample_time_pos(w->attrs[i].attr.attr.sample_type);
		if (i == 0)
			w->time_pos = tp;
		else if (tp != w->time_pos)
			w->time_pos = -1;
	}
	if (!w->attr_size)
		w->attr_size = PK_ATTR_SIZE_VER0;
	/* pipe mode: perf <= 6.5 reads HEADER_ATTR as a full 128-byte attr (see the top) */
	if (w->pipe)
		w->attr_size = PK_ATTR_SIZE_VER7;
	return w->pipe ? start_pipe(w) : start_file(w);
}

/* ---- public API ---- */

static char *dup_or_null(const char *s, bool *oom)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

static void writer_free(struct pk_data_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	for (size_t i = 0; i < w->nr_bids; i++)
		free(w->bids[i].name);
	free(w->bids);
	for (size_t i = 0; i < w->nr_groups; i++)
		free(w->groups[i].name);
	free(w->groups);
	free(w->tdata);
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	free(w->version);
	free((char *)w->host.sysfs_root);
	free((char *)w->host.procfs_root);
	ZSTD_freeCCtx(w->cctx);
	free(w->cstage);
	free(w->cout);
	free(w->obuf);
	if (w->own_fd && w->fd >= 0)
		close(w->fd);
	pk_data_lock__release(w->lock);
	free(w);
}

PK_API struct pk_data_writer *pk_data_writer__fdopen(int fd,
						     const struct pk_data_writer_opts *opts)
{
	struct pk_data_writer *w;
	struct stat st;
	bool oom = false;

	if (fd < 0 || !PK_OPTS_VALID(opts, pk_data_writer_opts))
		return pk_err_ptr(-EINVAL);
	if (fstat(fd, &st) < 0)
		return pk_err_ptr(-errno);
	w = calloc(1, sizeof(*w));
	if (!w)
		return pk_err_ptr(-ENOMEM);
	w->fd = fd;
	w->pipe = PK_OPTS_GET(opts, pipe, false) || !S_ISREG(st.st_mode) ||
		  lseek(fd, 0, SEEK_SET) < 0;
	if (!w->pipe && ftruncate(fd, 0) < 0 && errno != EINVAL) {
		int e = -errno;
		free(w);
		return pk_err_ptr(e);
	}
	w->level = PK_OPTS_GET(opts, compress_level, 0);
	if (w->level < 0 || w->level > ZSTD_maxCLevel()) {
		free(w);
		return pk_err_ptr(-EINVAL);
	}
	const char *const *argv = PK_OPTS_GET(opts, argv, NULL);
	int argc = PK_OPTS_GET(opts, argc, 0);
	if (argv && argc > 0) {
		w->argv = calloc((size_t)argc, sizeof(char *));
		oom |= !w->argv;
		for (int i = 0; w->argv && i < argc; i++) {
			w->argv[i] = dup_or_null(argv[i] ? argv[i] : "", &oom);
			w->argc = i + 1;
		}
	}
	const char *ver = PK_OPTS_GET(opts, version, NULL);
	char vbuf[64];
	if (!ver) {
		pk_snprintf(vbuf, sizeof(vbuf), "perfkit %s", pk_version());
		ver = vbuf;
	}
	w->version = dup_or_null(ver, &oom);
	w->clockid_res = PK_OPTS_GET(opts, clockid_res_ns, 0);
	w->no_sample_time = PK_OPTS_GET(opts, no_sample_time, false);
	w->host.sysfs_root = dup_or_null(PK_OPTS_GET(opts, sysfs_root, NULL), &oom);
	w->host.procfs_root = dup_or_null(PK_OPTS_GET(opts, procfs_root, NULL), &oom);
	w->obuf = malloc(PK_OBUF_SIZE);
	oom |= !w->obuf;
	if (w->level) {
		w->cctx = ZSTD_createCCtx();
		w->cstage = malloc(PK_COMP_CHUNK);
		w->cout_cap = 8 + ZSTD_compressBound(PK_COMP_CHUNK);
		w->cout = malloc(w->cout_cap);
		oom |= !w->cctx || !w->cstage || !w->cout;
		if (!oom && ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel,
								 w->level))) {
			writer_free(w);
			return pk_err_ptr(-EINVAL);
		}
	}
	if (oom) {
		writer_free(w);
		return pk_err_ptr(-ENOMEM);
	}
	_Static_assert(8 + PK_COMP_CHUNK + PK_COMP_CHUNK / 128 + 1024 < UINT16_MAX,
		       "compressed chunk must fit one record");
	return w;
}

static void rename_old(const char *path)
{
	struct stat st;
	char old[4096];
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	if ((size_t)snprintf(old, sizeof(old), "%s.old", path) >= sizeof(old))
		return;
	if (rename(path, old) < 0)
		pk_warn("cannot rename '%s' to '%s': %s", path, old, strerror(errno));
}

PK_API struct pk_data_writer *pk_data_writer__open(const char *path,
						   const struct pk_data_writer_opts *opts)
{
	struct pk_data_writer *w;
	int fd;

	if (!path)
		return pk_err_ptr(-EINVAL);
	if (!strcmp(path, "-"))
		return pk_data_writer__fdopen(STDOUT_FILENO, opts);
	if (!PK_OPTS_VALID(opts, pk_data_writer_opts))
		return pk_err_ptr(-EINVAL);
	/* the order matters: lock, then rename, then create; a writer refused the lock has
	 * touched nothing */
	struct pk_data_lock *lock = NULL;
	if (PK_OPTS_GET(opts, lock, false)) {
		PK_OPTS(pk_data_lock_opts, lo, .holder = PK_OPTS_GET(opts, lock_holder, NULL),
			.stale = PK_OPTS_GET(opts, lock_stale, NULL));
		lock = pk_data_lock__acquire(path, &lo);
		if (!lock)
			return NULL;
	}
	if (PK_OPTS_GET(opts, keep_old, false))
		rename_old(path);
	/* O_RDWR: after a write error the written records are re-walked (committed_end) */
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = -errno;
		pk_data_lock__release(lock);
		return pk_err_ptr(e);
	}
	w = pk_data_writer__fdopen(fd, opts);
	if (!w) {
		int e = errno;
		close(fd);
		pk_data_lock__release(lock);
		errno = e;
		return NULL;
	}
	w->own_fd = true;
	w->lock = lock;
	return w;
}

PK_API int pk_data_writer__write(struct pk_data_writer *w, const void *buf, size_t len)
{
	if (!w || (len && !buf) || w->finished)
		return pk_err(-EINVAL);
	if (w->err || start(w))
		return pk_err(w->err);
	w->data_bytes += len;
	scan(w, buf, len);
	if (data_emit(w, buf, len))
		return pk_err(w->err);
	return 0;
}

PK_API int pk_data_writer__write_record(struct pk_data_writer *w,
					const struct perf_event_header *hdr)
{
	if (!w || !hdr || hdr->size < sizeof(*hdr))
		return pk_err(-EINVAL);
	return pk_data_writer__write(w, hdr, hdr->size);
}

PK_API int pk_data_writer__finish_round(struct pk_data_writer *w)
{
	struct perf_event_header h = { .type = PK_RECORD_FINISHED_ROUND, .size = 8 };

	if (!w || w->finished)
		return pk_err(-EINVAL);
	if (w->err || start(w))
		return pk_err(w->err);
	if (!w->cctx) {
		int r = pk_data_writer__write(w, &h, sizeof(h));
		if (r)
			return r;
	} else {
		/* compressed: flush the stage and write the round marker uncompressed, as perf */
		if (w->stash_len || w->skip) {
			pk_warn("perf.data writer: finish_round inside a record");
			return pk_err(-EINVAL);
		}
		if (comp_flush(w) || out_write(w, &h, sizeof(h)))
			return pk_err(w->err);
		w->nr_records++;
	}
	/* A round is a natural point to hand the bytes to the kernel: a recorder killed with
	 * SIGKILL then loses at most the current round, not a whole output buffer (our
	 * reader recovers every complete record of an unfinalised file). */
	if (out_flush(w))
		return pk_err(w->err);
	return 0;
}

PK_API int pk_data_writer__add_build_id(struct pk_data_writer *w, int32_t pid,
					uint16_t cpumode, const uint8_t *build_id,
					size_t build_id_len, const char *filename)
{
	if (!w || !build_id || !build_id_len || build_id_len > PK_BUILD_ID_MAX || !filename ||
	    strlen(filename) >= 4096)
		return pk_err(-EINVAL);
	struct wbid *n = realloc(w->bids, (w->nr_bids + 1) * sizeof(*n));
	if (!n)
		return pk_err(-ENOMEM);
	w->bids = n;
	struct wbid *e = &w->bids[w->nr_bids];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->cpumode = cpumode & PERF_RECORD_MISC_CPUMODE_MASK;
	memcpy(e->id, build_id, build_id_len);
	e->len = (uint8_t)build_id_len;
	e->name = strdup(filename);
	if (!e->name)
		return pk_err(-ENOMEM);
	w->nr_bids++;
	return 0;
}

PK_API int pk_data_writer__set_tracing_data(struct pk_data_writer *w, const void *blob,
					    size_t len)
{
	if (!w || (len && !blob))
		return pk_err(-EINVAL);
	if (w->pipe && w->started)
		return pk_err(-EBUSY);
	if (len > (256u << 20) || (w->pipe && pk_align_up(len, 8) > UINT32_MAX))
		return pk_err(-E2BIG);
	uint8_t *copy = NULL;
	if (len) {
		copy = malloc(len);
		if (!copy)
			return pk_err(-ENOMEM);
		memcpy(copy, blob, len);
	}
	free(w->tdata);
	w->tdata = copy;
	w->tdata_len = len;
	return 0;
}

PK_API int pk_data_writer__set_sample_time(struct pk_data_writer *w, uint64_t first,
					   uint64_t last)
{
	if (!w)
		return pk_err(-EINVAL);
	w->user_time = true;
	w->have_time = true;
	w->tmin = first;
	w->tmax = last;
	return 0;
}

PK_API int pk_data_writer__sample_time(const struct pk_data_writer *w, uint64_t *first,
				       uint64_t *last)
{
	if (!w)
		return pk_err(-EINVAL);
	if (!w->have_time)
		return pk_err(-ENODATA);
	if (first)
		*first = w->tmin;
	if (last)
		*last = w->tmax;
	return 0;
}

PK_API void pk_data_writer__stats(const struct pk_data_writer *w, uint64_t *data_bytes,
				  uint64_t *nr_records, uint64_t *nr_samples,
				  uint64_t *file_bytes)
{
	if (data_bytes)
		*data_bytes = w ? w->data_bytes : 0;
	if (nr_records)
		*nr_records = w ? w->nr_records : 0;
	if (nr_samples)
		*nr_samples = w ? w->nr_samples : 0;
	if (file_bytes)
		*file_bytes = w ? w->pos : 0;
}

/* After a write error: the end of the last record that reached the file completely,
 * found by walking the record headers written so far. */
static uint64_t committed_end(struct pk_data_writer *w)
{
	uint64_t off = w->data_off, end = w->flushed;
	uint8_t h[16];

	while (off + 8 <= end) {
		if (pread(w->fd, h, sizeof(h), (off_t)off) < 8)
			break;
		struct perf_event_header eh;
		memcpy(&eh, h, sizeof(eh));
		if (eh.size < 8)
			break;
		uint64_t next = off + eh.size;
		if (eh.type == PK_RECORD_AUXTRACE && eh.size >= 16) {
			uint64_t extra;
			memcpy(&extra, h + 8, sizeof(extra));
			next += extra;
		}
		if (next > end || next < off)
			break;
		off = next;
	}
	return off;
}

static int finish_file(struct pk_data_writer *w)
{
	struct pk_file_header fh = { 0 };
	struct pk_dbuf payload = { 0 };
	struct pk_file_section sec[PK_ARRAY_SIZE(file_features)];
	int feats[PK_ARRAY_SIZE(file_features)];
	size_t nfeat = 0;
	uint32_t nr_avail = 0;
	uint64_t data_end;
	int ret;

	if (w->err) {
		data_end = committed_end(w);
		pk_warn("perf.data writer: %s; keeping the %llu data bytes written completely",
			pk_strerror(w->err), (unsigned long long)(data_end - w->data_off));
	} else if (w->cctx || w->scan_broken) {
		data_end = w->pos;
	} else {
		/* drop a trailing partial record the caller left */
		data_end = w->data_off + w->last_boundary;
		if (data_end != w->pos)
			pk_warn("perf.data writer: the data ends inside a record; dropping %llu bytes",
				(unsigned long long)(w->pos - data_end));
	}
	/* features: build all payloads, then table + payloads in one pwrite */
	for (size_t i = 0; i < PK_ARRAY_SIZE(file_features); i++) {
		struct pk_dbuf b = { 0 };
		if (build_feature(w, file_features[i], &b, &nr_avail) == 0 && !b.err) {
			feats[nfeat] = file_features[i];
			sec[nfeat].offset = payload.len; /* relative for now */
			sec[nfeat].size = b.len;
			nfeat++;
			pk_dbuf_put(&payload, b.p, b.len);
		}
		pk_dbuf_release(&b);
	}
	ret = payload.err;
	if (!ret) {
		uint64_t table = nfeat * sizeof(struct pk_file_section);
		for (size_t i = 0; i < nfeat; i++)
			sec[i].offset += data_end + table;
		ret = pwrite_full(w, sec, table, data_end);
		if (!ret)
			ret = pwrite_full(w, payload.p, payload.len, data_end + table);
		if (!ret) {
			for (size_t i = 0; i < nfeat; i++)
				fh.features[feats[i] / 64] |= 1ULL << (feats[i] % 64);
			if (ftruncate(w->fd, (off_t)(data_end + table + payload.len)) < 0)
				ret = -errno;
		}
	}
	pk_dbuf_release(&payload);
	if (ret) {
		/* no room for the features: a header without them still makes a valid file */
		memset(fh.features, 0, sizeof(fh.features));
		if (ftruncate(w->fd, (off_t)data_end) < 0) {
			/* harmless: perf reads data.size bytes only */
		}
		set_err(w, ret);
	}
	uint64_t ids_size = 0;
	for (size_t i = 0; i < w->nr_attrs; i++)
		ids_size += w->attrs[i].nr_ids * sizeof(uint64_t);
	fh.magic = PK_DATA_MAGIC;
	fh.size = PK_DATA_HEADER_SIZE;
	fh.attr_size = w->attr_size + 16;
	fh.attrs.offset = PK_DATA_HEADER_SIZE + ids_size;
	fh.attrs.size = w->nr_attrs * fh.attr_size;
	fh.data.offset = w->data_off;
	fh.data.size = data_end - w->data_off;
	ret = pwrite_full(w, &fh, sizeof(fh), 0);
	if (ret)
		return set_err(w, ret);
	return w->err;
}

PK_API int pk_data_writer__finish(struct pk_data_writer *w)
{
	int ret;

	if (!w)
		return pk_err(-EINVAL);
	if (w->finished)
		return w->finish_ret ? pk_err(w->finish_ret) : 0;
	if (!w->started)
		start(w);
	if (w->stash_len || w->skip)
		pk_warn("perf.data writer: the data ends inside a record");
	if (w->cctx)
		comp_flush(w);
	out_flush(w);
	if (w->pipe) {
		ret = w->err;
	} else {
		ret = finish_file(w);
	}
	if (w->own_fd && w->fd >= 0 && close(w->fd) < 0 && !ret)
		ret = -errno;
	if (w->own_fd)
		w->fd = -1;
	/* the file is complete: the next writer of the path may rename it now */
	pk_data_lock__release(w->lock);
	w->lock = NULL;
	w->finished = true;
	w->finish_ret = ret;
	return ret ? pk_err(ret) : 0;
}

PK_API void pk_data_writer__free(struct pk_data_writer *w)
{
	if (!w)
		return;
	/* not finished: the file stays as written so far (no final header); writer_free
	 * closes it, then drops the lock */
	writer_free(w);
}
