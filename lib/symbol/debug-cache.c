/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/debug-cache.c - decompressed copies of compressed debug files.
 *
 * Distributions ship separate debug files with zlib-compressed .debug_* sections
 * (SHF_COMPRESSED; Debian's libc6-dbg: 4 MB on disk, ~15 MB inflated). libdw inflates
 * every such section when it opens the file, for each process that opens it: for libc
 * that is ~25-30 ms of every `perfkit report` or `script` that needs inline frames or
 * source lines in libc, a quarter of a report on a DWARF-unwound recording. The first
 * time, the file is copied to debug/ in the machine's cache directory
 * (pk_machine_opts.cache_dir; the tool's is $XDG_CACHE_HOME/perfkit or ~/.cache/perfkit)
 * as <build-id>.debug with its sections decompressed (libelf's elf_compress), and later
 * sessions open that copy, which libdw maps as it is. Like perf's ~/.debug, the cache
 * grows with the debug files used and is never pruned (delete the directory at will).
 *
 * The copy is hostile input like any ELF file (libdw reads it, bounds-checked), and is
 * used only if it is a regular file owned by us, not writable by others, whose build id
 * is the one wanted. Written atomically (temporary file, rename). A machine without a
 * cache directory uses the original file.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "symbol-internal.h"
#include <perfkit/data.h>

/* Does the ELF file have SHF_COMPRESSED .debug_* sections (and no GNU .zdebug_ ones,
 * which would need renaming)? */
static bool pk_has_compressed_debug(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	bool any = false, gnu = false;
	if (!e)
		return false;
	if (elf_kind(e) == ELF_K_ELF && elf_getshdrstrndx(e, &shstrndx) == 0) {
		for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
				continue;
			const char *name = elf_strptr(e, shstrndx, sh.sh_name);
			if (!name)
				continue;
			if (!strncmp(name, ".zdebug", 7))
				gnu = true;
			else if ((sh.sh_flags & SHF_COMPRESSED) && !strncmp(name, ".debug_", 7))
				any = true;
		}
	}
	elf_end(e);
	return any && !gnu;
}

static int pk_copy_fd(int from, int to)
{
	char buf[1 << 16];
	off_t off = 0;
	for (;;) {
		ssize_t r = pread(from, buf, sizeof(buf), off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		for (ssize_t w = 0; w < r;) {
			ssize_t k = write(to, buf + w, (size_t)(r - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return k < 0 ? -errno : -EIO;
			w += k;
		}
		off += r;
	}
}

/* Write the decompressed copy of src_fd to path (through a temporary file). */
static int pk_debug_cache_write(int src_fd, const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	int err = pk_copy_fd(src_fd, fd);
	Elf *e = NULL;
	if (!err && !(e = elf_begin(fd, ELF_C_RDWR, NULL)))
		err = -EINVAL;
	size_t shstrndx;
	if (!err && elf_getshdrstrndx(e, &shstrndx) != 0)
		err = -EINVAL;
	for (Elf_Scn *scn = err ? NULL : elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sh.sh_flags & SHF_COMPRESSED))
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7))
			continue;
		if (elf_compress(scn, 0, 0) < 0) {
			err = -EINVAL;
			break;
		}
	}
	off_t size = -1;
	if (!err && (size = elf_update(e, ELF_C_WRITE)) < 0)
		err = -EIO;
	if (e)
		elf_end(e);
	if (!err && ftruncate(fd, size) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static bool pk_cached_ok(const char *path, const uint8_t *id, size_t len, int *fd_out)
{
	int fd = pk_open_regular(path, PK_DSO_MAX_FILE, NULL);
	struct stat st;
	if (fd < 0)
		return false;
	uint8_t b[PK_BUILD_ID_BYTES];
	size_t bl = sizeof(b);
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    pk_build_id__read(path, b, &bl) < 0 || bl != len || memcmp(b, id, len)) {
		close(fd);
		return false;
	}
	*fd_out = fd;
	return true;
}

int pk_debug_cache_open(const struct pk_machine *m, int src_fd, const uint8_t *id,
			size_t idlen, char **path_out)
{
	char dir[PATH_MAX], path[PATH_MAX];
	if (idlen < 2 || idlen > PK_BUILD_ID_BYTES)
		return -EINVAL;
	int err = pk_cache_dir(m->cache_dir, dir, sizeof(dir), false);
	if (err)
		return err;
	size_t o = (size_t)snprintf(path, sizeof(path), "%s/debug/", dir);
	if (o + 2 * idlen + 8 > sizeof(path))
		return -ENAMETOOLONG;
	for (size_t i = 0; i < idlen; i++)
		o += (size_t)snprintf(path + o, sizeof(path) - o, "%02x", id[i]);
	snprintf(path + o, sizeof(path) - o, ".debug");
	int fd;
	if (!pk_cached_ok(path, id, idlen, &fd)) {
		if (!pk_has_compressed_debug(src_fd))
			return -ENOENT;         /* nothing to gain: use the file itself */
		char sub[PATH_MAX];
		if ((err = pk_cache_dir(m->cache_dir, dir, sizeof(dir), true)))
			return err;
		if (snprintf(sub, sizeof(sub), "%s/debug", dir) >= (int)sizeof(sub))
			return -ENAMETOOLONG;
		if (mkdir(sub, 0700) < 0 && errno != EEXIST)
			return -errno;
		if ((err = pk_debug_cache_write(src_fd, path)))
			return err;
		if (!pk_cached_ok(path, id, idlen, &fd))
			return -EINVAL;
	}
	if (!(*path_out = strdup(path))) {
		close(fd);
		return -ENOMEM;
	}
	return fd;
}
