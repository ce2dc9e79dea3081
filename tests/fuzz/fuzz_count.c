/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the counting inputs we do not produce: read_format buffers (read(2) results and
 * PERF_SAMPLE_READ payloads) for every read_format, CPU lists ("0-3,6" from users and
 * sysfs) and thread-id lists. The first byte picks the read_format bits; the rest is
 * the buffer, also read as text. Invariants: a successful decode consumed exactly the
 * bytes pk_read_format__size says, and a CPU list is sorted and in range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>

static void quiet(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pk_count_value v[8];
	size_t used = 0;
	uint64_t rf;
	int n, cpus[64];
	char *text;

	pk_set_log(quiet, NULL, PK_LOG_ERROR);
	if (size < 1)
		return 0;
	rf = data[0] & 0x3f; /* includes one unknown bit */
	n = pk_read_format__decode(rf, data + 1, size - 1, v, 8, NULL);
	if (n >= 0 && pk_read_format__size(rf, (uint64_t)n) != size - 1)
		abort();
	n = pk_read_format__decode(rf, data + 1, size - 1, v, 8, &used);
	if (n >= 0 && (used > size - 1 || pk_read_format__size(rf, (uint64_t)n) != used))
		abort();
	for (int i = 0; i < n && i < 8; i++)
		pk_count__scale(v[i].val, v[i].ena, v[i].run, NULL);

	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	n = pk_cpu_list__parse(text, cpus, 64);
	for (int i = 1; i < n && i < 64; i++)
		if (cpus[i] <= cpus[i - 1] || cpus[i] >= 4096)
			abort();
	struct pk_cpu_map *cm = pk_cpu_map__new(text[0] ? text : "0");
	pk_cpu_map__free(cm);
	struct pk_thread_map *tm = pk_thread_map__new_list(text);
	if (tm && pk_thread_map__nr(tm) <= 0)
		abort();
	pk_thread_map__free(tm);
	free(text);
	return 0;
}
