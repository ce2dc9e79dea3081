/* SPDX-License-Identifier: MIT */
/* lib/event/explain.c: perf_event_open error explanations. Synthetic contexts and limits
 * cover every paranoid level whatever this machine's setting; live tests check the
 * explanation of errors the running kernel really returns. */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hw_breakpoint.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static char msg[4096];

static struct pk_limits limits_at(int paranoid)
{
	struct pk_limits l = { .sz = sizeof(l), .paranoid = paranoid, .max_sample_rate = 1000,
			       .max_stack = 127, .max_contexts_per_stack = 8, .mlock_kb = 516,
			       .cpu_time_max_percent = 25, .nmi_watchdog = 1 };
	return l;
}

static const char *explain(int err, const struct perf_event_attr *a, pid_t pid, int cpu,
			   const char *name, const struct pk_limits *l)
{
	PK_OPTS(pk_open_ctx, ctx, .attr = a, .pid = pid, .cpu = cpu, .group_fd = -1,
		.event_name = name, .limits = l);
	int n = pk_explain_open_error(msg, sizeof(msg), err, &ctx);
	assert_int_equal(n, (int)strlen(msg));
	assert_true(n > 0);
	return msg;
}

#define assert_has(hay, needle)                                                        \
	do {                                                                           \
		if (!strstr((hay), (needle)))                                          \
			fail_msg("'%s' not found in: %s", (needle), (hay));            \
	} while (0)
#define assert_lacks(hay, needle)                                                      \
	do {                                                                           \
		if (strstr((hay), (needle)))                                           \
			fail_msg("'%s' unexpectedly in: %s", (needle), (hay));         \
	} while (0)

static struct perf_event_attr sw_attr(uint64_t config, bool exclude_kernel)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = config, .exclude_kernel = exclude_kernel };
	return a;
}

static void test_paranoid2_cpu_wide(void **state)
{
	struct pk_limits l = limits_at(2);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	const char *m = explain(-EACCES, &a, -1, 0, "cpu-clock", &l);
	assert_has(m, "'cpu-clock'");
	assert_has(m, "System-wide");
	assert_has(m, "CAP_PERFMON");
	assert_has(m, "CAP_SYS_ADMIN");
	assert_has(m, "current level is 2");
	assert_has(m, "sysctl -w kernel.perf_event_paranoid=0");
	assert_has(m, "setcap cap_perfmon+ep");
	/* exclude_kernel=1: the kernel-space rule must not be blamed */
	assert_lacks(m, "kernel space too");
	/* positive errno gives the same text */
	char copy[sizeof(msg)];
	strcpy(copy, m);
	assert_string_equal(explain(EACCES, &a, -1, 0, "cpu-clock", &l), copy);
}

static void test_paranoid2_kernel(void **state)
{
	struct pk_limits l = limits_at(2);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	const char *m = explain(-EACCES, &a, 0, -1, "task-clock", &l);
	assert_has(m, "exclude_kernel=0");
	assert_has(m, "'task-clock:u'");
	assert_has(m, "sysctl -w kernel.perf_event_paranoid=1");
	assert_has(m, "current level is 2");
	assert_lacks(m, "System-wide");
	/* both rules at once */
	m = explain(-EPERM, &a, -1, 1, "task-clock", &l);
	assert_has(m, "System-wide");
	assert_has(m, "cpu=1");
	assert_has(m, "exclude_kernel=0");
}

static void test_paranoid2_kernel_only(void **state)
{
	struct pk_limits l = limits_at(2);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, false);
	a.exclude_user = 1; /* ':k' - adding ':u' would leave nothing to count */
	const char *m = explain(-EACCES, &a, 0, -1, "task-clock:k", &l);
	assert_has(m, "kernel space only");
	assert_has(m, "sysctl -w kernel.perf_event_paranoid=1");
	assert_lacks(m, ":u'");
}

static void test_paranoid1(void **state)
{
	struct pk_limits l = limits_at(1);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, false);
	const char *m = explain(-EACCES, &a, -1, 0, "cpu-clock", &l);
	assert_has(m, "current level is 1");
	assert_has(m, "perf_event_paranoid=0");
	assert_lacks(m, "kernel space too"); /* level 1 allows kernel space */
	m = explain(-EACCES, &a, 0, -1, "cpu-clock", &l);
	assert_has(m, "None of the perf_event_paranoid rules");
	assert_has(m, "level 1");
}

static void test_paranoid0_raw_tracepoint(void **state)
{
	struct pk_limits l = limits_at(0);
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a),
				     .config = 321, .sample_period = 1,
				     .sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TID };
	const char *m = explain(-EPERM, &a, -1, 0, "sched:sched_switch", &l);
	assert_has(m, "PERF_SAMPLE_RAW");
	assert_has(m, "perf_event_paranoid -1 (it is 0)");
	assert_has(m, "sysctl -w kernel.perf_event_paranoid=-1");
	assert_lacks(m, "System-wide"); /* level 0 allows CPU-wide */
	/* level -1: no paranoid rule applies */
	l = limits_at(-1);
	m = explain(-EPERM, &a, -1, 0, "sched:sched_switch", &l);
	assert_lacks(m, "PERF_SAMPLE_RAW) needs");
	assert_has(m, "None of the perf_event_paranoid rules");
	assert_has(m, "level -1");
}

static void test_paranoid3(void **state)
{
	struct pk_limits l = limits_at(3);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	const char *m = explain(-EACCES, &a, 0, -1, "task-clock", &l);
	assert_has(m, "perf_event_paranoid is 3");
	assert_has(m, "Debian");
	assert_has(m, "sysctl -w kernel.perf_event_paranoid=2");
	assert_has(m, "CAP_PERFMON");
}

static void test_unknown_paranoid(void **state)
{
	struct pk_limits l = limits_at(INT_MIN);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	const char *m = explain(-EACCES, &a, 0, -1, NULL, &l);
	assert_has(m, "could not be read");
	assert_has(m, "the software event (config 0x1)");
}

/* A process owned by someone else, for the ptrace rule (0 if none). */
static pid_t foreign_pid(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		char path[300];
		struct stat st;
		int pid = atoi(de->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d", pid);
		if (stat(path, &st) == 0 && st.st_uid != geteuid())
			found = pid;
	}
	closedir(d);
	return found;
}

static void test_other_user(void **state)
{
	pid_t pid = foreign_pid(), child = 0;
	if (!pid && geteuid() == 0) {
		/* as root, make one: a child that becomes "nobody" */
		child = fork();
		assert_true(child >= 0);
		if (child == 0) {
			if (setgid(65534) == 0 && setuid(65534) == 0)
				pause();
			_exit(1);
		}
		for (int i = 0; i < 1000; i++) {
			char path[64];
			struct stat st;
			snprintf(path, sizeof(path), "/proc/%d", (int)child);
			if (stat(path, &st) == 0 && st.st_uid == 65534) {
				pid = child;
				break;
			}
			usleep(1000);
		}
	}
	if (!pid) {
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		PK_SKIP("no process owned by another user to attach to");
	}
	struct pk_limits l = limits_at(2);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK, true);
	const char *m = explain(-EACCES, &a, pid, -1, "task-clock", &l);
	char want[64];
	snprintf(want, sizeof(want), "Process %d belongs to another user", (int)pid);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	assert_has(m, want);
	assert_has(m, "CAP_SYS_PTRACE");
	assert_has(m, "CAP_PERFMON");
}

static void test_enoent(void **state)
{
	struct pk_limits l = limits_at(2);
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE, .size = sizeof(a),
				     .config = PERF_COUNT_HW_CPU_CYCLES };
	const char *m = explain(-ENOENT, &a, 0, -1, "cycles", &l);
	assert_has(m, "the 'cycles' hardware counter does not exist on this machine");
	assert_has(m, "task-clock");
	assert_has(m, "cpu-clock");
	a.type = PERF_TYPE_HW_CACHE;
	m = explain(-ENOENT, &a, 0, -1, "L1-dcache-loads", &l);
	assert_has(m, "'L1-dcache-loads' hardware counter");
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = 123456;
	m = explain(-ENOENT, &a, 0, -1, "foo:bar", &l);
	assert_has(m, "tracepoint id 123456");
	a.type = 4000000; /* no PMU has this dynamic type */
	m = explain(-ENOENT, &a, 0, -1, NULL, &l);
	assert_has(m, "no PMU has type 4000000");
}

static void test_einval(void **state)
{
	struct pk_limits l = limits_at(2);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	a.freq = 1;
	a.sample_freq = 5000; /* limit is 1000 */
	const char *m = explain(-EINVAL, &a, 0, -1, "cpu-clock", &l);
	assert_has(m, "5000 Hz");
	assert_has(m, "perf_event_max_sample_rate = 1000 Hz");
	assert_has(m, "at most 1000 Hz");

	a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	a.precise_ip = 3;
	a.read_format = 1ULL << 40;
	m = explain(-EINVAL, &a, 0, 100000, "cpu-clock:ppp", &l);
	assert_has(m, "precise_ip=3");
	assert_has(m, "read_format");
	assert_has(m, "CPU 100000 does not exist");
	assert_lacks(m, "sampling frequency");

	a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	m = explain(-EINVAL, &a, -1, -1, "cpu-clock", &l);
	assert_has(m, "pid=-1 with cpu=-1");
}

static void test_emfile(void **state)
{
	struct rlimit rl, low;
	char want[96];
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max < 64)
		PK_SKIP("RLIMIT_NOFILE hard limit is %s", rl.rlim_max < 64 ? "tiny" : "unlimited");

	/* soft below hard: the fix is raising the soft limit to the hard one */
	low = rl;
	low.rlim_cur = 32;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	const char *m = explain(-EMFILE, NULL, 0, -1, "cycles", NULL);
	assert_has(m, "RLIMIT_NOFILE");
	assert_has(m, "soft limit 32");
	snprintf(want, sizeof(want), "hard limit %llu", (unsigned long long)rl.rlim_max);
	assert_has(m, want);
	snprintf(want, sizeof(want), "ulimit -n %llu", (unsigned long long)rl.rlim_max);
	assert_has(m, want);

	/* soft == hard: raising the soft limit cannot help; say so */
	low.rlim_cur = low.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	m = explain(-EMFILE, NULL, 0, -1, "cycles", NULL);
	snprintf(want, sizeof(want), "soft and hard limit %llu", (unsigned long long)rl.rlim_max);
	assert_has(m, want);
	assert_has(m, "raise the hard limit");
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static void test_other_errnos(void **state)
{
	struct pk_limits l = limits_at(2);
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	const char *m;

	a.sample_type = PERF_SAMPLE_CALLCHAIN;
	a.sample_max_stack = 500;
	m = explain(-EOVERFLOW, &a, 0, -1, "cpu-clock", &l);
	assert_has(m, "sample_max_stack=500");
	assert_has(m, "perf_event_max_stack = 127");

	m = explain(-EBUSY, &a, 0, -1, "cycles", &l);
	assert_has(m, "kernel.nmi_watchdog=1");
	assert_has(m, "sysctl -w kernel.nmi_watchdog=0");
	l.nmi_watchdog = 0;
	m = explain(-EBUSY, &a, 0, -1, "cycles", &l);
	assert_lacks(m, "holds a hardware counter");
	assert_has(m, "exclusive");

	m = explain(-ESRCH, &a, 999999, -1, "cpu-clock", &l);
	assert_has(m, "no process or thread 999999");

	struct perf_event_attr bp = { .type = PERF_TYPE_BREAKPOINT, .size = sizeof(bp),
				      .bp_type = HW_BREAKPOINT_W, .bp_len = 8 };
	m = explain(-ENOSPC, &bp, 0, -1, "mem:0x1000", &l);
	assert_has(m, "breakpoint slot");

	PK_OPTS(pk_open_ctx, ctx, .attr = &a, .pid = 0, .cpu = -1, .group_fd = 42, .limits = &l);
	pk_explain_open_error(msg, sizeof(msg), EBADF, &ctx);
	assert_has(msg, "group_fd 42");

	m = explain(-EOPNOTSUPP, &(struct perf_event_attr){ .type = PERF_TYPE_SOFTWARE,
		.sample_period = 1000, .precise_ip = 2, .sample_type = PERF_SAMPLE_BRANCH_STACK },
		0, -1, "cpu-clock:pp", &l);
	assert_has(m, "precise_ip=2");
	assert_has(m, "Branch stacks");
	assert_has(m, "Sampling");

	a.size = 120;
	m = explain(-E2BIG, &a, 0, -1, "cpu-clock", &l);
	assert_has(m, "at most 120 bytes");
	assert_has(m, "sig_data");

	m = explain(-ENOSYS, &a, 0, -1, "cpu-clock", &l);
	assert_has(m, "CONFIG_PERF_EVENTS");
	assert_has(m, "seccomp");

	assert_has(explain(-EINTR, &a, 0, -1, "u", &l), "uprobe");
	assert_has(explain(-EFAULT, &a, 0, -1, "u", &l), "EFAULT");
	assert_has(explain(-ENODEV, &a, 0, 100000, "u", &l), "CPU 100000 does not exist");
	assert_has(explain(-EXDEV, &a, 0, -1, "u", &l), pk_strerror(EXDEV));
}

static void test_truncation(void **state)
{
	char small[16];
	memset(small, 'x', sizeof(small));
	int n = pk_explain_open_error(small, sizeof(small), EACCES, NULL);
	assert_int_equal(n, 15);
	assert_int_equal(strlen(small), 15);
	small[0] = 'x';
	assert_int_equal(pk_explain_open_error(small, 1, EACCES, NULL), 0);
	assert_int_equal(small[0], '\0');
	assert_int_equal(pk_explain_open_error(small, 0, EACCES, NULL), 0);
	/* every errno with no context at all */
	for (int e = 1; e < 140; e++)
		assert_true(pk_explain_open_error(msg, sizeof(msg), -e, NULL) > 0);
}

/* limits NULL: the level from /proc is the one quoted. */
static void test_reads_proc(void **state)
{
	struct pk_limits l = { .sz = sizeof(l) };
	char want[64];
	if (pk_limits__read(&l, NULL) < 0 || l.paranoid < 1 || l.paranoid > 2)
		PK_SKIP("perf_event_paranoid is not 1 or 2 here");
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	const char *m = explain(-EACCES, &a, -1, 0, "cpu-clock", NULL);
	snprintf(want, sizeof(want), "current level is %d", l.paranoid);
	assert_has(m, want);
}

/* Live: the kernel's real answer for a hardware counter. */
static void test_live_cycles(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE, .size = sizeof(a),
				     .config = PERF_COUNT_HW_CPU_CYCLES, .exclude_kernel = 1,
				     .exclude_hv = 1, .disabled = 1 };
	int fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		PK_SKIP("this machine has a hardware PMU: cycles opened");
	}
	const char *m = explain(fd, &a, 0, -1, "cycles", NULL);
	assert_has(m, "'cycles'");
	if (fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV)
		assert_has(m, "hardware");
	if (fd == -ENOENT)
		assert_has(m, "hardware PMU");
}

/* Live: a frequency above the limit is EINVAL, and the limit is quoted. */
static void test_live_freq(void **state)
{
	struct pk_limits l = { .sz = sizeof(l) };
	char want[96];
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	if (pk_limits__read(&l, NULL) < 0 || l.max_sample_rate <= 0)
		PK_SKIP("perf_event_max_sample_rate unreadable");
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK, true);
	a.freq = 1;
	a.sample_freq = (uint64_t)l.max_sample_rate + 1;
	a.disabled = 1;
	int fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	if (fd >= 0)
		close(fd);
	assert_int_equal(fd, -EINVAL);
	const char *m = explain(fd, &a, 0, -1, "cpu-clock", NULL);
	snprintf(want, sizeof(want), "perf_event_max_sample_rate = %d Hz", l.max_sample_rate);
	assert_has(m, want);

	/* and a pid that does not exist is ESRCH */
	a.freq = 0;
	a.sample_freq = 0;
	fd = pk_sys_perf_event_open(&a, INT_MAX, -1, -1, 0);
	if (fd >= 0)
		close(fd);
	assert_int_equal(fd, -ESRCH);
	snprintf(want, sizeof(want), "no process or thread %d", INT_MAX);
	assert_has(explain(fd, &a, INT_MAX, -1, "cpu-clock", NULL), want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paranoid2_cpu_wide),
		cmocka_unit_test(test_paranoid2_kernel),
		cmocka_unit_test(test_paranoid2_kernel_only),
		cmocka_unit_test(test_paranoid1),
		cmocka_unit_test(test_paranoid0_raw_tracepoint),
		cmocka_unit_test(test_paranoid3),
		cmocka_unit_test(test_unknown_paranoid),
		cmocka_unit_test(test_other_user),
		cmocka_unit_test(test_enoent),
		cmocka_unit_test(test_einval),
		cmocka_unit_test(test_emfile),
		cmocka_unit_test(test_other_errnos),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_reads_proc),
		cmocka_unit_test(test_live_cycles),
		cmocka_unit_test(test_live_freq),
	};
	pk_test_quiet_log();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
