/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/order.c - a least-significant-digit radix sort of (key, index) pairs,
 * a byte a pass, the passes whose byte is the same in every key left out (a sort with
 * a comparison function was as slow as the look-ups it was to make local).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "annotate/order.h"

int pk_ann_kv_sort(struct pk_ann_kv *kv, struct pk_ann_kv *tmp, size_t n)
{
	if (n < 2)
		return 0;
	size_t (*cnt)[256] = calloc(8, sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (unsigned b = 0; b < 8; b++)
			cnt[b][(kv[i].key >> (8 * b)) & 0xff]++;
	struct pk_ann_kv *src = kv, *dst = tmp;
	for (unsigned b = 0; b < 8; b++) {
		size_t *c = cnt[b];
		if (c[(src[0].key >> (8 * b)) & 0xff] == n)
			continue; /* every key has this byte */
		size_t at = 0;
		for (unsigned v = 0; v < 256; v++) {
			size_t k = c[v];
			c[v] = at;
			at += k;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i].key >> (8 * b)) & 0xff]++] = src[i];
		struct pk_ann_kv *t = src;
		src = dst;
		dst = t;
	}
	if (src != kv)
		memcpy(kv, src, n * sizeof(*kv));
	free(cnt);
	return 0;
}
