/* SPDX-License-Identifier: MIT */
/* tool/script-records.c - perfkit script: the non-sample records (-a, --show-switch-events),
 * as text or JSON */
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

/* key/value output shared by text and JSON */
static void kv_u64(struct script *s, const char *k, uint64_t v)
{
	if (s->json)
		json_u64(&s->ob, k, v);
	else
		ob_printf(&s->ob, " %s=%" PRIu64, k, v);
}

static void kv_pid(struct script *s, const char *k, uint32_t v)
{
	if (s->json)
		ob_printf(&s->ob, ",\"%s\":%d", k, (int32_t)v);
	else
		ob_printf(&s->ob, " %s=%d", k, (int32_t)v);
}

static void kv_hex(struct script *s, const char *k, uint64_t v)
{
	if (s->json)
		json_hex(&s->ob, k, v, true);
	else
		ob_printf(&s->ob, " %s=0x%" PRIx64, k, v);
}

static void kv_str(struct script *s, const char *k, const char *v)
{
	if (s->json) {
		ob_printf(&s->ob, ",\"%s\":", k);
		ob_json_str(&s->ob, v);
	} else {
		ob_printf(&s->ob, " %s=%s", k, v);
	}
}

static void kv_bool(struct script *s, const char *k, bool v)
{
	if (s->json)
		ob_printf(&s->ob, ",\"%s\":%s", k, v ? "true" : "false");
	else if (v)
		ob_printf(&s->ob, " %s", k);
}

/*
 * A context switch record as perf script --show-switch-events prints it: the start of a
 * sample line (comm and tid of the task switching, cpu, time: from the record's
 * sample_id trailer, fields as for the event's samples), then "PERF_RECORD_SWITCH IN"
 * or "OUT" or "OUT preempt", padded to 11 columns, and for a CPU-wide record the task
 * switched to or from ("next pid/tid: 1234/1234 ").
 */
void print_switch(struct script *s, const struct pk_data_attr *a, const struct pk_record *r)
{
	unsigned int user;
	uint64_t st = r->has_sid ? r->sid.type : 0;
	unsigned int F = sample_fields(s, a, st, &user);
	/* the comm is as wide as on the event's sample lines */
	bool chain = a && !s->hide_cg &&
		     (sample_fields(s, a, a->attr.attr.sample_type, &user) & SF_IP) &&
		     (a->attr.attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER));
	char *p = ob_room(&s->ob, 192);
	p = put_start(s, p, F, chain, r->sid.pid, r->sid.tid, r->sid.cpu, r->sid.time);
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
