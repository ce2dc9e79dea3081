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

/* where the records go: samples to `sample` (NULL: nowhere), the others to `other` (the
 * session's delivery: the machine, then the client's callback) */
/* a sample as it lies in the file (8-byte aligned), with its attr (NULL: unknown) */
typedef int (*pk_rx_raw_fn)(void *arg, const struct perf_event_header *h,
			    const struct pk_data_attr *a);

struct pk_rx_client {
	pk_rx_raw_fn raw_sample; /* if set, samples go here undecoded (not to `sample`) */
	pk_rx_deliver_fn sample, other;
	void *sample_arg, *other_arg;
	void (*progress)(void *ctx, uint64_t offset, uint64_t nr_records);
	void *progress_arg;
};

/*
 * Read all of r, delivering every record: the records that are not samples in the order
 * of the ordered queue (max_bytes: its limit, 0 its default), each sample between the
 * same of them as there, the samples between two of them in file order; samples decoded
 * up to PERIOD only with `prefix`. Returns 0 at the end, a callback's nonzero return, or
 * the reader's error (after what was read before it); *st (if not NULL) the counts the
 * ordered queue would have.
 */
int pk_session_relaxed(struct pk_data_reader *r, size_t max_bytes, bool prefix,
		       const struct pk_rx_client *cl, struct pk_ordered_stats *st);
/*
 * (session.c) pk_session__process with samples_unordered, the samples handed to `raw`
 * undecoded: for a client inside the library that reads a sample's few fixed fields
 * itself (annotate: the decode into a pk_record and the callback chain were half of its
 * work per sample). The other records go to ops as with pk_session__process.
 */
int pk_session_process_raw(struct pk_session *s, const struct pk_session_ops *ops,
			   void *ctx, pk_rx_raw_fn raw, void *raw_arg);
#endif
