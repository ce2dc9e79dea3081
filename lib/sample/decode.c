/* SPDX-License-Identifier: MIT */
/*
 * lib/sample/decode.c - PERF_RECORD_SAMPLE and kernel record decoding (record.h).
 *
 * Everything here reads hostile bytes: every field is taken through a cursor that knows
 * the end of the record (or of the body, before the sample_id_all trailer), and every
 * count is checked against the bytes left before it is multiplied.
 */
#include <linux/perf_event.h>
#include "internal.h"
#include <perfkit/record.h>

#define FIXED_SAMPLE_BITS                                                             \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |  \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |    \
	 PERF_SAMPLE_PERIOD)
#define KNOWN_READ_FORMAT                                                              \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | \
	 PERF_FORMAT_GROUP | PERF_FORMAT_LOST)

/* ---------------------------------------------------------------------------------- */

struct cur {
	const uint8_t *base;
	size_t off;
	size_t end;
	const char **bad;
};

static int bad(struct cur *c, const char *field)
{
	if (c->bad)
		*c->bad = field;
	return pk_err(-PK_ERR_FORMAT);
}

static inline bool have(const struct cur *c, size_t n)
{
	return c->off <= c->end && c->end - c->off >= n;
}

static inline uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}
static inline uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
static inline uint16_t ld16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

/* The TAKE macros return -PK_ERR_FORMAT naming `field` when the bytes are not there. */
#define TAKE64(c, dst, field)                              \
	do {                                               \
		if (!have((c), 8))                         \
			return bad((c), (field));          \
		(dst) = ld64((c)->base + (c)->off);        \
		(c)->off += 8;                             \
	} while (0)
#define TAKE32x2(c, a, b, field)                           \
	do {                                               \
		if (!have((c), 8))                         \
			return bad((c), (field));          \
		(a) = ld32((c)->base + (c)->off);          \
		(b) = ld32((c)->base + (c)->off + 4);      \
		(c)->off += 8;                             \
	} while (0)

/* A string field occupying [off, end): must hold a NUL. */
static int take_string(struct cur *c, const char **dst, const char *field)
{
	if (c->off >= c->end)
		return bad(c, field);
	const char *s = (const char *)c->base + c->off;
	if (!memchr(s, 0, c->end - c->off))
		return bad(c, field);
	*dst = s;
	c->off = c->end;
	return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Layout                                                                              */

/* The header and the fixed 8-byte fields IDENTIFIER..PERIOD of sample type `st`. */
static inline uint32_t fixed_size(uint64_t st)
{
	return 8 + 8 * (uint32_t)__builtin_popcountll(st & FIXED_SAMPLE_BITS);
}

PK_API int pk_sample_layout__init(struct pk_sample_layout *l, const struct perf_event_attr *attr)
{
	if (!l || !attr)
		return pk_err(-EINVAL);
	uint64_t st = attr->sample_type;
	if (st & ~(uint64_t)PK_SAMPLE_KNOWN_MASK)
		return pk_err(-EINVAL);
	if ((st & PERF_SAMPLE_WEIGHT) && (st & PERF_SAMPLE_WEIGHT_STRUCT))
		return pk_err(-EINVAL);
	if ((st & PERF_SAMPLE_READ) && (attr->read_format & ~(uint64_t)KNOWN_READ_FORMAT))
		return pk_err(-EINVAL);

	memset(l, 0, sizeof(*l));
	l->sample_type = st;
	l->read_format = attr->read_format;
	l->sample_regs_user = (st & PERF_SAMPLE_REGS_USER) ? attr->sample_regs_user : 0;
	l->sample_regs_intr = (st & PERF_SAMPLE_REGS_INTR) ? attr->sample_regs_intr : 0;
	l->branch_sample_type = (st & PERF_SAMPLE_BRANCH_STACK) ? attr->branch_sample_type : 0;
	l->nr_regs_user = (uint32_t)__builtin_popcountll(l->sample_regs_user);
	l->nr_regs_intr = (uint32_t)__builtin_popcountll(l->sample_regs_intr);
	if (l->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
		l->flags |= PK_LAYOUT_BRANCH_HW_INDEX;
	if (l->branch_sample_type & PK_SAMPLE_BRANCH_COUNTERS)
		l->flags |= PK_LAYOUT_BRANCH_COUNTERS;
	l->sample_id_all = attr->sample_id_all;
	if (l->sample_id_all)
		l->id_size = 8 * (uint32_t)__builtin_popcountll(st & PK_SAMPLE_ID_ALL_MASK);
	l->min_sample_size = fixed_size(st);

	l->id_pos = pk_sample_id_pos(st);
	l->is_pos = l->sample_id_all ? pk_sample_is_pos(st) : -1;
	return 0;
}

/* ---- where the id and the time are (perf_event_open(2), PERF_RECORD_SAMPLE and the
 * sample_id trailer): the one place that computes them ---- */

int pk_sample_id_pos(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
	       !!(st & PERF_SAMPLE_ADDR);
}

int pk_sample_is_pos(uint64_t st)
{
	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
}

PK_API int pk_sample_layout__record_id(const struct pk_sample_layout *l,
				       const struct perf_event_header *rec, uint64_t *id)
{
	if (!l || !rec || !id)
		return pk_err(-EINVAL);
	const uint8_t *p = (const uint8_t *)rec;
	size_t size = rec->size;
	if (size < sizeof(*rec))
		return pk_err(-PK_ERR_FORMAT);
	if (rec->type == PERF_RECORD_SAMPLE) {
		if (l->id_pos < 0)
			return pk_err(-ENOENT);
		size_t at = 8 + 8 * (size_t)l->id_pos;
		if (at + 8 > size)
			return pk_err(-PK_ERR_FORMAT);
		*id = ld64(p + at);
		return 0;
	}
	if (rec->type >= 64 || l->is_pos < 0)
		return pk_err(-ENOENT);
	if (size < 8 + (size_t)l->id_size)
		return pk_err(-PK_ERR_FORMAT);
	*id = ld64(p + size - 8 * (size_t)l->is_pos);
	return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Names and misc                                                                      */

PK_API enum pk_cpumode pk_misc__cpumode(uint16_t misc)
{
	unsigned m = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	return m <= PK_CPUMODE_GUEST_USER ? (enum pk_cpumode)m : PK_CPUMODE_INVALID;
}

PK_API const char *pk_cpumode__name(enum pk_cpumode m)
{
	switch (m) {
	case PK_CPUMODE_UNKNOWN: return "unknown";
	case PK_CPUMODE_KERNEL: return "kernel";
	case PK_CPUMODE_USER: return "user";
	case PK_CPUMODE_HYPERVISOR: return "hypervisor";
	case PK_CPUMODE_GUEST_KERNEL: return "guest-kernel";
	case PK_CPUMODE_GUEST_USER: return "guest-user";
	default: return "invalid";
	}
}

static const char *const record_names[] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PK_RECORD_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
};

PK_API const char *pk_record_type__name(uint32_t type)
{
	return type < PK_ARRAY_SIZE(record_names) ? record_names[type] : NULL;
}

PK_API enum pk_callchain_ctx pk_callchain__context(uint64_t ip)
{
	if (ip < (uint64_t)PERF_CONTEXT_MAX)
		return PK_CTX_NONE;
	switch (ip) {
	case (uint64_t)PERF_CONTEXT_HV: return PK_CTX_HV;
	case (uint64_t)PERF_CONTEXT_KERNEL: return PK_CTX_KERNEL;
	case (uint64_t)PERF_CONTEXT_USER: return PK_CTX_USER;
	case PK_CONTEXT_USER_DEFERRED: return PK_CTX_USER_DEFERRED;
	case (uint64_t)PERF_CONTEXT_GUEST: return PK_CTX_GUEST;
	case (uint64_t)PERF_CONTEXT_GUEST_KERNEL: return PK_CTX_GUEST_KERNEL;
	case (uint64_t)PERF_CONTEXT_GUEST_USER: return PK_CTX_GUEST_USER;
	default: return PK_CTX_UNKNOWN;
	}
}

PK_API const char *pk_callchain_ctx__name(enum pk_callchain_ctx c)
{
	switch (c) {
	case PK_CTX_NONE: return "address";
	case PK_CTX_HV: return "hv";
	case PK_CTX_KERNEL: return "kernel";
	case PK_CTX_USER: return "user";
	case PK_CTX_USER_DEFERRED: return "user-deferred";
	case PK_CTX_GUEST: return "guest";
	case PK_CTX_GUEST_KERNEL: return "guest-kernel";
	case PK_CTX_GUEST_USER: return "guest-user";
	default: return "unknown-context";
	}
}

PK_API struct pk_branch_flags pk_branch__flags(uint64_t f)
{
	struct pk_branch_flags b = {
		.mispred = f & 1,
		.predicted = (f >> 1) & 1,
		.in_tx = (f >> 2) & 1,
		.abort = (f >> 3) & 1,
		.cycles = (f >> 4) & 0xffff,
		.type = (f >> 20) & 0xf,
		.spec = (f >> 24) & 0x3,
		.new_type = (f >> 26) & 0xf,
		.priv = (f >> 30) & 0x7,
	};
	return b;
}

/* ---------------------------------------------------------------------------------- */
/* Samples                                                                             */

static int take_regs(struct cur *c, struct pk_sample_regs *r, uint64_t mask, uint32_t nr,
		     const char *abi_field, const char *regs_field)
{
	TAKE64(c, r->abi, abi_field);
	r->mask = mask;
	if (r->abi == PERF_SAMPLE_REGS_ABI_NONE) {
		r->nr = 0;
		r->regs = NULL;
		return 0;
	}
	if (!have(c, (size_t)nr * 8))
		return bad(c, regs_field);
	r->nr = nr;
	r->regs = (const uint64_t *)(const void *)(c->base + c->off);
	c->off += (size_t)nr * 8;
	return 0;
}

/*
 * The fixed 8-byte fields IDENTIFIER..PERIOD, from `p` (just after the header); returns
 * where the next field starts. The caller has checked the record's size against
 * fixed_size(st), which counts every one of them, so no field needs a check of its own.
 * Fields the layout does not have are left as they are.
 */
static inline const uint8_t *take_fixed(uint64_t st, const uint8_t *p, struct pk_sample *s)
{
	if (st & PERF_SAMPLE_IDENTIFIER) {
		s->id = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_IP) {
		s->ip = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_TID) {
		s->pid = ld32(p);
		s->tid = ld32(p + 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		s->time = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_ADDR) {
		s->addr = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		if (!(st & PERF_SAMPLE_IDENTIFIER))
			s->id = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		s->stream_id = ld64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		s->cpu = ld32(p);
		s->cpu_res = ld32(p + 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		s->period = ld64(p);
		p += 8;
	}
	return p;
}

/*
 * `hw_idx_if_empty`: whether an empty branch stack (nr == 0) carries hw_idx. The kernel
 * omits it when no branch stack was captured at all, but writes it for a captured empty
 * one; the caller tries both.
 * Without `zero`, *s must hold a decode of a sample with the same layout: every field the
 * layout does not set is zero already, and every field it may leave unset is set here.
 */
static int decode_sample(const struct pk_sample_layout *l, const struct perf_event_header *rec,
			 struct pk_sample *s, const char **bad_field, bool hw_idx_if_empty,
			 bool *empty_branch_with_hw_idx, bool zero)
{
	const uint64_t st = l->sample_type;
	struct cur cc = { .base = (const uint8_t *)rec, .off = 8, .end = rec->size, .bad = bad_field };
	struct cur *c = &cc;

	if (zero)
		memset(s, 0, sizeof(*s));
	s->type = st;
	s->misc = rec->misc;
	s->cpumode = (uint8_t)pk_misc__cpumode(rec->misc);
	s->exact_ip = !!(rec->misc & PERF_RECORD_MISC_EXACT_IP);

	/* computed here, not taken from l->min_sample_size: a caller may have filled the
	 * public layout by hand */
	if (rec->size < fixed_size(st))
		return bad(c, "sample size");
	c->off = (size_t)(take_fixed(st, c->base + 8, s) - c->base);
	if (st & PERF_SAMPLE_READ) {
		size_t used = 0;
		int n = pk_read_format__decode(l->read_format, c->base + c->off, c->end - c->off,
					       NULL, 0, &used);
		if (n < 0)
			return bad(c, "read");
		s->read.data = c->base + c->off;
		s->read.size = used;
		s->read.nr = (uint64_t)n;
		c->off += used;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		TAKE64(c, s->callchain.nr, "callchain.nr");
		if (s->callchain.nr > (c->end - c->off) / 8)
			return bad(c, "callchain.ips");
		s->callchain.ips = (const uint64_t *)(const void *)(c->base + c->off);
		c->off += (size_t)s->callchain.nr * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		if (!have(c, 4))
			return bad(c, "raw.size");
		s->raw.size = ld32(c->base + c->off);
		c->off += 4;
		/* the kernel pads so that the u32 and the data end on an 8-byte boundary */
		if (!have(c, s->raw.size) || (4 + (uint64_t)s->raw.size) % 8)
			return bad(c, "raw.data");
		s->raw.data = c->base + c->off;
		c->off += s->raw.size;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		s->branch.hw_idx = 0;
		s->branch.has_hw_idx = false;
		TAKE64(c, s->branch.nr, "branch.nr");
		if ((l->flags & PK_LAYOUT_BRANCH_HW_INDEX) && (s->branch.nr || hw_idx_if_empty)) {
			if (!s->branch.nr && empty_branch_with_hw_idx)
				*empty_branch_with_hw_idx = true;
			TAKE64(c, s->branch.hw_idx, "branch.hw_idx");
			s->branch.has_hw_idx = true;
		}
		if (s->branch.nr > (c->end - c->off) / sizeof(struct pk_branch_entry))
			return bad(c, "branch.entries");
		s->branch.entries = (const struct pk_branch_entry *)(const void *)(c->base + c->off);
		c->off += (size_t)s->branch.nr * sizeof(struct pk_branch_entry);
		if (l->flags & PK_LAYOUT_BRANCH_COUNTERS) {
			if (s->branch.nr > (c->end - c->off) / 8)
				return bad(c, "branch.counters");
			s->branch.counters = (const uint64_t *)(const void *)(c->base + c->off);
			c->off += (size_t)s->branch.nr * 8;
		}
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		int err = take_regs(c, &s->regs_user, l->sample_regs_user, l->nr_regs_user,
				    "regs_user.abi", "regs_user.regs");
		if (err)
			return err;
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		s->stack_user.data = NULL;
		s->stack_user.dyn_size = 0;
		TAKE64(c, s->stack_user.size, "stack_user.size");
		if (s->stack_user.size) {
			if (s->stack_user.size > c->end - c->off || s->stack_user.size % 8)
				return bad(c, "stack_user.data");
			s->stack_user.data = c->base + c->off;
			c->off += s->stack_user.size;
			TAKE64(c, s->stack_user.dyn_size, "stack_user.dyn_size");
			if (s->stack_user.dyn_size > s->stack_user.size)
				return bad(c, "stack_user.dyn_size");
		}
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		TAKE64(c, s->weight, "weight");
		s->weight_struct.var1_dw = (uint32_t)s->weight;
		s->weight_struct.var2_w = (uint16_t)(s->weight >> 32);
		s->weight_struct.var3_w = (uint16_t)(s->weight >> 48);
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		TAKE64(c, s->data_src, "data_src");
	if (st & PERF_SAMPLE_TRANSACTION)
		TAKE64(c, s->transaction, "transaction");
	if (st & PERF_SAMPLE_REGS_INTR) {
		int err = take_regs(c, &s->regs_intr, l->sample_regs_intr, l->nr_regs_intr,
				    "regs_intr.abi", "regs_intr.regs");
		if (err)
			return err;
	}
	if (st & PERF_SAMPLE_PHYS_ADDR)
		TAKE64(c, s->phys_addr, "phys_addr");
	if (st & PERF_SAMPLE_CGROUP)
		TAKE64(c, s->cgroup, "cgroup");
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		TAKE64(c, s->data_page_size, "data_page_size");
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		TAKE64(c, s->code_page_size, "code_page_size");
	if (st & PERF_SAMPLE_AUX) {
		TAKE64(c, s->aux.size, "aux.size");
		if (s->aux.size > c->end - c->off)
			return bad(c, "aux.data");
		s->aux.data = c->base + c->off;
		c->off += s->aux.size;
	}
	if (c->off != c->end)
		return bad(c, "sample size");
	return 0;
}

PK_API int pk_sample__decode(const struct pk_sample_layout *l, const struct perf_event_header *rec,
			     struct pk_sample *out, const char **bad_field)
{
	if (!l || !rec || !out || ((uintptr_t)rec & 7))
		return pk_err(-EINVAL);
	if (rec->type != PERF_RECORD_SAMPLE)
		return pk_err(-EINVAL);
	bool retry = false;
	int err = decode_sample(l, rec, out, bad_field, true, &retry, true);
	/* an empty branch stack with hw_idx that did not fit: try the no-hw_idx form */
	if (err && retry)
		err = decode_sample(l, rec, out, bad_field, false, NULL, true);
	return err;
}

int pk_record_decode_sample_again(const struct pk_sample_layout *l,
				  const struct perf_event_header *rec, struct pk_record *out)
{
	if (rec->type != PERF_RECORD_SAMPLE || rec->size < sizeof(*rec) || ((uintptr_t)rec & 7))
		return pk_record__decode(l, rec, out, NULL);
	out->hdr = rec;
	out->type = rec->type;
	out->misc = rec->misc;
	out->size = rec->size;
	out->cpumode = (uint8_t)pk_misc__cpumode(rec->misc);
	bool retry = false;
	int err = decode_sample(l, rec, &out->sample, NULL, true, &retry, false);
	if (err && retry)
		err = decode_sample(l, rec, &out->sample, NULL, false, NULL, false);
	return err;
}

int pk_record_decode_sample_prefix(const struct pk_sample_layout *l,
				   const struct perf_event_header *rec, struct pk_record *out,
				   bool again)
{
	if (!l || rec->type != PERF_RECORD_SAMPLE || rec->size < sizeof(*rec) ||
	    ((uintptr_t)rec & 7))
		return pk_record__decode(l, rec, out, NULL);
	if (!again)
		memset(out, 0, sizeof(*out));
	out->hdr = rec;
	out->type = rec->type;
	out->misc = rec->misc;
	out->size = rec->size;
	out->cpumode = (uint8_t)pk_misc__cpumode(rec->misc);
	if (rec->size < fixed_size(l->sample_type))
		return pk_err(-PK_ERR_FORMAT);
	struct pk_sample *s = &out->sample;
	s->type = l->sample_type;
	s->misc = rec->misc;
	s->cpumode = out->cpumode;
	s->exact_ip = !!(rec->misc & PERF_RECORD_MISC_EXACT_IP);
	take_fixed(l->sample_type, (const uint8_t *)rec + sizeof(*rec), s);
	return 0;
}

PK_API int pk_sample__read_values(const struct pk_sample_layout *l, const struct pk_sample *s,
				  struct pk_count_value *out, size_t max)
{
	if (!l || !s || !(s->type & PERF_SAMPLE_READ) || !s->read.data)
		return pk_err(-EINVAL);
	return pk_read_format__decode(l->read_format, s->read.data, s->read.size, out, max, NULL);
}

/* ---------------------------------------------------------------------------------- */
/* Records                                                                             */

static void decode_trailer(const struct pk_sample_layout *l, const uint8_t *p,
			   struct pk_sample_id *sid)
{
	const uint64_t st = l->sample_type;
	size_t off = 0;

	memset(sid, 0, sizeof(*sid));
	sid->type = st & PK_SAMPLE_ID_ALL_MASK;
	if (st & PERF_SAMPLE_TID) {
		sid->pid = ld32(p + off);
		sid->tid = ld32(p + off + 4);
		off += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		sid->time = ld64(p + off);
		off += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		sid->id = ld64(p + off);
		off += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = ld64(p + off);
		off += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		sid->cpu = ld32(p + off);
		sid->cpu_res = ld32(p + off + 4);
		off += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		sid->id = ld64(p + off);
}

PK_API int pk_record__sample_id(const struct pk_sample_layout *l, const struct perf_event_header *rec,
				struct pk_sample_id *out)
{
	if (!rec || !out)
		return pk_err(-EINVAL);
	if (rec->type == PERF_RECORD_SAMPLE || rec->type >= 64)
		return pk_err(-EINVAL);
	memset(out, 0, sizeof(*out));
	if (rec->size < 8)
		return pk_err(-PK_ERR_FORMAT);
	if (!l || !l->sample_id_all || !l->id_size)
		return 0;
	if (rec->size < 8 + (size_t)l->id_size)
		return pk_err(-PK_ERR_FORMAT);
	decode_trailer(l, (const uint8_t *)rec + rec->size - l->id_size, out);
	return 0;
}

/* The body (header to trailer) must be exactly `n` bytes including the header. */
#define EXACT(c, n, field)                           \
	do {                                         \
		if ((c)->end != (n))                 \
			return bad((c), (field));    \
	} while (0)

static int decode_body(struct pk_record *r, struct cur *c, const struct pk_sample_layout *l)
{
	const uint8_t *p = c->base;
	uint16_t misc = r->misc;

	switch (r->type) {
	case PERF_RECORD_MMAP: {
		struct pk_rec_mmap *m = &r->mmap;
		TAKE32x2(c, m->pid, m->tid, "mmap.pid");
		TAKE64(c, m->addr, "mmap.addr");
		TAKE64(c, m->len, "mmap.len");
		TAKE64(c, m->pgoff, "mmap.pgoff");
		m->data = !!(misc & PERF_RECORD_MISC_MMAP_DATA);
		return take_string(c, &m->filename, "mmap.filename");
	}
	case PERF_RECORD_LOST:
		EXACT(c, 24, "lost size");
		TAKE64(c, r->lost.id, "lost.id");
		TAKE64(c, r->lost.lost, "lost.lost");
		return 0;
	case PERF_RECORD_COMM:
		TAKE32x2(c, r->comm.pid, r->comm.tid, "comm.pid");
		r->comm.exec = !!(misc & PERF_RECORD_MISC_COMM_EXEC);
		return take_string(c, &r->comm.comm, "comm.comm");
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		EXACT(c, 32, "task size");
		TAKE32x2(c, r->task.pid, r->task.ppid, "task.pid");
		TAKE32x2(c, r->task.tid, r->task.ptid, "task.tid");
		TAKE64(c, r->task.time, "task.time");
		return 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		EXACT(c, 32, "throttle size");
		TAKE64(c, r->throttle.time, "throttle.time");
		TAKE64(c, r->throttle.id, "throttle.id");
		TAKE64(c, r->throttle.stream_id, "throttle.stream_id");
		return 0;
	case PERF_RECORD_READ: {
		TAKE32x2(c, r->read.pid, r->read.tid, "read.pid");
		uint64_t rf = l ? l->read_format : 0;
		int n = pk_read_format__decode(rf, p + c->off, c->end - c->off, NULL, 0, NULL);
		if (n < 0)
			return bad(c, "read.values");
		r->read.values = p + c->off;
		r->read.size = c->end - c->off;
		r->read.nr = (uint64_t)n;
		c->off = c->end;
		return 0;
	}
	case PERF_RECORD_MMAP2: {
		struct pk_rec_mmap2 *m = &r->mmap2;
		TAKE32x2(c, m->pid, m->tid, "mmap2.pid");
		TAKE64(c, m->addr, "mmap2.addr");
		TAKE64(c, m->len, "mmap2.len");
		TAKE64(c, m->pgoff, "mmap2.pgoff");
		if (!have(c, 24))
			return bad(c, "mmap2.ino");
		if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			m->has_build_id = true;
			m->build_id_size = p[c->off];
			if (m->build_id_size > 20)
				return bad(c, "mmap2.build_id_size");
			m->build_id = p + c->off + 4;
		} else {
			m->maj = ld32(p + c->off);
			m->min = ld32(p + c->off + 4);
			m->ino = ld64(p + c->off + 8);
			m->ino_generation = ld64(p + c->off + 16);
		}
		c->off += 24;
		TAKE32x2(c, m->prot, m->flags, "mmap2.prot");
		m->data = !!(misc & PERF_RECORD_MISC_MMAP_DATA);
		return take_string(c, &m->filename, "mmap2.filename");
	}
	case PERF_RECORD_AUX: {
		struct pk_rec_aux *a = &r->aux;
		EXACT(c, 32, "aux size");
		TAKE64(c, a->aux_offset, "aux.aux_offset");
		TAKE64(c, a->aux_size, "aux.aux_size");
		TAKE64(c, a->flags, "aux.flags");
		a->truncated = !!(a->flags & PERF_AUX_FLAG_TRUNCATED);
		a->overwrite = !!(a->flags & PERF_AUX_FLAG_OVERWRITE);
		a->partial = !!(a->flags & PERF_AUX_FLAG_PARTIAL);
		a->collision = !!(a->flags & PERF_AUX_FLAG_COLLISION);
		a->pmu_format = (uint8_t)((a->flags & 0xff00) >> 8);
		return 0;
	}
	case PERF_RECORD_ITRACE_START:
		EXACT(c, 16, "itrace_start size");
		TAKE32x2(c, r->itrace_start.pid, r->itrace_start.tid, "itrace_start.pid");
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		EXACT(c, 16, "lost_samples size");
		TAKE64(c, r->lost_samples.lost, "lost_samples.lost");
		return 0;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		r->sw.out = !!(misc & PERF_RECORD_MISC_SWITCH_OUT);
		r->sw.preempt = !!(misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		if (r->type == PERF_RECORD_SWITCH) {
			EXACT(c, 8, "switch size");
			return 0;
		}
		EXACT(c, 16, "switch_cpu_wide size");
		TAKE32x2(c, r->sw.next_prev_pid, r->sw.next_prev_tid, "switch.next_prev_pid");
		return 0;
	case PERF_RECORD_NAMESPACES: {
		struct pk_rec_namespaces *n = &r->namespaces;
		TAKE32x2(c, n->pid, n->tid, "namespaces.pid");
		TAKE64(c, n->nr, "namespaces.nr");
		if (n->nr > (c->end - c->off) / sizeof(struct pk_ns_link))
			return bad(c, "namespaces.link_info");
		n->ns = (const struct pk_ns_link *)(const void *)(p + c->off);
		c->off += (size_t)n->nr * sizeof(struct pk_ns_link);
		if (c->off != c->end)
			return bad(c, "namespaces size");
		return 0;
	}
	case PERF_RECORD_KSYMBOL: {
		struct pk_rec_ksymbol *k = &r->ksymbol;
		TAKE64(c, k->addr, "ksymbol.addr");
		if (!have(c, 8))
			return bad(c, "ksymbol.len");
		k->len = ld32(p + c->off);
		k->ksym_type = ld16(p + c->off + 4);
		k->flags = ld16(p + c->off + 6);
		k->unregister = !!(k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
		c->off += 8;
		return take_string(c, &k->name, "ksymbol.name");
	}
	case PERF_RECORD_BPF_EVENT: {
		struct pk_rec_bpf_event *b = &r->bpf_event;
		EXACT(c, 24, "bpf_event size");
		b->type = ld16(p + 8);
		b->flags = ld16(p + 10);
		b->id = ld32(p + 12);
		b->tag = p + 16;
		c->off = 24;
		return 0;
	}
	case PERF_RECORD_CGROUP:
		TAKE64(c, r->cgroup.id, "cgroup.id");
		return take_string(c, &r->cgroup.path, "cgroup.path");
	case PERF_RECORD_TEXT_POKE: {
		struct pk_rec_text_poke *t = &r->text_poke;
		TAKE64(c, t->addr, "text_poke.addr");
		if (!have(c, 4))
			return bad(c, "text_poke.old_len");
		t->old_len = ld16(p + c->off);
		t->new_len = ld16(p + c->off + 2);
		c->off += 4;
		size_t n = (size_t)t->old_len + t->new_len;
		if (!have(c, n))
			return bad(c, "text_poke.bytes");
		t->old_bytes = p + c->off;
		t->new_bytes = p + c->off + t->old_len;
		/* followed by zero padding to 8 bytes */
		if (((c->off + n + 7) & ~(size_t)7) != c->end)
			return bad(c, "text_poke size");
		c->off = c->end;
		return 0;
	}
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		EXACT(c, 16, "aux_output_hw_id size");
		TAKE64(c, r->aux_output_hw_id.hw_id, "aux_output_hw_id.hw_id");
		return 0;
	case PK_RECORD_CALLCHAIN_DEFERRED: {
		struct pk_rec_callchain_deferred *d = &r->callchain_deferred;
		TAKE64(c, d->cookie, "callchain_deferred.cookie");
		TAKE64(c, d->nr, "callchain_deferred.nr");
		if (d->nr > (c->end - c->off) / 8)
			return bad(c, "callchain_deferred.ips");
		d->ips = (const uint64_t *)(const void *)(p + c->off);
		c->off += (size_t)d->nr * 8;
		if (c->off != c->end)
			return bad(c, "callchain_deferred size");
		return 0;
	}
	default:
		return PK_RECORD_SKIPPED;
	}
}

PK_API int pk_record__decode(const struct pk_sample_layout *l, const struct perf_event_header *rec,
			     struct pk_record *out, const char **bad_field)
{
	if (!rec || !out || ((uintptr_t)rec & 7))
		return pk_err(-EINVAL);
	memset(out, 0, sizeof(*out));
	out->hdr = rec;
	out->type = rec->type;
	out->misc = rec->misc;
	out->size = rec->size;
	out->cpumode = (uint8_t)pk_misc__cpumode(rec->misc);
	if (rec->size < sizeof(*rec)) {
		if (bad_field)
			*bad_field = "header.size";
		return pk_err(-PK_ERR_FORMAT);
	}
	if (rec->type == PERF_RECORD_SAMPLE) {
		if (!l)
			return pk_err(-EINVAL);
		return pk_sample__decode(l, rec, &out->sample, bad_field);
	}
	if (!pk_record_type__name(rec->type))
		return PK_RECORD_SKIPPED;

	struct cur c = { .base = (const uint8_t *)rec, .off = 8, .end = rec->size, .bad = bad_field };
	if (l && l->sample_id_all && l->id_size) {
		if (rec->size < 8 + (size_t)l->id_size)
			return bad(&c, "sample_id");
		c.end = rec->size - l->id_size;
		decode_trailer(l, c.base + c.end, &out->sid);
		out->has_sid = true;
	}
	int err = decode_body(out, &c, l);
	if (err)
		return err;
	/* fixed-size bodies are checked by EXACT; variable ones end at the trailer */
	if (c.off != c.end)
		return bad(&c, "record size");
	return 0;
}
