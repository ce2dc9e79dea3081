/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/order.h - a radix sort of (key, index) pairs (order.c): the order in
 * which annotate resolves its sampled addresses after the read. Internal.
 */
#ifndef PK_ANNOTATE_ORDER_H
#define PK_ANNOTATE_ORDER_H

#include <stddef.h>
#include <stdint.h>

struct pk_ann_kv {
	uint64_t key;
	uint32_t idx;
};

/* sort kv[0 .. n) by key, stable (equal keys keep their order), tmp[0 .. n) its
 * scratch: 0 or -ENOMEM */
int pk_ann_kv_sort(struct pk_ann_kv *kv, struct pk_ann_kv *tmp, size_t n);

#endif
