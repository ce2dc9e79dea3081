/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-report.c - `perfkit report`: the perf report --stdio view of a perf.data file
 * (overhead per comm/dso/symbol, children and self, call graphs, header block), or the
 * same numbers as JSON. Aggregation lives in lib/report; this file holds the options
 * and the run (reader, defaults, library call, warnings), the report-*.c files the
 * option values and the output (report.h lists them).
 */
#include "report.h"

enum { O_CHILDREN = 256, O_NO_CHILDREN, O_PCT, O_PID, O_TID, O_COMM, O_TIME, O_HEADER,
       O_HEADER_ONLY, O_STATS, O_TASKS, O_JSON, O_STDIO, O_NO_CG, O_MAX_STACK, O_WEIGHT, O_TOTAL_PERIOD,
       O_NO_INLINE, O_INLINE, O_SHOW_EMPTY, O_GROUP, O_NO_GROUP, O_TUI, O_COLOR,
       O_PERCENTAGE, O_NO_DEMANGLE, O_NS, O_KALLSYMS, O_MMAPS, O_IGN_CALLEES,
       O_HIERARCHY, O_QUANTUM };

static const struct tool_opt opts[] = {
	{ 'i', "input", required_argument, "<file>", "input file (default perf.data; '-' reads stdin)" },
	{ 's', "sort", required_argument, "<keys>",
	  "sort keys: comm,pid,tid,dso,sym,srcline,srcfile,cpu,\n"
	  "socket,parent,time,symoff; overhead,sample,period add\n"
	  "columns\n"
	  "(default comm,dso,sym; pid: per thread, shown as\n"
	  "tid:comm like perf's, tid: the thread id alone)" },
	{ 'F', "fields", required_argument, "<fields>",
	  "output columns: overhead,children,self,samples,period\n"
	  "and sort keys (the keys among them become the sort)" },
	{ O_CHILDREN, "children", no_argument, NULL,
	  "accumulate callees into callers (default with callchains)" },
	{ O_NO_CHILDREN, "no-children", no_argument, NULL, "self overhead only" },
	{ O_HIERARCHY, "hierarchy", no_argument, NULL,
	  "each sort key a level of a tree, indented (perf's;\n"
	  "self overhead only, as perf, and no -F)" },
	{ 'g', "call-graph", optional_argument, "<spec>",
	  "graph|flat|folded|fractal|none[,threshold][,caller|callee]\n"
	  "(default graph,0.5; caller order with --children)" },
	{ 'G', "inverted", no_argument, NULL, "caller-based call graphs" },
	{ O_NO_CG, "no-call-graph", no_argument, NULL, "do not show call graphs (same as -g none)" },
	{ O_PCT, "percent-limit", required_argument, "<p>", "hide entries below p percent" },
	{ 'n', "show-nr-samples", no_argument, NULL, "add a Samples column" },
	{ O_TOTAL_PERIOD, "show-total-period", no_argument, NULL, "add a Period column" },
	{ O_PERCENTAGE, "percentage", required_argument, "<relative|absolute>",
	  "with filters, percentages of the samples kept (relative)\n"
	  "or of all the event's (absolute, the default)" },
	{ 't', "field-separator", required_argument, "<sep>",
	  "separate the columns with sep, numbers unpadded (as perf)" },
	{ O_NO_DEMANGLE, "no-demangle", no_argument, NULL, "C++/Rust symbol names as mangled" },
	{ O_NS, "ns", no_argument, NULL, "the time key's column in nanoseconds" },
	{ O_QUANTUM, "time-quantum", required_argument, "<n[ns|us|ms|s]>",
	  "the time key's slice (default 100ms; unit ms)" },
	{ O_KALLSYMS, "kallsyms", required_argument, "<file>",
	  "kernel symbols from this kallsyms file instead of\n/proc/kallsyms (recordings of this boot)" },
	{ 'k', "vmlinux", required_argument, "<file>",
	  "kernel symbols from this ELF image (when its build-id\nis the recorded kernel's), and on a terminal\nannotate's kernel code" },
	{ 'T', "threads", no_argument, NULL,
	  "after the report, each thread's event counts (READ\nrecords: record -s)" },
	{ O_WEIGHT, "weight", required_argument, "<w>", "overhead by 'period' (default) or by 'samples'" },
	{ O_PID, "pid", required_argument, "<pids>", "only these processes (comma separated)" },
	{ O_TID, "tid", required_argument, "<tids>", "only these threads" },
	{ O_COMM, "comm", required_argument, "<comms>", "only these command names" },
	{ O_COMM, "comms", required_argument, NULL, NULL },
	{ 'c', NULL, required_argument, "<comms>", "the same as --comms (perf's -c)" },
	{ 'd', "dso", required_argument, "<dsos>", "only these DSOs" },
	{ 'd', "dsos", required_argument, NULL, NULL },
	{ 'S', "symbols", required_argument, "<syms>", "only these symbols" },
	{ 'C', "cpu", required_argument, "<cpus>", "only these CPUs (list or ranges: 0,2-3)" },
	{ O_TIME, "time", required_argument, "<start,end>",
	  "only samples in [start,end] (seconds, perf's timestamps),\n"
	  "or a share of the run: 10%-20%" },
	{ O_HEADER, "header", no_argument, NULL, "print the perf.data header block first" },
	{ O_HEADER_ONLY, "header-only", no_argument, NULL, "print only the header block" },
	{ O_STATS, "stats", no_argument, NULL, "print the records per type and the samples per event" },
	{ O_TASKS, "tasks", no_argument, NULL, "print the threads of the file as a tree (pid tid ppid comm)" },
	{ 'p', "parent", required_argument, "<regex>",
	  "add the parent key: the first symbol of each chain that\nmatches regex ([other]: none)" },
	{ 'x', "exclude-other", no_argument, NULL, "with the parent key: hide the [other] samples" },
	{ O_IGN_CALLEES, "ignore-callees", required_argument, "<regex>",
	  "a chain frame whose symbol matches takes the sample;\nthe functions it called are dropped" },
	{ 'M', "disassembler-style", required_argument, "<att|intel>",
	  "the syntax of annotate in the browser (x86; default att)" },
	{ 'D', "dump-raw-trace", no_argument, NULL,
	  "every record in hex and decoded, then --stats (perf's -D)" },
	{ O_MMAPS, "mmaps", no_argument, NULL, "--tasks with the maps of each thread's process" },
	{ 'I', "show-info", no_argument, NULL,
	  "with --header/--header-only: the CPU and NUMA\n"
	  "topology, caches and memory nodes in full" },
	{ O_JSON, "json", no_argument, NULL, "print a JSON document (same numbers, whole trees)" },
	{ O_INLINE, "inline", no_argument, NULL,
	  "expand inlined functions in every call-chain frame\n"
	  "(default: in DWARF-unwound frames only, as perf 6.1)" },
	{ O_NO_INLINE, "no-inline", no_argument, NULL, "do not expand inlined functions in call chains" },
	{ O_SHOW_EMPTY, "show-empty", no_argument, NULL, "also events without samples" },
	{ O_GROUP, "group", no_argument, NULL,
	  "show an event group of the file as one section with\n"
	  "a column per member (default: when the file has groups)" },
	{ O_NO_GROUP, "no-group", no_argument, NULL, "one section per event, groups or not" },
	{ O_MAX_STACK, "max-stack", required_argument, "<n>",
	  "use at most n frames of every call chain (default 127)" },
	{ O_STDIO, "stdio", no_argument, NULL,
	  "text output (perf report --stdio's; the default when\nstdin or stdout is not a terminal)" },
	{ O_TUI, "tui", no_argument, NULL,
	  "browse the report on the terminal (the default on one):\nexpand call graphs, zoom, annotate" },
	{ O_COLOR, "stdio-color", required_argument, "<always|never|auto>",
	  "percentages in colour: always, never, or auto (default:\n"
	  "on a terminal or through the pager; color.ui of the\nconfiguration)" },
	{ O_COLOR, "color", required_argument, NULL, NULL },
	{ 'U', "hide-unresolved", no_argument, NULL,
	  "drop the samples without a symbol (from the totals too)" },
	{ 'q', "quiet", no_argument, NULL, "no warnings" },
	{ 'v', "verbose", no_argument, NULL, "more messages" },
	TOOL_SYMBOL_SOURCE_OPTS,
	{ 0 },
};

const struct tool_help cmd_report_help = {
	.synopsis = "usage: perfkit report [<options>]\n",
	.intro = "Show where the samples of a perf.data file went, like `perf report`: on a\n"
		 "terminal in a browser (keys: h), else as text (--stdio).\n",
	.opts = opts,
};

/* ---- progress and warnings ---- */

struct progress {
	uint64_t size;
	time_t start;
	bool shown;
};

static void progress_cb(uint64_t done, uint64_t records, void *ctx)
{
	struct progress *p = ctx;
	time_t now = time(NULL);
	if (now - p->start < 1)
		return;
	if (p->size)
		fprintf(stderr, "\rperfkit report: processing %3.0f%% (%" PRIu64 " records)",
			100.0 * (double)done / (double)p->size, records);
	else
		fprintf(stderr, "\rperfkit report: processing %" PRIu64 " records", records);
	p->shown = true;
}

struct warn_ctx {
	uint64_t total;
	int shown;
	bool no_kernel; /* kernel symbols declined (--vmlinux of another build), said so */
};

static void warn_unresolved(const char *dso, uint64_t samples, void *ctx)
{
	struct warn_ctx *w = ctx;
	if (!dso || w->shown >= 8 || samples * 100 < w->total)
		return; /* only DSOs with at least 1% of the samples */
	if (dso[0] == '[' && (strcmp(dso, "[kernel.kallsyms]") || w->no_kernel))
		return;
	w->shown++;
	const char *base = strrchr(dso, '/');
	base = base ? base + 1 : dso;
	if (!strncmp(base, "perf-", 5) && strstr(base, ".map"))
		tool_warn("%" PRIu64 " samples in JIT code have no symbol: '%s' names none "
			     "(JIT compilers write it when asked, e.g. node --perf-basic-prof)",
			     samples, dso);
	else if (!strcmp(dso, "[kernel.kallsyms]"))
		tool_warn("%" PRIu64 " samples in the kernel have no symbol: the recording is "
			     "from another kernel, or /proc/kallsyms hides addresses "
			     "(kernel.kptr_restrict)", samples);
	else
		tool_warn("%" PRIu64 " samples in '%s' have no symbol: install its debug info "
			     "(e.g. the -dbg/-dbgsym package, or debuginfod) or rebuild with -g",
			     samples, dso);
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* (volatile: stores to a static nothing reads would otherwise be optimised away, and the
 * memory counted as lost) */
static struct pk_report *volatile exit_keep_rep;
static struct pk_data_reader *volatile exit_keep_rd;

int cmd_report(int argc, char **argv)
{
	struct report R = { .input = "perf.data", .children = -1, .group = -1, .cg = CG_GRAPH,
			    .cg_threshold = 0.5, .out = stdout };
	int c, err = 0, status = 1, ui = -1; /* -1 auto, 0 --stdio, 1 --tui */
	struct pk_data_reader *rd = NULL;
	struct pk_report *rep = NULL;
	char *vmlinux_ksyms = NULL; /* --vmlinux's symbols, a temporary file */

	/* "-g graph,0.5" (perf's habit): join the optional argument */
	char **av = calloc((size_t)argc + 1, sizeof(*av));
	char **joined = calloc((size_t)argc + 1, sizeof(*joined));
	int ac = 0;
	if (!av || !joined) {
		free(av);
		free(joined);
		tool_error("out of memory");
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		if ((!strcmp(argv[i], "-g") || !strcmp(argv[i], "--call-graph")) && i + 1 < argc &&
		    rpt_looks_like_cg_spec(argv[i + 1])) {
			size_t l = strlen(argv[i + 1]) + 16;
			joined[i] = malloc(l);
			if (joined[i]) {
				snprintf(joined[i], l, "--call-graph=%s", argv[i + 1]);
				av[ac++] = joined[i];
				i++;
				continue;
			}
		}
		av[ac++] = argv[i];
	}

	/* a larger stdio buffer than a file's block size: fewer write(2)s for big reports
	 * (glibc ignores the size when it is to allocate the buffer itself) */
	static char outbuf[(size_t)256 << 10];
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	rpt_config_defaults(&R);
	opterr = 0;
	optind = 1;
	while ((c = tool_getopt(ac, av, opts, 0)) != -1) {
		switch (c) {
		case 'i': R.input = optarg; break;
		case 's': err = rpt_parse_sort(&R, optarg); break;
		case 'F': err = rpt_parse_fields(&R, optarg); break;
		case O_CHILDREN: R.children = 1; break;
		case O_NO_CHILDREN: R.children = 0; break;
		case O_HIERARCHY: R.hierarchy = true; break;
		case 'g': err = optarg ? rpt_parse_cg(&R, optarg) : 0; R.cg_given = true; break;
		case 'G': R.order = PK_CG_ORDER_CALLER; break;
		case O_NO_CG: R.cg = CG_NONE; R.cg_given = true; break;
		case O_PCT: R.percent_limit = strtod(optarg, NULL); break;
		case 'n': R.show_nr = true; break;
		case O_TOTAL_PERIOD: R.show_period = true; break;
		case O_NO_DEMANGLE: R.no_demangle = true; break;
		case O_NS: R.ns = true; break; /* perf 6.1: only the time key's column */
		case O_QUANTUM: err = rpt_parse_quantum(&R, optarg); break;
		case O_KALLSYMS: R.kallsyms = optarg; break;
		case 'k': R.vmlinux = optarg; break;
		case 'T': R.threads = true; break;
		case 't': R.field_sep = optarg; break;
		case O_PERCENTAGE: err = rpt_parse_percentage(&R, optarg); break;
		case O_WEIGHT:
			if (!strcmp(optarg, "samples"))
				R.by_samples = true;
			else if (strcmp(optarg, "period"))
				err = -EINVAL;
			break;
		case O_PID: err = tool_parse_ints(optarg, &R.pids, &R.nr_pids); break;
		case O_TID: err = tool_parse_ints(optarg, &R.tids, &R.nr_tids); break;
		case 'C': err = tool_parse_ints(optarg, &R.cpus, &R.nr_cpus); break;
		case O_COMM:
		case 'c': err = tool_split_list(optarg, &R.comms, &R.nr_comms); break;
		case 'd': err = tool_split_list(optarg, &R.dsos, &R.nr_dsos); break;
		case 'S': err = tool_split_list(optarg, &R.syms, &R.nr_syms); break;
		case O_TIME: R.time_spec = optarg; break;
		case O_HEADER: R.header = true; break;
		case O_HEADER_ONLY: R.header_only = true; break;
		case O_STATS: R.stats = true; break;
		case O_TASKS: R.tasks = true; break;
		case O_MMAPS: R.tasks = R.mmaps = true; break;
		case 'D': R.stats = R.dump_raw = true; break;
		case 'p': R.parent_re = optarg; break;
		case 'x': R.exclude_other = true; break;
		case O_IGN_CALLEES: R.ignore_callees = optarg; break;
		case 'M':
			if (strcmp(optarg, "att") && strcmp(optarg, "intel")) {
				tool_error("-M '%s': not a disassembler style: att (the default) or intel",
					   optarg);
				status = 129;
				goto out;
			}
			R.intel_syntax = !strcmp(optarg, "intel");
			break;
		case 'I': R.show_info = true; break;
		case O_JSON: R.json = true; break;
		case O_STDIO: ui = 0; break;
		case O_TUI: ui = 1; break;
		case O_COLOR:
			if ((R.color_mode = tool_color_mode(optarg)) == TOOL_COLOR_BAD) {
				tool_error("invalid --stdio-color '%s' (always, never or auto)", optarg);
				status = 129;
				goto out;
			}
			break;
		case O_MAX_STACK: R.max_stack = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'q': R.quiet = true; break;
		case 'U': R.hide_unresolved = true; break;
		case O_NO_INLINE: R.no_inline = true; R.all_inline = false; break;
		case O_INLINE: R.all_inline = true; R.no_inline = false; break;
		case O_SHOW_EMPTY: R.show_empty = true; break;
		case O_GROUP: R.group = 1; break;
		case O_NO_GROUP: R.group = 0; break;
		case 'v': R.verbose++; break;
		case TOOL_OPT_SYMFS: case TOOL_OPT_NO_DEBUGINFOD: tool_symbol_source_opt(c, optarg); break;
		default:
			tool_error("unknown or incomplete option '%s'", av[optind - 1]);
			tool_print_usage(stderr, &cmd_report_help);
			status = 129;
			goto out;
		}
		if (err) {
			if (err == -EINVAL)
				tool_error("bad value for option '%s'", av[optind - 1]);
			status = 129;
			goto out;
		}
	}
	if (optind < ac) {
		tool_error("unexpected argument '%s'", av[optind]);
		status = 129;
		goto out;
	}
	bool term = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (ui == 1 && !term) {
		tool_error("--tui needs a terminal (stdin and stdout): use --stdio in a pipe");
		status = 1;
		goto out;
	}
	bool browse = (ui == 1 || (ui < 0 && term)) && !R.json && !R.header && !R.header_only &&
		      !R.stats && !R.tasks;
	tool_setup_log(R.verbose);
	if (R.quiet)
		pk_set_log(NULL, NULL, PK_LOG_ERROR);
	R.color = !R.json && !R.field_sep && tool_use_color(R.color_mode);

	PK_OPTS(pk_data_reader_opts, ro);
	/* mapped, as script reads it (PERFKIT_READ=pread: the reused window): 3-18 % less CPU
	 * on the bench files on this project's current VM (see docs/perfkit-report.md) */
	ro.no_mmap = tool_read_pread();
	rd = tool_open_input(R.input, &ro);
	if (!rd)
		goto out;
	if (pk_data_reader__truncated(rd) && !R.quiet)
		tool_warn("'%s' was not finalised (recording interrupted?); reading what is there",
			     R.input);
	/* perf -q prints no header block: -q --header is the report alone, and so is
	 * -q --header-only (perf 6.1 then goes on to the report) */
	if (R.quiet)
		R.header = R.header_only = false;
	if (R.header || R.header_only)
		rpt_print_header(&R, rd);
	if (R.header_only || R.stats || R.tasks) {
		err = R.stats ? rpt_print_stats(&R, rd) : R.tasks ? rpt_print_tasks(&R, rd) : 0;
		status = tool_finish_stdout(err < 0 ? 1 : 0);
		goto out;
	}

	/* callchains present? (decides the children default, like perf: -g none only hides
	 * the graphs, the Children column stays) */
	bool any_cc = false;
	for (size_t i = 0; i < pk_data_reader__nr_attrs(rd); i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(rd, i);
		if (a && (a->attr.attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)))
			any_cc = true;
	}
	if (R.children < 0)
		R.children = any_cc ? 1 : 0;
	if (R.hierarchy) {
		/* perf turns children off for --hierarchy after it chose the call-graph
		 * order by them: caller order where children were on, unless -g says */
		if (R.fields_given) {
			tool_error("--hierarchy and --fields cannot be used together");
			status = 129;
			goto out;
		}
		if (R.children == 1 && R.order == PK_CG_ORDER_DEFAULT)
			R.order = PK_CG_ORDER_CALLER;
		R.children = 0;
	}
	if (R.no_keys)
		R.cg = CG_NONE; /* (one entry made by the tool: no tree of its own) */
	if (!R.nr_sort && !R.no_keys) {
		R.sort[0] = PK_SORT_COMM;
		R.sort[1] = PK_SORT_DSO;
		R.sort[2] = PK_SORT_SYM;
		for (size_t k = 0; k < 3; k++)
			R.sort_col[k] = rpt_key_col(R.sort[k]);
		R.nr_sort = 3;
	}
	rpt_add_parent_key(&R);
	R.sym_first = R.sort[0] == PK_SORT_SYM;
	if (!R.fields_given) {
		R.nr_cols = 0;
		if (R.children == 1) {
			R.cols[R.nr_cols++] = COL_CHILDREN;
			R.cols[R.nr_cols++] = COL_SELF;
		} else {
			R.cols[R.nr_cols++] = COL_OVERHEAD;
		}
		if (R.show_nr)
			R.cols[R.nr_cols++] = COL_SAMPLES;
		if (R.show_period)
			R.cols[R.nr_cols++] = COL_PERIOD;
		rpt_add_key_cols(&R);
	} else if (!R.nr_sort) {
		R.sort[R.nr_sort++] = PK_SORT_SYM;
	}

	if (R.vmlinux) {
		int v = rpt_vmlinux_kallsyms(R.vmlinux, rd, &vmlinux_ksyms);
		if (v < 0)
			goto out;
		R.kallsyms = v ? "" : vmlinux_ksyms; /* "": none, already said why */
	}
	uint64_t t0, t1;
	if (tool_parse_time_window(R.time_spec, rd, &t0, &t1)) {
		tool_error("bad --time '%s' (START,END in seconds, or A%%-B%%)", R.time_spec);
		status = 129;
		goto out;
	}
	/* -k's symbols are the recorded kernel's wherever it ran (as perf's, and annotate -k) */
	bool vm_syms = R.vmlinux && R.kallsyms && *R.kallsyms;
	bool threads = tool_threads_worthwhile();
	/* the symbol tables' thread even when the load says one thread: it adds no work (one
	 * hand-over an object; sys.data single-threaded 633 -> 608 ms wall, the same CPU).
	 * Not when samples are dropped before they are resolved: most objects would be read
	 * for nothing (sys.data --comms bash: 45 -> 68 ms wall, CPU 74 -> 116 ms). */
	bool preload = tool_threads_allowed() && !R.nr_pids && !R.nr_tids && !R.nr_cpus &&
		       !R.nr_comms && !R.time_spec;
	PK_OPTS(pk_report_opts, o, .sort = R.sort, .nr_sort = R.nr_sort,
		.children = R.children == 1, .callgraph = any_cc && R.cg != CG_NONE,
		.order = R.order, .max_stack = R.max_stack, .host = vm_syms || pk_data_env__same_host(pk_data_reader__env(rd)),
		.inlines = !R.no_inline,
		.inlines_all = R.all_inline,
		.no_reader_thread = !threads,
		.pids = R.pids, .nr_pids = R.nr_pids, .tids = R.tids, .nr_tids = R.nr_tids,
		.cpus = R.cpus, .nr_cpus = R.nr_cpus,
		.comms = (const char *const *)R.comms, .nr_comms = R.nr_comms,
		.dsos = (const char *const *)R.dsos, .nr_dsos = R.nr_dsos,
		.symbols = (const char *const *)R.syms, .nr_symbols = R.nr_syms,
		.time_start = t0, .time_end = t1, .lazy_callchains = true,
		.kallsyms = R.kallsyms, .hide_unresolved = R.hide_unresolved, .parent_regex = R.parent_re,
		.exclude_other = R.exclude_other && R.parent_on, .ignore_callees = R.ignore_callees,
		.time_quantum = R.time_quantum,
		.machine_opts = rpt_machine_opts(&R, preload));
	if (R.order == PK_CG_ORDER_DEFAULT)
		R.order = R.children == 1 ? PK_CG_ORDER_CALLER : PK_CG_ORDER_CALLEE;
	o.order = R.order;
	rep = pk_report__new(&o);
	if (!rep) {
		tool_error("cannot set up the report: %s", pk_strerror(errno));
		goto out;
	}
	R.rep = rep;
	struct progress prog = { .start = time(NULL) };
	struct stat st;
	bool tty = isatty(2) && !R.quiet;
	if (tty && strcmp(R.input, "-") && stat(R.input, &st) == 0)
		prog.size = (uint64_t)st.st_size;
	err = pk_report__process(rep, rd, tty ? progress_cb : NULL, &prog);
	if (prog.shown)
		fprintf(stderr, "\r%60s\r", "");
	if (err < 0) {
		tool_error("'%s' %s: %s (showing what was read before)", R.input,
			      err == -PK_ERR_TRUNCATED ? "ended early" : "is corrupt",
			      pk_strerror(err));
		pk_report__finish(rep);
	}

	if (!R.quiet) {
		uint64_t total = 0;
		for (size_t i = 0; i < pk_report__nr_hists(rep); i++) {
			const struct pk_hist *h = pk_report__hist(rep, i);
			if (h)
				total += h->nr_samples;
		}
		struct warn_ctx w = { .total = total, .no_kernel = R.kallsyms && !R.kallsyms[0] };
		pk_report__for_each_unresolved_dso(rep, warn_unresolved, &w);
	}

	if (browse) {
		status = rpt_tui_run(&R, rep);
		goto keep;
	}
	if (R.json) {
		fprintf(R.out, "{\"input\":");
		tool_json_str(R.out, R.input);
		fprintf(R.out, ",\"events\":[");
		bool first = true;
		for (size_t i = 0; i < pk_report__nr_hists(rep); i++) {
			const struct pk_hist *h = pk_report__hist(rep, i);
			if (!h || (!h->nr_samples && !R.show_empty))
				continue;
			if (!first)
				fputc(',', R.out);
			rpt_json_hist(&R, h);
			first = false;
		}
		fprintf(R.out, "]}\n");
	} else {
		uint64_t lost = 0;
		for (size_t i = 0; i < pk_report__nr_hists(rep); i++) {
			const struct pk_hist *h = pk_report__hist(rep, i);
			if (h)
				lost += h->nr_lost;
		}
		if (!R.header && !R.quiet)
			fprintf(R.out, "# To display the perf.data header info, please use "
				"--header/--header-only options.\n#\n");
		if (!R.quiet)
			fprintf(R.out, "#\n# Total Lost Samples: %" PRIu64 "\n#\n", lost);
		if (rpt_print_sections(&R, rd, rep) < 0) {
			tool_error("out of memory");
			err = -ENOMEM;
		}
		if (R.threads && rpt_print_threads(&R) < 0)
			err = -EIO;
	}
	status = tool_finish_stdout(err < 0 ? 1 : 0);
keep:
	/* The process ends now: its memory goes back with it faster than freeing it piece
	 * by piece (unmapping populated arrays was ~2 ms of a 0.1 s report in a PVM guest).
	 * Kept reachable, so that leak checkers do not count it. */
	exit_keep_rep = rep;
	exit_keep_rd = rd;
	rep = NULL;
	rd = NULL;
out:
	if (vmlinux_ksyms)
		unlink(vmlinux_ksyms);
	free(vmlinux_ksyms);
	pk_report__free(rep);
	pk_data_reader__free(rd);
	for (int i = 0; i < argc; i++)
		free(joined[i]);
	free(joined);
	free(av);
	free(R.pids);
	free(R.tids);
	free(R.cpus);
	free_strs(R.comms, R.nr_comms);
	free_strs(R.dsos, R.nr_dsos);
	free_strs(R.syms, R.nr_syms);
	free(R.lb);
	return status;
}
