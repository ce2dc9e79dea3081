/* SPDX-License-Identifier: MIT */
/* lib/sample/decode.c: sample and record decoding on synthetic records. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "testutil.h"
#include "internal.h"

#define PK_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------------------------- */
/* A record builder.                                                                   */

struct rb {
	union {
		uint64_t u64[8192];
		uint8_t b[65536];
	};
	size_t len;
};
static struct rb R;

static void rb_start(struct rb *r, uint32_t type, uint16_t misc)
{
	memset(r->b, 0, 64);
	r->len = 8;
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };
	memcpy(r->b, &h, sizeof(h));
}
static void pbytes(struct rb *r, const void *p, size_t n)
{
	assert_true(r->len + n <= sizeof(r->b));
	memcpy(r->b + r->len, p, n);
	r->len += n;
}
static void p64(struct rb *r, uint64_t v) { pbytes(r, &v, 8); }
static void p32(struct rb *r, uint32_t v) { pbytes(r, &v, 4); }
static void p16(struct rb *r, uint16_t v) { pbytes(r, &v, 2); }
static void p8(struct rb *r, uint8_t v) { pbytes(r, &v, 1); }
static void pzero_to8(struct rb *r)
{
	while (r->len % 8)
		p8(r, 0);
}
/* a string NUL-terminated and zero-padded to 8 bytes, as the kernel writes it */
static void pstr(struct rb *r, const char *s)
{
	pbytes(r, s, strlen(s) + 1);
	pzero_to8(r);
}
static const struct perf_event_header *rb_end(struct rb *r)
{
	uint16_t sz = (uint16_t)r->len;
	memcpy(r->b + 6, &sz, 2);
	return (const struct perf_event_header *)(const void *)r->b;
}

/* sample_id_all trailer values */
#define SID_PID 4242u
#define SID_TID 4243u
#define SID_TIME 0x123456789ull
#define SID_ID 0x77ull
#define SID_STREAM 0x78ull
#define SID_CPU 5u

static void psid(struct rb *r, uint64_t st)
{
	if (st & PERF_SAMPLE_TID) {
		p32(r, SID_PID);
		p32(r, SID_TID);
	}
	if (st & PERF_SAMPLE_TIME)
		p64(r, SID_TIME);
	if (st & PERF_SAMPLE_ID)
		p64(r, SID_ID);
	if (st & PERF_SAMPLE_STREAM_ID)
		p64(r, SID_STREAM);
	if (st & PERF_SAMPLE_CPU) {
		p32(r, SID_CPU);
		p32(r, 0);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		p64(r, SID_ID);
}

static void layout_for(struct pk_sample_layout *l, uint64_t st, uint64_t rf, bool id_all)
{
	struct perf_event_attr a = { .sample_type = st, .read_format = rf,
				     .sample_id_all = id_all, .sample_regs_user = 0x7,
				     .sample_regs_intr = 0x3 };
	assert_int_equal(pk_sample_layout__init(l, &a), 0);
}

/* ---------------------------------------------------------------------------------- */
/* Sample builder with fixed values for every field.                                   */

#define V_ID 0x1dull
#define V_IP 0xffffffff81001234ull
#define V_PID 100u
#define V_TID 101u
#define V_TIME 0x7777ull
#define V_ADDR 0xadd0ull
#define V_STREAM 0x5ull
#define V_CPU 3u
#define V_PERIOD 1000ull
#define V_WEIGHT 0x0003000200000001ull
#define V_DATA_SRC 0xd5ull
#define V_TXN 0x7a00000001ull
#define V_PHYS 0x9999000ull
#define V_CGROUP 0xc9ull
#define V_DPS 4096ull
#define V_CPS 2097152ull

static const uint64_t chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ull,
				  (uint64_t)PERF_CONTEXT_USER, 0x401000ull, 0x402000ull };
static const char raw_data[12] = "abcdefghijk";
static const uint64_t stack_bytes[2] = { 0x1122334455667788ull, 0x99aabbccddeeff00ull };
static const uint64_t aux_bytes[2] = { 0xa1, 0xa2 };

/* shape knobs */
struct shape {
	uint64_t read_nr;         /* members with PERF_FORMAT_GROUP */
	uint64_t branch_nr;
	bool branch_hw_idx;       /* write hw_idx */
	uint64_t regs_abi;
	uint64_t stack_size;      /* 0 or 16 */
};
static const struct shape default_shape = { .read_nr = 2, .branch_nr = 2, .branch_hw_idx = false,
					    .regs_abi = PERF_SAMPLE_REGS_ABI_64, .stack_size = 16 };

static void pread_block(struct rb *r, uint64_t rf, uint64_t nr)
{
	if (rf & PERF_FORMAT_GROUP) {
		p64(r, nr);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			p64(r, 5000);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			p64(r, 4000);
		for (uint64_t i = 0; i < nr; i++) {
			p64(r, 100 + i);
			if (rf & PERF_FORMAT_ID)
				p64(r, 900 + i);
			if (rf & PERF_FORMAT_LOST)
				p64(r, i);
		}
	} else {
		p64(r, 100);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			p64(r, 5000);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			p64(r, 4000);
		if (rf & PERF_FORMAT_ID)
			p64(r, 900);
		if (rf & PERF_FORMAT_LOST)
			p64(r, 0);
	}
}

static const struct perf_event_header *build_sample(struct rb *r, uint64_t st, uint64_t rf,
						    const struct shape *sh, uint16_t misc)
{
	rb_start(r, PERF_RECORD_SAMPLE, misc);
	if (st & PERF_SAMPLE_IDENTIFIER)
		p64(r, V_ID);
	if (st & PERF_SAMPLE_IP)
		p64(r, V_IP);
	if (st & PERF_SAMPLE_TID) {
		p32(r, V_PID);
		p32(r, V_TID);
	}
	if (st & PERF_SAMPLE_TIME)
		p64(r, V_TIME);
	if (st & PERF_SAMPLE_ADDR)
		p64(r, V_ADDR);
	if (st & PERF_SAMPLE_ID)
		p64(r, V_ID);
	if (st & PERF_SAMPLE_STREAM_ID)
		p64(r, V_STREAM);
	if (st & PERF_SAMPLE_CPU) {
		p32(r, V_CPU);
		p32(r, 0);
	}
	if (st & PERF_SAMPLE_PERIOD)
		p64(r, V_PERIOD);
	if (st & PERF_SAMPLE_READ)
		pread_block(r, rf, sh->read_nr);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		p64(r, PK_ARRAY_LEN(chain));
		pbytes(r, chain, sizeof(chain));
	}
	if (st & PERF_SAMPLE_RAW) {
		p32(r, sizeof(raw_data));
		pbytes(r, raw_data, sizeof(raw_data));
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		p64(r, sh->branch_nr);
		if (sh->branch_hw_idx)
			p64(r, 7);
		for (uint64_t i = 0; i < sh->branch_nr; i++) {
			p64(r, 0x1000 + i);
			p64(r, 0x2000 + i);
			/* mispred, cycles 300, type 5, priv 3 */
			p64(r, 1ull | (300ull << 4) | (5ull << 20) | (3ull << 30));
		}
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		p64(r, sh->regs_abi);
		if (sh->regs_abi)
			for (int i = 0; i < 3; i++)
				p64(r, 10 + i);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		p64(r, sh->stack_size);
		if (sh->stack_size) {
			pbytes(r, stack_bytes, sh->stack_size);
			p64(r, 8);
		}
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		p64(r, V_WEIGHT);
	if (st & PERF_SAMPLE_DATA_SRC)
		p64(r, V_DATA_SRC);
	if (st & PERF_SAMPLE_TRANSACTION)
		p64(r, V_TXN);
	if (st & PERF_SAMPLE_REGS_INTR) {
		p64(r, sh->regs_abi);
		if (sh->regs_abi)
			for (int i = 0; i < 2; i++)
				p64(r, 20 + i);
	}
	if (st & PERF_SAMPLE_PHYS_ADDR)
		p64(r, V_PHYS);
	if (st & PERF_SAMPLE_CGROUP)
		p64(r, V_CGROUP);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		p64(r, V_DPS);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		p64(r, V_CPS);
	if (st & PERF_SAMPLE_AUX) {
		p64(r, sizeof(aux_bytes));
		pbytes(r, aux_bytes, sizeof(aux_bytes));
	}
	return rb_end(r);
}

static void check_sample(const struct pk_sample *s, const struct pk_sample_layout *l,
			 const struct shape *sh)
{
	uint64_t st = l->sample_type;
	assert_int_equal(s->type, st);
	if (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID))
		assert_int_equal(s->id, V_ID);
	else
		assert_int_equal(s->id, 0);
	if (st & PERF_SAMPLE_IP)
		assert_int_equal(s->ip, V_IP);
	if (st & PERF_SAMPLE_TID) {
		assert_int_equal(s->pid, V_PID);
		assert_int_equal(s->tid, V_TID);
	} else {
		assert_int_equal(s->pid, 0);
	}
	if (st & PERF_SAMPLE_TIME)
		assert_int_equal(s->time, V_TIME);
	if (st & PERF_SAMPLE_ADDR)
		assert_int_equal(s->addr, V_ADDR);
	if (st & PERF_SAMPLE_STREAM_ID)
		assert_int_equal(s->stream_id, V_STREAM);
	if (st & PERF_SAMPLE_CPU)
		assert_int_equal(s->cpu, V_CPU);
	if (st & PERF_SAMPLE_PERIOD)
		assert_int_equal(s->period, V_PERIOD);
	else
		assert_int_equal(s->period, 0);
	if (st & PERF_SAMPLE_READ) {
		uint64_t nr = (l->read_format & PERF_FORMAT_GROUP) ? sh->read_nr : 1;
		assert_int_equal(s->read.nr, nr);
		assert_int_equal(s->read.size, pk_read_format__size(l->read_format, nr));
		struct pk_count_value v[4];
		assert_int_equal(pk_sample__read_values(l, s, v, 4), (int)nr);
		for (uint64_t i = 0; i < nr && i < 4; i++) {
			assert_int_equal(v[i].val, 100 + i);
			if (l->read_format & PERF_FORMAT_ID)
				assert_int_equal(v[i].id, 900 + i);
			if (l->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
				assert_int_equal(v[i].ena, 5000);
			if (l->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
				assert_int_equal(v[i].run, 4000);
		}
	} else {
		assert_null(s->read.data);
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		assert_int_equal(s->callchain.nr, PK_ARRAY_LEN(chain));
		for (size_t i = 0; i < PK_ARRAY_LEN(chain); i++)
			assert_int_equal(s->callchain.ips[i], chain[i]);
	} else {
		assert_null(s->callchain.ips);
	}
	if (st & PERF_SAMPLE_RAW) {
		assert_int_equal(s->raw.size, 12);
		assert_memory_equal(s->raw.data, raw_data, 12);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		assert_int_equal(s->branch.nr, sh->branch_nr);
		assert_int_equal(s->branch.has_hw_idx, sh->branch_hw_idx);
		if (sh->branch_hw_idx)
			assert_int_equal(s->branch.hw_idx, 7);
		for (uint64_t i = 0; i < sh->branch_nr; i++) {
			assert_int_equal(s->branch.entries[i].from, 0x1000 + i);
			assert_int_equal(s->branch.entries[i].to, 0x2000 + i);
			struct pk_branch_flags f = pk_branch__flags(s->branch.entries[i].flags);
			assert_int_equal(f.mispred, 1);
			assert_int_equal(f.predicted, 0);
			assert_int_equal(f.cycles, 300);
			assert_int_equal(f.type, 5);
			assert_int_equal(f.priv, 3);
		}
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		assert_int_equal(s->regs_user.abi, sh->regs_abi);
		assert_int_equal(s->regs_user.mask, 0x7);
		assert_int_equal(s->regs_user.nr, sh->regs_abi ? 3 : 0);
		for (uint32_t i = 0; i < s->regs_user.nr; i++)
			assert_int_equal(s->regs_user.regs[i], 10 + i);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		assert_int_equal(s->stack_user.size, sh->stack_size);
		if (sh->stack_size) {
			assert_memory_equal(s->stack_user.data, stack_bytes, 16);
			assert_int_equal(s->stack_user.dyn_size, 8);
		} else {
			assert_null(s->stack_user.data);
			assert_int_equal(s->stack_user.dyn_size, 0);
		}
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		assert_int_equal(s->weight, V_WEIGHT);
		assert_int_equal(s->weight_struct.var1_dw, 1);
		assert_int_equal(s->weight_struct.var2_w, 2);
		assert_int_equal(s->weight_struct.var3_w, 3);
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		assert_int_equal(s->data_src, V_DATA_SRC);
	if (st & PERF_SAMPLE_TRANSACTION)
		assert_int_equal(s->transaction, V_TXN);
	if (st & PERF_SAMPLE_REGS_INTR) {
		assert_int_equal(s->regs_intr.abi, sh->regs_abi);
		assert_int_equal(s->regs_intr.nr, sh->regs_abi ? 2 : 0);
		for (uint32_t i = 0; i < s->regs_intr.nr; i++)
			assert_int_equal(s->regs_intr.regs[i], 20 + i);
	}
	if (st & PERF_SAMPLE_PHYS_ADDR)
		assert_int_equal(s->phys_addr, V_PHYS);
	if (st & PERF_SAMPLE_CGROUP)
		assert_int_equal(s->cgroup, V_CGROUP);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		assert_int_equal(s->data_page_size, V_DPS);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		assert_int_equal(s->code_page_size, V_CPS);
	if (st & PERF_SAMPLE_AUX) {
		assert_int_equal(s->aux.size, 16);
		assert_memory_equal(s->aux.data, aux_bytes, 16);
	}
}

/* Decode a copy of `rec` in a buffer of exactly header.size bytes (ASan sees overreads). */
static int decode_exact(const struct pk_sample_layout *l, const struct perf_event_header *rec,
			struct pk_record *out, const char **bad)
{
	size_t n = rec->size < 8 ? 8 : rec->size;
	void *copy = malloc(n);
	assert_non_null(copy);
	memcpy(copy, rec, n);
	int err = pk_record__decode(l, copy, out, bad);
	free(copy);
	return err;
}

static void roundtrip(uint64_t st, uint64_t rf, const struct shape *sh)
{
	struct pk_sample_layout l;
	struct perf_event_attr a = { .sample_type = st, .read_format = rf, .sample_regs_user = 0x7,
				     .sample_regs_intr = 0x3,
				     .branch_sample_type = sh->branch_hw_idx ? PERF_SAMPLE_BRANCH_HW_INDEX : 0 };
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	const struct perf_event_header *h = build_sample(&R, st, rf, sh, PERF_RECORD_MISC_USER);
	struct pk_sample s;
	const char *bad = NULL;
	int err = pk_sample__decode(&l, h, &s, &bad);
	if (err)
		fail_msg("sample_type %#llx: err %d field %s", (unsigned long long)st, err, bad ? bad : "?");
	check_sample(&s, &l, sh);
	assert_int_equal(s.cpumode, PK_CPUMODE_USER);
	/* through pk_record__decode as well */
	struct pk_record r;
	assert_int_equal(pk_record__decode(&l, h, &r, NULL), 0);
	assert_int_equal(r.type, PERF_RECORD_SAMPLE);
	check_sample(&r.sample, &l, sh);
	/* the id lookup */
	uint64_t id = 0;
	if (l.id_pos >= 0) {
		assert_int_equal(pk_sample_layout__record_id(&l, h, &id), 0);
		assert_int_equal(id, V_ID);
	} else {
		assert_int_equal(pk_sample_layout__record_id(&l, h, &id), -ENOENT);
	}
}

#define ALL_RF (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | \
		PERF_FORMAT_GROUP | PERF_FORMAT_LOST)

/* ---------------------------------------------------------------------------------- */

static void test_layout(void **state)
{
	struct pk_sample_layout l;
	struct perf_event_attr a = { 0 };

	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			PERF_SAMPLE_CPU | PERF_SAMPLE_STREAM_ID;
	a.sample_id_all = 1;
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	assert_int_equal(l.id_pos, 3);       /* after IP, TID, TIME */
	assert_int_equal(l.is_pos, 3);       /* ID, STREAM_ID, CPU from the end */
	assert_int_equal(l.id_size, 40);     /* TID TIME ID STREAM CPU */
	assert_int_equal(l.min_sample_size, 8 + 48);

	a.sample_type |= PERF_SAMPLE_IDENTIFIER;
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	assert_int_equal(l.id_pos, 0);
	assert_int_equal(l.is_pos, 1);
	assert_int_equal(l.id_size, 48);

	a.sample_type = PERF_SAMPLE_IP;
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	assert_int_equal(l.id_pos, -1);
	assert_int_equal(l.is_pos, -1);
	assert_int_equal(l.id_size, 0);

	a.sample_type = PERF_SAMPLE_ID;
	a.sample_id_all = 0;
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	assert_int_equal(l.id_pos, 0);
	assert_int_equal(l.is_pos, -1);

	a.sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_BRANCH_STACK;
	a.sample_regs_user = 0xff0f;
	a.sample_regs_intr = 0x1;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	assert_int_equal(l.nr_regs_user, 12);
	assert_int_equal(l.nr_regs_intr, 1);
	assert_true(l.flags & PK_LAYOUT_BRANCH_HW_INDEX);

	/* unknown bits, WEIGHT with WEIGHT_STRUCT, unknown read_format */
	a.sample_type = 1ull << 25;
	assert_int_equal(pk_sample_layout__init(&l, &a), -EINVAL);
	a.sample_type = 1ull << 63;
	assert_int_equal(pk_sample_layout__init(&l, &a), -EINVAL);
	a.sample_type = PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT;
	assert_int_equal(pk_sample_layout__init(&l, &a), -EINVAL);
	a.sample_type = PERF_SAMPLE_READ;
	a.read_format = 1 << 5;
	assert_int_equal(pk_sample_layout__init(&l, &a), -EINVAL);
	assert_int_equal(pk_sample_layout__init(NULL, &a), -EINVAL);
}

/* A sample written out by hand, word by word: catches an order mistake that the builder
 * and the decoder could share. */
static void test_sample_literal(void **state)
{
	static const uint64_t words[] = {
		0,                       /* header, patched below */
		0x400123,                /* IP */
		(7ull << 32) | 6,        /* pid 6, tid 7 */
		123456789,               /* TIME */
		(0ull << 32) | 1,        /* cpu 1, res 0 */
		100000,                  /* PERIOD */
	};
	uint64_t buf[PK_ARRAY_LEN(words)];
	memcpy(buf, words, sizeof(words));
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
				       .misc = PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_EXACT_IP,
				       .size = sizeof(buf) };
	memcpy(buf, &h, sizeof(h));
	struct pk_sample_layout l;
	layout_for(&l, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_PERIOD, 0, false);
	struct pk_sample s;
	assert_int_equal(pk_sample__decode(&l, (void *)buf, &s, NULL), 0);
	assert_int_equal(s.ip, 0x400123);
	assert_int_equal(s.pid, 6);
	assert_int_equal(s.tid, 7);
	assert_int_equal(s.time, 123456789);
	assert_int_equal(s.cpu, 1);
	assert_int_equal(s.period, 100000);
	assert_int_equal(s.cpumode, PK_CPUMODE_KERNEL);
	assert_true(s.exact_ip);
	/* one word too many / too few */
	h.size = sizeof(buf) - 8;
	memcpy(buf, &h, sizeof(h));
	const char *bad = NULL;
	assert_int_equal(pk_sample__decode(&l, (void *)buf, &s, &bad), -PK_ERR_FORMAT);
	assert_non_null(bad);
	/* not a sample / misaligned */
	h.size = sizeof(buf);
	h.type = PERF_RECORD_MMAP;
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(pk_sample__decode(&l, (void *)buf, &s, NULL), -EINVAL);
	assert_int_equal(pk_sample__decode(&l, (void *)((char *)buf + 4), &s, NULL), -EINVAL);
}

static void test_sample_each_bit(void **state)
{
	for (int bit = 0; bit < 25; bit++) {
		uint64_t st = 1ull << bit;
		roundtrip(st, PERF_FORMAT_ID, &default_shape);
	}
}

static void test_sample_all_bits(void **state)
{
	uint64_t all = ((1ull << 25) - 1) & ~(uint64_t)PERF_SAMPLE_WEIGHT;
	roundtrip(all, ALL_RF, &default_shape);
	roundtrip(all & ~(uint64_t)PERF_SAMPLE_WEIGHT_STRUCT, ALL_RF, &default_shape);
	roundtrip(all ^ PERF_SAMPLE_WEIGHT_STRUCT ^ PERF_SAMPLE_WEIGHT, ALL_RF, &default_shape);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_sample_combinations(void **state)
{
	for (int i = 0; i < 3000; i++) {
		uint64_t st = rnd() & ((1ull << 25) - 1);
		if ((st & PERF_SAMPLE_WEIGHT) && (st & PERF_SAMPLE_WEIGHT_STRUCT))
			st &= ~(uint64_t)PERF_SAMPLE_WEIGHT;
		uint64_t rf = rnd() & ALL_RF;
		struct shape sh = default_shape;
		sh.read_nr = rnd() % 4;
		sh.branch_nr = 1 + rnd() % 3;
		sh.branch_hw_idx = rnd() & 1;
		sh.regs_abi = (rnd() & 1) ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE;
		sh.stack_size = (rnd() & 1) ? 16 : 0;
		roundtrip(st, rf, &sh);
	}
}

/* pk_record_decode_sample_again (internal, the report's reader thread): decoding a sample
 * over the decode of another sample of the same layout gives exactly a fresh decode, for
 * every shape change (registers present then absent, stack copy then none, branch stack
 * sizes, group sizes) */
static struct rb R2;
static void test_sample_decode_again(void **state)
{
	for (int i = 0; i < 3000; i++) {
		uint64_t st = rnd() & ((1ull << 25) - 1);
		if ((st & PERF_SAMPLE_WEIGHT) && (st & PERF_SAMPLE_WEIGHT_STRUCT))
			st &= ~(uint64_t)PERF_SAMPLE_WEIGHT;
		uint64_t rf = rnd() & ALL_RF;
		bool hw = rnd() & 1;
		struct shape sh[2];
		for (int k = 0; k < 2; k++) {
			sh[k] = default_shape;
			sh[k].read_nr = rnd() % 4;
			sh[k].branch_nr = 1 + rnd() % 3;
			sh[k].branch_hw_idx = hw;
			sh[k].regs_abi = (rnd() & 1) ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE;
			sh[k].stack_size = (rnd() & 1) ? 16 : 0;
		}
		struct pk_sample_layout l;
		struct perf_event_attr a = { .sample_type = st, .read_format = rf,
					     .sample_regs_user = 0x7, .sample_regs_intr = 0x3,
					     .branch_sample_type = hw ? PERF_SAMPLE_BRANCH_HW_INDEX : 0 };
		assert_int_equal(pk_sample_layout__init(&l, &a), 0);
		const struct perf_event_header *ha = build_sample(&R2, st, rf, &sh[0], PERF_RECORD_MISC_USER);
		const struct perf_event_header *hb = build_sample(&R, st, rf, &sh[1],
								  PERF_RECORD_MISC_KERNEL);
		struct pk_record x, y;
		memset(&x, 0xa5, sizeof(x));
		memset(&y, 0x5a, sizeof(y));
		assert_int_equal(pk_record__decode(&l, ha, &x, NULL), 0);
		assert_int_equal(pk_record_decode_sample_again(&l, hb, &x), 0);
		assert_int_equal(pk_record__decode(&l, hb, &y, NULL), 0);
		assert_memory_equal(&x, &y, sizeof(x));
		/* and back */
		assert_int_equal(pk_record_decode_sample_again(&l, ha, &x), 0);
		assert_int_equal(pk_record__decode(&l, ha, &y, NULL), 0);
		assert_memory_equal(&x, &y, sizeof(x));
	}
	/* a record that is not a sample: a plain decode */
	struct pk_sample_layout l;
	layout_for(&l, PERF_SAMPLE_IP | PERF_SAMPLE_TID, 0, false);
	rb_start(&R, PERF_RECORD_EXIT, 0);
	for (int k = 0; k < 3; k++)
		p64(&R, (uint64_t)k);
	struct pk_record x, y;
	assert_int_equal(pk_record_decode_sample_again(&l, rb_end(&R), &x), 0);
	assert_int_equal(pk_record__decode(&l, rb_end(&R), &y, NULL), 0);
	assert_memory_equal(&x, &y, sizeof(x));
}

/* pk_record_decode_sample_prefix (internal, a session's sample_prefix): the fixed fields
 * as a full decode gives them, nothing past them, and "again" as a fresh decode */
static void test_sample_decode_prefix(void **state)
{
	(void)state;
	for (int i = 0; i < 3000; i++) {
		uint64_t st = rnd() & ((1ull << 25) - 1);
		if ((st & PERF_SAMPLE_WEIGHT) && (st & PERF_SAMPLE_WEIGHT_STRUCT))
			st &= ~(uint64_t)PERF_SAMPLE_WEIGHT;
		uint64_t rf = rnd() & ALL_RF;
		struct shape sh = default_shape;
		sh.read_nr = rnd() % 4;
		sh.regs_abi = (rnd() & 1) ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE;
		struct pk_sample_layout l;
		struct perf_event_attr a = { .sample_type = st, .read_format = rf,
					     .sample_regs_user = 0x7, .sample_regs_intr = 0x3 };
		assert_int_equal(pk_sample_layout__init(&l, &a), 0);
		const struct perf_event_header *ha = build_sample(&R2, st, rf, &sh,
								  PERF_RECORD_MISC_USER);
		const struct perf_event_header *hb = build_sample(&R, st, rf, &sh,
								  PERF_RECORD_MISC_KERNEL);
		struct pk_record full, x, y;
		assert_int_equal(pk_record__decode(&l, ha, &full, NULL), 0);
		memset(&x, 0xa5, sizeof(x));
		assert_int_equal(pk_record_decode_sample_prefix(&l, ha, &x, false), 0);
		assert_ptr_equal(x.hdr, ha);
		assert_int_equal(x.size, full.size);
		assert_int_equal(x.cpumode, full.cpumode);
		const struct pk_sample *f = &full.sample, *p = &x.sample;
		assert_int_equal(p->type, f->type);
		assert_int_equal(p->misc, f->misc);
		assert_int_equal(p->cpumode, f->cpumode);
		assert_int_equal(p->exact_ip, f->exact_ip);
		assert_int_equal(p->id, f->id);
		assert_int_equal(p->ip, f->ip);
		assert_int_equal(p->pid, f->pid);
		assert_int_equal(p->tid, f->tid);
		assert_int_equal(p->time, f->time);
		assert_int_equal(p->addr, f->addr);
		assert_int_equal(p->stream_id, f->stream_id);
		assert_int_equal(p->cpu, f->cpu);
		assert_int_equal(p->cpu_res, f->cpu_res);
		assert_int_equal(p->period, f->period);
		/* nothing after PERIOD */
		assert_int_equal(p->callchain.nr, 0);
		assert_null(p->callchain.ips);
		assert_int_equal(p->read.size, 0);
		assert_int_equal(p->raw.size, 0);
		assert_int_equal(p->stack_user.size, 0);
		/* again, over the decode of another sample of the layout: as a fresh one */
		assert_int_equal(pk_record_decode_sample_prefix(&l, hb, &x, true), 0);
		memset(&y, 0x5a, sizeof(y));
		assert_int_equal(pk_record_decode_sample_prefix(&l, hb, &y, false), 0);
		assert_memory_equal(&x, &y, sizeof(x));
	}
	/* a malformed tail is not looked at; a record shorter than the fixed fields fails */
	struct pk_sample_layout l;
	layout_for(&l, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN, 0, false);
	rb_start(&R, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	p64(&R, 0x401000);
	p32(&R, 7);
	p32(&R, 8);
	p64(&R, 1000); /* callchain.nr with no entries */
	struct pk_record x;
	assert_int_not_equal(pk_record__decode(&l, rb_end(&R), &x, NULL), 0);
	assert_int_equal(pk_record_decode_sample_prefix(&l, rb_end(&R), &x, false), 0);
	assert_int_equal(x.sample.ip, 0x401000);
	assert_int_equal(x.sample.pid, 7);
	assert_int_equal(x.sample.tid, 8);
	assert_int_equal(x.sample.callchain.nr, 0);
	rb_start(&R, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	p64(&R, 0x401000);
	assert_int_equal(pk_record_decode_sample_prefix(&l, rb_end(&R), &x, false),
			 -PK_ERR_FORMAT);
	/* other records: a plain decode */
	rb_start(&R, PERF_RECORD_EXIT, 0);
	for (int k = 0; k < 3; k++)
		p64(&R, (uint64_t)k);
	struct pk_record y;
	assert_int_equal(pk_record_decode_sample_prefix(&l, rb_end(&R), &x, false), 0);
	assert_int_equal(pk_record__decode(&l, rb_end(&R), &y, NULL), 0);
	assert_memory_equal(&x, &y, sizeof(x));
}

static void test_sample_read_formats(void **state)
{
	for (uint64_t rf = 0; rf <= ALL_RF; rf++) {
		for (uint64_t nr = 0; nr < 4; nr++) {
			struct shape sh = default_shape;
			sh.read_nr = nr;
			roundtrip(PERF_SAMPLE_TID | PERF_SAMPLE_READ | PERF_SAMPLE_PERIOD, rf, &sh);
			if (!(rf & PERF_FORMAT_GROUP))
				break;
		}
	}
	/* a group nr larger than the record */
	struct pk_sample_layout l;
	layout_for(&l, PERF_SAMPLE_READ, PERF_FORMAT_GROUP, false);
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, 1000000);
	p64(&R, 1);
	struct pk_sample s;
	const char *bad = NULL;
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, &bad), -PK_ERR_FORMAT);
	assert_string_equal(bad, "read");
}

static void test_sample_callchain(void **state)
{
	struct pk_sample_layout l;
	layout_for(&l, PERF_SAMPLE_CALLCHAIN, 0, false);
	const struct perf_event_header *h = build_sample(&R, PERF_SAMPLE_CALLCHAIN, 0, &default_shape, 0);
	struct pk_sample s;
	assert_int_equal(pk_sample__decode(&l, h, &s, NULL), 0);
	assert_int_equal(pk_callchain__context(s.callchain.ips[0]), PK_CTX_KERNEL);
	assert_int_equal(pk_callchain__context(s.callchain.ips[1]), PK_CTX_NONE);
	assert_int_equal(pk_callchain__context(s.callchain.ips[2]), PK_CTX_USER);
	assert_int_equal(pk_callchain__context(s.callchain.ips[3]), PK_CTX_NONE);
	assert_int_equal(pk_callchain__context((uint64_t)PERF_CONTEXT_HV), PK_CTX_HV);
	assert_int_equal(pk_callchain__context((uint64_t)PERF_CONTEXT_GUEST), PK_CTX_GUEST);
	assert_int_equal(pk_callchain__context((uint64_t)PERF_CONTEXT_GUEST_KERNEL), PK_CTX_GUEST_KERNEL);
	assert_int_equal(pk_callchain__context((uint64_t)PERF_CONTEXT_GUEST_USER), PK_CTX_GUEST_USER);
	assert_int_equal(pk_callchain__context(PK_CONTEXT_USER_DEFERRED), PK_CTX_USER_DEFERRED);
	assert_int_equal(pk_callchain__context((uint64_t)PERF_CONTEXT_MAX), PK_CTX_UNKNOWN);
	assert_int_equal(pk_callchain__context((uint64_t)PERF_CONTEXT_MAX - 1), PK_CTX_NONE);
	assert_string_equal(pk_callchain_ctx__name(PK_CTX_KERNEL), "kernel");
	assert_string_equal(pk_callchain_ctx__name(PK_CTX_GUEST_USER), "guest-user");

	/* nr = 0 is fine; a huge nr is not */
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, 0);
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, NULL), 0);
	assert_int_equal(s.callchain.nr, 0);
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, UINT64_MAX / 4);
	p64(&R, 1);
	const char *bad = NULL;
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, &bad), -PK_ERR_FORMAT);
	assert_string_equal(bad, "callchain.ips");
}

static void test_sample_raw(void **state)
{
	struct pk_sample_layout l;
	layout_for(&l, PERF_SAMPLE_RAW | PERF_SAMPLE_PERIOD, 0, false);
	struct pk_sample s;
	/* no raw data: size 4 and four zero bytes */
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, 1);
	p32(&R, 4);
	p32(&R, 0);
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, NULL), 0);
	assert_int_equal(s.raw.size, 4);
	assert_int_equal(s.period, 1);
	/* 28 bytes of data: 4 + 28 = 32 */
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, 1);
	p32(&R, 28);
	for (int i = 0; i < 28; i++)
		p8(&R, (uint8_t)i);
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, NULL), 0);
	assert_int_equal(s.raw.size, 28);
	assert_int_equal(((const uint8_t *)s.raw.data)[27], 27);
	/* size not padded to 8 with its u32: rejected, so later fields stay aligned */
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, 1);
	p32(&R, 5);
	for (int i = 0; i < 12; i++)
		p8(&R, 0);
	const char *bad = NULL;
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, &bad), -PK_ERR_FORMAT);
	assert_string_equal(bad, "raw.data");
	/* size past the end */
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, 1);
	p32(&R, 0xfffffffc);
	p32(&R, 0);
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, &bad), -PK_ERR_FORMAT);
}

static void test_sample_branch(void **state)
{
	struct shape sh = default_shape;
	sh.branch_hw_idx = true;
	roundtrip(PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_IP, 0, &sh);
	sh.branch_hw_idx = false;
	roundtrip(PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_IP, 0, &sh);

	/* HW_INDEX requested but no branch stack captured: the kernel writes nr = 0 only */
	struct pk_sample_layout l;
	struct perf_event_attr a = { .sample_type = PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_PERIOD,
				     .branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX };
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	struct pk_sample s;
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, 99);
	p64(&R, 0);
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, NULL), 0);
	assert_int_equal(s.branch.nr, 0);
	assert_false(s.branch.has_hw_idx);
	/* captured but empty: nr = 0 then hw_idx */
	p64(&R, 3);
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, NULL), 0);
	assert_true(s.branch.has_hw_idx);
	assert_int_equal(s.branch.hw_idx, 3);

	/* COUNTERS: nr u64 after the entries */
	a.branch_sample_type = PK_SAMPLE_BRANCH_COUNTERS;
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, 99);
	p64(&R, 1);
	p64(&R, 0x10);
	p64(&R, 0x20);
	p64(&R, 0);
	p64(&R, 0xc0);
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, NULL), 0);
	assert_int_equal(s.branch.counters[0], 0xc0);
	R.len -= 8;
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, NULL), -PK_ERR_FORMAT);

	struct pk_branch_flags f = pk_branch__flags((1ull << 1) | (1ull << 2) | (1ull << 3) |
						    (0xffffull << 4) | (2ull << 24) | (9ull << 26));
	assert_int_equal(f.mispred, 0);
	assert_int_equal(f.predicted, 1);
	assert_int_equal(f.in_tx, 1);
	assert_int_equal(f.abort, 1);
	assert_int_equal(f.cycles, 0xffff);
	assert_int_equal(f.type, 0);
	assert_int_equal(f.spec, 2);
	assert_int_equal(f.new_type, 9);
	assert_int_equal(f.priv, 0);
}

static void test_sample_regs_stack(void **state)
{
	struct shape sh = default_shape;
	uint64_t st = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_INTR |
		      PERF_SAMPLE_WEIGHT_STRUCT;
	roundtrip(st, 0, &sh);
	sh.regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
	roundtrip(st, 0, &sh);
	sh.stack_size = 0;
	roundtrip(st, 0, &sh);
	sh.regs_abi = PERF_SAMPLE_REGS_ABI_32;
	roundtrip(st, 0, &sh);

	struct pk_sample_layout l;
	layout_for(&l, PERF_SAMPLE_STACK_USER, 0, false);
	struct pk_sample s;
	const char *bad = NULL;
	/* dyn_size > size */
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, 8);
	p64(&R, 0);
	p64(&R, 9);
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, &bad), -PK_ERR_FORMAT);
	assert_string_equal(bad, "stack_user.dyn_size");
	/* dyn_size missing */
	R.len -= 8;
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, &bad), -PK_ERR_FORMAT);
	assert_string_equal(bad, "stack_user.dyn_size");
	/* regs abi set but the registers are missing */
	layout_for(&l, PERF_SAMPLE_REGS_USER, 0, false);
	rb_start(&R, PERF_RECORD_SAMPLE, 0);
	p64(&R, PERF_SAMPLE_REGS_ABI_64);
	p64(&R, 1);
	assert_int_equal(pk_sample__decode(&l, rb_end(&R), &s, &bad), -PK_ERR_FORMAT);
	assert_string_equal(bad, "regs_user.regs");
}

/* Every strict prefix of a sample must fail, reading nothing beyond it. */
static void test_sample_truncated(void **state)
{
	uint64_t all = ((1ull << 25) - 1) & ~(uint64_t)PERF_SAMPLE_WEIGHT;
	struct pk_sample_layout l;
	layout_for(&l, all, ALL_RF, false);
	const struct perf_event_header *h = build_sample(&R, all, ALL_RF, &default_shape, 0);
	uint16_t full = h->size;
	for (uint16_t n = 0; n < full; n++) {
		struct rb *copy = malloc(sizeof(*copy));
		memcpy(copy->b, R.b, full);
		memcpy(copy->b + 6, &n, 2);
		struct pk_record r;
		const char *bad = NULL;
		int err = decode_exact(&l, (void *)copy->b, &r, &bad);
		if (err != -PK_ERR_FORMAT)
			fail_msg("size %u of %u: err %d", n, full, err);
		assert_non_null(bad);
		free(copy);
	}
}

/* ---------------------------------------------------------------------------------- */
/* Non-sample records                                                                  */

/* Build each kernel record type; `tst` is the trailer's sample_type (0: none). */
static const struct perf_event_header *build_record(struct rb *r, uint32_t type, uint64_t tst)
{
	switch (type) {
	case PERF_RECORD_MMAP:
		rb_start(r, type, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA);
		p32(r, 10); p32(r, 11); p64(r, 0x400000); p64(r, 0x1000); p64(r, 0x200);
		pstr(r, "/usr/bin/true");
		break;
	case PERF_RECORD_LOST:
		rb_start(r, type, 0);
		p64(r, 0x77); p64(r, 12);
		break;
	case PERF_RECORD_COMM:
		rb_start(r, type, PERF_RECORD_MISC_COMM_EXEC);
		p32(r, 10); p32(r, 11); pstr(r, "worker-thread");
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		rb_start(r, type, 0);
		p32(r, 10); p32(r, 1); p32(r, 11); p32(r, 2); p64(r, 555);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		rb_start(r, type, 0);
		p64(r, 666); p64(r, 0x77); p64(r, 0x78);
		break;
	case PERF_RECORD_READ:
		rb_start(r, type, 0);
		p32(r, 10); p32(r, 11);
		pread_block(r, PERF_FORMAT_GROUP | PERF_FORMAT_ID, 2);
		break;
	case PERF_RECORD_MMAP2:
		rb_start(r, type, PERF_RECORD_MISC_KERNEL);
		p32(r, 10); p32(r, 11); p64(r, 0x400000); p64(r, 0x1000); p64(r, 0x200);
		p32(r, 8); p32(r, 1); p64(r, 123456); p64(r, 9);
		p32(r, 5); p32(r, 2);
		pstr(r, "/lib/libc.so.6");
		break;
	case PERF_RECORD_AUX:
		rb_start(r, type, 0);
		p64(r, 4096); p64(r, 512);
		p64(r, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_COLLISION | 0x0100);
		break;
	case PERF_RECORD_ITRACE_START:
		rb_start(r, type, 0);
		p32(r, 10); p32(r, 11);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		rb_start(r, type, 0);
		p64(r, 31);
		break;
	case PERF_RECORD_SWITCH:
		rb_start(r, type, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		rb_start(r, type, 0);
		p32(r, 20); p32(r, 21);
		break;
	case PERF_RECORD_NAMESPACES:
		rb_start(r, type, 0);
		p32(r, 10); p32(r, 11); p64(r, 7);
		for (int i = 0; i < 7; i++) {
			p64(r, 0x100 + i);
			p64(r, 0xf0000000u + i);
		}
		break;
	case PERF_RECORD_KSYMBOL:
		rb_start(r, type, 0);
		p64(r, 0xffffffffa0000000ull); p32(r, 256); p16(r, PERF_RECORD_KSYMBOL_TYPE_BPF);
		p16(r, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
		pstr(r, "bpf_prog_6deef7357e7b4530");
		break;
	case PERF_RECORD_BPF_EVENT:
		rb_start(r, type, 0);
		p16(r, PERF_BPF_EVENT_PROG_LOAD); p16(r, 0); p32(r, 42);
		pbytes(r, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
		break;
	case PERF_RECORD_CGROUP:
		rb_start(r, type, 0);
		p64(r, 0xc9); pstr(r, "/system.slice/foo.service");
		break;
	case PERF_RECORD_TEXT_POKE:
		rb_start(r, type, 0);
		p64(r, 0xffffffff81000000ull); p16(r, 5); p16(r, 5);
		pbytes(r, "\x0f\x1f\x44\x00\x00", 5);
		pbytes(r, "\xe8\x01\x02\x03\x04", 5);
		pzero_to8(r);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		rb_start(r, type, 0);
		p64(r, 0xabc);
		break;
	case PK_RECORD_CALLCHAIN_DEFERRED:
		rb_start(r, type, 0);
		p64(r, 0xc00c1e); p64(r, 2); p64(r, PERF_CONTEXT_USER); p64(r, 0x401000);
		break;
	default:
		fail();
	}
	psid(r, tst);
	return rb_end(r);
}

static void check_record(const struct pk_record *r)
{
	switch (r->type) {
	case PERF_RECORD_MMAP:
		assert_int_equal(r->mmap.pid, 10);
		assert_int_equal(r->mmap.tid, 11);
		assert_int_equal(r->mmap.addr, 0x400000);
		assert_int_equal(r->mmap.len, 0x1000);
		assert_int_equal(r->mmap.pgoff, 0x200);
		assert_string_equal(r->mmap.filename, "/usr/bin/true");
		assert_true(r->mmap.data);
		assert_int_equal(r->cpumode, PK_CPUMODE_USER);
		break;
	case PERF_RECORD_LOST:
		assert_int_equal(r->lost.id, 0x77);
		assert_int_equal(r->lost.lost, 12);
		break;
	case PERF_RECORD_COMM:
		assert_int_equal(r->comm.pid, 10);
		assert_string_equal(r->comm.comm, "worker-thread");
		assert_true(r->comm.exec);
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		assert_int_equal(r->task.pid, 10);
		assert_int_equal(r->task.ppid, 1);
		assert_int_equal(r->task.tid, 11);
		assert_int_equal(r->task.ptid, 2);
		assert_int_equal(r->task.time, 555);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		assert_int_equal(r->throttle.time, 666);
		assert_int_equal(r->throttle.id, 0x77);
		assert_int_equal(r->throttle.stream_id, 0x78);
		break;
	case PERF_RECORD_READ: {
		assert_int_equal(r->read.pid, 10);
		assert_int_equal(r->read.nr, 2);
		struct pk_count_value v[2];
		assert_int_equal(pk_read_format__decode(PERF_FORMAT_GROUP | PERF_FORMAT_ID,
							r->read.values, r->read.size, v, 2, NULL), 2);
		assert_int_equal(v[1].val, 101);
		assert_int_equal(v[1].id, 901);
		break;
	}
	case PERF_RECORD_MMAP2:
		assert_false(r->mmap2.has_build_id);
		assert_int_equal(r->mmap2.maj, 8);
		assert_int_equal(r->mmap2.min, 1);
		assert_int_equal(r->mmap2.ino, 123456);
		assert_int_equal(r->mmap2.ino_generation, 9);
		assert_int_equal(r->mmap2.prot, 5);
		assert_int_equal(r->mmap2.flags, 2);
		assert_string_equal(r->mmap2.filename, "/lib/libc.so.6");
		assert_false(r->mmap2.data);
		assert_int_equal(r->cpumode, PK_CPUMODE_KERNEL);
		break;
	case PERF_RECORD_AUX:
		assert_int_equal(r->aux.aux_offset, 4096);
		assert_int_equal(r->aux.aux_size, 512);
		assert_true(r->aux.truncated);
		assert_false(r->aux.overwrite);
		assert_false(r->aux.partial);
		assert_true(r->aux.collision);
		assert_int_equal(r->aux.pmu_format, 1);
		break;
	case PERF_RECORD_ITRACE_START:
		assert_int_equal(r->itrace_start.pid, 10);
		assert_int_equal(r->itrace_start.tid, 11);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		assert_int_equal(r->lost_samples.lost, 31);
		break;
	case PERF_RECORD_SWITCH:
		assert_true(r->sw.out);
		assert_true(r->sw.preempt);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		assert_false(r->sw.out);
		assert_int_equal(r->sw.next_prev_pid, 20);
		assert_int_equal(r->sw.next_prev_tid, 21);
		break;
	case PERF_RECORD_NAMESPACES:
		assert_int_equal(r->namespaces.nr, 7);
		assert_int_equal(r->namespaces.ns[6].dev, 0x106);
		assert_int_equal(r->namespaces.ns[6].ino, 0xf0000006u);
		break;
	case PERF_RECORD_KSYMBOL:
		assert_int_equal(r->ksymbol.addr, 0xffffffffa0000000ull);
		assert_int_equal(r->ksymbol.len, 256);
		assert_int_equal(r->ksymbol.ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
		assert_true(r->ksymbol.unregister);
		assert_string_equal(r->ksymbol.name, "bpf_prog_6deef7357e7b4530");
		break;
	case PERF_RECORD_BPF_EVENT:
		assert_int_equal(r->bpf_event.type, PERF_BPF_EVENT_PROG_LOAD);
		assert_int_equal(r->bpf_event.id, 42);
		assert_int_equal(r->bpf_event.tag[7], 8);
		break;
	case PERF_RECORD_CGROUP:
		assert_int_equal(r->cgroup.id, 0xc9);
		assert_string_equal(r->cgroup.path, "/system.slice/foo.service");
		break;
	case PERF_RECORD_TEXT_POKE:
		assert_int_equal(r->text_poke.old_len, 5);
		assert_int_equal(r->text_poke.new_len, 5);
		assert_memory_equal(r->text_poke.old_bytes, "\x0f\x1f\x44\x00\x00", 5);
		assert_memory_equal(r->text_poke.new_bytes, "\xe8\x01\x02\x03\x04", 5);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		assert_int_equal(r->aux_output_hw_id.hw_id, 0xabc);
		break;
	case PK_RECORD_CALLCHAIN_DEFERRED:
		assert_int_equal(r->callchain_deferred.cookie, 0xc00c1e);
		assert_int_equal(r->callchain_deferred.nr, 2);
		assert_int_equal(r->callchain_deferred.ips[1], 0x401000);
		break;
	default:
		fail();
	}
}

static const uint32_t nonsample_types[] = {
	PERF_RECORD_MMAP, PERF_RECORD_LOST, PERF_RECORD_COMM, PERF_RECORD_EXIT,
	PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE, PERF_RECORD_FORK, PERF_RECORD_READ,
	PERF_RECORD_MMAP2, PERF_RECORD_AUX, PERF_RECORD_ITRACE_START, PERF_RECORD_LOST_SAMPLES,
	PERF_RECORD_SWITCH, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_NAMESPACES,
	PERF_RECORD_KSYMBOL, PERF_RECORD_BPF_EVENT, PERF_RECORD_CGROUP, PERF_RECORD_TEXT_POKE,
	PERF_RECORD_AUX_OUTPUT_HW_ID, PK_RECORD_CALLCHAIN_DEFERRED,
};

static const uint64_t trailer_types[] = {
	0,
	PK_SAMPLE_ID_ALL_MASK,
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
	PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,
	PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_IDENTIFIER,
};

static void test_records_all_types(void **state)
{
	for (size_t t = 0; t < PK_ARRAY_LEN(trailer_types); t++) {
		uint64_t st = trailer_types[t];
		for (int id_all = 0; id_all < 2; id_all++) {
			if (!st && id_all)
				continue;
			struct pk_sample_layout l;
			layout_for(&l, st, PERF_FORMAT_GROUP | PERF_FORMAT_ID, id_all);
			for (size_t i = 0; i < PK_ARRAY_LEN(nonsample_types); i++) {
				uint32_t type = nonsample_types[i];
				const struct perf_event_header *h =
					build_record(&R, type, id_all ? st : 0);
				struct pk_record r;
				const char *bad = NULL;
				int err = decode_exact(&l, h, &r, &bad);
				if (err)
					fail_msg("type %u trailer %#llx: err %d (%s)", type,
						 (unsigned long long)st, err, bad ? bad : "?");
				/* decode_exact freed the copy: decode in place to inspect */
				assert_int_equal(pk_record__decode(&l, h, &r, &bad), 0);
				assert_int_equal(r.type, type);
				assert_non_null(pk_record_type__name(type));
				check_record(&r);
				uint64_t tm = id_all ? (st & PK_SAMPLE_ID_ALL_MASK) : 0;
				assert_int_equal(r.has_sid, tm != 0);
				assert_int_equal(r.sid.type, tm);
				if (tm & PERF_SAMPLE_TID) {
					assert_int_equal(r.sid.pid, SID_PID);
					assert_int_equal(r.sid.tid, SID_TID);
				}
				if (tm & PERF_SAMPLE_TIME)
					assert_int_equal(r.sid.time, SID_TIME);
				if (tm & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
					assert_int_equal(r.sid.id, SID_ID);
				if (tm & PERF_SAMPLE_STREAM_ID)
					assert_int_equal(r.sid.stream_id, SID_STREAM);
				if (tm & PERF_SAMPLE_CPU)
					assert_int_equal(r.sid.cpu, SID_CPU);
				struct pk_sample_id sid;
				assert_int_equal(pk_record__sample_id(&l, h, &sid), 0);
				assert_memory_equal(&sid, &r.sid, sizeof(sid));
				uint64_t id = 0;
				if (id_all && (tm & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))) {
					assert_int_equal(pk_sample_layout__record_id(&l, h, &id), 0);
					assert_int_equal(id, SID_ID);
				} else {
					assert_int_equal(pk_sample_layout__record_id(&l, h, &id), -ENOENT);
				}
				/* the wrong layout (trailer missing or unexpected): rejected or
				 * decoded, but never read out of bounds */
				struct pk_sample_layout other;
				layout_for(&other, PK_SAMPLE_ID_ALL_MASK, 0, !id_all);
				(void)decode_exact(&other, h, &r, &bad);
			}
		}
	}
	/* without a layout: no trailer */
	struct pk_record r;
	assert_int_equal(pk_record__decode(NULL, build_record(&R, PERF_RECORD_LOST, 0), &r, NULL), 0);
	assert_int_equal(r.lost.lost, 12);
	assert_int_equal(pk_record__decode(NULL, build_sample(&R, PERF_SAMPLE_IP, 0, &default_shape, 0),
					   &r, NULL), -EINVAL);
}

static bool has_string(uint32_t type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 || type == PERF_RECORD_COMM ||
	       type == PERF_RECORD_KSYMBOL || type == PERF_RECORD_CGROUP;
}

/* Every prefix of every record: fixed layouts must fail; string records may still decode
 * when only padding was cut, but then the string lies inside the shorter record. */
static void test_records_truncated(void **state)
{
	for (int id_all = 0; id_all < 2; id_all++) {
		struct pk_sample_layout l;
		layout_for(&l, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER,
			   PERF_FORMAT_GROUP | PERF_FORMAT_ID, id_all);
		for (size_t i = 0; i < PK_ARRAY_LEN(nonsample_types); i++) {
			uint32_t type = nonsample_types[i];
			const struct perf_event_header *h =
				build_record(&R, type, id_all ? l.sample_type : 0);
			uint16_t full = h->size;
			for (uint16_t n = 0; n < full; n++) {
				size_t alloc = n < 8 ? 8 : n;
				uint8_t *copy = malloc(alloc);
				memcpy(copy, R.b, alloc);
				memcpy(copy + 6, &n, 2);
				struct pk_record r;
				const char *bad = NULL;
				int err = pk_record__decode(&l, (void *)copy, &r, &bad);
				if (err == 0 && has_string(type)) {
					const char *s = type == PERF_RECORD_MMAP ? r.mmap.filename
						: type == PERF_RECORD_MMAP2 ? r.mmap2.filename
						: type == PERF_RECORD_COMM ? r.comm.comm
						: type == PERF_RECORD_KSYMBOL ? r.ksymbol.name
						: r.cgroup.path;
					assert_true((const uint8_t *)s + strlen(s) <
						    copy + n - (id_all ? l.id_size : 0));
				} else if (err != -PK_ERR_FORMAT) {
					fail_msg("type %u size %u/%u: err %d", type, n, full, err);
				}
				free(copy);
			}
		}
	}
}

static void test_records_bad_strings(void **state)
{
	static const uint32_t types[] = { PERF_RECORD_MMAP, PERF_RECORD_MMAP2, PERF_RECORD_COMM,
					  PERF_RECORD_KSYMBOL, PERF_RECORD_CGROUP };
	struct pk_sample_layout l;
	layout_for(&l, PERF_SAMPLE_TIME, 0, true);
	for (size_t i = 0; i < PK_ARRAY_LEN(types); i++) {
		build_record(&R, types[i], 0);
		/* replace every NUL after the fixed part with 'x', then add the trailer */
		size_t fixed = types[i] == PERF_RECORD_MMAP ? 40 : types[i] == PERF_RECORD_MMAP2 ? 72
			: types[i] == PERF_RECORD_KSYMBOL ? 24 : 16;
		for (size_t k = fixed; k < R.len; k++)
			if (!R.b[k])
				R.b[k] = 'x';
		p64(&R, 0); /* trailer TIME = 0: the NUL bytes there must not count */
		const struct perf_event_header *h = rb_end(&R);
		struct pk_record r;
		const char *bad = NULL;
		assert_int_equal(decode_exact(&l, h, &r, &bad), -PK_ERR_FORMAT);
		assert_non_null(bad);
		/* empty string area */
		R.len = fixed;
		p64(&R, 0);
		assert_int_equal(decode_exact(&l, rb_end(&R), &r, &bad), -PK_ERR_FORMAT);
	}
}

static void test_records_special(void **state)
{
	struct pk_record r;
	const char *bad = NULL;
	struct pk_sample_layout l;
	layout_for(&l, PERF_SAMPLE_TIME, 0, false);

	/* MMAP2 build-id variant */
	rb_start(&R, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	p32(&R, 1); p32(&R, 1); p64(&R, 0x1000); p64(&R, 0x2000); p64(&R, 0);
	p8(&R, 20); p8(&R, 0); p16(&R, 0);
	for (int i = 0; i < 20; i++)
		p8(&R, (uint8_t)(0xa0 + i));
	p32(&R, 5); p32(&R, 2);
	pstr(&R, "/bin/sh");
	assert_int_equal(pk_record__decode(&l, rb_end(&R), &r, &bad), 0);
	assert_true(r.mmap2.has_build_id);
	assert_int_equal(r.mmap2.build_id_size, 20);
	assert_int_equal(r.mmap2.build_id[0], 0xa0);
	assert_int_equal(r.mmap2.build_id[19], 0xb3);
	assert_int_equal(r.mmap2.ino, 0);
	assert_string_equal(r.mmap2.filename, "/bin/sh");
	R.b[40] = 21;
	assert_int_equal(pk_record__decode(&l, rb_end(&R), &r, &bad), -PK_ERR_FORMAT);
	assert_string_equal(bad, "mmap2.build_id_size");

	/* namespaces nr beyond the record */
	rb_start(&R, PERF_RECORD_NAMESPACES, 0);
	p32(&R, 1); p32(&R, 1); p64(&R, 1ull << 60); p64(&R, 0); p64(&R, 0);
	assert_int_equal(pk_record__decode(&l, rb_end(&R), &r, &bad), -PK_ERR_FORMAT);
	assert_string_equal(bad, "namespaces.link_info");

	/* text_poke lengths beyond the record */
	rb_start(&R, PERF_RECORD_TEXT_POKE, 0);
	p64(&R, 0); p16(&R, 0xffff); p16(&R, 1); p32(&R, 0);
	assert_int_equal(pk_record__decode(&l, rb_end(&R), &r, &bad), -PK_ERR_FORMAT);
	assert_string_equal(bad, "text_poke.bytes");

	/* READ record whose values do not match the layout's read_format */
	layout_for(&l, PERF_SAMPLE_READ, PERF_FORMAT_ID, false);
	rb_start(&R, PERF_RECORD_READ, 0);
	p32(&R, 1); p32(&R, 1); p64(&R, 5);
	assert_int_equal(pk_record__decode(&l, rb_end(&R), &r, &bad), -PK_ERR_FORMAT);
	p64(&R, 6);
	assert_int_equal(pk_record__decode(&l, rb_end(&R), &r, &bad), 0);
	assert_int_equal(r.read.nr, 1);

	/* a fixed-size record that is too long */
	build_record(&R, PERF_RECORD_LOST, 0);
	p64(&R, 0);
	assert_int_equal(pk_record__decode(NULL, rb_end(&R), &r, &bad), -PK_ERR_FORMAT);

	/* header.size below 8, misaligned, NULL */
	uint64_t tiny = 0;
	struct perf_event_header th = { .type = PERF_RECORD_LOST, .size = 4 };
	memcpy(&tiny, &th, sizeof(th));
	assert_int_equal(pk_record__decode(NULL, (void *)&tiny, &r, &bad), -PK_ERR_FORMAT);
	assert_int_equal(pk_record__decode(NULL, (void *)(R.b + 1), &r, &bad), -EINVAL);
	assert_int_equal(pk_record__decode(NULL, NULL, &r, &bad), -EINVAL);
}

static void test_records_unknown(void **state)
{
	static const uint32_t types[] = { 0, 23, 24, 63, 64, 68, 200, 65535, 1u << 20 };
	struct pk_sample_layout l;
	layout_for(&l, PK_SAMPLE_ID_ALL_MASK, 0, true);
	for (size_t i = 0; i < PK_ARRAY_LEN(types); i++) {
		rb_start(&R, types[i], 0);
		p64(&R, 1);
		struct pk_record r;
		assert_int_equal(pk_record__decode(&l, rb_end(&R), &r, NULL), PK_RECORD_SKIPPED);
		assert_int_equal(r.type, types[i]);
		assert_int_equal(r.size, 16);
		assert_null(pk_record_type__name(types[i]));
		uint64_t id;
		if (types[i] >= 64)
			assert_int_equal(pk_sample_layout__record_id(&l, rb_end(&R), &id), -ENOENT);
	}
}

static void test_names(void **state)
{
	assert_string_equal(pk_record_type__name(PERF_RECORD_MMAP), "MMAP");
	assert_string_equal(pk_record_type__name(PERF_RECORD_SAMPLE), "SAMPLE");
	assert_string_equal(pk_record_type__name(PERF_RECORD_AUX_OUTPUT_HW_ID), "AUX_OUTPUT_HW_ID");
	for (uint32_t t = 1; t <= 22; t++)
		assert_non_null(pk_record_type__name(t));
	assert_int_equal(pk_misc__cpumode(PERF_RECORD_MISC_GUEST_USER | PERF_RECORD_MISC_EXACT_IP),
			 PK_CPUMODE_GUEST_USER);
	assert_int_equal(pk_misc__cpumode(6), PK_CPUMODE_INVALID);
	assert_int_equal(pk_misc__cpumode(PERF_RECORD_MISC_HYPERVISOR), PK_CPUMODE_HYPERVISOR);
	assert_string_equal(pk_cpumode__name(PK_CPUMODE_GUEST_KERNEL), "guest-kernel");
	assert_string_equal(pk_cpumode__name(PK_CPUMODE_USER), "user");
}

/* pk_read_delta: per id, the growth since the previous value (the first value whole);
 * ids do not disturb each other, the table survives growth, wrap-around is modular. */
static void test_read_delta(void **state)
{
	(void)state;
	struct pk_read_delta *d = pk_read_delta__new();
	uint64_t delta = 99;
	assert_non_null(d);
	assert_int_equal(pk_read_delta__update(d, 7, 100, &delta), 0);
	assert_int_equal(delta, 100);
	assert_int_equal(pk_read_delta__update(d, 8, 5, &delta), 0);
	assert_int_equal(delta, 5);
	assert_int_equal(pk_read_delta__update(d, 7, 250, &delta), 0);
	assert_int_equal(delta, 150);
	assert_int_equal(pk_read_delta__update(d, 8, 5, &delta), 0);
	assert_int_equal(delta, 0);
	assert_int_equal(pk_read_delta__update(d, 0, 3, &delta), 0); /* id 0 is an id too */
	assert_int_equal(delta, 3);
	/* many ids (forces several rehashes): each keeps its own last value */
	for (uint64_t id = 1000; id < 3000; id++) {
		assert_int_equal(pk_read_delta__update(d, id, id * 2, &delta), 0);
		assert_int_equal(delta, id * 2);
	}
	for (uint64_t id = 1000; id < 3000; id++) {
		assert_int_equal(pk_read_delta__update(d, id, id * 3, &delta), 0);
		assert_int_equal(delta, id);
	}
	assert_int_equal(pk_read_delta__update(d, 7, 260, &delta), 0);
	assert_int_equal(delta, 10);
	assert_int_equal(pk_read_delta__update(d, 0, 10, &delta), 0);
	assert_int_equal(delta, 7);
	/* a counter that went backwards (wrapped) */
	assert_int_equal(pk_read_delta__update(d, 7, 4, &delta), 0);
	assert_int_equal(delta, (uint64_t)4 - 260);
	assert_int_equal(pk_read_delta__update(d, 7, 4, NULL), -EINVAL);
	assert_int_equal(pk_read_delta__update(NULL, 7, 4, &delta), -EINVAL);
	pk_read_delta__free(d);
	pk_read_delta__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_sample_literal),
		cmocka_unit_test(test_sample_each_bit),
		cmocka_unit_test(test_sample_all_bits),
		cmocka_unit_test(test_sample_combinations),
		cmocka_unit_test(test_sample_decode_again),
		cmocka_unit_test(test_sample_decode_prefix),
		cmocka_unit_test(test_sample_read_formats),
		cmocka_unit_test(test_read_delta),
		cmocka_unit_test(test_sample_callchain),
		cmocka_unit_test(test_sample_raw),
		cmocka_unit_test(test_sample_branch),
		cmocka_unit_test(test_sample_regs_stack),
		cmocka_unit_test(test_sample_truncated),
		cmocka_unit_test(test_records_all_types),
		cmocka_unit_test(test_records_truncated),
		cmocka_unit_test(test_records_bad_strings),
		cmocka_unit_test(test_records_special),
		cmocka_unit_test(test_records_unknown),
		cmocka_unit_test(test_names),
	};
	pk_test_quiet_log();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
