/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/syms.c - sorted symbol tables (a DSO's, the kernel's): ordering the names
 * of one address by perf's rules, sizing zero-sized symbols, and address look-up.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "symbol-internal.h"
#include "core/radix.h"

/*
 * a is a better name than b for the same address, by perf's rules: a symbol with a size
 * over a zero-sized one, non-weak over weak, global over local, fewer leading
 * underscores, the longer name; on a tie the one that came first.
 */
int pk_sym_rank(bool sized_a, unsigned bind_a, const char *name_a, bool sized_b,
		unsigned bind_b, const char *name_b)
{
	if (sized_a != sized_b)
		return sized_a ? 1 : -1;
	bool wa = bind_a == STB_WEAK, wb = bind_b == STB_WEAK;
	if (wa != wb)
		return wb ? 1 : -1;
	bool ga = bind_a == STB_GLOBAL, gb = bind_b == STB_GLOBAL;
	if (ga != gb)
		return ga ? 1 : -1;
	size_t ua = strspn(name_a, "_"), ub = strspn(name_b, "_");
	if (ua != ub)
		return ua < ub ? 1 : -1;
	size_t la = strlen(name_a), lb = strlen(name_b);
	return la != lb ? (la > lb ? 1 : -1) : 0;
}

bool pk_elf_rel_info(Elf_Data *d, bool rela, size_t i, uint64_t *info)
{
	if (i > INT32_MAX)
		return false;
	if (rela) {
		GElf_Rela r;
		if (!gelf_getrela(d, (int)i, &r))
			return false;
		*info = r.r_info;
	} else {
		GElf_Rel r;
		if (!gelf_getrel(d, (int)i, &r))
			return false;
		*info = r.r_info;
	}
	return true;
}

static bool pk_sym_better(const struct pk_sym *a, const struct pk_sym *b)
{
	int r = pk_sym_rank(a->end > a->start, a->bind, a->name, b->end > b->start, b->bind,
			    b->name);
	return r ? r > 0 : a->seq < b->seq;
}

/* by address, the best alias first */
static int pk_sym_cmp(const void *pa, const void *pb)
{
	const struct pk_sym *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a == b)
		return 0;
	return pk_sym_better(a, b) ? -1 : 1;
}

/* by address, the last alias first: /proc/kallsyms has no sizes, and perf gives the
 * last of the names at one address the size up to the next symbol, so it wins */
static int pk_ksym_cmp(const void *pa, const void *pb)
{
	const struct pk_sym *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->seq < b->seq) - (a->seq > b->seq);
}

/*
 * syms[0 .. nr) by start, equal starts kept in their order (a radix sort by bytes,
 * skipping the bytes every start shares: the symbol tables of a system-wide recording's
 * DSOs took 5 % of its report through qsort). Without memory for the copy, qsort, which
 * is glibc's merge sort (stable) then too.
 */
static int pk_sym_start_cmp(const void *pa, const void *pb)
{
	const struct pk_sym *a = pa, *b = pb;
	return (a->start > b->start) - (a->start < b->start);
}

PK_DEFINE_RADIX_SORT(sym_radix, struct pk_sym, start)

void pk_syms_sort_start(struct pk_sym *syms, size_t nr)
{
	struct pk_sym *tmp = nr >= 64 ? malloc(nr * sizeof(*tmp)) : NULL;
	if (!tmp) {
		if (nr > 1)
			qsort(syms, nr, sizeof(*syms), pk_sym_start_cmp);
		return;
	}
	sym_radix(syms, tmp, nr);
	free(tmp);
}

size_t pk_syms_finish(struct pk_sym *syms, size_t nr, bool kallsyms)
{
	if (!nr)
		return 0;
	int (*cmp)(const void *, const void *) = kallsyms ? pk_ksym_cmp : pk_sym_cmp;
	for (size_t i = 0; i < nr; i++)
		syms[i].seq = (uint32_t)i;
	/* kallsyms arrives sorted by address: then only the aliases of one address need
	 * ordering */
	size_t i0 = 1;
	while (i0 < nr && syms[i0 - 1].start <= syms[i0].start)
		i0++;
	if (i0 < nr)
		pk_syms_sort_start(syms, nr);
	/* then the names of one address, best (or last) first */
	for (size_t a = 0, b; a < nr; a = b) {
		for (b = a + 1; b < nr && syms[b].start == syms[a].start; b++)
			;
		if (b - a > 1)
			qsort(syms + a, b - a, sizeof(*syms), cmp);
	}
	size_t o = 0;
	for (size_t i = 0; i < nr; i++) {
		if (o && syms[o - 1].start == syms[i].start) {
			/* an alias: keep the first (best) name, the larger size */
			if (syms[i].end > syms[o - 1].end)
				syms[o - 1].end = syms[i].end;
			continue;
		}
		syms[o++] = syms[i];
	}
	/* zero-sized symbols extend to the next symbol (capped at a page) */
	for (size_t i = 0; i < o; i++) {
		if (syms[i].end > syms[i].start)
			continue;
		uint64_t next = i + 1 < o ? syms[i + 1].start : syms[i].start + 4096;
		if (next - syms[i].start > 4096 && i + 1 == o)
			next = syms[i].start + 4096;
		syms[i].end = next > syms[i].start ? next : syms[i].start + 1;
	}
	return o;
}

const struct pk_sym *pk_syms_find(const struct pk_sym *syms, size_t nr, uint64_t addr)
{
	/* the last symbol with start <= addr */
	size_t lo = PK_UPPER_BOUND(nr, syms[mid].start <= addr);
	if (!lo)
		return NULL;
	const struct pk_sym *s = &syms[lo - 1];
	return addr < s->end ? s : NULL;
}
