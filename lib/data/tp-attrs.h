/* SPDX-License-Identifier: MIT */
/*
 * lib/data/tp-attrs.h - what session clients that take tracepoint fields out of
 * PERF_SAMPLE_RAW themselves (sched, trace) keep per recording: the recording's tracing
 * data, parsed on first use, and one caller-defined info slot per attr of the file (by its
 * index), classified once per attr. Internal, never installed.
 */
#ifndef PK_DATA_TP_ATTRS_H
#define PK_DATA_TP_ATTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/data.h>

struct pk_tp_attrs {
	struct pk_data_reader *r;       /* set by the caller before the first use */
	struct pk_tracing_data *td;
	bool td_tried;
	void *slots;                    /* nr slots of the caller's slot size */
	size_t nr;
};

/* The format of tracepoint id from the recording's tracing data, or NULL. */
const struct pk_tracing_event *pk_tp_attrs__format(struct pk_tp_attrs *c, uint64_t id);

/*
 * The slot of attr a, growing the table (new slots zeroed) as needed; slot_sz is the size
 * of the caller's slot, whose first member must be `const struct pk_data_attr *`. When that
 * member is not a yet, it is set to a and *fresh to true: the caller (re)classifies the
 * slot. NULL if a has no index or memory runs out.
 */
void *pk_tp_attrs__slot(struct pk_tp_attrs *c, const struct pk_data_attr *a, size_t slot_sz,
			bool *fresh);

/* Free the tracing data and the slots. */
void pk_tp_attrs__exit(struct pk_tp_attrs *c);

#endif
