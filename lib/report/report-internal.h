/* SPDX-License-Identifier: MIT */
/*
 * lib/report/report-internal.h - the report's state, shared by report.c (options, new,
 * free), hist.c (the record stream aggregated into entries and call-chain nodes) and
 * tree.c (finishing: sorted entries, public call-chain trees).
 */
#ifndef PK_REPORT_INTERNAL_H
#define PK_REPORT_INTERNAL_H

#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <perfkit/report.h>
#include <perfkit/event.h>
#include "internal.h"
#include "session/feed.h"
#include "core/intern.h"
#include "core/gapcache.h"

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
	uint64_t ip;            /* not part of the identity: the first sampled address of
				 * this frame, as sampled (perf's call-graph text shows it) */
	uint32_t sym_len;       /* (a size beyond 4 GiB, only in a hostile file, is cut) */
	uint8_t kernel : 1;
	uint8_t nomap : 1;      /* no map covered the address */
	uint8_t inlined : 1;    /* an inline pseudo-frame: keyed by name too */
	uint8_t abs : 1;        /* unresolved, keyed by the sampled address (addr = ip; its
				 * address in the object in sym_start, unused without a
				 * symbol): frame_abs */
};
_Static_assert(sizeof(struct frame) == 48, "one frame per 48 bytes (a few hundred thousand "
	       "of them in a recording through garbage callers)");

/* What the aggregation notes per frame (rep->fagg, by frame id), apart from the frame:
 * frames are written once, by the resolving side, and only read after, so that the
 * aggregation can run on a worker thread beside it (aggw.c) */
struct fagg {
	uint32_t node1;         /* the first call-chain node made for this frame (NONE32
				 * none); the others are in nidx */
	uint32_t ent1;          /* the first entry made for it (NONE32 none), in hist
				 * ent1_hist, when entries are keyed by frame; others in eidx */
	uint16_t ent1_hist;
};

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
	uint32_t comm, pid, tid, cpu, frame, dso, srcline, parent;
	uint32_t time, socket, srcfile; /* (keys.c) time slice id, socket + 2, file id */
	uint32_t symoff;        /* (keys.c) the "sym+0x.." string id */
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

/* (the entries, written by the aggregation, on cache lines apart from pub, whose counts
 * the resolving thread updates at every sample: see aggw.c) */
struct hist {
	struct pk_hist pub;
	bool used;
	char *name;
	_Alignas(64) struct ent *ents;
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

struct pk_report {
	/* PERF_SAMPLE_READ samples: the reader (attrs by id) and each counter's last total */
	struct pk_data_reader *read_rd;
	struct pk_read_delta *rdelta;
	struct pk_count_value *rvals;
	size_t nrvals;
	bool children, callgraph, no_callchain, inlines, inlines_all, host, lazy_cc, reader_thread,
	     hide_unresolved, exclude_other, has_parent_re, has_ignore_re;
	regex_t parent_re, ignore_re;
	/* keys.c: the time key's slices (id - 1 indexes tslice; tidx: slice + 1 -> id),
	 * the time of the sample being aggregated at once (direct: time or socket keys,
	 * which the pending key does not hold), srcline ids only looked up for srcfile */
	uint64_t time_quantum, cur_time, *tslice;
	size_t nr_tslice, cap_tslice;
	struct pk_u64map tidx;
	bool direct, src_for_file, symoff_key;
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
	/* the aggregation's view of the frames (frames as of the pending samples it
	 * aggregates: the array may have been replaced since, see aggw.c) and its notes */
	const struct frame *afr;
	struct fagg *fagg;
	size_t nr_fagg, cap_fagg;
	struct aggw *aw;        /* the aggregation worker, NULL: none (aggw.c) */
	bool agg_async;         /* pending samples may be aggregated by the worker */
	struct pk_index fidx;
	/* bit i: frame i is its own absolute-address frame at every address it is
	 * resolved from (frame_abs(i, ip) == i): it has a symbol, or no map covered it (its
	 * key is the address). Asked for every frame of every chain: a bit here is in cache
	 * where the 48-byte frame was often a miss */
	uint64_t *fsame;
	size_t cap_fsame;
	struct rent *rents;
	size_t nr_rents, cap_rents;
	/* resolved addresses by map generation (pk_machine__maps_gen, which tells one
	 * address space from another and its states over time) and address
	 * (direct-mapped): what pk_rep_resolve() finds
	 * without a look at the maps; rent = index + 1, 0 = empty. Past it, the maps are
	 * searched and the entry found by DSO address (dcache) */
	struct rhot { uint64_t ip, gen; uint32_t rent, frame; uint8_t cm; } *rhot;
	struct hist *hists;
	size_t nr_hists;
	/* gen_of answers (a thread's map generation, per tid, direct-mapped: samples of
	 * a few threads interleave; the kernel's), valid while cepoch is their epoch: only
	 * records other than samples change the machine's maps, and each starts a cepoch */
	struct gcache { uint64_t gen; uint32_t pid, tid, epoch; } gcache[64];
	uint64_t kg_gen;
	uint32_t kg_epoch;
	/* comm cache per tid; an entry of epoch cepoch is current without a look at the
	 * thread (records other than samples may rename a thread: each starts an epoch) */
	struct ccache { uint32_t tid, id, epoch; char comm[32]; bool used; } ccache[1024];
	uint32_t cepoch;        /* >= 1 */
	struct pk_u64map dso_seq;       /* dso_long string id -> pk_dso_seq + 1 */
	/* the sym key without the dso key: an address without a symbol -> the first frame
	 * id + 1 seen with it (keys.c pk_rep_sym_frame; aggregation side) */
	struct pk_u64map addr_fr;
	bool addr_key;
	/* scratch */
	struct pk_chain_entry chain[MAX_CHAIN];
	uint32_t cframes[MAX_CHAIN];
	uint32_t csrc[MAX_CHAIN];
	uint64_t cip[MAX_CHAIN];
	bool cip_valid;
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
	/* per process, the last unmapped ranges user addresses fell in (map generation
	 * gen): other addresses in them are unmapped too, known without a look-up */
	struct pk_gapcache gaps;
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
	/* the name ids of recent DSOs (dso_frame), direct-mapped by DSO; the names are
	 * compared on a hit (a JIT DSO may be renamed): interning both names again for
	 * each new address took 4 % of a system-wide recording's report */
	struct dname { const void *dso; uint32_t sid, lid; } dnames[64];
	/* samples waiting to be aggregated, merged by identical key (see defer_key) */
	uint32_t *ppool;
	size_t nr_ppool, cap_ppool;
	struct pchain *pch;
	size_t nr_pch, cap_pch;
	struct pk_index pidx;
	/* the pending key under construction (pending_key) */
	uint32_t kbuf[PK_HDR_WORDS + 3 * MAX_CHAIN];
	bool abs_same;           /* do_sample: cabs[] is cframes[] (PF_ABS_SAME) */
	uint32_t flush_epoch;   /* flush_pending calls: pchain ids of older epochs are gone */
	struct lastsample *last; /* LAST_SLOTS, allocated at the first use */
	/* call-chain nodes of inline frames (chain_key): per inline frame id (below
	 * nr_nkey), the frame that stands for every inline frame of its name and that
	 * name's string id (NONE32: not an inline frame); per function name, that frame
	 * and the first real (out-of-line) symbol frame of the name */
	struct nkey { uint32_t canon, name; } *nkey;
	size_t nr_nkey, cap_nkey;
	/* ---- written by the aggregation, which may run on the worker thread (aggw.c): on
	 * cache lines of their own, apart from what the resolving thread writes at every
	 * sample (a line both write travels between the CPUs at each write of either) */
	_Alignas(64) struct node *nodes;
	size_t nr_nodes, cap_nodes;
	struct pk_index nidx;
	struct iname { uint32_t name, inl, real; } *iname;
	size_t iname_mask, iname_n;
	struct udso *udsos;
	size_t nr_udsos, cap_udsos;
	uint32_t serial;
	bool finished;
	uint32_t cur_parent;    /* the parent key of the chain being aggregated */
	uint32_t seq[MAX_CHAIN];
	uint32_t hu_fr[MAX_CHAIN], hu_fa[MAX_CHAIN], hu_src[MAX_CHAIN]; /* hide_unresolved */
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
	uint32_t tid, pid, hist, comm, epoch, pch;
	int32_t cpu;
	uint64_t gen;
	uint64_t ip;
	uint8_t cm;
	bool chain, used;
	uint16_t nr;
	uint64_t ips[LAST_IPS];
};

static inline bool pk_rep_frame_abs_same(const struct pk_report *rep, uint32_t fid)
{
	return rep->fsame[fid >> 6] >> (fid & 63) & 1;
}

/* memcpy of n words, 16 or 32 bytes at a time: GCC (-O2, x86-64) makes a memcpy of a
 * bounded, variable size in do_sample and pending_key a `rep movsq`, whose start-up cost
 * was a quarter of do_sample's own time on short chains (xz.data) */
static inline void pk_rep_copy32(uint32_t *d, const uint32_t *s, size_t n)
{
	size_t i = 0;
	for (; i + 4 <= n; i += 4)
		memcpy(d + i, s + i, 4 * sizeof(*d));
	for (; i < n; i++)
		d[i] = s[i];
}

static inline void pk_rep_copy64(uint64_t *d, const uint64_t *s, size_t n)
{
	size_t i = 0;
	for (; i + 4 <= n; i += 4)
		memcpy(d + i, s + i, 4 * sizeof(*d));
	for (; i < n; i++)
		d[i] = s[i];
}

/* A merge sort of ids b[0..n) (tmp: room for n), stable, one function per comparison
 * (CMP(const CTX *, a, b) put in line: a call per comparison through a pointer cost
 * twice the sort). Each CMP is a strict weak order (tree.c), so any stable sort gives
 * this result: runs of up to 8 are sorted by insertion (no call and no copy each), and
 * halves already in order are not merged (one comparison) */
#define PK_REP_MSORT_IDS(NAME, CTX, CMP)					\
static void NAME(uint32_t *b, size_t n, uint32_t *tmp, const CTX *c)		\
{										\
	if (n <= 8) {								\
		for (size_t i = 1; i < n; i++) {				\
			uint32_t x = b[i];					\
			size_t j = i;						\
			for (; j && CMP(c, x, b[j - 1]) < 0; j--)		\
				b[j] = b[j - 1];				\
			b[j] = x;						\
		}								\
		return;								\
	}									\
	size_t n1 = n / 2;							\
	NAME(b, n1, tmp, c);							\
	NAME(b + n1, n - n1, tmp, c);						\
	if (CMP(c, b[n1], b[n1 - 1]) >= 0)					\
		return;								\
	uint32_t *p = b, *e1 = b + n1, *q = e1, *e2 = b + n, *t = tmp;		\
	while (p < e1 && q < e2)						\
		*t++ = CMP(c, *q, *p) < 0 ? *q++ : *p++;			\
	while (p < e1)								\
		*t++ = *p++;							\
	memcpy(b, tmp, (size_t)(t - tmp) * sizeof(*b));				\
}

/* A distinct aggregation key (hist, comm, pid/tid/cpu as sorted on, chain frames) and
 * the summed period and sample count of the samples that had it. */
struct pchain {
	uint32_t off, len;      /* key words in ppool */
	int32_t pid, tid, cpu;  /* of the first such sample (shown by entries it creates) */
	uint64_t period, samples;
};

/* entries from which sort_rbt sorts the output order on a thread of its own (tree.c;
 * tests lower it to take that path on small inputs) */
extern size_t pk_rep_sort_thread_min;

#define PF_CHAIN 1u
#define PF_ABS 2u
#define PF_SRC 4u
/* with PF_ABS: every absolute-address frame is the frame itself (all frames have a
 * symbol, or are at their own address): the key leaves that copy out (keys half as
 * long on symbolized chains: hashed, compared and copied at every sample) */
#define PF_ABS_SAME 8u
/* 256 KiB of keys pending at most: the pool and its index stay in the L2 cache. (At 4 MiB
 * the last flush alone took 9 ms of the fp bench file's report, after the reader was
 * done; the whole report was 6-14 % slower, with no more repeats merged on the deep one.) */
#define PPOOL_FLUSH_WORDS ((size_t)1 << 16)
/* 64 KiB with the aggregation worker (aggw.c): the pool and its index are written here
 * and read there, hand-overs are cheap, and a smaller index is probed faster at every
 * sample (measured: the resolving thread 7-10 % faster than with 256 KiB on sys.data and
 * xz.data; 32 KiB was no better) */
#define PPOOL_ASYNC_WORDS ((size_t)1 << 14)

/* (report.c) free the lazily built public trees (keep: the kid arrays stay), and every
 * call-chain structure */
void pk_rep_cc_trees_release(struct pk_report *rep, bool keep);
void pk_rep_cc_release(struct pk_report *rep);
/* (hist.c) the resolved-address entries, the aggregation state, a thread's comm id, and
 * the pending samples aggregated */
void pk_rep_rents_release(struct pk_report *rep);
void pk_rep_agg_release(struct pk_report *rep);
uint32_t pk_rep_comm_id(struct pk_report *rep, uint32_t tid, const char *comm, uint32_t epoch);
int pk_rep_flush_pending(struct pk_report *rep);
/* (hist.c) aggregate the pending samples pch[0..n) with keys in pool, in order */
int pk_rep_aggregate_pending(struct pk_report *rep, const uint32_t *pool,
			     const struct pchain *pch, size_t n);
/* (aggw.c) the worker: wait until it is idle (its error, 0 if none), stop it, hand it
 * the pending samples (swapping buffers with rep's: 1 handed, 0 not: aggregate them
 * here), and the room for a frame while it may be reading the frames array */
int pk_rep_aggw_wait(struct pk_report *rep);
void pk_rep_aggw_stop(struct pk_report *rep);
int pk_rep_aggw_hand(struct pk_report *rep);
int pk_rep_frames_grow(struct pk_report *rep);
/* (hist.c) a hist for every attr of r; the session's callbacks of pk_report__process
 * (ctx: the report) */
void pk_rep_hists_of_reader(struct pk_report *rep, struct pk_data_reader *r);
int pk_rep_on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *r);
int pk_rep_on_record(void *ctx, const struct pk_data_event *ev, const struct pk_record *r);
/* (hist.c) read r into rep through a session of options so with ops and ctx, then
 * finish the report (pk_report__process and pk_report__process_live) */
int pk_rep_process(struct pk_report *rep, struct pk_data_reader *r,
		   const struct pk_session_opts *so, const struct pk_session_ops *ops, void *ctx);
/* (keys.c) the time, socket and srcfile keys: a key word of each (0 when off), the
 * public fields of an entry from its key, their release */
uint32_t pk_rep_sym_frame(struct pk_report *rep, uint32_t fid);
void pk_rep_keys_of(struct pk_report *rep, struct hkey *k, int32_t cpu, uint32_t srcline);
int pk_rep_keys_publish(struct pk_report *rep, const struct hkey *k, int32_t cpu,
			uint32_t srcline, struct pk_hist_entry *p);
void pk_rep_keys_release(struct pk_report *rep);
/* (keys.c) the srcline id of a resolved address, or with the symoff key its "sym+0x.."
 * string id, which then takes the srcline's place (the two keys do not go together) */
uint32_t pk_rep_src_of(struct pk_report *rep, struct rent *re, uint32_t fid);

#endif
