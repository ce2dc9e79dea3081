/* SPDX-License-Identifier: MIT */
/*
 * lib/data: the tracing-data blob of perf.data (TRACING_DATA feature, pipe-mode
 * PERF_RECORD_HEADER_TRACING_DATA): a builder reading tracefs and a parser.
 *
 * The layout is documented in perfkit/data.h. perf reads it sequentially and trusts every
 * size; perf 6.1 needs the format of every recorded tracepoint (it looks the attr's config
 * up by the "ID:" line of the formats) and rejects the file when the blob is missing
 * ("broken or missing trace data"). We write version 0.6: kallsyms empty (perf resolves
 * kernel symbols itself), printk_formats and saved_cmdlines as tracefs has them.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "internal.h"
#include "data-internal.h"
#include <perfkit/pmu.h>

#define TD_VERSION "0.6"
#define TD_MAX_FILE (64u << 20)      /* one tracefs file (printk_formats can be large) */
#define TD_MAX_NAME 256              /* system / event name */
#define TD_MAX_VERSION 32

static const uint8_t td_magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

/* ---- builder ---- */

/* Read a whole (tracefs: st_size is 0) file into a malloc'd buffer. */
static int read_all(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* up to TD_MAX_FILE bytes of data, plus the NUL the reader adds */
	char *buf = NULL;
	int err = pk_read_fd_alloc(fd, 8192, (size_t)TD_MAX_FILE + 1, &buf, len);
	close(fd);
	*out = (uint8_t *)buf;
	return err;
}

/* Append "<size><contents>" of root/rel with a size field of 4 or 8 bytes. A missing
 * optional file is written as size 0. */
static int put_file(struct pk_dbuf *b, const char *root, const char *rel, int size_bytes,
		    bool optional)
{
	char path[4096];
	uint8_t *data = NULL;
	size_t len = 0;
	int ret;

	pk_snprintf(path, sizeof(path), "%s/%s", root, rel);
	ret = read_all(path, &data, &len);
	if (ret == -ENOENT && optional) {
		len = 0;
		ret = 0;
	}
	if (ret) {
		pk_warn("tracing data: cannot read '%s': %s", path, strerror(-ret));
		return ret;
	}
	if (size_bytes == 4) {
		if (len > UINT32_MAX) {
			free(data);
			return -EFBIG;
		}
		pk_dbuf_u32(b, (uint32_t)len);
	} else {
		pk_dbuf_u64(b, len);
	}
	pk_dbuf_put(b, data, len);
	free(data);
	return b->err;
}

struct tp_ent {
	char *sys, *name;
	uint64_t id;
};

struct tp_lookup {
	const uint64_t *ids;  /* sorted, unique */
	size_t nr;
	bool *found;
	struct tp_ent *ents;
	size_t nents;
	int err;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct tp_ent *x = a, *y = b;
	int c = strcmp(x->sys, y->sys);
	return c ? c : strcmp(x->name, y->name);
}

static int lookup_cb(const char *sys, const char *name, long long id, void *ctx)
{
	struct tp_lookup *l = ctx;
	uint64_t key = (uint64_t)id;

	if (id < 0)
		return 0;
	const uint64_t *hit = bsearch(&key, l->ids, l->nr, sizeof(*l->ids), cmp_u64);
	if (!hit || l->found[hit - l->ids])
		return 0;
	struct tp_ent *e = &l->ents[l->nents];
	e->sys = strdup(sys);
	e->name = strdup(name);
	e->id = key;
	if (!e->sys || !e->name) {
		free(e->sys);
		free(e->name);
		l->err = -ENOMEM;
		return 1;
	}
	l->found[hit - l->ids] = true;
	l->nents++;
	return 0;
}

/* u32 count, then u64 size + format of every entry in [from, to) */
static int put_formats(struct pk_dbuf *b, const char *root, const struct tp_ent *e, size_t n)
{
	pk_dbuf_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		char rel[2 * TD_MAX_NAME + 32];
		pk_snprintf(rel, sizeof(rel), "events/%s/%s/format", e[i].sys, e[i].name);
		int ret = put_file(b, root, rel, 8, false);
		if (ret)
			return ret;
	}
	return b->err;
}

/* The wanted ids whose event the hints name ("sys:name", perhaps ":modifiers" after):
 * one id file read each instead of the scan of every tracepoint of the machine (a few
 * thousand files, 30 to 60 ms before a recording can start). A hint naming another
 * event, or none, is ignored: the scan finds what is left. */
static void lookup_hints(struct tp_lookup *l, const char *root, const char *const *hints,
			 size_t n)
{
	for (size_t i = 0; hints && i < n && !l->err; i++) {
		char sys[TD_MAX_NAME], name[TD_MAX_NAME];
		const char *h = hints[i], *c = h ? strchr(h, ':') : NULL;
		if (!c || c == h || (size_t)(c - h) >= sizeof(sys))
			continue;
		const char *e = strchr(c + 1, ':');
		size_t nl = e ? (size_t)(e - c - 1) : strlen(c + 1);
		if (!nl || nl >= sizeof(name))
			continue;
		memcpy(sys, h, (size_t)(c - h));
		sys[c - h] = 0;
		memcpy(name, c + 1, nl);
		name[nl] = 0;
		long long id = pk_tracepoint__id(root, sys, name);
		if (id >= 0)
			lookup_cb(sys, name, id, l);
	}
}

PK_API int pk_tracing_data__build(const char *tracefs_root, const uint64_t *tp_ids, size_t nr,
				  void **blob, size_t *len)
{
	return pk_tracing_data_build_hinted(tracefs_root, tp_ids, NULL, nr, blob, len);
}

int pk_tracing_data_build_hinted(const char *tracefs_root, const uint64_t *tp_ids,
				 const char *const *hints, size_t nr, void **blob, size_t *len)
{
	struct tp_lookup l = { 0 };
	struct pk_dbuf b = { 0 };
	uint64_t *ids = NULL;
	int ret = 0;

	if (!blob || !len || (nr && !tp_ids) || nr > (1u << 20))
		return pk_err(-EINVAL);
	*blob = NULL;
	*len = 0;
	const char *root = tracefs_root ? tracefs_root : pk_tracefs__root();
	if (!root)
		return pk_err(-ENOENT);

	/* the wanted ids, sorted and unique */
	ids = malloc((nr ? nr : 1) * sizeof(*ids));
	l.found = calloc(nr ? nr : 1, sizeof(*l.found));
	l.ents = calloc(nr ? nr : 1, sizeof(*l.ents));
	if (!ids || !l.found || !l.ents) {
		ret = -ENOMEM;
		goto out;
	}
	if (nr)
		memcpy(ids, tp_ids, nr * sizeof(*ids));
	qsort(ids, nr, sizeof(*ids), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < nr; i++)
		if (!u || ids[u - 1] != ids[i])
			ids[u++] = ids[i];
	l.ids = ids;
	l.nr = u;
	lookup_hints(&l, root, hints, nr);
	if (u && l.nents < u && !l.err) {
		ret = pk_tracepoint__foreach(root, NULL, lookup_cb, &l);
		if (l.err) {
			ret = l.err;
			goto out;
		}
		if (ret < 0)
			goto out;
	}
	if (l.err) {
		ret = l.err;
		goto out;
	}
	if (u) {
		ret = 0;
		for (size_t i = 0; i < u; i++) {
			if (!l.found[i]) {
				pk_warn("tracing data: no tracepoint in %s/events has id %llu", root,
					(unsigned long long)ids[i]);
				ret = -ENOENT;
				goto out;
			}
		}
	}
	qsort(l.ents, l.nents, sizeof(*l.ents), cmp_ent);

	/* header */
	uint16_t one = 1;
	uint8_t big = *(const uint8_t *)&one == 0;
	long psz = sysconf(_SC_PAGESIZE);
	pk_dbuf_put(&b, td_magic, sizeof(td_magic));
	pk_dbuf_put(&b, TD_VERSION, sizeof(TD_VERSION));
	pk_dbuf_put(&b, &big, 1);
	uint8_t lsz = (uint8_t)sizeof(long);
	pk_dbuf_put(&b, &lsz, 1);
	pk_dbuf_u32(&b, (uint32_t)(psz > 0 ? psz : 4096));
	pk_dbuf_put(&b, "header_page", 12);
	if ((ret = put_file(&b, root, "events/header_page", 8, false)))
		goto out;
	pk_dbuf_put(&b, "header_event", 13);
	if ((ret = put_file(&b, root, "events/header_event", 8, false)))
		goto out;

	/* the ftrace system has its own section; the rest are grouped per system (sorted) */
	size_t nftrace = 0, first_other;
	for (size_t i = 0; i < l.nents; i++)
		if (!strcmp(l.ents[i].sys, "ftrace"))
			nftrace++;
	/* ftrace entries are contiguous after the sort; move them to the front */
	if (nftrace) {
		struct tp_ent *tmp = malloc(l.nents * sizeof(*tmp));
		size_t k = 0;
		if (!tmp) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < l.nents; i++)
			if (!strcmp(l.ents[i].sys, "ftrace"))
				tmp[k++] = l.ents[i];
		for (size_t i = 0; i < l.nents; i++)
			if (strcmp(l.ents[i].sys, "ftrace"))
				tmp[k++] = l.ents[i];
		memcpy(l.ents, tmp, l.nents * sizeof(*tmp));
		free(tmp);
	}
	if ((ret = put_formats(&b, root, l.ents, nftrace)))
		goto out;
	first_other = nftrace;
	uint32_t nsys = 0;
	for (size_t i = first_other; i < l.nents; i++)
		if (i == first_other || strcmp(l.ents[i].sys, l.ents[i - 1].sys))
			nsys++;
	pk_dbuf_u32(&b, nsys);
	for (size_t i = first_other; i < l.nents;) {
		size_t j = i;
		while (j < l.nents && !strcmp(l.ents[j].sys, l.ents[i].sys))
			j++;
		pk_dbuf_put(&b, l.ents[i].sys, strlen(l.ents[i].sys) + 1);
		if ((ret = put_formats(&b, root, l.ents + i, j - i)))
			goto out;
		i = j;
	}
	pk_dbuf_u32(&b, 0); /* kallsyms */
	if ((ret = put_file(&b, root, "printk_formats", 4, true)))
		goto out;
	if ((ret = put_file(&b, root, "saved_cmdlines", 8, true)))
		goto out;
	ret = b.err;
out:
	for (size_t i = 0; i < l.nents; i++) {
		free(l.ents[i].sys);
		free(l.ents[i].name);
	}
	free(l.ents);
	free(l.found);
	free(ids);
	if (ret) {
		pk_dbuf_release(&b);
		return pk_err(ret);
	}
	*blob = b.p;
	*len = b.len;
	return 0;
}

/* ---- parser ---- */

struct pk_tracing_data {
	struct pk_tracing_info info;
	struct pk_tracing_event *ev;
	size_t nr_ev;
	char *strs[6];        /* version, header_page, header_event, kallsyms, printk, cmdlines */
};

struct tcur {
	const uint8_t *p;
	size_t len, off;
	bool swap;
	const char *what;     /* first failure */
	size_t what_off;
};

static bool tc_fail(struct tcur *c, const char *what)
{
	if (!c->what) {
		c->what = what;
		c->what_off = c->off;
	}
	return false;
}

static bool tc_get(struct tcur *c, void *dst, size_t n, const char *what)
{
	if (c->what || n > c->len - c->off)
		return tc_fail(c, what);
	memcpy(dst, c->p + c->off, n);
	c->off += n;
	return true;
}

static bool tc_u32(struct tcur *c, uint32_t *v, const char *what)
{
	if (!tc_get(c, v, 4, what))
		return false;
	if (c->swap)
		*v = __builtin_bswap32(*v);
	return true;
}

static bool tc_u64(struct tcur *c, uint64_t *v, const char *what)
{
	if (!tc_get(c, v, 8, what))
		return false;
	if (c->swap)
		*v = __builtin_bswap64(*v);
	return true;
}

/* NUL-terminated string of at most max bytes (without the NUL) at the cursor */
static const char *tc_cstr(struct tcur *c, size_t max, const char *what)
{
	if (c->what)
		return NULL;
	size_t avail = c->len - c->off;
	const char *s = (const char *)c->p + c->off;
	size_t n = strnlen(s, PK_MIN(avail, max + 1));
	if (n >= avail || n > max) {
		tc_fail(c, what);
		return NULL;
	}
	c->off += n + 1;
	return s;
}

/* n bytes at the cursor copied into a NUL-terminated malloc'd string */
static char *tc_text(struct tcur *c, uint64_t n, const char *what)
{
	if (c->what)
		return NULL;
	if (n > c->len - c->off) {
		tc_fail(c, what);
		return NULL;
	}
	char *s = malloc((size_t)n + 1);
	if (!s) {
		tc_fail(c, "out of memory");
		return NULL;
	}
	memcpy(s, c->p + c->off, (size_t)n);
	s[n] = 0;
	c->off += (size_t)n;
	return s;
}

/* value of the first line starting with `key` (e.g. "name:"), trimmed; bounded copy */
static char *format_line(const char *fmt, size_t len, const char *key)
{
	size_t klen = strlen(key);
	const char *p = fmt, *end = fmt + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if ((size_t)(le - p) >= klen && !memcmp(p, key, klen)) {
			const char *v = p + klen;
			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			const char *ve = le;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
				ve--;
			return pk_strndup(v, PK_MIN((size_t)(ve - v), (size_t)TD_MAX_NAME));
		}
		p = le + 1;
	}
	return NULL;
}

static void event_free(struct pk_tracing_event *e)
{
	free((char *)e->system);
	free((char *)e->name);
	free((char *)e->format);
}

PK_API void pk_tracing_data__free(struct pk_tracing_data *td)
{
	if (!td)
		return;
	for (size_t i = 0; i < td->nr_ev; i++)
		event_free(&td->ev[i]);
	free(td->ev);
	for (size_t i = 0; i < PK_ARRAY_SIZE(td->strs); i++)
		free(td->strs[i]);
	free(td);
}

/* one "u64 size, format" entry of system sys */
static bool parse_format(struct pk_tracing_data *td, struct tcur *c, const char *sys,
			 size_t cap)
{
	uint64_t size;
	if (!tc_u64(c, &size, "format size"))
		return false;
	if (td->nr_ev >= cap)
		return tc_fail(c, "too many formats");
	struct pk_tracing_event *e = &td->ev[td->nr_ev];
	memset(e, 0, sizeof(*e));
	char *fmt = tc_text(c, size, "format text runs past the end");
	if (!fmt)
		return false;
	e->format = fmt;
	e->format_len = (size_t)size;
	e->system = strdup(sys);
	char *name = format_line(fmt, e->format_len, "name:");
	e->name = name ? name : strdup("");
	e->id = -1;
	char *id = format_line(fmt, e->format_len, "ID:");
	uint64_t v;
	if (id && pk_parse_u64(id, strlen(id), &v) == 0 && v <= (uint64_t)INT64_MAX)
		e->id = (long long)v;
	free(id);
	td->nr_ev++;
	if (!e->system || !e->name)
		return tc_fail(c, "out of memory");
	return true;
}

static bool version_has_cmdlines(const char *v)
{
	/* "major.minor": saved_cmdlines exist from 0.6 on */
	char *end;
	unsigned long major = strtoul(v, &end, 10);
	unsigned long minor = 0;
	if (*end == '.')
		minor = strtoul(end + 1, NULL, 10);
	return major > 0 || minor >= 6;
}

PK_API struct pk_tracing_data *pk_tracing_data__parse(const void *blob, size_t len)
{
	struct tcur c = { .p = blob, .len = len };
	struct pk_tracing_data *td;
	uint8_t magic[10], endian, lsz;
	uint32_t u32v, count;
	uint64_t size;

	if (!blob && len)
		return pk_err_ptr(-EINVAL);
	td = calloc(1, sizeof(*td));
	if (!td)
		return pk_err_ptr(-ENOMEM);
	/* every format needs at least its 8-byte size: this bounds the array */
	size_t cap = len / 8 + 1;
	td->ev = calloc(cap, sizeof(*td->ev));
	if (!td->ev) {
		free(td);
		return pk_err_ptr(-ENOMEM);
	}
	if (!tc_get(&c, magic, sizeof(magic), "magic") || memcmp(magic, td_magic, sizeof(magic))) {
		tc_fail(&c, "bad magic (not tracing data)");
		goto bad;
	}
	const char *ver = tc_cstr(&c, TD_MAX_VERSION, "version string");
	if (!ver)
		goto bad;
	td->strs[0] = strdup(ver);
	if (!td->strs[0]) {
		tc_fail(&c, "out of memory");
		goto bad;
	}
	td->info.version = td->strs[0];
	if (!tc_get(&c, &endian, 1, "endianness") || !tc_get(&c, &lsz, 1, "long size"))
		goto bad;
	if (endian > 1) {
		tc_fail(&c, "endianness byte is neither 0 nor 1");
		goto bad;
	}
	if (lsz != 4 && lsz != 8) {
		tc_fail(&c, "sizeof(long) is neither 4 nor 8");
		goto bad;
	}
	uint16_t one = 1;
	bool host_big = *(const uint8_t *)&one == 0;
	td->info.big_endian = endian;
	c.swap = (bool)endian != host_big;
	td->info.long_size = lsz;
	if (!tc_u32(&c, &u32v, "page size"))
		goto bad;
	if (!u32v) {
		tc_fail(&c, "page size 0");
		goto bad;
	}
	td->info.page_size = u32v;

	/* header_page, header_event */
	static const char *const hdr_names[2] = { "header_page", "header_event" };
	for (int i = 0; i < 2; i++) {
		char tag[13];
		size_t tl = strlen(hdr_names[i]) + 1;
		if (!tc_get(&c, tag, tl, hdr_names[i]))
			goto bad;
		if (memcmp(tag, hdr_names[i], tl)) {
			tc_fail(&c, i ? "missing header_event tag" : "missing header_page tag");
			goto bad;
		}
		if (!tc_u64(&c, &size, hdr_names[i]))
			goto bad;
		td->strs[1 + i] = tc_text(&c, size, hdr_names[i]);
		if (!td->strs[1 + i])
			goto bad;
		if (i == 0) {
			td->info.header_page = td->strs[1];
			td->info.header_page_len = (size_t)size;
		} else {
			td->info.header_event = td->strs[2];
			td->info.header_event_len = (size_t)size;
		}
	}

	/* ftrace formats */
	if (!tc_u32(&c, &count, "ftrace format count"))
		goto bad;
	if (count > (c.len - c.off) / 8) {
		tc_fail(&c, "ftrace format count exceeds the blob");
		goto bad;
	}
	for (uint32_t i = 0; i < count; i++)
		if (!parse_format(td, &c, "ftrace", cap))
			goto bad;

	/* systems */
	uint32_t nsys;
	if (!tc_u32(&c, &nsys, "system count"))
		goto bad;
	if (nsys > (c.len - c.off) / 5) {
		tc_fail(&c, "system count exceeds the blob");
		goto bad;
	}
	for (uint32_t s = 0; s < nsys; s++) {
		const char *sys = tc_cstr(&c, TD_MAX_NAME, "system name");
		if (!sys)
			goto bad;
		if (!tc_u32(&c, &count, "format count"))
			goto bad;
		if (count > (c.len - c.off) / 8) {
			tc_fail(&c, "format count exceeds the blob");
			goto bad;
		}
		for (uint32_t i = 0; i < count; i++)
			if (!parse_format(td, &c, sys, cap))
				goto bad;
	}

	/* kallsyms, printk formats (u32 sizes), saved cmdlines (u64, version >= 0.6) */
	if (!tc_u32(&c, &u32v, "kallsyms size"))
		goto bad;
	if (!(td->strs[3] = tc_text(&c, u32v, "kallsyms")))
		goto bad;
	td->info.kallsyms = td->strs[3];
	td->info.kallsyms_len = u32v;
	if (!tc_u32(&c, &u32v, "printk size"))
		goto bad;
	if (!(td->strs[4] = tc_text(&c, u32v, "printk formats")))
		goto bad;
	td->info.printk = td->strs[4];
	td->info.printk_len = u32v;
	size = 0;
	if (version_has_cmdlines(td->info.version) && !tc_u64(&c, &size, "saved_cmdlines size"))
		goto bad;
	if (!(td->strs[5] = tc_text(&c, size, "saved_cmdlines")))
		goto bad;
	td->info.saved_cmdlines = td->strs[5];
	td->info.saved_cmdlines_len = (size_t)size;
	td->info.parsed_len = c.off;
	return td;
bad:
	pk_debug("tracing data: %s at offset %zu of %zu", c.what ? c.what : "malformed",
		 c.what ? c.what_off : c.off, len);
	pk_tracing_data__free(td);
	return pk_err_ptr(c.what && !strcmp(c.what, "out of memory") ? -ENOMEM : -PK_ERR_FORMAT);
}

PK_API const struct pk_tracing_info *pk_tracing_data__info(const struct pk_tracing_data *td)
{
	return td ? &td->info : NULL;
}

PK_API size_t pk_tracing_data__nr_events(const struct pk_tracing_data *td)
{
	return td ? td->nr_ev : 0;
}

PK_API const struct pk_tracing_event *pk_tracing_data__event(const struct pk_tracing_data *td,
							     size_t idx)
{
	return td && idx < td->nr_ev ? &td->ev[idx] : NULL;
}

PK_API const struct pk_tracing_event *
pk_tracing_data__next_event(const struct pk_tracing_data *td, const struct pk_tracing_event *prev)
{
	if (!td || !td->nr_ev)
		return NULL;
	if (!prev)
		return &td->ev[0];
	size_t i = (size_t)(prev - td->ev) + 1;
	return i < td->nr_ev ? &td->ev[i] : NULL;
}

PK_API const struct pk_tracing_event *
pk_tracing_data__find_id(const struct pk_tracing_data *td, long long id)
{
	for (size_t i = 0; td && i < td->nr_ev; i++)
		if (td->ev[i].id == id)
			return &td->ev[i];
	return NULL;
}
