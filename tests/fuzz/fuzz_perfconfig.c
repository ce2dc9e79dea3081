/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: perf configuration files (tool/perfconfig.c) - the parser on hostile
 * text, every parsed key looked up again, and (for inputs that parse) a key written back
 * into a copy of the file, which must parse again and hold the value. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../tool/perfconfig.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tool_cfg c = { 0 };
	int bad = 0;
	int r = tool_cfg_parse(&c, (const char *)data, size, &bad);
	for (size_t i = 0; i < c.n; i++) {
		const char *v = tool_cfg_get(&c, c.v[i].key);
		if (!v)
			abort();   /* a parsed key must be found again */
		(void)tool_cfg_bool(v);
	}
	tool_cfg_free(&c);
	if (r || size > 4096)
		return 0;
	char path[] = "/tmp/fuzz-perfconfig.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		static const char value[] = "a \"v\" #;\\ \t";
		if (tool_cfg_set_in_file(path, "fuzz.sub.key", value) == 0) {
			struct tool_cfg d = { 0 };
			if (tool_cfg_read_file(&d, path, &bad) != 0)
				abort();   /* what we wrote must parse */
			const char *v = tool_cfg_get(&d, "fuzz.sub.key");
			if (!v || strcmp(v, value))
				abort();   /* and hold the value */
			tool_cfg_free(&d);
		}
	}
	close(fd);
	unlink(path);
	return 0;
}
