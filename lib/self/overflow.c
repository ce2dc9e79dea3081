/* SPDX-License-Identifier: MIT */
/*
 * lib/self/overflow.c - overflow notification (man page "Overflow handling"): signals
 * routed to one thread with F_SETOWN_EX/F_SETSIG, epoll, and REFRESH-limited counting.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/self.h>

PK_API int pk_overflow__set_signal(int fd, int sig, pid_t tid)
{
	struct f_owner_ex owner = { .type = F_OWNER_TID };
	int fl;

	if (fd < 0 || sig < 0 || sig >= NSIG)
		return pk_err(-EINVAL);
	owner.pid = tid ? tid : (pid_t)syscall(SYS_gettid);
	/* owner and signal first, O_ASYNC last: no notification can go to the wrong place */
	if (fcntl(fd, F_SETOWN_EX, &owner) < 0)
		return pk_err(-errno);
	if (fcntl(fd, F_SETSIG, sig) < 0)
		return pk_err(-errno);
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_ASYNC) < 0)
		return pk_err(-errno);
	return 0;
}

PK_API int pk_overflow__clear_signal(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_ASYNC) < 0)
		return pk_err(-errno);
	return 0;
}

PK_API int pk_overflow__refresh(int fd, int n)
{
	return pk_ioc_refresh(fd, n);
}

PK_API int pk_overflow__decode_siginfo(const siginfo_t *si, struct pk_overflow_sig *out)
{
	if (!si || !out)
		return -EINVAL; /* async-signal-safe: errno untouched */
	switch (si->si_code) {
	case POLL_IN: case POLL_OUT: case POLL_MSG: case POLL_ERR: case POLL_PRI: case POLL_HUP:
		break;
	default:
		return -EINVAL;
	}
	out->fd = si->si_fd;
	out->code = si->si_code;
	out->hup = si->si_code == POLL_HUP;
	return 0;
}

/* ---- epoll ------------------------------------------------------------------------------ */

struct pk_overflow_poll {
	int epfd;
	int nr, cap;
	struct {
		int fd;
		void *ctx;
	} *slots;
};

PK_API struct pk_overflow_poll *pk_overflow_poll__new(void)
{
	struct pk_overflow_poll *p = calloc(1, sizeof(*p));
	if (!p)
		return pk_err_ptr(-ENOMEM);
	if ((p->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		int err = -errno;
		free(p);
		return pk_err_ptr(err);
	}
	return p;
}

PK_API void pk_overflow_poll__free(struct pk_overflow_poll *p)
{
	if (!p)
		return;
	close(p->epfd);
	free(p->slots);
	free(p);
}

PK_API int pk_overflow_poll__add(struct pk_overflow_poll *p, int fd, void *ctx)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLHUP | EPOLLERR };
	int slot = -1;

	if (!p || fd < 0)
		return pk_err(-EINVAL);
	for (int i = 0; i < p->nr; i++)
		if (p->slots[i].fd == -1)
			slot = i;
	if (slot < 0) {
		if (p->nr == p->cap) {
			int cap = p->cap ? p->cap * 2 : 8;
			void *n = realloc(p->slots, (size_t)cap * sizeof(*p->slots));
			if (!n)
				return pk_err(-ENOMEM);
			p->slots = n;
			p->cap = cap;
		}
		slot = p->nr++;
	}
	ev.data.u32 = (uint32_t)slot;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int err = -errno;
		if (slot == p->nr - 1)
			p->nr--;
		return pk_err(err);
	}
	p->slots[slot].fd = fd;
	p->slots[slot].ctx = ctx;
	return 0;
}

PK_API int pk_overflow_poll__del(struct pk_overflow_poll *p, int fd)
{
	if (!p)
		return pk_err(-EINVAL);
	for (int i = 0; i < p->nr; i++) {
		if (p->slots[i].fd != fd)
			continue;
		p->slots[i].fd = -1;
		if (epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, NULL) < 0)
			return pk_err(-errno);
		return 0;
	}
	return pk_err(-ENOENT);
}

PK_API int pk_overflow_poll__wait(struct pk_overflow_poll *p, struct pk_overflow_event *evs,
				  int max, int timeout_ms)
{
	struct epoll_event ee[64];
	int n, k = 0;

	if (!p || !evs || max <= 0)
		return pk_err(-EINVAL);
	n = epoll_wait(p->epfd, ee, PK_MIN(max, 64), timeout_ms);
	if (n < 0)
		return pk_err(-errno);
	for (int i = 0; i < n; i++) {
		uint32_t s = ee[i].data.u32;
		if (s >= (uint32_t)p->nr || p->slots[s].fd < 0)
			continue;
		evs[k++] = (struct pk_overflow_event){
			.fd = p->slots[s].fd, .ctx = p->slots[s].ctx,
			.in = ee[i].events & EPOLLIN, .hup = ee[i].events & EPOLLHUP,
			.err = ee[i].events & EPOLLERR };
	}
	return k;
}

PK_API int pk_overflow_poll__fd(const struct pk_overflow_poll *p)
{
	return p ? p->epfd : -1;
}
