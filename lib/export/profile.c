/* SPDX-License-Identifier: MIT */
/*
 * lib/export/profile.c - the profile builder: strings, functions, frames, call-stack
 * prefix-tree nodes, threads and per-(stack, event) weights, each interned in an
 * open-addressing hash table of ids.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "export-internal.h"

#define STR_CHUNK (64 * 1024)

struct pk_strchunk {
	struct pk_strchunk *next;
	size_t used, size;
	char data[];
};

static size_t next_cap(uint32_t cap, size_t need)
{
	if (need <= cap)
		return cap;
	if (need > UINT32_MAX - 1)
		return 0;
	size_t ncap = cap ? cap : 64;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX - 1)
		ncap = UINT32_MAX - 1;
	return ncap;
}

int pk_xgrow(void **arr, uint32_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = next_cap(*cap, need);
	if (!ncap)
		return -ENOMEM;
	void *n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = (uint32_t)ncap;
	return 0;
}

uint32_t pk_xhash_bytes(const void *s, size_t n, uint32_t seed)
{
	/* FNV-1a over 64 bits, folded */
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	const unsigned char *c = s;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return (uint32_t)(h ^ (h >> 32));
}

uint32_t pk_xhash_u64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ULL;
	v ^= v >> 33;
	return (uint32_t)v;
}

static inline uint32_t mix2(uint32_t a, uint64_t b)
{
	return pk_xhash_u64(((uint64_t)a << 32 | (a >> 7)) ^ b * 0x9e3779b97f4a7c15ULL);
}

/* ------------------------------------------------------------------------------------ */
/* The id hash                                                                          */

typedef bool (*eq_fn)(const struct pk_profile *p, uint32_t id, const void *key);

/* lib/core's index takes a 64-bit hash: its high half is the tag and picks the slot */
static inline uint64_t ix_hash(uint32_t hash)
{
	return (uint64_t)hash << 32;
}

/* The id of key in index x, or PK_NONE. */
static uint32_t ix_find(const struct pk_profile *p, const struct pk_index *x, uint32_t hash,
			eq_fn eq, const void *key)
{
	if (!x->slot)
		return PK_NONE;
	PK_IX_FOR(x, ix_hash(hash), j) {
		uint32_t id = PK_IX_ID(x->slot[j]);
		if (eq(p, id, key))
			return id;
	}
	return PK_NONE;
}

/* ------------------------------------------------------------------------------------ */
/* Strings                                                                              */

struct strkey {
	const char *s;
	size_t len;
};

static bool str_eq(const struct pk_profile *p, uint32_t id, const void *key)
{
	const struct strkey *k = key;
	const char *s = p->str[id];
	return !strncmp(s, k->s, k->len) && s[k->len] == '\0';
}

static char *str_alloc(struct pk_profile *p, size_t n)
{
	struct pk_strchunk *c = p->chunks;
	if (!c || c->size - c->used < n) {
		size_t size = n > STR_CHUNK ? n : STR_CHUNK;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = p->chunks;
		p->chunks = c;
		p->str_bytes += sizeof(*c) + size;
	}
	char *r = c->data + c->used;
	c->used += n;
	return r;
}

uint32_t pk_xintern(struct pk_profile *p, const char *s)
{
	if (!s)
		s = "";
	struct strkey k = { s, strlen(s) };
	uint32_t hash = pk_xhash_bytes(s, k.len, 0);
	uint32_t id = ix_find(p, &p->str_h, hash, str_eq, &k);
	if (id != PK_NONE)
		return id;
	if (pk_index_grow(&p->str_h) ||
	    pk_xgrow((void **)&p->str, &p->cap_str, (size_t)p->nr_str + 1, sizeof(*p->str)))
		return PK_NONE;
	char *copy = str_alloc(p, k.len + 1);
	if (!copy)
		return PK_NONE;
	memcpy(copy, s, k.len + 1);
	id = p->nr_str++;
	p->str[id] = copy;
	pk_index_put(&p->str_h, ix_hash(hash), id);
	return id;
}

/* ------------------------------------------------------------------------------------ */
/* Functions, frames, nodes, weights, threads                                           */

static bool func_eq(const struct pk_profile *p, uint32_t id, const void *key)
{
	const struct pk_xfunc *a = &p->func[id], *b = key;
	return a->name == b->name && a->dso == b->dso && a->kind == b->kind;
}
static bool loc_eq(const struct pk_profile *p, uint32_t id, const void *key)
{
	const struct pk_xloc *a = &p->loc[id], *b = key;
	return a->func == b->func && a->addr == b->addr && a->line == b->line &&
	       a->inlined == b->inlined;
}
static bool node_eq(const struct pk_profile *p, uint32_t id, const void *key)
{
	const struct pk_xnode *a = &p->node[id], *b = key;
	return a->parent == b->parent && a->loc == b->loc;
}
static bool agg_eq(const struct pk_profile *p, uint32_t id, const void *key)
{
	const struct pk_xagg *a = &p->agg[id], *b = key;
	return a->node == b->node && a->event == b->event;
}
static bool thread_eq(const struct pk_profile *p, uint32_t id, const void *key)
{
	const struct pk_xthread *a = &p->thread[id], *b = key;
	return a->pid == b->pid && a->tid == b->tid && a->comm == b->comm;
}

/*
 * Generic "find or append": arr/hashes/nr/cap/h of one table, element size, key (an
 * element), its hash. Returns the id or PK_NONE (ENOMEM).
 */
static uint32_t intern_elem(struct pk_profile *p, void **arr, uint32_t *nr, uint32_t *cap,
			    struct pk_index *x, size_t elem, const void *key, uint32_t hash,
			    eq_fn eq)
{
	uint32_t id = ix_find(p, x, hash, eq, key);
	if (id != PK_NONE)
		return id;
	if (pk_index_grow(x) || pk_xgrow(arr, cap, (size_t)*nr + 1, elem))
		return PK_NONE;
	id = (*nr)++;
	memcpy((char *)*arr + (size_t)id * elem, key, elem);
	pk_index_put(x, ix_hash(hash), id);
	return id;
}

#define INTERN(p, tbl, key, hash, eq)                                                    \
	intern_elem((p), (void **)&(p)->tbl, &(p)->nr_##tbl, &(p)->cap_##tbl, &(p)->tbl##_h, \
		    sizeof(*(p)->tbl), (key), (hash), (eq))

/* ------------------------------------------------------------------------------------ */
/* Public API                                                                           */

struct pk_profile *pk_profile__new(const struct pk_profile_opts *opts)
{
	if (!PK_OPTS_VALID(opts, pk_profile_opts))
		return pk_err_ptr(-EINVAL);
	struct pk_profile *p = calloc(1, sizeof(*p));
	if (!p)
		return pk_err_ptr(-ENOMEM);
	p->o.timeline = PK_OPTS_GET(opts, timeline, false);
	p->o.root_comm = PK_OPTS_GET(opts, root_comm, false);
	p->o.addresses = PK_OPTS_GET(opts, addresses, false);
	p->o.max_depth = PK_OPTS_GET(opts, max_depth, 0);
	if (!p->o.max_depth || p->o.max_depth > 1024)
		p->o.max_depth = 1024;
	if (pk_xintern(p, "") != 0 || (p->title = pk_xintern(p, "perfkit")) == PK_NONE) {
		pk_profile__free(p);
		return pk_err_ptr(-ENOMEM);
	}
	return p;
}

void pk_profile__free(struct pk_profile *p)
{
	if (!p)
		return;
	while (p->chunks) {
		struct pk_strchunk *n = p->chunks->next;
		free(p->chunks);
		p->chunks = n;
	}
	free(p->str);
	pk_index_release(&p->str_h);
	free(p->func);
	pk_index_release(&p->func_h);
	free(p->loc);
	pk_index_release(&p->loc_h);
	free(p->node);
	pk_index_release(&p->node_h);
	free(p->agg);
	pk_index_release(&p->agg_h);
	free(p->thread);
	pk_index_release(&p->thread_h);
	free(p->timeline);
	free(p->event);
	free(p->dso);
	free(p->scratch);
	free(p);
}

int pk_profile__add_event(struct pk_profile *p, const char *name, const char *unit)
{
	if (!p)
		return pk_err(-EINVAL);
	if (pk_xgrow((void **)&p->event, &p->cap_event, p->nr_event + 1, sizeof(*p->event)))
		return pk_err(-ENOMEM);
	struct pk_xevent *e = &p->event[p->nr_event];
	memset(e, 0, sizeof(*e));
	e->name = pk_xintern(p, name ? name : "event");
	e->unit = pk_xintern(p, unit ? unit : "count");
	if (e->name == PK_NONE || e->unit == PK_NONE)
		return pk_err(-ENOMEM);
	return (int)p->nr_event++;
}

size_t pk_profile__nr_events(const struct pk_profile *p)
{
	return p ? p->nr_event : 0;
}

static uint32_t intern_func(struct pk_profile *p, uint32_t name, uint32_t dso, uint8_t kind,
			    uint32_t file, uint32_t line)
{
	struct pk_xfunc f = { .name = name, .dso = dso, .kind = kind, .file = file, .line = line };
	uint32_t h = mix2(mix2(name, dso), kind);
	return INTERN(p, func, &f, h, func_eq);
}

int pk_profile__intern_frame(struct pk_profile *p, const struct pk_export_frame *fr,
			     uint32_t *id)
{
	if (!p || !fr || !id)
		return pk_err(-EINVAL);
	char hex[32];
	const char *name = fr->name;
	if (!name || !*name) {
		if (fr->addr) {
			snprintf(hex, sizeof(hex), "0x%" PRIx64, fr->addr);
			name = hex;
		} else {
			name = "[unknown]";
		}
	}
	uint32_t n = pk_xintern(p, name);
	uint32_t d = pk_xintern(p, fr->dso);
	uint32_t file = pk_xintern(p, fr->file);
	if (n == PK_NONE || d == PK_NONE || file == PK_NONE)
		return pk_err(-ENOMEM);
	uint8_t kind = fr->kind <= PK_FRAME_COMM ? fr->kind : PK_FRAME_UNKNOWN;
	uint32_t f = intern_func(p, n, d, kind, file, fr->line);
	if (f == PK_NONE)
		return pk_err(-ENOMEM);
	struct pk_xloc l = { .func = f };
	if (p->o.addresses) {
		l.addr = fr->addr;
		l.line = fr->line;
		l.inlined = fr->inlined;
	}
	uint32_t h = mix2(mix2(f, l.addr), (uint64_t)l.line << 1 | l.inlined);
	uint32_t lid = INTERN(p, loc, &l, h, loc_eq);
	if (lid == PK_NONE)
		return pk_err(-ENOMEM);
	*id = lid;
	return 0;
}

static uint32_t intern_thread(struct pk_profile *p, uint32_t pid, uint32_t tid, uint32_t comm)
{
	struct pk_xthread t = { pid, tid, comm };
	return INTERN(p, thread, &t, mix2(mix2(pid, tid), comm), thread_eq);
}

int pk_profile__add_sample_ids(struct pk_profile *p, const struct pk_export_sample *s,
			       const uint32_t *ids, size_t nr)
{
	if (!p || !s || (nr && !ids) || s->event >= p->nr_event)
		return pk_err(-EINVAL);
	for (size_t i = 0; i < nr; i++)
		if (ids[i] >= p->nr_loc)
			return pk_err(-EINVAL);
	uint32_t comm = pk_xintern(p, s->comm ? s->comm : "[unknown]");
	if (comm == PK_NONE)
		return pk_err(-ENOMEM);
	uint32_t node = PK_NONE, depth = 0;
	if (p->o.root_comm) {
		struct pk_export_frame cf = { .name = pk_xstr(p, comm), .kind = PK_FRAME_COMM };
		uint32_t lid;
		int err = pk_profile__intern_frame(p, &cf, &lid);
		if (err)
			return err;
		struct pk_xnode k = { .parent = PK_NONE, .loc = lid, .depth = 1 };
		node = INTERN(p, node, &k, mix2(PK_NONE, lid), node_eq);
		if (node == PK_NONE)
			return pk_err(-ENOMEM);
		depth = 1;
	}
	/* root side first; beyond max_depth the outermost frames are dropped */
	size_t take = nr;
	if (take + depth > p->o.max_depth)
		take = p->o.max_depth - depth;
	for (size_t i = take; i-- > 0;) {
		struct pk_xnode k = { .parent = node, .loc = ids[i], .depth = ++depth };
		uint32_t nid = INTERN(p, node, &k, mix2(node, ids[i]), node_eq);
		if (nid == PK_NONE)
			return pk_err(-ENOMEM);
		node = nid;
	}
	uint64_t period = s->period ? s->period : 1;
	struct pk_xagg a = { .node = node, .event = s->event };
	uint32_t aid = INTERN(p, agg, &a, mix2(node, s->event), agg_eq);
	if (aid == PK_NONE)
		return pk_err(-ENOMEM);
	p->agg[aid].samples++;
	p->agg[aid].period += period;
	p->event[s->event].samples++;
	p->event[s->event].period += period;
	if (p->o.timeline) {
		uint32_t th = intern_thread(p, s->pid, s->tid, comm);
		if (th == PK_NONE)
			return pk_err(-ENOMEM);
		if (p->nr_time == p->cap_time) {
			size_t ncap = p->cap_time ? p->cap_time * 2 : 1024;
			struct pk_xtime *t = realloc(p->timeline, ncap * sizeof(*t));
			if (!t)
				return pk_err(-ENOMEM);
			p->timeline = t;
			p->cap_time = ncap;
		}
		p->timeline[p->nr_time] = (struct pk_xtime){
			.time = s->time, .period = period, .node = node, .thread = th,
			.event = s->event, .seq = (uint32_t)p->nr_time,
		};
		p->nr_time++;
	}
	p->nr_samples++;
	return 0;
}

int pk_profile__add_sample(struct pk_profile *p, const struct pk_export_sample *s)
{
	if (!p || !s || (s->nr_frames && !s->frames))
		return pk_err(-EINVAL);
	if (s->nr_frames > p->cap_scratch) {
		uint32_t *n = realloc(p->scratch, s->nr_frames * sizeof(*n));
		if (!n)
			return pk_err(-ENOMEM);
		p->scratch = n;
		p->cap_scratch = s->nr_frames;
	}
	for (size_t i = 0; i < s->nr_frames; i++) {
		int err = pk_profile__intern_frame(p, &s->frames[i], &p->scratch[i]);
		if (err)
			return err;
	}
	return pk_profile__add_sample_ids(p, s, p->scratch, s->nr_frames);
}

int pk_profile__set_dso(struct pk_profile *p, const char *dso, uint64_t start, uint64_t end,
			uint64_t pgoff, const uint8_t *build_id, size_t build_id_len)
{
	if (!p || !dso || (build_id_len && !build_id) || end < start)
		return pk_err(-EINVAL);
	uint32_t name = pk_xintern(p, dso);
	if (name == PK_NONE)
		return pk_err(-ENOMEM);
	uint32_t bare = PK_NONE, known = PK_NONE;
	bool have = false;
	/* newest first: a loader repeats the mapping it has just described */
	for (uint32_t i = p->nr_dso; i-- > 0;) {
		const struct pk_xdso *d = &p->dso[i];
		if (d->name != name)
			continue;
		if (d->end == d->start)
			bare = i;
		else if (d->start == start && d->end == end && d->pgoff == pgoff)
			have = true;
		if (known == PK_NONE || (!p->dso[known].build_id_len && d->build_id_len))
			known = i;
	}
	uint32_t at = known;
	if ((end > start && !have && bare == PK_NONE) || known == PK_NONE) {
		if (pk_xgrow((void **)&p->dso, &p->cap_dso, p->nr_dso + 1, sizeof(*p->dso)))
			return pk_err(-ENOMEM);
		at = p->nr_dso++;
		memset(&p->dso[at], 0, sizeof(p->dso[at]));
		p->dso[at].name = name;
		if (known != PK_NONE) { /* another range of a known object: same build id */
			p->dso[at].build_id_len = p->dso[known].build_id_len;
			memcpy(p->dso[at].build_id, p->dso[known].build_id, sizeof(p->dso[at].build_id));
		}
	} else if (end > start && !have) {
		at = bare;
	}
	if (end > start && !have) {
		p->dso[at].start = start;
		p->dso[at].end = end;
		p->dso[at].pgoff = pgoff;
	}
	if (build_id_len) {
		/* one object, one build id: on every range of the name */
		uint8_t len = (uint8_t)PK_MIN(build_id_len, sizeof(p->dso[0].build_id));
		for (uint32_t i = 0; i < p->nr_dso; i++) {
			struct pk_xdso *d = &p->dso[i];
			if (d->name != name)
				continue;
			memset(d->build_id, 0, sizeof(d->build_id));
			memcpy(d->build_id, build_id, len);
			d->build_id_len = len;
		}
	}
	return 0;
}

int pk_profile__set_info(struct pk_profile *p, const char *title, uint64_t epoch_ns,
			 uint64_t duration_ns)
{
	if (!p)
		return pk_err(-EINVAL);
	uint32_t t = pk_xintern(p, title ? title : "perfkit");
	if (t == PK_NONE)
		return pk_err(-ENOMEM);
	p->title = t;
	p->epoch_ns = epoch_ns;
	p->duration_ns = duration_ns;
	return 0;
}

static void fill_stats(const struct pk_profile *p, struct pk_profile_stats *st);

void pk_profile__stats(const struct pk_profile *p, struct pk_profile_stats *st)
{
	if (!st)
		return;
	struct pk_profile_stats all = { .sz = sizeof(all) }, *out = st;
	st = &all;
	if (p)
		fill_stats(p, st);
	PK_OUT_COPY(out, st);
}

static void fill_stats(const struct pk_profile *p, struct pk_profile_stats *st)
{
	st->samples = p->nr_samples;
	st->strings = p->nr_str;
	st->functions = p->nr_func;
	st->frames = p->nr_loc;
	st->stack_nodes = p->nr_node;
	st->threads = p->nr_thread;
	st->bytes = p->str_bytes +
		    (uint64_t)p->cap_str * (sizeof(char *) + 4) + (p->str_h.mask + 1ULL) * 4 +
		    (uint64_t)p->cap_func * (sizeof(struct pk_xfunc) + 4) + (p->func_h.mask + 1ULL) * 4 +
		    (uint64_t)p->cap_loc * (sizeof(struct pk_xloc) + 4) + (p->loc_h.mask + 1ULL) * 4 +
		    (uint64_t)p->cap_node * (sizeof(struct pk_xnode) + 4) + (p->node_h.mask + 1ULL) * 4 +
		    (uint64_t)p->cap_agg * (sizeof(struct pk_xagg) + 4) + (p->agg_h.mask + 1ULL) * 4 +
		    (uint64_t)p->cap_thread * (sizeof(struct pk_xthread) + 4) +
		    (p->thread_h.mask + 1ULL) * 4 + p->cap_time * sizeof(struct pk_xtime);
}

int pk_profile__totals(const struct pk_profile *p, uint32_t event, uint64_t *samples,
		       uint64_t *period)
{
	if (!p || event >= p->nr_event)
		return pk_err(-EINVAL);
	if (samples)
		*samples = p->event[event].samples;
	if (period)
		*period = p->event[event].period;
	return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Helpers for the writers                                                              */

/* timeline indexes by time, then arrival (qsort_r: the timeline is the context) */
static int cmp_time(const void *a, const void *b, void *ctx)
{
	const struct pk_xtime *sort_base = ctx;
	const struct pk_xtime *x = &sort_base[*(const uint32_t *)a];
	const struct pk_xtime *y = &sort_base[*(const uint32_t *)b];
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

uint32_t *pk_xtimeline_order(const struct pk_profile *p)
{
	uint32_t *o = malloc((p->nr_time ? p->nr_time : 1) * sizeof(*o));
	if (!o)
		return NULL;
	bool sorted = true;
	for (size_t i = 0; i < p->nr_time; i++) {
		o[i] = (uint32_t)i;
		if (i && p->timeline[i].time < p->timeline[i - 1].time)
			sorted = false;
	}
	if (!sorted) {
		qsort_r(o, p->nr_time, sizeof(*o), cmp_time, (void *)p->timeline);
	}
	return o;
}

void pk_xjson_str(FILE *f, const char *s)
{
	pk_json__write_str(f, s, PK_JSON_HTML);
}

int pk_xfinish(FILE *f)
{
	errno = 0;
	int r = fflush(f), e = errno;
	if (!r && !ferror(f))
		return 0;
	/* The writers write on after a failed write, so the final flush fails too and says
	 * why (ENOSPC, EPIPE, EFBIG...). An error flagged earlier with nothing left to flush
	 * does not: EIO. */
	return pk_err(r && e > 0 ? -e : -EIO);
}
