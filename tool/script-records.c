/* SPDX-License-Identifier: MIT */
/* tool/script-records.c - perfkit script: the non-sample records (-a, --show-switch-events),
 * as text or JSON */
#include <stddef.h>
#include "script.h"

/* ---- other records ---- */

static void print_sid(struct obuf *f, const struct pk_record *r, bool json)
{
	if (!r->has_sid)
		return;
	if (json) {
		if (r->sid.type & PERF_SAMPLE_TID)
			ob_printf(f, ",\"sample_pid\":%d,\"sample_tid\":%d", (int32_t)r->sid.pid,
				  (int32_t)r->sid.tid);
		if (r->sid.type & PERF_SAMPLE_TIME)
			json_u64(f, "time", r->sid.time);
		if (r->sid.type & PERF_SAMPLE_CPU)
			json_u64(f, "cpu", r->sid.cpu);
		if (r->sid.type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
			json_u64(f, "id", r->sid.id);
	} else if (r->sid.type & PERF_SAMPLE_TIME) {
		ob_printf(f, " %5" PRIu64 ".%06" PRIu64 ":", r->sid.time / (uint64_t)1000000000,
			(r->sid.time % (uint64_t)1000000000) / 1000);
	}
}

/*
 * The fields of a record, as text (" key=value", a true flag as " key", a false one not
 * at all) or as JSON members (",\"key\":value"). Each record type has a table of its
 * fields: how to print each one and where it is in struct pk_record; unsigned fields of
 * any width are read by their size.
 */
enum kv_kind { KV_U64, KV_PID, KV_HEX, KV_STR, KV_BOOL };

struct kv_field {
	const char *key;        /* NULL ends a table */
	uint8_t kind;           /* enum kv_kind */
	uint8_t size;           /* of the member: 1, 2, 4 or 8 bytes */
	uint16_t off;           /* of the member in struct pk_record */
};

#define KV(kind, key, m) { key, kind, sizeof(((const struct pk_record *)0)->m), \
			   offsetof(struct pk_record, m) }
#define KV_END { NULL, 0, 0, 0 }
#define KV_MAX 8 /* the most fields of a record type (a table may fill them all) */

/* the fields of each record type (FORK's are EXIT's, UNTHROTTLE's THROTTLE's; MMAP2's
 * first ones only, see print_mmap2) */
static const struct kv_field kv_of_type[][KV_MAX] = {
	[PERF_RECORD_MMAP] = {
		KV(KV_PID, "pid", mmap.pid), KV(KV_PID, "tid", mmap.tid),
		KV(KV_HEX, "addr", mmap.addr), KV(KV_HEX, "len", mmap.len),
		KV(KV_HEX, "pgoff", mmap.pgoff), KV(KV_BOOL, "data", mmap.data),
		KV(KV_STR, "filename", mmap.filename) },
	[PERF_RECORD_LOST] = { KV(KV_U64, "id", lost.id), KV(KV_U64, "lost", lost.lost) },
	[PERF_RECORD_COMM] = {
		KV(KV_PID, "pid", comm.pid), KV(KV_PID, "tid", comm.tid),
		KV(KV_STR, "comm", comm.comm), KV(KV_BOOL, "exec", comm.exec) },
	[PERF_RECORD_EXIT] = {
		KV(KV_PID, "pid", task.pid), KV(KV_PID, "ppid", task.ppid),
		KV(KV_PID, "tid", task.tid), KV(KV_PID, "ptid", task.ptid),
		KV(KV_U64, "task_time", task.time) },
	[PERF_RECORD_THROTTLE] = {
		KV(KV_U64, "throttle_time", throttle.time), KV(KV_U64, "event_id", throttle.id),
		KV(KV_U64, "stream_id", throttle.stream_id) },
	[PERF_RECORD_READ] = {
		KV(KV_PID, "pid", read.pid), KV(KV_PID, "tid", read.tid), KV(KV_U64, "nr", read.nr) },
	[PERF_RECORD_MMAP2] = {
		KV(KV_PID, "pid", mmap2.pid), KV(KV_PID, "tid", mmap2.tid),
		KV(KV_HEX, "addr", mmap2.addr), KV(KV_HEX, "len", mmap2.len),
		KV(KV_HEX, "pgoff", mmap2.pgoff) },
	[PERF_RECORD_AUX] = {
		KV(KV_U64, "aux_offset", aux.aux_offset), KV(KV_U64, "aux_size", aux.aux_size),
		KV(KV_HEX, "flags", aux.flags) },
	[PERF_RECORD_ITRACE_START] = {
		KV(KV_PID, "pid", itrace_start.pid), KV(KV_PID, "tid", itrace_start.tid) },
	[PERF_RECORD_LOST_SAMPLES] = { KV(KV_U64, "lost", lost_samples.lost) },
	[PERF_RECORD_SWITCH] = { KV(KV_BOOL, "out", sw.out), KV(KV_BOOL, "preempt", sw.preempt) },
	[PERF_RECORD_SWITCH_CPU_WIDE] = {
		KV(KV_BOOL, "out", sw.out), KV(KV_BOOL, "preempt", sw.preempt),
		KV(KV_U64, "next_prev_pid", sw.next_prev_pid),
		KV(KV_U64, "next_prev_tid", sw.next_prev_tid) },
	[PERF_RECORD_NAMESPACES] = {
		KV(KV_PID, "pid", namespaces.pid), KV(KV_PID, "tid", namespaces.tid),
		KV(KV_U64, "nr_namespaces", namespaces.nr) },
	[PERF_RECORD_KSYMBOL] = {
		KV(KV_HEX, "addr", ksymbol.addr), KV(KV_U64, "len", ksymbol.len),
		KV(KV_U64, "ksym_type", ksymbol.ksym_type),
		KV(KV_BOOL, "unregister", ksymbol.unregister), KV(KV_STR, "name", ksymbol.name) },
	[PERF_RECORD_BPF_EVENT] = {
		KV(KV_U64, "bpf_type", bpf_event.type), KV(KV_U64, "bpf_id", bpf_event.id) },
	[PERF_RECORD_CGROUP] = { KV(KV_U64, "cgroup_id", cgroup.id), KV(KV_STR, "path", cgroup.path) },
	[PERF_RECORD_TEXT_POKE] = {
		KV(KV_HEX, "addr", text_poke.addr), KV(KV_U64, "old_len", text_poke.old_len),
		KV(KV_U64, "new_len", text_poke.new_len) },
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = { KV(KV_U64, "hw_id", aux_output_hw_id.hw_id) },
};

/* MMAP2: the fields after the file's identity, when it is an inode, and after either */
static const struct kv_field kv_mmap2_inode[] = {
	KV(KV_U64, "maj", mmap2.maj), KV(KV_U64, "min", mmap2.min), KV(KV_U64, "ino", mmap2.ino),
	KV_END,
};
static const struct kv_field kv_mmap2_tail[] = {
	KV(KV_U64, "prot", mmap2.prot), KV(KV_U64, "flags", mmap2.flags),
	KV(KV_BOOL, "data", mmap2.data), KV(KV_STR, "filename", mmap2.filename), KV_END,
};

static void kv_str(struct script *s, const char *k, const char *v)
{
	if (s->json) {
		ob_printf(&s->ob, ",\"%s\":", k);
		ob_json_str(&s->ob, v);
	} else {
		ob_printf(&s->ob, " %s=%s", k, v);
	}
}

/* an unsigned member of 1, 2, 4 or 8 bytes */
static uint64_t kv_load(const void *p, unsigned int size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64 = 0;
	switch (size) {
	case 1: memcpy(&u8, p, 1); return u8;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	case 8: memcpy(&u64, p, 8); return u64;
	}
	return 0;
}

static void kv_print(struct script *s, const struct pk_record *r, const struct kv_field *f)
{
	struct obuf *o = &s->ob;
	for (const struct kv_field *end = f + KV_MAX; f && f < end && f->key; f++) {
		const char *m = (const char *)r + f->off;
		if (f->kind == KV_STR) {
			const char *v;
			memcpy(&v, m, sizeof(v));
			kv_str(s, f->key, v);
			continue;
		}
		uint64_t v = kv_load(m, f->size);
		if (f->kind == KV_BOOL && !s->json) {
			if (v)
				ob_printf(o, " %s", f->key);
			continue;
		}
		ob_printf(o, s->json ? ",\"%s\":" : " %s=", f->key);
		if (f->kind == KV_BOOL)
			ob_puts(o, v ? "true" : "false");
		else if (f->kind == KV_PID)
			ob_printf(o, "%d", (int32_t)v);
		else if (f->kind == KV_HEX)
			ob_printf(o, s->json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, v);
		else
			ob_printf(o, "%" PRIu64, v);
	}
}

/* MMAP2's fields: the file is named by a build-id or by its inode, as the record has it */
static void print_mmap2(struct script *s, const struct pk_record *r)
{
	kv_print(s, r, kv_of_type[PERF_RECORD_MMAP2]);
	if (r->mmap2.has_build_id) {
		char hex[2 * 20 + 1];
		for (unsigned i = 0; i < r->mmap2.build_id_size && i < 20; i++)
			snprintf(hex + 2 * i, 3, "%02x", r->mmap2.build_id[i]);
		hex[2 * (r->mmap2.build_id_size < 20 ? r->mmap2.build_id_size : 20)] = 0;
		kv_str(s, "build_id", hex);
	} else {
		kv_print(s, r, kv_mmap2_inode);
	}
	kv_print(s, r, kv_mmap2_tail);
}

/*
 * A context switch record as perf script --show-switch-events prints it: the start of a
 * sample line (comm and tid of the task switching, cpu, time: from the record's
 * sample_id trailer, fields as for the event's samples), then "PERF_RECORD_SWITCH IN"
 * or "OUT" or "OUT preempt", padded to 11 columns, and for a CPU-wide record the task
 * switched to or from ("next pid/tid: 1234/1234 ").
 */
/* The start of a sample line for a record (comm and tid of its sample_id trailer, cpu,
 * time: fields as for the event's samples), in room for 192 bytes */
/* The fields of a side-band record's line (from its sample_id trailer) and whether the
 * event's sample lines carry a call chain (*chain: the comm is then as wide as there). */
static unsigned int side_fields(struct script *s, const struct pk_data_attr *a,
				const struct pk_record *r, bool *chain)
{
	unsigned int user;
	unsigned int F = sample_fields(s, a, r->has_sid ? r->sid.type : 0, &user);
	*chain = a && !s->hide_cg &&
		 (sample_fields(s, a, a->attr.attr.sample_type, &user) & SF_IP) &&
		 (a->attr.attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER));
	return F;
}

static char *put_rec_start(struct script *s, const struct pk_data_attr *a,
			   const struct pk_record *r)
{
	bool chain;
	unsigned int F = side_fields(s, a, r, &chain);
	char *p = ob_room(&s->ob, 192);
	return put_start(s, p, F, chain, r->sid.pid, r->sid.tid, r->sid.cpu, r->sid.time);
}

/* LOST as perf script --show-lost-events prints it: a sample line's start, then the
 * number of events lost */
void print_lost(struct script *s, const struct pk_data_attr *a, const struct pk_record *r)
{
	char *p = put_rec_start(s, a, r);
	s->ob.len = (size_t)(p - s->ob.buf);
	ob_printf(&s->ob, "PERF_RECORD_LOST lost %" PRIu64 "\n", r->lost.lost);
}

void print_switch(struct script *s, const struct pk_data_attr *a, const struct pk_record *r)
{
	char *p = put_rec_start(s, a, r);
	p = r->type == PERF_RECORD_SWITCH ? PUT(p, "PERF_RECORD_SWITCH ")
					  : PUT(p, "PERF_RECORD_SWITCH_CPU_WIDE ");
	p = !r->sw.out ? PUT(p, "IN         ") : r->sw.preempt ? PUT(p, "OUT preempt")
							  : PUT(p, "OUT        ");
	if (r->type == PERF_RECORD_SWITCH_CPU_WIDE) {
		p = r->sw.out ? PUT(p, "  next pid/tid: ") : PUT(p, "  prev pid/tid: ");
		p = fmt_pid_pad(p, r->sw.next_prev_pid, 5);
		*p++ = '/';
		char *q = p;
		p = fmt_pid_pad(p, r->sw.next_prev_tid, 0);
		while (p - q < 5)
			*p++ = ' ';
	}
	*p++ = '\n';
	s->ob.len = (size_t)(p - s->ob.buf);
}

void print_record(struct script *s, const struct pk_record *r)
{
	struct obuf *f = &s->ob;
	const char *tname = pk_record_type__name(r->type);
	char tb[32];

	if (!tname) {
		snprintf(tb, sizeof(tb), "%u", r->type);
		tname = tb;
	}
	if (s->json) {
		ob_printf(f, "{\"type\":\"%s\"", tname);
	} else {
		ob_printf(f, "%16s", "");
		print_sid(f, r, false);
		ob_printf(f, " PERF_RECORD_%s", tname);
	}
	uint32_t t = r->type == PERF_RECORD_FORK ? PERF_RECORD_EXIT
		     : r->type == PERF_RECORD_UNTHROTTLE ? PERF_RECORD_THROTTLE : r->type;
	if (t == PERF_RECORD_MMAP2)
		print_mmap2(s, r);
	else if (t < sizeof(kv_of_type) / sizeof(kv_of_type[0]))
		kv_print(s, r, kv_of_type[t]);
	if (s->json) {
		print_sid(f, r, true);
		ob_puts(f, "}\n");
	} else {
		ob_putc(f, '\n');
	}
}

void print_user_record(struct script *s, const struct pk_data_event *ev)
{
	const char *name = user_record_name(ev->hdr->type);
	if (s->json) {
		if (name)
			ob_printf(&s->ob, "{\"type\":\"%s\"", name);
		else
			ob_printf(&s->ob, "{\"type\":\"%u\"", ev->hdr->type);
		json_u64(&s->ob, "size", ev->hdr->size);
		ob_puts(&s->ob, "}\n");
	} else {
		if (name)
			ob_printf(&s->ob, "%16s PERF_RECORD_%s size=%u\n", "", name, ev->hdr->size);
		else
			ob_printf(&s->ob, "%16s PERF_RECORD_%u size=%u\n", "", ev->hdr->type, ev->hdr->size);
	}
}

/* records that change the machine model, and with it the symbols of cached frames */

/* tool_side_record_text's printf into the script's buffer */
static void ob_pf(void *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ob_vprintf(ctx, fmt, ap);
	va_end(ap);
}

/*
 * COMM, FORK, EXIT, MMAP and MMAP2 as perf script --show-task-events/--show-mmap-events
 * print them: the start of a sample line (the comm of the record's own thread, the
 * pid/tid, cpu and time of its sample_id trailer), then perf's text of the record.
 */
void print_side(struct script *s, const struct pk_data_attr *a, const struct pk_record *r)
{
	bool chain;
	unsigned int F = side_fields(s, a, r, &chain);
	uint32_t tid = r->type == PERF_RECORD_COMM ? r->comm.tid
		       : r->type == PERF_RECORD_MMAP ? r->mmap.tid
		       : r->type == PERF_RECORD_MMAP2 ? r->mmap2.tid
		       : r->type == PERF_RECORD_NAMESPACES ? r->namespaces.tid
		       : r->type == PERF_RECORD_EXIT || r->type == PERF_RECORD_FORK ? r->task.tid
		       : r->sid.tid; /* CGROUP, KSYMBOL, BPF_EVENT, TEXT_POKE: the trailer's */
	struct obuf *o = &s->ob;
	char *p = ob_room(o, 96);

	if (F & SF_COMM) {
		const char *c = comm_of(s, tid);
		p = fmt_str_pad(p, c, strnlen(c, 16), chain ? 0 : 16);
		*p++ = ' ';
	}
	p = put_start(s, p, F & ~SF_COMM, chain, r->sid.pid, r->sid.tid, r->sid.cpu, r->sid.time);
	o->len = (size_t)(p - o->buf);
	if (tool_side_record_text(r, ob_pf, o))
		return;
	/* NAMESPACES, CGROUP, KSYMBOL, BPF_EVENT, TEXT_POKE: perf's name and text */
	ob_printf(o, "PERF_RECORD_%s", pk_record_type__name(r->type));
	if (!tool_record_tail_text(r, a, s->m, ob_pf, o))
		ob_putc(o, '\n');
}
