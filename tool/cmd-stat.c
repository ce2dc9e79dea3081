/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-stat.c - `perfkit stat`: count events for a command, processes, threads, CPUs
 * or a cgroup and print the totals the way `perf stat` does (text, CSV or JSON).
 *
 * Start-up is kept lean on purpose (the benchmark compares it with perf): the default path
 * parses the event list, forks, opens one fd per event and execs; no sysfs scan, no libpfm
 * initialisation, no tracefs walk unless an event needs them.
 */
#include "stat.h"

volatile sig_atomic_t stat_got_signal;
volatile sig_atomic_t stat_signal_from_user;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	stat_got_signal = sig;
	/* a terminal's ^C reaches the whole foreground group; a kill(1) reaches only us */
	stat_signal_from_user = si && (si->si_code == SI_USER || si->si_code == SI_QUEUE);
}

uint64_t stat_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* ---- options ---- */

enum {
	OPT_PER_THREAD = 256, OPT_PER_CORE, OPT_PER_SOCKET, OPT_APPEND, OPT_TIMEOUT,
	OPT_NO_BIG_NUM, OPT_PRE, OPT_POST, OPT_INTERVAL_COUNT, OPT_INTERVAL_CLEAR, OPT_SUMMARY,
	OPT_TABLE, OPT_LOG_FD,
};

static const struct tool_opt opts[] = {
	{ 'e', "event", required_argument, "<spec>",
	  "events to count (repeatable; comma lists; {groups});\n"
	  "default: task-clock, context-switches, cpu-migrations,\n"
	  "page-faults, cycles, instructions, branches, branch-misses" },
	{ 'p', "pid", required_argument, "<pid,...>",
	  "count existing processes (all their threads)" },
	{ 't', "tid", required_argument, "<tid,...>", "count existing threads" },
	{ 'a', "all-cpus", no_argument, NULL, "system-wide: every online CPU" },
	{ 'C', "cpu", required_argument, "<list>", "system-wide on these CPUs (\"0-3,6\")" },
	{ 'G', "cgroup", required_argument, "<name>",
	  "count only tasks of this cgroup (with -a or -C)" },
	{ 'A', "no-aggr", no_argument, NULL, "one line per CPU" },
	{ OPT_PER_THREAD, "per-thread", no_argument, NULL,
	  "one line per thread, largest first (with -p, -t or -a)" },
	{ OPT_PER_CORE, "per-core", no_argument, NULL, "one line per physical core" },
	{ OPT_PER_SOCKET, "per-socket", no_argument, NULL, "one line per socket" },
	{ 'i', "no-inherit", no_argument, NULL, "do not count children created later" },
	{ 'I', "interval-print", required_argument, "<ms>",
	  "print the counts of every interval, timestamped" },
	{ 'r', "repeat", required_argument, "<n>",
	  "run the command n times; print means and +- relative\nstddev" },
	{ OPT_INTERVAL_COUNT, "interval-count", required_argument, "<n>",
	  "with -I: stop after n intervals (a command still\nruns to its end)" },
	{ OPT_INTERVAL_CLEAR, "interval-clear", no_argument, NULL,
	  "with -I: clear the screen before each interval" },
	{ OPT_SUMMARY, "summary", no_argument, NULL, "with -I: the totals after the intervals" },
	{ OPT_TABLE, "table", no_argument, NULL, "with -r: each run's elapsed time, as a table" },
	{ 'n', "null", no_argument, NULL, "count nothing: the elapsed time only" },
	{ 'S', "sync", no_argument, NULL, "sync() before each run" },
	{ OPT_PRE, "pre", required_argument, "<cmd>",
	  "run <cmd> (sh -c) before each run; its failure stops\nstat with its status" },
	{ OPT_POST, "post", required_argument, "<cmd>", "run <cmd> after each run, likewise" },
	{ 'x', "field-separator", required_argument, "<sep>",
	  "CSV: value,unit,event,run time,percentage,metric,unit" },
	{ 'j', "json-output", no_argument, NULL, "one JSON object per counter line" },
	{ 'j', "json", no_argument, NULL, NULL },
	{ 'o', "output", required_argument, "<file>",
	  "write the counts to <file> instead of stderr" },
	{ OPT_APPEND, "append", no_argument, NULL, "append to the --output file" },
	{ OPT_LOG_FD, "log-fd", required_argument, "<fd>",
	  "write the counts to file descriptor <fd> (opened by\nthe caller) instead of stderr" },
	{ 'D', "delay", required_argument, "<ms>",
	  "start counting <ms> after the command started" },
	{ OPT_TIMEOUT, "timeout", required_argument, "<ms>",
	  "stop after <ms> (the command is sent SIGTERM)" },
	{ 'B', "big-num", no_argument, NULL,
	  "the locale's thousands separators (default);\n--no-big-num turns them off" },
	{ OPT_NO_BIG_NUM, "no-big-num", no_argument, NULL, NULL },
	{ 'q', "quiet", no_argument, NULL, "print no counts" },
	{ 'v', "verbose", no_argument, NULL,
	  "show every perf_event_open (attr, pid, cpu, group_fd,\nflags)" },
	STAT_EXTRA_OPTS,
	{ 0 },
};

const struct tool_help cmd_stat_help = {
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
	char *owned;
	const char *given = spec;
	if (!(spec = stat_extra_spec(o, spec, &owned)))
		return -1;
	/* u:libname:f with -p: the library the process maps */
	PK_OPTS(pk_parse_opts, po, .probe_pid = o->pid_list ? atoi(o->pid_list) : 0);
	int err = pk_event_list__parse(o->events, spec, &po, &pe);
	free(owned);
	if (err < 0) {
		if (pe.msg[0])
			tool_error("invalid event '%s': %s", given, pe.msg);
		else
			tool_error("invalid event '%s': %s", given, pk_strerror(errno));
		return -1;
	}
	return 0;
}

/* Returns -1 to continue, or an exit status. specs has room for argc strings. */
static int parse_opts(struct stat_opts *o, int argc, char **argv, const char **specs)
{
	long v;
	int c, nevents = 0;

	opterr = 0;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, TOOL_OPT_STOP_AT_ARG)) != -1) {
		switch (c) {
		case 'e':
			specs[nevents++] = optarg; /* parsed after -p is known */
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
				tool_error("invalid interval '%s' (milliseconds, >= 1)", optarg);
				return 129;
			}
			break;
		case 'r':
			if (!parse_long(optarg, 1, 100000, &v)) {
				tool_error("invalid repeat count '%s'", optarg);
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
				tool_error("invalid delay '%s' (milliseconds)", optarg);
				return 129;
			}
			break;
		case OPT_TIMEOUT:
			if (!parse_long(optarg, 1, 86400000L * 30, &o->timeout_ms)) {
				tool_error("invalid timeout '%s' (milliseconds)", optarg);
				return 129;
			}
			break;
		case 'B': o->big_num = true; break;
		case OPT_NO_BIG_NUM: o->big_num = false; break;
		case 'q': o->quiet = true; break;
		case 'v': o->verbose++; break;
		case 'n': o->null_run = true; break;
		case 'S': o->sync = true; break;
		case OPT_PRE: o->pre_cmd = optarg; break;
		case OPT_POST: o->post_cmd = optarg; break;
		case OPT_INTERVAL_COUNT:
			if (!parse_long(optarg, 1, 100000000, &o->interval_count)) {
				tool_error("invalid interval count '%s' (>= 1)", optarg);
				return 129;
			}
			break;
		case OPT_INTERVAL_CLEAR: o->interval_clear = true; break;
		case OPT_SUMMARY: o->summary = true; break;
		case OPT_TABLE: o->table = true; break;
		case OPT_LOG_FD:
			if (!parse_long(optarg, 0, INT_MAX, &v) || fcntl((int)v, F_GETFD) < 0) {
				tool_error("--log-fd %s: not an open file descriptor", optarg);
				return 129;
			}
			o->log_fd = (int)v;
			break;
		default:
			if ((v = stat_extra_opt(o, c, optarg, nevents)) != TOOL_OPT_UNKNOWN) {
				if (v)
					return (int)v;
				break;
			}
			if (optopt && optopt < 256)
				tool_error("unknown or incomplete option '-%c'; see 'perfkit stat --help'",
					      optopt);
			else
				tool_error("unknown or incomplete option '%s'; see 'perfkit stat --help'",
					      argv[optind - 1]);
			return 129;
		}
	}
	if (o->null_run && nevents) {
		tool_error("-n counts nothing: it does not mix with -e");
		return 129;
	}
	for (int i = 0; i < nevents; i++) {
		if (add_events(o, specs[i]) < 0)
			return 129;
		stat_extra_spec_added(o, i);
	}
	if (!nevents && !o->null_run && !o->x.metrics && add_events(o, DEFAULT_EVENTS) < 0)
		return 1;
	if (!o->null_run && (v = stat_extra_check(o)) >= 0)
		return (int)v;
	if ((o->interval_count || o->interval_clear || o->summary) && !o->interval_ms) {
		tool_error("--interval-count, --interval-clear and --summary go with -I");
		return 129;
	}
	if (o->table && o->repeat < 2) {
		tool_error("--table shows the runs of -r N (N >= 2)");
		return 129;
	}
	if (o->log_fd >= 0 && o->outfile) {
		tool_error("-o and --log-fd are mutually exclusive");
		return 129;
	}
	o->argv = optind < argc ? argv + optind : NULL;
	if ((o->pid_list != NULL) + (o->tid_list != NULL) + o->system_wide > 1) {
		tool_error("-p, -t and -a/-C are mutually exclusive");
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
		tool_error("nothing to count: give a command, -p, -t, -a or -C; see "
			      "'perfkit stat --help'");
		return 129;
	}
	if (o->cgroup && o->target != T_CPU) {
		tool_error("-G counts a cgroup on CPUs: use it with -a or -C");
		return 129;
	}
	if (o->aggr == PK_AGGR_THREAD &&
	    !(o->target == T_PID || o->target == T_TID || (o->target == T_CPU && !o->cpu_list))) {
		/* perf refuses it too: a command's threads are not known before it runs */
		tool_error("--per-thread lists the threads of -p or -t targets, or of the whole "
			      "system with -a (not -C, not a command alone): add -p PID, -t TID or "
			      "-a");
		return 129;
	}
	if (o->aggr == PK_AGGR_THREAD && o->cgroup) {
		tool_error("--per-thread does not mix with -G: count the cgroup with -a, or "
			      "its processes with -p");
		return 129;
	}
	if (o->aggr != PK_AGGR_GLOBAL && o->aggr != PK_AGGR_THREAD && o->target != T_CPU) {
		tool_error("-A, --per-core, --per-die, --per-socket and --per-node need -a or -C");
		return 129;
	}
	if (o->repeat > 1 && (o->target != T_WORKLOAD || o->interval_ms)) {
		tool_error("-r repeats a command: it needs one and does not mix with -I or "
			      "-p/-t/-a");
		return 129;
	}
	if (o->sep && o->json) {
		tool_error("-x and -j are mutually exclusive");
		return 129;
	}
	if (o->append && !o->outfile && o->log_fd < 0) {
		tool_error("--append needs -o FILE or --log-fd N");
		return 129;
	}
	return -1;
}

/* --pre/--post: the command through sh -c; 0, or the exit status stat ends with (perf
 * stops with the command's status too) */
static int run_hook(struct stat_opts *o, const char *opt, const char *cmd)
{
	fflush(o->out);
	int r = system(cmd);
	if (r == 0)
		return 0;
	if (r < 0) {
		tool_error("%s '%s': %s", opt, cmd, strerror(errno));
		return 1;
	}
	int code = pk_wait_status__exit_code(r);
	tool_error("%s '%s' failed (exit status %d)", opt, cmd, code);
	return code ? code : 1;
}

static int parse_args(struct stat_opts *o, int argc, char **argv)
{
	const char **specs = calloc((size_t)argc + 1, sizeof(*specs));
	if (!specs) {
		tool_error("out of memory");
		return 1;
	}
	int r = parse_opts(o, argc, argv, specs);
	free(specs);
	return r;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { .aggr = PK_AGGR_GLOBAL, .repeat = 1, .big_num = true, .log_fd = -1,
			       .x = { .duration_idx = -1 } };
	struct run_state st = { 0 };
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	int status = 0, r;

	tool_setup_log(0);
	o.events = pk_event_list__new();
	if (!o.events) {
		tool_error("out of memory");
		return 1;
	}
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			tool_setup_log(1);
	r = parse_args(&o, argc, argv);
	if (r >= 0) {
		pk_event_list__free(o.events);
		stat_extra_release(&o);
		return r;
	}
	o.out = stderr;
	if (o.log_fd >= 0) {
		o.out = fdopen(o.log_fd, o.append ? "a" : "w");
		if (!o.out) {
			tool_error("--log-fd %d: %s", o.log_fd, strerror(errno));
			pk_event_list__free(o.events);
			stat_extra_release(&o);
			return 1;
		}
	} else if (o.outfile) {
		o.out = fopen(o.outfile, o.append ? "ae" : "we");
		if (!o.out) {
			tool_error("cannot open '%s': %s", o.outfile, strerror(errno));
			pk_event_list__free(o.events);
			stat_extra_release(&o);
			return 1;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	st.use_stats = o.repeat > 1;
	if (o.table && !(st.walls = calloc((size_t)o.repeat, sizeof(*st.walls)))) {
		tool_error("out of memory");
		status = 1;
		goto out;
	}
	for (int run = 0; run < o.repeat; run++) {
		bool counted;
		if (o.sync)
			sync();
		if (o.pre_cmd && (status = run_hook(&o, "--pre", o.pre_cmd)) != 0)
			goto out;
		status = stat_run_once(&o, &st, run, &counted);
		if (counted && o.post_cmd) {
			int ps = run_hook(&o, "--post", o.post_cmd);
			if (ps) {
				status = ps;
				goto out;
			}
		}
		if (!counted) {
			/* could not run (nothing was counted): no counters printed */
			pk_evlist__free(st.el);
			st.el = NULL;
			goto out;
		}
		if (o.repeat > 1) {
			if (st.walls)
				st.walls[st.wall.n] = (double)st.wall_ns / 1e9;
			stat_accumulate(&o, &st);
		}
		if (run + 1 < o.repeat && !stat_got_signal) {
			pk_evlist__free(st.el);
			st.el = NULL;
		} else {
			break;
		}
	}
	tool_probe_check(o.events);
	if (!o.quiet && (!o.interval_ms || o.summary)) {
		bool prev = stat_text_locale_begin(&o);
		stat_print_header(&o, o.repeat > 1 ? st.wall.n : 1);
		stat_print_counts_locale(&o, &st, 0, -1);
		stat_print_footer(&o, &st);
		stat_text_locale_end(prev);
	}
out:
	pk_evlist__free(st.el);
	free(st.keys);
	free(st.stats);
	free(st.walls);
	pk_event_list__free(o.events);
	stat_extra_release(&o);
	if (o.out && o.out != stderr) {
		if (fclose(o.out) != 0) {
			tool_error("cannot write '%s': %s", o.outfile, strerror(errno));
			return status ? status : 1;
		}
	} else if (fflush(stderr) != 0 || ferror(stderr)) {
		/* the counts went nowhere (stderr on a full disk): nothing more can be said,
		 * but the exit status must not claim success */
		return status ? status : 1;
	}
	return tool_finish_stdout(status);
}
