/* SPDX-License-Identifier: MIT */
/* lib/event/parse-internal.h - name tables shared by names.c and the event parser
 * (parse*.c). Never installed. */
#ifndef PK_PARSE_INTERNAL_H
#define PK_PARSE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <perfkit/event.h>

/* Software event ids newer than some installed uapi headers. */
#define PK_SW_BPF_OUTPUT      10
#define PK_SW_CGROUP_SWITCHES 11

/* Hardware-cache ids as the kernel ABI numbers them (PERF_COUNT_HW_CACHE_*). */
#define PK_HWC_NR_CACHE  7
#define PK_HWC_NR_OP     3
#define PK_HWC_NR_RESULT 2

/* Does perf consider this cache x op combination meaningful (e.g. no L1-icache stores)? */
bool pk_hwcache__op_valid(unsigned cache, unsigned op);

/* Spellings of cache `i` / op `i` / result `i` (NULL-terminated, first is canonical). */
const char *const *pk_hwcache__cache_names(unsigned i);
const char *const *pk_hwcache__op_names(unsigned i);
const char *const *pk_hwcache__result_names(unsigned i);

/*
 * Parse a hardware-cache event name [s, s+len) case-insensitively:
 *   <cache>[-<op>][-<result>]  (op and result in either order, each at most once;
 *   op defaults to load/read, result to access).
 * Returns 0 with *config = cache | op << 8 | result << 16; -ENOENT if `s` does not start
 * with a cache name (not a cache event at all); -PK_ERR_PARSE with a message in err when
 * it starts like one but is malformed or names an op the cache does not have.
 */
int pk_hwcache__parse(const char *s, size_t len, uint64_t *config, char *err, size_t errlen);

/* Exact (case-sensitive) lookup of a generic hw/sw name or alias; NULL if unknown. */
const struct pk_event_name *pk_event_name__find(const char *s, size_t len);

#endif
