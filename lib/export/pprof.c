/* SPDX-License-Identifier: MIT */
/*
 * lib/export/pprof.c - a hand-written protobuf encoder for perftools.profiles.Profile
 * (google/pprof proto/profile.proto), gzip-compressed with zlib as the format requires.
 *
 * String indices are the profile's own string ids (id 0 is "" as pprof requires), plus a
 * few strings of our own appended after them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "export-internal.h"

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

enum { WT_VARINT = 0, WT_LEN = 2 };

struct pb {
	uint8_t *b;
	size_t n, cap;
	bool oom;
};

static void pb_reserve(struct pb *pb, size_t more)
{
	if (pb->oom || pb->n + more <= pb->cap)
		return;
	size_t ncap = pb->cap ? pb->cap : 4096;
	while (ncap < pb->n + more)
		ncap *= 2;
	uint8_t *nb = realloc(pb->b, ncap);
	if (!nb) {
		pb->oom = true;
		return;
	}
	pb->b = nb;
	pb->cap = ncap;
}

static void pb_varint(struct pb *pb, uint64_t v)
{
	pb_reserve(pb, 10);
	if (pb->oom)
		return;
	while (v >= 0x80) {
		pb->b[pb->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	pb->b[pb->n++] = (uint8_t)v;
}

static void pb_bytes(struct pb *pb, const void *d, size_t len)
{
	pb_reserve(pb, len);
	if (pb->oom || !len)
		return;
	memcpy(pb->b + pb->n, d, len);
	pb->n += len;
}

static void pb_key(struct pb *pb, unsigned field, unsigned wt)
{
	pb_varint(pb, (uint64_t)field << 3 | wt);
}

/* An int64/uint64/bool field; zero is the proto3 default and is left out. */
static void pb_uint(struct pb *pb, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_key(pb, field, WT_VARINT);
	pb_varint(pb, v);
}

static void pb_lenfield(struct pb *pb, unsigned field, const void *d, size_t len)
{
	pb_key(pb, field, WT_LEN);
	pb_varint(pb, len);
	pb_bytes(pb, d, len);
}

/* Append a finished sub-message and reset it for reuse. */
static void pb_sub(struct pb *pb, unsigned field, struct pb *sub)
{
	if (sub->oom)
		pb->oom = true;
	pb_lenfield(pb, field, sub->b, sub->n);
	sub->n = 0;
}

static void value_type(struct pb *pb, struct pb *tmp, unsigned field, uint64_t type, uint64_t unit)
{
	pb_uint(tmp, VALUETYPE_TYPE, type);
	pb_uint(tmp, VALUETYPE_UNIT, unit);
	pb_sub(pb, field, tmp);
}

struct mapinfo {
	uint64_t lo, hi, pgoff;
	const struct pk_xdso *d;
	bool used, files, lines;
	bool any;               /* (per object) some of its addresses were sampled */
	uint32_t id;            /* mapping id, 0 = none */
};

/* DSO spans by name, start, end (qsort_r: the profile's DSO table is the context) */
static int cmp_range(const void *a, const void *b, void *ctx)
{
	const struct pk_xdso *sort_dso = ctx;
	const struct pk_xdso *x = &sort_dso[*(const uint32_t *)a];
	const struct pk_xdso *y = &sort_dso[*(const uint32_t *)b];
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* index of the first range of object `name` in ord (nr if none) */
static size_t first_range(const struct pk_profile *p, const uint32_t *ord, size_t nr,
			  uint32_t name)
{
	size_t lo = 0, hi = nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->dso[ord[mid]].name < name)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the described range of object `name` holding addr (the highest start first), or NULL */
static struct mapinfo *find_range(const struct pk_profile *p, const uint32_t *ord, size_t nr,
				  struct mapinfo *rng, uint32_t name, uint64_t addr)
{
	size_t lo = first_range(p, ord, nr, name), a = lo, b = nr;
	/* hi: one past the last range of the object starting at or below addr */
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (p->dso[ord[mid]].name == name && p->dso[ord[mid]].start <= addr)
			a = mid + 1;
		else
			b = mid;
	}
	size_t hi = a;
	/* ranges of one object do not overlap within a process; across processes the
	 * nearest start below addr that still covers it wins */
	while (hi-- > lo)
		if (addr < p->dso[ord[hi]].end)
			return &rng[ord[hi]];
	return NULL;
}

static int gzip_write(FILE *f, const uint8_t *data, size_t len)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	uint8_t out[65536];
	int zr = Z_OK;
	z.next_in = (Bytef *)(uintptr_t)data;
	size_t left = len;
	do {
		uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
		z.avail_in = chunk;
		left -= chunk;
		int flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			zr = deflate(&z, flush);
			if (zr == Z_STREAM_ERROR) {
				deflateEnd(&z);
				return -EIO;
			}
			size_t have = sizeof(out) - z.avail_out;
			errno = 0;
			if (have && fwrite(out, 1, have, f) != have) {
				int e = errno > 0 ? errno : EIO; /* ENOSPC etc., before free() */
				deflateEnd(&z);
				return -e;
			}
		} while (z.avail_out == 0);
	} while (left);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

int pk_export__pprof(const struct pk_profile *p, FILE *f, const struct pk_pprof_opts *opts)
{
	if (!p || !f || !PK_OPTS_VALID(opts, pk_pprof_opts))
		return pk_err(-EINVAL);
	struct pb pb = { 0 }, t1 = { 0 }, t2 = { 0 };
	struct mapinfo *maps = calloc((size_t)p->nr_str, sizeof(*maps)); /* by dso string id */
	struct mapinfo *rng = NULL, **lmap = NULL; /* by dso entry; by location */
	uint32_t *ord = NULL;                      /* ranged dso entries by (name, start) */
	size_t nr_ord = 0;
	uint32_t *path = malloc(1025 * sizeof(*path));
	char **extra = calloc((size_t)p->nr_dso * 2 + 8, sizeof(*extra));
	uint32_t nr_extra = 0, nr_fixed = 0; /* nr_fixed: the literals; the hex names after
					      * them are allocated */
	int err = 0;
	if (!maps || !path || !extra) {
		err = -ENOMEM;
		goto out;
	}
	uint64_t s_samples = p->nr_str + nr_extra;
	extra[nr_extra++] = "samples";
	uint64_t s_count = p->nr_str + nr_extra;
	extra[nr_extra++] = "count";
	uint64_t s_comment = p->nr_str + nr_extra;
	extra[nr_extra++] = "perfkit convert --to pprof";
	/* "off_cpu" only in a profile with off-CPU time (the others keep their bytes) */
	bool any_off = false;
	for (uint32_t e = 0; e < p->nr_event; e++)
		any_off |= !strcmp(pk_xstr(p, p->event[e].name), PK_OFFCPU_EVENT);
	uint64_t s_offcpu = p->nr_str + nr_extra;
	if (any_off)
		extra[nr_extra++] = "off_cpu";
	nr_fixed = nr_extra;

	/* sample types: per event (samples, count), (name, unit); the off-CPU event is the
	 * type "off_cpu" in nanoseconds, as profilers that show off-CPU time name it */
	for (uint32_t e = 0; e < p->nr_event; e++) {
		bool off = !strcmp(pk_xstr(p, p->event[e].name), PK_OFFCPU_EVENT);
		value_type(&pb, &t1, PROFILE_SAMPLE_TYPE, s_samples, s_count);
		value_type(&pb, &t1, PROFILE_SAMPLE_TYPE, off ? s_offcpu : p->event[e].name,
			   p->event[e].unit);
	}

	/* mappings: one per described range of an object (pk_profile__set_dso) holding
	 * sampled addresses, and one per object for its sampled addresses in no such range */
	rng = calloc((size_t)p->nr_dso + 1, sizeof(*rng));
	ord = malloc(((size_t)p->nr_dso + 1) * sizeof(*ord));
	lmap = calloc((size_t)p->nr_loc + 1, sizeof(*lmap));
	if (!rng || !ord || !lmap) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < p->nr_dso; i++) {
		rng[i].d = &p->dso[i];
		rng[i].lo = p->dso[i].start;
		rng[i].hi = p->dso[i].end;
		rng[i].pgoff = p->dso[i].pgoff;
		if (p->dso[i].end > p->dso[i].start)
			ord[nr_ord++] = i;
		if (!maps[p->dso[i].name].d || p->dso[i].build_id_len)
			maps[p->dso[i].name].d = &p->dso[i]; /* the span's build id */
	}
	qsort_r(ord, nr_ord, sizeof(*ord), cmp_range, (void *)p->dso);
	for (uint32_t l = 0; l < p->nr_loc; l++) {
		const struct pk_xloc *loc = &p->loc[l];
		const struct pk_xfunc *fn = &p->func[loc->func];
		if (!fn->dso || fn->kind == PK_FRAME_COMM || !loc->addr)
			continue;
		struct mapinfo *m = find_range(p, ord, nr_ord, rng, fn->dso, loc->addr);
		if (!m) { /* the span of the object's other sampled addresses */
			m = &maps[fn->dso];
			if (!m->used || loc->addr < m->lo)
				m->lo = loc->addr;
			if (!m->used || loc->addr >= m->hi)
				m->hi = loc->addr + 1;
		}
		m->used = true;
		maps[fn->dso].any = true;
		lmap[l] = m;
		if (fn->file)
			m->files = true;
		if (loc->line)
			m->lines = true;
	}
	/* mapping[0] should be the main binary: take the user object with the most self
	 * weight (pprof shows its name as the profile's "File") */
	uint32_t main_dso = 0;
	{
		uint64_t *selfw = calloc((size_t)p->nr_str, sizeof(*selfw));
		if (!selfw) {
			err = -ENOMEM;
			goto out;
		}
		for (uint32_t a = 0; a < p->nr_agg; a++) {
			uint32_t n = p->agg[a].node;
			if (n == PK_NONE)
				continue;
			const struct pk_xfunc *fn = &p->func[p->loc[p->node[n].loc].func];
			if (fn->kind == PK_FRAME_USER && fn->dso)
				selfw[fn->dso] += p->agg[a].period;
		}
		for (uint32_t s = 1; s < p->nr_str; s++)
			if (maps[s].any && selfw[s] > selfw[main_dso])
				main_dso = s;
		free(selfw);
	}
	uint32_t nr_maps = 0;
	for (uint32_t k = 0; k <= p->nr_str; k++) {
		/* main_dso first, then the others in string order; an object's ranges by
		 * address, then its span */
		uint32_t s = k == 0 ? main_dso : k - 1;
		if (k > 0 && s == main_dso)
			continue;
		if (s >= p->nr_str)
			break;
		if (!maps[s].any)
			continue;
		size_t j = first_range(p, ord, nr_ord, s);
		for (;; j++) {
			bool span = j >= nr_ord || p->dso[ord[j]].name != s;
			struct mapinfo *m = span ? &maps[s] : &rng[ord[j]];
			if (!m->used) {
				if (span)
					break;
				continue;
			}
			m->id = ++nr_maps;
			uint64_t bid = 0;
			const struct pk_xdso *d = m->d ? m->d : maps[s].d;
			if (d && d->build_id_len) {
				char *hex = malloc((size_t)d->build_id_len * 2 + 1);
				if (!hex) {
					err = -ENOMEM;
					goto out;
				}
				for (unsigned b = 0; b < d->build_id_len; b++)
					snprintf(hex + 2 * b, 3, "%02x", d->build_id[b]);
				bid = p->nr_str + nr_extra;
				extra[nr_extra++] = hex;
			}
			pb_uint(&t1, MAPPING_ID, m->id);
			pb_uint(&t1, MAPPING_MEMORY_START, m->lo);
			pb_uint(&t1, MAPPING_MEMORY_LIMIT, m->hi);
			pb_uint(&t1, MAPPING_FILE_OFFSET, span ? 0 : m->pgoff);
			pb_uint(&t1, MAPPING_FILENAME, s);
			pb_uint(&t1, MAPPING_BUILD_ID, bid);
			pb_uint(&t1, MAPPING_HAS_FUNCTIONS, 1);
			pb_uint(&t1, MAPPING_HAS_FILENAMES, m->files);
			pb_uint(&t1, MAPPING_HAS_LINE_NUMBERS, m->lines);
			pb_sub(&pb, PROFILE_MAPPING, &t1);
			if (span)
				break;
		}
	}

	/* locations: one per frame, id = index + 1, one line each */
	for (uint32_t l = 0; l < p->nr_loc; l++) {
		const struct pk_xloc *loc = &p->loc[l];
		const struct pk_xfunc *fn = &p->func[loc->func];
		if (fn->kind == PK_FRAME_COMM)
			continue;
		pb_uint(&t1, LOCATION_ID, (uint64_t)l + 1);
		if (lmap[l])
			pb_uint(&t1, LOCATION_MAPPING_ID, lmap[l]->id);
		pb_uint(&t1, LOCATION_ADDRESS, loc->addr);
		pb_uint(&t2, LINE_FUNCTION_ID, (uint64_t)loc->func + 1);
		pb_uint(&t2, LINE_LINE, loc->line ? loc->line : (p->o.addresses ? 0 : fn->line));
		pb_sub(&t1, LOCATION_LINE, &t2);
		pb_sub(&pb, PROFILE_LOCATION, &t1);
	}

	/* functions */
	for (uint32_t i = 0; i < p->nr_func; i++) {
		const struct pk_xfunc *fn = &p->func[i];
		if (fn->kind == PK_FRAME_COMM)
			continue;
		pb_uint(&t1, FUNCTION_ID, (uint64_t)i + 1);
		pb_uint(&t1, FUNCTION_NAME, fn->name);
		pb_uint(&t1, FUNCTION_SYSTEM_NAME, fn->name);
		pb_uint(&t1, FUNCTION_FILENAME, fn->file);
		pb_sub(&pb, PROFILE_FUNCTION, &t1);
	}

	/* samples: one per (stack, event) */
	for (uint32_t a = 0; a < p->nr_agg; a++) {
		const struct pk_xagg *g = &p->agg[a];
		size_t depth = 0;
		for (uint32_t n = g->node; n != PK_NONE && depth < 1025; n = p->node[n].parent) {
			uint32_t loc = p->node[n].loc;
			if (p->func[p->loc[loc].func].kind != PK_FRAME_COMM)
				path[depth++] = loc + 1;
		}
		/* packed repeated uint64 location_id, leaf first */
		for (size_t d = 0; d < depth; d++)
			pb_varint(&t2, path[d]);
		if (depth)
			pb_sub(&t1, SAMPLE_LOCATION_ID, &t2);
		for (uint32_t e = 0; e < p->nr_event; e++) {
			pb_varint(&t2, e == g->event ? g->samples : 0);
			pb_varint(&t2, e == g->event ? g->period : 0);
		}
		pb_sub(&t1, SAMPLE_VALUE, &t2);
		pb_sub(&pb, PROFILE_SAMPLE, &t1);
	}

	/* string table: ours, then the extra strings */
	for (uint32_t s = 0; s < p->nr_str; s++)
		pb_lenfield(&pb, PROFILE_STRING_TABLE, p->str[s], strlen(p->str[s]));
	for (uint32_t s = 0; s < nr_extra; s++)
		pb_lenfield(&pb, PROFILE_STRING_TABLE, extra[s], strlen(extra[s]));

	pb_uint(&pb, PROFILE_TIME_NANOS, p->epoch_ns);
	pb_uint(&pb, PROFILE_DURATION_NANOS, p->duration_ns);
	if (p->nr_event) {
		value_type(&pb, &t1, PROFILE_PERIOD_TYPE, p->event[0].name, p->event[0].unit);
		pb_uint(&pb, PROFILE_DEFAULT_SAMPLE_TYPE, p->event[0].name);
	}
	pb_key(&pb, PROFILE_COMMENT, WT_VARINT);
	pb_varint(&pb, s_comment);

	if (pb.oom || t1.oom || t2.oom) {
		err = -ENOMEM;
		goto out;
	}
	err = gzip_write(f, pb.b, pb.n);
	if (!err)
		err = pk_xfinish(f);
out:
	if (extra)
		for (uint32_t s = nr_fixed; s < nr_extra; s++)
			free(extra[s]);
	free(extra);
	free(maps);
	free(rng);
	free(ord);
	free(lmap);
	free(path);
	free(pb.b);
	free(t1.b);
	free(t2.b);
	return err < 0 ? pk_err(err) : 0;
}
