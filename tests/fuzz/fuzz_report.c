/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: perf.data bytes -> reader -> time ordering -> machine model ->
 * aggregation (children, call-graph trees, srcline key) -> walk every entry and tree. */
#include <stdint.h>
#include <stddef.h>
#include <perfkit/perfkit.h>

static void quiet(enum pk_log_level l, const char *m, void *c)
{
	(void)l;
	(void)m;
	(void)c;
}

static uint64_t walk(const struct pk_callnode *n, int depth)
{
	uint64_t s = 0;
	for (; n && depth < 256; n = n->next)
		s += n->period + walk(n->child, depth + 1);
	return s;
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
	enum pk_sort_key keys[] = { PK_SORT_COMM, PK_SORT_DSO, PK_SORT_SYM, PK_SORT_CPU };
	PK_OPTS(pk_report_opts, o, .sort = keys, .nr_sort = 4, .children = size & 1,
		.callgraph = true, .host = false, .kallsyms = "/nonexistent",
		/* the reader thread for one input in four (a thread per input is slow) */
		.no_reader_thread = (size & 6) != 0, .inlines = true, .inlines_all = size & 8);
	struct pk_report *rep = pk_report__new(&o);
	if (rep) {
		pk_report__process(rep, r, NULL, NULL);
		pk_report__finish(rep);
		volatile uint64_t sink = 0;
		for (size_t i = 0; i < pk_report__nr_hists(rep); i++) {
			const struct pk_hist *h = pk_report__hist(rep, i);
			for (size_t j = 0; h && j < h->nr_entries; j++)
				sink += h->entries[j]->total_period + walk(h->entries[j]->callchain, 0);
		}
		(void)sink;
		pk_report__free(rep);
	}
	pk_data_reader__free(r);
	return 0;
}
