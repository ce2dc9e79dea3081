/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: bytes -> the text of a source file in pk_source_cache (put, with a
 * small total bound so that files are dropped) -> its line count and lines by numbers
 * taken from the input, each line checked to lie inside the text and hold no newline. */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>
#include <perfkit/perfkit.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PK_OPTS(pk_source_cache_opts, o, .max_file_bytes = 1 << 16, .max_total_bytes = 3 << 15);
	struct pk_source_cache *c = pk_source_cache__new(&o);
	if (!c)
		return 0;
	/* two files from the same bytes: the second drops the first when both do not fit */
	size_t half = size / 2;
	pk_source_cache__put(c, "a.c", data, size);
	pk_source_cache__put(c, "b.c", data + half, size - half);
	size_t nr = 0;
	const char *names[2] = { "a.c", "b.c" };
	for (int f = 0; f < 2; f++) {
		if (pk_source_cache__lines(c, names[f], &nr))
			continue;
		for (size_t i = 0; i + 2 <= size && i < 64; i += 2) {
			size_t line = (size_t)data[i] | (size_t)data[i + 1] << 8;
			const char *t;
			size_t len;
			if (pk_source_cache__line(c, names[f], line, &t, &len))
				continue;
			if (line == 0 || line > nr || memchr(t, '\n', len))
				abort();
		}
		const char *t;
		size_t len;
		if (nr && pk_source_cache__line(c, names[f], nr, &t, &len))
			abort();
	}
	pk_source_cache__free(c);
	return 0;
}
