/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-script.c - `perfkit script`: dump the records of a perf.data file, ours or
 * perf's, file or pipe format, in time order (FINISHED_ROUND rules, lib/report), as text
 * lines like perf script's output (-F fields, symbolised call chains, tracepoint fields
 * decoded with libtraceevent from the recording's TRACING_DATA, or tracefs formats when
 * it has none) or as JSON lines with symbols.
 *
 * Speed: output goes through one large buffer written with write(2) (tool/script-out.h),
 * numbers are formatted by hand, and the output text of a frame (ip, symbol, dso) is
 * formatted once per distinct (pid, tid, cpumode, ip) and kept in a cache whose entries of
 * a process go stale whenever a record changes its maps (MMAP, MMAP2, COMM, FORK, EXIT;
 * all entries when the kernel's maps change): a frame's symbol only depends on the maps
 * at that moment. The cache and its text arena have
 * fixed upper bounds, so memory stays bounded however long the input is.
 */
#include "script.h"

enum { OPT_NO_SYMBOLS = 256, OPT_FILE_ORDER, OPT_TRACEFS, OPT_NO_INLINE, OPT_SHOW_SWITCH };

static const struct pk_tool_opt opts[] = {
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
	{ OPT_SHOW_SWITCH, "show-switch-events", no_argument, NULL,
	  "also the context switch records (record --switch-events)" },
	{ OPT_TRACEFS, "tracefs", required_argument, "<dir>",
	  "tracepoint formats the recording does not carry are read\n"
	  "from <dir>/events (default: the mounted tracefs; 'none':\n"
	  "only the recording's)" },
	{ 0 },
};

const struct pk_tool_help cmd_script_help = {
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
	if (c)
		snprintf(c->comm, sizeof(c->comm), "%s", comm);
}

/* The comm of a thread as perf names it: its COMM (or its parent's), "swapper" for the
 * idle task (pid 0 never has a COMM record), ":<tid>" for a thread never seen. */
static const char *comm_of(struct script *s, uint32_t tid)
{
	struct comm_slot *c = comm_find(s, tid, false);
	if (c && c->comm[0])
		return c->comm;
	if (tid == 0)
		return "swapper";
	snprintf(s->unk_comm, sizeof(s->unk_comm), ":%d", (int32_t)tid);
	return s->unk_comm;
}

/* ---- names ---- */

static const char *event_name(const struct pk_data_attr *a, char *buf, size_t len)
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

/* ---- tracepoint fields ---- */

/* Tracepoint fields of a RAW sample as perf script prints them ("prev_comm=... ==> ..."). */
static const char *trace_text(struct script *s, const struct pk_data_attr *a,
			      const struct pk_sample *smp)
{
	size_t len;
	if (!a || !(smp->type & PERF_SAMPLE_RAW) || a->attr.attr.type != PERF_TYPE_TRACEPOINT || !smp->raw.size)
		return NULL;
	if (!s->trace && !(s->trace = script_trace__new(s->tracefs)))
		return NULL;
	const void *blob = pk_data_reader__tracing_data(s->rd, &len);
	return script_trace__text(s->trace, blob, len, a, smp);
}

/* ---- samples ---- */

static bool sample_count(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp,
			 uint64_t *count)
{
	int n;
	if (!(smp->type & PERF_SAMPLE_READ))
		return false;
	n = pk_sample__read_values(&a->layout, smp, s->vals, s->nvals);
	if (n <= 0)
		return false;
	if ((size_t)n > s->nvals) {
		struct pk_count_value *nv = realloc(s->vals, sizeof(*nv) * (size_t)n);
		if (!nv)
			return false;
		s->vals = nv;
		s->nvals = (size_t)n;
		n = pk_sample__read_values(&a->layout, smp, s->vals, s->nvals);
		if (n <= 0)
			return false;
	}
	*count = s->vals[0].val;
	/* in a group read, this event's own value is the one with the sample's id */
	for (int i = 0; i < n; i++)
		if (smp->id && s->vals[i].id == smp->id) {
			*count = s->vals[i].val;
			break;
		}
	return true;
}

/* "secs.usecs: " as perf prints times (printf("%12s: ") of "%lu.%06lu"): at most 30 bytes */
static inline char *fmt_time(char *p, uint64_t t)
{
	p = fmt_u64_pad(p, t / (uint64_t)1000000000, 5, ' ');
	*p++ = '.';
	p = fmt_u64_pad(p, (t % (uint64_t)1000000000) / 1000, 6, '0');
	*p++ = ':';
	*p++ = ' ';
	return p;
}

/* the frames of a sample, one per line, each after `pre` */
static void put_frames(struct script *s, const struct pk_sample *smp, int n, char pre)
{
	for (int i = 0; i < n; i++) {
		if (!s->json && (s->chain[i].flags & PK_CHAIN_UNWOUND) && s->m && pre == '\t') {
			put_frag(s, smp, s->chain[i].ip, PK_CPUMODE_USER, FR_UNW);
			continue;
		}
		ob_putc(&s->ob, pre);
		put_frag(s, smp, s->chain[i].ip, s->chain[i].cpumode,
			 !s->json && pre == '\t' ? FR_CHAIN : FR_FRAME);
		ob_putc(&s->ob, '\n');
	}
}

/*
 * The fields printed for a sample of event a, as perf script chooses them: the -F list;
 * or the defaults of the event's type (tracepoints: comm, tid, cpu, time, event and
 * fields, plus the frames when the event records call chains and they are shown;
 * others: comm, tid, cpu, time, event, ip, sym+off, dso, period) with the +/- changes
 * of -F, less the fields the sample type lacks that -F did not ask for (those -F asks
 * for were checked by check_fields). *user gets the fields -F asked for.
 */
unsigned int sample_fields(const struct script *s, const struct pk_data_attr *a,
				  uint64_t st, unsigned int *user)
{
	unsigned int F, drop = 0;
	if (s->fmode == FM_SET) {
		*user = s->fields;
		/* tracepoint fields only for tracepoints (perf ignores 'trace' for the rest) */
		if (!a || a->attr.attr.type != PERF_TYPE_TRACEPOINT)
			return s->fields & ~SF_TRACE;
		return s->fields;
	}
	if (a && a->attr.attr.type == PERF_TYPE_TRACEPOINT) {
		F = SF_DEFAULT_TP;
		/* (perf adds them only when -F did not touch the fields at all) */
		if ((a->attr.attr.sample_type & PERF_SAMPLE_CALLCHAIN) && !s->hide_cg &&
		    s->fmode == FM_DEFAULT)
			F |= SF_FRAME_DEFAULT;
	} else {
		F = SF_DEFAULT;
	}
	*user = s->fmode == FM_CHANGE ? s->fields : 0;
	F = (F | *user) & ~s->fields_rm;
	if (!(st & PERF_SAMPLE_TID))
		drop |= SF_COMM | SF_TID | SF_PID;
	if (!(st & PERF_SAMPLE_CPU))
		drop |= SF_CPU;
	if (!(st & PERF_SAMPLE_TIME))
		drop |= SF_TIME;
	if (!(st & PERF_SAMPLE_IP))
		drop |= SF_IP;
	if (!(st & PERF_SAMPLE_ADDR))
		drop |= SF_ADDR;
	return F & ~(drop & ~*user);
}

/* the sample type bit a field needs, its name, and how a recording gets it */
static uint64_t field_needs(unsigned int f, const char **what, const char **how)
{
	*how = "it was not recorded";
	switch (f) {
	case SF_COMM: case SF_TID: case SF_PID: *what = "TID"; return PERF_SAMPLE_TID;
	case SF_CPU:
		*what = "CPU";
		*how = "record with --sample-cpu or -a to have it";
		return PERF_SAMPLE_CPU;
	case SF_TIME: *what = "TIME"; return PERF_SAMPLE_TIME;
	case SF_IP: *what = "IP"; return PERF_SAMPLE_IP;
	case SF_ADDR:
		*what = "ADDR";
		*how = "record with -d to have it";
		return PERF_SAMPLE_ADDR;
	default: return 0;
	}
}

static const char *field_name(unsigned int f);

/*
 * A field -F asks for that the samples of event a cannot have (no PERF_SAMPLE_CPU for
 * cpu, ...) is an error, as in perf script, rather than a column of zeros. Returns 0 or
 * -EINVAL after printing the error.
 */
static int check_fields(struct script *s, const struct pk_data_attr *a)
{
	unsigned int user = s->fmode == FM_SET ? s->fields : s->fmode == FM_CHANGE ? s->fields : 0;
	uint64_t st = a->attr.attr.sample_type;
	char nbuf[64];
	unsigned int u2, F = sample_fields(s, a, st, &u2);
	if ((F & SF_SYMOFF) && !(F & SF_SYM)) {
		pk_tool_error("cannot print field 'symoff' without 'sym': add sym, or leave "
			      "symoff out (-F -sym,-symoff)");
		return -EINVAL;
	}
	for (unsigned int f = 1; f && f <= user; f <<= 1) {
		const char *what = NULL, *how = NULL;
		uint64_t need = (user & f) ? field_needs(f, &what, &how) : 0;
		if (need && !(st & need)) {
			pk_tool_error("cannot print field '%s': the samples of event '%s' have no "
				      "PERF_SAMPLE_%s (%s, or leave the field out)",
				      field_name(f), event_name(a, nbuf, sizeof(nbuf)), what, how);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * When the file's attrs are first known or grow (a pipe's arrive in its stream): the
 * width perf pads event names to (the longest name), and the check of -F against the
 * new attrs. Returns 0 or -EINVAL (error printed).
 */
static int attrs_update(struct script *s)
{
	size_t n = pk_data_reader__nr_attrs(s->rd);
	if (n == s->name_width_attrs)
		return 0;
	char nbuf[64];
	for (size_t i = 0; i < n; i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(s->rd, i);
		int l = (int)strlen(event_name(a, nbuf, sizeof(nbuf)));
		if (l > s->name_width)
			s->name_width = l;
		if (i >= s->name_width_attrs && a && check_fields(s, a)) {
			s->fields_failed = true;
			return -EINVAL;
		}
	}
	s->name_width_attrs = n;
	return 0;
}

/* does the address of a sample of this event name data (perf: page faults) */
static bool addr_has_sym(const struct pk_data_attr *a)
{
	return a && a->attr.attr.type == PERF_TYPE_SOFTWARE &&
	       (a->attr.attr.config == PERF_COUNT_SW_PAGE_FAULTS ||
		a->attr.attr.config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
		a->attr.attr.config == PERF_COUNT_SW_PAGE_FAULTS_MAJ);
}

/*
 * The start of a text line, as perf script prints it for samples and (with
 * --show-switch-events) switch records: "comm tid [cpu] time: ", each field followed by
 * a space. The comm is padded to 16 columns, except on lines followed by a call chain.
 * At most 80 bytes.
 */
char *put_start(struct script *s, char *p, unsigned int F, bool chain, uint32_t pid,
		       uint32_t tid, uint32_t cpu, uint64_t time)
{
	if (F & SF_COMM) {
		const char *c = comm_of(s, tid);
		size_t n = strnlen(c, 16);
		p = fmt_str_pad(p, c, n, chain ? 0 : 16);
		*p++ = ' ';
	}
	if ((F & SF_PID) && (F & SF_TID)) {
		p = fmt_pid_pad(p, pid, 5);
		*p++ = '/';
		char *q = p;
		p = fmt_pid_pad(p, tid, 0);
		while (p - q < 5)
			*p++ = ' ';
		*p++ = ' ';
	} else if (F & (SF_PID | SF_TID)) {
		p = fmt_pid_pad(p, F & SF_PID ? pid : tid, 5);
		*p++ = ' ';
	}
	if (F & SF_CPU) {
		*p++ = '[';
		p = fmt_u64_pad(p, cpu, 3, '0');
		p = PUT(p, "] ");
	}
	if (F & SF_TIME)
		p = fmt_time(p, time);
	return p;
}

/* " sym+off (dso)" of a data address, as the fields ask (perf: only for page faults):
 * among the process's maps, data mappings (record -d) included, then the kernel's */
static void put_addr_sym(struct script *s, const struct pk_sample *smp, unsigned int F)
{
	struct symres r = { .dso = "[unknown]" };
	pk_machine__resolve_data(s->m, smp->pid, smp->tid, smp->addr, PK_CPUMODE_UNKNOWN, &r.loc);
	r.sym = r.loc.sym;
	r.off = r.loc.sym_off;
	if (r.loc.dso_name)
		r.dso = r.loc.dso_name;
	if (F & SF_SYM) {
		ob_putc(&s->ob, ' ');
		ob_puts(&s->ob, r.sym ? r.sym : "[unknown]");
		if ((F & SF_SYMOFF) && r.sym)
			ob_printf(&s->ob, "+0x%" PRIx64, r.off);
	}
	if (F & SF_DSO) {
		ob_puts(&s->ob, " (");
		ob_puts(&s->ob, r.dso);
		ob_putc(&s->ob, ')');
	}
}

/*
 * A sample as a text line, field by field as perf script 6.1 prints them (each field
 * followed by a space: "comm tid [cpu] time: period event: "), then the tracepoint
 * fields, the data address, and the sample's address (" ip sym+off (dso)") or, when
 * call chains are shown, a newline and one frame per line.
 */
static void print_fields(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp,
			 const char *name, bool has_count, uint64_t count)
{
	struct obuf *o = &s->ob;
	unsigned int user, F = sample_fields(s, a, smp->type, &user);
	if (attrs_update(s))
		return;
	if (!F)
		return; /* nothing to print for this event (perf prints no line either) */
	bool chain = (F & SF_IP) && (smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) &&
		     !s->hide_cg;
	char *p = ob_room(o, 128);
	p = put_start(s, p, F, chain, smp->pid, smp->tid, smp->cpu, smp->time);
	if (F & SF_PERIOD) {
		/* without PERF_SAMPLE_PERIOD (-c N) every sample stands for the fixed period */
		uint64_t period = (smp->type & PERF_SAMPLE_PERIOD) || !a ? smp->period
			: a->attr.attr.freq ? 0 : a->attr.attr.sample_period;
		p = fmt_u64_pad(p, period, 10, ' ');
		*p++ = ' ';
	}
	o->len = (size_t)(p - o->buf);
	if (F & SF_EVENT) {
		int w = s->name_width;
		size_t n = strlen(name);
		for (size_t k = n; k < (size_t)w; k++)
			ob_putc(o, ' ');
		ob_put(o, name, n);
		ob_put(o, ": ", 2);
		if (has_count && !s->read_line && s->fmode == FM_DEFAULT) {
			p = ob_room(o, 32);
			p = PUT(p, "count ");
			p = fmt_u64(p, count);
			p = PUT(p, ": ");
			o->len = (size_t)(p - o->buf);
		}
	}
	if (F & SF_TRACE) {
		const char *tr = trace_text(s, a, smp);
		if (tr)
			ob_puts(o, tr);
	}
	if (F & SF_ADDR) {
		p = ob_room(o, 16);
		o->len = (size_t)(fmt_hex16(p, smp->addr) - o->buf);
		if (s->m && addr_has_sym(a))
			put_addr_sym(s, smp, F);
	}
	if (!(F & SF_IP)) {
		ob_putc(o, '\n');
		return;
	}
	if (chain) {
		ob_putc(o, '\n');
		put_frames(s, smp, sample_chain(s, smp), '\t');
		ob_putc(o, '\n');
		return;
	}
	ob_putc(o, ' ');
	put_frag(s, smp, smp->ip, smp->cpumode, FR_FRAME);
	ob_putc(o, '\n');
}

static const struct { const char *n; unsigned int f; } field_tab[] = {
	{ "comm", SF_COMM }, { "tid", SF_TID }, { "pid", SF_PID }, { "cpu", SF_CPU },
	{ "time", SF_TIME }, { "event", SF_EVENT }, { "ip", SF_IP }, { "sym", SF_SYM },
	{ "symoff", SF_SYMOFF | SF_SYM }, { "dso", SF_DSO }, { "srcline", SF_SRCLINE },
	{ "period", SF_PERIOD }, { "addr", SF_ADDR }, { "trace", SF_TRACE },
};

static const char *field_name(unsigned int f)
{
	for (size_t i = 0; i < sizeof(field_tab) / sizeof(field_tab[0]); i++)
		if (field_tab[i].f == f)
			return field_tab[i].n;
	return "?";
}

/*
 * -F: a list of fields ("comm,tid,ip"), or of changes to the default fields
 * ("+addr,-period"); as in perf script, the two forms do not mix.
 */
static int parse_fields(struct script *s, const char *spec)
{
	char *dup = strdup(spec), *save = NULL;
	if (!dup)
		return -ENOMEM;
	int mode = FM_DEFAULT;
	unsigned int set = 0, rm = 0;
	for (char *w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int m = FM_SET;
		char sign = *w;
		if (sign == '+' || sign == '-') {
			m = FM_CHANGE;
			w++;
		}
		if (mode != FM_DEFAULT && m != mode) {
			pk_tool_error("cannot mix fields and +/- changes in '%s': give either the "
				      "list of fields or only changes to the defaults", spec);
			free(dup);
			return -EINVAL;
		}
		mode = m;
		size_t i;
		for (i = 0; i < sizeof(field_tab) / sizeof(field_tab[0]); i++)
			if (!strcmp(w, field_tab[i].n))
				break;
		if (i == sizeof(field_tab) / sizeof(field_tab[0])) {
			pk_tool_error("unknown field '%s'", w);
			free(dup);
			return -EINVAL;
		}
		if (sign == '-')
			rm |= field_tab[i].f == (SF_SYMOFF | SF_SYM) ? SF_SYMOFF : field_tab[i].f;
		else
			set |= field_tab[i].f;
	}
	free(dup);
	s->fmode = mode;
	s->fields = set & ~rm;
	s->fields_rm = rm;
	return 0;
}

static void print_sample_json(struct script *s, const struct pk_sample *smp, const char *name,
			      bool has_count, uint64_t count, const char *tr)
{
	struct obuf *o = &s->ob;
	ob_puts(o, "{\"type\":\"SAMPLE\",\"event\":");
	ob_json_str(o, name);
	/* at most 9 fields of <= 40 bytes, a comm of <= 15 escaped bytes and a cpumode name */
	char *p = ob_room(o, 512);
	if (smp->type & PERF_SAMPLE_IP) {
		p = PUT(p, ",\"ip\":\"0x");
		p = fmt_hex(p, smp->ip);
		*p++ = '"';
	}
	if (smp->type & PERF_SAMPLE_TID) {
		const char *c = comm_of(s, smp->tid);
		p = PUT(p, ",\"pid\":");
		p = fmt_pid_pad(p, smp->pid, 0);
		p = PUT(p, ",\"tid\":");
		p = fmt_pid_pad(p, smp->tid, 0);
		p = PUT(p, ",\"comm\":");
		p = fmt_json_str(p, c, strlen(c));
	}
	if (smp->type & PERF_SAMPLE_CPU) {
		p = PUT(p, ",\"cpu\":");
		p = fmt_u64(p, smp->cpu);
	}
	if (smp->type & PERF_SAMPLE_TIME) {
		p = PUT(p, ",\"time\":");
		p = fmt_u64(p, smp->time);
	}
	if (smp->type & PERF_SAMPLE_PERIOD) {
		p = PUT(p, ",\"period\":");
		p = fmt_u64(p, smp->period);
	}
	if (has_count) {
		p = PUT(p, ",\"count\":");
		p = fmt_u64(p, count);
	}
	if (smp->type & PERF_SAMPLE_ADDR) {
		p = PUT(p, ",\"addr\":\"0x");
		p = fmt_hex(p, smp->addr);
		*p++ = '"';
	}
	const char *cmn = pk_cpumode__name((enum pk_cpumode)smp->cpumode);
	p = PUT(p, ",\"cpumode\":\"");
	p = put_lit(p, cmn, strnlen(cmn, 64));
	*p++ = '"';
	if (smp->type & PERF_SAMPLE_RAW) {
		p = PUT(p, ",\"raw_size\":");
		p = fmt_u64(p, smp->raw.size);
	}
	if (smp->type & PERF_SAMPLE_STACK_USER) {
		p = PUT(p, ",\"user_stack_size\":");
		p = fmt_u64(p, smp->stack_user.dyn_size);
	}
	o->len = (size_t)(p - o->buf);
	if (s->m && (smp->type & PERF_SAMPLE_IP))
		put_frag(s, smp, smp->ip, smp->cpumode, FR_TOP);
	if (tr) {
		ob_puts(o, ",\"trace\":");
		ob_json_str(o, tr);
	}
	if ((smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) && !s->hide_cg) {
		int n = sample_chain(s, smp);
		ob_puts(o, ",\"callchain\":[");
		for (int i = 0; i < n; i++) {
			if (i)
				ob_putc(o, ',');
			put_frag(s, smp, s->chain[i].ip, s->chain[i].cpumode, FR_FRAME);
		}
		ob_putc(o, ']');
	}
	ob_put(o, "}\n", 2);
}

static void print_sample(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp)
{
	char nbuf[64];
	const char *name = event_name(a, nbuf, sizeof(nbuf));
	uint64_t count = 0;
	bool has_count = sample_count(s, a, smp, &count);

	if (s->json) {
		print_sample_json(s, smp, name, has_count, count, trace_text(s, a, smp));
		return;
	}
	print_fields(s, a, smp, name, has_count, count);
}

/*
 * A sample that read its counters (PERF_SAMPLE_READ with ids in the read format: perf
 * record's leader sampling "{a,b}:S", or :S on a single event) is printed as perf script
 * does: once per counter it read (with PERF_FORMAT_GROUP the whole group, in the kernel's
 * order, leader first), under that counter's event, with the counter's growth since its
 * previous read (per id: per event, thread and CPU) as the period. A counter that did not
 * move, or whose id no attr lists, gets no line. Returns false when the sample is not of
 * this kind (the caller prints it as is).
 */
static bool print_read_sample(struct script *s, const struct pk_data_attr *a,
			      const struct pk_sample *smp)
{
	int n;

	if (!a || !a->layout_ok || !(smp->type & PERF_SAMPLE_READ) ||
	    !(a->layout.read_format & PERF_FORMAT_ID))
		return false;
	if (!s->rdelta && !(s->rdelta = pk_read_delta__new()))
		return false;
	n = pk_sample__read_values(&a->layout, smp, s->rvals, s->nrvals);
	if (n > 0 && (size_t)n > s->nrvals) {
		struct pk_count_value *nv = realloc(s->rvals, sizeof(*nv) * (size_t)n);
		if (!nv)
			return false;
		s->rvals = nv;
		s->nrvals = (size_t)n;
		n = pk_sample__read_values(&a->layout, smp, s->rvals, s->nrvals);
	}
	if (n <= 0)
		return false;
	for (int i = 0; i < n; i++) {
		const struct pk_count_value *v = &s->rvals[i];
		const struct pk_data_attr *m = pk_data_reader__attr_by_id(s->rd, v->id);
		uint64_t delta;
		if (!m || !m->layout_ok || pk_read_delta__update(s->rdelta, v->id, v->val, &delta))
			continue;
		if (!delta)
			continue;
		struct pk_sample c = *smp;
		c.id = v->id;
		c.period = delta;
		s->read_line = true;
		print_sample(s, m, &c);
		s->read_line = false;
	}
	return true;
}

static bool changes_maps(uint32_t type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 || type == PERF_RECORD_COMM ||
	       type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT;
}

/*
 * A record that changes the machine model makes cached frame texts stale: those of its
 * process (its pid's bucket of pgen), or all of them when it may change the kernel's maps
 * (kernel lookups ignore the process). Emptying the whole cache at every such record
 * made it nearly useless on system-wide files: a recording during a compile had one
 * MMAP2, COMM, FORK or EXIT every 16 samples, and each frame was resolved, shortened
 * and formatted again (script 0.27x of perf script's time there).
 */
static void maps_changed(struct script *s, const struct pk_record *r)
{
	uint32_t pid;
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		pid = r->type == PERF_RECORD_MMAP ? r->mmap.pid : r->mmap2.pid;
		if (r->cpumode != PK_CPUMODE_USER || pid == UINT32_MAX) {
			fc_flush(s);
			return;
		}
		break;
	case PERF_RECORD_COMM:
		pid = r->comm.pid;
		break;
	default: /* FORK, EXIT */
		pid = r->task.pid;
		break;
	}
	s->pgen[pid % PGEN_BUCKETS]++;
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
		pk_tool_warn("record of type %u at offset %#" PRIx64 " is malformed (%s); skipped",
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
		if (s->all)
			print_user_record(s, ev);
		return 0;
	}
	if (!r)
		return on_undecoded(s, ev);
	if (changes_maps(r->type) && s->fc_nr)
		maps_changed(s, r);
	if (r->type == PERF_RECORD_COMM) {
		comm_set(s, r->comm.tid, r->comm.comm);
	} else if (r->type == PERF_RECORD_FORK) {
		struct comm_slot *parent = comm_find(s, r->task.ptid, false);
		if (parent && !comm_find(s, r->task.tid, false)) {
			char c[16];
			memcpy(c, parent->comm, sizeof(c));
			comm_set(s, r->task.tid, c);
		}
	}
	if ((r->type == PERF_RECORD_SWITCH || r->type == PERF_RECORD_SWITCH_CPU_WIDE) &&
	    (s->show_switch || s->all) && !s->json)
		print_switch(s, ev->attr, r);
	else if (s->all)
		print_record(s, r);
	return record_done(s);
}

/* Every record through the session: in time order (or file order), the machine model
 * kept by it (none with --no-symbols), read on a second thread for a file. */
static int process(struct script *s, struct pk_data_reader *rd)
{
	PK_OPTS(pk_session_opts, so, .reader_thread = pk_tool_threads_allowed(),
		.file_order = s->file_order, .no_machine = s->no_syms,
		.machine_opts = pk_tool_machine_opts());
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
	pk_tool_error("cannot write output: %s", strerror(s->ob.err));
	return 1;
}

int cmd_script(int argc, char **argv)
{
	struct script s = { .json = false };
	const char *input = "perf.data";
	struct pk_data_reader *rd;
	int c, err, status;

	pk_tool_setup_log(0);
	opterr = 0;
	optind = 1;
	while ((c = pk_tool_getopt(argc, argv, opts, 0)) != -1) {
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
		case 'F':
			if (parse_fields(&s, optarg))
				return 129;
			break;
		default:
			pk_tool_error("unknown or incomplete option '%s'", argv[optind - 1]);
			pk_tool_print_usage(stderr, &cmd_script_help);
			return 129;
		}
	}
	if (optind < argc) {
		pk_tool_error("unexpected argument '%s'", argv[optind]);
		return 129;
	}
	/* the frame fields do not depend on the event (the frame text cache relies on it) */
	s.frame_fields = s.fmode == FM_SET ? s.fields & SF_FRAME_MASK
		: ((SF_FRAME_DEFAULT | s.fields) & ~s.fields_rm) & SF_FRAME_MASK;
	if (ob_init(&s.ob, STDOUT_FILENO) || fc_init(&s)) {
		pk_tool_error("cannot allocate the output buffer: %s", strerror(ENOMEM));
		ob_release(&s.ob);
		free(s.fc);
		return 1;
	}
	s.line_flush = isatty(STDOUT_FILENO);
	PK_OPTS(pk_data_reader_opts, ro);
	ro.no_mmap = !pk_tool_read_mmap();
	rd = pk_data_reader__open(input, &ro);
	if (!rd) {
		pk_tool_error("cannot read '%s': %s", input, pk_strerror(errno));
		ob_release(&s.ob);
		free(s.fc);
		return 1;
	}
	s.rd = rd;
	if (pk_data_reader__truncated(rd))
		pk_tool_warn("'%s' was not finalised (recording interrupted?); reading what is there",
			     input);
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
			pk_tool_error("'%s' ended early: %s (see above)", input,
				      pk_strerror(err));
		else
			pk_tool_error("'%s' is corrupt: %s", input, pk_strerror(err));
		finish_output(&s, 1);
		status = 1;
	} else {
		status = finish_output(&s, 0);
	}
	script_trace__free(s.trace);
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
