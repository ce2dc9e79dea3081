/* SPDX-License-Identifier: MIT */
/*
 * perfkit/session.h - one pipeline for every reader of perf.data: the records of a file
 * (or pipe) in time order, decoded once, with the machine model (processes, threads,
 * maps, symbols) kept up to date, handed to the caller's callbacks. `perfkit report`,
 * `script`, `flamegraph`, `convert` and `diff` are clients of it; a new reader of
 * perf.data should be one too (the role of perf's `struct perf_session` + `perf_tool`,
 * without global state: two sessions may run on two threads).
 *
 * Session protocol:
 *     r = pk_data_reader__open(path, NULL);
 *     s = pk_session__new(r, &opts);            // opts.reader_thread, opts.machine, ...
 *     PK_OPTS(pk_session_ops, ops, .sample = on_sample, .comm = on_comm);
 *     err = pk_session__process(s, &ops, ctx);  // calls back for every record
 *     ... pk_session__machine(s) to resolve what a callback kept ...
 *     pk_session__free(s); pk_data_reader__free(r);
 *
 * Order of work for each record: it is read (on a second thread with reader_thread),
 * ordered (perf's rule, below), decoded once; a non-sample kernel record is given to the
 * machine model (pk_machine__process) and then to its callback, so a callback sees the
 * machine as the record left it; a sample goes to the sample callback as it is (resolve
 * its addresses with pk_session__machine: pk_machine__resolve / pk_machine__callchain).
 *
 * Time ordering on its own (the session uses it; for tools that need only the order):
 *     q = pk_ordered__new(NULL);
 *     while ((err = pk_ordered__next(q, reader, &ev)) > 0) { ... ev in time order ... }
 *     pk_ordered__free(q);
 * or, for a stream from elsewhere (tests, live rings):
 *     pk_ordered__push(q, &ev) ... pk_ordered__pop(q, &out) ... pk_ordered__finish(q)
 *
 * The rule is perf's ordered-events queue: records carrying a timestamp are queued; on each
 * FINISHED_ROUND every queued record with a timestamp <= the largest timestamp seen before
 * the previous FINISHED_ROUND is delivered in (time, arrival) order; at the end everything
 * is delivered. Records without a timestamp (user records such as FINISHED_ROUND or
 * TRACING_DATA, attrs without TIME) are delivered at once. When the queued bytes exceed
 * opts.max_bytes the oldest half is delivered early (as perf's queue-size limit does), so
 * memory stays bounded even for files without rounds.
 */
#ifndef PERFKIT_SESSION_H
#define PERFKIT_SESSION_H

#include <perfkit/common.h>
#include <perfkit/data.h>
#include <perfkit/record.h>
#include <perfkit/symbol.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* Time ordering                                                                        */
/* ------------------------------------------------------------------------------------ */

struct pk_ordered;

struct pk_ordered_opts {
	size_t sz;
	/* Queued record bytes beyond which the oldest half is delivered early.
	 * 0 = 256 MiB. */
	size_t max_bytes;
	size_t :0;
};

/* Create an empty queue. NULL with errno EINVAL / ENOMEM. */
PK_API struct pk_ordered *pk_ordered__new(const struct pk_ordered_opts *opts);
/* Free the queue and every record still in it. NULL is accepted. */
PK_API void pk_ordered__free(struct pk_ordered *q);

/*
 * The timestamp of a record, or (uint64_t)-1 if it has none: a SAMPLE with TIME, or a
 * kernel record whose attr has sample_id_all and TIME. attr may be NULL (no timestamp).
 */
PK_API uint64_t pk_ordered__timestamp(const struct perf_event_header *hdr,
				      const struct pk_data_attr *attr);

/*
 * Queue one record (copied; ev->payload is NOT copied and must stay valid until the
 * record is popped). A FINISHED_ROUND record (type 68) makes the older records
 * deliverable and is itself delivered after them. Returns 0 or -ENOMEM / -EINVAL.
 */
PK_API int pk_ordered__push(struct pk_ordered *q, const struct pk_data_event *ev);
/* End of input: everything queued becomes deliverable. */
PK_API void pk_ordered__finish(struct pk_ordered *q);
/*
 * The next deliverable record: returns 1 and fills *ev (valid until the next pop, push or
 * free), 0 if nothing is deliverable yet (push more, or finish).
 */
PK_API int pk_ordered__pop(struct pk_ordered *q, struct pk_data_event *ev);
/*
 * Convenience: pull records from `r` until one is deliverable, and deliver it.
 * Same return convention as pk_data_reader__next (1, 0 at the end, negative error; on a
 * reader error the records queued before it are delivered first).
 */
PK_API int pk_ordered__next(struct pk_ordered *q, struct pk_data_reader *r,
			    struct pk_data_event *ev);

/* Output structs that may grow carry their size: the caller sets sz to sizeof its struct
 * (0: this header's), the library fills at most that many bytes and sets sz to what it
 * filled. */
struct pk_ordered_stats {
	size_t sz;
	uint64_t queued;        /* records that went through the queue */
	uint64_t immediate;     /* records delivered at once (no timestamp) */
	uint64_t out_of_order;  /* queued with a time below what was already delivered */
	uint64_t early_flushes; /* times max_bytes forced delivering half the queue */
	uint64_t max_queued_bytes; /* high-water mark of the record bytes held */
	uint64_t rounds;        /* FINISHED_ROUND records seen */
};
PK_API void pk_ordered__stats(const struct pk_ordered *q, struct pk_ordered_stats *st);

/* ------------------------------------------------------------------------------------ */
/* Session                                                                              */
/* ------------------------------------------------------------------------------------ */

struct pk_session;

struct pk_session_opts {
	size_t sz;
	/* Read, order and pre-decode on a second thread (a file, not a pipe, without user
	 * stack dumps in its samples, and only with two CPUs or more online; otherwise the
	 * caller's thread does it all). */
	bool reader_thread;
	/* The machine model to keep up to date (borrowed: the caller frees it after the
	 * session). NULL: the session makes one (host = pk_data_env__same_host of the
	 * file, demangling on) and frees it with the session. In both cases the file's
	 * build ids (BUILD_ID feature) are given to it. */
	struct pk_machine *machine;
	/* Options of the machine the session makes (ignored with `machine`); NULL: the
	 * defaults above. Its `host` is replaced by the file's same-host check unless
	 * host_known is set. */
	const struct pk_machine_opts *machine_opts;
	bool host_known;
	/* Queued record bytes beyond which the oldest half is delivered early (the
	 * pk_ordered_opts.max_bytes of the queue). 0 = 256 MiB. */
	size_t max_queued_bytes;
	/* Deliver the records in file order, not time order (perf script's --file-order;
	 * read on the caller's thread). */
	bool file_order;
	/* No machine model: records are not given to one and pk_session__machine is NULL
	 * (a client that never resolves addresses saves the work). */
	bool no_machine;
	/* Decode each sample's fixed fields only, IDENTIFIER..PERIOD (id, ip, pid/tid, time,
	 * addr, stream_id, cpu, period; cpumode from the header): the later ones (read
	 * values, call chain, raw data, branch stack, registers, stack, ...) stay zero and
	 * are neither read nor checked, so a sample whose tail is malformed is still
	 * delivered. For a client that needs no more (annotate counts where samples fell):
	 * a DWARF sample's tail is kilobytes away. Ignored with file_order. */
	bool sample_prefix;
	/* Samples need not come in time order among themselves: every record that is not a
	 * sample comes in the time order above, and every sample between the same two of
	 * them as in that order (so with the machine model in the same state), but the
	 * samples between two such records come in file order. Saves sorting the samples,
	 * most of a file, for a client that only counts them (annotate). Ignored with
	 * file_order; without a reader thread. */
	bool samples_unordered;
	size_t :0;
};

/*
 * A callback: one record, in time order. ev is the record as read (header, attr, file
 * offset; valid during the call only); rec its decoding, NULL for a user record
 * (type >= 64, such as FINISHED_ROUND) or a kernel record that is unknown or malformed
 * (the reader logged which). Return 0 to go on, PK_SESSION_STOP to end the processing
 * early without error, or a negative errno to end it with that error.
 */
typedef int (*pk_session_fn)(void *ctx, const struct pk_data_event *ev,
			     const struct pk_record *rec);
#define PK_SESSION_STOP 1

struct pk_session_ops {
	size_t sz;
	pk_session_fn sample;          /* PERF_RECORD_SAMPLE (decoded: rec->sample) */
	pk_session_fn mmap;            /* MMAP and MMAP2 */
	pk_session_fn comm;
	pk_session_fn fork;
	pk_session_fn exit;
	pk_session_fn lost;            /* LOST and LOST_SAMPLES */
	pk_session_fn context_switch;  /* SWITCH and SWITCH_CPU_WIDE */
	/* FINISHED_ROUND (rec NULL). It has no timestamp: delivered when read (as every
	 * record without one), ahead of records the queue still holds. */
	pk_session_fn finished_round;
	/* Every record whose callback above is NULL, and every other record (kernel
	 * records of other types, user records, undecodable ones). */
	pk_session_fn other;
	/* Called every 65536 records: the file offset reached and the records so far. */
	void (*progress)(void *ctx, uint64_t offset, uint64_t nr_records);
	size_t :0;
};

/* A session over reader r (borrowed: it must outlive the session). NULL with errno
 * EINVAL (r NULL, bad opts) or ENOMEM. */
PK_API struct pk_session *pk_session__new(struct pk_data_reader *r,
					  const struct pk_session_opts *opts);
/* Free the session (and the machine it made). NULL is accepted. */
PK_API void pk_session__free(struct pk_session *s);
/*
 * Read the whole stream, calling ops (NULL members: nothing to call) with ctx. Returns 0
 * at the end of the stream or when a callback returned PK_SESSION_STOP; a callback's
 * negative return; or the reader's error (-PK_ERR_FORMAT, -EIO, ...) after every record
 * read before it was delivered. Can be called once per session.
 */
PK_API int pk_session__process(struct pk_session *s, const struct pk_session_ops *ops,
			       void *ctx);
/* The machine model (owned by the session or borrowed from opts.machine). */
PK_API struct pk_machine *pk_session__machine(const struct pk_session *s);
/* The reader the session reads. */
PK_API struct pk_data_reader *pk_session__reader(const struct pk_session *s);
/* Statistics of the ordering queue after pk_session__process (zero before). */
PK_API void pk_session__ordered_stats(const struct pk_session *s, struct pk_ordered_stats *st);

#ifdef __cplusplus
}
#endif
#endif
