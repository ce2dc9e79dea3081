/* SPDX-License-Identifier: MIT */
/* tool/cmd-sched.c - `perfkit sched` (placeholder until the analyses land). */
#include <getopt.h>
#include "builtin.h"
static const struct tool_opt opts[] = { { 0 } };
const struct tool_help cmd_sched_help = {
	.synopsis = "usage: perfkit sched record|latency|timehist|map [<options>]\n",
	.opts = opts,
};
int cmd_sched(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tool_error("not implemented yet");
	return 1;
}
