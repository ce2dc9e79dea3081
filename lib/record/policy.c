/* SPDX-License-Identifier: MIT */
/*
 * lib/record/policy.c - perf record's attr policy (perf 6.1's evsel__config and
 * record__open): what every sample carries, which event tracks the side band, the dummy
 * event, leader sampling, the cycles -> cpu-clock fallback, the frequency limit, and the
 * cpu x thread maps of the targets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/probe.h>
#include "internal.h"
#include "record/record-internal.h"

#define DEFAULT_FREQ 4000

long pk_rec_policy__freq(const struct pk_recorder_opts *o, struct pk_recorder_notice *clamped)
{
	PK_OPTS(pk_limits, lim);
	long max = 0, freq = o->freq ? o->freq : DEFAULT_FREQ;

	if (clamped)
		memset(clamped, 0, sizeof(*clamped));
	if (pk_limits__read(&lim, NULL) == 0 && lim.max_sample_rate > 0)
		max = lim.max_sample_rate;
	if (o->freq_max)
		return max > 0 ? max : DEFAULT_FREQ;
	if (max > 0 && freq > max) {
		if (clamped)
			*clamped = (struct pk_recorder_notice){ .kind = PK_RECORDER_FREQ_CLAMPED,
				.asked = (uint64_t)freq, .used = (uint64_t)max };
		freq = max;
	}
	return freq;
}

/* Is there a PMU that counts cycles? (An error other than "no such event" means yes: the
 * open will then report the real problem.) */
static bool hw_cycles_available(void)
{
	struct pk_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_HARDWARE;
	a.attr.config = PERF_COUNT_HW_CPU_CYCLES;
	a.attr.disabled = 1;
	a.attr.exclude_kernel = 1;
	a.attr.exclude_hv = 1;
	int fd = pk_sys_perf_event_open(&a.attr, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return !(fd == -ENOENT || fd == -ENODEV || fd == -EOPNOTSUPP);
}

/* The user registers a DWARF unwinder needs, as perf's sample_regs_user of this
 * architecture; 0 where perfkit's unwinder does not read them (lib/symbol/unwind.c maps
 * x86-64 and arm64 only), so record refuses rather than write stacks nothing unwinds. */
static uint64_t dwarf_regs_mask(void)
{
#if defined(__x86_64__)
	return 0xff0fffULL; /* AX..R15 and IP/FLAGS/SP, without the segment registers */
#elif defined(__aarch64__)
	return (1ULL << 33) - 1;
#else
	return 0;
#endif
}

/* Configure a sampling attr the way perf record does (evsel__config). */
static int config_attr(const struct pk_rec_policy *p, struct perf_event_attr *a, bool tracepoint,
		       unsigned spec_flags, bool many)
{
	const struct pk_recorder_opts *o = p->o;

	a->size = 0; /* let pk_sys_perf_event_open pick the smallest ABI size for the fields */
	a->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (many)
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (o->system_wide || o->sample_cpu)
		a->sample_type |= PERF_SAMPLE_CPU;
	/* data addresses, as perf's -d: ADDR and DATA_SRC in every sample; the data
	 * mappings (mmap_data) are asked of the tracking event only (sideband_bits) */
	if (o->addr)
		a->sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
	if (o->all_cgroups)
		a->sample_type |= PERF_SAMPLE_CGROUP;
	if (tracepoint)
		a->sample_type |= PERF_SAMPLE_RAW | PERF_SAMPLE_CPU;
	if (o->callgraph == PK_RECORDER_CG_FP) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	} else if (o->callgraph == PK_RECORDER_CG_DWARF) {
		uint64_t mask = dwarf_regs_mask();
		if (!mask)
			return -EOPNOTSUPP;
		a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
				  PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = mask;
		a->sample_stack_user = o->stack_size;
		a->exclude_callchain_user = 1;
	}
	if (!(spec_flags & (PK_EVF_PERIOD_SET | PK_EVF_FREQ_SET))) {
		if (o->period) {
			a->freq = 0;
			a->sample_period = o->period;
		} else if (tracepoint) {
			a->freq = 0;
			a->sample_period = 1;
		} else {
			a->freq = 1;
			a->sample_freq = (uint64_t)p->freq;
		}
	}
	if (o->stat) {
		a->inherit_stat = 1;
		/* the exit-time READ records carry the times, as perf asks for them */
		a->read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	}
	if (o->overwrite)
		a->write_backward = 1;
	/* as perf's evsel__config: the other side only (exclude_hv is left as the event has it) */
	if (o->all_user) {
		a->exclude_kernel = 1;
		a->exclude_user = 0;
	}
	if (o->all_kernel) {
		a->exclude_user = 1;
		a->exclude_kernel = 0;
	}
	if (o->sample_regs_user) {
		a->sample_type |= PERF_SAMPLE_REGS_USER;
		a->sample_regs_user |= o->sample_regs_user;
	}
	a->sample_type |= o->sample_type_extra;
	if (o->sample_regs_intr) {
		a->sample_type |= PERF_SAMPLE_REGS_INTR;
		a->sample_regs_intr = o->sample_regs_intr;
	}
	if (o->use_clockid) {
		a->use_clockid = 1;
		a->clockid = o->clockid;
	}
	a->sample_id_all = 1;
	return 0;
}

/* Whether the kernel knows attr.ksymbol (Linux 5.1+), tried once on a dummy event of
 * this thread as perf probes its missing features (a kernel that cannot open even that
 * gets no bit: the events' own open fails then anyway). */
static bool kernel_has_ksymbol(void)
{
	static int known; /* 0: not tried; 1: yes; -1: no */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
	if (!k) {
		struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
					     .config = PERF_COUNT_SW_DUMMY, .exclude_kernel = 1,
					     .exclude_hv = 1, .ksymbol = 1 };
		int fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
		k = fd >= 0 ? 1 : -1;
		if (fd >= 0)
			close(fd);
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k > 0;
}

static void sideband_bits(const struct pk_recorder_opts *o, struct perf_event_attr *a)
{
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	/* kernel code loaded or freed while recording (BPF programs, their trampolines,
	 * out-of-line code): KSYMBOL records name it (the machine maps them), as perf's
	 * tracking event asks; not perf's bpf_event: its BPF_EVENT records only serve
	 * with the BPF program infos perf saves in the header, which we do not write */
	if (kernel_has_ksymbol())
		a->ksymbol = 1;
	if (o->addr)
		a->mmap_data = 1;
	if (o->switch_events)
		a->context_switch = 1;
	if (o->namespaces)
		a->namespaces = 1;
	if (o->all_cgroups)
		a->cgroup = 1;
}

/* Leader sampling ("{a,b}:S"), as perf 6.1 sets it up: every event of the group carries
 * PERF_SAMPLE_READ (the group read format is added when the evlist opens the group), only
 * the leader samples (members get period 0), and nothing inherits (the kernel delivers no
 * group reads for inherited counters). On an event outside a group, ":S" only adds
 * PERF_SAMPLE_READ (perf keeps inheritance there; kernels before 6.12 refuse the pair).
 * Returns true when some group samples this way. */
static bool leader_sampling(const struct pk_event_list *events, struct pk_evlist *el)
{
	const struct pk_evsel *ev;
	bool any = false;
	size_t i = 0;

	pk_evlist__for_each_evsel(el, ev) {
		const struct pk_evsel *l = pk_evsel__leader(ev);
		const struct pk_evsel *next = pk_evlist__next(el, ev);
		const struct pk_event_spec *spec = pk_event_list__get(events, i++);
		bool grouped = l != ev || (next && pk_evsel__leader(next) == ev);
		struct perf_event_attr *a = &pk_evsel__attr((struct pk_evsel *)ev)->attr;

		if (!spec || !(pk_event_spec__flags(spec) & PK_EVF_SAMPLE_READ))
			continue;
		a->sample_type |= PERF_SAMPLE_READ | PERF_SAMPLE_ID; /* perf adds ID too */
		if (!grouped)
			continue; /* "a:S": its own count in each sample, inherited as usual */
		if (l != ev) {
			a->freq = 0;
			a->sample_period = 0;
		}
		any = true;
	}
	return any;
}

/* --group: the first `nuser` events form one group led by the first; -EINVAL when the
 * list has {groups} of its own (perf's --group is for a plain list). */
static int group_all(const struct pk_event_list *events, struct pk_evlist *el, int nuser)
{
	struct pk_evsel *ev, *lead = NULL;
	int i = 0;

	for (size_t k = 0; k < pk_event_list__count(events); k++)
		if (pk_event_spec__group(pk_event_list__get(events, k)) >= 0)
			return -EINVAL;
	pk_evlist__for_each_evsel(el, ev) {
		if (i++ >= nuser)
			break;
		if (!lead)
			lead = ev;
		else if (pk_evsel__set_leader(ev, lead) < 0)
			return -EINVAL;
	}
	return 0;
}

static void dummy_attr(const struct pk_recorder_opts *o, struct pk_attr *d, bool many)
{
	memset(d, 0, sizeof(*d));
	d->attr.type = PERF_TYPE_SOFTWARE;
	d->attr.config = PERF_COUNT_SW_DUMMY;
	d->attr.sample_period = 1;
	d->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (many)
		d->attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (o->system_wide || o->sample_cpu)
		d->attr.sample_type |= PERF_SAMPLE_CPU;
	d->attr.sample_id_all = 1;
	if (o->use_clockid) { /* one clock for every record of the file */
		d->attr.use_clockid = 1;
		d->attr.clockid = o->clockid;
	}
	sideband_bits(o, &d->attr);
}

/* -p 12,34: every thread of each process. */
static struct pk_thread_map *threads_of_pids(const char *list)
{
	struct pk_thread_map *ids = pk_thread_map__new_list(list), *all = NULL;
	pid_t *tids = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (!ids)
		return NULL;
	for (int i = 0; i < pk_thread_map__nr(ids) && !err; i++) {
		struct pk_thread_map *t = pk_thread_map__new_pid(pk_thread_map__tid(ids, i), NULL);
		if (!t) {
			err = -errno;
			break;
		}
		for (int j = 0; j < pk_thread_map__nr(t); j++) {
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				pid_t *nt = realloc(tids, ncap * sizeof(*nt));
				if (!nt) {
					err = -ENOMEM;
					break;
				}
				tids = nt;
				cap = ncap;
			}
			tids[n++] = pk_thread_map__tid(t, j);
		}
		pk_thread_map__free(t);
	}
	pk_thread_map__free(ids);
	if (!err)
		all = pk_thread_map__new_array(tids, (int)n);
	free(tids);
	if (err)
		errno = -err;
	return all;
}

static int set_maps(const struct pk_recorder_opts *o, struct pk_evlist *el,
		    struct pk_recorder_failure *f)
{
	pid_t child = o->workload ? pk_workload__pid(o->workload) : -1;
	struct pk_cpu_map *cpus = o->per_thread ? pk_cpu_map__new_dummy() : pk_cpu_map__new(o->cpus);
	struct pk_thread_map *threads;

	if (!cpus) {
		f->stage = PK_RECORDER_FAIL_CPUS;
		f->what = o->cpus ? o->cpus : "";
		return f->err = -errno;
	}
	if (o->system_wide)
		threads = pk_thread_map__new_dummy();
	else if (child > 0)
		threads = pk_thread_map__new_array(&child, 1);
	else if (o->pids)
		threads = threads_of_pids(o->pids);
	else if (o->tids)
		threads = pk_thread_map__new_list(o->tids);
	else
		threads = pk_thread_map__new_dummy();
	if (!threads) {
		int err = -errno;
		pk_cpu_map__free(cpus);
		f->stage = PK_RECORDER_FAIL_THREADS;
		f->what = o->pids ? o->pids : o->tids;
		return f->err = err;
	}
	if (pk_evlist__set_maps(el, cpus, threads) < 0) {
		f->stage = PK_RECORDER_FAIL_SETUP;
		return f->err = -ENOMEM;
	}
	return 0;
}

static int setup_failed(struct pk_recorder_failure *f, int err)
{
	f->stage = PK_RECORDER_FAIL_SETUP;
	return f->err = err;
}

int pk_rec_policy__build(struct pk_rec_policy *p, const struct pk_event_list *events,
			 struct pk_rec_events *e, struct pk_recorder_failure *f)
{
	const struct pk_recorder_opts *o = p->o;
	struct pk_evsel *ev;
	bool cycles_ok = true, cycles_checked = false, many;
	int i = 0, nspec, err;

	struct pk_event_list *sw = NULL;
	int nuser;

	e->offcpu_idx = -1;
	e->waker_idx = -1;
	e->dummy_idx = -1;
	e->el = pk_evlist__new();
	if (!e->el)
		return setup_failed(f, -ENOMEM);
	err = pk_evlist__add_events(e->el, events);
	if (err < 0)
		return setup_failed(f, err);
	nuser = pk_evlist__nr_evsels(e->el);
	if (o->off_cpu) {
		/* off-CPU time: where each thread leaves the CPU (offcpu.c). The software
		 * event context-switches fires at every switch-out in the context of the thread
		 * leaving, as sched:sched_switch does, but costs less (no trace entry to fill),
		 * needs no tracefs, and closing it waits for no RCU grace period (the last
		 * sched_switch user's close does: 40 ms at the end of every recording). */
		sw = pk_event_list__new();
		if (!sw)
			return setup_failed(f, -ENOMEM);
		err = pk_event_list__parse(sw, "context-switches", NULL, NULL);
		f->what = "context-switches";
		/* who woke them: the wake-up tracepoint of this kernel (sched_waking fires in
		 * the waker's context; kernels before 4.3 have only sched_wakeup) */
		if (err >= 0 && o->off_cpu_wakers) {
			bool waking = pk_tracepoint__id(NULL, "sched", "sched_waking") >= 0;
			f->what = waking ? "sched:sched_waking" : "sched:sched_wakeup";
			err = pk_event_list__parse(sw, f->what, NULL, NULL);
			e->waker_idx = nuser + 1;
		}
		if (err >= 0)
			err = pk_evlist__add_events(e->el, sw);
		if (err < 0) {
			pk_event_list__free(sw);
			return setup_failed(f, err);
		}
		f->what = NULL;
		e->offcpu_idx = nuser;
	}
	nspec = pk_evlist__nr_evsels(e->el);
	if (o->group && (err = group_all(events, e->el, nuser)) < 0) {
		pk_event_list__free(sw);
		return setup_failed(f, err);
	}
	/* perf adds a side-band dummy for system-wide and multi-event recordings; in
	 * --overwrite mode it lives in its own (forward) evlist. The off-CPU event does not
	 * count: the side band rides on the user's event as it would without it (one event
	 * less in every context switch of the targets). */
	bool want_dummy = (o->system_wide || nuser > 1 || o->start_disabled) && !o->overwrite;
	many = nspec + (want_dummy ? 1 : 0) > 1 || o->overwrite;
	e->nev = nspec + (want_dummy ? 1 : 0);
	e->names = calloc((size_t)e->nev, sizeof(*e->names));
	if (!e->names)
		return setup_failed(f, -ENOMEM);
	pk_evlist__for_each_evsel(e->el, ev) {
		const struct pk_event_spec *spec = i < nuser ? pk_event_list__get(events, (size_t)i)
							     : pk_event_list__get(sw, (size_t)(i - nuser));
		struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
		bool tp = spec && pk_event_spec__kind(spec) == PK_EV_TRACEPOINT;
		unsigned fl = spec ? pk_event_spec__flags(spec) : 0;

		e->names[i] = pk_evsel__name(ev);
		if (a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_CPU_CYCLES) {
			if (!cycles_checked) {
				cycles_ok = hw_cycles_available();
				cycles_checked = true;
			}
			if (!cycles_ok) {
				struct pk_recorder_notice n = { .kind = PK_RECORDER_CYCLES_FALLBACK,
								.name = e->names[i] };
				if (o->on_notice)
					o->on_notice(&n, o->ctx);
				a->type = PERF_TYPE_SOFTWARE;
				a->config = PERF_COUNT_SW_CPU_CLOCK;
				a->precise_ip = 0;
				e->names[i] = "cpu-clock";
			}
		}
		err = config_attr(p, a, tp, fl, many);
		if (err < 0) {
			pk_event_list__free(sw);
			return setup_failed(f, err);
		}
		if (i == e->offcpu_idx) {
			/* a chain in every switch-out (frame pointers unless asked otherwise),
			 * the switch-ins as context-switch records of the same event */
			a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CPU;
			a->context_switch = 1;
			a->freq = 0;
			a->sample_period = 1;
			/* what the recorder does not read (it consumes these samples): the
			 * scheduler's address (the chain says where) and the period (1) */
			a->sample_type &= ~(PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW);
			/* the user part only unless asked: the kernel unwind at every switch
			 * costs more than the rest of the switch's recording together
			 * (bench/offcpu-overhead.sh), and perf's --off-cpu keeps user stacks */
			if (!o->off_cpu_kernel)
				a->exclude_callchain_kernel = 1;
		}
		if (i == e->waker_idx) {
			/* the waker's tid, the time and the woken thread's pid (raw) suffice */
			a->sample_type &= ~(PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
					    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
			a->sample_regs_user = 0;
			a->sample_stack_user = 0;
			a->exclude_callchain_user = 0;
		}
		if (o->probe_args && spec && pk_event_spec__probe_file(spec)) {
			uint64_t m = pk_probe__args_mask();
			if (!m)
				return setup_failed(f, -EOPNOTSUPP);
			a->sample_type |= PERF_SAMPLE_REGS_USER;
			a->sample_regs_user |= m;
		}
		if (i == 0 && !want_dummy && !o->overwrite)
			sideband_bits(o, a);
		i++;
	}
	pk_event_list__free(sw);
	if (want_dummy) {
		struct pk_attr d;
		dummy_attr(o, &d, many);
		ev = pk_evsel__new(&d, "dummy");
		if (!ev || pk_evlist__add(e->el, ev) < 0)
			return setup_failed(f, -ENOMEM);
		e->names[i] = "dummy:u";
		e->dummy_idx = i;
	}
	if (leader_sampling(events, e->el))
		p->no_inherit = true;
	if (o->overwrite) {
		struct pk_attr d;
		e->sb_el = pk_evlist__new();
		dummy_attr(o, &d, true);
		ev = pk_evsel__new(&d, "dummy");
		if (!e->sb_el || !ev || pk_evlist__add(e->sb_el, ev) < 0)
			return setup_failed(f, -ENOMEM);
	}
	err = set_maps(o, e->el, f);
	if (!err && e->sb_el)
		err = set_maps(o, e->sb_el, f);
	return err;
}

void pk_rec_events__release(struct pk_rec_events *e)
{
	pk_evlist__free(e->el);
	pk_evlist__free(e->sb_el);
	free(e->names);
	memset(e, 0, sizeof(*e));
}
