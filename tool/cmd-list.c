/* SPDX-License-Identifier: MIT */
/*
 * perfkit list: every event a user can name with -e on this machine. Software, hardware
 * and hardware-cache events are marked available or not by opening each one on this
 * process (user space only, so it works unprivileged); tracepoints, sysfs PMU aliases and
 * libpfm4 events come from their directories/tables and are not opened (there are
 * thousands of tracepoints: listing must stay fast).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

enum { OPT_JSON = 256, OPT_RAW_DUMP };

static const struct tool_opt opts[] = {
	{ OPT_JSON, "json", no_argument, NULL,
	  "print one JSON array of {name, kind, available,\ndescription, ...}" },
	{ OPT_RAW_DUMP, "raw-dump", no_argument, NULL,
	  "print only the names, separated by spaces (as perf's\n--raw-dump; for shell completion)" },
	{ 0 },
};

const struct tool_help cmd_list_help = {
	.synopsis = "usage: perfkit list [--json | --raw-dump] [CLASS|GLOB...]\n"
		    "       perfkit list sdt [BINARY...]\n",
	.intro = "List the events that can be named with -e on this machine.\n"
		 "\n"
		 "  sdt [BINARY...]  the SDT markers of the binaries (default libc), as\n"
		 "           perf list sdt prints them: -e sdt:PROVIDER:NAME or\n"
		 "           -e u:BINARY:%PROVIDER:NAME\n"
		 "  CLASS    hw (hardware), sw (software), cache (hardware cache), tracepoint,\n"
		 "           pmu (sysfs PMUs with their aliases and format terms), pfm (libpfm4)\n"
		 "  GLOB     shell pattern matched against event names, e.g. 'sched:*', '*-misses',\n"
		 ""
		 "           'msr/*'; several arguments are combined (CLASSes select sections, GLOBs\n"
		 ""
		 "           then filter them)\n",
	.opts = opts,
	.outro = "Software, hardware and cache events show 'yes'/'no': whether opening the event on this\n"
		 "process succeeded. Section titles are printed only when listing everything.\n"
		 "Dynamic probes are named rather than listed: -e u:BINARY:FUNC[+OFF] (uprobe),\n"
		 "r:BINARY:FUNC (return), u:BINARY:%PROVIDER:NAME or sdt:PROVIDER:NAME (SDT\n"
		 "marker), k:FUNC[+OFF] and kr:FUNC (kprobe PMU); BINARY is a path or a library\n"
		 "name (libc). See perfkit probe --help for the functions a binary offers.\n"
		 "Exit status: 0, or 1 if a GLOB matched nothing, 129 on a usage error.\n",
};

enum kind { K_SW, K_HW, K_CACHE, K_TP, K_PMU, K_PFM, K_NR };

static const struct {
	const char *word;   /* CLASS argument */
	const char *alt;    /* other spelling */
	const char *json;   /* "kind" in JSON */
	const char *title;  /* section title */
} kinds[K_NR] = {
	[K_SW] = { "sw", "software", "software",
		   "Software events (kept by the kernel; no hardware needed)" },
	[K_HW] = { "hw", "hardware", "hardware",
		   "Hardware events (the CPU's generic counters)" },
	[K_CACHE] = { "cache", "hwcache", "hwcache",
		      "Hardware cache events (CACHE-OPERATION[-RESULT])" },
	[K_TP] = { "tracepoint", "tracepoints", "tracepoint",
		   "Tracepoints (SYSTEM:NAME, from tracefs; not opened)" },
	[K_PMU] = { "pmu", "pmus", "pmu",
		    "PMUs and their events (PMU/TERMS/ or PMU/ALIAS/, from sysfs; not opened)" },
	[K_PFM] = { "pfm", "libpfm", "pfm",
		    "libpfm4 events (PMU::EVENT[:UMASK]; not opened)" },
};

struct entry {
	enum kind kind;
	char *name;
	char *alias;       /* other spelling or NULL */
	int avail;         /* 1 yes, 0 no, -1 not checked */
	char *desc;
	char *pmu;         /* PMU name for K_PMU/K_PFM */
	char *unit;        /* alias unit or NULL */
	double scale;      /* alias scale (0 = none) */
	bool is_format;    /* K_PMU: the PMU itself with its format terms */
};

struct listing {
	struct entry *v;
	size_t n, cap;
	char **globs;
	int nglobs;
	bool want[K_NR];
	bool oom;
};

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static bool glob_match(const struct listing *l, const char *name, const char *alias)
{
	if (!l->nglobs)
		return true;
	for (int i = 0; i < l->nglobs; i++)
		if (fnmatch(l->globs[i], name, 0) == 0 ||
		    (alias && fnmatch(l->globs[i], alias, 0) == 0))
			return true;
	return false;
}

/* Append an entry (taking ownership of the malloc'd strings). */
static void add(struct listing *l, struct entry e)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 256;
		struct entry *nv = realloc(l->v, nc * sizeof(*nv));
		if (!nv) {
			l->oom = true;
			goto drop;
		}
		l->v = nv;
		l->cap = nc;
	}
	if (!e.name) {
		l->oom = true;
		goto drop;
	}
	l->v[l->n++] = e;
	return;
drop:
	free(e.name);
	free(e.alias);
	free(e.desc);
	free(e.pmu);
	free(e.unit);
}

/* Can this process open the event on itself (user space only)? */
static int try_open(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void add_named(struct listing *l, enum kind k, const struct pk_event_name *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!glob_match(l, t[i].name, t[i].alias))
			continue;
		add(l, (struct entry){ .kind = k, .name = xstrdup(t[i].name),
				       .alias = xstrdup(t[i].alias),
				       .avail = try_open(t[i].type, t[i].config),
				       .desc = xstrdup(t[i].desc) });
	}
}

struct cache_ctx {
	struct listing *l;
};

static int cache_cb(const char *name, uint64_t config, void *vctx)
{
	struct cache_ctx *c = vctx;
	uint64_t result = (config >> 16) & 0xff;
	static const char *const results[] = { "accesses", "misses" };

	if (!glob_match(c->l, name, NULL))
		return 0;
	add(c->l, (struct entry){ .kind = K_CACHE, .name = xstrdup(name),
				  .avail = try_open(PERF_TYPE_HW_CACHE, config),
				  .desc = xasprintf("%s (type %u, config 0x%llx)",
						    result < 2 ? results[result] : "events",
						    PERF_TYPE_HW_CACHE, (unsigned long long)config) });
	return 0;
}

static int tp_cb(const char *sys, const char *name, long long id, void *vctx)
{
	struct listing *l = vctx;
	char *full = xasprintf("%s:%s", sys, name);
	if (!full) {
		l->oom = true;
		return 0;
	}
	if (!glob_match(l, full, NULL)) {
		free(full);
		return 0;
	}
	add(l, (struct entry){ .kind = K_TP, .name = full, .avail = -1,
			       .desc = xasprintf("tracepoint id %lld", id) });
	return 0;
}

/* "config:0-7,32-35" from a parsed format. */
static void format_text(const struct pk_format *f, char *buf, size_t len)
{
	static const char *const words[] = { "config", "config1", "config2", "config3" };
	size_t pos = (size_t)snprintf(buf, len, "%s:", words[f->word & 3]);
	for (unsigned i = 0; i < f->nr_ranges && pos < len; i++) {
		if (f->ranges[i].lo == f->ranges[i].hi)
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%u", i ? "," : "",
						f->ranges[i].lo);
		else
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%u-%u", i ? "," : "",
						f->ranges[i].lo, f->ranges[i].hi);
	}
}

static void add_pmus(struct listing *l)
{
	struct pk_pmu_set *set = NULL;
	if (pk_pmu_set__load(&set, NULL) < 0) {
		tool_warn("cannot read /sys/bus/event_source/devices: %s", strerror(errno));
		return;
	}
	for (size_t i = 0; i < pk_pmu_set__count(set); i++) {
		const struct pk_pmu *p = pk_pmu_set__get(set, i);
		const char *pname = pk_pmu__name(p);
		char *name = xasprintf("%s//", pname);

		if (name && glob_match(l, name, pname)) {
			/* the PMU itself: type and format terms */
			size_t cap = 64 + pk_pmu__format_count(p) * 96, pos;
			char *desc = malloc(cap);
			if (desc) {
				pos = (size_t)snprintf(desc, cap, "type %u", pk_pmu__type(p));
				for (size_t j = 0; j < pk_pmu__format_count(p) && pos < cap; j++) {
					char ft[80];
					format_text(pk_pmu__format(p, j), ft, sizeof(ft));
					pos += (size_t)snprintf(desc + pos, cap - pos, "%s%s=%s",
								j ? ", " : "; terms: ",
								pk_pmu__format_name(p, j), ft);
				}
			}
			add(l, (struct entry){ .kind = K_PMU, .name = name, .avail = -1,
					       .desc = desc, .pmu = xstrdup(pname),
					       .is_format = true });
		} else {
			free(name);
		}
		for (size_t j = 0; j < pk_pmu__alias_count(p); j++) {
			char *an = xasprintf("%s/%s/", pname, pk_pmu__alias_name(p, j));
			if (!an || !glob_match(l, an, pk_pmu__alias_name(p, j))) {
				free(an);
				continue;
			}
			const char *unit = pk_pmu__alias_unit(p, j);
			double scale = pk_pmu__alias_scale(p, j);
			add(l, (struct entry){ .kind = K_PMU, .name = an, .avail = -1,
					       .desc = xstrdup(pk_pmu__alias_terms(p, j)),
					       .pmu = xstrdup(pname), .unit = xstrdup(unit),
					       .scale = scale });
		}
	}
	pk_pmu_set__free(set);
}

static int pfm_cb(const char *pmu, const char *name, const char *desc, void *vctx)
{
	struct listing *l = vctx;
	char *full = xasprintf("%s::%s", pmu, name);
	if (!full || !glob_match(l, full, name)) {
		free(full);
		return 0;
	}
	add(l, (struct entry){ .kind = K_PFM, .name = full, .avail = -1, .desc = xstrdup(desc),
			       .pmu = xstrdup(pmu) });
	return 0;
}

static void print_text(const struct listing *l, bool titles)
{
	int last = -1, width[K_NR] = { 0 };

	/* one name column per kind, as wide as its longest name (within reason) */
	for (size_t i = 0; i < l->n; i++) {
		const struct entry *e = &l->v[i];
		int w = (int)strlen(e->name) + (e->alias ? (int)strlen(e->alias) + 4 : 0);
		if (w > width[e->kind])
			width[e->kind] = w < 48 ? w : 48;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct entry *e = &l->v[i];
		if (titles && (int)e->kind != last) {
			printf("%s%s:\n", last >= 0 ? "\n" : "", kinds[e->kind].title);
			last = (int)e->kind;
		}
		char label[256];
		if (e->alias)
			snprintf(label, sizeof(label), "%s OR %s", e->name, e->alias);
		else
			snprintf(label, sizeof(label), "%s", e->name);
		switch (e->kind) {
		case K_SW:
		case K_HW:
		case K_CACHE:
			printf("  %-*s  %-3s  %s\n", width[e->kind], label, e->avail ? "yes" : "no",
			       e->desc ? e->desc : "");
			break;
		case K_TP:
			printf("  %s\n", label);
			break;
		case K_PMU:
			if (e->is_format) {
				printf("  %-*s  %s\n", width[e->kind], label, e->desc ? e->desc : "");
			} else {
				printf("  %-*s  %s", width[e->kind], label, e->desc ? e->desc : "");
				if (e->unit)
					printf(" (unit %s, scale %g)", e->unit, e->scale);
				else if (e->scale != 1.0 && e->scale != 0)
					printf(" (scale %g)", e->scale);
				putchar('\n');
			}
			break;
		case K_PFM:
			printf("  %-*s  %s\n", width[e->kind], label, e->desc ? e->desc : "");
			break;
		default:
			break;
		}
	}
}

static void print_json(const struct listing *l)
{
	printf("[");
	for (size_t i = 0; i < l->n; i++) {
		const struct entry *e = &l->v[i];
		printf("%s\n  {\"name\": ", i ? "," : "");
		tool_json_str(stdout, e->name);
		printf(", \"kind\": \"%s\"", kinds[e->kind].json);
		if (e->kind == K_PMU && e->is_format)
			printf(", \"is_pmu\": true");
		printf(", \"available\": %s", e->avail < 0 ? "null" : e->avail ? "true" : "false");
		printf(", \"description\": ");
		tool_json_str(stdout, e->desc ? e->desc : "");
		if (e->alias) {
			printf(", \"alias\": ");
			tool_json_str(stdout, e->alias);
		}
		if (e->pmu) {
			printf(", \"pmu\": ");
			tool_json_str(stdout, e->pmu);
		}
		if (e->unit) {
			printf(", \"unit\": ");
			tool_json_str(stdout, e->unit);
		}
		if (e->kind == K_PMU && !e->is_format)
			printf(", \"scale\": %.17g", e->scale);
		printf("}");
	}
	printf("%s]\n", l->n ? "\n" : "");
}

/* the names a user can pass to -e, space separated (the PMUs themselves are not events) */
static void print_raw(const struct listing *l)
{
	const char *sep = "";
	for (size_t i = 0; i < l->n; i++) {
		const struct entry *e = &l->v[i];
		if (e->kind == K_PMU && e->is_format)
			continue;
		printf("%s%s", sep, e->name);
		sep = " ";
		if (e->alias)
			printf(" %s", e->alias);
	}
	printf("\n");
}

static int class_of(const char *arg)
{
	for (int k = 0; k < K_NR; k++)
		if (!strcmp(arg, kinds[k].word) || !strcmp(arg, kinds[k].alt))
			return k;
	return -1;
}

/* ---- list sdt [BINARY...]: the SDT markers of binaries, as perf list sdt ---- */

struct sdt_names {
	char **v;
	size_t n, cap;
	bool oom;
};

static int sdt_cb(const struct pk_sdt_marker *m, void *ctx)
{
	struct sdt_names *s = ctx;
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 32;
		char **nv = realloc(s->v, nc * sizeof(*nv));
		if (!nv) {
			s->oom = true;
			return 1;
		}
		s->v = nv;
		s->cap = nc;
	}
	if (!(s->v[s->n] = xasprintf("sdt_%s:%s", m->provider, m->name))) {
		s->oom = true;
		return 1;
	}
	s->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line per marker name, sorted, as perf list sdt prints the markers of one binary
 * (a marker expanded at several places is one line). Default binary: libc. */
static int list_sdt(int argc, char **argv, int first)
{
	struct sdt_names s = { 0 };
	int status = 0;
	char msg[256];
	for (int i = first; i < argc || i == first; i++) {
		const char *bin = i < argc ? argv[i] : "libc";
		if (pk_probe__for_each_sdt(bin, NULL, sdt_cb, &s, msg, sizeof(msg)) < 0 && !s.oom) {
			tool_error("%s", msg);
			status = 1;
		}
	}
	if (s.oom) {
		tool_error("out of memory");
		status = 1;
	}
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), cmp_str);
	for (size_t i = 0; i < s.n; i++) {
		if (!i || strcmp(s.v[i], s.v[i - 1]))
			printf("  %-50s [SDT event]\n", s.v[i]);
	}
	for (size_t i = 0; i < s.n; i++)
		free(s.v[i]);
	free(s.v);
	return tool_finish_stdout(status);
}

int cmd_list(int argc, char **argv)
{
	struct listing l;
	bool json = false, raw = false, any_class = false;
	int status = 0;

	memset(&l, 0, sizeof(l));
	l.globs = calloc((size_t)argc, sizeof(*l.globs));
	if (!l.globs) {
		tool_error("out of memory");
		return 1;
	}
	int opt;
	optind = 1;
	opterr = 0;
	while ((opt = tool_getopt(argc, argv, opts, 0)) != -1) {
		if (opt == OPT_JSON || opt == OPT_RAW_DUMP) {
			*(opt == OPT_JSON ? &json : &raw) = true;
			continue;
		}
		tool_error("unknown option '%s'", argv[optind - 1]);
		tool_print_usage(stderr, &cmd_list_help);
		free(l.globs);
		return 129;
	}
	if (optind < argc && !strcmp(argv[optind], "sdt")) {
		free(l.globs);
		return list_sdt(argc, argv, optind + 1);
	}
	for (int i = optind; i < argc; i++) {
		int k;
		if ((k = class_of(argv[i])) >= 0) {
			l.want[k] = true;
			any_class = true;
		} else {
			l.globs[l.nglobs++] = argv[i];
		}
	}
	if (!any_class)
		for (int k = 0; k < K_NR; k++)
			l.want[k] = true;
	tool_setup_log(0);

	if (l.want[K_SW]) {
		size_t n;
		const struct pk_event_name *t = pk_sw_event_names(&n);
		add_named(&l, K_SW, t, n);
	}
	if (l.want[K_HW]) {
		size_t n;
		const struct pk_event_name *t = pk_hw_event_names(&n);
		add_named(&l, K_HW, t, n);
	}
	if (l.want[K_CACHE]) {
		struct cache_ctx c = { .l = &l };
		pk_hwcache__foreach(cache_cb, &c);
	}
	if (l.want[K_TP]) {
		if (tool_ensure_tracefs())
			pk_tracepoint__foreach(NULL, NULL, tp_cb, &l);
		else if (any_class)
			tool_warn("no tracepoints: tracefs is not mounted or not readable");
	}
	if (l.want[K_PMU])
		add_pmus(&l);
	if (l.want[K_PFM])
		pk_pfm__foreach(pfm_cb, &l);

	if (l.oom) {
		tool_error("out of memory");
		status = 1;
	} else if (l.nglobs && l.n == 0) {
		tool_error("no event matches '%s'", l.globs[0]);
		status = 1;
	}
	if (json)
		print_json(&l);
	else if (raw)
		print_raw(&l);
	else
		print_text(&l, !any_class && !l.nglobs);

	for (size_t i = 0; i < l.n; i++) {
		free(l.v[i].name);
		free(l.v[i].alias);
		free(l.v[i].desc);
		free(l.v[i].pmu);
		free(l.v[i].unit);
	}
	free(l.v);
	free(l.globs);
	return tool_finish_stdout(status);
}
