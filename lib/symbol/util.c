/* SPDX-License-Identifier: MIT */
/* lib/symbol/util.c - the small containers of the symbol area: a string arena. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "symbol-internal.h"

struct pk_arena_chunk {
	struct pk_arena_chunk *next;
	size_t used, cap;
	_Alignas(8) unsigned char data[];
};

#define PK_ARENA_CHUNK 32768

/* len bytes at the given alignment (a power of two up to 8) */
static void *pk_arena_get(struct pk_arena *a, size_t len, size_t align)
{
	struct pk_arena_chunk *c = a->head;
	size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || at > c->cap || c->cap - at < len) {
		/* chunks of a->chunk bytes (doubling up to the default from a smaller start:
		 * a packed arena, pk_arena_pack, grows by little) */
		size_t want = a->chunk ? a->chunk : PK_ARENA_CHUNK;
		size_t cap = len > want ? len : want;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = a->head;
		a->head = c;
		at = 0;
		if (a->chunk && a->chunk < PK_ARENA_CHUNK)
			a->chunk *= 2;
	}
	void *p = c->data + at;
	c->used = at + len;
	return p;
}

void *pk_arena_alloc(struct pk_arena *a, size_t len)
{
	void *p = pk_arena_get(a, (len + 7) & ~(size_t)7, 8);
	if (p)
		memset(p, 0, len);
	return p;
}

char *pk_arena_strdup(struct pk_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = pk_arena_get(a, n, 1); /* (strings need no alignment) */
	if (p)
		memcpy(p, s, n);
	return p;
}

char *pk_arena_strcat(struct pk_arena *a, const char *s, const char *t)
{
	size_t n = strlen(s), k = strlen(t) + 1;
	char *p = pk_arena_get(a, n + k, 1);
	if (p) {
		memcpy(p, s, n);
		memcpy(p + n, t, k);
	}
	return p;
}

size_t pk_arena_size(const struct pk_arena *a)
{
	size_t n = 0;
	for (const struct pk_arena_chunk *c = a->head; c; c = c->next)
		n += sizeof(*c) + c->cap;
	return n;
}

int pk_arena_pack(struct pk_arena *a, const char **strs[], size_t nr)
{
	size_t total = 0;
	for (size_t i = 0; i < nr; i++)
		total += strlen(*strs[i]) + 1;
	/* one chunk of exactly that size, then small ones for what comes later */
	struct pk_arena na = { .chunk = total ? total : 1 };
	for (size_t i = 0; i < nr; i++) {
		const char *s = pk_arena_strdup(&na, *strs[i]);
		if (!s) {
			pk_arena_release(&na);
			return -ENOMEM;
		}
		*strs[i] = s;
	}
	pk_arena_release(a);
	na.chunk = 1024;
	*a = na;
	return 0;
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
