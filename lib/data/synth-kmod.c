/* SPDX-License-Identifier: MIT */
/*
 * lib/data/synth-kmod.c - the loaded kernel modules, as perf record finds them to
 * synthesize their maps: <procfs>/modules gives each module's name, size and load
 * address; the file it came from is looked up in <modules>/<release>/modules.dep
 * (depmod's list of every installed module), the name of a file being its base name
 * without ".ko" and what follows, with '-' read as '_' (the kernel's spelling). The
 * parsers are fuzzed (tests/fuzz/fuzz_synth.c) and unit-tested (tests/unit/test_synth.c).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "synth-internal.h"

#define MAX_MODULES 65536      /* far above any real system; bounds a hostile file */
#define MAX_DEP_LINES (1u << 20)
/* bytes read from either file at most: a real modules.dep is about a megabyte; a file
 * without an end (a device, a FIFO fed forever) or of NULs is not read forever */
#define MAX_TEXT_BYTES ((uint64_t)64 << 20)

/*
 * The next piece of a line of f into buf[cap] (fgets: NUL-terminated). *whole: it
 * ends its line (a newline, or the end of the file), else the line goes on in the next
 * piece. Told by a sentinel at buf's end rather than by strlen, which a NUL byte in
 * the line cuts short (the next line was then taken for this one's rest). false at the
 * end of the file or past *budget bytes.
 */
static bool read_piece(FILE *f, char *buf, size_t cap, bool *whole, uint64_t *budget)
{
	if (!*budget)
		return false;
	buf[cap - 1] = 1;
	if (!fgets(buf, (int)cap, f))
		return false;
	*whole = buf[cap - 1] != 0 || buf[cap - 2] == '\n';
	/* (a line cut short by a NUL still costs a byte) */
	uint64_t used = *whole ? strlen(buf) + 1 : cap - 1;
	*budget -= PK_MIN(used, *budget);
	return true;
}

/* the next space-separated field: skipped, 0; none, -PK_ERR_PARSE */
static int skip_field(const char **pp)
{
	const char *p = *pp;
	if (*p != ' ')
		return -PK_ERR_PARSE;
	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return -PK_ERR_PARSE;
	while (*p && *p != ' ' && *p != '\n')
		p++;
	*pp = p;
	return 0;
}

int pk_modules__parse_line(const char *line, struct pk_kmod_ent *out)
{
	const char *p = line;
	size_t n = 0;

	while (p[n] && p[n] != ' ' && p[n] != '\n')
		n++;
	if (!n || n >= sizeof(out->name))
		return -PK_ERR_PARSE;
	for (size_t i = 0; i < n; i++)
		if (!isgraph((unsigned char)p[i]) || p[i] == '/' || p[i] == '[' || p[i] == ']')
			return -PK_ERR_PARSE;
	memcpy(out->name, p, n);
	out->name[n] = 0;
	p += n;
	if (*p++ != ' ' || pk_synth_parse_dec(&p, &out->size))
		return -PK_ERR_PARSE;
	/* refcount, dependencies, state */
	for (int i = 0; i < 3; i++)
		if (skip_field(&p))
			return -PK_ERR_PARSE;
	while (*p == ' ')
		p++;
	if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
		return -PK_ERR_PARSE;
	p += 2;
	if (pk_synth_parse_hex(&p, &out->start))
		return -PK_ERR_PARSE;
	if (out->size > UINT64_MAX - out->start)
		return -PK_ERR_PARSE;
	out->path = NULL;
	return 0;
}

int pk_kmod__name_of(const char *file, size_t len, char *out, size_t cap)
{
	const char *b = file;
	for (size_t i = 0; i < len; i++)
		if (file[i] == '/')
			b = file + i + 1;
	size_t n = (size_t)(file + len - b);
	const char *ko = NULL;
	for (size_t i = 0; i + 3 <= n; i++)
		if (!memcmp(b + i, ".ko", 3) && (i + 3 == n || b[i + 3] == '.')) {
			ko = b + i;
			break;
		}
	if (!ko || ko == b || (size_t)(ko - b) >= cap)
		return -PK_ERR_PARSE;
	n = (size_t)(ko - b);
	for (size_t i = 0; i < n; i++)
		out[i] = b[i] == '-' ? '_' : b[i];
	out[n] = 0;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct pk_kmod_ent *)a)->name, ((const struct pk_kmod_ent *)b)->name);
}

static int by_start(const void *a, const void *b)
{
	const struct pk_kmod_ent *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Fill in the paths of v[] (sorted by name) from <dir>/modules.dep; a missing or
 * unreadable list leaves them NULL. The first file listed for a name wins. */
static void find_paths(const char *dir, struct pk_kmod_ent *v, size_t nr)
{
	char path[PATH_MAX], name[sizeof(v->name)], line[PATH_MAX + 64];
	size_t lines = 0;
	bool line_start = true, whole;
	uint64_t budget = MAX_TEXT_BYTES;

	if ((size_t)snprintf(path, sizeof(path), "%s/modules.dep", dir) >= sizeof(path))
		return;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	/* fixed-size reads: the file name comes first; the rest of a long line (its
	 * dependencies) is read in pieces and passed over */
	while (lines < MAX_DEP_LINES && read_piece(f, line, sizeof(line), &whole, &budget)) {
		size_t len = strlen(line);
		bool start = line_start;
		line_start = whole;
		if (!start)
			continue;
		lines++;
		char *colon = memchr(line, ':', len);
		if (!colon || colon == line)
			continue;
		size_t flen = (size_t)(colon - line);
		if (pk_kmod__name_of(line, flen, name, sizeof(name)))
			continue;
		struct pk_kmod_ent key;
		memcpy(key.name, name, sizeof(name));
		struct pk_kmod_ent *e = bsearch(&key, v, nr, sizeof(*v), by_name);
		if (!e || e->path)
			continue;
		/* relative to the release's directory; an absolute one as it is */
		char full[PATH_MAX];
		int n = line[0] == '/' ? snprintf(full, sizeof(full), "%.*s", (int)flen, line)
				       : snprintf(full, sizeof(full), "%s/%.*s", dir, (int)flen, line);
		if (n > 0 && (size_t)n < sizeof(full))
			e->path = strdup(full);
	}
	fclose(f);
}

int pk_kmods__read(const char *procfs, const char *modroot, struct pk_kmod_ent **out,
		   size_t *nr_out)
{
	char path[PATH_MAX], rel[256], line[1024];
	size_t nr = 0, vcap = 0;
	bool line_start = true, whole;
	uint64_t budget = MAX_TEXT_BYTES;
	struct pk_kmod_ent *v = NULL;
	bool hidden = false;
	int err = 0;

	*out = NULL;
	*nr_out = 0;
	pk_snprintf(path, sizeof(path), "%s/modules", procfs ? procfs : "/proc");
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	while (read_piece(f, line, sizeof(line), &whole, &budget)) {
		struct pk_kmod_ent e;
		bool start = line_start;
		line_start = whole;
		if (!start || pk_modules__parse_line(line, &e))
			continue; /* the rest of an overlong line, or not a module's line */
		if (!e.start) {
			hidden = true; /* kptr_restrict */
			continue;
		}
		if (nr == MAX_MODULES) {
			err = -E2BIG;
			break;
		}
		if (nr == vcap) {
			size_t nc = vcap ? vcap * 2 : 64;
			struct pk_kmod_ent *nv = realloc(v, nc * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
			vcap = nc;
		}
		v[nr++] = e;
	}
	fclose(f);
	if (err) {
		free(v);
		return err;
	}
	if (!nr) {
		free(v);
		return hidden ? -EACCES : 0;
	}
	qsort(v, nr, sizeof(*v), by_name);
	pk_snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", procfs ? procfs : "/proc");
	ssize_t n = pk_read_small_file(path, rel, sizeof(rel));
	if (n > 0) {
		const char *rl = pk_strtrim(rel);
		/* one path component */
		if (rl[0] && !strchr(rl, '/') && strcmp(rl, ".") && strcmp(rl, "..") &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", modroot ? modroot : "/lib/modules",
				     rl) < sizeof(path))
			find_paths(path, v, nr);
	}
	qsort(v, nr, sizeof(*v), by_start);
	*out = v;
	*nr_out = nr;
	return 0;
}

void pk_kmods__free(struct pk_kmod_ent *v, size_t nr)
{
	for (size_t i = 0; v && i < nr; i++)
		free(v[i].path);
	free(v);
}

int pk_kmod__build_id(const char *sysfs, const char *name, uint8_t *buf, size_t *len)
{
	char path[PATH_MAX];
	uint8_t notes[1024];
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/module/%s/notes/.note.gnu.build-id",
			     sysfs ? sysfs : "/sys", name) >= sizeof(path))
		return -ENAMETOOLONG;
	ssize_t n = pk_read_small_file(path, (char *)notes, sizeof(notes));
	if (n < 0)
		return (int)n;
	return pk_notes__build_id(notes, (size_t)n, buf, len);
}
