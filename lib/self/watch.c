/* SPDX-License-Identifier: MIT */
/*
 * lib/self/watch.c - hardware breakpoints and watchpoints on one's own memory
 * (PERF_TYPE_BREAKPOINT; self.h), moved with PERF_EVENT_IOC_MODIFY_ATTRIBUTES.
 */
#include <linux/hw_breakpoint.h>
#include <stdlib.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/self.h>

struct pk_watch {
	int fd;
	struct perf_event_attr attr;  /* as opened: MODIFY_ATTRIBUTES wants every other field equal */
};

PK_API int pk_watch__attr(struct perf_event_attr *attr, const void *addr, size_t len, unsigned type)
{
	uintptr_t a = (uintptr_t)addr;

	if (!attr)
		return pk_err(-EINVAL);
	switch (type) {
	case PK_WATCH_R: case PK_WATCH_W: case PK_WATCH_RW:
		if (len != 1 && len != 2 && len != 4 && len != 8)
			return pk_err(-EINVAL);
		if (a & (len - 1))
			return pk_err(-EINVAL);
		break;
	case PK_WATCH_X:
		len = sizeof(long); /* the kernel wants sizeof(long) for execute breakpoints */
		break;
	default:
		return pk_err(-EINVAL);
	}
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_BREAKPOINT;
	attr->size = sizeof(*attr);
	attr->bp_addr = a;
	attr->bp_type = type;
	attr->bp_len = len;
	attr->exclude_kernel = 1; /* a user address: kernel accesses (copy_*_user) are not ours */
	attr->exclude_hv = 1;
	return 0;
}

PK_API struct pk_watch *pk_watch__open(const void *addr, size_t len, unsigned type,
				       const struct pk_watch_opts *opts)
{
	struct pk_watch *w;
	int err;

	if (!PK_OPTS_VALID(opts, pk_watch_opts))
		return pk_err_ptr(-EINVAL);
	if (!(w = calloc(1, sizeof(*w))))
		return pk_err_ptr(-ENOMEM);
	if ((err = pk_watch__attr(&w->attr, addr, len, type)) < 0)
		goto err;
	w->attr.disabled = PK_OPTS_GET(opts, disabled, false);
	w->attr.inherit = PK_OPTS_GET(opts, inherit, false);
	w->attr.sample_period = PK_OPTS_GET(opts, sample_period, 0);
	if (w->attr.sample_period) {
		uint64_t st = PK_OPTS_GET(opts, sample_type, 0);
		w->attr.sample_type = st ? st : PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
		w->attr.wakeup_events = 1;
	}
	w->fd = pk_sys_perf_event_open(&w->attr, PK_OPTS_GET(opts, tid, 0), -1, -1, 0);
	if (w->fd < 0) {
		err = w->fd;
		goto err;
	}
	return w;
err:
	free(w);
	return pk_err_ptr(err);
}

PK_API void pk_watch__free(struct pk_watch *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w);
}

PK_API int pk_watch__fd(const struct pk_watch *w)
{
	return w ? w->fd : -1;
}

PK_API int pk_watch__move(struct pk_watch *w, const void *addr, size_t len, unsigned type)
{
	struct perf_event_attr a;
	int err;

	if (!w)
		return pk_err(-EINVAL);
	if ((err = pk_watch__attr(&a, addr, len, type)) < 0)
		return err;
	/* keep every other field as opened: the kernel refuses any other difference */
	struct perf_event_attr n = w->attr;
	n.bp_addr = a.bp_addr;
	n.bp_type = a.bp_type;
	n.bp_len = a.bp_len;
	if ((err = pk_ioc_modify_attributes(w->fd, &n)) < 0)
		return err;
	w->attr = n;
	return 0;
}

PK_API int pk_watch__hits(struct pk_watch *w, uint64_t *hits)
{
	uint64_t v;
	ssize_t n;

	if (!w || !hits)
		return pk_err(-EINVAL);
	n = read(w->fd, &v, sizeof(v));
	if (n < 0)
		return pk_err(-errno);
	if (n != (ssize_t)sizeof(v))
		return pk_err(-PK_ERR_FORMAT);
	*hits = v;
	return 0;
}

PK_API int pk_watch__selftest(void)
{
	volatile uint64_t target = 0; /* 8-byte aligned local: no other thread touches it */
	struct pk_watch *w = pk_watch__open((const void *)&target, sizeof(target), PK_WATCH_W, NULL);
	uint64_t hits = 0;
	int err;

	if (!w)
		return -errno;
	for (int i = 0; i < 16; i++)
		target = target + 1;
	err = pk_watch__hits(w, &hits);
	pk_watch__free(w);
	if (err < 0)
		return err;
	return hits > 0 ? 1 : 0;
}
