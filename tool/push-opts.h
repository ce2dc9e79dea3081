/* SPDX-License-Identifier: MIT */
/* tool/push-opts.h - the push options of `perfkit push` and `perfkit record --push`. */
#ifndef TOOL_PUSH_OPTS_H
#define TOOL_PUSH_OPTS_H

#include "push.h"

/* option ids (tool_opt.id), above those of every command that includes the table */
enum {
	PUSH_OPT_URL = 1100, PUSH_OPT_APP, PUSH_OPT_TAG, PUSH_OPT_NOLABELS, PUSH_OPT_FORMAT,
	PUSH_OPT_BASIC, PUSH_OPT_BEARER, PUSH_OPT_TENANT, PUSH_OPT_CACERT, PUSH_OPT_TIMEOUT,
	PUSH_OPT_SPOOL, PUSH_OPT_NOSPOOL, PUSH_OPT_SPOOLMAX, PUSH_OPT_RETRYMAX,
	PUSH_OPT_SRCLINE,
	PUSH_OPT_RECORD,    /* record's --push URL */
};
/* the table entries of the push options, for a command's option table */
#define TOOL_PUSH_OPT_ENTRIES \
	{ PUSH_OPT_URL, "url", required_argument, "<url>", \
	  "the server, http[s]://host:port (Grafana Pyroscope or\n" \
	  "compatible; default $PYROSCOPE_SERVER_ADDRESS)" }, \
	{ PUSH_OPT_APP, "app", required_argument, "<name>", \
	  "application name (default\n$PYROSCOPE_APPLICATION_NAME, else the sampled comm)" }, \
	{ PUSH_OPT_TAG, "tag", required_argument, "<k=v>", "one more label (repeatable)" }, \
	{ PUSH_OPT_NOLABELS, "no-default-labels", no_argument, NULL, \
	  "no hostname= and comm= labels" }, \
	{ PUSH_OPT_FORMAT, "format", required_argument, "<fmt>", \
	  "pprof (default), folded (older servers) or parca\n" \
	  "(Parca's WriteRaw as JSON)" }, \
	{ PUSH_OPT_BASIC, "basic-auth", required_argument, "<user[:pw]>", \
	  "HTTP basic authentication (default\n" \
	  "$PYROSCOPE_BASIC_AUTH_USER, _PASSWORD)" }, \
	{ PUSH_OPT_BEARER, "bearer-token", required_argument, "<token>", \
	  "Authorization: Bearer <token>\n(default $PYROSCOPE_AUTH_TOKEN)" }, \
	{ PUSH_OPT_TENANT, "tenant-id", required_argument, "<id>", \
	  "X-Scope-OrgID of a multi-tenant server\n(default $PYROSCOPE_TENANT_ID)" }, \
	{ PUSH_OPT_CACERT, "cacert", required_argument, "<file>", \
	  "CA certificates for https (default: the system's)" }, \
	{ PUSH_OPT_TIMEOUT, "timeout", required_argument, "<secs>", \
	  "time-out of one request (default 30)" }, \
	{ PUSH_OPT_SPOOL, "spool", required_argument, "<dir>", \
	  "keep profiles that failed to push here and retry them\n" \
	  "(default ~/.cache/perfkit/push-spool)" }, \
	{ PUSH_OPT_NOSPOOL, "no-spool", no_argument, NULL, "no spool: a failed push is only reported" }, \
	{ PUSH_OPT_SPOOLMAX, "spool-max", required_argument, "<size>", \
	  "bound of the spool (default 100M), oldest\ndropped first" }, \
	{ PUSH_OPT_RETRYMAX, "retry-max", required_argument, "<secs>", \
	  "longest back-off between retries (default 60)" }, \
	{ PUSH_OPT_SRCLINE, "srcline", no_argument, NULL, \
	  "pprof: source file:line of every frame (DWARF; slower)" },

#define TOOL_PUSH_MAX_TAGS 32
struct tool_push_args {
	struct tool_push_opts o;
	const char *tags[TOOL_PUSH_MAX_TAGS];
	char user[256];
	bool spool_set, no_spool;
};
void tool_push_args_init(struct tool_push_args *a);
/* 0: taken; 1: not a push option; 129: a bad value (printed) */
int tool_push_parse_opt(struct tool_push_args *a, int c, const char *arg);
/* Defaults from the environment and the checks of the whole; 0 or 129 (printed). */
int tool_push_args_finish(struct tool_push_args *a);

/* tool/env.c: the PYROSCOPE_* variables (NULL when unset or empty) and the default
 * spool directory (in perfkit's cache directory; NULL without one) */
struct tool_push_env {
	const char *server, *app, *user, *password, *token, *tenant;
	const char *spool_dir;
};
void tool_push_env(struct tool_push_env *e);

#endif
