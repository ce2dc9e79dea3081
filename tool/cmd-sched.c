/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-sched.c - `perfkit sched`: record the scheduler tracepoints system-wide
 * (record, through `perfkit record`), and read them back (latency, timehist, map) through
 * pk_sched, the library's state machine. Files of `perf sched record` are read too.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

#define bad(...) (tool_error(__VA_ARGS__), 129)

enum { OPT_IDLE = 256 };

static const struct tool_opt opts[] = {
	{ 'i', "input", required_argument, "<file>", "the recording (default perf.data)" },
	{ 'o', "output", required_argument, "<file>", "record: the file to write (default perf.data)" },
	{ 's', "sort", required_argument, "<keys>",
	  "latency: sort keys, from avg, max, switch, runtime, pid\n"
	  "(default avg,max,switch,runtime)" },
	{ 'q', "quiet", no_argument, NULL, "record: print nothing but errors" },
	{ 0 },
};

const struct tool_help cmd_sched_help = {
	.synopsis = "usage: perfkit sched record [-o <file>] [[--] <command> [<args>]]\n"
		    "       perfkit sched latency|timehist|map [-i <file>]\n",
	.intro = "record: every CPU's sched_switch, sched_waking/sched_wakeup(_new),\n"
		 "sched_migrate_task and sched_process_* events while <command> runs (or until\n"
		 "Ctrl-C).\n"
		 "latency: per task, run time, switches, average and maximum delay between a wake-up\n"
		 "(or a preemption) and the switch-in.\n"
		 "timehist: one line per context switch: the task switched out, how long it waited,\n"
		 "its scheduling delay and how long it ran.\n"
		 "map: one column per CPU, the task on it at each switch.\n",
	.opts = opts,
};

struct sched_cli {
	const char *input, *output, *sort;
	bool quiet;
	FILE *out;
	/* map */
	int32_t *cur;           /* per CPU: running tid (0 idle, -1 unknown) */
	size_t ncpu;
	struct tag { int32_t tid; char name[3]; } *tags;
	size_t ntags, cap_tags;
};

/* ---- record ---- */

static int do_record(struct sched_cli *c, int argc, char **argv)
{
	static const char *const tps[] = {
		"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new",
		"sched_migrate_task", "sched_process_fork", "sched_process_exit",
		"sched_process_exec",
	};
	char *av[64];
	int n = 0;

	if (!tool_ensure_tracefs()) {
		tool_no_tracefs_error("sched");
		return 1;
	}
	av[n++] = "record";
	av[n++] = "-a";
	av[n++] = "-N";
	if (c->quiet)
		av[n++] = "-q";
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		static char specs[8][48];
		if (pk_tracepoint__id(NULL, "sched", tps[i]) < 0)
			continue;
		snprintf(specs[i], sizeof(specs[i]), "sched:%s", tps[i]);
		av[n++] = "-e";
		av[n++] = specs[i];
	}
	av[n++] = "-c";
	av[n++] = "1";
	av[n++] = "-m";
	av[n++] = "1024";
	av[n++] = "-o";
	av[n++] = (char *)(c->output ? c->output : "perf.data");
	if (argc > 0)
		av[n++] = "--";
	for (int i = 0; i < argc && n < 63; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	return cmd_record(n, av);
}

/* ---- latency ---- */

static int key_cmp(const char *key, const struct pk_sched_task *a, const struct pk_sched_task *b)
{
#define DESC(x, y) ((x) < (y) ? 1 : (x) > (y) ? -1 : 0)
	if (!strcmp(key, "avg")) {
		double x = a->delays ? (double)a->total_delay_ns / (double)a->delays : 0;
		double y = b->delays ? (double)b->total_delay_ns / (double)b->delays : 0;
		return DESC(x, y);
	}
	if (!strcmp(key, "max"))
		return DESC(a->max_delay_ns, b->max_delay_ns);
	if (!strcmp(key, "switch"))
		return DESC(a->switches, b->switches);
	if (!strcmp(key, "runtime"))
		return DESC(a->runtime_ns, b->runtime_ns);
	if (!strcmp(key, "pid"))
		return a->tid < b->tid ? -1 : a->tid > b->tid;
	return 0;
#undef DESC
}

static const char *sort_keys;

static int cmp_task(const void *pa, const void *pb)
{
	const struct pk_sched_task *a = *(const struct pk_sched_task *const *)pa;
	const struct pk_sched_task *b = *(const struct pk_sched_task *const *)pb;
	char keys[128], *save = NULL;
	snprintf(keys, sizeof(keys), "%s", sort_keys);
	for (char *k = strtok_r(keys, ", ", &save); k; k = strtok_r(NULL, ", ", &save)) {
		int r = key_cmp(k, a, b);
		if (r)
			return r;
	}
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static void print_latency(struct sched_cli *c, struct pk_sched *s)
{
	size_t n = pk_sched__nr_tasks(s), k = 0;
	const struct pk_sched_task **v = calloc(n + 1, sizeof(*v));
	uint64_t rt = 0, sw = 0;
	static const char line[] = " ---------------------------------------------------------"
		"------------------------------------------------------------------------------\n";
	if (!v) {
		tool_error("out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pk_sched_task *t = pk_sched__task(s, i);
		if (t->switches || t->runtime_ns)
			v[k++] = t;
	}
	sort_keys = c->sort ? c->sort : "avg,max,switch,runtime";
	qsort(v, k, sizeof(*v), cmp_task);
	fprintf(c->out, "\n%s  %-22s|   Runtime ms  | Switches | Avg delay ms    | Max delay ms    "
		"| Max delay start           | Max delay end          |\n%s", line, "Task", line);
	for (size_t i = 0; i < k; i++) {
		const struct pk_sched_task *t = v[i];
		char name[48];
		snprintf(name, sizeof(name), "%s:%" PRId32, t->comm[0] ? t->comm : ":", t->tid);
		fprintf(c->out, "  %-22s|%11.3f ms |%9" PRIu64 " | avg:%9.3f ms | max:%9.3f ms | "
			"max start: %12.6f s | max end: %12.6f s\n", name,
			(double)t->runtime_ns / 1e6, t->switches,
			t->delays ? (double)t->total_delay_ns / (double)t->delays / 1e6 : 0.0,
			(double)t->max_delay_ns / 1e6, (double)t->max_delay_start / 1e9,
			(double)t->max_delay_end / 1e9);
		rt += t->runtime_ns;
		sw += t->switches;
	}
	fprintf(c->out, "%s  TOTAL:                |%11.3f ms |%9" PRIu64 " |\n"
		" ---------------------------------------------------\n\n", line, (double)rt / 1e6, sw);
	free(v);
}

/* ---- timehist and map: per switch ---- */

static void task_name(char *buf, size_t len, struct pk_sched *s, int32_t tid, const char *comm)
{
	int32_t pid = -1;
	for (size_t i = 0, n = pk_sched__nr_tasks(s); i < n && tid > 0; i++) {
		const struct pk_sched_task *t = pk_sched__task(s, i);
		if (t->tid == tid) {
			pid = t->pid;
			break;
		}
	}
	if (tid <= 0)
		snprintf(buf, len, "<idle>");
	else if (pid > 0 && pid != tid)
		snprintf(buf, len, "%s[%" PRId32 "/%" PRId32 "]", comm, tid, pid);
	else
		snprintf(buf, len, "%s[%" PRId32 "]", comm, tid);
}

struct sw_ctx {
	struct sched_cli *c;
	struct pk_sched *s;
	bool map;
};

static int on_timehist(struct sw_ctx *x, const struct pk_sched_switch *sw)
{
	char name[64];
	task_name(name, sizeof(name), x->s, sw->prev_tid, sw->prev_comm);
	/* truncated, not rounded, as perf prints them */
	fprintf(x->c->out, "%8" PRIu64 ".%06" PRIu64 " [%04" PRIu32 "]  %-30s  %5" PRIu64 ".%03"
		PRIu64 "  %5" PRIu64 ".%03" PRIu64 "  %5" PRIu64 ".%03" PRIu64 "\n",
		sw->time / 1000000000, sw->time % 1000000000 / 1000, sw->cpu, name,
		sw->wait_ns / 1000000, sw->wait_ns % 1000000 / 1000, sw->delay_ns / 1000000,
		sw->delay_ns % 1000000 / 1000, sw->run_ns / 1000000, sw->run_ns % 1000000 / 1000);
	return 0;
}

static const char *tag_of(struct sched_cli *c, int32_t tid, bool *is_new)
{
	*is_new = false;
	for (size_t i = 0; i < c->ntags; i++)
		if (c->tags[i].tid == tid)
			return c->tags[i].name;
	if (c->ntags == c->cap_tags) {
		size_t ncap = c->cap_tags ? c->cap_tags * 2 : 64;
		struct tag *n = realloc(c->tags, ncap * sizeof(*n));
		if (!n)
			return "??";
		c->tags = n;
		c->cap_tags = ncap;
	}
	struct tag *t = &c->tags[c->ntags];
	t->tid = tid;
	t->name[0] = (char)('A' + c->ntags % 26);
	t->name[1] = (char)('0' + (c->ntags / 26) % 10);
	t->name[2] = 0;
	c->ntags++;
	*is_new = true;
	return t->name;
}

static int on_map(struct sw_ctx *x, const struct pk_sched_switch *sw)
{
	struct sched_cli *c = x->c;
	bool is_new = false;
	const char *tag = NULL;

	if (sw->cpu > 4095)
		return 0;
	if (sw->cpu >= c->ncpu) {
		size_t n = (size_t)sw->cpu + 1;
		int32_t *v = realloc(c->cur, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (size_t i = c->ncpu; i < n; i++)
			v[i] = -1;
		c->cur = v;
		c->ncpu = n;
	}
	c->cur[sw->cpu] = sw->next_tid;
	if (sw->next_tid > 0)
		tag = tag_of(c, sw->next_tid, &is_new);
	fputc(' ', c->out);
	for (size_t i = 0; i < c->ncpu; i++) {
		bool is_new_i;
		fputc(i == sw->cpu ? '*' : ' ', c->out);
		if (c->cur[i] > 0)
			fputs(tag_of(c, c->cur[i], &is_new_i), c->out);
		else
			fputs(c->cur[i] == 0 ? ". " : "  ", c->out);
		fputc(' ', c->out);
	}
	fprintf(c->out, "  %15.6f secs", (double)sw->time / 1e9);
	if (is_new)
		fprintf(c->out, " %s => %s:%" PRId32, tag, sw->next_comm, sw->next_tid);
	fputc('\n', c->out);
	return 0;
}

static int on_switch(void *ctx, const struct pk_sched_switch *sw)
{
	struct sw_ctx *x = ctx;
	return x->map ? on_map(x, sw) : on_timehist(x, sw);
}

static int analyse(struct sched_cli *c, const char *what)
{
	const char *in = c->input ? c->input : "perf.data";
	PK_OPTS(pk_data_reader_opts, ro, .no_mmap = !tool_read_mmap());
	struct pk_data_reader *r = pk_data_reader__open(in, &ro);
	struct sw_ctx x = { .c = c, .map = !strcmp(what, "map") };
	bool lat = !strcmp(what, "latency");
	int err, status = 0;

	if (!r) {
		tool_error("cannot open '%s': %s (record one with perfkit sched record)", in,
			   pk_strerror(-errno));
		return 1;
	}
	PK_OPTS(pk_sched_opts, so, .on_switch = lat ? NULL : on_switch, .ctx = &x);
	x.s = pk_sched__new(&so);
	if (!x.s) {
		tool_error("out of memory");
		pk_data_reader__free(r);
		return 1;
	}
	if (!lat && !x.map)
		fprintf(c->out, "%15s %6s  %-30s  %9s  %9s  %9s\n%15s %6s  %-30s  %9s  %9s  %9s\n"
			"--------------- ------  ------------------------------  ---------  "
			"---------  ---------\n", "time", "cpu", "task name", "wait time",
			"sch delay", "run time", "", "", "[tid/pid]", "(msec)", "(msec)", "(msec)");
	err = pk_sched__process(x.s, r);
	if (err == -ENOENT) {
		tool_error("'%s' has no sched:sched_switch events (record them with perfkit sched "
			   "record or perf sched record)", in);
		status = 1;
	} else if (err < 0) {
		tool_error("cannot read '%s': %s", in, pk_strerror(err));
		status = 1;
	} else if (lat) {
		print_latency(c, x.s);
	}
	if (!status && !pk_sched__wakeup_source(x.s))
		tool_warn("'%s' has no wake-up events (sched_waking, sched_wakeup): delays are "
			  "those of preempted tasks only", in);
	pk_sched__free(x.s);
	pk_data_reader__free(r);
	free(c->cur);
	free(c->tags);
	return status;
}

int cmd_sched(int argc, char **argv)
{
	struct sched_cli c = { .out = stdout };
	const char *what;
	int ch;

	tool_setup_log(0);
	if (argc < 2 || argv[1][0] == '-') {
		tool_error("which analysis? record, latency, timehist or map");
		tool_print_usage(stderr, &cmd_sched_help);
		return 129;
	}
	what = argv[1];
	if (strcmp(what, "record") && strcmp(what, "latency") && strcmp(what, "timehist") &&
	    strcmp(what, "map"))
		return bad("unknown subcommand '%s' (record, latency, timehist or map)", what);
	opterr = 0;
	optind = 1;
	while ((ch = tool_getopt(argc - 1, argv + 1, opts, TOOL_OPT_STOP_AT_ARG)) != -1) {
		switch (ch) {
		case 'i': c.input = optarg; break;
		case 'o': c.output = optarg; break;
		case 's': c.sort = optarg; break;
		case 'q': c.quiet = true; break;
		default:
			tool_error("unknown or incomplete option '%s'", argv[optind]);
			tool_print_usage(stderr, &cmd_sched_help);
			return 129;
		}
	}
	if (!strcmp(what, "record"))
		return do_record(&c, argc - 1 - optind, argv + 1 + optind);
	if (optind < argc - 1)
		return bad("unexpected argument '%s'", argv[optind + 1]);
	return tool_finish_stdout(analyse(&c, what));
}
