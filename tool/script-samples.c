/* SPDX-License-Identifier: MIT */
/*
 * tool/script-samples.c - one sample as `perfkit script` prints it: a text line of the
 * chosen fields (and its call chain), a JSON object, or one line per counter of a
 * sample that read its group (PERF_SAMPLE_READ).
 */
#include "script.h"

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

/* "secs.usecs: " as perf prints times (printf("%12s: ") of "%lu.%06lu"), or with --ns
 * "secs.nsecs: " ("%5lu.%09llu"): at most 30 bytes */
static inline char *fmt_time(struct script *s, char *p, uint64_t t, bool ns)
{
	/* the seconds change once a second of the recording: their text is kept */
	uint64_t sec = t / (uint64_t)1000000000;
	if (!s->sec_len || sec != s->sec) {
		s->sec = sec;
		s->sec_len = (uint8_t)(fmt_u64_pad(s->sec_txt, sec, 5, ' ') - s->sec_txt);
	}
	memcpy(p, s->sec_txt, sizeof(s->sec_txt));
	p += s->sec_len;
	*p++ = '.';
	uint32_t sub = (uint32_t)(t % (uint64_t)1000000000);
	if (ns) {
		p = fmt_u64_pad(p, sub, 9, '0');
	} else {
		/* six digits, in pairs */
		uint32_t us = sub / 1000;
		memcpy(p, pk_digit_pairs + 2 * (us / 10000), 2);
		memcpy(p + 2, pk_digit_pairs + 2 * (us / 100 % 100), 2);
		memcpy(p + 4, pk_digit_pairs + 2 * (us % 100), 2);
		p += 6;
	}
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
		if (cpu < 1000) {
			*p++ = (char)('0' + cpu / 100);
			memcpy(p, pk_digit_pairs + 2 * (cpu % 100), 2);
			p += 2;
		} else {
			p = fmt_u64_pad(p, cpu, 3, '0');
		}
		p = PUT(p, "] ");
	}
	if (F & SF_TIME)
		p = fmt_time(s, p, script_shown_time(s, time), s->ns);
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

/* --max-stack 0 on a sample with a user stack copy (registers, and bytes the kernel
 * copied): perf's unwinder refuses a zero depth, the chain is then not resolved and perf
 * script prints the sample as with -G */
static bool max_stack_zero_unwind(const struct script *s, const struct pk_sample *smp)
{
	return !s->max_stack && (smp->type & PERF_SAMPLE_STACK_USER) &&
	       (smp->type & PERF_SAMPLE_REGS_USER) && smp->regs_user.abi && smp->regs_user.nr &&
	       smp->stack_user.dyn_size;
}

/*
 * A sample as a text line, field by field as perf script 6.1 prints them (each field
 * followed by a space: "comm tid [cpu] time: period event: "), then the tracepoint
 * fields, the data address, and the sample's address (" ip sym+off (dso)") or, when
 * call chains are shown, a newline and one frame per line.
 */
/*
 * A dynamic probe's arguments (record --args): the calling convention's argument
 * registers in the sample's user registers, or the return value for a return probe
 * (event names "u:...", "sdt:...", "r:..."). Text " arg1=0x.. arg2=0x.." (or the
 * parameters by name, put_probe_params) or " ret=0x..";
 * JSON ',"args":["0x..",...]' or ',"ret":"0x.."'. Nothing if the sample has no such
 * registers.
 */
/* The value of the sample's user register `reg` (perf numbering), false if absent. */
static bool user_reg(const struct pk_sample *smp, int reg, uint64_t *v)
{
	const struct pk_sample_regs *r = &smp->regs_user;
	if (reg < 0 || reg > 63 || !(r->mask & (1ULL << reg)))
		return false;
	unsigned idx = (unsigned)__builtin_popcountll(r->mask & ((1ULL << reg) - 1));
	if (idx >= r->nr)
		return false;
	*v = r->regs[idx];
	return true;
}

/*
 * The named parameters of the function a u: probe sits in, from DWARF: text
 * " a=(long)3 s=(const char *)0x5555..." (integers in decimal as their type, pointers in
 * hex, never dereferenced; "?" when the value is not in a sampled register), JSON
 * ',"params":[{"name":"a","type":"long","value":3},...]' (pointers as "0x.." strings,
 * null when unknown). False (nothing written) without DWARF for the sample's address.
 */
static bool put_probe_params(struct script *s, struct obuf *o, const struct pk_sample *smp,
			     bool json)
{
	struct pk_addr_loc loc;
	struct pk_param ps[8];
	if (!s->m || !(smp->type & PERF_SAMPLE_IP) ||
	    pk_machine__resolve(s->m, smp->pid, smp->tid, smp->ip, smp->cpumode, &loc) < 0 ||
	    !loc.dso)
		return false;
	int n = pk_dso__params(loc.dso, loc.dso_addr, ps, 8);
	if (n <= 0)
		return false;
	if (n > 8)
		n = 8;
	ob_puts(o, json ? ",\"params\":[" : "");
	for (int i = 0; i < n; i++) {
		const struct pk_param *p = &ps[i];
		uint64_t v = 0;
		bool known = p->size && user_reg(smp, p->reg, &v);
		char buf[32];
		if (known && !p->is_pointer) {
			unsigned bits = p->size * 8u;
			if (bits < 64)
				v &= (1ULL << bits) - 1;
			if (p->is_signed && bits < 64 && (v >> (bits - 1)) & 1)
				v |= ~0ULL << bits;
			if (p->is_signed)
				snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)v);
			else
				snprintf(buf, sizeof(buf), "%" PRIu64, v);
		} else if (known) {
			snprintf(buf, sizeof(buf), json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, v);
		} else {
			snprintf(buf, sizeof(buf), json ? "null" : "?");
		}
		if (json) {
			ob_puts(o, i ? ",{\"name\":" : "{\"name\":");
			ob_json_str(o, p->name);
			ob_puts(o, ",\"type\":");
			ob_json_str(o, p->type);
			ob_puts(o, ",\"value\":");
			ob_puts(o, buf);
			ob_putc(o, '}');
		} else {
			ob_putc(o, ' ');
			ob_puts(o, p->name);
			ob_puts(o, "=(");
			ob_puts(o, p->type);
			ob_putc(o, ')');
			ob_puts(o, buf);
		}
	}
	if (json)
		ob_putc(o, ']');
	return true;
}

static void put_probe_args(struct script *s, struct obuf *o, const char *name,
			   const struct pk_sample *smp, bool json)
{
	const struct pk_sample_regs *r = &smp->regs_user;
	bool ret = !strncmp(name, "r:", 2);
	if (!(smp->type & PERF_SAMPLE_REGS_USER) || !r->abi || !r->nr ||
	    (strncmp(name, "u:", 2) && strncmp(name, "sdt:", 4) && !ret))
		return;
	uint64_t need = pk_probe__args_mask();
	if (!need || (r->mask & need) != need)
		return;
	/* text: the parameters by name where DWARF knows them, else the registers; JSON:
	 * the registers always, the parameters too */
	bool named = !ret && !strncmp(name, "u:", 2) && put_probe_params(s, o, smp, json);
	if (named && !json)
		return;
	char buf[32];
	for (unsigned i = 0;; i++) {
		int reg = ret ? (i ? -1 : pk_probe__ret_reg()) : pk_probe__arg_reg(i);
		if (reg < 0)
			break;
		unsigned idx = (unsigned)__builtin_popcountll(r->mask & ((1ULL << reg) - 1));
		if (idx >= r->nr)
			break;
		snprintf(buf, sizeof(buf), "0x%" PRIx64, r->regs[idx]);
		if (json) {
			ob_puts(o, ret ? ",\"ret\":\"" : i ? ",\"" : ",\"args\":[\"");
			ob_puts(o, buf);
			ob_putc(o, '"');
		} else {
			char lab[16];
			snprintf(lab, sizeof(lab), ret ? " ret=" : " arg%u=", i + 1);
			ob_puts(o, lab);
			ob_puts(o, buf);
		}
	}
	if (json && !ret)
		ob_putc(o, ']');
}

static void print_fields(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp,
			 const char *name, bool has_count, uint64_t count)
{
	struct obuf *o = &s->ob;
	unsigned int user, F = sample_fields(s, a, smp->type, &user);
	if (attrs_update(s) || (a && attr_check(s, a)))
		return;
	if (!F)
		return; /* nothing to print for this event (perf prints no line either) */
	bool cg = (F & SF_IP) && (smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) &&
		  !s->hide_cg;
	bool chain = cg && !max_stack_zero_unwind(s, smp);
	char *p = ob_room(o, 128);
	p = put_start(s, p, F, cg, smp->pid, smp->tid, smp->cpu, smp->time);
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
	if (F & SF_EVENT)
		put_probe_args(s, o, name, smp, false);
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

static void print_sample_json(struct script *s, const struct pk_sample *smp, const char *name,
			      bool has_count, uint64_t count, const char *tr)
{
	struct obuf *o = &s->ob;
	ob_put(o, "{\"type\":\"SAMPLE\",\"event\":", sizeof("{\"type\":\"SAMPLE\",\"event\":") - 1);
	size_t nl = strlen(name);
	if (nl <= JMEMO_MAX)
		o->len = (size_t)(put_json_memo(&s->jm_event, ob_room(o, PK_JSON_ESCAPED_MAX(nl) + 2),
						name, nl) - o->buf);
	else
		ob_json_str(o, name);
	/* at most 9 fields of <= 40 bytes, a comm of <= 15 escaped bytes and a cpumode name */
	char *p = ob_room(o, 512);
	if (smp->type & PERF_SAMPLE_IP) {
		p = PUT(p, ",\"ip\":\"0x");
		p = fmt_hex_fast(p, smp->ip);
		*p++ = '"';
	}
	if (smp->type & PERF_SAMPLE_TID) {
		p = PUT(p, ",\"pid\":");
		p = fmt_pid_fast(p, smp->pid);
		p = PUT(p, ",\"tid\":");
		p = fmt_pid_fast(p, smp->tid);
		p = PUT(p, ",\"comm\":");
		p = put_comm_json(s, p, smp->tid);
	}
	if (smp->type & PERF_SAMPLE_CPU) {
		p = PUT(p, ",\"cpu\":");
		p = fmt_u32_fast(p, smp->cpu);
	}
	if (smp->type & PERF_SAMPLE_TIME) {
		p = PUT(p, ",\"time\":");
		p = fmt_u64_fast(p, smp->time);
	}
	if (smp->type & PERF_SAMPLE_PERIOD) {
		p = PUT(p, ",\"period\":");
		p = fmt_u64_fast(p, smp->period);
	}
	if (has_count) {
		p = PUT(p, ",\"count\":");
		p = fmt_u64_fast(p, count);
	}
	if (smp->type & PERF_SAMPLE_ADDR) {
		p = PUT(p, ",\"addr\":\"0x");
		p = fmt_hex_fast(p, smp->addr);
		*p++ = '"';
	}
	const char *cmn = pk_cpumode__name((enum pk_cpumode)smp->cpumode);
	p = PUT(p, ",\"cpumode\":\"");
	p = put_lit(p, cmn, strnlen(cmn, 64));
	*p++ = '"';
	if (smp->type & PERF_SAMPLE_RAW) {
		p = PUT(p, ",\"raw_size\":");
		p = fmt_u32_fast(p, smp->raw.size);
	}
	if (smp->type & PERF_SAMPLE_STACK_USER) {
		p = PUT(p, ",\"user_stack_size\":");
		p = fmt_u64_fast(p, smp->stack_user.dyn_size);
	}
	o->len = (size_t)(p - o->buf);
	if (s->m && (smp->type & PERF_SAMPLE_IP))
		put_frag(s, smp, smp->ip, smp->cpumode, FR_TOP);
	put_probe_args(s, o, name, smp, true);
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

void print_sample(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp)
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
bool print_read_sample(struct script *s, const struct pk_data_attr *a,
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
