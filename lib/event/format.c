/* SPDX-License-Identifier: MIT */
/*
 * sysfs format terms: "config1:1,6-10,44" names which bits of which attr word a PMU term
 * occupies. A value is scattered over the ranges in the order written, low bits first.
 */
#include "internal.h"
#include <perfkit/pmu.h>

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Decimal bit number in [0, 63] at *p; advances *p. At most 3 digits are consumed so a
 * long run of digits cannot overflow; anything above 63 fails. */
static bool parse_bit(const char **p, const char *end, uint8_t *out)
{
	const char *s = *p;
	unsigned v = 0, n = 0;

	while (s < end && is_digit(*s)) {
		if (++n > 3)
			return false;
		v = v * 10 + (unsigned)(*s - '0');
		s++;
	}
	if (n == 0 || v > 63)
		return false;
	*out = (uint8_t)v;
	*p = s;
	return true;
}

PK_API int pk_format__parse(struct pk_format *out, const char *text, size_t len)
{
	static const struct { const char *name; size_t len; enum pk_cfg_word word; } words[] = {
		/* longest first so that "config1" is not taken as "config" + junk */
		{ "config1", 7, PK_CFG_CONFIG1 },
		{ "config2", 7, PK_CFG_CONFIG2 },
		{ "config3", 7, PK_CFG_CONFIG3 },
		{ "config", 6, PK_CFG_CONFIG },
	};
	struct pk_format f;
	const char *p, *end;
	uint64_t used = 0;
	size_t i;

	if (!out || (!text && len))
		return pk_err(-EINVAL);
	p = text;
	end = text + len;
	while (end > p && (is_space(end[-1]) || end[-1] == '\0'))
		end--;
	while (p < end && is_space(*p))
		p++;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < PK_ARRAY_SIZE(words); i++) {
		if ((size_t)(end - p) > words[i].len && !memcmp(p, words[i].name, words[i].len) &&
		    p[words[i].len] == ':')
			break;
	}
	if (i == PK_ARRAY_SIZE(words))
		return pk_err(-PK_ERR_PARSE);
	f.word = words[i].word;
	p += words[i].len + 1;

	for (;;) {
		uint8_t lo, hi;

		if (!parse_bit(&p, end, &lo))
			return pk_err(-PK_ERR_PARSE);
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			if (!parse_bit(&p, end, &hi))
				return pk_err(-PK_ERR_PARSE);
			if (lo > hi)
				return pk_err(-PK_ERR_PARSE);
		}
		if (f.nr_ranges == PK_FORMAT_MAX_RANGES)
			return pk_err(-PK_ERR_PARSE);
		unsigned w = (unsigned)(hi - lo) + 1;
		uint64_t mask = (w == 64 ? ~0ULL : ((1ULL << w) - 1)) << lo;
		if (used & mask)
			return pk_err(-PK_ERR_PARSE); /* overlapping ranges */
		used |= mask;
		f.ranges[f.nr_ranges].lo = lo;
		f.ranges[f.nr_ranges].hi = hi;
		f.nr_ranges++;
		f.width += w;
		if (p == end)
			break;
		if (*p != ',')
			return pk_err(-PK_ERR_PARSE);
		p++;
	}
	*out = f;
	return 0;
}

PK_API int pk_format__encode(const struct pk_format *f, uint64_t value, uint64_t cfg[4])
{
	uint64_t out = 0;
	unsigned shift = 0;

	if (!f || !cfg || (unsigned)f->word > PK_CFG_CONFIG3 || f->nr_ranges == 0 ||
	    f->nr_ranges > PK_FORMAT_MAX_RANGES)
		return pk_err(-EINVAL);
	/* recompute the width rather than trusting f->width: the struct is public */
	for (unsigned i = 0; i < f->nr_ranges; i++) {
		unsigned lo = f->ranges[i].lo, hi = f->ranges[i].hi;
		if (lo > hi || hi > 63)
			return pk_err(-EINVAL);
		shift += hi - lo + 1;
	}
	if (shift < 64 && (value >> shift) != 0)
		return pk_err(-ERANGE);

	shift = 0;
	for (unsigned i = 0; i < f->nr_ranges && shift < 64; i++) {
		unsigned lo = f->ranges[i].lo, w = f->ranges[i].hi - lo + 1u;
		uint64_t mask = w == 64 ? ~0ULL : (1ULL << w) - 1;
		out |= ((value >> shift) & mask) << lo;
		shift += w;
	}
	cfg[f->word] |= out;
	return 0;
}

PK_API void pk_attr__set_configs(struct pk_attr *a, const uint64_t cfg[4])
{
	if (!a || !cfg)
		return;
	a->attr.config = cfg[0];
	a->attr.config1 = cfg[1];
	a->attr.config2 = cfg[2];
	pk_attr__set_config3(a, cfg[3]);
}
