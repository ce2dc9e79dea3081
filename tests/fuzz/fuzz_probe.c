/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the dynamic-probe resolver: the input is parsed as the descriptor of an SDT note
 * (both address sizes), then written to a memfd and read as a probe target: its SDT
 * notes, its function symbols (with their file offsets through the program headers), and
 * a function resolved with an offset, which decodes the function to check the boundary.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "../../lib/event/probe-internal.h"

static int sdt_cb(const struct pk_sdt_marker *m, void *ctx)
{
	size_t *n = ctx;
	*n += strlen(m->provider) + strlen(m->name) + strlen(m->args) + (m->offset & 1);
	return 0;
}

static int func_cb(const struct pk_probe_func *f, void *ctx)
{
	size_t *n = ctx;
	*n += strlen(f->name) + (f->file ? strlen(f->file) : 0) + (f->offset & 1);
	return *n > 1000000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sdt_raw raw;
	size_t n = 0;
	char path[64], msg[256];

	if (pk_sdt_parse_desc(data, size, true, &raw) == 0)
		n += strlen(raw.provider) + strlen(raw.name) + strlen(raw.args);
	if (pk_sdt_parse_desc(data, size, false, &raw) == 0)
		n += strlen(raw.provider);

	int fd = memfd_create("probe", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		struct pk_probe_point *pt = malloc(sizeof(*pt));
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		pk_probe__for_each_sdt(path, NULL, sdt_cb, &n, msg, sizeof(msg));
		pk_probe__for_each_function(path, NULL, NULL, func_cb, &n, msg, sizeof(msg));
		if (pt) {
			pk_probe__resolve(path, "main", 0, NULL, pt, msg, sizeof(msg));
			pk_probe__resolve(path, "f", size & 0xff, NULL, pt, msg, sizeof(msg));
			pk_probe__resolve_sdt(path, "pk", "plain", NULL, pt, msg, sizeof(msg));
			free(pt);
		}
	}
	close(fd);
	return n == (size_t)-1;
}
