/* SPDX-License-Identifier: MIT */
/* lib/data/synth-internal.h - the procfs/sysfs parsers behind synth.c (fuzzed, unit-tested). */
#ifndef PK_SYNTH_INTERNAL_H
#define PK_SYNTH_INTERNAL_H

#include <stdbool.h>
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

/* A hex (no "0x") or decimal u64 at *pp, *pp moved past it: 0, or -PK_ERR_PARSE when
 * there is no digit or it overflows. The numbers of every procfs/sysfs line here. */
int pk_synth_parse_hex(const char **pp, uint64_t *out);
int pk_synth_parse_dec(const char **pp, uint64_t *out);

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

/* A loaded kernel module (lib/data/synth-kmod.c). */
struct pk_kmod_ent {
	uint64_t start, size;
	char name[64];     /* as the kernel spells it ('_', never '-') */
	char *path;        /* its file (malloc'd), NULL when not found */
};

/*
 * Parse a line of /proc/modules: "NAME SIZE REFCOUNT DEPS STATE 0xADDRESS [TAINTS]".
 * Sets start, size and name (path NULL). Returns 0 or -PK_ERR_PARSE.
 */
int pk_modules__parse_line(const char *line, struct pk_kmod_ent *out);

/*
 * The module name of a module file's path file[0..len) ("/x/snd-hda.ko.xz" gives
 * "snd_hda"), into out[cap]. Returns 0 or -PK_ERR_PARSE (no ".ko", too long).
 */
int pk_kmod__name_of(const char *file, size_t len, char *out, size_t cap);

/*
 * The modules of <procfs>/modules (procfs NULL: /proc) sorted by address, with their files
 * from <modroot>/<release>/modules.dep (modroot NULL: /lib/modules; release from
 * <procfs>/sys/kernel/osrelease). Returns 0 (also with none loaded), -EACCES when every
 * address reads 0 (kptr_restrict), -E2BIG past 65536 modules, or -errno. Free with
 * pk_kmods__free.
 */
int pk_kmods__read(const char *procfs, const char *modroot, struct pk_kmod_ent **out,
		   size_t *nr);
void pk_kmods__free(struct pk_kmod_ent *v, size_t nr);

/* The build id of loaded module `name` from <sysfs>/module/NAME/notes/.note.gnu.build-id
 * (sysfs NULL: /sys); *len as for pk_notes__build_id. 0 or a negative errno. */
int pk_kmod__build_id(const char *sysfs, const char *name, uint8_t *buf, size_t *len);

#endif
