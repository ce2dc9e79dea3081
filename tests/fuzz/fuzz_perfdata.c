/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: the whole perf.data reader (header, attrs, features, records,
 * COMPRESSED decompression) plus typed decoding of every record it delivers. */
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
	static int init;
	if (!init) {
		pk_set_log(quiet, NULL, PK_LOG_ERROR);
		init = 1;
	}
	PK_OPTS(pk_data_reader_opts, o, .keep_tracing_data = (size & 1) != 0,
		.show_compressed = (size & 2) != 0, .max_payload = 1 << 16);
	struct pk_data_reader *r = pk_data_reader__open_mem(data, size, &o);
	if (!r)
		return 0;
	/* touch the parsed env so that ASan sees every string / array */
	const struct pk_data_env *env = pk_data_reader__env(r);
	volatile size_t sink = 0;
	const char *strs[] = { env->hostname, env->osrelease, env->version, env->arch,
			       env->cpudesc, env->cpuid };
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		sink += strs[i] ? strlen(strs[i]) : 0;
	for (uint32_t i = 0; i < env->nr_cmdline; i++)
		sink += strlen(env->cmdline[i]);
	for (size_t i = 0; i < env->nr_build_ids; i++)
		sink += strlen(env->build_ids[i].filename) + env->build_ids[i].build_id_size;
	for (uint32_t i = 0; i < env->nr_package_cpus; i++)
		sink += strlen(env->package_cpus[i]);
	for (uint32_t i = 0; i < env->nr_core_cpus; i++)
		sink += strlen(env->core_cpus[i]);
	for (uint32_t i = 0; i < env->nr_die_cpus; i++)
		sink += strlen(env->die_cpus[i]);
	for (uint32_t i = 0; i < env->nr_cpu_topo; i++)
		sink += env->cpu[i].core_id;

	struct pk_data_event ev;
	int ret;
	while ((ret = pk_data_reader__next(r, &ev)) > 0) {
		const struct pk_data_attr *a = ev.attr;
		if (ev.hdr->size < 8)
			abort();
		if (ev.payload && ev.payload_size)
			sink += ((const uint8_t *)ev.payload)[ev.payload_size - 1];
		if (a && a->layout_ok && ev.hdr->type < 64) {
			struct pk_record rec;
			const char *bad = NULL;
			pk_record__decode(&a->layout, ev.hdr, &rec, &bad);
		}
		if (a && a->name)
			sink += strlen(a->name);
	}
	for (size_t i = 0; i < pk_data_reader__nr_attrs(r); i++)
		sink += pk_data_reader__attr(r, i)->nr_ids;
	size_t tlen;
	const uint8_t *t = pk_data_reader__tracing_data(r, &tlen);
	if (t && tlen) {
		sink += t[tlen - 1];
		struct pk_tracing_data *td = pk_tracing_data__parse(t, tlen);
		sink += pk_tracing_data__nr_events(td);
		pk_tracing_data__free(td);
	}
	(void)sink;
	pk_data_reader__free(r);
	return 0;
}
