/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-script.c - `perfkit script`: dump the records of a perf.data file, ours or
 * perf's, file or pipe format, in time order (FINISHED_ROUND rules, lib/report), as text
 * lines like perf script's output (-F fields, symbolised call chains, tracepoint fields
 * decoded with libtraceevent from tracefs formats) or as JSON lines with symbols.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <traceevent/event-parse.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

const char cmd_script_usage[] =
	"usage: perfkit script [<options>]\n"
	"\n"
	"Print the samples (and with --show-all-records every record) of a perf.data file.\n"
	"\n"
	"    -i, --input <file>     input file (default perf.data; '-' reads stdin, pipe format)\n"
	"    -j, --json             one JSON object per line instead of text\n"
	"    -a, --show-all-records also the non-sample records (COMM, MMAP2, FORK, LOST, ...)\n"
	"    -G, --hide-call-graph  do not print call chains\n"
	"    -F, --fields <list>    text fields: comm,tid,pid,cpu,time,event,ip,sym,symoff,dso,\n"
	"                           srcline,period,addr,trace (perf script's -F)\n"
	"        --no-symbols       do not resolve symbols (raw addresses, faster)\n"
	"        --file-order       records in file order instead of time order\n"
	"\n"
	"Text lines follow perf script's default: comm tid [cpu] time: period event: ip, then\n"
	"one call-chain address per line. JSON samples carry event, ip, pid, tid, cpu, time,\n"
	"period, count (the PERF_SAMPLE_READ value, when recorded), sym, symoff, dso and\n"
	"callchain ([{\"ip\":...,\"sym\":...,\"dso\":...}]).\n";

enum sfield {
	SF_COMM = 1 << 0, SF_TID = 1 << 1, SF_PID = 1 << 2, SF_CPU = 1 << 3, SF_TIME = 1 << 4,
	SF_EVENT = 1 << 5, SF_IP = 1 << 6, SF_SYM = 1 << 7, SF_SYMOFF = 1 << 8, SF_DSO = 1 << 9,
	SF_SRCLINE = 1 << 10, SF_PERIOD = 1 << 11, SF_ADDR = 1 << 12, SF_TRACE = 1 << 13,
};

struct script {
	bool json, all, hide_cg;
	FILE *out;
	/* tid -> comm */
	struct comm_slot { uint32_t tid; char comm[16]; bool used; } *comms;
	size_t comm_cap, comm_nr;
	uint64_t nr_samples;
	struct pk_count_value *vals;
	size_t nvals;
	/* symbols */
	bool no_syms, file_order;
	unsigned int fields;    /* SF_* (0: the default layout) */
	struct pk_machine *m;
	struct pk_chain_entry chain[512];
	/* tracepoints: libtraceevent over tracefs format files */
	struct tep_handle *tep;
	struct trace_seq seq;
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

static const char *comm_of(struct script *s, uint32_t tid)
{
	struct comm_slot *c = comm_find(s, tid, false);
	return c && c->comm[0] ? c->comm : ":" ;
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

static const char *user_record_name(uint32_t type)
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

static void json_hex(FILE *f, const char *key, uint64_t v, bool comma)
{
	fprintf(f, "%s\"%s\":\"0x%" PRIx64 "\"", comma ? "," : "", key, v);
}

static void json_u64(FILE *f, const char *key, uint64_t v)
{
	fprintf(f, ",\"%s\":%" PRIu64, key, v);
}

/* ---- symbols ---- */

struct symres {
	char symbuf[512];
	const char *sym, *dso;
	uint64_t off;
	struct pk_addr_loc loc;
	bool found;
};

/* perf prints demangled names without their parameter list: "ns::f(int) const" -> "ns::f" */
static const char *short_sym(const char *name, char *buf, size_t len)
{
	size_t n = name ? strlen(name) : 0;
	if (n < 3 || n >= len)
		return name;
	size_t end = n;
	if (end > 6 && !strcmp(name + end - 6, " const"))
		end -= 6;
	if (name[end - 1] != ')')
		return name;
	int depth = 0;
	size_t i = end;
	while (i-- > 0) {
		if (name[i] == ')')
			depth++;
		else if (name[i] == '(' && --depth == 0)
			break;
	}
	if (depth || i == 0 || (i >= 8 && !strncmp(name + i - 8, "operator", 8)))
		return name;
	memcpy(buf, name, i);
	buf[i] = 0;
	return buf;
}

static void resolve_ip(struct script *s, const struct pk_sample *smp, uint64_t ip, uint8_t cm,
		       struct symres *r)
{
	r->sym = NULL;
	r->off = 0;
	r->found = false;
	memset(&r->loc, 0, sizeof(r->loc));
	r->dso = "[unknown]";
	if (!s->m)
		return;
	int err = pk_machine__resolve(s->m, smp->pid, smp->tid, ip, cm, &r->loc);
	r->found = err == 0;
	r->sym = short_sym(r->loc.sym, r->symbuf, sizeof(r->symbuf));
	r->off = r->loc.sym_off;
	if (r->loc.dso_name)
		r->dso = r->loc.dso_name;
}

/* "file.c:12" of an address, or NULL */
static const char *srcline(struct symres *r, char *buf, size_t len)
{
	const char *file;
	unsigned int line;
	if (!r->loc.dso || r->loc.kernel || pk_dso__srcline(r->loc.dso, r->loc.dso_addr, &file, &line))
		return NULL;
	snprintf(buf, len, "%s:%u", file, line);
	return buf;
}

/* The chain of a sample (resolved, innermost first), or just the ip. */
static int sample_chain(struct script *s, const struct pk_sample *smp)
{
	if (s->m && (smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER))) {
		int n = pk_machine__callchain(s->m, smp, s->chain, sizeof(s->chain) / sizeof(s->chain[0]));
		if (n > 0)
			return n;
	}
	if (!(smp->type & PERF_SAMPLE_CALLCHAIN) || !smp->callchain.nr) {
		s->chain[0].ip = smp->ip;
		s->chain[0].cpumode = smp->cpumode;
		return 1;
	}
	int n = 0;
	uint8_t cm = smp->cpumode;
	for (uint64_t i = 0; i < smp->callchain.nr && n < 512; i++) {
		uint64_t ip = smp->callchain.ips[i];
		enum pk_callchain_ctx c = pk_callchain__context(ip);
		if (c == PK_CTX_KERNEL)
			cm = PK_CPUMODE_KERNEL;
		else if (c == PK_CTX_USER)
			cm = PK_CPUMODE_USER;
		if (c != PK_CTX_NONE)
			continue;
		s->chain[n].ip = ip;
		s->chain[n++].cpumode = cm;
	}
	return n;
}

/* Tracepoint fields of a RAW sample as perf script prints them ("prev_comm=... ==> ..."). */
static const char *trace_text(struct script *s, const struct pk_data_attr *a,
			      const struct pk_sample *smp)
{
	if (!a || !(smp->type & PERF_SAMPLE_RAW) || a->attr.attr.type != PERF_TYPE_TRACEPOINT || !smp->raw.size)
		return NULL;
	if (!s->tep) {
		s->tep = tep_alloc();
		if (!s->tep)
			return NULL;
		trace_seq_init(&s->seq);
	}
	int id = (int)a->attr.attr.config;
	struct tep_event *ev = tep_find_event(s->tep, id);
	if (!ev && a->name && pk_tool_ensure_tracefs()) {
		/* "sys:name" -> <tracefs>/events/sys/name/format */
		char sys[256], path[1024];
		const char *colon = strchr(a->name, ':');
		const char *root = pk_tracefs__root();
		if (colon && root && (size_t)(colon - a->name) < sizeof(sys)) {
			memcpy(sys, a->name, (size_t)(colon - a->name));
			sys[colon - a->name] = 0;
			char name[256];
			snprintf(name, sizeof(name), "%s", colon + 1);
			name[strcspn(name, ":/")] = 0; /* drop modifiers */
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, sys, name);
			FILE *f = fopen(path, "r");
			if (f) {
				char *buf = malloc(1 << 16);
				size_t n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
				fclose(f);
				if (buf && n)
					tep_parse_event(s->tep, buf, n, sys);
				free(buf);
			}
			ev = tep_find_event(s->tep, id);
		}
	}
	if (!ev)
		return NULL;
	struct tep_record rec = { .ts = smp->time, .cpu = (int)smp->cpu, .size = (int)smp->raw.size,
				  .data = (void *)smp->raw.data };
	trace_seq_reset(&s->seq);
	tep_print_event(s->tep, &s->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s->seq);
	return s->seq.buffer;
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

/* "ip sym+off (dso)" as perf script prints frames */
static void print_frame(struct script *s, const struct pk_sample *smp, uint64_t ip, uint8_t cm,
			const char *pre, const char *post)
{
	fprintf(s->out, "%s%16" PRIx64, pre, ip);
	if (s->m) {
		struct symres r;
		resolve_ip(s, smp, ip, cm, &r);
		if (r.sym)
			fprintf(s->out, " %s+0x%" PRIx64, r.sym, r.off);
		else
			fputs(" [unknown]", s->out);
		fprintf(s->out, " (%s)", r.dso);
	}
	fputs(post, s->out);
}

static void print_fields(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp,
			 const char *name)
{
	FILE *f = s->out;
	unsigned int F = s->fields;
	if (F & SF_COMM)
		fprintf(f, "%16s", comm_of(s, smp->tid));
	if (F & (SF_PID | SF_TID)) {
		if ((F & SF_PID) && (F & SF_TID))
			fprintf(f, " %7u/%-7u", smp->pid, smp->tid);
		else
			fprintf(f, " %7u", F & SF_PID ? smp->pid : smp->tid);
	}
	if (F & SF_CPU)
		fprintf(f, " [%03u]", smp->cpu);
	if (F & SF_TIME)
		fprintf(f, " %5" PRIu64 ".%06" PRIu64 ":", smp->time / (uint64_t)1000000000,
			(smp->time % (uint64_t)1000000000) / 1000);
	if (F & SF_PERIOD)
		fprintf(f, " %10" PRIu64, smp->period);
	if (F & SF_EVENT)
		fprintf(f, " %s:", name);
	if (F & SF_ADDR)
		fprintf(f, " %16" PRIx64, smp->addr);
	if (F & SF_TRACE) {
		const char *tr = trace_text(s, a, smp);
		if (tr)
			fprintf(f, " %s", tr);
	}
	bool chain = (F & SF_IP) && (smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) &&
		     !s->hide_cg;
	int n = 1;
	if (chain)
		n = sample_chain(s, smp);
	else {
		s->chain[0].ip = smp->ip;
		s->chain[0].cpumode = smp->cpumode;
	}
	if (!(F & (SF_IP | SF_SYM | SF_DSO | SF_SRCLINE))) {
		fputc('\n', f);
		return;
	}
	if (chain)
		fputc('\n', f);
	for (int i = 0; i < n; i++) {
		struct symres r;
		char sb[1024];
		resolve_ip(s, smp, s->chain[i].ip, s->chain[i].cpumode, &r);
		fputs(chain ? "\t" : " ", f);
		if (F & SF_IP)
			fprintf(f, "%16" PRIx64, s->chain[i].ip);
		if (F & SF_SYM) {
			fprintf(f, " %s", r.sym ? r.sym : "[unknown]");
			if ((F & SF_SYMOFF) && r.sym)
				fprintf(f, "+0x%" PRIx64, r.off);
		}
		if (F & SF_DSO)
			fprintf(f, " (%s)", r.dso);
		if (F & SF_SRCLINE) {
			const char *sl = srcline(&r, sb, sizeof(sb));
			fprintf(f, "\n  %s", sl ? sl : "??:0");
		}
		fputc('\n', f);
	}
	if (chain)
		fputc('\n', f);
}

static int parse_fields(const char *spec, unsigned int *out)
{
	static const struct { const char *n; unsigned int f; } t[] = {
		{ "comm", SF_COMM }, { "tid", SF_TID }, { "pid", SF_PID }, { "cpu", SF_CPU },
		{ "time", SF_TIME }, { "event", SF_EVENT }, { "ip", SF_IP }, { "sym", SF_SYM },
		{ "symoff", SF_SYMOFF | SF_SYM }, { "dso", SF_DSO }, { "srcline", SF_SRCLINE },
		{ "period", SF_PERIOD }, { "addr", SF_ADDR }, { "trace", SF_TRACE },
	};
	char *dup = strdup(spec), *save = NULL;
	if (!dup)
		return -ENOMEM;
	*out = 0;
	for (char *w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			if (!strcmp(w, t[i].n))
				break;
		if (i == sizeof(t) / sizeof(t[0])) {
			pk_tool_error("unknown field '%s'", w);
			free(dup);
			return -EINVAL;
		}
		*out |= t[i].f;
	}
	free(dup);
	return 0;
}

static void print_sample(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp)
{
	char nbuf[64];
	const char *name = event_name(a, nbuf, sizeof(nbuf));
	uint64_t count = 0;
	bool has_count = sample_count(s, a, smp, &count);
	FILE *f = s->out;

	if (s->json) {
		fprintf(f, "{\"type\":\"SAMPLE\",\"event\":");
		pk_json_str(f, name);
		if (smp->type & PERF_SAMPLE_IP)
			json_hex(f, "ip", smp->ip, true);
		if (smp->type & PERF_SAMPLE_TID) {
			json_u64(f, "pid", smp->pid);
			json_u64(f, "tid", smp->tid);
			fprintf(f, ",\"comm\":");
			pk_json_str(f, comm_of(s, smp->tid));
		}
		if (smp->type & PERF_SAMPLE_CPU)
			json_u64(f, "cpu", smp->cpu);
		if (smp->type & PERF_SAMPLE_TIME)
			json_u64(f, "time", smp->time);
		if (smp->type & PERF_SAMPLE_PERIOD)
			json_u64(f, "period", smp->period);
		if (has_count)
			json_u64(f, "count", count);
		if (smp->type & PERF_SAMPLE_ADDR)
			json_hex(f, "addr", smp->addr, true);
		fprintf(f, ",\"cpumode\":\"%s\"", pk_cpumode__name((enum pk_cpumode)smp->cpumode));
		if (smp->type & PERF_SAMPLE_RAW)
			json_u64(f, "raw_size", smp->raw.size);
		if (smp->type & PERF_SAMPLE_STACK_USER)
			json_u64(f, "user_stack_size", smp->stack_user.dyn_size);
		if (s->m && (smp->type & PERF_SAMPLE_IP)) {
			struct symres r;
			resolve_ip(s, smp, smp->ip, smp->cpumode, &r);
			fprintf(f, ",\"sym\":");
			if (r.sym)
				pk_json_str(f, r.sym);
			else
				fputs("null", f);
			if (r.sym)
				json_u64(f, "symoff", r.off);
			fprintf(f, ",\"dso\":");
			pk_json_str(f, r.dso);
		}
		const char *tr = trace_text(s, a, smp);
		if (tr) {
			fprintf(f, ",\"trace\":");
			pk_json_str(f, tr);
		}
		if ((smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) && !s->hide_cg) {
			int n = sample_chain(s, smp);
			fprintf(f, ",\"callchain\":[");
			for (int i = 0; i < n; i++) {
				fprintf(f, "%s{\"ip\":\"0x%" PRIx64 "\"", i ? "," : "", s->chain[i].ip);
				if (s->m) {
					struct symres r;
					resolve_ip(s, smp, s->chain[i].ip, s->chain[i].cpumode, &r);
					fprintf(f, ",\"sym\":");
					if (r.sym)
						pk_json_str(f, r.sym);
					else
						fputs("null", f);
					fprintf(f, ",\"dso\":");
					pk_json_str(f, r.dso);
				}
				fputc('}', f);
			}
			fputc(']', f);
		}
		fputs("}\n", f);
		return;
	}
	if (s->fields) {
		print_fields(s, a, smp, name);
		return;
	}
	fprintf(f, "%16s", (smp->type & PERF_SAMPLE_TID) ? comm_of(s, smp->tid) : ":");
	if (smp->type & PERF_SAMPLE_TID)
		fprintf(f, " %6u", smp->tid);
	if (smp->type & PERF_SAMPLE_CPU)
		fprintf(f, " [%03u]", smp->cpu);
	if (smp->type & PERF_SAMPLE_TIME)
		fprintf(f, " %5" PRIu64 ".%06" PRIu64 ":", smp->time / (uint64_t)1000000000,
			(smp->time % (uint64_t)1000000000) / 1000);
	if (smp->type & PERF_SAMPLE_PERIOD)
		fprintf(f, " %10" PRIu64, smp->period);
	fprintf(f, " %s:", name);
	if (has_count)
		fprintf(f, " count %" PRIu64 ":", count);
	const char *tr = trace_text(s, a, smp);
	if (tr)
		fprintf(f, " %s", tr);
	if ((smp->type & PERF_SAMPLE_CALLCHAIN) && !s->hide_cg && smp->callchain.nr) {
		fputc('\n', f);
		int n = sample_chain(s, smp);
		for (int i = 0; i < n; i++)
			print_frame(s, smp, s->chain[i].ip, s->chain[i].cpumode, "\t", "\n");
		fputc('\n', f);
		return;
	}
	if (smp->type & PERF_SAMPLE_IP)
		print_frame(s, smp, smp->ip, smp->cpumode, " ", "");
	fputc('\n', f);
}

/* ---- other records ---- */

static void print_sid(FILE *f, const struct pk_record *r, bool json)
{
	if (!r->has_sid)
		return;
	if (json) {
		if (r->sid.type & PERF_SAMPLE_TIME)
			json_u64(f, "time", r->sid.time);
		if (r->sid.type & PERF_SAMPLE_CPU)
			json_u64(f, "cpu", r->sid.cpu);
		if (r->sid.type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
			json_u64(f, "id", r->sid.id);
	} else if (r->sid.type & PERF_SAMPLE_TIME) {
		fprintf(f, " %5" PRIu64 ".%06" PRIu64 ":", r->sid.time / (uint64_t)1000000000,
			(r->sid.time % (uint64_t)1000000000) / 1000);
	}
}

/* key/value output shared by text and JSON */
static void kv_u64(struct script *s, const char *k, uint64_t v)
{
	if (s->json)
		json_u64(s->out, k, v);
	else
		fprintf(s->out, " %s=%" PRIu64, k, v);
}

static void kv_pid(struct script *s, const char *k, uint32_t v)
{
	if (s->json)
		fprintf(s->out, ",\"%s\":%d", k, (int32_t)v);
	else
		fprintf(s->out, " %s=%d", k, (int32_t)v);
}

static void kv_hex(struct script *s, const char *k, uint64_t v)
{
	if (s->json)
		json_hex(s->out, k, v, true);
	else
		fprintf(s->out, " %s=0x%" PRIx64, k, v);
}

static void kv_str(struct script *s, const char *k, const char *v)
{
	if (s->json) {
		fprintf(s->out, ",\"%s\":", k);
		pk_json_str(s->out, v);
	} else {
		fprintf(s->out, " %s=%s", k, v);
	}
}

static void kv_bool(struct script *s, const char *k, bool v)
{
	if (s->json)
		fprintf(s->out, ",\"%s\":%s", k, v ? "true" : "false");
	else if (v)
		fprintf(s->out, " %s", k);
}

static void print_record(struct script *s, const struct pk_record *r)
{
	FILE *f = s->out;
	const char *tname = pk_record_type__name(r->type);
	char tb[32];

	if (!tname) {
		snprintf(tb, sizeof(tb), "%u", r->type);
		tname = tb;
	}
	if (s->json) {
		fprintf(f, "{\"type\":\"%s\"", tname);
	} else {
		fprintf(f, "%16s", "");
		print_sid(f, r, false);
		fprintf(f, " PERF_RECORD_%s", tname);
	}
	switch (r->type) {
	case PERF_RECORD_MMAP:
		kv_pid(s, "pid", r->mmap.pid);
		kv_pid(s, "tid", r->mmap.tid);
		kv_hex(s, "addr", r->mmap.addr);
		kv_hex(s, "len", r->mmap.len);
		kv_hex(s, "pgoff", r->mmap.pgoff);
		kv_bool(s, "data", r->mmap.data);
		kv_str(s, "filename", r->mmap.filename);
		break;
	case PERF_RECORD_MMAP2:
		kv_pid(s, "pid", r->mmap2.pid);
		kv_pid(s, "tid", r->mmap2.tid);
		kv_hex(s, "addr", r->mmap2.addr);
		kv_hex(s, "len", r->mmap2.len);
		kv_hex(s, "pgoff", r->mmap2.pgoff);
		if (r->mmap2.has_build_id) {
			char hex[2 * 20 + 1];
			for (unsigned i = 0; i < r->mmap2.build_id_size && i < 20; i++)
				snprintf(hex + 2 * i, 3, "%02x", r->mmap2.build_id[i]);
			hex[2 * (r->mmap2.build_id_size < 20 ? r->mmap2.build_id_size : 20)] = 0;
			kv_str(s, "build_id", hex);
		} else {
			kv_u64(s, "maj", r->mmap2.maj);
			kv_u64(s, "min", r->mmap2.min);
			kv_u64(s, "ino", r->mmap2.ino);
		}
		kv_u64(s, "prot", r->mmap2.prot);
		kv_u64(s, "flags", r->mmap2.flags);
		kv_bool(s, "data", r->mmap2.data);
		kv_str(s, "filename", r->mmap2.filename);
		break;
	case PERF_RECORD_LOST:
		kv_u64(s, "id", r->lost.id);
		kv_u64(s, "lost", r->lost.lost);
		break;
	case PERF_RECORD_COMM:
		kv_pid(s, "pid", r->comm.pid);
		kv_pid(s, "tid", r->comm.tid);
		kv_str(s, "comm", r->comm.comm);
		kv_bool(s, "exec", r->comm.exec);
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		kv_pid(s, "pid", r->task.pid);
		kv_pid(s, "ppid", r->task.ppid);
		kv_pid(s, "tid", r->task.tid);
		kv_pid(s, "ptid", r->task.ptid);
		kv_u64(s, "task_time", r->task.time);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		kv_u64(s, "throttle_time", r->throttle.time);
		kv_u64(s, "event_id", r->throttle.id);
		kv_u64(s, "stream_id", r->throttle.stream_id);
		break;
	case PERF_RECORD_READ:
		kv_pid(s, "pid", r->read.pid);
		kv_pid(s, "tid", r->read.tid);
		kv_u64(s, "nr", r->read.nr);
		break;
	case PERF_RECORD_AUX:
		kv_u64(s, "aux_offset", r->aux.aux_offset);
		kv_u64(s, "aux_size", r->aux.aux_size);
		kv_hex(s, "flags", r->aux.flags);
		break;
	case PERF_RECORD_ITRACE_START:
		kv_pid(s, "pid", r->itrace_start.pid);
		kv_pid(s, "tid", r->itrace_start.tid);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		kv_u64(s, "lost", r->lost_samples.lost);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		kv_bool(s, "out", r->sw.out);
		kv_bool(s, "preempt", r->sw.preempt);
		if (r->type == PERF_RECORD_SWITCH_CPU_WIDE) {
			kv_u64(s, "next_prev_pid", r->sw.next_prev_pid);
			kv_u64(s, "next_prev_tid", r->sw.next_prev_tid);
		}
		break;
	case PERF_RECORD_NAMESPACES:
		kv_pid(s, "pid", r->namespaces.pid);
		kv_pid(s, "tid", r->namespaces.tid);
		kv_u64(s, "nr_namespaces", r->namespaces.nr);
		break;
	case PERF_RECORD_KSYMBOL:
		kv_hex(s, "addr", r->ksymbol.addr);
		kv_u64(s, "len", r->ksymbol.len);
		kv_u64(s, "ksym_type", r->ksymbol.ksym_type);
		kv_bool(s, "unregister", r->ksymbol.unregister);
		kv_str(s, "name", r->ksymbol.name);
		break;
	case PERF_RECORD_BPF_EVENT:
		kv_u64(s, "bpf_type", r->bpf_event.type);
		kv_u64(s, "bpf_id", r->bpf_event.id);
		break;
	case PERF_RECORD_CGROUP:
		kv_u64(s, "cgroup_id", r->cgroup.id);
		kv_str(s, "path", r->cgroup.path);
		break;
	case PERF_RECORD_TEXT_POKE:
		kv_hex(s, "addr", r->text_poke.addr);
		kv_u64(s, "old_len", r->text_poke.old_len);
		kv_u64(s, "new_len", r->text_poke.new_len);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		kv_u64(s, "hw_id", r->aux_output_hw_id.hw_id);
		break;
	default:
		break;
	}
	if (s->json) {
		print_sid(f, r, true);
		fputs("}\n", f);
	} else {
		fputc('\n', f);
	}
}

static void print_user_record(struct script *s, const struct pk_data_event *ev)
{
	const char *name = user_record_name(ev->hdr->type);
	if (s->json) {
		if (name)
			fprintf(s->out, "{\"type\":\"%s\"", name);
		else
			fprintf(s->out, "{\"type\":\"%u\"", ev->hdr->type);
		json_u64(s->out, "size", ev->hdr->size);
		fputs("}\n", s->out);
	} else {
		if (name)
			fprintf(s->out, "%16s PERF_RECORD_%s size=%u\n", "", name, ev->hdr->size);
		else
			fprintf(s->out, "%16s PERF_RECORD_%u size=%u\n", "", ev->hdr->type, ev->hdr->size);
	}
}

static int process(struct script *s, struct pk_data_reader *rd)
{
	struct pk_data_event ev;
	int err;
	struct pk_ordered *q = s->file_order ? NULL : pk_ordered__new(NULL);

	while ((err = q ? pk_ordered__next(q, rd, &ev) : pk_data_reader__next(rd, &ev)) > 0) {
		const struct perf_event_header *h = ev.hdr;
		struct pk_record r;
		const char *bad = NULL;

		if (h->type >= 64) {
			if (s->all)
				print_user_record(s, &ev);
			continue;
		}
		int d = pk_record__decode(ev.attr && ev.attr->layout_ok ? &ev.attr->layout : NULL,
					  h, &r, &bad);
		if (d < 0) {
			pk_tool_warn("record of type %u at offset %#" PRIx64 " is malformed (%s); skipped",
				     h->type, ev.offset, bad ? bad : pk_strerror(d));
			continue;
		}
		if (d == PK_RECORD_SKIPPED) {
			if (s->all) {
				if (s->json)
					fprintf(s->out, "{\"type\":\"%u\",\"size\":%u}\n", h->type, h->size);
				else
					fprintf(s->out, "%16s PERF_RECORD_%u size=%u\n", "", h->type, h->size);
			}
			continue;
		}
		if (s->m && r.type != PERF_RECORD_SAMPLE)
			pk_machine__process(s->m, &r);
		if (r.type == PERF_RECORD_COMM)
			comm_set(s, r.comm.tid, r.comm.comm);
		else if (r.type == PERF_RECORD_FORK) {
			struct comm_slot *parent = comm_find(s, r.task.ptid, false);
			if (parent && !comm_find(s, r.task.tid, false)) {
				char c[16];
				memcpy(c, parent->comm, sizeof(c));
				comm_set(s, r.task.tid, c);
			}
		}
		if (r.type == PERF_RECORD_SAMPLE) {
			s->nr_samples++;
			print_sample(s, ev.attr, &r.sample);
		} else if (s->all) {
			print_record(s, &r);
		}
		if (ferror(s->out)) {
			err = -EIO;
			break;
		}
	}
	pk_ordered__free(q);
	return err;
}

int cmd_script(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "show-all-records", no_argument, NULL, 'a' },
		{ "hide-call-graph", no_argument, NULL, 'G' },
		{ "fields", required_argument, NULL, 'F' },
		{ "no-symbols", no_argument, NULL, 'N' },
		{ "file-order", no_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	struct script s = { .out = stdout };
	const char *input = "perf.data";
	struct pk_data_reader *rd;
	int c, err;

	pk_tool_setup_log(0);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:jaGF:", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'j': s.json = true; break;
		case 'a': s.all = true; break;
		case 'G': s.hide_cg = true; break;
		case 'N': s.no_syms = true; break;
		case 'O': s.file_order = true; break;
		case 'F':
			if (parse_fields(optarg, &s.fields))
				return 129;
			break;
		default:
			pk_tool_error("unknown or incomplete option '%s'", argv[optind - 1]);
			fputs(cmd_script_usage, stderr);
			return 129;
		}
	}
	if (optind < argc) {
		pk_tool_error("unexpected argument '%s'", argv[optind]);
		return 129;
	}
	rd = pk_data_reader__open(input, NULL);
	if (!rd) {
		pk_tool_error("cannot read '%s': %s", input, pk_strerror(errno));
		return 1;
	}
	if (pk_data_reader__truncated(rd))
		pk_tool_warn("'%s' was not finalised (recording interrupted?); reading what is there",
			     input);
	if (!s.no_syms) {
		const struct pk_data_env *env = pk_data_reader__env(rd);
		struct utsname u;
		PK_OPTS(pk_machine_opts, mo, .host = !env->osrelease ||
			(uname(&u) == 0 && !strcmp(u.release, env->osrelease)));
		s.m = pk_machine__new(&mo);
		for (size_t i = 0; s.m && i < env->nr_build_ids; i++)
			if (env->build_ids[i].filename)
				pk_machine__add_build_id(s.m, env->build_ids[i].filename,
							 env->build_ids[i].build_id,
							 env->build_ids[i].build_id_size);
	}
	err = process(&s, rd);
	pk_machine__free(s.m);
	if (s.tep) {
		trace_seq_destroy(&s.seq);
		tep_free(s.tep);
	}
	pk_data_reader__free(rd);
	free(s.comms);
	free(s.vals);
	if (err < 0 && err != -EIO) {
		pk_tool_error("'%s' is corrupt: %s", input, pk_strerror(err));
		pk_tool_finish_stdout(1);
		return 1;
	}
	return pk_tool_finish_stdout(0);
}
