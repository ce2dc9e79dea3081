/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the reader of kernel code (lib/annotate/kcode.c): the input is an ELF file read as
 * /proc/kcore and as a vmlinux image. Its program headers are read (bad counts, extended
 * counts, segments past the file, overlapping, wrapping, huge); every segment kept must
 * lie inside the file and the segments must be sorted without overlap; bytes read at
 * each segment's edges and at addresses taken from the input must be the file's bytes at
 * that segment's offset, never more than asked. Then the whole choice (pk_kcode_open)
 * with the input as kcore and as the given vmlinux, read through it at a few addresses.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "internal.h"
#include "annotate/kcode.h"

static char path[64];

static void cleanup(void)
{
	unlink(path);
}

static void check_read(int fd, const struct pk_kc_elf *e, const uint8_t *in, size_t len,
		       uint64_t a, size_t n)
{
	uint8_t buf[256];
	if (n > sizeof(buf))
		n = sizeof(buf);
	long r = pk_kc_elf_pread(fd, e, a, buf, n);
	if (r == -ENODATA)
		return;
	if (r <= 0 || (size_t)r > n)
		abort();
	/* byte by byte, from the segment that holds each address */
	for (long i = 0; i < r; i++) {
		uint64_t x = a + (uint64_t)i;
		const struct pk_kc_seg *s = NULL;
		for (size_t j = 0; j < e->nr; j++)
			if (x >= e->segs[j].vaddr && x - e->segs[j].vaddr < e->segs[j].filesz)
				s = &e->segs[j];
		if (!s)
			abort();
		uint64_t off = s->offset + (x - s->vaddr);
		if (off >= len || buf[i] != in[off])
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/pk-fuzz-kcore.%d", (int)getpid());
		atexit(cleanup);
		pk_set_log(NULL, NULL, PK_LOG_ERROR);
	}
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	struct pk_kc_elf e;
	int err = pk_kc_elf_read(fd, size, &e);
	if (!err) {
		for (size_t i = 0; i < e.nr; i++) {
			const struct pk_kc_seg *s = &e.segs[i];
			if (!s->filesz || s->offset + s->filesz > size || s->offset + s->filesz < s->offset)
				abort();
			if (s->filesz - 1 > UINT64_MAX - s->vaddr)
				abort();
			if (i && s->vaddr <= e.segs[i - 1].vaddr + (e.segs[i - 1].filesz - 1))
				abort(); /* sorted, no overlap */
		}
		for (size_t i = 0; i < e.nr && i < 64; i++) {
			check_read(fd, &e, data, size, e.segs[i].vaddr, 64);
			check_read(fd, &e, data, size, e.segs[i].vaddr + e.segs[i].filesz - 8, 200);
		}
		for (size_t o = 0; o + 8 <= size && o < 512; o += 8) {
			uint64_t a;
			memcpy(&a, data + o, 8);
			check_read(fd, &e, data, size, a, (size_t)(a & 0xff) + 1);
		}
		pk_kc_elf_release(&e);
	} else if (err != -EINVAL && err != -E2BIG && err != -ENOMEM) {
		abort();
	}
	close(fd);

	/* the whole choice: the input as kcore (the recorded kernel running), then as -k */
	static const uint8_t bid[20] = { 1 };
	uint64_t text = 0xffffffff81000000ULL;
	if (size >= 32)
		memcpy(&text, data + 24, 8); /* e_entry: a text address the input chooses */
	struct pk_kcode_opts o = { .kcore = path, .kallsyms = "/nonexistent", .release = "fuzz",
				   .want_bid = bid, .want_bid_len = 20, .run_bid = bid,
				   .run_bid_len = 20, .have_text = true, .text = text };
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			o.vmlinux = path;
			o.want_bid_len = 0;
		}
		struct pk_kcode *k;
		if (pk_kcode_open(&o, &k))
			continue;
		struct pk_annotate_kernel ki = { .sz = sizeof(ki) };
		pk_kcode_info(k, &ki);
		uint8_t buf[64];
		uint16_t em;
		long r = pk_kcode_read(k, text, buf, sizeof(buf), &em);
		if (r > (long)sizeof(buf) || (ki.source == PK_ANNOTATE_KSRC_NONE && r != -ENOENT))
			abort();
		pk_kcode_free(k);
	}
	return 0;
}
