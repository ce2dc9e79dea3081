/* SPDX-License-Identifier: MIT */
/*
 * tool/push.h - shipping profiles to a Pyroscope-compatible ingest endpoint (`perfkit
 * push`, `perfkit record --push`). A pusher owns one thread: submit() hands it a
 * perf.data path from any thread and returns at once (a mutex and a queue entry, never
 * I/O); the thread converts the file to pprof (or folded stacks), POSTs it through
 * libcurl and, when the server cannot take it now (connection refused, timeout, 5xx,
 * 429), keeps it in a spool directory and retries with exponential back-off and jitter.
 *
 *   tool/push.c          the queue, the thread, the retry policy, the summary
 *   tool/push-convert.c  perf.data -> the body, query and time range of one push
 *   tool/push-http.c     libcurl (loaded with dlopen on first use: see there), the request
 *   tool/push-spool.c    the spool directory: entries named by time range, bounded size
 *   tool/push-opts.c     the options (shared with record --push), push-text.c escaping
 */
#ifndef TOOL_PUSH_H
#define TOOL_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* what is sent: pprof to Pyroscope's /ingest (multipart field "profile"), folded stacks
 * to /ingest, or pprof inside Parca's WriteRaw request (JSON, /profiles/writeraw) */
enum push_format { PUSH_PPROF = 0, PUSH_FOLDED = 1, PUSH_PARCA = 2 };
extern const char *const push_format_names[3];   /* "pprof", "folded", "parca" */

struct tool_push_opts {
	const char *url;           /* server, e.g. http://host:4040 (/ingest is appended) */
	const char *app;           /* application name (NULL: the top comm of each file) */
	const char *const *tags;   /* "key=value" labels */
	size_t nr_tags;
	enum push_format format;
	bool no_default_labels;    /* no hostname/comm labels */
	bool srcline;              /* pprof: source file:line of every frame (DWARF) */
	bool verbose;
	bool quiet;                /* the summary only when something was not delivered */
	const char *event;         /* only this event (NULL: all; folded: the first) */
	const char *user, *password; /* HTTP basic authentication (user NULL: none) */
	const char *bearer;        /* Authorization: Bearer (NULL: none) */
	const char *tenant;        /* X-Scope-OrgID (NULL: none) */
	const char *cacert;        /* CA bundle (NULL: the system's) */
	unsigned timeout_ms;       /* one request, connection included */
	const char *spool_dir;     /* NULL: no spool (a failed push is only reported) */
	uint64_t spool_max;        /* bytes */
	unsigned retry_min_ms, retry_max_ms; /* back-off bounds */
};

struct tool_push_stats {
	unsigned pushed;           /* delivered (2xx), spooled ones included */
	unsigned spooled;          /* failed once, kept in the spool */
	unsigned from_spool;       /* of pushed: delivered from the spool */
	unsigned dropped;          /* dropped from a full spool (oldest first) */
	unsigned rejected;         /* 4xx other than 429 (auth included): not retried */
	unsigned failed;           /* could not be converted, or lost without a spool */
	unsigned waiting;          /* still in the spool at the end */
	bool auth_failed;          /* 401/403: the pusher stopped */
};

struct tool_pusher;

/* Check the options, load libcurl, open the spool and start the thread. Prints its
 * error and returns NULL on failure. */
struct tool_pusher *tool_pusher_new(const struct tool_push_opts *o);
/* Queue a perf.data file (the path is copied). Any thread; never blocks on I/O.
 * -ENOMEM, or -ESHUTDOWN after finish or once authentication failed. */
int tool_pusher_submit(struct tool_pusher *p, const char *path);
/* The same; with unlink_after, `path` is a name of the pusher's own (a hard link made
 * so that the recorder may delete its name) and is removed once converted. */
int tool_pusher_submit_ex(struct tool_pusher *p, const char *path, bool unlink_after);
/* Push what is queued, try the spool once more (and for up to wait_ms longer while
 * entries remain), stop the thread, print the summary and free the pusher. Fills *st
 * (may be NULL). Returns 0 when nothing failed or waits, 1 otherwise. */
int tool_pusher_finish(struct tool_pusher *p, unsigned wait_ms, struct tool_push_stats *st);

/* ---- internal to push*.c ---- */

/* A converted file: the body to send, the query (also the spool's identity), the range. */
struct push_job {
	char *query;
	char *body;
	size_t len;
	uint64_t from_ms, until_ms;
};
/* path -> job (tool/push-convert.c): 0; 1 when the file has no sample (nothing to
 * send); -1 after printing why. */
int push_convert(const struct tool_push_opts *o, const char *path, struct push_job *j);

/* Percent-encoding of a query value (RFC 3986 unreserved kept): at most 3 * n + 1
 * bytes into dst, NUL-terminated; returns the length, or -1 if cap is too small. */
int push_url_escape(char *dst, size_t cap, const char *src);
/* "SIZE" with an optional K/M/G suffix (powers of 1024) into *v; -1 if malformed. */
int push_parse_size(const char *s, uint64_t *v);

enum push_outcome {
	PUSH_OK,        /* 2xx */
	PUSH_RETRY,     /* connection refused, timeout, 5xx, 429: spool and retry */
	PUSH_REJECTED,  /* other 4xx, 3xx: report, do not retry */
	PUSH_AUTH,      /* 401/403 */
	PUSH_FATAL,     /* the request cannot work as configured (TLS set-up, bad URL) */
};
struct push_reply {
	long status;            /* HTTP status, 0 if none */
	char msg[200];          /* why, for messages: curl's error or the server's text */
};
struct push_http;
/* Load libcurl (once per process; call from the main thread before any pusher thread).
 * 0, or -1 with the reason in why. */
int push_http_global_init(char *why, size_t len);
struct push_http *push_http_new(const struct tool_push_opts *o);
void push_http_free(struct push_http *c);
/* POST url/ingest?query with body (pprof: as the multipart field "profile"), or, for
 * PUSH_PARCA, the JSON body to url/profiles/writeraw (query unused). */
enum push_outcome push_http_send(struct push_http *c, const char *query, const void *body,
				 size_t len, enum push_format fmt, struct push_reply *r);
/* base64 of n bytes into dst (room for 4 * ((n + 2) / 3) + 1 bytes); returns the length */
size_t push_base64(char *dst, const void *src, size_t n);

struct push_spool;
/* Create the directory (0700) if needed. NULL after printing the error. */
struct push_spool *push_spool_open(const char *dir, uint64_t max);
void push_spool_free(struct push_spool *s);
const char *push_spool_dir(const struct push_spool *s);
/* Store one profile under its key (from/until in ms + a hash of the query: the same
 * profile keeps one entry); then drop the oldest entries while the spool holds more
 * than max bytes (*dropped += their number; warned). 0 or -errno. */
int push_spool_put(struct push_spool *s, uint64_t from_ms, uint64_t until_ms,
		   const char *query, const void *body, size_t len, enum push_format fmt,
		   unsigned *dropped);
/* The entries, oldest first (malloc'd names; free with push_spool_names_free). */
int push_spool_list(struct push_spool *s, char ***names, size_t *n);
void push_spool_names_free(char **names, size_t n);
/* Open and lock one entry (another process may be sending it: -EBUSY; gone: -ENOENT),
 * read it (a malformed entry: -EBADMSG). The entry stays locked until
 * push_spool_release(remove). */
struct push_spool_entry {
	int fd;
	char *query;
	enum push_format format;
	void *body;
	size_t len;
	char name[96];
};
int push_spool_take(struct push_spool *s, const char *name, struct push_spool_entry *e);
void push_spool_release(struct push_spool *s, struct push_spool_entry *e, bool remove);
/* A damaged entry is renamed NAME.bad (no longer an entry), with a warning. */
void push_spool_set_aside(struct push_spool *s, const char *name);

#endif
