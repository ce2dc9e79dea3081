/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/source.c - the text of source files, line by line, for the source lines
 * annotate shows between instructions. Source files are input we did not produce: only
 * regular files are opened (a FIFO never blocks), each up to a size limit, the text kept
 * at once is bounded (older files are dropped and read again when asked), and the line
 * index keeps one offset every PK_SRC_STEP lines (a file of empty lines cannot make it
 * outgrow the text).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/annotate.h>
#include "internal.h"
#include "core/intern.h"

#define PK_SRC_STEP 32u                         /* lines per index entry */
#define PK_SRC_MAX_FILE_DEF ((size_t)16 << 20)
#define PK_SRC_MAX_TOTAL_DEF ((size_t)64 << 20)
#define PK_SRC_MAX_FILES 4096                   /* entries (files asked for) kept */

struct src_file {
	char *path;
	int err;                /* 0 (text loaded or dropped), or why it cannot be read */
	bool loaded;
	char *text;
	size_t len;
	size_t nr_lines;
	size_t *index;          /* start of line 1 + k * PK_SRC_STEP */
	uint64_t used;          /* the cache's clock at its last use (eviction order) */
};

struct pk_source_cache {
	size_t max_file, max_total, total;
	struct src_file *files;
	size_t nr_files, cap_files;
	size_t last;            /* files[last]: the file asked for last */
	uint64_t clock;
};

PK_API struct pk_source_cache *pk_source_cache__new(const struct pk_source_cache_opts *o)
{
	if (!PK_OPTS_VALID(o, pk_source_cache_opts))
		return pk_err_ptr(-EINVAL);
	struct pk_source_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return pk_err_ptr(-ENOMEM);
	c->max_file = PK_OPTS_GET(o, max_file_bytes, (size_t)0);
	c->max_total = PK_OPTS_GET(o, max_total_bytes, (size_t)0);
	if (!c->max_file)
		c->max_file = PK_SRC_MAX_FILE_DEF;
	if (!c->max_total)
		c->max_total = PK_SRC_MAX_TOTAL_DEF;
	if (c->max_file > c->max_total)
		c->max_file = c->max_total;
	c->last = SIZE_MAX;
	return c;
}

static void src_unload(struct pk_source_cache *c, struct src_file *f)
{
	if (!f->loaded)
		return;
	c->total -= f->len;
	free(f->text);
	free(f->index);
	f->text = NULL;
	f->index = NULL;
	f->loaded = false;
}

PK_API void pk_source_cache__free(struct pk_source_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_files; i++) {
		src_unload(c, &c->files[i]);
		free(c->files[i].path);
	}
	free(c->files);
	free(c);
}

/* the line index of f's text: one offset per PK_SRC_STEP lines */
static int src_index(struct src_file *f)
{
	size_t n = 0, cap = 0;
	size_t *idx = NULL;
	const char *p = f->text, *end = f->text + f->len;
	while (p < end) {
		if (n % PK_SRC_STEP == 0) {
			size_t k = n / PK_SRC_STEP;
			if (pk_grow((void **)&idx, &cap, k + 1, sizeof(*idx))) {
				free(idx);
				return -ENOMEM;
			}
			idx[k] = (size_t)(p - f->text);
		}
		n++;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	f->index = idx;
	f->nr_lines = n;
	return 0;
}

/* drop the text of the files used longest ago until `need` more bytes fit */
static void src_make_room(struct pk_source_cache *c, size_t need, const struct src_file *keep)
{
	while (c->total + need > c->max_total) {
		struct src_file *old = NULL;
		for (size_t i = 0; i < c->nr_files; i++) {
			struct src_file *f = &c->files[i];
			if (f->loaded && f != keep && (!old || f->used < old->used))
				old = f;
		}
		if (!old)
			return;
		src_unload(c, old);
	}
}

/* take over text (malloc'd, len bytes) as f's */
static int src_adopt(struct pk_source_cache *c, struct src_file *f, char *text, size_t len)
{
	src_make_room(c, len, f);
	f->text = text;
	f->len = len;
	int err = src_index(f);
	if (err) {
		free(text);
		f->text = NULL;
		return err;
	}
	f->loaded = true;
	c->total += len;
	return 0;
}

static int src_read(struct pk_source_cache *c, struct src_file *f)
{
	int fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat st;
	int err = 0;
	if (fstat(fd, &st)) {
		err = -errno;
	} else if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
	} else if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
	} else if ((uint64_t)st.st_size > c->max_file) {
		err = -EFBIG;
	} else {
		char *text = NULL;
		size_t len = 0;
		/* (the file may grow while read: the limit holds for what is read) */
		err = pk_read_fd_alloc(fd, (size_t)st.st_size + 2, c->max_file + 2, &text, &len);
		if (!err)
			err = src_adopt(c, f, text, len);
	}
	close(fd);
	return err;
}

/* the entry of path (made on first sight) */
static int src_find(struct pk_source_cache *c, const char *path, struct src_file **out)
{
	if (c->last < c->nr_files && !strcmp(c->files[c->last].path, path)) {
		*out = &c->files[c->last];
		return 0;
	}
	for (size_t i = 0; i < c->nr_files; i++) {
		if (!strcmp(c->files[i].path, path)) {
			c->last = i;
			*out = &c->files[i];
			return 0;
		}
	}
	if (c->nr_files >= PK_SRC_MAX_FILES)
		return -EMFILE;
	if (pk_grow((void **)&c->files, &c->cap_files, c->nr_files + 1, sizeof(*c->files)))
		return -ENOMEM;
	struct src_file *f = &c->files[c->nr_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	c->last = c->nr_files++;
	*out = f;
	return 1;
}

PK_API int pk_source_cache__put(struct pk_source_cache *c, const char *path, const void *data,
				size_t len)
{
	if (!c || !path || (!data && len))
		return pk_err(-EINVAL);
	if (len > c->max_file)
		return pk_err(-EFBIG);
	struct src_file *f;
	int err = src_find(c, path, &f);
	if (err < 0)
		return pk_err(err);
	src_unload(c, f);
	char *text = malloc(len ? len : 1);
	if (!text)
		return pk_err(-ENOMEM);
	if (len)
		memcpy(text, data, len);
	f->err = 0;
	f->used = ++c->clock;
	err = src_adopt(c, f, text, len);
	if (err) {
		f->err = err;
		return pk_err(err);
	}
	return 0;
}

PK_API int pk_source_cache__lines(struct pk_source_cache *c, const char *path, size_t *nr_lines)
{
	if (!c || !path)
		return pk_err(-EINVAL);
	struct src_file *f;
	int err = src_find(c, path, &f);
	if (err < 0)
		return pk_err(err);
	f->used = ++c->clock;
	if (f->err)
		return pk_err(f->err);
	if (!f->loaded) {
		/* a failure is remembered: the file is not tried again on every line */
		err = src_read(c, f);
		if (err) {
			f->err = err;
			return pk_err(err);
		}
	}
	if (nr_lines)
		*nr_lines = f->nr_lines;
	return 0;
}

PK_API int pk_source_cache__line(struct pk_source_cache *c, const char *path, size_t line,
				 const char **text, size_t *len)
{
	if (!text || !len)
		return pk_err(-EINVAL);
	size_t n = 0;
	int err = pk_source_cache__lines(c, path, &n);
	if (err)
		return err;
	if (!line || line > n)
		return pk_err(-ERANGE);
	const struct src_file *f = &c->files[c->last];
	size_t at = f->index[(line - 1) / PK_SRC_STEP];
	const char *p = f->text + at, *end = f->text + f->len;
	for (size_t k = (line - 1) % PK_SRC_STEP; k > 0; k--) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	*text = p;
	*len = (size_t)((nl ? nl : end) - p);
	return 0;
}
