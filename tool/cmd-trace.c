/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-trace.c - `perfkit trace`: the system calls of a command, processes, threads
 * or the whole system, one line each or summed up (-s), like `perf trace` and `strace`.
 *
 * Live targets are recorded by pk_recorder (raw_syscalls:sys_enter and sys_exit, period
 * 1) in the pipe format into a pipe; a second thread reads the pipe through the session
 * (pk_systrace__process), so the lines come while the command runs and memory stays
 * bounded. `-i FILE` reads a recording through the same path.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "builtin.h"
#include "workload.h"
#include "trace.h"

#define bad(...) (tool_error(__VA_ARGS__), 129)

enum { OPT_DURATION = 256, OPT_FAILURE, OPT_COMM, OPT_NO_COMM };

static const struct tool_opt opts[] = {
	{ 'p', "pid", required_argument, "<pid,...>", "trace existing processes (all threads)" },
	{ 't', "tid", required_argument, "<tid,...>", "trace existing threads" },
	{ 'a', "all-cpus", no_argument, NULL, "system-wide: every process" },
	{ 'i', "input", required_argument, "<file>",
	  "read a recording of raw_syscalls:sys_enter/sys_exit\n"
	  "(perf trace record, perf record -e 'raw_syscalls:*')" },
	{ 'e', "expr", required_argument, "<syscall,...>",
	  "only these system calls; '!a,b': all but these" },
	{ 's', "summary", no_argument, NULL,
	  "per-thread and total sums instead of the calls" },
	{ 'S', "with-summary", no_argument, NULL, "the calls and the summary" },
	{ OPT_DURATION, "duration", required_argument, "<ms>",
	  "only calls that took at least this long" },
	{ OPT_FAILURE, "failure", no_argument, NULL, "only calls that failed" },
	{ OPT_COMM, "comm", no_argument, NULL, "show the command name with the tid (default)" },
	{ OPT_NO_COMM, "no-comm", no_argument, NULL, "show the tid alone" },
	{ 'o', "output", required_argument, "<file>", "write the output to a file" },
	{ 'm', "mmap-pages", required_argument, "<n>",
	  "data pages per ring buffer, a power of two (default 2048)" },
	{ 'F', "pf", required_argument, "<maj|min|all>",
	  "also the page faults: major, minor or both (where\nthey happened and the address)" },
	{ 'v', "verbose", no_argument, NULL, "show every perf_event_open" },
	{ 0 },
};

const struct tool_help cmd_trace_help = {
	.synopsis = "usage: perfkit trace [<options>] [-p <pid> | -t <tid> | -a | [--] <command> [<args>]]\n"
		    "       perfkit trace -i <file> [<options>]\n",
	.intro = "Show the system calls of <command> (or of -p/-t/-a targets until Ctrl-C or until\n"
		 "they exit): time, duration, command/tid, name, arguments, return value, from the\n"
		 "raw_syscalls tracepoints. Strings and structs behind pointers are not read\n"
		 "(tracepoints do not carry them): pointers are shown as numbers.\n",
	.opts = opts,
	.outro = TOOL_WORKLOAD_OUTRO,
};

static int parse_args(struct trace_opts *o, int argc, char **argv)
{
	char *end;
	int c, r;

	opterr = 0;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, TOOL_OPT_STOP_AT_ARG)) != -1) {
		switch (c) {
		case 'p': o->pids = optarg; break;
		case 't': o->tids = optarg; break;
		case 'a': o->system_wide = true; break;
		case 'i': o->input = optarg; break;
		case 'e':
			if ((r = trace_parse_filter(o, optarg)))
				return r;
			break;
		case 's': o->summary = true; break;
		case 'S': o->with_summary = true; break;
		case OPT_DURATION: {
			double ms = strtod(optarg, &end);
			if (*end || !(ms >= 0) || ms > 1e9)
				return bad("invalid --duration '%s' (milliseconds)", optarg);
			o->duration_ns = (uint64_t)(ms * 1e6);
			break;
		}
		case OPT_FAILURE: o->failure = true; break;
		case OPT_COMM: o->comm = true; break;
		case OPT_NO_COMM: o->comm = false; break;
		case 'o': o->output = optarg; break;
		case 'm':
			if (tool_parse_mmap_pages(optarg, &o->mmap_pages))
				return 129;
			break;
		case 'v': o->verbose++; break;
		case 'F':
			if (!strcmp(optarg, "maj"))
				o->faults = TRACE_PF_MAJ;
			else if (!strcmp(optarg, "min"))
				o->faults = TRACE_PF_MIN;
			else if (!strcmp(optarg, "all"))
				o->faults = TRACE_PF_MAJ | TRACE_PF_MIN;
			else
				return bad("invalid -F/--pf '%s' (maj, min or all)", optarg);
			break;
		default:
			return tool_bad_option(argv, &cmd_trace_help);
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	int ntargets = !!o->pids + !!o->tids + o->system_wide + !!o->input;
	if (!ntargets && !o->argv)
		return tool_usage_error(&cmd_trace_help,
					"nothing to trace: give a command, -p, -t, -a or -i");
	if (ntargets > 1 || (o->argv && ntargets && !o->system_wide))
		return bad("-p, -t, -a, -i and a command exclude each other (-a with a command "
			   "traces everything while it runs)");
	return -1;
}

/* ---- reading the stream ---- */

struct consumer {
	struct trace_opts *o;
	struct pk_data_reader *r;
	int fd;                 /* the pipe's read end (live), or -1 */
	volatile pid_t tid;     /* the consumer thread's (left out of -a traces) */
	int err;
	struct pk_systrace_stats st;
};

static void drain_rest(int fd)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
}

static int consume(struct trace_opts *o, struct pk_data_reader *r, struct pk_systrace_stats *st)
{
	PK_OPTS(pk_systrace_opts, so, .on_call = trace_on_call, .ctx = o,
		.on_fault = o->faults ? trace_on_fault : NULL,
		.machine_opts = tool_machine_opts(), .reader_thread = !o->argv && !o->pids &&
		!o->tids && !o->system_wide && tool_threads_allowed());
	return pk_systrace__process(r, &so, st);
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	__atomic_store_n(&c->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	c->r = pk_data_reader__fdopen(c->fd, NULL);
	if (!c->r)
		c->err = -errno;
	else
		c->err = consume(c->o, c->r, &c->st);
	drain_rest(c->fd); /* the recorder must never block on a full pipe */
	return NULL;
}

/* ---- the live run ---- */

/*
 * The kernel-side filter: perfkit's own threads out of a system-wide trace (their reads
 * of the pipe would otherwise feed the trace that they read), and the -e list when it is
 * short (the calls not shown then cost no sample at all). NULL: none needed.
 */
static char *kernel_filter(const struct trace_opts *o, pid_t consumer, pid_t pump)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *sep = "";

	if (!f)
		return NULL;
	if (o->system_wide) {
		fprintf(f, "common_pid != %d && common_pid != %d", (int)getpid(), (int)consumer);
		if (pump)
			fprintf(f, " && common_pid != %d", (int)pump);
		sep = " && ";
	}
	if (o->filter) {
		long on = 0, off = 0;
		for (long i = 0; i < o->filter_max; i++)
			o->filter[i] ? on++ : off++;
		bool few_on = on <= 16, few_off = off <= 16;
		if (few_on || few_off) {
			fprintf(f, "%s(", sep);
			const char *j = "";
			for (long i = 0; i < o->filter_max; i++)
				if (!!o->filter[i] == few_on) {
					fprintf(f, "%sid %s %ld", j, few_on ? "==" : "!=", i);
					j = few_on ? " || " : " && ";
				}
			fprintf(f, "%s)", *j ? "" : few_on ? "id == -2" : "id != -2");
		}
	}
	if (fclose(f) || !buf || !buf[0]) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Back-pressure on a launched command. The kernel never waits for a reader: what the rings
 * cannot hold is dropped. A syscall-bound command makes events faster than the session
 * decodes them when the reader does not have a CPU of its own (a shared or loaded
 * machine), and no bounded buffer absorbs an arbitrarily long backlog. So the command
 * (ours: launched by us) is stopped (SIGSTOP) while the pump's buffer between the
 * recorder and the reader (trace-pump.c, PUMP_BYTES) is more than half full, and
 * continued (SIGCONT) once it is down to an eighth: the rings, drained after every pass
 * into the half still free, never fill, and the counts are exact with a bounded buffer. Its cost is the command's time while stopped, which only
 * a reader slower than the command makes. A call blocked when the stop comes is
 * interrupted and restarted by the kernel, as under strace. -p/-t/-a targets are not
 * ours to stop: they can still lose events (a warning says how many).
 */
#define PUMP_BYTES ((size_t)64 << 20)

struct throttle {
	pid_t pid;              /* the command's, or 0: none */
	const struct trace_pump *pump;
	size_t high, low;       /* bytes queued in it: stop above, continue below */
	size_t ring;            /* bytes of one ring */
	uint64_t drained;       /* ring bytes drained so far */
	bool busy;              /* the last pass found bytes: the next follows at once */
	bool stopped;
	unsigned long stops;
};

static void throttle_init(struct throttle *t, pid_t pid, const struct trace_pump *pump,
			  size_t ring, size_t ring_bytes)
{
	size_t cap = trace_pump_cap(pump);
	t->pid = pump ? pid : 0;
	t->pump = pump;
	t->ring = ring;
	/* a pass writes at most what the rings hold: room for it above the high mark */
	t->high = cap > 2 * ring_bytes ? cap - 2 * ring_bytes : cap / 4;
	if (t->high > cap / 2)
		t->high = cap / 2;
	t->low = t->high / 4;
}

/* After a drain pass (n: what pk_recorder__drain returned): stop or continue the command.
 * The recorder itself can be the slower one (a sanitizer build, a slow CPU): a pass that
 * follows a pass at once and still finds a quarter of a ring means the rings fill faster
 * than they are drained, and the command is held back until the passes find little. */
static void throttle_check(struct throttle *t, const struct pk_recorder *r, int n)
{
	if (t->pid <= 0)
		return;
	PK_OPTS(pk_recorder_stats, st);
	pk_recorder__stats(r, &st);
	uint64_t pass = st.bytes - t->drained;
	bool behind = t->busy && pass > t->ring / 4;
	t->drained = st.bytes;
	t->busy = n == 1;
	size_t queued = trace_pump_queued(t->pump);
	if (!t->stopped && (queued > t->high || behind)) {
		if (kill(t->pid, SIGSTOP) == 0) {
			t->stopped = true;
			t->stops++;
		}
	} else if (t->stopped && queued <= t->low && pass <= t->ring / 16) {
		t->stopped = kill(t->pid, SIGCONT) != 0;
	}
}

static void throttle_end(struct throttle *t)
{
	if (t->pid > 0 && t->stopped)
		kill(t->pid, SIGCONT);
	t->stopped = false;
	t->pid = 0;
}

/*
 * The threads that move the bytes (this one, draining the rings, and the pump) run
 * SCHED_FIFO where allowed (root, or CAP_SYS_NICE within RLIMIT_RTPRIO): on a loaded
 * machine a thread of the normal class can wait longer for a CPU than a ring lasts at the
 * rate of a syscall-bound command (8 MB: about 40 ms), and the kernel then drops what
 * does not fit (bench/trace-overhead.sh: 1-30 % of the events lost in most runs at a load
 * of 15 on 2 CPUs, none with these two real-time). Their work is bounded (a copy, then
 * they wait), so they take little from the others. Without the permission, they stay as
 * they are. True if both are.
 */
static bool realtime(const struct trace_opts *o, const struct trace_pump *pump)
{
	struct sched_param sp = { .sched_priority = 1 };
	if (!pump)
		return false;
	if (sched_setscheduler(trace_pump_tid(pump), SCHED_FIFO, &sp) < 0)
		return false;
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
		sp.sched_priority = 0;
		sched_setscheduler(trace_pump_tid(pump), SCHED_OTHER, &sp);
		return false;
	}
	if (o->verbose)
		fprintf(stderr, "perfkit trace: recording with real-time priority\n");
	return true;
}

static volatile sig_atomic_t got_signal, got_chld;

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_chld = 1;
	else
		got_signal = sig;
}

static void print_open(const struct pk_evsel *ev, const struct perf_event_attr *attr, pid_t pid,
		       int cpu, int group_fd, unsigned long flags, int fd, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "perf_event_open(%s: type %u, config %#llx, pid %d, cpu %d, group_fd %d, "
		"flags %#lx) = %d%s%s\n", pk_evsel__name(ev), attr->type,
		(unsigned long long)attr->config, (int)pid, cpu, group_fd, flags, fd,
		fd < 0 ? " " : "", fd < 0 ? pk_strerror(fd) : "");
}

static void report_failure(const struct pk_recorder *r)
{
	PK_OPTS(pk_recorder_failure, f);

	pk_recorder__failure(r, &f);
	if (f.stage == PK_RECORDER_FAIL_THREADS) {
		tool_error("cannot find the threads of '%s': %s (is the process still running? "
			   "see ps -eLf)", f.what, strerror(-f.err));
	} else if (tool_report_target_failure(&f)) {
		/* said (trace has no -C: an open that failed, explained) */
	} else if (f.stage == PK_RECORDER_FAIL_MMAP) {
		tool_error("cannot mmap the ring buffers: %s (locked memory limit: try a smaller "
			   "-m, or raise /proc/sys/kernel/perf_event_mlock_kb / ulimit -l)",
			   strerror(-f.err));
	} else {
		tool_error("cannot set up the trace: %s", pk_strerror(f.err));
	}
}

static void quiet_log(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static int run_live(struct trace_opts *o)
{
	struct pk_workload *w = NULL;
	struct pk_recorder *r = NULL;
	struct pk_event_list *events = NULL;
	struct consumer cons = { .o = o, .fd = -1 };
	pthread_t th;
	bool started = false, child_done = false, done;
	int pfd[2] = { -1, -1 }, qfd[2] = { -1, -1 }, status = 1, wstatus = 0, err;
	struct trace_pump *pump = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };
	sigset_t orig;
	struct pk_parse_error perr;
	char *filter = NULL;

	if (!tool_ensure_tracefs()) {
		tool_no_tracefs_error("raw_syscalls");
		return 1;
	}
	events = pk_event_list__new();
	/* -F: the software page-fault events, every one sampled, with the address */
	const char *spec = o->faults == TRACE_PF_MAJ ?
		"raw_syscalls:sys_enter,raw_syscalls:sys_exit,major-faults/period=1/" :
		o->faults == TRACE_PF_MIN ?
		"raw_syscalls:sys_enter,raw_syscalls:sys_exit,minor-faults/period=1/" :
		o->faults ? "raw_syscalls:sys_enter,raw_syscalls:sys_exit,major-faults/period=1/,"
			    "minor-faults/period=1/" :
		"raw_syscalls:sys_enter,raw_syscalls:sys_exit";
	if (!events || pk_event_list__parse(events, spec, NULL, &perr) < 0) {
		tool_error("cannot use the raw_syscalls tracepoints: %s (see perfkit check)",
			   events ? perr.msg : "out of memory");
		goto out;
	}
	if (o->argv) {
		w = pk_workload__prepare(o->argv);
		if (!w) {
			tool_error("cannot start '%s': %s", o->argv[0], strerror(errno));
			goto out;
		}
	}
	if (o->system_wide)
		o->self = getpid();
	if (pipe2(pfd, O_CLOEXEC) < 0 || pipe2(qfd, O_CLOEXEC) < 0) {
		tool_error("cannot create a pipe: %s", strerror(errno));
		goto out;
	}
	/* Slack between the rings and the reader: the session decodes about 1.5M events/s,
	 * fewer than a syscall-bound workload makes; what it has not read yet waits in the
	 * pump's buffer (PUMP_BYTES) and the pipes instead of overflowing the rings. The
	 * pipes as large as allowed (pipe-max-size, or CAP_SYS_RESOURCE): fewer passes. */
	for (int sz = 64 << 20; sz >= 1 << 20; sz /= 2)
		if (fcntl(pfd[1], F_SETPIPE_SZ, sz) >= 0)
			break;
	for (int sz = 64 << 20; sz >= 1 << 20; sz /= 2)
		if (fcntl(qfd[1], F_SETPIPE_SZ, sz) >= 0)
			break;
	sigemptyset(&sa.sa_mask);
	tool_catch_signals(&sa, sigs, 3, &orig);
	PK_OPTS(pk_recorder_opts, ro, .events = events, .workload = w, .pids = o->pids,
		.tids = o->tids, .system_wide = o->system_wide, .output_fd = pfd[1], .pipe = true,
		.no_buildid_cache = true, .buildid_dir = "",
		.mmap_pages = o->mmap_pages ? o->mmap_pages : 2048, .sigmask = &orig,
		.on_open = o->verbose ? print_open : NULL, .addr = o->faults != 0);
	r = pk_recorder__new(&ro);
	if (!r) {
		tool_error("cannot set up the trace: %s", strerror(errno));
		goto out;
	}
	/* without the pump (no memory for it), the reader reads the recorder's pipe */
	pump = trace_pump_start(pfd[0], qfd[1], PUMP_BYTES);
	if (pump) {
		qfd[1] = -1; /* the pump's now: it closes it at the end of the stream */
		cons.fd = qfd[0];
	} else {
		cons.fd = pfd[0];
	}
	if ((err = pthread_create(&th, NULL, consumer_main, &cons))) {
		tool_error("cannot start a thread: %s", strerror(err));
		goto out;
	}
	started = true;
	while (!__atomic_load_n(&cons.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	filter = kernel_filter(o, cons.tid, trace_pump_tid(pump));
	ro.tp_filter = filter;
	pk_recorder__free(r);
	r = pk_recorder__new(&ro);
	if (!r) {
		tool_error("cannot set up the trace: %s", strerror(errno));
		goto out;
	}
	if (o->verbose && filter)
		fprintf(stderr, "tracepoint filter: %s\n", filter);
	err = pk_recorder__open(r);
	if (err == -EMFILE && tool_raise_nofile())
		err = pk_recorder__open(r);
	if (err < 0) {
		report_failure(r);
		/* the reader then sees an empty stream: nothing more worth saying */
		pk_set_log(quiet_log, NULL, PK_LOG_ERROR);
		goto out;
	}
	tool_block_signals(&sa, sigs, 4);
	struct throttle thr = { 0 };
	if (w && o->argv) /* not with -a and a command: other processes fill the rings too */
		throttle_init(&thr, o->system_wide ? 0 : pk_workload__pid(w), pump,
			      ro.mmap_pages * (size_t)sysconf(_SC_PAGESIZE),
			      (size_t)sysconf(_SC_NPROCESSORS_ONLN) * ro.mmap_pages *
			      (size_t)sysconf(_SC_PAGESIZE));
	status = w ? tool_workload_start(&w, o->argv[0]) : 0;
	child_done = status != 0;
	done = child_done;
	bool rt = realtime(o, pump);
	for (;;) {
		/* stopped: look at the buffer often, the command waits for it */
		int n = pk_recorder__drain(r, done ? 0 : thr.stopped ? 2 : 250);
		if (n < 0 || done)
			break;
		if (rt && n == 1) {
			/* real-time: never busy on a CPU while the targets keep the rings
			 * filling; a millisecond is a small part of what a ring holds */
			struct timespec ms = { 0, 1000000 };
			nanosleep(&ms, NULL);
		}
		done = tool_run_over(n, got_signal, &got_chld, w, &wstatus, &child_done);
		if (child_done) /* reaped: its pid is no longer ours to signal */
			thr.pid = 0;
		throttle_check(&thr, r, n);
	}
	throttle_end(&thr); /* never leave it stopped, whatever ends it */
	if (o->verbose && thr.stops)
		fprintf(stderr, "perfkit trace: the command was held back %lu time(s) for the "
			"reader to catch up\n", thr.stops);
	if (w)
		status = tool_workload_end(w, child_done, got_signal ? got_signal : SIGTERM,
					   &wstatus, o->argv[0]);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	pk_recorder__finish(r);
out:
	pk_recorder__free(r);
	if (pfd[1] >= 0)
		close(pfd[1]); /* the end of the stream for the pump, then for the consumer */
	if (!started && pump)
		drain_rest(qfd[0]); /* no consumer: what the pump passes on goes nowhere */
	trace_pump_join(pump);
	if (qfd[1] >= 0)
		close(qfd[1]);
	if (started) {
		pthread_join(th, NULL);
		if (cons.err < 0 && cons.err != -ENOENT && status != 1) {
			tool_error("cannot read the trace: %s", pk_strerror(cons.err));
			if (!status)
				status = 1;
		}
		if (cons.st.lost)
			tool_warn("lost %llu events: the ring buffers filled up; use bigger ones "
				  "(-m) or fewer system calls (-e)", (unsigned long long)cons.st.lost);
	}
	pk_data_reader__free(cons.r);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (qfd[0] >= 0)
		close(qfd[0]);
	pk_workload__free(w);
	pk_event_list__free(events);
	free(filter);
	return status;
}

static int run_file(struct trace_opts *o)
{
	PK_OPTS(pk_data_reader_opts, ro, .no_mmap = !tool_read_mmap());
	struct pk_data_reader *r = pk_data_reader__open(o->input, &ro);
	PK_OPTS(pk_systrace_stats, st);

	if (!r) {
		tool_error("cannot open '%s': %s", o->input, pk_strerror(-errno));
		return 1;
	}
	int err = consume(o, r, &st);
	pk_data_reader__free(r);
	if (err == -ENOENT) {
		tool_error("'%s' has no raw_syscalls:sys_enter/sys_exit events (record them with "
			   "perfkit record -e 'raw_syscalls:*' or perf trace record)", o->input);
		return 1;
	}
	if (err < 0) {
		tool_error("cannot read '%s': %s", o->input, pk_strerror(err));
		return 1;
	}
	if (st.lost)
		tool_warn("the recording lost %llu events", (unsigned long long)st.lost);
	return 0;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { .comm = true };
	int r;

	tool_setup_log(0);
	r = parse_args(&o, argc, argv);
	if (r >= 0)
		goto out;
	o.out = stdout;
	if (o.output && !(o.out = fopen(o.output, "w"))) {
		tool_error("cannot open '%s': %s", o.output, strerror(errno));
		r = 1;
		goto out;
	}
	if (o.summary || o.with_summary) {
		o.stats = pk_syscall_stats__new();
		if (!o.stats) {
			tool_error("out of memory");
			r = 1;
			goto out;
		}
	}
	r = o.input ? run_file(&o) : run_live(&o);
	if (o.stats && r != 1)
		trace_print_summary(&o);
	if (o.out != stdout && fclose(o.out) && r != 1) {
		tool_error("cannot write '%s': %s", o.output, strerror(errno));
		r = 1;
	}
out:
	pk_syscall_stats__free(o.stats);
	free(o.filter);
	free(o.pf);
	fflush(stderr);
	return tool_finish_stdout(r);
}
