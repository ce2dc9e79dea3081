/* SPDX-License-Identifier: MIT */
/* lib/sys: perf_event_open wrapper, size negotiation, ioctls, prctl, /proc limits. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static int open_sw(uint64_t config, bool disabled)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = config,
				     .disabled = disabled, .exclude_kernel = 1, .exclude_hv = 1 };
	return pk_sys_perf_event_open(&a, 0, -1, -1, 0);
}

static uint64_t read_u64(int fd)
{
	uint64_t v = 0;
	assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
	return v;
}

static void test_min_size(void **state)
{
	struct pk_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_SOFTWARE;
	assert_int_equal(pk_attr__min_size(&a), PK_ATTR_SIZE_VER0);
	a.attr.config2 = 1;
	assert_int_equal(pk_attr__min_size(&a), PK_ATTR_SIZE_VER1);
	a.attr.sample_regs_user = 1;
	assert_int_equal(pk_attr__min_size(&a), PK_ATTR_SIZE_VER3);
	pk_attr__set_config3(&a, 5);
	assert_int_equal(pk_attr__min_size(&a), PK_ATTR_SIZE_VER8);
	assert_int_equal(pk_attr__config3(&a), 5);
	assert_string_equal(pk_attr__field_name(128), "config3");
	assert_string_equal(pk_attr__field_name(57), "config1/bp_addr");
	assert_string_equal(pk_attr__field_name(0), "type");
}

static void test_open_and_ioctls(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	int fd = open_sw(PERF_COUNT_SW_TASK_CLOCK, true);
	assert_true(fd >= 0);
	/* CLOEXEC is on by default */
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(read_u64(fd), 0);
	assert_int_equal(pk_ioc_enable(fd, false), 0);
	for (volatile int i = 0; i < 2000000; i++)
		;
	assert_int_equal(pk_ioc_disable(fd, false), 0);
	uint64_t v = read_u64(fd);
	assert_true(v > 0);
	assert_int_equal(pk_ioc_reset(fd, false), 0);
	assert_int_equal(read_u64(fd), 0);

	uint64_t id = 0;
	assert_int_equal(pk_ioc_id(fd, &id), 0);
	assert_true(id != 0);
	assert_int_equal(pk_ioc_refresh(fd, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	/* PERIOD: a counting event has no period to change (EINVAL); a sampling one does */
	assert_int_equal(pk_ioc_period(fd, 1000000), -EINVAL);
	struct perf_event_attr sa = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
				      .sample_period = 100000, .disabled = 1, .exclude_kernel = 1 };
	int sfd = pk_sys_perf_event_open(&sa, 0, -1, -1, 0);
	assert_true(sfd >= 0);
	assert_int_equal(pk_ioc_period(sfd, 200000), 0);
	assert_int_equal(pk_ioc_refresh(sfd, 1), 0); /* allowed on a sampling event */
	close(sfd);
	/* SET_FILTER on a non-tracepoint event: the kernel says EINVAL */
	assert_int_equal(pk_ioc_set_filter(fd, "common_pid == 1"), -EINVAL);
	assert_int_equal(pk_ioc_set_filter(fd, NULL), -EINVAL);
	/* SET_BPF with a non-BPF fd is refused (EBADF or EINVAL) */
	int r = pk_ioc_set_bpf(fd, 0);
	assert_true(r == -EBADF || r == -EINVAL);
	uint32_t ids[4], count = 4;
	r = pk_ioc_query_bpf(fd, ids, &count);
	assert_true(r == -EINVAL || r == -ENOTTY || r == 0 || r == -EPERM);
	/* SET_OUTPUT to -1 stops redirection: -1 must reach the kernel as ~0UL */
	assert_int_equal(pk_ioc_set_output(fd, -1), 0);
	/* bad fd */
	assert_int_equal(pk_ioc_enable(-1, false), -EBADF);
	close(fd);

	/* NO_CLOEXEC opt-out */
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
				     .exclude_kernel = 1 };
	fd = pk_sys_perf_event_open(&a, 0, -1, -1, PK_OPEN_NO_CLOEXEC);
	assert_true(fd >= 0);
	assert_false(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(a.size, PK_ATTR_SIZE_VER0); /* size 0 became the minimum ABI size */
	close(fd);
}

static void test_group_enable_and_prctl(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
				     .disabled = 1, .exclude_kernel = 1, .exclude_hv = 1 };
	int lead = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	assert_true(lead >= 0);
	a.disabled = 0;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	int member = pk_sys_perf_event_open(&a, 0, -1, lead, 0);
	assert_true(member >= 0);
	assert_int_equal(pk_ioc_enable(lead, true), 0);
	long page = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	for (int i = 0; i < 64; i++)
		m[i * page] = 1;
	assert_int_equal(pk_ioc_disable(lead, true), 0);
	assert_true(read_u64(member) >= 64);

	munmap(m, 64 * page);

	/* prctl: disabling all of this process's counters stops them; enabling resumes.
	 * task-clock is used because it advances by itself while we spin. */
	int tc = open_sw(PERF_COUNT_SW_TASK_CLOCK, false);
	assert_true(tc >= 0);
	assert_int_equal(pk_prctl_disable_all(), 0);
	uint64_t before = read_u64(tc);
	for (volatile int i = 0; i < 2000000; i++)
		;
	assert_int_equal(read_u64(tc), before);
	assert_int_equal(pk_prctl_enable_all(), 0);
	for (volatile int i = 0; i < 2000000; i++)
		;
	assert_true(read_u64(tc) > before);
	close(tc);
	close(member);
	close(lead);
}

static void test_e2big_unknown_field(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct pk_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.config = PERF_COUNT_SW_DUMMY;
	a.attr.exclude_kernel = 1;
	a.attr.size = 200;
	a.raw[192] = 1; /* no kernel knows a field this far out */
	pk_test_log_clear();
	int fd = pk_sys_perf_event_open(&a.attr, 0, -1, -1, 0);
	assert_int_equal(fd, -E2BIG);
	assert_int_equal(a.attr.size, 200); /* restored */
	assert_non_null(strstr(pk_test_log_text(), "not supported"));
	/* the same attr with the tail zero but a large size is accepted (negotiated) */
	a.raw[192] = 0;
	fd = pk_sys_perf_event_open(&a.attr, 0, -1, -1, 0);
	assert_true(fd >= 0);
	close(fd);
}

static void test_limits_fake_proc(void **state)
{
	char *root = pk_test_mkdtemp("proc");
	pk_test_write_file(root, "sys/kernel/perf_event_paranoid", "2\n");
	pk_test_write_file(root, "sys/kernel/perf_event_max_sample_rate", "100000\n");
	pk_test_write_file(root, "sys/kernel/perf_event_max_stack", "127");
	pk_test_write_file(root, "sys/kernel/perf_event_mlock_kb", "516\n");
	pk_test_write_file(root, "sys/kernel/perf_cpu_time_max_percent", "garbage\n");
	struct pk_limits l = { .sz = sizeof(l) };
	assert_int_equal(pk_limits__read(&l, root), 0);
	assert_int_equal(l.paranoid, 2);
	assert_int_equal(l.max_sample_rate, 100000);
	assert_int_equal(l.max_stack, 127);
	assert_int_equal(l.mlock_kb, 516);
	assert_int_equal(l.cpu_time_max_percent, INT_MIN); /* unparsable */
	assert_int_equal(l.max_contexts_per_stack, INT_MIN); /* absent */
	pk_test_rmtree(root);
	free(root);

	/* no perf_event_paranoid: the kernel lacks perf events */
	char *empty = pk_test_mkdtemp("noproc");
	assert_int_equal(pk_limits__read(&l, empty), -ENOSYS);
	pk_test_rmtree(empty);
	free(empty);

	/* the real one */
	assert_int_equal(pk_limits__read(&l, NULL), 0);
	assert_true(l.paranoid != INT_MIN);
	assert_non_null(strstr(pk_paranoid__describe(2), "user space"));
	assert_non_null(strstr(pk_paranoid__describe(-1), "no restrictions"));
}

static void test_opts_size_check(void **state)
{
	struct { struct pk_limits l; uint64_t extra; } big;
	memset(&big, 0, sizeof(big));
	big.l.sz = sizeof(big);
	assert_int_equal(pk_limits__read(&big.l, NULL), 0);   /* zero tail: fine */
	big.extra = 1;
	assert_int_equal(pk_limits__read(&big.l, NULL), -EINVAL); /* unknown non-zero field */
}

static void test_strerror(void **state)
{
	assert_string_equal(pk_strerror(-PK_ERR_PARSE), "Malformed text input");
	assert_string_equal(pk_strerror(PK_ERR_TRUNCATED), "Input ends inside a structure");
	assert_string_equal(pk_strerror(-ENOENT), "No such file or directory");
	assert_non_null(pk_strerror(99999));
	assert_non_null(pk_version());
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_min_size),
		cmocka_unit_test(test_open_and_ioctls),
		cmocka_unit_test(test_group_enable_and_prctl),
		cmocka_unit_test(test_e2big_unknown_field),
		cmocka_unit_test(test_limits_fake_proc),
		cmocka_unit_test(test_opts_size_check),
		cmocka_unit_test(test_strerror),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
