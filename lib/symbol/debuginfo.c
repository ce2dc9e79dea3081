/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/debuginfo.c - finding a DSO's separate debug file: build-id and debuglink
 * candidates under the debug directory, perf's build-id cache paths, and the libdwfl
 * callbacks that use our finder (libdwfl's standard one opens candidates with a blocking
 * open(), which a FIFO would hang).
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "symbol-internal.h"
#include "dso-internal.h"
#include <perfkit/data.h>

char *pk_build_id_path(const char *debug_dir, const uint8_t *id, size_t len)
{
	if (len < 2)
		return NULL;
	size_t n = strlen(debug_dir) + 16 + 2 * len + 8;
	char *p = malloc(n);
	if (!p)
		return NULL;
	size_t o = (size_t)snprintf(p, n, "%s/.build-id/%02x/", debug_dir, id[0]);
	for (size_t i = 1; i < len && o + 3 < n; i++)
		o += (size_t)snprintf(p + o, n - o, "%02x", id[i]);
	snprintf(p + o, n - o, ".debug");
	return p;
}

/* perf's build-id cache copy: <dir>/.build-id/xx/yyyy.../elf (".../vdso" for the vdso) */
char *pk_build_id_cache_path(const char *dir, const uint8_t *id, size_t len,
			     bool vdso)
{
	char *p = pk_build_id_path(dir, id, len);
	size_t n = p ? strlen(p) : 0;
	if (!p || n < 6)
		return p;
	char *q = realloc(p, n + 8);
	if (!q) {
		free(p);
		return NULL;
	}
	strcpy(q + n - 6, vdso ? "/vdso" : "/elf"); /* replaces ".debug" */
	return q;
}

bool pk_file_has_build_id(const char *path, const uint8_t *id, size_t len)
{
	uint8_t b[PK_BUILD_ID_BYTES];
	size_t bl = sizeof(b);
	if (pk_build_id__read(path, b, &bl) < 0)
		return false;
	return bl == len && !memcmp(b, id, len);
}

static int pk_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct pk_dso *d = *userdata;
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	const uint8_t *id;
	size_t idlen;
	/* the debug directory's build-id file, three debuglink places, then the copies
	 * of the build-id caches (perf's <cache>/.build-id/xx/yyyy.../debug) */
	enum { NCAND = 7 };
	char *cand[NCAND] = { NULL };
	int fd = -1;

	(void)modname;
	(void)base;
	(void)debuglink_crc;
	if (!d)
		return -1;
	const char *ddir = d->machine->debug_dir;
	if (d->want_bid_len) {
		id = d->want_bid;
		idlen = d->want_bid_len;
	} else {
		int n = dwfl_module_build_id(mod, &bits, &vaddr);
		id = bits;
		idlen = n > 0 ? (size_t)n : 0;
	}
	if (idlen)
		cand[0] = pk_build_id_path(ddir, id, idlen);
	if (debuglink_file && file_name && !strchr(debuglink_file, '/')) {
		char *tmp = strdup(file_name);
		if (tmp) {
			const char *dir = dirname(tmp);
			size_t n = strlen(dir) + strlen(ddir) + strlen(debuglink_file) + 16;
			for (int k = 1; k < 4; k++)
				cand[k] = malloc(n);
			if (cand[1])
				snprintf(cand[1], n, "%s/%s", dir, debuglink_file);
			if (cand[2])
				snprintf(cand[2], n, "%s/.debug/%s", dir, debuglink_file);
			if (cand[3])
				snprintf(cand[3], n, "%s%s/%s", ddir, dir, debuglink_file);
			free(tmp);
		}
	}
	const char *bdirs[] = { d->machine->buildid_dir, d->machine->perf_buildid_dir,
				d->machine->symfs };
	for (size_t k = 0; k < PK_ARRAY_SIZE(bdirs) && idlen; k++) {
		char *p = bdirs[k] ? pk_build_id_cache_path(bdirs[k], id, idlen, false) : NULL;
		size_t n = p ? strlen(p) : 0;
		if (n > 4)
			strcpy(p + n - 4, "/debug"); /* ".../elf" -> ".../debug" (same length + 2) */
		cand[4 + k] = n > 4 ? p : NULL;
		if (n <= 4)
			free(p);
	}
	struct stat self;
	bool have_self = file_name && stat(file_name, &self) == 0;
	for (int k = 0; k < NCAND && fd < 0; k++) {
		if (!cand[k])
			continue;
		struct stat st;
		if (stat(cand[k], &st) < 0)
			continue;
		if (have_self && st.st_dev == self.st_dev && st.st_ino == self.st_ino)
			continue; /* the debuglink names the file itself */
		if (idlen && !pk_file_has_build_id(cand[k], id, idlen))
			continue;
		int f = pk_open_regular(cand[k], PK_DSO_MAX_FILE, NULL);
		if (f < 0)
			continue;
		/* compressed sections: the inflated copy, made once (debug-cache.c) */
		char *cp = NULL;
		int c = idlen ? pk_debug_cache_open(d->machine, f, id, idlen, &cp) : -ENOENT;
		if (c >= 0) {
			close(f);
			fd = c;
			*debuginfo_file_name = cp;
			continue;
		}
		fd = f;
		*debuginfo_file_name = cand[k];
		cand[k] = NULL;
	}
	for (int k = 0; k < NCAND; k++)
		free(cand[k]);
	if (fd < 0 && idlen && d->machine->find_debuginfo && !d->finder_asked) {
		/* nothing here: the caller's finder (debuginfod), asked once per DSO */
		d->finder_asked = true;
		char *fp = NULL;
		int f = d->machine->find_debuginfo(d->machine->find_debuginfo_ctx, id, idlen, &fp);
		if (f >= 0 && fp && pk_file_has_build_id(fp, id, idlen)) {
			char *cp = NULL;
			int c = pk_debug_cache_open(d->machine, f, id, idlen, &cp);
			if (c >= 0) {
				close(f);
				free(fp);
				fd = c;
				*debuginfo_file_name = cp;
			} else {
				fd = f;
				*debuginfo_file_name = fp;
			}
		} else {
			if (f >= 0) {
				close(f);
				pk_warn("the debug file found for '%s' does not carry its build-id: "
					"not used", d->name);
			}
			free(fp);
		}
	}
	return fd;
}

static const Dwfl_Callbacks pk_dso_dwfl_callbacks = {
	.find_elf = NULL,
	.find_debuginfo = pk_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = NULL,
};

const Dwfl_Callbacks *pk_dwfl_callbacks(void)
{
	return &pk_dso_dwfl_callbacks;
}
