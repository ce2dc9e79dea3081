/* SPDX-License-Identifier: MIT */
/*
 * tool/top-engine.c - the live half of `perfkit top`. A pk_recorder opens the targets and
 * writes the pipe format into a pipe on the drain thread (it never resolves a symbol, so
 * the rings are drained however long a symbol load takes); the aggregation thread reads
 * the pipe through pk_report__process_live (the session's machine model follows
 * COMM/MMAP/EXIT as report does; symbols load lazily, once per DSO) and, at each refresh,
 * copies the sorted entries into a snapshot for the screen, then decays them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "annotate-kernel.h"
#include "builtin.h"
#include "top.h"

#define MAX_CC_ROWS 256
#define MAX_ANN_BYTES 65536

struct ann_state {
	char *dso_long, *sym;           /* what is asked */
	struct pk_dso *d;
	uint64_t start, size;
	uint64_t kbias;                 /* kernel: sampled address - the image's shown */
	struct top_ann *proto;          /* lines without counts */
	uint64_t *counts;
};

struct top_engine {
	struct top_opts *o;
	struct pk_recorder *r;
	struct pk_workload *w;
	struct pk_report *rep;
	int pfd[2];
	pthread_t drain_th, agg_th;
	bool drain_started, agg_started;
	pthread_mutex_t mu;
	struct top_snap *ready;
	atomic_bool stop, kick, zero, done, round_wanted, drained_once;
	atomic_long rows;               /* top_engine__set_rows */
	char *ann_dso, *ann_sym;        /* asked by the screen (mu) */
	bool ann_changed;
	struct ann_state ann;           /* the aggregation thread's */
	struct pk_annotate_kcode *kc;   /* the kernel's code, found at the first kernel symbol */
	uint64_t last_ns, next_ns, new_samples, lost, lost_samples, throttle, samples_all;
	int wstatus;
	bool waited;
	struct pk_machine_opts mo;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

/* ---- annotate (aggregation thread) ---- */

static void ann_reset(struct ann_state *a)
{
	free(a->dso_long), free(a->sym), free(a->counts);
	top_ann__free(a->proto);
	memset(a, 0, sizeof(*a));
}

static size_t ann_len(const struct ann_state *a)
{
	return a->size < MAX_ANN_BYTES ? a->size : MAX_ANN_BYTES;
}

/* The running kernel's code, chosen once as annotate --stdio chooses it: true with its
 * bias, else false with *why (malloc'd) its reasons per cause and the fix */
static bool kernel_code(struct top_engine *e, const char *sym, uint64_t *bias, char **why)
{
	if (!e->kc) {
		PK_OPTS(pk_annotate_kcode_opts, ko, .vmlinux = e->o->vmlinux, .kcore = tool_kcore_path());
		e->kc = pk_annotate_kcode__open(pk_report__machine(e->rep), &ko);
		if (!e->kc) {
			*why = strdup("out of memory");
			return false;
		}
	}
	struct pk_annotate_kernel k = { .sz = sizeof(k) };
	pk_annotate_kcode__info(e->kc, &k);
	if (k.source != PK_ANNOTATE_KSRC_NONE) {
		*bias = k.bias;
		return true;
	}
	*why = tool_ann_kernel_msg(&k, sym, "running");
	return false;
}

static void ann_setup(struct top_engine *e, const char *dso_long, const char *sym)
{
	struct ann_state *a = &e->ann;
	ann_reset(a);
	if (!dso_long || !sym)
		return;
	a->dso_long = strdup(dso_long);
	a->sym = strdup(sym);
	a->proto = top_ann__new(dso_long, sym);
	if (!a->dso_long || !a->sym || !a->proto) {
		ann_reset(a);
		return;
	}
	char why[160] = "";
	bool kmain = !strcmp(dso_long, "[kernel.kallsyms]");
	uint16_t mach = 0;
	long n = 0;
	uint8_t *buf = NULL;
	a->d = pk_machine__dso(pk_report__machine(e->rep), dso_long);
	if (!a->d || pk_dso__symbol_addr(a->d, sym, &a->start) ||
	    !pk_dso__symbol(a->d, a->start, &a->start, &a->size) || !a->size) {
		snprintf(why, sizeof(why), "no symbol '%s' in %s", sym, dso_long);
	} else if (!(buf = malloc(MAX_ANN_BYTES))) {
		snprintf(why, sizeof(why), "out of memory");
	} else if (kmain && !(kmain = kernel_code(e, sym, &a->kbias, &a->proto->error))) {
		/* no code of the running kernel: annotate --stdio's reasons, on the view */
	} else if ((n = kmain ? pk_annotate_kcode__read(e->kc, a->start, buf, ann_len(a), &mach)
			      : pk_dso__read(a->d, a->start, buf, ann_len(a), &mach)) < 0) {
		snprintf(why, sizeof(why), "cannot read the code of %s: %s%s", sym, pk_strerror((int)n),
			 n != -EOPNOTSUPP ? "" : pk_dso__is_kernel(a->d) ?
			 " (the code of kernel modules is not supported yet)" :
			 " (JIT code is not disassembled)");
	} else {
		PK_OPTS(pk_annotate_disasm_opts, dop, .e_machine = mach, .dso = a->d,
			.dso_bias = a->kbias);
		/* the source lines as annotate --stdio shows them (read here, on this thread) */
		top_ann__source(a->proto, a->d, a->start, a->size, a->kbias);
		/* a kernel function shows the image's addresses, as annotate --stdio */
		int err = pk_annotate__disasm_bytes(buf, (size_t)n, a->start - a->kbias, &dop,
						    top_ann__add_insn, a->proto);
		top_ann__source_end(a->proto);
		if (err < 0 && !a->proto->nr)
			snprintf(why, sizeof(why), "cannot disassemble %s: %s", sym, pk_strerror(err));
		a->counts = calloc(a->proto->nr + 1, sizeof(*a->counts));
	}
	free(buf);
	if (why[0] && !a->proto->error)
		a->proto->error = strdup(why);
}

static void ann_count(struct top_engine *e, const struct pk_sample *s)
{
	struct ann_state *a = &e->ann;
	struct pk_addr_loc loc;
	if (!a->counts || !a->proto->nr)
		return;
	if (pk_machine__resolve(pk_report__machine(e->rep), s->pid, s->tid, s->ip, s->cpumode,
				&loc) || loc.dso != a->d || loc.sym_start != a->start)
		return;
	loc.dso_addr -= a->kbias;
	/* the instruction at or before the address */
	size_t lo = 0, hi = a->proto->nr;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (a->proto->lines[mid].addr <= loc.dso_addr)
			lo = mid;
		else
			hi = mid;
	}
	/* (a source line shares its instruction's address and comes before it) */
	if (!a->proto->lines[lo].src)
		a->counts[lo]++;
}

static struct top_ann *ann_copy(struct ann_state *a)
{
	if (!a->proto)
		return NULL;
	struct top_ann *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->dso = xstrdup(a->proto->dso);
	t->sym = xstrdup(a->proto->sym);
	t->error = xstrdup(a->proto->error);
	t->note = xstrdup(a->proto->note);
	t->has_src = a->proto->has_src;
	t->lines = calloc(a->proto->nr + 1, sizeof(*t->lines));
	for (size_t i = 0; t->lines && i < a->proto->nr; i++) {
		t->lines[i] = a->proto->lines[i];
		t->lines[i].text = xstrdup(a->proto->lines[i].text);
		t->lines[i].samples = a->counts ? a->counts[i] : 0;
		t->total += t->lines[i].samples;
		t->nr = i + 1;
	}
	return t;
}

/* ---- snapshots (aggregation thread) ---- */

static struct top_snap *snapshot(struct top_engine *e, uint64_t now)
{
	struct pk_report *rep = e->rep;
	struct top_snap *s;
	if (pk_report__finish(rep))
		return NULL;
	long rows = atomic_load(&e->rows);
	struct top_view v = { .hide_kernel = e->o->hide_kernel, .hide_user = e->o->hide_user,
			      .zoom_tid = -1 };
	s = top_snap__build_some(rep, top_main_hist(rep), MAX_CC_ROWS, true, rows ? &v : NULL,
				 rows > 0 ? (size_t)rows : 0);
	if (!s)
		return NULL;
	s->new_samples = e->new_samples;
	s->secs = (double)(now - e->last_ns) / 1e9;
	s->lost = e->lost, s->lost_samples = e->lost_samples, s->throttle = e->throttle;
	s->samples_all = e->samples_all;
	s->ended = atomic_load(&e->done);
	s->ann = ann_copy(&e->ann);
	return s;
}

/* ---- the aggregation thread's callbacks ---- */

static int on_round(void *ctx, struct pk_report *rep)
{
	struct top_engine *e = ctx;
	uint64_t now = now_ns();
	pthread_mutex_lock(&e->mu);
	bool ann_changed = e->ann_changed;
	char *ad = e->ann_dso, *as = e->ann_sym;
	e->ann_dso = e->ann_sym = NULL;
	e->ann_changed = false;
	pthread_mutex_unlock(&e->mu);
	if (ann_changed)
		ann_setup(e, ad, as);
	free(ad), free(as);
	if (now < e->next_ns && !atomic_exchange(&e->kick, false) && !ann_changed)
		return atomic_load(&e->stop) ? PK_SESSION_STOP : 0;
	struct top_snap *s = snapshot(e, now);
	if (s) {
		pthread_mutex_lock(&e->mu);
		top_snap__free(e->ready);
		e->ready = s;
		pthread_mutex_unlock(&e->mu);
	}
	bool zero = atomic_load(&e->zero);
	pk_report__decay(rep, zero ? 0 : 7, 8);
	if (e->ann.counts)
		for (size_t i = 0; i < e->ann.proto->nr; i++)
			e->ann.counts[i] = zero ? 0 : e->ann.counts[i] * 7 / 8;
	e->new_samples = 0;
	e->last_ns = now;
	e->next_ns = now + (uint64_t)(e->o->delay * 1e9);
	/* the symbol tables of objects no process has mapped for ~4 s (they are read again
	 * if they come back) and the kallsyms cache's pages: system-wide, new programs come
	 * all the time (the other jobs' builds and tests) and each one's tables were kept
	 * to the end */
	pk_machine__trim(pk_report__machine(rep), e->o->delay >= 4 ? 0 : (unsigned)(4 / e->o->delay));
	/* what the refresh freed (entries decayed to nothing, the previous snapshot, a
	 * symbol load's scratch) back to the system: glibc keeps freed pages of its arenas
	 * otherwise, and the peak of a long run would be the sum of its bursts */
	malloc_trim(0);
	return 0;
}

static int on_sample(void *ctx, struct pk_report *rep, const struct pk_data_event *ev,
		     const struct pk_sample *s)
{
	struct top_engine *e = ctx;
	(void)rep;
	(void)ev;
	e->new_samples++;
	e->samples_all++;
	if (e->ann.counts)
		ann_count(e, s);
	return 0;
}

static int on_record(void *ctx, struct pk_report *rep, const struct pk_data_event *ev,
		     const struct pk_record *rec)
{
	struct top_engine *e = ctx;
	(void)rep;
	if (!rec)
		return 0;
	if (ev->hdr->type == PERF_RECORD_LOST)
		e->lost += rec->lost.lost;
	else if (ev->hdr->type == PERF_RECORD_LOST_SAMPLES)
		e->lost_samples += rec->lost_samples.lost;
	else if (ev->hdr->type == PERF_RECORD_THROTTLE)
		e->throttle++;
	return 0;
}

static void block_signals(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static void *agg_main(void *arg)
{
	struct top_engine *e = arg;
	block_signals();
	/* no bytes at all: the events could not be opened (nothing to say about the pipe) */
	struct pollfd pf = { .fd = e->pfd[0], .events = POLLIN };
	while (poll(&pf, 1, -1) < 0 && errno == EINTR)
		;
	struct pk_data_reader *rd = (pf.revents & POLLIN) ? pk_data_reader__fdopen(e->pfd[0], NULL)
							  : NULL;
	if (rd) {
		PK_OPTS(pk_report_live_ops, ops, .round = on_round, .sample = on_sample,
			.record = on_record);
		e->last_ns = now_ns();
		e->next_ns = e->last_ns + 200000000ULL; /* the first screen soon */
		pk_report__process_live(e->rep, rd, &ops, e);
		pk_data_reader__free(rd);
	}
	/* drain what is left so that the recorder never blocks on a full pipe */
	char buf[4096];
	while (read(e->pfd[0], buf, sizeof(buf)) > 0)
		;
	atomic_store(&e->done, true);
	return NULL;
}

static void *drain_main(void *arg)
{
	struct top_engine *e = arg;
	static const struct perf_event_header round = { .type = PK_RECORD_FINISHED_ROUND, .size = 8 };
	block_signals();
	while (!atomic_load(&e->stop)) {
		/* once the targets have gone, only rounds of our own (no busy loop on hung-up
		 * rings) keep the screen refreshing */
		bool done = atomic_load(&e->done);
		int n = done ? (poll(NULL, 0, 100), 0) : pk_recorder__drain(e->r, 100);
		if (n < 0)
			break;
		if (n == 1)
			atomic_store(&e->drained_once, true);
		if (n == PK_RECORDER_HUNGUP)
			atomic_store(&e->done, true);
		if (e->w && !e->waited && pk_workload__wait(e->w, false, &e->wstatus) == 0) {
			e->waited = true;
			atomic_store(&e->done, true);
		}
		/* nothing came: a round of our own (between the writer's flushed rounds), so that
		 * an idle target still refreshes */
		if (n != 1 && atomic_load(&e->drained_once) &&
		    write(e->pfd[1], &round, sizeof(round)) < 0)
			break;
	}
	pk_recorder__finish(e->r);
	close(e->pfd[1]);
	e->pfd[1] = -1;
	return NULL;
}

/* ---- start and stop ---- */

static void on_notice(const struct pk_recorder_notice *n, void *ctx)
{
	(void)ctx;
	if (n->kind == PK_RECORDER_CYCLES_FALLBACK)
		fprintf(stderr, "perfkit top: notice: '%s' is not supported here (no hardware PMU); "
			"sampling cpu-clock instead\n", n->name);
	else if (n->kind == PK_RECORDER_FREQ_CLAMPED)
		tool_warn("-F %" PRIu64 " exceeds perf_event_max_sample_rate; using %" PRIu64 " Hz",
			  n->asked, n->used);
	else if (n->kind == PK_RECORDER_PAGES_REDUCED)
		fprintf(stderr, "perfkit top: notice: ring buffers reduced to %" PRIu64
			" pages (locked-memory limit)\n", n->used);
}

struct top_engine *top_engine__start(struct top_opts *o, int *status)
{
	struct top_engine *e = calloc(1, sizeof(*e));
	*status = 1;
	if (!e) {
		tool_error("out of memory");
		return NULL;
	}
	e->o = o;
	e->pfd[0] = e->pfd[1] = -1;
	pthread_mutex_init(&e->mu, NULL);
	atomic_store(&e->zero, o->zero);
	if (pipe2(e->pfd, O_CLOEXEC)) {
		tool_error("cannot create a pipe: %s", strerror(errno));
		goto fail;
	}
	fcntl(e->pfd[1], F_SETPIPE_SZ, 1 << 20); /* the most an unprivileged user gets */
	/* code addresses only: every object top meets keeps its tables until the end */
	e->mo = *tool_machine_opts();
	e->mo.no_data_symbols = true;
	e->mo.close_files = true;
	PK_OPTS(pk_report_opts, ro, .sort = o->nr_sort ? o->sort : NULL, .nr_sort = o->nr_sort,
		.callgraph = o->ro.callgraph != PK_RECORDER_CG_NONE, .lazy_callchains = true,
		.host = true, .comms = o->comms, .nr_comms = o->nr_comms, .dsos = o->dsos,
		.nr_dsos = o->nr_dsos, .symbols = o->symbols, .nr_symbols = o->nr_symbols,
		.no_reader_thread = true, .machine_opts = &e->mo);
	e->rep = pk_report__new(&ro);
	if (!e->rep) {
		tool_error("cannot set up the histogram: %s", strerror(errno));
		goto fail;
	}
	if (o->argv) {
		e->w = pk_workload__prepare(o->argv);
		if (!e->w) {
			tool_error("cannot start '%s': %s", o->argv[0], strerror(errno));
			goto fail;
		}
	}
	o->ro.events = o->events;
	o->ro.workload = e->w;
	o->ro.output = NULL;
	o->ro.output_fd = e->pfd[1];
	o->ro.pipe = true;
	o->ro.no_buildid_cache = true;
	o->ro.on_notice = on_notice;
	o->ro.ctx = o;
	e->r = pk_recorder__new(&o->ro);
	if (!e->r) {
		tool_error("cannot set up the events: %s", strerror(errno));
		goto fail;
	}
	/* the reader first: the header and the synthesised state may not fit in the pipe */
	if (pthread_create(&e->agg_th, NULL, agg_main, e)) {
		tool_error("cannot start a thread");
		goto fail;
	}
	e->agg_started = true;
	int err = pk_recorder__open(e->r);
	if (err == -EMFILE && tool_raise_nofile())
		err = pk_recorder__open(e->r);
	if (err < 0) {
		top_open_failure(e->r);
		goto fail;
	}
	if (e->w && (err = pk_workload__start(e->w)) < 0) {
		tool_error("cannot run '%s': %s", o->argv[0], strerror(-err));
		*status = 127;
		goto fail;
	}
	if (pthread_create(&e->drain_th, NULL, drain_main, e)) {
		tool_error("cannot start a thread");
		goto fail;
	}
	e->drain_started = true;
	*status = 0;
	return e;
fail:
	top_engine__stop(e);
	return NULL;
}

struct top_snap *top_engine__take(struct top_engine *e)
{
	pthread_mutex_lock(&e->mu);
	struct top_snap *s = e->ready;
	e->ready = NULL;
	pthread_mutex_unlock(&e->mu);
	return s;
}

void top_engine__kick(struct top_engine *e)
{
	atomic_store(&e->kick, true);
}

void top_engine__annotate(struct top_engine *e, const char *dso_long, const char *sym)
{
	pthread_mutex_lock(&e->mu);
	free(e->ann_dso), free(e->ann_sym);
	e->ann_dso = xstrdup(dso_long);
	e->ann_sym = xstrdup(sym);
	e->ann_changed = true;
	pthread_mutex_unlock(&e->mu);
}

void top_engine__set_rows(struct top_engine *e, long rows)
{
	atomic_store(&e->rows, rows);
}

void top_engine__set_zero(struct top_engine *e, bool zero)
{
	atomic_store(&e->zero, zero);
}

bool top_engine__done(struct top_engine *e)
{
	return atomic_load(&e->done);
}

int top_engine__stop(struct top_engine *e)
{
	int status = 0;
	if (!e)
		return 0;
	atomic_store(&e->stop, true);
	if (e->drain_started)
		pthread_join(e->drain_th, NULL);
	else if (e->r)
		pk_recorder__finish(e->r);
	if (e->pfd[1] >= 0)
		close(e->pfd[1]);
	if (e->agg_started)
		pthread_join(e->agg_th, NULL);
	if (e->w) {
		if (!e->waited) {
			pk_workload__kill(e->w, SIGTERM);
			while (pk_workload__wait(e->w, true, &e->wstatus) == -EINTR)
				;
		}
		status = e->waited ? pk_wait_status__exit_code(e->wstatus) : 0;
		pk_workload__free(e->w);
	}
	pk_recorder__free(e->r);
	if (e->pfd[0] >= 0)
		close(e->pfd[0]);
	ann_reset(&e->ann);
	pk_annotate_kcode__free(e->kc);
	free(e->ann_dso), free(e->ann_sym);
	top_snap__free(e->ready);
	pk_report__free(e->rep);
	pthread_mutex_destroy(&e->mu);
	free(e);
	return status;
}
