/* SPDX-License-Identifier: MIT */
/*
 * lib/event/parse-pmu.c - PMU events of the event parser: pmu/terms/ and pmu/alias/
 * encoded through the PMU's sysfs formats, an alias's scale and unit, and the kprobe and
 * uprobe PMUs' func=, addr=, path=, offset= terms.
 */
#include <stdlib.h>
#include "parser-internal.h"

/* ---- PMU events ---- */

static bool is_probe_pmu(const char *name, const char *which)
{
	return !strcmp(name, which);
}

/* pmu/terms/ or pmu/alias/ (and the kprobe/uprobe PMUs' func=, addr=, path=, offset=). */
int pk_ep_parse_pmu_event(struct parser *p, size_t col, size_t toklen, bool leader)
{
	const struct pk_pmu_set *set = pk_ep_pmus(p);
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
		pk_ep_suggest_init(&sg, p->s + col, toklen);
		for (size_t i = 0; set && i < pk_pmu_set__count(set); i++)
			pk_ep_suggest_consider(&sg, pk_pmu__name(pk_pmu_set__get(set, i)));
		return pk_ep_fail(p, -ENOENT, col, "unknown PMU '%.*s'%s", QLEN(toklen), p->s + col,
				  pk_ep_suggest_text(&sg));
	}
	p->pos = open + 1;
	if ((r = pk_ep_parse_terms(p, terms, &nt, open)) < 0)
		return r;
	if ((r = pk_ep_parse_opt_mods(p, &m, true)) < 0)
		return r;

	struct pk_event_spec *e = pk_ep_new_spec(p, PK_EV_PMU, col);
	if (!e)
		return p->code;
	e->leader = leader;
	bool kprobe = is_probe_pmu(nb, "kprobe"), uprobe = is_probe_pmu(nb, "uprobe");
	const struct term *t_func = NULL, *t_addr = NULL, *t_path = NULL, *t_off = NULL;
	size_t rest_len = 0, nrest = 0, rest_idx[MAX_TERMS];

	for (size_t i = 0; i < nt; i++) {
		const struct term *t = &terms[i];
		if ((r = pk_ep_generic_term(p, e, t)) < 0)
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
			return pk_ep_fail_nomem(p, col);
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
				return pk_ep_fail_nomem(p, bad->col);
			/* a misspelt format term or alias gets a "did you mean" */
			struct suggest sg;
			const char *hint = "";
			pk_ep_suggest_init(&sg, bad->name, bad->nlen);
			for (size_t k = 0; k < pk_pmu__format_count(pmu); k++)
				pk_ep_suggest_consider(&sg, pk_pmu__format_name(pmu, k));
			for (size_t k = 0; k < pk_pmu__alias_count(pmu); k++)
				pk_ep_suggest_consider(&sg, pk_pmu__alias_name(pmu, k));
			if (sg.best > 0)
				hint = pk_ep_suggest_text(&sg);
			return pk_ep_fail(p, r == -ENOENT ? -ENOENT : -PK_ERR_PARSE, bad->col, "%s%s",
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
					return pk_ep_fail_nomem(p, col);
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
		if (t_off && (r = pk_ep_term_u64(p, t_off, &off)) < 0)
			return r;
		if (uprobe && !t_path)
			return pk_ep_fail(p, -PK_ERR_PARSE, open, "uprobe needs path=FILE");
		if (kprobe && !t_func && !t_addr)
			return pk_ep_fail(p, -PK_ERR_PARSE, open, "kprobe needs func=NAME or addr=ADDR");
		if (kprobe && t_func && t_addr)
			return pk_ep_fail(p, -PK_ERR_PARSE, t_addr->col,
					  "kprobe takes func= or addr=, not both");
		if (t_addr && t_off)
			return pk_ep_fail(p, -PK_ERR_PARSE, t_off->col,
					  "offset= goes with func=, not addr=");
		const struct term *ts = t_path ? t_path : t_func;
		if (ts) {
			if (!ts->has_val)
				return pk_ep_fail(p, -PK_ERR_PARSE, ts->col, "term '%.*s' needs a value",
						  QLEN(ts->nlen), ts->name);
			if ((r = pk_ep_dup_bounded(p, &e->probe, ts->val, ts->vlen, ts->vcol)) < 0)
				return r;
			if (strlen(e->probe) != ts->vlen)
				return pk_ep_fail(p, -PK_ERR_PARSE, ts->vcol, "NUL in '%.*s'",
						  QLEN(ts->nlen), ts->name);
			/* kprobe_func / uprobe_path: the kernel reads the string at open, and
			 * again in every inherited copy, from the forking task's memory */
			e->flags |= PK_EVF_NO_INHERIT;
			e->attr.attr.config1 = (uint64_t)(uintptr_t)e->probe;
			e->attr.attr.config2 = off; /* probe_offset */
		} else {
			if ((r = pk_ep_term_u64(p, t_addr, &addr)) < 0)
				return r;
			e->attr.attr.config1 = 0;
			e->attr.attr.config2 = addr; /* kprobe_addr */
		}
	}
	if ((r = pk_ep_dup_bounded(p, &e->pmu, nb, strlen(nb), col)) < 0)
		return r;
	if ((r = pk_ep_apply_mods(p, e, &m, false)) < 0)
		return r;
	return pk_ep_finish(p, e, p->s + col, p->pos - col, col);
}
