/* SPDX-License-Identifier: MIT */
/*
 * tool/out.h - the tool's output path: one large buffer written to the fd with write(2)
 * when full (no stdio per field; `perfkit script`'s output), and the hand-written
 * formatters every command uses (hex, padded numbers and strings, JSON strings through
 * the library's one escaper) that append to a char pointer. A formatter writes at most the bytes its comment names; the
 * caller makes room first (ob_room), so the hot path has no bounds test per byte and no
 * allocation.
 */
#ifndef TOOL_OUT_H
#define TOOL_OUT_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/export.h>

#define OB_CAP ((size_t)1 << 18)

struct obuf {
	char *buf;
	size_t len, cap;
	int fd;
	int err;            /* errno of the first failed write; later output is dropped */
};

static inline int ob_init(struct obuf *o, int fd)
{
	o->buf = malloc(OB_CAP);
	o->len = 0;
	o->cap = OB_CAP;
	o->fd = fd;
	o->err = 0;
	return o->buf ? 0 : -ENOMEM;
}

static inline void ob_write_all(struct obuf *o, const char *p, size_t n)
{
	while (n && !o->err) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno;
			break;
		}
		if (w == 0) {
			o->err = EIO;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
}

static inline void ob_flush(struct obuf *o)
{
	ob_write_all(o, o->buf, o->len);
	o->len = 0;
}

static inline void ob_release(struct obuf *o)
{
	free(o->buf);
	o->buf = NULL;
}

/* Room for n (<= OB_CAP) more bytes; returns the write position. Advance o->len after. */
static inline char *ob_room(struct obuf *o, size_t n)
{
	if (o->cap - o->len < n)
		ob_flush(o);
	return o->buf + o->len;
}

static inline void ob_put(struct obuf *o, const void *p, size_t n)
{
	if (o->cap - o->len < n) {
		ob_flush(o);
		if (n > o->cap) {
			ob_write_all(o, p, n);
			return;
		}
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static inline void ob_puts(struct obuf *o, const char *s)
{
	ob_put(o, s, strlen(s));
}

static inline void ob_putc(struct obuf *o, char c)
{
	if (o->len == o->cap)
		ob_flush(o);
	o->buf[o->len++] = c;
}

static inline void ob_vprintf(struct obuf *o, const char *fmt, va_list ap)
{
	va_list again;
	char *p = ob_room(o, 256);
	size_t room = o->cap - o->len;
	va_copy(again, ap);
	int n = vsnprintf(p, room, fmt, ap);
	if (n >= 0 && (size_t)n >= room) {
		char *t = malloc((size_t)n + 1);
		if (!t)
			o->err = ENOMEM;
		else {
			vsnprintf(t, (size_t)n + 1, fmt, again);
			ob_put(o, t, (size_t)n);
			free(t);
		}
	} else if (n >= 0) {
		o->len += (size_t)n;
	}
	va_end(again);
}

static inline void ob_printf(struct obuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void ob_printf(struct obuf *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ob_vprintf(o, fmt, ap);
	va_end(ap);
}

/* ---- formatters: append to p, return the new end ---- */

static const char pk_digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* the decimal digits of v, right-aligned ending at t + 20; returns their count */
static inline int u64_digits(char t[20], uint64_t v)
{
	int i = 20;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100);
		v /= 100;
		i -= 2;
		memcpy(t + i, pk_digit_pairs + 2 * d, 2);
	}
	if (v >= 10) {
		i -= 2;
		memcpy(t + i, pk_digit_pairs + 2 * v, 2);
	} else {
		t[--i] = (char)('0' + v);
	}
	return 20 - i;
}

/* decimal, at most 20 bytes */
static inline char *fmt_u64(char *p, uint64_t v)
{
	char t[20];
	int n = u64_digits(t, v);
	memcpy(p, t + 20 - n, (size_t)n);
	return p + n;
}

/* printf("%*" PRIu64) / zero-padded "%0*" PRIu64: at most max(20, width) bytes */
static inline char *fmt_u64_pad(char *p, uint64_t v, int width, char pad)
{
	char t[20];
	int n = u64_digits(t, v);
	for (int k = n; k < width; k++)
		*p++ = pad;
	memcpy(p, t + 20 - n, (size_t)n);
	return p + n;
}

/* a pid or tid as the kernel's s32 (perf prints -1, not 4294967295): at most
 * max(11, width) bytes, right-aligned in width like printf("%*d") */
static inline char *fmt_pid_pad(char *p, uint32_t v, int width)
{
	int32_t x = (int32_t)v;
	char t[20];
	uint64_t mag = x < 0 ? (uint64_t)(-(int64_t)x) : (uint64_t)x;
	int n = u64_digits(t, mag);
	int len = n + (x < 0);
	for (int k = len; k < width; k++)
		*p++ = ' ';
	if (x < 0)
		*p++ = '-';
	memcpy(p, t + 20 - n, (size_t)n);
	return p + n;
}

/* lower-case hex without prefix, at most 16 bytes */
static inline char *fmt_hex(char *p, uint64_t v)
{
	static const char dig[] = "0123456789abcdef";
	char t[16];
	int i = 16;
	do {
		t[--i] = dig[v & 15];
		v >>= 4;
	} while (v);
	memcpy(p, t + i, (size_t)(16 - i));
	return p + (16 - i);
}

/* printf("%16" PRIx64): exactly 16 bytes */
static inline char *fmt_hex16(char *p, uint64_t v)
{
	static const char dig[] = "0123456789abcdef";
	int i = 16;
	do {
		p[--i] = dig[v & 15];
		v >>= 4;
	} while (v);
	while (i)
		p[--i] = ' ';
	return p + 16;
}

/* printf("%*s", width, s) for s of length n: max(n, width) bytes */
static inline char *fmt_str_pad(char *p, const char *s, size_t n, size_t width)
{
	for (size_t k = n; k < width; k++)
		*p++ = ' ';
	memcpy(p, s, n);
	return p + n;
}

/* a JSON string of s (n bytes) with quotes, through the library's one escaper: at most
 * PK_JSON_ESCAPED_MAX(n) + 2 bytes */
static inline char *fmt_json_str(char *p, const char *s, size_t n)
{
	*p++ = '"';
	p += pk_json__escape(p, PK_JSON_ESCAPED_MAX(n), s, n, 0, NULL);
	*p++ = '"';
	return p;
}

/* a JSON string of any length into the buffer */
static inline void ob_json_str(struct obuf *o, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n < (OB_CAP - 2) / 6) {
		char *p = ob_room(o, PK_JSON_ESCAPED_MAX(n) + 2);
		o->len = (size_t)(fmt_json_str(p, s, n) - o->buf);
		return;
	}
	/* huge: in pieces of at most 24 KiB of output (the escaper never splits a character) */
	ob_putc(o, '"');
	for (size_t i = 0; i < n;) {
		size_t used, cap = PK_JSON_ESCAPED_MAX(4096);
		char *p = ob_room(o, cap);
		o->len += pk_json__escape(p, cap, s + i, n - i, 0, &used);
		i += used;
	}
	ob_putc(o, '"');
}

#endif
