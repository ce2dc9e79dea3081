/* SPDX-License-Identifier: MIT */
/*
 * tool/script-trace.h - tracepoint fields for `perfkit script`: the RAW data of a
 * tracepoint sample printed by libtraceevent as perf script prints it, with the event
 * formats of the recording itself (its tracing data), or from tracefs for an event the
 * recording carries no format for.
 */
#ifndef TOOL_SCRIPT_TRACE_H
#define TOOL_SCRIPT_TRACE_H

#include <stddef.h>
#include <perfkit/perfkit.h>

struct script_trace;

/* tracefs: where formats missing from the recording are read (<dir>/events/...); NULL:
 * the mounted tracefs (mounted first if we are root), "none": nowhere. The string must
 * outlive the object. NULL on ENOMEM. */
struct script_trace *script_trace__new(const char *tracefs);
void script_trace__free(struct script_trace *st);

/*
 * The fields of a tracepoint sample ("prev_comm=... ==> next_comm=..."), or NULL (not a
 * tracepoint sample with RAW data, or no format for its event). blob/len: the recording's
 * tracing data (pk_data_reader__tracing_data; NULL while there is none yet), parsed at the
 * first call that has it; hostile content is checked before libtraceevent sees it. The
 * text is owned by st and valid until the next call.
 */
const char *script_trace__text(struct script_trace *st, const void *blob, size_t len,
			       const struct pk_data_attr *a, const struct pk_sample *smp);

#endif
