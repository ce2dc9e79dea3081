/* SPDX-License-Identifier: MIT */
/*
 * pk_json__escape / pk_json__write_str: the one JSON string escaper. Every output is checked
 * by a strict JSON-string parser and UTF-8 decoder written here independently (code point
 * arithmetic, not byte tables), and compared with what the documented rule predicts.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

/*
 * Decode one strict UTF-8 character at s (n bytes left): its length, or 0 if the bytes are
 * not the shortest encoding of a scalar value (U+0000..U+10FFFF minus surrogates).
 */
static size_t ref_utf8(const unsigned char *s, size_t n, unsigned long *cp)
{
	size_t len;
	unsigned long v, min;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	} else if ((s[0] & 0xe0) == 0xc0) {
		len = 2, v = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, v = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, v = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

static int hexval(unsigned char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * Strictly parse the inside of a JSON string (RFC 8259) that must also be strict UTF-8;
 * store the code points. Returns the number of code points or -1 if invalid.
 */
static long ref_parse(const char *txt, size_t n, unsigned long *out, size_t max)
{
	const unsigned char *s = (const unsigned char *)txt;
	size_t i = 0, k = 0;
	while (i < n) {
		unsigned long cp;
		if (k == max)
			return -1;
		if (s[i] == '"' || s[i] < 0x20)
			return -1;
		if (s[i] != '\\') {
			size_t len = ref_utf8(s + i, n - i, &cp);
			if (!len)
				return -1;
			out[k++] = cp;
			i += len;
			continue;
		}
		if (i + 1 >= n)
			return -1;
		switch (s[i + 1]) {
		case '"': cp = '"'; break;
		case '\\': cp = '\\'; break;
		case '/': cp = '/'; break;
		case 'b': cp = 8; break;
		case 'f': cp = 12; break;
		case 'n': cp = 10; break;
		case 'r': cp = 13; break;
		case 't': cp = 9; break;
		case 'u':
			if (i + 6 > n)
				return -1;
			cp = 0;
			for (int d = 2; d < 6; d++) {
				int h = hexval(s[i + d]);
				if (h < 0)
					return -1;
				cp = cp << 4 | (unsigned long)h;
			}
			/* we never write surrogate pairs; a lone surrogate is not text */
			if (cp >= 0xd800 && cp <= 0xdfff)
				return -1;
			out[k++] = cp;
			i += 6;
			continue;
		default:
			return -1;
		}
		out[k++] = cp;
		i += 2;
	}
	return (long)k;
}

/* What the documented rule makes of in[0..n): code points (invalid bytes -> U+FFFD). */
static size_t ref_expect(const unsigned char *in, size_t n, unsigned long *out)
{
	size_t i = 0, k = 0;
	while (i < n) {
		unsigned long cp;
		size_t len = ref_utf8(in + i, n - i, &cp);
		if (!len) {
			out[k++] = 0xfffd;
			i++;
		} else {
			out[k++] = cp;
			i += len;
		}
	}
	return k;
}

/* Escape in[0..n) with flags and check the output against the rule; returns the output. */
static char *check_escape(const void *in, size_t n, unsigned flags, size_t *outlen)
{
	size_t cap = PK_JSON_ESCAPED_MAX(n) + 1, used = (size_t)-1;
	char *buf = malloc(cap + 16);
	assert_non_null(buf);
	memset(buf, 0x55, cap + 16);
	size_t len = pk_json__escape(buf, cap, in, n, flags, &used);
	assert_int_equal(used, n);
	assert_true(len <= PK_JSON_ESCAPED_MAX(n));
	assert_int_equal((unsigned char)buf[len], 0x55); /* nothing past what it says */

	unsigned long *got = calloc(n + 1, sizeof(*got)), *want = calloc(n + 1, sizeof(*want));
	assert_non_null(got);
	assert_non_null(want);
	long k = ref_parse(buf, len, got, n + 1);
	if (k < 0)
		fail_msg("invalid JSON string content: '%.*s'", (int)len, buf);
	size_t wk = ref_expect(in, n, want);
	assert_int_equal((size_t)k, wk);
	for (size_t i = 0; i < wk; i++)
		if (got[i] != want[i])
			fail_msg("code point %zu: got U+%04lX, want U+%04lX", i, got[i], want[i]);
	/* the raw bytes the rule says must be escaped are escaped */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		assert_true(c >= 0x20);
		if (flags & PK_JSON_HTML)
			assert_true(c != '<' && c != '>' && c != '&');
	}
	free(got);
	free(want);
	*outlen = len;
	return buf;
}

static void expect_exact(const char *in, size_t n, unsigned flags, const char *want)
{
	size_t len;
	char *out = check_escape(in, n, flags, &len);
	if (len != strlen(want) || memcmp(out, want, len))
		fail_msg("escape of %zu bytes: got '%.*s', want '%s'", n, (int)len, out, want);
	free(out);
}
#define EXACT(lit, flags, want) expect_exact((lit), sizeof(lit) - 1, (flags), (want))

/* every class of input the header's rule names, with its exact output */
static void test_classes(void **state)
{
	(void)state;
	EXACT("", 0, "");
	EXACT("plain ascii, longer than eight bytes ~!#$%^*()", 0,
	      "plain ascii, longer than eight bytes ~!#$%^*()");
	EXACT("\"\\/", 0, "\\\"\\\\/");
	EXACT("a\nb\tc\rd", 0, "a\\nb\\tc\\rd");
	EXACT("\x01\x08\x0c\x1f\x7f", 0, "\\u0001\\u0008\\u000c\\u001f\x7f");
	EXACT("a\0b", 0, "a\\u0000b");
	/* the comm of issue #16 */
	EXACT("w\xff\xfeq", 0, "w\\ufffd\\ufffdq");
	/* well-formed, every length, at the edges of each range */
	EXACT("\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf", 0,
	      "\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf");
	EXACT("\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf \xe2\x82\xac", 0,
	      "\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf \xe2\x82\xac");
	/* stray continuation bytes */
	EXACT("\x80\xbf", 0, "\\ufffd\\ufffd");
	/* overlong forms: '/' in 2, 3 and 4 bytes, and U+07FF / U+FFFF too long */
	EXACT("\xc0\xaf", 0, "\\ufffd\\ufffd");
	EXACT("\xc1\xbf", 0, "\\ufffd\\ufffd");
	EXACT("\xe0\x80\xaf", 0, "\\ufffd\\ufffd\\ufffd");
	EXACT("\xe0\x9f\xbf", 0, "\\ufffd\\ufffd\\ufffd");
	EXACT("\xf0\x80\x80\xaf", 0, "\\ufffd\\ufffd\\ufffd\\ufffd");
	EXACT("\xf0\x8f\xbf\xbf", 0, "\\ufffd\\ufffd\\ufffd\\ufffd");
	/* UTF-16 surrogates (CESU-8 style) */
	EXACT("\xed\xa0\x80", 0, "\\ufffd\\ufffd\\ufffd");
	EXACT("\xed\xbf\xbf", 0, "\\ufffd\\ufffd\\ufffd");
	EXACT("\xed\xa0\xbd\xed\xb8\x80", 0,
	      "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd");
	/* beyond U+10FFFF and bytes that never occur */
	EXACT("\xf4\x90\x80\x80", 0, "\\ufffd\\ufffd\\ufffd\\ufffd");
	EXACT("\xf5\x80\x80\x80", 0, "\\ufffd\\ufffd\\ufffd\\ufffd");
	EXACT("\xf8\x88\x80\x80\x80", 0, "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd");
	EXACT("\xfe\xff", 0, "\\ufffd\\ufffd");
	/* sequences cut short, inside and at the end of the input */
	EXACT("\xc3", 0, "\\ufffd");
	EXACT("\xe2\x82", 0, "\\ufffd\\ufffd");
	EXACT("\xf0\x9f\x98", 0, "\\ufffd\\ufffd\\ufffd");
	EXACT("\xe2\x82x\xc3(", 0, "\\ufffd\\ufffdx\\ufffd(");
	/* invalid bytes in the middle of an otherwise plain 8-byte block */
	EXACT("abcdefg\xffhijklmno\"pqrstuv\x01wxyz", 0,
	      "abcdefg\\ufffdhijklmno\\\"pqrstuv\\u0001wxyz");
	/* HTML-safe: < > & and the JavaScript line terminators */
	EXACT("</script>&\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xaa", PK_JSON_HTML,
	      "\\u003c/script\\u003e\\u0026\\u2028\\u2029\xe2\x80\xaa");
	EXACT("</script>&\xe2\x80\xa8", 0, "</script>&\xe2\x80\xa8");
	/* NULL source is the empty string */
	char b[8];
	size_t used = 9;
	assert_int_equal(pk_json__escape(b, sizeof(b), NULL, 5, 0, &used), 0);
	assert_int_equal(used, 0);
}

/* every 1- and 2-byte input and every 3- and 4-byte input with a multi-byte lead byte and
 * interesting continuations, both modes */
static void test_exhaustive(void **state)
{
	(void)state;
	unsigned char in[6];
	size_t len;
	for (unsigned a = 0; a < 256; a++) {
		in[0] = (unsigned char)a;
		free(check_escape(in, 1, 0, &len));
		for (unsigned b = 0; b < 256; b++) {
			in[1] = (unsigned char)b;
			free(check_escape(in, 2, 0, &len));
			free(check_escape(in, 2, PK_JSON_HTML, &len));
		}
	}
	static const unsigned char tails[] = { 0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0,
					       0xbf, 0xc0, 0xc2, 0xe0, 0xf0, 0xff };
	for (unsigned a = 0xc0; a < 256; a++)
		for (size_t b = 0; b < sizeof(tails); b++)
			for (size_t c = 0; c < sizeof(tails); c++)
				for (size_t d = 0; d < sizeof(tails); d++) {
					in[0] = (unsigned char)a;
					in[1] = tails[b];
					in[2] = tails[c];
					in[3] = tails[d];
					free(check_escape(in, 3, 0, &len));
					free(check_escape(in, 4, 0, &len));
				}
}

/* random strings, mostly ASCII with some hostile bytes, through the 8-byte fast path */
static void test_random(void **state)
{
	(void)state;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned char in[200];
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(x >> 60) * 12 + (round % 13);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			unsigned r = (unsigned)(x >> 32);
			/* 1 in 16 any byte, else a printable or a piece of a valid character */
			in[i] = (r & 15) == 0 ? (unsigned char)(r >> 8) :
				(r & 15) == 1 ? (unsigned char)(0x80 | ((r >> 8) & 0x3f)) :
				(r & 15) == 2 ? (unsigned char)(0xc2 + ((r >> 8) & 0x32)) :
				(unsigned char)(0x20 + ((r >> 8) % 95));
		}
		size_t len;
		free(check_escape(in, n, round & 1 ? PK_JSON_HTML : 0, &len));
	}
}

/* a small cap: stops before a character that does not fit, never splits one, and the
 * pieces concatenate to the one-shot output */
static void test_pieces(void **state)
{
	(void)state;
	static const char in[] = "ab\xe2\x82\xac\"\xff\xf0\x9f\x98\x80xyz0123456789\n";
	size_t n = sizeof(in) - 1, len;
	char *whole = check_escape(in, n, 0, &len);
	for (size_t cap = 6; cap <= 40; cap++) {
		char out[256];
		size_t o = 0, i = 0;
		while (i < n) {
			size_t used = 0;
			size_t k = pk_json__escape(out + o, cap, in + i, n - i, 0, &used);
			assert_true(k <= cap);
			assert_true(used > 0); /* progress with cap >= 6 */
			o += k;
			i += used;
		}
		assert_int_equal(o, len);
		assert_memory_equal(out, whole, len);
	}
	/* with cap 1 a character needing more makes no progress */
	char one[1];
	size_t used = 7;
	assert_int_equal(pk_json__escape(one, 1, "\xff", 1, 0, &used), 0);
	assert_int_equal(used, 0);
	free(whole);
}

/* the FILE writer: quotes, NULL, strings longer than its internal buffer */
static void test_write_str(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	assert_non_null(f);
	assert_int_equal(pk_json__write_str(f, "w\xff\xfeq", 0), 0);
	assert_int_equal(pk_json__write_str(f, NULL, 0), 0);
	assert_int_equal(pk_json__write_str(f, "<&>", PK_JSON_HTML), 0);
	fclose(f);
	assert_string_equal(buf, "\"w\\ufffd\\ufffdq\"\"\"\"\\u003c\\u0026\\u003e\"");
	free(buf);

	/* 10000 euro signs then an invalid byte: 30001 bytes in, crossing buffer bounds */
	size_t n = 30001;
	char *big = malloc(n + 1);
	assert_non_null(big);
	for (size_t i = 0; i + 3 <= n; i += 3)
		memcpy(big + i, "\xe2\x82\xac", 3);
	big[n - 1] = (char)0xff;
	big[n] = 0;
	f = open_memstream(&buf, &sz);
	assert_non_null(f);
	assert_int_equal(pk_json__write_str(f, big, 0), 0);
	fclose(f);
	assert_int_equal(sz, 1 + 30000 + 6 + 1);
	assert_int_equal(buf[0], '"');
	assert_memory_equal(buf + 1, big, 30000);
	assert_memory_equal(buf + 30001, "\\ufffd\"", 7);
	free(buf);
	free(big);

	/* a stream error is reported */
	f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		assert_int_equal(pk_json__write_str(f, "x", 0), -EIO);
		fclose(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_exhaustive),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_write_str),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
