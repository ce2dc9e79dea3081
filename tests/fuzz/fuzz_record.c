/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the record decoder and the ring reader.
 *
 * Input: an 8-byte configuration, then a stream of records.
 *   [0..3] sample_type (low 25 bits; WEIGHT is dropped when WEIGHT_STRUCT is also set)
 *   [4]    read_format (low 5 bits)
 *   [5]    bit0 sample_id_all, bit1 branch HW_INDEX, bit2 branch COUNTERS,
 *          bit3 read the ring in BACKWARD mode, bits4-7 data_tail (forward) or extra
 *          backward distance, in units of 8 bytes
 *   [6]    sample_regs_user (registers 0..7)
 *   [7]    sample_regs_intr (registers 0..7)
 * The stream is decoded record by record (each copied to a buffer of exactly
 * header.size bytes so that ASan catches any read past it), also by the fixed-fields-only
 * decode of a session's sample_prefix (which must agree with the full decode wherever
 * that succeeds), then the same bytes are placed in a synthetic ring buffer and read
 * through pk_ring.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "internal.h"

static volatile uint64_t sink;

static void touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += b[i];
	sink += s;
}

static void use_sample(const struct pk_sample_layout *l, const struct pk_sample *s)
{
	if (s->read.data) {
		struct pk_count_value v[8];
		touch(s->read.data, s->read.size);
		(void)pk_sample__read_values(l, s, v, 8);
	}
	for (uint64_t i = 0; i < s->callchain.nr; i++)
		sink += pk_callchain__context(s->callchain.ips[i]);
	if (s->raw.data)
		touch(s->raw.data, s->raw.size);
	for (uint64_t i = 0; i < s->branch.nr; i++) {
		struct pk_branch_flags f = pk_branch__flags(s->branch.entries[i].flags);
		sink += s->branch.entries[i].from + f.cycles;
		if (s->branch.counters)
			sink += s->branch.counters[i];
	}
	for (uint32_t i = 0; i < s->regs_user.nr; i++)
		sink += s->regs_user.regs[i];
	for (uint32_t i = 0; i < s->regs_intr.nr; i++)
		sink += s->regs_intr.regs[i];
	if (s->stack_user.data)
		touch(s->stack_user.data, s->stack_user.size);
	if (s->aux.data)
		touch(s->aux.data, s->aux.size);
}

/* pk_record_decode_sample_prefix: fresh and "again" decodes alike; the fixed fields as
 * the full decode `full` gives them (when it succeeded) */
static struct pk_record prev;
static bool prev_ok; /* prev: a prefix decode of a sample of this input's layout */

static void check_prefix(const struct pk_sample_layout *l, const struct perf_event_header *h,
			 const struct pk_record *full, bool full_ok)
{
	struct pk_record p;
	int err = pk_record_decode_sample_prefix(l, h, &p, false);
	if (h->type == PERF_RECORD_SAMPLE && prev_ok) {
		/* over the last prefix decode of a sample of this layout */
		int e2 = pk_record_decode_sample_prefix(l, h, &prev, true);
		if (e2 != err || (!err && memcmp(&prev, &p, sizeof(p))))
			abort();
	}
	prev = p;
	prev_ok = !err && h->type == PERF_RECORD_SAMPLE;
	if (!full_ok || full->type != PERF_RECORD_SAMPLE)
		return;
	const struct pk_sample *a = &full->sample, *b = &p.sample;
	if (err || a->ip != b->ip || a->pid != b->pid || a->tid != b->tid ||
	    a->time != b->time || a->id != b->id || a->addr != b->addr ||
	    a->stream_id != b->stream_id || a->cpu != b->cpu || a->period != b->period ||
	    a->cpumode != b->cpumode || b->callchain.nr || b->stack_user.size)
		abort();
}

static void use_record(const struct pk_sample_layout *l, const struct perf_event_header *h)
{
	struct pk_record r;
	const char *bad = NULL;
	uint64_t id;
	struct pk_sample_id sid;

	(void)pk_sample_layout__record_id(l, h, &id);
	(void)pk_record__sample_id(l, h, &sid);
	sink += pk_record_type__name(h->type) != NULL;
	int derr = pk_record__decode(l, h, &r, &bad);
	check_prefix(l, h, &r, derr == 0);
	if (derr != 0)
		return;
	switch (r.type) {
	case PERF_RECORD_SAMPLE:
		use_sample(l, &r.sample);
		break;
	case PERF_RECORD_MMAP:
		sink += strlen(r.mmap.filename);
		break;
	case PERF_RECORD_MMAP2:
		sink += strlen(r.mmap2.filename);
		if (r.mmap2.has_build_id)
			touch(r.mmap2.build_id, 20);
		break;
	case PERF_RECORD_COMM:
		sink += strlen(r.comm.comm);
		break;
	case PERF_RECORD_KSYMBOL:
		sink += strlen(r.ksymbol.name);
		break;
	case PERF_RECORD_CGROUP:
		sink += strlen(r.cgroup.path);
		break;
	case PERF_RECORD_READ: {
		struct pk_count_value v[8];
		(void)pk_read_format__decode(l->read_format, r.read.values, r.read.size, v, 8, NULL);
		break;
	}
	case PERF_RECORD_NAMESPACES:
		touch(r.namespaces.ns, r.namespaces.nr * sizeof(struct pk_ns_link));
		break;
	case PERF_RECORD_TEXT_POKE:
		touch(r.text_poke.old_bytes, r.text_poke.old_len);
		touch(r.text_poke.new_bytes, r.text_poke.new_len);
		break;
	case PERF_RECORD_BPF_EVENT:
		touch(r.bpf_event.tag, 8);
		break;
	case PK_RECORD_CALLCHAIN_DEFERRED:
		touch(r.callchain_deferred.ips, r.callchain_deferred.nr * 8);
		break;
	default:
		break;
	}
}

static void run_ring(const struct pk_sample_layout *l, const uint8_t *data, size_t len,
		     uint8_t flags)
{
	size_t dsz = 64;
	while (dsz < len && dsz < 65536)
		dsz <<= 1;
	if (len > dsz)
		len = dsz;
	uint8_t *mem = aligned_alloc(64, 4096 + dsz); /* dsz >= 64: a multiple */
	if (!mem)
		return;
	memset(mem, 0, 4096 + dsz);
	memcpy(mem + 4096, data, len);
	struct perf_event_mmap_page *pc = (void *)mem;
	pc->data_offset = 4096;
	pc->data_size = dsz;
	unsigned rflags = 0;
	if (flags & 8) {
		rflags = PK_RING_BACKWARD;
		/* the newest record at offset 0; the whole area (or, with a non-zero
		 * shift, more than it, which makes the reader walk the records) written
		 * backward from head 0 */
		pc->data_head = (uint64_t)0 - dsz - (uint64_t)(flags >> 4) * 8;
	} else {
		uint64_t tail = (uint64_t)(flags >> 4) * 8;
		pc->data_tail = tail;
		pc->data_head = tail + len;
	}
	struct pk_ring *r = pk_ring__from_memory(mem, 4096 + dsz, rflags);
	if (!r) {
		free(mem);
		return;
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pk_ring__read_init(r) < 0)
			break;
		const struct perf_event_header *h;
		int n = 0;
		while (n++ < 100000 && pk_ring__next(r, &h) == 1)
			use_record(l, h);
		struct pk_ring_chunk c[2];
		int k = pk_ring__chunks(r, c);
		for (int i = 0; i < k; i++)
			touch(c[i].ptr, c[i].len);
		pk_ring__discard(r);
		pk_ring__read_done(r);
	}
	pk_ring__munmap(r);
	free(mem);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	uint32_t st;
	memcpy(&st, data, 4);
	st &= (1u << 25) - 1;
	if ((st & PERF_SAMPLE_WEIGHT) && (st & PERF_SAMPLE_WEIGHT_STRUCT))
		st &= ~(uint32_t)PERF_SAMPLE_WEIGHT;
	a.sample_type = st;
	a.read_format = data[4] & 0x1f;
	a.sample_id_all = data[5] & 1;
	if (data[5] & 2)
		a.branch_sample_type |= PERF_SAMPLE_BRANCH_HW_INDEX;
	if (data[5] & 4)
		a.branch_sample_type |= PK_SAMPLE_BRANCH_COUNTERS;
	a.sample_regs_user = data[6];
	a.sample_regs_intr = data[7];
	struct pk_sample_layout l;
	if (pk_sample_layout__init(&l, &a) != 0)
		return 0;
	prev_ok = false; /* a layout of its own */

	const uint8_t *p = data + 8;
	size_t left = size - 8;
	while (left >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		memcpy(&h, p, sizeof(h));
		/* the decoder's contract: header.size bytes (and the header) are readable */
		if (h.size > left)
			break;
		size_t n = h.size < 8 ? 8 : h.size;
		void *copy = malloc(n);
		if (!copy)
			break;
		memcpy(copy, p, n);
		use_record(&l, copy);
		free(copy);
		if (h.size < 8)
			break;
		p += h.size;
		left -= h.size;
	}
	run_ring(&l, data + 8, size - 8, data[5]);
	return 0;
}
