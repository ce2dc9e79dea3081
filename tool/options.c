/* SPDX-License-Identifier: MIT */
/*
 * tool/options.c - one table per command for its options: getopt_long's tables and the
 * option lines of its usage text are both made from it, so the two cannot disagree.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "builtin.h"

#define MAX_OPTS 96
#define HELP_COL 27 /* where the help text starts */

/* getopt_long's tables of the last table asked for (commands run one at a time) */
static const struct tool_opt *built_for;
static unsigned built_flags;
static struct option longopts[MAX_OPTS + 1];
static char shortopts[3 * MAX_OPTS + 2];

static void build(const struct tool_opt *opts, unsigned flags)
{
	size_t nl = 0, ns = 0;
	if (flags & TOOL_OPT_STOP_AT_ARG)
		shortopts[ns++] = '+';
	for (const struct tool_opt *o = opts; o->id && nl < MAX_OPTS; o++) {
		/* (a hidden alias, help NULL, is a long name only) */
		if (o->id < 256 && o->help && ns + 3 < sizeof(shortopts)) {
			shortopts[ns++] = (char)o->id;
			if (o->has_arg == required_argument)
				shortopts[ns++] = ':';
			else if (o->has_arg == optional_argument) {
				shortopts[ns++] = ':';
				shortopts[ns++] = ':';
			}
		}
		if (o->name)
			longopts[nl++] = (struct option){ o->name, o->has_arg, NULL, o->id };
	}
	shortopts[ns] = 0;
	longopts[nl] = (struct option){ NULL, 0, NULL, 0 };
	built_for = opts;
	built_flags = flags;
}

int tool_getopt(int argc, char **argv, const struct tool_opt *opts, unsigned flags)
{
	if (built_for != opts || built_flags != flags)
		build(opts, flags);
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

/* one option's lines: "    -e, --event <spec>     help", continuation lines aligned */
static void print_opt(FILE *f, const struct tool_opt *o)
{
	char lhs[128];
	int n;
	if (o->id < 256 && o->name)
		n = snprintf(lhs, sizeof(lhs), "    -%c, --%s", o->id, o->name);
	else if (o->id < 256)
		n = snprintf(lhs, sizeof(lhs), "    -%c", o->id);
	else
		n = snprintf(lhs, sizeof(lhs), "        --%s", o->name);
	if (o->arg && n > 0 && (size_t)n < sizeof(lhs))
		n += snprintf(lhs + n, sizeof(lhs) - (size_t)n,
			      o->has_arg == optional_argument ? "[=%s]" : " %s", o->arg);
	fputs(lhs, f);
	const char *h = o->help;
	int col = n;
	if (col + 2 > HELP_COL) {
		fputs("  ", f);
	} else {
		fprintf(f, "%*s", HELP_COL - col, "");
	}
	for (;;) {
		const char *nl = strchr(h, '\n');
		fwrite(h, 1, nl ? (size_t)(nl - h) : strlen(h), f);
		fputc('\n', f);
		if (!nl || !nl[1])
			break;
		h = nl + 1;
		fprintf(f, "%*s", HELP_COL, "");
	}
}

void tool_print_usage(FILE *f, const struct tool_help *h)
{
	fputs(h->synopsis, f);
	if (h->intro)
		fprintf(f, "\n%s", h->intro);
	if (h->opts && h->opts->id) {
		fputc('\n', f);
		for (const struct tool_opt *o = h->opts; o->id; o++)
			if (o->help)
				print_opt(f, o);
	}
	if (h->outro)
		fprintf(f, "\n%s", h->outro);
}

int tool_usage_error(const struct tool_help *h, const char *msg)
{
	tool_error("%s", msg);
	tool_print_usage(stderr, h);
	return 129;
}

int tool_bad_option(char **argv, const struct tool_help *h)
{
	if (optopt && optopt < 256)
		tool_error("unknown or incomplete option '-%c'", optopt);
	else
		tool_error("unknown or incomplete option '%s'", argv[optind - 1]);
	tool_print_usage(stderr, h);
	return 129;
}

int tool_parse_mmap_pages(const char *arg, size_t *pages)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 0);
	if (*end || !v || (v & (v - 1)) || v > (1UL << 20)) {
		tool_error("invalid --mmap-pages '%s': a power of two is needed", arg);
		return 129;
	}
	*pages = v;
	return 0;
}

/* Every option of a table as a shell would complete it: "--name" (with "=" when it takes
 * an argument) and "-x", one a line; hidden aliases too. */
void tool_list_opts(FILE *f, const struct tool_opt *opts)
{
	for (const struct tool_opt *o = opts; o && o->id; o++) {
		if (o->name)
			fprintf(f, "--%s%s\n", o->name, o->has_arg == required_argument ? "=" : "");
		if (o->id < 256 && o->help)
			fprintf(f, "-%c\n", o->id);
	}
}
