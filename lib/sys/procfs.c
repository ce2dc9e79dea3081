/* SPDX-License-Identifier: MIT */
/* The /proc/sys/kernel/perf_* limits. */
#include <limits.h>
#include <stdio.h>
#include "internal.h"
#include <perfkit/sys.h>

static int read_knob(const char *root, const char *name, int *out)
{
	char path[512];
	long long v;
	pk_snprintf(path, sizeof(path), "%s/sys/kernel/%s", root, name);
	int r = pk_read_int_file(path, &v);
	if (r < 0 || v < INT_MIN || v > INT_MAX) {
		*out = INT_MIN;
		return r < 0 ? r : -ERANGE;
	}
	*out = (int)v;
	return 0;
}

PK_API int pk_limits__read(struct pk_limits *out, const char *procfs_root)
{
	struct pk_limits l = { .sz = sizeof(l) };
	const char *root = procfs_root ? procfs_root : "/proc";

	if (!out || !PK_OPTS_VALID(out, pk_limits))
		return pk_err(-EINVAL);
	int r = read_knob(root, "perf_event_paranoid", &l.paranoid);
	read_knob(root, "perf_event_max_sample_rate", &l.max_sample_rate);
	read_knob(root, "perf_event_max_stack", &l.max_stack);
	read_knob(root, "perf_event_max_contexts_per_stack", &l.max_contexts_per_stack);
	read_knob(root, "perf_event_mlock_kb", &l.mlock_kb);
	read_knob(root, "perf_cpu_time_max_percent", &l.cpu_time_max_percent);
	read_knob(root, "nmi_watchdog", &l.nmi_watchdog);
	size_t n = PK_MIN(out->sz, sizeof(l));
	memcpy((char *)out + sizeof(size_t), (char *)&l + sizeof(size_t), n - sizeof(size_t));
	/* Without perf_event_paranoid the kernel has no perf events at all. */
	return r == -ENOENT ? pk_err(-ENOSYS) : 0;
}

PK_API const char *pk_paranoid__describe(int level)
{
	if (level == INT_MIN)
		return "unknown (perf_event_paranoid could not be read)";
	if (level <= -1)
		return "no restrictions: any user may measure anything, including raw tracepoints";
	if (level == 0)
		return "unprivileged users may measure CPU-wide (system-wide) and kernel events, "
		       "but not raw tracepoint data";
	if (level == 1)
		return "unprivileged users may measure their own processes, user and kernel space; "
		       "no CPU-wide events";
	if (level == 2)
		return "unprivileged users may measure only user space of their own processes";
	return "as 2 on upstream kernels; with the Debian/Ubuntu patch unprivileged users "
	       "may not use perf_event_open at all (needs CAP_PERFMON)";
}
