/* SPDX-License-Identifier: MIT */
/* perfkit diff: per-symbol comparison of two perf.data files (like perf diff). */
#include <errno.h>
#include <getopt.h> /* (no_argument, ...) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "profile-load.h"

enum { OPT_WEIGHT = 256, OPT_MINDELTA, OPT_JSON };

static const struct tool_opt opts[] = {
	{ 'e', "event", required_argument, "<name>",
	  "compare this event (default: the first of AFTER)" },
	{ OPT_WEIGHT, "weight", required_argument, "<w>", "period (default) or samples" },
	{ 'n', "limit", required_argument, "<n>", "print at most n rows (default: all)" },
	{ OPT_MINDELTA, "min-delta", required_argument, "<p>",
	  "hide rows whose share changed by less than p points" },
	{ OPT_JSON, "json", no_argument, NULL, "one JSON object per row" },
	{ 0 },
};

const struct tool_help cmd_diff_help = {
	.synopsis = "usage: perfkit diff [<options>] [BEFORE.data [AFTER.data]]\n",
	.intro = "Compare the self share of every symbol between two recordings (default:\n"
		 "perf.data.old and perf.data), largest change first.\n",
	.opts = opts,
	.outro = "Columns: Baseline (share in BEFORE), New (share in AFTER), Delta (New - Baseline,\n"
		 "percentage points), the object and the symbol.\n",
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

int cmd_diff(int argc, char **argv)
{
	const char *event = NULL;
	enum pk_export_weight w = PK_WEIGHT_PERIOD;
	long limit = -1;
	double min_delta = 0;
	bool json = false;
	int c;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		char *end;
		switch (c) {
		case 'e': event = optarg; break;
		case OPT_JSON: json = true; break;
		case OPT_WEIGHT:
			if (!strcmp(optarg, "samples"))
				w = PK_WEIGHT_SAMPLES;
			else if (strcmp(optarg, "period")) {
				tool_error("--weight must be 'period' or 'samples', not '%s'", optarg);
				return 129;
			}
			break;
		case 'n':
			limit = strtol(optarg, &end, 10);
			if (*end || limit < 0) {
				tool_error("--limit wants a number, not '%s'", optarg);
				return 129;
			}
			break;
		case OPT_MINDELTA:
			min_delta = strtod(optarg, &end);
			if (*end || min_delta < 0) {
				tool_error("--min-delta wants a number, not '%s'", optarg);
				return 129;
			}
			break;
		default:
			tool_print_usage(stderr, &cmd_diff_help);
			return 129;
		}
	}
	const char *fa = "perf.data.old", *fb = "perf.data";
	int nargs = argc - optind;
	if (nargs > 2) {
		tool_error("at most two files: BEFORE AFTER");
		return 129;
	}
	if (nargs == 1) {
		fb = argv[optind];
	} else if (nargs == 2) {
		fa = argv[optind];
		fb = argv[optind + 1];
	}
	struct tool_load_opts lo = { .no_callchain = false, .unknown_hex = true };
	struct pk_profile *a = tool_load_profile(fa, &lo);
	if (!a)
		return 1;
	struct pk_profile *b = tool_load_profile(fb, &lo);
	if (!b) {
		pk_profile__free(a);
		return 1;
	}
	struct pk_diff_entry *e = NULL;
	int n = pk_profile__diff(a, b, event, w, &e);
	if (n < 0) {
		if (n == -ENOENT)
			tool_error("event '%s' is not in both files", event ? event : "(first)");
		else
			tool_error("cannot compare: %s", pk_strerror(n));
		pk_profile__free(a);
		pk_profile__free(b);
		return 1;
	}
	if (!json) {
		printf("# Baseline: %s\n# New:      %s\n#\n", fa, fb);
		printf("# %8s  %8s  %8s  %-24s %s\n", "Baseline", "New", "Delta", "Shared Object",
		       "Symbol");
	}
	long shown = 0;
	for (int i = 0; i < n && (limit < 0 || shown < limit); i++) {
		double d = e[i].after_pct - e[i].before_pct;
		if (fabs(d) < min_delta)
			continue;
		shown++;
		if (json) {
			fputs("{\"symbol\":", stdout);
			tool_json_str(stdout, e[i].name);
			fputs(",\"dso\":", stdout);
			tool_json_str(stdout, e[i].dso);
			printf(",\"baseline\":%.4f,\"new\":%.4f,\"delta\":%.4f,\"baseline_weight\":%llu,"
			       "\"new_weight\":%llu}\n", e[i].before_pct, e[i].after_pct, d,
			       (unsigned long long)e[i].before, (unsigned long long)e[i].after);
		} else {
			char base[16], delta[16];
			if (e[i].before)
				snprintf(base, sizeof(base), "%.2f%%", e[i].before_pct);
			else
				snprintf(base, sizeof(base), "-");
			snprintf(delta, sizeof(delta), "%+.2f%%", d);
			printf("  %8s  %7.2f%%  %8s  %-24s %s\n", base, e[i].after_pct, delta,
			       base_name(e[i].dso), e[i].name);
		}
	}
	free(e);
	pk_profile__free(a);
	pk_profile__free(b);
	return tool_finish_stdout(0);
}
