/* SPDX-License-Identifier: MIT */
/*
 * tool/recorder-opts.c - the options every command that samples through pk_recorder
 * takes alike (record, top): -e, -F, -c, -g (with perf's configured call-graph mode),
 * --call-graph, -p, -t, -a, -C. One parser, so the two cannot drift apart.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "perfconfig.h"

#define bad(...) (tool_error(__VA_ARGS__), 129)

int tool_parse_callgraph(struct pk_recorder_opts *ro, const char *arg)
{
	char *end;
	if (!strcmp(arg, "fp") || !strcmp(arg, "no")) {
		ro->callgraph = arg[0] == 'f' ? PK_RECORDER_CG_FP : PK_RECORDER_CG_NONE;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ','))
		return bad("unsupported call-graph mode '%s' (fp, dwarf[,size] or no)", arg);
	ro->callgraph = PK_RECORDER_CG_DWARF;
	ro->stack_size = 0; /* the library's default, 8192 bytes */
	if (arg[5] == ',') {
		unsigned long v = strtoul(arg + 6, &end, 0);
		if (*end || v == 0 || v > 65528)
			return bad("invalid dwarf stack size '%s' (1..65528 bytes)", arg + 6);
		ro->stack_size = (uint32_t)((v + 7) & ~7UL);
	}
	return 0;
}

int tool_recorder_opt(struct pk_recorder_opts *ro, struct pk_event_list *events, int c,
		      const char *arg, int callgraph_id)
{
	struct pk_parse_error perr;
	char *end;

	if (c == callgraph_id)
		return tool_parse_callgraph(ro, arg) ? 129 : 1;
	switch (c) {
	case 'e':
		if (pk_event_list__parse(events, arg, NULL, &perr) < 0)
			return bad("invalid event '%s': %s", arg, perr.msg);
		return 1;
	case 'F':
		if (!strcmp(arg, "max")) {
			ro->freq_max = true;
			return 1;
		}
		ro->freq = strtol(arg, &end, 10);
		if (*end || ro->freq <= 0)
			return bad("invalid frequency '%s'", arg);
		return 1;
	case 'c':
		ro->period = strtoull(arg, &end, 0);
		if (*end || !ro->period)
			return bad("invalid period '%s'", arg);
		return 1;
	case 'g': {
		/* -g: the mode of perf's configuration (call-graph.record-mode, or the older
		 * record.call-graph), else frame pointers */
		const char *mode = tool_config_get("call-graph.record-mode");
		if (!mode)
			mode = tool_config_get("record.call-graph");
		if (!mode) {
			ro->callgraph = PK_RECORDER_CG_FP;
		} else if (tool_parse_callgraph(ro, mode)) {
			tool_error("-g: the configuration's call-graph mode '%s' is not one perfkit "
				   "records (perfkit config call-graph.record-mode=fp)", mode);
			return 129;
		}
		return 1;
	}
	case 'p': ro->pids = arg; return 1;
	case 't': ro->tids = arg; return 1;
	case 'a': ro->system_wide = true; return 1;
	case 'C': ro->cpus = arg; ro->system_wide = true; return 1;
	default: return 0;
	}
}

int tool_recorder_parse(const struct tool_recorder_cmdline *cl, int argc, char **argv,
			char ***command)
{
	int c, r;

	opterr = 0;
	optind = 1;
	while ((c = tool_getopt(argc, argv, cl->help->opts, TOOL_OPT_STOP_AT_ARG)) != -1) {
		r = tool_recorder_opt(cl->ro, cl->events, c, optarg, cl->callgraph_id);
		if (!r)
			r = cl->take(c, optarg, cl->ctx);
		if (r == TOOL_OPT_UNKNOWN)
			return tool_bad_option(argv, cl->help);
		if (r == 129)
			return 129;
	}
	*command = optind < argc ? argv + optind : NULL;
	return 0;
}
