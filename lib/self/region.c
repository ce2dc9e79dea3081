/* SPDX-License-Identifier: MIT */
/*
 * lib/self/region.c - named code regions counted per thread (self.h).
 *
 * Concurrency design (TSan-clean):
 *  - the region table is append-only: a name is interned under g_lock and published with
 *    a release store of its hash slot; lookups are lock-free acquire loads.
 *  - each thread owns its counters (a pk_self_reader on itself, opened lazily by the first
 *    region call of the thread) and its totals. Totals live in 64-region chunks that
 *    never move, published with release stores; only the owner writes them (relaxed
 *    atomic load + store, no lock, no locked instruction); a reporter reads them with
 *    relaxed atomic loads under g_lock. Reset baselines are written and read only under
 *    g_lock, so the owner's hot path never takes a lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/self.h>
#include <perfkit/event.h>
#include <perfkit/export.h>

#define RG_MAX_EV 16
#define RG_CHUNK 64
#define RG_HASH (PK_REGIONS_MAX * 2)
#define DEFAULT_EVENTS "task-clock,context-switches,page-faults"
#define OPTIONAL_EVENTS "cycles,instructions"

#define LD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define ST(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)
#define LDA(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define STR(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

struct pk_region {
	char *name;
	uint32_t id;
};

struct rg_total {
	uint64_t val;   /* sum of scaled deltas */
	uint64_t raw, ena, run;
};

struct rg_slot {
	uint64_t calls;
	struct rg_total ev[RG_MAX_EV];
	/* reset baseline: g_lock only */
	uint64_t base_calls;
	struct rg_total base[RG_MAX_EV];
};

struct rg_frame {
	uint32_t id;
	struct pk_count_value v[RG_MAX_EV];
};

struct rg_thread {
	pid_t tid;
	struct pk_self_reader *reader;        /* owner only */
	int open_err;
	bool supported[RG_MAX_EV];
	struct rg_slot *chunks[PK_REGIONS_MAX / RG_CHUNK]; /* release-published */
	struct rg_frame *stack;          /* owner only */
	int depth, cap;
	struct rg_thread *next;          /* g_lock */
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_ready;                      /* acquire/release */
static int g_nr_ev;
static struct pk_attr g_attrs[RG_MAX_EV];
static char *g_names[RG_MAX_EV];
static struct pk_region *g_regions[PK_REGIONS_MAX];
static uint32_t g_nr_regions;            /* g_lock */
static uint32_t g_hash[RG_HASH];         /* region id + 1, 0 = empty; release-published */
static struct rg_thread *g_threads, **g_threads_tail = &g_threads;
static pthread_key_t g_key;
static char *g_exit_path;
static bool g_exit_json;
static __thread struct rg_thread *tls_thread;

/* ---- initialisation --------------------------------------------------------------------- */

static int parse_into(const char *spec, struct pk_attr *attrs, char **names, int *nr)
{
	struct pk_event_list *list = pk_event_list__new();
	int err;
	if (!list)
		return -ENOMEM;
	err = pk_event_list__parse(list, spec, NULL, NULL);
	for (size_t i = 0; !err && i < pk_event_list__count(list); i++) {
		const struct pk_event_spec *sp = pk_event_list__get(list, i);
		if (*nr >= RG_MAX_EV) {
			err = -E2BIG;
			break;
		}
		attrs[*nr] = *pk_event_spec__attr(sp);
		attrs[*nr].attr.sample_period = 0;
		attrs[*nr].attr.freq = 0;
		if (!(names[*nr] = strdup(pk_event_spec__name(sp)))) {
			err = -ENOMEM;
			break;
		}
		(*nr)++;
	}
	pk_event_list__free(list);
	return err;
}

static void exit_report(void)
{
	FILE *f;
	bool close_it = false;
	if (!g_exit_path)
		return;
	if (!strcmp(g_exit_path, "stderr")) {
		f = stderr;
	} else if (!strcmp(g_exit_path, "stdout")) {
		f = stdout;
	} else {
		if (!(f = fopen(g_exit_path, "w")))
			return;
		close_it = true;
	}
	pk_regions__report(f, g_exit_json ? PK_REGION_JSON : PK_REGION_TABLE);
	if (close_it)
		fclose(f);
	else
		fflush(f);
}

static void thread_destructor(void *p);

/* g_lock held. */
static int do_init(const char *spec, const struct pk_regions_opts *opts, bool use_env)
{
	/* The environment is the documented convenience of a program that never calls
	 * pk_regions__init (or asks for it with opts.use_env): the user configures an
	 * instrumented program without rebuilding it. */
	const char *env = use_env ? getenv("PERFKIT_EVENTS") : NULL;
	const char *rep = PK_OPTS_GET(opts, report_at_exit, NULL);
	int err, nr = 0;

	if (!spec && env && *env)
		spec = env;
	if (spec) {
		err = parse_into(spec, g_attrs, g_names, &nr);
	} else {
		err = parse_into(DEFAULT_EVENTS, g_attrs, g_names, &nr);
		if (!err) {
			/* cycles and instructions only where the machine has them */
			struct pk_attr opt[RG_MAX_EV];
			char *on[RG_MAX_EV] = { 0 };
			int nopt = 0;
			if (parse_into(OPTIONAL_EVENTS, opt, on, &nopt) == 0) {
				PK_OPTS(pk_self_reader_opts, ro, .separate = true, .no_rdpmc = true);
				struct pk_self_reader *probe =
					pk_self_reader__open_attrs(opt, (const char *const *)on, nopt, &ro);
				for (int i = 0; i < nopt; i++) {
					if (probe && pk_self_reader__supported(probe, i) && nr < RG_MAX_EV) {
						g_attrs[nr] = opt[i];
						g_names[nr++] = on[i];
					} else {
						free(on[i]);
					}
				}
				pk_self_reader__free(probe);
			} else {
				for (int i = 0; i < nopt; i++)
					free(on[i]);
			}
		}
	}
	if (!err && nr == 0)
		err = -EINVAL;
	if (err) {
		for (int i = 0; i < nr; i++) {
			free(g_names[i]);
			g_names[i] = NULL;
		}
		return err;
	}
	g_nr_ev = nr;
	if (!rep && use_env) {
		const char *e = getenv("PERFKIT_REGION_REPORT");
		if (e && *e) {
			size_t l = strlen(e);
			rep = e;
			g_exit_json = l > 5 && !strcmp(e + l - 5, ".json");
		}
	} else {
		g_exit_json = PK_OPTS_GET(opts, json_at_exit, false);
	}
	if (pthread_key_create(&g_key, thread_destructor) != 0)
		return -EAGAIN;
	if (rep) {
		g_exit_path = strdup(rep);
		if (g_exit_path)
			atexit(exit_report);
	}
	STR(g_ready, 1);
	return 0;
}

PK_API int pk_regions__init(const char *spec, const struct pk_regions_opts *opts)
{
	int err;
	if (!PK_OPTS_VALID(opts, pk_regions_opts))
		return pk_err(-EINVAL);
	pthread_mutex_lock(&g_lock);
	err = LDA(g_ready) ? -EBUSY : do_init(spec, opts, PK_OPTS_GET(opts, use_env, false));
	pthread_mutex_unlock(&g_lock);
	return err < 0 ? pk_err(err) : 0;
}

static int ensure_init(void)
{
	int err = 0;
	if (LDA(g_ready))
		return 0;
	pthread_mutex_lock(&g_lock);
	if (!LDA(g_ready))
		err = do_init(NULL, NULL, true);
	pthread_mutex_unlock(&g_lock);
	return err;
}

PK_API int pk_regions__nr_events(void)
{
	return LDA(g_ready) ? g_nr_ev : 0;
}

PK_API const char *pk_regions__event_name(int idx)
{
	return LDA(g_ready) && idx >= 0 && idx < g_nr_ev ? g_names[idx] : NULL;
}

/* ---- region names ------------------------------------------------------------------------ */

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

PK_API struct pk_region *pk_region__get(const char *name)
{
	uint32_t h, i;
	struct pk_region *r = NULL;

	if (!name || !*name)
		return pk_err_ptr(-EINVAL);
	h = hash_str(name);
	for (i = 0; i < RG_HASH; i++) {
		uint32_t v = LDA(g_hash[(h + i) % RG_HASH]);
		if (!v)
			break;
		if (!strcmp(g_regions[v - 1]->name, name))
			return g_regions[v - 1];
	}
	/* not there: insert under the lock (re-probing: another thread may have won) */
	pthread_mutex_lock(&g_lock);
	for (i = 0; i < RG_HASH; i++) {
		uint32_t *slot = &g_hash[(h + i) % RG_HASH];
		uint32_t v = LD(*slot);
		if (v && !strcmp(g_regions[v - 1]->name, name)) {
			r = g_regions[v - 1];
			break;
		}
		if (v)
			continue;
		if (g_nr_regions >= PK_REGIONS_MAX) {
			errno = ENOSPC;
			break;
		}
		if (!(r = calloc(1, sizeof(*r))) || !(r->name = strdup(name))) {
			free(r);
			r = NULL;
			errno = ENOMEM;
			break;
		}
		r->id = g_nr_regions++;
		g_regions[r->id] = r;
		STR(*slot, r->id + 1);
		break;
	}
	pthread_mutex_unlock(&g_lock);
	return r;
}

PK_API const char *pk_region__name(const struct pk_region *r)
{
	return r ? r->name : NULL;
}

/* ---- per-thread state -------------------------------------------------------------------- */

static bool thread_has_calls(struct rg_thread *t)
{
	for (size_t c = 0; c < PK_ARRAY_SIZE(t->chunks); c++) {
		struct rg_slot *ch = LDA(t->chunks[c]);
		for (int k = 0; ch && k < RG_CHUNK; k++)
			if (LD(ch[k].calls))
				return true;
	}
	return false;
}

static void free_thread(struct rg_thread *t)
{
	for (size_t c = 0; c < PK_ARRAY_SIZE(t->chunks); c++)
		free(t->chunks[c]);
	free(t->stack);
	free(t);
}

static void thread_close(struct rg_thread *t)
{
	pk_self_reader__free(t->reader);
	t->reader = NULL;
	t->open_err = -ESRCH;
	free(t->stack);
	t->stack = NULL;
	t->depth = t->cap = 0;
	pthread_mutex_lock(&g_lock);
	if (!thread_has_calls(t)) {
		/* nothing to report: unlink and free */
		for (struct rg_thread **pp = &g_threads; *pp; pp = &(*pp)->next) {
			if (*pp != t)
				continue;
			*pp = t->next;
			if (g_threads_tail == &t->next)
				g_threads_tail = pp;
			break;
		}
		free_thread(t);
	}
	pthread_mutex_unlock(&g_lock);
}

static void thread_destructor(void *p)
{
	struct rg_thread *t = p;
	if (t)
		thread_close(t);
	tls_thread = NULL;
}

PK_API void pk_regions__thread_exit(void)
{
	struct rg_thread *t = tls_thread;
	if (!t)
		return;
	pthread_setspecific(g_key, NULL);
	tls_thread = NULL;
	thread_close(t);
}

static struct rg_thread *thread_get(int *err)
{
	struct rg_thread *t = tls_thread;
	if (t)
		return t;
	if ((*err = ensure_init()) < 0)
		return NULL;
	if (!(t = calloc(1, sizeof(*t)))) {
		*err = -ENOMEM;
		return NULL;
	}
	t->tid = (pid_t)syscall(SYS_gettid);
	t->reader = pk_self_reader__open_attrs(g_attrs, (const char *const *)g_names, g_nr_ev, NULL);
	if (!t->reader)
		t->open_err = -errno;
	for (int i = 0; i < g_nr_ev; i++)
		t->supported[i] = pk_self_reader__supported(t->reader, i);
	pthread_mutex_lock(&g_lock);
	*g_threads_tail = t;
	g_threads_tail = &t->next;
	pthread_mutex_unlock(&g_lock);
	tls_thread = t;
	pthread_setspecific(g_key, t);
	return t;
}

static struct rg_slot *slot_get(struct rg_thread *t, uint32_t id)
{
	struct rg_slot **cp = &t->chunks[id / RG_CHUNK];
	struct rg_slot *ch = LD(*cp); /* we are the only writer of *cp */
	if (!ch) {
		if (!(ch = calloc(RG_CHUNK, sizeof(*ch))))
			return NULL;
		STR(*cp, ch);
	}
	return &ch[id % RG_CHUNK];
}

/* ---- begin / end ------------------------------------------------------------------------- */

PK_API int pk_region__begin(struct pk_region *r)
{
	struct rg_thread *t;
	int err = 0;

	if (!r)
		return pk_err(-EINVAL);
	if (!(t = thread_get(&err)))
		return pk_err(err);
	if (!t->reader)
		return pk_err(t->open_err);
	if (t->depth == t->cap) {
		int cap = t->cap ? t->cap * 2 : 8;
		struct rg_frame *n = realloc(t->stack, (size_t)cap * sizeof(*n));
		if (!n)
			return pk_err(-ENOMEM);
		t->stack = n;
		t->cap = cap;
	}
	struct rg_frame *f = &t->stack[t->depth];
	/* make sure the slot exists now: end must not fail after the read */
	if (!slot_get(t, r->id))
		return pk_err(-ENOMEM);
	f->id = r->id;
	if ((err = pk_self_reader__read(t->reader, f->v, RG_MAX_EV)) < 0)
		return err;
	t->depth++;
	return 0;
}

PK_API int pk_region__end(struct pk_region *r)
{
	struct pk_count_value now[RG_MAX_EV];
	struct rg_thread *t = tls_thread;
	struct rg_frame *f;
	struct rg_slot *s;
	int err;

	if (!r || !t || !t->depth || t->stack[t->depth - 1].id != r->id)
		return pk_err(-EINVAL);
	if ((err = pk_self_reader__read(t->reader, now, RG_MAX_EV)) < 0)
		return err;
	f = &t->stack[--t->depth];
	s = &t->chunks[r->id / RG_CHUNK][r->id % RG_CHUNK];
	for (int i = 0; i < g_nr_ev; i++) {
		struct rg_total *tot = &s->ev[i];
		uint64_t dv = now[i].val - f->v[i].val, de = now[i].ena - f->v[i].ena;
		uint64_t dr = now[i].run - f->v[i].run;
		struct pk_count c;
		if (!t->supported[i])
			continue;
		pk_count__scale(dv, de, dr, &c);
		ST(tot->val, LD(tot->val) + (c.status == PK_COUNT_NOT_COUNTED ? 0 : c.val));
		ST(tot->raw, LD(tot->raw) + dv);
		ST(tot->ena, LD(tot->ena) + de);
		ST(tot->run, LD(tot->run) + dr);
	}
	ST(s->calls, LD(s->calls) + 1);
	return 0;
}

PK_API int pk_region_begin(const char *name)
{
	struct pk_region *r = pk_region__get(name);
	return r ? pk_region__begin(r) : -errno;
}

PK_API int pk_region_end(const char *name)
{
	struct pk_region *r = pk_region__get(name);
	return r ? pk_region__end(r) : -errno;
}

/* ---- reports ----------------------------------------------------------------------------- */

static void make_counts(const struct rg_thread *t, const struct rg_slot *s, struct pk_count *out,
			uint64_t *calls)
{
	*calls = LD(s->calls) - s->base_calls;
	for (int i = 0; i < g_nr_ev; i++) {
		struct pk_count *c = &out[i];
		memset(c, 0, sizeof(*c));
		if (!t->supported[i]) {
			c->status = PK_COUNT_NOT_SUPPORTED;
			continue;
		}
		c->val = LD(s->ev[i].val) - s->base[i].val;
		c->raw = LD(s->ev[i].raw) - s->base[i].raw;
		c->ena = LD(s->ev[i].ena) - s->base[i].ena;
		c->run = LD(s->ev[i].run) - s->base[i].run;
		c->running_pct = c->ena ? 100.0 * (double)c->run / (double)c->ena : 100.0;
		if (c->running_pct > 100.0)
			c->running_pct = 100.0;
		c->status = !c->run ? PK_COUNT_NOT_COUNTED :
			    c->run < c->ena ? PK_COUNT_SCALED : PK_COUNT_OK;
	}
}

/* g_lock held. */
static int foreach_locked(pk_region_cb cb, void *ctx)
{
	struct pk_count counts[RG_MAX_EV];
	for (uint32_t id = 0; id < g_nr_regions; id++) {
		for (struct rg_thread *t = g_threads; t; t = t->next) {
			struct rg_slot *ch = LDA(t->chunks[id / RG_CHUNK]);
			struct pk_region_stat st;
			int ret;
			if (!ch)
				continue;
			make_counts(t, &ch[id % RG_CHUNK], counts, &st.calls);
			if (!st.calls)
				continue;
			st.region = g_regions[id]->name;
			st.tid = t->tid;
			st.nr = g_nr_ev;
			st.names = (const char *const *)g_names;
			st.counts = counts;
			if ((ret = cb(&st, ctx)) != 0)
				return ret;
		}
	}
	return 0;
}

PK_API int pk_regions__foreach(pk_region_cb cb, void *ctx)
{
	int ret;
	if (!cb)
		return pk_err(-EINVAL);
	if (!LDA(g_ready))
		return 0;
	pthread_mutex_lock(&g_lock);
	ret = foreach_locked(cb, ctx);
	pthread_mutex_unlock(&g_lock);
	return ret;
}

PK_API void pk_regions__reset(void)
{
	if (!LDA(g_ready))
		return;
	pthread_mutex_lock(&g_lock);
	for (struct rg_thread *t = g_threads; t; t = t->next) {
		for (size_t c = 0; c < PK_ARRAY_SIZE(t->chunks); c++) {
			struct rg_slot *ch = LDA(t->chunks[c]);
			for (int k = 0; ch && k < RG_CHUNK; k++) {
				struct rg_slot *s = &ch[k];
				s->base_calls = LD(s->calls);
				for (int i = 0; i < g_nr_ev; i++) {
					s->base[i].val = LD(s->ev[i].val);
					s->base[i].raw = LD(s->ev[i].raw);
					s->base[i].ena = LD(s->ev[i].ena);
					s->base[i].run = LD(s->ev[i].run);
				}
			}
		}
	}
	pthread_mutex_unlock(&g_lock);
}

struct report_ctx {
	FILE *f;
	enum pk_region_format fmt;
	const char *cur;          /* region of the rows being written */
	uint64_t calls;
	struct pk_count sum[RG_MAX_EV];
	bool any_scaled;
	bool first_region, first_thread;
};

static void json_str(FILE *f, const char *s)
{
	pk_json__write_str(f, s, 0);
}

static const char *status_name(enum pk_count_status s)
{
	switch (s) {
	case PK_COUNT_OK: return "ok";
	case PK_COUNT_SCALED: return "scaled";
	case PK_COUNT_NOT_COUNTED: return "not counted";
	default: return "not supported";
	}
}

static void json_counts(FILE *f, const struct pk_count *c)
{
	fputc('{', f);
	for (int i = 0; i < g_nr_ev; i++) {
		if (i)
			fputc(',', f);
		json_str(f, g_names[i]);
		fprintf(f, ":{\"value\":%llu,\"raw\":%llu,\"enabled\":%llu,\"running\":%llu,"
			   "\"running_pct\":%.2f,\"status\":\"%s\"}",
			(unsigned long long)c[i].val, (unsigned long long)c[i].raw,
			(unsigned long long)c[i].ena, (unsigned long long)c[i].run, c[i].running_pct,
			status_name(c[i].status));
	}
	fputc('}', f);
}

static void table_row(struct report_ctx *rc, const char *region, const char *thread,
		      uint64_t calls, const struct pk_count *c)
{
	fprintf(rc->f, "%-20s %10s %10llu", region, thread, (unsigned long long)calls);
	for (int i = 0; i < g_nr_ev; i++) {
		char cell[40];
		if (c[i].status == PK_COUNT_NOT_SUPPORTED)
			pk_snprintf(cell, sizeof(cell), "<not supported>");
		else if (c[i].status == PK_COUNT_NOT_COUNTED)
			pk_snprintf(cell, sizeof(cell), "<not counted>");
		else
			pk_snprintf(cell, sizeof(cell), "%llu%s", (unsigned long long)c[i].val,
				    c[i].status == PK_COUNT_SCALED ? "*" : "");
		if (c[i].status == PK_COUNT_SCALED)
			rc->any_scaled = true;
		fprintf(rc->f, " %18s", cell);
	}
	fputc('\n', rc->f);
}

static void sum_add(struct pk_count *sum, const struct pk_count *c)
{
	for (int i = 0; i < g_nr_ev; i++) {
		if (c[i].status == PK_COUNT_NOT_SUPPORTED)
			continue;
		if (sum[i].status == PK_COUNT_NOT_SUPPORTED)
			memset(&sum[i], 0, sizeof(sum[i]));
		sum[i].val += c[i].val;
		sum[i].raw += c[i].raw;
		sum[i].ena += c[i].ena;
		sum[i].run += c[i].run;
	}
}

static void sum_finish(struct pk_count *sum)
{
	for (int i = 0; i < g_nr_ev; i++) {
		struct pk_count *c = &sum[i];
		if (c->status == PK_COUNT_NOT_SUPPORTED)
			continue;
		c->running_pct = c->ena ? 100.0 * (double)c->run / (double)c->ena : 100.0;
		if (c->running_pct > 100.0)
			c->running_pct = 100.0;
		c->status = !c->run ? PK_COUNT_NOT_COUNTED :
			    c->run < c->ena ? PK_COUNT_SCALED : PK_COUNT_OK;
	}
}

static void flush_region(struct report_ctx *rc)
{
	if (!rc->cur)
		return;
	sum_finish(rc->sum);
	if (rc->fmt == PK_REGION_JSON) {
		fprintf(rc->f, "],\"total\":{\"calls\":%llu,\"counts\":", (unsigned long long)rc->calls);
		json_counts(rc->f, rc->sum);
		fputs("}}", rc->f);
	} else {
		table_row(rc, rc->cur, "total", rc->calls, rc->sum);
	}
	rc->cur = NULL;
}

static int report_cb(const struct pk_region_stat *st, void *ctx)
{
	struct report_ctx *rc = ctx;
	if (!rc->cur || strcmp(rc->cur, st->region)) {
		flush_region(rc);
		rc->cur = st->region;
		rc->calls = 0;
		for (int i = 0; i < g_nr_ev; i++) {
			memset(&rc->sum[i], 0, sizeof(rc->sum[i]));
			rc->sum[i].status = PK_COUNT_NOT_SUPPORTED;
		}
		if (rc->fmt == PK_REGION_JSON) {
			fputs(rc->first_region ? "\n  {\"name\":" : ",\n  {\"name\":", rc->f);
			json_str(rc->f, st->region);
			fputs(",\"threads\":[", rc->f);
		}
		rc->first_region = false;
		rc->first_thread = true;
	}
	rc->calls += st->calls;
	sum_add(rc->sum, st->counts);
	if (rc->fmt == PK_REGION_JSON) {
		fprintf(rc->f, "%s{\"tid\":%d,\"calls\":%llu,\"counts\":", rc->first_thread ? "" : ",",
			(int)st->tid, (unsigned long long)st->calls);
		json_counts(rc->f, st->counts);
		fputc('}', rc->f);
	} else {
		char tid[16];
		pk_snprintf(tid, sizeof(tid), "%d", (int)st->tid);
		table_row(rc, st->region, tid, st->calls, st->counts);
	}
	rc->first_thread = false;
	return 0;
}

PK_API int pk_regions__report(FILE *f, enum pk_region_format fmt)
{
	struct report_ctx rc = { .f = f, .fmt = fmt, .first_region = true };

	if (!f)
		return pk_err(-EINVAL);
	if (!LDA(g_ready)) {
		if (fmt == PK_REGION_JSON)
			fputs("{\"events\":[],\"regions\":[]}\n", f);
		return ferror(f) ? pk_err(-EIO) : 0;
	}
	pthread_mutex_lock(&g_lock);
	if (fmt == PK_REGION_JSON) {
		fputs("{\"events\":[", f);
		for (int i = 0; i < g_nr_ev; i++) {
			if (i)
				fputc(',', f);
			json_str(f, g_names[i]);
		}
		fputs("],\"regions\":[", f);
	} else {
		fprintf(f, "%-20s %10s %10s", "region", "thread", "calls");
		for (int i = 0; i < g_nr_ev; i++)
			fprintf(f, " %18s", g_names[i]);
		fputc('\n', f);
	}
	foreach_locked(report_cb, &rc);
	flush_region(&rc);
	if (fmt == PK_REGION_JSON)
		fputs("\n]}\n", f);
	else if (rc.any_scaled)
		fputs("* scaled: the counters were multiplexed (value = raw x enabled / running)\n", f);
	pthread_mutex_unlock(&g_lock);
	return ferror(f) ? pk_err(-EIO) : 0;
}
