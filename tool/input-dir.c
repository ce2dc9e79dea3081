/* SPDX-License-Identifier: MIT */
/*
 * tool/input-dir.c - perf's directory format (`perf record --threads` writes perf.data/
 * with a `data` file, perf.data proper, and one `data.N` file of raw records per writer
 * thread) read as one perf.data image: `data` up to the end of its data section, every
 * data.N in numeric order, then `data`'s feature sections, with the header's data size
 * and every file offset past the insertion point moved by the bytes inserted. The
 * records of the data.N files carry no FINISHED_ROUND, so the session orders them with
 * the rest by time, as perf does when it reads the files side by side.
 *
 * Every input is hostile: sizes and offsets are checked against the files before use.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

/* perf.data's header (tools/perf/Documentation/perf.data-file-format.txt) */
#define HDR_SIZE 104
#define OFF_ATTR_SIZE 16
#define OFF_ATTRS 24
#define OFF_DATA 40
#define OFF_FEATURES 72
#define FEAT_BITS 256
#define MAX_DATA_FILES 4096
#define MAX_IMAGE ((uint64_t)1 << 40)

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* A whole regular file (at most MAX_IMAGE bytes) into *buf; 0 or -errno. */
static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_IMAGE) {
		err = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		goto out;
	}
	*buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!*buf) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t got = 0; got < (size_t)st.st_size;) {
		ssize_t n = pread(fd, *buf + got, (size_t)st.st_size - got, (off_t)got);
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		got += (size_t)n;
	}
	*len = (size_t)st.st_size;
out:
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	close(fd);
	return err;
}

static int cmp_num(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

/* The N of every data.N in dir, sorted; -errno */
static int data_files(const char *dir, long **nums, size_t *nr)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;
	long *v = NULL;

	*nums = NULL;
	*nr = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "data.", 5) || de->d_name[5] < '0' || de->d_name[5] > '9')
			continue;
		long k = strtol(de->d_name + 5, &end, 10);
		if (*end || k < 0 || k > INT_MAX)
			continue;
		if (n == MAX_DATA_FILES) {
			closedir(d);
			free(v);
			return -E2BIG;
		}
		if (!(n & (n - 1)) || !n) {
			long *nv = realloc(v, (n ? 2 * n : 8) * sizeof(*v));
			if (!nv) {
				closedir(d);
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = k;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_num);
	*nums = v;
	*nr = n;
	return 0;
}

/* Move a file offset that lies at or past `at` by `delta`. */
static void shift(uint8_t *p, uint64_t at, uint64_t delta)
{
	uint64_t v = get64(p);
	if (v >= at)
		put64(p, v + delta);
}

int tool_dir_image(const char *dir, void **image, size_t *image_len)
{
	char path[PATH_MAX];
	uint8_t *main = NULL, *out = NULL;
	size_t mlen, olen, nfiles = 0;
	long *nums = NULL;
	int err;

	*image = NULL;
	*image_len = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/data", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	if ((err = read_file(path, &main, &mlen)) < 0)
		return err;
	err = -PK_ERR_FORMAT;
	if (mlen < HDR_SIZE || memcmp(main, "PERFILE2", 8) || get64(main + 8) != HDR_SIZE)
		goto out;
	uint64_t doff = get64(main + OFF_DATA), dsize = get64(main + OFF_DATA + 8);
	uint64_t attr_size = get64(main + OFF_ATTR_SIZE);
	uint64_t aoff = get64(main + OFF_ATTRS), asize = get64(main + OFF_ATTRS + 8);
	unsigned nfeat = 0;
	for (unsigned b = 0; b < FEAT_BITS; b++)
		nfeat += (main[OFF_FEATURES + b / 8] >> (b % 8)) & 1;
	uint64_t ins = doff + dsize;
	if (doff < HDR_SIZE || dsize > mlen || doff > mlen - dsize ||
	    (uint64_t)nfeat * 16 > mlen - ins || attr_size < 16 || attr_size > 4096 ||
	    asize > mlen || aoff > mlen - asize || asize % attr_size || aoff + asize > ins)
		goto out;
	if ((err = data_files(dir, &nums, &nfiles)) < 0)
		goto out;

	/* the data.N files, in order, after the main data */
	uint8_t **parts = calloc(nfiles ? nfiles : 1, sizeof(*parts));
	size_t *plen = calloc(nfiles ? nfiles : 1, sizeof(*plen));
	uint64_t added = 0;
	err = parts && plen ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < nfiles; i++) {
		snprintf(path, sizeof(path), "%s/data.%ld", dir, nums[i]);
		err = read_file(path, &parts[i], &plen[i]);
		added += plen[i];
		if (!err && added > MAX_IMAGE)
			err = -EFBIG;
	}
	if (!err) {
		olen = mlen + (size_t)added;
		out = malloc(olen);
		if (!out)
			err = -ENOMEM;
	}
	if (!err) {
		size_t at = (size_t)ins;
		memcpy(out, main, at);
		for (size_t i = 0; i < nfiles; i++) {
			memcpy(out + at, parts[i], plen[i]);
			at += plen[i];
		}
		memcpy(out + at, main + ins, mlen - (size_t)ins);
		/* the header: data size; the attrs' id sections; the feature table */
		put64(out + OFF_DATA + 8, dsize + added);
		for (uint64_t a = aoff; a < aoff + asize; a += attr_size)
			shift(out + a + attr_size - 16, ins, added);
		for (unsigned f = 0; f < nfeat; f++)
			shift(out + ins + added + 16 * f, ins, added);
		*image = out;
		*image_len = olen;
		out = NULL;
	}
	for (size_t i = 0; parts && i < nfiles; i++)
		free(parts[i]);
	free(parts);
	free(plen);
out:
	free(nums);
	free(main);
	free(out);
	return err;
}
