/* SPDX-License-Identifier: MIT */
/*
 * Static name tables: the generic hardware and software events and the hardware-cache
 * grammar (cache x op x result), with perf's spellings so that users' habits carry over.
 */
#include <stdio.h>
#include <strings.h>
#include "internal.h"
#include "parse-internal.h"

#define HW(n, a, c, d) { n, a, PERF_TYPE_HARDWARE, c, d }
#define SW(n, a, c, d) { n, a, PERF_TYPE_SOFTWARE, c, d }

static const struct pk_event_name hw_names[] = {
	HW("cpu-cycles", "cycles", PERF_COUNT_HW_CPU_CYCLES,
	   "CPU clock cycles (frequency may vary with power states)"),
	HW("instructions", NULL, PERF_COUNT_HW_INSTRUCTIONS, "instructions retired"),
	HW("cache-references", NULL, PERF_COUNT_HW_CACHE_REFERENCES,
	   "accesses to the cache the CPU vendor chose (usually the last level)"),
	HW("cache-misses", NULL, PERF_COUNT_HW_CACHE_MISSES,
	   "misses in the cache counted by cache-references"),
	HW("branch-instructions", "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	   "branch instructions retired"),
	HW("branch-misses", NULL, PERF_COUNT_HW_BRANCH_MISSES, "mispredicted branches"),
	HW("bus-cycles", NULL, PERF_COUNT_HW_BUS_CYCLES, "bus clock cycles"),
	HW("stalled-cycles-frontend", "idle-cycles-frontend",
	   PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles the instruction fetch/decode stage stalled"),
	HW("stalled-cycles-backend", "idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	   "cycles the execution stage stalled"),
	HW("ref-cycles", NULL, PERF_COUNT_HW_REF_CPU_CYCLES,
	   "reference cycles at a constant rate, unaffected by frequency scaling"),
};

static const struct pk_event_name sw_names[] = {
	SW("cpu-clock", NULL, PERF_COUNT_SW_CPU_CLOCK, "per-CPU high-resolution timer (ns)"),
	SW("task-clock", NULL, PERF_COUNT_SW_TASK_CLOCK, "time the task was running (ns)"),
	SW("page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS, "page faults (minor and major)"),
	SW("context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches"),
	SW("cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS,
	   "moves of the task from one CPU to another"),
	SW("minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	   "page faults served without disk I/O"),
	SW("major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page faults that needed disk I/O"),
	SW("alignment-faults", NULL, PERF_COUNT_SW_ALIGNMENT_FAULTS,
	   "unaligned accesses fixed up by the kernel"),
	SW("emulation-faults", NULL, PERF_COUNT_SW_EMULATION_FAULTS,
	   "instructions emulated by the kernel"),
	SW("dummy", NULL, PERF_COUNT_SW_DUMMY,
	   "counts nothing; carries side-band records (mmap, comm, ...)"),
	SW("bpf-output", NULL, PK_SW_BPF_OUTPUT, "output channel for BPF programs"),
	SW("cgroup-switches", NULL, PK_SW_CGROUP_SWITCHES,
	   "context switches to a task in a different cgroup"),
};

PK_API const struct pk_event_name *pk_hw_event_names(size_t *n)
{
	if (n)
		*n = PK_ARRAY_SIZE(hw_names);
	return hw_names;
}

PK_API const struct pk_event_name *pk_sw_event_names(size_t *n)
{
	if (n)
		*n = PK_ARRAY_SIZE(sw_names);
	return sw_names;
}

const struct pk_event_name *pk_event_name__find(const char *s, size_t len)
{
	const struct pk_event_name *tabs[2] = { hw_names, sw_names };
	size_t ns[2] = { PK_ARRAY_SIZE(hw_names), PK_ARRAY_SIZE(sw_names) };

	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; i < ns[t]; i++) {
			const struct pk_event_name *e = &tabs[t][i];
			if ((strlen(e->name) == len && !memcmp(e->name, s, len)) ||
			    (e->alias && strlen(e->alias) == len && !memcmp(e->alias, s, len)))
				return e;
		}
	}
	return NULL;
}

/* ---- hardware cache ---- */

/* Spellings perf accepts; the first of each row is the one perf prints. */
static const char *const cache_names[PK_HWC_NR_CACHE][6] = {
	{ "L1-dcache", "l1-d", "l1d", "L1-data", NULL },
	{ "L1-icache", "l1-i", "l1i", "L1-instruction", NULL },
	{ "LLC", "L2", NULL },
	{ "dTLB", "d-tlb", "Data-TLB", NULL },
	{ "iTLB", "i-tlb", "Instruction-TLB", NULL },
	{ "branch", "branches", "bpu", "btb", "bpc", NULL },
	{ "node", NULL },
};
/* op rows: [0] is the singular used before "-misses", [1] the plural used alone. */
static const char *const op_names[PK_HWC_NR_OP][6] = {
	{ "load", "loads", "read", NULL },
	{ "store", "stores", "write", NULL },
	{ "prefetch", "prefetches", "speculative-read", "speculative-load", NULL },
};
static const char *const result_names[PK_HWC_NR_RESULT][6] = {
	{ "refs", "Reference", "ops", "access", NULL },
	{ "misses", "miss", NULL },
};

/* Which ops each cache supports, as perf lists them (bit = 1 << op). */
static const uint8_t cache_ops[PK_HWC_NR_CACHE] = {
	[PERF_COUNT_HW_CACHE_L1D] = 7, [PERF_COUNT_HW_CACHE_L1I] = 5,
	[PERF_COUNT_HW_CACHE_LL] = 7,  [PERF_COUNT_HW_CACHE_DTLB] = 7,
	[PERF_COUNT_HW_CACHE_ITLB] = 1, [PERF_COUNT_HW_CACHE_BPU] = 1,
	[PERF_COUNT_HW_CACHE_NODE] = 7,
};

bool pk_hwcache__op_valid(unsigned cache, unsigned op)
{
	return cache < PK_HWC_NR_CACHE && op < PK_HWC_NR_OP && (cache_ops[cache] >> op & 1);
}

const char *const *pk_hwcache__cache_names(unsigned i)
{
	return i < PK_HWC_NR_CACHE ? cache_names[i] : NULL;
}
const char *const *pk_hwcache__op_names(unsigned i)
{
	return i < PK_HWC_NR_OP ? op_names[i] : NULL;
}
const char *const *pk_hwcache__result_names(unsigned i)
{
	return i < PK_HWC_NR_RESULT ? result_names[i] : NULL;
}

/*
 * Longest spelling in rows[0..nrows) that prefixes [s, s+len) case-insensitively and is
 * followed by '-' or the end. Returns the row (and *used = matched length) or -1.
 */
static int match_part(const char *s, size_t len, const char *const (*rows)[6], unsigned nrows,
		      size_t *used)
{
	int best = -1;
	size_t best_len = 0;

	for (unsigned r = 0; r < nrows; r++) {
		for (unsigned j = 0; rows[r][j]; j++) {
			size_t n = strlen(rows[r][j]);
			if (n <= best_len || n > len || strncasecmp(s, rows[r][j], n) != 0)
				continue;
			if (n < len && s[n] != '-')
				continue;
			best = (int)r;
			best_len = n;
		}
	}
	*used = best_len;
	return best;
}

int pk_hwcache__parse(const char *s, size_t len, uint64_t *config, char *err, size_t errlen)
{
	size_t used;
	int cache = match_part(s, len, cache_names, PK_HWC_NR_CACHE, &used);
	int op = -1, result = -1;

	if (cache < 0)
		return -ENOENT;
	size_t pos = used;
	for (int part = 0; pos < len; part++) {
		pos++; /* the '-' */
		const char *p = s + pos;
		size_t rest = len - pos, oused, rused;
		int o = match_part(p, rest, op_names, PK_HWC_NR_OP, &oused);
		int r = match_part(p, rest, result_names, PK_HWC_NR_RESULT, &rused);
		if (part == 0 && o < 0 && r < 0)
			return -ENOENT; /* "L1-dcache-foo": let the caller say "unknown event" */
		if (part >= 2 || (o < 0 && r < 0) || (o >= 0 && op >= 0) ||
		    (r >= 0 && result >= 0)) {
			pk_snprintf(err, errlen, "unexpected '%.*s' in cache event '%.*s'",
				    (int)PK_MIN(rest, 64), p, (int)PK_MIN(len, 64), s);
			return -PK_ERR_PARSE;
		}
		if (o >= 0) {
			op = o;
			pos += oused;
		} else {
			result = r;
			pos += rused;
		}
	}
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (result < 0)
		result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	if (!pk_hwcache__op_valid((unsigned)cache, (unsigned)op)) {
		pk_snprintf(err, errlen, "cache '%s' has no '%s' operation", cache_names[cache][0],
			    op_names[op][0]);
		return -PK_ERR_PARSE;
	}
	*config = (uint64_t)cache | (uint64_t)op << 8 | (uint64_t)result << 16;
	return 0;
}

PK_API int pk_hwcache__foreach(pk_hwcache_cb cb, void *ctx)
{
	char name[64];

	if (!cb)
		return pk_err(-EINVAL);
	for (unsigned c = 0; c < PK_HWC_NR_CACHE; c++) {
		for (unsigned o = 0; o < PK_HWC_NR_OP; o++) {
			if (!pk_hwcache__op_valid(c, o))
				continue;
			for (unsigned r = 0; r < PK_HWC_NR_RESULT; r++) {
				/* perf's spelling: "L1-dcache-loads", "L1-dcache-load-misses" */
				if (r == PERF_COUNT_HW_CACHE_RESULT_ACCESS)
					pk_snprintf(name, sizeof(name), "%s-%s", cache_names[c][0],
						    op_names[o][1]);
				else
					pk_snprintf(name, sizeof(name), "%s-%s-%s",
						    cache_names[c][0], op_names[o][0],
						    result_names[r][0]);
				int ret = cb(name, (uint64_t)c | (uint64_t)o << 8 |
							   (uint64_t)r << 16, ctx);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}
