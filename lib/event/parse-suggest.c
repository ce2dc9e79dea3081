/* SPDX-License-Identifier: MIT */
/*
 * lib/event/parse-suggest.c - "did you mean" for the event parser: the closest known
 * name (edit distance, case-insensitive) among hw/sw/cache events, PMUs and tracefs
 * directories, added to an "unknown ..." message when it is close enough.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include "parser-internal.h"

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

void pk_ep_suggest_consider(struct suggest *sg, const char *cand)
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
	pk_ep_suggest_consider(ctx, name);
	return 0;
}

/* Names of the subdirectories of dir (tracefs subsystems or events), bounded. */
void pk_ep_suggest_dir(struct suggest *sg, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned count = 0;

	if (!d)
		return;
	while ((de = readdir(d)) && count++ < 20000) {
		if (de->d_name[0] != '.')
			pk_ep_suggest_consider(sg, de->d_name);
	}
	closedir(d);
}

void pk_ep_suggest_init(struct suggest *sg, const char *word, size_t wlen)
{
	sg->word = word;
	sg->wlen = wlen;
	sg->best = UINT_MAX;
	sg->name[0] = '\0';
}

/* " (did you mean 'x'?)" if something is close enough, else "". Thread-local buffer. */
const char *pk_ep_suggest_text(const struct suggest *sg)
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
			pk_ep_suggest_consider(sg, t[i].name);
			if (t[i].alias)
				pk_ep_suggest_consider(sg, t[i].alias);
		}
	}
	for (unsigned c = 0; c < PK_HWC_NR_CACHE; c++)
		pk_ep_suggest_consider(sg, pk_hwcache__cache_names(c)[0]);
	pk_hwcache__foreach(suggest_cache_cb, sg);
	const struct pk_pmu_set *set = pk_ep_pmus(p);
	for (size_t i = 0; set && i < pk_pmu_set__count(set); i++)
		pk_ep_suggest_consider(sg, pk_pmu__name(pk_pmu_set__get(set, i)));
	const char *root = pk_ep_tracefs_root(p);
	if (root) {
		char path[PATH_MAX];
		pk_snprintf(path, sizeof(path), "%s/events", root);
		pk_ep_suggest_dir(sg, path);
	}
}

int pk_ep_unknown_event(struct parser *p, const char *tok, size_t n, size_t col)
{
	struct suggest sg;
	pk_ep_suggest_init(&sg, tok, n);
	suggest_event(p, &sg);
	return pk_ep_fail(p, -ENOENT, col, "unknown event '%.*s'%s", QLEN(n), tok,
			  pk_ep_suggest_text(&sg));
}
