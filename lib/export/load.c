/* SPDX-License-Identifier: MIT */
/*
 * lib/export/load.c - a perf.data file into a pk_profile, as a client of the session:
 * records come in time order with the machine model kept up to date; the call chain of
 * every sample is symbolised (frames cached per map generation, cpumode and address)
 * and handed to the profile builder. What flamegraph, convert and diff read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/export.h>
#include <perfkit/session.h>
#include "internal.h"
#include "export/export-internal.h"

#define MAX_CHAIN 1024
#define MAX_INLINE 16

/* ---- frame cache: (map generation, cpumode, ip) -> frame ids in a pool ---- */

/* entries at which the cache starts over: memory stays bounded on any input */
#define FC_MAX_ENTRIES ((size_t)1 << 18)

struct fc_ent {
	uint64_t ip;
	uint64_t gen;           /* pk_machine__maps_gen: which maps resolved it */
	uint8_t cpumode;
	uint8_t used;
	uint16_t nr;            /* frame ids (more than 1 with inlines) */
	uint32_t first;         /* index into pool */
};

struct fcache {
	struct fc_ent *e;
	size_t mask, n;
	uint32_t *pool;
	size_t nr_pool, cap_pool;
};

static uint64_t fc_hash(uint64_t ip, uint64_t gen, uint8_t cm)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ULL ^ (gen << 8 | cm) * 0xc2b2ae3d27d4eb4fULL;
	return h ^ (h >> 29);
}

static void fc_clear(struct fcache *c)
{
	if (c->e && c->n)
		memset(c->e, 0, (c->mask + 1) * sizeof(*c->e));
	c->n = 0;
	c->nr_pool = 0;
}

static void fc_release(struct fcache *c)
{
	free(c->e);
	free(c->pool);
	memset(c, 0, sizeof(*c));
}

static struct fc_ent *fc_find(struct fcache *c, uint64_t ip, uint64_t gen, uint8_t cm)
{
	if (!c->e)
		return NULL;
	for (size_t j = fc_hash(ip, gen, cm) & c->mask;; j = (j + 1) & c->mask) {
		struct fc_ent *e = &c->e[j];
		if (!e->used)
			return NULL;
		if (e->ip == ip && e->gen == gen && e->cpumode == cm)
			return e;
	}
}

static int fc_insert(struct fcache *c, uint64_t ip, uint64_t gen, uint8_t cm,
		     const uint32_t *ids, uint16_t nr)
{
	if (c->n >= FC_MAX_ENTRIES)
		fc_clear(c);
	if (!c->e || (c->n + 1) * 10 > (c->mask + 1) * 7) {
		size_t nslots = c->e ? (c->mask + 1) * 2 : 4096;
		struct fc_ent *ne = calloc(nslots, sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		for (size_t i = 0; c->e && i <= c->mask; i++) {
			if (!c->e[i].used)
				continue;
			size_t j = fc_hash(c->e[i].ip, c->e[i].gen, c->e[i].cpumode) & (nslots - 1);
			while (ne[j].used)
				j = (j + 1) & (nslots - 1);
			ne[j] = c->e[i];
		}
		free(c->e);
		c->e = ne;
		c->mask = nslots - 1;
	}
	if (c->nr_pool + nr > c->cap_pool) {
		size_t ncap = c->cap_pool ? c->cap_pool * 2 : 4096;
		while (ncap < c->nr_pool + nr)
			ncap *= 2;
		uint32_t *np = realloc(c->pool, ncap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		c->pool = np;
		c->cap_pool = ncap;
	}
	size_t j = fc_hash(ip, gen, cm) & c->mask;
	while (c->e[j].used)
		j = (j + 1) & c->mask;
	c->e[j] = (struct fc_ent){ .ip = ip, .gen = gen, .cpumode = cm, .used = 1, .nr = nr,
				   .first = (uint32_t)c->nr_pool };
	memcpy(c->pool + c->nr_pool, ids, nr * sizeof(*ids));
	c->nr_pool += nr;
	c->n++;
	return 0;
}

/* ---- loading ---- */

struct loader {
	const struct pk_profile_load_opts *o;
	bool srcline, inlines, addresses, unknown_hex, no_callchain;
	struct pk_data_reader *r;
	struct pk_machine *m;
	struct pk_profile *p;
	struct fcache fc;
	int *ev_of_attr;        /* attr index -> profile event, -1 = skipped */
	size_t nr_attrs;
	bool warned_late_attrs;
	struct pk_chain_entry chain[MAX_CHAIN];
	uint32_t ids[MAX_CHAIN * 2];
	uint64_t first_sample_time, last_sample_time;
	uint64_t nr_samples, nr_unresolved;
	/* samples per thread name, for pk_profile_load_stats.top_comm */
	struct { char name[16]; uint64_t n; } comms[64];
	unsigned nr_comms, last_comm;
	uint64_t last_map_start, last_map_end; /* the mapping last described to the profile */
};

static uint8_t frame_kind(const struct pk_addr_loc *loc, int found)
{
	if (found == -ENOENT || !loc->dso_name)
		return PK_FRAME_UNKNOWN;
	if (loc->kernel)
		return PK_FRAME_KERNEL;
	const char *d = loc->dso_name;
	if (!strncmp(d, "//anon", 6) || !strncmp(d, "[JIT]", 5) || !strncmp(d, "/tmp/perf-", 10) ||
	    !strncmp(d, "/memfd:", 7) || !strncmp(d, "[anon:", 6))
		return PK_FRAME_JIT;
	return PK_FRAME_USER;
}

/* Symbolise one address into frame ids (several with inlines). Returns the count. */
static int frames_of(struct loader *L, uint32_t pid, uint32_t tid, uint64_t gen, uint64_t ip,
		     uint8_t cm, uint32_t *out, size_t room)
{
	struct fc_ent *e = fc_find(&L->fc, ip, gen, cm);
	if (e) {
		size_t n = PK_MIN((size_t)e->nr, room);
		memcpy(out, L->fc.pool + e->first, n * sizeof(*out));
		return (int)n;
	}
	struct pk_addr_loc loc;
	memset(&loc, 0, sizeof(loc));
	int found = pk_machine__resolve(L->m, pid, tid, ip, cm, &loc);
	uint32_t ids[MAX_INLINE];
	int n = 0;
	struct pk_export_frame fr = {
		.name = loc.sym,
		.dso = loc.dso_name ? loc.dso_name : "[unknown]",
		.addr = ip,
		.kind = frame_kind(&loc, found),
	};
	char hex[24];
	if (!fr.name && !L->unknown_hex) {
		fr.name = "[unknown]";
	} else if (!fr.name && loc.dso) {
		/* in an object without a symbol there: named by its address in the object, as
		 * perf report and perf diff name it (the same in every run, where the
		 * absolute address moves with ASLR): the file offset in a file map, the
		 * object's own address where that differs (the kernel, anonymous maps) */
		uint64_t a = loc.dso_addr, off = ip - loc.map_start + loc.map_pgoff;
		if (!loc.kernel && pk_dso__offset_to_addr(loc.dso, off) == loc.dso_addr)
			a = off;
		snprintf(hex, sizeof(hex), "0x%016" PRIx64, a);
		fr.name = hex;
	}
	/* pprof mappings: the real mapping (start, limit, file offset) of each object */
	if (L->addresses && found != -ENOENT && loc.dso_name &&
	    loc.map_end > loc.map_start &&
	    (loc.map_start != L->last_map_start || loc.map_end != L->last_map_end)) {
		if (pk_profile__set_dso(L->p, loc.dso_name, loc.map_start, loc.map_end,
					loc.map_pgoff, NULL, 0) == -ENOMEM)
			return -ENOMEM;
		L->last_map_start = loc.map_start;
		L->last_map_end = loc.map_end;
	}
	if (!loc.sym)
		L->nr_unresolved++;
	const char *file = NULL;
	unsigned int line = 0;
	if (L->srcline && loc.dso && loc.sym && !loc.kernel &&
	    pk_dso__srcline(loc.dso, loc.dso_addr, &file, &line) == 0) {
		fr.file = file;
		fr.line = line;
	}
	if (L->inlines && loc.dso && loc.sym && !loc.kernel) {
		const struct pk_inline_frame *inl;
		int ni = pk_dso__inlines(loc.dso, loc.dso_addr, &inl);
		for (int i = 0; i < ni - 1 && n < MAX_INLINE - 1; i++) {
			struct pk_export_frame f2 = fr;
			f2.name = inl[i].func;
			f2.file = inl[i].file;
			f2.line = inl[i].line;
			f2.inlined = true;
			if (pk_profile__intern_frame(L->p, &f2, &ids[n]) == 0)
				n++;
		}
	}
	if (pk_profile__intern_frame(L->p, &fr, &ids[n]) == 0)
		n++;
	if (n && fc_insert(&L->fc, ip, gen, cm, ids, (uint16_t)n))
		return -ENOMEM;
	n = (int)PK_MIN((size_t)n, room);
	memcpy(out, ids, (size_t)n * sizeof(*out));
	return n;
}

/* One more sample of thread name `comm` (consecutive samples mostly share it). */
static void count_comm(struct loader *L, const char *comm)
{
	if (!comm)
		comm = "";
	if (L->nr_comms && !strncmp(L->comms[L->last_comm].name, comm, 15)) {
		L->comms[L->last_comm].n++;
		return;
	}
	for (unsigned i = 0; i < L->nr_comms; i++) {
		if (!strncmp(L->comms[i].name, comm, 15)) {
			L->comms[i].n++;
			L->last_comm = i;
			return;
		}
	}
	if (L->nr_comms == PK_ARRAY_SIZE(L->comms))
		return;
	unsigned i = L->nr_comms++;
	snprintf(L->comms[i].name, sizeof(L->comms[i].name), "%s", comm);
	L->comms[i].n = 1;
	L->last_comm = i;
}

static int on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *rec)
{
	struct loader *L = ctx;
	const struct pk_data_attr *a = ev->attr;
	if (!rec || !a)
		return 0; /* malformed (the reader logged it) or of no known event */
	if ((size_t)a->idx >= L->nr_attrs) {
		/* attrs announced later in a pipe: not part of the profile */
		if (!L->warned_late_attrs)
			pk_warn("events added in the middle of a pipe are ignored");
		L->warned_late_attrs = true;
		return 0;
	}
	int pev = L->ev_of_attr[a->idx];
	if (pev < 0)
		return 0;
	const struct pk_sample *s = &rec->sample;
	int nr;
	if (L->no_callchain || !(s->type & PERF_SAMPLE_CALLCHAIN)) {
		L->chain[0].ip = s->ip;
		L->chain[0].cpumode = s->cpumode;
		nr = 1;
	} else {
		nr = pk_machine__callchain(L->m, s, L->chain, MAX_CHAIN);
		if (nr < 0)
			nr = 0;
		if (!nr) { /* a corrupted chain, dropped: the sampled location alone */
			L->chain[0] = (struct pk_chain_entry){ s->ip, s->cpumode, 0 };
			nr = 1;
		}
	}
	size_t nids = 0;
	/* the frame cache's keys: the generations of the maps each mode searches (the
	 * kernel's are the same in every process) */
	uint64_t ugen = pk_machine__maps_gen(L->m, s->pid, s->tid, PK_CPUMODE_UNKNOWN);
	uint64_t kgen = pk_machine__maps_gen(L->m, s->pid, s->tid, PK_CPUMODE_KERNEL);
	for (int i = 0; i < nr && nids < PK_ARRAY_SIZE(L->ids); i++) {
		uint8_t cm = L->chain[i].cpumode;
		bool kmode = cm == PK_CPUMODE_KERNEL || cm == PK_CPUMODE_GUEST_KERNEL;
		int k = frames_of(L, s->pid, s->tid, kmode ? kgen : ugen, L->chain[i].ip, cm,
				  L->ids + nids, PK_ARRAY_SIZE(L->ids) - nids);
		if (k < 0)
			return k;
		nids += (size_t)k;
	}
	uint64_t period = 1;
	if (s->type & PERF_SAMPLE_PERIOD)
		period = s->period;
	else if (!a->attr.attr.freq && a->attr.attr.sample_period)
		period = a->attr.attr.sample_period;
	struct pk_export_sample es = {
		.event = (uint32_t)pev,
		.pid = s->pid,
		.tid = s->tid,
		.comm = pk_machine__comm_of(L->m, s->tid),
		.time = s->time,
		.period = period,
	};
	if (!L->nr_samples || s->time < L->first_sample_time)
		L->first_sample_time = s->time;
	if (s->time > L->last_sample_time)
		L->last_sample_time = s->time;
	L->nr_samples++;
	count_comm(L, es.comm);
	return pk_profile__add_sample_ids(L->p, &es, L->ids, nids);
}

/* events: every attr with the same name is one event (perf opens one per CPU) */
static int add_events(struct loader *L, const char *only)
{
	for (size_t i = 0; i < L->nr_attrs; i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(L->r, i);
		char buf[64];
		const char *name = pk_data_attr__name(a, buf, sizeof(buf));
		L->ev_of_attr[i] = -1;
		if (only && strcmp(only, name))
			continue;
		for (size_t j = 0; j < i; j++) {
			const struct pk_data_attr *b = pk_data_reader__attr(L->r, j);
			char buf2[64];
			if (L->ev_of_attr[j] >= 0 &&
			    !strcmp(pk_data_attr__name(b, buf2, sizeof(buf2)), name))
				L->ev_of_attr[i] = L->ev_of_attr[j];
		}
		if (L->ev_of_attr[i] >= 0)
			continue;
		const struct perf_event_attr *at = &a->attr.attr;
		/* offcpu-time (perf's and perfkit's record --off-cpu): nanoseconds blocked */
		bool ns = at->type == PERF_TYPE_SOFTWARE &&
			  (at->config == PERF_COUNT_SW_CPU_CLOCK || at->config == PERF_COUNT_SW_TASK_CLOCK ||
			   pk_export__is_offcpu(name, at));
		int ev = pk_profile__add_event(L->p, name, ns ? "nanoseconds" : "count");
		if (ev < 0)
			return ev;
		L->ev_of_attr[i] = ev;
	}
	return only && !pk_profile__nr_events(L->p) ? -ENOENT : 0;
}

PK_API struct pk_profile *pk_profile__load(struct pk_data_reader *r,
					   const struct pk_profile_load_opts *o,
					   struct pk_profile_load_stats *st)
{
	if (!r || !PK_OPTS_VALID(o, pk_profile_load_opts) ||
	    (st && st->sz && st->sz < offsetof(struct pk_profile_load_stats, reader_error) +
					  sizeof(st->reader_error))) {
		errno = EINVAL;
		return NULL;
	}
	struct loader L;
	memset(&L, 0, sizeof(L));
	L.r = r;
	L.srcline = PK_OPTS_GET(o, srcline, false);
	L.inlines = PK_OPTS_GET(o, inlines, false);
	L.addresses = PK_OPTS_GET(o, addresses, false);
	L.unknown_hex = PK_OPTS_GET(o, unknown_hex, false);
	L.no_callchain = PK_OPTS_GET(o, no_callchain, false);
	const char *title = PK_OPTS_GET(o, title, NULL);
	PK_OPTS(pk_session_opts, so, .reader_thread = PK_OPTS_GET(o, reader_thread, false),
		.machine_opts = PK_OPTS_GET(o, machine_opts, NULL));
	struct pk_session *ses = pk_session__new(r, &so);
	PK_OPTS(pk_profile_opts, po, .timeline = PK_OPTS_GET(o, timeline, false),
		.root_comm = PK_OPTS_GET(o, root_comm, false), .addresses = L.addresses);
	L.p = pk_profile__new(&po);
	L.nr_attrs = pk_data_reader__nr_attrs(r);
	L.ev_of_attr = calloc(L.nr_attrs + 1, sizeof(*L.ev_of_attr));
	int err = 0, rerr = 0;
	if (!ses || !L.p || !L.ev_of_attr) {
		err = -ENOMEM;
		goto out;
	}
	L.m = pk_session__machine(ses);
	const struct pk_data_env *env = pk_data_reader__env(r);
	for (size_t i = 0; L.addresses && env && i < env->nr_build_ids; i++) {
		const struct pk_data_build_id *b = &env->build_ids[i];
		/* pprof mappings carry build ids */
		if (b->filename)
			pk_profile__set_dso(L.p, b->filename, 0, 0, 0, b->build_id, b->build_id_size);
	}
	err = add_events(&L, PK_OPTS_GET(o, event, NULL));
	if (err)
		goto out;
	PK_OPTS(pk_session_ops, ops, .sample = on_sample);
	err = pk_session__process(ses, &ops, &L);
	if (err && err != -ENOMEM) {
		/* the input is corrupt past some point: what was read before it is kept */
		rerr = err;
		err = 0;
	}
	if (!err)
		pk_profile__set_info(L.p, title, 0, L.last_sample_time - L.first_sample_time);
out:
	if (st) {
		size_t sz = st->sz ? st->sz : sizeof(*st);
		memset(st, 0, sz);
		st->sz = sz;
		st->samples = L.nr_samples;
		st->unresolved = L.nr_unresolved;
		st->reader_error = rerr;
		if (sz >= offsetof(struct pk_profile_load_stats, top_comm) + sizeof(st->top_comm)) {
			st->first_time = L.first_sample_time;
			st->last_time = L.last_sample_time;
			unsigned best = 0;
			for (unsigned i = 1; i < L.nr_comms; i++)
				if (L.comms[i].n > L.comms[best].n)
					best = i;
			if (L.nr_comms)
				memcpy(st->top_comm, L.comms[best].name, sizeof(st->top_comm));
		}
	}
	fc_release(&L.fc);
	free(L.ev_of_attr);
	pk_session__free(ses);
	if (err) {
		pk_profile__free(L.p);
		errno = -err;
		return NULL;
	}
	return L.p;
}
