/* SPDX-License-Identifier: MIT */
/* tool/report-header.c - perfkit report: the perf.data header block (--header, --header-only, -I), line for line as perf
 * report prints it. */
#include "report.h"

/* ---- header block ---- */

static void print_attr_line(FILE *f, const struct pk_data_attr *a)
{
	const struct perf_event_attr *at = &a->attr.attr;
	fprintf(f, "# event : name = %s, ", a->name ? a->name : "?");
	if (a->nr_ids) {
		fprintf(f, ", id = {");
		for (size_t i = 0; i < a->nr_ids; i++)
			fprintf(f, "%s %" PRIu64, i ? "," : "", a->ids[i]);
		fprintf(f, " }");
	}
	fprintf(f, ", type = %u, size = %u", at->type, a->file_attr_size);
	if (at->config)
		fprintf(f, ", config = %#llx", (unsigned long long)at->config);
	if (at->sample_period)
		fprintf(f, ", { sample_period, sample_freq } = %llu",
			(unsigned long long)at->sample_period);
	static const char *const st[] = { "IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID",
					  "CPU", "PERIOD", "STREAM_ID", "RAW", "BRANCH_STACK",
					  "REGS_USER", "STACK_USER", "WEIGHT", "DATA_SRC",
					  "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR",
					  "AUX", "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE",
					  "WEIGHT_STRUCT" };
	fprintf(f, ", sample_type = ");
	bool first = true;
	for (unsigned i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		if (at->sample_type & (1ULL << i)) {
			fprintf(f, "%s%s", first ? "" : "|", st[i]);
			first = false;
		}
	if (at->read_format) {
		static const char *const rf[] = { "TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID",
						  "GROUP", "LOST" };
		fprintf(f, ", read_format = ");
		first = true;
		for (unsigned i = 0; i < 5; i++)
			if (at->read_format & (1ULL << i)) {
				fprintf(f, "%s%s", first ? "" : "|", rf[i]);
				first = false;
			}
	}
#define FLAG(x) if (at->x) fprintf(f, ", " #x " = %u", (unsigned)at->x)
	FLAG(disabled); FLAG(inherit); FLAG(exclude_user); FLAG(exclude_kernel);
	FLAG(exclude_hv); FLAG(mmap); FLAG(comm); FLAG(freq); FLAG(enable_on_exec); FLAG(task);
	FLAG(precise_ip); FLAG(sample_id_all); FLAG(exclude_guest); FLAG(mmap2);
	FLAG(comm_exec); FLAG(context_switch); FLAG(ksymbol); FLAG(bpf_event);
#undef FLAG
	if (at->sample_regs_user)
		fprintf(f, ", sample_regs_user = %#llx", (unsigned long long)at->sample_regs_user);
	if (at->sample_stack_user)
		fprintf(f, ", sample_stack_user = %u", at->sample_stack_user);
	fputc('\n', f);
}

static bool has_feat(const struct pk_data_env *e, int b)
{
	return e->features[b / 64] & (1ULL << (b % 64));
}

/* CPU_TOPOLOGY in full (-I), as perf prints it */
static void print_cpu_topology(FILE *f, const struct pk_data_env *e)
{
	for (uint32_t i = 0; i < e->nr_package_cpus; i++)
		fprintf(f, "# sibling sockets : %s\n", e->package_cpus[i]);
	for (uint32_t i = 0; i < e->nr_die_cpus; i++)
		fprintf(f, "# sibling dies    : %s\n", e->die_cpus[i]);
	for (uint32_t i = 0; i < e->nr_core_cpus; i++)
		fprintf(f, "# sibling threads : %s\n", e->core_cpus[i]);
	for (uint32_t i = 0; i < e->nr_cpu_topo; i++) {
		const struct pk_data_cpu_topo *c = &e->cpu[i];
		if (c->core_id == (uint32_t)-1)
			fprintf(f, "# CPU %u: not available\n", i);
		else if (e->nr_die_cpus)
			fprintf(f, "# CPU %u: Core ID %d, Die ID %d, Socket ID %d\n", i,
				(int)c->core_id, (int)c->die_id, (int)c->socket_id);
		else
			fprintf(f, "# CPU %u: Core ID %d, Socket ID %d\n", i, (int)c->core_id,
				(int)c->socket_id);
	}
}

/* bytes as perf's short form: divided by 1024 while more than twice that remains */
static void fmt_units(char *b, size_t len, uint64_t n)
{
	static const char unit[] = "BKMGTPEZY";
	int i = 0;
	while (n / 1024 > 1 && i < 8) {
		n /= 1024;
		i++;
	}
	snprintf(b, len, "%" PRIu64 "%c", n, unit[i]);
}

/* a bitmap as a CPU-list-like text: "0-23,32-199" */
static void print_bitmap(FILE *f, const uint64_t *w, uint64_t bits)
{
	bool first = true;
	for (uint64_t b = 0; b < bits;) {
		if (!(w[b / 64] >> (b % 64) & 1)) {
			b++;
			continue;
		}
		uint64_t e = b;
		while (e + 1 < bits && (w[(e + 1) / 64] >> ((e + 1) % 64) & 1))
			e++;
		if (e == b)
			fprintf(f, "%s%" PRIu64, first ? "" : ",", b);
		else
			fprintf(f, "%s%" PRIu64 "-%" PRIu64, first ? "" : ",", b, e);
		first = false;
		b = e + 1;
	}
}

void rpt_print_header(struct report *R, struct pk_data_reader *rd)
{
	FILE *f = R->out;
	const struct pk_data_env *e = pk_data_reader__env(rd);
	struct stat st;
	fprintf(f, "# ========\n");
	if (strcmp(R->input, "-") && stat(R->input, &st) == 0) {
		char tb[64];
		struct tm tm;
		localtime_r(&st.st_mtime, &tm);
		strftime(tb, sizeof(tb), "%a %b %e %H:%M:%S %Y", &tm);
		fprintf(f, "# captured on    : %s\n", tb);
	}
	fprintf(f, "# header version : %u\n", e->header_version);
	fprintf(f, "# data offset    : %" PRIu64 "\n", e->data_offset);
	fprintf(f, "# data size      : %" PRIu64 "\n", e->data_size);
	fprintf(f, "# feat offset    : %" PRIu64 "\n", e->feat_offset);
	/* the pipe format: perf closes the block here and prints the features as their
	 * records come, with no list of missing ones */
	bool pipe = pk_data_reader__is_pipe(rd);
	if (pipe)
		fprintf(f, "# ========\n#\n");
	if (e->hostname)
		fprintf(f, "# hostname : %s\n", e->hostname);
	if (e->osrelease)
		fprintf(f, "# os release : %s\n", e->osrelease);
	if (e->version)
		fprintf(f, "# perf version : %s\n", e->version);
	if (e->arch)
		fprintf(f, "# arch : %s\n", e->arch);
	if (e->nr_cpus_online || e->nr_cpus_avail) {
		fprintf(f, "# nrcpus online : %u\n", e->nr_cpus_online);
		fprintf(f, "# nrcpus avail : %u\n", e->nr_cpus_avail);
	}
	if (e->cpudesc)
		fprintf(f, "# cpudesc : %s\n", e->cpudesc);
	if (e->cpuid)
		fprintf(f, "# cpuid : %s\n", e->cpuid);
	if (e->total_mem_kb)
		fprintf(f, "# total memory : %" PRIu64 " kB\n", e->total_mem_kb);
	if (e->nr_cmdline) {
		fprintf(f, "# cmdline : ");
		for (uint32_t i = 0; i < e->nr_cmdline; i++)
			fprintf(f, "%s ", e->cmdline[i]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < pk_data_reader__nr_attrs(rd); i++)
		print_attr_line(f, pk_data_reader__attr(rd, i));
	if (has_feat(e, PK_FEAT_CPU_TOPOLOGY)) {
		if (R->show_info)
			print_cpu_topology(f, e);
		else
			fprintf(f, "# CPU_TOPOLOGY info available, use -I to display\n");
	}
	if (has_feat(e, PK_FEAT_NUMA_TOPOLOGY)) {
		for (uint32_t i = 0; R->show_info && i < e->nr_numa_nodes; i++) {
			const struct pk_data_numa_node *n = &e->numa_nodes[i];
			fprintf(f, "# node%u meminfo  : total = %" PRIu64 " kB, free = %" PRIu64
				" kB\n", n->node, n->mem_total_kb, n->mem_free_kb);
			fprintf(f, "# node%u cpu list : %s\n", n->node, n->cpus ? n->cpus : "");
		}
		if (!R->show_info)
			fprintf(f, "# NUMA_TOPOLOGY info available, use -I to display\n");
	}
	if (has_feat(e, PK_FEAT_PMU_MAPPINGS)) {
		fprintf(f, "# pmu mappings:");
		for (uint32_t i = 0; i < e->nr_pmu_mappings; i++)
			fprintf(f, "%s %s = %u", i ? "," : "",
				e->pmu_mappings[i].name ? e->pmu_mappings[i].name : "",
				e->pmu_mappings[i].type);
		if (!e->nr_pmu_mappings)
			fprintf(f, " not available");
		fputc('\n', f);
	}
	for (uint32_t g = 0; g < e->nr_groups; g++) {
		const struct pk_data_group *gr = &e->groups[g];
		fprintf(f, "# group: %s{", gr->name ? gr->name : "");
		for (uint32_t m = 0; m < gr->nr_members; m++) {
			const struct pk_data_attr *a = pk_data_reader__attr(rd, gr->leader_idx + m);
			fprintf(f, "%s%s", m ? "," : "", a && a->name ? a->name : "?");
		}
		fprintf(f, "}\n");
	}
	if (has_feat(e, PK_FEAT_CACHE)) {
		if (R->show_info) {
			fprintf(f, "# CPU cache info:\n");
			for (uint32_t i = 0; i < e->nr_caches; i++) {
				const struct pk_data_cache *c = &e->caches[i];
				fprintf(f, "#  L%u %-15s %8s [%s]\n", c->level, c->type ? c->type : "",
					c->size ? c->size : "", c->map ? c->map : "");
			}
		} else {
			fprintf(f, "# CACHE info available, use -I to display\n");
		}
	}
	if (has_feat(e, PK_FEAT_SAMPLE_TIME)) {
		fprintf(f, "# time of first sample : %" PRIu64 ".%06" PRIu64 "\n",
			e->first_sample_time / 1000000000, e->first_sample_time % 1000000000 / 1000);
		fprintf(f, "# time of last sample : %" PRIu64 ".%06" PRIu64 "\n",
			e->last_sample_time / 1000000000, e->last_sample_time % 1000000000 / 1000);
		fprintf(f, "# sample duration : %10.3f ms\n",
			(double)(e->last_sample_time - e->first_sample_time) / 1e6);
	}
	if (has_feat(e, PK_FEAT_MEM_TOPOLOGY)) {
		if (R->show_info) {
			fprintf(f, "# memory nodes (nr %u, block size 0x%" PRIx64 "):\n",
				e->nr_mem_nodes, e->mem_block_size);
			for (uint32_t i = 0; i < e->nr_mem_nodes; i++) {
				const struct pk_data_mem_node *n = &e->mem_nodes[i];
				char sz[32];
				uint64_t set = 0;
				for (uint64_t w = 0; n->blocks && w * 64 < n->nr_blocks; w++)
					set += (uint64_t)__builtin_popcountll(n->blocks[w]);
				/* (perf's size: the blocks of the node's bitmap) */
				fmt_units(sz, sizeof(sz), set * e->mem_block_size);
				fprintf(f, "#  %3" PRIu64 " [%s]: ", n->node, sz);
				if (n->blocks)
					print_bitmap(f, n->blocks, n->nr_blocks);
				fputc('\n', f);
			}
		} else {
			fprintf(f, "# MEM_TOPOLOGY info available, use -I to display\n");
		}
	}
	/* every feature perf 6.1 knows that the file lacks */
	static const char *const fn[] = {
		[1] = "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION", "ARCH",
		"NRCPUS", "CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC",
		"CPU_TOPOLOGY", "NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS", "GROUP_DESC",
		"AUXTRACE", "STAT", "CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY", "CLOCKID",
		"DIR_FORMAT", "BPF_PROG_INFO", "BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS",
		"CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS",
	};
	if (pipe)
		return;
	fprintf(f, "# missing features:");
	for (unsigned b = 1; b < sizeof(fn) / sizeof(fn[0]); b++)
		if (!has_feat(e, (int)b))
			fprintf(f, " %s", fn[b]);
	fprintf(f, " \n# ========\n#\n");
}
