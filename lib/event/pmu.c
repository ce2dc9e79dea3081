/* SPDX-License-Identifier: MIT */
/*
 * PMUs from sysfs (/sys/bus/event_source/devices/<pmu>/ with type, format/, events/, cpumask,
 * rdpmc) and the term encoder that turns "event=0x3c,umask=1,inv" or an alias name into config
 * words. Everything read from sysfs is treated as hostile: every file is read with a size
 * bound through pk_read_small_fileat (regular files only, O_NONBLOCK), counts are capped,
 * and a bad entry is skipped with a warning without failing the rest of the set.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "event/pmu-internal.h"

struct pk_pmu_format {
	char *name;
	struct pk_format fmt;
};

struct pk_pmu_alias {
	char *name;
	char *terms;
	char *unit;
	double scale;
};

struct pk_pmu {
	char *name;
	uint32_t type;
	int rdpmc;
	char *cpumask;
	struct pk_pmu_format *formats;   /* sorted by name */
	size_t nr_formats, cap_formats;
	struct pk_pmu_alias *aliases;    /* sorted by name */
	size_t nr_aliases, cap_aliases;
};

struct pk_pmu_set {
	struct pk_pmu **pmus;            /* sorted by name */
	size_t nr;
};

/* ------------------------------------------------------------------------------------ */
/* PMU objects                                                                          */

struct pk_pmu *pk_pmu__new(const char *name, uint32_t type)
{
	struct pk_pmu *pmu;

	if (!name)
		return pk_err_ptr(-EINVAL);
	pmu = calloc(1, sizeof(*pmu));
	if (!pmu)
		return pk_err_ptr(-ENOMEM);
	pmu->name = strdup(name);
	if (!pmu->name) {
		free(pmu);
		return pk_err_ptr(-ENOMEM);
	}
	pmu->type = type;
	pmu->rdpmc = -1;
	return pmu;
}

void pk_pmu__delete(struct pk_pmu *pmu)
{
	if (!pmu)
		return;
	for (size_t i = 0; i < pmu->nr_formats; i++)
		free(pmu->formats[i].name);
	for (size_t i = 0; i < pmu->nr_aliases; i++) {
		free(pmu->aliases[i].name);
		free(pmu->aliases[i].terms);
		free(pmu->aliases[i].unit);
	}
	free(pmu->formats);
	free(pmu->aliases);
	free(pmu->cpumask);
	free(pmu->name);
	free(pmu);
}

/* Binary search in an array of structs whose first member is `char *name`, sorted by
 * strcmp. Returns the index if found (and *pos = index), else -1 with *pos = insert slot. */
static long find_sorted(const void *base, size_t n, size_t stride, const char *name,
			size_t *pos)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *m = *(char *const *)((const char *)base + mid * stride);
		int c = strcmp(name, m);
		if (c == 0) {
			if (pos)
				*pos = mid;
			return (long)mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (pos)
		*pos = lo;
	return -1;
}

/* Make room for one more element at `pos` in a sorted array. */
static int array_insert(void **arr, size_t *nr, size_t *cap, size_t stride, size_t pos)
{
	if (*nr == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		void *na = realloc(*arr, nc * stride);
		if (!na)
			return -ENOMEM;
		*arr = na;
		*cap = nc;
	}
	char *b = *arr;
	memmove(b + (pos + 1) * stride, b + pos * stride, (*nr - pos) * stride);
	(*nr)++;
	return 0;
}

int pk_pmu__add_format(struct pk_pmu *pmu, const char *name, const char *spec, size_t len)
{
	struct pk_format f;
	size_t pos;
	int r;

	if (!pmu || !name || !*name || !spec)
		return pk_err(-EINVAL);
	if ((r = pk_format__parse(&f, spec, len)) < 0)
		return pk_err(r);
	if (find_sorted(pmu->formats, pmu->nr_formats, sizeof(*pmu->formats), name, &pos) >= 0)
		return pk_err(-EEXIST);
	if (pmu->nr_formats >= PK_PMU_MAX_FORMATS)
		return pk_err(-E2BIG);
	char *n = strdup(name);
	if (!n)
		return pk_err(-ENOMEM);
	if (array_insert((void **)&pmu->formats, &pmu->nr_formats, &pmu->cap_formats,
			 sizeof(*pmu->formats), pos) < 0) {
		free(n);
		return pk_err(-ENOMEM);
	}
	pmu->formats[pos].name = n;
	pmu->formats[pos].fmt = f;
	return 0;
}

int pk_pmu__add_alias(struct pk_pmu *pmu, const char *name, const char *terms, double scale,
		      const char *unit)
{
	size_t pos;

	if (!pmu || !name || !*name || !terms)
		return pk_err(-EINVAL);
	if (find_sorted(pmu->aliases, pmu->nr_aliases, sizeof(*pmu->aliases), name, &pos) >= 0)
		return pk_err(-EEXIST);
	if (pmu->nr_aliases >= PK_PMU_MAX_ALIASES)
		return pk_err(-E2BIG);
	char *n = strdup(name), *t = strdup(terms), *u = unit ? strdup(unit) : NULL;
	if (!n || !t || (unit && !u))
		goto nomem;
	if (array_insert((void **)&pmu->aliases, &pmu->nr_aliases, &pmu->cap_aliases,
			 sizeof(*pmu->aliases), pos) < 0)
		goto nomem;
	pmu->aliases[pos].name = n;
	pmu->aliases[pos].terms = t;
	pmu->aliases[pos].unit = u;
	pmu->aliases[pos].scale = scale;
	return 0;
nomem:
	free(n);
	free(t);
	free(u);
	return pk_err(-ENOMEM);
}

int pk_pmu__set_misc(struct pk_pmu *pmu, const char *cpumask, int rdpmc)
{
	char *c = NULL;

	if (!pmu)
		return pk_err(-EINVAL);
	if (cpumask && !(c = strdup(cpumask)))
		return pk_err(-ENOMEM);
	free(pmu->cpumask);
	pmu->cpumask = c;
	pmu->rdpmc = rdpmc;
	return 0;
}

/* ------------------------------------------------------------------------------------ */
/* sysfs loading                                                                        */

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

/* Printable ASCII without control characters: what a sysfs value or name may contain. */
static bool is_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

/* An alias or format name usable inside a term list. */
static bool valid_term_name(const char *s)
{
	if (!*s || strlen(s) > 128 || !is_printable(s))
		return false;
	return !strpbrk(s, ",=/ ");
}

/* Read a small file relative to dirfd; trimmed text in buf. Returns length or -errno;
 * -PK_ERR_PARSE if it contains a NUL byte. */
static ssize_t read_text(int dirfd, const char *name, char *buf, size_t max, char **text)
{
	ssize_t n = pk_read_small_fileat(dirfd, name, buf, max);
	if (n < 0)
		return n;
	if (strlen(buf) != (size_t)n)
		return -PK_ERR_PARSE;
	*text = pk_strtrim(buf);
	return (ssize_t)strlen(*text);
}

/* Strict decimal: digits only, value <= max. */
static bool parse_dec(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void make_c_locale(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* sysfs scales are written with '.' whatever the caller's locale. */
static bool parse_double(const char *s, double *out)
{
	char *end;
	double v;

	pthread_once(&c_locale_once, make_c_locale);
	if (!*s)
		return false;
	errno = 0;
	v = c_locale ? strtod_l(s, &end, c_locale) : strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return false;
	*out = v;
	return true;
}

static void load_formats(struct pk_pmu *pmu, int pfd)
{
	int fd = openat(pfd, "format", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	char buf[PK_PMU_FILE_MAX], *text;
	size_t n;
	bool trunc;

	if (fd < 0) {
		if (errno != ENOENT)
			pk_warn("pmu '%s': cannot open format directory: %s", pmu->name,
				strerror(errno));
		return;
	}
	char **names = pk_dir_list_sorted(fd, ".", PK_PMU_MAX_FORMATS, false, &n, &trunc);
	if (trunc)
		pk_warn("pmu '%s': more than %d format terms, ignoring the rest", pmu->name,
			PK_PMU_MAX_FORMATS);
	for (size_t i = 0; i < n; i++) {
		if (!valid_term_name(names[i])) {
			pk_warn("pmu '%s': skipping format with unusable name", pmu->name);
			continue;
		}
		ssize_t len = read_text(fd, names[i], buf, sizeof(buf), &text);
		if (len < 0) {
			pk_warn("pmu '%s': skipping format '%s': %s", pmu->name, names[i],
				pk_strerror((int)len));
			continue;
		}
		int r = pk_pmu__add_format(pmu, names[i], text, (size_t)len);
		if (r < 0)
			pk_warn("pmu '%s': skipping format '%s': %s", pmu->name, names[i],
				r == -PK_ERR_PARSE ? "malformed bit ranges" : pk_strerror(r));
	}
	pk_strv_free(names, n);
	close(fd);
}

static const char *const alias_side_suffixes[] = { ".scale", ".unit", ".per-pkg",
						   ".snapshot" };

static void load_aliases(struct pk_pmu *pmu, int pfd)
{
	int fd = openat(pfd, "events", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	char buf[PK_PMU_FILE_MAX], side[PATH_MAX], *text;
	size_t n;
	bool trunc;

	if (fd < 0) {
		if (errno != ENOENT)
			pk_warn("pmu '%s': cannot open events directory: %s", pmu->name,
				strerror(errno));
		return;
	}
	/* every alias may have up to four side files */
	char **names = pk_dir_list_sorted(fd, ".", 5 * PK_PMU_MAX_ALIASES, false, &n, &trunc);
	if (trunc)
		pk_warn("pmu '%s': too many event files, ignoring the rest", pmu->name);
	for (size_t i = 0; i < n; i++) {
		bool is_side = false;
		for (size_t k = 0; k < PK_ARRAY_SIZE(alias_side_suffixes); k++)
			is_side |= has_suffix(names[i], alias_side_suffixes[k]);
		if (is_side)
			continue;
		if (!valid_term_name(names[i])) {
			pk_warn("pmu '%s': skipping event alias with unusable name", pmu->name);
			continue;
		}
		ssize_t len = read_text(fd, names[i], buf, sizeof(buf), &text);
		if (len <= 0 || !is_printable(text)) {
			pk_warn("pmu '%s': skipping event alias '%s': %s", pmu->name, names[i],
				len < 0 ? pk_strerror((int)len) : len == 0 ? "empty"
				: "non-printable content");
			continue;
		}
		char *terms = strdup(text);
		if (!terms)
			break;

		double scale = 1.0;
		pk_snprintf(side, sizeof(side), "%s.scale", names[i]);
		len = read_text(fd, side, buf, 64, &text);
		if (len >= 0 && !parse_double(text, &scale)) {
			pk_warn("pmu '%s': ignoring malformed scale of '%s'", pmu->name, names[i]);
			scale = 1.0;
		} else if (len < 0 && len != -ENOENT) {
			pk_warn("pmu '%s': ignoring scale of '%s': %s", pmu->name, names[i],
				pk_strerror((int)len));
		}

		const char *unit = NULL;
		pk_snprintf(side, sizeof(side), "%s.unit", names[i]);
		len = read_text(fd, side, buf, 256, &text);
		if (len > 0 && is_printable(text))
			unit = text;
		else if (len != -ENOENT && len != 0)
			pk_warn("pmu '%s': ignoring unit of '%s'", pmu->name, names[i]);

		int r = pk_pmu__add_alias(pmu, names[i], terms, scale, unit);
		free(terms);
		if (r == -E2BIG) {
			pk_warn("pmu '%s': more than %d event aliases, ignoring the rest",
				pmu->name, PK_PMU_MAX_ALIASES);
			break;
		}
		if (r < 0)
			pk_warn("pmu '%s': skipping event alias '%s': %s", pmu->name, names[i],
				pk_strerror(r));
	}
	pk_strv_free(names, n);
	close(fd);
}

/* One PMU directory; NULL (with a warning) when it is unusable. */
static struct pk_pmu *load_pmu(int devfd, const char *name)
{
	char buf[PK_PMU_FILE_MAX], *text;
	uint64_t type;
	ssize_t len;
	int pfd;

	if (!valid_term_name(name)) {
		pk_warn("skipping PMU with unusable name");
		return NULL;
	}
	pfd = openat(devfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (pfd < 0) {
		pk_warn("skipping PMU '%s': %s", name, strerror(errno));
		return NULL;
	}
	len = read_text(pfd, "type", buf, 64, &text);
	if (len < 0 || !parse_dec(text, UINT32_MAX, &type)) {
		pk_warn("skipping PMU '%s': %s type file", name,
			len < 0 ? "unreadable" : "malformed");
		close(pfd);
		return NULL;
	}
	struct pk_pmu *pmu = pk_pmu__new(name, (uint32_t)type);
	if (!pmu) {
		close(pfd);
		return NULL;
	}

	len = read_text(pfd, "cpumask", buf, sizeof(buf), &text);
	if (len > 0 && is_printable(text))
		pmu->cpumask = strdup(text);
	else if (len != -ENOENT && len != 0)
		pk_warn("pmu '%s': ignoring malformed cpumask", name);

	len = read_text(pfd, "rdpmc", buf, 64, &text);
	if (len >= 0) {
		uint64_t v;
		if (parse_dec(text, INT_MAX, &v))
			pmu->rdpmc = (int)v;
		else
			pk_warn("pmu '%s': ignoring malformed rdpmc", name);
	}

	load_formats(pmu, pfd);
	load_aliases(pmu, pfd);
	close(pfd);
	return pmu;
}

PK_API int pk_pmu_set__load(struct pk_pmu_set **out, const struct pk_pmu_opts *opts)
{
	char path[PATH_MAX];
	struct pk_pmu_set *set;
	size_t n = 0;
	bool trunc;

	if (!out)
		return pk_err(-EINVAL);
	*out = NULL;
	if (!PK_OPTS_VALID(opts, pk_pmu_opts))
		return pk_err(-EINVAL);
	const char *root = PK_OPTS_GET(opts, sysfs_root, NULL);
	if (!root)
		root = "/sys";
	if (pk_snprintf(path, sizeof(path), "%s/bus/event_source/devices", root) >=
	    sizeof(path) - 1)
		return pk_err(-ENAMETOOLONG);

	set = calloc(1, sizeof(*set));
	if (!set)
		return pk_err(-ENOMEM);
	int devfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (devfd < 0) {
		int e = errno;
		if (e == ENOENT || e == ENOTDIR) {
			*out = set;
			return 0;
		}
		free(set);
		return pk_err(-e);
	}
	char **names = pk_dir_list_sorted(devfd, ".", PK_PMU_MAX_PMUS, false, &n, &trunc);
	if (trunc)
		pk_warn("more than %d PMUs in %s, ignoring the rest", PK_PMU_MAX_PMUS, path);
	if (n && !(set->pmus = calloc(n, sizeof(*set->pmus)))) {
		pk_strv_free(names, n);
		close(devfd);
		free(set);
		return pk_err(-ENOMEM);
	}
	for (size_t i = 0; i < n; i++) {   /* names are sorted, so the set is too */
		struct pk_pmu *pmu = load_pmu(devfd, names[i]);
		if (pmu)
			set->pmus[set->nr++] = pmu;
	}
	pk_strv_free(names, n);
	close(devfd);
	*out = set;
	return 0;
}

PK_API void pk_pmu_set__free(struct pk_pmu_set *set)
{
	if (!set)
		return;
	PK_PTRS_FREE(set->pmus, set->nr, pk_pmu__delete);
	free(set);
}

PK_API size_t pk_pmu_set__count(const struct pk_pmu_set *set)
{
	return set ? set->nr : 0;
}

PK_API const struct pk_pmu *pk_pmu_set__get(const struct pk_pmu_set *set, size_t i)
{
	return PK_PTRS_AT(set, pmus, nr, i, -ERANGE);
}

PK_API const struct pk_pmu *pk_pmu_set__find(const struct pk_pmu_set *set, const char *name)
{
	size_t lo = 0, hi;

	if (!set || !name)
		return pk_err_ptr(-EINVAL);
	hi = set->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, set->pmus[mid]->name);
		if (c == 0)
			return set->pmus[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return pk_err_ptr(-ENOENT);
}

PK_API const struct pk_pmu *pk_pmu_set__find_type(const struct pk_pmu_set *set, uint32_t type)
{
	if (!set)
		return pk_err_ptr(-EINVAL);
	for (size_t i = 0; i < set->nr; i++)
		if (set->pmus[i]->type == type)
			return set->pmus[i];
	return pk_err_ptr(-ENOENT);
}

/* ------------------------------------------------------------------------------------ */
/* getters                                                                              */

PK_API const char *pk_pmu__name(const struct pk_pmu *pmu)
{
	return pmu ? pmu->name : NULL;
}

PK_API uint32_t pk_pmu__type(const struct pk_pmu *pmu)
{
	return pmu ? pmu->type : 0;
}

PK_API const char *pk_pmu__cpumask(const struct pk_pmu *pmu)
{
	return pmu ? pmu->cpumask : NULL;
}

PK_API int pk_pmu__rdpmc(const struct pk_pmu *pmu)
{
	return pmu ? pmu->rdpmc : -1;
}

PK_API size_t pk_pmu__format_count(const struct pk_pmu *pmu)
{
	return pmu ? pmu->nr_formats : 0;
}

PK_API const char *pk_pmu__format_name(const struct pk_pmu *pmu, size_t i)
{
	if (!pmu || i >= pmu->nr_formats)
		return pk_err_ptr(-ERANGE);
	return pmu->formats[i].name;
}

PK_API const struct pk_format *pk_pmu__format(const struct pk_pmu *pmu, size_t i)
{
	if (!pmu || i >= pmu->nr_formats)
		return pk_err_ptr(-ERANGE);
	return &pmu->formats[i].fmt;
}

PK_API const struct pk_format *pk_pmu__find_format(const struct pk_pmu *pmu, const char *name)
{
	if (!pmu || !name)
		return pk_err_ptr(-EINVAL);
	long i = find_sorted(pmu->formats, pmu->nr_formats, sizeof(*pmu->formats), name, NULL);
	if (i < 0)
		return pk_err_ptr(-ENOENT);
	return &pmu->formats[i].fmt;
}

PK_API size_t pk_pmu__alias_count(const struct pk_pmu *pmu)
{
	return pmu ? pmu->nr_aliases : 0;
}

PK_API const char *pk_pmu__alias_name(const struct pk_pmu *pmu, size_t i)
{
	if (!pmu || i >= pmu->nr_aliases)
		return pk_err_ptr(-ERANGE);
	return pmu->aliases[i].name;
}

PK_API const char *pk_pmu__alias_terms(const struct pk_pmu *pmu, size_t i)
{
	if (!pmu || i >= pmu->nr_aliases)
		return pk_err_ptr(-ERANGE);
	return pmu->aliases[i].terms;
}

PK_API double pk_pmu__alias_scale(const struct pk_pmu *pmu, size_t i)
{
	if (!pmu || i >= pmu->nr_aliases)
		return 1.0;
	return pmu->aliases[i].scale;
}

PK_API const char *pk_pmu__alias_unit(const struct pk_pmu *pmu, size_t i)
{
	if (!pmu || i >= pmu->nr_aliases)
		return NULL;
	return pmu->aliases[i].unit;
}

/* Exact match first; sysfs alias names are matched case-insensitively as a fallback
 * ("cpu/CYCLES/" finds "cycles"), as perf users expect. */
PK_API long pk_pmu__find_alias(const struct pk_pmu *pmu, const char *name)
{
	if (!pmu || !name)
		return -1;
	long i = find_sorted(pmu->aliases, pmu->nr_aliases, sizeof(*pmu->aliases), name, NULL);
	if (i >= 0)
		return i;
	for (size_t k = 0; k < pmu->nr_aliases; k++)
		if (!strcasecmp(pmu->aliases[k].name, name))
			return (long)k;
	return -1;
}

/* ------------------------------------------------------------------------------------ */
/* term encoding                                                                        */

#define ENC_MAX_TERMS 64   /* user terms plus everything aliases expand to */
#define ENC_MAX_DEPTH 4    /* alias -> alias -> ... nesting */
#define ENC_NAME_MAX 128

static const char *const cfg_words[4] = { "config", "config1", "config2", "config3" };

struct enc_term {
	const char *name;          /* points into the user string or an alias's terms */
	size_t nlen;
	uint64_t val;
	bool placeholder;          /* alias said "name=?": the user must supply it */
	long alias;                /* -1 = written by the user, else the alias it came from */
	const struct pk_format *fmt; /* NULL = raw config word `word` */
	int word;
};

struct enc {
	const struct pk_pmu *pmu;
	struct enc_term t[ENC_MAX_TERMS];
	size_t n;
	long stack[ENC_MAX_DEPTH];
	int depth;
	char *err;
	size_t errlen;
};

static int enc_fail(struct enc *e, int ret, const char *fmt, ...) PK_PRINTF(3, 4);
static int enc_fail(struct enc *e, int ret, const char *fmt, ...)
{
	if (e->err && e->errlen) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(e->err, e->errlen, fmt, ap);
		va_end(ap);
		if (n < 0)
			e->err[0] = '\0';
	}
	return pk_err(ret);
}

/* Append to the error message (clamped). */
static void err_append(struct enc *e, const char *s)
{
	if (!e->err || !e->errlen)
		return;
	size_t have = strnlen(e->err, e->errlen - 1);
	pk_snprintf(e->err + have, e->errlen - have, "%s", s);
}

/* " in alias 'x'" when the term came from an alias, "" otherwise. */
static const char *where(const struct enc *e, long alias, char *buf, size_t len)
{
	if (alias < 0)
		return "";
	pk_snprintf(buf, len, " in alias '%s'", e->pmu->aliases[alias].name);
	return buf;
}

static int unknown_term(struct enc *e, const char *name, size_t nlen, long alias)
{
	char wb[200];
	enc_fail(e, -PK_ERR_PARSE, "unknown term '%.*s'%s for PMU '%s' (valid terms: ",
		 (int)PK_MIN(nlen, (size_t)ENC_NAME_MAX), name, where(e, alias, wb, sizeof(wb)),
		 e->pmu->name);
	for (size_t i = 0; i < e->pmu->nr_formats; i++) {
		err_append(e, e->pmu->formats[i].name);
		err_append(e, ", ");
	}
	err_append(e, "config, config1, config2, config3");
	if (e->pmu->nr_aliases)
		err_append(e, ", or one of the PMU's event aliases");
	err_append(e, ")");
	return pk_err(-PK_ERR_PARSE);
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void trim(const char **a, const char **b)
{
	while (*a < *b && is_ws(**a))
		(*a)++;
	while (*b > *a && is_ws((*b)[-1]))
		(*b)--;
}

static int parse_terms(struct enc *e, const char *s, long alias);

static long find_alias_n(const struct pk_pmu *pmu, const char *name, size_t nlen)
{
	char buf[ENC_NAME_MAX + 1];
	if (nlen > ENC_NAME_MAX)
		return -1;
	memcpy(buf, name, nlen);
	buf[nlen] = '\0';
	return pk_pmu__find_alias(pmu, buf);
}

static const struct pk_format *find_format_n(const struct pk_pmu *pmu, const char *name,
					     size_t nlen)
{
	char buf[ENC_NAME_MAX + 1];
	if (nlen > ENC_NAME_MAX)
		return NULL;
	memcpy(buf, name, nlen);
	buf[nlen] = '\0';
	long i = find_sorted(pmu->formats, pmu->nr_formats, sizeof(*pmu->formats), buf, NULL);
	return i < 0 ? NULL : &pmu->formats[i].fmt;
}

static int cfg_word_n(const char *name, size_t nlen)
{
	for (int w = 0; w < 4; w++)
		if (strlen(cfg_words[w]) == nlen && !memcmp(cfg_words[w], name, nlen))
			return w;
	return -1;
}

static int expand_alias(struct enc *e, long idx, const char *name, size_t nlen)
{
	for (int d = 0; d < e->depth; d++)
		if (e->stack[d] == idx)
			return enc_fail(e, -PK_ERR_PARSE,
					"alias '%.*s' of PMU '%s' refers to itself", (int)nlen,
					name, e->pmu->name);
	if (e->depth >= ENC_MAX_DEPTH)
		return enc_fail(e, -PK_ERR_PARSE,
				"aliases of PMU '%s' nest more than %d levels at '%.*s'",
				e->pmu->name, ENC_MAX_DEPTH, (int)nlen, name);
	e->stack[e->depth++] = idx;
	int r = parse_terms(e, e->pmu->aliases[idx].terms, idx);
	e->depth--;
	return r;
}

/* One "name[=value]" term in [a, b), already trimmed and non-empty. */
static int add_term(struct enc *e, const char *a, const char *b, long alias)
{
	const char *eq = memchr(a, '=', (size_t)(b - a));
	const char *na = a, *nb = eq ? eq : b;
	char wb[200];

	trim(&na, &nb);
	size_t nlen = (size_t)(nb - na);
	if (nlen == 0)
		return enc_fail(e, -PK_ERR_PARSE, "term '%.*s'%s has no name",
				(int)PK_MIN((size_t)(b - a), (size_t)ENC_NAME_MAX), a,
				where(e, alias, wb, sizeof(wb)));
	if (nlen > ENC_NAME_MAX)
		return enc_fail(e, -PK_ERR_PARSE, "term name '%.*s...' is too long",
				32, na);

	/* a bare alias name expands to the alias's own terms */
	if (!eq) {
		long idx = find_alias_n(e->pmu, na, nlen);
		if (idx >= 0 && !find_format_n(e->pmu, na, nlen))
			return expand_alias(e, idx, na, nlen);
	}

	struct enc_term t = { .name = na, .nlen = nlen, .val = 1, .alias = alias, .word = -1 };
	t.fmt = find_format_n(e->pmu, na, nlen);
	if (!t.fmt) {
		t.word = cfg_word_n(na, nlen);
		if (t.word < 0) {
			if (find_alias_n(e->pmu, na, nlen) >= 0)
				return enc_fail(e, -PK_ERR_PARSE,
						"event alias '%.*s'%s takes no value", (int)nlen,
						na, where(e, alias, wb, sizeof(wb)));
			return unknown_term(e, na, nlen, alias);
		}
	}

	if (eq) {
		const char *va = eq + 1, *vb = b;
		trim(&va, &vb);
		size_t vlen = (size_t)(vb - va);
		if (vlen == 1 && *va == '?') {
			if (alias < 0)
				return enc_fail(e, -PK_ERR_PARSE,
						"term '%.*s' needs a value, not '?'", (int)nlen, na);
			t.placeholder = true;
			t.val = 0;
		} else {
			int r = pk_parse_u64(va, vlen, &t.val);
			if (r == -ERANGE)
				return enc_fail(e, -ERANGE,
						"value '%.*s' of term '%.*s'%s does not fit 64 bits",
						(int)PK_MIN(vlen, (size_t)64), va, (int)nlen, na,
						where(e, alias, wb, sizeof(wb)));
			if (r < 0)
				return enc_fail(e, -PK_ERR_PARSE,
						"invalid value '%.*s' for term '%.*s'%s",
						(int)PK_MIN(vlen, (size_t)64), va, (int)nlen, na,
						where(e, alias, wb, sizeof(wb)));
		}
	}

	/* A term may be set once by the user and once by aliases (the user's value wins, as
	 * in "mem-loads,ldlat=30"); twice from the same side is a mistake. */
	for (size_t i = 0; i < e->n; i++) {
		const struct enc_term *o = &e->t[i];
		if (o->nlen != nlen || memcmp(o->name, na, nlen))
			continue;
		if ((o->alias < 0) == (alias < 0))
			return enc_fail(e, -PK_ERR_PARSE, "duplicate term '%.*s'%s", (int)nlen,
					na, where(e, alias, wb, sizeof(wb)));
	}
	if (e->n >= ENC_MAX_TERMS)
		return enc_fail(e, -PK_ERR_PARSE, "too many terms for PMU '%s' (at most %d)",
				e->pmu->name, ENC_MAX_TERMS);
	e->t[e->n++] = t;
	return 0;
}

static int parse_terms(struct enc *e, const char *s, long alias)
{
	const char *p = s;
	char wb[200];

	for (;;) {
		const char *end = strchr(p, ',');
		const char *a = p, *b = end ? end : p + strlen(p);
		trim(&a, &b);
		if (a == b) {
			/* "" as a whole list is fine (no terms); an empty item inside is not */
			if (!end && p == s)
				return 0;
			return enc_fail(e, -PK_ERR_PARSE, "empty term%s in '%.*s'",
					where(e, alias, wb, sizeof(wb)), 200, s);
		}
		int r = add_term(e, a, b, alias);
		if (r < 0)
			return r;
		if (!end)
			return 0;
		p = end + 1;
	}
}

PK_API int pk_pmu__encode(const struct pk_pmu *pmu, const char *terms, struct pk_attr *attr,
			  char *err, size_t errlen)
{
	struct enc *e;
	uint64_t cfg[4];
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (!pmu || !terms || !attr)
		return pk_err(-EINVAL);
	e = calloc(1, sizeof(*e));
	if (!e)
		return pk_err(-ENOMEM);
	e->pmu = pmu;
	e->err = err;
	e->errlen = errlen;

	r = parse_terms(e, terms, -1);
	if (r < 0)
		goto out;

	cfg[0] = attr->attr.config;
	cfg[1] = attr->attr.config1;
	cfg[2] = attr->attr.config2;
	cfg[3] = pk_attr__config3(attr);
	for (size_t i = 0; i < e->n && r == 0; i++) {
		const struct enc_term *t = &e->t[i];
		bool overridden = false;

		if (t->alias >= 0) {
			for (size_t j = 0; j < e->n; j++)
				if (e->t[j].alias < 0 && e->t[j].nlen == t->nlen &&
				    !memcmp(e->t[j].name, t->name, t->nlen))
					overridden = true;
		}
		if (overridden)
			continue;
		if (t->placeholder) {
			r = enc_fail(e, -PK_ERR_PARSE,
				     "event alias '%s' needs a value for '%.*s' (add %.*s=...)",
				     pmu->aliases[t->alias].name, (int)t->nlen, t->name,
				     (int)t->nlen, t->name);
			break;
		}
		if (t->fmt) {
			r = pk_format__encode(t->fmt, t->val, cfg);
			if (r == -ERANGE)
				r = enc_fail(e, -ERANGE, "value 0x%llx does not fit '%.*s' (%u bits)",
					     (unsigned long long)t->val, (int)t->nlen, t->name,
					     t->fmt->width);
			else if (r < 0)
				r = enc_fail(e, r, "cannot encode term '%.*s'", (int)t->nlen,
					     t->name);
		} else {
			cfg[t->word] |= t->val;
		}
	}
	if (r == 0)
		pk_attr__set_configs(attr, cfg);
out:
	free(e);
	return r;
}
