/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: perf's directory format (tool/input-dir.c) - a hostile `data` file
 * and data.N files spliced into one image, which the reader then opens and iterates.
 * Input: a little-endian u16 split point, then `data` up to it, then data.0 (the rest, cut
 * in two at its middle when it is long: data.0 and data.1). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../tool/input-dir.c"

static void put(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (n && fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-perfdir.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		pk_set_log(NULL, NULL, PK_LOG_ERROR);
	}
	if (size < 2)
		return 0;
	size_t split = (size_t)data[0] | (size_t)data[1] << 8;
	data += 2;
	size -= 2;
	if (split > size)
		split = size;
	size_t rest = size - split, half = rest > 64 ? rest / 2 : rest;
	put(dir, "data", data, split);
	put(dir, "data.0", data + split, half);
	put(dir, "data.1", data + split + half, rest - half);
	void *img;
	size_t len;
	if (tool_dir_image(dir, &img, &len) == 0) {
		PK_OPTS(pk_data_reader_opts, ro);
		struct pk_data_reader *r = pk_data_reader__open_mem(img, len, &ro);
		struct pk_data_event ev;
		for (int i = 0; r && i < 100000 && pk_data_reader__next(r, &ev) > 0; i++)
			;
		pk_data_reader__free(r);
		free(img);
	}
	return 0;
}
