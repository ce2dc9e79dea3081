/* SPDX-License-Identifier: MIT */
/* lib/session/feed.h - internal: the time-ordered, decoded record stream of a session,
 * optionally read on a second thread (feed.c). */
#ifndef PK_REPORT_FEED_H
#define PK_REPORT_FEED_H
#include <stdbool.h>
#include <perfkit/data.h>
#include <perfkit/record.h>
#include <perfkit/session.h>

/* A record as the consumer sees it: its event and, decoded on the consumer's thread, the
 * record. */
struct pk_feed_item {
	int dec;                /* 0 decoded; 1 not a kernel record, unknown or malformed */
	struct pk_data_event ev;
	struct pk_record rec;   /* valid when dec == 0 */
	/* what decides the fields a sample decode writes (sample_type, layout flags) of the
	 * sample decoded last into rec, if that was the last decode and it succeeded (see
	 * pk_record_decode_sample_again) */
	bool z;
	uint32_t zflags;
	uint64_t ztype;
};

struct pk_feed;

/* Start reading r in time order; on a reader thread if `threaded` and r is a file (pipe
 * input is read on the caller's thread); max_bytes: the ordering queue's bound (0: its
 * default). Returns 0 or -ENOMEM. */
int pk_feed__start(struct pk_feed **out, struct pk_data_reader *r, bool threaded,
		   size_t max_bytes);
/* The next record: 1 (*it valid until the next call), 0 at the end, < 0 an error of the
 * reader (after every record before it was given). */
int pk_feed__next(struct pk_feed *f, const struct pk_feed_item **it);
/* From now on decode samples only up to PERIOD (pk_record_decode_sample_prefix). */
void pk_feed_sample_prefix(struct pk_feed *f);
/* Stop (early or at the end), join the reader thread, free; *st = ordering statistics. */
void pk_feed__stop(struct pk_feed *f, struct pk_ordered_stats *st);
/* How the reader thread waited for the consumer: counted, so that a test can check the
 * policy (on a full ring, sleep at once until half of it is free) without timing. */
struct pk_feed_waits {
	uint64_t batches;       /* batches it filled */
	uint64_t full_sleeps;   /* times it slept on a full ring of batches */
	uint64_t ring;          /* batches in the ring */
};
/* The reader thread's sleeps on a full ring so far (any thread may ask). */
uint64_t pk_feed_full_sleeps(const struct pk_feed *f);
/* pk_feed__stop, and *waits (if not NULL) = the reader thread's waits (zero unthreaded) */
void pk_feed__stop_waits(struct pk_feed *f, struct pk_ordered_stats *st,
			 struct pk_feed_waits *waits);
/* (ordered.c) Records at image offsets >= offset are still read by the caller after
 * being delivered: the reader must not give back their pages. UINT64_MAX: none. */
struct pk_ordered;
void pk_ordered_hold(struct pk_ordered *q, uint64_t offset);
/* (ordered.c) Records handed out of the queue's own copies stay valid after the next call,
 * until pk_ordered_done says the caller is done with them: their memory is reused only
 * then. */
void pk_ordered_hold_chunks(struct pk_ordered *q, bool on);
/* (ordered.c) The size of the chunks that hold the queue's copies (0: 1 MiB, made for a
 * file's rounds); a chunk is touched whole when it is made. */
void pk_ordered_chunk_size(struct pk_ordered *q, size_t size);
/* records handed out of the queue (copies or image references) so far */
uint64_t pk_ordered_delivered(const struct pk_ordered *q);
/* the caller is done with the first `done` records handed out of the queue */
void pk_ordered_done(struct pk_ordered *q, uint64_t done);
/* the record pk_ordered__next gave last is one of the queue's copies */
bool pk_ordered_last_in_chunk(const struct pk_ordered *q);
#endif
