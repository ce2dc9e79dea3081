/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: perf.data bytes -> reader -> the session without sorting the samples
 * (samples_unordered: rounds, early flushes, copies of records outside the image) ->
 * annotate's counts -> the symbols, the skipped objects, two disassemblies. */
#include <stdint.h>
#include <stddef.h>
#include <perfkit/perfkit.h>

static void quiet(enum pk_log_level l, const char *m, void *c)
{
	(void)l;
	(void)m;
	(void)c;
}

static int insn(void *ctx, const struct pk_annotate_insn *in)
{
	*(uint64_t *)ctx += in->samples;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		pk_set_log(quiet, NULL, PK_LOG_ERROR);
		init = 1;
	}
	struct pk_data_reader *r = pk_data_reader__open_mem(data, size, NULL);
	if (!r)
		return 0;
	/* no kernel symbols: /proc/kallsyms is the host's, not the input's */
	PK_OPTS(pk_machine_opts, mo, .kallsyms = "");
	/* every other size with the machine's second thread (preload, the mapping's pages
	 * dropped there after the read) */
	PK_OPTS(pk_annotate_opts, o, .machine_opts = &mo, .min_percent = (double)(size & 3),
		.reader_thread = (size & 4) != 0);
	struct pk_annotate *a = pk_annotate__load(r, &o);
	if (a) {
		uint64_t n = 0;
		for (size_t i = 0; i < pk_annotate__nr_symbols(a) && i < 2; i++)
			pk_annotate__disasm(a, i, insn, &n);
		pk_annotate__load_skipped(a);
		for (size_t i = 0; i < pk_annotate__nr_unresolved(a); i++)
			pk_annotate__unresolved(a, i, &n);
		pk_annotate__free(a);
	}
	pk_data_reader__free(r);
	return 0;
}
