/* SPDX-License-Identifier: MIT */
/*
 * lib/core/config.c - the process-wide settings of pk_set_config (perfkit/common.h).
 *
 * Everything else the library can be told comes through the options struct of the call
 * or object concerned; only what has no such object lives here (tracefs discovery, the
 * huge-page hint of allocators deep inside). Nothing is taken from the environment.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static char cfg_tracefs[PATH_MAX];      /* "" = none; under cfg_lock */
static atomic_bool cfg_huge_pages;

PK_API int pk_set_config(const struct pk_config_opts *opts)
{
	if (!PK_OPTS_VALID(opts, pk_config_opts))
		return pk_err(-EINVAL);
	const char *root = PK_OPTS_GET(opts, tracefs_root, NULL);
	if (root && strlen(root) >= sizeof(cfg_tracefs))
		return pk_err(-ENAMETOOLONG);
	pthread_mutex_lock(&cfg_lock);
	snprintf(cfg_tracefs, sizeof(cfg_tracefs), "%s", root ? root : "");
	pthread_mutex_unlock(&cfg_lock);
	atomic_store_explicit(&cfg_huge_pages, PK_OPTS_GET(opts, huge_pages, false),
			      memory_order_relaxed);
	return 0;
}

bool pk_config_tracefs_root(char *buf, size_t len)
{
	pthread_mutex_lock(&cfg_lock);
	int n = snprintf(buf, len, "%s", cfg_tracefs);
	pthread_mutex_unlock(&cfg_lock);
	return n > 0 && (size_t)n < len;
}

bool pk_config_huge_pages(void)
{
	return atomic_load_explicit(&cfg_huge_pages, memory_order_relaxed);
}
