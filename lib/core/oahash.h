/* SPDX-License-Identifier: MIT */
/*
 * lib/core/oahash.h - internal: growing an open-addressing hash table (linear probing,
 * power-of-two capacity) whose entries are stored in place and whose all-zero entry is
 * an empty slot. PK_DEFINE_OA_REHASH(name, type, is_empty, slot) defines
 *     static type *name(const type *old, size_t cap, size_t ncap)
 * returning a new zeroed table of ncap slots holding the entries of old[0..cap) (NULL when
 * out of memory; the caller frees old and keeps its count). is_empty(const type *) tells
 * an empty slot, slot(const type *, size_t cap) an entry's home slot; the entry copies
 * are typed.
 *
 * An index table instead holds in each slot 1 + the index of its entry in a dense array
 * (0: empty). PK_DEFINE_OA_INDEX(name, type, slot) defines
 *     static uint32_t *name(const type *v, size_t n, size_t ncap)
 * returning a new index table of ncap slots for v[0..n) (n < ncap; NULL when out of
 * memory; the caller frees the old table).
 */
#ifndef PK_CORE_OAHASH_H
#define PK_CORE_OAHASH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define PK_DEFINE_OA_REHASH(name, type, is_empty, slot)                             \
	static type *name(const type *old, size_t cap, size_t ncap)                     \
	{                                                                               \
		type *n = calloc(ncap, sizeof(*n));                                         \
		if (!n)                                                                     \
			return NULL;                                                            \
		for (size_t i = 0; i < cap; i++) {                                          \
			if (is_empty(&old[i]))                                                  \
				continue;                                                           \
			size_t j = slot(&old[i], ncap);                                         \
			while (!is_empty(&n[j]))                                                \
				j = (j + 1) & (ncap - 1);                                           \
			n[j] = old[i];                                                          \
		}                                                                           \
		return n;                                                                   \
	}

#define PK_DEFINE_OA_INDEX(name, type, slot)                                        \
	static uint32_t *name(const type *v, size_t n, size_t ncap)                     \
	{                                                                               \
		uint32_t *t = calloc(ncap, sizeof(*t));                                     \
		if (!t)                                                                     \
			return NULL;                                                            \
		for (size_t i = 0; i < n; i++) {                                            \
			size_t j = slot(&v[i], ncap);                                           \
			while (t[j])                                                            \
				j = (j + 1) & (ncap - 1);                                           \
			t[j] = (uint32_t)i + 1;                                                 \
		}                                                                           \
		return t;                                                                   \
	}

#endif
