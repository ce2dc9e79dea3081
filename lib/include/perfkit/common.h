/* SPDX-License-Identifier: MIT */
/*
 * perfkit/common.h - export macro, version, error convention, logging, options structs.
 *
 * Conventions used by every perfkit header:
 *  - int functions return 0 (or a non-negative count) on success and a negative errno on
 *    failure; they also set errno to the positive value.
 *  - functions returning pointers return NULL and set errno on failure.
 *  - destructors (`__free`, `__close`) accept NULL.
 *  - options structs start with `size_t sz` (set by PK_OPTS) so that the library can grow
 *    them without breaking callers compiled against older headers.
 *  - the library never prints; it reports through the log callback below.
 */
#ifndef PERFKIT_COMMON_H
#define PERFKIT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PK_API __attribute__((visibility("default")))

#define PK_VERSION_MAJOR 0
#define PK_VERSION_MINOR 1
#define PK_VERSION_PATCH 0

/* Library version as "MAJOR.MINOR.PATCH". */
PK_API const char *pk_version(void);

/*
 * Declare and zero-fill an options struct, setting its size:
 *     PK_OPTS(pk_parse_opts, o, .sysfs_root = "/tmp/fake");
 */
#define PK_OPTS(TYPE, NAME, ...)                                             \
	struct TYPE NAME = ({                                                \
		struct TYPE ___##NAME;                                       \
		__builtin_memset(&___##NAME, 0, sizeof(___##NAME));          \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };     \
	})

/* Library-specific error codes beyond errno's range (returned negated). */
enum pk_error {
	PK_ERR_BASE = 4000,
	PK_ERR_PARSE = 4000,    /* malformed input text (event spec, sysfs file, ...) */
	PK_ERR_FORMAT = 4001,   /* malformed binary input (perf.data, record) */
	PK_ERR_NOPMU = 4002,    /* no such PMU / hardware counter on this machine */
	PK_ERR_TRUNCATED = 4003,/* input ended inside a structure */
	PK_ERR_EMPTY = 4004,    /* the input holds no byte at all */
	PK_ERR_NOT_PERF_DATA = 4005, /* the input is not a perf.data file (its magic) */
	PK_ERR_BYTE_ORDER = 4006,    /* perf.data written on a machine of the other byte order */
	PK_ERR_MAX
};

/*
 * Text for an errno value or a PK_ERR_* code (sign ignored). Never NULL; the string is
 * static or thread-local and valid until the next call in the same thread.
 */
PK_API const char *pk_strerror(int err);

enum pk_log_level {
	PK_LOG_ERROR = 0,
	PK_LOG_WARN = 1,
	PK_LOG_INFO = 2,
	PK_LOG_DEBUG = 3,
};

typedef void (*pk_log_fn)(enum pk_log_level level, const char *msg, void *ctx);

/*
 * Install a log callback (NULL restores the default, which writes warnings and errors
 * to stderr prefixed with "perfkit: "). `max_level` filters messages before formatting.
 * Returns the previous callback. Thread-safe with respect to concurrent logging.
 */
PK_API pk_log_fn pk_set_log(pk_log_fn fn, void *ctx, enum pk_log_level max_level);

/*
 * Process-wide settings. The library reads no environment variable for its
 * configuration (docs/architecture.md, "Configuration"): a program that wants one to
 * matter reads it and passes the value here or in the options struct concerned.
 */
struct pk_config_opts {
	size_t sz;
	/* tracefs directory tried before the usual places (/sys/kernel/tracing,
	 * /sys/kernel/debug/tracing, a tracefs line of /proc/mounts) by pk_tracefs__root;
	 * used only if it has an events/ directory. NULL or "": none. */
	const char *tracefs_root;
	/* Ask for transparent huge pages (madvise MADV_HUGEPAGE) on big arrays (>= 2 MiB)
	 * of reports and symbol tables. Off by default: in VMs that hand free memory back
	 * to the host, a fresh huge page can cost more than the faults it saves. */
	bool huge_pages;
	size_t :0;
};

/*
 * Replace the process-wide settings with *opts (NULL: the defaults, every field zero).
 * The string is copied. Meant to be called once, early; it is safe against concurrent
 * calls but a call made while another thread works may or may not be seen by that work.
 * Returns 0, -EINVAL (bad opts) or -ENAMETOOLONG (tracefs_root of PATH_MAX or more).
 */
PK_API int pk_set_config(const struct pk_config_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
