/* SPDX-License-Identifier: MIT */
/*
 * perfkit convert: a perf.data file as folded stacks, pprof, speedscope, Firefox Profiler
 * (Gecko) or our JSON sample stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "profile-load.h"


enum { OPT_TO = 256, OPT_WEIGHT, OPT_ANNOTATE, OPT_NOCOMM, OPT_INLINE, OPT_NOSRC };

static const struct tool_opt opts[] = {
	{ OPT_TO, "to", required_argument, "<format>",
	  "folded, pprof, speedscope, gecko or json (required)" },
	{ 'i', "input", required_argument, "<file>",
	  "perf.data to read (default perf.data; - = stdin)" },
	{ 'o', "output", required_argument, "<file>", "file to write (default: stdout)" },
	{ OPT_WEIGHT, "weight", required_argument, "<w>", "folded: period (default) or samples" },
	{ OPT_ANNOTATE, "annotate", no_argument, NULL,
	  "folded: mark kernel frames _[k] and JIT frames _[j]" },
	{ OPT_NOCOMM, "no-comm", no_argument, NULL, "folded: no process-name root frame" },
	{ 'e', "event", required_argument, "<name>",
	  "only this event (gecko: the first event by default; not json)" },
	{ 'G', "no-call-graph", no_argument, NULL, "only the sampled functions, no callers" },
	{ OPT_INLINE, "inline", no_argument, NULL,
	  "expand inlined functions into frames (DWARF; slower;\nnot json)" },
	{ OPT_NOSRC, "no-srcline", no_argument, NULL,
	  "pprof/speedscope: skip source file:line lookups\n(faster)" },
	{ 0 },
};

const struct tool_help cmd_convert_help = {
	.synopsis = "usage: perfkit convert --to <format> [-i perf.data] [-o <file>] [<options>]\n",
	.intro = "Convert the samples of a perf.data file for other tools. <format>:\n"
		 "  folded      collapsed stacks 'comm;root;...;leaf N' (flamegraph.pl, inferno)\n"
		 "  pprof       gzip-compressed profile.proto (go tool pprof, Pyroscope, Parca)\n"
		 "  speedscope  speedscope's JSON file format (one sampled profile per thread)\n"
		 "  gecko       the Firefox Profiler's Gecko format (profiler.firefox.com)\n"
		 "  json        the sample stream of 'perfkit script --json' (one object a line)\n",
	.opts = opts,
};

enum fmt { F_NONE, F_FOLDED, F_PPROF, F_SPEEDSCOPE, F_GECKO, F_JSON };

/*
 * --to json is `perfkit script --json`, byte for byte: one documented sample stream, not
 * two that drift apart. Runs the script command with its output (fd 1, which it writes
 * with write(2)) on the output file.
 */
static int convert_json(const char *input, const char *output, bool no_callchain)
{
	char *args[] = { "script", "--json", "-i", (char *)input, "-G", NULL };
	int argc = no_callchain ? 5 : 4;
	args[argc] = NULL;
	if (!strcmp(output, "-"))
		return cmd_script(argc, args);
	struct tool_outfile of;
	FILE *f = tool_outfile_open(&of, output);
	if (!f)
		return 1;
	fflush(stdout);
	int saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (saved < 0 || dup2(fileno(f), STDOUT_FILENO) < 0) {
		tool_error("cannot redirect output to '%s': %s", output, strerror(errno));
		if (saved >= 0)
			close(saved);
		tool_outfile_close(&of, -EIO);
		return 1;
	}
	int status = cmd_script(argc, args);
	fflush(stdout);
	int cerr = dup2(saved, STDOUT_FILENO) < 0 ? errno : 0;
	close(saved);
	if (cerr) {
		tool_error("cannot restore stdout: %s", strerror(cerr));
		tool_outfile_close(&of, -EIO);
		return 1;
	}
	/* script has reported its own errors (a full disk included): keep the old file */
	int err = tool_outfile_close(&of, status ? -EIO : 0);
	if (err && !status) {
		tool_error("cannot write '%s': %s", output, pk_strerror(err));
		status = 1;
	}
	return status;
}

int cmd_convert(int argc, char **argv)
{
	const char *input = "perf.data", *output = "-";
	enum fmt fmt = F_NONE;
	bool nosrc = false, nocomm = false;
	struct tool_load_opts lo = { 0 };
	PK_OPTS(pk_folded_opts, fo, .event = -1);
	int c;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'o': output = optarg; break;
		case 'e': lo.event = optarg; break;
		case 'G': lo.no_callchain = true; break;
		case OPT_ANNOTATE: fo.annotate_kind = true; break;
		case OPT_NOCOMM: nocomm = true; break;
		case OPT_INLINE: lo.inlines = true; break;
		case OPT_NOSRC: nosrc = true; break;
		case OPT_WEIGHT:
			if (profile_weight_arg(optarg, &fo.weight))
				return 129;
			break;
		case OPT_TO:
			fmt = !strcmp(optarg, "folded") ? F_FOLDED
			      : !strcmp(optarg, "pprof") ? F_PPROF
			      : !strcmp(optarg, "speedscope") ? F_SPEEDSCOPE
			      : !strcmp(optarg, "gecko") || !strcmp(optarg, "firefox") ? F_GECKO
			      : !strcmp(optarg, "json") ? F_JSON : F_NONE;
			if (fmt == F_NONE) {
				tool_error("unknown format '%s' (folded, pprof, speedscope, gecko, json)",
					      optarg);
				return 129;
			}
			break;
		default:
			tool_print_usage(stderr, &cmd_convert_help);
			return 129;
		}
	}
	if (fmt == F_NONE) {
		tool_error("--to FORMAT is required");
		tool_print_usage(stderr, &cmd_convert_help);
		return 129;
	}
	if (optind < argc) {
		tool_error("unexpected argument '%s' (the input is given with -i)", argv[optind]);
		return 129;
	}
	if (fmt == F_JSON) {
		if (lo.event || lo.inlines) {
			tool_error("--to json is 'perfkit script --json': %s does not apply",
				      lo.event ? "-e" : "--inline");
			return 129;
		}
		return convert_json(input, output, lo.no_callchain);
	}
	lo.root_comm = fmt == F_FOLDED && !nocomm;
	lo.timeline = fmt == F_SPEEDSCOPE || fmt == F_GECKO;
	lo.addresses = fmt == F_PPROF;
	lo.srcline = (fmt == F_PPROF || fmt == F_SPEEDSCOPE) && !nosrc;
	lo.unknown_hex = fmt == F_PPROF;
	if (fmt == F_PPROF && !strcmp(output, "-") && isatty(STDOUT_FILENO)) {
		tool_error("pprof output is binary: give -o FILE or redirect stdout");
		return 129;
	}
	struct pk_profile *p = tool_load_profile(input, &lo);
	if (!p)
		return 1;
	struct tool_outfile of;
	FILE *f = tool_outfile_open(&of, output);
	if (!f) {
		pk_profile__free(p);
		return 1;
	}
	int err = 0;
	switch (fmt) {
	case F_FOLDED: err = pk_export__folded(p, f, &fo); break;
	case F_PPROF: err = pk_export__pprof(p, f, NULL); break;
	case F_SPEEDSCOPE: err = pk_export__speedscope(p, f, NULL); break;
	case F_GECKO: err = pk_export__gecko(p, f, NULL); break;
	case F_JSON: /* convert_json() above */
	case F_NONE: break;
	}
	int status = 0;
	if (f != stdout)
		err = tool_outfile_close(&of, err);
	if (err) {
		if (f == stdout && ferror(stdout)) {
			/* stdout failed: reported as every command reports it (silent for a
			 * reader that went away) */
			pk_profile__free(p);
			errno = -err;
			return tool_finish_stdout(0); /* 1 after printing the error */
		}
		tool_error("cannot write '%s': %s", output, pk_strerror(err));
		status = 1;
	}
	pk_profile__free(p);
	return tool_finish_stdout(status);
}
