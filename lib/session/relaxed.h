/* SPDX-License-Identifier: MIT */
/* lib/session/relaxed.h - internal: the session's delivery without sorting the samples
 * (pk_session_opts.samples_unordered; relaxed.c). */
#ifndef PK_SESSION_RELAXED_H
#define PK_SESSION_RELAXED_H
#include <stdbool.h>
#include <perfkit/data.h>
#include <perfkit/record.h>
#include <perfkit/session.h>

/* one record to the session: rec its decoding, NULL if it has none (as the feed's) */
typedef int (*pk_rx_deliver_fn)(void *arg, const struct pk_data_event *ev,
				const struct pk_record *rec);

/*
 * Read all of r, delivering every record through fn: the records that are not samples
 * in the order of the ordered queue (max_bytes: its limit, 0 its default), each sample
 * between the same of them as there, the samples between two of them in file order;
 * samples decoded up to PERIOD only with `prefix`. Returns 0 at the end, fn's nonzero
 * return, or the reader's error (after what was read before it); *st (if not NULL) the
 * counts the ordered queue would have.
 */
int pk_session_relaxed(struct pk_data_reader *r, size_t max_bytes, bool prefix,
		       pk_rx_deliver_fn fn, void *arg,
		       void (*progress)(void *, uint64_t, uint64_t), void *pctx,
		       struct pk_ordered_stats *st);
#endif
