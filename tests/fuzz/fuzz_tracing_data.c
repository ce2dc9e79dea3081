/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: the tracing-data blob parser (TRACING_DATA feature payload) and the
 * pipe-mode transport of the blob through the perf.data reader. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>

static void quiet(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static size_t touch(const char *s, size_t len)
{
	/* the strings are NUL-terminated at len: ASan checks both */
	return s ? (size_t)(unsigned char)s[len] + strlen(s) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	volatile size_t sink = 0;

	if (!init) {
		pk_set_log(quiet, NULL, PK_LOG_ERROR);
		init = 1;
	}
	struct pk_tracing_data *td = pk_tracing_data__parse(data, size);
	if (td) {
		const struct pk_tracing_info *in = pk_tracing_data__info(td);
		sink += strlen(in->version) + in->page_size + in->long_size + in->parsed_len;
		sink += touch(in->header_page, in->header_page_len);
		sink += touch(in->header_event, in->header_event_len);
		sink += touch(in->kallsyms, in->kallsyms_len);
		sink += touch(in->printk, in->printk_len);
		sink += touch(in->saved_cmdlines, in->saved_cmdlines_len);
		if (in->parsed_len > size)
			abort();
		const struct pk_tracing_event *e;
		size_t n = 0;
		pk_tracing_data__for_each_event(e, td) {
			sink += strlen(e->system) + strlen(e->name) + touch(e->format, e->format_len);
			if (e->id >= 0 && !pk_tracing_data__find_id(td, e->id))
				abort();
			n++;
		}
		if (n != pk_tracing_data__nr_events(td))
			abort();
		pk_tracing_data__free(td);
	}
	/* the same bytes as the payload of a pipe-mode HEADER_TRACING_DATA record */
	if (size <= 32768) {
		size_t padded = (size + 7) & ~(size_t)7;
		uint8_t *buf = calloc(1, 32 + padded);
		if (!buf)
			return 0;
		uint64_t hdr[2] = { 0x32454c4946524550ULL, 16 };
		struct perf_event_header h = { .type = PK_RECORD_HEADER_TRACING_DATA, .size = 16 };
		uint32_t sz[2] = { (uint32_t)padded, 0 };
		memcpy(buf, hdr, 16);
		memcpy(buf + 16, &h, 8);
		memcpy(buf + 24, sz, 8);
		if (size)
			memcpy(buf + 32, data, size);
		struct pk_data_reader *r = pk_data_reader__open_mem(buf, 32 + padded, NULL);
		if (r) {
			size_t len;
			const uint8_t *t = pk_data_reader__tracing_data(r, &len);
			if (t && (len != padded || (size && memcmp(t, data, size))))
				abort();
			pk_data_reader__free(r);
		}
		free(buf);
	}
	(void)sink;
	return 0;
}
