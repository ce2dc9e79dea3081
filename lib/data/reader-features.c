/* SPDX-License-Identifier: MIT */
/*
 * lib/data/reader-features.c - the feature sections of a perf.data header (HOSTNAME,
 * OSRELEASE, ..., BUILD_ID, EVENT_DESC, topology, GROUP_DESC, NUMA, PMU mappings, caches,
 * memory): each read with bounds checks into the reader's env; a malformed one is
 * skipped with a warning.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "internal.h"
#include "reader-internal.h"

struct cur {
	const uint8_t *p;
	size_t len, off;
	bool bad;
};

static bool cur_get(struct cur *c, void *dst, size_t n)
{
	if (c->bad || n > c->len - c->off) {
		c->bad = true;
		memset(dst, 0, n);
		return false;
	}
	memcpy(dst, c->p + c->off, n);
	c->off += n;
	return true;
}
static uint32_t cur_u32(struct cur *c) { uint32_t v; cur_get(c, &v, 4); return v; }
static uint64_t cur_u64(struct cur *c) { uint64_t v; cur_get(c, &v, 8); return v; }

/* perf_header_string; returns a malloc'd string (NULL + c->bad on error) */
static char *cur_str(struct cur *c)
{
	uint32_t len = cur_u32(c);
	if (c->bad || len > c->len - c->off) {
		c->bad = true;
		return NULL;
	}
	const char *s = (const char *)c->p + c->off;
	c->off += len;
	char *d = pk_strndup(s, len);
	if (!d)
		c->bad = true;
	return d;
}

void pk_rd_free_groups(struct pk_data_reader *r)
{
	for (uint32_t i = 0; i < r->env.nr_groups; i++)
		free((char *)r->env.groups[i].name);
	free((void *)r->env.groups);
	r->env.groups = NULL;
	r->env.nr_groups = 0;
}

void pk_rd_free_strv(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* string list; each entry needs >= 4 bytes so nr is bounded by the payload */
static char **cur_strlist(struct cur *c, uint32_t *nr_out)
{
	uint32_t nr = cur_u32(c);
	if (c->bad || nr > (c->len - c->off) / 4) {
		c->bad = true;
		return NULL;
	}
	char **v = calloc(nr ? nr : 1, sizeof(char *));
	if (!v) {
		c->bad = true;
		return NULL;
	}
	for (uint32_t i = 0; i < nr; i++) {
		v[i] = cur_str(c);
		if (!v[i]) {
			pk_rd_free_strv(v, i);
			return NULL;
		}
	}
	*nr_out = nr;
	return v;
}

static void set_feat(struct pk_data_reader *r, int feat)
{
	r->env.features[feat / 64] |= 1ULL << (feat % 64);
}

static const char *const feat_names[] = {
	[PK_FEAT_TRACING_DATA] = "TRACING_DATA", [PK_FEAT_BUILD_ID] = "BUILD_ID",
	[PK_FEAT_HOSTNAME] = "HOSTNAME", [PK_FEAT_OSRELEASE] = "OSRELEASE",
	[PK_FEAT_VERSION] = "VERSION", [PK_FEAT_ARCH] = "ARCH", [PK_FEAT_NRCPUS] = "NRCPUS",
	[PK_FEAT_CPUDESC] = "CPUDESC", [PK_FEAT_CPUID] = "CPUID",
	[PK_FEAT_TOTAL_MEM] = "TOTAL_MEM", [PK_FEAT_CMDLINE] = "CMDLINE",
	[PK_FEAT_EVENT_DESC] = "EVENT_DESC", [PK_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
	[PK_FEAT_SAMPLE_TIME] = "SAMPLE_TIME", [PK_FEAT_CLOCKID] = "CLOCKID",
	[PK_FEAT_COMPRESSED] = "COMPRESSED", [PK_FEAT_GROUP_DESC] = "GROUP_DESC",
	[PK_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY", [PK_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
	[PK_FEAT_CACHE] = "CACHE", [PK_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
};

const char *pk_rd_feat_name(int feat)
{
	if (feat >= 0 && (size_t)feat < PK_ARRAY_SIZE(feat_names) && feat_names[feat])
		return feat_names[feat];
	return "feature";
}

static int parse_event_desc(struct pk_data_reader *r, struct cur *c)
{
	uint32_t nr = cur_u32(c), sz = cur_u32(c);

	if (c->bad || sz < PK_ATTR_SIZE_VER0 || sz > 4096 || nr > c->len / sz)
		return -PK_ERR_FORMAT;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nr_ids;
		if (sz > c->len - c->off)
			return -PK_ERR_FORMAT;
		c->off += sz; /* the attr itself: the attrs section is authoritative */
		nr_ids = cur_u32(c);
		char *name = cur_str(c);
		if (!name)
			return -PK_ERR_FORMAT;
		if (nr_ids > (c->len - c->off) / 8) {
			free(name);
			return -PK_ERR_FORMAT;
		}
		c->off += (size_t)nr_ids * 8;
		/* names by position, as perf assigns them */
		if (i < r->nr_attrs) {
			free(r->attrs[i]->name);
			r->attrs[i]->name = name;
			r->attrs[i]->pub.name = name;
		} else {
			free(name);
		}
	}
	return 0;
}

static int parse_build_ids(struct pk_data_reader *r, struct cur *c)
{
	size_t n = 0, cap = 0;
	struct pk_data_build_id *v = NULL;

	while (c->off < c->len) {
		uint8_t fixed[36];
		uint16_t misc, size;
		if (!cur_get(c, fixed, sizeof(fixed)))
			goto bad;
		memcpy(&misc, fixed + 4, 2);
		memcpy(&size, fixed + 6, 2);
		if (size < 36 || size - 36u > c->len - c->off)
			goto bad;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct pk_data_build_id *nv = realloc(v, cap * sizeof(*nv));
			if (!nv)
				goto bad;
			v = nv;
		}
		struct pk_data_build_id *e = &v[n];
		memset(e, 0, sizeof(*e));
		memcpy(&e->pid, fixed + 8, 4);
		memcpy(e->build_id, fixed + 12, PK_BUILD_ID_MAX);
		e->cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
		e->build_id_size = (misc & 0x8000) ? PK_MIN(fixed[32], PK_BUILD_ID_MAX)
						   : PK_BUILD_ID_MAX;
		e->filename = pk_strndup((const char *)c->p + c->off, size - 36u);
		if (!e->filename)
			goto bad;
		c->off += size - 36u;
		n++;
	}
	for (size_t i = 0; i < r->env.nr_build_ids; i++)
		free((char *)r->bids[i].filename);
	free(r->bids);
	r->bids = v;
	r->env.build_ids = v;
	r->env.nr_build_ids = n;
	return 0;
bad:
	for (size_t i = 0; i < n; i++)
		free((char *)v[i].filename);
	free(v);
	return -PK_ERR_FORMAT;
}

static int parse_topology(struct pk_data_reader *r, struct cur *c)
{
	uint32_t n[3] = { 0 };
	char **l[3] = { NULL };
	struct pk_data_cpu_topo *cpu = NULL;
	uint32_t nr_cpu = r->env.nr_cpus_avail;

	l[0] = cur_strlist(c, &n[0]);
	l[1] = l[0] ? cur_strlist(c, &n[1]) : NULL;
	if (!l[1])
		goto bad;
	if (c->off < c->len && nr_cpu) {
		if ((uint64_t)nr_cpu * 8 > c->len - c->off)
			goto bad;
		cpu = calloc(nr_cpu, sizeof(*cpu));
		if (!cpu)
			goto bad;
		for (uint32_t i = 0; i < nr_cpu; i++) {
			cpu[i].core_id = cur_u32(c);
			cpu[i].socket_id = cur_u32(c);
			cpu[i].die_id = (uint32_t)-1;
		}
		if (c->off < c->len) {
			l[2] = cur_strlist(c, &n[2]);
			if (!l[2] || (uint64_t)nr_cpu * 4 > c->len - c->off)
				goto bad;
			for (uint32_t i = 0; i < nr_cpu; i++)
				cpu[i].die_id = cur_u32(c);
		}
	}
	for (int i = 0; i < 3; i++)
		pk_rd_free_strv(r->topo_lists[i], i == 0 ? r->env.nr_package_cpus :
				      i == 1 ? r->env.nr_core_cpus : r->env.nr_die_cpus);
	free((void *)r->env.cpu);
	for (int i = 0; i < 3; i++)
		r->topo_lists[i] = l[i];
	r->env.package_cpus = (const char *const *)l[0];
	r->env.nr_package_cpus = n[0];
	r->env.core_cpus = (const char *const *)l[1];
	r->env.nr_core_cpus = n[1];
	r->env.die_cpus = (const char *const *)l[2];
	r->env.nr_die_cpus = n[2];
	r->env.cpu = cpu;
	r->env.nr_cpu_topo = cpu ? nr_cpu : 0;
	return 0;
bad:
	for (int i = 0; i < 3; i++)
		pk_rd_free_strv(l[i], n[i]);
	free(cpu);
	return -PK_ERR_FORMAT;
}

/* GROUP_DESC. Every group must lie within the attrs (leader < nr_attrs, members fit) and
 * have at least one member; nr_groups is bounded by the bytes a group needs at least (a
 * 4-byte empty string, leader, nr). */
static int parse_group_desc(struct pk_data_reader *r, struct cur *c)
{
	uint32_t nr = cur_u32(c);
	struct pk_data_group *v;

	if (c->bad || nr > (c->len - c->off) / 12 || nr > r->nr_attrs)
		return -PK_ERR_FORMAT;
	v = nr ? calloc(nr, sizeof(*v)) : NULL;
	if (nr && !v)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		char *name = cur_str(c);
		uint32_t leader = cur_u32(c), members = cur_u32(c);
		if (name && !strcmp(name, "{anon_group}")) {
			free(name);
			name = NULL;
		} else if (!name) {
			c->bad = true;
		}
		v[i].name = name;
		v[i].leader_idx = leader;
		v[i].nr_members = members;
		if (c->bad || !members || leader >= r->nr_attrs || members > r->nr_attrs - leader) {
			for (uint32_t j = 0; j <= i; j++)
				free((char *)v[j].name);
			free(v);
			return -PK_ERR_FORMAT;
		}
	}
	pk_rd_free_groups(r);
	r->env.groups = v;
	r->env.nr_groups = nr;
	return 0;
}

/* ---- NUMA_TOPOLOGY, PMU_MAPPINGS, CACHE, MEM_TOPOLOGY ---- */

/*
 * The four arrays above live in the env as (pointer, u32 count) pairs whose elements own
 * some strings or bitmaps. One description per array lets one function free any of them
 * and one install a freshly parsed one (replacing a previous section of the same kind).
 */
struct env_array {
	size_t ptr_off, nr_off;  /* where the pointer and the count are in struct pk_data_env */
	size_t elem;             /* element size */
	unsigned nowned;
	size_t owned[3];         /* offsets of the element's malloc'd pointers */
};
#define ENV_ARR(field, nrfield, type, ...)                                       \
	{ offsetof(struct pk_data_env, field), offsetof(struct pk_data_env, nrfield), \
	  sizeof(type), sizeof((size_t[]){ __VA_ARGS__ }) / sizeof(size_t), { __VA_ARGS__ } }

enum { ENV_NUMA, ENV_PMU_MAPS, ENV_CACHES, ENV_MEM_NODES, ENV_NR_ARRAYS };
static const struct env_array env_arrays[ENV_NR_ARRAYS] = {
	[ENV_NUMA] = ENV_ARR(numa_nodes, nr_numa_nodes, struct pk_data_numa_node,
			     offsetof(struct pk_data_numa_node, cpus)),
	[ENV_PMU_MAPS] = ENV_ARR(pmu_mappings, nr_pmu_mappings, struct pk_data_pmu_map,
				 offsetof(struct pk_data_pmu_map, name)),
	[ENV_CACHES] = ENV_ARR(caches, nr_caches, struct pk_data_cache,
			       offsetof(struct pk_data_cache, type),
			       offsetof(struct pk_data_cache, size),
			       offsetof(struct pk_data_cache, map)),
	[ENV_MEM_NODES] = ENV_ARR(mem_nodes, nr_mem_nodes, struct pk_data_mem_node,
				  offsetof(struct pk_data_mem_node, blocks)),
};

static void env_array_free(struct pk_data_reader *r, int which)
{
	const struct env_array *d = &env_arrays[which];
	char *env = (char *)&r->env, *v;
	uint32_t n;

	memcpy(&v, env + d->ptr_off, sizeof(v));
	memcpy(&n, env + d->nr_off, sizeof(n));
	for (uint32_t i = 0; v && i < n; i++) {
		for (unsigned k = 0; k < d->nowned; k++) {
			void *owned;
			memcpy(&owned, v + (size_t)i * d->elem + d->owned[k], sizeof(owned));
			free(owned);
		}
	}
	free(v);
	v = NULL;
	n = 0;
	memcpy(env + d->ptr_off, &v, sizeof(v));
	memcpy(env + d->nr_off, &n, sizeof(n));
}

/* Replace the env's array `which` by v (n elements, the last possibly half read); a bad
 * section is dropped whole. */
static int env_array_set(struct pk_data_reader *r, int which, void *v, uint32_t n, bool bad)
{
	const struct env_array *d = &env_arrays[which];
	char *env = (char *)&r->env;

	env_array_free(r, which);
	memcpy(env + d->ptr_off, &v, sizeof(v));
	memcpy(env + d->nr_off, &n, sizeof(n));
	if (!bad)
		return 0;
	env_array_free(r, which);
	return -PK_ERR_FORMAT;
}

void pk_rd_free_env_arrays(struct pk_data_reader *r)
{
	for (int i = 0; i < ENV_NR_ARRAYS; i++)
		env_array_free(r, i);
	r->env.mem_block_size = 0;
}

/* Room for nr elements of a section whose elements take at least `least` bytes each in
 * the file (which bounds nr); NULL with *err set (-PK_ERR_FORMAT, -ENOMEM). */
static void *env_array_new(const struct cur *c, uint64_t nr, size_t least, size_t elem,
			   int *err)
{
	if (c->bad || nr > (c->len - c->off) / least) {
		*err = -PK_ERR_FORMAT;
		return NULL;
	}
	void *v = calloc(nr ? nr : 1, elem);
	if (!v)
		*err = -ENOMEM;
	return v;
}

/* u32 nr, then per node: u32 node, u64 total, u64 free (kB), string cpus. A node needs
 * at least 24 bytes, which bounds nr. */
static int parse_numa(struct pk_data_reader *r, struct cur *c)
{
	uint32_t nr = cur_u32(c);
	int err = 0;
	struct pk_data_numa_node *v = env_array_new(c, nr, 24, sizeof(*v), &err);
	if (!v)
		return err;
	uint32_t i;
	for (i = 0; i < nr && !c->bad; i++) {
		v[i].node = cur_u32(c);
		v[i].mem_total_kb = cur_u64(c);
		v[i].mem_free_kb = cur_u64(c);
		v[i].cpus = cur_str(c);
	}
	return env_array_set(r, ENV_NUMA, v, i, c->bad);
}

/* u32 nr, then per PMU: u32 type, string name (8 bytes at least) */
static int parse_pmu_mappings(struct pk_data_reader *r, struct cur *c)
{
	uint32_t nr = cur_u32(c);
	int err = 0;
	struct pk_data_pmu_map *v = env_array_new(c, nr, 8, sizeof(*v), &err);
	if (!v)
		return err;
	uint32_t i;
	for (i = 0; i < nr && !c->bad; i++) {
		v[i].type = cur_u32(c);
		v[i].name = cur_str(c);
	}
	return env_array_set(r, ENV_PMU_MAPS, v, i, c->bad);
}

/* u32 version (1), u32 nr, then per cache: u32 level, line size, sets, ways, strings
 * type, size, map (28 bytes at least) */
static int parse_caches(struct pk_data_reader *r, struct cur *c)
{
	uint32_t version = cur_u32(c), nr = cur_u32(c);
	if (version != 1)
		return -PK_ERR_FORMAT;
	int err = 0;
	struct pk_data_cache *v = env_array_new(c, nr, 28, sizeof(*v), &err);
	if (!v)
		return err;
	uint32_t i;
	for (i = 0; i < nr && !c->bad; i++) {
		v[i].level = cur_u32(c);
		v[i].line_size = cur_u32(c);
		v[i].sets = cur_u32(c);
		v[i].ways = cur_u32(c);
		v[i].type = cur_str(c);
		v[i].size = v[i].type ? cur_str(c) : NULL;
		v[i].map = v[i].size ? cur_str(c) : NULL;
	}
	return env_array_set(r, ENV_CACHES, v, i, c->bad);
}

/* u64 version, u64 block size, u64 nr, then per node: u64 node, u64 size, u64 nr_bits and
 * the bitmap's (nr_bits + 63) / 64 words (24 bytes a node at least) */
static int parse_mem_topology(struct pk_data_reader *r, struct cur *c)
{
	(void)cur_u64(c);
	uint64_t bsize = cur_u64(c), nr = cur_u64(c);
	int err = 0;
	struct pk_data_mem_node *v = env_array_new(c, nr, 24, sizeof(*v), &err);
	if (!v)
		return err;
	uint64_t i;
	for (i = 0; i < nr && !c->bad; i++) {
		v[i].node = cur_u64(c);
		v[i].size = cur_u64(c);
		uint64_t bits = cur_u64(c);
		uint64_t words = bits / 64 + (bits % 64 != 0);
		if (c->bad || words > (c->len - c->off) / 8) {
			c->bad = true;
			break;
		}
		uint64_t *b = calloc(words ? words : 1, 8);
		if (!b) {
			c->bad = true;
			break;
		}
		cur_get(c, b, words * 8);
		v[i].blocks = b;
		v[i].nr_blocks = bits;
	}
	r->env.mem_block_size = c->bad ? 0 : bsize;
	/* (a half-read node is counted so that its bitmap is freed too) */
	return env_array_set(r, ENV_MEM_NODES, v, (uint32_t)(i < nr ? i + 1 : i), c->bad);
}

/* Parse one feature payload. Unknown features are ignored (0). */
int pk_rd_parse_feature(struct pk_data_reader *r, int feat, const uint8_t *p, size_t len)
{
	struct cur c = { .p = p, .len = len };
	int idx = -1;

	switch (feat) {
	case PK_FEAT_HOSTNAME: idx = 0; break;
	case PK_FEAT_OSRELEASE: idx = 1; break;
	case PK_FEAT_VERSION: idx = 2; break;
	case PK_FEAT_ARCH: idx = 3; break;
	case PK_FEAT_CPUDESC: idx = 4; break;
	case PK_FEAT_CPUID: idx = 5; break;
	default: break;
	}
	if (idx >= 0) {
		char *s = cur_str(&c);
		if (!s)
			return -PK_ERR_FORMAT;
		const char **slot[6] = { &r->env.hostname, &r->env.osrelease, &r->env.version,
					 &r->env.arch, &r->env.cpudesc, &r->env.cpuid };
		free((char *)*slot[idx]);
		*slot[idx] = s;
		set_feat(r, feat);
		return 0;
	}
	/* the features with a parser of their own */
	static const struct {
		int feat;
		int (*parse)(struct pk_data_reader *r, struct cur *c);
	} parsers[] = {
		{ PK_FEAT_EVENT_DESC, parse_event_desc },
		{ PK_FEAT_BUILD_ID, parse_build_ids },
		{ PK_FEAT_CPU_TOPOLOGY, parse_topology },
		{ PK_FEAT_GROUP_DESC, parse_group_desc },
		{ PK_FEAT_NUMA_TOPOLOGY, parse_numa },
		{ PK_FEAT_PMU_MAPPINGS, parse_pmu_mappings },
		{ PK_FEAT_CACHE, parse_caches },
		{ PK_FEAT_MEM_TOPOLOGY, parse_mem_topology },
	};
	for (size_t i = 0; i < PK_ARRAY_SIZE(parsers); i++) {
		if (parsers[i].feat != feat)
			continue;
		if (parsers[i].parse(r, &c))
			return -PK_ERR_FORMAT;
		set_feat(r, feat);
		return 0;
	}
	if (feat == PK_FEAT_CMDLINE) {
		uint32_t nr = 0;
		char **v = cur_strlist(&c, &nr);
		if (!v)
			return -PK_ERR_FORMAT;
		pk_rd_free_strv(r->cmdline, r->env.nr_cmdline);
		r->cmdline = v;
		r->env.cmdline = (const char *const *)v;
		r->env.nr_cmdline = nr;
	}
	/* The features that are a few fixed-width numbers: read whole, then stored into the
	 * env (a short section changes nothing). */
#define ENV_OFF(f) offsetof(struct pk_data_env, f)
	static const struct {
		int feat;
		unsigned width, nr;   /* bytes per number (4 or 8), how many */
		size_t off[5];        /* where each goes in the env */
	} numeric[] = {
		{ PK_FEAT_NRCPUS, 4, 2, { ENV_OFF(nr_cpus_avail), ENV_OFF(nr_cpus_online) } },
		{ PK_FEAT_TOTAL_MEM, 8, 1, { ENV_OFF(total_mem_kb) } },
		{ PK_FEAT_SAMPLE_TIME, 8, 2,
		  { ENV_OFF(first_sample_time), ENV_OFF(last_sample_time) } },
		{ PK_FEAT_CLOCKID, 8, 1, { ENV_OFF(clockid_res_ns) } },
		{ PK_FEAT_COMPRESSED, 4, 5,
		  { ENV_OFF(comp_version), ENV_OFF(comp_type), ENV_OFF(comp_level),
		    ENV_OFF(comp_ratio), ENV_OFF(comp_mmap_len) } },
	};
#undef ENV_OFF
	for (size_t i = 0; i < PK_ARRAY_SIZE(numeric); i++) {
		if (numeric[i].feat != feat)
			continue;
		uint8_t v[5 * 8];
		unsigned w = numeric[i].width;
		if (!cur_get(&c, v, (size_t)w * numeric[i].nr))
			return -PK_ERR_FORMAT;
		for (unsigned k = 0; k < numeric[i].nr; k++)
			memcpy((char *)&r->env + numeric[i].off[k], v + k * w, w);
		break;
	}
	set_feat(r, feat);
	return 0;
}

void pk_rd_read_features(struct pk_data_reader *r, uint64_t table)
{
	const uint64_t *bits = r->fh.features;
	size_t nr = 0, i = 0;

	for (int b = 0; b < PK_FEAT_BITS; b++)
		nr += (bits[b / 64] >> (b % 64)) & 1;
	if (!nr)
		return;
	if (table > r->size || nr * 16 > r->size - table) {
		pk_warn("perf.data: the feature section table at offset %#llx (%zu entries) lies "
			"beyond the end of the file; header features ignored",
			(unsigned long long)table, nr);
		return;
	}
	for (int b = 0; b < PK_FEAT_BITS; b++) {
		if (!((bits[b / 64] >> (b % 64)) & 1))
			continue;
		struct pk_file_section s;
		uint64_t at = table + 16 * i++;
		if (pk_rd_src_read(r, at, &s, sizeof(s)))
			return;
		if (b == 0 || b >= PK_FEAT_LAST_PERF61 + 8)
			continue; /* reserved / unknown: skip */
		if (s.offset > r->size || s.size > r->size - s.offset) {
			pk_warn("perf.data: feature %s (bit %d) at offset %#llx claims %llu bytes "
				"beyond the end of the file; skipped", pk_rd_feat_name(b), b,
				(unsigned long long)s.offset, (unsigned long long)s.size);
			continue;
		}
		if (b == PK_FEAT_TRACING_DATA && s.size && s.size <= MAX_FEATURE_SIZE) {
			/* kept as is for pk_tracing_data__parse */
			uint8_t *blob = malloc((size_t)s.size);
			if (blob && pk_rd_src_read(r, s.offset, blob, (size_t)s.size) == 0) {
				free(r->tracing);
				r->tracing = blob;
				r->tracing_len = (size_t)s.size;
			} else {
				free(blob);
			}
			set_feat(r, b);
			continue;
		}
		if (b == PK_FEAT_TRACING_DATA || b == PK_FEAT_AUXTRACE || s.size > MAX_FEATURE_SIZE) {
			set_feat(r, b);
			continue; /* present, not parsed */
		}
		uint8_t *buf = NULL;
		const uint8_t *p;
		if (r->kind == SRC_MEM) {
			p = r->mem + s.offset;
		} else {
			buf = malloc(s.size ? (size_t)s.size : 1);
			if (!buf || pk_rd_src_read(r, s.offset, buf, (size_t)s.size)) {
				free(buf);
				continue;
			}
			p = buf;
		}
		if (pk_rd_parse_feature(r, b, p, (size_t)s.size))
			pk_warn("perf.data: feature %s (bit %d) at offset %#llx, %llu bytes, is "
				"malformed; skipped", pk_rd_feat_name(b), b, (unsigned long long)s.offset,
				(unsigned long long)s.size);
		free(buf);
	}
}
