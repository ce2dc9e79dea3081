/* SPDX-License-Identifier: MIT */
/*
 * lib/record/offcpu.c - off-CPU time from context switches (pk_recorder_opts.off_cpu).
 *
 * The recorder opens the software event context-switches (period 1) with a call chain and
 * context_switch records (policy.c). Its sample is a thread leaving the CPU (the event
 * fires in the context of the task switched out, so its chain is where the thread
 * blocked); a PERF_RECORD_SWITCH / SWITCH_CPU_WIDE without the OUT bit, of the same event,
 * is the thread coming back. For every such pair this file synthesises one sample of an
 * extra attr named "offcpu-time" (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, as perf's
 * BPF off-CPU profiler writes it) whose period is the nanoseconds blocked, whose time is
 * the switch-in, and whose call chain (and DWARF user registers and stack) are the
 * switch-out's. The switch samples and context-switch records are consumed here, not
 * written to the file (perf's BPF profiler writes only its offcpu-time samples too).
 * With wakers (pk_rec_offcpu__set_waker), the sched_waking samples are consumed too: the
 * one that ends a pending block names its waker, and the interval also gives an
 * "offcpu-waker" sample (the waker's pid/tid, the blocked ns, the woken thread in RAW).
 * A block still pending when its thread exits, or at the end, is closed there.
 *
 * Deferred (pk_rec_offcpu__set_spool): while the targets run, a drain only sorts records
 * out by header and id and copies the ones needed (switch-out samples, switch-in records,
 * wake-ups, and LOST/EXIT/FORK, which are written too) into a spool; the switch-out
 * records (their samples say the same) are dropped there. The decoding and pairing of the
 * spool waits until it is nearly full at the end of a pass (or full during one), a batch
 * is asked for (a rotation), or the end: on a context-switch-heavy target the recorder
 * then costs the target's CPUs a copy per switch, not a decode, a sort and a synthesis
 * (bench/offcpu-overhead.sh). The ends of the passes are marked in the spool, so that its
 * replay pairs up to the same horizon as the passes would have. Memory: the spool, at
 * most `cap` bytes, and the switches of about one pass decoded.
 *
 * The rings of the CPUs are drained one after the other, so a thread that left CPU 0 and
 * came back on CPU 1 may show its switch-in before its switch-out, or a later switch-in
 * before the switch-out that precedes it. The switches of one drain pass are therefore
 * queued and put in time order, and at the end of each pass those up to the newest time of
 * the previous pass are paired (perf's rule for its ordered events: a later pass brings
 * nothing older than that); the rest waits for the next pass. Memory: the queue (about two
 * passes of switches) and one entry per thread seen, with the chain (and stack) of its
 * pending switch-out, freed when the thread exits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "record/record-internal.h"
#include "core/oahash.h"

#ifndef PERF_COUNT_SW_BPF_OUTPUT
#define PERF_COUNT_SW_BPF_OUTPUT 10
#endif
#define MISC_SWITCH_OUT (1u << 13)
/* common_flags of a trace entry (the kernel's trace_flag_type) */
#define TRACE_FLAG_NMI 0x40
#define TRACE_FLAG_HARDIRQ 0x08
#define TRACE_FLAG_SOFTIRQ 0x10
#define WAKER_TYPE                                                                        \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |     \
	 PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)
/* perf's BPF profiler has PERF_SAMPLE_ID too: the IDENTIFIER says the same, 8 bytes less
 * per blocked interval */
#define OUT_TYPE                                                                          \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |     \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

enum { T_FREE = 0, T_LIVE, T_DEAD };

struct oc_thread {
	uint32_t tid, pid, cpu;
	uint8_t state;
	bool out;                    /* a switch-out is pending */
	uint16_t misc;               /* of the switch-out sample */
	uint64_t ip;
	uint64_t t_out;
	uint8_t *tail;               /* the output sample from CALLCHAIN on */
	uint32_t tail_len, tail_cap;
	uint32_t wpid, wtid;         /* who woke it (woken) */
	bool woken;
};

enum { Q_OUT, Q_IN, Q_EXIT, Q_FORK, Q_LOST, Q_WAKE };

/* A switch (or task event) waiting for its turn in time order. */
struct oc_event {
	uint64_t time, seq;
	uint32_t tid, pid, cpu;
	uint16_t misc;
	uint8_t kind;
	uint64_t ip;
	size_t tail_off;             /* Q_OUT: in the arena */
	uint32_t tail_len;
	uint32_t wpid, wtid;         /* Q_WAKE: the waker (tid is the woken thread) */
};

struct pk_rec_offcpu {
	struct pk_sample_layout in;  /* of context-switches */
	uint64_t *ids;               /* its sample ids, sorted */
	size_t nr_ids;
	uint64_t out_id, thresh;
	uint64_t out_type;
	struct oc_thread *t;
	size_t cap, nr;
	uint8_t *buf;                /* synthesised records not yet written */
	size_t len, bcap;
	uint8_t *scratch;            /* a record split by the ring's wrap */
	struct oc_event *q;          /* queued switches */
	size_t nq, qcap;
	uint8_t *arena, *arena2;     /* the chains of the queued switch-outs */
	size_t alen, acap;
	uint64_t seq, max_time, horizon;
	uint64_t last_time;          /* of the last switch scanned (where a loss is put) */
	uint64_t emitted, dropped, filtered_samples;
	/* the wake-ups (pk_rec_offcpu__set_waker) */
	bool wakers;
	struct pk_sample_layout wk;
	uint64_t *wk_ids;
	size_t nr_wk;
	uint32_t wk_pid_off;
	int wk_flags_off;            /* of common_flags, or -1 */
	uint64_t wk_out_id, woken;
	/* deferred decoding (pk_rec_offcpu__set_spool): whole records, 8-aligned; a bare
	 * header of type 0 marks the start of a ring's bytes (misc 0) or the end of a drain
	 * pass (SPOOL_PASS_END) */
	uint8_t *spool;
	size_t slen, scap, spool_cap;
	uint64_t spool_pass_max;     /* replaying: the newest time at the last pass's end */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct pk_rec_offcpu *pk_rec_offcpu__new(const struct perf_event_attr *sw, const uint64_t *ids,
					 size_t nr, uint64_t thresh, uint64_t out_id,
					 struct pk_attr *out)
{
	struct pk_rec_offcpu *oc = calloc(1, sizeof(*oc));

	if (!oc)
		return NULL;
	oc->ids = malloc((nr ? nr : 1) * sizeof(*ids));
	oc->scratch = malloc(65536);
	oc->cap = 64;
	oc->t = calloc(oc->cap, sizeof(*oc->t));
	if (!oc->ids || !oc->scratch || !oc->t || pk_sample_layout__init(&oc->in, sw) < 0) {
		pk_rec_offcpu__free(oc);
		return NULL;
	}
	if (nr)
		memcpy(oc->ids, ids, nr * sizeof(*ids));
	qsort(oc->ids, nr, sizeof(*ids), cmp_u64);
	oc->nr_ids = nr;
	oc->out_id = out_id;
	oc->thresh = thresh;
	oc->out_type = OUT_TYPE | (sw->sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER));

	memset(out, 0, sizeof(*out));
	out->attr.type = PERF_TYPE_SOFTWARE;
	out->attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	out->attr.size = sizeof(out->attr);
	out->attr.sample_period = 1;
	out->attr.sample_type = oc->out_type;
	out->attr.sample_regs_user = sw->sample_regs_user;
	out->attr.sample_stack_user = sw->sample_stack_user;
	out->attr.sample_id_all = 1;
	out->attr.disabled = 1;
	out->attr.exclude_callchain_user = sw->exclude_callchain_user;
	return oc;
}

void pk_rec_offcpu__free(struct pk_rec_offcpu *oc)
{
	if (!oc)
		return;
	for (size_t i = 0; oc->t && i < oc->cap; i++)
		free(oc->t[i].tail);
	free(oc->t);
	free(oc->ids);
	free(oc->buf);
	free(oc->scratch);
	free(oc->q);
	free(oc->arena);
	free(oc->wk_ids);
	free(oc->spool);
	free(oc);
}

void pk_rec_offcpu__set_spool(struct pk_rec_offcpu *oc, size_t cap)
{
	oc->spool_cap = cap;
}

bool pk_rec_offcpu__deferred(const struct pk_rec_offcpu *oc)
{
	return oc->slen > 0;
}

int pk_rec_offcpu__set_waker(struct pk_rec_offcpu *oc, const struct perf_event_attr *wk,
			     const uint64_t *ids, size_t nr, uint32_t pid_off, int flags_off,
			     uint64_t out_id, struct pk_attr *out)
{
	oc->wk_flags_off = flags_off;
	oc->wk_ids = malloc((nr ? nr : 1) * sizeof(*ids));
	if (!oc->wk_ids || pk_sample_layout__init(&oc->wk, wk) < 0)
		return -ENOMEM;
	if (nr)
		memcpy(oc->wk_ids, ids, nr * sizeof(*ids));
	qsort(oc->wk_ids, nr, sizeof(*ids), cmp_u64);
	oc->nr_wk = nr;
	oc->wk_pid_off = pid_off;
	oc->wk_out_id = out_id;
	oc->wakers = true;

	memset(out, 0, sizeof(*out));
	out->attr.type = PERF_TYPE_SOFTWARE;
	out->attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	out->attr.size = sizeof(out->attr);
	out->attr.sample_period = 1;
	out->attr.sample_type = WAKER_TYPE;
	out->attr.sample_id_all = 1;
	out->attr.disabled = 1;
	return 0;
}

/* 1: a sample or switch of the off-CPU event, 2: a wake-up, 0: neither */
static int our_id(const struct pk_rec_offcpu *oc, const struct perf_event_header *h)
{
	uint64_t id;
	if (pk_sample_layout__record_id(&oc->in, h, &id) < 0)
		return 0;
	if (bsearch(&id, oc->ids, oc->nr_ids, sizeof(id), cmp_u64))
		return 1;
	return oc->wakers && bsearch(&id, oc->wk_ids, oc->nr_wk, sizeof(id), cmp_u64) ? 2 : 0;
}

static size_t slot_of(uint32_t tid, size_t cap)
{
	return (size_t)(tid * 2654435761u) & (cap - 1);
}

static bool thread_free(const struct oc_thread *t)
{
	return t->state == T_FREE;
}

static size_t thread_slot(const struct oc_thread *t, size_t cap)
{
	return slot_of(t->tid, cap);
}

PK_DEFINE_OA_REHASH(threads_rehash, struct oc_thread, thread_free, thread_slot)

/* The entry of `tid`, created (NULL: out of memory, or not created when !create). */
static struct oc_thread *thread(struct pk_rec_offcpu *oc, uint32_t tid, bool create)
{
	if (create && (oc->nr + 1) * 2 > oc->cap) {
		size_t ncap = oc->cap * 2;
		struct oc_thread *n = threads_rehash(oc->t, oc->cap, ncap);
		if (!n)
			return NULL;
		free(oc->t);
		oc->t = n;
		oc->cap = ncap;
	}
	size_t j = slot_of(tid, oc->cap);
	while (oc->t[j].state != T_FREE) {
		if (oc->t[j].tid == tid)
			return &oc->t[j];
		j = (j + 1) & (oc->cap - 1);
	}
	if (!create)
		return NULL;
	memset(&oc->t[j], 0, sizeof(oc->t[j]));
	oc->t[j].tid = tid;
	oc->t[j].state = T_LIVE;
	oc->nr++;
	return &oc->t[j];
}

static void put64(uint8_t **p, uint64_t v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

/* Room for `size` more bytes of output. */
static bool room(struct pk_rec_offcpu *oc, size_t size)
{
	if (oc->len + size > oc->bcap) {
		size_t ncap = oc->bcap ? oc->bcap : 65536;
		while (ncap < oc->len + size)
			ncap *= 2;
		uint8_t *n = realloc(oc->buf, ncap);
		if (!n)
			return false;
		oc->buf = n;
		oc->bcap = ncap;
	}
	return true;
}

/* The offcpu-waker sample of an interval: the waker's pid/tid, the woken thread in RAW. */
static void emit_waker(struct pk_rec_offcpu *oc, const struct oc_thread *t, uint64_t t_in,
		       uint64_t period)
{
	size_t size = sizeof(struct perf_event_header) + 7 * 8 + 16;
	if (!room(oc, size))
		return;
	uint8_t *p = oc->buf + oc->len;
	/* user mode: an address 0 in the kernel would read as a kernel without symbols */
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)size };
	uint32_t raw[4] = { 12, t->pid, t->tid, 0 };  /* u32 size, then the woken pid, tid */
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	put64(&p, oc->wk_out_id);                              /* IDENTIFIER */
	put64(&p, 0);                /* IP: none (the waker's stack is not recorded) */
	put64(&p, (uint64_t)t->wpid | (uint64_t)t->wtid << 32); /* TID */
	put64(&p, t_in);                                       /* TIME */
	put64(&p, oc->wk_out_id);                              /* ID */
	put64(&p, (uint64_t)t->cpu);                           /* CPU */
	put64(&p, period);                                     /* PERIOD */
	memcpy(p, raw, sizeof(raw));                           /* RAW */
	oc->len += size;
	oc->woken++;
}

/* One offcpu-time sample for the blocked interval [t->t_out, t_in). */
static void emit(struct pk_rec_offcpu *oc, struct oc_thread *t, uint64_t t_in)
{
	uint64_t period = t_in - t->t_out;
	size_t size = sizeof(struct perf_event_header) + 6 * 8 + t->tail_len;

	t->out = false;
	if (period < oc->thresh || size > 65535 || !room(oc, size)) {
		oc->dropped++;
		t->woken = false;
		return;
	}
	uint8_t *p = oc->buf + oc->len;
	struct perf_event_header h = { PERF_RECORD_SAMPLE, t->misc, (uint16_t)size };
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	put64(&p, oc->out_id);                               /* IDENTIFIER */
	put64(&p, t->ip);                                    /* IP */
	put64(&p, (uint64_t)t->pid | (uint64_t)t->tid << 32); /* TID */
	put64(&p, t_in);                                     /* TIME */
	put64(&p, (uint64_t)t->cpu);                         /* CPU */
	put64(&p, period);                                   /* PERIOD */
	memcpy(p, t->tail, t->tail_len);                     /* CALLCHAIN, REGS, STACK */
	oc->len += size;
	oc->emitted++;
	if (oc->wakers && t->woken)
		emit_waker(oc, t, t_in, period);
	t->woken = false;
}

/* The switch-out sample's chain (and user registers and stack) in the output's format,
 * appended to the arena. */
static int keep_tail(struct pk_rec_offcpu *oc, struct oc_event *e, const struct pk_sample *s)
{
	uint64_t stack = 0;
	size_t need = 8 + s->callchain.nr * 8;

	if (oc->out_type & PERF_SAMPLE_REGS_USER)
		need += 8 + (size_t)s->regs_user.nr * 8;
	if (oc->out_type & PERF_SAMPLE_STACK_USER) {
		/* only the part of the copy the kernel filled */
		stack = s->stack_user.size ? PK_MIN(s->stack_user.dyn_size, s->stack_user.size) : 0;
		stack = (stack + 7) & ~7ULL;
		if (stack > s->stack_user.size)
			stack = s->stack_user.size;
		need += 8 + stack + (stack ? 8 : 0);
	}
	if (need > 65000)
		return -E2BIG;
	if (oc->alen + need > oc->acap) {
		size_t ncap = oc->acap ? oc->acap : 65536;
		while (ncap < oc->alen + need)
			ncap *= 2;
		uint8_t *n = realloc(oc->arena, ncap);
		if (!n)
			return -ENOMEM;
		oc->arena = n;
		oc->acap = ncap;
	}
	uint8_t *p = oc->arena + oc->alen, *p0 = p;
	put64(&p, s->callchain.nr);
	if (s->callchain.nr)
		memcpy(p, s->callchain.ips, s->callchain.nr * 8);
	p += s->callchain.nr * 8;
	if (oc->out_type & PERF_SAMPLE_REGS_USER) {
		put64(&p, s->regs_user.abi);
		if (s->regs_user.nr)
			memcpy(p, s->regs_user.regs, (size_t)s->regs_user.nr * 8);
		p += (size_t)s->regs_user.nr * 8;
	}
	if (oc->out_type & PERF_SAMPLE_STACK_USER) {
		put64(&p, stack);
		if (stack) {
			memcpy(p, s->stack_user.data, stack);
			p += stack;
			put64(&p, stack);
		}
	}
	e->tail_off = oc->alen;
	e->tail_len = (uint32_t)(p - p0);
	oc->alen += e->tail_len;
	return 0;
}

static struct oc_event *queue(struct pk_rec_offcpu *oc, uint8_t kind, uint32_t tid, uint64_t time)
{
	if (oc->nq == oc->qcap) {
		size_t ncap = oc->qcap ? oc->qcap * 2 : 1024;
		struct oc_event *n = realloc(oc->q, ncap * sizeof(*n));
		if (!n)
			return NULL;
		oc->q = n;
		oc->qcap = ncap;
	}
	struct oc_event *e = &oc->q[oc->nq];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->tid = tid;
	e->time = time;
	e->seq = oc->seq++;
	if (time > oc->max_time)
		oc->max_time = time;
	if (kind != Q_LOST)
		oc->last_time = time;
	return e;
}

static void switch_out(struct pk_rec_offcpu *oc, const struct perf_event_header *h)
{
	struct pk_sample s;
	if (pk_sample__decode(&oc->in, h, &s, NULL) < 0 || !s.tid)
		return; /* the idle task is never blocked */
	struct oc_event *e = queue(oc, Q_OUT, s.tid, s.time);
	if (!e || keep_tail(oc, e, &s) < 0)
		return;
	e->pid = s.pid;
	e->cpu = s.cpu;
	e->misc = h->misc;
	e->ip = s.ip;
	/* the first non-marker entry of the chain is where it blocked */
	for (uint64_t i = 0; i < s.callchain.nr; i++)
		if (s.callchain.ips[i] < PERF_CONTEXT_MAX) {
			e->ip = s.callchain.ips[i];
			break;
		}
	oc->nq++;
}

static void switch_in(struct pk_rec_offcpu *oc, const struct perf_event_header *h)
{
	struct pk_record r;
	if (pk_record__decode(&oc->in, h, &r, NULL) != 0 || !r.has_sid || !r.sid.tid)
		return;
	if (queue(oc, Q_IN, r.sid.tid, r.sid.time))
		oc->nq++;
}

/* A wake-up: the sample's pid/tid are the waker's (the event fires in its context), the
 * woken thread's tid is the tracepoint's "pid" field. */
static void wake(struct pk_rec_offcpu *oc, const struct perf_event_header *h)
{
	struct pk_sample s;
	uint32_t wakee;
	if (pk_sample__decode(&oc->wk, h, &s, NULL) < 0 || !s.raw.data ||
	    (uint64_t)oc->wk_pid_off + 4 > s.raw.size)
		return;
	memcpy(&wakee, (const uint8_t *)s.raw.data + oc->wk_pid_off, 4);
	/* in an interrupt (a timer ending a sleep, a device) the sample's thread is only
	 * the one that was interrupted, not the waker: not attributed */
	if (oc->wk_flags_off >= 0 && (uint64_t)oc->wk_flags_off < s.raw.size &&
	    (((const uint8_t *)s.raw.data)[oc->wk_flags_off] & (TRACE_FLAG_HARDIRQ |
	     TRACE_FLAG_SOFTIRQ | TRACE_FLAG_NMI)))
		return;
	struct oc_event *e = wakee ? queue(oc, Q_WAKE, wakee, s.time) : NULL;
	if (!e)
		return;
	e->wpid = s.pid;
	e->wtid = s.tid;
	oc->nq++;
}

/* EXIT: the thread's last switch-out never comes back; FORK: a tid reused. */
static void task(struct pk_rec_offcpu *oc, const struct perf_event_header *h, bool exit)
{
	uint32_t v[4];
	uint64_t time;
	if (h->size < sizeof(*h) + sizeof(v) + sizeof(time))
		return;
	memcpy(v, (const uint8_t *)h + sizeof(*h), sizeof(v));
	memcpy(&time, (const uint8_t *)h + sizeof(*h) + sizeof(v), sizeof(time));
	if (queue(oc, exit ? Q_EXIT : Q_FORK, v[2], time))
		oc->nq++;
}

bool pk_rec_offcpu__record(struct pk_rec_offcpu *oc, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		switch (our_id(oc, h)) {
		case 1: switch_out(oc, h); break;
		case 2: wake(oc, h); break;
		default: return false;
		}
		oc->filtered_samples++;
		return true;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (our_id(oc, h) != 1)
			return false;
		if (!(h->misc & MISC_SWITCH_OUT))
			switch_in(oc, h);
		return true;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		/* switches may be missing before this record: no interval across the gap.
		 * The kernel writes the LOST record once the ring has room again, with the
		 * time of then in its sample_id, after everything it lost: a switch-out still
		 * pending at that time (from any ring) may have lost its switch-in, and the
		 * next switch-out with it, so that its switch-in after the gap would pair a
		 * span with on-CPU time in it. Placed at the last switch before it in these
		 * bytes instead (at a ring's start: time 0, before everything), the loss
		 * cleared nothing such. Without a time in the record: that last switch. */
		struct pk_sample_id sid;
		uint64_t at = pk_record__sample_id(&oc->in, h, &sid) == 0 && sid.time
				      ? sid.time : oc->last_time;
		if (queue(oc, Q_LOST, 0, at))
			oc->nq++;
		return false;
	}
	case PERF_RECORD_EXIT:
		task(oc, h, true);
		return false;
	case PERF_RECORD_FORK:
		task(oc, h, false);
		return false;
	default:
		return false;
	}
}

static void spool_replay(struct pk_rec_offcpu *oc);
#define SPOOL_PASS_END 1

/* Room for `size` more bytes in the spool, which never grows past its cap. */
static bool spool_room(struct pk_rec_offcpu *oc, size_t size)
{
	if (oc->slen + size <= oc->scap)
		return true;
	size_t ncap = oc->scap ? oc->scap : PK_MIN(oc->spool_cap, (size_t)1 << 20);
	while (ncap && ncap < oc->slen + size)
		ncap *= 2;
	if (ncap < oc->slen + size || ncap > oc->spool_cap)
		return false;
	uint8_t *n = realloc(oc->spool, ncap);
	if (!n)
		return false;
	oc->spool = n;
	oc->scap = ncap;
	return true;
}

/* The start of a ring's bytes in the spool; false: no room (decode now instead). */
static bool spool_mark(struct pk_rec_offcpu *oc, uint16_t misc)
{
	struct perf_event_header h = { 0, misc, sizeof(h) };
	if (!spool_room(oc, sizeof(h))) {
		spool_replay(oc);
		if (!spool_room(oc, sizeof(h)))
			return false;
	}
	memcpy(oc->spool + oc->slen, &h, sizeof(h));
	oc->slen += sizeof(h);
	return true;
}

/* What __record does, deferred: true if the record is not to be written. The record is
 * copied if __record will need it; without room in the spool it is read now. */
static bool spool_record(struct pk_rec_offcpu *oc, const struct perf_event_header *h)
{
	bool consumed = false;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (!our_id(oc, h))
			return false;
		consumed = true;
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (our_id(oc, h) != 1)
			return false;
		if (h->misc & MISC_SWITCH_OUT)
			return true; /* its sample is the switch-out */
		consumed = true;
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		break;
	default:
		return false;
	}
	if (!spool_room(oc, h->size)) {
		spool_replay(oc); /* full: what it holds first, in order */
		if (!spool_room(oc, h->size))
			return pk_rec_offcpu__record(oc, h);
	}
	memcpy(oc->spool + oc->slen, h, h->size);
	oc->slen += h->size;
	return consumed;
}

/* Decode the spool's records into the queue, as their drains would have. */
static void spool_replay(struct pk_rec_offcpu *oc)
{
	size_t off = 0;
	while (off + sizeof(struct perf_event_header) <= oc->slen) {
		const struct perf_event_header *h = (const void *)(oc->spool + off);
		if (h->type == 0 && h->misc == SPOOL_PASS_END) {
			/* what flush would have done at that pass's end: pair up to the
			 * previous pass's newest time */
			oc->horizon = oc->spool_pass_max;
			oc->spool_pass_max = oc->max_time;
		} else if (h->type == 0) {
			oc->last_time = 0;
		} else {
			(void)pk_rec_offcpu__record(oc, h);
		}
		off += h->size;
	}
	oc->slen = 0;
}

/* Write bytes [from, to) of the one or two spans. */
static int put_span(const struct pk_ring_chunk *c, int n, size_t from, size_t to,
		    int (*write)(const void *p, size_t len, void *ctx), void *ctx)
{
	size_t first = c[0].len;
	int err = 0;
	if (from < first && from < to)
		err = write((const uint8_t *)c[0].ptr + from, PK_MIN(to, first) - from, ctx);
	if (!err && n > 1 && to > first && to > from) {
		size_t a = from > first ? from - first : 0;
		err = write((const uint8_t *)c[1].ptr + a, to - first - a, ctx);
	}
	return err;
}

int pk_rec_offcpu__scan(struct pk_rec_offcpu *oc, const struct pk_ring_chunk *c, int n,
			int (*write)(const void *p, size_t len, void *ctx), void *ctx)
{
	size_t first = c[0].len, total = first + (n > 1 ? c[1].len : 0), off = 0, keep = 0;
	int err = 0;

	bool spool = oc->spool_cap > 0;
	if (!spool || !spool_mark(oc, 0))
		oc->last_time = 0; /* a loss at the start of this ring is older than all of it */

	while (off + sizeof(struct perf_event_header) <= total) {
		const struct perf_event_header *h =
			off < first ? (const void *)((const uint8_t *)c[0].ptr + off)
				    : (const void *)((const uint8_t *)c[1].ptr + (off - first));
		uint16_t size = h->size;
		/* kernel records are 8-aligned: anything else is passed on unread */
		if (size < sizeof(*h) || (size & 7) || off + size > total)
			break;
		if (off < first && off + size > first) {
			memcpy(oc->scratch, h, first - off);
			memcpy(oc->scratch + (first - off), c[1].ptr, size - (first - off));
			h = (const void *)oc->scratch;
		}
		if (spool ? spool_record(oc, h) : pk_rec_offcpu__record(oc, h)) {
			/* the switches themselves are not kept: the samples made of them are */
			if (!err)
				err = put_span(c, n, keep, off, write, ctx);
			keep = off + size;
		}
		off += size;
	}
	if (!err)
		err = put_span(c, n, keep, total, write, ctx);
	return err;
}

static int cmp_event(const void *a, const void *b)
{
	const struct oc_event *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void process(struct pk_rec_offcpu *oc, const struct oc_event *e)
{
	if (e->kind == Q_LOST) {
		for (size_t i = 0; i < oc->cap; i++)
			oc->t[i].out = false;
		return;
	}
	struct oc_thread *t = thread(oc, e->tid, e->kind == Q_OUT || e->kind == Q_IN);
	if (!t)
		return;
	switch (e->kind) {
	case Q_WAKE:
		/* the wake-up that ends a pending block (later ones of the same block are
		 * no-ops in the kernel: a running task is not woken) */
		if (t->out && t->state != T_DEAD && !t->woken) {
			t->wpid = e->wpid;
			t->wtid = e->wtid;
			t->woken = true;
		}
		break;
	case Q_OUT:
		if (t->state == T_DEAD)
			return;
		if (e->tail_len > t->tail_cap) {
			uint8_t *n = realloc(t->tail, e->tail_len);
			if (!n)
				return;
			t->tail = n;
			t->tail_cap = e->tail_len;
		}
		memcpy(t->tail, oc->arena + e->tail_off, e->tail_len);
		t->tail_len = e->tail_len;
		t->pid = e->pid;
		t->cpu = e->cpu;
		t->misc = e->misc;
		t->ip = e->ip;
		t->t_out = e->time;
		t->out = true;
		t->woken = false;
		break;
	case Q_IN:
		if (t->out && t->state != T_DEAD)
			emit(oc, t, e->time);
		break;
	case Q_EXIT:
		/* blocked until it died (killed while its switch-in was lost): closed now */
		if (t->out && t->state != T_DEAD && e->time > t->t_out)
			emit(oc, t, e->time);
		free(t->tail);
		t->tail = NULL;
		t->tail_len = t->tail_cap = 0;
		t->out = false;
		t->state = T_DEAD;
		break;
	default:
		if (t->state == T_DEAD)
			t->state = T_LIVE;
		break;
	}
}

void pk_rec_offcpu__flush(struct pk_rec_offcpu *oc, int mode)
{
	size_t i, keep = 0, alen = 0;
	bool all = mode == PK_OFFCPU_ALL;

	if (oc->slen) {
		/* deferred: decoded when the spool is nearly full, a batch is due, or at
		 * the end (a later pass still brings nothing older than the previous
		 * flush's newest time, so the horizon holds across the passes spooled) */
		if (mode == PK_OFFCPU_PASS && oc->slen < oc->spool_cap - oc->spool_cap / 8 &&
		    spool_mark(oc, SPOOL_PASS_END))
			return;
		spool_replay(oc);
	}
	if (oc->nq > 1)
		qsort(oc->q, oc->nq, sizeof(*oc->q), cmp_event);
	for (i = 0; i < oc->nq && (all || oc->q[i].time <= oc->horizon); i++)
		process(oc, &oc->q[i]);
	/* at the end, a thread still blocked (the target exited, or recording stopped while
	 * it waited) is counted up to the newest time seen: the end of the recording */
	for (size_t j = 0; all && j < oc->cap; j++) {
		struct oc_thread *t = &oc->t[j];
		if (t->state == T_LIVE && t->out && oc->max_time > t->t_out)
			emit(oc, t, oc->max_time);
	}
	/* the rest waits for the next pass, its chains moved to the front of the arena */
	if (i < oc->nq && !oc->arena2 && oc->acap)
		oc->arena2 = malloc(oc->acap);
	for (; i < oc->nq; i++) {
		struct oc_event *e = &oc->q[i];
		if (e->kind == Q_OUT && oc->arena2) {
			memcpy(oc->arena2 + alen, oc->arena + e->tail_off, e->tail_len);
			e->tail_off = alen;
			alen += e->tail_len;
		} else if (e->kind == Q_OUT) {
			continue; /* no memory for it: dropped */
		}
		oc->q[keep++] = *e;
	}
	if (oc->arena2) {
		uint8_t *a = oc->arena;
		oc->arena = oc->arena2;
		oc->arena2 = NULL;
		free(a);
	}
	oc->nq = keep;
	oc->alen = alen;
	oc->horizon = oc->spool_pass_max = oc->max_time;
}

uint64_t pk_rec_offcpu__wakers(const struct pk_rec_offcpu *oc)
{
	return oc->woken;
}

const void *pk_rec_offcpu__output(const struct pk_rec_offcpu *oc, size_t *len)
{
	*len = oc->len;
	return oc->buf;
}

void pk_rec_offcpu__consumed(struct pk_rec_offcpu *oc)
{
	oc->len = 0;
}

void pk_rec_offcpu__stats(const struct pk_rec_offcpu *oc, uint64_t *emitted, uint64_t *dropped,
			  uint64_t *filtered)
{
	*emitted = oc->emitted;
	*dropped = oc->dropped;
	*filtered = oc->filtered_samples;
}
