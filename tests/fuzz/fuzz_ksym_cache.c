/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the kallsyms cache reader (lib/symbol/ksym-cache.c): the input is decoded twice,
 * once as it is and once with the harness's key written into the header and the CRC
 * made consistent, so that mutations reach the structural checks behind the CRC (record
 * count vs size, name offsets, order, empty ranges, the names block's end). A decoded
 * table must be sorted with every name readable inside the arena; it is then written
 * back to a cache file and read again, and must come back identical. The in-place view
 * (pk_ksym_cache_view) must accept exactly the same inputs and show the same symbols, and
 * so must the cache read through its descriptor (pk_ksym_cache_open, from a file of the
 * input), also when looked up by name.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "internal.h"
#include "symbol/symbol-internal.h"

#define HDR_KEY 16
#define HDR_CRC 108
#define HDR_SIZE 128

static uint8_t key[PK_KSYM_KEY_LEN];
static char path[64], fdpath[64];

static void cleanup(void)
{
	unlink(path);
	unlink(fdpath);
}

/* The input as a cache file read through its descriptor: accepted as the decoder
 * accepts it (err), with the same symbols (v, nr), found the same way. */
static void by_fd(const uint8_t *buf, size_t len, int err, const struct pk_sym *v, size_t nr)
{
	int fd = open(fdpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (len && write(fd, buf, len) != (ssize_t)len))
		abort();
	close(fd);
	/* the same file read whole (a file shorter than a header: -EPERM from both, where
	 * the decoder of a buffer says -EINVAL) */
	struct pk_arena la = { 0 };
	struct pk_sym *lv = NULL;
	size_t ln = 0;
	uint64_t lt = 0;
	int lerr = pk_ksym_cache_load(fdpath, key, &la, &lv, &ln, &lt);
	free(lv);
	pk_arena_release(&la);
	if ((err == 0) != (lerr == 0))
		abort();
	struct pk_ksym_view kv;
	int ferr = pk_ksym_cache_open(fdpath, key, &kv);
	if ((lerr == 0) != (ferr == 0) || (lerr && lerr != ferr))
		abort();
	if (ferr)
		return;
	if (kv.nr != nr)
		abort();
	for (size_t i = 0; i < nr; i++) {
		struct pk_sym s;
		if (!pk_ksym_view_get(&kv, i, &s) || s.start != v[i].start || s.end != v[i].end ||
		    strcmp(s.name, v[i].name))
			abort();
		const struct pk_sym *g = pk_syms_find(v, nr, v[i].end - 1);
		bool found = pk_ksym_view_find(&kv, v[i].end - 1, &s);
		if (found != (g != NULL) || (g && (s.start != g->start || strcmp(s.name, g->name))))
			abort();
	}
	uint64_t st;
	if (nr && strlen(v[nr / 2].name) < 200 &&
	    (pk_ksym_view_find_name(&kv, v[nr / 2].name, &st) ||
		   st > v[nr / 2].start))
		abort();
	pk_ksym_view_release(&kv);
}

static void check(const struct pk_sym *v, size_t nr, uint64_t text)
{
	for (size_t i = 0; i < nr; i++) {
		if (v[i].end <= v[i].start || (i && v[i].start <= v[i - 1].start))
			abort();
		(void)strlen(v[i].name); /* ASan: inside the arena */
	}
	/* round trip through a file: the names live in the arena blocks, so pack them */
	size_t total = 0;
	for (size_t i = 0; i < nr; i++)
		total += strlen(v[i].name) + 1;
	char *names = malloc(total);
	struct pk_sym *c = malloc(nr * sizeof(*c));
	if (!names || !c)
		abort();
	size_t o = 0;
	for (size_t i = 0; i < nr; i++) {
		size_t n = strlen(v[i].name) + 1;
		memcpy(names + o, v[i].name, n);
		c[i] = v[i];
		c[i].name = names + o;
		o += n;
	}
	if (pk_ksym_cache_store(path, key, c, nr, names, total, text) == 0) {
		struct pk_arena a = { 0 };
		struct pk_sym *w;
		size_t wn;
		uint64_t wt;
		if (pk_ksym_cache_load(path, key, &a, &w, &wn, &wt))
			abort();
		if (wn != nr || wt != text)
			abort();
		for (size_t i = 0; i < nr; i++)
			if (w[i].start != v[i].start || w[i].end != v[i].end ||
			    w[i].seq != v[i].seq || w[i].bind != v[i].bind ||
			    strcmp(w[i].name, v[i].name))
				abort();
		free(w);
		pk_arena_release(&a);
	}
	free(c);
	free(names);
}

static void decode(const uint8_t *buf, size_t len)
{
	struct pk_arena a = { 0 };
	struct pk_sym *v = NULL;
	size_t nr = 0;
	uint64_t text = 0;
	int err = pk_ksym_cache_decode(buf, len, key, &a, &v, &nr, &text);
	/* the in-place view (8-byte aligned copy) accepts exactly what the decoder accepts,
	 * and shows the same symbols, also through its look-up */
	uint64_t *al = malloc((len / 8 + 1) * 8);
	if (!al)
		abort();
	memcpy(al, buf, len);
	struct pk_ksym_view kv;
	int verr = pk_ksym_cache_view(al, len, key, &kv);
	if ((err == 0) != (verr == 0) || (err && err != verr))
		abort();
	if (err == 0) {
		if (kv.nr != nr || kv.text_addr != text)
			abort();
		for (size_t i = 0; i < nr; i++) {
			struct pk_sym s, f;
			pk_ksym_view_get(&kv, i, &s);
			if (s.start != v[i].start || s.end != v[i].end || s.bind != v[i].bind ||
			    s.seq != v[i].seq || strcmp(s.name, v[i].name))
				abort();
			/* (ranges may overlap: the end of one may lie in no symbol at all) */
			const struct pk_sym *g = pk_syms_find(v, nr, v[i].end - 1);
			bool found = pk_ksym_view_find(&kv, v[i].end - 1, &f);
			if (found != (g != NULL) || (g && (f.start != g->start || f.end != g->end)))
				abort();
			g = pk_syms_find(v, nr, v[i].start);
			found = pk_ksym_view_find(&kv, v[i].start, &f);
			if (!g || !found || f.start != g->start || f.end != g->end)
				abort();
		}
		by_fd(buf, len, err, v, nr);
		check(v, nr, text);
		free(v);
	} else {
		by_fd(buf, len, err, NULL, 0);
	}
	free(al);
	pk_arena_release(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		memset(key, 'k', sizeof(key));
		snprintf(path, sizeof(path), "/tmp/fuzz-ksym-cache-%d", (int)getpid());
		snprintf(fdpath, sizeof(fdpath), "/tmp/fuzz-ksym-cache-fd-%d", (int)getpid());
		atexit(cleanup);
	}
	if (size > (8u << 20))
		return 0;
	decode(data, size);
	if (size < HDR_SIZE)
		return 0;
	uint8_t *b = malloc(size);
	if (!b)
		return 0;
	memcpy(b, data, size);
	memcpy(b + HDR_KEY, key, sizeof(key));
	memset(b + HDR_CRC, 0, 4);
	uint32_t crc = pk_crc32c(0, b, size);
	memcpy(b + HDR_CRC, &crc, 4);
	decode(b, size);
	free(b);
	return 0;
}
