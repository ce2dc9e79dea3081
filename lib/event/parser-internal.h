/* SPDX-License-Identifier: MIT */
/*
 * lib/event/parser-internal.h - the event-spec parser's objects and state, shared by its
 * files: parse.c (grammar of lists, groups and events; legacy, raw, libpfm4 and
 * breakpoint events), parse-terms.c (modifiers and /terms/), parse-suggest.c ("did you
 * mean"), parse-tracepoint.c, parse-pmu.c and spec.c (the list and spec objects). Never
 * installed.
 *
 * Every pk_ep_* function that can fail records the first failure in the parser (message
 * and column in the caller's pk_parse_error) and returns its negative code.
 */
#ifndef PK_EVENT_PARSER_INTERNAL_H
#define PK_EVENT_PARSER_INTERNAL_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "internal.h"
#include "parse-internal.h"

#define MAX_EVENTS   65536   /* per list: bounds memory for hostile input */
#define MAX_TERMS    64      /* per pmu/terms/ section */
#define MAX_NAME_LEN 4096    /* display names, probe paths */
#define SUGGEST_MAX  64      /* tokens longer than this get no "did you mean" */

/* Quote at most 64 bytes of the input in messages. */
#define QLEN(n) ((int)PK_MIN((size_t)(n), (size_t)64))

struct pk_event_spec {
	struct pk_attr attr;
	enum pk_event_kind kind;
	char *name;
	char *pmu;
	char *callgraph;
	char *unit;
	char *probe;          /* kprobe function / uprobe path: config1 points here */
	char *probe_file;     /* u:/r:/sdt: the binary resolved (probe is /proc/self/fd/N) */
	int probe_fd;         /* held open from resolution to the close of the event, or -1 */
	uint64_t probe_dev, probe_ino, probe_offset;
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

/* ---- parser state (parse.c) ---- */

struct parser {
	const char *s;
	size_t len, pos;
	bool no_pfm;
	int probe_pid;             /* library names of probes: this process's maps first */
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

static inline char cur(const struct parser *p)
{
	return p->pos < p->len ? p->s[p->pos] : '\0';
}

static inline void skip_ws(struct parser *p)
{
	while (p->pos < p->len && isspace((unsigned char)p->s[p->pos]))
		p->pos++;
}

static inline bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static inline bool glob_char(char c)
{
	return c == '*' || c == '?' || c == '[' || c == ']' || c == '!';
}

/* Record the first failure (later ones keep the first message); returns code. */
PK_PRINTF(4, 5)
int pk_ep_fail(struct parser *p, int code, size_t col, const char *fmt, ...);
int pk_ep_fail_nomem(struct parser *p, size_t col);
/* The PMUs given in the options, else loaded from sysfs once (NULL if that failed). */
const struct pk_pmu_set *pk_ep_pmus(struct parser *p);
/* The tracefs root given in the options, else the discovered one (NULL: none). */
const char *pk_ep_tracefs_root(struct parser *p);
/* A new pending event (leader, scale 1, no group); NULL after recording the failure. */
struct pk_event_spec *pk_ep_new_spec(struct parser *p, enum pk_event_kind kind, size_t col);
/* Set the display name (unless name= gave one) and the attr size. */
int pk_ep_finish(struct parser *p, struct pk_event_spec *e, const char *text, size_t n,
		 size_t col);
/* Extent of a libpfm4 name starting at col: up to ',', '}', '{' or whitespace. */
size_t pk_ep_pfm_extent(const struct parser *p, size_t col);
/* Try libpfm4 on [col, col+n). 1 = made an event, 0 = unknown, <0 error. */
int pk_ep_try_pfm(struct parser *p, size_t col, size_t n);

/* ---- event specs (spec.c) ---- */

void pk_ep_spec_free(struct pk_event_spec *e);

/* ---- "did you mean" (parse-suggest.c) ---- */

struct suggest {
	const char *word;
	size_t wlen;
	unsigned best;
	char name[128];
};

void pk_ep_suggest_init(struct suggest *sg, const char *word, size_t wlen);
/* Remember cand if it is the closest to the word so far. */
void pk_ep_suggest_consider(struct suggest *sg, const char *cand);
/* Names of the subdirectories of dir (tracefs subsystems or events), bounded. */
void pk_ep_suggest_dir(struct suggest *sg, const char *dir);
/* " (did you mean 'x'?)" if something is close enough, else "". Thread-local buffer. */
const char *pk_ep_suggest_text(const struct suggest *sg);
/* Fail with "unknown event" and the closest known event name, if any. */
int pk_ep_unknown_event(struct parser *p, const char *tok, size_t n, size_t col);

/* ---- modifiers and terms (parse-terms.c) ---- */

struct mods {
	bool u, k, h, G, H, I, P, S, D, W, e;
	int p;
	size_t col;      /* of the first letter */
	size_t p_col;    /* of the last 'p' */
	size_t De_col;   /* of 'D' or 'e' */
	bool any;
};

static inline bool is_mod_letter(char c)
{
	return c && strchr("ukhHGIpPSDWe", c) != NULL;
}

/* Parse modifier letters at p->pos (the ':' already consumed). At least one letter. */
int pk_ep_parse_mods(struct parser *p, struct mods *m);
/* Apply modifiers on top of what the event already has (perf's merge rules). */
int pk_ep_apply_mods(struct parser *p, struct pk_event_spec *e, const struct mods *m,
		     bool group_level);
/* Optional modifiers after an event: ":letters", or letters right after a closing '/'. */
int pk_ep_parse_opt_mods(struct parser *p, struct mods *m, bool after_slash);

struct term {
	const char *name, *val;
	size_t nlen, vlen, col, vcol;
	bool has_val;
};

static inline bool term_is(const struct term *t, const char *name)
{
	return t->nlen == strlen(name) && !memcmp(t->name, name, t->nlen);
}

/* Parse "term[=value],..." up to and including the closing '/' (the opening '/' is
 * consumed); at most MAX_TERMS. */
int pk_ep_parse_terms(struct parser *p, struct term *terms, size_t *nterms, size_t open_col);
int pk_ep_term_u64(struct parser *p, const struct term *t, uint64_t *out);
/* *out = copy of [s, s+n); fails on lengths beyond MAX_NAME_LEN. */
int pk_ep_dup_bounded(struct parser *p, char **out, const char *s, size_t n, size_t col);
/* The terms every event accepts. Returns 1 if handled, 0 if not a generic term, <0. */
int pk_ep_generic_term(struct parser *p, struct pk_event_spec *e, const struct term *t);
/* Apply a list of terms that must all be generic (events that are not pmu/.../). */
int pk_ep_generic_terms_only(struct parser *p, struct pk_event_spec *e, const struct term *t,
			     size_t n);

/* ---- event kinds with files of their own ---- */

/* sys:name[/terms/][:modifiers]; sys and name may be fnmatch globs (parse-tracepoint.c). */
int pk_ep_parse_tracepoint(struct parser *p, size_t col, size_t syslen, bool leader,
			   bool in_group);
/* pmu/terms/ or pmu/alias/, with the kprobe/uprobe PMUs' own terms (parse-pmu.c). */
int pk_ep_parse_pmu_event(struct parser *p, size_t col, size_t toklen, bool leader);
/* u:, r:, sdt:, k:, kr: dynamic probes by name (parse-probe.c); p->s[col+n] is ':'. */
bool pk_ep_is_probe_kind(const char *tok, size_t n);
int pk_ep_parse_probe(struct parser *p, size_t col, size_t n, bool leader);

#endif
