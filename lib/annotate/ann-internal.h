/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/ann-internal.h - the state of an annotate load (annotate.c): its tables of
 * symbols, raw addresses, objects and the memo of resolved addresses. Internal.
 */
#ifndef PK_ANNOTATE_ANN_INTERNAL_H
#define PK_ANNOTATE_ANN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/annotate.h>
#include <perfkit/session.h>
#include "internal.h"
#include "core/intern.h"
#include "annotate/disasm.h"
#include "annotate/kcode.h"
#include "annotate/kmod.h"

/* a symbol larger than this is not disassembled (no function is; a corrupt size is) */
#define ANN_MAX_SYM_BYTES (16u << 20)

struct ann_sym {
	struct pk_dso *dso;
	const char *dso_name, *name;
	uint64_t start, size, samples, period;
	bool kernel;
	struct ann_hit *hits;   /* sorted by address once disassembled (hits_sorted) */
	size_t nr_hits, cap_hits;
	bool hits_sorted;
};

/* the samples at one address of one object, before its symbol is looked up: key is the
 * DSO address, or for an ELF file the file offset (its translation loads the file) */
struct ann_raw {
	struct pk_dso *dso;
	const char *dso_name;
	uint64_t key, samples, period;
	bool is_offset, kernel;
};

/* an object with samples, while the file is read: its period so far, and whether its
 * symbol table was asked for ahead (preload) */
struct ann_obj {
	struct pk_dso *dso;
	uint64_t period;
	bool queued;
};
/* the objects' shares are looked at every this many samples, and before at 1 Ki, 2 Ki
 * and 4 Ki samples (a small file's objects are asked for early enough to be read by
 * the end of the file: dwarf.data has 15 k samples) */
#define ANN_PRELOAD_EVERY ((uint64_t)1 << 13)
#define ANN_PRELOAD_FIRST ((uint64_t)1 << 10)

/* (maps generation, cpumode, address) -> what a sample there counts for: the memo that
 * spares the samples of an address seen before their resolution (pk_machine__maps_gen:
 * one generation resolves an address alike). 32-byte slots, two to a cache line (with
 * 48 bytes, half the slots straddled two lines, a second miss on the system-wide file
 * where more than half of the samples find another address in their slot): 512 KiB, it
 * stays in a core's L2 cache. */
#define ANN_MEMO_SLOTS ((size_t)1 << 14)
enum { MEMO_EMPTY, MEMO_HIT, MEMO_UNRES };
/* tag: the samples counted (MEMO_N bits), the cpumode (3 bits), the kind (2 bits) */
#define MEMO_N_BITS 24u
#define MEMO_N_MAX ((1u << MEMO_N_BITS) - 1)
#define MEMO_MODE_SHIFT MEMO_N_BITS
#define MEMO_KIND_SHIFT (MEMO_N_BITS + 3u)
/* ann_memo.sym of a MEMO_HIT slot whose raws index is not looked up yet: this bit and
 * its pend index */
#define MEMO_PENDING (1u << 31)
struct ann_memo {
	uint64_t gen, ip;
	uint32_t sym;           /* MEMO_HIT: raws[sym]; MEMO_UNRES: unres[sym] */
	uint32_t obj;           /* MEMO_HIT: the objs index of the address (preload) */
	/* MEMO_HIT: the samples (tag's low bits) and period counted here and not yet in
	 * raws[sym] (added when the slot is taken by another address, when a count would
	 * overflow, and at the end: raws is too big to stay in a cache, its line was a
	 * miss per sample, 60 % of on_raw on the system-wide file) */
	uint32_t period;
	uint32_t tag;
};
_Static_assert(sizeof(struct ann_memo) == 32, "two memo slots to a cache line");

static inline unsigned memo_kind(const struct ann_memo *e)
{
	return e->tag >> MEMO_KIND_SHIFT;
}

static inline uint32_t memo_n(const struct ann_memo *e)
{
	return e->tag & MEMO_N_MAX;
}

/* the slot holds (gen, ip, cpumode) */
static inline bool memo_holds(const struct ann_memo *e, uint64_t gen, uint64_t ip,
			      uint8_t cpumode)
{
	return e->ip == ip && e->gen == gen && memo_kind(e) != MEMO_EMPTY &&
	       ((e->tag >> MEMO_MODE_SHIFT) & 7u) == cpumode;
}

/* (object, dso address) -> raws index + 1 (0: empty): 16 bytes a slot, the objects
 * numbered (objs), so that the table of a system-wide file's 68 k addresses is 2 MB
 * rather than 4: every new (process, address) looks it up, a cache miss each */
struct ann_rslot {
	uint64_t addr;
	uint32_t obj, raw1;
};

/* (dso, symbol start) -> symbol: one open-addressing table */
struct ann_slot {
	const struct pk_dso *dso;
	uint64_t addr;
	uint32_t sym, hit;
	bool used;
};

struct pk_annotate {
	struct pk_session *ses;
	struct pk_machine *m;
	char event[64];
	bool intel;
	bool *attr_ok;
	size_t nr_attrs;
	struct ann_sym *syms;
	size_t nr_syms, cap_syms;
	/* the symbol ann_add found last */
	bool last_sym_ok;
	const struct pk_dso *last_sym_dso;
	uint64_t last_sym_start;
	uint32_t last_sym;
	/* (dso, symbol start) -> symbol index, with the same table layout */
	struct ann_slot *sslots;
	size_t smask, nr_sslots_used;
	struct pk_annotate_stats st;
	double min_percent;
	/* (dso, key) -> raws index (the table's sym field) */
	struct ann_raw *raws;
	size_t nr_raws, cap_raws;
	struct ann_rslot *rslots;
	size_t rmask;
	/* samples without a symbol, per object their address fell in (NULL: in none) */
	struct ann_unres { const char *dso_name; uint64_t samples; } *unres;
	size_t nr_unres, cap_unres;
	struct pk_u64map unres_of;      /* dso pointer -> index + 1 into unres */
	struct ann_memo *memo;  /* ANN_MEMO_SLOTS */
	/* the counts of evicted memo slots on their way to raws: each waits for
	 * ANN_SETTLE_LAG more evictions, its raws line fetched meanwhile */
	struct ann_settle { uint32_t sym, n; uint64_t period; } settle[8];
	unsigned settle_at;
	/* new addresses whose raws entry is looked up ANN_PEND misses later (their
	 * (object, address) slot's line prefetched meanwhile), first in first out */
	struct ann_pend {
		struct ann_memo *e;     /* the memo slot waiting for the index */
		const struct pk_dso *dso;
		const char *dso_name;
		uint64_t addr;
		uint32_t obj;
		bool is_off, kernel;
	} pend[8];
	unsigned pend_head, pend_nr;
	/* memo_fill: the map of the last new address resolved in kernel mode / another mode,
	 * for the next new one in it with the same generation (a new address of a known map
	 * then skips the thread's and the map's look-ups) */
	struct ann_mapc {
		uint64_t gen, start, end, pgoff;
		struct pk_dso *dso;
		const char *dso_name;
		uint8_t cpumode;
		bool ok, kernel, is_off;
	} mapc[2];
	/* the objects with samples (obj_of: dso pointer -> index + 1; the last one found);
	 * preload: their tables are asked for ahead (opts.reader_thread: threads; preload
	 * is only while the file is read) */
	bool preload, threads;
	struct ann_obj *objs;
	size_t nr_objs, cap_objs;
	struct pk_u64map obj_of;
	const struct pk_dso *last_obj_dso;
	uint32_t last_obj;
	/* the maps generation of the last sample's thread and mode, until the next record
	 * that is not a sample (only such records change the machine) */
	bool gen_ok;
	uint32_t gen_pid, gen_tid;
	uint8_t gen_mode;
	uint64_t gen;
	/* on_raw: the attr whose field places follow (raw_layout) */
	const struct pk_data_attr *ra;
	int r_ip, r_tid, r_period;
	uint64_t r_dflt_period;
	/* kernel code (kcode.c): chosen at the first kernel symbol disassembled */
	struct pk_kcode *kc;
	struct pk_kmods *kmods; /* modules' code (kmod.c), each chosen at its first symbol */
	char *vmlinux, *kcore;
	bool kcore_set;
};

#endif
