/* SPDX-License-Identifier: MIT */
/*
 * tool/record-rotate.c - perfkit record's rotation (record-rotate.h): parsers of
 * --switch-output / --max-size, perf's names of rotated files, --switch-max-files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "record-rotate.h"

/* A whole number (no sign, no space) followed by exactly one character of `units`;
 * mult[i] scales by the i-th unit. */
static int parse_unit(const char *s, const char *units, const uint64_t *mult, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s, *u;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (!*p || p[1] || !(u = strchr(units, *p)))
		return -EINVAL;
	if (!v)
		return -EINVAL;
	uint64_t m = mult[u - units];
	if (v > UINT64_MAX / m)
		return -ERANGE;
	*out = v * m;
	return 0;
}

int tool_rotate_parse_size(const char *s, uint64_t *bytes)
{
	static const uint64_t mult[] = { 1, 1ULL << 10, 1ULL << 20, 1ULL << 30 };
	return parse_unit(s, "BKMG", mult, bytes);
}

int tool_rotate_parse_time(const char *s, uint64_t *secs)
{
	static const uint64_t mult[] = { 1, 60, 3600, 86400 };
	return parse_unit(s, "smhd", mult, secs);
}

int tool_rotate_parse(const char *arg, struct tool_rotate *rot)
{
	uint64_t v;
	int err;

	if (!arg || !strcmp(arg, "signal")) {
		rot->mode = TOOL_ROTATE_SIGNAL;
		return 0;
	}
	/* the unit tells them apart: sizes are upper case (100M), times lower case (5m) */
	err = tool_rotate_parse_size(arg, &v);
	if (!err) {
		rot->mode = TOOL_ROTATE_SIZE;
		rot->size = v;
		return 0;
	}
	if (err == -ERANGE)
		return err;
	err = tool_rotate_parse_time(arg, &v);
	if (err)
		return err;
	rot->mode = TOOL_ROTATE_TIME;
	rot->secs = v;
	return 0;
}

int tool_rotate_timestamp(char *buf, size_t len, const struct timeval *tv)
{
	struct tm tm;
	time_t t = tv->tv_sec;
	char dt[32];

	if (len < 17 || !localtime_r(&t, &tm) || !strftime(dt, sizeof(dt), "%Y%m%d%H%M%S", &tm))
		return -EINVAL;
	snprintf(buf, len, "%.14s%02u", dt, (unsigned)(tv->tv_usec / 10000) % 100);
	return 0;
}

int tool_rotate_name(struct tool_rotate *rot, const char *base, char *buf, size_t len)
{
	char ts[32];

	/* at most a second of waiting: 100 hundredths */
	for (int tries = 0; tries < 110; tries++) {
		struct timeval tv;
		gettimeofday(&tv, NULL);
		if (tool_rotate_timestamp(ts, sizeof(ts), &tv))
			return -EINVAL;
		if ((size_t)snprintf(buf, len, "%s.%s", base, ts) >= len)
			return -ENAMETOOLONG;
		if (strcmp(ts, rot->last) && access(buf, F_OK) < 0) {
			snprintf(rot->last, sizeof(rot->last), "%s", ts);
			return 0;
		}
		struct timespec nap = { 0, 10 * 1000 * 1000 - (long)(tv.tv_usec % 10000) * 1000 };
		nanosleep(&nap, NULL);
	}
	return -EEXIST;
}

int tool_rotate_closed(struct tool_rotate *rot, const char *path, uint64_t first_ns,
		       uint64_t last_ns)
{
	int deleted = 0;

	if (rot->on_file_closed)
		rot->on_file_closed(path, first_ns, last_ns, rot->on_file_closed_arg);
	if (!rot->max_files)
		return 0;
	if (!rot->kept) {
		rot->kept = calloc(rot->max_files, sizeof(*rot->kept));
		if (!rot->kept)
			return -ENOMEM;
	}
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	/* the slot of the next file holds the oldest one kept: it goes */
	char **slot = &rot->kept[rot->next];
	if (*slot) {
		if (unlink(*slot) == 0)
			deleted++;
		free(*slot);
	}
	*slot = copy;
	rot->next = (rot->next + 1) % rot->max_files;
	return deleted;
}

void tool_rotate_release(struct tool_rotate *rot)
{
	for (unsigned i = 0; rot->kept && i < rot->max_files; i++)
		free(rot->kept[i]);
	free(rot->kept);
	rot->kept = NULL;
}
