/* SPDX-License-Identifier: MIT */
/*
 * lib/data/describe.c - what every reader of a perf.data file asks of its header: the
 * name of an event (attr) and whether the file was recorded on the running system.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <linux/hw_breakpoint.h>
#include <perfkit/data.h>
#include <perfkit/event.h>
#include "internal.h"

struct cache_find {
	uint64_t config;
	char *buf;
	size_t len;
	bool found;
};

/* the walk composes each name in a buffer of its own: it is copied, not kept */
static int cache_cb(const char *name, uint64_t config, void *ctx)
{
	struct cache_find *f = ctx;
	if (config != f->config)
		return 0;
	snprintf(f->buf, f->len, "%s", name);
	f->found = true;
	return 1;
}

PK_API const char *pk_data_attr__name(const struct pk_data_attr *a, char *buf, size_t len)
{
	if (!buf || !len)
		return "unknown";
	if (!a) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	if (a->name && *a->name)
		return a->name;
	const struct perf_event_attr *at = &a->attr.attr;
	size_t n = 0;
	const struct pk_event_name *t = NULL;
	switch (at->type) {
	case PERF_TYPE_HARDWARE:
		t = pk_hw_event_names(&n);
		break;
	case PERF_TYPE_SOFTWARE:
		t = pk_sw_event_names(&n);
		break;
	case PERF_TYPE_HW_CACHE: {
		struct cache_find f = { .config = at->config, .buf = buf, .len = len };
		pk_hwcache__foreach(cache_cb, &f);
		if (f.found)
			return buf;
		break;
	}
	case PERF_TYPE_RAW:
		snprintf(buf, len, "raw 0x%" PRIx64, (uint64_t)at->config);
		return buf;
	case PERF_TYPE_BREAKPOINT:
		snprintf(buf, len, "mem:0x%" PRIx64 ":%s%s%s", (uint64_t)at->bp_addr,
			 at->bp_type & HW_BREAKPOINT_R ? "r" : "",
			 at->bp_type & HW_BREAKPOINT_W ? "w" : "",
			 at->bp_type & HW_BREAKPOINT_X ? "x" : "");
		return buf;
	case PERF_TYPE_TRACEPOINT:
		snprintf(buf, len, "unknown tracepoint");
		return buf;
	default:
		break;
	}
	for (size_t i = 0; t && i < n; i++)
		if (t[i].config == at->config)
			return t[i].name;
	snprintf(buf, len, "unknown attr type: %" PRIu32 " config 0x%" PRIx64, at->type,
		 (uint64_t)at->config);
	return buf;
}

PK_API bool pk_data_env__same_host(const struct pk_data_env *env)
{
	struct utsname u;
	if (!env || !env->osrelease)
		return true; /* nothing to compare: taken as recorded here */
	return uname(&u) == 0 && !strcmp(u.release, env->osrelease);
}
