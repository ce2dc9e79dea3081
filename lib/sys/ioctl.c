/* SPDX-License-Identifier: MIT */
/* Every PERF_EVENT_IOC_* ioctl and the prctl switches, returning 0 / -errno. */
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include "internal.h"
#include <perfkit/sys.h>

/* Older uapi headers lack the newer ioctls; the numbers are ABI. */
#ifndef PERF_EVENT_IOC_PAUSE_OUTPUT
#define PERF_EVENT_IOC_PAUSE_OUTPUT _IOW('$', 9, __u32)
#endif
#ifndef PERF_EVENT_IOC_QUERY_BPF
#define PERF_EVENT_IOC_QUERY_BPF _IOWR('$', 10, struct perf_event_query_bpf *)
#endif
#ifndef PERF_EVENT_IOC_MODIFY_ATTRIBUTES
#define PERF_EVENT_IOC_MODIFY_ATTRIBUTES _IOW('$', 11, struct perf_event_attr *)
#endif

static int ret(int r)
{
	return r < 0 ? pk_err(-errno) : 0;
}

PK_API int pk_ioc_enable(int fd, bool group)
{
	return ret(ioctl(fd, PERF_EVENT_IOC_ENABLE, group ? (unsigned long)PERF_IOC_FLAG_GROUP : 0UL));
}

PK_API int pk_ioc_disable(int fd, bool group)
{
	return ret(ioctl(fd, PERF_EVENT_IOC_DISABLE, group ? (unsigned long)PERF_IOC_FLAG_GROUP : 0UL));
}

PK_API int pk_ioc_reset(int fd, bool group)
{
	return ret(ioctl(fd, PERF_EVENT_IOC_RESET, group ? (unsigned long)PERF_IOC_FLAG_GROUP : 0UL));
}

PK_API int pk_ioc_refresh(int fd, int count)
{
	if (count <= 0)
		return pk_err(-EINVAL); /* the kernel rejects 0; negative is meaningless */
	return ret(ioctl(fd, PERF_EVENT_IOC_REFRESH, (long)count));
}

PK_API int pk_ioc_period(int fd, uint64_t period)
{
	return ret(ioctl(fd, PERF_EVENT_IOC_PERIOD, &period));
}

PK_API int pk_ioc_set_output(int fd, int target_fd)
{
	return ret(ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, (long)target_fd)); /* -1 must reach the kernel as ~0UL */
}

PK_API int pk_ioc_set_filter(int fd, const char *filter)
{
	if (!filter)
		return pk_err(-EINVAL);
	return ret(ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter));
}

PK_API int pk_ioc_id(int fd, uint64_t *id)
{
	return ret(ioctl(fd, PERF_EVENT_IOC_ID, id));
}

PK_API int pk_ioc_set_bpf(int fd, int bpf_prog_fd)
{
	return ret(ioctl(fd, PERF_EVENT_IOC_SET_BPF, (long)bpf_prog_fd));
}

PK_API int pk_ioc_pause_output(int fd, bool pause)
{
	return ret(ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, pause ? 1UL : 0UL));
}

PK_API int pk_ioc_query_bpf(int fd, uint32_t *ids, uint32_t *count)
{
	if (!count || (*count && !ids))
		return pk_err(-EINVAL);
	uint32_t cap = *count;
	struct {
		uint32_t ids_len, prog_cnt;
	} *q = calloc(1, sizeof(*q) + (size_t)cap * sizeof(uint32_t));
	if (!q)
		return pk_err(-ENOMEM);
	q->ids_len = cap;
	int r = ioctl(fd, PERF_EVENT_IOC_QUERY_BPF, q);
	if (r < 0 && errno != ENOSPC) {
		int e = errno;
		free(q);
		return pk_err(-e);
	}
	*count = q->prog_cnt;
	if (cap)
		memcpy(ids, (uint32_t *)(q + 1), (size_t)PK_MIN(cap, q->prog_cnt) * sizeof(uint32_t));
	free(q);
	return *count > cap ? pk_err(-ENOSPC) : 0;
}

PK_API int pk_ioc_modify_attributes(int fd, struct perf_event_attr *attr)
{
	return ret(ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, attr));
}

PK_API int pk_prctl_enable_all(void)
{
	return ret(prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0));
}

PK_API int pk_prctl_disable_all(void)
{
	return ret(prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0));
}
