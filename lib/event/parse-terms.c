/* SPDX-License-Identifier: MIT */
/*
 * lib/event/parse-terms.c - what may follow an event name: modifier letters (":ukp...")
 * and "/term=value,.../" lists, and the terms every event accepts (period, freq, name,
 * call-graph, stack-size).
 *
 * Modifier semantics follow perf's parse-events.c:
 *  - u, k, h: the first of them excludes all three privilege levels, then each letter
 *    re-includes its own level ("uk" counts user and kernel, not the hypervisor).
 *  - G, H: likewise for guest/host (G counts the guest only: exclude_host; H the host only).
 *  - p: precise_ip += 1 (at most 3); without G/H it also sets exclude_guest, as perf does.
 *  - a group modifier "{...}:m" is applied on top of each member's own modifiers (so
 *    "{cycles:u,instructions}:k" counts user+kernel cycles and kernel instructions), and
 *    precise levels add up. D (pinned) and e (exclusive) only mean something on a group
 *    leader (the kernel rejects them on members): a group's D/e go to its leader, and a
 *    member's own D/e is an error.
 *  - perf 6.1 also set exclude_guest for 'u'; later perf versions stopped doing so and
 *    so do we.
 */
#include <stdlib.h>
#include "parser-internal.h"

/* ---- modifiers ---- */

/* Parse modifier letters at p->pos (the ':' already consumed). At least one letter. */
int pk_ep_parse_mods(struct parser *p, struct mods *m)
{
	size_t start = p->pos;
	bool seen[128] = { false };

	memset(m, 0, sizeof(*m));
	m->col = start;
	while (isalpha((unsigned char)cur(p))) {
		char c = cur(p);
		if (!is_mod_letter(c))
			return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "unknown modifier '%c'", c);
		if (c != 'p' && seen[(unsigned char)c])
			return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "duplicate modifier '%c'", c);
		seen[(unsigned char)c] = true;
		switch (c) {
		case 'u': m->u = true; break;
		case 'k': m->k = true; break;
		case 'h': m->h = true; break;
		case 'H': m->H = true; break;
		case 'G': m->G = true; break;
		case 'I': m->I = true; break;
		case 'P': m->P = true; break;
		case 'S': m->S = true; break;
		case 'W': m->W = true; break;
		case 'D': m->D = true; m->De_col = p->pos; break;
		case 'e': m->e = true; m->De_col = p->pos; break;
		case 'p':
			m->p++;
			m->p_col = p->pos;
			if (m->p > 3)
				return pk_ep_fail(p, -PK_ERR_PARSE, p->pos,
						  "too many 'p' modifiers (precise level is at most 3)");
			break;
		}
		p->pos++;
	}
	if (p->pos == start) {
		if (cur(p))
			return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "unknown modifier '%c'", cur(p));
		return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "modifier expected after ':'");
	}
	m->any = true;
	return 0;
}

/* Apply modifiers on top of what the event already has (perf's merge rules). */
int pk_ep_apply_mods(struct parser *p, struct pk_event_spec *e, const struct mods *m,
		     bool group_level)
{
	struct perf_event_attr *a = &e->attr.attr;
	bool eu = a->exclude_user, ek = a->exclude_kernel, eh = a->exclude_hv;
	bool eH = a->exclude_host, eG = a->exclude_guest;
	bool exclude = eu || ek || eh;

	if (!m->any)
		return 0;
	if ((m->u || m->k || m->h) && !exclude)
		eu = ek = eh = true;
	if (m->u)
		eu = false;
	if (m->k)
		ek = false;
	if (m->h)
		eh = false;
	if ((m->G || m->H) && !e->exclude_gh) {
		e->exclude_gh = true;
		eG = eH = true;
	}
	if (m->G)
		eG = false;
	if (m->H)
		eH = false;
	if (m->p) {
		if (a->precise_ip + m->p > 3)
			return pk_ep_fail(p, -PK_ERR_PARSE, m->p_col,
					  "too many 'p' modifiers (precise level is at most 3)");
		a->precise_ip += m->p;
		if (!e->exclude_gh)
			eG = true; /* precise sampling needs exclude_guest */
	}
	a->exclude_user = eu;
	a->exclude_kernel = ek;
	a->exclude_hv = eh;
	a->exclude_host = eH;
	a->exclude_guest = eG;
	if (m->I)
		a->exclude_idle = 1;
	if (m->P)
		e->flags |= PK_EVF_PRECISE_MAX;
	if (m->S)
		e->flags |= PK_EVF_SAMPLE_READ;
	if (m->W)
		e->flags |= PK_EVF_WEAK_GROUP;
	if (m->D || m->e) {
		if (!e->leader) {
			if (group_level)
				return 0;
			return pk_ep_fail(p, -PK_ERR_PARSE, m->De_col,
					  "modifier '%c' is only valid on a group leader",
					  p->s[m->De_col]);
		}
		if (m->D)
			a->pinned = 1;
		if (m->e)
			a->exclusive = 1;
	}
	return 0;
}

/* Optional modifiers after an event: ":letters", or letters right after a closing '/'. */
int pk_ep_parse_opt_mods(struct parser *p, struct mods *m, bool after_slash)
{
	memset(m, 0, sizeof(*m));
	if (cur(p) == ':') {
		p->pos++;
		return pk_ep_parse_mods(p, m);
	}
	if (after_slash && isalpha((unsigned char)cur(p)))
		return pk_ep_parse_mods(p, m);
	return 0;
}

/* ---- terms ---- */

static bool term_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/* After a '/' inside a path value: does the term list end here? It does when what
 * follows is the end of the event, optionally preceded by modifiers. */
static bool slash_ends_terms(const struct parser *p, size_t at)
{
	size_t i = at + 1;
	if (i < p->len && p->s[i] == ':')
		i++;
	while (i < p->len && is_mod_letter(p->s[i]))
		i++;
	return i >= p->len || p->s[i] == ',' || p->s[i] == '}' ||
	       isspace((unsigned char)p->s[i]);
}

/* Parse "term[=value],..." up to and including the closing '/' (the opening '/' is
 * consumed). Values may be quoted ('...' or "..."); an absolute path value may contain
 * '/'. */
int pk_ep_parse_terms(struct parser *p, struct term *terms, size_t *nterms, size_t open_col)
{
	*nterms = 0;
	if (cur(p) == '/') {
		p->pos++;
		return 0;
	}
	for (;;) {
		struct term t = { .name = p->s + p->pos, .col = p->pos };
		while (term_name_char(cur(p)))
			p->pos++;
		t.nlen = (size_t)(p->s + p->pos - t.name);
		if (!t.nlen) {
			if (!cur(p))
				return pk_ep_fail(p, -PK_ERR_PARSE, open_col, "unterminated '/' term list");
			return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "term name expected at '%c'", cur(p));
		}
		if (cur(p) == '=') {
			p->pos++;
			t.has_val = true;
			t.vcol = p->pos;
			char q = cur(p);
			if (q == '\'' || q == '"') {
				const char *end = memchr(p->s + p->pos + 1, q, p->len - p->pos - 1);
				if (!end)
					return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "unterminated quote");
				t.val = p->s + p->pos + 1;
				t.vlen = (size_t)(end - t.val);
				p->pos = (size_t)(end - p->s) + 1;
			} else {
				bool path = q == '/';
				t.val = p->s + p->pos;
				while (cur(p) && cur(p) != ',' &&
				       !(cur(p) == '/' && (!path || slash_ends_terms(p, p->pos))))
					p->pos++;
				t.vlen = (size_t)(p->s + p->pos - t.val);
			}
			if (!t.vlen)
				return pk_ep_fail(p, -PK_ERR_PARSE, t.vcol, "value expected for '%.*s'",
						  QLEN(t.nlen), t.name);
		}
		if (*nterms == MAX_TERMS)
			return pk_ep_fail(p, -PK_ERR_PARSE, t.col, "too many terms (at most %d)",
					  MAX_TERMS);
		terms[(*nterms)++] = t;
		if (cur(p) == ',') {
			p->pos++;
			continue;
		}
		if (cur(p) == '/') {
			p->pos++;
			return 0;
		}
		if (!cur(p))
			return pk_ep_fail(p, -PK_ERR_PARSE, open_col, "unterminated '/' term list");
		return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "unexpected '%c' in term list", cur(p));
	}
}

int pk_ep_term_u64(struct parser *p, const struct term *t, uint64_t *out)
{
	if (!t->has_val)
		return pk_ep_fail(p, -PK_ERR_PARSE, t->col, "term '%.*s' needs a value", QLEN(t->nlen),
				  t->name);
	int r = pk_parse_u64(t->val, t->vlen, out);
	if (r == -ERANGE)
		return pk_ep_fail(p, -PK_ERR_PARSE, t->vcol, "value of '%.*s' is too large",
				  QLEN(t->nlen), t->name);
	if (r < 0)
		return pk_ep_fail(p, -PK_ERR_PARSE, t->vcol, "invalid number '%.*s'", QLEN(t->vlen),
				  t->val);
	return 0;
}

/* *out = copy of [s, s+n); fails on lengths beyond MAX_NAME_LEN. */
int pk_ep_dup_bounded(struct parser *p, char **out, const char *s, size_t n, size_t col)
{
	if (n > MAX_NAME_LEN)
		return pk_ep_fail(p, -PK_ERR_PARSE, col, "name too long (at most %d bytes)",
				  MAX_NAME_LEN);
	char *r = pk_strndup(s, n);
	if (!r)
		return pk_ep_fail_nomem(p, col);
	free(*out);
	*out = r;
	return 0;
}

/* The terms every event accepts. Returns 1 if handled, 0 if not a generic term, <0. */
int pk_ep_generic_term(struct parser *p, struct pk_event_spec *e, const struct term *t)
{
	uint64_t v;
	int r;

	if (term_is(t, "period") || term_is(t, "freq")) {
		if ((r = pk_ep_term_u64(p, t, &v)) < 0)
			return r;
		if (term_is(t, "period")) {
			e->attr.attr.sample_period = v;
			e->attr.attr.freq = 0;
			e->flags = (e->flags | PK_EVF_PERIOD_SET) & ~PK_EVF_FREQ_SET;
		} else {
			e->attr.attr.sample_freq = v;
			e->attr.attr.freq = 1;
			e->flags = (e->flags | PK_EVF_FREQ_SET) & ~PK_EVF_PERIOD_SET;
		}
		return 1;
	}
	if (term_is(t, "stack-size")) {
		if ((r = pk_ep_term_u64(p, t, &v)) < 0)
			return r;
		if (v > UINT32_MAX)
			return pk_ep_fail(p, -PK_ERR_PARSE, t->vcol, "stack-size is too large");
		e->stack_size = (uint32_t)v;
		return 1;
	}
	if (term_is(t, "call-graph")) {
		static const char *const modes[] = { "fp", "dwarf", "lbr", "no" };
		size_t i;
		if (!t->has_val)
			return pk_ep_fail(p, -PK_ERR_PARSE, t->col, "term 'call-graph' needs a value");
		for (i = 0; i < PK_ARRAY_SIZE(modes); i++)
			if (t->vlen == strlen(modes[i]) && !memcmp(t->val, modes[i], t->vlen))
				break;
		if (i == PK_ARRAY_SIZE(modes))
			return pk_ep_fail(p, -PK_ERR_PARSE, t->vcol,
					  "call-graph must be fp, dwarf, lbr or no, not '%.*s'",
					  QLEN(t->vlen), t->val);
		if ((r = pk_ep_dup_bounded(p, &e->callgraph, t->val, t->vlen, t->vcol)) < 0)
			return r;
		return 1;
	}
	if (term_is(t, "name")) {
		if (!t->has_val)
			return pk_ep_fail(p, -PK_ERR_PARSE, t->col, "term 'name' needs a value");
		if ((r = pk_ep_dup_bounded(p, &e->name, t->val, t->vlen, t->vcol)) < 0)
			return r;
		e->flags |= PK_EVF_NAME_SET;
		return 1;
	}
	return 0;
}

/* Apply a list of terms that must all be generic (events that are not pmu/.../). */
int pk_ep_generic_terms_only(struct parser *p, struct pk_event_spec *e, const struct term *t,
			     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = pk_ep_generic_term(p, e, &t[i]);
		if (r < 0)
			return r;
		if (r == 0)
			return pk_ep_fail(p, -PK_ERR_PARSE, t[i].col,
					  "unknown term '%.*s' (valid here: period, freq, name, "
					  "call-graph, stack-size)", QLEN(t[i].nlen), t[i].name);
	}
	return 0;
}
