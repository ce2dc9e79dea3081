// SPDX-License-Identifier: MIT
/*
 * The one JSON string escaper (rule in perfkit/export.h). Everything that writes JSON,
 * library and tool, goes through pk_json__escape, so there is one place that decides
 * what a hostile byte becomes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <perfkit/export.h>

#include "internal.h"

enum { C_PLAIN = 0, C_ESC = 1, C_HIGH = 2 };

/* byte classes: copied, escaped as ASCII, start of a UTF-8 check */
#define CTRL16 C_ESC, C_ESC, C_ESC, C_ESC, C_ESC, C_ESC, C_ESC, C_ESC, \
	       C_ESC, C_ESC, C_ESC, C_ESC, C_ESC, C_ESC, C_ESC, C_ESC
#define HIGH8 C_HIGH, C_HIGH, C_HIGH, C_HIGH, C_HIGH, C_HIGH, C_HIGH, C_HIGH
#define HIGH128 HIGH8, HIGH8, HIGH8, HIGH8, HIGH8, HIGH8, HIGH8, HIGH8, \
		HIGH8, HIGH8, HIGH8, HIGH8, HIGH8, HIGH8, HIGH8, HIGH8

static const uint8_t cls_json[256] = {
	CTRL16, CTRL16,
	['"'] = C_ESC, ['\\'] = C_ESC,
	[0x80] = HIGH128,
};

static const uint8_t cls_html[256] = {
	CTRL16, CTRL16,
	['"'] = C_ESC, ['\\'] = C_ESC, ['<'] = C_ESC, ['>'] = C_ESC, ['&'] = C_ESC,
	[0x80] = HIGH128,
};

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)
/* non-zero if a byte of x is zero (exact: no false positive when none is) */
#define HAS_ZERO(x) (((x) - ONES) & ~(x) & HIGHS)

/* non-zero if any of the 8 bytes in x is not copied as is */
static inline uint64_t special8(uint64_t x, unsigned flags)
{
	/* bytes >= 0x80, bytes < 0x20 (x - 0x20.. borrows into a clear top bit), '"', '\\' */
	uint64_t m = (x | ((x - ONES * 0x20) & ~x)) & HIGHS;
	m |= HAS_ZERO(x ^ (ONES * '"')) | HAS_ZERO(x ^ (ONES * '\\'));
	if (flags & PK_JSON_HTML)
		m |= HAS_ZERO(x ^ (ONES * '<')) | HAS_ZERO(x ^ (ONES * '>')) |
		     HAS_ZERO(x ^ (ONES * '&'));
	return m;
}

static inline bool cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629 table), 0 if there is none. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
	unsigned char b = s[0];
	if (b < 0xc2 || b > 0xf4)
		return 0;
	if (b < 0xe0)
		return avail >= 2 && cont(s[1]) ? 2 : 0;
	if (b < 0xf0) {
		/* E0: A0..BF (shorter forms are overlong); ED: 80..9F (A0.. are surrogates) */
		unsigned char lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
		return avail >= 3 && s[1] >= lo && s[1] <= hi && cont(s[2]) ? 3 : 0;
	}
	/* F0: 90..BF (overlong below); F4: 80..8F (beyond U+10FFFF above) */
	unsigned char lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
	return avail >= 4 && s[1] >= lo && s[1] <= hi && cont(s[2]) && cont(s[3]) ? 4 : 0;
}

static inline char *put_u(char *p, unsigned v)
{
	static const char dig[] = "0123456789abcdef";
	p[0] = '\\';
	p[1] = 'u';
	p[2] = dig[(v >> 12) & 15];
	p[3] = dig[(v >> 8) & 15];
	p[4] = dig[(v >> 4) & 15];
	p[5] = dig[v & 15];
	return p + 6;
}

PK_API size_t pk_json__escape(char *dst, size_t cap, const char *src, size_t n,
			      unsigned flags, size_t *consumed)
{
	const unsigned char *s = (const unsigned char *)src;
	const uint8_t *cls = flags & PK_JSON_HTML ? cls_html : cls_json;
	char *p = dst, *end = dst + cap;
	size_t i = 0;

	if (!src)
		n = 0;
	while (i < n) {
		/* the fast path: runs of plain ASCII, eight bytes at a time */
		while (n - i >= 8 && end - p >= 8) {
			uint64_t x;
			memcpy(&x, s + i, 8);
			if (special8(x, flags))
				break;
			memcpy(p, &x, 8);
			p += 8;
			i += 8;
		}
		while (i < n && p < end && cls[s[i]] == C_PLAIN)
			*p++ = (char)s[i++];
		if (i == n || p == end)
			break;

		unsigned char b = s[i];
		size_t room = (size_t)(end - p);
		if (cls[b] == C_ESC) {
			char e = b == '"' ? '"' : b == '\\' ? '\\' : b == '\n' ? 'n' :
				 b == '\t' ? 't' : b == '\r' ? 'r' : 0;
			if (e) {
				if (room < 2)
					break;
				p[0] = '\\';
				p[1] = e;
				p += 2;
			} else {
				if (room < 6)
					break;
				p = put_u(p, b);
			}
			i++;
			continue;
		}
		size_t len = utf8_len(s + i, n - i);
		if (!len) {
			if (room < 6)
				break;
			p = put_u(p, 0xfffd);
			i++;
		} else if ((flags & PK_JSON_HTML) && len == 3 && b == 0xe2 && s[i + 1] == 0x80 &&
			   (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
			/* U+2028/U+2029 end a line in pre-2019 JavaScript */
			if (room < 6)
				break;
			p = put_u(p, s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
			i += 3;
		} else {
			if (room < len)
				break;
			memcpy(p, s + i, len);
			p += len;
			i += len;
		}
	}
	if (consumed)
		*consumed = i;
	return (size_t)(p - dst);
}

PK_API int pk_json__write_str(FILE *f, const char *s, unsigned flags)
{
	char buf[4096];
	size_t n = s ? strlen(s) : 0, i = 0;

	putc('"', f);
	while (i < n) {
		size_t used = 0;
		size_t k = pk_json__escape(buf, sizeof(buf), s + i, n - i, flags, &used);
		fwrite(buf, 1, k, f);
		i += used;
	}
	putc('"', f);
	return ferror(f) ? pk_err(-EIO) : 0;
}
