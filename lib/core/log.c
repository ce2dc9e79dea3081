/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "internal.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pk_log_fn log_fn;
static void *log_ctx;
static enum pk_log_level log_max = PK_LOG_WARN;

static void default_log(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "perfkit: %s%s\n", level == PK_LOG_ERROR ? "error: " : "", msg);
}

PK_API pk_log_fn pk_set_log(pk_log_fn fn, void *ctx, enum pk_log_level max_level)
{
	pthread_mutex_lock(&log_lock);
	pk_log_fn old = log_fn ? log_fn : default_log;
	log_fn = fn;
	log_ctx = ctx;
	log_max = max_level;
	pthread_mutex_unlock(&log_lock);
	return old;
}

void pk_log(enum pk_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int saved = errno;

	pthread_mutex_lock(&log_lock);
	if (level > log_max) {
		pthread_mutex_unlock(&log_lock);
		errno = saved;
		return;
	}
	pk_log_fn fn = log_fn ? log_fn : default_log;
	void *ctx = log_ctx;
	pthread_mutex_unlock(&log_lock);

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(level, msg, ctx);
	errno = saved;
}

bool pk_opts_valid(const void *opts, size_t user_sz, size_t our_sz, const char *type)
{
	if (user_sz < sizeof(size_t)) {
		pk_warn("%s: size %zu too small (forgot PK_OPTS?)", type, user_sz);
		return false;
	}
	for (size_t i = our_sz; i < user_sz; i++) {
		if (((const unsigned char *)opts)[i]) {
			pk_warn("%s: unknown non-zero field at byte %zu (built against a newer perfkit?)",
				type, i);
			return false;
		}
	}
	return true;
}

PK_API const char *pk_version(void)
{
	return PK_VERSION_STRING;
}
