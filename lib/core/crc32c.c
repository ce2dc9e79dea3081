/* SPDX-License-Identifier: MIT */
/*
 * lib/core/crc32c.c - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the check
 * value of our own cache files. x86-64 CPUs with SSE4.2 compute it with the crc32
 * instruction (8 bytes per instruction, ~8 GB/s here, several times zlib's crc32);
 * elsewhere a byte-wise table does it.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "internal.h"

static uint32_t crc32c_table[256];

static void crc32c_init_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
		crc32c_table[i] = c;
	}
}

uint32_t pk_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, crc32c_init_table);
	const uint8_t *p = buf;
	uint32_t c = ~crc;
	while (len--)
		c = crc32c_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *buf,
							    size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#endif

uint32_t pk_crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_hw(crc, buf, len);
#endif
	return pk_crc32c_sw(crc, buf, len);
}
