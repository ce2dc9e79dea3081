/* SPDX-License-Identifier: MIT */
/*
 * lib/core/crc32c.c - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the check
 * value of our own cache files. x86-64 CPUs with SSE4.2 compute it with the crc32
 * instruction (8 bytes per instruction, ~8 GB/s here, several times zlib's crc32);
 * elsewhere a byte-wise table does it.
 */
#include <pthread.h>
#include <stdbool.h>
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

/*
 * Joining CRCs: the CRC of A followed by B from crc(A), crc(B) and |B|. CRC-32C is linear
 * over GF(2): appending a zero bit to the message is a fixed 32x32 bit-matrix applied to
 * the register, so appending |B| zero bytes is that matrix raised to 8|B|, built by
 * squaring; crc(A.B) = M^(8|B|) crc(A) ^ crc(B) (the pre- and post-inversions cancel).
 * A few microseconds per join: used to run three parts of a long buffer side by side.
 */
static uint32_t gf2_apply(const uint32_t m[32], uint32_t v)
{
	uint32_t r = 0;
	for (int i = 0; v; i++, v >>= 1)
		if (v & 1)
			r ^= m[i];
	return r;
}

static void gf2_square(uint32_t dst[32], const uint32_t m[32])
{
	for (int i = 0; i < 32; i++)
		dst[i] = gf2_apply(m, m[i]);
}

/* op: the matrix that appends `len` zero bytes to a register (len > 0) */
static void crc32c_zeros_op(size_t len, uint32_t op[32])
{
	uint32_t a[32], b[32];
	/* one zero bit: bit 0 of the reflected register shifts out through the polynomial */
	a[0] = 0x82F63B78u;
	for (int i = 1; i < 32; i++)
		a[i] = 1u << (i - 1);
	gf2_square(b, a); /* 2 bits */
	gf2_square(a, b); /* 4 bits */
	uint32_t *cur = a, *next = b;
	bool have = false;
	for (size_t n = len; n; n >>= 1) {
		gf2_square(next, cur); /* the first gives one byte, then 2, 4, ... */
		uint32_t *t = cur;
		cur = next;
		next = t;
		if (n & 1) {
			if (have) {
				uint32_t r[32];
				for (int i = 0; i < 32; i++)
					r[i] = gf2_apply(cur, op[i]);
				memcpy(op, r, sizeof(r));
			} else {
				memcpy(op, cur, 32 * sizeof(*op));
				have = true;
			}
		}
	}
}

uint32_t pk_crc32c_join(uint32_t crc_a, uint32_t crc_b, size_t len_b)
{
	if (!len_b)
		return crc_a ^ crc_b; /* (the CRC of nothing is 0) */
	uint32_t op[32];
	crc32c_zeros_op(len_b, op);
	return gf2_apply(op, crc_a) ^ crc_b;
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
	/* the crc32 instruction takes 3 cycles and can start every cycle: a long buffer runs
	 * as three parts at once, joined at the end (~3x faster: the kallsyms cache's 7 MB
	 * check, done by every run that reads kernel symbols, 0.9 -> 0.3 ms) */
	if (len >= 3 * 8192) {
		size_t part = (len / 3) & ~(size_t)7;
		const uint8_t *q = p + part, *r = p + 2 * part;
		uint64_t c1 = ~0u, c2 = ~0u;
		for (size_t i = 0; i < part; i += 8) {
			uint64_t w0, w1, w2;
			memcpy(&w0, p + i, 8);
			memcpy(&w1, q + i, 8);
			memcpy(&w2, r + i, 8);
			c = __builtin_ia32_crc32di(c, w0);
			c1 = __builtin_ia32_crc32di(c1, w1);
			c2 = __builtin_ia32_crc32di(c2, w2);
		}
		uint32_t op[32];
		crc32c_zeros_op(part, op); /* both joins append `part` bytes */
		uint32_t j = gf2_apply(op, ~(uint32_t)c) ^ ~(uint32_t)c1;
		c = ~(gf2_apply(op, j) ^ ~(uint32_t)c2);
		p += 3 * part;
		len -= 3 * part;
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
