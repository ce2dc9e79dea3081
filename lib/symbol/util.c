/* SPDX-License-Identifier: MIT */
/* lib/symbol/util.c - the small containers of the symbol area: a u64 -> pointer hash and
 * a string arena. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "symbol-internal.h"

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

struct pk_arena_chunk {
	struct pk_arena_chunk *next;
	size_t used, cap;
	_Alignas(8) unsigned char data[];
};

void *pk_arena_alloc(struct pk_arena *a, size_t len)
{
	len = (len + 7) & ~(size_t)7;
	struct pk_arena_chunk *c = a->head;
	if (!c || c->cap - c->used < len) {
		size_t cap = len > 32768 ? len : 32768;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += len;
	memset(p, 0, len);
	return p;
}

char *pk_arena_strdup(struct pk_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = pk_arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

void pk_arena_release(struct pk_arena *a)
{
	struct pk_arena_chunk *c = a->head;
	while (c) {
		struct pk_arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	a->head = NULL;
}
