/* SPDX-License-Identifier: MIT */
/*
 * tool/record-dump.c - perf's text of the records that follow "PERF_RECORD_<NAME>" in
 * `perf report -D` (perf 6.1), for the types record-text.c does not hold: the kernel's
 * LOST ... AUX_OUTPUT_HW_ID (decoded by the library into struct pk_record) and perf's own
 * user records (HEADER_ATTR ... FINISHED_INIT), which are decoded here from their bytes.
 * Those bytes come from the input: every count and length is checked against the
 * record's size (tests/fuzz/fuzz_record_dump.c); where perf would read past the record,
 * the text says the record is malformed instead. script prints KSYMBOL, BPF_EVENT and
 * TEXT_POKE (--show-bpf-events, --show-text-poke-events) with the same text. The kernel
 * symbol of a TEXT_POKE address comes from the caller's machine (none: left out).
 */
#include <inttypes.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

/* a u64/u32/u16 at off in a record of n bytes; 0 past its end */
static uint64_t ld64(const uint8_t *b, size_t n, size_t off)
{
	uint64_t v = 0;
	if (off <= n && n - off >= 8)
		memcpy(&v, b + off, 8);
	return v;
}

static uint32_t ld32(const uint8_t *b, size_t n, size_t off)
{
	uint32_t v = 0;
	if (off <= n && n - off >= 4)
		memcpy(&v, b + off, 4);
	return v;
}

static uint16_t ld16(const uint8_t *b, size_t n, size_t off)
{
	uint16_t v = 0;
	if (off <= n && n - off >= 2)
		memcpy(&v, b + off, 2);
	return v;
}

/* "            Old bytes: 0f 1f ..." lines of 16 bytes, as perf's text_poke_printer */
static void poke_bytes(const uint8_t *p, unsigned int n, const char *what, tool_printf_fn pf,
		       void *ctx)
{
	for (unsigned int i = 0; i < n; i++) {
		if (i % 16 == 0)
			pf(ctx, "            %s bytes:", what);
		pf(ctx, " %02x", p[i]);
		if ((i + 1) % 16 == 0 || i + 1 == n)
			pf(ctx, "\n");
	}
}

static const char *const ns_names[] = { "net", "uts", "ipc", "pid", "user", "mnt", "cgroup" };

/* "sym+0x10" of a kernel address, as perf's perf_event__fprintf_text_poke adds it: only
 * when a kernel map covers it (no fallback to the kernel without one) and has a symbol */
static void poke_sym(struct pk_machine *m, uint64_t addr, tool_printf_fn pf, void *ctx)
{
	struct pk_addr_loc loc;
	if (!m || pk_machine__resolve(m, UINT32_MAX, UINT32_MAX, addr, PK_CPUMODE_KERNEL, &loc) ||
	    !loc.sym || (!loc.map_start && loc.map_end == UINT64_MAX))
		return;
	pf(ctx, "%s+0x%" PRIx64, loc.sym, loc.sym_off);
}

bool tool_record_tail_text(const struct pk_record *r, const struct pk_data_attr *a,
			   struct pk_machine *m, tool_printf_fn pf, void *ctx)
{
	switch (r->type) {
	case PERF_RECORD_LOST:
		pf(ctx, ": id:%" PRIu64 ": lost:%" PRIu64 "\n", r->lost.id, r->lost.lost);
		return true;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		pf(ctx, ": unhandled!\n"); /* perf report has no handler for them */
		return true;
	case PERF_RECORD_READ: {
		/* perf reads the fixed layout {value, enabled, running, id, lost}, whatever
		 * the read_format */
		const uint8_t *v = r->read.values;
		size_t n = v ? r->read.size : 0;
		uint64_t rf = a ? a->attr.attr.read_format : 0;
		char nb[256];
		pf(ctx, ": %d %d %s %" PRIu64 "\n", (int32_t)r->read.pid, (int32_t)r->read.tid,
		   a ? pk_data_attr__name(a, nb, sizeof(nb)) : "unknown", ld64(v, n, 0));
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			pf(ctx, "... time enabled : %" PRIu64 "\n", ld64(v, n, 8));
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			pf(ctx, "... time running : %" PRIu64 "\n", ld64(v, n, 16));
		if (rf & PERF_FORMAT_ID)
			pf(ctx, "... id           : %" PRIu64 "\n", ld64(v, n, 24));
		if (rf & (1u << 4)) /* PERF_FORMAT_LOST */
			pf(ctx, "... lost         : %" PRIu64 "\n", ld64(v, n, 32));
		return true;
	}
	case PERF_RECORD_AUX:
		pf(ctx, " offset: %#" PRIx64 " size: %#" PRIx64 " flags: %#" PRIx64 " [%s%s%s]\n",
		   r->aux.aux_offset, r->aux.aux_size, r->aux.flags,
		   (r->aux.flags & PERF_AUX_FLAG_TRUNCATED) ? "T" : "",
		   (r->aux.flags & PERF_AUX_FLAG_OVERWRITE) ? "O" : "",
		   (r->aux.flags & PERF_AUX_FLAG_PARTIAL) ? "P" : "");
		return true;
	case PERF_RECORD_ITRACE_START:
		pf(ctx, " pid: %u tid: %u\n", r->itrace_start.pid, r->itrace_start.tid);
		return true;
	case PERF_RECORD_LOST_SAMPLES:
		/* the sample id of its trailer; perf's "none" is -1 */
		pf(ctx, ": id:%" PRIu64 ": lost samples :%" PRIu64 "\n",
		   r->has_sid && (r->sid.type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
			   ? r->sid.id : UINT64_MAX,
		   r->lost_samples.lost);
		return true;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		const char *io = !r->sw.out ? "IN         " : r->sw.preempt ? "OUT preempt" : "OUT        ";
		if (r->type == PERF_RECORD_SWITCH)
			pf(ctx, " %s\n", io);
		else
			pf(ctx, " %s  %s pid/tid: %5d/%-5d\n", io, r->sw.out ? "next" : "prev",
			   (int32_t)r->sw.next_prev_pid, (int32_t)r->sw.next_prev_tid);
		return true;
	}
	case PERF_RECORD_NAMESPACES: {
		const struct pk_rec_namespaces *n = &r->namespaces;
		pf(ctx, " %d/%d - nr_namespaces: %u\n\t\t[", (int32_t)n->pid, (int32_t)n->tid,
		   (unsigned)n->nr);
		for (uint64_t i = 0; i < n->nr && n->ns; i++) {
			if (i && i % 4 == 0)
				pf(ctx, "\n\t\t ");
			pf(ctx, "%u/%s: %" PRIu64 "/%#" PRIx64 "%s", (unsigned)i,
			   i < 7 ? ns_names[i] : "UNKNOWN", n->ns[i].dev, n->ns[i].ino,
			   i + 1 != n->nr ? ", " : "]\n");
		}
		if (!n->nr || !n->ns)
			pf(ctx, "]\n");
		return true;
	}
	case PERF_RECORD_KSYMBOL:
		pf(ctx, " addr %" PRIx64 " len %u type %u flags 0x%x name %s\n", r->ksymbol.addr,
		   r->ksymbol.len, r->ksymbol.ksym_type, r->ksymbol.flags, r->ksymbol.name);
		return true;
	case PERF_RECORD_BPF_EVENT:
		pf(ctx, " type %u, flags %u, id %u\n", r->bpf_event.type, r->bpf_event.flags,
		   r->bpf_event.id);
		return true;
	case PERF_RECORD_CGROUP:
		pf(ctx, " cgroup: %" PRIu64 " %s\n", r->cgroup.id, r->cgroup.path);
		return true;
	case PERF_RECORD_TEXT_POKE:
		pf(ctx, " %" PRIx64 " ", r->text_poke.addr);
		poke_sym(m, r->text_poke.addr, pf, ctx);
		pf(ctx, " old len %u new len %u\n", r->text_poke.old_len, r->text_poke.new_len);
		if (r->text_poke.old_bytes)
			poke_bytes(r->text_poke.old_bytes, r->text_poke.old_len, "Old", pf, ctx);
		if (r->text_poke.new_bytes)
			poke_bytes(r->text_poke.new_bytes, r->text_poke.new_len, "New", pf, ctx);
		return true;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		pf(ctx, " hw_id: %#" PRIx64 "\n", r->aux_output_hw_id.hw_id);
		return true;
	default:
		return false;
	}
}

/* ---- perf's user records: decoded here, from bytes of the input ---- */

/* a growing list of CPUs, as perf's cpu map of a CPU_MAP or EVENT_UPDATE record */
#define MAX_CPUS 4096
struct cpus {
	int cpu[MAX_CPUS];
	unsigned int nr;
	bool over;
};

static void cpus_add(struct cpus *c, int cpu)
{
	if (c->nr < MAX_CPUS)
		c->cpu[c->nr++] = cpu;
	else
		c->over = true;
}

/*
 * The CPUs of a perf_record_cpu_map_data at off (type u16, then a list of u16, a bitmap
 * of 32- or 64-bit words, or a range): false when it does not fit in the record or is
 * not one of these.
 */
static bool cpu_map_data(const uint8_t *b, size_t n, size_t off, struct cpus *c)
{
	if (off > n || n - off < 2)
		return false;
	uint16_t type = ld16(b, n, off);
	size_t d = off + 2;
	switch (type) {
	case 0: { /* PERF_CPU_MAP__CPUS: nr, cpu[nr] */
		uint16_t nr = ld16(b, n, d);
		if (n - d < 2 || (n - d - 2) / 2 < nr)
			return false;
		for (unsigned i = 0; i < nr; i++) {
			uint16_t v = ld16(b, n, d + 2 + 2 * i);
			cpus_add(c, v == 0xffff ? -1 : v);
		}
		return true;
	}
	case 1: { /* PERF_CPU_MAP__MASK: nr, long_size, words (after 4 bytes of padding
		   * when they are 64-bit) */
		uint16_t nr = ld16(b, n, d), ls = ld16(b, n, d + 2);
		size_t w = ls == 4 ? d + 4 : d + 8;
		if (n - d < 4 || (ls != 4 && ls != 8) || w > n || (n - w) / ls < nr)
			return false;
		for (unsigned i = 0; i < nr; i++) {
			uint64_t m = ls == 4 ? ld32(b, n, w + 4 * i) : ld64(b, n, w + 8 * i);
			for (unsigned bit = 0; bit < 8u * ls; bit++)
				if (m >> bit & 1)
					cpus_add(c, (int)(i * 8u * ls + bit));
		}
		return true;
	}
	case 2: { /* PERF_CPU_MAP__RANGE_CPUS: any_cpu u8, pad u8, start u16, end u16 */
		if (n - d < 6)
			return false;
		uint16_t start = ld16(b, n, d + 2), end = ld16(b, n, d + 4);
		if (end < start)
			return false;
		if (b[d])
			cpus_add(c, -1);
		for (unsigned v = start; v <= end; v++)
			cpus_add(c, (int)v);
		return true;
	}
	default:
		return false;
	}
}

/* perf's cpu_map__snprint into its 1 KiB buffer: runs of consecutive CPUs as "a-b" */
static void cpus_print(const struct cpus *c, tool_printf_fn pf, void *ctx)
{
	char buf[1024];
	size_t len = 0;
	buf[0] = 0;
	if (!c->nr) {
		pf(ctx, "-1\n");
		return;
	}
	for (unsigned s = 0, i; s < c->nr; s = i) {
		for (i = s + 1; i < c->nr && (long)c->cpu[i] - c->cpu[s] == (long)(i - s); i++)
			;
		int w = i - 1 == s ? snprintf(buf + len, sizeof(buf) - len, "%s%d", s ? "," : "", c->cpu[s])
				   : snprintf(buf + len, sizeof(buf) - len, "%s%d-%d", s ? "," : "",
					      c->cpu[s], c->cpu[i - 1]);
		if (w < 0 || (size_t)w >= sizeof(buf) - len)
			break;
		len += (size_t)w;
	}
	pf(ctx, "%s\n", buf);
}

/* a NUL-terminated string at off, within the record; "" when there is none */
static const char *rec_str(const uint8_t *b, size_t n, size_t off, int *len)
{
	if (off >= n) {
		*len = 0;
		return "";
	}
	*len = (int)strnlen((const char *)b + off, n - off);
	return (const char *)b + off;
}

void tool_user_record_tail_text(const struct perf_event_header *h, tool_printf_fn pf, void *ctx)
{
	const uint8_t *b = (const uint8_t *)h;
	size_t n = h->size;
	int l;
	const char *s;

	switch (h->type) {
	case PK_RECORD_HEADER_ATTR:
	case PK_RECORD_HEADER_EVENT_TYPE:
	case PK_RECORD_HEADER_BUILD_ID:
	case PK_RECORD_HEADER_TRACING_DATA:
	case PK_RECORD_HEADER_FEATURE:
	case PK_RECORD_COMPRESSED:
		return; /* perf prints nothing more, not even the end of the line */
	case PK_RECORD_FINISHED_ROUND:
		pf(ctx, "\n");
		return;
	case PK_RECORD_AUXTRACE_ERROR:
	case PK_RECORD_FINISHED_INIT:
		pf(ctx, ": unhandled!\n");
		return;
	case PK_RECORD_ID_INDEX: {
		/* nr, {id, idx, cpu, tid}[nr], then optionally {machine_pid, vcpu}[nr] */
		uint64_t nr = ld64(b, n, 8);
		size_t body = n >= 16 ? n - 16 : 0;
		if (n < 16 || nr > body / 32) {
			pf(ctx, "Too big: nr %" PRIu64 " max_nr %zu\n", nr, body / 32);
			return;
		}
		bool e2 = body >= nr * 48;
		pf(ctx, " nr: %" PRIu64 "\n", nr);
		for (uint64_t i = 0; i < nr; i++) {
			size_t e = 16 + (size_t)i * 32;
			pf(ctx, " ... id: %" PRIu64 "  idx: %" PRIu64 "  cpu: %" PRId64 "  tid: %" PRId64,
			   ld64(b, n, e), ld64(b, n, e + 8), (int64_t)ld64(b, n, e + 16),
			   (int64_t)ld64(b, n, e + 24));
			if (e2) {
				size_t f = 16 + (size_t)nr * 32 + (size_t)i * 16;
				pf(ctx, "  machine_pid: %" PRId64 "  vcpu: %" PRIu64 "\n",
				   (int64_t)ld64(b, n, f), ld64(b, n, f + 8));
			} else {
				pf(ctx, "\n");
			}
		}
		return;
	}
	case PK_RECORD_AUXTRACE_INFO:
		pf(ctx, " type: %u\n", ld32(b, n, 8));
		return;
	case PK_RECORD_AUXTRACE:
		pf(ctx, " size: %#" PRIx64 "  offset: %#" PRIx64 "  ref: %#" PRIx64
			"  idx: %u  tid: %d  cpu: %d\n",
		   ld64(b, n, 8), ld64(b, n, 16), ld64(b, n, 24), ld32(b, n, 32),
		   (int32_t)ld32(b, n, 36), (int32_t)ld32(b, n, 40));
		return;
	case PK_RECORD_THREAD_MAP: {
		/* nr, {pid u64, comm[16]}[nr] */
		uint64_t nr = ld64(b, n, 8);
		if (n < 16 || nr > (n - 16) / 24) {
			pf(ctx, " nr: failed to get threads from event\n: unhandled!\n");
			return;
		}
		pf(ctx, " nr: %d thread%s: ", (int)nr, nr > 1 ? "s" : "");
		for (uint64_t i = 0; i < nr; i++)
			pf(ctx, "%s%d", i ? ", " : "", (int32_t)ld64(b, n, 16 + (size_t)i * 24));
		pf(ctx, "\n: unhandled!\n");
		return;
	}
	case PK_RECORD_CPU_MAP: {
		static struct cpus c; /* 16 KiB: not on the stack (the tool is single-threaded) */
		c.nr = 0;
		c.over = false;
		pf(ctx, ": ");
		if (cpu_map_data(b, n, 8, &c))
			cpus_print(&c, pf, ctx);
		else
			pf(ctx, "failed to get cpumap from event\n");
		pf(ctx, ": unhandled!\n");
		return;
	}
	case PK_RECORD_STAT_CONFIG: {
		/* nr, {tag, val}[nr]: tags 0 aggr_mode, 1 interval, 2 scale */
		uint64_t nr = ld64(b, n, 8), v[3] = { 0, 0, 0 };
		for (uint64_t i = 0; n >= 16 && i < nr && i < (n - 16) / 16; i++) {
			uint64_t tag = ld64(b, n, 16 + (size_t)i * 16);
			if (tag < 3)
				v[tag] = ld64(b, n, 24 + (size_t)i * 16);
		}
		pf(ctx, "\n... aggr_mode %d\n... scale     %d\n... interval  %u\n: unhandled!\n",
		   (int)v[0], (int)(v[2] != 0), (unsigned)v[1]);
		return;
	}
	case PK_RECORD_STAT:
		/* id, cpu u32, thread u32, val, ena, run */
		pf(ctx, "\n... id %" PRIu64 ", cpu %d, thread %d\n", ld64(b, n, 8),
		   (int32_t)ld32(b, n, 16), (int32_t)ld32(b, n, 20));
		pf(ctx, "... value %" PRIu64 ", enabled %" PRIu64 ", running %" PRIu64 "\n: unhandled!\n",
		   ld64(b, n, 24), ld64(b, n, 32), ld64(b, n, 40));
		return;
	case PK_RECORD_STAT_ROUND:
		/* type (1: final), time */
		pf(ctx, "\n... time %" PRIu64 ", type %s\n: unhandled!\n", ld64(b, n, 16),
		   ld64(b, n, 8) == 1 ? "FINAL" : "INTERVAL");
		return;
	case PK_RECORD_EVENT_UPDATE: {
		/* type (0 unit, 1 scale, 2 name, 3 cpus), id, then the value */
		pf(ctx, "\n... id:    %" PRIu64 "\n", ld64(b, n, 16));
		switch (ld64(b, n, 8)) {
		case 0:
			s = rec_str(b, n, 24, &l);
			pf(ctx, "... unit:  %.*s\n", l, s);
			break;
		case 1: {
			uint64_t u = ld64(b, n, 24);
			double d;
			memcpy(&d, &u, sizeof(d));
			pf(ctx, "... scale: %f\n", d);
			break;
		}
		case 2:
			s = rec_str(b, n, 24, &l);
			pf(ctx, "... name:  %.*s\n", l, s);
			break;
		case 3: {
			static struct cpus c;
			c.nr = 0;
			c.over = false;
			pf(ctx, "... ");
			if (cpu_map_data(b, n, 24, &c))
				cpus_print(&c, pf, ctx);
			else
				pf(ctx, "failed to get cpus\n");
			break;
		}
		default:
			pf(ctx, "... unknown type\n");
		}
		return;
	}
	case PK_RECORD_TIME_CONV:
		pf(ctx, "\n... Time Shift      %" PRIu64 "\n", ld64(b, n, 8));
		pf(ctx, "... Time Muliplier  %" PRIu64 "\n", ld64(b, n, 16)); /* perf's spelling */
		pf(ctx, "... Time Zero       %" PRIu64 "\n", ld64(b, n, 24));
		if (n >= 40) { /* the fields a newer perf added (perf reads time_mask even at 40) */
			pf(ctx, "... Time Cycles     %" PRIu64 "\n", ld64(b, n, 32));
			pf(ctx, "... Time Mask       %#" PRIx64 "\n", ld64(b, n, 40));
			pf(ctx, "... Cap Time Zero   %d\n", n > 48 ? b[48] : 0);
			pf(ctx, "... Cap Time Short  %d\n", n > 49 ? b[49] : 0);
		}
		pf(ctx, ": unhandled!\n");
		return;
	default:
		pf(ctx, "\n");
	}
}
