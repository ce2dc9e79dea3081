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
#include "annotate-src.h"
#include "builtin.h"
#include "annotate-kernel.h"

enum { OPT_STDIO = 256, OPT_DSOS, OPT_ASM_RAW, OPT_PCT_TYPE, OPT_MINPCT, OPT_JSON, OPT_SOURCE,
       OPT_NO_SOURCE, OPT_COLOR };

static const struct tool_opt opts[] = {
	{ 'i', "input", required_argument, "<file>", "perf.data to read (default perf.data)" },
	{ 's', "symbol", required_argument, "<name>", "only this symbol (also: the SYMBOL argument)" },
	{ OPT_DSOS, "dsos", required_argument, "<list>",
	  "only symbols of these objects (comma-separated\npaths or short names)" },
	{ 'e', "event", required_argument, "<name>", "annotate this event (default: the first)" },
	{ 'k', "vmlinux", required_argument, "<file>",
	  "kernel code and symbols from this vmlinux image\n(else perf's places, then /proc/kcore)" },
	{ OPT_STDIO, "stdio", no_argument, NULL, "text output (the only mode; accepted for perf)" },
	{ OPT_ASM_RAW, "asm-raw", no_argument, NULL, "show the bytes of each instruction" },
	{ OPT_PCT_TYPE, "percent-type", required_argument, "<type>",
	  "local (share of the symbol's period, default)\nor global (share of the event's)" },
	{ OPT_MINPCT, "min-percent", required_argument, "<p>",
	  "skip symbols with less than p% of the period" },
	{ 'n', "show-nr-samples", no_argument, NULL, "sample counts instead of percentages" },
	{ OPT_SOURCE, "source", no_argument, NULL,
	  "show the source lines between the instructions\n(default, when the code has line tables)" },
	{ OPT_NO_SOURCE, "no-source", no_argument, NULL, "do not show source lines" },
	{ 'l', "print-line", no_argument, NULL,
	  "a sorted summary of the source lines of the\ninstructions above 0.5%, and the line of each" },
	{ OPT_COLOR, "stdio-color", required_argument, "<mode>",
	  "always, never or auto (default: colour on a\nterminal or through the pager; color.ui)" },
	{ OPT_JSON, "json", no_argument, NULL, "one JSON object per symbol, a line each" },
	{ 'v', "verbose", no_argument, NULL, "more messages" },
	TOOL_SYMBOL_SOURCE_OPTS,
	{ 0 },
};

const struct tool_help cmd_annotate_help = {
	.synopsis = "usage: perfkit annotate [-i perf.data] [<options>] [SYMBOL]\n",
	.intro = "Print the disassembly of the sampled functions, hottest first, with the share of\n"
		 "the samples that fell on each instruction (x86-64 and AArch64; kernel code\n"
		 "from a vmlinux image of the recorded kernel or /proc/kcore, a module's from\n"
		 "its .ko of the recorded build-id, at its load address), and the source\n"
		 "lines between the instructions where the code has line tables (as perf\n"
		 "annotate shows objdump -S; --no-source leaves them out).\n",
	.opts = opts,
};

struct ann_print {
	FILE *f;
	bool raw, nr, global, json, color, print_line;
	uint64_t sym_period, total_period;
	bool first_insn;
	struct ann_src *src;    /* source lines shown (NULL: --no-source) */
	const struct pk_annotate_sym *sym;
	int addr_width;         /* hex digits of the symbol's last address */
	char prev_path[300];    /* the -l srcline printed last (perf keeps it across symbols) */
	/* -l: the srcline and share of the instructions above 0.5 % (first pass) */
	struct ann_path { char path[300]; double pct; } *paths;
	size_t nr_paths, cap_paths;
	bool collect;
	/* kernel symbols: the file their code is read from, and its address shift */
	const char *kfile;
	uint64_t kbias;
};

#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_MAGENTA "\033[35m"
#define C_BLUE "\033[34m"
#define C_RESET "\033[m"

/* perf's colour of a share: red from 5 %, green above 0.5 % */
static const char *pct_color(const struct ann_print *P, double p)
{
	if (!P->color)
		return "";
	return p >= 5.0 ? C_RED : p > 0.5 ? C_GREEN : "";
}

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

/* -l, first pass: the share of every srcline over the instructions above 0.5 % */
static int collect_path(struct ann_print *P, uint64_t addr, double p)
{
	if (p <= 0.5)
		return 0;
	char path[sizeof(P->paths->path)];
	ann_src_srcline(P->sym->dso, P->sym->dso_name, addr, path, sizeof(path));
	for (size_t i = 0; i < P->nr_paths; i++) {
		if (!strcmp(P->paths[i].path, path)) {
			P->paths[i].pct += p;
			return 0;
		}
	}
	if (P->nr_paths == P->cap_paths) {
		size_t nc = P->cap_paths ? P->cap_paths * 2 : 16;
		void *n = realloc(P->paths, nc * sizeof(*P->paths));
		if (!n)
			return -ENOMEM;
		P->paths = n;
		P->cap_paths = nc;
	}
	snprintf(P->paths[P->nr_paths].path, sizeof(path), "%s", path);
	P->paths[P->nr_paths++].pct = p;
	return 0;
}

/* perf's order: the largest share first, equal shares by srcline from the last */
static int path_cmp(const void *pa, const void *pb)
{
	const struct ann_path *a = pa, *b = pb;
	if (a->pct != b->pct)
		return a->pct < b->pct ? 1 : -1;
	return -strcmp(a->path, b->path);
}

static void print_src_lines(struct ann_print *P, const struct ann_src_line *L, int n)
{
	for (int i = 0; i < n; i++) {
		if (P->json) {
			fputs(i ? "," : ",\"source\":[", P->f);
			if (L[i].kind == ANN_SRC_FUNC) {
				fputs("{\"func\":", P->f);
			} else {
				fputs("{\"file\":", P->f);
				tool_json_str(P->f, L[i].file);
				fprintf(P->f, ",\"line\":%u,\"%s\":", L[i].line,
					L[i].kind == ANN_SRC_TEXT ? "text" : "missing");
			}
			tool_json_str(P->f, L[i].text);
			fputc('}', P->f);
			continue;
		}
		char buf[ANN_SRC_LINE_MAX];
		ann_src_format(buf, sizeof(buf), &L[i], P->addr_width);
		fputs(buf, P->f);
		fputc('\n', P->f);
	}
	if (P->json && n)
		fputc(']', P->f);
}

static int print_insn(void *ctx, const struct pk_annotate_insn *in)
{
	struct ann_print *P = ctx;
	double p = pct(in->period, P->global ? P->total_period : P->sym_period);
	if (P->collect)
		return collect_path(P, in->addr, p);
	struct ann_src_line L[ANN_SRC_MAX];
	int nl = P->src ? ann_src_before(P->src, in->addr, L) : 0;
	if (P->json) {
		fprintf(P->f, "%s{\"addr\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"period\":%" PRIu64
			",\"percent\":%.4f,\"text\":", P->first_insn ? "" : ",", in->addr,
			in->samples, in->period, p);
		char small[400], *text = ann_insn_text(in, false, small, sizeof(small));
		if (!text)
			return -ENOMEM;
		tool_json_str(P->f, text);
		if (text != small)
			free(text);
		if (in->has_target) {
			fprintf(P->f, ",\"target\":%" PRIu64, in->target);
			if (in->target_sym) {
				fputs(",\"target_sym\":", P->f);
				tool_json_str(P->f, in->target_sym);
				fprintf(P->f, ",\"target_off\":%" PRIu64, in->target_off);
			}
		}
		const char *file;
		unsigned int line;
		if ((P->src || P->print_line) &&
		    !pk_dso__srcline(P->sym->dso, in->addr, &file, &line) && file) {
			fputs(",\"src_file\":", P->f);
			tool_json_str(P->f, file);
			fprintf(P->f, ",\"src_line\":%u", line);
		}
		print_src_lines(P, L, nl);
		fputc('}', P->f);
		P->first_insn = false;
		return 0;
	}
	print_src_lines(P, L, nl);
	const char *c = pct_color(P, p);
	fputs(c, P->f);
	if (P->nr)
		fprintf(P->f, "%8" PRIu64, in->samples);
	else
		fprintf(P->f, "%8.2f", p);
	/* perf's column: two spaces, then the address as wide as the symbol's last one */
	fprintf(P->f, "%s :   %s%*" PRIx64 ":%s%s   ", *c ? C_RESET : "",
		P->color ? C_MAGENTA : "", P->addr_width, in->addr, P->color ? C_RESET : "",
		P->color ? C_BLUE : "");
	if (P->raw) {
		for (unsigned i = 0; i < 8; i++) {
			if (i < in->len)
				fprintf(P->f, "%02x ", in->bytes[i]);
			else
				fputs("   ", P->f);
		}
		fputs("  ", P->f);
	}
	char small[400], *text = ann_insn_text(in, true, small, sizeof(small));
	if (!text)
		return -ENOMEM;
	fputs(text, P->f);
	if (text != small)
		free(text);
	if (P->color)
		fputs(C_RESET, P->f);
	if (P->print_line && p > 0.5) {
		/* the srcline, unless the one printed last (perf: also in an earlier symbol) */
		char path[sizeof(P->prev_path)];
		ann_src_srcline(P->sym->dso, P->sym->dso_name, in->addr, path, sizeof(path));
		if (strcmp(path, P->prev_path)) {
			fprintf(P->f, "%s // %s%s", c, path, *c ? C_RESET : "");
			memcpy(P->prev_path, path, sizeof(path));
		}
	}
	fputc('\n', P->f);
	return 0;
}

/* -l: perf's summary of the symbol's source lines, before its disassembly */
static int print_summary(struct pk_annotate *a, size_t i, const struct pk_annotate_sym *s,
			 struct ann_print *P)
{
	P->nr_paths = 0;
	P->collect = true;
	int err = pk_annotate__disasm(a, i, print_insn, P);
	P->collect = false;
	if (err)
		return err;
	if (P->nr_paths)
		qsort(P->paths, P->nr_paths, sizeof(*P->paths), path_cmp);
	if (P->json)
		return 0;
	fprintf(P->f, "\nSorted summary for file %s\n", s->dso_name);
	fputs("----------------------------------------------\n\n", P->f);
	if (!P->nr_paths)
		fputs(" Nothing higher than 0.5%\n", P->f);
	for (size_t k = 0; k < P->nr_paths; k++) {
		const char *c = pct_color(P, P->paths[k].pct);
		fprintf(P->f, "%s %7.2f%s%s %s%s\n", c, P->paths[k].pct, *c ? C_RESET : "", c,
			P->paths[k].path, *c ? C_RESET : "");
	}
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
		hint = s->kernel ? " (the kernel image read holds no code there)"
				 : " (the file read holds no code there, only debug information)";
		break;
	case EOPNOTSUPP:
		hint = " (only x86-64 and AArch64 ELF code is supported)";
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
	/* a kernel symbol shows the addresses of the file read (a vmlinux's: perf's) */
	uint64_t start = s->kernel ? s->start - P->kbias : s->start;
	P->sym = s;
	/* source lines get a number column as wide as the symbol's addresses */
	P->addr_width = ann_src_addr_width(start, s->size);
	if (P->src)
		ann_src_symbol(P->src, s->dso, s->name, s->start);
	if (P->print_line) {
		int err = print_summary(a, i, s, P);
		if (err) {
			disasm_error(s, err);
			return err;
		}
	}
	if (P->json) {
		fputs("{\"symbol\":", P->f);
		tool_json_str(P->f, s->name);
		fputs(",\"dso\":", P->f);
		tool_json_str(P->f, s->dso_name);
		fputs(",\"event\":", P->f);
		tool_json_str(P->f, event);
		fprintf(P->f, ",\"start\":%" PRIu64 ",\"size\":%" PRIu64 ",\"samples\":%" PRIu64
			",\"period\":%" PRIu64 ",\"percent\":%.4f,\"instructions\":[", start,
			s->size, s->samples, s->period, pct(s->period, P->total_period));
	} else {
		const char *file = s->kernel && P->kfile ? P->kfile : s->dso_name;
		const char *base = strrchr(file, '/');
		base = base ? base + 1 : file;
		/* perf's header, and a rule 4 longer (its tab counted as one) */
		int w = fprintf(P->f, " %s |\tSource code & Disassembly of %s for %s (%" PRIu64
				" samples, percent: %s period)\n", P->nr ? "Samples" : "Percent",
				base, event, s->samples, P->global ? "global" : "local");
		for (int k = 0; k < w + 4 && k < 300; k++)
			fputc('-', P->f);
		fputc('\n', P->f);
		fprintf(P->f, "         :\n         : %016" PRIx64 " <%s>:\n", start, s->name);
	}
	int err = pk_annotate__disasm(a, i, print_insn, P);
	if (P->json) {
		fputc(']', P->f);
		for (size_t k = 0; P->print_line && k < P->nr_paths; k++) {
			fputs(k ? ",{\"srcline\":" : ",\"lines\":[{\"srcline\":", P->f);
			tool_json_str(P->f, P->paths[k].path);
			fprintf(P->f, ",\"percent\":%.4f}%s", P->paths[k].pct,
				k + 1 == P->nr_paths ? "]" : "");
		}
		fputs("}\n", P->f);
	}
	if (err)
		disasm_error(s, err);
	return err;
}

int cmd_annotate(int argc, char **argv)
{
	const char *input = "perf.data", *symbol = NULL, *dsos = NULL, *event = NULL;
	const char *vmlinux = NULL;
	char *ksyms = NULL;     /* -k's symbols: a temporary kallsyms file */
	bool vm_said = false;
	double min_pct = 0;
	int verbose = 0, color_mode = 0;
	bool source = true;
	struct ann_print P = { .f = stdout };
	int c;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		char *end;
		switch (c) {
		case 'i': input = optarg; break;
		case 's': symbol = optarg; break;
		case 'e': event = optarg; break;
		case 'k': vmlinux = optarg; break;
		case 'n': P.nr = true; break;
		case 'v': verbose++; break;
		case TOOL_OPT_SYMFS: case TOOL_OPT_NO_DEBUGINFOD: tool_symbol_source_opt(c, optarg); break;
		case OPT_DSOS: dsos = optarg; break;
		case OPT_STDIO: break;
		case OPT_ASM_RAW: P.raw = true; break;
		case OPT_JSON: P.json = true; break;
		case OPT_SOURCE: source = true; break;
		case OPT_NO_SOURCE: source = false; break;
		case 'l': P.print_line = true; break;
		case OPT_COLOR:
			if ((color_mode = tool_color_mode(optarg)) == TOOL_COLOR_BAD) {
				tool_error("invalid --stdio-color '%s' (always, never or auto)", optarg);
				return 129;
			}
			break;
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
	struct pk_machine_opts mo = *tool_machine_opts();
	if (vmlinux) {
		/* the image's symbols, when it is the recorded kernel (as report --vmlinux) */
		int v = tool_ann_vmlinux(vmlinux, r, &ksyms);
		if (v < 0) {
			pk_data_reader__free(r);
			return 1;
		}
		vm_said = v == 1;
		if (ksyms) {
			mo.kallsyms = ksyms;
			mo.host = true;
		}
	}
	/* the objects that cannot hold a symbol above --min-percent are not loaded; the
	 * second thread reads the hot objects' tables ahead whatever the load (it adds
	 * little work: on a busy machine the reading thread reads one itself when the
	 * other has not started it) */
	PK_OPTS(pk_annotate_opts, ao, .reader_thread = tool_threads_allowed(),
		.machine_opts = &mo, .event = event, .min_percent = symbol ? 0 : min_pct,
		.host_known = ksyms != NULL, .vmlinux = vmlinux, .kcore = tool_kcore_path(),
		.preload_lines = source || P.print_line);
	struct pk_annotate *a = pk_annotate__load(r, &ao);
	if (!a) {
		int err = errno;
		if (err == ENOENT)
			tool_error("'%s' has no event%s%s%s", input, event ? " named '" : "",
				   event ? event : "", event ? "'" : " with samples");
		else
			tool_error("cannot load '%s': %s", input, pk_strerror(err));
		pk_data_reader__free(r);
		if (ksyms)
			unlink(ksyms);
		free(ksyms);
		return 1;
	}
	double t1 = clock_ms(CLOCK_MONOTONIC), c1 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	struct pk_annotate_stats st = { .sz = sizeof(st) };
	pk_annotate__stats(a, &st);
	if (st.reader_error)
		tool_warn("'%s' is corrupt after %" PRIu64 " samples: %s (using what was read)",
			  input, st.samples, pk_strerror(st.reader_error));
	P.total_period = st.period;
	P.color = !P.json && tool_use_color(color_mode);
	int status = 0;
	if (source && !(P.src = ann_src_new())) {
		tool_error("out of memory");
		status = 1;
		goto out;
	}
		size_t shown = 0, failed = 0, kernel_skipped = 0;
	struct pk_annotate_kernel K = { .sz = sizeof(K) };
	struct tool_ann_mskip mskip = { .nr = 0 }; /* modules without code: why, below */
	unsigned k_known = 0;
	for (size_t i = 0; i < pk_annotate__nr_symbols(a); i++) {
		struct pk_annotate_sym s = { .sz = sizeof(s) };
		if (pk_annotate__symbol(a, i, &s))
			break;
		if ((symbol && strcmp(symbol, s.name)) || !name_listed(dsos, s.dso_name))
			continue;
		if (!symbol && pct(s.period, st.period) < min_pct)
			continue;
		bool kmain = s.kernel && !strncmp(s.dso_name, "[kernel.kallsyms]", 17);
		int mod = s.kernel && !kmain ? tool_ann_module(a, i, &s, &mskip, &P.kfile, &P.kbias)
					     : 0;
		if (mod < 0 && (status = 1))
			goto out;
		if (mod && ++kernel_skipped)
			continue;
		/* the first kernel symbol shown: where the kernel's code is read */
		if (kmain && !k_known++ && pk_annotate__kernel(a, &K) == -ENOMEM) {
			tool_error("out of memory");
			status = 1;
			goto out;
		}
		if (kmain) {
			P.kfile = K.path;
			P.kbias = K.bias;
		}
		if (kmain && K.source == PK_ANNOTATE_KSRC_NONE) {
			kernel_skipped++; /* why: once, below */
			continue;
		}
		if (shown++ && !P.json)
			fputc('\n', P.f);
		if (annotate_one(a, i, &s, &P, pk_annotate__event(a)))
			failed++;
		if (ferror(stdout))
			break;
	}
	size_t mods_skipped = tool_ann_modules_explain(&mskip);
	if (kernel_skipped > mods_skipped)
		tool_ann_kernel_explain(&K, kernel_skipped - mods_skipped, vm_said);
	if (!shown && kernel_skipped) {
		status = 1;
	} else if (!shown) {
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
	ann_src_free(P.src);
	free(P.paths);
	pk_annotate__free(a);
	pk_data_reader__free(r);
	if (ksyms)
		unlink(ksyms);
	free(ksyms);
	return tool_finish_stdout(status);
}
