/* SPDX-License-Identifier: MIT */
/*
 * perfkit check: what perf_event_open can measure on this machine, and for everything it
 * cannot, why not and how to change that. Every capability is verified by opening (and
 * where it matters, running) a real event: sysfs and sysctl values only say what should
 * work.
 */
#include "check.h"

enum { OPT_JSON = 256 };

static const struct tool_opt opts[] = {
	{ OPT_JSON, "json", no_argument, NULL, "print one JSON object instead of text" },
	{ 0 },
};

const struct tool_help cmd_check_help = {
	.synopsis = "usage: perfkit check [--json]\n",
	.intro = "Show what perf_event_open(2) can measure on this machine: kernel, perf_event_paranoid\n"
		 "and capabilities, /proc/sys/kernel limits, PMUs, and each feature verified by opening\n"
		 ""
		 "a real event (software and hardware counters, cache events, rdpmc, tracepoints,\n"
		 "breakpoints, system-wide mode, call-chain and user-stack sampling, kprobe/uprobe\n"
		 ""
		 "PMUs). Every feature that does not work comes with the reason and the fix.\n",
	.opts = opts,
	.outro = "Exit status: 0 if software events work, 1 if not, 129 on a usage error.\n",
};


struct feature feats[F_NR] = {
	[F_SOFTWARE] = { .key = "software_events", .label = "software events" },
	[F_KERNEL] = { .key = "kernel_space", .label = "kernel-space counting" },
	[F_HARDWARE] = { .key = "hardware_counters", .label = "hardware counters" },
	[F_CACHE] = { .key = "hardware_cache_events", .label = "hardware cache events" },
	[F_RDPMC] = { .key = "rdpmc", .label = "rdpmc (user-space reads)" },
	[F_USER_TIME] = { .key = "user_time", .label = "user-space time" },
	[F_TRACEPOINT] = { .key = "tracepoints", .label = "tracepoints" },
	[F_BREAKPOINT] = { .key = "breakpoints", .label = "breakpoints" },
	[F_SYSTEM_WIDE] = { .key = "system_wide", .label = "system-wide mode" },
	[F_CALLCHAIN] = { .key = "callchain_sampling", .label = "sampling with call chains" },
	[F_USER_STACK] = { .key = "user_stack_sampling", .label = "user regs/stack sampling" },
	[F_KPROBE] = { .key = "kprobe_pmu", .label = "kprobe PMU" },
	[F_UPROBE] = { .key = "uprobe_pmu", .label = "uprobe PMU" },
};

int cmd_check(int argc, char **argv)
{
	bool json = false;
	struct facts fx;

	int c;
	optind = 1;
	opterr = 0;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		if (c == OPT_JSON) {
			json = true;
			continue;
		}
		tool_error("unknown option '%s'", argv[optind - 1]);
		tool_print_usage(stderr, &cmd_check_help);
		return 129;
	}
	if (optind < argc) {
		tool_error("unexpected argument '%s'", argv[optind]);
		tool_print_usage(stderr, &cmd_check_help);
		return 129;
	}
	tool_setup_log(0);
	check_gather(&fx);
	if (json)
		check_print_json(&fx);
	else
		check_print_text(&fx);
	pk_pmu_set__free(fx.pmus);
	return tool_finish_stdout(feats[F_SOFTWARE].ok ? 0 : 1);
}
