/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: perfkit script's tracepoint decoding (tool/script-trace.c) with the
 * formats of a hostile recording - the tracing-data blob, then libtraceevent fed from it
 * (page header, printk formats, saved comms, event formats) and RAW data printed with each
 * of its events.
 * Input: u16 raw size, then the raw bytes, then the blob; the first 4 events are tried. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/common_interface_defs.h>
#include <perfkit/perfkit.h>

/* script-trace.c parses each part of a hostile blob in a child process first; a child that
 * libtraceevent crashes is expected, so it must not report (or save) a crash of ours */
static void child_setup(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE };
	__sanitizer_set_death_callback(NULL);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}
#define SCRIPT_TRACE_CHILD_SETUP() child_setup()
#include "../../tool/script-trace.c"

/* the tool helpers script-trace.c uses (tool/util.c is not linked here) */
const char *tool_cmd_name = "script";
void tool_warn(const char *fmt, ...)
{
	(void)fmt;
}
bool tool_ensure_tracefs(void)
{
	return false;
}

/* libtraceevent leaks parts of an event format it fails to parse: its leaks, not ours */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static void quiet(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	volatile size_t sink = 0;

	if (!init) {
		pk_set_log(quiet, NULL, PK_LOG_ERROR);
		init = 1;
	}
	if (size < 2)
		return 0;
	size_t rawlen = (size_t)(data[0] | data[1] << 8);
	if (rawlen > size - 2)
		rawlen = size - 2;
	/* RAW data is 4-byte aligned in a sample; give it its own aligned copy */
	uint8_t *raw = malloc(rawlen + 8);
	if (!raw)
		return 0;
	memcpy(raw, data + 2, rawlen);
	const uint8_t *blob = data + 2 + rawlen;
	size_t len = size - 2 - rawlen;

	struct pk_tracing_data *td = pk_tracing_data__parse(blob, len);
	struct script_trace *st = script_trace__new("none");
	if (td && st) {
		const struct pk_tracing_event *e;
		int n = 0;
		pk_tracing_data__for_each_event(e, td) {
			if (n++ == 4)
				break;
			struct pk_data_attr a;
			struct pk_sample smp;
			memset(&a, 0, sizeof(a));
			memset(&smp, 0, sizeof(smp));
			a.attr.attr.type = PERF_TYPE_TRACEPOINT;
			a.attr.attr.config = (uint64_t)e->id;
			a.name = "sched:sched_switch";
			smp.type = PERF_SAMPLE_RAW;
			smp.raw.size = (uint32_t)rawlen;
			smp.raw.data = raw;
			const char *t = script_trace__text(st, blob, len, &a, &smp);
			if (t)
				sink += strlen(t);
		}
	}
	script_trace__free(st);
	pk_tracing_data__free(td);
	free(raw);
	(void)sink;
	return 0;
}
