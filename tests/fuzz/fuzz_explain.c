/* SPDX-License-Identifier: MIT */
/* pk_explain_open_error with arbitrary attrs, errnos, targets, limits and buffer sizes:
 * the message must always fit the buffer and be NUL-terminated. Layout of the input:
 * [errno:2][len:2][pid:4][cpu:4][group_fd:4][flags:4][limits 7x4][attr bytes...] */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>

static int32_t rd32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { HDR = 2 + 2 + 4 * 4 + 7 * 4 };
	struct pk_attr a;
	char *buf;

	if (size < HDR)
		return 0;
	int err = (int16_t)(data[0] | data[1] << 8);
	size_t len = (size_t)(data[2] | data[3] << 8) % 4096;
	struct pk_limits l = { .sz = sizeof(l) };
	const uint8_t *p = data + 4;
	pid_t pid = rd32(p);
	int cpu = rd32(p + 4), group_fd = rd32(p + 8);
	unsigned long flags = (uint32_t)rd32(p + 12);
	p += 16;
	l.paranoid = rd32(p) % 8 - 3; /* -3..4 plus the odd INT_MIN from the next fields */
	if ((uint32_t)rd32(p) == 0x80000000u)
		l.paranoid = rd32(p);
	l.max_sample_rate = rd32(p + 4);
	l.max_stack = rd32(p + 8);
	l.max_contexts_per_stack = rd32(p + 12);
	l.mlock_kb = rd32(p + 16);
	l.cpu_time_max_percent = rd32(p + 20);
	l.nmi_watchdog = rd32(p + 24);
	memset(&a, 0, sizeof(a));
	memcpy(a.raw, data + HDR, size - HDR < sizeof(a.raw) ? size - HDR : sizeof(a.raw));
	/* do not stat random pids in /proc on every run: keep them small or special */
	if (pid > 0)
		pid = pid % 4 + 1;

	PK_OPTS(pk_open_ctx, ctx, .attr = &a.attr, .pid = pid, .cpu = cpu, .group_fd = group_fd,
		.flags = flags, .event_name = (data[4] & 1) ? "ev" : NULL, .limits = &l);
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	int n = pk_explain_open_error(buf, len, err, &ctx);
	if (len) {
		if (n < 0 || (size_t)n >= len || strlen(buf) != (size_t)n)
			abort();
	} else if (n != 0) {
		abort();
	}
	free(buf);
	return 0;
}
