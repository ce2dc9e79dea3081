/* SPDX-License-Identifier: MIT */
/* lib/count: scaling, cpu/thread maps, topology, evlist open/read/groups, aggregation. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static struct pk_attr sw_attr(uint64_t config)
{
	struct pk_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.config = config;
	a.attr.size = sizeof(a.attr);
	return a;
}

static void touch_pages(int n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)n * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	madvise(m, (size_t)n * page, MADV_NOHUGEPAGE);
	for (int i = 0; i < n; i++)
		((volatile char *)m)[i * page] = 1;
	munmap(m, (size_t)n * page);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* ---- scaling ---- */

static void test_scale(void **state)
{
	struct pk_count c;
	/* not multiplexed; the reserved words (room for fields to come) are written as 0 */
	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(pk_count__scale(100, 50, 50, &c), PK_COUNT_OK);
	for (size_t i = 0; i < sizeof(c.reserved) / sizeof(c.reserved[0]); i++)
		assert_int_equal(c.reserved[i], 0);
	assert_int_equal(c.val, 100);
	assert_true(c.running_pct == 100.0);
	/* ran half the time: doubled, flagged, 50 % */
	assert_int_equal(pk_count__scale(100, 1000, 500, &c), PK_COUNT_SCALED);
	assert_int_equal(c.val, 200);
	assert_int_equal(c.raw, 100);
	assert_true(c.running_pct > 49.99 && c.running_pct < 50.01);
	/* rounding to nearest: 10 * 3 / 2 = 15, 1 * 3 / 2 = 1.5 -> 2 */
	assert_int_equal(pk_count__scale(1, 3, 2, &c), PK_COUNT_SCALED);
	assert_int_equal(c.val, 2);
	/* running == 0: "not counted", never a division */
	assert_int_equal(pk_count__scale(12345, 1000, 0, &c), PK_COUNT_NOT_COUNTED);
	assert_int_equal(c.val, 0);
	assert_int_equal(pk_count__scale(0, 0, 0, &c), PK_COUNT_NOT_COUNTED);
	/* enabled < running: no scaling (no value below raw) */
	assert_int_equal(pk_count__scale(777, 10, 20, &c), PK_COUNT_OK);
	assert_int_equal(c.val, 777);
	assert_true(c.running_pct == 100.0);
	/* 64-bit products do not overflow: 2^62 * 3 / 2 fits in 128-bit math */
	assert_int_equal(pk_count__scale(1ULL << 62, 3ULL << 40, 2ULL << 40, &c), PK_COUNT_SCALED);
	assert_int_equal(c.val, (1ULL << 62) + (1ULL << 61));
	/* beyond 64 bits saturates */
	assert_int_equal(pk_count__scale(UINT64_MAX / 2, UINT64_MAX, 2, &c), PK_COUNT_SCALED);
	assert_int_equal(c.val, UINT64_MAX);
	assert_int_equal(pk_count__scale(5, 5, 5, NULL), PK_COUNT_OK);
}

/* ---- maps ---- */

static void test_cpu_list(void **state)
{
	int cpus[16];
	assert_int_equal(pk_cpu_list__parse("0-3,6", cpus, 16), 5);
	assert_int_equal(cpus[3], 3);
	assert_int_equal(cpus[4], 6);
	/* sorted, deduplicated, whitespace tolerated */
	assert_int_equal(pk_cpu_list__parse(" 7, 2-3 ,3,2\n", cpus, 16), 3);
	assert_int_equal(cpus[0], 2);
	assert_int_equal(cpus[2], 7);
	/* more than max: counted, not written past max */
	assert_int_equal(pk_cpu_list__parse("0-99", cpus, 2), 100);
	const char *bad[] = { "", " ", "a", "1,", ",1", "3-1", "1-", "-1", "1--2", "4096", "1 2",
			      "0x1", "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_true(pk_cpu_list__parse(bad[i], cpus, 16) < 0);
	assert_int_equal(pk_cpu_list__parse("4095", cpus, 16), 1);

	struct pk_cpu_map *m = pk_cpu_map__new("1,3");
	assert_non_null(m);
	assert_int_equal(pk_cpu_map__nr(m), 2);
	assert_int_equal(pk_cpu_map__cpu(m, 1), 3);
	assert_int_equal(pk_cpu_map__cpu(m, 2), -1);
	pk_cpu_map__free(m);
	assert_null(pk_cpu_map__new("x"));
	m = pk_cpu_map__new_dummy();
	assert_int_equal(pk_cpu_map__nr(m), 1);
	assert_int_equal(pk_cpu_map__cpu(m, 0), -1);
	pk_cpu_map__free(m);
	pk_cpu_map__free(NULL);
}

static void test_online_and_topology(void **state)
{
	char *root = pk_test_mkdtemp("sysfs");
	struct pk_cpu_topology t;
	struct pk_cpu_map *m;

	pk_test_write_file(root, "devices/system/cpu/online", "0-2,5\n");
	pk_test_write_file(root, "devices/system/cpu/cpu5/topology/core_id", "3\n");
	pk_test_write_file(root, "devices/system/cpu/cpu5/topology/physical_package_id", "1\n");
	m = pk_cpu_map__new_online(root);
	assert_non_null(m);
	assert_int_equal(pk_cpu_map__nr(m), 4);
	assert_int_equal(pk_cpu_map__cpu(m, 3), 5);
	pk_cpu_map__free(m);
	assert_int_equal(pk_cpu_topology__read(5, &t, root), 0);
	assert_int_equal(t.core, 3);
	assert_int_equal(t.socket, 1);
	assert_int_equal(t.die, 0);
	assert_true(pk_cpu_topology__read(1, &t, root) < 0);
	pk_test_rmtree(root);
	free(root);

	/* the real machine: online CPUs agree with sysconf */
	m = pk_cpu_map__new(NULL);
	assert_non_null(m);
	assert_int_equal(pk_cpu_map__nr(m), sysconf(_SC_NPROCESSORS_ONLN));
	pk_cpu_map__free(m);
}

struct idle {
	int ready[2], quit[2];
	pid_t tid;
};

static void *idle_thread(void *arg)
{
	struct idle *t = arg;
	char c;
	t->tid = (pid_t)syscall(SYS_gettid);
	if (write(t->ready[1], "r", 1) != 1 || read(t->quit[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static void test_thread_maps(void **state)
{
	struct idle t;
	char c;
	pthread_t th;
	struct pk_thread_map *m;
	bool found = false;

	assert_int_equal(pipe(t.ready), 0);
	assert_int_equal(pipe(t.quit), 0);
	assert_int_equal(pthread_create(&th, NULL, idle_thread, &t), 0);
	assert_int_equal(read(t.ready[0], &c, 1), 1);
	m = pk_thread_map__new_pid(getpid(), NULL);
	assert_non_null(m);
	assert_true(pk_thread_map__nr(m) >= 2);
	assert_int_equal(pk_thread_map__tid(m, 0), getpid()); /* main thread first */
	for (int i = 0; i < pk_thread_map__nr(m); i++)
		found |= pk_thread_map__tid(m, i) == t.tid;
	assert_true(found);
	assert_string_equal(pk_thread_map__comm(m, 0), pk_thread_map__comm(m, 0));
	pk_thread_map__free(m);
	assert_int_equal(write(t.quit[1], "q", 1), 1);
	pthread_join(th, NULL);
	close(t.ready[0]);
	close(t.ready[1]);
	close(t.quit[0]);
	close(t.quit[1]);

	assert_null(pk_thread_map__new_pid(999999999, NULL));
	assert_int_equal(errno, ESRCH);
	m = pk_thread_map__new_list("12, 14");
	assert_int_equal(pk_thread_map__nr(m), 2);
	assert_int_equal(pk_thread_map__tid(m, 1), 14);
	pk_thread_map__free(m);
	assert_null(pk_thread_map__new_list("12,,3"));
	assert_null(pk_thread_map__new_list("-1"));
	assert_null(pk_thread_map__new_list(""));
	m = pk_thread_map__new_dummy();
	assert_int_equal(pk_thread_map__tid(m, 0), -1);
	pk_thread_map__free(m);
}

/* ---- evlist on this thread ---- */

static struct pk_evlist *self_evlist(void)
{
	struct pk_evlist *el = pk_evlist__new();
	pid_t self = 0;
	assert_non_null(el);
	assert_int_equal(pk_evlist__set_maps(el, pk_cpu_map__new_dummy(),
					     pk_thread_map__new_array(&self, 1)), 0);
	return el;
}

static struct pk_evsel *add_sw(struct pk_evlist *el, uint64_t config, const char *name,
			       struct pk_evsel *leader)
{
	struct pk_attr a = sw_attr(config);
	struct pk_evsel *ev = pk_evsel__new(&a, name);
	assert_non_null(ev);
	if (leader)
		assert_int_equal(pk_evsel__set_leader(ev, leader), 0);
	assert_int_equal(pk_evlist__add(el, ev), 0);
	return ev;
}

/* A group of four software events: one read(2) of the leader returns every member. */
static void test_group_read(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	struct pk_evlist *el = self_evlist();
	struct pk_evsel *lead = add_sw(el, PERF_COUNT_SW_TASK_CLOCK, "task-clock", NULL);
	struct pk_evsel *pf = add_sw(el, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", lead);
	struct pk_evsel *cs = add_sw(el, PERF_COUNT_SW_CONTEXT_SWITCHES, "cs", lead);
	struct pk_evsel *mn = add_sw(el, PERF_COUNT_SW_PAGE_FAULTS_MIN, "minor-faults", lead);
	struct pk_evsel *alone = add_sw(el, PERF_COUNT_SW_PAGE_FAULTS, "page-faults-alone", NULL);
	struct pk_count c[5];
	struct pk_count_value v;
	PK_OPTS(pk_evlist_open_opts, oo, .cgroup_fd = -1);

	assert_int_equal(pk_evlist__open(el, &oo), 0);
	assert_int_equal(pk_evlist__nr_evsels(el), 5);
	/* members are wired to the leader: their ids differ, fds are distinct */
	assert_true(pk_evsel__fd(pf, 0, 0) >= 0);
	assert_true(pk_evsel__id(pf, 0, 0) != pk_evsel__id(lead, 0, 0));
	assert_int_equal(pk_evlist__read(el), 0);
	assert_int_equal(pk_evsel__counts(pf, 0, 0, &v), 0);
	assert_int_equal(v.val, 0); /* opened disabled */

	assert_int_equal(pk_evlist__enable(el), 0);
	touch_pages(300);
	usleep(2000); /* at least one context switch */
	assert_int_equal(pk_evlist__disable(el), 0);
	assert_int_equal(pk_evlist__read(el), 0);

	pk_evsel__aggregate(lead, PK_AGGR_GLOBAL, NULL, 0, &c[0]);
	pk_evsel__aggregate(pf, PK_AGGR_GLOBAL, NULL, 0, &c[1]);
	pk_evsel__aggregate(cs, PK_AGGR_GLOBAL, NULL, 0, &c[2]);
	pk_evsel__aggregate(mn, PK_AGGR_GLOBAL, NULL, 0, &c[3]);
	pk_evsel__aggregate(alone, PK_AGGR_GLOBAL, NULL, 0, &c[4]);
	for (int i = 0; i < 5; i++)
		assert_int_equal(c[i].status, PK_COUNT_OK);
	assert_true(c[0].val > 0);
	assert_true(c[1].val >= 300 && c[1].val < 400);
	assert_true(c[2].val >= 1);
	assert_true(c[3].val >= 300);
	/* each member has its own value, not the leader's */
	assert_true(c[1].val != c[0].val);
	assert_true(c[2].val != c[1].val);
	/* the group read agrees with an independent counter of the same event */
	assert_true(c[4].val >= c[1].val - 5 && c[4].val <= c[1].val + 5);
	/* the group shares the leader's times */
	assert_int_equal(c[1].ena, c[0].ena);
	pk_evlist__free(el);
}

/* Interval deltas: counts since the last save. */
static void test_delta(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	struct pk_evlist *el = self_evlist();
	struct pk_evsel *pf = add_sw(el, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", NULL);
	struct pk_count all, d;
	PK_OPTS(pk_evlist_open_opts, oo, .cgroup_fd = -1, .start_enabled = true);

	assert_int_equal(pk_evlist__open(el, &oo), 0);
	touch_pages(200);
	assert_int_equal(pk_evlist__read(el), 0);
	pk_evlist__save_counts(el);
	touch_pages(50);
	assert_int_equal(pk_evlist__read(el), 0);
	pk_evsel__aggregate(pf, PK_AGGR_GLOBAL, NULL, 0, &all);
	pk_evsel__aggregate(pf, PK_AGGR_GLOBAL, NULL, PK_AGGR_DELTA, &d);
	assert_true(all.val >= 250);
	assert_true(d.val >= 50 && d.val < 70);
	assert_true(d.ena < all.ena);
	pk_evlist__free(el);
}

/* Partial failure closes everything; the failure is reported; weak groups recover. */
static void test_open_failure_and_weak_group(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	struct pk_evlist *el = self_evlist();
	struct pk_evsel *lead = add_sw(el, PERF_COUNT_SW_TASK_CLOCK, "task-clock", NULL);
	struct pk_evsel *m1 = add_sw(el, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", lead);
	struct pk_evsel *m2 = add_sw(el, PERF_COUNT_SW_CONTEXT_SWITCHES, "cs", lead);
	PK_OPTS(pk_evlist_open_opts, oo, .cgroup_fd = -1, .start_enabled = true);
	int before = count_fds();
	pid_t pid;
	int cpu, gfd;

	/* the kernel refuses pinned on a group member (only leaders may be pinned) */
	pk_evsel__attr(m2)->attr.pinned = 1;
	assert_int_equal(pk_evlist__open(el, &oo), -EINVAL);
	assert_ptr_equal(pk_evlist__open_failure(el, &pid, &cpu, &gfd, NULL), m2);
	assert_true(gfd >= 0); /* it was being put into the group */
	assert_int_equal(count_fds(), before); /* the leader and m1 were closed again */
	assert_int_equal(pk_evsel__fd(lead, 0, 0), -1);

	/* weak group: reopened as separate events */
	pk_evsel__set_flags(lead, PK_EVF_WEAK_GROUP);
	assert_int_equal(pk_evlist__open(el, &oo), 0);
	assert_true(pk_evsel__fd(m1, 0, 0) >= 0 && pk_evsel__fd(m2, 0, 0) >= 0);
	touch_pages(100);
	assert_int_equal(pk_evlist__read(el), 0);
	struct pk_count c;
	pk_evsel__aggregate(m1, PK_AGGR_GLOBAL, NULL, 0, &c);
	assert_true(c.val >= 100);
	pk_evlist__free(el);
	assert_int_equal(count_fds(), before);
}

/* A thread of the map that has exited: ESRCH fails the open, unless skip_missing_threads
 * leaves that thread out (every event of it, group members included). */
static void test_missing_thread(void **state)
{
	(void)state;
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	/* the one in the middle is the gone one: the threads after it are still opened */
	pid_t tids[3] = { (pid_t)syscall(SYS_gettid), 0, (pid_t)syscall(SYS_gettid) };
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	tids[1] = child; /* reaped: no such thread any more */

	for (int skip = 0; skip < 2; skip++) {
		struct pk_evlist *el = pk_evlist__new();
		assert_int_equal(pk_evlist__set_maps(el, pk_cpu_map__new_dummy(),
						     pk_thread_map__new_array(tids, 3)), 0);
		struct pk_evsel *lead = add_sw(el, PERF_COUNT_SW_TASK_CLOCK, "task-clock", NULL);
		struct pk_evsel *pf = add_sw(el, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", lead);
		PK_OPTS(pk_evlist_open_opts, oo, .cgroup_fd = -1, .start_enabled = true,
			.skip_missing_threads = skip);
		if (!skip) {
			assert_int_equal(pk_evlist__open(el, &oo), -ESRCH);
			pk_evlist__free(el);
			continue;
		}
		assert_int_equal(pk_evlist__open(el, &oo), 0);
		assert_int_equal(pk_evsel__fd(lead, 0, 1), -1);
		assert_int_equal(pk_evsel__fd(pf, 0, 1), -1);
		assert_true(pk_evsel__fd(pf, 0, 0) >= 0 && pk_evsel__fd(pf, 0, 2) >= 0);
		touch_pages(50);
		assert_int_equal(pk_evlist__read(el), 0);
		struct pk_aggr_key keys[3];
		assert_int_equal(pk_evlist__aggr_keys(el, PK_AGGR_THREAD, keys, 3), 3);
		struct pk_count c;
		pk_evsel__aggregate(pf, PK_AGGR_THREAD, &keys[1], 0, &c);
		assert_int_equal(c.status, PK_COUNT_NOT_COUNTED);
		pk_evsel__aggregate(pf, PK_AGGR_THREAD, &keys[0], 0, &c);
		assert_int_equal(c.status, PK_COUNT_OK);
		assert_true(c.val >= 50);
		pk_evlist__free(el);
	}
}

/* Hardware events the machine lacks are skipped as "not supported", not an error. */
static void test_unsupported(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	struct perf_event_attr probe = { .type = PERF_TYPE_HARDWARE, .size = sizeof(probe),
					 .config = PERF_COUNT_HW_CPU_CYCLES, .disabled = 1 };
	int pfd = pk_sys_perf_event_open(&probe, 0, -1, -1, 0);
	bool have_hw = pfd >= 0;
	if (pfd >= 0)
		close(pfd);

	struct pk_evlist *el = self_evlist();
	struct pk_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_HARDWARE;
	a.attr.config = PERF_COUNT_HW_CPU_CYCLES;
	struct pk_evsel *cyc = pk_evsel__new(&a, "cycles");
	assert_int_equal(pk_evlist__add(el, cyc), 0);
	struct pk_evsel *insn_member;
	a.attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	insn_member = pk_evsel__new(&a, "instructions");
	assert_int_equal(pk_evsel__set_leader(insn_member, cyc), 0);
	assert_int_equal(pk_evlist__add(el, insn_member), 0);
	struct pk_evsel *tc = add_sw(el, PERF_COUNT_SW_TASK_CLOCK, "task-clock", NULL);
	PK_OPTS(pk_evlist_open_opts, oo, .cgroup_fd = -1, .skip_unsupported = true);

	assert_int_equal(pk_evlist__open(el, &oo), 0);
	assert_int_equal(pk_evsel__supported(cyc), have_hw);
	assert_true(pk_evsel__supported(tc));
	assert_int_equal(pk_evlist__enable(el), 0);
	touch_pages(10);
	assert_int_equal(pk_evlist__read(el), 0);
	struct pk_count c;
	pk_evsel__aggregate(cyc, PK_AGGR_GLOBAL, NULL, 0, &c);
	assert_int_equal(c.status == PK_COUNT_NOT_SUPPORTED, !have_hw);
	pk_evsel__aggregate(tc, PK_AGGR_GLOBAL, NULL, 0, &c);
	assert_int_equal(c.status, PK_COUNT_OK);
	assert_true(c.val > 0);
	pk_evlist__free(el);

	/* without skip_unsupported the same list fails on a machine without the PMU */
	if (!have_hw) {
		el = self_evlist();
		a.attr.config = PERF_COUNT_HW_CPU_CYCLES;
		assert_int_equal(pk_evlist__add(el, pk_evsel__new(&a, "cycles")), 0);
		PK_OPTS(pk_evlist_open_opts, strict, .cgroup_fd = -1);
		assert_true(pk_evlist__open(el, &strict) < 0);
		pk_evlist__free(el);
	}
}

/* pk_evsel__set_cgroup: that evsel alone is opened on the cgroup (PERF_FLAG_PID_CGROUP with
 * the directory fd as pid); the others keep the open's target. */
struct cg_seen {
	const struct pk_evsel *ev[4];
	pid_t pid[4];
	unsigned long flags[4];
	int n;
};

static void cg_open_cb(const struct pk_evsel *ev, const struct perf_event_attr *a, pid_t pid,
		       int cpu, int group_fd, unsigned long flags, int fd, void *ctx)
{
	struct cg_seen *s = ctx;
	(void)a, (void)cpu, (void)group_fd, (void)fd;
	if (s->n < 4) {
		s->ev[s->n] = ev;
		s->pid[s->n] = pid;
		s->flags[s->n++] = flags;
	}
}

static void test_evsel_cgroup(void **state)
{
	(void)state;
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	struct pk_evlist *el = pk_evlist__new();
	pid_t any = -1;
	assert_non_null(el);
	assert_int_equal(pk_evlist__set_maps(el, pk_cpu_map__new("0"),
					     pk_thread_map__new_array(&any, 1)), 0);
	struct pk_evsel *plain = add_sw(el, PERF_COUNT_SW_TASK_CLOCK, "task-clock", NULL);
	struct pk_evsel *cg = add_sw(el, PERF_COUNT_SW_TASK_CLOCK, "task-clock", NULL);
	int dfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(pk_evsel__set_cgroup(NULL, dfd), -EINVAL);
	assert_int_equal(pk_evsel__set_cgroup(cg, -2), -EINVAL);
	assert_int_equal(pk_evsel__set_cgroup(cg, dfd), 0);
	struct cg_seen seen = { .n = 0 };
	PK_OPTS(pk_evlist_open_opts, oo, .cgroup_fd = -1, .on_open = cg_open_cb, .ctx = &seen);
	(void)pk_evlist__open(el, &oo);   /* "/" may or may not be a cgroup directory */
	assert_true(seen.n >= 2);
	assert_ptr_equal(seen.ev[0], plain);
	assert_int_equal(seen.pid[0], -1);
	assert_false(seen.flags[0] & PERF_FLAG_PID_CGROUP);
	assert_ptr_equal(seen.ev[1], cg);
	assert_int_equal(seen.pid[1], dfd);
	assert_true(seen.flags[1] & PERF_FLAG_PID_CGROUP);
	pk_evlist__free(el);
	close(dfd);
}

/* Per-CPU counts sum to the global count; keys for core/socket cover every CPU. */
static void test_aggregation_cpus(void **state)
{
	if (!pk_test_can_perf() || !pk_test_is_root())
		PK_SKIP("CPU-wide counting needs root or perf_event_paranoid <= 0");
	struct pk_evlist *el = pk_evlist__new();
	struct pk_aggr_key keys[512];
	struct pk_count g, sum = { 0 }, c;
	int n, ncpu;
	assert_int_equal(pk_evlist__set_maps(el, pk_cpu_map__new(NULL), NULL), 0);
	struct pk_evsel *tc = add_sw(el, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock", NULL);
	PK_OPTS(pk_evlist_open_opts, oo, .cgroup_fd = -1, .start_enabled = true);
	assert_int_equal(pk_evlist__open(el, &oo), 0);
	usleep(20000);
	assert_int_equal(pk_evlist__read(el), 0);
	ncpu = pk_cpu_map__nr(pk_evlist__cpus(el));
	n = pk_evlist__aggr_keys(el, PK_AGGR_CPU, keys, 512);
	assert_int_equal(n, ncpu);
	for (int i = 0; i < n; i++) {
		assert_int_equal(pk_evsel__aggregate(tc, PK_AGGR_CPU, &keys[i], 0, &c), 0);
		assert_int_equal(c.status, PK_COUNT_OK);
		sum.val += c.val;
	}
	pk_evsel__aggregate(tc, PK_AGGR_GLOBAL, NULL, 0, &g);
	assert_int_equal(g.val, sum.val);
	/* every CPU is in exactly one core, socket, die and NUMA node */
	for (int mode = PK_AGGR_CORE; mode <= PK_AGGR_NODE; mode++) {
		int cover = 0;
		uint64_t s = 0;
		n = pk_evlist__aggr_keys(el, (enum pk_aggr_mode)mode, keys, 512);
		assert_true(n >= 1 && n <= ncpu);
		for (int i = 0; i < n; i++) {
			cover += keys[i].nr;
			pk_evsel__aggregate(tc, (enum pk_aggr_mode)mode, &keys[i], 0, &c);
			s += c.val;
		}
		assert_int_equal(cover, ncpu);
		assert_int_equal(s, g.val);
	}
	pk_evlist__free(el);
}

/* ---- workloads ---- */

static void test_workload(void **state)
{
	char *ok[] = { "sh", "-c", "exit 3", NULL };
	char *missing[] = { "/nonexistent/perfkit-no-such-program", NULL };
	char *killed[] = { "sh", "-c", "kill -9 $$", NULL };
	int status;
	struct pk_workload *w = pk_workload__prepare(ok);
	assert_non_null(w);
	/* the child waits for start */
	assert_int_equal(pk_workload__wait(w, false, &status), -EAGAIN);
	assert_int_equal(pk_workload__start(w), 0);
	assert_int_equal(pk_workload__wait(w, true, &status), 0);
	assert_int_equal(pk_wait_status__exit_code(status), 3);
	pk_workload__free(w);

	w = pk_workload__prepare(missing);
	assert_non_null(w);
	assert_int_equal(pk_workload__start(w), -ENOENT);
	pk_workload__free(w);

	w = pk_workload__prepare(killed);
	assert_int_equal(pk_workload__start(w), 0);
	assert_int_equal(pk_workload__wait(w, true, &status), 0);
	assert_int_equal(pk_wait_status__exit_code(status), 128 + 9);
	pk_workload__free(w);

	/* freeing an unstarted workload reaps the child */
	w = pk_workload__prepare(ok);
	pk_workload__free(w);
}

/* enable_on_exec: nothing of the waiting child is counted; the exec'd program is. */
static void test_workload_counting(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	char *argv[] = { "true", NULL };
	struct pk_workload *w = pk_workload__prepare(argv);
	pid_t pid = pk_workload__pid(w);
	struct pk_evlist *el = pk_evlist__new();
	struct pk_count c;
	int status;
	assert_int_equal(pk_evlist__set_maps(el, NULL, pk_thread_map__new_array(&pid, 1)), 0);
	struct pk_evsel *pf = add_sw(el, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", NULL);
	PK_OPTS(pk_evlist_open_opts, oo, .cgroup_fd = -1, .inherit = true, .enable_on_exec = true);
	assert_int_equal(pk_evlist__open(el, &oo), 0);
	assert_int_equal(pk_evlist__read(el), 0);
	pk_evsel__aggregate(pf, PK_AGGR_GLOBAL, NULL, 0, &c);
	assert_int_equal(c.status, PK_COUNT_NOT_COUNTED);
	assert_int_equal(pk_workload__start(w), 0);
	assert_int_equal(pk_workload__wait(w, true, &status), 0);
	assert_int_equal(status, 0);
	assert_int_equal(pk_evlist__read(el), 0);
	pk_evsel__aggregate(pf, PK_AGGR_GLOBAL, NULL, 0, &c);
	assert_int_equal(c.status, PK_COUNT_OK);
	assert_true(c.val > 10 && c.val < 1000);
	pk_evlist__free(el);
	pk_workload__free(w);
}

/* ---- in-process counting ---- */

static void test_self_counter(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not permitted here");
	struct pk_self_counter *sc = pk_self_counter__open("task-clock,page-faults,cycles");
	struct pk_count c[4];
	assert_non_null(sc);
	assert_int_equal(pk_self_counter__nr(sc), 3);
	assert_string_equal(pk_self_counter__name(sc, 1), "page-faults");
	for (int round = 0; round < 2; round++) {
		int pages = round ? 50 : 400;
		assert_int_equal(pk_self_counter__start(sc), 0);
		touch_pages(pages);
		assert_int_equal(pk_self_counter__stop(sc), 0);
		assert_int_equal(pk_self_counter__read(sc, c, 4), 3);
		assert_int_equal(c[0].status, PK_COUNT_OK);
		assert_true(c[0].val > 0);
		/* each region is counted on its own */
		/* sanitizer builds add shadow-memory faults: allow a quarter more */
		assert_true(c[1].val >= (uint64_t)pages && c[1].val < (uint64_t)pages * 5 / 4 + 30);
		assert_true(c[2].status == PK_COUNT_NOT_SUPPORTED || c[2].status == PK_COUNT_OK ||
			    c[2].status == PK_COUNT_SCALED);
	}
	/* separate events unless the spec groups them (a group too big for the counters
	 * would never count); the reader underneath says which */
	assert_false(pk_self_reader__grouped(pk_self_counter__reader(sc)));
	pk_self_counter__free(sc);
	sc = pk_self_counter__open("{task-clock,page-faults}");
	assert_non_null(sc);
	assert_true(pk_self_reader__grouped(pk_self_counter__reader(sc)));
	assert_int_equal(pk_self_counter__start(sc), 0);
	touch_pages(100);
	assert_int_equal(pk_self_counter__stop(sc), 0);
	assert_int_equal(pk_self_counter__read(sc, c, 4), 2);
	assert_true(c[1].val >= 100 && c[1].val < 100 * 5 / 4 + 30);
	pk_self_counter__free(sc);
	assert_null(pk_self_counter__open("no-such-event-xyz"));
	pk_self_counter__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_cpu_list),
		cmocka_unit_test(test_online_and_topology),
		cmocka_unit_test(test_thread_maps),
		cmocka_unit_test(test_group_read),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_open_failure_and_weak_group),
		cmocka_unit_test(test_evsel_cgroup),
		cmocka_unit_test(test_missing_thread),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_aggregation_cpus),
		cmocka_unit_test(test_workload),
		cmocka_unit_test(test_workload_counting),
		cmocka_unit_test(test_self_counter),
	};
	pk_test_quiet_log();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
