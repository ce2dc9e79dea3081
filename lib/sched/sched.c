/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/sched.c - the scheduler state machine behind `perfkit sched latency`,
 * `timehist` and `map` (see perfkit/sched.h), and its session client.
 *
 * Wake-ups: kernels since 4.3 emit sched_waking when a wake-up starts and sched_wakeup
 * when it is done (on some kernels and configurations only the former has the events a
 * recording asked for). A task's wake-up time is the first of either after its
 * switch-out, so a recording with both and one with only one give the same delays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/sched.h>
#include <perfkit/session.h>
#include "internal.h"
#include "data/tp-attrs.h"
#include "core/oahash.h"

struct task {
	struct pk_sched_task pub;
	uint64_t in_time;       /* switch-in of the current run, 0: not running */
	uint64_t out_time;      /* last switch-out, 0: none seen */
	uint64_t wake_time;     /* first wake-up since then, 0: none */
	bool out_runnable;      /* switched out runnable (preempted) */
	bool run_woken;         /* the current run followed a wake-up (not a preemption) */
	uint64_t run_ready, run_prev_out; /* of the current run: when it became ready, and
					   * the switch-out before it (0: unknown) */
};

struct pk_sched {
	struct pk_sched_opts o;
	struct task *v;
	size_t n, cap;
	uint32_t *tab;          /* open addressing: index + 1 into v */
	size_t tcap;
	const char *wake_src;
	uint64_t *cpu_last;     /* per CPU: time of its last sched_switch (0: none) */
	uint64_t *idle_in, *idle_out; /* per CPU: the idle task's switch-in and -out */
	size_t ncpu;
	/* session state */
	struct pk_tp_attrs tp;  /* slots: struct attr_info */
	bool found, has_waking;
};

enum kind { K_OTHER, K_SWITCH, K_WAKING, K_WAKEUP };

struct attr_info {
	const struct pk_data_attr *attr;
	enum kind kind;
	/* switch: prev_comm prev_pid prev_state next_comm next_pid; wake: comm pid */
	struct pk_tp_field f[5];
};
_Static_assert(offsetof(struct attr_info, attr) == 0, "a pk_tp_attrs slot");

struct pk_sched *pk_sched__new(const struct pk_sched_opts *opts)
{
	if (!PK_OPTS_VALID(opts, pk_sched_opts)) {
		errno = EINVAL;
		return NULL;
	}
	struct pk_sched *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (opts)
		memcpy(&s->o, opts, opts->sz < sizeof(s->o) ? opts->sz : sizeof(s->o));
	return s;
}

void pk_sched__free(struct pk_sched *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->tab);
	free(s->cpu_last);
	free(s->idle_in);
	free(s->idle_out);
	pk_tp_attrs__exit(&s->tp);
	free(s);
}

static size_t h(int32_t tid, size_t cap)
{
	return (size_t)((uint64_t)(uint32_t)tid * 0x9e3779b97f4a7c15ULL >> 32) & (cap - 1);
}

static size_t task_slot(const struct task *t, size_t cap)
{
	return h(t->pub.tid, cap);
}

PK_DEFINE_OA_INDEX(tasks_index, struct task, task_slot)

static struct task *task_of(struct pk_sched *s, int32_t tid, const char *comm)
{
	if ((s->n + 1) * 2 > s->tcap) {
		size_t ncap = s->tcap ? s->tcap * 2 : 256;
		uint32_t *n = tasks_index(s->v, s->n, ncap);
		if (!n)
			return NULL;
		free(s->tab);
		s->tab = n;
		s->tcap = ncap;
	}
	size_t j = h(tid, s->tcap);
	while (s->tab[j] && s->v[s->tab[j] - 1].pub.tid != tid)
		j = (j + 1) & (s->tcap - 1);
	if (!s->tab[j]) {
		if (s->n == s->cap) {
			size_t ncap = s->cap ? s->cap * 2 : 64;
			struct task *n = realloc(s->v, ncap * sizeof(*n));
			if (!n)
				return NULL;
			s->v = n;
			s->cap = ncap;
		}
		memset(&s->v[s->n], 0, sizeof(s->v[0]));
		s->v[s->n].pub.tid = tid;
		s->v[s->n].pub.pid = -1;
		s->tab[j] = (uint32_t)++s->n;
	}
	struct task *t = &s->v[s->tab[j] - 1];
	if (comm && comm[0]) {
		strncpy(t->pub.comm, comm, sizeof(t->pub.comm) - 1);
		t->pub.comm[sizeof(t->pub.comm) - 1] = 0;
	}
	return t;
}

void pk_sched__set_pid(struct pk_sched *s, int32_t tid, int32_t pid)
{
	if (!s || tid <= 0)
		return;
	struct task *t = task_of(s, tid, NULL);
	if (t)
		t->pub.pid = pid;
}

int pk_sched__wakeup(struct pk_sched *s, uint64_t time, int32_t tid, const char *comm)
{
	if (!s)
		return -EINVAL;
	if (tid <= 0)
		return 0;
	struct task *t = task_of(s, tid, comm);
	if (!t)
		return -ENOMEM;
	/* the first wake-up after the switch-out; a running or preempted (still
	 * runnable) task's is no wake-up */
	if (!t->wake_time && !t->in_time && !t->out_runnable)
		t->wake_time = time;
	return 0;
}

int pk_sched__switch(struct pk_sched *s, uint64_t time, uint32_t cpu, int32_t prev_tid,
		     const char *prev_comm, int64_t prev_state, int32_t next_tid,
		     const char *next_comm)
{
	struct pk_sched_switch sw = {
		.time = time, .cpu = cpu, .prev_tid = prev_tid, .next_tid = next_tid,
		.prev_comm = prev_comm ? prev_comm : "", .next_comm = next_comm ? next_comm : "",
		.prev_state = prev_state,
	};
	/* TASK_RUNNING, possibly with the preemption bit (TASK_REPORT_MAX) above the
	 * reported states */
	bool runnable = (prev_state & 0xff) == 0;

	if (!s)
		return -EINVAL;
	uint64_t cpu_last = 0;
	if (cpu < 65536 && cpu >= s->ncpu) {
		uint64_t **arr[3] = { &s->cpu_last, &s->idle_in, &s->idle_out };
		for (int i = 0; i < 3; i++) {
			uint64_t *v = realloc(*arr[i], (cpu + 1) * sizeof(*v));
			if (!v)
				return -ENOMEM;
			memset(v + s->ncpu, 0, (cpu + 1 - s->ncpu) * sizeof(*v));
			*arr[i] = v;
		}
		s->ncpu = cpu + 1;
	}
	if (cpu < s->ncpu) {
		cpu_last = s->cpu_last[cpu];
		s->cpu_last[cpu] = time;
	}
	if (prev_tid == 0 && cpu < s->ncpu) {
		/* the idle task: one per CPU */
		uint64_t in = s->idle_in[cpu] ? s->idle_in[cpu] : cpu_last;
		if (in && in <= time && in >= s->idle_out[cpu]) {
			sw.run_known = true;
			sw.run_ns = time - in;
			if (s->idle_out[cpu]) {
				sw.wait_known = true;
				sw.wait_ns = in - s->idle_out[cpu];
			}
		}
		s->idle_out[cpu] = time;
		s->idle_in[cpu] = 0;
	}
	if (next_tid == 0 && cpu < s->ncpu)
		s->idle_in[cpu] = time;
	if (prev_tid > 0) {
		struct task *p = task_of(s, prev_tid, prev_comm);
		if (!p)
			return -ENOMEM;
		/* its switch-in was lost (a full ring buffer): it has run since the CPU's
		 * previous switch, as perf timehist takes it */
		if (!p->in_time && cpu_last && cpu_last >= p->out_time) {
			p->in_time = cpu_last;
			p->run_woken = p->wake_time && p->wake_time <= cpu_last;
			p->run_ready = p->run_woken ? p->wake_time : 0;
			p->run_prev_out = p->out_time;
		}
		if (p->in_time && p->in_time <= time) {
			sw.run_known = true;
			sw.run_ns = time - p->in_time;
			p->pub.runtime_ns += sw.run_ns;
			if (p->run_woken && p->run_ready <= p->in_time)
				sw.delay_ns = p->in_time - p->run_ready;
			if (p->run_prev_out && p->in_time >= p->run_prev_out) {
				/* off the CPU: sleeping (or preempted) and then waiting */
				sw.wait_known = true;
				sw.wait_ns = p->in_time - p->run_prev_out;
			}
		}
		p->pub.switches++;
		p->out_time = time;
		p->in_time = 0;
		p->wake_time = 0;
		p->out_runnable = runnable;
	}
	if (next_tid > 0) {
		struct task *n = task_of(s, next_tid, next_comm);
		if (!n)
			return -ENOMEM;
		uint64_t ready = n->wake_time ? n->wake_time : n->out_runnable ? n->out_time : 0;
		if (ready && ready <= time) {
			uint64_t d = time - ready;
			n->pub.delays++;
			n->pub.total_delay_ns += d;
			if (d > n->pub.max_delay_ns || n->pub.delays == 1) {
				n->pub.max_delay_ns = d;
				n->pub.max_delay_start = ready;
				n->pub.max_delay_end = time;
			}
		} else {
			ready = 0;
		}
		n->in_time = time;
		n->run_ready = ready;
		n->run_woken = ready && n->wake_time == ready;
		n->run_prev_out = n->out_time;
		n->wake_time = 0;
		n->out_runnable = false;
	}
	return s->o.on_switch ? s->o.on_switch(s->o.ctx, &sw) : 0;
}

/* ---- reading a recording ---- */

static bool fields(const struct pk_tracing_event *te, struct attr_info *ai,
		   const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pk_tp_format__field(te->format, te->format_len, names[i], &ai->f[i]) < 0)
			return false;
	return true;
}

static void classify(struct pk_sched *s, struct attr_info *ai)
{
	static const char *const sw[] = { "prev_comm", "prev_pid", "prev_state", "next_comm",
					  "next_pid" };
	static const char *const wk[] = { "comm", "pid" };
	const struct pk_tracing_event *te;

	ai->kind = K_OTHER;
	if (ai->attr->attr.attr.type != PERF_TYPE_TRACEPOINT)
		return;
	te = pk_tp_attrs__format(&s->tp, ai->attr->attr.attr.config);
	if (!te || strcmp(te->system, "sched"))
		return;
	if (!strcmp(te->name, "sched_switch") && fields(te, ai, sw, 5)) {
		ai->kind = K_SWITCH;
		s->found = true;
	} else if (!strcmp(te->name, "sched_waking") && fields(te, ai, wk, 2)) {
		ai->kind = K_WAKING;
		s->has_waking = true;
		s->wake_src = "sched_waking";
	} else if ((!strcmp(te->name, "sched_wakeup") || !strcmp(te->name, "sched_wakeup_new")) &&
		   fields(te, ai, wk, 2)) {
		ai->kind = K_WAKEUP;
		if (!s->has_waking)
			s->wake_src = "sched_wakeup";
	}
}

static struct attr_info *info_of(struct pk_sched *s, const struct pk_data_attr *a)
{
	bool fresh;
	struct attr_info *ai = pk_tp_attrs__slot(&s->tp, a, sizeof(*ai), &fresh);
	if (fresh)
		classify(s, ai);
	return ai;
}

/* A field as an integer (1..8 bytes, sign-extended when signed); false if outside raw. */
static bool get_int(const struct pk_sample *smp, const struct pk_tp_field *f, int64_t *out)
{
	if (f->size == 0 || f->size > 8 || (uint64_t)f->offset + f->size > smp->raw.size)
		return false;
	uint64_t v = 0;
	memcpy(&v, (const char *)smp->raw.data + f->offset, f->size); /* little-endian host */
	if (f->is_signed && f->size < 8 && (v >> (f->size * 8 - 1)) & 1)
		v |= ~0ULL << (f->size * 8);
	*out = (int64_t)v;
	return true;
}

/* A char[] field as a NUL-terminated string in buf (16 bytes). */
static bool get_str(const struct pk_sample *smp, const struct pk_tp_field *f, char buf[16])
{
	if ((uint64_t)f->offset + f->size > smp->raw.size)
		return false;
	size_t n = f->size < 15 ? f->size : 15;
	memcpy(buf, (const char *)smp->raw.data + f->offset, n);
	buf[n] = 0;
	return true;
}

static int on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *rec)
{
	struct pk_sched *s = ctx;
	const struct pk_sample *smp;
	struct attr_info *ai;
	char c1[16], c2[16];
	int64_t p1, st, p2;

	if (!rec) /* malformed: the reader said why */
		return 0;
	smp = &rec->sample;
	ai = info_of(s, ev->attr);

	if (!ai || ai->kind == K_OTHER || !smp->raw.data)
		return 0;
	if (ai->kind == K_SWITCH) {
		if (!get_str(smp, &ai->f[0], c1) || !get_int(smp, &ai->f[1], &p1) ||
		    !get_int(smp, &ai->f[2], &st) || !get_str(smp, &ai->f[3], c2) ||
		    !get_int(smp, &ai->f[4], &p2))
			return 0;
		if (smp->tid == (uint32_t)p1 && p1 > 0)
			pk_sched__set_pid(s, (int32_t)p1, (int32_t)smp->pid);
		return pk_sched__switch(s, smp->time, smp->cpu, (int32_t)p1, c1, st, (int32_t)p2, c2);
	}
	if (!get_str(smp, &ai->f[0], c1) || !get_int(smp, &ai->f[1], &p1))
		return 0;
	return pk_sched__wakeup(s, smp->time, (int32_t)p1, c1);
}

int pk_sched__process(struct pk_sched *s, struct pk_data_reader *r)
{
	if (!s || !r)
		return -EINVAL;
	s->tp.r = r;
	PK_OPTS(pk_session_opts, so, .no_machine = true);
	struct pk_session *ses = pk_session__new(r, &so);
	if (!ses)
		return -errno;
	PK_OPTS(pk_session_ops, ops, .sample = on_sample);
	int err = pk_session__process(ses, &ops, s);
	pk_session__free(ses);
	if (err >= 0 && !s->found)
		return -ENOENT;
	return err < 0 ? err : 0;
}

size_t pk_sched__nr_tasks(const struct pk_sched *s)
{
	return s ? s->n : 0;
}

const struct pk_sched_task *pk_sched__task(const struct pk_sched *s, size_t idx)
{
	return s && idx < s->n ? &s->v[idx].pub : NULL;
}

const char *pk_sched__wakeup_source(const struct pk_sched *s)
{
	return s ? s->wake_src : NULL;
}
