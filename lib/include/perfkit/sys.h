/* SPDX-License-Identifier: MIT */
/*
 * perfkit/sys.h - thin, complete wrappers over the kernel interface: perf_event_open(2),
 * every PERF_EVENT_IOC_* ioctl, the prctl switches, and the /proc/sys/kernel limits.
 */
#ifndef PERFKIT_SYS_H
#define PERFKIT_SYS_H

#include <sys/types.h>
#include <linux/perf_event.h>
#include <perfkit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Attr sizes of the kernel ABI revisions (some are missing from older uapi headers). */
#define PK_ATTR_SIZE_VER0 64
#define PK_ATTR_SIZE_VER1 72
#define PK_ATTR_SIZE_VER2 80
#define PK_ATTR_SIZE_VER3 96
#define PK_ATTR_SIZE_VER4 104
#define PK_ATTR_SIZE_VER5 112
#define PK_ATTR_SIZE_VER6 120
#define PK_ATTR_SIZE_VER7 128
#define PK_ATTR_SIZE_VER8 136  /* config3 */

/*
 * perf_event_attr with room for fields newer than the installed uapi header (config3 at
 * offset 128, ...). `attr` is the header's struct; `raw` covers everything up to
 * PK_ATTR_SIZE_MAX. Pass &a.attr to the kernel with attr.size set to the ABI size in use.
 */
#define PK_ATTR_SIZE_MAX 256
struct pk_attr {
	union {
		struct perf_event_attr attr;
		uint8_t raw[PK_ATTR_SIZE_MAX];
	};
};
#define PK_ATTR_OFF_CONFIG3 128
static inline uint64_t pk_attr__config3(const struct pk_attr *a)
{
	uint64_t v;
	__builtin_memcpy(&v, a->raw + PK_ATTR_OFF_CONFIG3, sizeof(v));
	return v;
}
static inline void pk_attr__set_config3(struct pk_attr *a, uint64_t v)
{
	__builtin_memcpy(a->raw + PK_ATTR_OFF_CONFIG3, &v, sizeof(v));
}

/* Flags for pk_sys_perf_event_open (PERF_FLAG_* values, plus our own above bit 16). */
#define PK_OPEN_NO_CLOEXEC (1UL << 16) /* do not add PERF_FLAG_FD_CLOEXEC */

/*
 * perf_event_open(2) with attr-size negotiation.
 *  - PERF_FLAG_FD_CLOEXEC is added unless PK_OPEN_NO_CLOEXEC is given.
 *  - attr->size == 0 is replaced by the smallest ABI size covering the fields in use.
 *  - on E2BIG the kernel writes the size it supports into attr->size; if every byte we
 *    set beyond that size is zero we retry with the kernel's size (the fields were unused),
 *    otherwise we fail with -E2BIG and log which field the kernel does not know.
 * Returns the fd or a negative errno. For sizes beyond the uapi header's struct, `attr`
 * must point into a struct pk_attr (&a.attr).
 */
PK_API int pk_sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
				  int group_fd, unsigned long flags);

/* Smallest kernel ABI size that covers every non-zero field of `a` (a pk_attr). */
PK_API uint32_t pk_attr__min_size(const struct pk_attr *a);

/* Name of the first attr field at or beyond byte offset `off` that is non-zero, or NULL. */
PK_API const char *pk_attr__field_name(size_t off);

/* ioctls. `group` adds PERF_IOC_FLAG_GROUP where the kernel supports it. All return 0/-errno. */
PK_API int pk_ioc_enable(int fd, bool group);
PK_API int pk_ioc_disable(int fd, bool group);
PK_API int pk_ioc_reset(int fd, bool group);
PK_API int pk_ioc_refresh(int fd, int count);           /* count must be > 0 */
PK_API int pk_ioc_period(int fd, uint64_t period);
PK_API int pk_ioc_set_output(int fd, int target_fd);    /* target_fd -1 stops redirection */
PK_API int pk_ioc_set_filter(int fd, const char *filter);
PK_API int pk_ioc_id(int fd, uint64_t *id);
PK_API int pk_ioc_set_bpf(int fd, int bpf_prog_fd);
PK_API int pk_ioc_pause_output(int fd, bool pause);
/* Fills ids[0..*count) with attached BPF program ids; *count in: capacity, out: number
 * attached (may exceed capacity, then -ENOSPC is returned and ids holds the first ones). */
PK_API int pk_ioc_query_bpf(int fd, uint32_t *ids, uint32_t *count);
PK_API int pk_ioc_modify_attributes(int fd, struct perf_event_attr *attr);

/* prctl(PR_TASK_PERF_EVENTS_ENABLE/DISABLE): every counter attached to this process. */
PK_API int pk_prctl_enable_all(void);
PK_API int pk_prctl_disable_all(void);

/* The /proc/sys/kernel/perf_* knobs. A field that could not be read is INT_MIN. */
struct pk_limits {
	size_t sz;
	int paranoid;              /* perf_event_paranoid */
	int max_sample_rate;       /* perf_event_max_sample_rate (Hz) */
	int max_stack;             /* perf_event_max_stack (frames) */
	int max_contexts_per_stack;/* perf_event_max_contexts_per_stack */
	int mlock_kb;              /* perf_event_mlock_kb (per user, beyond RLIMIT_MEMLOCK) */
	int cpu_time_max_percent;  /* perf_cpu_time_max_percent */
	int nmi_watchdog;          /* kernel.nmi_watchdog (occupies a counter when 1) */
	size_t :0;
};

/* Read every limit. `procfs_root` NULL means "/proc" (tests pass a fake tree). */
PK_API int pk_limits__read(struct pk_limits *out, const char *procfs_root);

/* What a paranoid level permits, as one English sentence. */
PK_API const char *pk_paranoid__describe(int level);

#ifdef __cplusplus
}
#endif
#endif
