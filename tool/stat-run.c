/* SPDX-License-Identifier: MIT */
/* tool/stat-run.c - perfkit stat: the events opened on their targets and one run counted
 * (the workload started, intervals, signals, the counts read and accumulated). */
#include "stat.h"

/*
 * A CPU learns which cgroup is running (and so activates cgroup events) when it switches
 * tasks. An event installed while another task ran there and enabled while a task of the
 * cgroup runs without interruption (a spinning loop on a quiet machine) stays inactive
 * until that task is switched out: the count came out "<not counted>" about half the
 * time here. Passing through every CPU of the map (our thread migrates there and back)
 * makes each switch once.
 */
void stat_cgroup_kick(const struct pk_evlist *el)
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
		tool_error("cannot open the counters: %s", pk_strerror(err));
		return;
	}
	PK_OPTS(pk_open_ctx, ctx, .attr = &attr, .pid = pid, .cpu = cpu, .group_fd = group_fd,
		.event_name = pk_evsel__name(ev));
	pk_explain_open_error(buf, sizeof(buf), err, &ctx);
	tool_error("cannot open '%s': %s", pk_evsel__name(ev), buf);
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
		int err = tool_add_threads_of((pid_t)pid, &tids, &n, &cap);
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
		tool_error("cannot set up the events: %s", strerror(errno));
		pk_evlist__free(el);
		return NULL;
	}
	if (stat_extra_attrs(o, el) < 0) {
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
		threads = tool_threads_of_pids(o->target == T_PID ? o->pid_list : o->tid_list,
					  o->target == T_PID);
		if (!threads) {
			tool_error("cannot find %s '%s': %s",
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
				tool_error("cannot list the threads in /proc: %s", strerror(errno));
				pk_cpu_map__free(cpus);
				pk_evlist__free(el);
				return NULL;
			}
			break;
		}
		cpus = o->cpu_list ? pk_cpu_map__new(o->cpu_list) : pk_cpu_map__new_online(NULL);
		if (!cpus) {
			tool_error("invalid CPU list '%s'", o->cpu_list ? o->cpu_list : "online");
			pk_evlist__free(el);
			return NULL;
		}
		threads = pk_thread_map__new_dummy();
		break;
	}
	if (pk_evlist__set_maps(el, cpus, threads) < 0) {
		tool_error("cannot set up the targets: %s", strerror(errno));
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

void stat_accumulate(struct stat_opts *o, struct run_state *st)
{
	int i = 0;
	struct pk_evsel *ev;
	pk_evlist__for_each_evsel(st->el, ev) {
		for (int ki = 0; ki < st->nkeys; ki++) {
			struct rstat *r = &st->stats[i * st->nkeys + ki];
			struct pk_count c;
			pk_evsel__aggregate(ev, o->aggr, &st->keys[ki], 0, &c);
			stat_extra_count(o, st, ev, &c);
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
int stat_run_once(struct stat_opts *o, struct run_state *st, int run_idx, bool *counted)
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
			tool_error("cannot start '%s': %s", o->argv[0], strerror(errno));
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
		oo.cgroup_fd = tool_open_cgroup(o->cgroup);
		if (oo.cgroup_fd < 0) {
			pk_workload__free(w);
			return 1;
		}
	}
	/* -n: an evlist with nothing to open (the command still runs, timed) */
	err = o->null_run ? 0 : pk_evlist__open(st->el, &oo);
	if (err == -EMFILE && tool_raise_nofile())
		err = pk_evlist__open(st->el, &oo);
	if (oo.cgroup_fd >= 0)
		close(oo.cgroup_fd);
	if (err < 0) {
		report_open_failure(st->el, err);
		pk_workload__free(w);
		return 1;
	}
	if (o->x.nr_filters && stat_extra_filters(o, st->el) < 0) {
		pk_workload__free(w);
		return 1;
	}
	if (!o->null_run && setup_run_state(o, st) < 0) {
		tool_error("out of memory");
		pk_workload__free(w);
		return 1;
	}
	bool interval_header = o->interval_ms && !o->sep && !o->json && !o->quiet &&
			       o->aggr == PK_AGGR_GLOBAL && !o->x.metric_only;
	if (run_idx == 0 && interval_header && !o->interval_clear)
		fprintf(o->out, "#           time             counts unit events\n");
	long intervals = 0;   /* printed so far (--interval-count) */

	t0 = stat_now_ns();
	enabled = oo.enable_on_exec;
	bool cg = o->cgroup || o->x.nr_cg;
	if (o->delay_ms > 0)
		t_enable = t0 + (uint64_t)o->delay_ms * 1000000ULL;
	else if (!enabled) {
		pk_evlist__enable(st->el);
		if (cg)
			stat_cgroup_kick(st->el);
		enabled = true;
	}
	if (w) {
		err = pk_workload__start(w);
		if (err < 0) {
			/* the shell's convention: 127 for "command not found / not runnable" */
			tool_error("cannot run '%s': %s", o->argv[0], strerror(-err));
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
		uint64_t now = stat_now_ns(), wake = UINT64_MAX;
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		int timeout = -1, r;

		if (t_enable && !enabled && now >= t_enable) {
			pk_evlist__enable(st->el);
			if (cg)
				stat_cgroup_kick(st->el);
			enabled = true;
		}
		if (next_tick && now >= next_tick) {
			pk_evlist__read(st->el);
			/* "CPUs utilized" of an interval is over its nominal length, as perf's */
			st->wall_ns = (uint64_t)o->interval_ms * 1000000ULL;
			if (o->interval_clear && !o->quiet) {
				/* perf's console clear, then the column header again */
				fputs("\033[H\033[2J", o->out);
				o->x.mo_header_done = false; /* --metric-only's names again */
				if (interval_header)
					fprintf(o->out, "#           time             counts unit events\n");
			}
			if (!o->quiet)
				stat_print_counts(o, st, PK_AGGR_DELTA, (double)(now - t0) / 1e9);
			fflush(o->out);
			pk_evlist__save_counts(st->el);
			last_tick = now;
			if (o->interval_count && ++intervals >= o->interval_count)
				break;   /* as perf: no more counts; a command still runs to its end */
			next_tick += (uint64_t)o->interval_ms * 1000000ULL;
			if (next_tick <= now)
				next_tick = now + (uint64_t)o->interval_ms * 1000000ULL;
			continue;
		}
		if (t_end && now >= t_end) {
			stopped_by_us = true;
			break;
		}
		if (stat_got_signal)
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
		else if (stat_got_signal && (stat_signal_from_user || stat_got_signal != SIGINT))
			pk_workload__kill(w, stat_got_signal);
		while (pk_workload__wait(w, true, &wstatus) == -EINTR)
			;
		child_done = true;
	}
	st->wall_ns = stat_now_ns() - t0;
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
			tool_error("'%s' was killed by signal %d (%s)", o->argv[0],
				      WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
		pk_workload__free(w);
	}
	if (o->interval_ms > 0 && !(o->interval_count && intervals >= o->interval_count)) {
		/* the last, partial interval */
		uint64_t now = stat_now_ns(), elapsed = st->wall_ns;
		if (now - last_tick >= 1000000ULL && !o->quiet) {
			/* perf divides this one by the -I length too (not by its own) */
			st->wall_ns = (uint64_t)o->interval_ms * 1000000ULL;
			stat_print_counts(o, st, PK_AGGR_DELTA, (double)(now - t0) / 1e9);
			st->wall_ns = elapsed;   /* the whole run's, for --summary */
		}
	}
	return status;
}
