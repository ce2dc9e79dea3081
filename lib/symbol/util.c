/* SPDX-License-Identifier: MIT */
/* lib/symbol/util.c - the small containers of the symbol area: a string arena. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "symbol-internal.h"

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
