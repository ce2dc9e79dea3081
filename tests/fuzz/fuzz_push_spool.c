/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: spool entries of perfkit push (tool/push-spool.c) - a damaged or
 * hostile file under an entry's name is read by push_spool_take, which must refuse it
 * (-EBADMSG) or return a query of printable ASCII and a body within the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../tool/push-text.c"
#include "../../tool/push-spool.c"

void tool_error(const char *fmt, ...)
{
	(void)fmt;
}
void tool_warn(const char *fmt, ...)
{
	(void)fmt;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct push_spool *s;
	static char dir[] = "/tmp/fuzz-push-spool.XXXXXX";
	if (!s) {
		if (!mkdtemp(dir))
			return 0;
		s = push_spool_open(dir, 1 << 20);
		if (!s)
			return 0;
	}
	const char *name = "00000000000000001000-00000000000000002000-0123456789abcdef.pprof";
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct push_spool_entry e;
	int r = push_spool_take(s, name, &e);
	if (r == 0) {
		for (const char *c = e.query; *c; c++)
			if (*c <= 0x20 || *c >= 0x7f)
				abort();
		if (e.len > size || strlen(e.query) + e.len + 10 != size)
			abort();
	}
	push_spool_release(s, &e, true);
	unlink(path);
	return 0;
}
