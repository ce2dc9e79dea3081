/* SPDX-License-Identifier: MIT */
/*
 * lib/data/tpfield.c - field offsets from a tracepoint format text, for readers that take
 * a few fields out of PERF_SAMPLE_RAW themselves (trace, sched) instead of going through
 * libtraceevent. The text may come from a recording (hostile): every step is bounded by
 * its length and numbers are range-checked.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <perfkit/data.h>
#include "internal.h"

/* A decimal number at p (< end) after `key`; the value or -1. */
static long long num_after(const char *p, const char *end, const char *key)
{
	size_t kl = strlen(key);
	for (; p + kl <= end; p++) {
		if (memcmp(p, key, kl))
			continue;
		p += kl;
		long long v = 0;
		bool any = false;
		while (p < end && *p >= '0' && *p <= '9' && v < (1LL << 32)) {
			v = v * 10 + (*p++ - '0');
			any = true;
		}
		return any && v < (1LL << 32) ? v : -1;
	}
	return -1;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

int pk_tp_format__field(const char *format, size_t len, const char *name,
			struct pk_tp_field *out)
{
	if (!format || !name || !out)
		return -EINVAL;
	size_t nl = strlen(name);
	const char *p = format, *end = format + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *f = p;
		while (f < eol && (*f == ' ' || *f == '\t'))
			f++;
		if (eol - f > 6 && !memcmp(f, "field:", 6)) {
			const char *semi = memchr(f, ';', (size_t)(eol - f));
			if (semi) {
				/* the declaration ends with the name, maybe followed by [dims] */
				const char *e = semi;
				while (e > f && e[-1] == ']') {
					const char *o = e - 1;
					while (o > f && *o != '[')
						o--;
					e = o;
				}
				while (e > f && e[-1] == ' ')
					e--;
				const char *b = e;
				while (b > f && ident_char(b[-1]))
					b--;
				if ((size_t)(e - b) == nl && !memcmp(b, name, nl)) {
					long long off = num_after(semi, eol, "offset:");
					long long sz = num_after(semi, eol, "size:");
					long long sg = num_after(semi, eol, "signed:");
					if (off < 0 || sz <= 0)
						return -PK_ERR_FORMAT;
					out->offset = (uint32_t)off;
					out->size = (uint32_t)sz;
					out->is_signed = sg > 0;
					return 0;
				}
			}
		}
		p = eol + 1;
	}
	return -ENOENT;
}
