/* SPDX-License-Identifier: MIT */
/*
 * tool/push-text.c - the text of a push: query values percent-encoded, sizes parsed.
 * Only libc, so that the unit test includes it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "push.h"

int push_url_escape(char *dst, size_t cap, const char *src)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t j = 0;
	for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
		bool keep = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			    (*s >= '0' && *s <= '9') || *s == '-' || *s == '.' || *s == '_' ||
			    *s == '~';
		if (j + (keep ? 1 : 3) >= cap)
			return -1;
		if (keep) {
			dst[j++] = (char)*s;
		} else {
			dst[j++] = '%';
			dst[j++] = hex[*s >> 4];
			dst[j++] = hex[*s & 15];
		}
	}
	if (j >= cap)
		return -1;
	dst[j] = '\0';
	return (int)j;
}

int push_parse_size(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: return -1;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || n > (UINT64_MAX >> shift))
		return -1;
	*v = (uint64_t)n << shift;
	return 0;
}

const char *const push_format_names[3] = { "pprof", "folded", "parca" };

size_t push_base64(char *dst, const void *src, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = src;
	size_t j = 0, i = 0;
	for (; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		dst[j++] = tab[v >> 18];
		dst[j++] = tab[(v >> 12) & 63];
		dst[j++] = tab[(v >> 6) & 63];
		dst[j++] = tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
		dst[j++] = tab[v >> 18];
		dst[j++] = tab[(v >> 12) & 63];
		dst[j++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		dst[j++] = '=';
	}
	dst[j] = '\0';
	return j;
}
