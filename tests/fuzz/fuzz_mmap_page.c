/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mmap_page: the self-monitoring arithmetic over an arbitrary perf_event_mmap_page
 * (pk_mmap_page__read_self with a fake counter source, pk_time_conv__from_page and the
 * cycle <-> perf time conversions). Input: the page's first 96 bytes (the self-monitoring
 * fields), then 8 bytes of counter value and 8 bytes of cycle value.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "internal.h"

struct src {
	uint64_t pmc, cyc;
};
static uint64_t pmc(void *ctx, uint32_t idx)
{
	(void)idx;
	return ((struct src *)ctx)->pmc;
}
static uint64_t cyc(void *ctx)
{
	return ((struct src *)ctx)->cyc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct perf_event_mmap_page pc;
	struct src s = { 0, 0 };
	struct pk_counter_source cs = { pmc, cyc, &s };
	struct pk_self_read r;
	struct pk_time_conv tc;
	size_t n = size < 96 ? size : 96;

	memset(&pc, 0, sizeof(pc));
	memcpy(&pc, data, n);
	if (size >= 104)
		memcpy(&s.pmc, data + 96, 8);
	if (size >= 112)
		memcpy(&s.cyc, data + 104, 8);
	pk_mmap_page__read_self(&pc, &cs, &r);
	pk_mmap_page__read_self(&pc, NULL, &r);
	if (pk_time_conv__from_page(&tc, &pc) != -EAGAIN) {
		uint64_t t = pk_time_conv__cyc_to_perf(&tc, s.cyc);
		(void)pk_time_conv__perf_to_cyc(&tc, t);
		(void)pk_time_conv__perf_to_cyc(&tc, s.pmc);
	}
	(void)pk_sign_extend(s.pmc, pc.pmc_width);
	(void)pk_mul_u64_u32_shr(s.cyc, pc.time_mult, pc.time_shift);
	return 0;
}
