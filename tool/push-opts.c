/* SPDX-License-Identifier: MIT */
/*
 * tool/push-opts.c - the options of a push, shared by `perfkit push` and `perfkit record
 * --push`: one table, one parser, the environment's defaults (tool/env.c reads the
 * PYROSCOPE_* variables) and the checks.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "builtin.h"
#include "push-opts.h"


static bool tag_ok(const char *t)
{
	const char *eq = strchr(t, '=');
	if (!eq || eq == t || !eq[1])
		return false;
	for (const char *c = t; c < eq; c++) {
		bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
			  (c > t && *c >= '0' && *c <= '9');
		if (!ok)
			return false;
	}
	for (const char *c = eq + 1; *c; c++) {
		bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			  (*c >= '0' && *c <= '9') || strchr("_-./:", *c);
		if (!ok)
			return false;
	}
	return true;
}

static int secs_arg(const char *opt, const char *arg, unsigned max, unsigned *ms)
{
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v > 0) || v > max) {
		tool_error("--%s must be a number of seconds in (0, %u], not '%s'", opt, max, arg);
		return 129;
	}
	*ms = (unsigned)(v * 1000);
	if (!*ms)
		*ms = 1;
	return 0;
}

void tool_push_args_init(struct tool_push_args *a)
{
	memset(a, 0, sizeof(*a));
	a->o.timeout_ms = 30000;
	a->o.spool_max = 100ull << 20;
	a->o.retry_max_ms = 60000;
	a->o.tags = a->tags;
}

int tool_push_parse_opt(struct tool_push_args *a, int c, const char *arg)
{
	struct tool_push_opts *o = &a->o;
	switch (c) {
	case PUSH_OPT_URL: o->url = arg; return 0;
	case PUSH_OPT_APP: o->app = arg; return 0;
	case PUSH_OPT_NOLABELS: o->no_default_labels = true; return 0;
	case PUSH_OPT_SRCLINE: o->srcline = true; return 0;
	case PUSH_OPT_BEARER: o->bearer = arg; return 0;
	case PUSH_OPT_TENANT: o->tenant = arg; return 0;
	case PUSH_OPT_CACERT: o->cacert = arg; return 0;
	case PUSH_OPT_SPOOL: o->spool_dir = arg; a->spool_set = true; return 0;
	case PUSH_OPT_NOSPOOL: a->no_spool = true; return 0;
	case PUSH_OPT_TAG:
		if (!tag_ok(arg)) {
			tool_error("--tag must be KEY=VALUE (KEY: letters, digits, '_'; VALUE: "
				   "letters, digits, '_-./:'), not '%s'", arg);
			return 129;
		}
		if (o->nr_tags == TOOL_PUSH_MAX_TAGS) {
			tool_error("at most %d --tag", TOOL_PUSH_MAX_TAGS);
			return 129;
		}
		a->tags[o->nr_tags++] = arg;
		return 0;
	case PUSH_OPT_FORMAT:
		for (int i = 0; i < 3; i++) {
			if (!strcmp(arg, push_format_names[i])) {
				o->format = (enum push_format)i;
				return 0;
			}
		}
		tool_error("--format must be pprof, folded or parca, not '%s'", arg);
		return 129;
	case PUSH_OPT_BASIC: {
		const char *colon = strchr(arg, ':');
		size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
		if (!n || n >= sizeof(a->user)) {
			tool_error("--basic-auth must be USER[:PASSWORD] (a missing password is "
				   "read from PYROSCOPE_BASIC_AUTH_PASSWORD)");
			return 129;
		}
		memcpy(a->user, arg, n);
		a->user[n] = '\0';
		o->user = a->user;
		o->password = colon ? colon + 1 : NULL;
		return 0;
	}
	case PUSH_OPT_TIMEOUT: return secs_arg("timeout", arg, 3600, &o->timeout_ms);
	case PUSH_OPT_RETRYMAX: return secs_arg("retry-max", arg, 86400, &o->retry_max_ms);
	case PUSH_OPT_SPOOLMAX:
		if (push_parse_size(arg, &o->spool_max) || !o->spool_max) {
			tool_error("--spool-max must be a size such as 100M, not '%s'", arg);
			return 129;
		}
		return 0;
	default:
		return 1;
	}
}

int tool_push_args_finish(struct tool_push_args *a)
{
	struct tool_push_opts *o = &a->o;
	struct tool_push_env e;
	tool_push_env(&e);
	if (!o->url)
		o->url = e.server;
	if (!o->url || !*o->url) {
		tool_error("no server: give --url http://HOST:4040 (or set "
			   "PYROSCOPE_SERVER_ADDRESS)");
		return 129;
	}
	if (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8)) {
		tool_error("--url must start with http:// or https://, not '%s'", o->url);
		return 129;
	}
	if (!o->app)
		o->app = e.app;
	if (!o->user && e.user) {
		o->user = e.user;
		o->password = e.password;
	} else if (o->user && !o->password) {
		o->password = e.password;
	}
	if (!o->bearer)
		o->bearer = e.token;
	if (!o->tenant)
		o->tenant = e.tenant;
	if (o->user && o->bearer) {
		tool_error("give basic authentication or a bearer token, not both");
		return 129;
	}
	if (a->no_spool)
		o->spool_dir = NULL;
	else if (!a->spool_set)
		o->spool_dir = e.spool_dir;   /* NULL without a cache directory */
	return 0;
}
