/* SPDX-License-Identifier: MIT */
/*
 * tool/push-spool.c - profiles the server could not take yet, one file each:
 *
 *   <from_ms:020>-<until_ms:020>-<hash:016x>.pprof|.folded|.parca
 *   content: "PKSPOOL1\n" <query> "\n" <body>
 *
 * The name sorts by the profile's start, so the oldest is first and dropped first when
 * the spool is over its size; the hash is of the query (application, labels, range), so
 * one profile spooled twice keeps one entry and is delivered once. An entry is written
 * to a hidden temporary name and renamed, so a reader never sees half of one. Sending
 * takes an flock on the entry and checks that it still has a name: two perfkit
 * processes sharing a spool never both send one entry. The directory is ours but may be
 * damaged: every entry is read as hostile (bounded query, checked header).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "builtin.h"
#include "push.h"

#define MAGIC "PKSPOOL1\n"
#define QUERY_MAX 8192
#define ENTRY_MAX ((uint64_t)1 << 30)

struct push_spool {
	char dir[PATH_MAX];
	uint64_t max;
};

struct push_spool *push_spool_open(const char *dir, uint64_t max)
{
	struct push_spool *s = calloc(1, sizeof(*s));
	if (!s) {
		tool_error("out of memory");
		return NULL;
	}
	if (strlen(dir) + 128 >= sizeof(s->dir) ||
	    snprintf(s->dir, sizeof(s->dir), "%s", dir) >= (int)sizeof(s->dir)) {
		tool_error("spool directory name too long: '%s'", dir);
		free(s);
		return NULL;
	}
	s->max = max;
	/* mkdir -p, private: profiles name functions and hosts */
	char tmp[PATH_MAX];
	memcpy(tmp, s->dir, sizeof(tmp));
	for (char *p = tmp + 1; ; p++) {
		if (*p == '/' || !*p) {
			char c = *p;
			*p = '\0';
			if (mkdir(tmp, 0700) && errno != EEXIST) {
				tool_error("cannot create spool directory '%s': %s (give another "
					   "with --spool DIR)", tmp, strerror(errno));
				free(s);
				return NULL;
			}
			*p = c;
			if (!c)
				break;
		}
	}
	struct stat st;
	if (stat(s->dir, &st) || !S_ISDIR(st.st_mode) || access(s->dir, W_OK | X_OK)) {
		tool_error("spool '%s' is not a writable directory (give another with --spool DIR)",
			   s->dir);
		free(s);
		return NULL;
	}
	return s;
}

void push_spool_free(struct push_spool *s)
{
	free(s);
}

const char *push_spool_dir(const struct push_spool *s)
{
	return s->dir;
}

/* dir/name into out (PATH_MAX); false if too long (the directory's name is bounded at
 * open, so only a hostile entry name could be) */
static bool join_path(char *out, const char *dir, const char *name, const char *suffix)
{
	int n = snprintf(out, PATH_MAX, "%s/%s%s", dir, name, suffix);
	return n > 0 && n < PATH_MAX;
}

static bool entry_name(const char *n)
{
	/* 20 digits - 20 digits - 16 hex . ext */
	size_t len = strlen(n);
	if (len < 64 || n[20] != '-' || n[41] != '-' || n[58] != '.')
		return false;
	for (int i = 0; i < 58; i++) {
		if (i == 20 || i == 41)
			continue;
		if (!(n[i] >= '0' && n[i] <= '9') && !(i > 41 && n[i] >= 'a' && n[i] <= 'f'))
			return false;
	}
	for (size_t i = 0; i < 3; i++)
		if (n[58] == '.' && !strcmp(n + 59, push_format_names[i]))
			return true;
	return false;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void push_spool_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* the entries, sorted; *bytes = their total size (optional) */
static int list(struct push_spool *s, char ***names, size_t *n, uint64_t **sizes)
{
	*names = NULL;
	*n = 0;
	if (sizes)
		*sizes = NULL;
	DIR *d = opendir(s->dir);
	if (!d)
		return -errno;
	char **v = NULL;
	size_t nr = 0, cap = 0;
	struct dirent *de;
	int err = 0;
	while ((de = readdir(d))) {
		if (!entry_name(de->d_name))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[nr] = strdup(de->d_name))) {
			err = -ENOMEM;
			break;
		}
		nr++;
	}
	closedir(d);
	if (err) {
		push_spool_names_free(v, nr);
		return err;
	}
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_names);
	if (sizes) {
		*sizes = calloc(nr + 1, sizeof(**sizes));
		if (!*sizes) {
			push_spool_names_free(v, nr);
			return -ENOMEM;
		}
		for (size_t i = 0; i < nr; i++) {
			struct stat st;
			char p[PATH_MAX];
			(*sizes)[i] = !join_path(p, s->dir, v[i], "") || stat(p, &st)
				      ? 0 : (uint64_t)st.st_size;
		}
	}
	*names = v;
	*n = nr;
	return 0;
}

int push_spool_list(struct push_spool *s, char ***names, size_t *n)
{
	return list(s, names, n, NULL);
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *b = p;
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* drop the oldest entries while over max; `keep` is the entry just written (dropped
 * last: only if it alone is over the bound) */
static void trim(struct push_spool *s, const char *keep, unsigned *dropped)
{
	char **v;
	size_t n;
	uint64_t *sz;
	if (list(s, &v, &n, &sz))
		return;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += sz[i];
	for (int pass = 0; pass < 2 && total > s->max; pass++) {
		for (size_t i = 0; i < n && total > s->max; i++) {
			if (!v[i] || (pass == 0 && !strcmp(v[i], keep)))
				continue;
			char p[PATH_MAX];
			if (join_path(p, s->dir, v[i], "") && unlink(p) == 0) {
				tool_warn("spool '%s' is over its %" PRIu64 " bytes (--spool-max): "
					  "dropped its oldest profile %s", s->dir, s->max, v[i]);
				(*dropped)++;
			}
			total -= sz[i];
			free(v[i]);
			v[i] = NULL;
		}
	}
	push_spool_names_free(v, n);
	free(sz);
}

int push_spool_put(struct push_spool *s, uint64_t from_ms, uint64_t until_ms,
		   const char *query, const void *body, size_t len, enum push_format fmt,
		   unsigned *dropped)
{
	char name[96], path[PATH_MAX], tmp[PATH_MAX];
	snprintf(name, sizeof(name), "%020" PRIu64 "-%020" PRIu64 "-%016" PRIx64 ".%s", from_ms,
		 until_ms, fnv1a(query), push_format_names[fmt]);
	char tname[128];
	snprintf(tname, sizeof(tname), ".tmp-%d-%s", (int)getpid(), name);
	if (!join_path(path, s->dir, name, "") || !join_path(tmp, s->dir, tname, ""))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int err = write_all(fd, MAGIC, strlen(MAGIC));
	if (!err)
		err = write_all(fd, query, strlen(query));
	if (!err)
		err = write_all(fd, "\n", 1);
	if (!err)
		err = write_all(fd, body, len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	trim(s, name, dropped);
	return 0;
}

int push_spool_take(struct push_spool *s, const char *name, struct push_spool_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->fd = -1;
	char path[PATH_MAX];
	if (!entry_name(name) || strlen(name) >= sizeof(e->name))
		return -EINVAL;
	memcpy(e->name, name, strlen(name) + 1);
	if (!join_path(path, s->dir, name, ""))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return -EBUSY;
	}
	/* sent and removed by another process between our open and the lock */
	if (fstat(fd, &st) || st.st_nlink == 0) {
		close(fd);
		return -ENOENT;
	}
	e->fd = fd;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > ENTRY_MAX ||
	    (size_t)st.st_size < strlen(MAGIC) + 2)
		return -EBADMSG;
	size_t size = (size_t)st.st_size;
	char *buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	size_t got = 0;
	while (got < size) {
		ssize_t r = pread(fd, buf + got, size - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	char *q = buf + strlen(MAGIC);
	size_t qroom = got > strlen(MAGIC) ? got - strlen(MAGIC) : 0;
	char *nl = memchr(q, '\n', qroom < QUERY_MAX ? qroom : QUERY_MAX);
	if (got != size || memcmp(buf, MAGIC, strlen(MAGIC)) || !nl || nl == q) {
		free(buf);
		return -EBADMSG;
	}
	for (char *c = q; c < nl; c++) {
		if (*c <= 0x20 || *c >= 0x7f) {
			free(buf);
			return -EBADMSG;
		}
	}
	*nl = '\0';
	e->query = strdup(q);
	size_t off = (size_t)(nl + 1 - buf);
	e->len = got - off;
	e->body = malloc(e->len + 1);
	if (!e->query || !e->body) {
		free(buf);
		return -ENOMEM;
	}
	memcpy(e->body, buf + off, e->len);
	free(buf);
	e->format = PUSH_PPROF;
	for (int i = 0; i < 3; i++)
		if (!strcmp(name + 59, push_format_names[i]))
			e->format = (enum push_format)i;
	return 0;
}

void push_spool_release(struct push_spool *s, struct push_spool_entry *e, bool remove)
{
	if (remove && e->name[0]) {
		char path[PATH_MAX];
		if (join_path(path, s->dir, e->name, "") && unlink(path) && errno != ENOENT)
			tool_warn("cannot remove spool entry '%s': %s (it would be sent again)",
				  path, strerror(errno));
	}
	if (e->fd >= 0)
		close(e->fd);   /* drops the lock */
	free(e->query);
	free(e->body);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
}

void push_spool_set_aside(struct push_spool *s, const char *name)
{
	char from[PATH_MAX], to[PATH_MAX];
	if (!join_path(from, s->dir, name, ""))
		return;
	if (!join_path(to, s->dir, name, ".bad") || rename(from, to))
		unlink(from);
	tool_warn("spool entry '%s' is damaged: set aside as '%s'", from, to);
}
