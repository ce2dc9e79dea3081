/* SPDX-License-Identifier: MIT */
/*
 * tool/profile-load.c - the glue from a perf.data file to a pk_profile: read records,
 * put each FINISHED_ROUND's records in time order, feed the machine model, symbolise the
 * call chain of every sample (caching frames per (pid, cpumode, address)) and hand the
 * frames to the profile builder.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "builtin.h"
#include "profile-load.h"

#define MAX_CHAIN 1024
#define PK_MIN_SZ(a, b) ((size_t)(a) < (size_t)(b) ? (size_t)(a) : (size_t)(b))
#define PK_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_INLINE 16
#define ROUND_CAP (256u << 20) /* flush a round early beyond this many buffered bytes */

/* ---- frame cache: (pid, cpumode, ip) -> frame ids in a pool ---- */

struct fc_ent {
	uint64_t ip;
	uint32_t pid;
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

static uint64_t fc_hash(uint64_t ip, uint32_t pid, uint8_t cm)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)pid << 8 | cm) * 0xc2b2ae3d27d4eb4fULL;
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

static struct fc_ent *fc_find(struct fcache *c, uint64_t ip, uint32_t pid, uint8_t cm)
{
	if (!c->e)
		return NULL;
	for (size_t j = fc_hash(ip, pid, cm) & c->mask;; j = (j + 1) & c->mask) {
		struct fc_ent *e = &c->e[j];
		if (!e->used)
			return NULL;
		if (e->ip == ip && e->pid == pid && e->cpumode == cm)
			return e;
	}
}

static int fc_insert(struct fcache *c, uint64_t ip, uint32_t pid, uint8_t cm,
		     const uint32_t *ids, uint16_t nr)
{
	if (!c->e || (c->n + 1) * 10 > (c->mask + 1) * 7) {
		size_t nslots = c->e ? (c->mask + 1) * 2 : 4096;
		struct fc_ent *ne = calloc(nslots, sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		for (size_t i = 0; c->e && i <= c->mask; i++) {
			if (!c->e[i].used)
				continue;
			size_t j = fc_hash(c->e[i].ip, c->e[i].pid, c->e[i].cpumode) & (nslots - 1);
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
	size_t j = fc_hash(ip, pid, cm) & c->mask;
	while (c->e[j].used)
		j = (j + 1) & c->mask;
	c->e[j] = (struct fc_ent){ .ip = ip, .pid = pid, .cpumode = cm, .used = 1, .nr = nr,
				   .first = (uint32_t)c->nr_pool };
	memcpy(c->pool + c->nr_pool, ids, nr * sizeof(*ids));
	c->nr_pool += nr;
	c->n++;
	return 0;
}

/* ---- loading ---- */

struct loader {
	const struct pk_load_opts *o;
	struct pk_data_reader *r;
	struct pk_machine *m;
	struct pk_profile *p;
	struct fcache fc;
	int *ev_of_attr;        /* attr index -> profile event, -1 = skipped */
	size_t nr_attrs;
	struct pk_chain_entry chain[MAX_CHAIN];
	uint32_t ids[MAX_CHAIN * 2];
	/* the current round */
	uint8_t *buf;
	size_t len, cap;
	struct rrec { uint64_t time; size_t off; uint32_t seq; int attr; } *recs;
	size_t nr_recs, cap_recs;
	uint64_t last_time;
	uint64_t first_sample_time, last_sample_time;
	uint64_t nr_samples, nr_unresolved;
	uint64_t last_map_start, last_map_end; /* the mapping last described to the profile */
};

static const char *event_name(const struct pk_data_attr *a, char *buf, size_t len)
{
	if (a->name && *a->name)
		return a->name;
	const struct perf_event_attr *at = &a->attr.attr;
	size_t n = 0;
	const struct pk_event_name *t = NULL;
	if (at->type == PERF_TYPE_HARDWARE)
		t = pk_hw_event_names(&n);
	else if (at->type == PERF_TYPE_SOFTWARE)
		t = pk_sw_event_names(&n);
	for (size_t i = 0; t && i < n; i++)
		if (t[i].config == at->config)
			return t[i].name;
	snprintf(buf, len, "event-%u:0x%llx", at->type, (unsigned long long)at->config);
	return buf;
}

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
static int frames_of(struct loader *L, uint32_t pid, uint32_t tid, uint64_t ip, uint8_t cm,
		     uint32_t *out, size_t room)
{
	struct fc_ent *e = fc_find(&L->fc, ip, pid, cm);
	if (e) {
		size_t n = PK_MIN_SZ(e->nr, room);
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
	if (!fr.name && !L->o->unknown_hex)
		fr.name = "[unknown]";
	/* pprof mappings: the real mapping (start, limit, file offset) of each object */
	if (L->o->addresses && found != -ENOENT && loc.dso_name &&
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
	if (L->o->srcline && loc.dso && loc.sym && !loc.kernel &&
	    pk_dso__srcline(loc.dso, loc.dso_addr, &file, &line) == 0) {
		fr.file = file;
		fr.line = line;
	}
	if (L->o->inlines && loc.dso && loc.sym && !loc.kernel) {
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
	if (n && fc_insert(&L->fc, ip, pid, cm, ids, (uint16_t)n))
		return -ENOMEM;
	n = (int)PK_MIN_SZ((size_t)n, room);
	memcpy(out, ids, (size_t)n * sizeof(*out));
	return n;
}

static int do_sample(struct loader *L, const struct perf_event_header *hdr,
		     const struct pk_data_attr *a)
{
	int pev = L->ev_of_attr[a->idx];
	if (pev < 0 || !a->layout_ok)
		return 0;
	struct pk_sample s;
	if (pk_sample__decode(&a->layout, hdr, &s, NULL))
		return 0; /* the reader logged the corrupt record already, if it was one */
	int nr;
	if (L->o->no_callchain || !(s.type & PERF_SAMPLE_CALLCHAIN)) {
		L->chain[0].ip = s.ip;
		L->chain[0].cpumode = s.cpumode;
		nr = 1;
	} else {
		nr = pk_machine__callchain(L->m, &s, L->chain, MAX_CHAIN);
		if (nr < 0)
			nr = 0;
	}
	size_t nids = 0;
	for (int i = 0; i < nr && nids < PK_ARRAY_LEN(L->ids); i++) {
		int k = frames_of(L, s.pid, s.tid, L->chain[i].ip, L->chain[i].cpumode,
				  L->ids + nids, PK_ARRAY_LEN(L->ids) - nids);
		if (k < 0)
			return k;
		nids += (size_t)k;
	}
	uint64_t period = 1;
	if (s.type & PERF_SAMPLE_PERIOD)
		period = s.period;
	else if (!a->attr.attr.freq && a->attr.attr.sample_period)
		period = a->attr.attr.sample_period;
	struct pk_export_sample es = {
		.event = (uint32_t)pev,
		.pid = s.pid,
		.tid = s.tid,
		.comm = pk_machine__comm_of(L->m, s.tid),
		.time = s.time,
		.period = period,
	};
	if (!L->nr_samples || s.time < L->first_sample_time)
		L->first_sample_time = s.time;
	if (s.time > L->last_sample_time)
		L->last_sample_time = s.time;
	L->nr_samples++;
	return pk_profile__add_sample_ids(L->p, &es, L->ids, nids);
}

static int process(struct loader *L, const struct perf_event_header *hdr, int attr_idx)
{
	const struct pk_data_attr *a = attr_idx >= 0 ? pk_data_reader__attr(L->r, (size_t)attr_idx)
						     : NULL;
	if (hdr->type == PERF_RECORD_SAMPLE)
		return a ? do_sample(L, hdr, a) : 0;
	if (hdr->type >= PERF_RECORD_MAX && hdr->type != PK_RECORD_CALLCHAIN_DEFERRED)
		return 0;
	struct pk_record rec;
	if (pk_record__decode(a && a->layout_ok ? &a->layout : NULL, hdr, &rec, NULL))
		return 0;
	switch (rec.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		fc_clear(&L->fc); /* an address may now mean something else */
		break;
	case PERF_RECORD_COMM:
		if (rec.comm.exec)
			fc_clear(&L->fc);
		break;
	default:
		break;
	}
	return pk_machine__process(L->m, &rec) == -ENOMEM ? -ENOMEM : 0;
}

static int cmp_rrec(const void *x, const void *y)
{
	const struct rrec *a = x, *b = y;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int flush_round(struct loader *L)
{
	qsort(L->recs, L->nr_recs, sizeof(*L->recs), cmp_rrec);
	int err = 0;
	for (size_t i = 0; i < L->nr_recs && !err; i++)
		err = process(L, (const struct perf_event_header *)(L->buf + L->recs[i].off),
			      L->recs[i].attr);
	L->nr_recs = 0;
	L->len = 0;
	return err;
}

/* Time of a record for ordering; records without one keep their place. */
static uint64_t record_time(struct loader *L, const struct pk_data_event *ev)
{
	const struct pk_data_attr *a = ev->attr;
	if (a && a->layout_ok && (a->layout.sample_type & PERF_SAMPLE_TIME)) {
		if (ev->hdr->type == PERF_RECORD_SAMPLE) {
			struct pk_sample s;
			if (!pk_sample__decode(&a->layout, ev->hdr, &s, NULL))
				return L->last_time = s.time;
		} else if (ev->hdr->type < PERF_RECORD_MAX) {
			struct pk_sample_id sid;
			if (!pk_record__sample_id(&a->layout, ev->hdr, &sid) &&
			    (sid.type & PERF_SAMPLE_TIME) && sid.time)
				return L->last_time = sid.time;
		}
	}
	return L->last_time;
}

static int buffer_record(struct loader *L, const struct pk_data_event *ev)
{
	size_t sz = ev->hdr->size;
	if (L->len + sz > L->cap) {
		size_t ncap = L->cap ? L->cap * 2 : (1u << 20);
		while (ncap < L->len + sz)
			ncap *= 2;
		uint8_t *nb = realloc(L->buf, ncap);
		if (!nb)
			return -ENOMEM;
		L->buf = nb;
		L->cap = ncap;
	}
	if (L->nr_recs == L->cap_recs) {
		size_t ncap = L->cap_recs ? L->cap_recs * 2 : 4096;
		struct rrec *nr = realloc(L->recs, ncap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		L->recs = nr;
		L->cap_recs = ncap;
	}
	L->recs[L->nr_recs] = (struct rrec){ .time = record_time(L, ev), .off = L->len,
					     .seq = (uint32_t)L->nr_recs,
					     .attr = ev->attr ? ev->attr->idx : -1 };
	L->nr_recs++;
	memcpy(L->buf + L->len, ev->hdr, sz);
	L->len += (sz + 7) & ~(size_t)7;
	return 0;
}

static bool same_host(const struct pk_data_env *env)
{
	struct utsname u;
	if (!env->osrelease)
		return true; /* no way to tell: assume it was recorded here */
	return uname(&u) == 0 && !strcmp(u.release, env->osrelease);
}

struct pk_profile *pk_load_profile(const char *path, const struct pk_load_opts *o)
{
	struct loader L;
	memset(&L, 0, sizeof(L));
	L.o = o;
	L.r = pk_data_reader__open(path, NULL);
	if (!L.r) {
		pk_tool_error("cannot read '%s': %s", path, pk_strerror(errno));
		return NULL;
	}
	const struct pk_data_env *env = pk_data_reader__env(L.r);
	PK_OPTS(pk_machine_opts, mo, .host = same_host(env));
	L.m = pk_machine__new(&mo);
	PK_OPTS(pk_profile_opts, po, .timeline = o->timeline, .root_comm = o->root_comm,
		.addresses = o->addresses);
	L.p = pk_profile__new(&po);
	L.nr_attrs = pk_data_reader__nr_attrs(L.r);
	L.ev_of_attr = calloc(L.nr_attrs + 64, sizeof(*L.ev_of_attr));
	int err = 0;
	if (!L.m || !L.p || !L.ev_of_attr) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < env->nr_build_ids; i++) {
		const struct pk_data_build_id *b = &env->build_ids[i];
		if (!b->filename)
			continue;
		pk_machine__add_build_id(L.m, b->filename, b->build_id, b->build_id_size);
		if (o->addresses) /* pprof mappings carry build ids */
			pk_profile__set_dso(L.p, b->filename, 0, 0, 0, b->build_id, b->build_id_size);
	}
	/* events: every attr with the same name is one event (perf opens one per CPU) */
	for (size_t i = 0; i < L.nr_attrs; i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(L.r, i);
		char buf[64];
		const char *name = event_name(a, buf, sizeof(buf));
		L.ev_of_attr[i] = -1;
		if (o->event && strcmp(o->event, name))
			continue;
		for (size_t j = 0; j < i; j++) {
			const struct pk_data_attr *b = pk_data_reader__attr(L.r, j);
			char buf2[64];
			if (L.ev_of_attr[j] >= 0 && !strcmp(event_name(b, buf2, sizeof(buf2)), name))
				L.ev_of_attr[i] = L.ev_of_attr[j];
		}
		if (L.ev_of_attr[i] >= 0)
			continue;
		const struct perf_event_attr *at = &a->attr.attr;
		bool ns = at->type == PERF_TYPE_SOFTWARE &&
			  (at->config == PERF_COUNT_SW_CPU_CLOCK || at->config == PERF_COUNT_SW_TASK_CLOCK);
		int ev = pk_profile__add_event(L.p, name, ns ? "nanoseconds" : "count");
		if (ev < 0) {
			err = ev;
			goto out;
		}
		L.ev_of_attr[i] = ev;
	}
	if (o->event && !pk_profile__nr_events(L.p)) {
		pk_tool_error("'%s' has no event named '%s'", path, o->event);
		err = -ENOENT;
		goto out;
	}
	struct pk_data_event ev;
	int rc;
	while ((rc = pk_data_reader__next(L.r, &ev)) > 0) {
		if (ev.hdr->type == PK_RECORD_FINISHED_ROUND) {
			err = flush_round(&L);
		} else if (ev.hdr->type < PK_RECORD_HEADER_ATTR ||
			   ev.hdr->type == PK_RECORD_CALLCHAIN_DEFERRED) {
			size_t na = pk_data_reader__nr_attrs(L.r);
			if (na > L.nr_attrs) {
				/* attrs announced later in a pipe: not part of the profile */
				pk_tool_warn("events added in the middle of a pipe are ignored");
				int *n = realloc(L.ev_of_attr, (na + 1) * sizeof(*n));
				if (!n) {
					err = -ENOMEM;
					break;
				}
				for (size_t i = L.nr_attrs; i < na; i++)
					n[i] = -1;
				L.ev_of_attr = n;
				L.nr_attrs = na;
			}
			if (ev.attr && (size_t)ev.attr->idx >= L.nr_attrs)
				continue;
			err = buffer_record(&L, &ev);
			if (!err && L.len > ROUND_CAP)
				err = flush_round(&L);
		}
		if (err)
			break;
	}
	if (!err)
		err = flush_round(&L);
	if (rc < 0 && !err)
		pk_tool_warn("'%s' is corrupt after %" PRIu64 " samples: %s (using what was read)",
			     path, L.nr_samples, pk_strerror(rc));
	if (pk_data_reader__truncated(L.r))
		pk_tool_warn("'%s' was not finished (truncated); using the samples read", path);
	if (!err) {
		uint64_t dur = L.last_sample_time - L.first_sample_time;
		pk_profile__set_info(L.p, path, 0, dur);
	}
out:
	if (err == -ENOMEM)
		pk_tool_error("out of memory");
	else if (err < 0 && err != -ENOENT)
		pk_tool_error("cannot load '%s': %s", path, pk_strerror(err));
	fc_release(&L.fc);
	free(L.buf);
	free(L.recs);
	free(L.ev_of_attr);
	pk_machine__free(L.m);
	pk_data_reader__free(L.r);
	if (err) {
		pk_profile__free(L.p);
		return NULL;
	}
	return L.p;
}
