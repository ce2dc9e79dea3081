/* SPDX-License-Identifier: MIT */
/*
 * lib/session/session.c - the one pipeline of every perf.data reader: the feed (reader,
 * ordering queue, decode; on a second thread if asked) into the machine model, then the
 * caller's callbacks (perfkit/session.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/session.h>
#include "feed.h"
#include "relaxed.h"
#include "internal.h"

struct pk_session {
	struct pk_data_reader *r;
	struct pk_machine *m;
	bool own_machine;
	bool reader_thread;
	bool file_order;
	bool sample_prefix;
	bool unordered;
	bool done;
	size_t max_bytes;
	struct pk_ordered_stats ost;
};

PK_API struct pk_session *pk_session__new(struct pk_data_reader *r,
					  const struct pk_session_opts *opts)
{
	if (!r || !PK_OPTS_VALID(opts, pk_session_opts)) {
		errno = EINVAL;
		return NULL;
	}
	struct pk_session *s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->r = r;
	s->reader_thread = PK_OPTS_GET(opts, reader_thread, false);
	s->max_bytes = PK_OPTS_GET(opts, max_queued_bytes, (size_t)0);
	s->file_order = PK_OPTS_GET(opts, file_order, false);
	s->sample_prefix = PK_OPTS_GET(opts, sample_prefix, false);
	s->unordered = PK_OPTS_GET(opts, samples_unordered, false);
	s->m = PK_OPTS_GET(opts, machine, NULL);
	const struct pk_data_env *env = pk_data_reader__env(r);
	if (PK_OPTS_GET(opts, no_machine, false)) {
		s->m = NULL;
	} else if (!s->m) {
		const struct pk_machine_opts *mo = PK_OPTS_GET(opts, machine_opts, NULL);
		struct pk_machine_opts o;
		memset(&o, 0, sizeof(o));
		if (mo) {
			if (!PK_OPTS_VALID(mo, pk_machine_opts)) {
				free(s);
				errno = EINVAL;
				return NULL;
			}
			memcpy(&o, mo, PK_MIN(mo->sz, sizeof(o)));
		}
		o.sz = sizeof(o);
		if (!PK_OPTS_GET(opts, host_known, false))
			o.host = pk_data_env__same_host(env);
		s->m = pk_machine__new(&o);
		if (!s->m) {
			int e = errno;
			free(s);
			errno = e;
			return NULL;
		}
		s->own_machine = true;
	}
	for (size_t i = 0; s->m && env && i < env->nr_build_ids; i++) {
		const struct pk_data_build_id *b = &env->build_ids[i];
		if (b->filename)
			pk_machine__add_build_id(s->m, b->filename, b->build_id, b->build_id_size);
	}
	/* after every build-id is in: a name listed twice keeps the last, as without */
	if (s->m && env)
		pk_machine_preload_build_ids(s->m, env->build_ids, env->nr_build_ids);
	return s;
}

PK_API void pk_session__free(struct pk_session *s)
{
	if (!s)
		return;
	if (s->own_machine)
		pk_machine__free(s->m);
	free(s);
}

PK_API struct pk_machine *pk_session__machine(const struct pk_session *s)
{
	return s ? s->m : NULL;
}

PK_API struct pk_data_reader *pk_session__reader(const struct pk_session *s)
{
	return s ? s->r : NULL;
}

PK_API void pk_session__ordered_stats(const struct pk_session *s, struct pk_ordered_stats *st)
{
	if (!st)
		return;
	struct pk_ordered_stats zero = { 0 };
	PK_OUT_COPY(st, s ? &s->ost : &zero);
}

/* The callback of a record (NULL: none), by type. */
static pk_session_fn callback_of(const struct pk_session_ops *ops, uint32_t type)
{
	pk_session_fn fn = NULL;
	switch (type) {
	case PERF_RECORD_SAMPLE: fn = PK_OPTS_GET(ops, sample, NULL); break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: fn = PK_OPTS_GET(ops, mmap, NULL); break;
	case PERF_RECORD_COMM: fn = PK_OPTS_GET(ops, comm, NULL); break;
	case PERF_RECORD_FORK: fn = PK_OPTS_GET(ops, fork, NULL); break;
	case PERF_RECORD_EXIT: fn = PK_OPTS_GET(ops, exit, NULL); break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: fn = PK_OPTS_GET(ops, lost, NULL); break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: fn = PK_OPTS_GET(ops, context_switch, NULL); break;
	case PK_RECORD_FINISHED_ROUND: fn = PK_OPTS_GET(ops, finished_round, NULL); break;
	default: break;
	}
	return fn ? fn : PK_OPTS_GET(ops, other, NULL);
}

/* While the reader thread starts (2-4 ms from pthread_create to running on an idle vCPU
 * of a PVM guest), load what the first kernel sample would: the kernel's symbols, when
 * an event may sample the kernel. (Without the thread there is no wait to fill, and the
 * load would be lost if no kernel sample came.) */
static void preload(struct pk_session *s)
{
	for (size_t i = 0; i < pk_data_reader__nr_attrs(s->r); i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(s->r, i);
		if (a && !a->attr.attr.exclude_kernel &&
		    (a->attr.attr.sample_type & (PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN))) {
			pk_machine_preload_kernel(s->m);
			return;
		}
	}
}

/* The callbacks of one process() call, looked up once by record type (types from 128 on,
 * user records above the kernel's, all take ops->other) */
#define PK_DISPATCH_TYPES 128
struct dispatch {
	pk_session_fn fn[PK_DISPATCH_TYPES];
	pk_session_fn other;
};

static void dispatch_init(struct dispatch *d, const struct pk_session_ops *ops)
{
	for (uint32_t t = 0; t < PK_DISPATCH_TYPES; t++)
		d->fn[t] = ops ? callback_of(ops, t) : NULL;
	d->other = ops ? callback_of(ops, UINT32_MAX) : NULL;
}

/* One record: the machine first (a callback sees the state the record leaves), then the
 * record's callback. */
static inline int deliver(struct pk_session *s, const struct dispatch *d, void *ctx,
			  const struct pk_data_event *ev, const struct pk_record *rec)
{
	uint32_t type = ev->hdr->type;
	if (type != PERF_RECORD_SAMPLE && rec && s->m &&
	    pk_machine__process(s->m, rec) == -ENOMEM)
		return -ENOMEM;
	pk_session_fn fn = type < PK_DISPATCH_TYPES ? d->fn[type] : d->other;
	return fn ? fn(ctx, ev, rec) : 0;
}

/* --file-order: the reader's records as they come, decoded here */
static int process_file_order(struct pk_session *s, const struct pk_session_ops *ops,
			      const struct dispatch *d, void *ctx)
{
	void (*progress)(void *, uint64_t, uint64_t) = PK_OPTS_GET(ops, progress, NULL);
	struct pk_data_event ev;
	struct pk_record rec;
	uint64_t nrec = 0;
	int err;
	while ((err = pk_data_reader__next(s->r, &ev)) > 0) {
		const struct pk_data_attr *a = ev.attr;
		bool ok = ev.hdr->type < 64 &&
			  !pk_record__decode(a && a->layout_ok ? &a->layout : NULL, ev.hdr, &rec,
					     NULL);
		err = deliver(s, d, ctx, &ev, ok ? &rec : NULL);
		if (err)
			break;
		if (progress && !(++nrec & 0xffff))
			progress(ctx, ev.offset, nrec);
	}
	return err;
}

/* samples_unordered: relaxed.c reads, this delivers */
struct relaxed_ctx {
	struct pk_session *s;
	const struct dispatch *d;
	void *ctx;
};

static int relaxed_deliver(void *arg, const struct pk_data_event *ev, const struct pk_record *rec)
{
	struct relaxed_ctx *c = arg;
	return deliver(c->s, c->d, c->ctx, ev, rec);
}

static int skip_sample(void *arg, const struct pk_data_event *ev, const struct pk_record *rec)
{
	(void)arg;
	(void)ev;
	(void)rec;
	return 0;
}

/* Samples carrying user stack dumps (DWARF call chains, kilobytes each): the reader
 * thread would move every byte to the other CPU's cache for a decode that reads a few
 * of them, which cost more than it overlapped (report and script of such a file 10-20 %
 * slower in wall time, 70 % more CPU): such files are read on the caller's thread. */
static bool stack_dumps(struct pk_data_reader *r)
{
	for (size_t i = 0; i < pk_data_reader__nr_attrs(r); i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(r, i);
		if (a && (a->attr.attr.sample_type & PERF_SAMPLE_STACK_USER))
			return true;
	}
	return false;
}

/* samples_unordered: relaxed.c reads; samples straight to their callback (deliver()
 * adds nothing for them) or, with `raw`, undecoded to it */
static int process_relaxed(struct pk_session *s, const struct dispatch *d,
			   const struct pk_session_ops *ops, void *ctx, pk_rx_raw_fn raw,
			   void *raw_arg)
{
	struct relaxed_ctx c = { s, d, ctx };
	struct pk_rx_client cl = {
		.raw_sample = raw,
		.sample = d->fn[PERF_RECORD_SAMPLE] ? d->fn[PERF_RECORD_SAMPLE] : skip_sample,
		.sample_arg = raw ? raw_arg : ctx, .other = relaxed_deliver, .other_arg = &c,
		.progress = PK_OPTS_GET(ops, progress, NULL), .progress_arg = ctx,
	};
	int err = pk_session_relaxed(s->r, s->max_bytes, s->sample_prefix, &cl, &s->ost);
	if (err == PK_SESSION_STOP)
		err = 0;
	return err < 0 ? pk_err(err) : 0;
}

/* The checks every way of processing a session starts with; marks it processed. */
static int process_begin(struct pk_session *s, const struct pk_session_ops *ops,
			 struct dispatch *d)
{
	if (!s || (ops && !PK_OPTS_VALID(ops, pk_session_ops)))
		return pk_err(-EINVAL);
	if (s->done)
		return pk_err(-EALREADY);
	s->done = true;
	dispatch_init(d, ops);
	return 0;
}

int pk_session_process_raw(struct pk_session *s, const struct pk_session_ops *ops,
			   void *ctx, pk_rx_raw_fn raw, void *raw_arg)
{
	if (!raw)
		return pk_err(-EINVAL);
	struct dispatch d;
	int err = process_begin(s, ops, &d);
	return err ? err : process_relaxed(s, &d, ops, ctx, raw, raw_arg);
}

PK_API int pk_session__process(struct pk_session *s, const struct pk_session_ops *ops,
			       void *ctx)
{
	struct dispatch d;
	int berr = process_begin(s, ops, &d);
	if (berr)
		return berr;
	if (s->file_order) {
		int err = process_file_order(s, ops, &d, ctx);
		if (err == PK_SESSION_STOP)
			err = 0;
		return err < 0 ? pk_err(err) : 0;
	}
	void (*progress)(void *, uint64_t, uint64_t) = PK_OPTS_GET(ops, progress, NULL);
	if (s->unordered)
		return process_relaxed(s, &d, ops, ctx, NULL, NULL);
	bool threaded = s->reader_thread && pk_online_cpus() >= 2 && !pk_data_reader__is_pipe(s->r) &&
			!stack_dumps(s->r);
	struct pk_feed *f;
	int err = pk_feed__start(&f, s->r, threaded, s->max_bytes);
	if (err)
		return pk_err(err);
	if (s->sample_prefix)
		pk_feed_sample_prefix(f);
	if (threaded && s->m)
		preload(s);
	const struct pk_feed_item *it;
	uint64_t nrec = 0;
	while ((err = pk_feed__next(f, &it)) > 0) {
		err = deliver(s, &d, ctx, &it->ev, it->dec ? NULL : &it->rec);
		if (err)
			break;
		if (progress && !(++nrec & 0xffff))
			progress(ctx, it->ev.offset, nrec);
	}
	pk_feed__stop(f, &s->ost);
	if (err == PK_SESSION_STOP)
		err = 0;
	return err < 0 ? pk_err(err) : 0;
}
