/* SPDX-License-Identifier: MIT */
/*
 * The event-spec parser: perf's -e syntax (see perfkit/event.h for the grammar).
 *
 * A hand-written recursive-descent parser over the caller's string. Every event is built
 * into a pending vector and appended to the list only when the whole string parsed, so a
 * failure leaves the list untouched. Work is linear in the input (plus one tracefs scan per
 * tracepoint glob); groups cannot nest, so there is no recursion to exhaust; the number of
 * events per list is capped.
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
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/hw_breakpoint.h>
#include "internal.h"
#include "parse-internal.h"

#define MAX_EVENTS   65536   /* per list: bounds memory for hostile input */
#define MAX_TERMS    64      /* per pmu/terms/ section */
#define MAX_NAME_LEN 4096    /* display names, probe paths */
#define SUGGEST_MAX  64      /* tokens longer than this get no "did you mean" */

struct pk_event_spec {
	struct pk_attr attr;
	enum pk_event_kind kind;
	char *name;
	char *pmu;
	char *callgraph;
	char *unit;
	char *probe;          /* kprobe function / uprobe path: config1 points here */
	double scale;
	uint32_t stack_size;
	unsigned flags;
	int group;
	bool leader;
	bool exclude_gh;      /* G or H given: p no longer implies exclude_guest */
};

struct pk_event_list {
	struct pk_event_spec **v;
	size_t n, cap;
	int next_group;
};

/* ---- list and getters ---- */

static void spec_free(struct pk_event_spec *e)
{
	if (!e)
		return;
	free(e->name);
	free(e->pmu);
	free(e->callgraph);
	free(e->unit);
	free(e->probe);
	free(e);
}

PK_API struct pk_event_list *pk_event_list__new(void)
{
	struct pk_event_list *l = calloc(1, sizeof(*l));
	if (!l)
		return pk_err_ptr(-ENOMEM);
	return l;
}

PK_API void pk_event_list__free(struct pk_event_list *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++)
		spec_free(list->v[i]);
	free(list->v);
	free(list);
}

PK_API size_t pk_event_list__count(const struct pk_event_list *list)
{
	return list ? list->n : 0;
}

PK_API const struct pk_event_spec *pk_event_list__get(const struct pk_event_list *list, size_t i)
{
	if (!list || i >= list->n)
		return pk_err_ptr(-ENOENT);
	return list->v[i];
}

PK_API const struct pk_attr *pk_event_spec__attr(const struct pk_event_spec *ev)
{
	return ev ? &ev->attr : NULL;
}
PK_API enum pk_event_kind pk_event_spec__kind(const struct pk_event_spec *ev)
{
	return ev ? ev->kind : PK_EV_RAW;
}
PK_API const char *pk_event_spec__name(const struct pk_event_spec *ev)
{
	return ev ? ev->name : NULL;
}
PK_API const char *pk_event_spec__pmu(const struct pk_event_spec *ev)
{
	return ev ? ev->pmu : NULL;
}
PK_API int pk_event_spec__group(const struct pk_event_spec *ev)
{
	return ev ? ev->group : -1;
}
PK_API bool pk_event_spec__is_leader(const struct pk_event_spec *ev)
{
	return ev && ev->leader;
}
PK_API unsigned pk_event_spec__flags(const struct pk_event_spec *ev)
{
	return ev ? ev->flags : 0;
}
PK_API const char *pk_event_spec__callgraph(const struct pk_event_spec *ev)
{
	return ev ? ev->callgraph : NULL;
}
PK_API uint32_t pk_event_spec__stack_size(const struct pk_event_spec *ev)
{
	return ev ? ev->stack_size : 0;
}
PK_API double pk_event_spec__scale(const struct pk_event_spec *ev)
{
	return ev ? ev->scale : 1.0;
}
PK_API const char *pk_event_spec__unit(const struct pk_event_spec *ev)
{
	return ev ? ev->unit : NULL;
}

/* ---- parser state ---- */

struct parser {
	const char *s;
	size_t len, pos;
	bool no_pfm;
	const char *sysfs_root;
	const char *tracefs_root;  /* as given; NULL = discover */
	const struct pk_pmu_set *pmus;
	struct pk_pmu_set *own_pmus;
	bool pmus_tried;
	struct pk_event_spec **v;  /* pending events */
	size_t n, cap;
	size_t base;               /* events already in the list */
	int next_group;
	struct pk_parse_error *err;
	bool failed;
	int code;                  /* of the first failure */
};

PK_PRINTF(4, 5)
static int fail(struct parser *p, int code, size_t col, const char *fmt, ...)
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

static int fail_nomem(struct parser *p, size_t col)
{
	return fail(p, -ENOMEM, col, "out of memory");
}

static char cur(const struct parser *p)
{
	return p->pos < p->len ? p->s[p->pos] : '\0';
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len && isspace((unsigned char)p->s[p->pos]))
		p->pos++;
}

/* Quote at most 64 bytes of the input in messages. */
#define QLEN(n) ((int)PK_MIN((size_t)(n), (size_t)64))

static const struct pk_pmu_set *get_pmus(struct parser *p)
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

static const char *tracefs_root(struct parser *p)
{
	return p->tracefs_root ? p->tracefs_root : pk_tracefs__root();
}

static struct pk_event_spec *new_spec(struct parser *p, enum pk_event_kind kind, size_t col)
{
	if (p->base + p->n >= MAX_EVENTS) {
		fail(p, -PK_ERR_PARSE, col, "too many events (at most %d)", MAX_EVENTS);
		return NULL;
	}
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 16;
		struct pk_event_spec **nv = realloc(p->v, nc * sizeof(*nv));
		if (!nv) {
			fail_nomem(p, col);
			return NULL;
		}
		p->v = nv;
		p->cap = nc;
	}
	struct pk_event_spec *e = calloc(1, sizeof(*e));
	if (!e) {
		fail_nomem(p, col);
		return NULL;
	}
	e->kind = kind;
	e->scale = 1.0;
	e->group = -1;
	e->leader = true;
	p->v[p->n++] = e;
	return e;
}

/* ---- "did you mean" ---- */

/* Optimal-string-alignment distance (Levenshtein plus adjacent transpositions),
 * case-insensitive; both strings at most SUGGEST_MAX bytes. */
static unsigned edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned d[SUGGEST_MAX + 1][SUGGEST_MAX + 1];

	if (la > SUGGEST_MAX || lb > SUGGEST_MAX)
		return UINT_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = tolower((unsigned char)a[i - 1]) !=
					tolower((unsigned char)b[j - 1]);
			unsigned v = PK_MIN(d[i - 1][j] + 1, d[i][j - 1] + 1);
			v = PK_MIN(v, d[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
				v = PK_MIN(v, d[i - 2][j - 2] + 1);
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

struct suggest {
	const char *word;
	size_t wlen;
	unsigned best;
	char name[128];
};

static void suggest_consider(struct suggest *sg, const char *cand)
{
	size_t n = strlen(cand);
	if (n >= sizeof(sg->name))
		return;
	unsigned d = edit_distance(sg->word, sg->wlen, cand, n);
	if (d < sg->best) {
		sg->best = d;
		memcpy(sg->name, cand, n + 1);
	}
}

static int suggest_cache_cb(const char *name, uint64_t config, void *ctx)
{
	(void)config;
	suggest_consider(ctx, name);
	return 0;
}

/* Names of the subdirectories of dir (tracefs subsystems or events), bounded. */
static void suggest_dir(struct suggest *sg, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned count = 0;

	if (!d)
		return;
	while ((de = readdir(d)) && count++ < 20000) {
		if (de->d_name[0] != '.')
			suggest_consider(sg, de->d_name);
	}
	closedir(d);
}

static void suggest_init(struct suggest *sg, const char *word, size_t wlen)
{
	sg->word = word;
	sg->wlen = wlen;
	sg->best = UINT_MAX;
	sg->name[0] = '\0';
}

/* " (did you mean 'x'?)" if something is close enough, else "". Thread-local buffer. */
static const char *suggest_text(const struct suggest *sg)
{
	static __thread char buf[160];
	unsigned limit = sg->wlen <= 3 ? 1 : sg->wlen <= 6 ? 2 : 3;

	if (!sg->name[0] || sg->best == 0 || sg->best > limit)
		return "";
	pk_snprintf(buf, sizeof(buf), " (did you mean '%s'?)", sg->name);
	return buf;
}

static void suggest_event(struct parser *p, struct suggest *sg)
{
	size_t n;
	const struct pk_event_name *t;

	if (sg->wlen > SUGGEST_MAX)
		return;
	for (int k = 0; k < 2; k++) {
		t = k ? pk_sw_event_names(&n) : pk_hw_event_names(&n);
		for (size_t i = 0; i < n; i++) {
			suggest_consider(sg, t[i].name);
			if (t[i].alias)
				suggest_consider(sg, t[i].alias);
		}
	}
	for (unsigned c = 0; c < PK_HWC_NR_CACHE; c++)
		suggest_consider(sg, pk_hwcache__cache_names(c)[0]);
	pk_hwcache__foreach(suggest_cache_cb, sg);
	const struct pk_pmu_set *set = get_pmus(p);
	for (size_t i = 0; set && i < pk_pmu_set__count(set); i++)
		suggest_consider(sg, pk_pmu__name(pk_pmu_set__get(set, i)));
	const char *root = tracefs_root(p);
	if (root) {
		char path[PATH_MAX];
		pk_snprintf(path, sizeof(path), "%s/events", root);
		suggest_dir(sg, path);
	}
}

/* ---- modifiers ---- */

struct mods {
	bool u, k, h, G, H, I, P, S, D, W, e;
	int p;
	size_t col;      /* of the first letter */
	size_t p_col;    /* of the last 'p' */
	size_t De_col;   /* of 'D' or 'e' */
	bool any;
};

static bool is_mod_letter(char c)
{
	return c && strchr("ukhHGIpPSDWe", c) != NULL;
}

/* Parse modifier letters at p->pos (the ':' already consumed). At least one letter. */
static int parse_mods(struct parser *p, struct mods *m)
{
	size_t start = p->pos;
	bool seen[128] = { false };

	memset(m, 0, sizeof(*m));
	m->col = start;
	while (isalpha((unsigned char)cur(p))) {
		char c = cur(p);
		if (!is_mod_letter(c))
			return fail(p, -PK_ERR_PARSE, p->pos, "unknown modifier '%c'", c);
		if (c != 'p' && seen[(unsigned char)c])
			return fail(p, -PK_ERR_PARSE, p->pos, "duplicate modifier '%c'", c);
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
				return fail(p, -PK_ERR_PARSE, p->pos,
					    "too many 'p' modifiers (precise level is at most 3)");
			break;
		}
		p->pos++;
	}
	if (p->pos == start) {
		if (cur(p))
			return fail(p, -PK_ERR_PARSE, p->pos, "unknown modifier '%c'", cur(p));
		return fail(p, -PK_ERR_PARSE, p->pos, "modifier expected after ':'");
	}
	m->any = true;
	return 0;
}

/* Apply modifiers on top of what the event already has (perf's merge rules). */
static int apply_mods(struct parser *p, struct pk_event_spec *e, const struct mods *m,
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
			return fail(p, -PK_ERR_PARSE, m->p_col,
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
			return fail(p, -PK_ERR_PARSE, m->De_col,
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
static int parse_opt_mods(struct parser *p, struct mods *m, bool after_slash)
{
	memset(m, 0, sizeof(*m));
	if (cur(p) == ':') {
		p->pos++;
		return parse_mods(p, m);
	}
	if (after_slash && isalpha((unsigned char)cur(p)))
		return parse_mods(p, m);
	return 0;
}

/* ---- terms ---- */

struct term {
	const char *name, *val;
	size_t nlen, vlen, col, vcol;
	bool has_val;
};

static bool term_is(const struct term *t, const char *name)
{
	return t->nlen == strlen(name) && !memcmp(t->name, name, t->nlen);
}

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
static int parse_terms(struct parser *p, struct term *terms, size_t *nterms, size_t open_col)
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
				return fail(p, -PK_ERR_PARSE, open_col, "unterminated '/' term list");
			return fail(p, -PK_ERR_PARSE, p->pos, "term name expected at '%c'", cur(p));
		}
		if (cur(p) == '=') {
			p->pos++;
			t.has_val = true;
			t.vcol = p->pos;
			char q = cur(p);
			if (q == '\'' || q == '"') {
				const char *end = memchr(p->s + p->pos + 1, q, p->len - p->pos - 1);
				if (!end)
					return fail(p, -PK_ERR_PARSE, p->pos, "unterminated quote");
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
				return fail(p, -PK_ERR_PARSE, t.vcol, "value expected for '%.*s'",
					    QLEN(t.nlen), t.name);
		}
		if (*nterms == MAX_TERMS)
			return fail(p, -PK_ERR_PARSE, t.col, "too many terms (at most %d)",
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
			return fail(p, -PK_ERR_PARSE, open_col, "unterminated '/' term list");
		return fail(p, -PK_ERR_PARSE, p->pos, "unexpected '%c' in term list", cur(p));
	}
}

static int term_u64(struct parser *p, const struct term *t, uint64_t *out)
{
	if (!t->has_val)
		return fail(p, -PK_ERR_PARSE, t->col, "term '%.*s' needs a value", QLEN(t->nlen),
			    t->name);
	int r = pk_parse_u64(t->val, t->vlen, out);
	if (r == -ERANGE)
		return fail(p, -PK_ERR_PARSE, t->vcol, "value of '%.*s' is too large",
			    QLEN(t->nlen), t->name);
	if (r < 0)
		return fail(p, -PK_ERR_PARSE, t->vcol, "invalid number '%.*s'", QLEN(t->vlen),
			    t->val);
	return 0;
}

/* *out = copy of [s, s+n); fails on lengths beyond MAX_NAME_LEN. */
static int dup_bounded(struct parser *p, char **out, const char *s, size_t n, size_t col)
{
	if (n > MAX_NAME_LEN)
		return fail(p, -PK_ERR_PARSE, col, "name too long (at most %d bytes)",
			    MAX_NAME_LEN);
	char *r = pk_strndup(s, n);
	if (!r)
		return fail_nomem(p, col);
	free(*out);
	*out = r;
	return 0;
}

/* The terms every event accepts. Returns 1 if handled, 0 if not a generic term, <0. */
static int generic_term(struct parser *p, struct pk_event_spec *e, const struct term *t)
{
	uint64_t v;
	int r;

	if (term_is(t, "period") || term_is(t, "freq")) {
		if ((r = term_u64(p, t, &v)) < 0)
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
		if ((r = term_u64(p, t, &v)) < 0)
			return r;
		if (v > UINT32_MAX)
			return fail(p, -PK_ERR_PARSE, t->vcol, "stack-size is too large");
		e->stack_size = (uint32_t)v;
		return 1;
	}
	if (term_is(t, "call-graph")) {
		static const char *const modes[] = { "fp", "dwarf", "lbr", "no" };
		size_t i;
		if (!t->has_val)
			return fail(p, -PK_ERR_PARSE, t->col, "term 'call-graph' needs a value");
		for (i = 0; i < PK_ARRAY_SIZE(modes); i++)
			if (t->vlen == strlen(modes[i]) && !memcmp(t->val, modes[i], t->vlen))
				break;
		if (i == PK_ARRAY_SIZE(modes))
			return fail(p, -PK_ERR_PARSE, t->vcol,
				    "call-graph must be fp, dwarf, lbr or no, not '%.*s'",
				    QLEN(t->vlen), t->val);
		if ((r = dup_bounded(p, &e->callgraph, t->val, t->vlen, t->vcol)) < 0)
			return r;
		return 1;
	}
	if (term_is(t, "name")) {
		if (!t->has_val)
			return fail(p, -PK_ERR_PARSE, t->col, "term 'name' needs a value");
		if ((r = dup_bounded(p, &e->name, t->val, t->vlen, t->vcol)) < 0)
			return r;
		e->flags |= PK_EVF_NAME_SET;
		return 1;
	}
	return 0;
}

/* Apply a list of terms that must all be generic (events that are not pmu/.../). */
static int generic_terms_only(struct parser *p, struct pk_event_spec *e, const struct term *t,
			      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = generic_term(p, e, &t[i]);
		if (r < 0)
			return r;
		if (r == 0)
			return fail(p, -PK_ERR_PARSE, t[i].col,
				    "unknown term '%.*s' (valid here: period, freq, name, "
				    "call-graph, stack-size)", QLEN(t[i].nlen), t[i].name);
	}
	return 0;
}

/* ---- finishing an event ---- */

/* Set the display name (unless name= gave one) and the attr size. */
static int finish(struct parser *p, struct pk_event_spec *e, const char *text, size_t n,
		  size_t col)
{
	int r;
	if (!(e->flags & PK_EVF_NAME_SET) && (r = dup_bounded(p, &e->name, text, n, col)) < 0)
		return r;
	e->attr.attr.size = pk_attr__min_size(&e->attr);
	return 0;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static bool glob_char(char c)
{
	return c == '*' || c == '?' || c == '[' || c == ']' || c == '!';
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
			return fail(p, -PK_ERR_PARSE, col, "raw config '%.*s' is too large",
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
	return fail(p, -PK_ERR_PARSE, col, "%s", msg);
}

/* Extent of a libpfm4 name starting at col: up to ',', '}', '{' or whitespace. */
static size_t pfm_extent(const struct parser *p, size_t col)
{
	size_t i = col;
	while (i < p->len && p->s[i] != ',' && p->s[i] != '}' && p->s[i] != '{' &&
	       !isspace((unsigned char)p->s[i]))
		i++;
	return i - col;
}

/* Try libpfm4 on [col, col+n). 1 = made an event, 0 = unknown, <0 error. */
static int try_pfm(struct parser *p, size_t col, size_t n)
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
	struct pk_event_spec *e = new_spec(p, PK_EV_PFM, col);
	if (!e)
		return p->code;
	e->attr = a;
	e->attr.attr.size = 0;
	p->pos = col + n;
	int r = finish(p, e, p->s + col, n, col);
	return r < 0 ? r : 1;
}

static int unknown_event(struct parser *p, const char *tok, size_t n, size_t col)
{
	struct suggest sg;
	suggest_init(&sg, tok, n);
	suggest_event(p, &sg);
	return fail(p, -ENOENT, col, "unknown event '%.*s'%s", QLEN(n), tok, suggest_text(&sg));
}

/* ---- event kinds ---- */

static int parse_legacy(struct parser *p, const char *tok, size_t n, size_t col, uint32_t type,
			uint64_t config, enum pk_event_kind kind, bool leader)
{
	struct pk_event_spec *e = new_spec(p, kind, col);
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
		if ((r = parse_terms(p, terms, &nt, open)) < 0)
			return r;
		if ((r = generic_terms_only(p, e, terms, nt)) < 0)
			return r;
		slash = true;
	}
	if ((r = parse_opt_mods(p, &m, slash)) < 0 || (r = apply_mods(p, e, &m, false)) < 0)
		return r;
	return finish(p, e, p->s + col, p->pos - col, col);
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
		return fail(p, -PK_ERR_PARSE, acol, "mem: address missing");
	r = pk_parse_u64(p->s + acol, p->pos - acol, &addr);
	if (r < 0)
		return fail(p, -PK_ERR_PARSE, acol, "invalid breakpoint address '%.*s'",
			    QLEN(p->pos - acol), p->s + acol);
	if (cur(p) == '/') {
		size_t lcol = ++p->pos;
		while (isalnum((unsigned char)cur(p)))
			p->pos++;
		if (pk_parse_u64(p->s + lcol, p->pos - lcol, &len) < 0 ||
		    (len != 1 && len != 2 && len != 4 && len != 8))
			return fail(p, -PK_ERR_PARSE, lcol,
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
					return fail(p, -PK_ERR_PARSE, j, "duplicate access '%c'",
						    p->s[j]);
				type |= bit;
			}
			if ((type & HW_BREAKPOINT_X) && (type & HW_BREAKPOINT_RW))
				return fail(p, -PK_ERR_PARSE, p->pos + 1,
					    "an execute breakpoint cannot also watch reads or writes");
			p->pos = i;
		}
		if (cur(p) == ':') {
			p->pos++;
			if ((r = parse_mods(p, &m)) < 0)
				return r;
		}
	}
	if (!type)
		type = HW_BREAKPOINT_RW;
	if (!len)
		len = type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_4;

	struct pk_event_spec *e = new_spec(p, PK_EV_BREAKPOINT, col);
	if (!e)
		return p->code;
	e->leader = leader;
	e->attr.attr.type = PERF_TYPE_BREAKPOINT;
	e->attr.attr.bp_type = type;
	e->attr.attr.bp_addr = addr;
	e->attr.attr.bp_len = len;
	/* as perf: every hit is an event (counting is unaffected) */
	e->attr.attr.sample_period = 1;
	if ((r = apply_mods(p, e, &m, false)) < 0)
		return r;
	return finish(p, e, p->s + col, p->pos - col, col);
}

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
		return fail(p, -ENOENT, col, "no tracepoint matches '%.*s:%.*s'", QLEN(syslen),
			    sys, QLEN(evlen), ev);
	/* suggest within the subsystem if it exists, else among subsystems */
	pk_snprintf(path, sizeof(path), "%s/events/%.*s", root, (int)PK_MIN(syslen, 255), sys);
	DIR *d = opendir(path);
	if (d) {
		closedir(d);
		suggest_init(&sg, ev, evlen);
		suggest_dir(&sg, path);
		const char *hint = suggest_text(&sg);
		if (*hint)
			return fail(p, -ENOENT, col,
				    "unknown tracepoint '%.*s:%.*s' (did you mean '%.*s:%s'?)",
				    QLEN(syslen), sys, QLEN(evlen), ev, QLEN(syslen), sys, sg.name);
		return fail(p, -ENOENT, col, "unknown tracepoint '%.*s:%.*s'", QLEN(syslen), sys,
			    QLEN(evlen), ev);
	}
	bool mods_only = evlen > 0;
	for (size_t i = 0; i < evlen; i++)
		mods_only &= is_mod_letter(ev[i]);
	if (mods_only) /* "cylces:u": a misspelt event with modifiers */
		return unknown_event(p, sys, syslen, col);
	suggest_init(&sg, sys, syslen);
	pk_snprintf(path, sizeof(path), "%s/events", root);
	suggest_dir(&sg, path);
	return fail(p, -ENOENT, col, "unknown tracepoint subsystem '%.*s'%s", QLEN(syslen), sys,
		    suggest_text(&sg));
}

/* sys:name[/terms/][:modifiers]; sys and name may be fnmatch globs. */
static int parse_tracepoint(struct parser *p, size_t col, size_t syslen, bool leader,
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

	const char *root = tracefs_root(p);
	if (evlen == 0 || syslen > 255 || evlen > 255 || !root) {
		/* could still be a libpfm4 name such as "perf::cycles" */
		r = try_pfm(p, col, pfm_extent(p, col));
		if (r)
			return r < 0 ? r : 0;
		if (evlen == 0)
			return fail(p, -PK_ERR_PARSE, ecol, "tracepoint name missing after ':'");
		bool mods_only = true;
		for (size_t i = 0; i < evlen; i++)
			mods_only &= is_mod_letter(ev[i]);
		if (!root && mods_only)
			return unknown_event(p, sys, syslen, col);
		if (!root)
			return fail(p, -ENOENT, col,
				    "tracefs is not mounted (needed for tracepoint '%.*s:%.*s')",
				    QLEN(syslen), sys, QLEN(evlen), ev);
		return fail(p, -PK_ERR_PARSE, col, "tracepoint name too long");
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
			return fail_nomem(p, col);
		return fail(p, -PK_ERR_PARSE, col, "too many events (at most %d)", MAX_EVENTS);
	}
	if (c.n == 0) {
		free(c.v);
		size_t save = p->pos;
		r = try_pfm(p, col, pfm_extent(p, col));
		if (r)
			return r < 0 ? r : 0;
		p->pos = save;
		return tp_not_found(p, root, sys, syslen, ev, evlen, col, glob);
	}

	/* the suffix as written (terms, modifiers) is shared by every match */
	size_t suffix = p->pos;
	if (cur(p) == '/') {
		size_t open = p->pos++;
		if ((r = parse_terms(p, terms, &nt, open)) < 0)
			goto out;
		slash = true;
	}
	if ((r = parse_opt_mods(p, &m, slash)) < 0)
		goto out;
	for (size_t i = 0; i < c.n; i++) {
		struct pk_event_spec *e = new_spec(p, PK_EV_TRACEPOINT, col);
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
		if ((r = dup_bounded(p, &e->pmu, nm, strlen(nm), col)) < 0)
			goto out;
		if ((r = generic_terms_only(p, e, terms, nt)) < 0 ||
		    (r = apply_mods(p, e, &m, false)) < 0)
			goto out;
		size_t sl = p->pos - suffix;
		if (strlen(nm) + sl > MAX_NAME_LEN) {
			r = fail(p, -PK_ERR_PARSE, col, "name too long (at most %d bytes)",
				 MAX_NAME_LEN);
			goto out;
		}
		memcpy(nm + strlen(nm), p->s + suffix, sl);
		nm[strlen(e->pmu) + sl] = '\0';
		if ((r = finish(p, e, nm, strlen(nm), col)) < 0)
			goto out;
	}
	r = 0;
out:
	free(c.v);
	return r;
}

/* ---- PMU events ---- */

static bool is_probe_pmu(const char *name, const char *which)
{
	return !strcmp(name, which);
}

/* pmu/terms/ or pmu/alias/ (and the kprobe/uprobe PMUs' func=, addr=, path=, offset=). */
static int parse_pmu_event(struct parser *p, size_t col, size_t toklen, bool leader)
{
	const struct pk_pmu_set *set = get_pmus(p);
	const struct pk_pmu *pmu = NULL;
	struct term terms[MAX_TERMS];
	size_t nt, open = col + toklen;
	struct mods m;
	char nb[256];
	int r;

	if (toklen < sizeof(nb)) {
		memcpy(nb, p->s + col, toklen);
		nb[toklen] = '\0';
		pmu = set ? pk_pmu_set__find(set, nb) : NULL;
	}
	if (!pmu) {
		struct suggest sg;
		suggest_init(&sg, p->s + col, toklen);
		for (size_t i = 0; set && i < pk_pmu_set__count(set); i++)
			suggest_consider(&sg, pk_pmu__name(pk_pmu_set__get(set, i)));
		return fail(p, -ENOENT, col, "unknown PMU '%.*s'%s", QLEN(toklen), p->s + col,
			    suggest_text(&sg));
	}
	p->pos = open + 1;
	if ((r = parse_terms(p, terms, &nt, open)) < 0)
		return r;
	if ((r = parse_opt_mods(p, &m, true)) < 0)
		return r;

	struct pk_event_spec *e = new_spec(p, PK_EV_PMU, col);
	if (!e)
		return p->code;
	e->leader = leader;
	bool kprobe = is_probe_pmu(nb, "kprobe"), uprobe = is_probe_pmu(nb, "uprobe");
	const struct term *t_func = NULL, *t_addr = NULL, *t_path = NULL, *t_off = NULL;
	size_t rest_len = 0, nrest = 0, rest_idx[MAX_TERMS];

	for (size_t i = 0; i < nt; i++) {
		const struct term *t = &terms[i];
		if ((r = generic_term(p, e, t)) < 0)
			return r;
		if (r)
			continue;
		if (kprobe && term_is(t, "func")) {
			t_func = t;
		} else if (kprobe && term_is(t, "addr")) {
			t_addr = t;
		} else if (uprobe && term_is(t, "path")) {
			t_path = t;
		} else if ((kprobe || uprobe) && term_is(t, "offset")) {
			t_off = t;
		} else {
			rest_idx[nrest++] = i;
			rest_len += t->has_val ? t->nlen + t->vlen + 2 : t->nlen + 1;
		}
	}

	/* everything else is the PMU's own: formats, aliases, config*= */
	struct pk_attr enc;
	memset(&enc, 0, sizeof(enc));
	if (nrest) {
		char *rest = malloc(rest_len + 1), msg[200];
		size_t o = 0;
		if (!rest)
			return fail_nomem(p, col);
		for (size_t k = 0; k < nrest; k++) {
			const struct term *t = &terms[rest_idx[k]];
			if (k)
				rest[o++] = ',';
			memcpy(rest + o, t->name, t->nlen);
			o += t->nlen;
			if (t->has_val) {
				rest[o++] = '=';
				memcpy(rest + o, t->val, t->vlen);
				o += t->vlen;
			}
		}
		rest[o] = '\0';
		msg[0] = '\0';
		r = pk_pmu__encode(pmu, rest, &enc, msg, sizeof(msg));
		if (r < 0) {
			/* point at the first term that fails on its own */
			const struct term *bad = &terms[rest_idx[0]];
			for (size_t k = 0; k < nrest && r != -ENOMEM; k++) {
				const struct term *t = &terms[rest_idx[k]];
				struct pk_attr tmp;
				char m2[8];
				o = t->nlen;
				memcpy(rest, t->name, t->nlen);
				if (t->has_val) {
					rest[o++] = '=';
					memcpy(rest + o, t->val, t->vlen);
					o += t->vlen;
				}
				rest[o] = '\0';
				memset(&tmp, 0, sizeof(tmp));
				if (pk_pmu__encode(pmu, rest, &tmp, m2, sizeof(m2)) < 0) {
					bad = t;
					break;
				}
			}
			free(rest);
			if (r == -ENOMEM)
				return fail_nomem(p, bad->col);
			/* a misspelt format term or alias gets a "did you mean" */
			struct suggest sg;
			const char *hint = "";
			suggest_init(&sg, bad->name, bad->nlen);
			for (size_t k = 0; k < pk_pmu__format_count(pmu); k++)
				suggest_consider(&sg, pk_pmu__format_name(pmu, k));
			for (size_t k = 0; k < pk_pmu__alias_count(pmu); k++)
				suggest_consider(&sg, pk_pmu__alias_name(pmu, k));
			if (sg.best > 0)
				hint = suggest_text(&sg);
			return fail(p, r == -ENOENT ? -ENOENT : -PK_ERR_PARSE, bad->col, "%s%s",
				    msg[0] ? msg : pk_strerror(r), hint);
		}
		/* an alias named as a bare term carries the sysfs .scale/.unit */
		for (size_t k = 0; k < nrest; k++) {
			const struct term *t = &terms[rest_idx[k]];
			if (t->has_val || t->nlen >= sizeof(nb))
				continue;
			memcpy(rest, t->name, t->nlen);
			rest[t->nlen] = '\0';
			long ai = pk_pmu__find_alias(pmu, rest);
			if (ai >= 0) {
				const char *unit = pk_pmu__alias_unit(pmu, (size_t)ai);
				e->scale = pk_pmu__alias_scale(pmu, (size_t)ai);
				if (unit && !(e->unit = pk_strndup(unit, strnlen(unit, MAX_NAME_LEN)))) {
					free(rest);
					return fail_nomem(p, col);
				}
				break;
			}
		}
		free(rest);
	}
	e->attr.attr.type = pk_pmu__type(pmu);
	e->attr.attr.config = enc.attr.config;
	e->attr.attr.config1 = enc.attr.config1;
	e->attr.attr.config2 = enc.attr.config2;
	pk_attr__set_config3(&e->attr, pk_attr__config3(&enc));

	if (kprobe || uprobe) {
		uint64_t off = 0, addr = 0;
		if (t_off && (r = term_u64(p, t_off, &off)) < 0)
			return r;
		if (uprobe && !t_path)
			return fail(p, -PK_ERR_PARSE, open, "uprobe needs path=FILE");
		if (kprobe && !t_func && !t_addr)
			return fail(p, -PK_ERR_PARSE, open, "kprobe needs func=NAME or addr=ADDR");
		if (kprobe && t_func && t_addr)
			return fail(p, -PK_ERR_PARSE, t_addr->col,
				    "kprobe takes func= or addr=, not both");
		if (t_addr && t_off)
			return fail(p, -PK_ERR_PARSE, t_off->col,
				    "offset= goes with func=, not addr=");
		const struct term *ts = t_path ? t_path : t_func;
		if (ts) {
			if (!ts->has_val)
				return fail(p, -PK_ERR_PARSE, ts->col, "term '%.*s' needs a value",
					    QLEN(ts->nlen), ts->name);
			if ((r = dup_bounded(p, &e->probe, ts->val, ts->vlen, ts->vcol)) < 0)
				return r;
			if (strlen(e->probe) != ts->vlen)
				return fail(p, -PK_ERR_PARSE, ts->vcol, "NUL in '%.*s'",
					    QLEN(ts->nlen), ts->name);
			/* kprobe_func / uprobe_path: the kernel reads the string at open */
			e->attr.attr.config1 = (uint64_t)(uintptr_t)e->probe;
			e->attr.attr.config2 = off; /* probe_offset */
		} else {
			if ((r = term_u64(p, t_addr, &addr)) < 0)
				return r;
			e->attr.attr.config1 = 0;
			e->attr.attr.config2 = addr; /* kprobe_addr */
		}
	}
	if ((r = dup_bounded(p, &e->pmu, nb, strlen(nb), col)) < 0)
		return r;
	if ((r = apply_mods(p, e, &m, false)) < 0)
		return r;
	return finish(p, e, p->s + col, p->pos - col, col);
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
		if (cur(p) == ':' && (r = try_pfm(p, col, pfm_extent(p, col))) != 0)
			return r < 0 ? r : 0;
		if (cur(p) == ':')
			return fail(p, -PK_ERR_PARSE, col, "event name expected before ':'");
		return fail(p, -PK_ERR_PARSE, col, "unexpected '%c'", cur(p));
	}
	bool has_glob = false;
	for (size_t i = 0; i < n; i++)
		has_glob |= glob_char(tok[i]);

	if (!has_glob) {
		r = classify_legacy(p, tok, n, col, &type, &config, &kind);
		if (r < 0)
			return r;
		if (r)
			return parse_legacy(p, tok, n, col, type, config, kind, leader);
	}
	if (cur(p) == '/' && !has_glob)
		return parse_pmu_event(p, col, n, leader);
	if (cur(p) == ':')
		return parse_tracepoint(p, col, n, leader, in_group);
	r = try_pfm(p, col, pfm_extent(p, col));
	if (r)
		return r < 0 ? r : 0;
	return unknown_event(p, tok, n, col);
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
			return fail(p, -PK_ERR_PARSE, p->pos, "nested groups are not supported");
		if (c == '}' || c == ',' || !c) {
			if (!c)
				return fail(p, -PK_ERR_PARSE, open, "unterminated group");
			return fail(p, -PK_ERR_PARSE, p->pos,
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
			return fail(p, -PK_ERR_PARSE, open, "unterminated group");
		return fail(p, -PK_ERR_PARSE, p->pos, "unexpected '%c'", c);
	}
	p->pos++; /* '}' */
	struct mods m;
	memset(&m, 0, sizeof(m));
	if (cur(p) == ':') {
		p->pos++;
		if ((r = parse_mods(p, &m)) < 0)
			return r;
	}
	int g = p->next_group++;
	for (size_t i = first; i < p->n; i++) {
		struct pk_event_spec *e = p->v[i];
		e->group = g;
		e->leader = i == first;
		if ((r = apply_mods(p, e, &m, true)) < 0)
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
		return fail(p, -PK_ERR_PARSE, p->pos, "empty event list");
	for (;;) {
		skip_ws(p);
		char c = cur(p);
		if (c == '{')
			r = parse_group(p);
		else if (c == '}')
			return fail(p, -PK_ERR_PARSE, p->pos, "unexpected '}'");
		else if (c == ',' || !c)
			return fail(p, -PK_ERR_PARSE, p->pos, "empty event");
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
			return fail(p, -PK_ERR_PARSE, p->pos, "unexpected '}'");
		return fail(p, -PK_ERR_PARSE, p->pos, "unexpected '%c'", c);
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

	r = parse_list(&p);
	if (r >= 0 && p.failed)
		r = -PK_ERR_PARSE;
	if (r >= 0 && list->n + p.n > list->cap) {
		size_t nc = PK_MAX(list->cap ? list->cap * 2 : 16, list->n + p.n);
		struct pk_event_spec **nv = realloc(list->v, nc * sizeof(*nv));
		if (!nv) {
			r = fail_nomem(&p, 0);
		} else {
			list->v = nv;
			list->cap = nc;
		}
	}
	if (r < 0) {
		for (size_t i = 0; i < p.n; i++)
			spec_free(p.v[i]);
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
