/* SPDX-License-Identifier: MIT */
/* lib/data/synth-internal.h - the procfs/sysfs parsers behind synth.c (fuzzed, unit-tested). */
#ifndef PK_SYNTH_INTERNAL_H
#define PK_SYNTH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* One line of /proc/PID/maps. */
struct pk_maps_entry {
	uint64_t start, end, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot;       /* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint32_t flags;      /* MAP_PRIVATE or MAP_SHARED */
	const char *path;    /* points into the line (trailing newline removed); "" if none */
};

/*
 * Parse "start-end perms offset maj:min inode [path]" (the line is modified: the newline
 * is cut). Returns 0 or -PK_ERR_PARSE (also for end < start).
 */
int pk_maps__parse_line(char *line, struct pk_maps_entry *out);

/*
 * Find the GNU build-id note (name "GNU", type NT_GNU_BUILD_ID) in a buffer of ELF notes
 * (the format of /sys/kernel/notes). On entry *len is the capacity of out. Returns 0,
 * -ENOENT if there is none, -PK_ERR_FORMAT for a malformed note.
 */
int pk_notes__build_id(const void *buf, size_t size, uint8_t *out, size_t *len);

#endif
