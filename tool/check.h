/* SPDX-License-Identifier: MIT */
/* tool/check.h - `perfkit check`'s features, the facts it gathers and the functions its
 * files share: cmd-check.c (options, the feature table), check-probe.c (the facts and
 * each feature tried with a real event), check-print.c (the findings as text or JSON). */
#ifndef TOOL_CHECK_H
#define TOOL_CHECK_H

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <linux/hw_breakpoint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

enum feat_id {
	F_SOFTWARE,
	F_KERNEL,
	F_HARDWARE,
	F_CACHE,
	F_RDPMC,
	F_USER_TIME,
	F_TRACEPOINT,
	F_BREAKPOINT,
	F_SYSTEM_WIDE,
	F_CALLCHAIN,
	F_USER_STACK,
	F_KPROBE,
	F_UPROBE,
	F_NR
};

struct feature {
	const char *key;    /* JSON key */
	const char *label;  /* text label */
	bool ok;
	char detail[256];   /* what was opened / measured */
	char reason[2048];  /* why not, with the fix (only when !ok) */
};

struct facts {
	char kernel[256];
	uid_t uid, euid;
	uint64_t caps;
	bool caps_known;
	struct pk_limits lim;
	struct rlimit nofile;
	bool nofile_ok;
	struct pk_pmu_set *pmus;
	int rdpmc_sysfs;          /* cpu PMU's rdpmc file, -1 if absent */
};

/* snprintf that tolerates truncation (messages are bounded by design). */
static inline void __attribute__((format(printf, 3, 4))) setf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* cmd-check.c: every feature, what was found and why not */
extern struct feature feats[F_NR];
/* check-probe.c: fill fx and feats (every probe runs; nothing is printed) */
void check_gather(struct facts *fx);
/* check-print.c: fx and feats on stdout, as text or as one JSON object */
void check_print_text(const struct facts *fx);
void check_print_json(const struct facts *fx);

#endif
