/* SPDX-License-Identifier: MIT */
/*
 * perfkit push: perf.data files (perfkit's or perf's) to a Pyroscope-compatible profile
 * store, as pprof (or folded stacks), with a spool for what the server cannot take yet.
 * The work is the pusher's (tool/push.c), the same that `record --push` feeds.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "builtin.h"
#include "push-opts.h"

enum { OPT_WAIT = 256 };

static const struct tool_opt opts[] = {
	TOOL_PUSH_OPT_ENTRIES
	{ 'e', "event", required_argument, "<name>", "only this event (default: all; folded: the first)" },
	{ OPT_WAIT, "wait", required_argument, "<secs>",
	  "at the end, keep retrying the spool this long\n(default: one more try)" },
	{ 'v', "verbose", no_argument, NULL, "say what is sent and what the server answers" },
	{ 0 },
};

const struct tool_help cmd_push_help = {
	.synopsis = "usage: perfkit push [--url <url>] [<options>] [<perf.data>...]\n",
	.intro = "Send each perf.data file to a profile store that speaks Pyroscope's ingest API\n"
		 "(Grafana Pyroscope, Grafana Alloy's pyroscope.receive_http, ...) as pprof:\n"
		 "POST <url>/ingest?name=APP{hostname=..,comm=..}&from=..&until=..&format=pprof.\n"
		 "A profile the server cannot take now (unreachable, time-out, 5xx, 429) is kept\n"
		 "in the spool and retried with back-off; with no file, only the spool is sent.\n",
	.opts = opts,
	.outro = "Exit status: 0 when every profile was delivered; 1 when one was rejected,\n"
		 "failed, dropped from a full spool or still waits in the spool.\n"
		 "Details, Pyroscope and Parca set-ups: docs/perfkit-push.md, docs/fleet.md.\n",
};

int cmd_push(int argc, char **argv)
{
	struct tool_push_args pa;
	tool_push_args_init(&pa);
	unsigned wait_ms = 0;
	int c;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		int rc = tool_push_parse_opt(&pa, c, optarg);
		if (rc == 0)
			continue;
		if (rc != 1)
			return rc;
		switch (c) {
		case 'e': pa.o.event = optarg; break;
		case 'v': pa.o.verbose = true; break;
		case OPT_WAIT: {
			char *end;
			double v = strtod(optarg, &end);
			if (end == optarg || *end || !(v >= 0) || v > 86400) {
				tool_error("--wait must be a number of seconds, not '%s'", optarg);
				return 129;
			}
			wait_ms = (unsigned)(v * 1000);
			break;
		}
		default:
			return tool_bad_option(argv, &cmd_push_help);
		}
	}
	int rc = tool_push_args_finish(&pa);
	if (rc)
		return rc;
	if (optind == argc && !pa.o.spool_dir)
		return tool_usage_error(&cmd_push_help, "no perf.data file to push and no spool");
	struct tool_pusher *p = tool_pusher_new(&pa.o);
	if (!p)
		return 1;
	int status = 0;
	for (int i = optind; i < argc; i++) {
		if (tool_pusher_submit(p, argv[i])) {
			status = 1;
			break;   /* stopped (authentication) or out of memory: said already */
		}
	}
	if (tool_pusher_finish(p, wait_ms, NULL))
		status = 1;
	return tool_finish_stdout(status);
}
