/* SPDX-License-Identifier: MIT */
/* pk_symbol__demangle on arbitrary names and buffer sizes: a result is NUL-terminated,
 * its length is what was returned and it fits the buffer; a failure leaves "" behind.
 * Layout of the input: [buffer length:2][name bytes...] (the name ends at the first NUL
 * or at the end of the input). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t len = (size_t)(data[0] | data[1] << 8) % (4 * PK_DEMANGLE_MAX) + 1;
	char *name = malloc(size - 1), *buf = malloc(len);
	if (!name || !buf) {
		free(name);
		free(buf);
		return 0;
	}
	memcpy(name, data + 2, size - 2);
	name[size - 2] = '\0';
	int r = pk_symbol__demangle(name, buf, len);
	if (r >= 0) {
		if ((size_t)r >= len || strlen(buf) != (size_t)r || r == 0)
			abort();
	} else if ((r != -EINVAL && r != -ENOSPC && r != -ENAMETOOLONG) || buf[0] != '\0') {
		abort();
	}
	free(name);
	free(buf);
	return 0;
}
