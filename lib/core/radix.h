/* SPDX-License-Identifier: MIT */
/*
 * lib/core/radix.h - internal: a stable LSD radix sort of an array of structs by a u64
 * member, byte by byte, skipping the bytes in which every key is the same (the keys of
 * one object's symbols share their high bytes). PK_DEFINE_RADIX_SORT(name, type, key)
 * defines
 *     static void name(type *v, type *tmp, size_t n)
 * sorting v[0..n) by v[i].key with tmp[n] of scratch room, the element copies typed (no
 * memcpy of a size known only at run time).
 */
#ifndef PK_CORE_RADIX_H
#define PK_CORE_RADIX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PK_DEFINE_RADIX_SORT(name, type, key)                                       \
	static void name(type *v, type *tmp, size_t n)                                  \
	{                                                                               \
		uint64_t diff = 0; /* the bits where keys differ */                         \
		for (size_t i = 1; i < n; i++)                                              \
			diff |= v[i].key ^ v[0].key;                                            \
		type *src = v, *dst = tmp;                                                  \
		for (int b = 0; b < 8; b++) {                                               \
			if (!((diff >> (8 * b)) & 0xff))                                        \
				continue; /* every key has this byte */                             \
			size_t cnt[256] = { 0 }, pos = 0;                                       \
			for (size_t i = 0; i < n; i++)                                          \
				cnt[(src[i].key >> (8 * b)) & 0xff]++;                              \
			for (int d = 0; d < 256; d++) {                                         \
				size_t c = cnt[d];                                                  \
				cnt[d] = pos;                                                       \
				pos += c;                                                           \
			}                                                                       \
			for (size_t i = 0; i < n; i++)                                          \
				dst[cnt[(src[i].key >> (8 * b)) & 0xff]++] = src[i];                \
			type *t = src;                                                          \
			src = dst;                                                              \
			dst = t;                                                                \
		}                                                                           \
		if (src != v)                                                               \
			memcpy(v, src, n * sizeof(*v));                                         \
	}

#endif
