/* SPDX-License-Identifier: MIT */
/*
 * tool/record-rotate.h - continuous recording in `perfkit record` (perf record's
 * --switch-output[=signal|SIZE|TIME], --switch-max-files and --max-size): the option
 * parsers, the names of the rotated files, the set of files kept, and the hook that
 * another part of the tool (record --push) attaches to every finished file.
 *
 * Only libc here (no tool_* call), so that the unit test can include record-rotate.c.
 */
#ifndef PK_TOOL_RECORD_ROTATE_H
#define PK_TOOL_RECORD_ROTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

enum tool_rotate_mode {
	TOOL_ROTATE_OFF = 0,
	TOOL_ROTATE_SIGNAL,   /* on SIGUSR2 (--switch-output, --switch-output=signal) */
	TOOL_ROTATE_SIZE,     /* when the file reaches `size` bytes (--switch-output=100M) */
	TOOL_ROTATE_TIME,     /* every `secs` seconds (--switch-output=30s, 5m, 1h, 2d) */
};

/*
 * The hook: called on the record thread, right after each file of a rotation has been
 * finished (header, features, BUILD_IDs written and the file closed) and renamed to its
 * final name `path` (FILE.<timestamp>), the last one at the end of the recording
 * included. first_sample_ns and last_sample_ns are the times of the file's first and
 * last sample (perf clock, as the samples' TIME field; both 0 when the file holds no
 * sample). The file is complete and readable alone.
 *
 * It runs between two drain passes of the ring buffers, so it must return at once: a
 * consumer copies `path` (it is not valid after the call) onto its own queue and does
 * its work (e.g. record --push's upload) on another thread. With --switch-max-files N,
 * the recorder deletes a file when N newer ones exist: a consumer that may take longer
 * than N rotation periods should hard-link the file first (link(2) is cheap, and the
 * deletion then only drops the recorder's name).
 */
typedef void (*tool_file_closed_fn)(const char *path, uint64_t first_sample_ns,
				    uint64_t last_sample_ns, void *arg);

struct tool_rotate {
	enum tool_rotate_mode mode;
	uint64_t size;          /* TOOL_ROTATE_SIZE: bytes */
	uint64_t secs;          /* TOOL_ROTATE_TIME: seconds */
	unsigned max_files;     /* --switch-max-files: keep the newest N files (0: all) */
	uint64_t max_size;      /* --max-size: stop recording at this size (0: none) */
	tool_file_closed_fn on_file_closed; /* NULL: none */
	void *on_file_closed_arg;
	/* state, from tool_rotate_closed */
	char **kept;            /* ring of max_files names (NULL slots unused) */
	unsigned next;          /* the slot the next file takes */
	char last[32];          /* the timestamp of the previous name (no two alike) */
};

/* "100M": a whole number with one unit, B, K, M or G (bytes, KiB, MiB, GiB; upper case,
 * as perf's). 0, or -EINVAL (no unit, another unit, not a number, zero) or -ERANGE. */
int tool_rotate_parse_size(const char *s, uint64_t *bytes);

/* "30s": a whole number with one unit, s, m, h or d (lower case, as perf's). As above. */
int tool_rotate_parse_time(const char *s, uint64_t *secs);

/*
 * --switch-output's argument: NULL or "signal", else a size (tool_rotate_parse_size),
 * else a time (tool_rotate_parse_time); sets rot->mode and ->size or ->secs.
 * 0, or -EINVAL / -ERANGE (rot unchanged).
 */
int tool_rotate_parse(const char *arg, struct tool_rotate *rot);

/*
 * The timestamp perf puts after the output name of a rotated file: the local time of tv
 * as YYYYmmddHHMMSS followed by two digits of hundredths of a second (16 digits, as perf's
 * "perf.data.2015122520103046"). 0 or -EINVAL (buffer under 17 bytes, no local time).
 */
int tool_rotate_timestamp(char *buf, size_t len, const struct timeval *tv);

/*
 * The name for the file now being closed: "<base>.<timestamp>" for the current time,
 * never the same timestamp twice in one recording (when two files close within the same
 * hundredth of a second, it waits for the next one) and never the name of an existing
 * file. 0, -ENAMETOOLONG, -EEXIST (still taken after a second of waiting).
 */
int tool_rotate_name(struct tool_rotate *rot, const char *base, char *buf, size_t len);

/*
 * A file of the rotation was closed and renamed to `path`: the hook is called, then, with
 * max_files, the oldest file kept beyond the newest max_files is deleted. Returns the
 * number of files deleted, or -ENOMEM (nothing deleted; the hook was called).
 */
int tool_rotate_closed(struct tool_rotate *rot, const char *path, uint64_t first_ns,
		       uint64_t last_ns);

/* Free the state (the files stay). */
void tool_rotate_release(struct tool_rotate *rot);

#endif
