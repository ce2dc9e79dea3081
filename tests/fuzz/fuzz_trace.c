/* SPDX-License-Identifier: MIT */
/* Hostile input for the tracepoint readers of trace and sched: a format text for
 * pk_tp_format__field, and a perf.data image read by pk_systrace__process (system calls
 * and page faults, as trace -F resolves them) and pk_sched__process (the first byte
 * chooses). */
#include <stddef.h>
#include <stdint.h>
#include <perfkit/perfkit.h>

static int on_call(void *ctx, const struct pk_syscall_call *c)
{
	char buf[256];
	(void)ctx;
	if (c->entered)
		pk_syscall__format_args(c->nr, c->args, buf, sizeof(buf));
	if (c->returned)
		pk_syscall__format_ret(c->nr, c->ret, buf, sizeof(buf));
	return 0;
}

/* a page fault: its places resolved as trace -F does (hostile addresses, maps) */
static int on_fault(void *ctx, const struct pk_syscall_fault *f)
{
	struct pk_addr_loc loc;
	(void)ctx;
	if (f->machine) {
		pk_machine__resolve(f->machine, f->pid, f->tid, f->ip, f->cpumode, &loc);
		pk_machine__resolve_data(f->machine, f->pid, f->tid, f->addr, f->cpumode, &loc);
	}
	return 0;
}

static int on_switch(void *ctx, const struct pk_sched_switch *sw)
{
	(void)ctx;
	(void)sw;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "id", "args", "ret", "prev_comm", "prev_pid",
					     "next_pid", "comm", "pid", "x" };
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		struct pk_tp_field f;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			pk_tp_format__field((const char *)data + 1, size - 1, names[i], &f);
		return 0;
	}
	pk_set_log(NULL, NULL, PK_LOG_ERROR);
	struct pk_data_reader *r = pk_data_reader__open_mem(data + 1, size - 1, NULL);
	if (r) {
		/* no kernel symbols: /proc/kallsyms is the host's, not the input, and reading
		 * it for every input made each run ~30 ms (the smoke run took over 6 min) */
		PK_OPTS(pk_machine_opts, mo, .kallsyms = "");
		PK_OPTS(pk_systrace_opts, so, .on_call = on_call, .on_fault = on_fault,
			.machine_opts = &mo);
		pk_systrace__process(r, &so, NULL);
		pk_data_reader__free(r);
	}
	r = pk_data_reader__open_mem(data + 1, size - 1, NULL);
	if (r) {
		PK_OPTS(pk_sched_opts, o, .on_switch = on_switch);
		struct pk_sched *s = pk_sched__new(&o);
		if (s)
			pk_sched__process(s, r);
		pk_sched__free(s);
		pk_data_reader__free(r);
	}
	return 0;
}
