/* SPDX-License-Identifier: MIT */
/*
 * tool/stat-extra.c - perf stat's options beyond the basic ones: --per-die, --per-node,
 * -d/--detailed, -M/--metrics, --all-user/--all-kernel, --no-scale, --no-merge and
 * --filter, --for-each-cgroup, kept out of cmd-stat.c.
 */
#include "stat.h"

/* perf stat -d, -dd, -ddd: the events each level adds to the default ones */
static const char *const detailed[] = {
	"L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses",
	("L1-icache-loads,L1-icache-load-misses,dTLB-loads,dTLB-load-misses,iTLB-loads,"
	 "iTLB-load-misses"),
	"L1-dcache-prefetches,L1-dcache-prefetch-misses",
};

/* -M: the metrics perfkit computes from generic events (the shadow metrics printed in the
 * comment column of their counter lines); needs_hw: only with a hardware PMU */
static const struct {
	const char *name, *events, *what;
	bool needs_hw;
} metrics[] = {
	{ "CPUs_utilized", "task-clock", "task-clock / elapsed time", false },
	{ "IPC", "{cycles,instructions}", "instructions / cycles", true },
	{ "CPI", "{cycles,instructions}", "cycles / instructions", true },
	{ "branch_miss_rate", "{branches,branch-misses}", "branch-misses / branches", true },
	{ "cache_miss_rate", "{cache-references,cache-misses}",
	  "cache-misses / cache-references", true },
};
#define NR_METRICS (sizeof(metrics) / sizeof(metrics[0]))

static bool hw_pmu(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return !(fd == -ENOENT || fd == -ENODEV || fd == -EOPNOTSUPP);
}

static int add_metrics(struct stat_opts *o, const char *list)
{
	char *dup = strdup(list), *save = NULL;
	int hw = -1;
	struct pk_parse_error pe;

	if (!dup)
		return 1;
	for (char *w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < NR_METRICS; i++)
			if (!strcasecmp(w, metrics[i].name))
				break;
		if (i == NR_METRICS) {
			tool_error("unknown metric '%s': perfkit computes CPUs_utilized, IPC, CPI, "
				   "branch_miss_rate and cache_miss_rate (perf's per-CPU metric "
				   "tables are not included)", w);
			free(dup);
			return 129;
		}
		if (metrics[i].needs_hw && hw < 0)
			hw = hw_pmu();
		if (metrics[i].needs_hw && !hw) {
			tool_error("metric '%s' (%s) needs hardware counters, which this machine "
				   "does not expose (no hardware PMU, common in VMs); only "
				   "CPUs_utilized works here", metrics[i].name, metrics[i].what);
			free(dup);
			return 1;
		}
		if (pk_event_list__parse(o->events, metrics[i].events, NULL, &pe) < 0) {
			tool_error("metric '%s': %s", metrics[i].name, pe.msg);
			free(dup);
			return 1;
		}
	}
	free(dup);
	return 0;
}

int stat_extra_opt(struct stat_opts *o, int c, const char *arg, int nspecs)
{
	struct stat_extra *x = &o->x;

	switch (c) {
	case STAT_OPT_PER_DIE: o->aggr = PK_AGGR_DIE; return 0;
	case STAT_OPT_PER_NODE: o->aggr = PK_AGGR_NODE; return 0;
	case 'd': x->detailed++; return 0;
	case 'M': x->metrics = arg; return 0;
	case STAT_OPT_ALL_USER: x->all_user = true; return 0;
	case STAT_OPT_ALL_KERNEL: x->all_kernel = true; return 0;
	case STAT_OPT_NO_SCALE: o->no_scale = true; return 0;
	case STAT_OPT_NO_MERGE: return 0; /* perfkit never merges (see the doc) */
	case STAT_OPT_FOR_EACH_CGROUP: x->cg_list = arg; return 0;
	case STAT_OPT_METRIC_ONLY: x->metric_only = true; return 0;
	case STAT_OPT_FILTER: {
		if (!nspecs) {
			tool_error("--filter must follow a -e tracepoint");
			return 129;
		}
		struct stat_filter *f = realloc(x->filters, (x->nr_filters + 1) * sizeof(*f));
		if (!f)
			return 1;
		x->filters = f;
		f[x->nr_filters++] = (struct stat_filter){ .spec = nspecs - 1, .text = arg };
		return 0;
	}
	default:
		return TOOL_OPT_UNKNOWN;
	}
}

void stat_extra_spec_added(struct stat_opts *o, int spec)
{
	struct stat_extra *x = &o->x;
	size_t n = pk_event_list__count(o->events);

	for (size_t i = 0; i < x->nr_filters; i++)
		if (x->filters[i].spec == spec) {
			x->filters[i].end = n;
			x->filters[i].begin = x->spec_end;
		}
	x->spec_end = n;
}

/* --for-each-cgroup: each name's directory opened once (kept until the end) */
static int open_cgroups(struct stat_opts *o)
{
	struct stat_extra *x = &o->x;
	const char *p = x->cg_list;
	size_t n = 1;

	if (o->cgroup) {
		tool_error("-G and --for-each-cgroup exclude each other");
		return 129;
	}
	if (x->duration_idx >= 0) {
		tool_error("duration_time does not mix with --for-each-cgroup: leave it out");
		return 129;
	}
	if (!o->system_wide || o->aggr == PK_AGGR_THREAD) {
		tool_error("--for-each-cgroup counts cgroups on CPUs: use it with -a or -C "
			   "(and without --per-thread)");
		return 129;
	}
	for (const char *c = p; *c; c++)
		n += *c == ',';
	x->cg_names = calloc(n, sizeof(*x->cg_names));
	x->cg_fds = calloc(n, sizeof(*x->cg_fds));
	if (!x->cg_names || !x->cg_fds)
		return 1;
	for (;;) {
		size_t l = strcspn(p, ",");
		if (l == 0) {
			tool_error("--for-each-cgroup '%s': an empty cgroup name", x->cg_list);
			return 129;
		}
		char *name = strndup(p, l);
		if (!name)
			return 1;
		x->cg_names[x->nr_cg] = name;
		x->cg_fds[x->nr_cg++] = -1;
		if ((x->cg_fds[x->nr_cg - 1] = tool_open_cgroup(name)) < 0)
			return 1;
		if (!p[l])
			return -1;
		p += l + 1;
	}
}

int stat_extra_check(struct stat_opts *o)
{
	struct stat_extra *x = &o->x;
	struct pk_parse_error pe;

	if (x->all_user && x->all_kernel) {
		tool_error("--all-user and --all-kernel exclude each other");
		return 129;
	}
	if (x->detailed) { /* appended to -e's events too, as perf */
		for (int i = 0; i < x->detailed && i < 3; i++)
			if (pk_event_list__parse(o->events, detailed[i], NULL, &pe) < 0) {
				tool_error("-d: %s", pe.msg);
				return 1;
			}
	}
	if (x->metric_only && (o->aggr != PK_AGGR_GLOBAL || x->cg_list)) {
		tool_error("--metric-only prints the whole count's metrics: not with -A, --per-*"
			   " or --for-each-cgroup");
		return 129;
	}
	if (x->metrics) {
		int r = add_metrics(o, x->metrics);
		if (r)
			return r;
	}
	for (size_t i = 0; i < x->nr_filters; i++)
		for (size_t e = x->filters[i].begin; e < x->filters[i].end; e++)
			if (pk_event_spec__kind(pk_event_list__get(o->events, e)) != PK_EV_TRACEPOINT) {
				tool_error("--filter '%s' must follow a -e tracepoint",
					   x->filters[i].text);
				return 129;
			}
	if (x->cg_list)
		return open_cgroups(o);
	return -1;
}

/* perf's expansion: the whole event list again for each cgroup, in the cgroups' order */
static int expand_cgroups(struct stat_opts *o, struct pk_evlist *el)
{
	struct stat_extra *x = &o->x;
	struct pk_evsel *ev;
	int i = 0;

	x->per_cg = pk_evlist__nr_evsels(el);
	for (int c = 1; c < x->nr_cg; c++)
		if (pk_evlist__add_events(el, o->events) < 0) {
			tool_error("cannot set up the events: %s", strerror(errno));
			return -1;
		}
	pk_evlist__for_each_evsel(el, ev) {
		pk_evsel__set_cgroup(ev, x->cg_fds[i / x->per_cg]);
		i++;
	}
	return 0;
}

int stat_extra_attrs(struct stat_opts *o, struct pk_evlist *el)
{
	struct pk_evsel *ev;
	int i = 0;

	if (o->x.nr_cg && expand_cgroups(o, el) < 0)
		return -1;

	o->x.duration_ev = NULL;
	pk_evlist__for_each_evsel(el, ev)
		if (i++ == o->x.duration_idx)
			o->x.duration_ev = ev;

	if (!o->x.all_user && !o->x.all_kernel)
		return 0;
	pk_evlist__for_each_evsel(el, ev) {
		struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
		if (ev == o->x.duration_ev)
			continue;
		/* as perf's evsel__config: the other side only */
		a->exclude_kernel = o->x.all_user;
		a->exclude_user = o->x.all_kernel;
	}
	return 0;
}

const char *stat_extra_cgroup(const struct stat_opts *o, int idx)
{
	if (o->cgroup)
		return o->cgroup;
	if (!o->x.nr_cg || idx < 0 || !o->x.per_cg)
		return NULL;
	return idx / o->x.per_cg < o->x.nr_cg ? o->x.cg_names[idx / o->x.per_cg] : NULL;
}

int stat_extra_filters(struct stat_opts *o, struct pk_evlist *el)
{
	struct stat_extra *x = &o->x;
	int ncpu = pk_cpu_map__nr(pk_evlist__cpus(el));
	int nthr = pk_thread_map__nr(pk_evlist__threads(el));
	struct pk_evsel *ev;
	size_t idx = 0;

	pk_evlist__for_each_evsel(el, ev) {
		/* each cgroup's copy of the list gets the filters of the first */
		size_t at = x->per_cg ? idx % (size_t)x->per_cg : idx;
		for (size_t i = 0; i < x->nr_filters; i++) {
			const struct stat_filter *f = &x->filters[i];
			if (at < f->begin || at >= f->end)
				continue;
			for (int c = 0; c < ncpu; c++)
				for (int t = 0; t < nthr; t++) {
					int fd = pk_evsel__fd(ev, c, t), err;
					if (fd >= 0 && (err = pk_ioc_set_filter(fd, f->text)) < 0) {
						tool_error("the kernel refused the filter '%s' of '%s': "
							   "%s (check the field names in the event's "
							   "format file under tracefs)", f->text,
							   pk_evsel__name(ev), strerror(-err));
						return -1;
					}
				}
		}
		idx++;
	}
	return 0;
}

void stat_extra_release(struct stat_opts *o)
{
	free(o->x.filters);
	o->x.filters = NULL;
	o->x.nr_filters = 0;
	for (int i = 0; o->x.cg_names && i < o->x.nr_cg; i++) {
		free(o->x.cg_names[i]);
		if (o->x.cg_fds[i] >= 0)
			close(o->x.cg_fds[i]);
	}
	free(o->x.cg_names);
	free(o->x.cg_fds);
	o->x.cg_names = NULL;
	o->x.cg_fds = NULL;
	o->x.nr_cg = 0;
}

/* duration_time: perf's tool event, the elapsed time of the run in ns. A dummy software
 * event holds its place in the list (it counts nothing); its line shows the elapsed time.
 * Only as a top-level name (not inside a {group}). */
const char *stat_extra_spec(struct stat_opts *o, const char *spec, char **owned)
{
	size_t n = strlen(spec), tok = 0;
	const char *p = spec;

	*owned = NULL;
	if (!strstr(spec, "duration_time"))
		return spec;
	if (strpbrk(spec, "{}")) {
		tool_error("duration_time does not go inside a {group}: give it its own -e");
		return NULL;
	}
	while (*p) {
		size_t l = strcspn(p, ",");
		if (l == 13 && !strncmp(p, "duration_time", 13)) {
			if (o->x.duration_idx >= 0) {
				tool_error("duration_time given twice");
				return NULL;
			}
			char *c = malloc(n + 1);
			if (!c)
				return NULL;
			size_t at = (size_t)(p - spec);
			memcpy(c, spec, at);
			memcpy(c + at, "dummy", 5);
			memcpy(c + at + 5, p + 13, n - at - 13 + 1);
			o->x.duration_idx = (int)(pk_event_list__count(o->events) + tok);
			*owned = c;
			return c;
		}
		tok++;
		p += l + (p[l] == ',');
	}
	return spec;
}

void stat_extra_count(const struct stat_opts *o, const struct run_state *st,
		      const struct pk_evsel *ev, struct pk_count *c)
{
	if (o->no_scale)
		c->val = c->raw;
	if (ev && ev == o->x.duration_ev) {
		c->val = c->raw = st->wall_ns;
		c->ena = c->run = st->wall_ns;
		c->status = PK_COUNT_OK;
		c->running_pct = 100.0;
	}
}

bool stat_extra_name(const struct stat_opts *o, const struct pk_evsel *ev, const char **name,
		     const char **unit)
{
	if (!ev || ev != o->x.duration_ev)
		return false;
	*name = "duration_time";
	*unit = "ns";
	return true;
}

/* ---- metrics ---- */

bool stat_is_clock(struct pk_evsel *ev)
{
	const struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

bool stat_is_hw(struct pk_evsel *ev, uint64_t config)
{
	const struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
	return a->type == PERF_TYPE_HARDWARE && a->config == config;
}

/* Metrics perf shows beside a count, from the other counts of the same key. */
void stat_compute_metric(struct pk_evsel *ev, double val, double clock_ns, double cycles,
			   double branches, uint64_t wall_ns, struct stat_metric *m)
{
	memset(m, 0, sizeof(*m));
	m->fmt = "%8.3f";
	if (stat_is_clock(ev)) {
		if (wall_ns) {
			m->has = true;
			m->val = val / (double)wall_ns;
			snprintf(m->unit, sizeof(m->unit), "CPUs utilized");
		}
		return;
	}
	if (stat_is_hw(ev, PERF_COUNT_HW_CPU_CYCLES) && clock_ns > 0) {
		m->has = true;
		m->val = val / clock_ns;
		snprintf(m->unit, sizeof(m->unit), "GHz");
		return;
	}
	if (stat_is_hw(ev, PERF_COUNT_HW_INSTRUCTIONS) && cycles > 0) {
		m->has = true;
		m->val = val / cycles;
		m->fmt = "%8.2f";
		snprintf(m->unit, sizeof(m->unit), " insn per cycle");
		return;
	}
	if (stat_is_hw(ev, PERF_COUNT_HW_BRANCH_MISSES) && branches > 0) {
		m->has = true;
		m->val = 100.0 * val / branches;
		m->fmt = "%7.2f%%";
		snprintf(m->unit, sizeof(m->unit), "of all branches");
		return;
	}
	if (clock_ns > 0) {
		double rate = val * 1e9 / clock_ns;
		const char *u = "/sec";
		m->has = true;
		if (rate >= 1e9) {
			rate /= 1e9;
			u = "G/sec";
		} else if (rate >= 1e6) {
			rate /= 1e6;
			u = "M/sec";
		} else if (rate >= 1e3) {
			rate /= 1e3;
			u = "K/sec";
		}
		m->val = rate;
		snprintf(m->unit, sizeof(m->unit), "%s", u);
	}
}


/* s without its leading blanks (the units' own padding) */
const char *stat_trim(const char *s)
{
	while (*s == ' ')
		s++;
	return s;
}

/* --metric-only's column width: the metric's name, at least 10 */
size_t stat_metric_width(const struct stat_metric *m)
{
	size_t n = strlen(stat_trim(m->unit));
	return n < 10 ? 10 : n;
}
