/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-record.c - `perfkit record`: sample a command, processes, threads or CPUs into
 * a perf.data file that perf report / perf script read.
 *
 * A client of pk_recorder (perfkit/recorder.h), which holds perf record's policy, the
 * drain loop, synthesis and build-ids. Here: options, the workload, signals (stop on
 * SIGINT/SIGTERM/SIGHUP, snapshot on SIGUSR2 in --overwrite mode, SIGCHLD), when to
 * rotate the output (--switch-output; names and kept files in record-rotate.c) and when
 * to stop at --max-size, the status line, messages and the exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "workload.h"
#include "perfconfig.h"
#include "record.h"
#include "push-opts.h"


#define DRAIN_INTERVAL_MS 250
#define STATUS_INTERVAL_MS 500


static volatile sig_atomic_t got_signal, got_usr2, got_chld, signal_from_user;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGCHLD || sig == SIGUSR2) {
		*(sig == SIGCHLD ? &got_chld : &got_usr2) = 1;
		return;
	}
	got_signal = sig;
	signal_from_user = si && (si->si_code == SI_USER || si->si_code == SI_QUEUE);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- argument parsing ---- */

/* Print an error about the command line; the exit status for it. */
#define bad(...) (tool_error(__VA_ARGS__), 129)

enum {
	OPT_CALLGRAPH = 256, OPT_ARGS, OPT_OVERWRITE, OPT_SAMPLE_CPU, OPT_SWITCH, OPT_NS, OPT_ALLCG,
	OPT_PER_THREAD, OPT_OFFCPU, OPT_OFFCPU_THRESH, OPT_SWITCH_OUTPUT, OPT_MAX_FILES, OPT_MAX_SIZE,
	OPT_OFFCPU_KERNEL, OPT_OFFCPU_WAKERS,
};

/* Returns -1 to go on, else an exit status. */
static const struct tool_opt opts[] = {
	{ 'e', "event", required_argument, "<spec>",
	  "events to sample (repeatable; default: cycles, or cpu-clock\n"
	  "when there is no hardware PMU)" },
	{ 'F', "freq", required_argument, "<hz|max>",
	  "sampling frequency (default 4000; max:\nperf_event_max_sample_rate)" },
	{ 'c', "count", required_argument, "<n>", "sample every n events instead of a frequency" },
	{ 'g', NULL, no_argument, NULL, "record frame-pointer call chains" },
	{ OPT_ARGS, "args", no_argument, NULL,
	  "samples of u:/r:/sdt: probes carry the argument\nregisters (return value for r:)" },
	{ OPT_CALLGRAPH, "call-graph", required_argument, "<fp|dwarf[,size]>",
	  "call chains: frame pointers, or user registers\n"
	  "and a copy of the user stack (default 8192 bytes) for DWARF\n"
	  "unwinding later" },
	{ 'p', "pid", required_argument, "<pid,...>",
	  "record existing processes (all their threads)" },
	{ 't', "tid", required_argument, "<tid,...>", "record existing threads" },
	{ 'a', "all-cpus", no_argument, NULL, "system-wide: every online CPU" },
	{ 'C', "cpu", required_argument, "<list>", "system-wide on these CPUs (\"0-3,6\")" },
	{ 'G', "cgroup", required_argument, "<name>", "only tasks of this cgroup (with -a or -C)" },
	{ 'o', "output", required_argument, "<file>",
	  "output file (default perf.data, an existing one becomes\n"
	  "perf.data.old); '-' writes the pipe format to stdout" },
	{ 'm', "mmap-pages", required_argument, "<n>",
	  "data pages per ring buffer, a power of two (default 128)" },
	{ 'z', "compression-level", optional_argument, "<n>",
	  "zstd-compress the data (level 1..22, default 1)" },
	{ OPT_OVERWRITE, "overwrite", no_argument, NULL,
	  "flight recorder: keep only the newest data, written on\nSIGUSR2 and at the end" },
	{ OPT_SWITCH_OUTPUT, "switch-output", optional_argument, "<signal|size|time>",
	  "rotate the output to FILE.<timestamp> on SIGUSR2 (signal,\n"
	  "the default), at a size (100M: B K M G) or every time\n"
	  "(30s: s m h d); each file is complete alone" },
	{ OPT_MAX_FILES, "switch-max-files", required_argument, "<n>",
	  "with --switch-output: keep only the newest n files" },
	{ OPT_MAX_SIZE, "max-size", required_argument, "<size>",
	  "stop recording when the output reaches this size (100M)" },
	{ PUSH_OPT_RECORD, "push", required_argument, "<url>",
	  "send each file (with --switch-output: as it\n"
	  "closes) as pprof to a Pyroscope-compatible server,\n"
	  "from a second thread; the options below as push's" },
	TOOL_PUSH_OPT_ENTRIES
	{ 'T', "timestamp", no_argument, NULL,
	  "sample timestamps (always recorded; accepted for perf\nhabits)" },
	{ 'd', "data", no_argument, NULL, "sample data addresses (and record data mappings)" },
	{ OPT_SAMPLE_CPU, "sample-cpu", no_argument, NULL,
	  "record the CPU in samples (always with -a/-C)" },
	{ 's', "stat", no_argument, NULL, "per-thread counts at thread exit (PERF_RECORD_READ)" },
	{ OPT_SWITCH, "switch-events", no_argument, NULL, "record context switches" },
	{ OPT_NS, "namespaces", no_argument, NULL, "record namespace changes" },
	{ OPT_ALLCG, "all-cgroups", no_argument, NULL,
	  "record cgroup changes and each sample's cgroup id" },
	{ OPT_OFFCPU, "off-cpu", no_argument, NULL,
	  "also record where threads block: an offcpu-time event\n"
	  "whose samples weigh the nanoseconds off the CPU" },
	{ OPT_OFFCPU_THRESH, "off-cpu-thresh", required_argument, "<ns>",
	  "with --off-cpu: drop blocked intervals shorter than this" },
	{ OPT_OFFCPU_KERNEL, "off-cpu-kernel", no_argument, NULL,
	  "with --off-cpu: the kernel part of each blocking chain\n"
	  "too (a kernel stack walk at every context switch)" },
	{ OPT_OFFCPU_WAKERS, "off-cpu-wakers", no_argument, NULL,
	  "with --off-cpu: also who woke each blocked thread (an\n"
	  "offcpu-waker event; report --sort comm,tid ranks them)" },
	{ 'i', "no-inherit", no_argument, NULL,
	  "do not follow threads and children created later" },
	{ OPT_PER_THREAD, "per-thread", no_argument, NULL,
	  "one buffer per thread instead of per CPU (no inherit)" },
	{ 'N', "no-buildid-cache", no_argument, NULL,
	  "do not copy the recorded binaries into the build-id cache\n"
	  "($PERF_BUILDID_DIR, default ~/.debug), where report finds\n"
	  "them once they are rebuilt or deleted" },
	{ 'q', "quiet", no_argument, NULL, "print nothing but errors" },
	{ 'v', "verbose", no_argument, NULL, "show every perf_event_open" },
	REC_EXTRA_OPTS,
	{ 0 },
};

const struct tool_help cmd_record_help = {
	.synopsis = "usage: perfkit record [<options>] [--] [<command> [<args>]]\n",
	.intro = "Sample <command> (or -p/-t/-a/-C targets until Ctrl-C or until they exit) into a\n"
		 "perf.data file that `perfkit script`, `perf report` and `perf script` read.\n",
	.opts = opts,
	.outro = TOOL_WORKLOAD_OUTRO,
};

/* an option of the command's own (tool_recorder_parse) */
static int take_opt(int c, char *arg, void *ctx)
{
	struct rec_opts *o = ctx;
	char *end;
	int st;

	switch (c) {
	case OPT_ARGS: o->ro.probe_args = true; break;
	case 'G': o->cgroup = arg; break;
	case 'o': o->output = arg; break;
	case 'm':
		if (tool_parse_mmap_pages(arg, &o->ro.mmap_pages))
			return 129;
		break;
	case 'z': {
		long v = arg ? strtol(arg, &end, 10) : 1;
		if ((arg && *end) || v < 1 || v > 22)
			return bad("invalid compression level '%s' (1..22)", arg);
		o->ro.compress_level = (int)v;
		break;
	}
	case OPT_OVERWRITE: o->ro.overwrite = true; break;
	case 'T': break; /* timestamps are always recorded */
	case 'd': o->ro.addr = true; break;
	case OPT_SAMPLE_CPU: o->ro.sample_cpu = true; break;
	case 's': o->ro.stat = true; break;
	case OPT_SWITCH: o->ro.switch_events = true; break;
	case OPT_NS: o->ro.namespaces = true; break;
	case OPT_ALLCG: o->ro.all_cgroups = true; break;
	case 'i': o->ro.no_inherit = true; break;
	case OPT_PER_THREAD: o->ro.per_thread = true; break;
	case OPT_OFFCPU: o->ro.off_cpu = true; break;
	case OPT_OFFCPU_KERNEL: o->ro.off_cpu_kernel = true; break;
	case OPT_OFFCPU_WAKERS: o->ro.off_cpu_wakers = true; break;
	case OPT_OFFCPU_THRESH: {
		errno = 0;
		unsigned long long v = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-')
			return bad("invalid --off-cpu-thresh '%s' (nanoseconds)", arg);
		o->ro.off_cpu_thresh = v;
		break;
	}
	case OPT_SWITCH_OUTPUT: {
		int e = tool_rotate_parse(arg, &o->rot);
		if (e)
			return bad("invalid --switch-output '%s': %s (signal, a size such as 100M "
				   "with B, K, M or G, or a time such as 30s with s, m, h or d)", arg,
				   e == -ERANGE ? "too big" : "not understood");
		break;
	}
	case OPT_MAX_FILES: {
		errno = 0;
		unsigned long v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || v > 1000000)
			return bad("invalid --switch-max-files '%s' (a number of files, 0 = all)", arg);
		o->rot.max_files = (unsigned)v;
		break;
	}
	case OPT_MAX_SIZE:
		if (tool_rotate_parse_size(arg, &o->rot.max_size))
			return bad("invalid --max-size '%s' (a size such as 100M: a whole number "
				   "with B, K, M or G)", arg);
		break;
	case 'N': o->ro.no_buildid_cache = true; break;
	case 'q': o->quiet = true; break;
	case 'v': o->verbose++; break;
	default:
		if ((st = rec_push_opt(o, c, arg)) != TOOL_OPT_UNKNOWN)
			return st;
		return rec_extra_opt(o, c, arg);
	}
	return 0;
}

static int parse_args(struct rec_opts *o, int argc, char **argv)
{
	const struct tool_recorder_cmdline cl = {
		.help = &cmd_record_help, .callgraph_id = OPT_CALLGRAPH, .ro = &o->ro,
		.events = o->events, .take = take_opt, .ctx = o,
	};

	if (tool_recorder_parse(&cl, argc, argv, &o->argv))
		return 129;
	int r = rec_extra_check(o);
	if (r >= 0)
		return r;
	int ntargets = !!o->ro.pids + !!o->ro.tids + !!o->ro.system_wide;
	if (!o->argv && !ntargets)
		return tool_usage_error(&cmd_record_help,
					"nothing to record: give a command, -p, -t, -a or -C");
	/* -p/-t with a command: the command only bounds the recording's duration, as perf */
	if (ntargets > 1)
		return bad("-p, -t and -a/-C exclude each other");
	if (o->cgroup && !o->ro.system_wide)
		return bad("-G needs -a or -C");
	if (o->ro.per_thread && o->ro.system_wide)
		return bad("--per-thread does not go with -a or -C");
	if (o->ro.period && (o->ro.freq || o->ro.freq_max))
		return bad("-c and -F exclude each other");
	if (o->ro.off_cpu_thresh && !o->ro.off_cpu)
		return bad("--off-cpu-thresh needs --off-cpu");
	if ((o->ro.off_cpu_kernel || o->ro.off_cpu_wakers) && !o->ro.off_cpu)
		return bad("--off-cpu-kernel and --off-cpu-wakers need --off-cpu");
	if (o->ro.off_cpu && o->ro.overwrite)
		return bad("--off-cpu does not go with --overwrite");
	if (!o->output)
		o->output = "perf.data";
	if ((o->rot.mode || o->rot.max_size) && !strcmp(o->output, "-"))
		return bad("%s needs a file output, not '-' (the pipe format has no end to "
			   "switch at or size to stop at)", o->rot.mode ? "--switch-output" : "--max-size");
	if (o->rot.max_files && !o->rot.mode)
		return bad("--switch-max-files needs --switch-output");
	if (rec_push_check(o))
		return 129;
	return -1;
}

/* ---- the run ---- */

/*
 * Close the current file of a rotation as FILE.<timestamp> (last: at the end of the
 * recording, through pk_recorder__finish_as) and hand it to the hook. Returns 0, or the
 * negative errno of a write error (the recording cannot go on); a file that could not be
 * named or renamed is reported and the recording goes on.
 */
static int rotate(struct rec_opts *o, struct pk_recorder *r, bool last)
{
	struct pk_recorder_file f = { .sz = sizeof(f) };
	struct timespec t0, t1;
	char name[PATH_MAX];
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = tool_rotate_name(&o->rot, o->output, name, sizeof(name));
	if (err) {
		tool_error("cannot name the next file of '%s': %s", o->output, pk_strerror(err));
		return last ? pk_recorder__finish(r) : 0;
	}
	err = last ? pk_recorder__finish_as(r, name, &f) : pk_recorder__switch_output(r, name, &f);
	if (err < 0) {
		struct pk_recorder_failure fl = { .sz = sizeof(fl) };
		pk_recorder__failure(r, &fl);
		if (last || fl.stage == PK_RECORDER_FAIL_WRITE)
			return err; /* reported by the caller, as any write error */
		tool_error("cannot rename '%s' to '%s': %s; recording goes on into '%s'",
			   o->output, name, pk_strerror(err), o->output);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rec_dumped(o, name, &f, (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		   (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	if (tool_rotate_closed(&o->rot, name, f.first_ns, f.last_ns) < 0)
		tool_warn("out of memory: --switch-max-files deletes no more files");
	return 0;
}

/* A size rotation or --max-size due: the current file's size */
static uint64_t file_size(const struct pk_recorder *r)
{
	PK_OPTS(pk_recorder_stats, st);
	pk_recorder__stats(r, &st);
	return st.file_bytes;
}

static int run(struct rec_opts *o)
{
	struct pk_workload *w = NULL;
	struct pk_recorder *r = NULL;
	int status = 0, wstatus = 0, err, cgroup_fd = -1;
	bool pipe_out = !strcmp(o->output, "-"), child_done = false, tty, done, limit_hit = false;
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	static const int stop[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR2, SIGCHLD };
	sigset_t orig;
	uint64_t next_status = 0;
	PK_OPTS(pk_recorder_stats, st);

	/* Stop signals are caught from the very start (the handler only sets a flag): one that
	 * arrives while events are still being opened ends the recording right after set-up
	 * with a complete file, instead of killing us before the header exists. */
	sigemptyset(&sa.sa_mask);
	/* SIGHUP: a closed terminal must still leave a whole file; SIGUSR2 (a switch, a
	 * snapshot) during set-up is kept for the first pass instead of killing us */
	tool_catch_signals(&sa, stop, 4, &orig);

	if (o->argv) {
		/* in pipe mode the command's stdout would corrupt the stream: send it to stderr */
		int saved = pipe_out ? (fflush(stdout), dup(1)) : -1;
		if (saved >= 0)
			dup2(2, 1);
		w = pk_workload__prepare(o->argv);
		if (saved >= 0) {
			dup2(saved, 1);
			close(saved);
		}
		if (!w) {
			tool_error("cannot start '%s': %s", o->argv[0], strerror(errno));
			return 1;
		}
	}
	if (o->cgroup) {
		cgroup_fd = tool_open_cgroup(o->cgroup);
		if (cgroup_fd < 0)
			goto fail;
	}
	o->ro.events = o->events;
	o->ro.workload = o->ro.pids || o->ro.tids ? NULL : w;
	o->ro.cgroup = cgroup_fd >= 0;
	o->ro.cgroup_fd = cgroup_fd;
	o->ro.output = o->output;
	o->ro.keep_old = true;
	o->ro.buildid_dir = tool_buildid_dir();
	o->ro.sigmask = &orig;
	o->ro.on_notice = rec_on_notice;
	o->ro.on_open = o->verbose ? rec_print_open : NULL;
	o->ro.ctx = o;
	r = pk_recorder__new(&o->ro);
	if (!r) {
		tool_error("cannot set up the recording: %s", strerror(errno));
		goto fail;
	}
	err = pk_recorder__open(r);
	if (err == -EMFILE && tool_raise_nofile())
		err = pk_recorder__open(r);
	if (err < 0) {
		rec_report_failure(r, o->output);
		goto fail;
	}
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	cgroup_fd = -1;

	if (rec_push_start(o))
		goto fail;

	/* signals: blocked except while the recorder waits (ppoll), so none is missed */
	tool_block_signals(&sa, stop, 5);

	status = w ? tool_workload_start(&w, o->argv[0]) : 0;
	child_done = status != 0;
	if (o->ro.off_cpu) {
		/* every context switch of the targets makes work for this thread: it runs
		 * batch, never preempting a target that shares its CPU on a wake-up (the
		 * workload was forked before, and keeps its policy) */
		struct sched_param sp = { 0 };
		(void)sched_setscheduler(0, SCHED_BATCH, &sp);
	}
	rec_extra_started(o); /* -D counts from the command's start, as perf */

	/* Wake at least every DRAIN_INTERVAL_MS even without a ring wake-up, so that what the
	 * kernel wrote reaches the file soon: a recorder killed with SIGKILL (or a crash) then
	 * loses a fraction of a second, not a whole buffer. */
	tty = !o->quiet && isatty(2);
	done = child_done;
	const uint64_t period_ms = o->rot.mode == TOOL_ROTATE_TIME ? o->rot.secs * 1000 : 0;
	uint64_t deadline = period_ms ? now_ms() + period_ms : 0;
	for (;;) {
		int wait = done ? 0 : rec_extra_timeout(o, tty ? STATUS_INTERVAL_MS : DRAIN_INTERVAL_MS);
		int e = 0;
		if (deadline && wait) { /* wake for the next time rotation */
			uint64_t now = now_ms();
			wait = now >= deadline ? 0 : deadline - now < (uint64_t)wait ? (int)(deadline - now) : wait;
		}
		int n = pk_recorder__drain(r, wait);
		if (!done && rec_extra_poll(o, r) && !got_signal) { /* --control's stop */
			got_signal = SIGTERM;
			signal_from_user = 1;
		}
		if (n >= 0 && got_usr2) {
			got_usr2 = 0;
			if (o->ro.overwrite) /* after the side band, as perf */
				e = pk_recorder__snapshot(r);
			if (!e && o->rot.mode == TOOL_ROTATE_SIGNAL)
				e = rotate(o, r, false);
		}
		if (n >= 0 && !e && !done &&
		    ((deadline && now_ms() >= deadline) ||
		     (o->rot.mode == TOOL_ROTATE_SIZE && file_size(r) >= o->rot.size))) {
			e = rotate(o, r, false);
			deadline = period_ms ? now_ms() + period_ms : 0;
		}
		if (n >= 0 && !e && o->rot.max_size && !limit_hit && file_size(r) >= o->rot.max_size) {
			limit_hit = true; /* as perf: the command is ended (SIGTERM), the file kept */
			if (!o->quiet)
				fprintf(stderr, "[ perfkit record: size limit reached (%" PRIu64
					" KB), stopping ]\n", file_size(r) >> 10);
		}
		if (e < 0)
			n = e;
		if (n < 0 || done)
			break; /* a write error; or the pass after the end drained what was left */
		done = tool_run_over(n, got_signal, &got_chld, w, &wstatus, &child_done) || limit_hit;
		if (tty && !done && now_ms() >= next_status) {
			rec_status_line(r);
			next_status = now_ms() + STATUS_INTERVAL_MS;
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (w) {
		/* stopped by a signal: end the command too (a Ctrl-C on the terminal reached
		 * it already), then finish the file */
		int sig = got_signal && (signal_from_user || got_signal != SIGINT) ? got_signal : 0;
		if (!sig && limit_hit)
			sig = SIGTERM;
		status = tool_workload_end(w, child_done, sig, &wstatus, o->argv[0]);
		pk_workload__free(w);
		w = NULL;
	}
	sigprocmask(SIG_SETMASK, &orig, NULL);

	err = o->rot.mode ? rotate(o, r, true) : pk_recorder__finish(r);
	tool_probe_check(o->events);
	pk_recorder__stats(r, &st);
	rec_bid_cache_report(o, &st);
	if (err < 0 && err != -EPIPE) { /* -EPIPE: the reader went away, nothing to report */
		tool_error("cannot write '%s': %s", o->output, pk_strerror(err));
		if (!status)
			status = 1;
	}
	rec_lost_warnings(o, &st);
	rec_summary(o, &st, err == -EPIPE);
	rec_push_finish(o, err >= 0);   /* the last file, the spool's last try, a summary */
	pk_recorder__free(r);
	tool_rotate_release(&o->rot);
	return status;

fail:
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	pk_recorder__free(r);
	pk_workload__free(w);
	return status ? status : 1;
}

int cmd_record(int argc, char **argv)
{
	struct rec_opts o = { .ro = { .sz = sizeof(o.ro) } };
	int r;

	rec_extra_init(&o.x);
	tool_setup_log(0);
	for (int i = 1; i < argc && strcmp(argv[i], "--") && argv[i][0] == '-'; i++)
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			tool_setup_log(1);
	o.events = pk_event_list__new();
	if (!o.events) {
		tool_error("out of memory");
		return 1;
	}
	r = parse_args(&o, argc, argv);
	if (r >= 0 || o.x.dry_run) {
		rec_push_finish(&o, false);
		pk_event_list__free(o.events);
		rec_extra_release(&o.x);
		return r >= 0 ? r : 0;
	}
	if (o.ro.off_cpu_wakers)
		tool_ensure_tracefs(); /* sched:sched_waking */
	for (size_t i = 0; i < pk_event_list__count(o.events); i++)
		if (pk_event_spec__kind(pk_event_list__get(o.events, i)) == PK_EV_TRACEPOINT) {
			tool_ensure_tracefs();
			break;
		}
	r = run(&o);
	rec_push_finish(&o, false);   /* after a failed start: frees the options */
	pk_event_list__free(o.events);
	rec_extra_release(&o.x);
	fflush(stderr);
	return tool_finish_stdout(r);
}
