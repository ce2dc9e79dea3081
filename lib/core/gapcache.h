/* SPDX-License-Identifier: MIT */
/*
 * lib/core/gapcache.h - internal: the last ranges of user addresses that no map of a
 * process covers, per process, under a map generation. The garbage callers of call
 * chains walked through code without frame pointers fall there, nearly each one a new
 * address: an address in a known range is known to be unmapped without a look at the
 * maps, nor a slot of an address cache that is better left to the addresses that
 * repeat. A few slots by pid (two processes sampled in turn, as in the bench's fp file,
 * replaced each other's range in a single one), up to four ranges each, replaced in turn (a
 * process's garbage alternates between the range below its executable and the one above
 * its stack: sys.data had 90k addresses resolved for nothing, in 6k ranges, with one).
 * Header-only (no state outside the caller's struct, nothing exported): the report's
 * resolution (lib/report/resolve.c) and `perfkit script`'s frame cache
 * (tool/script-frames.c) use it.
 */
#ifndef PK_CORE_GAPCACHE_H
#define PK_CORE_GAPCACHE_H

#include <stdbool.h>
#include <stdint.h>

#define PK_GAP_SLOTS 8          /* by pid */
#define PK_GAP_WAYS 4           /* ranges per slot */

struct pk_gapcache {
	struct pk_gap { uint64_t lo, hi, gen; uint32_t pid; bool valid; }
		gap[PK_GAP_SLOTS][PK_GAP_WAYS];
	uint8_t next[PK_GAP_SLOTS];     /* the way each slot replaces next */
};

static inline unsigned pk_gapcache__slot(uint32_t pid)
{
	return (pid * 0x9e3779b1u) >> 29;
}

/* whether ip is in a range of process pid known unmapped under map generation gen,
 * among the first `ways` (1..PK_GAP_WAYS, a constant: the loop unrolls) of its slot. The
 * report's resolution asks before every user frame and keeps one way (four cost deep.data
 * 9 % of the report: two cache lines and four range checks per frame, for ranges that
 * its addresses seldom need); script's frame cache, asked once per new frame, keeps
 * four. Pass the same `ways` to pk_gapcache__put. */
static inline __attribute__((always_inline)) bool
pk_gapcache__hit(const struct pk_gapcache *gc, uint32_t pid, uint64_t gen, uint64_t ip,
		 int ways)
{
	const struct pk_gap *g = gc->gap[pk_gapcache__slot(pid)];
	for (int k = 0; k < ways && k < PK_GAP_WAYS; k++)
		if (ip >= g[k].lo && ip < g[k].hi && g[k].valid && g[k].pid == pid &&
		    g[k].gen == gen)
			return true;
	return false;
}

/* note [lo, hi) as unmapped in process pid under generation gen (an empty range: no-op) */
static inline void pk_gapcache__put(struct pk_gapcache *gc, uint32_t pid, uint64_t gen,
				    uint64_t lo, uint64_t hi, int ways)
{
	if (hi <= lo || ways < 1 || ways > PK_GAP_WAYS)
		return;
	unsigned s = pk_gapcache__slot(pid);
	gc->gap[s][gc->next[s]++ % (unsigned)ways] =
		(struct pk_gap){ .lo = lo, .hi = hi, .gen = gen, .pid = pid, .valid = true };
}

#endif
