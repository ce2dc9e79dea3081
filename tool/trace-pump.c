/* SPDX-License-Identifier: MIT */
/*
 * tool/trace-pump.c - the buffer between `perfkit trace`'s recorder and its reader.
 *
 * The recorder writes the stream into a pipe; a pipe holds 1 MB unless the process may
 * raise it (pipe-max-size, or CAP_SYS_RESOURCE, which a container usually lacks). When the
 * reader falls behind, a full pipe blocks the recorder, the rings fill up behind it and the
 * kernel drops events. The pump is a thread that empties that pipe at once into a buffer
 * of a fixed size, allocated once, and feeds the reader's pipe from it: the recorder
 * blocks only when the buffer is full, and its fill (trace_pump_queued) tells when to hold
 * the command back (cmd-trace.c's throttle).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "trace.h"

#define MIN2(a, b) ((a) < (b) ? (a) : (b))

struct trace_pump {
	int in, out;
	uint8_t *buf;
	size_t cap, head;       /* the bytes queued start at head (a circle of cap bytes) */
	size_t len;             /* queued; written by the pump, read by others (atomic) */
	pid_t tid;
	pthread_t th;
};

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void *pump_main(void *arg)
{
	struct trace_pump *p = arg;
	bool eof = false, gone = false;

	__atomic_store_n(&p->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;) {
		size_t len = p->len;
		struct pollfd pf[2];
		int n = 0, ii = -1, oi = -1;
		if (!eof && len < p->cap) {
			ii = n;
			pf[n++] = (struct pollfd){ .fd = p->in, .events = POLLIN };
		}
		if (len && !gone) {
			oi = n;
			pf[n++] = (struct pollfd){ .fd = p->out, .events = POLLOUT };
		}
		if (!n)
			break; /* the stream has ended and all of it is passed on */
		if (poll(pf, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (ii >= 0 && pf[ii].revents) {
			size_t tail = (p->head + len) % p->cap;
			size_t room = MIN2(p->cap - len, p->cap - tail);
			ssize_t r = read(p->in, p->buf + tail, room);
			if (r > 0)
				len += (size_t)r;
			else if (r == 0 || (errno != EAGAIN && errno != EINTR))
				eof = true;
		}
		if (oi >= 0 && pf[oi].revents) {
			size_t chunk = MIN2(len, p->cap - p->head);
			ssize_t w = write(p->out, p->buf + p->head, chunk);
			if (w > 0) {
				p->head = (p->head + (size_t)w) % p->cap;
				len -= (size_t)w;
			} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
				gone = true; /* the reader went away: the rest is read and dropped */
			}
		}
		if (gone)
			len = 0;
		__atomic_store_n(&p->len, len, __ATOMIC_RELEASE);
	}
	close(p->out);
	p->out = -1;
	return NULL;
}

struct trace_pump *trace_pump_start(int in, int out, size_t cap)
{
	struct trace_pump *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->buf = malloc(cap); /* its pages are taken when first written */
	if (!p->buf) {
		free(p);
		return NULL;
	}
	p->in = in;
	p->out = out;
	p->cap = cap;
	set_nonblock(in);
	set_nonblock(out);
	int err = pthread_create(&p->th, NULL, pump_main, p);
	if (err) {
		free(p->buf);
		free(p);
		errno = err;
		return NULL;
	}
	while (!__atomic_load_n(&p->tid, __ATOMIC_ACQUIRE))
		sched_yield();
	return p;
}

pid_t trace_pump_tid(const struct trace_pump *p)
{
	return p ? p->tid : 0;
}

size_t trace_pump_queued(const struct trace_pump *p)
{
	return p ? __atomic_load_n(&p->len, __ATOMIC_ACQUIRE) : 0;
}

size_t trace_pump_cap(const struct trace_pump *p)
{
	return p ? p->cap : 0;
}

void trace_pump_join(struct trace_pump *p)
{
	if (!p)
		return;
	pthread_join(p->th, NULL);
	free(p->buf);
	free(p);
}
