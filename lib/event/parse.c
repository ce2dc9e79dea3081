/* SPDX-License-Identifier: MIT */
/*
 * The event-spec parser: perf's -e syntax (see perfkit/event.h for the grammar). This file
 * holds the parser's state, the grammar of lists, groups and single events, and the
 * events that need no file of their own (legacy hw/sw/cache names, raw rNNNN, libpfm4
 * names, mem: breakpoints); modifiers and terms are in parse-terms.c, tracepoints in
 * parse-tracepoint.c, PMU events in parse-pmu.c, "did you mean" in parse-suggest.c.
 *
 * A hand-written recursive-descent parser over the caller's string. Every event is built
 * into a pending vector and appended to the list only when the whole string parsed, so a
 * failure leaves the list untouched. Work is linear in the input (plus one tracefs scan per
 * tracepoint glob); groups cannot nest, so there is no recursion to exhaust; the number of
 * events per list is capped.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/hw_breakpoint.h>
#include "parser-internal.h"

/* ---- parser state ---- */

PK_PRINTF(4, 5)
int pk_ep_fail(struct parser *p, int code, size_t col, const char *fmt, ...)
{
	if (!p->failed && p->err) {
		va_list ap;
		p->err->column = (int)PK_MIN(col, (size_t)INT_MAX);
		va_start(ap, fmt);
		vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
		va_end(ap);
	}
	if (!p->failed)
		p->code = code;
	p->failed = true;
	return code;
}

int pk_ep_fail_nomem(struct parser *p, size_t col)
{
	return pk_ep_fail(p, -ENOMEM, col, "out of memory");
}

const struct pk_pmu_set *pk_ep_pmus(struct parser *p)
{
	if (p->pmus)
		return p->pmus;
	if (!p->pmus_tried) {
		PK_OPTS(pk_pmu_opts, po, .sysfs_root = p->sysfs_root);
		p->pmus_tried = true;
		if (pk_pmu_set__load(&p->own_pmus, &po) < 0)
			p->own_pmus = NULL;
		p->pmus = p->own_pmus;
	}
	return p->pmus;
}

const char *pk_ep_tracefs_root(struct parser *p)
{
	return p->tracefs_root ? p->tracefs_root : pk_tracefs__root();
}

struct pk_event_spec *pk_ep_new_spec(struct parser *p, enum pk_event_kind kind, size_t col)
{
	if (p->base + p->n >= MAX_EVENTS) {
		pk_ep_fail(p, -PK_ERR_PARSE, col, "too many events (at most %d)", MAX_EVENTS);
		return NULL;
	}
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 16;
		struct pk_event_spec **nv = realloc(p->v, nc * sizeof(*nv));
		if (!nv) {
			pk_ep_fail_nomem(p, col);
			return NULL;
		}
		p->v = nv;
		p->cap = nc;
	}
	struct pk_event_spec *e = calloc(1, sizeof(*e));
	if (!e) {
		pk_ep_fail_nomem(p, col);
		return NULL;
	}
	e->kind = kind;
	e->scale = 1.0;
	e->group = -1;
	e->leader = true;
	e->probe_fd = -1;
	p->v[p->n++] = e;
	return e;
}

/* ---- finishing an event ---- */

/* Set the display name (unless name= gave one) and the attr size. */
int pk_ep_finish(struct parser *p, struct pk_event_spec *e, const char *text, size_t n,
		 size_t col)
{
	int r;
	if (!(e->flags & PK_EVF_NAME_SET) && (r = pk_ep_dup_bounded(p, &e->name, text, n, col)) < 0)
		return r;
	e->attr.attr.size = pk_attr__min_size(&e->attr);
	return 0;
}

/* rNNNN / r0xNNNN: raw PMU config in hex. 1 = raw, 0 = not raw syntax, <0 error. */
static int parse_raw(struct parser *p, const char *tok, size_t n, size_t col, uint64_t *cfg)
{
	size_t i = 1;

	if (n < 2 || tok[0] != 'r')
		return 0;
	if (n > 3 && tok[1] == '0' && (tok[2] == 'x' || tok[2] == 'X'))
		i = 3;
	for (size_t j = i; j < n; j++)
		if (!isxdigit((unsigned char)tok[j]))
			return 0;
	uint64_t v = 0;
	for (size_t j = i; j < n; j++) {
		unsigned d = isdigit((unsigned char)tok[j]) ? (unsigned)(tok[j] - '0')
				: (unsigned)(tolower((unsigned char)tok[j]) - 'a' + 10);
		if (v >> 60)
			return pk_ep_fail(p, -PK_ERR_PARSE, col, "raw config '%.*s' is too large",
					  QLEN(n), tok);
		v = v << 4 | d;
	}
	*cfg = v;
	return 1;
}

/*
 * Legacy names (hw, sw, cache, raw). Returns 1 and fills type/config/kind if the token is
 * one, 0 if not, <0 on a malformed cache name.
 */
static int classify_legacy(struct parser *p, const char *tok, size_t n, size_t col,
			   uint32_t *type, uint64_t *config, enum pk_event_kind *kind)
{
	const struct pk_event_name *en = pk_event_name__find(tok, n);
	char msg[200];
	int r;

	if (en) {
		*type = en->type;
		*config = en->config;
		*kind = en->type == PERF_TYPE_HARDWARE ? PK_EV_HARDWARE : PK_EV_SOFTWARE;
		return 1;
	}
	r = parse_raw(p, tok, n, col, config);
	if (r) {
		*type = PERF_TYPE_RAW;
		*kind = PK_EV_RAW;
		return r;
	}
	msg[0] = '\0';
	r = pk_hwcache__parse(tok, n, config, msg, sizeof(msg));
	if (r == 0) {
		*type = PERF_TYPE_HW_CACHE;
		*kind = PK_EV_HWCACHE;
		return 1;
	}
	if (r == -ENOENT)
		return 0;
	return pk_ep_fail(p, -PK_ERR_PARSE, col, "%s", msg);
}

/* Extent of a libpfm4 name starting at col: up to ',', '}', '{' or whitespace. */
size_t pk_ep_pfm_extent(const struct parser *p, size_t col)
{
	size_t i = col;
	while (i < p->len && p->s[i] != ',' && p->s[i] != '}' && p->s[i] != '{' &&
	       !isspace((unsigned char)p->s[i]))
		i++;
	return i - col;
}

/* Try libpfm4 on [col, col+n). 1 = made an event, 0 = unknown, <0 error. */
int pk_ep_try_pfm(struct parser *p, size_t col, size_t n)
{
	struct pk_attr a;
	char buf[512];

	if (p->no_pfm || n == 0 || n >= sizeof(buf))
		return 0;
	memcpy(buf, p->s + col, n);
	buf[n] = '\0';
	memset(&a, 0, sizeof(a));
	if (pk_pfm__encode(buf, &a) < 0)
		return 0;
	struct pk_event_spec *e = pk_ep_new_spec(p, PK_EV_PFM, col);
	if (!e)
		return p->code;
	e->attr = a;
	e->attr.attr.size = 0;
	p->pos = col + n;
	int r = pk_ep_finish(p, e, p->s + col, n, col);
	return r < 0 ? r : 1;
}

/* ---- event kinds ---- */

static int parse_legacy(struct parser *p, const char *tok, size_t n, size_t col, uint32_t type,
			uint64_t config, enum pk_event_kind kind, bool leader)
{
	struct pk_event_spec *e = pk_ep_new_spec(p, kind, col);
	struct term terms[MAX_TERMS];
	struct mods m;
	size_t nt;
	int r;

	(void)tok;
	(void)n;
	if (!e)
		return p->code;
	e->leader = leader;
	e->attr.attr.type = type;
	e->attr.attr.config = config;
	bool slash = false;
	if (cur(p) == '/') {
		size_t open = p->pos++;
		if ((r = pk_ep_parse_terms(p, terms, &nt, open)) < 0)
			return r;
		if ((r = pk_ep_generic_terms_only(p, e, terms, nt)) < 0)
			return r;
		slash = true;
	}
	if ((r = pk_ep_parse_opt_mods(p, &m, slash)) < 0 ||
	    (r = pk_ep_apply_mods(p, e, &m, false)) < 0)
		return r;
	return pk_ep_finish(p, e, p->s + col, p->pos - col, col);
}

/* mem:ADDR[/LEN][:rwx][:modifiers] */
static int parse_breakpoint(struct parser *p, bool leader)
{
	size_t col = p->pos, acol;
	uint64_t addr, len = 0;
	unsigned type = 0;
	struct mods m;
	int r;

	p->pos += 4; /* "mem:" */
	acol = p->pos;
	while (isalnum((unsigned char)cur(p)))
		p->pos++;
	if (p->pos == acol)
		return pk_ep_fail(p, -PK_ERR_PARSE, acol, "mem: address missing");
	r = pk_parse_u64(p->s + acol, p->pos - acol, &addr);
	if (r < 0)
		return pk_ep_fail(p, -PK_ERR_PARSE, acol, "invalid breakpoint address '%.*s'",
				  QLEN(p->pos - acol), p->s + acol);
	if (cur(p) == '/') {
		size_t lcol = ++p->pos;
		while (isalnum((unsigned char)cur(p)))
			p->pos++;
		if (pk_parse_u64(p->s + lcol, p->pos - lcol, &len) < 0 ||
		    (len != 1 && len != 2 && len != 4 && len != 8))
			return pk_ep_fail(p, -PK_ERR_PARSE, lcol,
					  "breakpoint length must be 1, 2, 4 or 8");
	}
	memset(&m, 0, sizeof(m));
	if (cur(p) == ':') {
		size_t i = p->pos + 1;
		while (i < p->len && p->s[i] && strchr("rwx", p->s[i]))
			i++;
		bool access = i > p->pos + 1 && (i >= p->len || !isalpha((unsigned char)p->s[i]));
		if (access) {
			for (size_t j = p->pos + 1; j < i; j++) {
				unsigned bit = p->s[j] == 'r' ? HW_BREAKPOINT_R
					     : p->s[j] == 'w' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;
				if (type & bit)
					return pk_ep_fail(p, -PK_ERR_PARSE, j, "duplicate access '%c'",
							  p->s[j]);
				type |= bit;
			}
			if ((type & HW_BREAKPOINT_X) && (type & HW_BREAKPOINT_RW))
				return pk_ep_fail(p, -PK_ERR_PARSE, p->pos + 1,
						  "an execute breakpoint cannot also watch reads or writes");
			p->pos = i;
		}
		if (cur(p) == ':') {
			p->pos++;
			if ((r = pk_ep_parse_mods(p, &m)) < 0)
				return r;
		}
	}
	if (!type)
		type = HW_BREAKPOINT_RW;
	if (!len)
		len = type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_4;

	struct pk_event_spec *e = pk_ep_new_spec(p, PK_EV_BREAKPOINT, col);
	if (!e)
		return p->code;
	e->leader = leader;
	e->attr.attr.type = PERF_TYPE_BREAKPOINT;
	e->attr.attr.bp_type = type;
	e->attr.attr.bp_addr = addr;
	e->attr.attr.bp_len = len;
	/* as perf: every hit is an event (counting is unaffected) */
	e->attr.attr.sample_period = 1;
	if ((r = pk_ep_apply_mods(p, e, &m, false)) < 0)
		return r;
	return pk_ep_finish(p, e, p->s + col, p->pos - col, col);
}

/* ---- items, groups, lists ---- */

static int parse_event(struct parser *p, bool leader, bool in_group)
{
	size_t col = p->pos;
	const char *tok = p->s + col;
	uint32_t type = 0;
	uint64_t config = 0;
	enum pk_event_kind kind = PK_EV_RAW;
	int r;

	if (p->len - col >= 4 && !memcmp(tok, "mem:", 4))
		return parse_breakpoint(p, leader);
	while (name_char(cur(p)) || glob_char(cur(p)))
		p->pos++;
	size_t n = p->pos - col;
	if (n == 0) {
		if (cur(p) == ':' && (r = pk_ep_try_pfm(p, col, pk_ep_pfm_extent(p, col))) != 0)
			return r < 0 ? r : 0;
		if (cur(p) == ':')
			return pk_ep_fail(p, -PK_ERR_PARSE, col, "event name expected before ':'");
		return pk_ep_fail(p, -PK_ERR_PARSE, col, "unexpected '%c'", cur(p));
	}
	bool has_glob = false;
	for (size_t i = 0; i < n; i++)
		has_glob |= glob_char(tok[i]);

	if (!has_glob && cur(p) == ':' && pk_ep_is_probe_kind(tok, n))
		return pk_ep_parse_probe(p, col, n, leader);
	if (!has_glob) {
		r = classify_legacy(p, tok, n, col, &type, &config, &kind);
		if (r < 0)
			return r;
		if (r)
			return parse_legacy(p, tok, n, col, type, config, kind, leader);
	}
	if (cur(p) == '/' && !has_glob)
		return pk_ep_parse_pmu_event(p, col, n, leader);
	if (cur(p) == ':')
		return pk_ep_parse_tracepoint(p, col, n, leader, in_group);
	r = pk_ep_try_pfm(p, col, pk_ep_pfm_extent(p, col));
	if (r)
		return r < 0 ? r : 0;
	return pk_ep_unknown_event(p, tok, n, col);
}

static int parse_group(struct parser *p)
{
	size_t open = p->pos++;
	size_t first = p->n;
	int r;

	for (;;) {
		skip_ws(p);
		char c = cur(p);
		if (c == '{')
			return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "nested groups are not supported");
		if (c == '}' || c == ',' || !c) {
			if (!c)
				return pk_ep_fail(p, -PK_ERR_PARSE, open, "unterminated group");
			return pk_ep_fail(p, -PK_ERR_PARSE, p->pos,
					  p->n == first && c == '}' ? "empty group" : "empty event");
		}
		if ((r = parse_event(p, p->n == first, true)) < 0)
			return r;
		skip_ws(p);
		c = cur(p);
		if (c == ',') {
			p->pos++;
			continue;
		}
		if (c == '}')
			break;
		if (!c)
			return pk_ep_fail(p, -PK_ERR_PARSE, open, "unterminated group");
		return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "unexpected '%c'", c);
	}
	p->pos++; /* '}' */
	struct mods m;
	memset(&m, 0, sizeof(m));
	if (cur(p) == ':') {
		p->pos++;
		if ((r = pk_ep_parse_mods(p, &m)) < 0)
			return r;
	}
	int g = p->next_group++;
	for (size_t i = first; i < p->n; i++) {
		struct pk_event_spec *e = p->v[i];
		e->group = g;
		e->leader = i == first;
		if ((r = pk_ep_apply_mods(p, e, &m, true)) < 0)
			return r;
		e->attr.attr.size = pk_attr__min_size(&e->attr);
	}
	return 0;
}

static int parse_list(struct parser *p)
{
	int r;

	skip_ws(p);
	if (!cur(p))
		return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "empty event list");
	for (;;) {
		skip_ws(p);
		char c = cur(p);
		if (c == '{')
			r = parse_group(p);
		else if (c == '}')
			return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "unexpected '}'");
		else if (c == ',' || !c)
			return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "empty event");
		else
			r = parse_event(p, true, false);
		if (r < 0)
			return r;
		skip_ws(p);
		c = cur(p);
		if (!c)
			return 0;
		if (c == ',') {
			p->pos++;
			continue;
		}
		if (c == '}')
			return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "unexpected '}'");
		return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "unexpected '%c'", c);
	}
}

PK_API int pk_event_list__parse(struct pk_event_list *list, const char *str,
				const struct pk_parse_opts *opts, struct pk_parse_error *err)
{
	struct parser p;
	int r;

	if (err) {
		err->column = 0;
		err->msg[0] = '\0';
	}
	if (!list || !str || !PK_OPTS_VALID(opts, pk_parse_opts)) {
		if (err)
			pk_snprintf(err->msg, sizeof(err->msg), "invalid argument");
		return pk_err(-EINVAL);
	}
	memset(&p, 0, sizeof(p));
	p.s = str;
	p.len = strlen(str);
	p.err = err;
	p.base = list->n;
	p.next_group = list->next_group;
	p.sysfs_root = PK_OPTS_GET(opts, sysfs_root, NULL);
	p.tracefs_root = PK_OPTS_GET(opts, tracefs_root, NULL);
	p.pmus = PK_OPTS_GET(opts, pmus, NULL);
	p.no_pfm = PK_OPTS_GET(opts, no_pfm, false);
	p.probe_pid = PK_OPTS_GET(opts, probe_pid, 0);

	r = parse_list(&p);
	if (r >= 0 && p.failed)
		r = -PK_ERR_PARSE;
	if (r >= 0 && list->n + p.n > list->cap) {
		size_t nc = PK_MAX(list->cap ? list->cap * 2 : 16, list->n + p.n);
		struct pk_event_spec **nv = realloc(list->v, nc * sizeof(*nv));
		if (!nv) {
			r = pk_ep_fail_nomem(&p, 0);
		} else {
			list->v = nv;
			list->cap = nc;
		}
	}
	if (r < 0) {
		for (size_t i = 0; i < p.n; i++)
			pk_ep_spec_free(p.v[i]);
	} else {
		memcpy(list->v + list->n, p.v, p.n * sizeof(*p.v));
		list->n += p.n;
		list->next_group = p.next_group;
		r = 0;
	}
	free(p.v);
	pk_pmu_set__free(p.own_pmus);
	return r < 0 ? pk_err(r) : 0;
}

