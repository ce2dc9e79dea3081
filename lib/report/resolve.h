/* SPDX-License-Identifier: MIT */
/*
 * lib/report/resolve.h - addresses to frames for the histogram (resolve.c), with the fast
 * paths inline: a sample's map generation and the direct-mapped hot cache of resolved
 * addresses, which nearly every frame of every call chain goes through.
 */
#ifndef PK_REPORT_RESOLVE_H
#define PK_REPORT_RESOLVE_H

#include "report-internal.h"

/* (Re)build a lookup index of n items from their hashes (pk_report__finish drops them). */
int pk_rep_index_rebuild(struct pk_index *x, size_t n,
			 uint64_t (*hash)(const void *, size_t, bool *), const void *ctx);
/* The id of frame f, interned (frames are perf's sort-key identities). */
int pk_rep_frame_intern(struct pk_report *rep, const struct frame *f, uint32_t *id);
/* The frame of an address that no map covers. */
int pk_rep_nomap_frame(struct pk_report *rep, uint64_t ip, uint8_t cm, uint32_t *fid);
/*
 * The resolved-address entry of ip and its frame id (*fid: from the hot cache without
 * touching the entry, which is one cache miss less per frame of a call chain).
 * An address that no map covers gets no entry (*out = NULL): its frame is all there is to
 * know, and the frame index already is a cache of it. Such addresses are typically
 * garbage callers (a chain walked through code built without frame pointers), nearly
 * each one new: an entry and its index slot were two more cache misses and ~60 bytes
 * each, for nothing.
 */
int pk_rep_resolve_slow(struct pk_report *rep, uint32_t pid, uint32_t tid, uint64_t gen,
			uint64_t ip, uint8_t cm, size_t hot, struct rent **out, uint32_t *fid);
/* srcline string id of a resolved address (its frame fid; e NULL outside every map) */
uint32_t pk_rep_srcline_of(struct pk_report *rep, struct rent *e, uint32_t fid);
/* The inline expansion of a resolved user address: frame ids in *out, their number. */
size_t pk_rep_inlines_of(struct pk_report *rep, struct rent *e, const uint32_t **out);
/* Record inline frame `frame` of function `name` (hist.c, for pk_rep_inlines_of). */
int pk_rep_chain_key_inline(struct pk_report *rep, uint32_t frame, uint32_t name);

/* The map generation of thread (pid, tid), part of every cache key of its addresses:
 * of both its maps and the kernel's (a chain may hold addresses of either mode) */
static inline uint64_t pk_rep_gen_of(struct pk_report *rep, uint32_t pid, uint32_t tid)
{
	struct gcache *g = &rep->gcache[tid & (PK_ARRAY_SIZE(rep->gcache) - 1)];
	if (g->epoch == rep->cepoch && g->tid == tid && g->pid == pid)
		return g->gen;
	g->gen = pk_machine__maps_gen(rep->m, pid, tid, PK_CPUMODE_UNKNOWN);
	g->pid = pid;
	g->tid = tid;
	g->epoch = rep->cepoch;
	return g->gen;
}

/* the kernel's map generation: kernel addresses resolve alike in every process */
static inline uint64_t pk_rep_kgen_of(struct pk_report *rep)
{
	if (rep->kg_epoch != rep->cepoch) {
		rep->kg_gen = pk_machine__maps_gen(rep->m, 0, 0, PK_CPUMODE_KERNEL);
		rep->kg_epoch = rep->cepoch;
	}
	return rep->kg_gen;
}

#define RHOT_NOMAP UINT32_MAX /* rhot.rent of an address outside every map: no rent */

static inline size_t pk_rep_rhot_slot(uint64_t gen, uint64_t ip, uint8_t cm)
{
	return (size_t)(((ip ^ gen << 40 ^ gen >> 24 ^ (uint64_t)cm << 56) *
			 0x9e3779b97f4a7c15ULL) >> (64 - RHOT_BITS));
}

static inline __attribute__((always_inline)) int
pk_rep_resolve(struct pk_report *rep, uint32_t pid, uint32_t tid, uint64_t gen,
			  uint64_t ip, uint8_t cm, struct rent **out, uint32_t *fid)
{
	if (cm == PK_CPUMODE_KERNEL) {
		/* a kernel address resolves the same in every process (only the kernel's
		 * maps are searched): one entry for all, under the kernel's generation. A
		 * system-wide recording of a compile had 2370 processes, and the kernel's
		 * frames in most of their call chains; keyed by process, each of those was
		 * resolved again in each */
		pid = 0;
		gen = pk_rep_kgen_of(rep);
	}
	if (cm == PK_CPUMODE_USER && pk_gapcache__hit(&rep->gaps, pid, gen, ip, 1)) {
		/* in the unmapped range of the last unmapped address: a garbage caller, new
		 * nearly every sample; its hot-cache slot would be a miss, and is left to
		 * the addresses that repeat */
		*out = NULL;
		return pk_rep_nomap_frame(rep, ip, cm, fid);
	}
	size_t hot = pk_rep_rhot_slot(gen, ip, cm);
	if (rep->rhot) {
		const struct rhot *c = &rep->rhot[hot];
		if (c->rent && c->ip == ip && c->gen == gen && c->cm == cm) {
			*out = c->rent == RHOT_NOMAP ? NULL : &rep->rents[c->rent - 1];
			*fid = c->frame;
			return 0;
		}
	}
	return pk_rep_resolve_slow(rep, pid, tid, gen, ip, cm, hot, out, fid);
}


#endif
