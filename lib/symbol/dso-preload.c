/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/dso-preload.c - symbol tables read ahead on a thread of the machine's own
 * (pk_machine_opts.preload).
 *
 * A reader meets the MMAP record of an object before the samples that fall in it; the
 * first of those samples used to wait for the object's ELF file to be read (a
 * system-wide recording's 88 objects: a fifth of `perfkit script`). With preload, the
 * machine queues an object when a code mapping of it is added and its build-id is
 * already known (the recording's build-id list names the objects with samples, so the
 * thread reads no table nobody asks for; a session queues that list's user objects
 * at its opening already), and one thread reads the queued objects in
 * turn with pk_dso_load_elf, which touches the object alone. The machine's thread takes
 * the result at the object's first use (pk_dso_ensure_loaded): done, it is used as is;
 * being read, it is waited for; still queued, it is taken back and read there. Every
 * message is said by pk_dso_ensure_loaded, on the machine's thread, as without preload.
 *
 * Ownership: pstate changes under the preloader's mutex only; an object's other fields
 * belong to the thread that moved its pstate from QUEUED to LOADING until it sets DONE,
 * and to the machine's thread otherwise (the mutex orders the two). pk_machine__free
 * stops the thread first. libelf's elf_version() stores its global on every call (the
 * same value) from both threads: a race on paper that tools report, harmless.
 */
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "perfkit/data.h"
#include "internal.h"
#include "symbol-internal.h"
#include "dso-internal.h"

struct pk_preload {
	pthread_t th;
	struct pk_machine *m;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct pk_dso **q;      /* queued objects, q[head .. nr) not taken yet */
	size_t head, nr, cap;
	bool stop;
	/* the kallsyms cache worked out ahead (pk_kcache_prepare): a PK_PRE_* state and,
	 * once DONE, the result for pk_kernel_syms_load to take */
	int kstate;
	bool ktaken;
	struct pk_kcache_pre k;
	/* pk_machine_preload_call: made once the queue is empty */
	void (*call)(void *);
	void *call_arg;
};

static void *pk_preload_main(void *arg)
{
	struct pk_preload *p = arg;
	pthread_setname_np(pthread_self(), "pk-preload"); /* (seen in profiles) */
	elf_version(EV_CURRENT);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->head == p->nr && p->kstate != PK_PRE_QUEUED && !p->call)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->stop)
			break;
		if (p->call && p->head == p->nr && p->kstate != PK_PRE_QUEUED) {
			void (*fn)(void *) = p->call;
			void *fa = p->call_arg;
			pthread_mutex_unlock(&p->mu);
			fn(fa);
			pthread_mutex_lock(&p->mu);
			p->call = NULL;
			continue;
		}
		if (p->kstate == PK_PRE_QUEUED) {
			/* (the machine's settings it reads do not change after its creation) */
			p->kstate = PK_PRE_LOADING;
			pthread_mutex_unlock(&p->mu);
			pk_kcache_prepare(p->m, &p->k);
			pthread_mutex_lock(&p->mu);
			p->kstate = PK_PRE_DONE;
			pthread_cond_broadcast(&p->done);
			continue;
		}
		struct pk_dso *d = p->q[p->head++];
		if (d->pstate != PK_PRE_QUEUED)
			continue; /* taken back by the machine's thread */
		d->pstate = PK_PRE_LOADING;
		pthread_mutex_unlock(&p->mu);
		int err = pk_dso_load_elf(d);
		pthread_mutex_lock(&p->mu);
		/* (asked for as long as the caller's reading lasts: pk_machine_preload_lines) */
		if (!err && p->m->preload_lines) {
			pthread_mutex_unlock(&p->mu);
			pk_dso_warm_lines(d);
			pthread_mutex_lock(&p->mu);
		}
		d->pre_err = err;
		d->pstate = PK_PRE_DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static struct pk_preload *pk_preload_start(struct pk_machine *m)
{
	struct pk_preload *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	p->m = m;
	if (pthread_create(&p->th, NULL, pk_preload_main, p)) {
		pthread_cond_destroy(&p->done);
		pthread_cond_destroy(&p->work);
		pthread_mutex_destroy(&p->mu);
		free(p);
		return NULL;
	}
	m->pre = p;
	return p;
}

/* the machine's preloader, started at the first use; NULL without a thread (the work is
 * then done where it is used, as without preload) */
static struct pk_preload *pk_preload_get(struct pk_machine *m)
{
	struct pk_preload *p = m->pre;
	if (!p && !(p = pk_preload_start(m)))
		m->preload = false;
	return p;
}

/* true when d was queued by this call */
static bool preload_queue(struct pk_machine *m, struct pk_dso *d)
{
	if (!d || d->kind != PK_DSO_ELF || d->loaded || !d->want_bid_len)
		return false;
	struct pk_preload *p = pk_preload_get(m);
	if (!p)
		return false;
	bool queued = false;
	pthread_mutex_lock(&p->mu);
	if (d->pstate != PK_PRE_NONE)
		goto out;
	if (p->nr == p->cap) {
		/* drop what the thread has taken, then grow */
		if (p->head) {
			memmove(p->q, p->q + p->head, (p->nr - p->head) * sizeof(*p->q));
			p->nr -= p->head;
			p->head = 0;
		}
		if (pk_grow((void **)&p->q, &p->cap, p->nr + 1, sizeof(*p->q)))
			goto out; /* not queued: read where it is used */
	}
	d->pstate = PK_PRE_QUEUED;
	p->q[p->nr++] = d;
	queued = true;
	pthread_cond_signal(&p->work);
out:
	pthread_mutex_unlock(&p->mu);
	return queued;
}

void pk_preload_queue(struct pk_machine *m, struct pk_dso *d)
{
	if (m->preload)
		preload_queue(m, d);
}

/* the kallsyms cache of a host machine checked and opened on the thread (the longest
 * part of reading the kernel's symbols from it: a CRC of its 7 MB), once */
static bool preload_kcache(struct pk_machine *m)
{
	if (!m->host || m->ksyms_loaded || !m->cache_dir)
		return false;
	struct pk_preload *p = pk_preload_get(m);
	if (!p)
		return false;
	bool queued = false;
	pthread_mutex_lock(&p->mu);
	if (p->kstate == PK_PRE_NONE && !p->ktaken) {
		p->kstate = PK_PRE_QUEUED;
		queued = true;
		pthread_cond_signal(&p->work);
	}
	pthread_mutex_unlock(&p->mu);
	return queued;
}

bool pk_machine_preload_dso(struct pk_machine *m, struct pk_dso *d)
{
	/* not with a finder of debug files: that is called on the machine's thread only */
	if (!m || !d || m->find_debuginfo)
		return false;
	if (d->kind == PK_DSO_KERNEL || d->kind == PK_DSO_MODULE)
		return preload_kcache(m);
	return preload_queue(m, d);
}

bool pk_machine_preload_call(struct pk_machine *m, void (*fn)(void *), void *arg)
{
	struct pk_preload *p = m && fn ? pk_preload_get(m) : NULL;
	if (!p)
		return false;
	bool queued = false;
	pthread_mutex_lock(&p->mu);
	if (!p->call) {
		p->call = fn;
		p->call_arg = arg;
		queued = true;
		pthread_cond_signal(&p->work);
	}
	pthread_mutex_unlock(&p->mu);
	return queued;
}

void pk_machine_preload_lines(struct pk_machine *m, bool on)
{
	if (!m)
		return;
	struct pk_preload *p = m->pre;
	if (p)
		pthread_mutex_lock(&p->mu);
	m->preload_lines = on;
	if (p)
		pthread_mutex_unlock(&p->mu);
}

int pk_preload_kcache_state(struct pk_machine *m)
{
	struct pk_preload *p = m->pre;
	if (!p)
		return PK_PRE_NONE;
	pthread_mutex_lock(&p->mu);
	int st = p->kstate;
	pthread_mutex_unlock(&p->mu);
	return st;
}

bool pk_preload_take_kcache(struct pk_machine *m, struct pk_kcache_pre *k)
{
	struct pk_preload *p = m->pre;
	if (!p)
		return false;
	bool taken = false;
	pthread_mutex_lock(&p->mu);
	if (p->kstate == PK_PRE_QUEUED) {
		p->kstate = PK_PRE_NONE; /* not started: worked out by the caller */
	} else if (p->kstate != PK_PRE_NONE) {
		while (p->kstate != PK_PRE_DONE)
			pthread_cond_wait(&p->done, &p->mu);
		*k = p->k;
		p->kstate = PK_PRE_NONE;
		taken = true;
	}
	p->ktaken = true; /* once: the kernel's symbols are loaded once */
	pthread_mutex_unlock(&p->mu);
	return taken;
}

void pk_machine_preload_build_ids(struct pk_machine *m, const struct pk_data_build_id *ids,
				  size_t nr)
{
	size_t queued = 0;
	for (size_t i = 0; m && m->preload && i < nr && queued < PK_PRELOAD_LISTED_MAX; i++) {
		const struct pk_data_build_id *b = &ids[i];
		if (!b->filename || !b->build_id_size || b->cpumode != PERF_RECORD_MISC_USER)
			continue;
		struct pk_dso *d = pk_dso_findnew(m, b->filename);
		if (!d || d->kind != PK_DSO_ELF || d->loaded || !d->want_bid_len)
			continue;
		pk_preload_queue(m, d);
		queued++;
	}
}

int pk_preload_state(struct pk_dso *d)
{
	struct pk_preload *p = d->machine->pre;
	if (!p)
		return PK_PRE_NONE; /* nothing was ever queued */
	pthread_mutex_lock(&p->mu);
	int st = d->pstate;
	pthread_mutex_unlock(&p->mu);
	return st;
}

bool pk_preload_take(struct pk_dso *d, int *err)
{
	struct pk_preload *p = d->machine->pre;
	if (!p)
		return false;
	bool taken = false;
	pthread_mutex_lock(&p->mu);
	if (d->pstate == PK_PRE_QUEUED) {
		d->pstate = PK_PRE_NONE; /* the thread had not started it: read here */
	} else if (d->pstate != PK_PRE_NONE) {
		while (d->pstate != PK_PRE_DONE)
			pthread_cond_wait(&p->done, &p->mu);
		*err = d->pre_err;
		taken = true;
		/* consumed: an object whose tables pk_machine__trim frees later is read
		 * again, not handed this old result */
		d->pstate = PK_PRE_NONE;
	}
	pthread_mutex_unlock(&p->mu);
	return taken;
}
void pk_preload_stop(struct pk_machine *m)
{
	struct pk_preload *p = m->pre;
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	if (p->kstate == PK_PRE_DONE && !p->k.rc)
		pk_ksym_view_release(&p->k.kv); /* worked out, never taken */
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
	pk_arr_free(p->q, p->cap * sizeof(*p->q));
	free(p);
	m->pre = NULL;
}
