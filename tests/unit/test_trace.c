/* SPDX-License-Identifier: MIT */
/* lib/trace and lib/sched on synthetic input: system call names and numbers, argument
 * and return-value text, tracepoint format fields, per-thread sums; the scheduler state
 * machine (wait, delay, run time; sched_waking and sched_wakeup; preemption; a lost
 * switch-in). */

#include <errno.h>
#include <math.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(pk_syscall__name(0), "read");
	assert_string_equal(pk_syscall__name(39), "getpid");
	assert_string_equal(pk_syscall__name(110), "getppid");
	assert_string_equal(pk_syscall__name(257), "openat");
	assert_null(pk_syscall__name(-1));
	assert_null(pk_syscall__name(100000));
	assert_int_equal(pk_syscall__nr("openat"), 257);
	assert_int_equal(pk_syscall__nr("exit_group"), 231);
	assert_int_equal(pk_syscall__nr("no_such_call"), -1);
	assert_int_equal(errno, ENOENT);
	assert_true(pk_syscall__max() > 300);
	assert_string_equal(pk_errno__name(ENOENT), "ENOENT");
	assert_null(pk_errno__name(0));
	assert_null(pk_errno__name(-5));
}

static void test_args(void **state)
{
	char buf[256];
	(void)state;
	uint64_t open_args[6] = { (uint64_t)-100, 0x7ffc1000, 02000000 /* O_CLOEXEC */, 0 };
	pk_syscall__format_args(257, open_args, buf, sizeof(buf));
	assert_string_equal(buf, "dfd: CWD, filename: 0x7ffc1000, flags: O_RDONLY|O_CLOEXEC, mode: 0");
	uint64_t creat[6] = { 3, 0x1000, 0101 | 01000 /* WRONLY|CREAT|TRUNC */, 0644 };
	pk_syscall__format_args(257, creat, buf, sizeof(buf));
	assert_string_equal(buf, "dfd: 3, filename: 0x1000, flags: O_WRONLY|O_CREAT|O_TRUNC, mode: 0644");
	uint64_t mm[6] = { 0, 8192, 3, 0x22, (uint64_t)-1, 0 };
	pk_syscall__format_args(9, mm, buf, sizeof(buf));
	assert_string_equal(buf, "addr: 0, len: 8192, prot: PROT_READ|PROT_WRITE, "
				 "flags: MAP_PRIVATE|MAP_ANONYMOUS, fd: -1, off: 0");
	uint64_t kill[6] = { 1234, 9 };
	pk_syscall__format_args(62, kill, buf, sizeof(buf));
	assert_string_equal(buf, "pid: 1234, sig: SIGKILL");
	uint64_t none[6] = { 0 };
	pk_syscall__format_args(39, none, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* unknown: the non-zero registers */
	uint64_t raw[6] = { 0, 5, 0, 0, 0, 0x10 };
	pk_syscall__format_args(100000, raw, buf, sizeof(buf));
	assert_string_equal(buf, "arg1: 0x5, arg5: 0x10");
	/* truncation: NUL-terminated, the needed length returned */
	char small[8];
	int n = pk_syscall__format_args(257, open_args, small, sizeof(small));
	assert_int_equal(n, (int)strlen("dfd: CWD, filename: 0x7ffc1000, flags: O_RDONLY|O_CLOEXEC, mode: 0"));
	assert_int_equal(strlen(small), 7);
}

static void test_ret(void **state)
{
	char buf[128];
	(void)state;
	pk_syscall__format_ret(257, -2, buf, sizeof(buf));
	assert_string_equal(buf, "-1 ENOENT (No such file or directory)");
	pk_syscall__format_ret(257, 3, buf, sizeof(buf));
	assert_string_equal(buf, "3");
	pk_syscall__format_ret(9, 0x7f0000001000LL, buf, sizeof(buf));
	assert_string_equal(buf, "0x7f0000001000");
	assert_true(pk_syscall__failed(-4095));
	assert_false(pk_syscall__failed(-4096));
	assert_false(pk_syscall__failed(0));
}

static void test_tp_field(void **state)
{
	static const char fmt[] =
		"name: sys_enter\nID: 443\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"
		"\tfield:char bad;\toffset:;\tsize:1;\n";
	struct pk_tp_field f;
	(void)state;
	assert_int_equal(pk_tp_format__field(fmt, sizeof(fmt) - 1, "id", &f), 0);
	assert_int_equal(f.offset, 8);
	assert_int_equal(f.size, 8);
	assert_true(f.is_signed);
	assert_int_equal(pk_tp_format__field(fmt, sizeof(fmt) - 1, "args", &f), 0);
	assert_int_equal(f.offset, 16);
	assert_int_equal(f.size, 48);
	assert_false(f.is_signed);
	assert_int_equal(pk_tp_format__field(fmt, sizeof(fmt) - 1, "common_pid", &f), 0);
	assert_int_equal(f.offset, 4);
	assert_int_equal(pk_tp_format__field(fmt, sizeof(fmt) - 1, "nope", &f), -ENOENT);
	assert_int_equal(pk_tp_format__field(fmt, sizeof(fmt) - 1, "bad", &f), -PK_ERR_FORMAT);
	/* bounded by len: a field past it is not found */
	assert_int_equal(pk_tp_format__field(fmt, 60, "args", &f), -ENOENT);
}

static void test_stats(void **state)
{
	struct pk_syscall_stats *s = pk_syscall_stats__new();
	(void)state;
	assert_non_null(s);
	for (int i = 0; i < 10; i++) {
		struct pk_syscall_call c = { .pid = 5, .tid = 6, .nr = 39, .entered = true,
			.returned = true, .enter_time = 1000, .exit_time = 1000 + 100 * (i + 1),
			.ret = 1, .comm = "w" };
		assert_int_equal(pk_syscall_stats__add(s, &c), 0);
	}
	struct pk_syscall_call e = { .pid = 5, .tid = 7, .nr = 257, .returned = true, .ret = -2 };
	assert_int_equal(pk_syscall_stats__add(s, &e), 0);
	struct pk_syscall_call child = { .pid = 8, .tid = 8, .nr = 56, .returned = true,
		.child_return = true };
	assert_int_equal(pk_syscall_stats__add(s, &child), 0);
	assert_int_equal(pk_syscall_stats__nr(s), 2);
	const struct pk_syscall_stat *a = pk_syscall_stats__get(s, 0);
	assert_int_equal(a->calls, 10);
	assert_int_equal(a->errors, 0);
	assert_int_equal(a->min_ns, 100);
	assert_int_equal(a->max_ns, 1000);
	assert_int_equal(a->total_ns, 5500);
	assert_string_equal(a->comm, "w");
	const struct pk_syscall_stat *b = pk_syscall_stats__get(s, 1);
	assert_int_equal(b->calls, 1);
	assert_int_equal(b->errors, 1);
	assert_int_equal(b->timed, 0);
	assert_null(pk_syscall_stats__get(s, 2));
	pk_syscall_stats__free(s);
}

/* ---- sched ---- */

struct seen { struct pk_sched_switch sw[16]; int n; };

static int keep(void *ctx, const struct pk_sched_switch *sw)
{
	struct seen *s = ctx;
	if (s->n < 16)
		s->sw[s->n++] = *sw;
	return 0;
}

#define MS 1000000ULL

static void test_sched_sleep(void **state)
{
	struct seen seen = { 0 };
	PK_OPTS(pk_sched_opts, o, .on_switch = keep, .ctx = &seen);
	struct pk_sched *s = pk_sched__new(&o);
	(void)state;
	assert_non_null(s);
	/* task 10 runs 1 ms, sleeps, is woken at 5 ms, runs at 5.2 ms for 0.3 ms */
	assert_int_equal(pk_sched__switch(s, 1 * MS, 0, 0, "swapper", 0, 10, "w"), 0);
	assert_int_equal(pk_sched__switch(s, 2 * MS, 0, 10, "w", 1 /* S */, 0, "swapper"), 0);
	assert_int_equal(pk_sched__wakeup(s, 5 * MS, 10, "w"), 0);
	assert_int_equal(pk_sched__wakeup(s, 5 * MS + 50000, 10, "w"), 0); /* sched_wakeup after waking */
	assert_int_equal(pk_sched__switch(s, 5 * MS + 200000, 0, 0, "swapper", 0, 10, "w"), 0);
	assert_int_equal(pk_sched__switch(s, 5 * MS + 500000, 0, 10, "w", 1, 0, "swapper"), 0);
	assert_int_equal(seen.n, 4);
	/* the first run: switch-in at 1 ms seen, no previous switch-out */
	assert_true(seen.sw[1].run_known);
	assert_int_equal(seen.sw[1].run_ns, 1 * MS);
	assert_false(seen.sw[1].wait_known);
	/* the second: off the CPU 2 -> 5.2 ms, delay from the first wake-up */
	assert_true(seen.sw[3].run_known);
	assert_int_equal(seen.sw[3].run_ns, 300000);
	assert_int_equal(seen.sw[3].wait_ns, 3 * MS + 200000);
	assert_int_equal(seen.sw[3].delay_ns, 200000);
	assert_int_equal(pk_sched__nr_tasks(s), 1);
	const struct pk_sched_task *t = pk_sched__task(s, 0);
	assert_int_equal(t->tid, 10);
	assert_int_equal(t->switches, 2);
	assert_int_equal(t->runtime_ns, 1 * MS + 300000);
	assert_int_equal(t->delays, 1);
	assert_int_equal(t->max_delay_ns, 200000);
	assert_int_equal(t->max_delay_start, 5 * MS);
	pk_sched__free(s);
}

static void test_sched_preempt_and_lost(void **state)
{
	struct seen seen = { 0 };
	PK_OPTS(pk_sched_opts, o, .on_switch = keep, .ctx = &seen);
	struct pk_sched *s = pk_sched__new(&o);
	(void)state;
	/* 10 preempted by 11 at 2 ms (state R), back at 3 ms: latency delay 1 ms, timehist
	 * delay 0 (no wake-up) */
	pk_sched__switch(s, 1 * MS, 1, 0, "swapper", 0, 10, "a");
	pk_sched__switch(s, 2 * MS, 1, 10, "a", 0, 11, "b");
	pk_sched__switch(s, 3 * MS, 1, 11, "b", 1, 10, "a");
	/* 10 sleeps at 4 ms, is woken at 6 ms; its switch-in is lost; the CPU switched
	 * last at 7 ms (12 -> idle), and 10 switches out at 9 ms */
	pk_sched__switch(s, 4 * MS, 1, 10, "a", 1, 12, "c");
	pk_sched__wakeup(s, 6 * MS, 10, "a");
	pk_sched__switch(s, 7 * MS, 1, 12, "c", 1, 0, "swapper");
	pk_sched__switch(s, 9 * MS, 1, 10, "a", 1, 0, "swapper");
	const struct pk_sched_task *a = pk_sched__task(s, 0);
	assert_int_equal(a->tid, 10);
	assert_int_equal(a->delays, 1);          /* the preemption; the lost run's is unknown */
	assert_int_equal(a->max_delay_ns, 1 * MS);
	assert_int_equal(seen.n, 6);
	assert_int_equal(seen.sw[3].prev_tid, 10); /* the run after the preemption */
	assert_int_equal(seen.sw[3].delay_ns, 0);
	assert_int_equal(seen.sw[3].wait_ns, 1 * MS);
	assert_int_equal(seen.sw[5].prev_tid, 10); /* the run whose switch-in was lost */
	assert_true(seen.sw[5].run_known);
	assert_int_equal(seen.sw[5].run_ns, 2 * MS);
	assert_int_equal(seen.sw[5].delay_ns, 1 * MS);
	assert_int_equal(seen.sw[5].wait_ns, 3 * MS);
	assert_int_equal(a->switches, 3);
	assert_int_equal(a->runtime_ns, 1 * MS + 1 * MS + 2 * MS);
	pk_sched__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_ret),
		cmocka_unit_test(test_tp_field),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_sched_sleep),
		cmocka_unit_test(test_sched_preempt_and_lost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
