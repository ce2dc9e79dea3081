/* SPDX-License-Identifier: MIT */
/*
 * lib/report/resolve.c - sampled addresses to the histogram's frames: frame interning,
 * the resolved-address entries (a memo of pk_machine__resolve, of the srcline and of the
 * inline look-ups, keyed by the machine's map generation), the DSO-address cache that
 * shares symbol look-ups between processes, and the inline expansion of a frame.
 */
#include "resolve.h"

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
int pk_rep_index_rebuild(struct pk_index *x, size_t n, uint64_t (*hash)(const void *, size_t, bool *),
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
int pk_rep_frame_intern(struct pk_report *rep, const struct frame *f, uint32_t *id)
{
	uint64_t h = frame_hash(f);
	if (pk_rep_index_rebuild(&rep->fidx, rep->nr_frames, frame_hash_at, rep))
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
	    (rep->nr_frames + 1 > rep->cap_frames && pk_rep_frames_grow(rep)) ||
	    pk_grow((void **)&rep->fsame, &rep->cap_fsame, rep->nr_frames / 64 + 1,
		    sizeof(uint64_t)))
		return -ENOMEM;
	uint32_t nid = (uint32_t)rep->nr_frames++;
	rep->frames[nid] = *f;
	if (!(nid & 63))
		rep->fsame[nid >> 6] = 0; /* (pk_grow does not clear) */
	rep->fsame[nid >> 6] |= (uint64_t)(f->sym || f->nomap) << (nid & 63);
	pk_index_put(&rep->fidx, h, nid);
	*id = nid;
	return 0;
}

int pk_rep_nomap_frame(struct pk_report *rep, uint64_t ip, uint8_t cm, uint32_t *fid)
{
	if (!rep->unknown_id && pk_str_intern(&rep->strs, "[unknown]", &rep->unknown_id))
		return -ENOMEM;
	struct frame f = { .dso = rep->unknown_id, .dso_long = rep->unknown_id, .addr = ip, .ip = ip,
			   .nomap = true,
			   .kernel = cm == PK_CPUMODE_KERNEL || cm == PK_CPUMODE_GUEST_KERNEL };
	return pk_rep_frame_intern(rep, &f, fid);
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
	struct dname *dn = &rep->dnames[((uintptr_t)loc->dso >> 6) % PK_ARRAY_SIZE(rep->dnames)];
	if (dn->dso == loc->dso && !strcmp(pk_str_get(&rep->strs, dn->sid), sname) &&
	    !strcmp(pk_str_get(&rep->strs, dn->lid), lname)) {
		f.dso = dn->sid; /* (and dso_seq has the long name) */
		f.dso_long = dn->lid;
	} else {
		if (pk_str_intern(&rep->strs, sname, &f.dso) ||
		    pk_str_intern(&rep->strs, lname, &f.dso_long))
			return -ENOMEM;
		if (!pk_u64map_get(&rep->dso_seq, f.dso_long) &&
		    pk_u64map_put(&rep->dso_seq, f.dso_long,
				  (void *)(uintptr_t)((uint64_t)pk_dso_seq(loc->dso) + 1)))
			return -ENOMEM;
		*dn = (struct dname){ .dso = loc->dso, .sid = f.dso, .lid = f.dso_long };
	}
	if (!loc->sym) /* (set when the map's look-up took it: see pk_machine_resolve_map) */
		loc->sym = pk_dso__symbol(loc->dso, loc->dso_addr, &loc->sym_start,
					  &loc->sym_size);
	if (loc->sym && pk_str_intern(&rep->strs, loc->sym, &f.sym))
		return -ENOMEM;
	f.kernel = loc->kernel;
	f.addr = loc->dso_addr;
	f.ip = off - loc->map_pgoff + loc->map_start; /* back from the file offset */
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
	return pk_rep_frame_intern(rep, &f, fid);
}

/* pk_rep_resolve() past the hot cache (kept out of line: it is rarely needed, and large) */
__attribute__((noinline)) int pk_rep_resolve_slow(struct pk_report *rep, uint32_t pid,
						  uint32_t tid, uint64_t gen, uint64_t ip,
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
		if (pk_rep_nomap_frame(rep, ip, cm, fid))
			return -ENOMEM;
		if (cm == PK_CPUMODE_USER)
			pk_gapcache__put(&rep->gaps, pid, gen, loc.map_start, loc.map_end, 1);
		if (rep->rhot)
			rep->rhot[hot] = (struct rhot){ .ip = ip, .gen = gen, .cm = cm,
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
		rep->rhot[hot] = (struct rhot){ .ip = ip, .gen = gen, .cm = cm,
						.rent = nid + 1, .frame = *fid };
	*out = &rep->rents[nid];
	return 0;
}

/* srcline string id of a resolved address ("file.c:12", basename as perf prints it; a
 * DSO-relative address when there is no line information). */
uint32_t pk_rep_srcline_of(struct pk_report *rep, struct rent *e, uint32_t fid)
{
	if (e && e->srcline)
		return e->srcline;
	char buf[512];
	const char *file = NULL;
	unsigned int line = 0;
	const struct frame *f = &rep->frames[fid];
	int sl = e && e->dso && !f->kernel ? pk_dso__srcline(e->dso, e->dso_addr, &file, &line)
					   : -ENOENT;
	if (!e) {
		/* outside every map: the address (not cached: the string table is the cache) */
		snprintf(buf, sizeof(buf), "%s[%" PRIx64 "]", pk_str_get(&rep->strs, f->dso), f->addr);
	} else if (sl == 0 && file) {
		const char *b = strrchr(file, '/');
		snprintf(buf, sizeof(buf), "%s:%u", b ? b + 1 : file, line);
	} else if (sl == -ENODATA) {
		/* in a function of the symbol table that names no file: addr2line's "??" */
		snprintf(buf, sizeof(buf), "??:0");
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

/*
 * Inline expansion of a resolved user address (perf's callchain view): the functions
 * inlined at the address, innermost first, then the containing function. A name that
 * differs from the ELF symbol is shown as "name (inlined)", as perf does. Returns the
 * number of frame ids in *out, 0 when there is nothing to expand.
 */
size_t pk_rep_inlines_of(struct pk_report *rep, struct rent *e, const uint32_t **out)
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
			if (pk_str_intern(&rep->strs, fn, &g.sym) || pk_rep_frame_intern(rep, &g, &rep->inl_pool[rep->nr_inl]))
				return 0;
			if (name && pk_rep_chain_key_inline(rep, rep->inl_pool[rep->nr_inl], name))
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
