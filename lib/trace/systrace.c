/* SPDX-License-Identifier: MIT */
/*
 * lib/trace/systrace.c - pairing raw_syscalls:sys_enter and sys_exit per thread into
 * system calls (pk_systrace__process), a session client; and the per-thread sums
 * (pk_syscall_stats).
 *
 * A thread is in one system call at a time, so its sys_enter waits for the next sys_exit
 * of the same thread. What breaks the pairing: an exit without an enter (the recording
 * began inside the call: the execve of a launched command, which enables the events;
 * or a lost enter) is reported with `entered` false; an enter followed by another enter
 * (exit_group, execve's lost exit) is reported with `returned` false, as are the calls
 * still pending at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/session.h>
#include <perfkit/trace.h>
#include "internal.h"
#include "data/tp-attrs.h"
#include "core/oahash.h"

struct pending {
	bool used;
	struct pk_syscall_call c;
};

enum tp_kind { TP_OTHER, TP_ENTER, TP_EXIT, TP_FMAJ, TP_FMIN };

/* what each attr of the file is (by its index) */
struct attr_info {
	const struct pk_data_attr *attr;
	enum tp_kind kind;
	struct pk_tp_field id, a; /* a: args (enter) or ret (exit) */
};
_Static_assert(offsetof(struct attr_info, attr) == 0, "a pk_tp_attrs slot");

struct systrace {
	const struct pk_systrace_opts *o;
	struct pk_session *s;
	struct pk_tp_attrs tp;  /* slots: struct attr_info */
	struct pending *tab;    /* open addressing by tid */
	size_t cap, used;
	struct pk_systrace_stats st;
};

static uint64_t hash_tid(uint32_t tid)
{
	return (uint64_t)tid * 0x9e3779b97f4a7c15ULL;
}

static bool pending_free(const struct pending *p)
{
	return !p->used;
}

static size_t pending_slot(const struct pending *p, size_t cap)
{
	return hash_tid(p->c.tid) >> 32 & (cap - 1);
}

PK_DEFINE_OA_REHASH(pending_rehash, struct pending, pending_free, pending_slot)

static struct pending *slot(struct systrace *t, uint32_t tid, bool create)
{
	if (create && (t->used + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct pending *n = pending_rehash(t->tab, t->cap, ncap);
		if (!n)
			return NULL;
		free(t->tab);
		t->tab = n;
		t->cap = ncap;
	}
	if (!t->cap)
		return NULL;
	size_t j = hash_tid(tid) >> 32 & (t->cap - 1);
	while (t->tab[j].used && t->tab[j].c.tid != tid)
		j = (j + 1) & (t->cap - 1);
	if (!t->tab[j].used && !create)
		return NULL;
	return &t->tab[j];
}

static void classify(struct systrace *t, struct attr_info *ai)
{
	const struct pk_data_attr *a = ai->attr;
	const struct pk_tracing_event *te;
	char buf[64];
	const char *name;

	ai->kind = TP_OTHER;
	if (a->attr.attr.type == PERF_TYPE_SOFTWARE) {
		/* perf trace -F: major-faults / minor-faults */
		if (a->attr.attr.config == PERF_COUNT_SW_PAGE_FAULTS_MAJ)
			ai->kind = TP_FMAJ;
		else if (a->attr.attr.config == PERF_COUNT_SW_PAGE_FAULTS_MIN)
			ai->kind = TP_FMIN;
		return;
	}
	if (a->attr.attr.type != PERF_TYPE_TRACEPOINT)
		return;
	/* the defaults: raw_syscalls' layout on every 64-bit kernel since 2.6.32 */
	ai->id = (struct pk_tp_field){ 8, 8, true };
	te = pk_tp_attrs__format(&t->tp, a->attr.attr.config);
	if (te) {
		if (strcmp(te->system, "raw_syscalls"))
			return;
		name = te->name;
	} else {
		name = pk_data_attr__name(a, buf, sizeof(buf));
		if (strncmp(name, "raw_syscalls:", 13))
			return;
		name += 13;
	}
	if (!strcmp(name, "sys_enter")) {
		ai->kind = TP_ENTER;
		ai->a = (struct pk_tp_field){ 16, 48, false };
		if (te && pk_tp_format__field(te->format, te->format_len, "args", &ai->a) < 0)
			ai->kind = TP_OTHER;
	} else if (!strcmp(name, "sys_exit")) {
		ai->kind = TP_EXIT;
		ai->a = (struct pk_tp_field){ 16, 8, true };
		if (te && pk_tp_format__field(te->format, te->format_len, "ret", &ai->a) < 0)
			ai->kind = TP_OTHER;
	}
	if (te && ai->kind != TP_OTHER && pk_tp_format__field(te->format, te->format_len, "id",
							       &ai->id) < 0)
		ai->kind = TP_OTHER;
	/* only 8-byte longs are read (a 32-bit recording is not decoded) */
	if (ai->id.size != 8 || (ai->kind == TP_ENTER && ai->a.size < 48) ||
	    (ai->kind == TP_EXIT && ai->a.size != 8))
		ai->kind = TP_OTHER;
	if (ai->kind != TP_OTHER)
		t->st.found = true;
}

static struct attr_info *info_of(struct systrace *t, const struct pk_data_attr *a)
{
	bool fresh;
	struct attr_info *ai = pk_tp_attrs__slot(&t->tp, a, sizeof(*ai), &fresh);
	if (fresh)
		classify(t, ai);
	return ai;
}

static uint64_t field_u64(const struct pk_sample *smp, const struct pk_tp_field *f, size_t i)
{
	uint64_t v;
	memcpy(&v, (const char *)smp->raw.data + f->offset + 8 * i, 8);
	return v;
}

static int emit(struct systrace *t, struct pk_syscall_call *c)
{
	struct pk_machine *m = pk_session__machine(t->s);
	const char *comm = m ? pk_machine__comm_of(m, c->tid) : NULL;
	c->comm = comm ? comm : "";
	return t->o->on_call ? t->o->on_call(t->o->ctx, c) : 0;
}

static int fault(struct systrace *t, const struct attr_info *ai, const struct pk_sample *smp)
{
	struct pk_machine *m = pk_session__machine(t->s);
	const char *comm = m ? pk_machine__comm_of(m, smp->tid) : NULL;
	struct pk_syscall_fault f = {
		.pid = smp->pid, .tid = smp->tid, .cpu = smp->cpu, .time = smp->time,
		.ip = smp->ip, .addr = smp->addr, .major = ai->kind == TP_FMAJ,
		.cpumode = (uint8_t)(smp->misc & PERF_RECORD_MISC_CPUMODE_MASK),
		.comm = comm ? comm : "", .machine = m,
	};
	if (f.major)
		t->st.majfaults++;
	else
		t->st.minfaults++;
	return t->o->on_fault ? t->o->on_fault(t->o->ctx, &f) : 0;
}

static int on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *rec)
{
	struct systrace *t = ctx;
	const struct pk_sample *smp;
	struct attr_info *ai;
	struct pending *p;
	int err;

	if (!rec) /* malformed: the reader said why */
		return 0;
	smp = &rec->sample;
	ai = info_of(t, ev->attr);

	if (ai && (ai->kind == TP_FMAJ || ai->kind == TP_FMIN))
		return fault(t, ai, smp);
	if (!ai || ai->kind == TP_OTHER || !smp->raw.data)
		return 0;
	uint64_t need = (uint64_t)ai->a.offset + (ai->kind == TP_ENTER ? 48 : 8);
	if ((uint64_t)ai->id.offset + 8 > smp->raw.size || need > smp->raw.size)
		return 0; /* malformed: too short for its own format */
	long nr = (long)field_u64(smp, &ai->id, 0);

	if (ai->kind == TP_ENTER) {
		t->st.enters++;
		p = slot(t, smp->tid, true);
		if (!p)
			return -ENOMEM;
		if (p->used) { /* the previous call never returned (exit_group, lost exit) */
			struct pk_syscall_call c = p->c;
			p->used = false;
			t->used--;
			if ((err = emit(t, &c)))
				return err;
			p = slot(t, smp->tid, true);
			if (!p)
				return -ENOMEM;
		}
		memset(&p->c, 0, sizeof(p->c));
		p->used = true;
		t->used++;
		p->c.pid = smp->pid;
		p->c.tid = smp->tid;
		p->c.cpu = smp->cpu;
		p->c.nr = nr;
		p->c.entered = true;
		p->c.enter_time = smp->time;
		for (size_t i = 0; i < 6; i++)
			p->c.args[i] = field_u64(smp, &ai->a, i);
		return 0;
	}

	t->st.exits++;
	struct pk_syscall_call c = { 0 };
	p = slot(t, smp->tid, false);
	if (p && p->used) {
		c = p->c;
		/* a tracepoint pair always comes from one thread; a stale enter of another
		 * call is reported on its own */
		p->used = false;
		t->used--;
		/* rt_sigreturn restores registers with orig_ax -1 (no restart): its
		 * sys_exit reports id -1 */
		if (c.nr != nr && nr != -1) {
			if ((err = emit(t, &c)))
				return err;
			memset(&c, 0, sizeof(c));
		}
	}
	if (!c.entered && nr == -1)
		return 0; /* a sigreturn whose enter was not seen */
	if (!c.entered) {
		const char *name = pk_syscall__name(nr);
		c.pid = smp->pid;
		c.tid = smp->tid;
		c.nr = nr;
		c.child_return = name && field_u64(smp, &ai->a, 0) == 0 &&
				 (!strcmp(name, "clone") || !strcmp(name, "clone3") ||
				  !strcmp(name, "fork") || !strcmp(name, "vfork"));
		if (!c.child_return)
			t->st.unpaired++;
	}
	c.cpu = smp->cpu;
	c.returned = true;
	c.exit_time = smp->time;
	c.ret = (int64_t)field_u64(smp, &ai->a, 0);
	return emit(t, &c);
}

static int on_lost(void *ctx, const struct pk_data_event *ev, const struct pk_record *rec)
{
	struct systrace *t = ctx;
	/* LOST only: LOST_SAMPLES also counts the samples a tracepoint filter dropped
	 * (kernel 6.x), which were never meant to be recorded */
	if (rec && ev->hdr->type == PERF_RECORD_LOST)
		t->st.lost += rec->lost.lost;
	return 0;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pk_syscall_call *x = a, *y = b;
	return x->enter_time < y->enter_time ? -1 : x->enter_time > y->enter_time;
}

int pk_systrace__process(struct pk_data_reader *r, const struct pk_systrace_opts *opts,
			 struct pk_systrace_stats *st)
{
	struct systrace t = { .o = opts, .tp.r = r };
	int err;

	if (!r || !opts || !PK_OPTS_VALID(opts, pk_systrace_opts))
		return -EINVAL;
	PK_OPTS(pk_session_opts, so, .reader_thread = opts->reader_thread,
		.machine_opts = opts->machine_opts);
	t.s = pk_session__new(r, &so);
	if (!t.s)
		return -errno;
	PK_OPTS(pk_session_ops, ops, .sample = on_sample, .lost = on_lost);
	err = pk_session__process(t.s, &ops, &t);
	if (err >= 0) {
		/* calls that never returned, in the order they began */
		struct pk_syscall_call *left = malloc((t.used + 1) * sizeof(*left));
		size_t n = 0;
		if (!left) {
			err = -ENOMEM;
		} else {
			for (size_t i = 0; i < t.cap; i++)
				if (t.tab[i].used)
					left[n++] = t.tab[i].c;
			qsort(left, n, sizeof(*left), cmp_pending);
			for (size_t i = 0; i < n && err >= 0; i++)
				err = emit(&t, &left[i]);
			if (err == PK_SESSION_STOP)
				err = 0;
			free(left);
		}
	}
	if (err >= 0 && !t.st.found)
		err = -ENOENT;
	if (st) {
		size_t sz = st->sz && st->sz < sizeof(*st) ? st->sz : sizeof(*st);
		t.st.sz = sz;
		memcpy(st, &t.st, sz);
	}
	pk_session__free(t.s);
	pk_tp_attrs__exit(&t.tp);
	free(t.tab);
	return err < 0 ? err : 0;
}

/* ---- sums ---- */

struct pk_syscall_stats {
	struct pk_syscall_stat *v;
	size_t n, cap;
	uint32_t *tab;          /* open addressing: index + 1 into v, 0 = empty */
	size_t tcap;
};

struct pk_syscall_stats *pk_syscall_stats__new(void)
{
	return calloc(1, sizeof(struct pk_syscall_stats));
}

void pk_syscall_stats__free(struct pk_syscall_stats *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->tab);
	free(s);
}

static size_t stat_hash(uint32_t tid, long nr, size_t cap)
{
	return (size_t)((((uint64_t)tid << 20) ^ (uint64_t)nr) * 0x9e3779b97f4a7c15ULL >> 32) &
	       (cap - 1);
}

static size_t stat_slot(const struct pk_syscall_stat *e, size_t cap)
{
	return stat_hash(e->tid, e->nr, cap);
}

PK_DEFINE_OA_INDEX(stats_index, struct pk_syscall_stat, stat_slot)

static int stats_grow(struct pk_syscall_stats *s)
{
	size_t ncap = s->tcap ? s->tcap * 2 : 256;
	uint32_t *n = stats_index(s->v, s->n, ncap);
	if (!n)
		return -ENOMEM;
	free(s->tab);
	s->tab = n;
	s->tcap = ncap;
	return 0;
}

int pk_syscall_stats__add(struct pk_syscall_stats *s, const struct pk_syscall_call *c)
{
	if (!s || !c)
		return -EINVAL;
	if (c->child_return)
		return 0;
	if ((s->n + 1) * 2 > s->tcap && stats_grow(s))
		return -ENOMEM;
	size_t j = stat_hash(c->tid, c->nr, s->tcap);
	while (s->tab[j] && (s->v[s->tab[j] - 1].tid != c->tid || s->v[s->tab[j] - 1].nr != c->nr))
		j = (j + 1) & (s->tcap - 1);
	if (!s->tab[j]) {
		if (s->n == s->cap) {
			size_t ncap = s->cap ? s->cap * 2 : 64;
			struct pk_syscall_stat *n = realloc(s->v, ncap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			s->v = n;
			s->cap = ncap;
		}
		memset(&s->v[s->n], 0, sizeof(s->v[0]));
		s->v[s->n].pid = c->pid;
		s->v[s->n].tid = c->tid;
		s->v[s->n].nr = c->nr;
		s->tab[j] = (uint32_t)++s->n;
	}
	struct pk_syscall_stat *e = &s->v[s->tab[j] - 1];
	e->calls++;
	if (c->returned && pk_syscall__failed(c->ret))
		e->errors++;
	if (c->comm && c->comm[0]) {
		strncpy(e->comm, c->comm, sizeof(e->comm) - 1);
		e->comm[sizeof(e->comm) - 1] = 0;
	}
	if (c->entered && c->returned && c->exit_time >= c->enter_time) {
		uint64_t d = c->exit_time - c->enter_time;
		if (!e->timed || d < e->min_ns)
			e->min_ns = d;
		if (d > e->max_ns)
			e->max_ns = d;
		e->total_ns += d;
		e->sumsq_ns += (double)d * (double)d;
		e->timed++;
	}
	return 0;
}

size_t pk_syscall_stats__nr(const struct pk_syscall_stats *s)
{
	return s ? s->n : 0;
}

const struct pk_syscall_stat *pk_syscall_stats__get(const struct pk_syscall_stats *s, size_t idx)
{
	return s && idx < s->n ? &s->v[idx] : NULL;
}
