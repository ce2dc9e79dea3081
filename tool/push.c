/* SPDX-License-Identifier: MIT */
/*
 * tool/push.c - the pusher: a queue of perf.data paths and the one thread that converts
 * and sends them (tool/push.h). The thread runs at a lower priority (nice + 10): under
 * `record --push` it competes for CPUs with the thread that drains the rings, and it
 * is the one that may wait. It takes the queue's mutex only to pop a path; everything
 * slow (symbolising, gzip, HTTP, the spool) happens outside it, so submit() from the
 * recorder never waits for more than a pointer push.
 *
 * Retry policy: a profile the server cannot take now goes to the spool; while the spool
 * holds entries, new profiles are spooled at once (in order, and no time-out spent on a
 * server known to be down) and the spool is retried oldest first after a back-off that
 * doubles from retry_min_ms to retry_max_ms, each delay drawn in [d/2, d] (jitter: a
 * fleet restarted together does not retry together). A 2xx removes the entry, so an
 * entry is sent until one 2xx and never after.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "push.h"

struct tool_pusher {
	struct tool_push_opts o;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct qent { char *path; bool unlink_after; } *q; /* ring of queued paths */
	size_t qhead, qn, qcap;
	bool closing, stopped;
	unsigned wait_ms;
	struct push_http *http;
	struct push_spool *spool;
	struct tool_push_stats st;
	bool pending;           /* the spool may hold entries */
	bool outage;            /* the last attempt failed (its warning is printed) */
	unsigned backoff_ms;
	uint64_t next_retry;    /* CLOCK_MONOTONIC ns */
	unsigned rng;
};

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the thread's own verdict (called without the mutex): nothing more is pushed */
static void set_stopped(struct tool_pusher *P)
{
	pthread_mutex_lock(&P->mu);
	P->stopped = true;
	pthread_mutex_unlock(&P->mu);
}

static void auth_message(struct tool_pusher *P, const struct push_reply *r)
{
	tool_error("%s refused the request (%s): %s; give credentials with --basic-auth "
		   "USER:PASSWORD or --bearer-token TOKEN (or the variables "
		   "PYROSCOPE_BASIC_AUTH_USER and PYROSCOPE_BASIC_AUTH_PASSWORD, or "
		   "PYROSCOPE_AUTH_TOKEN)%s; nothing more is pushed", P->o.url, r->msg,
		   r->status == 403 ? "not allowed with these credentials"
				    : "authentication required or wrong",
		   r->status == 403 ? ", and the tenant with --tenant-id" : "");
}

static void schedule_retry(struct tool_pusher *P, bool failed)
{
	if (!failed) {
		P->backoff_ms = P->o.retry_min_ms;
		P->next_retry = 0;
		return;
	}
	unsigned d = P->backoff_ms ? P->backoff_ms : P->o.retry_min_ms;
	unsigned delay = d / 2 + (unsigned)(rand_r(&P->rng) % (d / 2 + 1));
	P->next_retry = now_ns(CLOCK_MONOTONIC) + (uint64_t)delay * 1000000ull;
	P->backoff_ms = d >= P->o.retry_max_ms / 2 ? P->o.retry_max_ms : d * 2;
}

/* One send and its bookkeeping. Returns the outcome. */
static enum push_outcome send_one(struct tool_pusher *P, const char *what, const char *query,
				  const void *body, size_t len, enum push_format fmt,
				  bool from_spool)
{
	struct push_reply r;
	enum push_outcome out = push_http_send(P->http, query, body, len, fmt, &r);
	switch (out) {
	case PUSH_OK:
		P->st.pushed++;
		P->st.from_spool += from_spool;
		if (P->outage)
			fprintf(stderr, "perfkit %s: %s takes profiles again\n", tool_cmd_name,
				P->o.url);
		P->outage = false;
		if (P->o.verbose)
			fprintf(stderr, "pushed %s (%zu bytes): %s\n", what, len, r.msg);
		break;
	case PUSH_RETRY:
		if (!P->outage)
			tool_warn("cannot push %s to %s: %s%s", what, P->o.url, r.msg,
				  P->spool ? "; kept in the spool, retrying" : "");
		P->outage = true;
		break;
	case PUSH_AUTH:
		auth_message(P, &r);
		P->st.rejected++;
		P->st.auth_failed = true;
		set_stopped(P);
		break;
	case PUSH_REJECTED:
		tool_error("%s rejected %s (%s): not retried", P->o.url, what, r.msg);
		P->st.rejected++;
		break;
	case PUSH_FATAL:
		tool_error("cannot push %s to %s: %s; nothing more is pushed", what, P->o.url,
			   r.msg);
		P->st.failed++;
		set_stopped(P);
		break;
	}
	return out;
}

/* Try the spool's entries, oldest first, until one fails to go. */
static void retry_spool(struct tool_pusher *P)
{
	char **v;
	size_t n;
	if (!P->spool || P->stopped || push_spool_list(P->spool, &v, &n))
		return;
	bool failed = false;
	for (size_t i = 0; i < n && !failed && !P->stopped; i++) {
		struct push_spool_entry e;
		int err = push_spool_take(P->spool, v[i], &e);
		if (err == -EBADMSG) {
			push_spool_release(P->spool, &e, false);
			push_spool_set_aside(P->spool, v[i]);
			continue;
		}
		if (err) {
			push_spool_release(P->spool, &e, false);
			continue;   /* gone, or being sent by another perfkit */
		}
		enum push_outcome out = send_one(P, v[i], e.query, e.body, e.len, e.format, true);
		/* delivered, or refused for good: either way never sent again (an auth
		 * failure keeps it: the profile is fine, the credentials are not) */
		push_spool_release(P->spool, &e, out == PUSH_OK || out == PUSH_REJECTED);
		failed = out == PUSH_RETRY;
	}
	push_spool_names_free(v, n);
	P->pending = failed;
	schedule_retry(P, failed);
}

static void handle_file(struct tool_pusher *P, const char *path)
{
	struct push_job j;
	int rc = push_convert(&P->o, path, &j);
	if (rc) {
		P->st.failed += rc < 0;
		return;
	}
	bool down = P->pending && now_ns(CLOCK_MONOTONIC) < P->next_retry;
	enum push_outcome out = down ? PUSH_RETRY
				     : send_one(P, path, j.query, j.body, j.len, P->o.format, false);
	if (out == PUSH_RETRY) {
		if (P->spool) {
			int err = push_spool_put(P->spool, j.from_ms, j.until_ms, j.query, j.body,
						 j.len, P->o.format, &P->st.dropped);
			if (err) {
				tool_error("cannot spool '%s' in '%s': %s", path,
					   push_spool_dir(P->spool), strerror(-err));
				P->st.failed++;
			} else {
				P->st.spooled++;
				if (!P->pending)
					schedule_retry(P, true);
				P->pending = true;
			}
		} else {
			P->st.failed++;
		}
	} else if (out == PUSH_OK && P->pending && !down) {
		retry_spool(P);   /* the server is back: what waits goes next */
	}
	free(j.query);
	free(j.body);
}

static void *pusher_main(void *arg)
{
	struct tool_pusher *P = arg;
	/* below the recorder: Linux gives each thread its own nice value */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
	pthread_mutex_lock(&P->mu);
	for (;;) {
		if (P->qn) {
			struct qent e = P->q[P->qhead];
			P->qhead = (P->qhead + 1) % P->qcap;
			P->qn--;
			bool stopped = P->stopped;
			pthread_mutex_unlock(&P->mu);
			if (!stopped)
				handle_file(P, e.path);
			else
				P->st.failed++;
			if (e.unlink_after)
				unlink(e.path);
			free(e.path);
			pthread_mutex_lock(&P->mu);
			continue;
		}
		if (P->closing || P->stopped)
			break;
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		if (P->pending && now >= P->next_retry) {
			pthread_mutex_unlock(&P->mu);
			retry_spool(P);
			pthread_mutex_lock(&P->mu);
			continue;
		}
		if (P->pending) {
			/* until the next retry (the clock read above; a late wake-up is harmless) */
			uint64_t left = P->next_retry - now;
			struct timespec ts = { (time_t)(now / 1000000000ull), (long)(now % 1000000000ull) };
			ts.tv_sec += (time_t)(left / 1000000000ull);
			ts.tv_nsec += (long)(left % 1000000000ull);
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&P->cv, &P->mu, &ts);
		} else {
			pthread_cond_wait(&P->cv, &P->mu);
		}
	}
	pthread_mutex_unlock(&P->mu);
	/* on exit: one more try of the spool, then for up to wait_ms with back-off */
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)P->wait_ms * 1000000ull;
	retry_spool(P);
	while (P->pending && !P->stopped && P->next_retry < deadline) {
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		if (t < P->next_retry) {
			uint64_t d = P->next_retry - t;
			struct timespec ts = { (time_t)(d / 1000000000ull), (long)(d % 1000000000ull) };
			nanosleep(&ts, NULL);
		}
		retry_spool(P);
	}
	return NULL;
}

struct tool_pusher *tool_pusher_new(const struct tool_push_opts *o)
{
	char why[256];
	if (push_http_global_init(why, sizeof(why))) {
		tool_error("%s", why);
		return NULL;
	}
	struct tool_pusher *P = calloc(1, sizeof(*P));
	if (!P) {
		tool_error("out of memory");
		return NULL;
	}
	P->o = *o;
	if (!P->o.retry_min_ms)
		P->o.retry_min_ms = 1000;
	if (P->o.retry_max_ms < P->o.retry_min_ms)
		P->o.retry_max_ms = P->o.retry_min_ms;
	P->backoff_ms = P->o.retry_min_ms;
	P->rng = (unsigned)(now_ns(CLOCK_REALTIME) ^ (uint64_t)getpid());
	pthread_mutex_init(&P->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&P->cv, &ca);
	pthread_condattr_destroy(&ca);
	P->http = push_http_new(&P->o);
	if (!P->http) {
		tool_error("cannot set up HTTP for '%s'", o->url);
		goto fail;
	}
	if (o->spool_dir && !(P->spool = push_spool_open(o->spool_dir, o->spool_max)))
		goto fail;
	if (P->spool) {
		char **v;
		size_t n;
		if (push_spool_list(P->spool, &v, &n) == 0) {
			P->pending = n > 0;   /* from an earlier run: tried first */
			push_spool_names_free(v, n);
		}
	}
	/* every signal blocked in the thread: they are the command's (record's stop and
	 * rotation signals must reach the thread that waits for them) */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&P->th, NULL, pusher_main, P);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		tool_error("cannot start the push thread: %s", strerror(err));
		goto fail;
	}
	return P;
fail:
	push_http_free(P->http);
	push_spool_free(P->spool);
	pthread_mutex_destroy(&P->mu);
	pthread_cond_destroy(&P->cv);
	free(P);
	return NULL;
}

int tool_pusher_submit(struct tool_pusher *P, const char *path)
{
	return tool_pusher_submit_ex(P, path, false);
}

int tool_pusher_submit_ex(struct tool_pusher *P, const char *path, bool unlink_after)
{
	char *s = strdup(path);
	if (!s)
		return -ENOMEM;
	pthread_mutex_lock(&P->mu);
	int err = 0;
	if (P->closing || P->stopped) {
		err = -ESHUTDOWN;
	} else if (P->qn == P->qcap) {
		size_t ncap = P->qcap ? P->qcap * 2 : 16;
		struct qent *nq = malloc(ncap * sizeof(*nq));
		if (!nq) {
			err = -ENOMEM;
		} else {
			for (size_t i = 0; i < P->qn; i++)
				nq[i] = P->q[(P->qhead + i) % P->qcap];
			free(P->q);
			P->q = nq;
			P->qhead = 0;
			P->qcap = ncap;
		}
	}
	if (!err) {
		P->q[(P->qhead + P->qn) % P->qcap] = (struct qent){ s, unlink_after };
		P->qn++;
		pthread_cond_signal(&P->cv);
	}
	pthread_mutex_unlock(&P->mu);
	if (err)
		free(s);
	return err;
}

int tool_pusher_finish(struct tool_pusher *P, unsigned wait_ms, struct tool_push_stats *out)
{
	pthread_mutex_lock(&P->mu);
	P->closing = true;
	P->wait_ms = wait_ms;
	pthread_cond_signal(&P->cv);
	pthread_mutex_unlock(&P->mu);
	pthread_join(P->th, NULL);
	struct tool_push_stats *st = &P->st;
	for (size_t i = 0; i < P->qn; i++) {   /* left after an authentication failure */
		struct qent *e = &P->q[(P->qhead + i) % P->qcap];
		if (e->unlink_after)
			unlink(e->path);
		free(e->path);
		st->failed++;
	}
	if (P->spool) {
		char **v;
		size_t n;
		if (push_spool_list(P->spool, &v, &n) == 0) {
			st->waiting = (unsigned)n;
			push_spool_names_free(v, n);
		}
	}
	int status = st->rejected || st->failed || st->waiting || st->dropped ? 1 : 0;
	if (P->o.quiet && !status && !st->spooled)
		goto out;
	fprintf(stderr, "perfkit %s: pushed %u profile%s to %s", tool_cmd_name, st->pushed,
		st->pushed == 1 ? "" : "s", P->o.url);
	if (st->from_spool)
		fprintf(stderr, " (%u from the spool)", st->from_spool);
	if (st->spooled)
		fprintf(stderr, "; %u spooled after a failed push", st->spooled);
	if (st->dropped)
		fprintf(stderr, "; %u dropped from the full spool (--spool-max)", st->dropped);
	if (st->rejected)
		fprintf(stderr, "; %u rejected", st->rejected);
	if (st->failed)
		fprintf(stderr, "; %u failed", st->failed);
	fprintf(stderr, "\n");
	if (st->waiting)
		fprintf(stderr, "perfkit %s: %u profile%s still waiting in %s: 'perfkit push "
			"--spool %s' sends them\n", tool_cmd_name, st->waiting,
			st->waiting == 1 ? "" : "s", push_spool_dir(P->spool),
			push_spool_dir(P->spool));
out:
	if (out)
		*out = *st;
	free(P->q);
	push_http_free(P->http);
	push_spool_free(P->spool);
	pthread_mutex_destroy(&P->mu);
	pthread_cond_destroy(&P->cv);
	free(P);
	return status;
}
