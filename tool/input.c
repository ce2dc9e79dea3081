/* SPDX-License-Identifier: MIT */
/*
 * tool/input.c - opening a perf.data input for every reader command (report, script,
 * annotate, and flamegraph/convert/diff through tool_load_profile), with one wording of
 * what the input is when it is not perf.data: empty, a directory, a FIFO that closed
 * without data, another kind of file (named by what it starts with), the other byte
 * order. The library returns the distinct errors (pk_data_reader__open); the words are
 * the tool's.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

/* A few formats users hand us by mistake, by their first bytes. */
static const char *known_format(const uint8_t *b, size_t n)
{
	static const struct { const char *magic; size_t len; const char *what; } fmts[] = {
		{ "\177ELF", 4, "an ELF file" },
		{ "\037\213", 2, "gzip-compressed" },
		{ "\375" "7zXZ\0", 6, "xz-compressed" },
		{ "\050\265\057\375", 4, "zstd-compressed" },
		{ "BZh", 3, "bzip2-compressed" },
		{ "PK\003\004", 4, "a zip archive" },
		{ "#!", 2, "a script" },
	};
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		if (n >= fmts[i].len && !memcmp(b, fmts[i].magic, fmts[i].len))
			return fmts[i].what;
	return NULL;
}

/* `"text"` when printable, else hex bytes. */
static void describe_head(char *out, size_t size, const struct pk_data_head *h)
{
	bool text = true;
	for (size_t i = 0; i < h->len; i++)
		if (!isprint(h->bytes[i]) && h->bytes[i] != '\n' && h->bytes[i] != '\t')
			text = false;
	size_t at = 0;
	if (text) {
		at += (size_t)snprintf(out, size, "\"");
		for (size_t i = 0; i < h->len && at + 3 < size; i++) {
			char c = (char)h->bytes[i];
			if (c == '\n' || c == '\t' || c == '"' || c == '\\') {
				out[at++] = '\\';
				c = c == '\n' ? 'n' : c == '\t' ? 't' : c;
			}
			out[at++] = c;
			out[at] = 0;
		}
		if (at < size)
			snprintf(out + at, size - at, "\"");
	} else {
		for (size_t i = 0; i < h->len && at < size; i++)
			at += (size_t)snprintf(out + at, size - at, "%s%02x", i ? " " : "",
					       h->bytes[i]);
	}
}

void tool_input_error(const char *path, int err, const struct pk_data_head *head)
{
	struct stat st;
	bool is_stdin = !strcmp(path, "-");
	bool stream = (is_stdin ? fstat(STDIN_FILENO, &st) : stat(path, &st)) == 0 &&
		      (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode));
	const char *name = is_stdin ? "standard input" : path;
	char q[4200];
	snprintf(q, sizeof(q), is_stdin ? "%s" : "'%s'", name);

	if (err < 0)
		err = -err;
	if (err == ENOENT && !is_stdin && !strcmp(path, "perf.data")) {
		tool_error("cannot open 'perf.data': no such file (record one with 'perfkit "
			   "record', or give -i FILE)");
	} else if (err == EISDIR) {
		tool_error("%s is a directory, not a perf.data file (give -i FILE)", q);
	} else if (err == PK_ERR_EMPTY && stream) {
		tool_error("%s%s closed without data: the writer sent nothing", q,
			   is_stdin ? "" : " is a FIFO that");
	} else if (err == PK_ERR_EMPTY) {
		tool_error("%s is empty: the recording wrote nothing", q);
	} else if (err == PK_ERR_NOT_PERF_DATA && head && head->len) {
		char what[64];
		const char *fmt = known_format(head->bytes, head->len);
		describe_head(what, sizeof(what), head);
		tool_error("%s is not a perf.data file (starts with %s%s%s)", q, what,
			   fmt ? ": " : "", fmt ? fmt : "");
	} else if (err == PK_ERR_NOT_PERF_DATA) {
		tool_error("%s is not a perf.data file", q);
	} else if (err == PK_ERR_BYTE_ORDER) {
		tool_error("%s was recorded on a %s-endian machine: not supported (read it "
			   "with perf there)", q,
			   __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "big" : "little");
	} else {
		tool_error("cannot read %s: %s", q, pk_strerror(err));
	}
}

/* the images of perf.data directories: the readers borrow them until the process ends */
static void *dir_images[4];
static size_t nr_dir_images;

static void free_dir_images(void)
{
	for (size_t i = 0; i < nr_dir_images; i++)
		free(dir_images[i]);
	nr_dir_images = 0;
}

struct pk_data_reader *tool_open_input(const char *path, const struct pk_data_reader_opts *opts)
{
	struct pk_data_head head = { .len = 0 };
	PK_OPTS(pk_data_reader_opts, ro);
	if (opts)
		ro = *opts;
	ro.head = &head;
	struct pk_data_reader *r;
	struct stat st;
	char data[PATH_MAX];
	/* perf's directory format: perf.data/data and its data.N files, as one image that
	 * lives as long as the process (readers borrow it) */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (size_t)snprintf(data, sizeof(data), "%s/data", path) < sizeof(data) &&
	    access(data, F_OK) == 0) {
		void *img;
		size_t len;
		int err = tool_dir_image(path, &img, &len);
		if (err < 0 || nr_dir_images == sizeof(dir_images) / sizeof(dir_images[0])) {
			free(img);
			tool_error("cannot read the perf.data directory '%s': %s", path,
				   err < 0 ? pk_strerror(err) : "too many inputs");
			return NULL;
		}
		if (!nr_dir_images)
			atexit(free_dir_images);
		dir_images[nr_dir_images++] = img;
		r = pk_data_reader__open_mem(img, len, &ro);
		if (!r)
			tool_input_error(data, errno, &head);
		return r;
	}
	r = pk_data_reader__open(path, &ro);
	if (!r)
		tool_input_error(path, errno, &head);
	return r;
}
