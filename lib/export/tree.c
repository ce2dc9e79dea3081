/* SPDX-License-Identifier: MIT */
/*
 * lib/export/tree.c - the function-level call tree (struct pk_ftree) that the flame graph,
 * the differential flame graph and the folded writer draw from. Stack-prefix nodes of a
 * profile that differ only by address collapse into one tree node per (caller, name,
 * dso, kind); two profiles can be added into the two value slots of one tree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export-internal.h"

struct fkey {
	uint32_t parent;
	const char *name, *dso;
	uint8_t kind;
};

static uint32_t fkey_hash(const struct fkey *k)
{
	uint32_t h = pk_xhash_bytes(k->name, strlen(k->name), k->parent);
	h = pk_xhash_bytes(k->dso, strlen(k->dso), h);
	return pk_xhash_u64(((uint64_t)h << 8 | k->kind) ^ ((uint64_t)k->parent << 40));
}

static bool fkey_eq(const struct pk_ftree *t, uint32_t id, const struct fkey *k)
{
	return t->parent[id] == k->parent && t->kind[id] == k->kind &&
	       !strcmp(t->name[id], k->name) && !strcmp(t->dso[id], k->dso);
}

static int grow(struct pk_ftree *t)
{
	uint32_t ncap = t->cap ? t->cap * 2 : 1024;
	if (ncap < t->cap)
		return -ENOMEM;
#define G(field)                                                                 \
	do {                                                                     \
		void *n_ = realloc(t->field, (size_t)ncap * sizeof(*t->field));  \
		if (!n_)                                                         \
			return -ENOMEM;                                          \
		t->field = n_;                                                   \
	} while (0)
	G(parent);
	G(name);
	G(dso);
	G(file);
	G(kind);
	G(self[0]);
	G(self[1]);
	G(self[2]);
	G(total[0]);
	G(total[1]);
	G(total[2]);
#undef G
	t->cap = ncap;
	return 0;
}

static uint32_t add_node(struct pk_ftree *t, const struct fkey *k, const char *file)
{
	uint64_t hash = (uint64_t)fkey_hash(k) << 32; /* lib/core's index: tag and slot */
	if (t->h.slot) {
		PK_IX_FOR(&t->h, hash, j)
			if (fkey_eq(t, PK_IX_ID(t->h.slot[j]), k))
				return PK_IX_ID(t->h.slot[j]);
	}
	if ((t->n == t->cap && grow(t)) || pk_index_grow(&t->h))
		return PK_NONE;
	uint32_t id = t->n++;
	t->parent[id] = k->parent;
	t->name[id] = k->name;
	t->dso[id] = k->dso;
	t->file[id] = file;
	t->kind[id] = k->kind;
	for (int s = 0; s < 3; s++)
		t->self[s][id] = t->total[s][id] = 0;
	pk_index_put(&t->h, hash, id);
	return id;
}

int pk_ftree_init(struct pk_ftree *t)
{
	memset(t, 0, sizeof(*t));
	struct fkey root = { .parent = PK_NONE, .name = "all", .dso = "", .kind = PK_FRAME_UNKNOWN };
	return add_node(t, &root, "") == 0 ? 0 : -ENOMEM;
}

void pk_ftree_release(struct pk_ftree *t)
{
	free(t->parent);
	free(t->name);
	free(t->dso);
	free(t->file);
	free(t->kind);
	for (int k = 0; k < 3; k++) {
		free(t->self[k]);
		free(t->total[k]);
	}
	pk_index_release(&t->h);
	memset(t, 0, sizeof(*t));
}

int pk_ftree_add(struct pk_ftree *t, const struct pk_profile *p, int event, int which,
		 enum pk_export_weight w)
{
	uint32_t *map = malloc(((size_t)p->nr_node + 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	/* parents are always interned before their children, so ids are topological */
	for (uint32_t n = 0; n < p->nr_node; n++) {
		const struct pk_xnode *nd = &p->node[n];
		const struct pk_xfunc *f = &p->func[p->loc[nd->loc].func];
		struct fkey k = {
			.parent = nd->parent == PK_NONE ? 0 : map[nd->parent],
			.name = pk_xstr(p, f->name),
			.dso = pk_xstr(p, f->dso),
			.kind = f->kind,
		};
		map[n] = add_node(t, &k, pk_xstr(p, f->file));
		if (map[n] == PK_NONE) {
			free(map);
			return -ENOMEM;
		}
	}
	for (uint32_t a = 0; a < p->nr_agg; a++) {
		const struct pk_xagg *g = &p->agg[a];
		if (event >= 0 && g->event != (uint32_t)event)
			continue;
		uint32_t id = g->node == PK_NONE ? 0 : map[g->node];
		t->self[which][id] += w == PK_WEIGHT_SAMPLES ? g->samples : g->period;
	}
	free(map);
	return 0;
}

void pk_ftree_totals(struct pk_ftree *t)
{
	for (int k = 0; k < 3; k++) {
		for (uint32_t i = 0; i < t->n; i++)
			t->total[k][i] = t->self[k][i];
		for (uint32_t i = t->n; i-- > 1;)
			t->total[k][t->parent[i]] += t->total[k][i];
	}
}

/* children of a node by name, DSO, kind (qsort_r: the tree is the context, no global) */
static int cmp_kids(const void *a, const void *b, void *ctx)
{
	const struct pk_ftree *cmp_tree = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(cmp_tree->name[x], cmp_tree->name[y]);
	if (!c)
		c = strcmp(cmp_tree->dso[x], cmp_tree->dso[y]);
	if (!c)
		c = (int)cmp_tree->kind[x] - (int)cmp_tree->kind[y];
	return c;
}

int pk_ftree_children(const struct pk_ftree *t, uint32_t **firstp, uint32_t **kidsp)
{
	uint32_t *first = calloc((size_t)t->n + 2, sizeof(*first));
	uint32_t *kids = malloc(((size_t)t->n + 1) * sizeof(*kids));
	uint32_t *fill = malloc(((size_t)t->n + 1) * sizeof(*fill));
	if (!first || !kids || !fill) {
		free(first);
		free(kids);
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t i = 1; i < t->n; i++)
		first[t->parent[i] + 1]++;
	for (uint32_t i = 0; i < t->n; i++)
		first[i + 1] += first[i];
	memcpy(fill, first, (size_t)t->n * sizeof(*fill));
	for (uint32_t i = 1; i < t->n; i++)
		kids[fill[t->parent[i]]++] = i;
	free(fill);
	for (uint32_t i = 0; i < t->n; i++)
		if (first[i + 1] - first[i] > 1)
			qsort_r(kids + first[i], first[i + 1] - first[i], sizeof(*kids), cmp_kids,
				(void *)t);
	*firstp = first;
	*kidsp = kids;
	return 0;
}
