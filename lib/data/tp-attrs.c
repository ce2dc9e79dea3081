/* SPDX-License-Identifier: MIT */
/* lib/data/tp-attrs.c - per-attr tracepoint info of a recording (see tp-attrs.h). */
#include <stdlib.h>
#include <string.h>
#include "tp-attrs.h"

const struct pk_tracing_event *pk_tp_attrs__format(struct pk_tp_attrs *c, uint64_t id)
{
	if (!c->td_tried) {
		size_t len;
		const void *blob = pk_data_reader__tracing_data(c->r, &len);
		c->td_tried = true;
		if (blob)
			c->td = pk_tracing_data__parse(blob, len);
	}
	return c->td ? pk_tracing_data__find_id(c->td, (long long)id) : NULL;
}

void *pk_tp_attrs__slot(struct pk_tp_attrs *c, const struct pk_data_attr *a, size_t slot_sz,
			bool *fresh)
{
	*fresh = false;
	if (!a || a->idx < 0)
		return NULL;
	size_t idx = (size_t)a->idx;
	if (idx >= c->nr) {
		char *n = realloc(c->slots, (idx + 1) * slot_sz);
		if (!n)
			return NULL;
		memset(n + c->nr * slot_sz, 0, (idx + 1 - c->nr) * slot_sz);
		c->slots = n;
		c->nr = idx + 1;
	}
	void *slot = (char *)c->slots + idx * slot_sz;
	const struct pk_data_attr **first = slot;
	if (*first != a) {
		*first = a;
		*fresh = true;
	}
	return slot;
}

void pk_tp_attrs__exit(struct pk_tp_attrs *c)
{
	pk_tracing_data__free(c->td);
	free(c->slots);
	c->td = NULL;
	c->slots = NULL;
	c->nr = 0;
	c->td_tried = false;
}
