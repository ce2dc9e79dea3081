/* SPDX-License-Identifier: MIT */
#include <linux/perf_event.h>
#include "internal.h"
#include <perfkit/readfmt.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif
#define KNOWN_FORMAT (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | \
		      PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST)

static size_t per_counter(uint64_t rf)
{
	return 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));
}

static size_t header_words(uint64_t rf)
{
	return !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
}

PK_API size_t pk_read_format__size(uint64_t rf, uint64_t nr)
{
	if (rf & PERF_FORMAT_GROUP)
		return 8 * (1 + header_words(rf)) + (size_t)nr * per_counter(rf);
	return 8 * header_words(rf) + per_counter(rf);
}

PK_API int pk_read_format__decode(uint64_t rf, const void *buf, size_t len,
				  struct pk_count_value *out, size_t max, size_t *consumed)
{
	const uint8_t *p = buf;
	uint64_t w[1];
	size_t off = 0;
	uint64_t nr = 1, ena = 0, run = 0;

	if (rf & ~(uint64_t)KNOWN_FORMAT)
		return pk_err(-EINVAL);
#define TAKE(dst)                                        \
	do {                                             \
		if (len - off < 8)                       \
			return pk_err(-PK_ERR_FORMAT);   \
		memcpy(w, p + off, 8);                   \
		off += 8;                                \
		(dst) = w[0];                            \
	} while (0)

	if (rf & PERF_FORMAT_GROUP) {
		TAKE(nr);
		/* each member needs at least 8 bytes: reject an nr the buffer cannot hold */
		if (nr > len / 8)
			return pk_err(-PK_ERR_FORMAT);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			TAKE(ena);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			TAKE(run);
		for (uint64_t i = 0; i < nr; i++) {
			struct pk_count_value v = { .ena = ena, .run = run };
			TAKE(v.val);
			if (rf & PERF_FORMAT_ID)
				TAKE(v.id);
			if (rf & PERF_FORMAT_LOST)
				TAKE(v.lost);
			if (i < max && out)
				out[i] = v;
		}
	} else {
		struct pk_count_value v = { 0 };
		TAKE(v.val);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			TAKE(v.ena);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			TAKE(v.run);
		if (rf & PERF_FORMAT_ID)
			TAKE(v.id);
		if (rf & PERF_FORMAT_LOST)
			TAKE(v.lost);
		if (max && out)
			out[0] = v;
	}
#undef TAKE
	if (consumed)
		*consumed = off;
	else if (off != len)
		return pk_err(-PK_ERR_FORMAT);
	return nr > INT32_MAX ? pk_err(-PK_ERR_FORMAT) : (int)nr;
}
