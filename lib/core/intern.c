/* SPDX-License-Identifier: MIT */
/* lib/core/intern.c - growable arrays, the open-addressing index and string interning
 * (intern.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"
#include "core/intern.h"

/* ---- growable arrays ---- */

/*
 * Arrays of PK_BIG_MIN bytes or more live in their own anonymous mapping: doubling one is an
 * mremap (no copy, and the pages already touched stay), and they may get huge pages
 * (pk_thp_hint: only on request, see there). Whether
 * an array is mapped follows from its size in bytes, so every array managed here is
 * allocated, grown and freed only through these helpers.
 */

static size_t big_len(size_t bytes)
{
	return (bytes + 4095) & ~(size_t)4095;
}

static void *big_map(size_t bytes)
{
	void *p = mmap(NULL, big_len(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	pk_thp_hint(p, big_len(bytes));
	pk_mem_prefault(p, big_len(bytes));
	return p;
}

void pk_arr_free(void *p, size_t bytes)
{
	if (!p)
		return;
	if (bytes >= PK_BIG_MIN)
		munmap(p, big_len(bytes));
	else
		free(p);
}

/* zeroed */
void *pk_arr_calloc(size_t bytes)
{
	return bytes >= PK_BIG_MIN ? big_map(bytes) : calloc(1, bytes);
}

/* old -> nbytes (> old); NULL (p unchanged) on failure */
void *pk_arr_resize(void *p, size_t old, size_t nbytes)
{
	if (nbytes < PK_BIG_MIN) {
		uint8_t *n = realloc(p, nbytes);
		if (n)
			pk_mem_prefault(n + old, nbytes - old);
		return n;
	}
	if (p && old >= PK_BIG_MIN) {
		void *n = mremap(p, big_len(old), big_len(nbytes), MREMAP_MAYMOVE);
		if (n == MAP_FAILED)
			return NULL;
		pk_thp_hint(n, big_len(nbytes));
		pk_mem_prefault((uint8_t *)n + big_len(old), big_len(nbytes) - big_len(old));
		return n;
	}
	void *n = big_map(nbytes);
	if (!n)
		return NULL;
	if (p)
		memcpy(n, p, old);
	free(p);
	return n;
}

int pk_grow_slow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t nc = *cap ? *cap : 64;
	/* doubling up to 8 MiB, then a quarter more each time: a big array lives in its
	 * own mapping, grown in place by mremap without a copy, and each growth is
	 * populated at once (pk_mem_prefault): the pages a doubling populated beyond what
	 * is used were zeroed by the kernel for nothing (a system-wide recording's
	 * --children report: 2.7M call-chain nodes in room for 4.2M, 45 MB of zeroing of
	 * 128, in a guest where zeroing runs at ~1.5 GB/s) */
	while (nc < need)
		nc = nc * elem >= ((size_t)8 << 20) ? nc + nc / 4 : nc * 2;
	void *n = pk_arr_resize(*p, *cap * elem, nc * elem);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = nc;
	return 0;
}

/*
 * ---- open-addressing index ----
 * A slot is one 64-bit word: the high half is a tag (the high half of the key's hash,
 * whose low bits also give the home slot), the low half the entry's index + 1 (0 =
 * empty). A probe reads one word; the entry itself is compared only when the tag matches.
 */



void pk_index_release(struct pk_index *x)
{
	if (x->slot)
		pk_arr_free(x->slot, (x->mask + 1) * sizeof(*x->slot));
	memset(x, 0, sizeof(*x));
}

void pk_ix_insert(uint64_t *s, size_t mask, uint64_t v)
{
	size_t j = PK_IX_TAG(v) & mask;
	while (s[j])
		j = (j + 1) & mask;
	s[j] = v;
}

/* room for one more entry (the table is at most 3/4 full) */
int pk_index_grow(struct pk_index *x)
{
	if (x->slot && (x->n + 1) * 4 < (x->mask + 1) * 3)
		return 0;
	size_t ns = x->slot ? (x->mask + 1) * 2 : 1024;
	size_t n = x->n;
	uint64_t *s = pk_arr_calloc(ns * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; x->slot && i <= x->mask; i++)
		if (x->slot[i])
			pk_ix_insert(s, ns - 1, x->slot[i]);
	pk_index_release(x);
	x->slot = s;
	x->mask = ns - 1;
	x->n = n;
	return 0;
}

/* Put id with hash h into an index that has room (index_grow first). */
void pk_index_put(struct pk_index *x, uint64_t h, uint32_t id)
{
	pk_ix_insert(x->slot, x->mask, (h & ~(uint64_t)UINT32_MAX) | ((uint64_t)id + 1));
	x->n++;
}

/* ---- string interning ---- */

uint64_t pk_str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return pk_mix64(h);
}

/* id >= 1; 0 is reserved for "none" */
int pk_str_intern(struct pk_strtab *t, const char *s, uint32_t *id)
{
	uint64_t h = pk_str_hash(s);
	if (t->idx.slot) {
		PK_IX_FOR(&t->idx, h, j) {
			if (!strcmp(t->str[PK_IX_ID(t->idx.slot[j])], s)) {
				*id = PK_IX_ID(t->idx.slot[j]);
				return 0;
			}
		}
	}
	if (!t->nr)
		t->nr = 1; /* index 0 unused */
	if (pk_index_grow(&t->idx) || pk_grow((void **)&t->str, &t->cap, t->nr + 1, sizeof(char *)))
		return -ENOMEM;
	char *c = strdup(s);
	if (!c)
		return -ENOMEM;
	uint32_t nid = (uint32_t)t->nr++;
	t->str[nid] = c;
	pk_index_put(&t->idx, h, nid);
	*id = nid;
	return 0;
}


void pk_str_release(struct pk_strtab *t)
{
	for (size_t i = 1; i < t->nr; i++)
		free(t->str[i]);
	pk_arr_free(t->str, t->cap * sizeof(*t->str));
	pk_index_release(&t->idx);
}

/* ---- u64 -> pointer map ---- */

static inline size_t pk_u64_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k;
}

void *pk_u64map_get(const struct pk_u64map *h, uint64_t key)
{
	if (!h->cap)
		return NULL;
	size_t mask = h->cap - 1;
	for (size_t i = pk_u64_hash(key) & mask;; i = (i + 1) & mask) {
		if (!h->vals[i])
			return NULL;
		if (h->keys[i] == key)
			return h->vals[i];
	}
}

static int pk_u64map_grow(struct pk_u64map *h)
{
	size_t ncap = h->cap ? h->cap * 2 : 64;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	void **nv = calloc(ncap, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->cap; i++) {
		if (!h->vals[i])
			continue;
		size_t j = pk_u64_hash(h->keys[i]) & (ncap - 1);
		while (nv[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = h->keys[i];
		nv[j] = h->vals[i];
	}
	free(h->keys);
	free(h->vals);
	h->keys = nk;
	h->vals = nv;
	h->cap = ncap;
	return 0;
}

int pk_u64map_put(struct pk_u64map *h, uint64_t key, void *val)
{
	if (!val)
		return -EINVAL;
	if ((h->nr + 1) * 4 >= h->cap * 3 && pk_u64map_grow(h))
		return -ENOMEM;
	size_t mask = h->cap - 1;
	size_t i = pk_u64_hash(key) & mask;
	while (h->vals[i] && h->keys[i] != key)
		i = (i + 1) & mask;
	if (!h->vals[i])
		h->nr++;
	h->keys[i] = key;
	h->vals[i] = val;
	return 0;
}

void pk_u64map_release(struct pk_u64map *h)
{
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}
