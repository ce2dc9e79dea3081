/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-stat.c - `perfkit stat`: count events for a command, processes, threads, CPUs
 * or a cgroup and print the totals the way `perf stat` does (text, CSV or JSON).
 *
 * Start-up is kept lean on purpose (the benchmark compares it with perf): the default path
 * parses the event list, forks, opens one fd per event and execs; no sysfs scan, no libpfm
 * initialisation, no tracefs walk unless an event needs them.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

/*
 * A CPU learns which cgroup is running (and so activates cgroup events) when it switches
 * tasks. An event installed while another task ran there and enabled while a task of the
 * cgroup runs without interruption (a spinning loop on a quiet machine) stays inactive
 * until that task is switched out: the count came out "<not counted>" about half the
 * time here. Passing through every CPU of the map (our thread migrates there and back)
 * makes each switch once.
 */
static void cgroup_kick(const struct pk_evlist *el)
{
	cpu_set_t old, one;
	if (sched_getaffinity(0, sizeof(old), &old))
		return;
	const struct pk_cpu_map *cpus = pk_evlist__cpus(el);
	for (int i = 0; i < pk_cpu_map__nr(cpus); i++) {
		int c = pk_cpu_map__cpu(cpus, i);
		if (c < 0 || c >= CPU_SETSIZE || !CPU_ISSET(c, &old))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			sched_yield();
	}
	sched_setaffinity(0, sizeof(old), &old);
}


#define DEFAULT_EVENTS "task-clock,context-switches,cpu-migrations,page-faults,cycles," \
		       "instructions,branches,branch-misses"
#define NSEC_PER_SEC 1000000000ULL

enum target_kind { T_WORKLOAD, T_PID, T_TID, T_CPU };

struct stat_opts {
	struct pk_event_list *events;
	enum target_kind target;
	const char *pid_list, *tid_list, *cpu_list, *cgroup;
	bool system_wide;
	enum pk_aggr_mode aggr;
	bool no_inherit;
	long interval_ms;
	int repeat;
	const char *sep;     /* CSV separator or NULL */
	bool json;
	const char *outfile;
	bool append;
	long delay_ms;
	long timeout_ms;
	bool quiet;
	bool big_num;
	int verbose;
	char **argv;         /* workload or NULL */
	FILE *out;
};

/* Per (evsel, key) statistics across -r runs (Welford). */
struct rstat {
	int n;
	double mean, m2;
	double ena, run;          /* mean enabled / running times of the counted runs */
	struct pk_count last;
};

struct run_state {
	struct pk_evlist *el;
	struct pk_aggr_key *keys;
	int nkeys;
	struct rstat *stats;      /* [evsel][key] */
	int nev;
	struct rstat wall;        /* elapsed seconds across runs */
	uint64_t wall_ns;         /* elapsed of the last run (or of the interval) */
	double ru_user, ru_sys;
	bool use_stats;           /* -r: print means over the runs */
};

static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t signal_from_user;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got_signal = sig;
	/* a terminal's ^C reaches the whole foreground group; a kill(1) reaches only us */
	signal_from_user = si && (si->si_code == SI_USER || si->si_code == SI_QUEUE);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* ---- formatting ---- */

static bool is_clock(struct pk_evsel *ev)
{
	const struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

static bool is_hw(struct pk_evsel *ev, uint64_t config)
{
	const struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
	return a->type == PERF_TYPE_HARDWARE && a->config == config;
}

/*
 * The text form follows the user's LC_NUMERIC as perf's does: its thousands separator
 * ("1,234,567" in en_US, "1.234.567" in de_DE, none in C) and its decimal point. Only
 * while text is printed: CSV and JSON stay in the C locale (perf's break there), and
 * nothing else (number parsing) sees it.
 */
static bool text_locale_begin(const struct stat_opts *o)
{
	/* (setlocale, not newlocale + uselocale: glibc 2.36's newlocale loses its copy of
	 * LOCPATH; NULL when the locale is not installed: the C locale stays) */
	if (o->sep || o->json)
		return false;
	return setlocale(LC_NUMERIC, "") != NULL;
}

static void text_locale_end(bool switched)
{
	if (switched)
		setlocale(LC_NUMERIC, "C");
}

static void fmt_group(char *buf, size_t len, double v, bool big)
{
	snprintf(buf, len, big ? "%'.0f" : "%.0f", v < 0 ? 0 : v);
}

struct metric {
	bool has;
	double val;
	char unit[32];
	const char *fmt;   /* printf for the value (human output) */
};

/* Metrics perf shows beside a count, from the other counts of the same key. */
static void compute_metric(struct pk_evsel *ev, double val, double clock_ns, double cycles,
			   double branches, uint64_t wall_ns, struct metric *m)
{
	memset(m, 0, sizeof(*m));
	m->fmt = "%8.3f";
	if (is_clock(ev)) {
		if (wall_ns) {
			m->has = true;
			m->val = val / (double)wall_ns;
			snprintf(m->unit, sizeof(m->unit), "CPUs utilized");
		}
		return;
	}
	if (is_hw(ev, PERF_COUNT_HW_CPU_CYCLES) && clock_ns > 0) {
		m->has = true;
		m->val = val / clock_ns;
		snprintf(m->unit, sizeof(m->unit), "GHz");
		return;
	}
	if (is_hw(ev, PERF_COUNT_HW_INSTRUCTIONS) && cycles > 0) {
		m->has = true;
		m->val = val / cycles;
		m->fmt = "%8.2f";
		snprintf(m->unit, sizeof(m->unit), " insn per cycle");
		return;
	}
	if (is_hw(ev, PERF_COUNT_HW_BRANCH_MISSES) && branches > 0) {
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
			pk_json_str(f, id);
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
	default:
		break;
	}
}

/* One counter line. `val` is the (mean) scaled value; noise < 0 means "no -r". */
static void print_line(struct stat_opts *o, struct pk_evlist *el, const struct pk_aggr_key *k,
		       struct pk_evsel *ev, const struct pk_count *c, double val, double noise,
		       const struct metric *m, double ts)
{
	FILE *f = o->out;
	const char *name = pk_evsel__name(ev);
	bool clock = is_clock(ev);
	const char *unit = clock ? "msec" : (pk_evsel__unit(ev) ? pk_evsel__unit(ev) : "");
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
		pk_json_str(f, unit);
		fputs(", \"event\" : ", f);
		pk_json_str(f, name);
		if (noise >= 0)
			fprintf(f, ", \"variance\" : %.2f", noise);
		fprintf(f, ", \"event-runtime\" : %" PRIu64 ", \"pcnt-running\" : %.2f, ",
			c->run, pct);
		fprintf(f, "\"metric-value\" : %f, \"metric-unit\" : ", counted && m->has ? m->val : 0.0);
		pk_json_str(f, counted && m->has ? m->unit : "");
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
		fprintf(f, "%18s %-4s %-32s%28s\n", bad, unit, name, "");
		return;
	}
	if (clock)
		snprintf(num, sizeof(num), o->big_num ? "%'.2f" : "%.2f", shown);
	else
		fmt_group(num, sizeof(num), shown, o->big_num);
	fprintf(f, "%18s %-4s %-32s", num, unit, name);
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

/*
 * Print every counter line of key k. With `delta`, the counts since the last
 * pk_evlist__save_counts (interval mode); with st->runs > 1 the means over the runs.
 */
static void print_key(struct stat_opts *o, struct run_state *st, int ki, struct pk_evsel *only,
		      unsigned flags, double ts)
{
	struct pk_evlist *el = st->el;
	const struct pk_aggr_key *k = &st->keys[ki];
	double clock_ns = 0, cycles = 0, branches = 0;
	bool repeat = st->use_stats;
	struct pk_evsel *ev;

	/* the values metrics refer to: the first clock, cycles and branches counts */
	pk_evlist__for_each_evsel(el, ev) {
		struct rstat *r = &st->stats[evsel_index(el, ev) * st->nkeys + ki];
		struct pk_count c;
		double v;
		if (repeat) {
			c = r->last;
			v = r->mean;
		} else {
			pk_evsel__aggregate(ev, o->aggr, k, flags, &c);
			v = (double)c.val;
		}
		if (c.status != PK_COUNT_OK && c.status != PK_COUNT_SCALED)
			continue;
		if (is_clock(ev) && clock_ns == 0)
			clock_ns = v;
		else if (is_hw(ev, PERF_COUNT_HW_CPU_CYCLES) && cycles == 0)
			cycles = v;
		else if (is_hw(ev, PERF_COUNT_HW_BRANCH_INSTRUCTIONS) && branches == 0)
			branches = v;
	}
	pk_evlist__for_each_evsel(el, ev) {
		struct rstat *r = &st->stats[evsel_index(el, ev) * st->nkeys + ki];
		struct pk_count c;
		struct metric m;
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
			v = (double)c.val;
		}
		/* with -r the mean count over the mean elapsed time: perf divides the means */
		compute_metric(ev, v, clock_ns, cycles, branches,
			       repeat ? (uint64_t)(st->wall.mean * 1e9 + 0.5) : st->wall_ns, &m);
		print_line(o, el, k, ev, &c, v, noise, &m, ts);
	}
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
		pk_tool_error("out of memory");
		return;
	}
	pk_evlist__for_each_evsel(st->el, ev) {
		int n = 0;
		for (int ki = 0; ki < st->nkeys; ki++) {
			struct pk_count c;
			pk_evsel__aggregate(ev, o->aggr, &st->keys[ki], flags, &c);
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

static void print_counts_locale(struct stat_opts *o, struct run_state *st, unsigned flags,
				double ts);

static void print_counts(struct stat_opts *o, struct run_state *st, unsigned flags, double ts)
{
	bool prev = text_locale_begin(o);
	print_counts_locale(o, st, flags, ts);
	text_locale_end(prev);
}

static void print_counts_locale(struct stat_opts *o, struct run_state *st, unsigned flags,
				double ts)
{
	if (o->aggr == PK_AGGR_CORE || o->aggr == PK_AGGR_SOCKET || o->aggr == PK_AGGR_GLOBAL) {
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

static void print_header(struct stat_opts *o, int runs)
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

static void print_footer(struct stat_opts *o, struct run_state *st)
{
	FILE *f = o->out;
	struct pk_evsel *ev;
	char names[256] = "";
	size_t nl = 0;
	bool hw_missing = false;

	if (o->sep || o->json)
		return;
	if (st->use_stats) {
		double sd = st->wall.n > 1 ? sqrt(st->wall.m2 / (st->wall.n - 1) / st->wall.n) : 0;
		double pct = st->wall.mean > 0 ? 100.0 * sd / st->wall.mean : 0.0;
		/* two digits past the first significant one of the error, as perf */
		int prec = (sd > 1 || sd <= 0 ? 0 : (int)lround(ceil(-log10(sd)))) + 2;
		fprintf(f, "\n%18.*f +- %.*f seconds time elapsed", prec, st->wall.mean, prec, sd);
		if (pct > 0)
			fprintf(f, "  ( +-%6.2f%% )", pct);
		fputs("\n\n", f);
	} else {
		fprintf(f, "\n%18.9f seconds time elapsed\n\n", (double)st->wall_ns / 1e9);
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

/* ---- opening ---- */

static void print_attr_cb(const struct pk_evsel *ev, const struct perf_event_attr *a, pid_t pid,
			  int cpu, int group_fd, unsigned long flags, int fd, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "perfkit stat: open %s: type %u size %u config %#llx read_format %#llx "
			"disabled %u inherit %u enable_on_exec %u exclude_user %u exclude_kernel %u "
			"exclude_hv %u pinned %u exclusive %u; pid %d cpu %d group_fd %d flags %#lx"
			" = %d%s%s\n",
		pk_evsel__name(ev), a->type, a->size, (unsigned long long)a->config,
		(unsigned long long)a->read_format, a->disabled, a->inherit, a->enable_on_exec,
		a->exclude_user, a->exclude_kernel, a->exclude_hv, a->pinned, a->exclusive,
		(int)pid, cpu, group_fd, flags, fd, fd < 0 ? " " : "",
		fd < 0 ? pk_strerror(fd) : "");
}

static void report_open_failure(struct pk_evlist *el, int err)
{
	struct perf_event_attr attr;
	pid_t pid = -1;
	int cpu = -1, group_fd = -1;
	char buf[1024];
	const struct pk_evsel *ev = pk_evlist__open_failure(el, &pid, &cpu, &group_fd, &attr);
	if (!ev) {
		pk_tool_error("cannot open the counters: %s", pk_strerror(err));
		return;
	}
	PK_OPTS(pk_open_ctx, ctx, .attr = &attr, .pid = pid, .cpu = cpu, .group_fd = group_fd,
		.event_name = pk_evsel__name(ev));
	pk_explain_open_error(buf, sizeof(buf), err, &ctx);
	pk_tool_error("cannot open '%s': %s", pk_evsel__name(ev), buf);
}

/* Every thread of every process in /proc (a process that ends meanwhile is left out). */
static struct pk_thread_map *all_threads(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t *tids = NULL;
	size_t n = 0, cap = 0;
	struct pk_thread_map *m;

	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || pid <= 0 || pid > INT_MAX)
			continue;
		int err = pk_tool_add_threads_of((pid_t)pid, &tids, &n, &cap);
		if (err == -ENOMEM) {
			free(tids);
			closedir(d);
			errno = ENOMEM;
			return NULL;
		} /* other errors: gone since readdir */
	}
	closedir(d);
	if (!n) {
		free(tids);
		errno = ESRCH;
		return NULL;
	}
	m = pk_thread_map__new_array(tids, (int)n);
	free(tids);
	return m;
}

static struct pk_evlist *build_evlist(struct stat_opts *o, pid_t child)
{
	struct pk_evlist *el = pk_evlist__new();
	struct pk_cpu_map *cpus = NULL;
	struct pk_thread_map *threads = NULL;
	int err;

	if (!el || (err = pk_evlist__add_events(el, o->events)) < 0) {
		pk_tool_error("cannot set up the events: %s", strerror(errno));
		pk_evlist__free(el);
		return NULL;
	}
	switch (o->target) {
	case T_WORKLOAD:
		cpus = pk_cpu_map__new_dummy();
		threads = pk_thread_map__new_array(&child, 1);
		break;
	case T_PID:
	case T_TID:
		cpus = pk_cpu_map__new_dummy();
		threads = pk_tool_threads_of_pids(o->target == T_PID ? o->pid_list : o->tid_list,
					  o->target == T_PID);
		if (!threads) {
			pk_tool_error("cannot find %s '%s': %s",
				      o->target == T_PID ? "process" : "thread",
				      o->target == T_PID ? o->pid_list : o->tid_list,
				      errno == ESRCH ? "No such process" : pk_strerror(errno));
			pk_cpu_map__free(cpus);
			pk_evlist__free(el);
			return NULL;
		}
		break;
	case T_CPU:
		if (o->aggr == PK_AGGR_THREAD) {
			/* --per-thread -a: every thread there is now, each counted wherever it
			 * runs (and its children through inherit), as perf does */
			cpus = pk_cpu_map__new_dummy();
			threads = all_threads();
			if (!threads) {
				pk_tool_error("cannot list the threads in /proc: %s", strerror(errno));
				pk_cpu_map__free(cpus);
				pk_evlist__free(el);
				return NULL;
			}
			break;
		}
		cpus = o->cpu_list ? pk_cpu_map__new(o->cpu_list) : pk_cpu_map__new_online(NULL);
		if (!cpus) {
			pk_tool_error("invalid CPU list '%s'", o->cpu_list ? o->cpu_list : "online");
			pk_evlist__free(el);
			return NULL;
		}
		threads = pk_thread_map__new_dummy();
		break;
	}
	if (pk_evlist__set_maps(el, cpus, threads) < 0) {
		pk_tool_error("cannot set up the targets: %s", strerror(errno));
		pk_evlist__free(el);
		return NULL;
	}
	/* names now, while the threads exist (one that ends before the report keeps it) */
	if (o->aggr == PK_AGGR_THREAD)
		for (int i = 0; i < pk_thread_map__nr(threads); i++)
			pk_thread_map__comm(threads, i);
	return el;
}

/* ---- one run ---- */

static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static bool pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

static int setup_run_state(struct stat_opts *o, struct run_state *st)
{
	int n = pk_evlist__aggr_keys(st->el, o->aggr, NULL, 0);
	if (n <= 0)
		return -1;
	if (!st->keys) {
		st->keys = calloc((size_t)n, sizeof(*st->keys));
		st->nkeys = n;
		st->nev = pk_evlist__nr_evsels(st->el);
		st->stats = calloc((size_t)(n * st->nev), sizeof(*st->stats));
		if (!st->keys || !st->stats)
			return -1;
	}
	/* keys may only shrink between runs (threads of a command are always one key) */
	if (n > st->nkeys)
		n = st->nkeys;
	n = pk_evlist__aggr_keys(st->el, o->aggr, st->keys, (size_t)n);
	if (n <= 0)
		return -1;
	if (n < st->nkeys)
		st->nkeys = n;
	return 0;
}

static void add_stat(struct rstat *r, double x)
{
	double d;
	r->n++;
	d = x - r->mean;
	r->mean += d / r->n;
	r->m2 += d * (x - r->mean);
}

static void accumulate(struct stat_opts *o, struct run_state *st)
{
	int i = 0;
	struct pk_evsel *ev;
	pk_evlist__for_each_evsel(st->el, ev) {
		for (int ki = 0; ki < st->nkeys; ki++) {
			struct rstat *r = &st->stats[i * st->nkeys + ki];
			struct pk_count c;
			pk_evsel__aggregate(ev, o->aggr, &st->keys[ki], 0, &c);
			if (c.status == PK_COUNT_OK || c.status == PK_COUNT_SCALED) {
				add_stat(r, (double)c.val);
				r->ena += ((double)c.ena - r->ena) / r->n;
				r->run += ((double)c.run - r->run) / r->n;
			}
			if (r->n == 0 || c.status == PK_COUNT_OK || c.status == PK_COUNT_SCALED)
				r->last = c;
		}
		i++;
	}
	add_stat(&st->wall, (double)st->wall_ns / 1e9);
}

/*
 * Open, run/wait, read. Returns the exit status for the command line (the child's status,
 * 127 for exec failure, 1 for our own errors); *counted is false when nothing ran (then
 * no counters are printed).
 */
static int run_once(struct stat_opts *o, struct run_state *st, int run_idx, bool *counted)
{
	struct pk_workload *w = NULL;
	pid_t child = -1;
	int err, status = 0, wstatus = 0, pfd = -1;
	bool child_done = false, stopped_by_us = false, enabled;
	uint64_t t0, t_end = 0, t_enable = 0, next_tick = 0, last_tick;
	PK_OPTS(pk_evlist_open_opts, oo, .skip_unsupported = true, .cgroup_fd = -1,
		.user_fallback = true);

	*counted = false;
	if (o->argv) {
		w = pk_workload__prepare(o->argv);
		if (!w) {
			pk_tool_error("cannot start '%s': %s", o->argv[0], strerror(errno));
			return 1;
		}
		child = pk_workload__pid(w);
	}
	st->el = build_evlist(o, child);
	if (!st->el) {
		pk_workload__free(w);
		return 1;
	}
	oo.inherit = !o->no_inherit;
	/* threads of -p or of the whole system may end between the listing and the open */
	oo.skip_missing_threads = o->target == T_PID || (o->target == T_CPU &&
							 o->aggr == PK_AGGR_THREAD);
	oo.enable_on_exec = o->target == T_WORKLOAD && o->delay_ms == 0;
	oo.on_open = o->verbose ? print_attr_cb : NULL;
	if (o->cgroup) {
		oo.cgroup_fd = pk_tool_open_cgroup(o->cgroup);
		if (oo.cgroup_fd < 0) {
			pk_workload__free(w);
			return 1;
		}
	}
	err = pk_evlist__open(st->el, &oo);
	if (err == -EMFILE && pk_tool_raise_nofile())
		err = pk_evlist__open(st->el, &oo);
	if (oo.cgroup_fd >= 0)
		close(oo.cgroup_fd);
	if (err < 0) {
		report_open_failure(st->el, err);
		pk_workload__free(w);
		return 1;
	}
	if (setup_run_state(o, st) < 0) {
		pk_tool_error("out of memory");
		pk_workload__free(w);
		return 1;
	}
	if (run_idx == 0 && o->interval_ms && !o->sep && !o->json && !o->quiet &&
	    o->aggr == PK_AGGR_GLOBAL)
		fprintf(o->out, "#           time             counts unit events\n");

	t0 = now_ns();
	enabled = oo.enable_on_exec;
	bool cg = o->cgroup != NULL;
	if (o->delay_ms > 0)
		t_enable = t0 + (uint64_t)o->delay_ms * 1000000ULL;
	else if (!enabled) {
		pk_evlist__enable(st->el);
		if (cg)
			cgroup_kick(st->el);
		enabled = true;
	}
	if (w) {
		err = pk_workload__start(w);
		if (err < 0) {
			/* the shell's convention: 127 for "command not found / not runnable" */
			pk_tool_error("cannot run '%s': %s", o->argv[0], strerror(-err));
			pk_workload__free(w);
			return 127;
		}
		pfd = pidfd_of(child);
	} else if (o->target == T_PID) {
		pid_t p = (pid_t)atoi(o->pid_list);
		pfd = pidfd_of(p);
	}
	if (o->timeout_ms > 0)
		t_end = t0 + (uint64_t)o->timeout_ms * 1000000ULL;
	if (o->interval_ms > 0)
		next_tick = t0 + (uint64_t)o->interval_ms * 1000000ULL;
	last_tick = t0;

	for (;;) {
		uint64_t now = now_ns(), wake = UINT64_MAX;
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		int timeout = -1, r;

		if (t_enable && !enabled && now >= t_enable) {
			pk_evlist__enable(st->el);
			if (cg)
				cgroup_kick(st->el);
			enabled = true;
		}
		if (next_tick && now >= next_tick) {
			pk_evlist__read(st->el);
			/* "CPUs utilized" of an interval is over its nominal length, as perf's */
			st->wall_ns = (uint64_t)o->interval_ms * 1000000ULL;
			if (!o->quiet)
				print_counts(o, st, PK_AGGR_DELTA, (double)(now - t0) / 1e9);
			fflush(o->out);
			pk_evlist__save_counts(st->el);
			last_tick = now;
			next_tick += (uint64_t)o->interval_ms * 1000000ULL;
			if (next_tick <= now)
				next_tick = now + (uint64_t)o->interval_ms * 1000000ULL;
			continue;
		}
		if (t_end && now >= t_end) {
			stopped_by_us = true;
			break;
		}
		if (got_signal)
			break;
		if (w && pfd < 0) {
			/* no pidfd: fall back to polling the child */
			if (pk_workload__wait(w, false, &wstatus) == 0) {
				child_done = true;
				break;
			}
			wake = now + 20000000ULL;
		} else if (o->target == T_TID && !pid_alive((pid_t)atoi(o->tid_list))) {
			break;
		} else if (o->target == T_PID && pfd < 0 && !pid_alive((pid_t)atoi(o->pid_list))) {
			break; /* no pidfd (kernel < 5.3, valgrind): -p polls like -t */
		} else if (o->target == T_TID || (o->target == T_PID && pfd < 0)) {
			wake = now + 100000000ULL;
		}
		if (t_enable && !enabled && t_enable < wake)
			wake = t_enable;
		if (next_tick && next_tick < wake)
			wake = next_tick;
		if (t_end && t_end < wake)
			wake = t_end;
		if (wake != UINT64_MAX)
			timeout = (int)((wake - now + 999999) / 1000000);
		r = poll(&p, pfd >= 0 ? 1 : 0, timeout);
		if (r > 0 && (p.revents & (POLLIN | POLLHUP))) {
			if (w) {
				while (pk_workload__wait(w, true, &wstatus) == -EINTR)
					;
				child_done = true;
			}
			break; /* -p target ended */
		}
	}
	if (w && !child_done) {
		/* stopped by a signal or --timeout: end the command, then report */
		if (stopped_by_us)
			pk_workload__kill(w, SIGTERM);
		else if (got_signal && (signal_from_user || got_signal != SIGINT))
			pk_workload__kill(w, got_signal);
		while (pk_workload__wait(w, true, &wstatus) == -EINTR)
			;
		child_done = true;
	}
	st->wall_ns = now_ns() - t0;
	*counted = true;
	if (pfd >= 0)
		close(pfd);
	pk_evlist__read(st->el);
	if (w) {
		struct rusage ru;
		if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
			st->ru_user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
			st->ru_sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		}
		status = stopped_by_us ? 0 : pk_wait_status__exit_code(wstatus);
		if (WIFSIGNALED(wstatus) && !stopped_by_us)
			pk_tool_error("'%s' was killed by signal %d (%s)", o->argv[0],
				      WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
		pk_workload__free(w);
	}
	if (o->interval_ms > 0) {
		/* the last, partial interval */
		uint64_t now = now_ns();
		if (now - last_tick >= 1000000ULL && !o->quiet) {
			/* perf divides this one by the -I length too (not by its own) */
			st->wall_ns = (uint64_t)o->interval_ms * 1000000ULL;
			print_counts(o, st, PK_AGGR_DELTA, (double)(now - t0) / 1e9);
		}
	}
	return status;
}

/* ---- options ---- */

enum {
	OPT_PER_THREAD = 256, OPT_PER_CORE, OPT_PER_SOCKET, OPT_APPEND, OPT_TIMEOUT,
	OPT_NO_BIG_NUM,
};

static const struct pk_tool_opt opts[] = {
	{ 'e', "event", required_argument, "<spec>",
	  "events to count (repeatable; comma lists; {groups});\ndefault: task-clock, context-switches, cpu-migrations,\npage-faults, cycles, instructions, branches, branch-misses" },
	{ 'p', "pid", required_argument, "<pid,...>", "count existing processes (all their threads)" },
	{ 't', "tid", required_argument, "<tid,...>", "count existing threads" },
	{ 'a', "all-cpus", no_argument, NULL, "system-wide: every online CPU" },
	{ 'C', "cpu", required_argument, "<list>", "system-wide on these CPUs (\"0-3,6\")" },
	{ 'G', "cgroup", required_argument, "<name>", "count only tasks of this cgroup (with -a or -C)" },
	{ 'A', "no-aggr", no_argument, NULL, "one line per CPU" },
	{ OPT_PER_THREAD, "per-thread", no_argument, NULL,
	  "one line per thread, largest first (with -p, -t or -a)" },
	{ OPT_PER_CORE, "per-core", no_argument, NULL, "one line per physical core" },
	{ OPT_PER_SOCKET, "per-socket", no_argument, NULL, "one line per socket" },
	{ 'i', "no-inherit", no_argument, NULL, "do not count children created later" },
	{ 'I', "interval-print", required_argument, "<ms>", "print the counts of every interval, timestamped" },
	{ 'r', "repeat", required_argument, "<n>",
	  "run the command n times; print means and +- relative\nstddev" },
	{ 'x', "field-separator", required_argument, "<sep>",
	  "CSV: value,unit,event,run time,percentage,metric,unit" },
	{ 'j', "json-output", no_argument, NULL, "one JSON object per counter line" },
	{ 'j', "json", no_argument, NULL, NULL },
	{ 'o', "output", required_argument, "<file>", "write the counts to <file> instead of stderr" },
	{ OPT_APPEND, "append", no_argument, NULL, "append to the --output file" },
	{ 'D', "delay", required_argument, "<ms>", "start counting <ms> after the command started" },
	{ OPT_TIMEOUT, "timeout", required_argument, "<ms>", "stop after <ms> (the command is sent SIGTERM)" },
	{ 'B', "big-num", no_argument, NULL,
	  "the locale's thousands separators (default);\n--no-big-num turns them off" },
	{ OPT_NO_BIG_NUM, "no-big-num", no_argument, NULL, NULL },
	{ 'q', "quiet", no_argument, NULL, "print no counts" },
	{ 'v', "verbose", no_argument, NULL,
	  "show every perf_event_open (attr, pid, cpu, group_fd,\nflags)" },
	{ 0 },
};

const struct pk_tool_help cmd_stat_help = {
	.synopsis = "usage: perfkit stat [<options>] [--] [<command> [<args>]]\n",
	.intro = "Count events while <command> runs (or for -p/-t/-a/-C/-G targets until Ctrl-C,\n"
		 "--timeout or the end of <command>), then print the totals.\n",
	.opts = opts,
	.outro = "The exit status is the command's (128 + signal if a signal killed it); 127 if it could\n"
		 "not be executed.\n",
};

static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static int add_events(struct stat_opts *o, const char *spec)
{
	struct pk_parse_error pe = { .column = -1 };
	if (pk_event_list__parse(o->events, spec, NULL, &pe) < 0) {
		if (pe.msg[0])
			pk_tool_error("invalid event '%s': %s", spec, pe.msg);
		else
			pk_tool_error("invalid event '%s': %s", spec, pk_strerror(errno));
		return -1;
	}
	return 0;
}

/* Returns -1 to continue, or an exit status. */
static int parse_args(struct stat_opts *o, int argc, char **argv)
{
	long v;
	int c, nevents = 0;

	opterr = 0;
	optind = 1;
	while ((c = pk_tool_getopt(argc, argv, opts, PK_OPT_STOP_AT_ARG)) != -1) {
		switch (c) {
		case 'e':
			if (add_events(o, optarg) < 0)
				return 129;
			nevents++;
			break;
		case 'p': o->pid_list = optarg; break;
		case 't': o->tid_list = optarg; break;
		case 'a': o->system_wide = true; break;
		case 'C': o->cpu_list = optarg; o->system_wide = true; break;
		case 'G': o->cgroup = optarg; break;
		case 'A': o->aggr = PK_AGGR_CPU; break;
		case OPT_PER_THREAD: o->aggr = PK_AGGR_THREAD; break;
		case OPT_PER_CORE: o->aggr = PK_AGGR_CORE; break;
		case OPT_PER_SOCKET: o->aggr = PK_AGGR_SOCKET; break;
		case 'i': o->no_inherit = true; break;
		case 'I':
			if (!parse_long(optarg, 1, 86400000, &o->interval_ms)) {
				pk_tool_error("invalid interval '%s' (milliseconds, >= 1)", optarg);
				return 129;
			}
			break;
		case 'r':
			if (!parse_long(optarg, 1, 100000, &v)) {
				pk_tool_error("invalid repeat count '%s'", optarg);
				return 129;
			}
			o->repeat = (int)v;
			break;
		case 'x': o->sep = optarg; break;
		case 'j': o->json = true; break;
		case 'o': o->outfile = optarg; break;
		case OPT_APPEND: o->append = true; break;
		case 'D':
			if (!parse_long(optarg, 0, 86400000, &o->delay_ms)) {
				pk_tool_error("invalid delay '%s' (milliseconds)", optarg);
				return 129;
			}
			break;
		case OPT_TIMEOUT:
			if (!parse_long(optarg, 1, 86400000L * 30, &o->timeout_ms)) {
				pk_tool_error("invalid timeout '%s' (milliseconds)", optarg);
				return 129;
			}
			break;
		case 'B': o->big_num = true; break;
		case OPT_NO_BIG_NUM: o->big_num = false; break;
		case 'q': o->quiet = true; break;
		case 'v': o->verbose++; break;
		default:
			if (optopt && optopt < 256)
				pk_tool_error("unknown or incomplete option '-%c'; see 'perfkit stat --help'",
					      optopt);
			else
				pk_tool_error("unknown or incomplete option '%s'; see 'perfkit stat --help'",
					      argv[optind - 1]);
			return 129;
		}
	}
	if (!nevents && add_events(o, DEFAULT_EVENTS) < 0)
		return 1;
	o->argv = optind < argc ? argv + optind : NULL;
	if ((o->pid_list != NULL) + (o->tid_list != NULL) + o->system_wide > 1) {
		pk_tool_error("-p, -t and -a/-C are mutually exclusive");
		return 129;
	}
	if (o->pid_list)
		o->target = T_PID;
	else if (o->tid_list)
		o->target = T_TID;
	else if (o->system_wide)
		o->target = T_CPU;
	else if (o->argv)
		o->target = T_WORKLOAD;
	else {
		pk_tool_error("nothing to count: give a command, -p, -t, -a or -C; see "
			      "'perfkit stat --help'");
		return 129;
	}
	if (o->cgroup && o->target != T_CPU) {
		pk_tool_error("-G counts a cgroup on CPUs: use it with -a or -C");
		return 129;
	}
	if (o->aggr == PK_AGGR_THREAD &&
	    !(o->target == T_PID || o->target == T_TID || (o->target == T_CPU && !o->cpu_list))) {
		/* perf refuses it too: a command's threads are not known before it runs */
		pk_tool_error("--per-thread lists the threads of -p or -t targets, or of the whole "
			      "system with -a (not -C, not a command alone): add -p PID, -t TID or "
			      "-a");
		return 129;
	}
	if (o->aggr == PK_AGGR_THREAD && o->cgroup) {
		pk_tool_error("--per-thread does not mix with -G: count the cgroup with -a, or "
			      "its processes with -p");
		return 129;
	}
	if ((o->aggr == PK_AGGR_CPU || o->aggr == PK_AGGR_CORE || o->aggr == PK_AGGR_SOCKET) &&
	    o->target != T_CPU) {
		pk_tool_error("-A, --per-core and --per-socket need -a or -C");
		return 129;
	}
	if (o->repeat > 1 && (o->target != T_WORKLOAD || o->interval_ms)) {
		pk_tool_error("-r repeats a command: it needs one and does not mix with -I or "
			      "-p/-t/-a");
		return 129;
	}
	if (o->sep && o->json) {
		pk_tool_error("-x and -j are mutually exclusive");
		return 129;
	}
	if (o->append && !o->outfile) {
		pk_tool_error("--append needs -o FILE");
		return 129;
	}
	return -1;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { .aggr = PK_AGGR_GLOBAL, .repeat = 1, .big_num = true };
	struct run_state st = { 0 };
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	int status = 0, r;

	pk_tool_setup_log(0);
	o.events = pk_event_list__new();
	if (!o.events) {
		pk_tool_error("out of memory");
		return 1;
	}
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			pk_tool_setup_log(1);
	r = parse_args(&o, argc, argv);
	if (r >= 0) {
		pk_event_list__free(o.events);
		return r;
	}
	o.out = stderr;
	if (o.outfile) {
		o.out = fopen(o.outfile, o.append ? "ae" : "we");
		if (!o.out) {
			pk_tool_error("cannot open '%s': %s", o.outfile, strerror(errno));
			pk_event_list__free(o.events);
			return 1;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	st.use_stats = o.repeat > 1;
	for (int run = 0; run < o.repeat; run++) {
		bool counted;
		status = run_once(&o, &st, run, &counted);
		if (!counted) {
			/* could not run (nothing was counted): no counters printed */
			pk_evlist__free(st.el);
			st.el = NULL;
			goto out;
		}
		if (o.repeat > 1)
			accumulate(&o, &st);
		if (run + 1 < o.repeat && !got_signal) {
			pk_evlist__free(st.el);
			st.el = NULL;
		} else {
			break;
		}
	}
	if (!o.quiet && !o.interval_ms) {
		bool prev = text_locale_begin(&o);
		print_header(&o, o.repeat > 1 ? st.wall.n : 1);
		print_counts_locale(&o, &st, 0, -1);
		print_footer(&o, &st);
		text_locale_end(prev);
	}
out:
	pk_evlist__free(st.el);
	free(st.keys);
	free(st.stats);
	pk_event_list__free(o.events);
	if (o.out && o.out != stderr) {
		if (fclose(o.out) != 0) {
			pk_tool_error("cannot write '%s': %s", o.outfile, strerror(errno));
			return status ? status : 1;
		}
	} else if (fflush(stderr) != 0 || ferror(stderr)) {
		/* the counts went nowhere (stderr on a full disk): nothing more can be said,
		 * but the exit status must not claim success */
		return status ? status : 1;
	}
	return pk_tool_finish_stdout(status);
}
