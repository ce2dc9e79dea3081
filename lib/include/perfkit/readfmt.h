/* SPDX-License-Identifier: MIT */
/*
 * perfkit/readfmt.h - the layout read(2) returns for a counter fd, and PERF_SAMPLE_READ
 * carries in samples, for any combination of read_format bits:
 *
 *   !GROUP: { u64 value; [u64 time_enabled]; [u64 time_running]; [u64 id]; [u64 lost]; }
 *    GROUP: { u64 nr; [u64 time_enabled]; [u64 time_running];
 *             { u64 value; [u64 id]; [u64 lost]; } cntr[nr]; }
 */
#ifndef PERFKIT_READFMT_H
#define PERFKIT_READFMT_H

#include <perfkit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One counter's value as read: value, times (0 when not requested), id, lost. */
struct pk_count_value {
	uint64_t val;
	uint64_t ena;   /* time_enabled (ns) */
	uint64_t run;   /* time_running (ns) */
	uint64_t id;
	uint64_t lost;
};

/* Bytes read(2) returns for `read_format` and `nr` counters (nr is 1 without GROUP). */
PK_API size_t pk_read_format__size(uint64_t read_format, uint64_t nr);

/*
 * Decode `len` bytes in `read_format` layout into out[0..max). With GROUP every member
 * gets the group's ena/run. Returns the number of counters in the buffer (which may exceed
 * max: only max are written) or -PK_ERR_FORMAT if len does not match the layout exactly
 * (an nr that would overrun len included) / -EINVAL on unknown read_format bits.
 * With `consumed` NULL the layout must fill `len` exactly; otherwise trailing bytes are
 * allowed and *consumed receives the number of bytes the layout occupies (for samples,
 * where more fields follow).
 */
PK_API int pk_read_format__decode(uint64_t read_format, const void *buf, size_t len,
				  struct pk_count_value *out, size_t max, size_t *consumed);

#ifdef __cplusplus
}
#endif
#endif
