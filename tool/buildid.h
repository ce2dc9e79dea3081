/* SPDX-License-Identifier: MIT */
/*
 * tool/buildid.h - which objects of a recording its samples hit (buildid-hits.c), shared
 * by `perfkit buildid-list --with-hits` and `perfkit archive`.
 */
#ifndef TOOL_BUILDID_H
#define TOOL_BUILDID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pk_data_reader;
struct pk_data_build_id;

/* the names of the objects hit, as the machine names their maps ("/usr/lib/.../libc.so.6",
 * "[kernel.kallsyms]", "[ext4]", "[vdso]") */
struct tool_hits {
	char **names;
	size_t nr, cap;
	uint64_t samples;
	/* with mmap_order set before tool_hits_collect: the mapped file names in the order of
	 * their first MMAP record (the order perf's machine creates its objects in) */
	bool mmap_order;
	int verbose;            /* the command's -v (the library's warnings are off unless) */
	char **mapped;
	size_t nr_mapped, cap_mapped;
};

/*
 * Read every sample of r and note the object of its address (with callchains: of every
 * frame of its call chain too; perf's --with-hits counts the sampled address only).
 * Symbols are not fetched from debuginfod. 0, or a negative errno (reading or memory).
 */
int tool_hits_collect(struct pk_data_reader *r, bool callchains, struct tool_hits *h);
/* Whether the BUILD_ID entry b names an object that was hit (a module's path matches
 * "[name]" as its maps are named). */
bool tool_hits_has(const struct tool_hits *h, const struct pk_data_build_id *b);
/* whether the object named `name` (as the machine names maps) was hit */
bool tool_hits_name(const struct tool_hits *h, const char *name);
void tool_hits_free(struct tool_hits *h);
/* hex of a build-id into buf (2 * len + 1 bytes) */
void tool_build_id_hex(const uint8_t *id, size_t len, char *buf);

#endif
