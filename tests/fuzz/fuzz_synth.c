/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the procfs/sysfs parsers behind record's synthesis
 * (lib/data/synth-internal.h): /proc/PID/maps lines, ELF notes (/sys/kernel/notes), and
 * /proc/modules lines with module file names (modules.dep). Input byte 0 selects the parser; the rest is the text (copied to an exact-size,
 * NUL-terminated buffer) or the notes blob (exact size, so ASan sees any overread).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../lib/data/synth-internal.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		/* the capacity passed in *len must be true: up to 31 of 32 bytes */
		uint8_t id[32];
		size_t len = data[0] >> 1 & 31;
		uint8_t *blob = malloc(size - 1 ? size - 1 : 1);
		if (!blob)
			return 0;
		memcpy(blob, data + 1, size - 1);
		if (pk_notes__build_id(blob, size - 1, id, &len) == 0) {
			for (size_t i = 0; i < len; i++)
				sink += id[i];
		}
		free(blob);
		return 0;
	}
	char *line = malloc(size);
	if (!line)
		return 0;
	memcpy(line, data + 1, size - 1);
	line[size - 1] = 0;
	if (data[0] & 2) {
		struct pk_kmod_ent m;
		char name[64];
		if (pk_modules__parse_line(line, &m) == 0)
			sink += m.start + m.size + strlen(m.name);
		/* the name of a file: not NUL-terminated at len */
		if (pk_kmod__name_of(line, size - 1, name, (size_t)(data[0] >> 2) % 65) == 0)
			sink += strlen(name);
		free(line);
		return 0;
	}
	struct pk_maps_entry e;
	if (pk_maps__parse_line(line, &e) == 0) {
		sink += e.start + e.end + e.pgoff + e.ino + e.maj + e.min + e.prot + e.flags;
		sink += strlen(e.path);
	}
	free(line);
	return 0;
}
