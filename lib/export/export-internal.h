/* SPDX-License-Identifier: MIT */
/* lib/export/export-internal.h - the profile builder's tables, shared by the writers. */
#ifndef PK_EXPORT_INTERNAL_H
#define PK_EXPORT_INTERNAL_H

#include <stdio.h>
#include <perfkit/export.h>
#include "internal.h"

#include "core/intern.h"

#define PK_NONE UINT32_MAX

/* The off-CPU event of perf record --off-cpu and perfkit record --off-cpu: a software
 * bpf-output event by this name whose periods are nanoseconds blocked. */
#define PK_OFFCPU_EVENT "offcpu-time"
#ifndef PERF_COUNT_SW_BPF_OUTPUT
#define PERF_COUNT_SW_BPF_OUTPUT 10
#endif
static inline bool pk_export__is_offcpu(const char *name, const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_BPF_OUTPUT &&
	       !strcmp(name, PK_OFFCPU_EVENT);
}

struct pk_xfunc {
	uint32_t name, dso, file; /* string ids */
	uint32_t line;
	uint8_t kind;
};

struct pk_xloc {                /* a frame */
	uint32_t func;
	uint32_t line;
	uint64_t addr;
	uint8_t inlined;
};

struct pk_xnode {               /* a call-stack prefix: parent node + frame */
	uint32_t parent;        /* PK_NONE for a root frame */
	uint32_t loc;
	uint32_t depth;         /* 1 for a root frame */
};

struct pk_xagg {                /* self weight of one (node, event) */
	uint32_t node;          /* PK_NONE: samples with an empty stack */
	uint32_t event;
	uint64_t samples, period;
};

struct pk_xthread {
	uint32_t pid, tid, comm;
};

struct pk_xtime {               /* one sample of the timeline (32 bytes) */
	uint64_t time;
	uint64_t period;
	uint32_t node;
	uint32_t thread;
	uint32_t event;
	uint32_t seq;           /* arrival order, to keep the sort stable */
};

struct pk_xevent {
	uint32_t name, unit;    /* string ids */
	uint64_t samples, period;
};

struct pk_xdso {
	uint32_t name;          /* string id */
	uint64_t start, end, pgoff;
	uint8_t build_id[64];
	uint8_t build_id_len;
};

struct pk_strchunk;

struct pk_profile {
	struct pk_profile_opts o;
	/* strings: id 0 is "" */
	char **str;
	uint32_t nr_str, cap_str;
	struct pk_index str_h;      /* lib/core's index of ids, by hash */
	struct pk_strchunk *chunks;
	size_t str_bytes;

	struct pk_xfunc *func;
	uint32_t nr_func, cap_func;
	struct pk_index func_h;      /* lib/core's index of ids, by hash */

	struct pk_xloc *loc;
	uint32_t nr_loc, cap_loc;
	struct pk_index loc_h;      /* lib/core's index of ids, by hash */

	struct pk_xnode *node;
	uint32_t nr_node, cap_node;
	struct pk_index node_h;      /* lib/core's index of ids, by hash */

	struct pk_xagg *agg;
	uint32_t nr_agg, cap_agg;
	struct pk_index agg_h;      /* lib/core's index of ids, by hash */

	struct pk_xthread *thread;
	uint32_t nr_thread, cap_thread;
	struct pk_index thread_h;      /* lib/core's index of ids, by hash */

	struct pk_xtime *timeline;
	size_t nr_time, cap_time;

	struct pk_xevent *event;
	uint32_t nr_event, cap_event;

	struct pk_xdso *dso;
	uint32_t nr_dso, cap_dso;

	uint32_t *scratch;      /* frame ids of the sample being added */
	size_t cap_scratch;

	uint32_t title;         /* string id */
	uint64_t epoch_ns, duration_ns;
	uint64_t nr_samples;
};

/* Grow an array to hold at least `need` elements (doubling). 0 or -ENOMEM. */
int pk_xgrow(void **arr, uint32_t *cap, size_t need, size_t elem);

static inline const char *pk_xstr(const struct pk_profile *p, uint32_t id)
{
	return id < p->nr_str ? p->str[id] : "";
}
/* Intern a string (NULL -> ""). Returns its id or PK_NONE on ENOMEM. */
uint32_t pk_xintern(struct pk_profile *p, const char *s);

uint32_t pk_xhash_bytes(const void *s, size_t n, uint32_t seed);
uint32_t pk_xhash_u64(uint64_t v);

/* The timeline sorted by (time, arrival): a malloc'd array of nr_time indices. */
uint32_t *pk_xtimeline_order(const struct pk_profile *p);

/* JSON string (quotes included): pk_json__write_str with PK_JSON_HTML, so that the text
 * can also sit inside an HTML <script>. */
void pk_xjson_str(FILE *f, const char *s);

/* Finish a writer: flush and map a stream error to -EIO. */
int pk_xfinish(FILE *f);

/*
 * The function-level call tree of one or two profiles (frames of different addresses of
 * one function merged, children keyed by name + dso + kind): used by the flame graph,
 * the differential flame graph and the folded writer.
 */
struct pk_ftree {
	uint32_t n, cap;
	uint32_t *parent;       /* PK_NONE for children of the root (node 0 is the root) */
	const char **name;
	const char **dso;
	const char **file;
	uint8_t *kind;
	uint64_t *self[3];      /* self weight per value slot */
	uint64_t *total[3];
	struct pk_index h;
};
/* Add `event` of profile p into value slot `which` (0..2) of tree t. event < 0: all events. */
int pk_ftree_add(struct pk_ftree *t, const struct pk_profile *p, int event, int which,
		 enum pk_export_weight w);
/* Compute totals (children have larger ids than their parents). */
void pk_ftree_totals(struct pk_ftree *t);
void pk_ftree_release(struct pk_ftree *t);
int pk_ftree_init(struct pk_ftree *t);
/* Children lists: first[i]..first[i+1] index into `kids` (sorted by name); malloc'd. */
int pk_ftree_children(const struct pk_ftree *t, uint32_t **first, uint32_t **kids);

/* The HTML page of the flame graph (flamegraph-template.c, generated). */
extern const char pk_flamegraph_template[];

#endif
