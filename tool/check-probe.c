/* SPDX-License-Identifier: MIT */
/*
 * tool/check-probe.c - what `perfkit check` finds out: the kernel, ids, capabilities and
 * limits, then each feature tried by opening (and where it matters, running) a real
 * event, with the reason and the fix when it fails.
 */
#include "check.h"

/* Effective capabilities from capget(2); /proc/self/status as a fallback. */
static bool read_caps(uint64_t *out)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) == 0) {
		*out = (uint64_t)data[0].effective | (uint64_t)data[1].effective << 32;
		return true;
	}
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool ok = false;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7)) {
			*out = strtoull(line + 7, NULL, 16);
			ok = true;
			break;
		}
	fclose(f);
	return ok;
}


/* Burn about `ms` milliseconds of this thread's CPU time. */
static void spin_ms(long ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (volatile int i = 0; i < 10000; i++)
			;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* Open `a` for feature f; on failure store the explanation in f->reason. */
static int probe_open(struct perf_event_attr *a, pid_t pid, int cpu, const char *name,
		      struct feature *f, const struct facts *fx)
{
	int fd = pk_sys_perf_event_open(a, pid, cpu, -1, 0);
	if (fd < 0) {
		PK_OPTS(pk_open_ctx, ctx, .attr = a, .pid = pid, .cpu = cpu, .group_fd = -1,
			.event_name = name, .limits = &fx->lim);
		pk_explain_open_error(f->reason, sizeof(f->reason), fd, &ctx);
		f->ok = false;
	}
	return fd;
}

static bool read_count(int fd, uint64_t *v)
{
	return read(fd, v, sizeof(*v)) == (ssize_t)sizeof(*v);
}

/* Open, enable, run `work`, read: the event must count something. */
static void probe_count(struct perf_event_attr *a, pid_t pid, int cpu, const char *name,
			struct feature *f, const struct facts *fx, void (*work)(void),
			const char *unit)
{
	uint64_t v = 0;
	a->disabled = 1;
	int fd = probe_open(a, pid, cpu, name, f, fx);
	if (fd < 0)
		return;
	pk_ioc_enable(fd, false);
	work();
	pk_ioc_disable(fd, false);
	if (!read_count(fd, &v)) {
		setf(f->reason, sizeof(f->reason), "%s opened but reading it failed: %s",
			    name, strerror(errno));
	} else if (v == 0) {
		setf(f->reason, sizeof(f->reason), "%s opened but counted nothing: the "
			    "counter never ran (a hypervisor may expose a PMU that does not count, "
			    "or the counters are all taken)", name);
	} else {
		f->ok = true;
		setf(f->detail, sizeof(f->detail), "%s counted %llu %s", name,
			    (unsigned long long)v, unit);
	}
	close(fd);
}

static void work_spin(void) { spin_ms(5); }
static void work_sleep(void)
{
	for (int i = 0; i < 3; i++)
		usleep(500);
}

static struct perf_event_attr attr_of(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return a;
}

/* rdpmc and user time: fields of the event's first mmap page. */
static void probe_mmap_page(struct facts *fx, int hw_fd)
{
	struct feature *r = &feats[F_RDPMC], *t = &feats[F_USER_TIME];
	long pgsz = sysconf(_SC_PAGESIZE);
	int fd = hw_fd;
	const char *on = "cycles";

	if (fd < 0) {
		struct perf_event_attr a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
		fd = probe_open(&a, 0, -1, "task-clock", t, fx);
		on = "task-clock";
		if (fd < 0) {
			setf(r->reason, sizeof(r->reason), "%s", t->reason);
			return;
		}
	}
	void *p = mmap(NULL, (size_t)pgsz, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		setf(t->reason, sizeof(t->reason), "cannot mmap the %s event's page: %s "
			    "(perf_event_mlock_kb and RLIMIT_MEMLOCK limit locked pages)", on,
			    strerror(errno));
		setf(r->reason, sizeof(r->reason), "%s", t->reason);
		if (fd != hw_fd)
			close(fd);
		return;
	}
	pk_ioc_enable(fd, false);
	spin_ms(1); /* the kernel refreshes the page when the event is scheduled in */
	const struct perf_event_mmap_page *pg = p;
	unsigned rdpmc = pg->cap_user_rdpmc, utime = pg->cap_user_time;
	unsigned uzero = pg->cap_user_time_zero;
	pk_ioc_disable(fd, false);

	if (rdpmc) {
		r->ok = true;
		setf(r->detail, sizeof(r->detail), "cap_user_rdpmc=1 on %s (counter width "
			    "%u bits)", on, pg->pmc_width);
	} else if (hw_fd < 0) {
		setf(r->detail, sizeof(r->detail), "cap_user_rdpmc=0 on %s", on);
		setf(r->reason, sizeof(r->reason), "rdpmc reads hardware counters and there "
			    "is no usable hardware counter here (see hardware counters); on the "
			    "software event %s the kernel reports cap_user_rdpmc=0", on);
	} else {
		setf(r->detail, sizeof(r->detail), "cap_user_rdpmc=0 on %s", on);
		setf(r->reason, sizeof(r->reason), "the kernel does not allow rdpmc for this "
			    "event (sysfs cpu/rdpmc is %d; 0 disables it, 1 allows it for processes with "
			    "a mapped event, 2 for everyone). Fix: `echo 1 > "
			    "/sys/bus/event_source/devices/cpu/rdpmc` as root", fx->rdpmc_sysfs);
	}
	setf(t->detail, sizeof(t->detail), "cap_user_time=%u cap_user_time_zero=%u on %s",
		    utime, uzero, on);
	if (utime) {
		t->ok = true;
	} else {
		char cs[64] = "";
		FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
				"re");
		if (f) {
			if (!fgets(cs, sizeof(cs), f))
				cs[0] = '\0';
			cs[strcspn(cs, "\n")] = '\0';
			fclose(f);
		}
		setf(t->reason, sizeof(t->reason), "the kernel does not publish "
			    "time_shift/time_mult/time_offset in the mmap page: it does so only when "
			    "the scheduler clock is the TSC and stable (virtual machines using "
			    "kvm-clock or an unstable TSC do not; the clocksource here is %s); use "
			    "clock_gettime instead", cs[0] ? cs : "unknown");
	}
	munmap(p, (size_t)pgsz);
	if (fd != hw_fd)
		close(fd);
}

/* Sample into a small ring buffer and check records arrive. */
static void probe_sampling(struct perf_event_attr *a, const char *name, struct feature *f,
			   const struct facts *fx)
{
	long pgsz = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)pgsz * 9;

	a->disabled = 1;
	a->sample_period = 1000000; /* 1 ms of cpu-clock */
	a->wakeup_events = 1;
	int fd = probe_open(a, 0, -1, name, f, fx);
	if (fd < 0)
		return;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		setf(f->reason, sizeof(f->reason), "%s opened but its ring buffer cannot be "
			    "mapped: %s (perf_event_mlock_kb=%d and RLIMIT_MEMLOCK limit it; "
			    "CAP_IPC_LOCK lifts the limit)", name, strerror(errno), fx->lim.mlock_kb);
		close(fd);
		return;
	}
	pk_ioc_enable(fd, false);
	spin_ms(20);
	pk_ioc_disable(fd, false);
	const struct perf_event_mmap_page *pg = p;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	if (head > 0) {
		f->ok = true;
		setf(f->detail, sizeof(f->detail), "%s wrote %llu bytes of samples in 20 ms",
			    name, (unsigned long long)head);
	} else {
		setf(f->reason, sizeof(f->reason), "%s opened but produced no samples in "
			    "20 ms of CPU time", name);
	}
	munmap(p, len);
	close(fd);
}

static void probe_breakpoint(struct facts *fx)
{
	struct feature *f = &feats[F_BREAKPOINT];
	static volatile uint64_t target;
	struct perf_event_attr a = attr_of(PERF_TYPE_BREAKPOINT, 0);
	uint64_t v = 0;
	char name[64];

	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uint64_t)(uintptr_t)&target;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.disabled = 1;
	setf(name, sizeof(name), "mem:%p/8:w", (void *)&target);
	int fd = probe_open(&a, 0, -1, name, f, fx);
	if (fd < 0)
		return;
	pk_ioc_enable(fd, false);
	for (int i = 0; i < 8; i++)
		target = (uint64_t)i;
	pk_ioc_disable(fd, false);
	if (read_count(fd, &v) && v > 0) {
		f->ok = true;
		setf(f->detail, sizeof(f->detail), "a write watchpoint caught %llu of 8 writes",
			    (unsigned long long)v);
	} else {
		setf(f->reason, sizeof(f->reason), "a write watchpoint opened but caught "
			    "none of 8 writes: the CPU's debug-register exceptions do not reach the kernel (some "
			    "hypervisors, e.g. Firecracker, do not deliver them); breakpoint events open "
			    "but never count here");
	}
	close(fd);
}

/* Mount point of a tracefs from /proc/mounts (even one we cannot read), or NULL. */
static const char *tracefs_mount(void)
{
	static char dir[512];
	char line[1024], dev[256], type[64];
	FILE *m = fopen("/proc/mounts", "re");
	const char *found = NULL;
	if (!m)
		return NULL;
	while (!found && fgets(line, sizeof(line), m))
		if (sscanf(line, "%255s %511s %63s", dev, dir, type) == 3 && !strcmp(type, "tracefs"))
			found = dir;
	fclose(m);
	return found;
}

static void probe_tracepoint(struct facts *fx)
{
	struct feature *f = &feats[F_TRACEPOINT];
	if (!tool_ensure_tracefs()) {
		const char *dir = tracefs_mount();
		if (dir && access(dir, R_OK | X_OK) < 0)
			setf(f->reason, sizeof(f->reason), "tracefs is mounted at %s but uid %d cannot "
			     "read it (%s; tracefs is root-only by default). Fix: as root, `chmod -R "
			     "go+rX %s` or mount it with `-o mode=755`, or run as root", dir,
			     (int)fx->euid, strerror(errno), dir);
		else
			setf(f->reason, sizeof(f->reason), "tracefs is not mounted. Fix: `mount -t "
			     "tracefs nodev /sys/kernel/tracing` as root (perfkit mounts it itself "
			     "when run as root)");
		return;
	}
	long long id = pk_tracepoint__id(NULL, "sched", "sched_switch");
	if (id < 0) {
		setf(f->reason, sizeof(f->reason), "tracefs is at %s but "
			    "events/sched/sched_switch/id cannot be read: %s (tracefs is mode 0700 "
			    "root-only by default; a root can `chmod -R go+rX %s/events`)",
			    pk_tracefs__root(), pk_strerror((int)id), pk_tracefs__root());
		return;
	}
	struct perf_event_attr a = attr_of(PERF_TYPE_TRACEPOINT, (uint64_t)id);
	a.exclude_kernel = 0; /* tracepoints fire in the kernel: excluding it counts nothing */
	probe_count(&a, 0, -1, "sched:sched_switch", f, fx, work_sleep, "context switches");
}

static void probe_probe_pmu(struct facts *fx, enum feat_id id, const char *pmu_name)
{
	struct feature *f = &feats[id];
	const struct pk_pmu *p = fx->pmus ? pk_pmu_set__find(fx->pmus, pmu_name) : NULL;
	if (p) {
		f->ok = true;
		setf(f->detail, sizeof(f->detail), "%s PMU, type %u", pmu_name,
			    pk_pmu__type(p));
	} else {
		setf(f->reason, sizeof(f->reason), "/sys/bus/event_source/devices/%s is "
			    "absent: the kernel was built without %s; probes can still be created "
			    "through tracefs (%s_events) if that is enabled", pmu_name,
			    id == F_KPROBE ? "CONFIG_KPROBE_EVENTS" : "CONFIG_UPROBE_EVENTS",
			    pmu_name);
	}
}

void check_gather(struct facts *fx)
{
	struct utsname u;

	memset(fx, 0, sizeof(*fx));
	if (uname(&u) == 0)
		setf(fx->kernel, sizeof(fx->kernel), "%s %s %s", u.sysname, u.release,
			    u.machine);
	else
		setf(fx->kernel, sizeof(fx->kernel), "unknown");
	fx->uid = getuid();
	fx->euid = geteuid();
	fx->caps_known = read_caps(&fx->caps);
	fx->lim.sz = sizeof(fx->lim);
	if (pk_limits__read(&fx->lim, NULL) < 0 && fx->lim.paranoid != INT_MIN)
		fx->lim.paranoid = INT_MIN;
	fx->nofile_ok = getrlimit(RLIMIT_NOFILE, &fx->nofile) == 0;
	fx->rdpmc_sysfs = -1;
	if (pk_pmu_set__load(&fx->pmus, NULL) < 0)
		fx->pmus = NULL;
	if (fx->pmus) {
		const struct pk_pmu *cpu = pk_pmu_set__find(fx->pmus, "cpu");
		if (!cpu)
			cpu = pk_pmu_set__find(fx->pmus, "cpu_core");
		if (cpu)
			fx->rdpmc_sysfs = pk_pmu__rdpmc(cpu);
	}

	struct perf_event_attr a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	probe_count(&a, 0, -1, "task-clock", &feats[F_SOFTWARE], fx, work_spin, "ns");

	a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	a.exclude_kernel = 0;
	probe_count(&a, 0, -1, "task-clock", &feats[F_KERNEL], fx, work_spin,
		    "ns (user and kernel space)");

	/* cycles stays open for the mmap-page probes */
	int hw_fd = -1;
	a = attr_of(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	probe_count(&a, 0, -1, "cycles", &feats[F_HARDWARE], fx, work_spin, "cycles");
	if (feats[F_HARDWARE].ok)
		hw_fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);

	a = attr_of(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D |
			    PERF_COUNT_HW_CACHE_OP_READ << 8 | PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16);
	probe_count(&a, 0, -1, "L1-dcache-loads", &feats[F_CACHE], fx, work_spin, "loads");

	probe_mmap_page(fx, hw_fd);
	if (hw_fd >= 0)
		close(hw_fd);

	probe_tracepoint(fx);
	probe_breakpoint(fx);

	a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	int fd = probe_open(&a, -1, 0, "cpu-clock", &feats[F_SYSTEM_WIDE], fx);
	if (fd >= 0) {
		feats[F_SYSTEM_WIDE].ok = true;
		setf(feats[F_SYSTEM_WIDE].detail, sizeof(feats[F_SYSTEM_WIDE].detail),
			    "cpu-clock opened on CPU 0 for every process (pid=-1)");
		close(fd);
	}

	a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	probe_sampling(&a, "cpu-clock", &feats[F_CALLCHAIN], fx);

	a = attr_of(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
#if defined(__x86_64__)
	a.sample_regs_user = (1ULL << 6) | (1ULL << 7) | (1ULL << 8); /* bp, sp, ip */
#elif defined(__aarch64__)
	a.sample_regs_user = (1ULL << 29) | (1ULL << 30) | (1ULL << 31) | (1ULL << 32);
#else
	a.sample_regs_user = 1;
#endif
	a.sample_stack_user = 8192;
	probe_sampling(&a, "cpu-clock", &feats[F_USER_STACK], fx);

	probe_probe_pmu(fx, F_KPROBE, "kprobe");
	probe_probe_pmu(fx, F_UPROBE, "uprobe");
}
