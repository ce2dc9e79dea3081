/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/annotate.c - samples per instruction: a session client that counts the
 * leaf address of every sample of one event per (DSO, symbol), and the disassembly of a
 * symbol's bytes (disasm.c: capstone), those counts beside each instruction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/annotate.h>
#include <perfkit/session.h>
#include <perfkit/synth.h>
#include "internal.h"
#include "core/intern.h"
#include "session/relaxed.h"
#include "annotate/disasm.h"
#include "annotate/kcode.h"
#include "annotate/klive.h"
#include "annotate/kmod.h"
#include "annotate/order.h"
#include "annotate/ann-internal.h"

static double ann_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static uint64_t ann_hash(const void *p, uint64_t a)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL ^ a * 0xc2b2ae3d27d4eb4fULL;
	return h ^ (h >> 31);
}

/* find (dso, addr) in a table; *slot gets the place (found or free). Grows as needed. */
static int ann_lookup(struct ann_slot **tab, size_t *mask, size_t *used, const struct pk_dso *d,
		      uint64_t addr, struct ann_slot **slot)
{
	if (!*tab || (*used + 1) * 10 > (*mask + 1) * 7) {
		size_t n = *tab ? (*mask + 1) * 2 : 1024;
		/* a big table is mapped and populated at once (a page fault per 4 KiB page
		 * of a fresh table was 40 % of the page faults on the system-wide file) */
		struct ann_slot *nt = pk_arr_calloc(n * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		for (size_t i = 0; *tab && i <= *mask; i++) {
			if (!(*tab)[i].used)
				continue;
			size_t j = ann_hash((*tab)[i].dso, (*tab)[i].addr) & (n - 1);
			while (nt[j].used)
				j = (j + 1) & (n - 1);
			nt[j] = (*tab)[i];
		}
		if (*tab)
			pk_arr_free(*tab, (*mask + 1) * sizeof(**tab));
		*tab = nt;
		*mask = n - 1;
	}
	for (size_t j = ann_hash(d, addr) & *mask;; j = (j + 1) & *mask) {
		struct ann_slot *s = &(*tab)[j];
		if (!s->used || (s->dso == d && s->addr == addr)) {
			*slot = s;
			return 0;
		}
	}
}

/*
 * The symbol of a resolved address and a new hit in it: *sym, *hit. Each raw entry is
 * one (object, address), resolved once: its hit is new (a table of the hits by address,
 * to find one again, was 6 % of annotate on a system-wide file). The symbol of the last
 * call is tried first: the addresses of one object come in runs.
 */
static int ann_add(struct pk_annotate *A, const struct pk_addr_loc *loc, uint32_t *sym,
		   uint32_t *hit)
{
	uint32_t si;
	if (A->last_sym_ok && A->last_sym_dso == loc->dso && A->last_sym_start == loc->sym_start) {
		si = A->last_sym;
	} else {
		struct ann_slot *ss;
		int err = ann_lookup(&A->sslots, &A->smask, &A->nr_sslots_used, loc->dso,
				     loc->sym_start, &ss);
		if (err)
			return err;
		if (!ss->used) {
			if (A->nr_syms == A->cap_syms) {
				size_t nc = A->cap_syms ? A->cap_syms * 2 : 64;
				struct ann_sym *ns = realloc(A->syms, nc * sizeof(*ns));
				if (!ns)
					return -ENOMEM;
				A->syms = ns;
				A->cap_syms = nc;
			}
			A->syms[A->nr_syms] = (struct ann_sym){
				.dso = loc->dso, .dso_name = loc->dso_name, .name = loc->sym,
				.start = loc->sym_start, .size = loc->sym_size, .kernel = loc->kernel,
			};
			*ss = (struct ann_slot){ .dso = loc->dso, .addr = loc->sym_start,
						 .sym = (uint32_t)A->nr_syms++, .used = true };
			A->nr_sslots_used++;
		}
		si = ss->sym;
		A->last_sym_ok = true;
		A->last_sym_dso = loc->dso;
		A->last_sym_start = loc->sym_start;
		A->last_sym = si;
	}
	struct ann_sym *S = &A->syms[si];
	if (S->nr_hits == S->cap_hits) {
		size_t nc = S->cap_hits ? S->cap_hits * 2 : 8;
		struct ann_hit *nh = realloc(S->hits, nc * sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		S->hits = nh;
		S->cap_hits = nc;
	}
	S->hits[S->nr_hits] = (struct ann_hit){ .addr = loc->dso_addr };
	*sym = si;
	*hit = (uint32_t)S->nr_hits++;
	return 0;
}

/* the entry of the samples without a symbol in object d (NULL: outside every map) */
static int unresolved_of(struct pk_annotate *A, const struct pk_dso *d, const char *name,
			 uint32_t *idx)
{
	uintptr_t i = (uintptr_t)pk_u64map_get(&A->unres_of, (uintptr_t)d);
	if (!i) {
		if (A->nr_unres == A->cap_unres) {
			size_t nc = A->cap_unres ? A->cap_unres * 2 : 16;
			void *n = realloc(A->unres, nc * sizeof(*A->unres));
			if (!n)
				return -ENOMEM;
			A->unres = n;
			A->cap_unres = nc;
		}
		A->unres[A->nr_unres] = (struct ann_unres){ name, 0 };
		i = ++A->nr_unres;
		if (pk_u64map_put(&A->unres_of, (uintptr_t)d, (void *)i))
			return -ENOMEM;
	}
	*idx = (uint32_t)(i - 1);
	return 0;
}

/*
 * Preload: the symbol tables of the objects that will be resolved in are read on the
 * machine's preload thread while the file is read. Which objects those are is known at
 * the end (those with min_percent of the period); an object is asked for once it holds
 * that share of the period read so far (every object, without min_percent). One that
 * falls below by the end was read for nothing, on the other CPU; one that rises above
 * late is read at the end, as without preload. What is printed is the same.
 */
static int obj_of(struct pk_annotate *A, struct pk_dso *d, uint32_t *idx)
{
	uintptr_t i = (uintptr_t)pk_u64map_get(&A->obj_of, (uintptr_t)d);
	if (!i) {
		if (pk_grow((void **)&A->objs, &A->cap_objs, A->nr_objs + 1, sizeof(*A->objs)))
			return -ENOMEM;
		A->objs[A->nr_objs] = (struct ann_obj){ .dso = d };
		i = ++A->nr_objs;
		if (pk_u64map_put(&A->obj_of, (uintptr_t)d, (void *)i))
			return -ENOMEM;
		if (A->preload && A->min_percent <= 0) {
			A->objs[i - 1].queued = true;
			A->st.preloaded += pk_machine_preload_dso(A->m, d);
		}
	}
	*idx = (uint32_t)(i - 1);
	return 0;
}

static void preload_hot(struct pk_annotate *A)
{
	for (size_t i = 0; i < A->nr_objs; i++) {
		struct ann_obj *o = &A->objs[i];
		if (!o->queued && ann_pct(o->period, A->st.period) >= A->min_percent) {
			o->queued = true;
			A->st.preloaded += pk_machine_preload_dso(A->m, o->dso);
		}
	}
}

/* the object number of DSO d (made on first sight) */
static int obj_num(struct pk_annotate *A, struct pk_dso *d, uint32_t *objp)
{
	if (A->nr_objs && A->last_obj_dso == d) {
		*objp = A->last_obj;
		return 0;
	}
	int err = obj_of(A, d, objp);
	if (err)
		return err;
	A->last_obj_dso = d;
	A->last_obj = *objp;
	return 0;
}

/* the raw entry of (object, address) (made on first sight): *idx */
static int raw_add(struct pk_annotate *A, const struct ann_pend *p, uint32_t *idx)
{
	if (!A->rslots || (A->nr_raws + 1) * 10 > (A->rmask + 1) * 7) {
		size_t n = A->rslots ? (A->rmask + 1) * 2 : 1024;
		struct ann_rslot *nt = pk_arr_calloc(n * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		for (size_t i = 0; A->rslots && i <= A->rmask; i++) {
			const struct ann_rslot *s = &A->rslots[i];
			if (!s->raw1)
				continue;
			size_t j = ann_hash((const void *)(uintptr_t)s->obj, s->addr) & (n - 1);
			while (nt[j].raw1)
				j = (j + 1) & (n - 1);
			nt[j] = *s;
		}
		if (A->rslots)
			pk_arr_free(A->rslots, (A->rmask + 1) * sizeof(*A->rslots));
		A->rslots = nt;
		A->rmask = n - 1;
	}
	struct ann_rslot *s;
	for (size_t j = ann_hash((const void *)(uintptr_t)p->obj, p->addr) & A->rmask;;
	     j = (j + 1) & A->rmask) {
		s = &A->rslots[j];
		if (!s->raw1 || (s->obj == p->obj && s->addr == p->addr))
			break;
	}
	if (!s->raw1) {
		if (A->nr_raws >= MEMO_PENDING - 1)
			return -E2BIG;
		if (pk_grow((void **)&A->raws, &A->cap_raws, A->nr_raws + 1, sizeof(*A->raws)))
			return -ENOMEM;
		A->raws[A->nr_raws] = (struct ann_raw){ .dso = (struct pk_dso *)p->dso,
							.dso_name = p->dso_name, .key = p->addr,
							.is_offset = p->is_off, .kernel = p->kernel };
		*s = (struct ann_rslot){ .addr = p->addr, .obj = p->obj,
					 .raw1 = (uint32_t)++A->nr_raws };
	}
	*idx = s->raw1 - 1;
	return 0;
}

/* the symbols made since base (ann_add: in the order of resolve_raws' look-ups) put in
 * the order of their first address in raws, as if the addresses had been looked up in
 * raws' order: symof (raws index -> symbol, or above nr_syms: none) */
static int syms_first_seen(struct pk_annotate *A, size_t base, const uint32_t *symof)
{
	size_t n = A->nr_syms - base, at = 0;
	if (n < 2)
		return 0;
	struct ann_sym *ns = malloc(n * sizeof(*ns));
	bool *placed = calloc(n, sizeof(*placed));
	if (!ns || !placed) {
		free(ns);
		free(placed);
		return -ENOMEM;
	}
	for (size_t i = 0; i < A->nr_raws && at < n; i++) {
		uint32_t si = symof[i];
		if (si >= base && si < A->nr_syms && !placed[si - base]) {
			placed[si - base] = true;
			ns[at++] = A->syms[si];
		}
	}
	memcpy(A->syms + base, ns, n * sizeof(*ns));
	free(ns);
	free(placed);
	return 0;
}

/*
 * After the read: the symbol of every sampled address. The addresses are looked up by
 * object (in the order the objects were first seen) and by address in each, which keeps
 * the symbol tables' search paths, the symbols and their hits in the caches (in raws'
 * order, that of first sight, each was a few cache misses: 10 ms of sys.data's 68 k
 * addresses); the symbols and the objects without one are then put in raws' order (the
 * order of the symbols before sorting, as if resolved at once). An object whose samples
 * are below min_percent of the period cannot hold a symbol at or above it: its symbols
 * are not loaded and its samples are counted as skipped.
 */
#define ANN_NO_SYM UINT32_MAX
static int resolve_raws(struct pk_annotate *A, bool skipped_only)
{
	struct pk_u64map tot = { 0 };   /* dso -> index + 1 into per */
	struct ann_per { uint64_t period, low; } *per = NULL;   /* low: the least key */
	/* (big ones are mappings populated at once: their page faults were a tenth of
	 * this on sys.data) */
	size_t kv_bytes = 2 * (A->nr_raws + 1) * sizeof(struct pk_ann_kv);
	size_t sym_bytes = (A->nr_raws + 1) * sizeof(uint32_t);
	struct pk_ann_kv *kv = pk_arr_calloc(kv_bytes);
	uint32_t *symof = pk_arr_calloc(sym_bytes);
	size_t nr_per = 0, cap_per = 0, n = 0, base = A->nr_syms;
	int err = 0;
	if (!kv || !symof) {
		err = -ENOMEM;
		goto out;
	}
	/* the last object's entry: addresses of one object mostly come in runs */
	const struct pk_dso *last = NULL;
	uintptr_t k = 0;
	for (size_t i = 0; i < A->nr_raws; i++) {
		const struct ann_raw *R = &A->raws[i];
		if (R->dso != last) {
			last = R->dso;
			k = (uintptr_t)pk_u64map_get(&tot, (uintptr_t)last);
		}
		if (!k) {
			if (pk_grow((void **)&per, &cap_per, nr_per + 1, sizeof(*per))) {
				err = -ENOMEM;
				goto out;
			}
			k = ++nr_per;
			per[k - 1] = (struct ann_per){ 0, R->key };
			if (pk_u64map_put(&tot, (uintptr_t)R->dso, (void *)k)) {
				err = -ENOMEM;
				goto out;
			}
		}
		per[k - 1].period += R->period;
		per[k - 1].low = PK_MIN(per[k - 1].low, R->key);
	}
	bool filter = A->min_percent > 0 || skipped_only;
	if (skipped_only && A->threads) {
		/* the objects left out are read now: the preload thread takes them from
		 * the last, this thread from the first (one it finds queued it reads itself) */
		last = NULL;
		for (size_t i = A->nr_raws; i-- > 0;) {
			const struct ann_raw *R = &A->raws[i];
			if (R->dso == last)
				continue;
			last = R->dso;
			k = (uintptr_t)pk_u64map_get(&tot, (uintptr_t)R->dso);
			if (k && ann_pct(per[k - 1].period, A->st.period) < A->min_percent)
				pk_machine_preload_dso(A->m, R->dso);
		}
	}
	last = NULL;
	for (size_t i = 0; i < A->nr_raws; i++) {
		const struct ann_raw *R = &A->raws[i];
		symof[i] = ANN_NO_SYM;
		if (R->dso != last) {
			last = R->dso;
			k = (uintptr_t)pk_u64map_get(&tot, (uintptr_t)last);
		}
		if (filter) {
			bool below = ann_pct(per[k - 1].period, A->st.period) < A->min_percent;
			if (below && !skipped_only) {
				A->st.skipped += R->samples;
				continue;
			}
			if (!below && skipped_only)
				continue;
		}
		if (skipped_only)
			A->st.skipped -= R->samples;
		/* by object, in the order first seen (their tables are read, and what
		 * that says is said, in that order as before), then by address */
		uint64_t rel = R->key - per[k - 1].low;
		kv[n++] = (struct pk_ann_kv){ (uint64_t)(k - 1) << 40 |
					      PK_MIN(rel, ((uint64_t)1 << 40) - 1),
					      (uint32_t)i };
	}
	if ((err = pk_ann_kv_sort(kv, kv + A->nr_raws + 1, n)) != 0)
		goto out;
	for (size_t j = 0; j < n; j++) {
		if (j + 8 < n) {
			/* raws in this order are a miss each (3 MB on sys.data): asked ahead */
			const char *ahead = (const char *)&A->raws[kv[j + 8].idx];
			__builtin_prefetch(ahead);
			__builtin_prefetch(ahead + sizeof(struct ann_raw) - 1);
		}
		uint32_t i = kv[j].idx;
		const struct ann_raw *R = &A->raws[i];
		struct pk_addr_loc loc = { .dso = R->dso, .dso_name = R->dso_name,
					   .kernel = R->kernel };
		loc.dso_addr = R->is_offset ? pk_dso__offset_to_addr(R->dso, R->key) : R->key;
		loc.sym = pk_dso__symbol(R->dso, loc.dso_addr, &loc.sym_start, &loc.sym_size);
		uint32_t sym, hit;
		if (!loc.sym) {
			symof[i] = ANN_NO_SYM - 1;
			continue;
		}
		err = ann_add(A, &loc, &sym, &hit);
		if (err)
			goto out;
		symof[i] = sym;
		struct ann_sym *S = &A->syms[sym];
		S->samples += R->samples;
		S->period += R->period;
		S->hits[hit].samples += R->samples;
		S->hits[hit].period += R->period;
	}
	/* the samples without a symbol, per object in raws' order */
	for (size_t i = 0; i < A->nr_raws; i++) {
		if (symof[i] != ANN_NO_SYM - 1)
			continue;
		const struct ann_raw *R = &A->raws[i];
		uint32_t u;
		if ((err = unresolved_of(A, R->dso, R->dso_name, &u)) != 0)
			goto out;
		A->st.unresolved += R->samples;
		A->unres[u].samples += R->samples;
	}
	err = syms_first_seen(A, base, symof);
	A->last_sym_ok = false; /* (the indices changed) */
out:
	if (per)
		pk_arr_free(per, cap_per * sizeof(*per));
	if (kv)
		pk_arr_free(kv, kv_bytes);
	if (symof)
		pk_arr_free(symof, sym_bytes);
	pk_u64map_release(&tot);
	return err;
}

static uint64_t memo_hash(uint64_t gen, uint64_t ip, uint8_t cpumode)
{
	uint64_t h = (gen * 0x9e3779b97f4a7c15ULL) ^ (ip * 0xc2b2ae3d27d4eb4fULL) ^ cpumode;
	return h ^ (h >> 29);
}

/* the memo's slot of (gen, ip, cpumode): direct-mapped, so a new address takes the place
 * of the one it collides with (hot addresses stay; a long tail of cold ones, such as the
 * short-lived processes of a system-wide profile, costs a resolution each, not a table
 * that outgrows the caches) */
static struct ann_memo *memo_slot(struct pk_annotate *A, uint64_t gen, uint64_t ip,
				  uint8_t cpumode)
{
	return &A->memo[memo_hash(gen, ip, cpumode) & (ANN_MEMO_SLOTS - 1)];
}

#define ANN_PEND 8u
_Static_assert(ANN_PEND == sizeof(((struct pk_annotate *)0)->pend) /
	       sizeof(((struct pk_annotate *)0)->pend[0]), "pend ring size");

/* the oldest pending address's raws index into its memo slot */
static int pend_pop(struct pk_annotate *A)
{
	struct ann_pend *p = &A->pend[A->pend_head];
	uint32_t idx;
	int err = raw_add(A, p, &idx);
	if (err)
		return err;
	p->e->sym = idx;
	A->pend_head = (A->pend_head + 1) % ANN_PEND;
	A->pend_nr--;
	return 0;
}

/* every pending address up to that of slot e (first in first out: the raws entries are
 * made in the order the addresses were first seen, as without the wait) */
static int pend_flush(struct pk_annotate *A, const struct ann_memo *e)
{
	while (A->pend_nr) {
		bool last = e && A->pend[A->pend_head].e == e;
		int err = pend_pop(A);
		if (err || last)
			return err;
	}
	return 0;
}

/* slot e's raws index, looked up now if it is pending */
static int memo_sym(struct pk_annotate *A, struct ann_memo *e)
{
	return memo_kind(e) == MEMO_HIT && (e->sym & MEMO_PENDING) ? pend_flush(A, e) : 0;
}

/* the counts a memo slot holds into its raw entry */
static void memo_settle(struct pk_annotate *A, struct ann_memo *e)
{
	if (memo_kind(e) != MEMO_HIT || !memo_n(e))
		return;
	struct ann_raw *R = &A->raws[e->sym];
	R->samples += memo_n(e);
	R->period += e->period;
	e->tag &= ~MEMO_N_MAX;
	e->period = 0;
}

#define ANN_SETTLE_LAG 8u
_Static_assert(ANN_SETTLE_LAG == sizeof(((struct pk_annotate *)0)->settle) /
	       sizeof(((struct pk_annotate *)0)->settle[0]), "settle ring size");

/* the counts of an evicted slot: to raws ANN_SETTLE_LAG evictions later (the miss on
 * its raws line was a fifth of on_raw on the system-wide file even prefetched at the
 * start of the eviction) */
static void memo_settle_later(struct pk_annotate *A, struct ann_memo *e)
{
	if (memo_kind(e) != MEMO_HIT || !memo_n(e))
		return;
	__builtin_prefetch(&A->raws[e->sym], 1);
	struct ann_settle *s = &A->settle[A->settle_at++ % ANN_SETTLE_LAG];
	if (s->n) {
		struct ann_raw *R = &A->raws[s->sym];
		R->samples += s->n;
		R->period += s->period;
	}
	*s = (struct ann_settle){ e->sym, memo_n(e), e->period };
}

/* every slot's and every waiting one's (at the end of the read) */
static int memo_settle_all(struct pk_annotate *A)
{
	int err = pend_flush(A, NULL);
	if (err)
		return err;
	for (unsigned i = 0; i < ANN_SETTLE_LAG; i++) {
		struct ann_settle *s = &A->settle[i];
		if (s->n) {
			A->raws[s->sym].samples += s->n;
			A->raws[s->sym].period += s->period;
		}
		*s = (struct ann_settle){ 0, 0, 0 };
	}
	for (size_t i = 0; A->memo && i < ANN_MEMO_SLOTS; i++)
		memo_settle(A, &A->memo[i]);
	return 0;
}

/* resolve the address of a sample whose memo slot holds another (or none): e its slot */
static int memo_fill(struct pk_annotate *A, struct ann_memo *e, uint32_t pid, uint32_t tid,
		     uint64_t ip, uint8_t cpumode, uint64_t gen)
{
	struct pk_addr_loc loc;
	memset(&loc, 0, sizeof(loc));
	uint32_t sym = 0, obj = 0;
	uint8_t kind = MEMO_HIT;
	bool is_off = false;
	int err;
	struct ann_mapc *mc = &A->mapc[cpumode == PK_CPUMODE_KERNEL];
	if (mc->ok && mc->gen == gen && mc->cpumode == cpumode && ip >= mc->start &&
	    ip < mc->end) {
		/* (the same generation: the same map holds ip, the same translation) */
		loc.dso = mc->dso;
		loc.dso_name = mc->dso_name;
		loc.kernel = mc->kernel;
		loc.dso_addr = mc->is_off ? ip - mc->start + mc->pgoff : ip;
		is_off = mc->is_off;
		err = obj_num(A, loc.dso, &obj);
	} else if (pk_machine_resolve_map_lazy(A->m, pid, tid, ip, cpumode, &loc, &is_off) != 0 ||
		   !loc.dso) {
		kind = MEMO_UNRES;
		err = unresolved_of(A, loc.dso, loc.dso ? loc.dso_name : NULL, &sym);
	} else {
		/* kept: an ELF map (file offsets) or a kernel one addressed as is (not the
		 * fallback of no kernel map, whose answer depends on the address) */
		if (is_off || (loc.kernel && loc.dso_addr == ip && loc.map_end != UINT64_MAX))
			*mc = (struct ann_mapc){ .gen = gen, .start = loc.map_start,
						 .end = loc.map_end, .pgoff = loc.map_pgoff,
						 .dso = loc.dso, .dso_name = loc.dso_name,
						 .cpumode = cpumode, .ok = true,
						 .kernel = loc.kernel, .is_off = is_off };
		err = obj_num(A, loc.dso, &obj);
	}
	/* the counts of the address that had the slot go to its raw entry */
	if (!err)
		err = memo_sym(A, e);
	if (err)
		return err;
	memo_settle_later(A, e);
	if (kind == MEMO_HIT) {
		/* the raws index is looked up ANN_PEND new addresses later, its table slot
		 * fetched meanwhile (that miss was a third of on_raw on sys.data) */
		if (A->pend_nr == ANN_PEND && (err = pend_pop(A)) != 0)
			return err;
		unsigned at = (A->pend_head + A->pend_nr++) % ANN_PEND;
		A->pend[at] = (struct ann_pend){ .e = e, .dso = loc.dso, .dso_name = loc.dso_name,
						 .addr = loc.dso_addr, .obj = obj,
						 .is_off = is_off, .kernel = loc.kernel };
		if (A->rslots)
			__builtin_prefetch(&A->rslots[ann_hash((const void *)(uintptr_t)obj,
							       loc.dso_addr) & A->rmask]);
		sym = MEMO_PENDING | at;
	}
	*e = (struct ann_memo){ .gen = gen, .ip = ip, .sym = sym, .obj = obj,
				.tag = (uint32_t)cpumode << MEMO_MODE_SHIFT |
				       (uint32_t)kind << MEMO_KIND_SHIFT };
	return 0;
}

/* where attr a's samples keep what annotate reads: u64 indexes in the body, -1 none */
static void raw_layout(struct pk_annotate *A, const struct pk_data_attr *a)
{
	uint64_t st = a->layout.sample_type;
	int at = !!(st & PERF_SAMPLE_IDENTIFIER);
	A->ra = a;
	A->r_ip = (st & PERF_SAMPLE_IP) ? at++ : -1;
	A->r_tid = (st & PERF_SAMPLE_TID) ? at++ : -1;
	at += !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR) + !!(st & PERF_SAMPLE_ID) +
	      !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU);
	A->r_period = (st & PERF_SAMPLE_PERIOD) ? at : -1;
	A->r_dflt_period = !a->attr.attr.freq && a->attr.attr.sample_period
				   ? a->attr.attr.sample_period : 1;
}

/*
 * A sample as it lies in the file (pk_session_process_raw): its ip, pid/tid, period and
 * cpumode read at places worked out once per attr, the same values and the same samples
 * left out (no layout, shorter than its fixed fields, no IP) as the sample_prefix decode
 * gave; the decode into a pk_record and the callbacks in between were half of the
 * work per sample.
 */
static int on_raw(void *ctx, const struct perf_event_header *h, const struct pk_data_attr *at)
{
	struct pk_annotate *A = ctx;
	if (!at || (size_t)at->idx >= A->nr_attrs || !A->attr_ok[at->idx] || !at->layout_ok ||
	    h->size < at->layout.min_sample_size)
		return 0;
	if (at != A->ra)
		raw_layout(A, at);
	if (A->r_ip < 0)
		return 0;
	const uint8_t *b = (const uint8_t *)(h + 1);
	uint64_t ip, period = A->r_dflt_period;
	uint32_t pid = 0, tid = 0;
	memcpy(&ip, b + 8 * A->r_ip, 8);
	if (A->r_tid >= 0) {
		memcpy(&pid, b + 8 * A->r_tid, 4);
		memcpy(&tid, b + 8 * A->r_tid + 4, 4);
	}
	if (A->r_period >= 0)
		memcpy(&period, b + 8 * A->r_period, 8);
	unsigned m = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	uint8_t cpumode = (uint8_t)(m <= PK_CPUMODE_GUEST_USER ? m : PK_CPUMODE_INVALID);
	A->st.samples++;
	A->st.period += period;
	uint64_t ns = A->st.samples;
	if (A->preload && (!(ns & (ANN_PRELOAD_EVERY - 1)) ||
			   (ns >= ANN_PRELOAD_FIRST && ns < ANN_PRELOAD_EVERY && !(ns & (ns - 1)))))
		preload_hot(A);
	if (!A->gen_ok || A->gen_pid != pid || A->gen_tid != tid || A->gen_mode != cpumode) {
		A->gen = pk_machine__maps_gen(A->m, pid, tid, cpumode);
		A->gen_pid = pid;
		A->gen_tid = tid;
		A->gen_mode = cpumode;
		A->gen_ok = true;
	}
	uint64_t gen = A->gen;
	struct ann_memo *e = memo_slot(A, gen, ip, cpumode);
	if (!memo_holds(e, gen, ip, cpumode)) {
		int err = memo_fill(A, e, pid, tid, ip, cpumode, gen);
		if (err)
			return err;
	}
	if (memo_kind(e) == MEMO_UNRES) {
		A->st.unresolved++;
		A->unres[e->sym].samples++;
		return 0;
	}
	if (period > UINT32_MAX - e->period || memo_n(e) == MEMO_N_MAX) {
		int err = memo_sym(A, e);
		if (err)
			return err;
		memo_settle(A, e);
	}
	if (period > UINT32_MAX) {
		/* (a period that does not fit the slot's count goes to raws itself) */
		A->raws[e->sym].samples++;
		A->raws[e->sym].period += period;
	} else {
		e->period += (uint32_t)period;
		e->tag++;
	}
	if (A->preload)
		A->objs[e->obj].period += period;
	return 0;
}

/* with the preload thread, a file's mapping up to this long keeps its pages during the
 * read and that thread drops them after it (dropping them behind the read was a tenth of
 * the reading thread on deep.data and dwarf.data: the page tables' teardown). The pages
 * count in the RSS meanwhile; at 256 MiB, deep.data (44 MB) and dwarf.data (63 MB) ran
 * at 56 and 68 MB instead of 21 and 14 for a wall time the same within noise (0.3 ms),
 * so only files up to 32 MiB (sys.data's 33 MB, where it saved 1.4 ms) keep them */
#define ANN_KEEP_MAPPED ((uint64_t)32 << 20)
static void drop_pages(void *r) { pk_rd_drop_pages(r); }

/* every record but a sample: the machine may have changed */
static int on_other(void *ctx, const struct pk_data_event *ev, const struct pk_record *rec)
{
	(void)ev;
	(void)rec;
	((struct pk_annotate *)ctx)->gen_ok = false;
	return 0;
}

/* the tables of the read (pk_arr_calloc'ed: big ones are mappings) */
static void ann_tables_free(struct pk_annotate *A)
{
	if (A->sslots)
		pk_arr_free(A->sslots, (A->smask + 1) * sizeof(*A->sslots));
	if (A->rslots)
		pk_arr_free(A->rslots, (A->rmask + 1) * sizeof(*A->rslots));
	pk_arr_free(A->memo, ANN_MEMO_SLOTS * sizeof(*A->memo));
	A->sslots = NULL;
	A->rslots = NULL;
	A->smask = A->rmask = A->nr_sslots_used = 0;
	A->memo = NULL;
}

static int hit_cmp(const void *pa, const void *pb)
{
	const struct ann_hit *a = pa, *b = pb;
	return (a->addr > b->addr) - (a->addr < b->addr);
}

static int sym_cmp(const void *pa, const void *pb)
{
	const struct ann_sym *a = pa, *b = pb;
	if (a->period != b->period)
		return a->period < b->period ? 1 : -1;
	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->dso_name, b->dso_name);
}

static int choose_event(struct pk_annotate *A, struct pk_data_reader *r, const char *only)
{
	A->nr_attrs = pk_data_reader__nr_attrs(r);
	A->attr_ok = calloc(A->nr_attrs + 1, sizeof(*A->attr_ok));
	if (!A->attr_ok)
		return -ENOMEM;
	for (size_t i = 0; i < A->nr_attrs; i++) {
		char buf[64];
		const char *name = pk_data_attr__name(pk_data_reader__attr(r, i), buf, sizeof(buf));
		if (!A->event[0] && (!only || !strcmp(only, name)))
			snprintf(A->event, sizeof(A->event), "%s", name);
		A->attr_ok[i] = A->event[0] && !strcmp(A->event, name);
	}
	return A->event[0] ? 0 : -ENOENT;
}

/*
 * After a resolution: sort the symbols (the hits of one are sorted when it is first
 * disassembled: most symbols of a big profile never are; sorting them all was 3 % of
 * annotate on the bench's system-wide file). The tables' indices are stale after
 * sorting and no longer needed; the raw counts are kept while objects were left out
 * (pk_annotate__load_skipped resolves them).
 */
static void ann_finish(struct pk_annotate *A)
{
	if (A->nr_syms)
		qsort(A->syms, A->nr_syms, sizeof(*A->syms), sym_cmp);
	ann_tables_free(A);
	A->last_sym_ok = false;
	pk_arr_free(A->objs, A->cap_objs * sizeof(*A->objs));
	A->objs = NULL;
	A->nr_objs = A->cap_objs = 0;
	pk_u64map_release(&A->obj_of);
	A->preload = false;
	if (!A->st.skipped) {
		pk_arr_free(A->raws, A->cap_raws * sizeof(*A->raws));
		A->raws = NULL;
		A->nr_raws = A->cap_raws = 0;
	}
}

PK_API int pk_annotate__load_skipped(struct pk_annotate *a)
{
	if (!a)
		return -EINVAL;
	if (!a->st.skipped)
		return 0;
	/* the objects resolved now are others than those before: new tables suffice */
	int err = resolve_raws(a, true);
	if (!err)
		ann_finish(a);
	return err;
}

PK_API struct pk_annotate *pk_annotate__load(struct pk_data_reader *r,
					     const struct pk_annotate_opts *o)
{
	if (!r || !PK_OPTS_VALID(o, pk_annotate_opts)) {
		errno = EINVAL;
		return NULL;
	}
	struct pk_annotate *A = calloc(1, sizeof(*A));
	if (!A) {
		errno = ENOMEM;
		return NULL;
	}
	A->st.sz = sizeof(A->st);
	A->intel = PK_OPTS_GET(o, intel_syntax, false);
	A->min_percent = PK_OPTS_GET(o, min_percent, 0.0);
	A->preload = A->threads = PK_OPTS_GET(o, reader_thread, false);
	const char *vm = PK_OPTS_GET(o, vmlinux, NULL), *kc = PK_OPTS_GET(o, kcore, NULL);
	A->vmlinux = vm ? strdup(vm) : NULL;
	A->kcore = kc ? strdup(kc) : NULL;
	A->kcore_set = kc != NULL;
	int err = (vm && !A->vmlinux) || (kc && !A->kcore) ? -ENOMEM : 0;
	if (!err)
		err = choose_event(A, r, PK_OPTS_GET(o, event, NULL));
	if (err)
		goto fail;
	A->memo = pk_arr_calloc(ANN_MEMO_SLOTS * sizeof(*A->memo));
	if (!A->memo) {
		err = -ENOMEM;
		goto fail;
	}
	/* a sample's ip, pid/tid and period are all it takes: its fixed fields */
	PK_OPTS(pk_session_opts, so, .reader_thread = PK_OPTS_GET(o, reader_thread, false),
		.machine_opts = PK_OPTS_GET(o, machine_opts, NULL), .sample_prefix = true,
		.samples_unordered = true, .host_known = PK_OPTS_GET(o, host_known, false));
	A->ses = pk_session__new(r, &so);
	if (!A->ses) {
		err = -errno;
		goto fail;
	}
	A->m = pk_session__machine(A->ses);
	if (A->preload && PK_OPTS_GET(o, preload_lines, false))
		pk_machine_preload_lines(A->m, true);
	if (A->preload)
		pk_rd_keep_mapped(r, ANN_KEEP_MAPPED);
	PK_OPTS(pk_session_ops, ops, .other = on_other);
	err = pk_session_process_raw(A->ses, &ops, A, on_raw, A);
	if (err == -ENOMEM)
		goto fail;
	if (err) {
		/* corrupt past some point: what was read before is kept */
		A->st.reader_error = err;
	}
	/* the DWARF of an object whose table is still being read is opened where it is
	 * used: past the read, this thread would wait for it (or exit after it) where the
	 * object may not even be shown */
	if (A->preload) {
		pk_machine_preload_lines(A->m, false);
		pk_machine_preload_call(A->m, drop_pages, r); /* (ANN_KEEP_MAPPED) */
	}
	err = memo_settle_all(A);
	if (err)
		goto fail;
	err = resolve_raws(A, false);
	if (err)
		goto fail;
	ann_finish(A);
	return A;
fail:
	pk_annotate__free(A);
	errno = -err;
	return NULL;
}

PK_API void pk_annotate__free(struct pk_annotate *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr_syms; i++)
		free(a->syms[i].hits);
	free(a->syms);
	ann_tables_free(a);
	pk_arr_free(a->raws, a->cap_raws * sizeof(*a->raws));
	pk_arr_free(a->objs, a->cap_objs * sizeof(*a->objs));
	pk_u64map_release(&a->obj_of);
	free(a->attr_ok);
	free(a->unres);
	pk_u64map_release(&a->unres_of);
	pk_kcode_free(a->kc);
	pk_kmods_free(a->kmods);
	free(a->vmlinux);
	free(a->kcore);
	pk_session__free(a->ses);
	free(a);
}

PK_API void pk_annotate__stats(const struct pk_annotate *a, struct pk_annotate_stats *st)
{
	if (!st)
		return;
	size_t sz = st->sz && st->sz < sizeof(*st) ? st->sz : sizeof(*st);
	struct pk_annotate_stats t;
	memset(&t, 0, sizeof(t));
	if (a)
		t = a->st;
	t.sz = sz;
	memcpy(st, &t, sz);
}

PK_API const char *pk_annotate__event(const struct pk_annotate *a)
{
	return a ? a->event : NULL;
}

PK_API size_t pk_annotate__nr_symbols(const struct pk_annotate *a)
{
	return a ? a->nr_syms : 0;
}

PK_API int pk_annotate__symbol(const struct pk_annotate *a, size_t i, struct pk_annotate_sym *out)
{
	if (!a || !out)
		return -EINVAL;
	if (i >= a->nr_syms)
		return -ERANGE;
	const struct ann_sym *S = &a->syms[i];
	struct pk_annotate_sym t = {
		.dso = S->dso, .dso_name = S->dso_name, .name = S->name, .start = S->start,
		.size = S->size, .samples = S->samples, .period = S->period, .kernel = S->kernel,
	};
	size_t sz = out->sz && out->sz < sizeof(t) ? out->sz : sizeof(t);
	t.sz = sz;
	memcpy(out, &t, sz);
	return 0;
}

/* ---- disassembly ---- */

PK_API int pk_annotate__disasm_bytes(const void *code, size_t len, uint64_t addr,
				     const struct pk_annotate_disasm_opts *o,
				     pk_annotate_insn_fn fn, void *ctx)
{
	if ((!code && len) || !fn || !PK_OPTS_VALID(o, pk_annotate_disasm_opts))
		return -EINVAL;
	struct pk_ann_dis dc = { .fn = fn, .ctx = ctx,
			      .intel = PK_OPTS_GET(o, intel_syntax, false),
			      .bias = PK_OPTS_GET(o, dso_bias, 0) };
	return pk_ann_disasm(code, len, addr, PK_OPTS_GET(o, e_machine, (uint16_t)0),
		      PK_OPTS_GET(o, dso, NULL), &dc);
}

PK_API int pk_annotate__disasm(struct pk_annotate *a, size_t i, pk_annotate_insn_fn fn, void *ctx)
{
	if (!a || !fn)
		return -EINVAL;
	if (i >= a->nr_syms)
		return -ERANGE;
	struct ann_sym *S = &a->syms[i];
	uint64_t bias = 0;
	struct pk_kmod *km = NULL;
	if (S->kernel && strncmp(S->dso_name, "[kernel.kallsyms]", 17)) {
		/* a module's: its .ko, else kcore (the boot that recorded) */
		struct pk_annotate_kmod k = { .sz = sizeof(k) };
		int err = pk_annotate__module(a, i, &k);
		if (err)
			return err;
		if (k.source == PK_ANNOTATE_KSRC_NONE)
			return -ENOENT;
		if (k.source == PK_ANNOTATE_KSRC_MODULE)
			km = pk_kmods_get(&a->kmods, S->dso);
		bias = k.bias;
	} else if (S->kernel) {
		struct pk_annotate_kernel k = { .sz = sizeof(k) };
		int err = pk_annotate__kernel(a, &k);
		if (err)
			return err;
		if (k.source == PK_ANNOTATE_KSRC_NONE)
			return -ENOENT;
		bias = k.bias;
	}
	if (!S->hits_sorted) {
		qsort(S->hits, S->nr_hits, sizeof(*S->hits), hit_cmp);
		S->hits_sorted = true;
	}
	/* a symbol of unknown size (an assembler label) reaches to its last sampled byte */
	uint64_t size = S->size;
	if (!size && S->nr_hits)
		size = S->hits[S->nr_hits - 1].addr - S->start + 16;
	if (!size || size > ANN_MAX_SYM_BYTES)
		return -ERANGE;
	uint8_t *buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	uint16_t em = 0;
	long n = km ? pk_kmod_read(km, S->start, buf, size, &em)
		 : S->kernel ? pk_kcode_read(a->kc, S->start, buf, size, &em)
			     : pk_dso__read(S->dso, S->start, buf, size, &em);
	int err;
	if (n < 0) {
		err = (int)n;
	} else {
		struct pk_ann_dis dc = { .bias = bias, .hits = S->hits, .nr_hits = S->nr_hits,
				      .fn = fn, .ctx = ctx, .intel = a->intel };
		err = pk_ann_disasm(buf, (size_t)n, S->start - bias, em, S->dso, &dc);
	}
	free(buf);
	return err;
}

PK_API int pk_annotate__kernel(struct pk_annotate *a, struct pk_annotate_kernel *out)
{
	if (!a || !out)
		return -EINVAL;
	if (!a->kc) {
		const struct pk_data_env *env = pk_data_reader__env(pk_session__reader(a->ses));
		int err = pk_kcode_open_machine(a->m, a->vmlinux, a->kcore_set ? a->kcore : NULL,
						env ? env->osrelease : NULL, false, &a->kc);
		if (err)
			return err;
	}
	pk_kcode_info(a->kc, out);
	return 0;
}

PK_API int pk_annotate__module(struct pk_annotate *a, size_t i, struct pk_annotate_kmod *out)
{
	if (!a || !out)
		return -EINVAL;
	if (i >= a->nr_syms)
		return -ERANGE;
	struct ann_sym *S = &a->syms[i];
	if (!S->kernel || !S->dso || !strncmp(S->dso_name, "[kernel.kallsyms]", 17))
		return -EINVAL;
	struct pk_kmod *km = pk_kmods_get(&a->kmods, S->dso);
	if (!km) {
		struct pk_annotate_kernel k = { .sz = sizeof(k) };
		int err = pk_annotate__kernel(a, &k);
		if (err)
			return err;
		struct pk_machine_kinfo mk;
		pk_machine_kinfo(a->m, &mk);
		struct pk_machine_kmod mm;
		bool map = !pk_machine_kmod(a->m, S->dso, S->start, &mm);
		const struct pk_data_env *env = pk_data_reader__env(pk_session__reader(a->ses));
		bool kcore = k.source == PK_ANNOTATE_KSRC_KCORE;
		struct pk_kmod_opts o = {
			.name = mm.name ? mm.name : S->dso_name, .path = mm.path,
			.release = env ? env->osrelease : NULL,
			.buildid_dirs = { mk.buildid_dir, mk.extra_buildid_dir, mk.symfs },
			.symfs = mk.symfs, .want_bid = mm.bid, .want_bid_len = mm.bid_len,
			.map_start = mm.start, .have_map = map, .kcore_ok = kcore && !k.bias,
			.kcore_err = kcore ? -ESTALE : k.kcore_err,
		};
		if ((err = pk_kmod_open(&o, &km)))
			return err;
		if ((err = pk_kmods_add(&a->kmods, S->dso, km))) {
			pk_kmod_free(km);
			return err;
		}
	}
	/* a symbol of kallsyms reaches to the next one: here not past the .ko's code */
	uint64_t end = pk_kmod_text_end(km);
	if (end > S->start && S->size > end - S->start)
		S->size = end - S->start;
	pk_kmod_info(km, out);
	return 0;
}

PK_API size_t pk_annotate__nr_unresolved(const struct pk_annotate *a)
{
	return a ? a->nr_unres : 0;
}

PK_API const char *pk_annotate__unresolved(const struct pk_annotate *a, size_t i,
					   uint64_t *samples)
{
	if (!a || i >= a->nr_unres)
		return pk_err_ptr(-ERANGE);
	if (samples)
		*samples = a->unres[i].samples;
	return a->unres[i].dso_name ? a->unres[i].dso_name : "[unknown]";
}
