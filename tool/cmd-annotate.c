/* SPDX-License-Identifier: MIT */
/*
 * perfkit annotate: the disassembly of the hottest functions of a perf.data file with
 * the share of the samples on each instruction (perf annotate --stdio). The library
 * (pk_annotate) counts and disassembles; this file chooses and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

enum { OPT_STDIO = 256, OPT_DSOS, OPT_ASM_RAW, OPT_PCT_TYPE, OPT_MINPCT, OPT_JSON };

static const struct tool_opt opts[] = {
	{ 'i', "input", required_argument, "<file>", "perf.data to read (default perf.data)" },
	{ 's', "symbol", required_argument, "<name>", "only this symbol (also: the SYMBOL argument)" },
	{ OPT_DSOS, "dsos", required_argument, "<list>",
	  "only symbols of these objects (comma-separated\npaths or short names)" },
	{ 'e', "event", required_argument, "<name>", "annotate this event (default: the first)" },
	{ OPT_STDIO, "stdio", no_argument, NULL, "text output (the only mode; accepted for perf)" },
	{ OPT_ASM_RAW, "asm-raw", no_argument, NULL, "show the bytes of each instruction" },
	{ OPT_PCT_TYPE, "percent-type", required_argument, "<type>",
	  "local (share of the symbol's period, default)\nor global (share of the event's)" },
	{ OPT_MINPCT, "min-percent", required_argument, "<p>",
	  "skip symbols with less than p% of the period" },
	{ 'n', "show-nr-samples", no_argument, NULL, "sample counts instead of percentages" },
	{ OPT_JSON, "json", no_argument, NULL, "one JSON object per symbol, a line each" },
	{ 'v', "verbose", no_argument, NULL, "more messages" },
	TOOL_SYMBOL_SOURCE_OPTS,
	{ 0 },
};

const struct tool_help cmd_annotate_help = {
	.synopsis = "usage: perfkit annotate [-i perf.data] [<options>] [SYMBOL]\n",
	.intro = "Print the disassembly of the sampled functions, hottest first, with the share of\n"
		 "the samples that fell on each instruction (x86-64 and AArch64 user code).\n",
	.opts = opts,
};

struct ann_print {
	FILE *f;
	bool raw, nr, global, json;
	uint64_t sym_period, total_period;
	bool first_insn;
};

/* Is object `name` (a path or bracketed name) in the --dsos list (paths or base names)? */
static bool name_listed(const char *list, const char *name)
{
	if (!list)
		return true;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if ((strlen(name) == n && !strncmp(p, name, n)) ||
		    (strlen(base) == n && !strncmp(p, base, n)))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/* ms of a clock (-v: where the time went) */
static double clock_ms(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int print_insn(void *ctx, const struct pk_annotate_insn *in)
{
	struct ann_print *P = ctx;
	double p = pct(in->period, P->global ? P->total_period : P->sym_period);
	if (P->json) {
		fprintf(P->f, "%s{\"addr\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"period\":%" PRIu64
			",\"percent\":%.4f,\"text\":", P->first_insn ? "" : ",", in->addr,
			in->samples, in->period, p);
		char text[400];
		snprintf(text, sizeof(text), "%s%s%s", in->mnemonic, *in->operands ? " " : "",
			 in->operands);
		tool_json_str(P->f, text);
		if (in->has_target) {
			fprintf(P->f, ",\"target\":%" PRIu64, in->target);
			if (in->target_sym) {
				fputs(",\"target_sym\":", P->f);
				tool_json_str(P->f, in->target_sym);
				fprintf(P->f, ",\"target_off\":%" PRIu64, in->target_off);
			}
		}
		fputc('}', P->f);
		P->first_insn = false;
		return 0;
	}
	if (P->nr)
		fprintf(P->f, "%8" PRIu64 " :", in->samples);
	else
		fprintf(P->f, "%8.2f :", p);
	fprintf(P->f, " %6" PRIx64 ":   ", in->addr);
	if (P->raw) {
		for (unsigned i = 0; i < 8; i++) {
			if (i < in->len)
				fprintf(P->f, "%02x ", in->bytes[i]);
			else
				fputs("   ", P->f);
		}
		fputs("  ", P->f);
	}
	if (*in->operands)
		fprintf(P->f, "%-6s %s\n", in->mnemonic, in->operands);
	else
		fprintf(P->f, "%s\n", in->mnemonic);
	return 0;
}

/* why a symbol cannot be shown, and what to do about it */
static void disasm_error(const struct pk_annotate_sym *s, int err)
{
	const char *hint = "";
	switch (-err) {
	case ENOENT:
		hint = " (the file is gone: run on the machine of the recording, or keep a copy "
		       "in perf's build-id cache with 'perf buildid-cache -a FILE')";
		break;
	case ESTALE:
		hint = " (the file was rebuilt since the recording: its build-id differs; "
		       "record again, or restore the recorded build)";
		break;
	case ENODATA:
		hint = " (the file read holds no code there, only debug information)";
		break;
	case EOPNOTSUPP:
		hint = s->kernel ? " (kernel code is not supported yet)"
				 : " (only x86-64 and AArch64 ELF code is supported)";
		break;
	case EINVAL:
		hint = " (not an ELF file, or a corrupt one)";
		break;
	default:
		break;
	}
	tool_error("cannot disassemble '%s' in '%s': %s%s", s->name, s->dso_name,
		   pk_strerror(err), hint);
}

static int annotate_one(struct pk_annotate *a, size_t i, const struct pk_annotate_sym *s,
			struct ann_print *P, const char *event)
{
	P->sym_period = s->period;
	P->first_insn = true;
	if (P->json) {
		fputs("{\"symbol\":", P->f);
		tool_json_str(P->f, s->name);
		fputs(",\"dso\":", P->f);
		tool_json_str(P->f, s->dso_name);
		fputs(",\"event\":", P->f);
		tool_json_str(P->f, event);
		fprintf(P->f, ",\"start\":%" PRIu64 ",\"size\":%" PRIu64 ",\"samples\":%" PRIu64
			",\"period\":%" PRIu64 ",\"percent\":%.4f,\"instructions\":[", s->start,
			s->size, s->samples, s->period, pct(s->period, P->total_period));
	} else {
		const char *base = strrchr(s->dso_name, '/');
		base = base ? base + 1 : s->dso_name;
		fprintf(P->f, " %s |\tDisassembly of %s for %s (%" PRIu64
			" samples, percent: %s period)\n", P->nr ? "Samples" : "Percent", base, event,
			s->samples, P->global ? "global" : "local");
		fputs("------------------------------------------------------------------------"
		      "-----------------------------------------\n", P->f);
		fprintf(P->f, "         :\n         : %016" PRIx64 " <%s>:\n", s->start, s->name);
	}
	int err = pk_annotate__disasm(a, i, print_insn, P);
	if (P->json)
		fputs("]}\n", P->f);
	if (err)
		disasm_error(s, err);
	return err;
}

int cmd_annotate(int argc, char **argv)
{
	const char *input = "perf.data", *symbol = NULL, *dsos = NULL, *event = NULL;
	double min_pct = 0;
	int verbose = 0;
	struct ann_print P = { .f = stdout };
	int c;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		char *end;
		switch (c) {
		case 'i': input = optarg; break;
		case 's': symbol = optarg; break;
		case 'e': event = optarg; break;
		case 'n': P.nr = true; break;
		case 'v': verbose++; break;
		case TOOL_OPT_SYMFS: case TOOL_OPT_NO_DEBUGINFOD: tool_symbol_source_opt(c, optarg); break;
		case OPT_DSOS: dsos = optarg; break;
		case OPT_STDIO: break;
		case OPT_ASM_RAW: P.raw = true; break;
		case OPT_JSON: P.json = true; break;
		case OPT_PCT_TYPE:
			if (!strcmp(optarg, "global") || !strcmp(optarg, "global-period"))
				P.global = true;
			else if (strcmp(optarg, "local") && strcmp(optarg, "local-period")) {
				tool_error("--percent-type must be 'local' or 'global', not '%s'",
					   optarg);
				return 129;
			}
			break;
		case OPT_MINPCT:
			min_pct = strtod(optarg, &end);
			if (*end || !*optarg || min_pct < 0 || min_pct > 100) {
				tool_error("--min-percent wants a number from 0 to 100, not '%s'",
					   optarg);
				return 129;
			}
			break;
		default:
			tool_print_usage(stderr, &cmd_annotate_help);
			return 129;
		}
	}
	if (argc - optind > 1 || (argc - optind == 1 && symbol)) {
		tool_error("unexpected argument '%s' (one symbol, with -s or as the argument)",
			   argv[argc - 1]);
		tool_print_usage(stderr, &cmd_annotate_help);
		return 129;
	}
	if (argc - optind == 1)
		symbol = argv[optind];
	tool_setup_log(verbose);
	double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	struct pk_data_reader *r = tool_open_input(input, NULL);
	if (!r)
		return 1;
	/* the objects that cannot hold a symbol above --min-percent are not loaded; the
	 * second thread reads the hot objects' tables ahead whatever the load (it adds
	 * little work: on a busy machine the reading thread reads one itself when the
	 * other has not started it) */
	PK_OPTS(pk_annotate_opts, ao, .reader_thread = tool_threads_allowed(),
		.machine_opts = tool_machine_opts(), .event = event,
		.min_percent = symbol ? 0 : min_pct);
	struct pk_annotate *a = pk_annotate__load(r, &ao);
	if (!a) {
		int err = errno;
		if (err == ENOENT)
			tool_error("'%s' has no event%s%s%s", input, event ? " named '" : "",
				   event ? event : "", event ? "'" : " with samples");
		else
			tool_error("cannot load '%s': %s", input, pk_strerror(err));
		pk_data_reader__free(r);
		return 1;
	}
	double t1 = clock_ms(CLOCK_MONOTONIC), c1 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	struct pk_annotate_stats st = { .sz = sizeof(st) };
	pk_annotate__stats(a, &st);
	if (st.reader_error)
		tool_warn("'%s' is corrupt after %" PRIu64 " samples: %s (using what was read)",
			  input, st.samples, pk_strerror(st.reader_error));
	P.total_period = st.period;
	int status = 0;
	size_t shown = 0, failed = 0, kernel_skipped = 0;
	for (size_t i = 0; i < pk_annotate__nr_symbols(a); i++) {
		struct pk_annotate_sym s = { .sz = sizeof(s) };
		if (pk_annotate__symbol(a, i, &s))
			break;
		if ((symbol && strcmp(symbol, s.name)) || !name_listed(dsos, s.dso_name))
			continue;
		if (!symbol && pct(s.period, st.period) < min_pct)
			continue;
		if (!symbol && s.kernel) {
			/* not disassembled yet: one notice for all of them, below */
			kernel_skipped++;
			continue;
		}
		if (shown++ && !P.json)
			fputc('\n', P.f);
		if (annotate_one(a, i, &s, &P, pk_annotate__event(a)))
			failed++;
		if (ferror(stdout))
			break;
	}
	if (kernel_skipped)
		tool_warn("%zu kernel symbol%s with samples skipped (kernel code is not supported "
			  "yet)", kernel_skipped, kernel_skipped == 1 ? "" : "s");
	if (!shown) {
		char what[300] = "";
		if (symbol || dsos)
			snprintf(what, sizeof(what), " %s '%s'", symbol ? "in symbol" : "in objects",
				 symbol ? symbol : dsos);
		/* the samples without a symbol that could be what was asked for: those in the
		 * listed objects (all of them without --dsos) */
		/* the objects left out count too: their samples without a symbol */
		if (st.skipped && pk_annotate__load_skipped(a) == -ENOMEM) {
			tool_error("out of memory");
			status = 1;
			goto out;
		}
		uint64_t unres = 0;
		for (size_t i = 0; i < pk_annotate__nr_unresolved(a); i++) {
			uint64_t n = 0;
			const char *o = pk_annotate__unresolved(a, i, &n);
			if (o && name_listed(dsos, o))
				unres += n;
		}
		if (unres)
			tool_error("no samples%s of '%s' to annotate: %" PRIu64 " of its %" PRIu64
				   " samples have no symbol (stripped code, or a file of the recording "
				   "missing or rebuilt since: keep the recorded files, or add them to "
				   "the build-id cache with 'perf buildid-cache -a FILE')", what, input,
				   unres, st.samples);
		else if (what[0])
			tool_error("no samples%s of '%s' (check the names with 'perfkit report "
				   "-i %s')", what, input, input);
		else
			tool_error("no symbol with samples in '%s'%s", input,
				   st.samples ? "" : " (was it recorded with samples?)");
		status = 1;
	} else if (failed == shown) {
		status = 1;
	}
out:
	if (verbose) {
		/* the reading thread's CPU beside the wall time: their gap is waiting (for
		 * a CPU, for the preload thread, for the disk) */
		double t2 = clock_ms(CLOCK_MONOTONIC), c2 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
		fprintf(stderr, "perfkit annotate: load %.1f ms (this thread's CPU %.1f ms), "
			"disassembly and output %.1f ms (CPU %.1f ms); %" PRIu64 " objects' "
			"tables asked for ahead\n", t1 - t0, c1 - c0, t2 - t1, c2 - c1,
			st.preloaded);
	}
	pk_annotate__free(a);
	pk_data_reader__free(r);
	return tool_finish_stdout(status);
}
