// SPDX-License-Identifier: MIT
/*
 * Per-counter deltas of PERF_SAMPLE_READ values. A sample that reads its counter (or its
 * whole group, with PERF_FORMAT_GROUP) carries running totals; the period a tool charges
 * to each counter is the total minus the total seen in that counter's previous sample. The
 * counters are told apart by their sample id, which the kernel gives every fd (so one per
 * event, thread and CPU). The table is an open-addressing hash of id -> last total.
 */
#include "internal.h"

#include <perfkit/record.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IDS (1u << 22)

struct slot {
	uint64_t id;
	uint64_t last;
	bool used;
};

struct pk_read_delta {
	struct slot *v;
	size_t cap, nr; /* cap: 0 or a power of two */
};

PK_API struct pk_read_delta *pk_read_delta__new(void)
{
	struct pk_read_delta *d = calloc(1, sizeof(*d));
	if (!d)
		errno = ENOMEM;
	return d;
}

PK_API void pk_read_delta__free(struct pk_read_delta *d)
{
	if (!d)
		return;
	free(d->v);
	free(d);
}

static size_t hash(uint64_t id, size_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return (size_t)id & (cap - 1);
}

static struct slot *find(struct slot *v, size_t cap, uint64_t id)
{
	size_t i = hash(id, cap);
	while (v[i].used && v[i].id != id)
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static int grow(struct pk_read_delta *d)
{
	size_t cap = d->cap ? d->cap * 2 : 64;
	struct slot *v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < d->cap; i++)
		if (d->v[i].used)
			*find(v, cap, d->v[i].id) = d->v[i];
	free(d->v);
	d->v = v;
	d->cap = cap;
	return 0;
}

PK_API int pk_read_delta__update(struct pk_read_delta *d, uint64_t id, uint64_t value,
				 uint64_t *delta)
{
	if (!d || !delta)
		return pk_err(-EINVAL);
	if (d->cap) {
		struct slot *s = find(d->v, d->cap, id);
		if (s->used) {
			*delta = value - s->last; /* modulo 2^64, as the counter itself wraps */
			s->last = value;
			return 0;
		}
	}
	if (d->nr >= MAX_IDS)
		return pk_err(-E2BIG);
	if ((d->nr + 1) * 2 > d->cap) {
		int err = grow(d);
		if (err)
			return pk_err(err);
	}
	struct slot *s = find(d->v, d->cap, id);
	s->used = true;
	s->id = id;
	s->last = value;
	d->nr++;
	*delta = value;
	return 0;
}
