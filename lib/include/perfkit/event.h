/* SPDX-License-Identifier: MIT */
/*
 * perfkit/event.h - event names and the event-spec parser (perf's -e syntax).
 *
 * Grammar (as perf spells it):
 *   list     := item (',' item)*
 *   item     := event | '{' list '}' [':' modifiers]
 *   event    := (hw-name | sw-name | cache-name | 'r'HEX | sys':'tp-glob
 *               | 'mem:'ADDR['/'LEN][':'rwx] | pmu'/'terms'/' | pmu'/'alias'/' | pfm-name)
 *               [':' modifiers]
 *   modifiers:= [ukhHGIpPSDWe]+  (p may repeat up to 3 times)
 *   terms    := term (',' term)*,  term := name ['=' value]
 * Generic terms accepted inside /.../: period=, freq=, name=, call-graph=, stack-size=,
 * config=, config1=, config2=, config3=.
 */
#ifndef PERFKIT_EVENT_H
#define PERFKIT_EVENT_H

#include <perfkit/common.h>
#include <perfkit/sys.h>
#include <perfkit/pmu.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- name tables ---- */

struct pk_event_name {
	const char *name;      /* canonical perf name, e.g. "cpu-cycles" */
	const char *alias;     /* other accepted spelling or NULL, e.g. "cycles" */
	uint32_t type;         /* PERF_TYPE_HARDWARE or PERF_TYPE_SOFTWARE */
	uint64_t config;
	const char *desc;      /* one line of English */
};

/* Static tables of the generic hardware and software events. */
PK_API const struct pk_event_name *pk_hw_event_names(size_t *n);
PK_API const struct pk_event_name *pk_sw_event_names(size_t *n);

/* Hardware-cache events: every cache x op x result combination that perf treats as
 * meaningful (32 of the 42 the ABI can encode: e.g. there is no L1-icache-stores).
 * Calls cb with perf's canonical name ("L1-dcache-load-misses") and the config
 * (id | op << 8 | result << 16). Stops when cb returns non-zero. The name is valid only
 * during the call (copy it to keep it). */
typedef int (*pk_hwcache_cb)(const char *name, uint64_t config, void *ctx);
PK_API int pk_hwcache__foreach(pk_hwcache_cb cb, void *ctx);

/* ---- parsed events ---- */

enum pk_event_kind {
	PK_EV_HARDWARE,
	PK_EV_SOFTWARE,
	PK_EV_HWCACHE,
	PK_EV_RAW,
	PK_EV_TRACEPOINT,
	PK_EV_BREAKPOINT,
	PK_EV_PMU,         /* pmu/terms/ or pmu/alias/ from sysfs (incl. kprobe/uprobe PMUs) */
	PK_EV_PFM,         /* named by libpfm4 */
};

/* pk_event_spec__flags() bits */
#define PK_EVF_WEAK_GROUP   (1u << 0) /* W: reopen members alone if the group fails */
#define PK_EVF_SAMPLE_READ  (1u << 1) /* S: sample-read through the group leader */
#define PK_EVF_PRECISE_MAX  (1u << 2) /* P: use the highest precise_ip the kernel accepts */
#define PK_EVF_PERIOD_SET   (1u << 3) /* period= term given */
#define PK_EVF_FREQ_SET     (1u << 4) /* freq= term given */
#define PK_EVF_NAME_SET     (1u << 5) /* name= term given */
/* Never opened with attr.inherit: the kprobe and uprobe PMUs read config1 (the function
 * name or path, a pointer into our memory) again when the kernel copies an inherited
 * event into a new child, from the memory of the task that forks, where it is garbage:
 * the fork fails with EFAULT. So probes count in the threads opened, not in later
 * children. */
#define PK_EVF_NO_INHERIT   (1u << 6)

struct pk_parse_opts {
	size_t sz;
	const char *sysfs_root;         /* NULL = "/sys" */
	const char *tracefs_root;       /* NULL = pk_tracefs__root() */
	const struct pk_pmu_set *pmus;  /* NULL = loaded lazily from sysfs_root */
	bool no_pfm;                    /* do not consult libpfm4 */
	int probe_pid;                  /* > 0: u:/r:/sdt: library names looked up in this
					 * process's maps first (perfkit/probe.h) */
	size_t :0;
};

/* Where and why a parse failed. `column` is a 0-based byte offset into the string. */
struct pk_parse_error {
	int column;
	char msg[256];
};

struct pk_event_list;
struct pk_event_spec;

PK_API struct pk_event_list *pk_event_list__new(void);
PK_API void pk_event_list__free(struct pk_event_list *list);

/*
 * Parse `str` and append its events to `list` (so repeated -e options accumulate; group
 * numbers stay unique across calls). On failure nothing is appended, -PK_ERR_PARSE (or
 * -ENOENT for an unknown name/PMU/tracepoint, -ENOMEM) is returned and `err` (may be NULL)
 * says what and where, e.g. "unknown event 'cylces' (did you mean 'cycles'?)".
 * Attrs come out with type, size, config*, bp_*, exclude_*, precise_ip, pinned, exclusive,
 * sample_period/freq set; every other field is zero for the caller to fill.
 */
PK_API int pk_event_list__parse(struct pk_event_list *list, const char *str,
				const struct pk_parse_opts *opts, struct pk_parse_error *err);

PK_API size_t pk_event_list__count(const struct pk_event_list *list);
PK_API const struct pk_event_spec *pk_event_list__get(const struct pk_event_list *list, size_t i);

PK_API const struct pk_attr *pk_event_spec__attr(const struct pk_event_spec *ev);
PK_API enum pk_event_kind pk_event_spec__kind(const struct pk_event_spec *ev);
/* Display name as perf prints it: the spec as written for this event, with modifiers
 * ("cycles:u", "sched:sched_switch", "msr/tsc/"), or the name= term. */
PK_API const char *pk_event_spec__name(const struct pk_event_spec *ev);
/* PMU name for PK_EV_PMU / tracepoint "sys:name" / NULL otherwise. */
PK_API const char *pk_event_spec__pmu(const struct pk_event_spec *ev);
/* Group number (>= 0) shared by all members of one {...} group, or -1 if ungrouped. */
PK_API int pk_event_spec__group(const struct pk_event_spec *ev);
PK_API bool pk_event_spec__is_leader(const struct pk_event_spec *ev);
PK_API unsigned pk_event_spec__flags(const struct pk_event_spec *ev);
/* call-graph= term ("fp", "dwarf", "lbr", "no") or NULL; stack-size= term or 0. */
PK_API const char *pk_event_spec__callgraph(const struct pk_event_spec *ev);
PK_API uint32_t pk_event_spec__stack_size(const struct pk_event_spec *ev);
/* sysfs alias .scale / .unit for PMU alias events (1.0 / NULL otherwise). */
PK_API double pk_event_spec__scale(const struct pk_event_spec *ev);
PK_API const char *pk_event_spec__unit(const struct pk_event_spec *ev);
/* Dynamic probes by name (u:, r:, sdt:): the binary resolved and the file offset probed
 * (NULL / 0 for other events). The spec holds the binary open until it is freed, and the
 * uprobe PMU is given that open file. */
PK_API const char *pk_event_spec__probe_file(const struct pk_event_spec *ev);
PK_API uint64_t pk_event_spec__probe_offset(const struct pk_event_spec *ev);
/* 0 if the probed binary's path still names the file probed (or the event is no such
 * probe); -ESTALE if it was replaced since (the probe stays on the old file, so runs of
 * the new one are not seen), -ENOENT if it was removed. */
PK_API int pk_event_spec__probe_check(const struct pk_event_spec *ev);

/* ---- error explanations ---- */

/* What was being opened when perf_event_open failed. */
struct pk_open_ctx {
	size_t sz;
	const struct perf_event_attr *attr;
	pid_t pid;
	int cpu;
	int group_fd;
	unsigned long flags;
	const char *event_name;    /* for the message; may be NULL */
	const struct pk_limits *limits; /* NULL = read /proc now */
	size_t :0;
};

/*
 * Explain a perf_event_open failure `err` (negative or positive errno) in the context of
 * the attr/target that failed, with the fix: e.g. EACCES with paranoid=2 and pid=-1 says
 * system-wide needs CAP_PERFMON (or CAP_SYS_ADMIN) or perf_event_paranoid <= 0.
 * Writes a NUL-terminated message into buf; returns its length (truncated to len-1).
 */
PK_API int pk_explain_open_error(char *buf, size_t len, int err, const struct pk_open_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
