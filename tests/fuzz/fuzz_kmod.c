/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the reader of kernel modules' code (lib/annotate/kmod.c): the input is a .ko,
 * parsed from memory (section headers, extended counts, names, .text, the build-id
 * note): a .text found must lie inside the input and a build-id be at most 20 bytes.
 * The input is also gunzipped (bounded) and, written to a file, chosen as a module's
 * .ko (pk_kmod_open) and read through at a few addresses: when not compressed, what is
 * read must be the input's bytes at .text's offset, and nothing past .text.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "internal.h"
#include "annotate/kmod.h"

static char path[64];

static void cleanup(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/pk-fuzz-kmod.%d.ko", (int)getpid());
		atexit(cleanup);
		pk_set_log(NULL, NULL, PK_LOG_ERROR);
	}
	struct pk_kmod_elf e;
	int err = pk_kmod_elf_parse_mem(data, size, &e);
	if (!err && (e.text_off > size || e.text_size > size - e.text_off || !e.text_size))
		abort();
	if (e.bid_len > sizeof(e.bid))
		abort();
	uint8_t *out = NULL;
	size_t out_len = 0;
	if (!pk_kmod_gunzip(data, size, 1u << 20, &out, &out_len) && out_len > (1u << 20))
		abort();
	free(out);
	int comp = pk_kmod_compression(data, size);

	FILE *f = fopen(path, "we");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct pk_kmod_opts o = { .name = "[fuzz]", .path = path, .map_start = 0xffffffffc0000000ULL,
				  .have_map = true,
				  .kcore_ok = true, .proc_modules = "/nonexistent" };
	struct pk_kmod *k;
	if (pk_kmod_open(&o, &k))
		return 0;
	struct pk_annotate_kmod ki = { .sz = sizeof(ki) };
	pk_kmod_info(k, &ki);
	if (ki.source == PK_ANNOTATE_KSRC_MODULE && !comp) {
		if (err || ki.bias != o.map_start - e.text_addr)
			abort();
		uint8_t buf[64];
		for (uint64_t in = 0; in < e.text_size && in < 512; in += 61) {
			uint16_t em;
			long r = pk_kmod_read(k, ki.bias + e.text_addr + in, buf, sizeof(buf), &em);
			if (r <= 0 || (size_t)r > sizeof(buf) || (uint64_t)r > e.text_size - in ||
			    memcmp(buf, data + e.text_off + in, (size_t)r))
				abort();
		}
		uint16_t em;
		if (pk_kmod_read(k, ki.bias + e.text_addr + e.text_size, buf, 8, &em) != -ENODATA)
			abort();
	}
	pk_kmod_free(k);
	return 0;
}
