/* SPDX-License-Identifier: MIT */
/*
 * Explanations of perf_event_open(2) failures: which rule of the kernel most likely
 * refused this attr/target, and what to change. The rules follow the man page's ERRORS
 * section and the perf_event_paranoid levels:
 *   3 (Debian/Ubuntu patch)  nothing for unprivileged users
 *   2                        own processes, user space only   (kernel check: level > 1)
 *   1                        own processes, kernel too; no CPU-wide (level > 0)
 *   0                        CPU-wide too, but no raw tracepoint data (level > -1)
 *  -1                        everything
 * CAP_PERFMON (Linux 5.8+) or CAP_SYS_ADMIN bypasses all of these.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/event.h>

#define CAP_PERFMON_BIT 38
#define CAP_SYS_ADMIN_BIT 21
#define CAP_SYS_PTRACE_BIT 19

/* Output buffer that never overflows; `pos` counts what we wanted to write. */
struct sb {
	char *buf;
	size_t len;
	size_t pos;
};

static void PK_PRINTF(2, 3) sb_add(struct sb *s, const char *fmt, ...)
{
	va_list ap;
	char *dst = s->pos < s->len ? s->buf + s->pos : NULL;
	size_t room = s->pos < s->len ? s->len - s->pos : 0;

	va_start(ap, fmt);
	int n = vsnprintf(dst, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->pos += (size_t)n;
}

/* Effective capability set of this process from /proc/self/status (0 if unreadable). */
static uint64_t cap_eff(void)
{
	char buf[4096];
	if (pk_read_small_file("/proc/self/status", buf, sizeof(buf)) < 0)
		return 0;
	const char *p = strstr(buf, "\nCapEff:");
	if (!p)
		return 0;
	return strtoull(p + 8, NULL, 16);
}

static bool perfmon_capable(void)
{
	uint64_t c = cap_eff();
	return (c & (1ULL << CAP_PERFMON_BIT)) || (c & (1ULL << CAP_SYS_ADMIN_BIT));
}

static const char *type_name(uint32_t type)
{
	switch (type) {
	case PERF_TYPE_HARDWARE: return "hardware";
	case PERF_TYPE_SOFTWARE: return "software";
	case PERF_TYPE_TRACEPOINT: return "tracepoint";
	case PERF_TYPE_HW_CACHE: return "hardware-cache";
	case PERF_TYPE_RAW: return "raw hardware";
	case PERF_TYPE_BREAKPOINT: return "breakpoint";
	default: return NULL;
	}
}

/* "'cycles'" or "the hardware event (config 0x0)" for messages. */
static const char *event_label(const struct pk_open_ctx *ctx, char *tmp, size_t len)
{
	const char *name = PK_OPTS_GET(ctx, event_name, NULL);
	const struct perf_event_attr *a = PK_OPTS_GET(ctx, attr, NULL);
	if (name && *name) {
		pk_snprintf(tmp, len, "'%s'", name);
	} else if (a) {
		const char *t = type_name(a->type);
		if (t)
			pk_snprintf(tmp, len, "the %s event (config 0x%llx)", t,
				    (unsigned long long)a->config);
		else
			pk_snprintf(tmp, len, "the event of PMU type %u (config 0x%llx)", a->type,
				    (unsigned long long)a->config);
	} else {
		pk_snprintf(tmp, len, "the event");
	}
	return tmp;
}

/* Name of the sysfs PMU with this type, into out; false if none. */
static bool pmu_of_type(uint32_t type, char *out, size_t len)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;
	bool found = false;
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char path[PATH_MAX];
		long long t;
		if (de->d_name[0] == '.')
			continue;
		pk_snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", de->d_name);
		if (pk_read_int_file(path, &t) == 0 && t == (long long)type) {
			pk_snprintf(out, len, "%s", de->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

/* Is a core (CPU) hardware PMU registered? x86 and most others register it as type 4
 * (PERF_TYPE_RAW) named "cpu" (hybrid: "cpu_core"/"cpu_atom"); ARM names it "armv*". */
static bool have_core_pmu(void)
{
	char name[256];
	struct stat st;
	if (pmu_of_type(PERF_TYPE_RAW, name, sizeof(name)))
		return true;
	if (stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
	    stat("/sys/bus/event_source/devices/cpu_core", &st) == 0)
		return true;
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;
	bool found = false;
	if (!d)
		return false;
	while (!found && (de = readdir(d)))
		found = !strncmp(de->d_name, "armv", 4) || !strncmp(de->d_name, "arm_cortex", 10);
	closedir(d);
	return found;
}

static bool cpu_wide(const struct pk_open_ctx *ctx)
{
	unsigned long flags = PK_OPTS_GET(ctx, flags, 0UL);
	return PK_OPTS_GET(ctx, pid, 0) == -1 || (flags & PERF_FLAG_PID_CGROUP);
}

/* Owner uid of process `pid` (-1 if unknown). */
static long long pid_owner(pid_t pid)
{
	char path[64];
	struct stat st;
	pk_snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) < 0)
		return -1;
	return st.st_uid;
}

static void fix_setcap(struct sb *s)
{
	sb_add(s, "or give the program CAP_PERFMON (`setcap cap_perfmon+ep <program>`; "
		  "Linux 5.8+, CAP_SYS_ADMIN on older kernels) or run it as root");
}

static void paranoid_fix(struct sb *s, int need)
{
	sb_add(s, " Fix: `sysctl -w kernel.perf_event_paranoid=%d` ", need);
	fix_setcap(s);
	sb_add(s, ".");
}

/* EACCES / EPERM: list every permission rule this attr/target runs into. */
static void explain_perm(struct sb *s, int err, const struct pk_open_ctx *ctx,
			 const struct pk_limits *lim, const char *ev)
{
	const struct perf_event_attr *a = PK_OPTS_GET(ctx, attr, NULL);
	pid_t pid = PK_OPTS_GET(ctx, pid, 0);
	int cpu = PK_OPTS_GET(ctx, cpu, -1);
	int lvl = lim->paranoid;
	bool capable = perfmon_capable();
	const char *name = PK_OPTS_GET(ctx, event_name, NULL);
	int causes = 0;

	sb_add(s, "permission denied opening %s.", ev);
	if (lvl == INT_MIN) {
		sb_add(s, " /proc/sys/kernel/perf_event_paranoid could not be read, so the "
			  "restriction in force is unknown; events beyond the user space of your own "
			  "processes need CAP_PERFMON (or CAP_SYS_ADMIN).");
		paranoid_fix(s, -1);
		return;
	}
	if (lvl >= 3) {
		/* upstream kernels treat 3 as 2 (the rules below then apply too); only with
		 * the Debian/Ubuntu patch does it forbid everything */
		sb_add(s, " perf_event_paranoid is %d: with the Debian/Ubuntu kernel patch "
			  "unprivileged users may not use perf_event_open at all, not even for their "
			  "own processes (upstream kernels treat it as 2)."
			  " Fix: `sysctl -w kernel.perf_event_paranoid=2` (own processes, user space) ",
		       lvl);
		fix_setcap(s);
		sb_add(s, ".");
		causes++;
	}
	if (a && a->type == PERF_TYPE_TRACEPOINT && (a->sample_type & PERF_SAMPLE_RAW) &&
	    lvl > -1) {
		sb_add(s, " Sampling raw tracepoint data (PERF_SAMPLE_RAW) needs CAP_PERFMON or "
			  "perf_event_paranoid -1 (it is %d).", lvl);
		paranoid_fix(s, -1);
		causes++;
	}
	if (cpu_wide(ctx) && lvl > 0) {
		sb_add(s, " System-wide (CPU-wide) measurement (pid=-1, cpu=%d) needs CAP_PERFMON "
			  "(or CAP_SYS_ADMIN) or perf_event_paranoid <= 0; the current level is %d.",
		       cpu, lvl);
		paranoid_fix(s, 0);
		causes++;
	}
	if (a && !a->exclude_kernel && a->exclude_user && lvl >= 2) {
		sb_add(s, " The event counts kernel space only (exclude_user=1), which needs "
			  "CAP_PERFMON or perf_event_paranoid <= 1; the current level is %d. Fix: "
			  "`sysctl -w kernel.perf_event_paranoid=1` ", lvl);
		fix_setcap(s);
		sb_add(s, ".");
		causes++;
	} else if (a && !a->exclude_kernel && lvl >= 2) {
		sb_add(s, " The event counts kernel space too (exclude_kernel=0), which needs "
			  "CAP_PERFMON or perf_event_paranoid <= 1; the current level is %d. Fix: "
			  "count user space only (add the :u modifier%s%s%s, i.e. exclude_kernel=1), "
			  "or `sysctl -w kernel.perf_event_paranoid=1` ",
		       lvl, name ? ": '" : "", name ? name : "", name ? ":u'" : "");
		fix_setcap(s);
		sb_add(s, ".");
		causes++;
	}
	if (a && (a->sample_type & PERF_SAMPLE_PHYS_ADDR) && lvl >= 2) {
		sb_add(s, " Physical addresses (PERF_SAMPLE_PHYS_ADDR) need CAP_PERFMON or "
			  "perf_event_paranoid <= 1 (it is %d).", lvl);
		causes++;
	}
	if (a && a->type == PERF_TYPE_BREAKPOINT && a->bp_addr >= 0xffff800000000000ULL) {
		sb_add(s, " A breakpoint on a kernel address (0x%llx) needs CAP_PERFMON or "
			  "CAP_SYS_ADMIN.", (unsigned long long)a->bp_addr);
		causes++;
	}
	if (a && a->namespaces) {
		sb_add(s, " Namespace events (attr.namespaces) need CAP_PERFMON or CAP_SYS_ADMIN.");
		causes++;
	}
	if (pid > 0) {
		long long owner = pid_owner(pid);
		if (owner >= 0 && owner != (long long)geteuid()) {
			sb_add(s, " Process %d belongs to another user (uid %lld): attaching needs "
				  "ptrace access to it (PTRACE_MODE_READ: same user, or CAP_SYS_PTRACE, "
				  "and kernel.yama.ptrace_scope permitting) or CAP_PERFMON. Fix: run as "
				  "uid %lld or as root, or ",
			       (int)pid, owner, owner);
			sb_add(s, "give the program CAP_PERFMON (`setcap cap_perfmon+ep <program>`).");
			causes++;
		}
	}
	char pmu[64];
	if (a && a->type >= PERF_TYPE_MAX && !capable && pmu_of_type(a->type, pmu, sizeof(pmu)) &&
	    (!strcmp(pmu, "uprobe") || !strcmp(pmu, "kprobe"))) {
		/* perf_uprobe_event_init / perf_kprobe_event_init check the capability
		 * before anything else, whatever perf_event_paranoid says */
		sb_add(s, " The %s PMU (dynamic probes: u:, r:, sdt:, k: events) is for "
			  "privileged users only, whatever perf_event_paranoid says: run as root or "
			  "give the program CAP_PERFMON (`setcap cap_perfmon+ep <program>`).", pmu);
		causes++;
	}
	if (err == EPERM && a) {
		sb_add(s, " EPERM is also how some PMUs refuse exclude_* settings they cannot honour"
			  " (exclude_hv=%u exclude_idle=%u exclude_user=%u exclude_kernel=%u here), "
			  "and how the kernel refuses the function-trace tracepoint ftrace:function "
			  "to unprivileged users.",
		       a->exclude_hv, a->exclude_idle, a->exclude_user, a->exclude_kernel);
	}
	if (!causes)
		sb_add(s, " None of the perf_event_paranoid rules (level %d: %s) explains this "
			  "request.", lvl, pk_paranoid__describe(lvl));
	if (capable)
		sb_add(s, " This process already holds CAP_PERFMON or CAP_SYS_ADMIN, so a security "
			  "module (SELinux, AppArmor, kernel lockdown) or a seccomp filter probably "
			  "refused: check `dmesg` and the audit log.");
}

static void explain_noent(struct sb *s, const struct pk_open_ctx *ctx, const char *ev)
{
	const struct perf_event_attr *a = PK_OPTS_GET(ctx, attr, NULL);
	char pmu[256];

	if (!a) {
		sb_add(s, "%s does not exist on this machine: the attr type is not a PMU the kernel "
			  "knows, or the PMU does not implement this generic event.", ev);
		return;
	}
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		sb_add(s, "the %s hardware counter does not exist on this machine", ev);
		if (!have_core_pmu())
			sb_add(s, ": no hardware PMU is registered (nothing under "
				  "/sys/bus/event_source/devices is a CPU PMU; virtual machines often have "
				  "no PMU, or the hypervisor does not expose it)");
		else
			sb_add(s, ": this CPU's hardware PMU does not implement this %s event",
			       a->type == PERF_TYPE_HW_CACHE ? "cache" : "generic");
		sb_add(s, ". Software events such as task-clock and cpu-clock work without a "
			  "hardware PMU; `perfkit list` shows what is available here.");
		break;
	case PERF_TYPE_TRACEPOINT:
		sb_add(s, "tracepoint id %llu (%s) is unknown to the kernel: the tracepoint was "
			  "removed or its id is stale (ids come from tracefs "
			  "events/<system>/<name>/id and change between boots).",
		       (unsigned long long)a->config, ev);
		break;
	case PERF_TYPE_SOFTWARE:
		sb_add(s, "software event config %llu (%s) is not known to this kernel "
			  "(it is newer than the running kernel).",
		       (unsigned long long)a->config, ev);
		break;
	default:
		if (a->type >= PERF_TYPE_MAX && !pmu_of_type(a->type, pmu, sizeof(pmu))) {
			sb_add(s, "no PMU has type %u on this machine (%s): PMU types are dynamic, "
				  "read them from /sys/bus/event_source/devices/<pmu>/type.",
			       a->type, ev);
		} else {
			sb_add(s, "%s does not exist: the PMU does not implement this config.", ev);
		}
	}
}

static void explain_inval(struct sb *s, const struct pk_open_ctx *ctx,
			  const struct pk_limits *lim, const char *ev)
{
	const struct perf_event_attr *a = PK_OPTS_GET(ctx, attr, NULL);
	pid_t pid = PK_OPTS_GET(ctx, pid, 0);
	int cpu = PK_OPTS_GET(ctx, cpu, -1);
	int group_fd = PK_OPTS_GET(ctx, group_fd, -1);
	unsigned long flags = PK_OPTS_GET(ctx, flags, 0UL);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int n = 0;

	sb_add(s, "the kernel rejected %s as invalid (EINVAL).", ev);
	if (pid == -1 && cpu == -1) {
		sb_add(s, " pid=-1 with cpu=-1 (every process on every CPU) is not a valid target: "
			  "open one event per CPU instead.");
		n++;
	}
	if (cpu < -1 || (ncpu > 0 && cpu >= ncpu)) {
		sb_add(s, " CPU %d does not exist (this machine has %ld).", cpu, ncpu);
		n++;
	}
	if (flags & ~(unsigned long)(PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT |
				     PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC | PK_OPEN_NO_CLOEXEC)) {
		sb_add(s, " flags 0x%lx has unknown bits.", flags);
		n++;
	}
	if (a) {
		if (a->freq && lim->max_sample_rate != INT_MIN &&
		    a->sample_freq > (uint64_t)lim->max_sample_rate) {
			sb_add(s, " The sampling frequency %llu Hz is above "
				  "kernel.perf_event_max_sample_rate = %d Hz. Fix: ask for at most %d Hz, "
				  "or raise it: `sysctl -w kernel.perf_event_max_sample_rate=%llu`.",
			       (unsigned long long)a->sample_freq, lim->max_sample_rate,
			       lim->max_sample_rate, (unsigned long long)a->sample_freq);
			n++;
		}
		if (!a->freq && (a->sample_period >> 63)) {
			sb_add(s, " sample_period has bit 63 set.");
			n++;
		}
		if (a->precise_ip) {
			sb_add(s, " precise_ip=%u may be higher than this PMU supports "
				  "(many support 0 only; try fewer 'p' modifiers or ':P').", a->precise_ip);
			n++;
		}
		if (a->sample_type & ~(uint64_t)(PERF_SAMPLE_MAX - 1)) {
			sb_add(s, " sample_type 0x%llx has bits this kernel may not know (0x%llx).",
			       (unsigned long long)a->sample_type,
			       (unsigned long long)(a->sample_type & ~(uint64_t)(PERF_SAMPLE_MAX - 1)));
			n++;
		}
		if (a->read_format & ~(uint64_t)(PERF_FORMAT_MAX - 1)) {
			sb_add(s, " read_format 0x%llx has unknown bits.",
			       (unsigned long long)a->read_format);
			n++;
		} else if ((a->read_format & PERF_FORMAT_LOST)) {
			sb_add(s, " read_format asks for PERF_FORMAT_LOST, which needs Linux 6.0+.");
			n++;
		}
		if ((a->pinned || a->exclusive) && group_fd != -1) {
			sb_add(s, " pinned/exclusive is only valid on a group leader (group_fd=%d).",
			       group_fd);
			n++;
		}
		if (a->inherit && (a->sample_type & PERF_SAMPLE_READ) &&
		    !(a->read_format & PERF_FORMAT_GROUP)) {
			sb_add(s, " inherit together with PERF_SAMPLE_READ is refused by kernels "
				  "before 6.12.");
			n++;
		}
		if ((a->sample_type & PERF_SAMPLE_STACK_USER) && (a->sample_stack_user % 8 ||
								  a->sample_stack_user == 0)) {
			sb_add(s, " sample_stack_user=%u must be a non-zero multiple of 8.",
			       a->sample_stack_user);
			n++;
		}
		if (a->type == PERF_TYPE_BREAKPOINT) {
			sb_add(s, " For a breakpoint, bp_len=%llu must be 1, 2, 4 or 8 and the address "
				  "aligned to it, and bp_type=%u a valid HW_BREAKPOINT_* combination.",
			       (unsigned long long)a->bp_len, a->bp_type);
			n++;
		}
		if (a->type == PERF_TYPE_HARDWARE && a->config >= PERF_COUNT_HW_MAX) {
			sb_add(s, " Generic hardware event %llu is beyond the kernel's table.",
			       (unsigned long long)a->config);
			n++;
		}
		if (a->use_clockid) {
			sb_add(s, " clockid %d must be a valid POSIX clock.", a->clockid);
			n++;
		}
		if (a->sample_period && a->type != PERF_TYPE_SOFTWARE &&
		    a->type != PERF_TYPE_TRACEPOINT && a->type != PERF_TYPE_BREAKPOINT) {
			sb_add(s, " Sampling (sample_period/freq) is refused by some PMUs.");
			n++;
		}
	}
	sb_add(s, " %s: the config may set reserved bits or name an event this PMU does not "
		  "support, an exclude_* combination may be refused, or the group may not fit on the "
		  "PMU's counters.", n ? "Otherwise" : "Likely causes");
}

static void explain_emfile(struct sb *s, const char *ev)
{
	struct rlimit rl;
	sb_add(s, "too many open files while opening %s: every event takes one file descriptor "
		  "per CPU and per thread, and this process reached RLIMIT_NOFILE", ev);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		char soft[32], hard[32];
		if (rl.rlim_cur == RLIM_INFINITY)
			pk_snprintf(soft, sizeof(soft), "unlimited");
		else
			pk_snprintf(soft, sizeof(soft), "%llu", (unsigned long long)rl.rlim_cur);
		if (rl.rlim_max == RLIM_INFINITY)
			pk_snprintf(hard, sizeof(hard), "unlimited");
		else
			pk_snprintf(hard, sizeof(hard), "%llu", (unsigned long long)rl.rlim_max);
		if (rl.rlim_cur < rl.rlim_max)
			sb_add(s, " (soft limit %s, hard limit %s). Fix: `ulimit -n %s` in the shell "
				  "before running, or measure fewer events/CPUs/threads.",
			       soft, hard, hard);
		else
			sb_add(s, " (soft and hard limit %s). Fix: raise the hard limit (as root: "
				  "`ulimit -Hn N`, or /etc/security/limits.conf for the user, or "
				  "LimitNOFILE= for a service), or measure fewer events/CPUs/threads.",
			       hard);
	} else {
		sb_add(s, ". Fix: raise it with `ulimit -n`, or measure fewer events.");
	}
}

static void explain_nodev(struct sb *s, const struct pk_open_ctx *ctx, const char *ev)
{
	int cpu = PK_OPTS_GET(ctx, cpu, -1);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	sb_add(s, "no such device opening %s.", ev);
	if (cpu >= 0) {
		char path[96];
		long long online = 1;
		pk_snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		if (ncpu > 0 && cpu >= ncpu)
			sb_add(s, " CPU %d does not exist (this machine has %ld).", cpu, ncpu);
		else if (pk_read_int_file(path, &online) == 0 && online == 0)
			sb_add(s, " CPU %d is offline. Fix: `echo 1 > %s`, or pick an online CPU.",
			       cpu, path);
		else
			sb_add(s, " CPU %d may be offline or not covered by this PMU's cpumask.", cpu);
	}
	sb_add(s, " The PMU may not support this kind of event or target: uncore PMUs count "
		  "only CPU-wide (pid=-1 on a CPU from their cpumask), and some features are absent "
		  "on this CPU model.");
}

PK_API int pk_explain_open_error(char *buf, size_t len, int err, const struct pk_open_ctx *ctx)
{
	struct sb s = { .buf = buf, .len = len, .pos = 0 };
	struct pk_limits own = { .sz = sizeof(own) };
	const struct pk_limits *lim = PK_OPTS_GET(ctx, limits, NULL);
	const struct perf_event_attr *a = PK_OPTS_GET(ctx, attr, NULL);
	char evbuf[160];
	const char *ev;

	if (!buf || !len)
		return 0;
	buf[0] = '\0';
	if (ctx && !PK_OPTS_VALID(ctx, pk_open_ctx))
		ctx = NULL;
	ev = event_label(ctx, evbuf, sizeof(evbuf));
	if (!lim) {
		pk_limits__read(&own, NULL);
		lim = &own;
	}
	if (err < 0)
		err = -err;

	switch (err) {
	case EACCES:
	case EPERM:
		explain_perm(&s, err, ctx, lim, ev);
		break;
	case ENOENT:
		explain_noent(&s, ctx, ev);
		break;
	case EOPNOTSUPP:
		sb_add(&s, "%s needs a feature this PMU does not have (EOPNOTSUPP).", ev);
		if (a) {
			if (a->sample_period)
				sb_add(&s, " Sampling was requested: PMUs without an overflow interrupt "
					    "(uncore, some virtual PMUs) can only count; drop sampling "
					    "or count instead.");
			if (a->precise_ip)
				sb_add(&s, " precise_ip=%u (low-skid sampling, the :p modifiers) is not "
					    "supported here; remove the p modifiers.", a->precise_ip);
			if (a->sample_type & PERF_SAMPLE_BRANCH_STACK)
				sb_add(&s, " Branch stacks (PERF_SAMPLE_BRANCH_STACK, LBR) need hardware "
					    "support and a hardware event; software events never have "
					    "them.");
			if (a->exclude_idle || a->exclude_hv || a->exclude_host || a->exclude_guest)
				sb_add(&s, " Some exclude_* bits are not supported by this PMU.");
		}
		break;
	case EINVAL:
		explain_inval(&s, ctx, lim, ev);
		break;
	case EMFILE:
	case ENFILE:
		explain_emfile(&s, ev);
		if (err == ENFILE)
			sb_add(&s, " (ENFILE: the system-wide file table is full: fs.file-max.)");
		break;
	case ENODEV:
		explain_nodev(&s, ctx, ev);
		break;
	case EBUSY:
		sb_add(&s, "the PMU is busy: another event holds exclusive access to it (%s "
			    "cannot be scheduled). Another profiling tool may be running (perf, a "
			    "monitoring agent, a VM using the PMU), or an event was opened with "
			    "exclusive/pinned.", ev);
		if (lim->nmi_watchdog == 1)
			sb_add(&s, " The NMI watchdog holds a hardware counter "
				    "(kernel.nmi_watchdog=1). Fix: `sysctl -w kernel.nmi_watchdog=0` or "
				    "stop the other tool.");
		else if (lim->nmi_watchdog == INT_MIN)
			sb_add(&s, " Fix: stop the other tool; if kernel.nmi_watchdog is 1 the watchdog "
				    "holds a counter (`sysctl -w kernel.nmi_watchdog=0`).");
		else
			sb_add(&s, " Fix: stop the other tool (kernel.nmi_watchdog=%d).",
			       lim->nmi_watchdog);
		break;
	case EOVERFLOW:
		sb_add(&s, "the call-chain depth requested for %s", ev);
		if (a)
			sb_add(&s, " (sample_max_stack=%u)", a->sample_max_stack);
		if (lim->max_stack != INT_MIN)
			sb_add(&s, " is above kernel.perf_event_max_stack = %d. Fix: ask for at most %d "
				    "frames, or `sysctl -w kernel.perf_event_max_stack=%u`.",
			       lim->max_stack, lim->max_stack, a ? a->sample_max_stack : 1024u);
		else
			sb_add(&s, " is above kernel.perf_event_max_stack.");
		break;
	case ESRCH:
		sb_add(&s, "no process or thread %d exists (it may have exited) while opening %s. "
			    "Fix: check the pid/tid with `ps`.", (int)PK_OPTS_GET(ctx, pid, 0), ev);
		break;
	case ENOSPC:
		if (a && a->type == PERF_TYPE_BREAKPOINT)
			sb_add(&s, "no hardware breakpoint slot is left for %s: the CPU's debug "
				    "registers (4 on x86) are all in use, by this tool, a debugger or "
				    "other perf users. Fix: use fewer breakpoints/watchpoints.", ev);
		else
			sb_add(&s, "no room for %s on the PMU (ENOSPC): hardware breakpoint slots or "
				    "counters are exhausted. Fix: measure fewer events at once.", ev);
		break;
	case EBADF:
		if (PK_OPTS_GET(ctx, flags, 0UL) & PERF_FLAG_PID_CGROUP)
			sb_add(&s, "the cgroup file descriptor %d given as pid is not an open "
				    "directory of cgroupfs (or group_fd %d is invalid).",
			       (int)PK_OPTS_GET(ctx, pid, 0), PK_OPTS_GET(ctx, group_fd, -1));
		else
			sb_add(&s, "group_fd %d is not a valid perf event file descriptor (it is "
				    "closed or refers to something else) while opening %s.",
			       PK_OPTS_GET(ctx, group_fd, -1), ev);
		break;
	case EINTR:
		sb_add(&s, "perf_event_open was interrupted (EINTR) opening %s: the kernel returns "
			    "this when perf and ftrace are mixed on the same uprobe, or a signal "
			    "arrived. Fix: retry; disable the ftrace use of that uprobe.", ev);
		break;
	case EFAULT:
		sb_add(&s, "the attr pointer given to perf_event_open for %s is not readable "
			    "memory (EFAULT): a bug in the caller.", ev);
		break;
	case E2BIG: {
		struct utsname u;
		bool have_u = uname(&u) == 0;
		sb_add(&s, "the kernel%s%s is older than the perf_event_attr used for %s",
		       have_u ? " " : "", have_u ? u.release : "", ev);
		if (a && a->size)
			sb_add(&s, ": it expects at most %u bytes; the field at that offset (%s) "
				    "and later ones are not supported",
			       a->size, pk_attr__field_name(a->size) ? pk_attr__field_name(a->size)
								      : "?");
		sb_add(&s, ". Fix: do not use that feature on this kernel, or upgrade the kernel.");
		break;
	}
	case ENOSYS:
		sb_add(&s, "perf_event_open is not available (ENOSYS): the kernel was built without "
			    "CONFIG_PERF_EVENTS (then /proc/sys/kernel/perf_event_paranoid is "
			    "absent), or a seccomp filter blocks the system call (containers: "
			    "Docker's default profile does; run with --security-opt seccomp=... or "
			    "--privileged).");
		if (a && (a->sample_type & PERF_SAMPLE_STACK_USER))
			sb_add(&s, " With PERF_SAMPLE_STACK_USER it can also mean user-stack "
				    "sampling is not supported on this architecture.");
		break;
	default:
		sb_add(&s, "opening %s failed: %s.", ev, pk_strerror(err));
	}
	return (int)PK_MIN(s.pos, len - 1);
}
