/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the procfs/sysfs parsers behind record's synthesis
 * (lib/data/synth-internal.h): /proc/PID/maps lines, ELF notes (/sys/kernel/notes), and
 * /proc/modules lines with module file names (modules.dep). Input byte 0 selects the parser; the rest is the text (copied to an exact-size,
 * NUL-terminated buffer) or the notes blob (exact size, so ASan sees any overread).
 * Byte 0 with its low three bits 110: the whole module list read from files
 * (pk_kmods__read), the rest written as <procfs>/modules up to the first 0xff byte and
 * as modules.dep after it (NUL bytes, unended and overlong lines included).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "../../lib/data/synth-internal.h"

static volatile uint64_t sink;

static void put_file(const char *dir, const char *name, const uint8_t *b, size_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	if (n && fwrite(b, 1, n, f) != n)
		abort();
	fclose(f);
}

static char root[64];
static const char *const made[] = { "proc", "proc/sys", "proc/sys/kernel", "mods", "mods/r" };
static const char *const files[] = { "proc/modules", "proc/sys/kernel/osrelease",
				     "mods/r/modules.dep" };

/* (at exit: no directory left behind in /tmp) */
static void module_files_rm(void)
{
	char path[256];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		remove(path);
	}
	for (size_t i = sizeof(made) / sizeof(made[0]); i-- > 0;) {
		snprintf(path, sizeof(path), "%s/%s", root, made[i]);
		remove(path);
	}
	remove(root);
}

/* <tmp>/proc/{modules,sys/kernel/osrelease} and <tmp>/mods/r/modules.dep */
static void module_files(const uint8_t *b, size_t n)
{
	static char proc[128], mods[128];
	char dir[256];
	if (!root[0]) {
		snprintf(root, sizeof(root), "/tmp/fuzz-synth-XXXXXX");
		if (!mkdtemp(root))
			abort();
		snprintf(proc, sizeof(proc), "%s/proc", root);
		snprintf(mods, sizeof(mods), "%s/mods", root);
		atexit(module_files_rm);
		for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
			snprintf(dir, sizeof(dir), "%s/%s", root, made[i]);
			if (mkdir(dir, 0700))
				abort();
		}
		put_file(proc, "sys/kernel/osrelease", (const uint8_t *)"r\n", 2);
	}
	const uint8_t *sep = memchr(b, 0xff, n);
	size_t n1 = sep ? (size_t)(sep - b) : n;
	put_file(proc, "modules", b, n1);
	snprintf(dir, sizeof(dir), "%s/r", mods);
	put_file(dir, "modules.dep", sep ? sep + 1 : b, sep ? n - n1 - 1 : 0);
	struct pk_kmod_ent *v;
	size_t nr;
	if (pk_kmods__read(proc, mods, &v, &nr) == 0) {
		for (size_t i = 0; i < nr; i++)
			sink += v[i].start + v[i].size + strlen(v[i].name) +
				(v[i].path ? strlen(v[i].path) : 0);
		pk_kmods__free(v, nr);
	}
}

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
	if ((data[0] & 7) == 6) {
		module_files(data + 1, size - 1);
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
