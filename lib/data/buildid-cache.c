/* SPDX-License-Identifier: MIT */
/*
 * lib/data: filling perf's build-id cache (data.h, pk_build_id_cache__add).
 *
 * The layout is perf's, so that `perf report` and our own reader (lib/symbol) find what
 * `perfkit record` stored and the other way round:
 *
 *   <dir>/<real path of the file>/<hex build-id>/elf       the file: a hard link when
 *                                                          possible, else a copy
 *   <dir>/[kernel.kallsyms]/<hex build-id>/kallsyms        a copy of /proc/kallsyms
 *   <dir>/.build-id/<first 2 hex>/<other hex>              symlink to "../../<path>/<hex>"
 *
 * A copy is written under a temporary name and renamed into place, and the build-id of
 * what ended up in the cache is checked, so a file rebuilt while we copy it is never
 * stored under the old id.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "data-internal.h"

/* mkdir -p with mode 0755; returns 0 or -errno. path is modified in place and restored. */
static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int r = mkdir(path, 0755);
		int e = errno;
		*p = '/';
		if (r < 0 && e != EEXIST)
			return -e;
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Copy at most `max` bytes of `in` into <dirpath>/<name> through a temporary file. A source
 * longer than `max` (one more byte can be read) is refused with -EFBIG. */
static int copy_into(int in, const char *dirpath, const char *name, mode_t mode, uint64_t max)
{
	enum { BUF = 64 * 1024 };
	char tmp[PATH_MAX], dst[PATH_MAX];
	uint64_t total = 0;
	int out, err = 0;
	char *buf;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dirpath, name) >= sizeof(tmp) ||
	    (size_t)snprintf(dst, sizeof(dst), "%s/%s", dirpath, name) >= sizeof(dst))
		return -ENAMETOOLONG;
	buf = malloc(BUF);
	if (!buf)
		return -ENOMEM;
	out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	for (;;) {
		ssize_t r = read(in, buf, BUF);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		total += (uint64_t)r;
		if (total > max) {
			err = -EFBIG;
			break;
		}
		for (ssize_t off = 0; off < r && !err;) {
			ssize_t w = write(out, buf + off, (size_t)(r - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				err = w < 0 ? -errno : -EIO;
			else
				off += w;
		}
		if (err)
			break;
	}
	free(buf);
	if (!err && fchmod(out, mode) < 0)
		err = -errno;
	if (close(out) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, dst) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* <base>/.build-id/xx/yyyy -> ../../<rel>/<hex>; an existing link is left alone. */
static int add_link(const char *base, const char *rel, const char *hex)
{
	char linkdir[PATH_MAX], link[PATH_MAX], target[PATH_MAX];

	if ((size_t)snprintf(linkdir, sizeof(linkdir), "%s/.build-id/%.2s", base, hex) >=
		    sizeof(linkdir) ||
	    (size_t)snprintf(link, sizeof(link), "%s/%s", linkdir, hex + 2) >= sizeof(link) ||
	    (size_t)snprintf(target, sizeof(target), "../../%s/%s", rel, hex) >= sizeof(target))
		return -ENAMETOOLONG;
	int err = mkdir_p(linkdir);
	if (err)
		return err;
	if (symlink(target, link) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static bool has_build_id(const char *path, const uint8_t *id, size_t len)
{
	uint8_t b[PK_BUILD_ID_MAX];
	size_t bl = sizeof(b);
	return pk_build_id__read(path, b, &bl) == 0 && bl == len && !memcmp(b, id, len);
}

static int prepare(const uint8_t *id, size_t len, const struct pk_build_id_cache_opts *opts,
		   char *base, size_t base_size, char *hex, uint64_t *max)
{
	if (!id || !len || len > PK_BUILD_ID_MAX || !PK_OPTS_VALID(opts, pk_build_id_cache_opts))
		return -EINVAL;
	/* an all-zero id is what a missing note looks like in some files: never cache it */
	size_t nz = 0;
	for (size_t i = 0; i < len; i++)
		nz += id[i] != 0;
	if (!nz)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	*max = PK_OPTS_GET(opts, max_copy, 0);
	if (!*max)
		*max = PK_BUILD_ID_CACHE_MAX_COPY;
	return pk_build_id_dir(PK_OPTS_GET(opts, dir, NULL), base, base_size);
}

PK_API int pk_build_id_cache__dir(const struct pk_build_id_cache_opts *opts, char *buf,
				  size_t len)
{
	if (!buf || !len || !PK_OPTS_VALID(opts, pk_build_id_cache_opts))
		return pk_err(-EINVAL);
	int err = pk_build_id_dir(PK_OPTS_GET(opts, dir, NULL), buf, len);
	return err ? pk_err(err) : 0;
}

PK_API int pk_build_id_cache__add(const char *path, const uint8_t *id, size_t len,
				  const struct pk_build_id_cache_opts *opts)
{
	char base[PATH_MAX], real[PATH_MAX], dir[PATH_MAX], elf[PATH_MAX];
	char hex[2 * PK_BUILD_ID_MAX + 1];
	uint64_t max;
	struct stat st;
	int fd, err;

	if (!path || path[0] != '/')
		return pk_err(-EINVAL);
	err = prepare(id, len, opts, base, sizeof(base), hex, &max);
	if (err)
		return pk_err(err);
	if (!realpath(path, real))
		return pk_err(-errno);
	/* a file of the cache itself (report of a cached copy): nothing to add */
	size_t bl = strlen(base);
	if (!strncmp(real, base, bl) && real[bl] == '/')
		return 0;
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s/%s", base, real, hex) >= sizeof(dir) ||
	    (size_t)snprintf(elf, sizeof(elf), "%s/elf", dir) >= sizeof(elf))
		return pk_err(-ENAMETOOLONG);
	if (has_build_id(elf, id, len))
		return pk_err(add_link(base, real + 1, hex));

	fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return pk_err(-errno);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return pk_err(-EINVAL);
	}
	err = mkdir_p(dir);
	if (!err) {
		unlink(elf); /* a stale copy (its id did not match) */
		/* perf's choice: a hard link costs nothing; across file systems, or where
		 * protected_hardlinks refuses it, a copy of at most `max` bytes */
		if (link(real, elf) < 0) {
			if ((uint64_t)st.st_size > max)
				err = -EFBIG;
			else
				err = copy_into(fd, dir, "elf", st.st_mode & 0755, max);
		}
	}
	close(fd);
	if (!err && !has_build_id(elf, id, len)) {
		unlink(elf); /* the file changed under us */
		err = -ESTALE;
	}
	if (err) {
		rmdir(dir); /* only if empty */
		return pk_err(err);
	}
	return pk_err(add_link(base, real + 1, hex));
}

/* With kptr_restrict every address reads as 0 and a copy would be of no use: look for a
 * non-zero address in the first 64 KiB (per-CPU symbols at 0 come first on x86). */
static int kallsyms_readable(int fd)
{
	enum { HEAD = 64 * 1024 };
	char *buf = malloc(HEAD + 1);
	ssize_t n;
	int err = -EACCES;

	if (!buf)
		return -ENOMEM;
	n = pread(fd, buf, HEAD, 0);
	if (n < 0)
		err = -errno;
	for (ssize_t i = 0; n > 0 && i < n; i++) {
		if (i && buf[i - 1] != '\n')
			continue;
		ssize_t j = i;
		bool nonzero = false;
		while (j < n && ((buf[j] >= '0' && buf[j] <= '9') || (buf[j] >= 'a' && buf[j] <= 'f')))
			nonzero |= buf[j++] != '0';
		if (j < n && buf[j] == ' ' && j > i && nonzero) {
			err = 0;
			break;
		}
	}
	free(buf);
	return err;
}

PK_API int pk_build_id_cache__add_kallsyms(const char *kallsyms, const uint8_t *id, size_t len,
					   const struct pk_build_id_cache_opts *opts)
{
	char base[PATH_MAX], dir[PATH_MAX], file[PATH_MAX];
	char hex[2 * PK_BUILD_ID_MAX + 1];
	uint64_t max;
	int fd, err;

	err = prepare(id, len, opts, base, sizeof(base), hex, &max);
	if (err)
		return pk_err(err);
	if ((size_t)snprintf(dir, sizeof(dir), "%s/[kernel.kallsyms]/%s", base, hex) >=
		    sizeof(dir) ||
	    (size_t)snprintf(file, sizeof(file), "%s/kallsyms", dir) >= sizeof(file))
		return pk_err(-ENAMETOOLONG);
	if (access(file, F_OK) == 0)
		return pk_err(add_link(base, "[kernel.kallsyms]", hex));

	fd = open(kallsyms ? kallsyms : "/proc/kallsyms", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return pk_err(-errno);
	err = kallsyms_readable(fd);
	if (!err)
		err = mkdir_p(dir);
	if (!err)
		err = copy_into(fd, dir, "kallsyms", 0644, max);
	close(fd);
	if (err) {
		rmdir(dir);
		return pk_err(err);
	}
	return pk_err(add_link(base, "[kernel.kallsyms]", hex));
}

PK_API int pk_build_id_cache__add_vdso(int fd, const uint8_t *id, size_t len,
				       const struct pk_build_id_cache_opts *opts)
{
	char base[PATH_MAX], dir[PATH_MAX], file[PATH_MAX];
	char hex[2 * PK_BUILD_ID_MAX + 1];
	uint64_t max;
	int err;

	if (fd < 0)
		return pk_err(-EINVAL);
	err = prepare(id, len, opts, base, sizeof(base), hex, &max);
	if (err)
		return pk_err(err);
	if ((size_t)snprintf(dir, sizeof(dir), "%s/[vdso]/%s", base, hex) >= sizeof(dir) ||
	    (size_t)snprintf(file, sizeof(file), "%s/vdso", dir) >= sizeof(file))
		return pk_err(-ENAMETOOLONG);
	if (has_build_id(file, id, len))
		return pk_err(add_link(base, "[vdso]", hex));
	err = mkdir_p(dir);
	if (!err) {
		unlink(file); /* a stale copy */
		err = lseek(fd, 0, SEEK_SET) < 0 ? -errno : copy_into(fd, dir, "vdso", 0755, max);
	}
	if (!err && !has_build_id(file, id, len)) {
		unlink(file);
		err = -ESTALE;
	}
	if (err) {
		rmdir(dir);
		return pk_err(err);
	}
	return pk_err(add_link(base, "[vdso]", hex));
}
