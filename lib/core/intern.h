/* SPDX-License-Identifier: MIT */
/*
 * lib/core/intern.h - internal: the containers the analyses share (report's aggregation,
 * later the exporters): growable arrays that move to their own mapping when big, an
 * open-addressing index of 64-bit slots, string interning to small integers, and a
 * u64 -> pointer map (threads, DSO caches, the reader's sample ids).
 */
#ifndef PK_CORE_INTERN_H
#define PK_CORE_INTERN_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t pk_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* ---- growable arrays (allocated, grown and freed only through these: an array of
 * PK_BIG_MIN bytes or more lives in its own mapping) ---- */
#define PK_BIG_MIN ((size_t)256 << 10)
void pk_arr_free(void *p, size_t bytes);
void *pk_arr_calloc(size_t bytes);                        /* zeroed */
void *pk_arr_resize(void *p, size_t old, size_t nbytes);  /* NULL (p unchanged) on failure */
int pk_grow_slow(void **p, size_t *cap, size_t need, size_t elem);
/* room for `need` elements of `elem` bytes in *p (capacity *cap): 0 or -ENOMEM */
static inline int pk_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	return need <= *cap ? 0 : pk_grow_slow(p, cap, need, elem);
}

/*
 * ---- open-addressing index ----
 * A slot is one 64-bit word: the high half is a tag (the high half of the key's hash,
 * whose low bits also give the home slot), the low half the entry's index + 1 (0 =
 * empty). A probe reads one word; the entry itself is compared only when the tag matches.
 */
struct pk_index {
	uint64_t *slot;
	size_t mask, n;
};
#define PK_IX_TAG(v) ((uint32_t)((v) >> 32))
#define PK_IX_ID(v) ((uint32_t)(v) - 1u)
/* for (j over the probe sequence of hash h) if (the tag of slot j is h's) body */
#define PK_IX_FOR(x, h, j)                                                                  \
	for (size_t j = (size_t)((h) >> 32) & (x)->mask; (x)->slot[j]; j = (j + 1) & (x)->mask) \
		if (PK_IX_TAG((x)->slot[j]) == (uint32_t)((h) >> 32))
void pk_index_release(struct pk_index *x);
void pk_ix_insert(uint64_t *s, size_t mask, uint64_t v);
/* room for one more entry (the table is at most 3/4 full): 0 or -ENOMEM */
int pk_index_grow(struct pk_index *x);
/* Put id with hash h into an index that has room (pk_index_grow first). */
void pk_index_put(struct pk_index *x, uint64_t h, uint32_t id);

/* ---- string interning: id >= 1 per distinct string, 0 reserved for "none" ---- */
struct pk_strtab {
	struct pk_index idx;
	char **str;
	size_t nr, cap;
};
uint64_t pk_str_hash(const char *s);
int pk_str_intern(struct pk_strtab *t, const char *s, uint32_t *id);
void pk_str_release(struct pk_strtab *t);
static inline const char *pk_str_get(const struct pk_strtab *t, uint32_t id)
{
	return id && id < t->nr ? t->str[id] : NULL;
}

/* ---- small u64 -> pointer hash (open addressing, linear probing) ---- */
struct pk_u64map {
	uint64_t *keys;
	void **vals;            /* NULL = empty slot */
	size_t cap, nr;
};
void *pk_u64map_get(const struct pk_u64map *h, uint64_t key);
int pk_u64map_put(struct pk_u64map *h, uint64_t key, void *val);   /* replaces */
void pk_u64map_release(struct pk_u64map *h);

#endif
