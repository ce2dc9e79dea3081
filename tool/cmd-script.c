/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-script.c - `perfkit script`: dump the records of a perf.data file, ours or
 * perf's, file or pipe format, in time order (FINISHED_ROUND rules, lib/report), as text
 * lines like perf script's output (-F fields, symbolised call chains, tracepoint fields
 * decoded with libtraceevent from the recording's TRACING_DATA, or tracefs formats when
 * it has none) or as JSON lines with symbols.
 *
 * Speed: output goes through one large buffer written with write(2) (tool/out.h),
 * numbers are formatted by hand, and the output text of a frame (ip, symbol, dso) is
 * formatted once per distinct (map generation, cpumode, ip) and kept in a cache: a
 * frame's symbol depends only on the maps, and the machine gives each state of an
 * address space its own generation (pk_machine__maps_gen). The cache and its text arena
 * have fixed upper bounds, so memory stays bounded however long the input is.
 */
#include "script.h"

enum { OPT_NO_SYMBOLS = 256, OPT_FILE_ORDER, OPT_TRACEFS, OPT_NO_INLINE, OPT_SHOW_SWITCH,
       OPT_MAX_STACK, OPT_PID, OPT_TID, OPT_COMMS, OPT_TIME, OPT_NS, OPT_RELTIME,
       OPT_DELTATIME, OPT_SHOW_TASK, OPT_SHOW_MMAP, OPT_SHOW_NS, OPT_SHOW_CGROUP,
       OPT_SHOW_LOST, OPT_SHOW_ROUND };

static const struct tool_opt opts[] = {
	{ 'i', "input", required_argument, "<file>",
	  "input file (default perf.data; '-' reads stdin, pipe format)" },
	{ 'j', "json", no_argument, NULL, "one JSON object per line instead of text" },
	{ 'a', "show-all-records", no_argument, NULL,
	  "also the non-sample records (COMM, MMAP2, FORK, LOST, ...)" },
	{ 'G', "hide-call-graph", no_argument, NULL, "do not print call chains" },
	{ 'F', "fields", required_argument, "<list>",
	  "text fields: comm,tid,pid,cpu,time,event,ip,sym,symoff,dso,\n"
	  "srcline,period,addr,trace (perf script's -F); +field,-field\n"
	  "change the default fields instead" },
	{ OPT_NO_SYMBOLS, "no-symbols", no_argument, NULL,
	  "do not resolve symbols (raw addresses, faster)" },
	{ OPT_FILE_ORDER, "file-order", no_argument, NULL,
	  "records in file order instead of time order" },
	{ OPT_NO_INLINE, "no-inline", no_argument, NULL,
	  "no inlined-function lines in DWARF-unwound call chains" },
	{ OPT_MAX_STACK, "max-stack", required_argument, "<n>",
	  "print at most n frames of every call chain (default 127;\n"
	  "DWARF-unwound user frames are counted apart, as perf does)" },
	{ OPT_PID, "pid", required_argument, "<pid,...>", "only the samples of these processes" },
	{ OPT_TID, "tid", required_argument, "<tid,...>", "only the samples of these threads" },
	{ 'C', "cpu", required_argument, "<list>", "only the samples taken on these CPUs (\"0-2,5\")" },
	{ OPT_COMMS, "comms", required_argument, "<comm,...>",
	  "only the samples of threads with these names" },
	{ OPT_TIME, "time", required_argument, "<start,end>",
	  "only the samples in this window (seconds, either end\nopen; or \"A%-B%\" of the recording)" },
	{ OPT_NS, "ns", no_argument, NULL, "times in nanoseconds" },
	{ OPT_RELTIME, "reltime", no_argument, NULL, "times since the first line's" },
	{ OPT_DELTATIME, "deltatime", no_argument, NULL, "times since the line before's" },
	{ OPT_SHOW_SWITCH, "show-switch-events", no_argument, NULL,
	  "also the context switch records (record --switch-events)" },
	{ OPT_SHOW_TASK, "show-task-events", no_argument, NULL,
	  "also the COMM, FORK and EXIT records (perf's lines)" },
	{ OPT_SHOW_MMAP, "show-mmap-events", no_argument, NULL,
	  "also the MMAP and MMAP2 records (perf's lines)" },
	{ OPT_SHOW_NS, "show-namespace-events", no_argument, NULL,
	  "also the NAMESPACES records (record --namespaces)" },
	{ OPT_SHOW_CGROUP, "show-cgroup-events", no_argument, NULL,
	  "also the CGROUP records (record --all-cgroups)" },
	{ OPT_SHOW_LOST, "show-lost-events", no_argument, NULL,
	  "also the LOST records (events the rings had no room for)" },
	{ OPT_SHOW_ROUND, "show-round-events", no_argument, NULL,
	  "also the FINISHED_ROUND records (in file order, as perf)" },
	{ OPT_TRACEFS, "tracefs", required_argument, "<dir>",
	  "tracepoint formats the recording does not carry are read\n"
	  "from <dir>/events (default: the mounted tracefs; 'none':\n"
	  "only the recording's)" },
	TOOL_SYMBOL_SOURCE_OPTS,
	SCRIPT_EXTRA_OPTS,
	{ 0 },
};

const struct tool_help cmd_script_help = {
	.synopsis = "usage: perfkit script [<options>]\n",
	.intro = "Print the samples (and with --show-all-records every record) of a perf.data file.\n",
	.opts = opts,
	.outro = "Text lines follow perf script's default: comm tid [cpu] time: period event: ip, then\n"
		 "one call-chain address per line. JSON samples carry event, ip, pid, tid, cpu, time,\n"
		 ""
		 "period, count (the PERF_SAMPLE_READ value, when recorded), sym, symoff, dso and\n"
		 "callchain ([{\"ip\":...,\"sym\":...,\"dso\":...}]).\n",
};

/* ---- comm table ---- */

static struct comm_slot *comm_find(struct script *s, uint32_t tid, bool create)
{
	if (create && (s->comm_nr + 1) * 2 > s->comm_cap) {
		size_t ncap = s->comm_cap ? s->comm_cap * 2 : 1024;
		struct comm_slot *n = calloc(ncap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; i < s->comm_cap; i++) {
			if (!s->comms[i].used)
				continue;
			size_t j = (s->comms[i].tid * 2654435761u) & (ncap - 1);
			while (n[j].used)
				j = (j + 1) & (ncap - 1);
			n[j] = s->comms[i];
		}
		free(s->comms);
		s->comms = n;
		s->comm_cap = ncap;
	}
	if (!s->comm_cap)
		return NULL;
	size_t j = (tid * 2654435761u) & (s->comm_cap - 1);
	while (s->comms[j].used) {
		if (s->comms[j].tid == tid)
			return &s->comms[j];
		j = (j + 1) & (s->comm_cap - 1);
	}
	if (!create)
		return NULL;
	s->comms[j].used = true;
	s->comms[j].tid = tid;
	s->comms[j].comm[0] = 0;
	s->comm_nr++;
	return &s->comms[j];
}

static void comm_set(struct script *s, uint32_t tid, const char *comm)
{
	struct comm_slot *c = comm_find(s, tid, true);
	if (c) {
		snprintf(c->comm, sizeof(c->comm), "%s", comm);
		c->jlen = 0;
	}
}

/* The comm of a thread as perf names it: its COMM (or its parent's), "swapper" for the
 * idle task (pid 0 never has a COMM record), ":<tid>" for a thread never seen. */
const char *comm_of(struct script *s, uint32_t tid)
{
	struct comm_slot *c = comm_find(s, tid, false);
	if (c && c->comm[0])
		return c->comm;
	if (tid == 0)
		return "swapper";
	snprintf(s->unk_comm, sizeof(s->unk_comm), ":%d", (int32_t)tid);
	return s->unk_comm;
}

/* The comm as JSON: escaped once per comm a thread takes, not once per sample. */
char *put_comm_json(struct script *s, char *p, uint32_t tid)
{
	struct comm_slot *c = comm_find(s, tid, false);
	if (!c || !c->comm[0]) {
		const char *n = comm_of(s, tid);
		return fmt_json_str(p, n, strnlen(n, 15));
	}
	if (!c->jlen)
		c->jlen = (uint8_t)(fmt_json_str(c->jcomm, c->comm, strnlen(c->comm, 15)) - c->jcomm);
	memcpy(p, c->jcomm, c->jlen);
	return p + c->jlen;
}

/* ---- names ---- */

const char *event_name(const struct pk_data_attr *a, char *buf, size_t len)
{
	size_t n;
	const struct pk_event_name *t;

	if (!a)
		return "unknown";
	if (a->name)
		return a->name;
	if (a->attr.attr.type == PERF_TYPE_SOFTWARE || a->attr.attr.type == PERF_TYPE_HARDWARE) {
		t = a->attr.attr.type == PERF_TYPE_SOFTWARE ? pk_sw_event_names(&n) : pk_hw_event_names(&n);
		for (size_t i = 0; i < n; i++)
			if (t[i].config == a->attr.attr.config)
				return t[i].name;
	}
	snprintf(buf, len, "%u:%#" PRIx64, a->attr.attr.type, (uint64_t)a->attr.attr.config);
	return buf;
}

const char *user_record_name(uint32_t type)
{
	static const char *const names[] = {
		"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID",
		"FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR",
		"THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE",
		"TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT",
	};
	if (type >= 64 && type - 64 < sizeof(names) / sizeof(names[0]))
		return names[type - 64];
	return NULL;
}

void json_hex(struct obuf *o, const char *key, uint64_t v, bool comma)
{
	ob_printf(o, "%s\"%s\":\"0x%" PRIx64 "\"", comma ? "," : "", key, v);
}

void json_u64(struct obuf *o, const char *key, uint64_t v)
{
	ob_printf(o, ",\"%s\":%" PRIu64, key, v);
}

/* A record the session could not decode: an unknown type (shown with -a) or a malformed
 * one (a warning, after the lines before it). */
static int on_undecoded(struct script *s, const struct pk_data_event *ev)
{
	const struct perf_event_header *h = ev->hdr;
	struct pk_record r;
	const char *bad = NULL;
	int d = pk_record__decode(ev->attr && ev->attr->layout_ok ? &ev->attr->layout : NULL, h,
				  &r, &bad);
	if (d == PK_RECORD_SKIPPED) {
		if (s->all) {
			if (s->json)
				ob_printf(&s->ob, "{\"type\":\"%u\",\"size\":%u}\n", h->type, h->size);
			else
				ob_printf(&s->ob, "%16s PERF_RECORD_%u size=%u\n", "", h->type, h->size);
		}
	} else if (d < 0) {
		ob_flush(&s->ob);
		tool_warn("record of type %u at offset %#" PRIx64 " is malformed (%s); skipped",
			     h->type, ev->offset, bad ? bad : pk_strerror(d));
	}
	return 0;
}

/* After each record: stop on a failed write or a field the file lacks */
static int record_done(struct script *s)
{
	if (s->line_flush)
		ob_flush(&s->ob);
	if (s->ob.err)
		return -EIO;
	return s->fields_failed ? -EINVAL : 0;
}

static int on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct script *s = ctx;
	if (!r)
		return on_undecoded(s, ev);
	if (!script_sample_wanted(s, &r->sample) || script_type_hidden(s, ev->attr) ||
	    !script_sym_wanted(s, &r->sample))
		return 0;
	if (s->typed_fields)
		script_frame_fields(s, ev->attr);
	s->nr_samples++;
	if (!print_read_sample(s, ev->attr, &r->sample))
		print_sample(s, ev->attr, &r->sample);
	return record_done(s);
}

/* Every other record (the session gave it to the machine already) */
static int on_record(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct script *s = ctx;
	if (ev->hdr->type >= 64) {
		if (s->show_round && !s->json && ev->hdr->type == PK_RECORD_FINISHED_ROUND)
			ob_puts(&s->ob, "PERF_RECORD_FINISHED_ROUND\n");
		else if (s->all || (s->show_round && ev->hdr->type == PK_RECORD_FINISHED_ROUND))
			print_user_record(s, ev);
		return 0;
	}
	if (!r)
		return on_undecoded(s, ev);
	/* the maps may have changed: generations are asked of the machine again */
	if (!++s->rec_epoch) {
		memset(s->ugc, 0, sizeof(s->ugc));
		s->kg_epoch = 0;
		s->rec_epoch = 1;
	}
	if (r->type == PERF_RECORD_COMM) {
		comm_set(s, r->comm.tid, r->comm.comm);
	} else if (r->type == PERF_RECORD_FORK) {
		/* the child has its parent's comm (the idle task's is "swapper"), or none when
		 * the parent's is unknown: a comm the child had before (a COMM from another
		 * CPU's ring, earlier in file order) is forgotten, as perf does */
		struct comm_slot *parent = comm_find(s, r->task.ptid, false), *child;
		if (parent || r->task.ptid == 0) {
			char c[16] = "swapper";
			if (parent)
				memcpy(c, parent->comm, sizeof(c));
			comm_set(s, r->task.tid, c);
		} else if ((child = comm_find(s, r->task.tid, false))) {
			child->comm[0] = 0;
		}
	}
	if ((r->type == PERF_RECORD_SWITCH || r->type == PERF_RECORD_SWITCH_CPU_WIDE) &&
	    (s->show_switch || s->all) && !s->json)
		print_switch(s, ev->attr, r);
	else if (s->all)
		print_record(s, r);
	else if ((s->show_task && (r->type == PERF_RECORD_COMM || r->type == PERF_RECORD_FORK ||
				   r->type == PERF_RECORD_EXIT)) ||
		 (s->show_mmap && (r->type == PERF_RECORD_MMAP || r->type == PERF_RECORD_MMAP2)) ||
		 (s->show_ns && r->type == PERF_RECORD_NAMESPACES) ||
		 (s->show_cgroup && r->type == PERF_RECORD_CGROUP) ||
		 ((s->show_bpf || s->show_poke) && r->type == PERF_RECORD_KSYMBOL) ||
		 (s->show_bpf && r->type == PERF_RECORD_BPF_EVENT) ||
		 (s->show_poke && r->type == PERF_RECORD_TEXT_POKE))
		s->json ? print_record(s, r) : print_side(s, ev->attr, r);
	else if (s->show_lost && r->type == PERF_RECORD_LOST)
		s->json ? print_record(s, r) : print_lost(s, ev->attr, r);
	return record_done(s);
}

/* Every record through the session: in time order (or file order), the machine model
 * kept by it (none with --no-symbols), read on a second thread for a file. */
static int process(struct script *s, struct pk_data_reader *rd)
{
	/* the reader thread only when a CPU is free for it (as report decides): on a
	 * machine whose CPUs are all taken it only adds hand-overs (and spins) */
	PK_OPTS(pk_session_opts, so, .reader_thread = tool_threads_worthwhile(),
		.file_order = s->file_order, .no_machine = s->no_syms,
		.machine_opts = script_machine_opts(s), .host_known = s->kallsyms != NULL);
	struct pk_session *ses = pk_session__new(rd, &so);
	if (!ses)
		return -errno;
	s->m = pk_session__machine(ses);
	PK_OPTS(pk_session_ops, ops, .sample = on_sample, .other = on_record);
	int err = pk_session__process(ses, &ops, s);
	s->m = NULL;
	pk_session__free(ses);
	return err;
}

/* Write what is buffered; a failed write is an error (EPIPE: the reader went away, quietly). */
static int finish_output(struct script *s, int status)
{
	ob_flush(&s->ob);
	if (!s->ob.err || s->ob.err == EPIPE)
		return status;
	tool_error("cannot write output: %s", strerror(s->ob.err));
	return 1;
}

int cmd_script(int argc, char **argv)
{
	struct script s = { .json = false, .max_stack = 127, .rec_epoch = 1 };
	const char *input = "perf.data";
	struct pk_data_reader *rd;
	int c, err, status;

	tool_setup_log(0);
	opterr = 0;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'j': s.json = true; break;
		case 'a': s.all = true; break;
		case 'G': s.hide_cg = true; break;
		case OPT_NO_SYMBOLS: s.no_syms = true; break;
		case OPT_FILE_ORDER: s.file_order = true; break;
		case OPT_TRACEFS: s.tracefs = optarg; break;
		case OPT_NO_INLINE: s.no_inline = true; break;
		case OPT_SHOW_SWITCH: s.show_switch = true; break;
		case TOOL_OPT_SYMFS: case TOOL_OPT_NO_DEBUGINFOD: tool_symbol_source_opt(c, optarg); break;
		case OPT_SHOW_TASK: s.show_task = true; break;
		case OPT_SHOW_MMAP: s.show_mmap = true; break;
		case OPT_SHOW_NS: s.show_ns = true; break;
		case OPT_SHOW_CGROUP: s.show_cgroup = true; break;
		case OPT_SHOW_LOST: s.show_lost = true; break;
		/* perf shows the rounds where they are: records in file order */
		case OPT_SHOW_ROUND: s.show_round = s.file_order = true; break;
		case OPT_PID: case OPT_TID: case 'C': case OPT_COMMS: {
			int e = c == OPT_PID ? tool_parse_ints(optarg, &s.f_pids, &s.f_npids)
				: c == OPT_TID ? tool_parse_ints(optarg, &s.f_tids, &s.f_ntids)
				: c == 'C' ? tool_parse_ints(optarg, &s.f_cpus, &s.f_ncpus)
				: tool_split_list(optarg, &s.f_comms, &s.f_ncomms);
			if (e) {
				tool_error("invalid %s '%s'", argv[optind - 1], optarg);
				script_filters_free(&s);
				return 129;
			}
			break;
		}
		case OPT_TIME: s.time_spec = optarg; break;
		case OPT_NS: s.ns = true; break;
		case OPT_RELTIME: s.time_mode = TM_REL; break;
		case OPT_DELTATIME: s.time_mode = TM_DELTA; break;
		case OPT_MAX_STACK: {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || v > 65536) {
				tool_error("invalid --max-stack '%s': expected a number of frames",
					      optarg);
				return 129;
			}
			s.max_stack = (unsigned int)v;
			break;
		}
		case 'F':
			if (parse_fields(&s, optarg))
				return 129;
			break;
		default:
			if ((err = script_extra_opt(&s, c, optarg)) != 1) {
				if (!err)
					break;
				script_filters_free(&s);
				return err;
			}
			tool_error("unknown or incomplete option '%s'", argv[optind - 1]);
			tool_print_usage(stderr, &cmd_script_help);
			return 129;
		}
	}
	if (optind < argc) {
		tool_error("unexpected argument '%s'", argv[optind]);
		return 129;
	}
	tool_setup_log(s.verbose);
	if (s.quiet)
		pk_set_log(NULL, NULL, PK_LOG_ERROR);
	for (size_t t = 0; t < sizeof(s.ft) / sizeof(s.ft[0]); t++)
		s.typed_fields |= s.ft[t].set;
	/* the frame fields: the same for every event unless -F type:fields (then set per
	 * sample, the frame text cache emptied when they change) */
	s.frame_fields = s.fmode == FM_SET ? s.fields & SF_FRAME_MASK
		: ((SF_FRAME_DEFAULT | s.fields) & ~s.fields_rm) & SF_FRAME_MASK;
	if (ob_init(&s.ob, STDOUT_FILENO) || fc_init(&s)) {
		tool_error("cannot allocate the output buffer: %s", strerror(ENOMEM));
		ob_release(&s.ob);
		free(s.fc);
		return 1;
	}
	s.line_flush = isatty(STDOUT_FILENO);
	PK_OPTS(pk_data_reader_opts, ro);
	/* the file is mapped (PERFKIT_READ=pread reads it through the reused window, as
	 * report does by default): measured on this project's current 2-vCPU VM, touching
	 * a mapped page of a cached file costs 0.15-0.26 us and pread copies the bytes
	 * (10-20 ms for a 60 MB file), and the records of a mapped file are referenced
	 * where the window's are copied once more into the ordering queue: DWARF files
	 * (kilobytes of stack a sample) 23 % less CPU, py.data -35 % wall, the others
	 * 5-14 % less CPU. (The window was chosen in a PVM guest, where a first touch
	 * cost ~1.8 us; see docs/perfkit-report.md.) */
	ro.no_mmap = tool_read_pread();
	rd = tool_open_input(input, &ro);
	if (!rd) {
		ob_release(&s.ob);
		free(s.fc);
		return 1;
	}
	s.rd = rd;
	if (pk_data_reader__truncated(rd) && !s.quiet)
		tool_warn("'%s' was not finalised (recording interrupted?); reading what is there",
			     input);
	if (tool_parse_time_window(s.time_spec, rd, &s.t_start, &s.t_end)) {
		tool_error("invalid --time '%s' (START,END in seconds, or A%%-B%%)", s.time_spec);
		script_filters_free(&s);
		pk_data_reader__free(rd);
		ob_release(&s.ob);
		free(s.fc);
		return 129;
	}
	if (script_print_header(&s, input)) {
		status = finish_output(&s, 0);
		goto out;
	}
	err = s.json ? 0 : attrs_update(&s);
	if (!err)
		err = process(&s, rd);
	if (s.fields_failed) {
		/* -F asks for a field the file lacks: check_fields said so */
		finish_output(&s, 1);
		status = 1;
	} else if (err < 0 && err != -EIO) {
		ob_flush(&s.ob);
		if (err == -PK_ERR_TRUNCATED)
			tool_error("'%s' ended early: %s (see above)", input,
				      pk_strerror(err));
		else
			tool_error("'%s' is corrupt: %s", input, pk_strerror(err));
		finish_output(&s, 1);
		status = 1;
	} else {
		status = finish_output(&s, 0);
	}
out:
	script_trace__free(s.trace);
	script_filters_free(&s);
	pk_data_reader__free(rd);
	free(s.comms);
	free(s.vals);
	free(s.rvals);
	pk_read_delta__free(s.rdelta);
	free(s.fc);
	free(s.arena);
	ob_release(&s.ob);
	return status;
}
