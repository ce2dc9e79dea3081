/* SPDX-License-Identifier: MIT */
/*
 * lib/report/hist.c - aggregation of samples into histogram entries and call-chain trees.
 *
 * Everything is interned to small integers first: strings (comm, DSO, symbol, srcline),
 * frames (DSO + symbol, or DSO + address when unresolved), and resolved addresses
 * (resolve.c: keyed by the machine's map generation, cpumode and ip, so that each
 * distinct address of an address space is symbolised once). Entries are then found by
 * hashing a tuple of integers, and
 * call-chain nodes by hashing (parent node, frame). Memory grows with distinct entries,
 * nodes and addresses, never with the number of samples.
 */
#include "resolve.h"

/* ---- hists, entries, nodes ---- */

static struct hist *hist_get(struct pk_report *rep, int idx, const char *name)
{
	if (idx < 0 || idx > 65535)
		return NULL;
	if ((size_t)idx >= rep->nr_hists) {
		/* (the worker reads the array: it must be idle) */
		if (pk_rep_aggw_wait(rep))
			return NULL;
		/* (aligned: each hist's entries on lines of their own, see struct hist) */
		struct hist *n = aligned_alloc(_Alignof(struct hist), ((size_t)idx + 1) * sizeof(*n));
		if (!n)
			return NULL;
		if (rep->nr_hists)
			memcpy(n, rep->hists, rep->nr_hists * sizeof(*n));
		free(rep->hists);
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
	h = pk_mix64(h ^ ((uint64_t)k->parent << 32 | k->srcline));
	return k->time | k->socket | k->srcfile | k->symoff
	       ? pk_mix64(h ^ ((uint64_t)k->time << 32 | k->socket) ^
			  ((uint64_t)k->srcfile << 17) ^ ((uint64_t)k->symoff << 40))
	       : h;
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
		if (rep->fagg[frame].node1 == NONE32)
			rep->fagg[frame].node1 = *id;
		return 0;
	}
	if (rep->nodes[k1].frame == frame) {
		*id = k1;
		return 0;
	}
	uint32_t first = rep->fagg[frame].node1;
	if (first == NONE32) {
		/* no node of this frame yet */
		if (node_new(rep, parent, frame, id))
			return -ENOMEM;
		rep->fagg[frame].node1 = *id;
		return 0;
	}
	if (rep->nodes[first].parent == parent) {
		*id = first;
		return 0;
	}
	uint64_t h = pk_mix64((uint64_t)parent << 32 | frame);
	if (pk_rep_index_rebuild(&rep->nidx, rep->nr_nodes, node_hash_at, rep))
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
	uint32_t first = rep->fagg[frame].node1;
	if (first == NONE32)
		return NONE32;
	if (rep->nodes[first].parent == parent)
		return first;
	if (pk_rep_index_rebuild(&rep->nidx, rep->nr_nodes, node_hash_at, rep) || !rep->nidx.slot)
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
	} else if (rep->nr_nkey && rep->afr[frame].sym && !rep->afr[frame].kernel) {
		name = rep->afr[frame].sym;
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
int pk_rep_chain_key_inline(struct pk_report *rep, uint32_t frame, uint32_t name)
{
	/* (the worker reads the inline keys: it must be idle) */
	int err = pk_rep_aggw_wait(rep);
	if (err)
		return err;
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
		const struct fagg *fr = &rep->fagg[frame];
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
		if (pk_rep_index_rebuild(&h->eidx, h->nr_ents, ent_hash_at, h))
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
			   .kernel = rep->afr[frame].kernel };
	if (indexed) {
		pk_index_put(&h->eidx, hh, (uint32_t)nid);
	} else {
		rep->fagg[frame].ent1 = (uint32_t)nid;
		rep->fagg[frame].ent1_hist = hi;
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

/* The frame of an unresolved callchain entry as perf keys cumulative entries and
 * call-chain nodes: by the absolute address (perf's self entries use the DSO-relative
 * one), which is also the address shown. */
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
	f.sym_start = f.addr;
	f.addr = ip;
	f.ip = ip;
	f.abs = 1;
	uint32_t id;
	if (pk_rep_frame_intern(rep, &f, &id))
		return fid;
	if (c)
		*c = (struct absc){ .ip = ip, .fid = fid, .abs = id + 1 };
	return id;
}

/* Entry filters (--dso, --symbols) on a frame. */
static bool frame_passes(struct pk_report *rep, uint32_t fid)
{
	const struct frame *f = &rep->afr[fid];
	if (rep->nr_dsos && !match_str(rep->dsos, rep->nr_dsos, pk_str_get(&rep->strs, f->dso)) &&
	    !match_str(rep->dsos, rep->nr_dsos, pk_str_get(&rep->strs, f->dso_long)))
		return false;
	if (rep->nr_symbols && !match_str(rep->symbols, rep->nr_symbols, pk_str_get(&rep->strs, f->sym)))
		return false;
	return true;
}

static void count_unresolved(struct pk_report *rep, uint32_t fid, uint64_t w)
{
	const struct frame *f = &rep->afr[fid];
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
		k->dso = rep->afr[fid].dso;
	if (rep->key_on[PK_SORT_SRCLINE] && !rep->src_for_file)
		k->srcline = srcline;
	if (rep->key_on[PK_SORT_PARENT])
		k->parent = rep->cur_parent;
	pk_rep_keys_of(rep, k, cpu, srcline);
}

/* perf's parent: the first frame of the chain, in the display order, whose symbol matches
 * the parent regex (its name's string id; 0: none, "[other]") */
static uint32_t chain_parent(struct pk_report *rep, const uint32_t *fr, size_t n)
{
	bool caller = rep->order == PK_CG_ORDER_CALLER;
	for (size_t j = 0; j < n; j++) {
		uint32_t s = rep->afr[fr[caller ? n - 1 - j : j]].sym;
		if (s && !regexec(&rep->parent_re, pk_str_get(&rep->strs, s), 0, NULL, 0))
			return s;
	}
	return 0;
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
	if (rep->hide_unresolved && !rep->afr[sf].sym) {
		/* perf -U: as if the samples were never there */
		h->pub.nr_samples -= w;
		h->pub.total_period -= period;
		return 0;
	}
	if (rep->hide_unresolved) {
		/* and the chain's frames without a symbol are left out (perf never adds them
		 * to its cursor) */
		size_t m = 0;
		for (size_t i = 0; i < n && i < MAX_CHAIN; i++) {
			if (!rep->afr[fr[i]].sym)
				continue;
			rep->hu_fr[m] = fr[i];
			rep->hu_fa[m] = fa ? fa[i] : fr[i];
			rep->hu_src[m] = src ? src[i] : 0;
			m++;
		}
		if (m != n) {
			n = m;
			fr = rep->hu_fr;
			fa = fa ? rep->hu_fa : NULL;
			src = src ? rep->hu_src : NULL;
			has_chain = has_chain && n;
		}
	}
	if (rep->has_ignore_re && has_chain) {
		/* perf resets its cursor at each match on its walk: the last match of the walk
		 * takes the sample, the frames walked before it go */
		bool caller_walk = rep->order == PK_CG_ORDER_CALLER;
		size_t hit = n;
		for (size_t i = 0; i < n; i++) {
			uint32_t s = rep->afr[fr[i]].sym;
			if (s && !regexec(&rep->ignore_re, pk_str_get(&rep->strs, s), 0, NULL, 0)) {
				hit = i;
				if (caller_walk)
					break; /* the innermost */
			}
		}
		if (hit < n) {
			sf = fr[hit];
			if (caller_walk) {
				n = hit + 1;
			} else {
				fr += hit;
				fa = fa ? fa + hit : NULL;
				src = src ? src + hit : NULL;
				n -= hit;
			}
		}
	}
	if (rep->has_parent_re) {
		rep->cur_parent = has_chain ? chain_parent(rep, fr, n) : 0;
		if (rep->exclude_other && !rep->cur_parent)
			return 0; /* perf -x: not shown, still in the totals */
	}
	if (frame_passes(rep, sf)) {
		uint32_t ef = pk_rep_sym_frame(rep, sf);
		make_key(rep, &k, comm, pid, tid, cpu, ef, src ? src[0] : 0);
		self = entry_get(rep, h, &k, comm, pid, tid, cpu, ef, src ? src[0] : 0);
		if (!self)
			return -ENOMEM;
		self->self_period += period;
		self->self_samples += w;
		self->total_period += period;
		self->total_samples += w;
		self->last_seen = rep->serial;
	}
	bool trees = rep->callgraph && has_chain;
	/* the chain in display order. perf matches call-chain nodes of unresolved frames by
	 * object and sampled address (not the address in the object): the same frame of two
	 * processes that map the object at different addresses makes two nodes */
	uint32_t *seq = rep->seq;
	bool caller = rep->order == PK_CG_ORDER_CALLER;
	const uint32_t *nf = fa ? fa : fr;
	for (size_t i = 0; i < n; i++)
		seq[i] = caller ? nf[n - 1 - i] : nf[i];
	if (trees && self && chain_append(rep, self, seq, n, period, w))
		return -ENOMEM;
	if (!rep->children || !has_chain)
		return 0;
	/* cumulative entries: each distinct entry of the chain once, in display order
	 * (perf walks its cursor the same way), getting the rest of the chain as its tree */
	bool level = rep->afr[sf].kernel;
	for (size_t j = 0; j < n; j++) {
		size_t i = caller ? n - 1 - j : j; /* chain index of seq[j] */
		uint32_t fi = fa ? fa[i] : fr[i];
		if (!rep->afr[fi].nomap)
			level = rep->afr[fi].kernel;
		if (!frame_passes(rep, fi))
			continue;
		uint32_t sl = src ? src[i] : 0;
		uint32_t ef = pk_rep_sym_frame(rep, fi);
		make_key(rep, &k, comm, pid, tid, cpu, ef, sl);
		size_t before = h->nr_ents;
		struct ent *e = entry_get(rep, h, &k, comm, pid, tid, cpu, ef, sl);
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

/* What only aggregation needs (pending samples, lookup indexes): released at finish. */
void pk_rep_agg_release(struct pk_report *rep)
{
	pk_rep_aggw_stop(rep);
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

/* Aggregate the pending samples pch[0..n) (keys in pool), in the order each key first
 * appeared (so entries and nodes are created in sample order, exactly as if each sample
 * were aggregated at once). On the caller's thread or the worker's (aggw.c): it reads
 * the frames through rep->afr and writes only the aggregation's state. */
int pk_rep_aggregate_pending(struct pk_report *rep, const uint32_t *pool,
			     const struct pchain *pch, size_t n)
{
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		const struct pchain *c = &pch[i];
		const uint32_t *k = pool + c->off;
		uint32_t fl = k[PK_FLAGS];
		size_t nk = k[PK_N];
		const uint32_t *fr = k + PK_HDR;
		const uint32_t *p = fr + nk;
		const uint32_t *fa = NULL, *src = NULL;
		if (fl & PF_ABS_SAME) {
			fa = fr;
		} else if (fl & PF_ABS) {
			fa = p;
			p += nk;
		}
		if (fl & PF_SRC)
			src = p;
		err = aggregate(rep, &rep->hists[k[PK_HIST]], k[PK_COMM], c->pid, c->tid, c->cpu,
				c->period, c->samples, nk, fl & PF_CHAIN, k[PK_SELF], fr, fa, src);
	}
	return err;
}

/* The aggregation's notes for every frame made so far, and its view of the frames (the
 * worker is idle). */
static int agg_prepare(struct pk_report *rep)
{
	if (rep->nr_fagg < rep->nr_frames) {
		if (pk_grow((void **)&rep->fagg, &rep->cap_fagg, rep->nr_frames, sizeof(*rep->fagg)))
			return -ENOMEM;
		for (size_t i = rep->nr_fagg; i < rep->nr_frames; i++)
			rep->fagg[i] = (struct fagg){ NONE32, NONE32, 0 };
		rep->nr_fagg = rep->nr_frames;
	}
	rep->afr = rep->frames;
	return 0;
}

static void pending_reset(struct pk_report *rep)
{
	rep->nr_pch = 0;
	rep->nr_ppool = 0;
	rep->flush_epoch++;
	if (rep->pidx.slot) {
		memset(rep->pidx.slot, 0, (rep->pidx.mask + 1) * sizeof(*rep->pidx.slot));
		rep->pidx.n = 0;
	}
}

/* Aggregate everything pending, here, once the worker (if any) is done. */
int pk_rep_flush_pending(struct pk_report *rep)
{
	int err = pk_rep_aggw_wait(rep);
	if (!err)
		err = agg_prepare(rep);
	if (!err)
		err = pk_rep_aggregate_pending(rep, rep->ppool, rep->pch, rep->nr_pch);
	pending_reset(rep);
	return err;
}

/* The pending pool is full: its samples to the worker, which aggregates them while more
 * samples are resolved here (or here, without a worker). */
static int flush_full(struct pk_report *rep)
{
	if (!rep->agg_async)
		return pk_rep_flush_pending(rep);
	int err = pk_rep_aggw_wait(rep);
	if (!err)
		err = agg_prepare(rep);
	if (!err) {
		int h = pk_rep_aggw_hand(rep);
		if (h < 0)
			err = h;
		else if (!h)
			err = pk_rep_aggregate_pending(rep, rep->ppool, rep->pch, rep->nr_pch);
	}
	pending_reset(rep);
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
	if (rep->nr_ppool + len > (rep->agg_async ? PPOOL_ASYNC_WORDS : PPOOL_FLUSH_WORDS) &&
	    rep->nr_pch) {
		int err = flush_full(rep);
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
	uint32_t fl = (has_chain ? PF_CHAIN : 0) |
		      ((rep->children || rep->callgraph) && has_chain ? PF_ABS : 0) |
		      (rep->key_on[PK_SORT_SRCLINE] ? PF_SRC : 0);
	if ((fl & PF_ABS) && rep->abs_same)
		fl |= PF_ABS_SAME;
	bool abs_copy = (fl & (PF_ABS | PF_ABS_SAME)) == PF_ABS;
	size_t len = PK_HDR + n * (1 + abs_copy + !!(fl & PF_SRC));
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
	pk_rep_copy32(p, rep->cframes, n);
	p += n;
	if (abs_copy) {
		pk_rep_copy32(p, rep->cabs, n);
		p += n;
	}
	if (fl & PF_SRC)
		pk_rep_copy32(p, rep->csrc, n);
	return len;
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
		if (pk_rep_frame_intern(rep, &f, &rep->cframes[i]))
			return pk_err(-ENOMEM);
		rep->csrc[i] = sl;
	}
	rep->self_frame = rep->cframes[0];
	rep->cip_valid = false;
	int err = pk_rep_flush_pending(rep);
	rep->cur_time = time;
	if (!err)
		err = aggregate(rep, h, pk_rep_comm_id(rep, (uint32_t)tid, comm, 0), pid, tid, cpu, period, 1,
				n, nr_frames > 1, rep->self_frame, rep->cframes, NULL,
				rep->key_on[PK_SORT_SRCLINE] ? rep->csrc : NULL);
	return err ? pk_err(err) : 0;
}

/* ---- the record stream ---- */

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
	if (!rep->callgraph && !rep->children && !rep->has_parent_re)
		has_chain = false;
	uint64_t gen = pk_rep_gen_of(rep, s->pid, s->tid);
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
			pk_rep_copy64(ls->ips, s->callchain.ips, lnr);
		}
	}
	size_t n = 0;
	struct rent *re;
	uint32_t frames_before = (uint32_t)rep->nr_frames;
	/* the sampled location: always from s->ip with the sample's cpumode */
	uint32_t fid;
	int err = pk_rep_resolve(rep, s->pid, s->tid, gen, s->ip, s->cpumode, &re, &fid);
	if (err)
		return err;
	rep->self_frame = fid;
	uint32_t self_src = rep->key_on[PK_SORT_SRCLINE] ? pk_rep_src_of(rep, re, fid) : 0;
	rep->cip_valid = true;
	int nc = 0;
	if (has_chain) {
		/* every recorded entry and max_stack unwound ones, then perf's cut */
		size_t cap = PK_MIN((size_t)s->callchain.nr + rep->max_stack, (size_t)MAX_CHAIN);
		nc = pk_machine__callchain(rep->m, s, rep->chain, cap);
		if (nc > 0 && (unsigned int)nc > rep->max_stack) /* (no cut below the limit) */
			nc = pk_callchain__cut(rep->chain, (size_t)nc, rep->max_stack);
		/* a corrupted chain (0 entries): perf counts the sample as one without */
		if (!nc)
			has_chain = false;
	}
	if (!has_chain) {
		rep->cip[0] = s->ip;
		rep->cframes[0] = fid;
		rep->csrc[0] = self_src;
		n = 1;
	} else {
		if (nc < 0) {
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
				err = pk_rep_resolve(rep, s->pid, s->tid, gen, rep->chain[i].ip,
					      rep->chain[i].cpumode, &re, &fid);
				if (err)
					return err;
			}
			uint32_t src = rep->key_on[PK_SORT_SRCLINE] ? pk_rep_src_of(rep, re, fid) : 0;
			const uint32_t *ifr = NULL;
			/* perf 6.1 expands only DWARF-unwound frames */
			size_t ni = rep->inlines && (rep->inlines_all ||
						     (rep->chain[i].flags & PK_CHAIN_UNWOUND))
					    ? pk_rep_inlines_of(rep, re, &ifr) : 0;
			if (!ni) {
				/* (the usual case: no copy loop, and fid stays in a register) */
				rep->cframes[n] = fid;
				rep->cip[n] = rep->chain[i].ip;
				rep->csrc[n] = src;
				n++;
				continue;
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
	bool abs = (rep->children || rep->callgraph) && has_chain;
	if (abs) {
		/* unresolved frames of cumulative entries and call-chain nodes are keyed by
		 * absolute address */
		bool same = true;
		for (size_t i = 0; i < n; i++) {
			uint32_t fi = rep->cframes[i];
			rep->cabs[i] = pk_rep_frame_abs_same(rep, fi) ? fi
								     : frame_abs(rep, fi, rep->cip[i]);
			same &= rep->cabs[i] == fi;
		}
		rep->abs_same = same;
	}
	if (rep->direct) {
		/* time and socket keys: aggregated at once, with the sample's time */
		rep->cur_time = s->time;
		err = pk_rep_flush_pending(rep);
		return err ? err : aggregate(rep, h, cid, pid, tid, cpu, period, 1, n, has_chain,
					     rep->self_frame, rep->cframes,
					     abs ? rep->cabs : NULL,
					     rep->key_on[PK_SORT_SRCLINE] ? rep->csrc : NULL);
	}
	size_t klen = pending_key(rep, h, cid, pid, tid, cpu, n, has_chain);
	/* a frame made while resolving this sample makes the key one never seen */
	bool fresh = false;
	if (rep->nr_frames != frames_before) {
		/* the self frame, the chain's frames and their absolute-address twins (not the
		 * srcline string ids after them) */
		uint32_t kfl = rep->kbuf[PK_FLAGS];
		size_t end = PK_HDR + n * (1 + ((kfl & (PF_ABS | PF_ABS_SAME)) == PF_ABS));
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
int pk_rep_on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct pk_report *rep = ctx;
	if (!r || !ev->attr)
		return 0;
	/* (most samples read no counters: straight to do_sample, without the frame of
	 * do_read_sample's loop) */
	if (!(r->sample.type & PERF_SAMPLE_READ))
		return do_sample(rep, ev->attr, &r->sample);
	return do_read_sample(rep, ev->attr, &r->sample);
}

/* Every other record (the session gave it to the machine first) */
int pk_rep_on_record(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct pk_report *rep = ctx;
	if (!r)
		return 0; /* a user record, unknown or malformed (the reader warned) */
	const struct pk_data_attr *a = ev->attr;
	if (!++rep->cepoch) {
		/* COMM, FORK, EXIT, ... may rename a thread; on wrap-around no entry is current */
		for (size_t i = 0; i < PK_ARRAY_SIZE(rep->ccache); i++)
			rep->ccache[i].epoch = 0;
		for (size_t i = 0; i < PK_ARRAY_SIZE(rep->gcache); i++)
			rep->gcache[i].epoch = 0;
		rep->kg_epoch = 0;
		rep->cepoch = 1;
	}
	switch (r->type) {
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

/* Every attr of r gets a hist, so that events without samples still have a section. */
void pk_rep_hists_of_reader(struct pk_report *rep, struct pk_data_reader *r)
{
	char nb[64];
	for (size_t i = 0; i < pk_data_reader__nr_attrs(r); i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(r, i);
		struct hist *h = a ? hist_get(rep, a->idx, pk_data_attr__name(a, nb, sizeof(nb)))
				   : NULL;
		if (h)
			h->pub.attr = a;
	}
}

int pk_report__process(struct pk_report *rep, struct pk_data_reader *r,
		       pk_report_progress_fn progress, void *ctx)
{
	if (!rep || !r)
		return pk_err(-EINVAL);
	rep->progress = progress;
	rep->progress_ctx = ctx;
	PK_OPTS(pk_session_opts, so, .reader_thread = rep->reader_thread, .machine = rep->m);
	PK_OPTS(pk_session_ops, ops, .sample = pk_rep_on_sample, .other = pk_rep_on_record,
		.progress = progress ? on_progress : NULL);
	/* aggregation on a worker thread (aggw.c), unless the aggregation reads strings
	 * (filters, regular expressions) or changes the totals (-U) */
	rep->agg_async = rep->reader_thread && pk_online_cpus() >= 2 &&
			 (rep->callgraph || rep->children) && !rep->nr_dsos && !rep->nr_symbols &&
			 !rep->has_parent_re && !rep->has_ignore_re && !rep->hide_unresolved &&
			 /* keys.c's time, socket, srcfile and symoff keys aggregate with the
			  * sample's own time or look strings up: on this thread */
			 !rep->direct && !rep->src_for_file && !rep->symoff_key;
	int err = pk_rep_process(rep, r, &so, &ops, rep);
	rep->agg_async = false;
	return err;
}

int pk_rep_process(struct pk_report *rep, struct pk_data_reader *r,
		   const struct pk_session_opts *so, const struct pk_session_ops *ops, void *ctx)
{
	pk_rep_hists_of_reader(rep, r);
	rep->read_rd = r;
	struct pk_session *ses = pk_session__new(r, so);
	if (!ses)
		return pk_err(-errno);
	int err = pk_session__process(ses, ops, ctx);
	pk_session__ordered_stats(ses, &rep->ost);
	pk_session__free(ses);
	pk_rep_rents_release(rep);
	if (err < 0)
		return pk_err(err);
	return pk_report__finish(rep);
}
