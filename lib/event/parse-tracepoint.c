/* SPDX-License-Identifier: MIT */
/*
 * lib/event/parse-tracepoint.c - tracepoint events of the event parser: sys:name (both
 * may be globs, expanded against tracefs), one event per match sharing the suffix as
 * written, and the messages for a missing subsystem or event.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include "parser-internal.h"

/* ---- tracepoints ---- */

struct tp_match {
	char sys[256], name[256];
	long long id;
};

struct tp_collect {
	struct tp_match *v;
	size_t n, cap, limit;
	bool nomem, too_many;
};

static int tp_collect_cb(const char *sys, const char *name, long long id, void *ctx)
{
	struct tp_collect *c = ctx;
	if (c->n >= c->limit) {
		c->too_many = true;
		return 1;
	}
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 16;
		struct tp_match *nv = realloc(c->v, nc * sizeof(*nv));
		if (!nv) {
			c->nomem = true;
			return 1;
		}
		c->v = nv;
		c->cap = nc;
	}
	pk_snprintf(c->v[c->n].sys, sizeof(c->v[c->n].sys), "%s", sys);
	pk_snprintf(c->v[c->n].name, sizeof(c->v[c->n].name), "%s", name);
	c->v[c->n].id = id;
	c->n++;
	return 0;
}

static int tp_not_found(struct parser *p, const char *root, const char *sys, size_t syslen,
			const char *ev, size_t evlen, size_t col, bool glob)
{
	struct suggest sg;
	char path[PATH_MAX];

	if (glob)
		return pk_ep_fail(p, -ENOENT, col, "no tracepoint matches '%.*s:%.*s'", QLEN(syslen),
				  sys, QLEN(evlen), ev);
	/* suggest within the subsystem if it exists, else among subsystems */
	pk_snprintf(path, sizeof(path), "%s/events/%.*s", root, (int)PK_MIN(syslen, 255), sys);
	DIR *d = opendir(path);
	if (d) {
		closedir(d);
		pk_ep_suggest_init(&sg, ev, evlen);
		pk_ep_suggest_dir(&sg, path);
		const char *hint = pk_ep_suggest_text(&sg);
		if (*hint)
			return pk_ep_fail(p, -ENOENT, col,
					  "unknown tracepoint '%.*s:%.*s' (did you mean '%.*s:%s'?)",
					  QLEN(syslen), sys, QLEN(evlen), ev, QLEN(syslen), sys, sg.name);
		return pk_ep_fail(p, -ENOENT, col, "unknown tracepoint '%.*s:%.*s'", QLEN(syslen), sys,
				  QLEN(evlen), ev);
	}
	bool mods_only = evlen > 0;
	for (size_t i = 0; i < evlen; i++)
		mods_only &= is_mod_letter(ev[i]);
	if (mods_only) /* "cylces:u": a misspelt event with modifiers */
		return pk_ep_unknown_event(p, sys, syslen, col);
	pk_ep_suggest_init(&sg, sys, syslen);
	pk_snprintf(path, sizeof(path), "%s/events", root);
	pk_ep_suggest_dir(&sg, path);
	return pk_ep_fail(p, -ENOENT, col, "unknown tracepoint subsystem '%.*s'%s", QLEN(syslen),
			  sys, pk_ep_suggest_text(&sg));
}

/* sys:name[/terms/][:modifiers]; sys and name may be fnmatch globs. */
int pk_ep_parse_tracepoint(struct parser *p, size_t col, size_t syslen, bool leader,
			   bool in_group)
{
	const char *sys = p->s + col;
	size_t ecol = col + syslen + 1;
	struct term terms[MAX_TERMS];
	size_t nt = 0;
	struct mods m;
	bool glob = false, slash = false;
	int r;

	p->pos = ecol;
	while (name_char(cur(p)) || glob_char(cur(p)))
		p->pos++;
	size_t evlen = p->pos - ecol;
	const char *ev = p->s + ecol;
	for (size_t i = col; i < p->pos; i++)
		glob |= glob_char(p->s[i]);

	const char *root = pk_ep_tracefs_root(p);
	if (evlen == 0 || syslen > 255 || evlen > 255 || !root) {
		/* could still be a libpfm4 name such as "perf::cycles" */
		r = pk_ep_try_pfm(p, col, pk_ep_pfm_extent(p, col));
		if (r)
			return r < 0 ? r : 0;
		if (evlen == 0)
			return pk_ep_fail(p, -PK_ERR_PARSE, ecol, "tracepoint name missing after ':'");
		bool mods_only = true;
		for (size_t i = 0; i < evlen; i++)
			mods_only &= is_mod_letter(ev[i]);
		if (!root && mods_only)
			return pk_ep_unknown_event(p, sys, syslen, col);
		if (!root)
			return pk_ep_fail(p, -ENOENT, col,
					  "tracefs is not mounted (needed for tracepoint '%.*s:%.*s')",
					  QLEN(syslen), sys, QLEN(evlen), ev);
		return pk_ep_fail(p, -PK_ERR_PARSE, col, "tracepoint name too long");
	}

	char pattern[520];
	pk_snprintf(pattern, sizeof(pattern), "%.*s:%.*s", (int)syslen, sys, (int)evlen, ev);
	struct tp_collect c = { .limit = MAX_EVENTS - (p->base + p->n) };
	if (glob) {
		pk_tracepoint__foreach(root, pattern, tp_collect_cb, &c);
	} else {
		char sb[256], eb[256];
		memcpy(sb, sys, syslen);
		sb[syslen] = '\0';
		memcpy(eb, ev, evlen);
		eb[evlen] = '\0';
		long long id = pk_tracepoint__id(root, sb, eb);
		if (id >= 0)
			tp_collect_cb(sb, eb, id, &c);
	}
	if (c.nomem || c.too_many) {
		free(c.v);
		if (c.nomem)
			return pk_ep_fail_nomem(p, col);
		return pk_ep_fail(p, -PK_ERR_PARSE, col, "too many events (at most %d)", MAX_EVENTS);
	}
	if (c.n == 0) {
		free(c.v);
		size_t save = p->pos;
		r = pk_ep_try_pfm(p, col, pk_ep_pfm_extent(p, col));
		if (r)
			return r < 0 ? r : 0;
		p->pos = save;
		return tp_not_found(p, root, sys, syslen, ev, evlen, col, glob);
	}

	/* the suffix as written (terms, modifiers) is shared by every match */
	size_t suffix = p->pos;
	if (cur(p) == '/') {
		size_t open = p->pos++;
		if ((r = pk_ep_parse_terms(p, terms, &nt, open)) < 0)
			goto out;
		slash = true;
	}
	if ((r = pk_ep_parse_opt_mods(p, &m, slash)) < 0)
		goto out;
	for (size_t i = 0; i < c.n; i++) {
		struct pk_event_spec *e = pk_ep_new_spec(p, PK_EV_TRACEPOINT, col);
		char nm[MAX_NAME_LEN + 1];
		if (!e) {
			r = p->code;
			goto out;
		}
		/* every match of a glob is a leader unless it is the first in a group */
		e->leader = in_group ? leader && i == 0 : true;
		e->attr.attr.type = PERF_TYPE_TRACEPOINT;
		e->attr.attr.config = (uint64_t)c.v[i].id;
		pk_snprintf(nm, sizeof(nm), "%s:%s", c.v[i].sys, c.v[i].name);
		if ((r = pk_ep_dup_bounded(p, &e->pmu, nm, strlen(nm), col)) < 0)
			goto out;
		if ((r = pk_ep_generic_terms_only(p, e, terms, nt)) < 0 ||
		    (r = pk_ep_apply_mods(p, e, &m, false)) < 0)
			goto out;
		size_t sl = p->pos - suffix;
		if (strlen(nm) + sl > MAX_NAME_LEN) {
			r = pk_ep_fail(p, -PK_ERR_PARSE, col, "name too long (at most %d bytes)",
				       MAX_NAME_LEN);
			goto out;
		}
		memcpy(nm + strlen(nm), p->s + suffix, sl);
		nm[strlen(e->pmu) + sl] = '\0';
		if ((r = pk_ep_finish(p, e, nm, strlen(nm), col)) < 0)
			goto out;
	}
	r = 0;
out:
	free(c.v);
	return r;
}
