/* SPDX-License-Identifier: MIT */
/*
 * tool/debuginfod.c - debug files fetched by build-id from the debuginfod servers of
 * $DEBUGINFOD_URLS (elfutils' libdebuginfod, which reads that variable, DEBUGINFOD_CACHE_PATH
 * and its other settings itself), given to the library as the machine's debug-file finder
 * (pk_machine_opts.find_debuginfo).
 *
 * libdebuginfod is opened with dlopen on first use, as elfutils' own libdwfl does: it links
 * libcurl and some thirty libraries, whose loading every command (stat's measured start-up
 * among them) would otherwise pay. Without it (not installed), nothing is fetched.
 *
 * A slow or dead server must not stall a report: all queries of one command share one time
 * budget ($DEBUGINFOD_TIMEOUT seconds, else TOOL_DEBUGINFOD_BUDGET_S), enforced by the
 * progress callback, which libdebuginfod calls while it waits; a query that fails for any
 * reason but "not found" (refused, timed out, aborted) ends the fetching for the command,
 * with one warning.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <elfutils/debuginfod.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

#define TOOL_DEBUGINFOD_BUDGET_S 10.0

static struct {
	bool tried, off;
	void *so;
	debuginfod_client *client;
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*end)(debuginfod_client *);
	double budget;          /* seconds left for all queries */
	double call_start;
	bool aborted;           /* the progress callback ended the last query */
	unsigned fetched, missing;
} di;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* libdebuginfod calls this while it waits and transfers: nonzero aborts the query */
static int progress(debuginfod_client *c, long a, long b)
{
	(void)c;
	(void)a;
	(void)b;
	if (now_s() - di.call_start > di.budget)
		di.aborted = true;
	return di.aborted;
}

static bool open_client(void)
{
	if (di.tried)
		return di.client != NULL;
	di.tried = true;
	di.so = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!di.so) {
		tool_warn("DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded (%s): "
			  "no debug files are fetched (install libdebuginfod1)", dlerror());
		return false;
	}
	*(void **)&di.begin = dlsym(di.so, "debuginfod_begin");
	*(void **)&di.find_debuginfo = dlsym(di.so, "debuginfod_find_debuginfo");
	*(void **)&di.set_progressfn = dlsym(di.so, "debuginfod_set_progressfn");
	*(void **)&di.end = dlsym(di.so, "debuginfod_end");
	if (!di.begin || !di.find_debuginfo || !di.set_progressfn || !di.end ||
	    !(di.client = di.begin())) {
		tool_warn("libdebuginfod.so.1 is not usable: no debug files are fetched");
		return false;
	}
	di.set_progressfn(di.client, progress);
	const char *t = tool_debuginfod_timeout();
	char *end = NULL;
	double v = t ? strtod(t, &end) : 0;
	di.budget = t && end != t && v > 0 && v < 86400 ? v : TOOL_DEBUGINFOD_BUDGET_S;
	return true;
}

static int find_locked(const uint8_t *id, size_t len, char **path);

/* pk_machine_opts.find_debuginfo. Machines on two threads (diff's two loads, say) may ask
 * at once: one query at a time, the client and the budget being the command's. */
static int find(void *ctx, const uint8_t *id, size_t len, char **path)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	(void)ctx;
	pthread_mutex_lock(&lock);
	int fd = find_locked(id, len, path);
	pthread_mutex_unlock(&lock);
	return fd;
}

static int find_locked(const uint8_t *id, size_t len, char **path)
{
	if (di.off || len == 0 || len > 64 || !open_client()) {
		di.off = true;
		return -ENOENT;
	}
	if (di.budget <= 0) {
		di.off = true;
		return -ENOENT;
	}
	di.call_start = now_s();
	di.aborted = false;
	int fd = di.find_debuginfo(di.client, id, (int)len, path);
	double spent = now_s() - di.call_start;
	di.budget -= spent;
	if (fd >= 0) {
		di.fetched++;
		return fd;
	}
	/* -ENOENT: the servers have none (libdebuginfod 0.188 also says so after our
	 * abort); anything else, or the budget spent, stops further queries of this
	 * command */
	if (fd != -ENOENT || di.aborted || di.budget <= 0) {
		di.off = true;
		tool_warn("debuginfod: no answer from $DEBUGINFOD_URLS (%s after %.1f s): no more "
			  "debug files fetched by this command (set DEBUGINFOD_TIMEOUT, or "
			  "--no-debuginfod)", di.aborted || di.budget <= 0 ? "timed out" :
			  strerror(-fd), spent);
	} else {
		di.missing++;
	}
	return fd;
}

int tool_debuginfod_find(const uint8_t *id, size_t len, char **path)
{
	const char *urls = tool_debuginfod_urls();
	if (!urls || !*urls)
		return -ENOENT;
	return find(NULL, id, len, path);
}

void tool_debuginfod_setup(struct pk_machine_opts *mo, bool enable)
{
	const char *urls = tool_debuginfod_urls();
	if (!enable || !urls || !*urls) {
		mo->find_debuginfo = NULL;
		return;
	}
	mo->find_debuginfo = find;
	mo->find_debuginfo_ctx = NULL;
}
