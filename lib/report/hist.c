/* SPDX-License-Identifier: MIT */
/*
 * lib/report/hist.c - aggregation of samples into histogram entries and call-chain trees.
 *
 * Everything is interned to small integers first: strings (comm, DSO, symbol, srcline),
 * frames (DSO + symbol, or DSO + address when unresolved), and resolved addresses (a
 * cache keyed by pid, map generation, cpumode and ip, so that each distinct address of a
 * process is symbolised once). Entries are then found by hashing a tuple of integers, and
 * call-chain nodes by hashing (parent node, frame). Memory grows with distinct entries,
 * nodes and addresses, never with the number of samples.
 */
#include "report-internal.h"

/* ---- generations ---- */

static uint32_t *gen_slot(struct pk_report *rep, uint32_t pid, bool create)
{
	if (create && (!rep->gens || (rep->gen_n + 1) * 2 > rep->gen_mask + 1)) {
		size_t ns = rep->gens ? (rep->gen_mask + 1) * 2 : 256;
		__typeof__(rep->gens) n = calloc(ns, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; rep->gens && i <= rep->gen_mask; i++) {
			if (!rep->gens[i].gen)
				continue;
			size_t j = pk_mix64(rep->gens[i].pid) & (ns - 1);
			while (n[j].gen)
				j = (j + 1) & (ns - 1);
			n[j] = rep->gens[i];
		}
		free(rep->gens);
		rep->gens = n;
		rep->gen_mask = ns - 1;
	}
	if (!rep->gens)
		return NULL;
	for (size_t j = pk_mix64(pid) & rep->gen_mask;; j = (j + 1) & rep->gen_mask) {
		if (!rep->gens[j].gen) {
			if (!create)
				return NULL;
			rep->gens[j].pid = pid;
			rep->gens[j].gen = 1;
			rep->gen_n++;
			return &rep->gens[j].gen;
		}
		if (rep->gens[j].pid == pid)
			return &rep->gens[j].gen;
	}
}

static void bump_gen(struct pk_report *rep, uint32_t pid)
{
	uint32_t *g = gen_slot(rep, pid, true);
	if (g)
		(*g)++;
	else
		rep->kgen++; /* no memory: invalidate everything instead */
}

/* ---- frames and resolution ---- */

static bool frame_same(const struct frame *g, const struct frame *f)
{
	if (g->dso != f->dso || !g->sym != !f->sym || g->kernel != f->kernel ||
	    g->nomap != f->nomap || g->srcline != f->srcline || g->inlined != f->inlined)
		return false;
	if (!f->sym)
		return g->addr == f->addr;
	if (f->inlined && g->sym != f->sym)
		return false;
	return g->sym_start == f->sym_start && g->sym_len == f->sym_len;
}

static uint64_t frame_hash(const struct frame *f)
{
	return pk_mix64(((uint64_t)f->dso << 32 | (f->sym ? 1u : 0u) | (f->inlined ? f->sym << 1 : 0)) ^
		     pk_mix64(f->sym ? f->sym_start * 31 + f->sym_len : f->addr) ^
		     (f->kernel ? 0x5bd1e995 : 0) ^ ((uint64_t)f->srcline << 17));
}

/*
 * The lookup indexes of frames, nodes and entries are only needed while samples are
 * aggregated; pk_report__finish releases them (memory for the output phase) and they are
 * rebuilt here from the arrays when more samples come.
 */
static int index_rebuild(struct pk_index *x, size_t n, uint64_t (*hash)(const void *, size_t, bool *),
			 const void *ctx)
{
	if (x->slot || !n)
		return 0;
	size_t ns = 1024;
	while (ns * 3 <= (n + 1) * 4)
		ns *= 2;
	x->slot = pk_arr_calloc(ns * sizeof(*x->slot));
	x->mask = ns - 1;
	x->n = 0;
	if (!x->slot) {
		pk_index_release(x);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		bool skip = false;
		uint64_t h = hash(ctx, i, &skip);
		if (skip)
			continue;
		if (pk_index_grow(x))
			return -ENOMEM;
		pk_index_put(x, h, (uint32_t)i);
	}
	return 0;
}

static uint64_t frame_hash_at(const void *ctx, size_t i, bool *skip)
{
	(void)skip;
	return frame_hash(&((const struct pk_report *)ctx)->frames[i]);
}

/* Frames are perf's sort-key identities: DSO by short name, a symbol by its address
 * range (so identical binaries at different paths merge, as in perf report). */
static int frame_intern(struct pk_report *rep, const struct frame *f, uint32_t *id)
{
	uint64_t h = frame_hash(f);
	if (index_rebuild(&rep->fidx, rep->nr_frames, frame_hash_at, rep))
		return -ENOMEM;
	if (rep->fidx.slot) {
		PK_IX_FOR(&rep->fidx, h, j) {
			const struct frame *g = &rep->frames[PK_IX_ID(rep->fidx.slot[j])];
			if (frame_same(g, f)) {
				*id = PK_IX_ID(rep->fidx.slot[j]);
				return 0;
			}
		}
	}
	if (pk_index_grow(&rep->fidx) ||
	    pk_grow((void **)&rep->frames, &rep->cap_frames, rep->nr_frames + 1, sizeof(*f)))
		return -ENOMEM;
	uint32_t nid = (uint32_t)rep->nr_frames++;
	rep->frames[nid] = *f;
	rep->frames[nid].node1 = NONE32;
	rep->frames[nid].ent1 = NONE32;
	pk_index_put(&rep->fidx, h, nid);
	*id = nid;
	return 0;
}

/* the map generation of pid (its maps and the kernel's), part of every cache key */
static uint32_t gen_of(struct pk_report *rep, uint32_t pid)
{
	if (rep->gc_epoch == rep->cepoch && rep->gc_pid == pid)
		return rep->gc_gen;
	uint32_t *gp = gen_slot(rep, pid, false);
	uint32_t g = (gp ? *gp : 0) + rep->kgen * 0x10001u;
	rep->gc_pid = pid;
	rep->gc_gen = g;
	rep->gc_epoch = rep->cepoch;
	return g;
}

#define RHOT_NOMAP UINT32_MAX /* rhot.rent of an address outside every map: no rent */

/*
 * The resolved-address entry of ip and its frame id (*fid: from the hot cache without
 * touching the entry, which is one cache miss less per frame of a call chain).
 * An address that no map covers gets no entry (*out = NULL): its frame is all there is to
 * know, and the frame index already is a cache of it. Such addresses are typically
 * garbage callers (a chain walked through code built without frame pointers), nearly
 * each one new: an entry and its index slot were two more cache misses and ~60 bytes
 * each, for nothing.
 */
static int resolve_slow(struct pk_report *rep, uint32_t pid, uint32_t tid, uint32_t gen,
			uint64_t ip, uint8_t cm, size_t hot, struct rent **out, uint32_t *fid);

static inline size_t rhot_slot(uint32_t pid, uint64_t ip, uint8_t cm)
{
	return (size_t)(((ip ^ (uint64_t)pid << 40 ^ (uint64_t)cm << 56) * 0x9e3779b97f4a7c15ULL) >>
			(64 - RHOT_BITS));
}

static int nomap_frame(struct pk_report *rep, uint64_t ip, uint8_t cm, uint32_t *fid)
{
	if (!rep->unknown_id && pk_str_intern(&rep->strs, "[unknown]", &rep->unknown_id))
		return -ENOMEM;
	struct frame f = { .dso = rep->unknown_id, .dso_long = rep->unknown_id, .addr = ip,
			   .nomap = true,
			   .kernel = cm == PK_CPUMODE_KERNEL || cm == PK_CPUMODE_GUEST_KERNEL };
	return frame_intern(rep, &f, fid);
}

static inline int resolve(struct pk_report *rep, uint32_t pid, uint32_t tid, uint32_t gen,
			  uint64_t ip, uint8_t cm, struct rent **out, uint32_t *fid)
{
	if (cm == PK_CPUMODE_KERNEL) {
		/* a kernel address resolves the same in every process (only the kernel's
		 * maps are searched): one entry for all, keyed as pid 0 with no map
		 * generation of its own. A system-wide recording of a compile had 2370
		 * processes, and the kernel's frames in most of their call chains; keyed by
		 * process, each of those was resolved again in each */
		pid = 0;
		gen = rep->kgen * 0x10001u;
	}
	const __typeof__(rep->gap[0]) *g = &rep->gap[gap_slot(pid)];
	if (cm == PK_CPUMODE_USER && g->valid && ip >= g->lo && ip < g->hi && g->pid == pid &&
	    g->gen == gen) {
		/* in the unmapped range of the last unmapped address: a garbage caller, new
		 * nearly every sample; its hot-cache slot would be a miss, and is left to
		 * the addresses that repeat */
		*out = NULL;
		return nomap_frame(rep, ip, cm, fid);
	}
	size_t hot = rhot_slot(pid, ip, cm);
	if (rep->rhot) {
		const struct rhot *c = &rep->rhot[hot];
		if (c->rent && c->ip == ip && c->pid == pid && c->gen == gen && c->cm == cm) {
			*out = c->rent == RHOT_NOMAP ? NULL : &rep->rents[c->rent - 1];
			*fid = c->frame;
			return 0;
		}
	}
	return resolve_slow(rep, pid, tid, gen, ip, cm, hot, out, fid);
}

static inline size_t dent_hash(const struct pk_dso *dso, uint64_t dso_addr, uint64_t off,
			       bool kernel)
{
	return (size_t)pk_mix64((uintptr_t)dso ^ dso_addr * 0x9e3779b97f4a7c15ULL ^
			     off * 0xc2b2ae3d27d4eb4fULL ^ kernel);
}

/* The slot of (dso, dso_addr, off, kernel) in dcache: its entry, or the empty slot to
 * fill (NULL only without memory: then nothing is cached). */
static struct dent *dcache_find(struct pk_report *rep, const struct pk_dso *dso,
				uint64_t dso_addr, uint64_t off, bool kernel)
{
	if (!rep->dcache || (rep->dcache_n + 1) * 2 > rep->dcache_mask + 1) {
		size_t cap = rep->dcache ? (rep->dcache_mask + 1) * 2 : 4096;
		struct dent *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; rep->dcache && i <= rep->dcache_mask; i++) {
			const struct dent *e = &rep->dcache[i];
			if (!e->rent)
				continue;
			size_t j = dent_hash(e->dso, e->dso_addr, e->off, e->kernel) & (cap - 1);
			while (n[j].rent)
				j = (j + 1) & (cap - 1);
			n[j] = *e;
		}
		free(rep->dcache);
		rep->dcache = n;
		rep->dcache_mask = cap - 1;
	}
	size_t j = dent_hash(dso, dso_addr, off, kernel) & rep->dcache_mask;
	for (;; j = (j + 1) & rep->dcache_mask) {
		struct dent *e = &rep->dcache[j];
		if (!e->rent || (e->dso == dso && e->dso_addr == dso_addr && e->off == off &&
				  e->kernel == kernel))
			return e;
	}
}

static void dcache_put(struct pk_report *rep, struct dent *e, const struct pk_dso *dso,
		       uint64_t dso_addr, uint64_t off, bool kernel, uint32_t rent, uint32_t frame)
{
	*e = (struct dent){ .dso = dso, .dso_addr = dso_addr, .off = off, .kernel = kernel,
			    .rent = rent + 1, .frame = frame & 0x7fffffffu };
	rep->dcache_n++;
}

/* The frame of a mapped address (loc from pk_machine_resolve_map): its symbol looked up,
 * names interned. */
static int dso_frame(struct pk_report *rep, struct pk_addr_loc *loc, uint64_t off,
		     uint32_t *fid)
{
	struct frame f = { 0 };
	rep->nr_lookups++;
	const char *sname = pk_dso__short_name(loc->dso);
	const char *lname = loc->dso_name ? loc->dso_name : sname;
	if (pk_str_intern(&rep->strs, sname, &f.dso) || pk_str_intern(&rep->strs, lname, &f.dso_long))
		return -ENOMEM;
	loc->sym = pk_dso__symbol(loc->dso, loc->dso_addr, &loc->sym_start, &loc->sym_size);
	if (loc->sym && pk_str_intern(&rep->strs, loc->sym, &f.sym))
		return -ENOMEM;
	f.kernel = loc->kernel;
	f.addr = loc->dso_addr;
	if (!loc->sym && !f.kernel) {
		/* an unresolved address in a file map shows as perf shows it: the file
		 * offset (ip - map start + pgoff), which differs from the ELF address in a
		 * non-PIE executable; anonymous maps keep the absolute address */
		if (pk_dso__offset_to_addr(loc->dso, off) == loc->dso_addr)
			f.addr = off;
	}
	if (loc->sym) {
		f.sym_start = loc->sym_start;
		f.sym_len = (uint32_t)PK_MIN(loc->sym_size, (uint64_t)UINT32_MAX);
	}
	return frame_intern(rep, &f, fid);
}

/* resolve() past the hot cache (kept out of line: it is rarely needed, and large) */
static __attribute__((noinline)) int resolve_slow(struct pk_report *rep, uint32_t pid,
						  uint32_t tid, uint32_t gen, uint64_t ip,
						  uint8_t cm, size_t hot, struct rent **out,
						  uint32_t *fid)
{
	if (!rep->rhot) {
		rep->rhot = calloc((size_t)1 << RHOT_BITS, sizeof(*rep->rhot));
		pk_mem_prefault(rep->rhot, ((size_t)1 << RHOT_BITS) * sizeof(*rep->rhot));
	}
	if (rep->unknown_id && rep->fidx.slot) {
		/* in case no map covers ip (a garbage caller is seen once, see above): its
		 * frame's index slot, asked for while the maps are searched */
		struct frame g = { .dso = rep->unknown_id, .dso_long = rep->unknown_id,
				   .addr = ip, .nomap = true,
				   .kernel = cm == PK_CPUMODE_KERNEL || cm == PK_CPUMODE_GUEST_KERNEL };
		__builtin_prefetch(&rep->fidx.slot[(size_t)(frame_hash(&g) >> 32) & rep->fidx.mask]);
	}
	struct pk_addr_loc loc;
	memset(&loc, 0, sizeof(loc));
	pk_machine_resolve_map(rep->m, pid, tid, ip, cm, &loc);
	if (!loc.dso) {
		if (nomap_frame(rep, ip, cm, fid))
			return -ENOMEM;
		if (cm == PK_CPUMODE_USER && loc.map_end > loc.map_start) {
			__typeof__(rep->gap[0]) *g = &rep->gap[gap_slot(pid)];
			g->lo = loc.map_start;
			g->hi = loc.map_end;
			g->pid = pid;
			g->gen = gen;
			g->valid = true;
		}
		if (rep->rhot)
			rep->rhot[hot] = (struct rhot){ .ip = ip, .pid = pid, .gen = gen, .cm = cm,
							.rent = RHOT_NOMAP, .frame = *fid };
		*out = NULL;
		return 0;
	}
	/* the file offset: an unresolved address in a file map shows as perf shows it (see
	 * dso_frame), and it is part of the DSO-address key */
	uint64_t off = ip - loc.map_start + loc.map_pgoff;
	struct dent *d = dcache_find(rep, loc.dso, loc.dso_addr, off, loc.kernel);
	uint32_t nid;
	if (d && d->rent) {
		nid = d->rent - 1;
		*fid = d->frame;
	} else {
		if (dso_frame(rep, &loc, off, fid) ||
		    pk_grow((void **)&rep->rents, &rep->cap_rents, rep->nr_rents + 1,
			 sizeof(struct rent)))
			return -ENOMEM;
		nid = (uint32_t)rep->nr_rents++;
		rep->rents[nid] = (struct rent){ .frame = *fid, .dso = loc.dso,
						 .dso_addr = loc.dso_addr, .inl_first = -1 };
		if (d && *fid <= 0x7fffffffu)
			dcache_put(rep, d, loc.dso, loc.dso_addr, off, loc.kernel, nid, *fid);
	}
	if (rep->rhot)
		rep->rhot[hot] = (struct rhot){ .ip = ip, .pid = pid, .gen = gen, .cm = cm,
						.rent = nid + 1, .frame = *fid };
	*out = &rep->rents[nid];
	return 0;
}

/* srcline string id of a resolved address ("file.c:12", basename as perf prints it; a
 * DSO-relative address when there is no line information). */
static uint32_t srcline_of(struct pk_report *rep, struct rent *e, uint32_t fid)
{
	if (e && e->srcline)
		return e->srcline;
	char buf[512];
	const char *file = NULL;
	unsigned int line = 0;
	const struct frame *f = &rep->frames[fid];
	if (!e) {
		/* outside every map: the address (not cached: the string table is the cache) */
		snprintf(buf, sizeof(buf), "%s[%" PRIx64 "]", pk_str_get(&rep->strs, f->dso), f->addr);
	} else if (e->dso && !f->kernel && pk_dso__srcline(e->dso, e->dso_addr, &file, &line) == 0 && file) {
		const char *b = strrchr(file, '/');
		snprintf(buf, sizeof(buf), "%s:%u", b ? b + 1 : file, line);
	} else if (f->sym && e->dso_addr >= f->sym_start) {
		/* no line information: perf's "symbol+offset" */
		snprintf(buf, sizeof(buf), "%s+%" PRIu64, pk_str_get(&rep->strs, f->sym),
			 e->dso_addr - f->sym_start);
	} else {
		snprintf(buf, sizeof(buf), "%s[%" PRIx64 "]", pk_str_get(&rep->strs, f->dso), f->addr);
	}
	uint32_t id = 0;
	if (pk_str_intern(&rep->strs, buf, &id))
		return 0;
	if (e)
		e->srcline = id;
	return id;
}

/* ---- hists, entries, nodes ---- */

static struct hist *hist_get(struct pk_report *rep, int idx, const char *name)
{
	if (idx < 0 || idx > 65535)
		return NULL;
	if ((size_t)idx >= rep->nr_hists) {
		struct hist *n = realloc(rep->hists, ((size_t)idx + 1) * sizeof(*n));
		if (!n)
			return NULL;
		memset(n + rep->nr_hists, 0, ((size_t)idx + 1 - rep->nr_hists) * sizeof(*n));
		rep->hists = n;
		rep->nr_hists = (size_t)idx + 1;
	}
	struct hist *h = &rep->hists[idx];
	if (!h->used) {
		h->used = true;
		h->name = strdup(name ? name : "unknown");
		h->pub.name = h->name;
	}
	return h;
}

static uint64_t hkey_hash(const struct hkey *k)
{
	uint64_t h = pk_mix64((uint64_t)k->comm << 32 | k->pid);
	h = pk_mix64(h ^ ((uint64_t)k->tid << 32 | k->cpu));
	h = pk_mix64(h ^ ((uint64_t)k->frame << 32 | k->dso));
	return pk_mix64(h ^ k->srcline);
}

static int node_new(struct pk_report *rep, uint32_t parent, uint32_t frame, uint32_t *id)
{
	if (pk_grow((void **)&rep->nodes, &rep->cap_nodes, rep->nr_nodes + 1, sizeof(struct node)))
		return -ENOMEM;
	*id = (uint32_t)rep->nr_nodes++;
	rep->nodes[*id] = (struct node){ .parent = parent, .frame = frame, .kid1 = NONE32 };
	return 0;
}

static uint64_t node_hash_at(const void *ctx, size_t i, bool *skip)
{
	const struct node *n = &((const struct pk_report *)ctx)->nodes[i];
	*skip = n->parent == NONE32; /* roots are found through their entry */
	return pk_mix64((uint64_t)n->parent << 32 | n->frame);
}

/*
 * The child of `parent` for `frame`. A node is found in one of three places: it is the
 * first child made under its parent (parent's kid1), or the first node made for its frame
 * (the frame's node1), or else in the node index nidx. The first two are plain reads of
 * memory written nearby: a chain that is new beyond some point (a garbage caller address
 * of a chain walked without frame pointers: new nearly every sample) makes its nodes
 * without a probe of the big index, or a slot in it.
 */
static int node_child(struct pk_report *rep, uint32_t parent, uint32_t frame, uint32_t *id)
{
	uint32_t k1 = rep->nodes[parent].kid1;
	if (k1 == NONE32) {
		/* no child yet: nothing to look for */
		if (node_new(rep, parent, frame, id))
			return -ENOMEM;
		rep->nodes[parent].kid1 = *id;
		if (rep->frames[frame].node1 == NONE32)
			rep->frames[frame].node1 = *id;
		return 0;
	}
	if (rep->nodes[k1].frame == frame) {
		*id = k1;
		return 0;
	}
	uint32_t first = rep->frames[frame].node1;
	if (first == NONE32) {
		/* no node of this frame yet */
		if (node_new(rep, parent, frame, id))
			return -ENOMEM;
		rep->frames[frame].node1 = *id;
		return 0;
	}
	if (rep->nodes[first].parent == parent) {
		*id = first;
		return 0;
	}
	uint64_t h = pk_mix64((uint64_t)parent << 32 | frame);
	if (index_rebuild(&rep->nidx, rep->nr_nodes, node_hash_at, rep))
		return -ENOMEM;
	if (rep->nidx.slot) {
		PK_IX_FOR(&rep->nidx, h, j) {
			const struct node *n = &rep->nodes[PK_IX_ID(rep->nidx.slot[j])];
			if (n->parent == parent && n->frame == frame) {
				*id = PK_IX_ID(rep->nidx.slot[j]);
				return 0;
			}
		}
	}
	if (pk_index_grow(&rep->nidx) || node_new(rep, parent, frame, id))
		return -ENOMEM;
	pk_index_put(&rep->nidx, h, *id);
	return 0;
}

/* The child of `parent` for `frame` if there is one (node_child's look-up), else NONE32. */
static uint32_t node_find(struct pk_report *rep, uint32_t parent, uint32_t frame)
{
	uint32_t k1 = rep->nodes[parent].kid1;
	if (k1 == NONE32)
		return NONE32;
	if (rep->nodes[k1].frame == frame)
		return k1;
	uint32_t first = rep->frames[frame].node1;
	if (first == NONE32)
		return NONE32;
	if (rep->nodes[first].parent == parent)
		return first;
	if (index_rebuild(&rep->nidx, rep->nr_nodes, node_hash_at, rep) || !rep->nidx.slot)
		return NONE32;
	PK_IX_FOR(&rep->nidx, pk_mix64((uint64_t)parent << 32 | frame), j) {
		const struct node *nd = &rep->nodes[PK_IX_ID(rep->nidx.slot[j])];
		if (nd->parent == parent && nd->frame == frame)
			return PK_IX_ID(rep->nidx.slot[j]);
	}
	return NONE32;
}

/* The name table entry of function name `name` (a string id), made if absent; NULL when
 * out of memory. */
static struct iname *iname_get(struct pk_report *rep, uint32_t name)
{
	if (!rep->iname || (rep->iname_n + 1) * 2 > rep->iname_mask + 1) {
		size_t ns = rep->iname ? (rep->iname_mask + 1) * 2 : 256;
		struct iname *n = calloc(ns, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; rep->iname && i <= rep->iname_mask; i++) {
			if (!rep->iname[i].name)
				continue;
			size_t j = pk_mix64(rep->iname[i].name) & (ns - 1);
			while (n[j].name)
				j = (j + 1) & (ns - 1);
			n[j] = rep->iname[i];
		}
		free(rep->iname);
		rep->iname = n;
		rep->iname_mask = ns - 1;
	}
	for (size_t j = pk_mix64(name) & rep->iname_mask;; j = (j + 1) & rep->iname_mask) {
		struct iname *e = &rep->iname[j];
		if (e->name == name)
			return e;
		if (!e->name) {
			*e = (struct iname){ name, NONE32, NONE32 };
			rep->iname_n++;
			return e;
		}
	}
}

/*
 * perf's rule for call-chain nodes (match_chain, key "function"): two frames are the same
 * node if both are real symbols with the same DSO and start; if either is an inline
 * frame, if their function names are equal, whatever their DSOs and the functions they
 * were inlined into. So every inline frame of a name stands for one node key (the first
 * made), and a real symbol frame also matches a node of an inline frame of its name (and
 * the other way round). chain_child applies it; hist entries (--children rows) keep
 * their own identity.
 */
static int chain_child(struct pk_report *rep, uint32_t parent, uint32_t frame, uint32_t *id)
{
	uint32_t name = 0;
	bool inl = false;
	if (frame < rep->nr_nkey && rep->nkey[frame].canon != NONE32) {
		name = rep->nkey[frame].name;
		frame = rep->nkey[frame].canon;
		inl = true;
	} else if (rep->nr_nkey && rep->frames[frame].sym && !rep->frames[frame].kernel) {
		name = rep->frames[frame].sym;
	}
	if (!name)
		return node_child(rep, parent, frame, id);
	if ((*id = node_find(rep, parent, frame)) != NONE32)
		return 0;
	struct iname *e = iname_get(rep, name);
	if (!e)
		return -ENOMEM;
	uint32_t alt = inl ? e->real : e->inl;
	if (alt != NONE32 && (*id = node_find(rep, parent, alt)) != NONE32)
		return 0;
	if (!inl && e->real == NONE32)
		e->real = frame;
	return node_child(rep, parent, frame, id);
}

/* Record inline frame `frame` of function `name` (inlines_of). */
static int chain_key_inline(struct pk_report *rep, uint32_t frame, uint32_t name)
{
	if (frame >= rep->nr_nkey) {
		if (pk_grow((void **)&rep->nkey, &rep->cap_nkey, (size_t)frame + 1, sizeof(*rep->nkey)))
			return -ENOMEM;
		for (size_t i = rep->nr_nkey; i <= frame; i++)
			rep->nkey[i] = (struct nkey){ NONE32, 0 };
		rep->nr_nkey = (size_t)frame + 1;
	}
	if (rep->nkey[frame].canon != NONE32)
		return 0;
	struct iname *e = iname_get(rep, name);
	if (!e)
		return -ENOMEM;
	if (e->inl == NONE32)
		e->inl = frame;
	rep->nkey[frame] = (struct nkey){ e->inl, name };
	return 0;
}

static int chain_append(struct pk_report *rep, struct ent *e, const uint32_t *fr, size_t n,
			uint64_t period, uint64_t w)
{
	if (e->root == NONE32 && node_new(rep, NONE32, NONE32, &e->root))
		return -ENOMEM;
	uint32_t cur = e->root;
	if (n > e->max_depth)
		e->max_depth = (uint16_t)PK_MIN(n, (size_t)UINT16_MAX);
	rep->nodes[cur].period += period;
	rep->nodes[cur].samples += w;
	for (size_t i = 0; i < n; i++) {
		uint32_t c;
		if (chain_child(rep, cur, fr[i], &c))
			return -ENOMEM;
		rep->nodes[c].period += period;
		rep->nodes[c].samples += w;
		cur = c;
	}
	return 0;
}

static uint64_t ent_hash_at(const void *ctx, size_t i, bool *skip)
{
	(void)skip;
	return hkey_hash(&((const struct hist *)ctx)->ents[i].k);
}

static struct ent *entry_get(struct pk_report *rep, struct hist *h, const struct hkey *k,
			     uint32_t comm_id, int32_t pid, int32_t tid, int32_t cpu,
			     uint32_t frame, uint32_t srcline)
{
	/* With the frame in the key, the first entry of a frame is found through the frame
	 * (like the nodes, see node_child): an entry for a frame never seen before, such as
	 * a garbage caller address, is made without a probe of the entry index or a slot in
	 * it. */
	uint16_t hi = (uint16_t)(h - rep->hists);
	bool by_frame = k->frame != 0;
	bool indexed = true;
	if (by_frame) {
		const struct frame *fr = &rep->frames[frame];
		if (fr->ent1 == NONE32) {
			indexed = false;
		} else if (fr->ent1_hist == hi) {
			struct ent *e = &h->ents[fr->ent1];
			if (!memcmp(&e->k, k, sizeof(*k)))
				return e;
		}
	}
	uint64_t hh = 0;
	if (indexed) {
		hh = hkey_hash(k);
		if (index_rebuild(&h->eidx, h->nr_ents, ent_hash_at, h))
			return NULL;
		if (h->eidx.slot) {
			PK_IX_FOR(&h->eidx, hh, j) {
				struct ent *e = &h->ents[PK_IX_ID(h->eidx.slot[j])];
				if (!memcmp(&e->k, k, sizeof(*k)))
					return e;
			}
		}
		if (pk_index_grow(&h->eidx))
			return NULL;
	}
	if (pk_grow((void **)&h->ents, &h->cap_ents, h->nr_ents + 1, sizeof(struct ent)))
		return NULL;
	size_t nid = h->nr_ents++;
	struct ent *e = &h->ents[nid];
	*e = (struct ent){ .k = *k, .comm_id = comm_id, .pid = pid, .tid = tid, .cpu = cpu,
			   .frame = frame, .srcline = srcline, .root = NONE32, .last_seen = 0,
			   .kernel = rep->frames[frame].kernel };
	if (indexed) {
		pk_index_put(&h->eidx, hh, (uint32_t)nid);
	} else {
		rep->frames[frame].ent1 = (uint32_t)nid;
		rep->frames[frame].ent1_hist = hi;
	}
	rep->finished = false;
	return e;
}

static bool match_str(char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (s && !strcmp(list[i], s))
			return true;
	return false;
}

static bool match_int(const int32_t *list, size_t n, int32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

/* The frame of an unresolved callchain entry as perf keys cumulative entries: by the
 * absolute address (perf's self entries use the DSO-relative one). */
#define ABSC_BITS 12
static uint32_t frame_abs(struct pk_report *rep, uint32_t fid, uint64_t ip)
{
	if (rep->frames[fid].sym || rep->frames[fid].addr == ip)
		return fid;
	struct absc *c = NULL;
	if (!rep->absc)
		rep->absc = calloc((size_t)1 << ABSC_BITS, sizeof(*rep->absc));
	if (rep->absc) {
		c = &rep->absc[((ip ^ (uint64_t)fid << 40) * 0x9e3779b97f4a7c15ULL) >> (64 - ABSC_BITS)];
		if (c->abs && c->ip == ip && c->fid == fid)
			return c->abs - 1;
	}
	struct frame f = rep->frames[fid];
	f.addr = ip;
	uint32_t id;
	if (frame_intern(rep, &f, &id))
		return fid;
	if (c)
		*c = (struct absc){ .ip = ip, .fid = fid, .abs = id + 1 };
	return id;
}

/* Entry filters (--dso, --symbols) on a frame. */
static bool frame_passes(struct pk_report *rep, uint32_t fid)
{
	const struct frame *f = &rep->frames[fid];
	if (rep->nr_dsos && !match_str(rep->dsos, rep->nr_dsos, pk_str_get(&rep->strs, f->dso)) &&
	    !match_str(rep->dsos, rep->nr_dsos, pk_str_get(&rep->strs, f->dso_long)))
		return false;
	if (rep->nr_symbols && !match_str(rep->symbols, rep->nr_symbols, pk_str_get(&rep->strs, f->sym)))
		return false;
	return true;
}

static void count_unresolved(struct pk_report *rep, uint32_t fid, uint64_t w)
{
	const struct frame *f = &rep->frames[fid];
	if (f->sym)
		return;
	for (size_t i = 0; i < rep->nr_udsos; i++) {
		if (rep->udsos[i].dso == f->dso_long) {
			rep->udsos[i].samples += w;
			return;
		}
	}
	if (pk_grow((void **)&rep->udsos, &rep->cap_udsos, rep->nr_udsos + 1, sizeof(struct udso)))
		return;
	rep->udsos[rep->nr_udsos++] = (struct udso){ .dso = f->dso_long, .samples = w };
}

static void make_key(struct pk_report *rep, struct hkey *k, uint32_t comm, int32_t pid,
		     int32_t tid, int32_t cpu, uint32_t fid, uint32_t srcline)
{
	memset(k, 0, sizeof(*k));
	if (rep->key_on[PK_SORT_COMM])
		k->comm = comm;
	if (rep->key_on[PK_SORT_PID])
		k->pid = (uint32_t)pid;
	if (rep->key_on[PK_SORT_TID])
		k->tid = (uint32_t)tid;
	if (rep->key_on[PK_SORT_CPU])
		k->cpu = (uint32_t)cpu;
	if (rep->key_on[PK_SORT_SYM])
		k->frame = fid + 1;
	else if (rep->key_on[PK_SORT_DSO])
		k->dso = rep->frames[fid].dso;
	if (rep->key_on[PK_SORT_SRCLINE])
		k->srcline = srcline;
}

/*
 * Aggregate `w` samples (summed period `period`) that share one key: self frame sf, chain
 * fr[0..n) (innermost first; n >= 1), fa[] the same chain with unresolved frames keyed by
 * absolute address (for cumulative entries; NULL = fr), srcline ids src[] (NULL = none).
 */
static int aggregate(struct pk_report *rep, struct hist *h, uint32_t comm, int32_t pid,
		     int32_t tid, int32_t cpu, uint64_t period, uint64_t w, size_t n,
		     bool has_chain, uint32_t sf, const uint32_t *fr, const uint32_t *fa,
		     const uint32_t *src)
{
	if (!++rep->serial) {
		/* wrapped: forget the old serials */
		for (size_t i = 0; i < rep->nr_hists; i++)
			for (size_t j = 0; j < rep->hists[i].nr_ents; j++)
				rep->hists[i].ents[j].last_seen = 0;
		rep->serial = 1;
	}
	struct hkey k;
	struct ent *self = NULL;
	count_unresolved(rep, sf, w);
	if (frame_passes(rep, sf)) {
		make_key(rep, &k, comm, pid, tid, cpu, sf, src ? src[0] : 0);
		self = entry_get(rep, h, &k, comm, pid, tid, cpu, sf, src ? src[0] : 0);
		if (!self)
			return -ENOMEM;
		self->self_period += period;
		self->self_samples += w;
		self->total_period += period;
		self->total_samples += w;
		self->last_seen = rep->serial;
	}
	bool trees = rep->callgraph && has_chain;
	/* the chain in display order */
	uint32_t *seq = rep->seq;
	bool caller = rep->order == PK_CG_ORDER_CALLER;
	for (size_t i = 0; i < n; i++)
		seq[i] = caller ? fr[n - 1 - i] : fr[i];
	if (trees && self && chain_append(rep, self, seq, n, period, w))
		return -ENOMEM;
	if (!rep->children || !has_chain)
		return 0;
	/* cumulative entries: each distinct entry of the chain once, in display order
	 * (perf walks its cursor the same way), getting the rest of the chain as its tree */
	bool level = rep->frames[sf].kernel;
	for (size_t j = 0; j < n; j++) {
		size_t i = caller ? n - 1 - j : j; /* chain index of seq[j] */
		uint32_t fi = fa ? fa[i] : fr[i];
		if (!rep->frames[fi].nomap)
			level = rep->frames[fi].kernel;
		if (!frame_passes(rep, fi))
			continue;
		uint32_t sl = src ? src[i] : 0;
		make_key(rep, &k, comm, pid, tid, cpu, fi, sl);
		size_t before = h->nr_ents;
		struct ent *e = entry_get(rep, h, &k, comm, pid, tid, cpu, fi, sl);
		if (!e)
			return -ENOMEM;
		if (h->nr_ents != before)
			e->kernel = level; /* perf: an unmapped entry keeps the level before it */
		if (e->last_seen == rep->serial)
			continue;
		e->last_seen = rep->serial;
		e->total_period += period;
		e->total_samples += w;
		if (trees && chain_append(rep, e, seq + j, n - j, period, w))
			return -ENOMEM;
	}
	return 0;
}

/* The resolved-address cache (a memo of pk_machine__resolve and of the srcline and inline
 * look-ups): not needed once the stream is read. */
void pk_rep_rents_release(struct pk_report *rep)
{
	free(rep->last);
	rep->last = NULL;
	free(rep->rhot);
	rep->rhot = NULL;
	free(rep->absc);
	rep->absc = NULL;
	free(rep->dcache);
	rep->dcache = NULL;
	rep->dcache_mask = rep->dcache_n = 0;
	pk_arr_free(rep->rents, rep->cap_rents * sizeof(*rep->rents));
	rep->rents = NULL;
	rep->nr_rents = rep->cap_rents = 0;
	pk_arr_free(rep->inl_pool, rep->cap_inl * sizeof(*rep->inl_pool));
	rep->inl_pool = NULL;
	rep->nr_inl = rep->cap_inl = 0;
}

/* What only aggregation needs (pending samples, lookup indexes): released at finish. */
void pk_rep_agg_release(struct pk_report *rep)
{
	pk_arr_free(rep->ppool, rep->cap_ppool * sizeof(*rep->ppool));
	pk_arr_free(rep->pch, rep->cap_pch * sizeof(*rep->pch));
	rep->ppool = NULL;
	rep->pch = NULL;
	rep->nr_ppool = rep->cap_ppool = rep->nr_pch = rep->cap_pch = 0;
	pk_index_release(&rep->pidx);
	pk_index_release(&rep->nidx);
	pk_index_release(&rep->fidx);
	for (size_t i = 0; i < rep->nr_hists; i++)
		pk_index_release(&rep->hists[i].eidx);
}

/* Aggregate everything pending, in the order each key first appeared (so entries and
 * nodes are created in sample order, exactly as if each sample were aggregated at once). */
int pk_rep_flush_pending(struct pk_report *rep)
{
	int err = 0;
	for (size_t i = 0; i < rep->nr_pch && !err; i++) {
		const struct pchain *c = &rep->pch[i];
		const uint32_t *k = rep->ppool + c->off;
		uint32_t fl = k[PK_FLAGS];
		size_t n = k[PK_N];
		const uint32_t *fr = k + PK_HDR;
		const uint32_t *p = fr + n;
		const uint32_t *fa = NULL, *src = NULL;
		if (fl & PF_ABS) {
			fa = p;
			p += n;
		}
		if (fl & PF_SRC)
			src = p;
		err = aggregate(rep, &rep->hists[k[PK_HIST]], k[PK_COMM], c->pid, c->tid, c->cpu,
				c->period, c->samples, n, fl & PF_CHAIN, k[PK_SELF], fr, fa, src);
	}
	rep->nr_pch = 0;
	rep->nr_ppool = 0;
	rep->flush_epoch++;
	if (rep->pidx.slot) {
		memset(rep->pidx.slot, 0, (rep->pidx.mask + 1) * sizeof(*rep->pidx.slot));
		rep->pidx.n = 0;
	}
	return err;
}

/* two words at a time in two independent multiply chains: the key is hashed for every
 * sample, and one serial chain over 32-bit words was 5 % of a report */
static uint64_t key_hash(const uint32_t *k, size_t len)
{
	uint64_t a = 0x9e3779b97f4a7c15ULL, b = 0xc2b2ae3d27d4eb4fULL ^ len;
	size_t i = 0;
	for (; i + 4 <= len; i += 4) {
		uint64_t x, y;
		memcpy(&x, k + i, 8);
		memcpy(&y, k + i + 2, 8);
		a = (a ^ x) * 0xff51afd7ed558ccdULL;
		b = (b ^ y) * 0xc4ceb9fe1a85ec53ULL;
	}
	for (; i < len; i++)
		a = (a ^ k[i]) * 0xff51afd7ed558ccdULL;
	return pk_mix64(a ^ (b >> 31) ^ (b << 33));
}

/*
 * Queue one sample with pending key k[0..len) (hash hv) for aggregation. Samples with the
 * same key only add up their period and count, so a repeated call chain costs one hash
 * lookup instead of a walk of every cumulative entry's tree.
 * A `fresh` key holds a frame made for this very sample: no pending key can equal it, and
 * it is not put in the index either (a later equal key makes a second pending chain that
 * aggregates to the same result; a key seen once, the usual case for fresh frames, costs
 * no index slot).
 */
static int defer_key(struct pk_report *rep, const uint32_t *k, size_t len, uint64_t hv,
		     bool fresh, int32_t pid, int32_t tid, int32_t cpu, uint64_t period,
		     uint32_t *idp)
{
	if (rep->pidx.slot && !fresh) {
		PK_IX_FOR(&rep->pidx, hv, j) {
			struct pchain *c = &rep->pch[PK_IX_ID(rep->pidx.slot[j])];
			if (c->len == len && !memcmp(rep->ppool + c->off, k, len * sizeof(*k))) {
				c->period += period;
				c->samples++;
				*idp = PK_IX_ID(rep->pidx.slot[j]);
				return 0;
			}
		}
	}
	if (rep->nr_ppool + len > PPOOL_FLUSH_WORDS && rep->nr_pch) {
		int err = pk_rep_flush_pending(rep);
		if (err)
			return err;
	}
	if (pk_grow((void **)&rep->ppool, &rep->cap_ppool, rep->nr_ppool + len, sizeof(uint32_t)) ||
	    pk_grow((void **)&rep->pch, &rep->cap_pch, rep->nr_pch + 1, sizeof(struct pchain)) ||
	    (!fresh && pk_index_grow(&rep->pidx)))
		return -ENOMEM;
	memcpy(rep->ppool + rep->nr_ppool, k, len * sizeof(*k));
	size_t id = rep->nr_pch++;
	rep->pch[id] = (struct pchain){ .off = (uint32_t)rep->nr_ppool, .len = (uint32_t)len,
					.pid = pid, .tid = tid, .cpu = cpu, .period = period,
					.samples = 1 };
	rep->nr_ppool += len;
	if (!fresh)
		pk_index_put(&rep->pidx, hv, (uint32_t)id);
	*idp = (uint32_t)id;
	return 0;
}

/* The pending key of the sample whose chain is in rep->cframes/cabs/csrc (n entries),
 * written to rep->kbuf. Returns its length in words. */
static size_t pending_key(struct pk_report *rep, struct hist *h, uint32_t comm, int32_t pid,
			  int32_t tid, int32_t cpu, size_t n, bool has_chain)
{
	uint32_t fl = (has_chain ? PF_CHAIN : 0) | (rep->children && has_chain ? PF_ABS : 0) |
		      (rep->key_on[PK_SORT_SRCLINE] ? PF_SRC : 0);
	size_t len = PK_HDR + n * (1 + !!(fl & PF_ABS) + !!(fl & PF_SRC));
	uint32_t *k = rep->kbuf;
	k[PK_HIST] = (uint32_t)(h - rep->hists);
	k[PK_COMM] = comm;
	k[PK_PID] = rep->key_on[PK_SORT_PID] ? (uint32_t)pid : 0;
	k[PK_TID] = rep->key_on[PK_SORT_TID] ? (uint32_t)tid : 0;
	k[PK_CPU] = rep->key_on[PK_SORT_CPU] ? (uint32_t)cpu : 0;
	k[PK_FLAGS] = fl;
	k[PK_N] = (uint32_t)n;
	k[PK_SELF] = rep->self_frame;
	uint32_t *p = k + PK_HDR;
	memcpy(p, rep->cframes, n * sizeof(*p));
	p += n;
	if (fl & PF_ABS) {
		memcpy(p, rep->cabs, n * sizeof(*p));
		p += n;
	}
	if (fl & PF_SRC)
		memcpy(p, rep->csrc, n * sizeof(*p));
	return len;
}

/* The comm id of thread tid named comm; the cache entry is marked current for `epoch`
 * (0: for none). */
uint32_t pk_rep_comm_id(struct pk_report *rep, uint32_t tid, const char *comm, uint32_t epoch)
{
	char buf[32];
	/* ":0" is the placeholder name of the thread object for tid 0 (the idle task), which
	 * can reach here with another sample tid on CPU-wide recordings */
	if (comm && !strcmp(comm, ":0"))
		tid = 0;
	if (!comm || (tid == 0 && comm[0] == ':')) {
		comm = NULL;
		if (tid == 0)
			comm = "swapper"; /* the idle task, as perf names it */
		else
			snprintf(buf, sizeof(buf), ":%u", tid);
		if (tid)
			comm = buf;
	}
	struct ccache *c = &rep->ccache[pk_mix64(tid) & (PK_ARRAY_SIZE(rep->ccache) - 1)];
	if (c->used && c->tid == tid && !strcmp(c->comm, comm)) {
		c->epoch = epoch;
		return c->id;
	}
	uint32_t id = 0;
	if (pk_str_intern(&rep->strs, comm, &id))
		return 0;
	c->used = true;
	c->tid = tid;
	c->id = id;
	c->epoch = epoch;
	snprintf(c->comm, sizeof(c->comm), "%s", comm);
	return id;
}

/* The comm id of a sample's thread: from the cache while no record other than a sample
 * came since it was looked up, else from the machine model again. */
static uint32_t sample_comm_id(struct pk_report *rep, uint32_t tid)
{
	const struct ccache *c = &rep->ccache[pk_mix64(tid) & (PK_ARRAY_SIZE(rep->ccache) - 1)];
	if (c->used && c->tid == tid && c->epoch == rep->cepoch)
		return c->id;
	return pk_rep_comm_id(rep, tid, pk_machine__comm_of(rep->m, tid), rep->cepoch);
}

int pk_report__add_sample(struct pk_report *rep, const struct pk_report_sample *smp)
{
	if (!rep || !PK_OPTS_VALID(smp, pk_report_sample) || !smp)
		return pk_err(-EINVAL);
	int attr_idx = PK_OPTS_GET(smp, attr_idx, 0);
	const char *name = PK_OPTS_GET(smp, name, NULL), *comm = PK_OPTS_GET(smp, comm, NULL);
	int32_t pid = PK_OPTS_GET(smp, pid, 0), tid = PK_OPTS_GET(smp, tid, 0);
	int32_t cpu = PK_OPTS_GET(smp, cpu, -1);
	uint64_t time = PK_OPTS_GET(smp, time, 0), period = PK_OPTS_GET(smp, period, 0);
	const struct pk_report_frame *frames = PK_OPTS_GET(smp, frames, NULL);
	size_t nr_frames = PK_OPTS_GET(smp, nr_frames, 0);
	if (!frames || !nr_frames)
		return pk_err(-EINVAL);
	struct hist *h = hist_get(rep, attr_idx, name);
	if (!h)
		return pk_err(-ENOMEM);
	h->pub.nr_samples++;
	h->pub.total_period += period;
	if ((rep->nr_pids && !match_int(rep->pids, rep->nr_pids, pid)) ||
	    (rep->nr_tids && !match_int(rep->tids, rep->nr_tids, tid)) ||
	    (rep->nr_cpus && !match_int(rep->cpus, rep->nr_cpus, cpu)) ||
	    (rep->nr_comms && !match_str(rep->comms, rep->nr_comms, comm)) ||
	    (rep->time_start && time < rep->time_start) || (rep->time_end && time > rep->time_end)) {
		h->pub.nr_filtered++;
		return 0;
	}
	if (nr_frames > 1)
		h->pub.has_callchains = true;
	size_t n = PK_MIN(nr_frames, (size_t)rep->max_stack);
	for (size_t i = 0; i < n; i++) {
		const struct pk_report_frame *pf = &frames[i];
		struct frame f = { 0 };
		const char *d = pf->dso ? pf->dso : "[unknown]";
		if (pk_str_intern(&rep->strs, d, &f.dso) || pk_str_intern(&rep->strs, d, &f.dso_long) ||
		    (pf->sym && pk_str_intern(&rep->strs, pf->sym, &f.sym)))
			return pk_err(-ENOMEM);
		f.kernel = pf->kernel;
		f.addr = pf->addr;
		f.sym_start = f.sym; /* synthetic frames: one range per name */
		uint32_t sl = 0;
		char buf[64];
		if (rep->key_on[PK_SORT_SRCLINE]) {
			const char *s = pf->srcline;
			if (!s) {
				snprintf(buf, sizeof(buf), "%s[%" PRIx64 "]", d, pf->addr);
				s = buf;
			}
			if (pk_str_intern(&rep->strs, s, &sl))
				return pk_err(-ENOMEM);
		}
		if (frame_intern(rep, &f, &rep->cframes[i]))
			return pk_err(-ENOMEM);
		rep->csrc[i] = sl;
	}
	rep->self_frame = rep->cframes[0];
	rep->cip_valid = false;
	int err = pk_rep_flush_pending(rep);
	if (!err)
		err = aggregate(rep, h, pk_rep_comm_id(rep, (uint32_t)tid, comm, 0), pid, tid, cpu, period, 1,
				n, nr_frames > 1, rep->self_frame, rep->cframes, NULL,
				rep->key_on[PK_SORT_SRCLINE] ? rep->csrc : NULL);
	return err ? pk_err(err) : 0;
}

/* ---- the record stream ---- */

/*
 * Inline expansion of a resolved user address (perf's callchain view): the functions
 * inlined at the address, innermost first, then the containing function. A name that
 * differs from the ELF symbol is shown as "name (inlined)", as perf does. Returns the
 * number of frame ids in *out, 0 when there is nothing to expand.
 */
static size_t inlines_of(struct pk_report *rep, struct rent *e, const uint32_t **out)
{
	if (!e)
		return 0; /* outside every map */
	if (e->inl_first < 0) {
		e->inl_first = 0;
		e->inl_n = 0;
		/* a copy: frame_intern below may move rep->frames */
		const struct frame fcopy = rep->frames[e->frame];
		const struct frame *f = &fcopy;
		const struct pk_inline_frame *ifr;
		int ni;
		if (!e->dso || !f->sym || f->kernel ||
		    (ni = pk_dso__inline_names(e->dso, e->dso_addr, &ifr)) < 1)
			return 0;
		if (ni == 1 && ifr[0].func &&
		    pk_symbol__same_function(ifr[0].func, pk_str_get(&rep->strs, f->sym)))
			return 0; /* just the function itself */
		if (ni > 64)
			ni = 64;
		if (pk_grow((void **)&rep->inl_pool, &rep->cap_inl, rep->nr_inl + (size_t)ni,
			 sizeof(uint32_t)))
			return 0;
		const char *base = pk_str_get(&rep->strs, f->sym);
		size_t first = rep->nr_inl;
		for (int i = 0; i < ni; i++) {
			struct frame g = *f;
			char buf[1024];
			/* ifr[i].func is in perf's short form, as ELF symbols are (no return
			 * type, no parameters): "sorter" is the out-of-line sorter, not an
			 * inline frame of another name */
			const char *fn = ifr[i].func ? ifr[i].func : "??";
			uint32_t name = 0;
			/* an inner frame is a DWARF inlined subroutine: perf compares its name
			 * with the symbol's exactly (_PyObject_Call inlined into PyObject_Call
			 * is an inline frame); the looser rule is for the containing function,
			 * whose name an assembler entry point may not share with its symbol */
			if (i + 1 < ni ? strcmp(fn, base) != 0 : !pk_symbol__same_function(fn, base)) {
				if (pk_str_intern(&rep->strs, fn, &name))
					return 0;
				snprintf(buf, sizeof(buf), "%s (inlined)", fn);
				fn = buf;
				g.inlined = true;
			} else {
				fn = base;
			}
			if (pk_str_intern(&rep->strs, fn, &g.sym) || frame_intern(rep, &g, &rep->inl_pool[rep->nr_inl]))
				return 0;
			if (name && chain_key_inline(rep, rep->inl_pool[rep->nr_inl], name))
				return 0;
			rep->nr_inl++;
		}
		e->inl_first = (int32_t)first;
		e->inl_n = (uint32_t)ni;
	}
	if (!e->inl_n)
		return 0;
	*out = rep->inl_pool + e->inl_first;
	return e->inl_n;
}

/* The hist of an attr. Its name is read only when the hist is created (every attr of the
 * input has one from the start): with a reader thread, an attr's name may be replaced
 * by an EVENT_UPDATE while samples of it are aggregated. */
static struct hist *hist_of(struct pk_report *rep, const struct pk_data_attr *a)
{
	if (a->idx >= 0 && (size_t)a->idx < rep->nr_hists && rep->hists[a->idx].used)
		return &rep->hists[a->idx];
	char nb[64];
	return hist_get(rep, a->idx, pk_data_attr__name(a, nb, sizeof(nb)));
}

static int do_sample(struct pk_report *rep, const struct pk_data_attr *a, const struct pk_sample *s)
{
	struct hist *h = hist_of(rep, a);
	if (!h)
		return -ENOMEM;
	h->pub.attr = a;
	uint64_t period = (s->type & PERF_SAMPLE_PERIOD) ? s->period
			  : (a->attr.attr.freq ? 1 : a->attr.attr.sample_period);
	if (!period)
		period = 1;
	h->pub.nr_samples++;
	h->pub.total_period += period;
	int32_t pid = (int32_t)s->pid, tid = (int32_t)s->tid;
	int32_t cpu = (s->type & PERF_SAMPLE_CPU) ? (int32_t)s->cpu : -1;
	if ((rep->nr_pids && !match_int(rep->pids, rep->nr_pids, pid)) ||
	    (rep->nr_tids && !match_int(rep->tids, rep->nr_tids, tid)) ||
	    (rep->nr_cpus && !match_int(rep->cpus, rep->nr_cpus, cpu)) ||
	    (rep->time_start && s->time < rep->time_start) ||
	    (rep->time_end && s->time > rep->time_end)) {
		h->pub.nr_filtered++;
		return 0;
	}
	uint32_t cid = sample_comm_id(rep, s->tid);
	if (rep->nr_comms && !match_str(rep->comms, rep->nr_comms, pk_str_get(&rep->strs, cid))) {
		h->pub.nr_filtered++;
		return 0;
	}
	bool has_chain = !rep->no_callchain &&
			 (s->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER));
	if (has_chain)
		h->pub.has_callchains = true;
	/* without trees and children only the sampled location counts: the chain is not
	 * resolved (nor made part of the pending key, which then merges far more samples) */
	if (!rep->callgraph && !rep->children)
		has_chain = false;
	uint32_t gen = gen_of(rep, s->pid);
	struct lastsample *ls = NULL;
	uint16_t lnr = has_chain && (s->type & PERF_SAMPLE_CALLCHAIN) ? (uint16_t)PK_MIN(
		s->callchain.nr, (uint64_t)LAST_IPS + 1) : 0;
	if (!(s->type & PERF_SAMPLE_STACK_USER) && lnr <= LAST_IPS &&
	    (!lnr || s->callchain.ips)) {
		if (!rep->last)
			rep->last = calloc(LAST_SLOTS, sizeof(*rep->last));
		if (rep->last) {
			ls = &rep->last[(s->tid * 0x9e3779b1u) >> 26];
			uint32_t hi = (uint32_t)(h - rep->hists);
			if (ls->used && ls->tid == s->tid && ls->pid == s->pid && ls->gen == gen &&
			    ls->hist == hi && ls->comm == cid && ls->ip == s->ip &&
			    ls->cm == s->cpumode && ls->chain == has_chain && ls->nr == lnr &&
			    ls->epoch == rep->flush_epoch &&
			    (!rep->key_on[PK_SORT_CPU] || ls->cpu == cpu) &&
			    (!lnr || !memcmp(ls->ips, s->callchain.ips, lnr * sizeof(uint64_t)))) {
				struct pchain *c = &rep->pch[ls->pch];
				c->period += period;
				c->samples++;
				return 0;
			}
			/* field by field: a compound literal would clear all of ips[] too */
			ls->tid = s->tid, ls->pid = s->pid, ls->gen = gen, ls->hist = hi;
			ls->comm = cid, ls->cpu = cpu, ls->ip = s->ip, ls->cm = s->cpumode;
			ls->chain = has_chain, ls->nr = lnr, ls->used = false;
			ls->epoch = 0, ls->pch = 0;
			if (lnr)
				memcpy(ls->ips, s->callchain.ips, lnr * sizeof(uint64_t));
		}
	}
	size_t n = 0;
	struct rent *re;
	uint32_t frames_before = (uint32_t)rep->nr_frames;
	/* the sampled location: always from s->ip with the sample's cpumode */
	uint32_t fid;
	int err = resolve(rep, s->pid, s->tid, gen, s->ip, s->cpumode, &re, &fid);
	if (err)
		return err;
	rep->self_frame = fid;
	uint32_t self_src = rep->key_on[PK_SORT_SRCLINE] ? srcline_of(rep, re, fid) : 0;
	rep->cip_valid = true;
	if (!has_chain) {
		rep->cip[0] = s->ip;
		rep->cframes[0] = fid;
		rep->csrc[0] = self_src;
		n = 1;
	} else {
		/* every recorded entry and max_stack unwound ones, then perf's cut */
		size_t cap = PK_MIN((size_t)s->callchain.nr + rep->max_stack, (size_t)MAX_CHAIN);
		int nc = pk_machine__callchain(rep->m, s, rep->chain, cap);
		if (nc > 0)
			nc = pk_callchain__cut(rep->chain, (size_t)nc, rep->max_stack);
		if (nc <= 0) {
			rep->chain[0].ip = s->ip;
			rep->chain[0].cpumode = s->cpumode;
			rep->chain[0].flags = 0;
			nc = 1;
		}
		struct rent *self_re = re;
		uint32_t self_fid = fid;
		for (size_t i = 0; i < (size_t)nc && n < MAX_CHAIN; i++) {
			if (i == 0 && rep->chain[0].ip == s->ip && rep->chain[0].cpumode == s->cpumode) {
				/* the first entry is the sampled location again */
				re = self_re;
				fid = self_fid;
			} else {
				err = resolve(rep, s->pid, s->tid, gen, rep->chain[i].ip,
					      rep->chain[i].cpumode, &re, &fid);
				if (err)
					return err;
			}
			uint32_t src = rep->key_on[PK_SORT_SRCLINE] ? srcline_of(rep, re, fid) : 0;
			const uint32_t *ifr = NULL;
			/* perf 6.1 expands only DWARF-unwound frames */
			size_t ni = rep->inlines && (rep->inlines_all ||
						     (rep->chain[i].flags & PK_CHAIN_UNWOUND))
					    ? inlines_of(rep, re, &ifr) : 0;
			if (!ni) {
				ifr = &fid;
				ni = 1;
			}
			for (size_t k = 0; k < ni && n < MAX_CHAIN; k++) {
				rep->cframes[n] = ifr[k];
				rep->cip[n] = rep->chain[i].ip;
				rep->csrc[n] = src;
				n++;
			}
		}
		rep->csrc[0] = self_src;
	}
	if (rep->children && has_chain) {
		/* unresolved frames of cumulative entries are keyed by absolute address */
		for (size_t i = 0; i < n; i++) {
			uint32_t fi = rep->cframes[i];
			rep->cabs[i] = rep->frames[fi].sym ? fi : frame_abs(rep, fi, rep->cip[i]);
		}
	}
	size_t klen = pending_key(rep, h, cid, pid, tid, cpu, n, has_chain);
	/* a frame made while resolving this sample makes the key one never seen */
	bool fresh = false;
	if (rep->nr_frames != frames_before) {
		/* the self frame, the chain's frames and their absolute-address twins (not the
		 * srcline string ids after them) */
		size_t end = PK_HDR + n * (1 + !!(rep->kbuf[PK_FLAGS] & PF_ABS));
		for (size_t i = PK_SELF; i < end && !fresh; i++)
			fresh = rep->kbuf[i] >= frames_before;
	}
	uint64_t khash = fresh ? 0 : key_hash(rep->kbuf, klen);
	uint32_t id;
	err = defer_key(rep, rep->kbuf, klen, khash, fresh, pid, tid, cpu, period, &id);
	if (ls && !err) {
		/* (defer_key may have flushed: the id is of the epoch after it) */
		ls->pch = id;
		ls->epoch = rep->flush_epoch;
		ls->used = true;
	}
	return err;
}

/*
 * A sample that read counters (PERF_SAMPLE_READ with ids: leader sampling "{a,b}:S")
 * counts, as in perf, once for every counter it read: on that counter's event, with the
 * counter's growth since its previous read (per sample id) as the period. Counters that
 * did not move and ids no attr lists are skipped. Other samples count once, as they are.
 */
static int do_read_sample(struct pk_report *rep, const struct pk_data_attr *a,
			  const struct pk_sample *s)
{
	int n;

	if (!(s->type & PERF_SAMPLE_READ) || !a->layout_ok || !rep->read_rd ||
	    !(a->layout.read_format & PERF_FORMAT_ID))
		return do_sample(rep, a, s);
	if (!rep->rdelta && !(rep->rdelta = pk_read_delta__new()))
		return -ENOMEM;
	n = pk_sample__read_values(&a->layout, s, rep->rvals, rep->nrvals);
	if (n > 0 && (size_t)n > rep->nrvals) {
		struct pk_count_value *nv = realloc(rep->rvals, sizeof(*nv) * (size_t)n);
		if (!nv)
			return -ENOMEM;
		rep->rvals = nv;
		rep->nrvals = (size_t)n;
		n = pk_sample__read_values(&a->layout, s, rep->rvals, rep->nrvals);
	}
	if (n <= 0)
		return do_sample(rep, a, s);
	for (int i = 0; i < n; i++) {
		const struct pk_count_value *v = &rep->rvals[i];
		const struct pk_data_attr *m = pk_data_reader__attr_by_id(rep->read_rd, v->id);
		uint64_t delta;
		if (!m || pk_read_delta__update(rep->rdelta, v->id, v->val, &delta) || !delta)
			continue;
		struct pk_sample c = *s;
		c.type |= PERF_SAMPLE_PERIOD;
		c.id = v->id;
		c.period = delta;
		int err = do_sample(rep, m, &c);
		if (err)
			return err;
	}
	return 0;
}

static void on_progress(void *ctx, uint64_t offset, uint64_t nr)
{
	struct pk_report *rep = ctx;
	rep->progress(offset, nr, rep->progress_ctx);
}

/* The session's sample callback */
static int on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct pk_report *rep = ctx;
	return r && ev->attr ? do_read_sample(rep, ev->attr, &r->sample) : 0;
}

/* Every other record (the session gave it to the machine first) */
static int on_record(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct pk_report *rep = ctx;
	if (!r)
		return 0; /* a user record, unknown or malformed (the reader warned) */
	const struct pk_data_attr *a = ev->attr;
	if (!++rep->cepoch) {
		/* COMM, FORK, EXIT, ... may rename a thread; on wrap-around no entry is current */
		for (size_t i = 0; i < PK_ARRAY_SIZE(rep->ccache); i++)
			rep->ccache[i].epoch = 0;
		rep->gc_epoch = 0;
		rep->cepoch = 1;
	}
	switch (r->type) {
	case PERF_RECORD_MMAP:
		bump_gen(rep, r->mmap.pid);
		if (r->mmap.pid == (uint32_t)-1 || r->cpumode == PK_CPUMODE_KERNEL)
			rep->kgen++;
		break;
	case PERF_RECORD_MMAP2:
		bump_gen(rep, r->mmap2.pid);
		if (r->mmap2.pid == (uint32_t)-1 || r->cpumode == PK_CPUMODE_KERNEL)
			rep->kgen++;
		break;
	case PERF_RECORD_COMM:
		if (r->comm.exec)
			bump_gen(rep, r->comm.pid);
		break;
	case PERF_RECORD_FORK:
		bump_gen(rep, r->task.pid);
		break;
	case PERF_RECORD_LOST:
		if (a) {
			struct hist *h = hist_of(rep, a);
			if (h)
				h->pub.nr_lost += r->lost.lost;
		}
		break;
	default:
		break;
	}
	return 0;
}

int pk_report__process(struct pk_report *rep, struct pk_data_reader *r,
		       pk_report_progress_fn progress, void *ctx)
{
	if (!rep || !r)
		return pk_err(-EINVAL);
	/* every attr gets a hist, so that events without samples still have a section */
	char nb[64];
	for (size_t i = 0; i < pk_data_reader__nr_attrs(r); i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(r, i);
		struct hist *h = a ? hist_get(rep, a->idx, pk_data_attr__name(a, nb, sizeof(nb)))
				   : NULL;
		if (h)
			h->pub.attr = a;
	}
	rep->read_rd = r;
	PK_OPTS(pk_session_opts, so, .reader_thread = rep->reader_thread, .machine = rep->m);
	struct pk_session *ses = pk_session__new(r, &so);
	if (!ses)
		return pk_err(-errno);
	rep->progress = progress;
	rep->progress_ctx = ctx;
	PK_OPTS(pk_session_ops, ops, .sample = on_sample, .other = on_record,
		.progress = progress ? on_progress : NULL);
	int err = pk_session__process(ses, &ops, rep);
	pk_session__ordered_stats(ses, &rep->ost);
	pk_session__free(ses);
	pk_rep_rents_release(rep);
	if (err < 0)
		return pk_err(err);
	return pk_report__finish(rep);
}
