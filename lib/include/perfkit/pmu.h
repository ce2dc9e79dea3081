/* SPDX-License-Identifier: MIT */
/*
 * perfkit/pmu.h - PMUs discovered from sysfs (/sys/bus/event_source/devices/<pmu>/),
 * their format terms (bit ranges such as "config1:1,6-10,44"), their event aliases
 * ("event=0x2,inv,ldlat=3" plus .scale/.unit), tracepoints from tracefs, and libpfm4.
 *
 * All text read here is untrusted: sizes are bounded, malformed files are skipped with a
 * log message (never fatal to the rest of the set).
 */
#ifndef PERFKIT_PMU_H
#define PERFKIT_PMU_H

#include <perfkit/common.h>
#include <perfkit/sys.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which attr word a format term lands in. */
enum pk_cfg_word { PK_CFG_CONFIG = 0, PK_CFG_CONFIG1 = 1, PK_CFG_CONFIG2 = 2, PK_CFG_CONFIG3 = 3 };

#define PK_FORMAT_MAX_RANGES 16
/* A parsed sysfs format file: the value's bits are scattered, low bits first, over the
 * ranges in order (so "config:0-7,32-35" takes a 12-bit value: bits 0-7 then 32-35). */
struct pk_format {
	enum pk_cfg_word word;
	unsigned nr_ranges;
	struct { uint8_t lo, hi; } ranges[PK_FORMAT_MAX_RANGES];
	unsigned width;            /* total number of bits */
};

/* Parse "config1:1,6-10,44" (text need not be NUL-terminated; trailing whitespace ok).
 * -PK_ERR_PARSE on malformed text, bits past 63, or more than PK_FORMAT_MAX_RANGES. */
PK_API int pk_format__parse(struct pk_format *out, const char *text, size_t len);

/* OR `value` into cfg[word] at the format's bit positions. -ERANGE if value has bits
 * beyond the format's width (nothing is written then). cfg is {config,config1,2,3}. */
PK_API int pk_format__encode(const struct pk_format *f, uint64_t value, uint64_t cfg[4]);

/* Write cfg[0..3] into the attr's config/config1/config2/config3. */
PK_API void pk_attr__set_configs(struct pk_attr *a, const uint64_t cfg[4]);

struct pk_pmu_set;
struct pk_pmu;

struct pk_pmu_opts {
	size_t sz;
	const char *sysfs_root;    /* NULL = "/sys"; tests point this at a synthetic tree */
	size_t :0;
};

/* Scan <sysfs_root>/bus/event_source/devices. An absent directory yields an empty set. */
PK_API int pk_pmu_set__load(struct pk_pmu_set **out, const struct pk_pmu_opts *opts);
PK_API void pk_pmu_set__free(struct pk_pmu_set *set);
PK_API size_t pk_pmu_set__count(const struct pk_pmu_set *set);
PK_API const struct pk_pmu *pk_pmu_set__get(const struct pk_pmu_set *set, size_t i);
PK_API const struct pk_pmu *pk_pmu_set__find(const struct pk_pmu_set *set, const char *name);
PK_API const struct pk_pmu *pk_pmu_set__find_type(const struct pk_pmu_set *set, uint32_t type);

PK_API const char *pk_pmu__name(const struct pk_pmu *pmu);
PK_API uint32_t pk_pmu__type(const struct pk_pmu *pmu);
PK_API const char *pk_pmu__cpumask(const struct pk_pmu *pmu);  /* NULL if absent */
PK_API int pk_pmu__rdpmc(const struct pk_pmu *pmu);            /* -1 if absent */

PK_API size_t pk_pmu__format_count(const struct pk_pmu *pmu);
PK_API const char *pk_pmu__format_name(const struct pk_pmu *pmu, size_t i);
PK_API const struct pk_format *pk_pmu__format(const struct pk_pmu *pmu, size_t i);
PK_API const struct pk_format *pk_pmu__find_format(const struct pk_pmu *pmu, const char *name);

PK_API size_t pk_pmu__alias_count(const struct pk_pmu *pmu);
PK_API const char *pk_pmu__alias_name(const struct pk_pmu *pmu, size_t i);
PK_API const char *pk_pmu__alias_terms(const struct pk_pmu *pmu, size_t i); /* "event=0x3c" */
PK_API double pk_pmu__alias_scale(const struct pk_pmu *pmu, size_t i);      /* 1.0 default */
PK_API const char *pk_pmu__alias_unit(const struct pk_pmu *pmu, size_t i);  /* NULL default */
PK_API long pk_pmu__find_alias(const struct pk_pmu *pmu, const char *name); /* index or -1 */

/*
 * Encode a comma-separated term list ("event=0x3c,umask=1,inv", alias names allowed) for
 * this PMU into attr->config..config3 (a term without value means 1). Terms that are not
 * format terms of the PMU (period=, name=, ...) are rejected with -PK_ERR_PARSE here:
 * the event-spec parser strips the generic ones first. `err`/`errlen` receive a message.
 *
 * Details: the raw words config=, config1=, config2=, config3= are accepted too (unless the
 * PMU has a format of that name). Values are ORed into the attr's current config words
 * (zero them first); on failure the attr is left untouched. An alias expands to its terms
 * (nested aliases up to 4 levels, loops refused); a term the user writes overrides the
 * same term from an alias ("mem-loads,ldlat=30"), and an alias term "umask=?" must be
 * supplied by the user. A term given twice by the user (or by two aliases) is an error.
 * Returns 0, -PK_ERR_PARSE (unknown/duplicate/malformed term, missing ?-value), -ERANGE
 * (value wider than the term's bits), -EINVAL or -ENOMEM.
 */
PK_API int pk_pmu__encode(const struct pk_pmu *pmu, const char *terms, struct pk_attr *attr,
			  char *err, size_t errlen);

/* ---- tracepoints ---- */

/* tracefs mount point: pk_config_opts.tracefs_root (pk_set_config), /sys/kernel/tracing,
 * /sys/kernel/debug/tracing, or a tracefs entry in /proc/mounts; the first that has an
 * events/ directory. NULL (errno ENOENT) if none is mounted. The string is thread-local,
 * valid until the next call in the same thread. */
PK_API const char *pk_tracefs__root(void);

/* Id of "sys:name" from <root>/events/<sys>/<name>/id; root NULL = pk_tracefs__root().
 * Returns the id (>= 0) or a negative errno. */
PK_API long long pk_tracepoint__id(const char *root, const char *sys, const char *name);

/* Call cb for every tracepoint whose "sys:name" matches `glob` (fnmatch; NULL = all), in
 * sorted order. Stops early when cb returns non-zero and returns that value. */
typedef int (*pk_tracepoint_cb)(const char *sys, const char *name, long long id, void *ctx);
PK_API int pk_tracepoint__foreach(const char *root, const char *glob, pk_tracepoint_cb cb,
				  void *ctx);

/* ---- libpfm4 ---- */

/* Encode a libpfm4 event name ("INST_RETIRED:ANY_P", "perf::cycles", ...) into attr.
 * -ENOENT when libpfm4 does not know it on this machine. */
PK_API int pk_pfm__encode(const char *name, struct pk_attr *attr);

typedef int (*pk_pfm_cb)(const char *pmu, const char *name, const char *desc, void *ctx);
/* Every event of every PMU libpfm4 detects as present on this machine. */
PK_API int pk_pfm__foreach(pk_pfm_cb cb, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
