/* SPDX-License-Identifier: MIT */
/* tool/stat-print.c - perfkit stat: the counts printed as perf stat prints them (text with
 * metrics, CSV, JSON; per CPU, core, socket or thread; intervals, repeats). */
#include "stat.h"

/* ---- formatting ---- */

/*
 * The text form follows the user's LC_NUMERIC as perf's does: its thousands separator
 * ("1,234,567" in en_US, "1.234.567" in de_DE, none in C) and its decimal point. Only
 * while text is printed: CSV and JSON stay in the C locale (perf's break there), and
 * nothing else (number parsing) sees it.
 */
bool stat_text_locale_begin(const struct stat_opts *o)
{
	/* (setlocale, not newlocale + uselocale: glibc 2.36's newlocale loses its copy of
	 * LOCPATH; NULL when the locale is not installed: the C locale stays) */
	if (o->sep || o->json)
		return false;
	return setlocale(LC_NUMERIC, "") != NULL;
}

void stat_text_locale_end(bool switched)
{
	if (switched)
		setlocale(LC_NUMERIC, "C");
}

static void fmt_group(char *buf, size_t len, double v, bool big)
{
	snprintf(buf, len, big ? "%'.0f" : "%.0f", v < 0 ? 0 : v);
}

/* The aggregation column(s) before a counter line, in text, CSV and JSON forms. */
static void print_prefix(struct stat_opts *o, struct pk_evlist *el, const struct pk_aggr_key *k)
{
	FILE *f = o->out;
	char id[64];
	if (o->aggr == PK_AGGR_GLOBAL)
		return;
	switch (o->aggr) {
	case PK_AGGR_CPU:
		if (o->json)
			fprintf(f, "\"cpu\" : \"%d\", ", k->id);
		else if (o->sep)
			fprintf(f, "CPU%d%s", k->id, o->sep);
		else
			fprintf(f, "CPU%-7d ", k->id);
		break;
	case PK_AGGR_THREAD: {
		const char *comm = pk_thread_map__comm(pk_evlist__threads(el), k->idx);
		if (o->json) {
			snprintf(id, sizeof(id), "%s-%d", comm, k->id);
			fputs("\"thread\" : ", f);
			tool_json_str(f, id);
			fputs(", ", f);
		} else if (o->sep) {
			fprintf(f, "%s-%d%s", comm, k->id, o->sep);
		} else {
			fprintf(f, "%16s-%-8d ", comm, k->id);
		}
		break;
	}
	case PK_AGGR_CORE:
		snprintf(id, sizeof(id), "S%d-D%d-C%d", k->socket, k->die, k->id);
		if (o->json)
			fprintf(f, "\"core\" : \"%s\", \"aggregate-number\" : %d, ", id, k->nr);
		else if (o->sep)
			fprintf(f, "%s%s%d%s", id, o->sep, k->nr, o->sep);
		else
			fprintf(f, "S%d-D%d-C%-8d %4d ", k->socket, k->die, k->id, k->nr);
		break;
	case PK_AGGR_SOCKET:
		if (o->json)
			fprintf(f, "\"socket\" : \"S%d\", \"aggregate-number\" : %d, ", k->id, k->nr);
		else if (o->sep)
			fprintf(f, "S%d%s%d%s", k->id, o->sep, k->nr, o->sep);
		else
			fprintf(f, "S%-5d%4d ", k->id, k->nr);
		break;
	case PK_AGGR_DIE:
		snprintf(id, sizeof(id), "S%d-D%d", k->socket, k->id);
		if (o->json)
			fprintf(f, "\"die\" : \"%s\", \"aggregate-number\" : %d, ", id, k->nr);
		else if (o->sep)
			fprintf(f, "%s%s%d%s", id, o->sep, k->nr, o->sep);
		else
			fprintf(f, "S%d-D%-8d %4d ", k->socket, k->id, k->nr);
		break;
	case PK_AGGR_NODE:
		if (o->json)
			fprintf(f, "\"node\" : \"N%d\", \"aggregate-number\" : %d, ", k->id, k->nr);
		else if (o->sep)
			fprintf(f, "N%d%s%d%s", k->id, o->sep, k->nr, o->sep);
		else
			fprintf(f, "N%-5d %4d ", k->id, k->nr);
		break;
	default:
		break;
	}
}

/* One counter line. `val` is the (mean) scaled value; noise < 0 means "no -r". */
static int evsel_index(struct pk_evlist *el, struct pk_evsel *ev);

static void print_line(struct stat_opts *o, struct pk_evlist *el, const struct pk_aggr_key *k,
		       struct pk_evsel *ev, const struct pk_count *c, double val, double noise,
		       const struct stat_metric *m, double ts)
{
	FILE *f = o->out;
	const char *name = pk_evsel__name(ev);
	bool clock = stat_is_clock(ev);
	const char *unit = clock ? "msec" : (pk_evsel__unit(ev) ? pk_evsel__unit(ev) : "");
	stat_extra_name(o, ev, &name, &unit);
	const char *cg = stat_extra_cgroup(o, evsel_index(el, ev));   /* perf's column */
	double shown = clock ? val / 1e6 : val * pk_evsel__scale(ev);
	bool counted = c->status == PK_COUNT_OK || c->status == PK_COUNT_SCALED;
	const char *bad = c->status == PK_COUNT_NOT_SUPPORTED ? "<not supported>" : "<not counted>";
	double pct = c->status == PK_COUNT_SCALED ? c->running_pct : 100.0;
	char num[64];

	if (o->json) {
		fputc('{', f);
		if (ts >= 0)
			fprintf(f, "\"interval\" : %.9f, ", ts);
		print_prefix(o, el, k);
		if (counted)
			fprintf(f, "\"counter-value\" : \"%f\", ", shown);
		else
			fprintf(f, "\"counter-value\" : \"%s\", ", bad);
		fputs("\"unit\" : ", f);
		tool_json_str(f, unit);
		fputs(", \"event\" : ", f);
		tool_json_str(f, name);
		if (cg) {
			fputs(", \"cgroup\" : ", f);
			tool_json_str(f, cg);
		}
		if (noise >= 0)
			fprintf(f, ", \"variance\" : %.2f", noise);
		fprintf(f, ", \"event-runtime\" : %" PRIu64 ", \"pcnt-running\" : %.2f, ",
			c->run, pct);
		fprintf(f, "\"metric-value\" : %f, \"metric-unit\" : ", counted && m->has ? m->val : 0.0);
		tool_json_str(f, counted && m->has ? m->unit : "");
		fputs("}\n", f);
		return;
	}
	if (o->sep) {
		const char *s = o->sep;
		if (ts >= 0)
			fprintf(f, "%16.9f%s", ts, s);
		print_prefix(o, el, k);
		if (!counted)
			fprintf(f, "%s", bad);
		else if (clock)
			fprintf(f, "%.2f", shown);
		else
			fprintf(f, "%.0f", shown);
		fprintf(f, "%s%s%s%s%s", s, unit, s, name, s);
		if (cg)
			fprintf(f, "%s%s", cg, s);
		if (noise >= 0)
			fprintf(f, "%.2f%%%s", noise, s);
		fprintf(f, "%" PRIu64 "%s%.2f%s", c->run, s, pct, s);
		if (counted && m->has)
			fprintf(f, "%.3f%s%s\n", m->val, s, m->unit);
		else
			fprintf(f, "%s\n", s);
		return;
	}
	if (ts >= 0)
		fprintf(f, "%16.9f ", ts);
	print_prefix(o, el, k);
	if (!counted) {
		if (cg)
			fprintf(f, "%18s %-4s %-25s %s%35s\n", bad, unit, name, cg, "");
		else
			fprintf(f, "%18s %-4s %-32s%28s\n", bad, unit, name, "");
		return;
	}
	if (clock)
		snprintf(num, sizeof(num), o->big_num ? "%'.2f" : "%.2f", shown);
	else
		fmt_group(num, sizeof(num), shown, o->big_num);
	fprintf(f, "%18s %-4s %-32s", num, unit, name);
	if (cg)
		fprintf(f, " %s", cg);
	if (m->has) {
		fputs(" # ", f);
		fprintf(f, m->fmt, m->val);
		fprintf(f, " %-23s", m->unit);
	} else {
		fprintf(f, "%35s", "");
	}
	/* a counter that came out the same in every run gets no "( +- 0.00% )" (perf) */
	if (noise > 0)
		fprintf(f, "  ( +-%6.2f%% )", noise);
	if (c->status == PK_COUNT_SCALED)
		fprintf(f, "  (%.2f%%)", c->running_pct);
	fputc('\n', f);
}

static int evsel_index(struct pk_evlist *el, struct pk_evsel *ev)
{
	struct pk_evsel *p;
	int i = 0;
	pk_evlist__for_each_evsel(el, p) {
		if (p == ev)
			return i;
		i++;
	}
	return -1;
}

/* the values metrics refer to: the first clock, cycles and branches counts (of cgroup
 * `slot`'s events with --for-each-cgroup, as perf's per-cgroup shadow stats) */
static void metric_bases(struct stat_opts *o, struct run_state *st, int ki, int slot,
			 unsigned flags, double *clock_ns, double *cycles, double *branches)
{
	struct pk_evlist *el = st->el;
	const struct pk_aggr_key *k = &st->keys[ki];
	bool repeat = st->use_stats;
	struct pk_evsel *ev;

	*clock_ns = *cycles = *branches = 0;
	pk_evlist__for_each_evsel(el, ev) {
		int idx = evsel_index(el, ev);
		if (o->x.per_cg && idx / o->x.per_cg != slot)
			continue;
		struct rstat *r = &st->stats[idx * st->nkeys + ki];
		struct pk_count c;
		double v;
		if (repeat) {
			c = r->last;
			v = r->mean;
		} else {
			pk_evsel__aggregate(ev, o->aggr, k, flags, &c);
			stat_extra_count(o, st, ev, &c);
			v = (double)c.val;
		}
		if (c.status != PK_COUNT_OK && c.status != PK_COUNT_SCALED)
			continue;
		if (stat_is_clock(ev) && *clock_ns == 0)
			*clock_ns = v;
		else if (stat_is_hw(ev, PERF_COUNT_HW_CPU_CYCLES) && *cycles == 0)
			*cycles = v;
		else if (stat_is_hw(ev, PERF_COUNT_HW_BRANCH_INSTRUCTIONS) && *branches == 0)
			*branches = v;
	}
}

/*
 * Print every counter line of key k. With `delta`, the counts since the last
 * pk_evlist__save_counts (interval mode); with st->runs > 1 the means over the runs.
 */
/* --metric-only: the metrics of a count in one row, under their names (printed once) */
static void print_metric_row(struct stat_opts *o, struct stat_metric *cells, size_t nc, double ts)
{
	FILE *f = o->out;
	const char *sep = o->sep;
	char v[64];
	if (o->json) {
		fputc('{', f);
		if (ts >= 0)
			fprintf(f, "\"interval\" : %.9f, ", ts);
		for (size_t i = 0; i < nc; i++) {
			fprintf(f, "%s", i ? ", " : "");
			tool_json_str(f, stat_trim(cells[i].unit));
			fprintf(f, " : \"%.3f\"", cells[i].val);
		}
		fputs("}\n", f);
		return;
	}
	if (!o->x.mo_header_done) {
		o->x.mo_header_done = true;
		if (ts >= 0)
			fprintf(f, sep ? "time%s" : "#%15s", sep ? sep : "time");
		for (size_t i = 0; i < nc; i++)
			if (sep)
				fprintf(f, "%s%s", stat_trim(cells[i].unit), i + 1 < nc ? sep : "\n");
			else
				fprintf(f, "  %*s%s", (int)stat_metric_width(&cells[i]),
					stat_trim(cells[i].unit), i + 1 < nc ? "" : "\n");
	}
	if (ts >= 0)
		fprintf(f, sep ? "%.9f%s" : "%16.9f", ts, sep ? sep : "");
	for (size_t i = 0; i < nc; i++) {
		if (sep) {
			fprintf(f, "%.3f%s", cells[i].val, i + 1 < nc ? sep : "\n");
			continue;
		}
		snprintf(v, sizeof(v), cells[i].fmt, cells[i].val);
		fprintf(f, "  %*s%s", (int)stat_metric_width(&cells[i]), stat_trim(v), i + 1 < nc ? "" : "\n");
	}
}

static void print_key(struct stat_opts *o, struct run_state *st, int ki, struct pk_evsel *only,
		      unsigned flags, double ts)
{
	struct stat_metric cells[16];
	size_t nc = 0;
	struct pk_evlist *el = st->el;
	const struct pk_aggr_key *k = &st->keys[ki];
	double clock_ns = 0, cycles = 0, branches = 0;
	bool repeat = st->use_stats;
	struct pk_evsel *ev;

	int slot = -1;   /* --for-each-cgroup: the cgroup whose counts the metrics use */
	pk_evlist__for_each_evsel(el, ev) {
		int idx = evsel_index(el, ev);
		int my = o->x.per_cg ? idx / o->x.per_cg : 0;
		if (my != slot) {
			slot = my;
			metric_bases(o, st, ki, slot, flags, &clock_ns, &cycles, &branches);
		}
		struct rstat *r = &st->stats[evsel_index(el, ev) * st->nkeys + ki];
		struct pk_count c;
		struct stat_metric m;
		double v, noise = -1;
		if (only && ev != only)
			continue;
		if (repeat) {
			c = r->last;
			v = r->mean;
			/* relative standard error of the mean, as perf prints it */
			if (r->n > 1 && r->mean != 0)
				noise = 100.0 * sqrt(r->m2 / (r->n - 1) / r->n) / fabs(r->mean);
			else
				noise = 0;
			if (r->n == 0 && c.status != PK_COUNT_NOT_SUPPORTED)
				c.status = PK_COUNT_NOT_COUNTED;
			else if (r->n > 0 && c.status == PK_COUNT_NOT_COUNTED)
				c.status = PK_COUNT_OK;
			if (r->n > 0) {
				/* the run-time column and the percentage are the means' too (perf) */
				c.ena = (uint64_t)r->ena;
				c.run = (uint64_t)r->run;
				if (c.status == PK_COUNT_SCALED && r->ena > 0)
					c.running_pct = 100.0 * r->run / r->ena;
			}
		} else {
			pk_evsel__aggregate(ev, o->aggr, k, flags, &c);
			stat_extra_count(o, st, ev, &c);
			v = (double)c.val;
		}
		/* with -r the mean count over the mean elapsed time: perf divides the means */
		stat_compute_metric(ev, v, clock_ns, cycles, branches,
			       repeat ? (uint64_t)(st->wall.mean * 1e9 + 0.5) : st->wall_ns, &m);
		if (!o->x.metric_only)
			print_line(o, el, k, ev, &c, v, noise, &m, ts);
		else if (m.has && !strstr(m.unit, "/sec") && nc < sizeof(cells) / sizeof(cells[0]) &&
			 (c.status == PK_COUNT_OK || c.status == PK_COUNT_SCALED))
			cells[nc++] = m;
	}
	if (o->x.metric_only && nc)
		print_metric_row(o, cells, nc, ts);
}

struct thread_row {
	uint64_t val;
	int ki;
};

static int cmp_row(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;
	if (x->val != y->val)
		return x->val < y->val ? 1 : -1;
	return (x->ki > y->ki) - (x->ki < y->ki);
}

/*
 * --per-thread, as perf: for each event its threads by count, largest first (ties in map
 * order); with -a the threads that counted nothing are left out (most of a system).
 */
static void print_threads(struct stat_opts *o, struct run_state *st, unsigned flags, double ts)
{
	struct thread_row *rows = calloc((size_t)st->nkeys, sizeof(*rows));
	struct pk_evsel *ev;
	if (!rows) {
		tool_error("out of memory");
		return;
	}
	pk_evlist__for_each_evsel(st->el, ev) {
		int n = 0;
		for (int ki = 0; ki < st->nkeys; ki++) {
			struct pk_count c;
			pk_evsel__aggregate(ev, o->aggr, &st->keys[ki], flags, &c);
			stat_extra_count(o, st, ev, &c);
			if (c.status != PK_COUNT_OK && c.status != PK_COUNT_SCALED)
				c.val = 0;
			if (c.val == 0 && o->target == T_CPU && c.status != PK_COUNT_NOT_SUPPORTED)
				continue;
			rows[n++] = (struct thread_row){ .val = c.val, .ki = ki };
		}
		qsort(rows, (size_t)n, sizeof(*rows), cmp_row);
		for (int i = 0; i < n; i++)
			print_key(o, st, rows[i].ki, ev, flags, ts);
	}
	free(rows);
}

void stat_print_counts_locale(struct stat_opts *o, struct run_state *st, unsigned flags,
				double ts);

void stat_print_counts(struct stat_opts *o, struct run_state *st, unsigned flags, double ts)
{
	bool prev = stat_text_locale_begin(o);
	stat_print_counts_locale(o, st, flags, ts);
	stat_text_locale_end(prev);
}

void stat_print_counts_locale(struct stat_opts *o, struct run_state *st, unsigned flags,
				double ts)
{
	if (o->aggr == PK_AGGR_CORE || o->aggr == PK_AGGR_SOCKET || o->aggr == PK_AGGR_GLOBAL ||
	    o->aggr == PK_AGGR_DIE || o->aggr == PK_AGGR_NODE) {
		for (int ki = 0; ki < st->nkeys; ki++)
			print_key(o, st, ki, NULL, flags, ts);
		return;
	}
	/* -A and --per-thread: event by event, every CPU/thread of it */
	struct pk_evsel *ev;
	if (o->aggr == PK_AGGR_THREAD) {
		print_threads(o, st, flags, ts);
		return;
	}
	pk_evlist__for_each_evsel(st->el, ev)
		for (int ki = 0; ki < st->nkeys; ki++)
			print_key(o, st, ki, ev, flags, ts);
}

void stat_print_header(struct stat_opts *o, int runs)
{
	FILE *f = o->out;
	if (o->sep || o->json)
		return;
	fprintf(f, "\n Performance counter stats for ");
	if (o->target == T_PID) {
		fprintf(f, "process id '%s'", o->pid_list);
	} else if (o->target == T_TID) {
		fprintf(f, "thread id '%s'", o->tid_list);
	} else if (o->target == T_CPU) {
		if (o->cpu_list)
			fprintf(f, "'CPU(s) %s'", o->cpu_list);
		else
			fprintf(f, "'system wide'");
	} else {
		fputc('\'', f);
		for (char **a = o->argv; *a; a++)
			fprintf(f, "%s%s", a == o->argv ? "" : " ", *a);
		fputc('\'', f);
	}
	if (runs > 1)
		fprintf(f, " (%d runs)", runs);
	fprintf(f, ":\n\n");
}

/* --table: each run's elapsed time, its difference from the mean and a bar of one '#'
 * plus one per 5 % of difference, indented like the mean below it (perf's layout) */
static void print_table(FILE *f, const struct run_state *st, int prec)
{
	char tmp[64];
	int indent = 0;
	snprintf(tmp, sizeof(tmp), " %17.*f", prec, st->wall.mean);
	while (tmp[indent] == ' ')
		indent++;
	fprintf(f, "%*s# Table of individual measurements:\n", indent, "");
	for (int i = 0; i < st->wall.n; i++) {
		double run = st->walls[i], d = run - st->wall.mean;
		int bars = 1 + abs((int)(run > 0 ? 100.0 * d / run : 0) / 5);
		fprintf(f, " %17.*f (%+.*f) ", prec, run, prec, d);
		for (int h = 0; h < bars && h < 100; h++)
			fputc('#', f);
		fputc('\n', f);
	}
	fprintf(f, "\n%*s# Final result:\n", indent, "");
}

void stat_print_footer(struct stat_opts *o, struct run_state *st)
{
	FILE *f = o->out;
	struct pk_evsel *ev;
	char names[256] = "";
	size_t nl = 0;
	bool hw_missing = false;

	if (o->sep || o->json)
		return;
	if (!o->null_run)   /* (-n: no counter lines to end) */
		fputc('\n', f);
	if (st->use_stats) {
		double sd = st->wall.n > 1 ? sqrt(st->wall.m2 / (st->wall.n - 1) / st->wall.n) : 0;
		double pct = st->wall.mean > 0 ? 100.0 * sd / st->wall.mean : 0.0;
		/* two digits past the first significant one of the error, as perf */
		int prec = (sd > 1 || sd <= 0 ? 0 : (int)lround(ceil(-log10(sd)))) + 2;
		if (st->walls)
			print_table(f, st, prec);
		fprintf(f, "%18.*f +- %.*f seconds time elapsed", prec, st->wall.mean, prec, sd);
		if (pct > 0)
			fprintf(f, "  ( +-%6.2f%% )", pct);
		fputs("\n\n", f);
	} else {
		fprintf(f, "%18.9f seconds time elapsed\n\n", (double)st->wall_ns / 1e9);
		if (o->target == T_WORKLOAD)
			fprintf(f, "%18.9f seconds user\n%18.9f seconds sys\n\n", st->ru_user,
				st->ru_sys);
	}
	pk_evlist__for_each_evsel(st->el, ev) {
		const struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
		if (pk_evsel__supported(ev))
			continue;
		if (a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE)
			hw_missing = true;
		if (nl < sizeof(names) - 1)
			nl += (size_t)snprintf(names + nl, sizeof(names) - nl, "%s%s", nl ? ", " : "",
					       pk_evsel__name(ev));
	}
	if (nl) {
		struct stat sb;
		if (hw_missing && stat("/sys/bus/event_source/devices/cpu", &sb) < 0)
			fprintf(f, "Hint: %s <not supported>: this machine exposes no hardware PMU "
				   "(common in VMs); software events still count.\n\n", names);
		else
			fprintf(f, "Hint: %s <not supported> by this machine's PMUs; see "
				   "'perfkit list'.\n\n", names);
	}
}
