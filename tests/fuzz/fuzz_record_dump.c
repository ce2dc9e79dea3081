/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for perfkit report -D's text of records (tool/record-dump.c): the
 * user records (HEADER_ATTR ... FINISHED_INIT), decoded there from bytes of the input
 * with their counts and lengths checked against the record size, and the kernel records
 * LOST ... AUX_OUTPUT_HW_ID as the library decodes them.
 *
 * Input: byte 0 picks the attr (bit0 sample_id_all, bits1-3 read_format's TOTAL_TIME_*,
 * ID bits), then a stream of records; each is copied to a buffer of exactly header.size
 * bytes (ASan sees any read past it). A record's type is taken as is, and also as a user
 * type (64 + type % 19), so that short inputs reach every decoder.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>

#include "../../tool/record-dump.c"

static char sink[1 << 16];

static void pf(void *ctx, const char *fmt, ...)
{
	(void)ctx;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sink, sizeof(sink), fmt, ap); /* formats every argument, strings included */
	va_end(ap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(attr) };
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	attr.sample_id_all = data[0] & 1;
	attr.read_format = (data[0] >> 1) & 7;
	struct pk_sample_layout l;
	if (pk_sample_layout__init(&l, &attr) != 0)
		return 0;
	struct pk_data_attr da = { 0 };
	da.attr.attr = attr;
	da.idx = 0;
	data++;
	size--;
	while (size >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		memcpy(&h, data, sizeof(h));
		if (h.size < sizeof(h) || h.size > size)
			break;
		uint64_t *rec = malloc(h.size ? h.size : 1); /* malloc is 8-byte aligned */
		if (!rec)
			break;
		memcpy(rec, data, h.size);
		struct perf_event_header *rh = (struct perf_event_header *)rec;
		struct pk_record r;
		const char *bad;
		if (h.type < 64 && pk_record__decode(&l, rh, &r, &bad) == 0)
			(void)tool_record_tail_text(&r, (data[0] & 0x80) ? NULL : &da, NULL, pf, NULL);
		tool_user_record_tail_text(rh, pf, NULL);
		rh->type = 64 + h.type % 19;
		tool_user_record_tail_text(rh, pf, NULL);
		free(rec);
		data += h.size;
		size -= h.size;
	}
	return 0;
}
