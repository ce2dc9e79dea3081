/* SPDX-License-Identifier: MIT */
/* tool/script-fmt.h - `perfkit script`'s fast number formatters (tests/unit/test_script_fmt.c
 * checks them against printf) */
#ifndef TOOL_SCRIPT_FMT_H
#define TOOL_SCRIPT_FMT_H

#include <stdint.h>
#include <string.h>
#include "out.h"

/*
 * Faster forms of out.h's fmt_hex, fmt_hex16 and fmt_u64 for the per-sample and
 * per-frame fields (the same text; sys.data --json spent 9 % of its instructions in
 * their digit loops): eight hex digits at a time with word arithmetic, and decimals
 * above 10^8 as a short loop and four digit pairs. fmt_hex_fast writes 16 bytes
 * whatever the length (the caller has room for 16).
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* the 8 hex digits of x, first digit in the lowest byte (string order in memory) */
static inline uint64_t hex8_word(uint32_t x)
{
	uint64_t y = x;
	y = (y | (y << 16)) & 0x0000ffff0000ffffull;
	y = (y | (y << 8)) & 0x00ff00ff00ff00ffull;
	y = (y | (y << 4)) & 0x0f0f0f0f0f0f0f0full;  /* byte k: nibble k */
	uint64_t letters = ((y + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
	y += 0x3030303030303030ull + letters * ('a' - '0' - 10);
	return __builtin_bswap64(y);
}

static inline int hex_ndigits(uint64_t v)
{
	return v ? (64 - __builtin_clzll(v) + 3) / 4 : 1;
}

static inline char *fmt_hex_fast(char *p, uint64_t v)
{
	uint64_t w[4] = { hex8_word((uint32_t)(v >> 32)), hex8_word((uint32_t)v), 0, 0 };
	int nd = hex_ndigits(v);
	memcpy(p, (const char *)w + 16 - nd, 16);
	return p + nd;
}

static inline char *fmt_hex16_fast(char *p, uint64_t v)
{
	uint64_t a = hex8_word((uint32_t)(v >> 32)), b = hex8_word((uint32_t)v);
	const uint64_t sp = 0x2020202020202020ull;
	int lead = 16 - hex_ndigits(v);
	if (lead >= 8) {
		unsigned k = 8u * (unsigned)(lead - 8);
		a = sp;
		if (k)
			b = (b & (~0ull << k)) | (sp & ((1ull << k) - 1));
	} else if (lead) {
		unsigned k = 8u * (unsigned)lead;
		a = (a & (~0ull << k)) | (sp & ((1ull << k) - 1));
	}
	memcpy(p, &a, 8);
	memcpy(p + 8, &b, 8);
	return p + 16;
}
#else
#define fmt_hex_fast fmt_hex
#define fmt_hex16_fast fmt_hex16
#endif

/* decimal of a 32-bit value, written in place (no copy through a buffer): at most 10 bytes */
static inline char *fmt_u32_fast(char *p, uint32_t v)
{
	int n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5 :
		v < 1000000 ? 6 : v < 10000000 ? 7 : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
	char *e = p + n;
	while (v >= 100) {
		e -= 2;
		memcpy(e, pk_digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(e - 2, pk_digit_pairs + 2 * v, 2);
	else
		e[-1] = (char)('0' + v);
	return p + n;
}

/* a pid or tid as fmt_pid_pad(p, v, 0) prints it (signed) */
static inline char *fmt_pid_fast(char *p, uint32_t v)
{
	return (int32_t)v < 0 ? fmt_pid_pad(p, v, 0) : fmt_u32_fast(p, v);
}

static inline char *fmt_u64_fast(char *p, uint64_t v)
{
	if (v <= UINT32_MAX)
		return fmt_u32_fast(p, (uint32_t)v);
	if (v >= 10000000000000000ull)
		return fmt_u64(p, v);
	uint32_t lo = (uint32_t)(v % 100000000u);
	p = fmt_u32_fast(p, (uint32_t)(v / 100000000u));
	memcpy(p, pk_digit_pairs + 2 * (lo / 1000000), 2);
	memcpy(p + 2, pk_digit_pairs + 2 * (lo / 10000 % 100), 2);
	memcpy(p + 4, pk_digit_pairs + 2 * (lo / 100 % 100), 2);
	memcpy(p + 6, pk_digit_pairs + 2 * (lo % 100), 2);
	return p + 8;
}

#endif
