/* SPDX-License-Identifier: MIT */
/*
 * perfkit flamegraph: an interactive, self-contained HTML flame graph of a perf.data file,
 * or a differential one of two files.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "profile-load.h"


enum { OPT_DIFF = 256, OPT_TITLE, OPT_WEIGHT, OPT_MINPCT, OPT_MAXNODES, OPT_ICICLE, OPT_INLINE,
       OPT_OFFCPU };

static const struct tool_opt opts[] = {
	{ 'i', "input", required_argument, "<file>",
	  "perf.data to read (default perf.data; - = stdin)" },
	{ 'o', "output", required_argument, "<file>",
	  "HTML file to write (default flamegraph.html;\n- = stdout)" },
	{ OPT_DIFF, "diff", no_argument, NULL,
	  "differential flame graph of two files: widths from\n"
	  "AFTER, red = share grew since BEFORE, blue = shrank" },
	{ OPT_TITLE, "title", required_argument, "<text>",
	  "page title (default: the input file name)" },
	{ OPT_WEIGHT, "weight", required_argument, "<w>",
	  "period (default: sum of sample periods) or samples" },
	{ OPT_MINPCT, "min-percent", required_argument, "<p>",
	  "merge frames below p% of the total into their\n"
	  "callers (default 0.01; shown on the page)" },
	{ OPT_MAXNODES, "max-nodes", required_argument, "<n>",
	  "at most n frames per event (default 250000)" },
	{ OPT_ICICLE, "icicle", no_argument, NULL, "start with the root at the top" },
	{ 'e', "event", required_argument, "<name>", "only this event" },
	{ OPT_OFFCPU, "off-cpu", no_argument, NULL,
	  "first a picture of on- and off-CPU time together (record\n"
	  "--off-cpu): off-CPU frames in blue, a toggle hides them" },
	{ 'G', "no-call-graph", no_argument, NULL, "only the sampled functions, no callers" },
	{ OPT_INLINE, "inline", no_argument, NULL, "expand inlined functions (DWARF; slower)" },
	TOOL_SYMBOL_SOURCE_OPTS,
	{ 0 },
};

const struct tool_help cmd_flamegraph_help = {
	.synopsis = "usage: perfkit flamegraph [-i perf.data] [-o flamegraph.html] [<options>]\n"
		    "       perfkit flamegraph --diff BEFORE.data AFTER.data [-o diff.html] [<options>]\n",
	.intro = "Write one self-contained HTML file (no network access needed) with an interactive\n"
		 "flame graph per event: hover for details, click to zoom, search, flame/icicle toggle.\n",
	.opts = opts,
};

int cmd_flamegraph(int argc, char **argv)
{
	const char *input = "perf.data", *output = "flamegraph.html", *title = NULL;
	bool diff = false;
	struct tool_load_opts lo = { .root_comm = true };
	PK_OPTS(pk_flamegraph_opts, fo);
	int c;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		char *end;
		switch (c) {
		case 'i': input = optarg; break;
		case 'o': output = optarg; break;
		case 'e': lo.event = optarg; break;
		case 'G': lo.no_callchain = true; break;
		case OPT_DIFF: diff = true; break;
		case OPT_TITLE: title = optarg; break;
		case OPT_ICICLE: fo.icicle = true; break;
		case OPT_INLINE: lo.inlines = true; break;
		case OPT_OFFCPU: fo.off_cpu = true; break;
		case TOOL_OPT_SYMFS: case TOOL_OPT_NO_DEBUGINFOD: tool_symbol_source_opt(c, optarg); break;
		case OPT_WEIGHT:
			if (profile_weight_arg(optarg, &fo.weight))
				return 129;
			break;
		case OPT_MINPCT:
			fo.min_percent = strtod(optarg, &end);
			if (*end || fo.min_percent < 0 || fo.min_percent > 100) {
				tool_error("--min-percent wants a number from 0 to 100, not '%s'", optarg);
				return 129;
			}
			if (fo.min_percent == 0)
				fo.min_percent = -1; /* 0 on the command line: prune nothing */
			break;
		case OPT_MAXNODES: {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !v || v > 50000000) {
				tool_error("--max-nodes wants a positive number, not '%s'", optarg);
				return 129;
			}
			fo.max_nodes = (uint32_t)v;
			break;
		}
		default:
			tool_print_usage(stderr, &cmd_flamegraph_help);
			return 129;
		}
	}
	int nargs = argc - optind;
	if (diff && fo.off_cpu) {
		tool_error("--off-cpu does not go with --diff");
		return 129;
	}
	if ((diff && nargs != 2) || (!diff && nargs != 0)) {
		tool_error(diff ? "--diff needs two files: BEFORE AFTER"
				   : "unexpected argument '%s' (the input is given with -i)",
			      diff ? "" : argv[optind]);
		tool_print_usage(stderr, &cmd_flamegraph_help);
		return 129;
	}
	struct pk_profile *before = NULL, *after = NULL;
	if (diff) {
		before = tool_load_profile(argv[optind], &lo);
		if (!before)
			return 1;
		input = argv[optind + 1];
	}
	after = tool_load_profile(input, &lo);
	if (!after) {
		pk_profile__free(before);
		return 1;
	}
	char dtitle[512];
	if (!title && diff) {
		snprintf(dtitle, sizeof(dtitle), "%s -> %s", argv[optind], input);
		title = dtitle;
	}
	fo.title = title;
	struct tool_outfile of;
	FILE *f = tool_outfile_open(&of, output);
	if (!f) {
		pk_profile__free(before);
		pk_profile__free(after);
		return 1;
	}
	int err = diff ? pk_export__flamegraph_diff(before, after, f, &fo)
		       : pk_export__flamegraph(after, f, &fo);
	int status = 0;
	if (f != stdout)
		err = tool_outfile_close(&of, err);
	if (err && f == stdout && ferror(stdout)) {
		/* stdout failed: reported as every command reports it (silent for a reader
		 * that went away) */
		pk_profile__free(before);
		pk_profile__free(after);
		errno = -err;
		return tool_finish_stdout(0); /* 1 after printing the error */
	}
	if (err == -ENOENT && fo.off_cpu) {
		/* nothing was written (a file output was left as it was) */
		tool_error("--off-cpu: '%s' lacks an offcpu-time event or an on-CPU event in "
			   "nanoseconds (cpu-clock, task-clock): record with `perfkit record "
			   "--off-cpu -e cpu-clock`", input);
		status = 1;
	} else if (err) {
		tool_error("cannot write '%s': %s", output, pk_strerror(err));
		status = 1;
	}
	if (!err && f != stdout) {
		uint64_t ns = 0;
		for (size_t e = 0; e < pk_profile__nr_events(after); e++) {
			uint64_t n;
			pk_profile__totals(after, (uint32_t)e, &n, NULL);
			ns += n;
		}
		fprintf(stderr, "perfkit flamegraph: wrote '%s' (%llu samples)\n", output,
			(unsigned long long)ns);
	}
	pk_profile__free(before);
	pk_profile__free(after);
	return tool_finish_stdout(status);
}
