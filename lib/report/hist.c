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
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <perfkit/report.h>
#include <perfkit/event.h>
#include "internal.h"
#include "session/feed.h"
#include "core/intern.h"

#define NONE32 UINT32_MAX
#define RHOT_BITS 14
#define MAX_CHAIN 1024

/* ---- frames ---- */

struct frame {
	uint32_t dso;           /* short name id */
	uint32_t dso_long;      /* long name id (the key) */
	uint32_t sym;           /* 0 = unresolved */
	uint32_t srcline;       /* for pk_report__add_sample frames */
	uint64_t addr;          /* unresolved: the DSO-relative address (key) */
	uint64_t sym_start;     /* resolved symbols are keyed by their range (start, length),
				 * as perf's sym sort key compares them */
	uint32_t sym_len;       /* (a size beyond 4 GiB, only in a hostile file, is cut) */
	/* not part of the identity: */
	uint32_t node1;         /* the first call-chain node made for this frame (NONE32
				 * none); the others are in nidx */
	uint32_t ent1;          /* the first entry made for it (NONE32 none), in hist
				 * ent1_hist, when entries are keyed by frame; others in eidx */
	uint16_t ent1_hist;
	uint8_t kernel : 1;
	uint8_t nomap : 1;      /* no map covered the address */
	uint8_t inlined : 1;    /* an inline pseudo-frame: keyed by name too */
};
_Static_assert(sizeof(struct frame) == 48, "one frame per 48 bytes (a few hundred thousand "
	       "of them in a recording through garbage callers)");

/* ---- resolved address cache ---- */

/* A mapped address's entry, one per DSO address (dso, dso_addr, file offset, kernel:
 * what decides its frame), shared by every process that maps it. */
struct rent {
	uint32_t frame;
	uint32_t srcline;       /* 0 = not looked up yet */
	struct pk_dso *dso;
	uint64_t dso_addr;
	int32_t inl_first;      /* -1: not looked up; else index into inl_pool */
	uint32_t inl_n;         /* 0: no inline information (use frame) */
};

/* ---- entries and nodes ---- */

struct hkey {
	uint32_t comm, pid, tid, cpu, frame, dso, srcline;
};

struct ent {
	struct hkey k;
	uint32_t comm_id;       /* display values */
	int32_t pid, tid, cpu;
	uint32_t frame;
	uint32_t srcline;
	uint32_t root;          /* call-chain root node, NONE32 if none */
	uint32_t last_seen;     /* sample serial, to count an entry once per chain */
	bool kernel;            /* "[k]" as shown: the level when the entry was created */
	uint16_t max_depth;     /* the longest chain appended to its tree (ent_cmp) */
	uint64_t self_period, self_samples, total_period, total_samples;
};

/* lazy_callchains: the public tree of an entry built so far, and its min_period */
struct ent_cc {
	const struct pk_callnode *cc;
	uint64_t min;
};

/* A node's own period (of the chains that end at it) is not stored: it is its period
 * minus its children's, computed when the public trees are built. */
struct node {
	uint32_t parent, frame;
	uint32_t kid1;          /* the first child made (NONE32 none); see node_child */
	uint64_t period, samples;
};

struct hist {
	struct pk_hist pub;
	bool used;
	char *name;
	struct ent *ents;
	size_t nr_ents, cap_ents;
	struct ent_cc *ccs;     /* nr_ents, allocated at the first lazy tree */
	struct pk_index eidx;
	struct pk_hist_entry *pub_ents;
	const struct pk_hist_entry **pub_sorted;
	size_t nr_pub, nr_ccs;  /* entries pub_ents/pub_sorted and ccs were made for */
};

struct udso {
	uint32_t dso;
	uint64_t samples;
};

/* public call-chain nodes built on demand (lazy_callchains) */
struct ccpool {
	struct ccpool *next;
	size_t used, cap;
	struct pk_callnode n[];
};

/* key layout in ppool (see struct pchain) */
enum { PK_HIST, PK_COMM, PK_PID, PK_TID, PK_CPU, PK_FLAGS, PK_N, PK_SELF, PK_HDR };
#define PK_HDR_WORDS 8
_Static_assert(PK_HDR == PK_HDR_WORDS, "pending key header");

#define GAP_SLOTS 8

static inline size_t gap_slot(uint32_t pid)
{
	return (pid * 0x9e3779b1u) >> 29;
}

struct pk_report {
	/* PERF_SAMPLE_READ samples: the reader (attrs by id) and each counter's last total */
	struct pk_data_reader *read_rd;
	struct pk_read_delta *rdelta;
	struct pk_count_value *rvals;
	size_t nrvals;
	bool children, callgraph, no_callchain, inlines, inlines_all, host, lazy_cc, reader_thread;
	enum pk_cg_order order;
	unsigned int max_stack;
	enum pk_sort_key sort[PK_SORT__MAX];
	size_t nr_sort;
	bool key_on[PK_SORT__MAX];
	/* filters (copies) */
	int32_t *pids, *tids, *cpus;
	size_t nr_pids, nr_tids, nr_cpus;
	char **comms, **dsos, **symbols;
	size_t nr_comms, nr_dsos, nr_symbols;
	uint64_t time_start, time_end;

	struct pk_machine *m;
	struct pk_ordered_stats ost;
	pk_report_progress_fn progress; /* pk_report__process's, and its ctx */
	void *progress_ctx;
	struct pk_strtab strs;
	struct frame *frames;
	size_t nr_frames, cap_frames;
	struct pk_index fidx;
	struct rent *rents;
	size_t nr_rents, cap_rents;
	/* resolved addresses by process and address (direct-mapped): what resolve() finds
	 * without a look at the maps; rent = index + 1, 0 = empty. Past it, the maps are
	 * searched and the entry found by DSO address (dcache) */
	struct rhot { uint64_t ip; uint32_t pid, gen, rent, frame; uint8_t cm; } *rhot;
	struct node *nodes;
	size_t nr_nodes, cap_nodes;
	struct pk_index nidx;
	struct hist *hists;
	size_t nr_hists;
	/* map generations: pid -> gen (bumped by MMAP/exec), kernel generation */
	struct { uint32_t pid, gen; } *gens;
	size_t gen_mask, gen_n;
	uint32_t kgen;
	/* the last gen_of answer (pid, its generation), valid while cepoch is gc_epoch: only
	 * records other than samples change generations, and each starts a cepoch */
	uint32_t gc_pid, gc_gen, gc_epoch;
	/* comm cache per tid; an entry of epoch cepoch is current without a look at the
	 * thread (records other than samples may rename a thread: each starts an epoch) */
	struct ccache { uint32_t tid, id, epoch; char comm[32]; bool used; } ccache[1024];
	uint32_t cepoch;        /* >= 1 */
	struct udso *udsos;
	size_t nr_udsos, cap_udsos;
	uint32_t serial;
	bool finished;
	/* scratch */
	struct pk_chain_entry chain[MAX_CHAIN];
	uint32_t cframes[MAX_CHAIN];
	uint32_t csrc[MAX_CHAIN];
	uint64_t cip[MAX_CHAIN];
	bool cip_valid;
	uint32_t seq[MAX_CHAIN];
	struct pk_callnode *pub_nodes;
	/* lazy_callchains: children of node i are kid[kid_off[i] .. kid_off[i + 1]) */
	uint32_t *kid_off, *kid;
	size_t nr_kid_nodes;
	struct ccpool *ccpool;
	struct ent_cc **cc_built; /* entries whose cc is set (lazy_callchains) */
	size_t nr_cc_built, cap_cc_built;
	uint32_t *inl_pool;
	size_t nr_inl, cap_inl;
	uint32_t self_frame;
	uint32_t unknown_id;    /* string id of "[unknown]", 0 until needed */
	/* per process (a few slots by pid), the last unmapped range a user address fell in
	 * (map generation gen): other addresses in it are unmapped too, known without a
	 * look-up. (One slot for all: two processes sampled in turn, as in the bench's fp
	 * file, replaced each other's range at every sample.) */
	struct { uint64_t lo, hi; uint32_t pid, gen; bool valid; } gap[GAP_SLOTS];
	uint32_t cabs[MAX_CHAIN];
	/* frame_abs answers, direct-mapped by (frame, ip): id + 1, 0 = empty. Every
	 * unresolved frame of a chain asks (a stripped library's frames, all of them), and
	 * the answer is fixed (frames are never removed), where interning the twin anew took
	 * a hash and an index probe each time */
	struct absc { uint64_t ip; uint32_t fid, abs; } *absc;
	/* the resolved-address entries by DSO address, for every process. They used to be
	 * keyed by process, address and map generation: a system-wide recording of a
	 * compile (2370 processes, most running the same few binaries) made 322k entries
	 * for 100k DSO addresses, each new one a symbol look-up and the interning of its
	 * names again, and one more probe of a big index than now. Open addressing, linear
	 * probing; rent = index + 1, 0 = empty; the entry's frame too, which spares a cache
	 * miss on the entry itself (frame ids stay far below 2^31: 48 bytes each). */
	struct dent { const struct pk_dso *dso; uint64_t dso_addr, off; uint32_t rent;
		      uint32_t frame : 31, kernel : 1; } *dcache;
	size_t dcache_mask, dcache_n;
	uint64_t nr_lookups;    /* dso_frame calls (pk_report_symbol_lookups) */
	/* samples waiting to be aggregated, merged by identical key (see defer_key) */
	uint32_t *ppool;
	size_t nr_ppool, cap_ppool;
	struct pchain *pch;
	size_t nr_pch, cap_pch;
	struct pk_index pidx;
	/* the pending key under construction (pending_key) */
	uint32_t kbuf[PK_HDR_WORDS + 3 * MAX_CHAIN];
	uint32_t flush_epoch;   /* flush_pending calls: pchain ids of older epochs are gone */
	struct lastsample *last; /* LAST_SLOTS, allocated at the first use */
	/* call-chain nodes of inline frames (chain_key): per inline frame id (below
	 * nr_nkey), the frame that stands for every inline frame of its name and that
	 * name's string id (NONE32: not an inline frame); per function name, that frame
	 * and the first real (out-of-line) symbol frame of the name */
	struct nkey { uint32_t canon, name; } *nkey;
	size_t nr_nkey, cap_nkey;
	struct iname { uint32_t name, inl, real; } *iname;
	size_t iname_mask, iname_n;
};

/*
 * The last sample of a thread (a few slots, by tid): a sample that repeats it exactly
 * (same event, comm, map generation, ip and recorded chain: a loop sampled again under
 * the same callers) adds to the same pending chain without resolving anything. Keyed
 * on everything that decides the pending key; samples with a user stack copy (DWARF)
 * and chains of more than LAST_IPS entries are not remembered.
 */
#define LAST_SLOTS 64
#define LAST_IPS 48
struct lastsample {
	uint32_t tid, pid, gen, hist, comm, epoch, pch;
	int32_t cpu;
	uint64_t ip;
	uint8_t cm;
	bool chain, used;
	uint16_t nr;
	uint64_t ips[LAST_IPS];
};

/* A distinct aggregation key (hist, comm, pid/tid/cpu as sorted on, chain frames) and
 * the summed period and sample count of the samples that had it. */
struct pchain {
	uint32_t off, len;      /* key words in ppool */
	int32_t pid, tid, cpu;  /* of the first such sample (shown by entries it creates) */
	uint64_t period, samples;
};

#define PF_CHAIN 1u
#define PF_ABS 2u
#define PF_SRC 4u
/* 256 KiB of keys pending at most: the pool and its index stay in the L2 cache. (At 4 MiB
 * the last flush alone took 9 ms of the fp bench file's report, after the reader was
 * done; the whole report was 6-14 % slower, with no more repeats merged on the deep one.) */
#define PPOOL_FLUSH_WORDS ((size_t)1 << 16)

/* ------------------------------------------------------------------------------------ */

static const char *const sort_names[PK_SORT__MAX] = {
	[PK_SORT_COMM] = "comm", [PK_SORT_PID] = "pid", [PK_SORT_TID] = "tid",
	[PK_SORT_DSO] = "dso", [PK_SORT_SYM] = "sym", [PK_SORT_SRCLINE] = "srcline",
	[PK_SORT_CPU] = "cpu",
};

int pk_sort_key__parse(const char *name)
{
	if (!name)
		return pk_err(-EINVAL);
	if (!strcmp(name, "symbol"))
		return PK_SORT_SYM;
	if (!strcmp(name, "thread"))
		return PK_SORT_TID;
	for (int i = 0; i < PK_SORT__MAX; i++)
		if (!strcmp(name, sort_names[i]))
			return i;
	return pk_err(-EINVAL);
}

const char *pk_sort_key__name(enum pk_sort_key k)
{
	return (unsigned)k < PK_SORT__MAX ? sort_names[k] : NULL;
}

static int copy_ints(int32_t **dst, size_t *nr, const int32_t *src, size_t n)
{
	*nr = 0;
	if (!n || !src)
		return 0;
	*dst = malloc(n * sizeof(**dst));
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, n * sizeof(**dst));
	*nr = n;
	return 0;
}

static int copy_strs(char ***dst, size_t *nr, const char *const *src, size_t n)
{
	*nr = 0;
	if (!n || !src)
		return 0;
	*dst = calloc(n, sizeof(char *));
	if (!*dst)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		(*dst)[i] = strdup(src[i] ? src[i] : "");
		if (!(*dst)[i])
			return -ENOMEM;
		*nr = i + 1;
	}
	return 0;
}

struct pk_report *pk_report__new(const struct pk_report_opts *o)
{
	if (!PK_OPTS_VALID(o, pk_report_opts))
		return pk_err_ptr(-EINVAL);
	struct pk_report *rep = calloc(1, sizeof(*rep));
	if (!rep)
		return pk_err_ptr(-ENOMEM);
	size_t nr_sort = PK_OPTS_GET(o, nr_sort, 0);
	const enum pk_sort_key *sort = PK_OPTS_GET(o, sort, NULL);
	if (!sort || !nr_sort) {
		rep->sort[0] = PK_SORT_COMM;
		rep->sort[1] = PK_SORT_DSO;
		rep->sort[2] = PK_SORT_SYM;
		rep->nr_sort = 3;
	} else {
		if (nr_sort > PK_SORT__MAX)
			goto inval;
		for (size_t i = 0; i < nr_sort; i++) {
			if ((unsigned)sort[i] >= PK_SORT__MAX)
				goto inval;
			rep->sort[i] = sort[i];
		}
		rep->nr_sort = nr_sort;
	}
	for (size_t i = 0; i < rep->nr_sort; i++)
		rep->key_on[rep->sort[i]] = true;
	rep->children = PK_OPTS_GET(o, children, false);
	rep->callgraph = PK_OPTS_GET(o, callgraph, false);
	rep->order = PK_OPTS_GET(o, order, PK_CG_ORDER_DEFAULT);
	if (rep->order == PK_CG_ORDER_DEFAULT)
		rep->order = rep->children ? PK_CG_ORDER_CALLER : PK_CG_ORDER_CALLEE;
	rep->no_callchain = PK_OPTS_GET(o, no_callchain, false);
	rep->max_stack = PK_OPTS_GET(o, max_stack, 0u);
	if (!rep->max_stack || rep->max_stack > MAX_CHAIN)
		rep->max_stack = rep->max_stack ? MAX_CHAIN : 127;
	rep->inlines = PK_OPTS_GET(o, inlines, false);
	rep->inlines_all = PK_OPTS_GET(o, inlines_all, false);
	rep->cepoch = 1;
	rep->reader_thread = !PK_OPTS_GET(o, no_reader_thread, false);
	rep->lazy_cc = PK_OPTS_GET(o, lazy_callchains, false);
	rep->time_start = PK_OPTS_GET(o, time_start, 0);
	rep->time_end = PK_OPTS_GET(o, time_end, 0);
	if (copy_ints(&rep->pids, &rep->nr_pids, PK_OPTS_GET(o, pids, NULL), PK_OPTS_GET(o, nr_pids, 0)) ||
	    copy_ints(&rep->tids, &rep->nr_tids, PK_OPTS_GET(o, tids, NULL), PK_OPTS_GET(o, nr_tids, 0)) ||
	    copy_ints(&rep->cpus, &rep->nr_cpus, PK_OPTS_GET(o, cpus, NULL), PK_OPTS_GET(o, nr_cpus, 0)) ||
	    copy_strs(&rep->comms, &rep->nr_comms, PK_OPTS_GET(o, comms, NULL), PK_OPTS_GET(o, nr_comms, 0)) ||
	    copy_strs(&rep->dsos, &rep->nr_dsos, PK_OPTS_GET(o, dsos, NULL), PK_OPTS_GET(o, nr_dsos, 0)) ||
	    copy_strs(&rep->symbols, &rep->nr_symbols, PK_OPTS_GET(o, symbols, NULL),
		      PK_OPTS_GET(o, nr_symbols, 0))) {
		pk_report__free(rep);
		return pk_err_ptr(-ENOMEM);
	}
	PK_OPTS(pk_machine_opts, mo, .host = PK_OPTS_GET(o, host, false),
		.kallsyms = PK_OPTS_GET(o, kallsyms, NULL));
	rep->m = pk_machine__new(&mo);
	if (!rep->m) {
		int e = errno;
		pk_report__free(rep);
		return pk_err_ptr(-e);
	}
	return rep;
inval:
	free(rep);
	return pk_err_ptr(-EINVAL);
}

/* Free the public trees built so far (keeping one pool chunk for reuse if `keep`). */
static void cc_trees_release(struct pk_report *rep, bool keep)
{
	struct ccpool *p = rep->ccpool;
	if (keep && p) {
		p->used = 0;
		p = p->next;
		rep->ccpool->next = NULL;
	} else {
		rep->ccpool = NULL;
	}
	while (p) {
		struct ccpool *n = p->next;
		free(p);
		p = n;
	}
	for (size_t i = 0; i < rep->nr_cc_built; i++)
		rep->cc_built[i]->cc = NULL;
	rep->nr_cc_built = 0;
}

static void cc_release(struct pk_report *rep)
{
	if (rep->kid_off) {
		pk_arr_free(rep->kid_off, (rep->nr_kid_nodes + 1) * sizeof(*rep->kid_off));
		pk_arr_free(rep->kid, rep->nr_kid_nodes * sizeof(*rep->kid));
	}
	rep->kid_off = rep->kid = NULL;
	rep->nr_kid_nodes = 0;
	cc_trees_release(rep, false);
	pk_arr_free(rep->cc_built, rep->cap_cc_built * sizeof(*rep->cc_built));
	rep->cc_built = NULL;
	rep->cap_cc_built = 0;
	for (size_t i = 0; i < rep->nr_hists; i++) {
		pk_arr_free(rep->hists[i].ccs, rep->hists[i].nr_ccs * sizeof(*rep->hists[i].ccs));
		rep->hists[i].ccs = NULL;
	}
}

static void hist_release(struct hist *h)
{
	free(h->name);
	pk_arr_free(h->ccs, h->nr_ccs * sizeof(*h->ccs));
	pk_arr_free(h->ents, h->cap_ents * sizeof(*h->ents));
	pk_index_release(&h->eidx);
	pk_arr_free(h->pub_ents, h->nr_pub * sizeof(*h->pub_ents));
	pk_arr_free(h->pub_sorted, h->nr_pub * sizeof(*h->pub_sorted));
}

static void rents_release(struct pk_report *rep);

void pk_report__free(struct pk_report *rep)
{
	if (!rep)
		return;
	cc_release(rep);
	pk_read_delta__free(rep->rdelta);
	free(rep->rvals);
	pk_machine__free(rep->m);
	pk_str_release(&rep->strs);
	pk_arr_free(rep->frames, rep->cap_frames * sizeof(*rep->frames));
	pk_index_release(&rep->fidx);
	rents_release(rep);
	pk_arr_free(rep->nodes, rep->cap_nodes * sizeof(*rep->nodes));
	pk_index_release(&rep->nidx);
	pk_arr_free(rep->nkey, rep->cap_nkey * sizeof(*rep->nkey));
	free(rep->iname);
	for (size_t i = 0; i < rep->nr_hists; i++)
		hist_release(&rep->hists[i]);
	free(rep->hists);
	free(rep->gens);
	pk_arr_free(rep->udsos, rep->cap_udsos * sizeof(*rep->udsos));
	free(rep->pub_nodes);
	pk_arr_free(rep->ppool, rep->cap_ppool * sizeof(*rep->ppool));
	pk_arr_free(rep->pch, rep->cap_pch * sizeof(*rep->pch));
	pk_index_release(&rep->pidx);
	free(rep->pids);
	free(rep->tids);
	free(rep->cpus);
	for (size_t i = 0; i < rep->nr_comms; i++)
		free(rep->comms[i]);
	for (size_t i = 0; i < rep->nr_dsos; i++)
		free(rep->dsos[i]);
	for (size_t i = 0; i < rep->nr_symbols; i++)
		free(rep->symbols[i]);
	free(rep->comms);
	free(rep->dsos);
	free(rep->symbols);
	free(rep);
}

uint64_t pk_report_symbol_lookups(const struct pk_report *rep)
{
	return rep ? rep->nr_lookups : 0;
}

struct pk_machine *pk_report__machine(struct pk_report *rep)
{
	return rep ? rep->m : NULL;
}

void pk_report__ordered_stats(const struct pk_report *rep, struct pk_ordered_stats *st)
{
	if (rep && st)
		PK_OUT_COPY(st, &rep->ost);
}

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
static void rents_release(struct pk_report *rep)
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
static void agg_release(struct pk_report *rep)
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
static int flush_pending(struct pk_report *rep)
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
		int err = flush_pending(rep);
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
static uint32_t comm_id(struct pk_report *rep, uint32_t tid, const char *comm, uint32_t epoch)
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
	return comm_id(rep, tid, pk_machine__comm_of(rep->m, tid), rep->cepoch);
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
	int err = flush_pending(rep);
	if (!err)
		err = aggregate(rep, h, comm_id(rep, (uint32_t)tid, comm, 0), pid, tid, cpu, period, 1,
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
		int nc = pk_machine__callchain(rep->m, s, rep->chain, rep->max_stack);
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
	rents_release(rep);
	if (err < 0)
		return pk_err(err);
	return pk_report__finish(rep);
}

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
		case PK_SORT_DSO: c = strcmp0(a->dso, b->dso); break;
		case PK_SORT_SYM:
			if (a->sym && b->sym)
				c = a->sym == b->sym ? 0 : strcmp(a->sym, b->sym);
			else if (a->sym || b->sym)
				c = a->sym ? -1 : 1;
			else
				c = (a->addr > b->addr) - (a->addr < b->addr);
			break;
		case PK_SORT_SRCLINE: c = strcmp0(a->srcline, b->srcline); break;
		default: break;
		}
		if (c)
			return c;
	}
	return 0;
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

static int node_cmp(const void *pa, const void *pb)
{
	const struct pk_callnode *a = *(const struct pk_callnode *const *)pa;
	const struct pk_callnode *b = *(const struct pk_callnode *const *)pb;
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	/* ties: perf lists children in the order of its match_chain search tree, which for
	 * a pair with an inline frame is by function name, descending */
	size_t la = 0, lb = 0;
	bool ia = a->sym && inline_base(a->sym, &la), ib = b->sym && inline_base(b->sym, &lb);
	if ((ia || ib) && a->sym && b->sym) {
		int c = memcmp(a->sym, b->sym, PK_MIN(la, lb));
		if (c || la != lb)
			return c ? -c : (la < lb ? 1 : -1);
	}
	int c = strcmp0(a->sym, b->sym);
	if (c)
		return c;
	return (a->addr > b->addr) - (a->addr < b->addr);
}

static void cc_fill(const struct pk_report *rep, struct pk_callnode *p, uint32_t id)
{
	const struct node *nd = &rep->nodes[id];
	if (nd->frame != NONE32) {
		const struct frame *f = &rep->frames[nd->frame];
		p->sym = pk_str_get(&rep->strs, f->sym);
		p->dso = pk_str_get(&rep->strs, f->dso);
		p->srcline = pk_str_get(&rep->strs, f->srcline);
		p->addr = f->addr;
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
		if (b - a > 1)
			qsort(kids + a, b - a, sizeof(*kids), node_cmp);
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
	free(rep->pub_nodes);
	rep->pub_nodes = NULL;
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
	const struct pk_callnode *p; /* first: node_cmp compares through it */
	uint32_t id;
};

static int ccpair_cmp(const void *a, const void *b)
{
	return node_cmp(&((const struct ccpair *)a)->p, &((const struct ccpair *)b)->p);
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
		qsort(pr, k, sizeof(*pr), ccpair_cmp);
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
		cc_trees_release(rep, true);
}

int pk_report__finish(struct pk_report *rep)
{
	if (!rep)
		return pk_err(-EINVAL);
	int err = flush_pending(rep);
	if (err)
		return pk_err(err);
	agg_release(rep);
	cc_release(rep);
	if (rep->lazy_cc ? build_kids(rep) : build_nodes(rep))
		return pk_err(-ENOMEM);
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
			return pk_err(-ENOMEM);
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
					return pk_err(-ENOMEM);
				p->thread_comm = pk_str_get(&rep->strs, id);
			}
			p->cpu = e->cpu;
			p->dso = pk_str_get(&rep->strs, f->dso);
			p->dso_long = pk_str_get(&rep->strs, f->dso_long);
			p->sym = pk_str_get(&rep->strs, f->sym);
			p->addr = f->addr;
			p->kernel = e->kernel;
			p->srcline = pk_str_get(&rep->strs, e->srcline);
			p->self_period = e->self_period;
			p->self_samples = e->self_samples;
			p->total_period = rep->children ? e->total_period : e->self_period;
			p->total_samples = rep->children ? e->total_samples : e->self_samples;
			p->callchain = e->root != NONE32 && rep->pub_nodes ? &rep->pub_nodes[e->root] : NULL;
			h->pub_sorted[i] = p;
		}
		struct sort_ctx sc = { .rep = rep, .h = h, .children = rep->children };
		qsort_r(h->pub_sorted, h->nr_ents, sizeof(*h->pub_sorted), ent_cmp, &sc);
		h->pub.entries = h->pub_sorted;
		h->pub.nr_entries = h->nr_ents;
	}
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
