/* SPDX-License-Identifier: MIT */
/* lib/report/tree.c - finishing a report: entries sorted (perf's order), the public
 * call-chain trees built whole or lazily, per entry. */
#include <pthread.h>
#include "report-internal.h"

/* ---- finishing: sorted entries and public trees ---- */

/* What ent_cmp compares by (qsort_r's context: a report sorted on one thread does not
 * disturb another's) */
struct sort_ctx {
	const struct pk_report *rep;
	const struct hist *h;
	bool children;
};

/* (strings of the report are interned: equal ones are usually the same pointer) */
static int strcmp0(const char *a, const char *b)
{
	if (a == b)
		return 0;
	return strcmp(a ? a : "", b ? b : "");
}

static int ent_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *sc = arg;
	const struct pk_report *sort_ctx = sc->rep;
	const struct hist *sort_hist = sc->h;
	bool sort_children = sc->children;
	const struct pk_hist_entry *a = *(const struct pk_hist_entry *const *)pa;
	const struct pk_hist_entry *b = *(const struct pk_hist_entry *const *)pb;
	uint64_t av = sort_children ? a->total_period : a->self_period;
	uint64_t bv = sort_children ? b->total_period : b->self_period;
	if (av != bv)
		return av > bv ? -1 : 1;
	if (sort_children && sort_ctx->callgraph && a->pid == b->pid && a->tid == b->tid) {
		/* perf puts a caller above its callee when both have the same period: of the
		 * entries of one thread, the one whose longest chain is shorter first (the
		 * longer first in caller order, where a caller's chain is the longer) */
		const struct ent *ea = &sort_hist->ents[a - sort_hist->pub_ents];
		const struct ent *eb = &sort_hist->ents[b - sort_hist->pub_ents];
		if (ea->max_depth != eb->max_depth)
			return (ea->max_depth < eb->max_depth) ==
			       (sort_ctx->order != PK_CG_ORDER_CALLER) ? -1 : 1;
	}
	if (sort_children && a->self_period != b->self_period)
		return a->self_period > b->self_period ? -1 : 1;
	for (size_t i = 0; i < sort_ctx->nr_sort; i++) {
		int c = 0;
		switch (sort_ctx->sort[i]) {
		case PK_SORT_COMM: c = strcmp0(a->comm, b->comm); break;
		case PK_SORT_PID: c = (a->pid > b->pid) - (a->pid < b->pid); break;
		case PK_SORT_TID: c = (a->tid > b->tid) - (a->tid < b->tid); break;
		case PK_SORT_CPU: c = (a->cpu > b->cpu) - (a->cpu < b->cpu); break;
		case PK_SORT_DSO: {
			/* perf: an entry outside every map (no dso; shown "[unknown]") after
			 * those with one */
			const struct ent *ea = &sort_hist->ents[a - sort_hist->pub_ents];
			const struct ent *eb = &sort_hist->ents[b - sort_hist->pub_ents];
			bool na = sort_ctx->frames[ea->frame].nomap;
			bool nb = sort_ctx->frames[eb->frame].nomap;
			c = na != nb ? (na ? 1 : -1) : na ? 0 : strcmp0(a->dso, b->dso);
			break;
		}
		case PK_SORT_SYM:
			if (a->sym && b->sym)
				c = a->sym == b->sym ? 0 : strcmp(a->sym, b->sym);
			else if (a->sym || b->sym)
				c = a->sym ? -1 : 1;
			else { /* perf: by the sign of the difference (an address above
				* 2^63 comes before one more than 2^63 below it) */
				int64_t d = (int64_t)(a->addr - b->addr);
				c = (d > 0) - (d < 0);
			}
			break;
		case PK_SORT_SRCLINE: c = strcmp0(a->srcline, b->srcline); break;
		case PK_SORT_TIME: c = (a->time > b->time) - (a->time < b->time); break;
		case PK_SORT_SOCKET: c = (a->socket > b->socket) - (a->socket < b->socket); break;
		case PK_SORT_SRCFILE: c = strcmp0(a->srcfile, b->srcfile); break;
		case PK_SORT_SYMOFF: c = strcmp0(a->symoff, b->symoff); break;
		case PK_SORT_PARENT: /* as perf: by name, [other] after the others */
			if (a->parent && b->parent)
				c = strcmp(a->parent, b->parent);
			else if (a->parent || b->parent)
				c = a->parent ? -1 : 1;
			break;
		default: break;
		}
		if (c)
			return c;
	}
	return 0;
}

/*
 * ent_cmp on compact copies of what it reads, when the sort keys are among comm, pid, tid,
 * cpu, dso and sym (perf's default is comm,dso,sym), in perf's trees (sort_rbt), without
 * the call per comparison and three or four cache misses per entry compared (its public
 * entry, its entry, its frame, the strings). Strings compare by rank in strcmp order (interned: one
 * id per distinct string). A --children report of a system-wide recording sorts 185k
 * entries, 87 % of the comparisons tied on the period (the frames of one sample's
 * chain): the sort was a fifth of the reading thread's time; 60-90 ms -> 30-40 ms.
 */
struct skey {
	uint64_t addr;
	uint64_t start, end;    /* a symbol's range (perf's collapse order) */
	int32_t cpu;
	uint32_t comm, dso, sym;        /* string ranks; comm and dso: NULL and "" are 0 */
	bool nomap, has_sym;
};

/* what ent_cmp reads first: the primary period, the depth and self rules */
struct sref {
	uint64_t v, self;
	int32_t pid, tid;
	uint16_t depth;
};

/* The keys both orders below compare alike (comm, pid, tid, cpu, dso by rank; entries
 * outside every map after the others); 0 for the others */
static inline int key_cmp(int key, const struct skey *a, const struct skey *b,
			  const struct sref *ra, const struct sref *rb)
{
	switch (key) {
	case PK_SORT_COMM: return (a->comm > b->comm) - (a->comm < b->comm);
	case PK_SORT_PID: return (ra->pid > rb->pid) - (ra->pid < rb->pid);
	case PK_SORT_TID: return (ra->tid > rb->tid) - (ra->tid < rb->tid);
	case PK_SORT_CPU: return (a->cpu > b->cpu) - (a->cpu < b->cpu);
	case PK_SORT_DSO:
		return a->nomap != b->nomap ? (a->nomap ? 1 : -1) : a->nomap ? 0 :
		       (a->dso > b->dso) - (a->dso < b->dso);
	default: return 0;
	}
}

/* ent_cmp on two compact copies, past the equal primary periods and the depth rule
 * (sort_rbt applies it): transitive */
static int sref_cmp_keys(const struct pk_report *rep, const struct skey *sk,
			 const struct sref *sr, uint32_t ia, uint32_t ib)
{
	const struct sref *ra = &sr[ia], *rb = &sr[ib];
	if (rep->children && ra->self != rb->self)
		return ra->self > rb->self ? -1 : 1;
	const struct skey *a = &sk[ia], *b = &sk[ib];
	for (size_t i = 0; i < rep->nr_sort; i++) {
		int c = 0;
		switch (rep->sort[i]) {
		case PK_SORT_SYM:
			/* two addresses without a symbol tie here (perf's sort__sym_sort):
			 * they stay in the collapsed order, which is by address */
			if (a->has_sym && b->has_sym)
				c = (a->sym > b->sym) - (a->sym < b->sym);
			else if (a->has_sym || b->has_sym)
				c = a->has_sym ? -1 : 1;
			break;
		default: c = key_cmp(rep->sort[i], a, b, ra, rb); break;
		}
		if (c)
			return c;
	}
	return 0;
}

static int sign64(uint64_t a, uint64_t b)
{
	int64_t d = (int64_t)(a - b);
	return (d > 0) - (d < 0);
}

/*
 * perf's order of its entries before the output sort (the search trees of
 * hists__findnew_entry and hists__collapse_resort, one key at a time): comm by name,
 * pid/tid/cpu ascending, dso by name with the entries outside every map last, symbols
 * before addresses without one, symbols by object and then start and end, addresses by
 * the sign of their difference (which is not transitive: addresses 2^63 apart).
 */
static int collapse_cmp(const struct pk_report *rep, const struct skey *sk,
			const struct sref *sr, uint32_t ia, uint32_t ib, bool addrs)
{
	const struct skey *a = &sk[ia], *b = &sk[ib];
	const struct sref *ra = &sr[ia], *rb = &sr[ib];
	for (size_t i = 0; i < rep->nr_sort; i++) {
		int c = 0;
		switch (rep->sort[i]) {
		case PK_SORT_SYM:
			if (a->has_sym && b->has_sym) {
				/* (perf compares the objects first, sort key or not) */
				c = a->nomap != b->nomap ? (a->nomap ? 1 : -1) :
				    (a->dso > b->dso) - (a->dso < b->dso);
				if (!c)
					c = sign64(a->start, b->start);
				if (!c)
					c = sign64(a->end, b->end);
				if (!c)
					c = (a->sym > b->sym) - (a->sym < b->sym);
			} else if (a->has_sym || b->has_sym) {
				/* perf (sort__sym_cmp): the objects first here too, while two
				 * addresses without a symbol compare by address alone: not
				 * transitive without a dso key before (sort_rbt) */
				c = a->nomap != b->nomap ? (a->nomap ? 1 : -1) :
				    (a->dso > b->dso) - (a->dso < b->dso);
				if (!c)
					c = a->has_sym ? -1 : 1;
			} else if (addrs) {
				c = sign64(a->addr, b->addr);
			}
			break;
		default: c = key_cmp(rep->sort[i], a, b, ra, rb); break;
		}
		if (c)
			return c;
	}
	return 0;
}

/* A red-black tree of entry ids (perf's rbtree: the same insertion and rebalancing, so
 * the same shape, and with a comparison that is not transitive the same order). A node
 * holds what the comparisons read, on the cache line of its links. */
struct rbn {
	uint32_t l, r, p;
	uint32_t k;             /* collapse trees: prefix rank; output tree: output rank */
	uint32_t vr;            /* output tree: rank of the period */
	uint16_t depth;
	uint8_t red;
	bool nosym;             /* collapse trees: sym key on, no symbol: addr compares */
	uint64_t addr;          /* (sk's, here so that a tree's walk reads one array) */
};
struct rbt {
	struct rbn *n;
	uint32_t root;
};
#define RB_NIL UINT32_MAX

static void rbt_rotate(struct rbt *t, uint32_t x, bool left)
{
	struct rbn *n = t->n;
	uint32_t y = left ? n[x].r : n[x].l;
	uint32_t m = left ? n[y].l : n[y].r; /* the subtree that changes sides */
	if (left)
		n[x].r = m;
	else
		n[x].l = m;
	if (m != RB_NIL)
		n[m].p = x;
	n[y].p = n[x].p;
	if (n[x].p == RB_NIL)
		t->root = y;
	else if (n[n[x].p].l == x)
		n[n[x].p].l = y;
	else
		n[n[x].p].r = y;
	if (left)
		n[y].l = x;
	else
		n[y].r = x;
	n[x].p = y;
}

/* link x below parent (on its left or right) and rebalance */
static void rbt_insert(struct rbt *t, uint32_t x, uint32_t parent, bool left)
{
	t->n[x].l = t->n[x].r = RB_NIL;
	t->n[x].p = parent;
	t->n[x].red = 1;
	if (parent == RB_NIL)
		t->root = x;
	else if (left)
		t->n[parent].l = x;
	else
		t->n[parent].r = x;
	while (x != t->root && t->n[t->n[x].p].red) {
		uint32_t p = t->n[x].p, g = t->n[p].p;
		bool pl = t->n[g].l == p;
		uint32_t u = pl ? t->n[g].r : t->n[g].l;
		if (u != RB_NIL && t->n[u].red) {
			t->n[p].red = t->n[u].red = 0;
			t->n[g].red = 1;
			x = g;
			continue;
		}
		if (x == (pl ? t->n[p].r : t->n[p].l)) {
			x = p;
			rbt_rotate(t, x, pl);
			p = t->n[x].p;
		}
		t->n[p].red = 0;
		t->n[g].red = 1;
		rbt_rotate(t, g, !pl);
	}
	t->n[t->root].red = 0;
}

/* the tree's ids in order into out[] */
static void rbt_walk(const struct rbt *t, uint32_t *out)
{
	uint32_t x = t->root;
	size_t n = 0;
	if (x == RB_NIL)
		return;
	while (t->n[x].l != RB_NIL)
		x = t->n[x].l;
	while (x != RB_NIL) {
		out[n++] = x;
		if (t->n[x].r != RB_NIL) {
			x = t->n[x].r;
			while (t->n[x].l != RB_NIL)
				x = t->n[x].l;
		} else {
			uint32_t c = x;
			x = t->n[x].p;
			while (x != RB_NIL && t->n[x].r == c) {
				c = x;
				x = t->n[x].p;
			}
		}
	}
}

/* what the ranks' comparisons read */
struct rank_ctx {
	const struct pk_report *rep;
	const struct skey *sk;
	const struct sref *sr;
	const uint32_t *pr, *orank;     /* (sort_rbt's ranks) */
	bool addrs;                     /* addresses compare (sym key on) */
	const struct rbn *tn;           /* (sort_rbt's output tree: depth_cmp) */
	bool depth_asc;                 /* depth_cmp: the shallower entry first */
};

/* the collapse order without addresses: transitive */
static int prefix_cmp(const struct rank_ctx *c, uint32_t a, uint32_t b)
{
	return collapse_cmp(c->rep, c->sk, c->sr, a, b, false);
}

/* the output order without the depth rule: transitive */
static int out_cmp(const struct rank_ctx *c, uint32_t a, uint32_t b)
{
	if (c->sr[a].v != c->sr[b].v)
		return c->sr[a].v > c->sr[b].v ? -1 : 1;
	return sref_cmp_keys(c->rep, c->sk, c->sr, a, b);
}

/* the collapse order by rank, then address (transitive where the addresses of each
 * rank fit in less than half of the address space: sort_rbt checks) */
static int collapse_rank_cmp(const struct rank_ctx *c, uint32_t a, uint32_t b)
{
	if (c->pr[a] != c->pr[b])
		return c->pr[a] < c->pr[b] ? -1 : 1;
	return c->addrs && !c->sk[a].has_sym && !c->sk[b].has_sym
	       ? sign64(c->sk[a].addr, c->sk[b].addr) : 0;
}

static int orank_cmp(const struct rank_ctx *c, uint32_t a, uint32_t b)
{
	return (c->orank[a] > c->orank[b]) - (c->orank[a] < c->orank[b]);
}

/* Whether the addresses without a symbol of each prefix rank (b: the ids by rank) lie
 * within less than 2^63 of each other, where comparing them by the sign of their
 * difference is transitive */
static bool addrs_transitive(const struct skey *sk, const uint32_t *pr, const uint32_t *b,
			     size_t n)
{
	const uint64_t half = (uint64_t)1 << 63;
	for (size_t i = 0; i < n;) {
		uint64_t lmin = UINT64_MAX, lmax = 0, hmin = UINT64_MAX, hmax = 0;
		bool lo = false, hi = false;
		size_t j = i;
		for (; j < n && pr[b[j]] == pr[b[i]]; j++) {
			const struct skey *k = &sk[b[j]];
			if (k->has_sym)
				continue;
			if (k->addr < half) {
				lo = true;
				lmin = PK_MIN(lmin, k->addr);
				lmax = PK_MAX(lmax, k->addr);
			} else {
				hi = true;
				hmin = PK_MIN(hmin, k->addr);
				hmax = PK_MAX(hmax, k->addr);
			}
		}
		/* both halves: the larger of the two gaps between them must exceed 2^63 */
		if (lo && hi && hmin - lmax <= half && lmin - hmax <= half)
			return false;
		i = j;
	}
	return true;
}

#define MSORT_IDS(NAME, CMP) PK_REP_MSORT_IDS(NAME, struct rank_ctx, CMP)
MSORT_IDS(msort_prefix, prefix_cmp)
MSORT_IDS(msort_out, out_cmp)
MSORT_IDS(msort_collapse, collapse_rank_cmp)
MSORT_IDS(msort_orank, orank_cmp)

/* The output tree's order where its depth rule is transitive (depth_rule_sorts) */
static int depth_cmp(const struct rank_ctx *c, uint32_t a, uint32_t b)
{
	const struct rbn *x = &c->tn[a], *y = &c->tn[b];
	if (x->vr != y->vr)
		return x->vr < y->vr ? -1 : 1;
	if (x->depth != y->depth)
		return (x->depth < y->depth) == c->depth_asc ? -1 : 1;
	return (c->orank[a] > c->orank[b]) - (c->orank[a] < c->orank[b]);
}
MSORT_IDS(msort_depth, depth_cmp)

/*
 * Whether the output tree's comparison (period rank; between entries of one thread,
 * depth; then output rank) is transitive on these entries: it is when, among the
 * entries of one period rank, all are of one thread or all of one depth. The tree then
 * orders them as a stable sort by depth_cmp does (equal entries in insertion order);
 * otherwise only the tree's own insertions give perf's order. (A single-threaded
 * recording such as xz.data's: its 46k --children rows took 8 ms in the tree.)
 */
static int depth_rule_sorts(const struct rbn *tn, const struct sref *sr, size_t n)
{
	struct grp { int32_t pid, tid; uint16_t depth; bool seen, threads, depths; } *g =
		calloc(n ? n : 1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	int ok = 1;
	for (size_t i = 0; i < n && ok; i++) {
		struct grp *x = &g[tn[i].vr];
		if (!x->seen) {
			*x = (struct grp){ sr[i].pid, sr[i].tid, tn[i].depth, true, false, false };
			continue;
		}
		x->threads |= x->pid != sr[i].pid || x->tid != sr[i].tid;
		x->depths |= x->depth != tn[i].depth;
		ok = !(x->threads && x->depths);
	}
	free(g);
	return ok;
}

/* rank[i]: entry i's place in cmp's order, equal entries one rank; b: the ids in that
 * order */
static int ranks_of(size_t n, uint32_t *b, uint32_t *rank,
		    void (*sort)(uint32_t *, size_t, uint32_t *, const struct rank_ctx *),
		    int (*cmp)(const struct rank_ctx *, uint32_t, uint32_t),
		    const struct rank_ctx *c)
{
	uint32_t *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		b[i] = (uint32_t)i;
	sort(b, n, tmp, c);
	free(tmp);
	uint32_t r = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && cmp(c, b[i - 1], b[i]))
			r++;
		rank[b[i]] = r;
	}
	return 0;
}

/*
 * b[0..n) in perf's output order: the entries go into a tree by the collapse order in
 * the order they were made (hists__findnew_entry), from there into another in that
 * tree's order (hists__collapse_resort), and from there into the output tree by the
 * output order (hists__output_resort: equal entries after those already in). The
 * output comparison is not transitive where perf puts a caller above its callee (the
 * depth rule applies only between entries of one thread), nor is the collapse order of
 * addresses 2^63 apart: the order then depends on the trees' shapes, which the same
 * insertions reproduce. What is transitive is compared by rank (sorted beforehand):
 * the trees' comparisons then read two small arrays.
 */
size_t pk_rep_sort_thread_min = (size_t)1 << 15;

struct orank_job {
	const struct rank_ctx *rc;
	uint32_t *ob, *orank;
	size_t n;
	int err;
};

static void *orank_main(void *arg)
{
	struct orank_job *j = arg;
	j->err = ranks_of(j->n, j->ob, j->orank, msort_out, out_cmp, j->rc);
	return NULL;
}

static int sort_rbt(const struct pk_report *rep, const struct sref *sr, const struct skey *sk,
		    uint32_t *b, size_t n)
{
	struct rbt t = { .n = malloc(n * sizeof(*t.n)) };
	uint32_t *pr = malloc(n * sizeof(*pr)), *orank = malloc(n * sizeof(*orank));
	/* ob: the entries in the output order without the depth rule (ranks_of's sort of
	 * orank), whose period ranks the output tree compares first */
	uint32_t *ob = malloc(n * sizeof(*ob));
	struct orank_job oj = { .ob = ob, .orank = orank, .n = n };
	pthread_t oth;
	bool othread = false;
	int err = -ENOMEM;
	if (!t.n || !pr || !orank || !ob)
		goto out;
	/* addresses compare last (the sym key last, as by default), or ranks do not do */
	bool sym_on = false, sym_last = true, dso_first = false;
	for (size_t i = 0; i < rep->nr_sort; i++) {
		if (rep->sort[i] == PK_SORT_SYM)
			sym_on = true;
		else if (sym_on)
			sym_last = false;
		else if (rep->sort[i] == PK_SORT_DSO)
			dso_first = true;
	}
	/* the sym key without a dso key before it: a symbol and an address without one
	 * compare by object, two addresses by address alone (collapse_cmp), which ranks
	 * cannot express: the trees compare the entries themselves */
	if (sym_on && !dso_first)
		sym_last = false;
	/* perf makes the collapse tree only with a key that collapses (comm, dso, srcline,
	 * srcfile): the output takes the first tree's order otherwise (which re-inserting
	 * changes where the order is not transitive) */
	bool collapse = sym_last;
	for (size_t i = 0; i < rep->nr_sort; i++)
		collapse |= rep->sort[i] == PK_SORT_COMM || rep->sort[i] == PK_SORT_DSO ||
			    rep->sort[i] == PK_SORT_SRCLINE || rep->sort[i] == PK_SORT_SRCFILE;
	struct rank_ctx rc = { rep, sk, sr, pr, orank, sym_on, NULL, false };
	oj.rc = &rc;
	/* The output order's ranks do not depend on the collapse: with many entries they
	 * are sorted on a thread of their own meanwhile (sys.data --children: 184k entries,
	 * each order's sort ~30 ms, the collapse trees ~70 ms). Both only read the
	 * entries' copies; the thread writes ob and orank, read here once it is joined. */
	if (n >= pk_rep_sort_thread_min && rep->reader_thread && pk_online_cpus() >= 2)
		othread = pthread_create(&oth, NULL, orank_main, &oj) == 0;
	if (sym_last && ranks_of(n, b, pr, msort_prefix, prefix_cmp, &rc))
		goto out;
	/* where the collapse order is transitive, the two collapse trees sort (equal ids
	 * in the order made), and without the depth rule the output tree too (equal ids
	 * in the collapsed order): merge sorts do, at a fraction of the cost */
	bool coll_sort = sym_last && addrs_transitive(sk, pr, b, n);
	if (!othread && (orank_main(&oj), oj.err))
		goto out;
	uint32_t *tmp = (uint32_t *)pr; /* (pr is no longer read once the collapse is done) */
	for (size_t i = 0; i < n; i++) {
		t.n[i].k = sym_last ? pr[i] : 0;
		t.n[i].depth = sr[i].depth;
		t.n[i].nosym = sym_on && !sk[i].has_sym;
		t.n[i].addr = sk[i].addr;
	}
	bool depth = rep->children && rep->callgraph;
	for (int pass = 0; pass < 3; pass++) {
		t.root = RB_NIL;
		if (pass < 2 && coll_sort) {
			if (pass)
				continue;
			uint32_t *ms = malloc(n * sizeof(*ms));
			if (!ms)
				goto out;
			for (size_t i = 0; i < n; i++)
				b[i] = (uint32_t)i;
			msort_collapse(b, n, ms, &rc);
			free(ms);
			continue;
		}
		if (pass == 1 && !collapse)
			continue;
		if (pass == 2) {
			if (othread) {
				pthread_join(oth, NULL);
				othread = false;
				if (oj.err)
					goto out;
			}
			/* ob is by period first: the period's rank */
			for (size_t i = 0, vr = 0; i < n; i++) {
				if (i && sr[ob[i]].v != sr[ob[i - 1]].v)
					vr++;
				t.n[ob[i]].vr = (uint32_t)vr;
			}
		}
		if (pass == 2 && !depth) {
			msort_orank(b, n, tmp, &rc);
			break;
		}
		if (pass == 2) {
			for (size_t i = 0; i < n; i++)
				t.n[i].k = orank[i];
			int sorts = depth_rule_sorts(t.n, sr, n);
			if (sorts < 0)
				goto out;
			if (sorts) {
				rc.tn = t.n;
				rc.depth_asc = rep->order != PK_CG_ORDER_CALLER;
				msort_depth(b, n, tmp, &rc);
				break;
			}
		}
		for (size_t i = 0; i < n; i++) {
			uint32_t x = pass ? b[i] : (uint32_t)i, y = t.root, parent = RB_NIL;
			const struct rbn *nx = &t.n[x];
			bool left = false;
			while (y != RB_NIL) {
				parent = y;
				const struct rbn *ny = &t.n[y];
				int c;
				if (pass < 2) {
					if (!sym_last)
						c = collapse_cmp(rep, sk, sr, x, y, true);
					else if (nx->k != ny->k)
						c = nx->k < ny->k ? -1 : 1;
					else
						c = nx->nosym && ny->nosym ? sign64(nx->addr, ny->addr)
									   : 0;
				} else if (nx->vr != ny->vr) {
					c = nx->vr < ny->vr ? -1 : 1;
				} else if (depth && nx->depth != ny->depth &&
					   sr[x].pid == sr[y].pid && sr[x].tid == sr[y].tid) {
					c = (nx->depth < ny->depth) ==
					    (rep->order != PK_CG_ORDER_CALLER) ? -1 : 1;
				} else {
					c = (nx->k > ny->k) - (nx->k < ny->k);
				}
				left = c < 0;
				y = left ? ny->l : ny->r;
			}
			rbt_insert(&t, x, parent, left);
		}
		rbt_walk(&t, b);
	}
	err = 0;
out:
	if (othread)
		pthread_join(oth, NULL);
	free(t.n);
	free(pr);
	free(orank);
	free(ob);
	return err;
}

static int str_id_cmp(const void *pa, const void *pb, void *arg)
{
	const struct pk_strtab *t = arg;
	return strcmp(pk_str_get(t, *(const uint32_t *)pa), pk_str_get(t, *(const uint32_t *)pb));
}

/* h's entries sorted as ent_cmp sorts them: 1 done, 0 not done (other sort keys, or no
 * memory for the copies: qsort_r with ent_cmp then) */
static int sort_fast(struct pk_report *rep, struct hist *h)
{
	for (size_t i = 0; i < rep->nr_sort; i++)
		if (rep->sort[i] != PK_SORT_COMM && rep->sort[i] != PK_SORT_PID &&
		    rep->sort[i] != PK_SORT_TID && rep->sort[i] != PK_SORT_CPU &&
		    rep->sort[i] != PK_SORT_DSO && rep->sort[i] != PK_SORT_SYM)
			return 0;
	if (h->nr_ents > UINT32_MAX)
		return 0;
	size_t nstr = rep->strs.nr, nids = 0;
	uint32_t *rank = calloc(nstr ? nstr : 1, sizeof(*rank));
	uint32_t *ids = NULL;
	struct skey *sk = pk_arr_calloc(h->nr_ents * sizeof(*sk));
	struct sref *sr = pk_arr_calloc(h->nr_ents * sizeof(*sr));
	uint32_t *ord = pk_arr_calloc(h->nr_ents * sizeof(*ord));
	int err = 0;
	if (!rank || !sk || !sr || !ord)
		goto out;
	/* the compact copies, with string ids for now; the strings compared: their ids in
	 * strcmp order (rank 1 marks one seen) */
	for (size_t i = 0; i < h->nr_ents; i++) {
		const struct ent *e = &h->ents[i];
		const struct frame *f = &rep->frames[e->frame];
		sk[i] = (struct skey){ .addr = f->addr, .cpu = e->cpu, .comm = e->comm_id,
				       .dso = f->dso, .sym = f->sym, .nomap = f->nomap,
				       .start = f->sym_start,
				       .end = f->sym_start + f->sym_len };
		sr[i] = (struct sref){ .v = rep->children ? e->total_period : e->self_period,
				       .self = e->self_period, .pid = e->pid, .tid = e->tid,
				       .depth = e->max_depth };
		ord[i] = (uint32_t)i;
		uint32_t s3[3] = { e->comm_id, f->dso, f->sym };
		for (int k = 0; k < 3; k++) {
			if (!pk_str_get(&rep->strs, s3[k]) || rank[s3[k]])
				continue;
			if (!ids && !(ids = malloc(nstr * sizeof(*ids))))
				goto out;
			rank[s3[k]] = 1;
			ids[nids++] = s3[k];
		}
	}
	if (nids)
		qsort_r(ids, nids, sizeof(*ids), str_id_cmp, &rep->strs);
	for (size_t i = 0; i < nids; i++)
		rank[ids[i]] = (uint32_t)i + 1;
	/* "" first in strcmp order: as the comm and dso keys compare NULL, rank 0 */
	uint32_t empty = nids && !pk_str_get(&rep->strs, ids[0])[0] ? 1 : 0;
	for (size_t i = 0; i < h->nr_ents; i++) {
		struct skey *k = &sk[i];
		uint32_t cr = k->comm < nstr ? rank[k->comm] : 0;
		uint32_t dr = k->dso < nstr ? rank[k->dso] : 0;
		k->has_sym = pk_str_get(&rep->strs, k->sym) != NULL;
		k->sym = k->sym < nstr ? rank[k->sym] : 0;
		k->comm = cr == empty ? 0 : cr;
		k->dso = dr == empty ? 0 : dr;
	}
	if (sort_rbt(rep, sr, sk, ord, h->nr_ents))
		goto out;
	for (size_t i = 0; i < h->nr_ents; i++)
		h->pub_sorted[i] = &h->pub_ents[ord[i]];
	err = 1;
out:
	free(rank);
	free(ids);
	pk_arr_free(sk, h->nr_ents * sizeof(*sk));
	pk_arr_free(sr, h->nr_ents * sizeof(*sr));
	pk_arr_free(ord, h->nr_ents * sizeof(*ord));
	return err;
}

/* Whether sym names an inline frame ("name (inlined)"); *len: the length of the name. */
static bool inline_base(const char *sym, size_t *len)
{
	static const char sfx[] = " (inlined)";
	size_t n = sym ? strlen(sym) : 0;
	*len = n;
	if (n < sizeof(sfx) - 1 || memcmp(sym + n - (sizeof(sfx) - 1), sfx, sizeof(sfx) - 1))
		return false;
	*len = n - (sizeof(sfx) - 1);
	return true;
}

/*
 * Children of one node: by period, larger first; ties as perf lists them. perf keeps a
 * node's children in a search tree ordered by its chain-matching rule and takes equal
 * periods in that tree's order, which is descending: inline frames by function name,
 * other frames of one object by symbol start (an address without a symbol, or a pair
 * where one has none, by address). Objects are ordered by perf's dso pointers, which only
 * its allocator knows; the kernel's, made before any other, comes last.
 */
static int node_cmp_id(const struct pk_report *rep, const struct pk_callnode *a, uint32_t ia,
		       const struct pk_callnode *b, uint32_t ib)
{
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	size_t la = 0, lb = 0;
	bool ina = a->sym && inline_base(a->sym, &la), inb = b->sym && inline_base(b->sym, &lb);
	if ((ina || inb) && a->sym && b->sym) {
		int c = memcmp(a->sym, b->sym, PK_MIN(la, lb));
		if (c || la != lb)
			return c ? -c : (la < lb ? 1 : -1);
	}
	uint32_t fa = ia < rep->nr_nodes ? rep->nodes[ia].frame : NONE32;
	uint32_t fb = ib < rep->nr_nodes ? rep->nodes[ib].frame : NONE32;
	if (!ina && !inb && fa != NONE32 && fb != NONE32) {
		const struct frame *x = &rep->frames[fa], *y = &rep->frames[fb];
		if (x->dso_long == y->dso_long) {
			uint64_t kx = x->sym && y->sym ? x->sym_start : x->addr;
			uint64_t ky = x->sym && y->sym ? y->sym_start : y->addr;
			if (kx != ky)
				return kx > ky ? -1 : 1;
		} else {
			/* perf's dso objects by address: about their creation order, later
			 * first (the kernel's, made first, last) */
			uintptr_t sx = (uintptr_t)pk_u64map_get(&rep->dso_seq, x->dso_long);
			uintptr_t sy = (uintptr_t)pk_u64map_get(&rep->dso_seq, y->dso_long);
			if (sx != sy)
				return sx > sy ? -1 : 1;
			if (x->kernel != y->kernel)
				return x->kernel ? 1 : -1;
		}
	}
	int c = strcmp0(a->sym, b->sym);
	if (c)
		return c;
	return (a->addr > b->addr) - (a->addr < b->addr);
}

/* qsort_r context of build_nodes: the report and the array the nodes' ids index */
struct node_sort {
	const struct pk_report *rep;
	const struct pk_callnode *base;
};

static int node_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct node_sort *ns = ctx;
	const struct pk_callnode *a = *(const struct pk_callnode *const *)pa;
	const struct pk_callnode *b = *(const struct pk_callnode *const *)pb;
	return node_cmp_id(ns->rep, a, (uint32_t)(a - ns->base), b, (uint32_t)(b - ns->base));
}

static void cc_fill(const struct pk_report *rep, struct pk_callnode *p, uint32_t id)
{
	const struct node *nd = &rep->nodes[id];
	if (nd->frame != NONE32) {
		const struct frame *f = &rep->frames[nd->frame];
		p->sym = pk_str_get(&rep->strs, f->sym);
		p->dso = pk_str_get(&rep->strs, f->dso);
		p->srcline = pk_str_get(&rep->strs, f->srcline);
		p->addr = f->abs ? f->sym_start : f->addr; /* (in the object, as documented) */
		p->ip = f->ip;
		p->kernel = f->kernel;
	}
	p->period = nd->period;
	p->samples = nd->samples;
	/* lazy_callchains: the period minus the children's (build_nodes does it itself) */
	p->self_period = nd->period;
	for (size_t i = rep->kid_off ? rep->kid_off[id] : 0,
		    e = rep->kid_off ? rep->kid_off[id + 1] : 0; i < e; i++)
		p->self_period -= rep->nodes[rep->kid[i]].period;
}

static int build_nodes(struct pk_report *rep)
{
	free(rep->pub_nodes);
	rep->pub_nodes = NULL;
	size_t n = rep->nr_nodes;
	if (!n)
		return 0;
	struct pk_callnode *pn = calloc(n, sizeof(*pn));
	uint32_t *cnt = calloc(n + 1, sizeof(*cnt));
	const struct pk_callnode **kids = malloc(n * sizeof(*kids));
	if (!pn || !cnt || !kids) {
		free(pn);
		free(cnt);
		free(kids);
		return -ENOMEM;
	}
	pk_thp_hint(pn, n * sizeof(*pn));
	pk_thp_hint(cnt, (n + 1) * sizeof(*cnt));
	pk_thp_hint(kids, n * sizeof(*kids));
	for (size_t i = 0; i < n; i++) {
		cc_fill(rep, &pn[i], (uint32_t)i);
		pn[i].self_period = rep->nodes[i].period;
	}
	for (size_t i = 0; i < n; i++) {
		const struct node *nd = &rep->nodes[i];
		if (nd->parent != NONE32) {
			cnt[nd->parent + 1]++;
			pn[nd->parent].self_period -= nd->period;
		}
	}
	for (size_t i = 1; i <= n; i++)
		cnt[i] += cnt[i - 1];
	/* cnt[p] = start of p's children in kids */
	uint32_t *fill = malloc(n * sizeof(*fill));
	if (!fill) {
		free(pn);
		free(cnt);
		free(kids);
		return -ENOMEM;
	}
	memcpy(fill, cnt, n * sizeof(*fill));
	for (size_t i = 0; i < n; i++)
		if (rep->nodes[i].parent != NONE32)
			kids[fill[rep->nodes[i].parent]++] = &pn[i];
	for (size_t p = 0; p < n; p++) {
		size_t a = cnt[p], b = cnt[p + 1];
		if (b - a > 1) {
			struct node_sort ns = { rep, pn };
			qsort_r(kids + a, b - a, sizeof(*kids), node_cmp, &ns);
		}
		for (size_t i = a; i < b; i++)
			((struct pk_callnode *)kids[i])->next = i + 1 < b ? kids[i + 1] : NULL;
		pn[p].child = b > a ? kids[a] : NULL;
	}
	free(fill);
	free(cnt);
	free(kids);
	rep->pub_nodes = pn;
	return 0;
}

/* lazy_callchains: the child lists of every node, in creation order (as build_nodes
 * sees them before sorting) */
static int build_kids(struct pk_report *rep)
{
	size_t n = rep->nr_nodes;
	if (!n)
		return 0;
	uint32_t *off = pk_arr_calloc((n + 1) * sizeof(*off));
	uint32_t *kid = pk_arr_calloc(n * sizeof(*kid));
	if (!off || !kid) {
		pk_arr_free(off, (n + 1) * sizeof(*off));
		pk_arr_free(kid, n * sizeof(*kid));
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (rep->nodes[i].parent != NONE32)
			off[rep->nodes[i].parent + 1]++;
	for (size_t i = 1; i <= n; i++)
		off[i] += off[i - 1];
	/* fill with off[p] as the cursor, then shift back */
	for (size_t i = 0; i < n; i++) {
		uint32_t p = rep->nodes[i].parent;
		if (p != NONE32)
			kid[off[p]++] = (uint32_t)i;
	}
	for (size_t i = n; i > 0; i--)
		off[i] = off[i - 1];
	off[0] = 0;
	rep->kid_off = off;
	rep->kid = kid;
	rep->nr_kid_nodes = n;
	return 0;
}

static struct pk_callnode *cc_alloc(struct pk_report *rep, size_t n)
{
	struct ccpool *p = rep->ccpool;
	if (!p || p->cap - p->used < n) {
		size_t cap = n > 4096 ? n : 4096;
		p = malloc(sizeof(*p) + cap * sizeof(p->n[0]));
		if (!p)
			return NULL;
		p->used = 0;
		p->cap = cap;
		p->next = rep->ccpool;
		rep->ccpool = p;
	}
	struct pk_callnode *r = p->n + p->used;
	p->used += n;
	memset(r, 0, n * sizeof(*r));
	return r;
}

struct ccpair {
	const struct pk_callnode *p;
	uint32_t id;
};

static int ccpair_cmp(const void *a, const void *b, void *rep)
{
	const struct ccpair *x = a, *y = b;
	return node_cmp_id(rep, x->p, x->id, y->p, y->id);
}

/* Give p (node id) its sorted children; descend into those with period >= min. */
static int cc_expand(struct pk_report *rep, struct pk_callnode *p, uint32_t id, uint64_t min,
		     int depth)
{
	size_t a = rep->kid_off[id], b = rep->kid_off[id + 1], k = b - a;
	if (!k || depth > MAX_CHAIN + 1)
		return 0;
	struct pk_callnode *kids;
	if (k == 1) {
		if (!(kids = cc_alloc(rep, 1)))
			return -ENOMEM;
		/* the common case: a single child, nothing to sort */
		cc_fill(rep, kids, rep->kid[a]);
		p->child = kids;
		return kids->period >= min ? cc_expand(rep, kids, rep->kid[a], min, depth + 1) : 0;
	}
	/* with a minimum, only the children at or above it are given, plus the two largest
	 * of the rest (so that a node with several children never looks like a chain with
	 * one): a node with 100k tiny children costs what it prints */
	size_t x1 = SIZE_MAX, x2 = SIZE_MAX, keep = k;
	if (min > 0) {
		keep = 0;
		for (size_t i = 0; i < k; i++) {
			uint64_t pp = rep->nodes[rep->kid[a + i]].period;
			if (pp >= min) {
				keep++;
			} else if (x1 == SIZE_MAX || pp > rep->nodes[rep->kid[a + x1]].period) {
				x2 = x1;
				x1 = i;
			} else if (x2 == SIZE_MAX || pp > rep->nodes[rep->kid[a + x2]].period) {
				x2 = i;
			}
		}
		keep += (x1 != SIZE_MAX) + (x2 != SIZE_MAX);
	}
	if (!(kids = cc_alloc(rep, keep)))
		return -ENOMEM;
	struct ccpair sbuf[8];
	struct ccpair *pr = keep <= PK_ARRAY_SIZE(sbuf) ? sbuf : malloc(keep * sizeof(*pr));
	if (!pr)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < k && n < keep; i++) {
		uint32_t kid = rep->kid[a + i];
		if (keep < k && i != x1 && i != x2 && rep->nodes[kid].period < min)
			continue;
		cc_fill(rep, &kids[n], kid);
		pr[n] = (struct ccpair){ &kids[n], kid };
		n++;
	}
	k = n;
	if (k > 1)
		qsort_r(pr, k, sizeof(*pr), ccpair_cmp, rep);
	for (size_t i = 0; i < k; i++)
		((struct pk_callnode *)pr[i].p)->next = i + 1 < k ? pr[i + 1].p : NULL;
	p->child = pr[0].p;
	int err = 0;
	for (size_t i = 0; i < k && !err; i++)
		if (pr[i].p->period >= min)
			err = cc_expand(rep, (struct pk_callnode *)pr[i].p, pr[i].id, min, depth + 1);
	if (pr != sbuf)
		free(pr);
	return err;
}

const struct pk_callnode *pk_report__callchain(struct pk_report *rep,
					       const struct pk_hist_entry *pe,
					       uint64_t min_period)
{
	if (!rep || !pe)
		return pk_err_ptr(-EINVAL);
	if (!rep->lazy_cc)
		return pe->callchain ? pe->callchain : pk_err_ptr(-ENOENT);
	struct ent *e = NULL;
	struct ent_cc *ec = NULL;
	for (size_t hi = 0; hi < rep->nr_hists && !e; hi++) {
		struct hist *h = &rep->hists[hi];
		if (h->pub_ents && pe >= h->pub_ents && pe < h->pub_ents + h->nr_pub) {
			if (!h->ccs && (h->nr_ccs = h->nr_ents) &&
			    !(h->ccs = pk_arr_calloc(h->nr_ccs * sizeof(*h->ccs))))
				return pk_err_ptr(-ENOMEM);
			e = &h->ents[pe - h->pub_ents];
			ec = &h->ccs[pe - h->pub_ents];
		}
	}
	if (!e || e->root == NONE32 || !rep->kid_off)
		return pk_err_ptr(-ENOENT);
	if (ec->cc && ec->min <= min_period)
		return ec->cc;
	struct pk_callnode *root = cc_alloc(rep, 1);
	if (!root)
		return pk_err_ptr(-ENOMEM);
	cc_fill(rep, root, e->root);
	if (cc_expand(rep, root, e->root, min_period, 0))
		return pk_err_ptr(-ENOMEM);
	if (!ec->cc) {
		if (pk_grow((void **)&rep->cc_built, &rep->cap_cc_built, rep->nr_cc_built + 1,
			 sizeof(*rep->cc_built)))
			return pk_err_ptr(-ENOMEM);
		rep->cc_built[rep->nr_cc_built++] = ec;
	}
	ec->cc = root;
	ec->min = min_period;
	return root;
}

void pk_report__callchain_release(struct pk_report *rep)
{
	if (rep && rep->lazy_cc)
		pk_rep_cc_trees_release(rep, true);
}

/* the entries of every hist made public and sorted */
static int publish(struct pk_report *rep)
{
	for (size_t hi = 0; hi < rep->nr_hists; hi++) {
		struct hist *h = &rep->hists[hi];
		pk_arr_free(h->pub_ents, h->nr_pub * sizeof(*h->pub_ents));
		pk_arr_free(h->pub_sorted, h->nr_pub * sizeof(*h->pub_sorted));
		h->pub_ents = NULL;
		h->pub_sorted = NULL;
		h->nr_pub = 0;
		h->pub.entries = NULL;
		h->pub.nr_entries = 0;
		if (!h->nr_ents)
			continue;
		h->nr_pub = h->nr_ents;
		h->pub_ents = pk_arr_calloc(h->nr_pub * sizeof(*h->pub_ents));
		h->pub_sorted = pk_arr_calloc(h->nr_pub * sizeof(*h->pub_sorted));
		if (!h->pub_ents || !h->pub_sorted)
			return -ENOMEM;
		for (size_t i = 0; i < h->nr_ents; i++) {
			const struct ent *e = &h->ents[i];
			const struct frame *f = &rep->frames[e->frame];
			struct pk_hist_entry *p = &h->pub_ents[i];
			p->comm = pk_str_get(&rep->strs, e->comm_id);
			p->pid = e->pid;
			p->tid = e->tid;
			p->thread_comm = p->comm;
			/* (the machine's comm of a thread without a COMM record is
			 * ":tid"; the idle task's is the entry's "swapper") */
			const char *tc = e->tid > 0 ? pk_machine__comm_of(rep->m, (uint32_t)e->tid)
						    : NULL;
			if (tc && tc[0] && tc[0] != ':' && strcmp0(tc, p->comm)) {
				uint32_t id;
				if (pk_str_intern(&rep->strs, tc, &id))
					return -ENOMEM;
				p->thread_comm = pk_str_get(&rep->strs, id);
			}
			p->cpu = e->cpu;
			p->dso = pk_str_get(&rep->strs, f->dso);
			p->dso_long = pk_str_get(&rep->strs, f->dso_long);
			p->sym = pk_str_get(&rep->strs, f->sym);
			p->addr = f->addr;
			p->kernel = e->kernel;
			p->srcline = pk_str_get(&rep->strs, e->srcline);
			p->parent = e->k.parent ? pk_str_get(&rep->strs, e->k.parent) : NULL;
			if (pk_rep_keys_publish(rep, &e->k, e->cpu, e->srcline, p))
				return -ENOMEM;
			p->self_period = e->self_period;
			p->self_samples = e->self_samples;
			p->total_period = rep->children ? e->total_period : e->self_period;
			p->total_samples = rep->children ? e->total_samples : e->self_samples;
			p->callchain = e->root != NONE32 && rep->pub_nodes ? &rep->pub_nodes[e->root] : NULL;
			h->pub_sorted[i] = p;
		}
		int fast = sort_fast(rep, h);
		struct sort_ctx sc = { .rep = rep, .h = h, .children = rep->children };
		if (!fast)
			qsort_r(h->pub_sorted, h->nr_ents, sizeof(*h->pub_sorted), ent_cmp, &sc);
		h->pub.entries = h->pub_sorted;
		h->pub.nr_entries = h->nr_ents;
	}
	return 0;
}

/* build_kids on a thread of its own (finish_kids), while the entries are published and
 * sorted here: the two read what the aggregation made and write apart (the child lists;
 * the public entries). A --children report of a system-wide recording has 2.7M call-chain
 * nodes: their lists took 25 ms, the entries' sort 30-40 ms, one after the other. */
#define KIDS_THREAD_MIN ((size_t)1 << 17)
struct kids_job {
	struct pk_report *rep;
	int err;
};

static void *kids_main(void *arg)
{
	struct kids_job *j = arg;
	j->err = build_kids(j->rep);
	return NULL;
}

int pk_report__finish(struct pk_report *rep)
{
	if (!rep)
		return pk_err(-EINVAL);
	int err = pk_rep_flush_pending(rep);
	if (err)
		return pk_err(err);
	pk_rep_agg_release(rep);
	pk_rep_cc_release(rep);
	free(rep->pub_nodes);
	rep->pub_nodes = NULL;
	struct kids_job kj = { .rep = rep };
	pthread_t kth;
	bool kids_thread = false;
	if (rep->lazy_cc && rep->reader_thread && rep->nr_nodes >= KIDS_THREAD_MIN &&
	    pk_online_cpus() >= 2)
		kids_thread = pthread_create(&kth, NULL, kids_main, &kj) == 0;
	if (!kids_thread && (rep->lazy_cc ? build_kids(rep) : build_nodes(rep)))
		return pk_err(-ENOMEM);
	err = publish(rep);
	if (kids_thread) {
		pthread_join(kth, NULL);
		if (!err)
			err = kj.err;
	}
	if (err)
		return pk_err(err);
	rep->finished = true;
	return 0;
}

size_t pk_report__nr_hists(const struct pk_report *rep)
{
	return rep ? rep->nr_hists : 0;
}

const struct pk_hist *pk_report__hist(const struct pk_report *rep, size_t idx)
{
	if (!rep || idx >= rep->nr_hists || !rep->hists[idx].used)
		return NULL;
	return &rep->hists[idx].pub;
}

void pk_report__for_each_unresolved_dso(const struct pk_report *rep,
					void (*fn)(const char *dso, uint64_t samples, void *ctx),
					void *ctx)
{
	if (!rep || !fn)
		return;
	for (size_t i = 0; i < rep->nr_udsos; i++)
		fn(pk_str_get(&rep->strs, rep->udsos[i].dso), rep->udsos[i].samples, ctx);
}
