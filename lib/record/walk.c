/* SPDX-License-Identifier: MIT */
/*
 * lib/record/walk.c - the recorder's one pass over the records it writes.
 *
 * Ring bytes go to the file untouched; on the way, record headers are walked to count
 * samples and losses and to collect the files of executable user-space mappings (the
 * BUILD_ID feature). Only LOST, LOST_SAMPLES, MMAP and MMAP2 bodies are read, decoded by
 * pk_record__decode with the layout of the attr that wrote them (its sample_id_all
 * trailer sits at the end). When the attrs' trailers differ in size (a tracepoint's CPU
 * field, say), the id of the record (IDENTIFIER, the last u64: every attr has it then)
 * picks the layout from a sorted table built when the file's attrs were added.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "record/record-internal.h"

#define SCRATCH_SIZE 65536 /* header.size is a u16 */

int pk_rec_walk__init(struct pk_rec_walk *w)
{
	memset(w, 0, sizeof(*w));
	w->scratch = malloc(SCRATCH_SIZE);
	return w->scratch ? 0 : -ENOMEM;
}

void pk_rec_walk__release(struct pk_rec_walk *w)
{
	for (size_t i = 0; i < w->dsos.cap; i++)
		free(w->dsos.slot[i]);
	free(w->dsos.slot);
	free(w->layouts);
	free(w->ids);
	free(w->scratch);
	memset(w, 0, sizeof(*w));
}

void pk_rec_walk__clear_files(struct pk_rec_walk *w)
{
	for (size_t i = 0; i < w->dsos.cap; i++) {
		free(w->dsos.slot[i]);
		w->dsos.slot[i] = NULL;
	}
	w->dsos.nr = 0;
}

/* ---- file names ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
	return h;
}

int pk_rec_nameset__add(struct pk_rec_nameset *ns, const char *name)
{
	if (ns->nr * 2 >= ns->cap) {
		size_t ncap = ns->cap ? ns->cap * 2 : 256;
		char **n = calloc(ncap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < ns->cap; i++) {
			if (!ns->slot[i])
				continue;
			size_t j = hash_str(ns->slot[i]) & (ncap - 1);
			while (n[j])
				j = (j + 1) & (ncap - 1);
			n[j] = ns->slot[i];
		}
		free(ns->slot);
		ns->slot = n;
		ns->cap = ncap;
	}
	size_t j = hash_str(name) & (ns->cap - 1);
	while (ns->slot[j]) {
		if (!strcmp(ns->slot[j], name))
			return 0;
		j = (j + 1) & (ns->cap - 1);
	}
	ns->slot[j] = strdup(name);
	if (!ns->slot[j])
		return -ENOMEM;
	ns->nr++;
	return 1;
}

void pk_rec_nameset__release(struct pk_rec_nameset *ns)
{
	for (size_t i = 0; i < ns->cap; i++)
		free(ns->slot[i]);
	free(ns->slot);
	memset(ns, 0, sizeof(*ns));
}

/* ---- layouts ---- */

int pk_rec_walk__add_attr(struct pk_rec_walk *w, const struct perf_event_attr *attr,
			  const uint64_t *ids, size_t nr)
{
	struct pk_sample_layout *l = realloc(w->layouts, (w->nr_layouts + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	w->layouts = l;
	/* an attr the decoder rejects (unknown sample bits) still has its records passed on;
	 * they are only not looked into */
	if (pk_sample_layout__init(&l[w->nr_layouts], attr) < 0)
		memset(&l[w->nr_layouts], 0, sizeof(*l));
	if (w->nr_layouts && l[w->nr_layouts].id_size != l[0].id_size)
		w->mixed_trailers = true;
	if (w->nr_ids + nr > w->cap_ids) {
		size_t ncap = w->cap_ids ? w->cap_ids : 64;
		while (ncap < w->nr_ids + nr)
			ncap *= 2;
		struct pk_rec_walk_id *n = realloc(w->ids, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->ids = n;
		w->cap_ids = ncap;
	}
	for (size_t i = 0; i < nr; i++)
		w->ids[w->nr_ids++] = (struct pk_rec_walk_id){ ids[i], (uint32_t)w->nr_layouts };
	w->nr_layouts++;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct pk_rec_walk_id *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

void pk_rec_walk__seal(struct pk_rec_walk *w)
{
	if (w->nr_ids)
		qsort(w->ids, w->nr_ids, sizeof(*w->ids), cmp_id);
}

/* The layout of the attr that wrote a non-sample record (NULL: none known). */
static const struct pk_sample_layout *layout_of(const struct pk_rec_walk *w,
						const struct perf_event_header *h)
{
	uint64_t id;
	size_t lo = 0, hi = w->nr_ids;

	if (!w->nr_layouts)
		return NULL;
	if (!w->mixed_trailers || pk_sample_layout__record_id(&w->layouts[0], h, &id) < 0)
		return &w->layouts[0];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < w->nr_ids && w->ids[lo].id == id)
		return &w->layouts[w->ids[lo].layout];
	return &w->layouts[0];
}

/* ---- records ---- */

static void note_file(struct pk_rec_walk *w, const struct perf_event_header *h, const char *name,
		      bool data, uint32_t pid, uint64_t addr, uint64_t len)
{
	if (data || pk_misc__cpumode(h->misc) != PK_CPUMODE_USER || !name)
		return;
	if (!w->vdso_seen && !strcmp(name, "[vdso]") && pid && pid != UINT32_MAX) {
		w->vdso_seen = true;
		w->vdso_pid = pid;
		w->vdso_start = addr;
		w->vdso_len = len;
		return;
	}
	/* executable user-space mappings of files only: not //anon, [heap] */
	if (name[0] == '/')
		pk_rec_nameset__add(&w->dsos, name);
}

void pk_rec_walk__record(struct pk_rec_walk *w, const struct perf_event_header *h)
{
	struct pk_record r;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		w->samples++;
		return;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		break;
	default:
		return;
	}
	if (pk_record__decode(layout_of(w, h), h, &r, NULL) != 0)
		return; /* malformed or not of our attrs: passed on, not counted */
	switch (h->type) {
	case PERF_RECORD_LOST:
		w->lost += r.lost.lost;
		w->lost_records++;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		w->lost_samples += r.lost_samples.lost;
		break;
	case PERF_RECORD_MMAP:
		note_file(w, h, r.mmap.filename, r.mmap.data, r.mmap.pid, r.mmap.addr, r.mmap.len);
		break;
	default:
		note_file(w, h, r.mmap2.filename, r.mmap2.data, r.mmap2.pid, r.mmap2.addr,
			  r.mmap2.len);
		break;
	}
}

void pk_rec_walk__scan(struct pk_rec_walk *w, const struct pk_ring_chunk *c, int n)
{
	size_t first = c[0].len, total = first + (n > 1 ? c[1].len : 0), off = 0;

	while (off + sizeof(struct perf_event_header) <= total) {
		/* records are 8-aligned and so is the wrap point: a header is never split */
		const struct perf_event_header *h =
			off < first ? (const void *)((const uint8_t *)c[0].ptr + off)
				    : (const void *)((const uint8_t *)c[1].ptr + (off - first));
		uint16_t size = h->size;
		if (size < sizeof(*h) || off + size > total)
			break;
		if (h->type == PERF_RECORD_SAMPLE) {
			w->samples++; /* the common case: the header says it all */
		} else if (off < first && off + size > first) {
			/* split by the wrap: reassemble the few records whose bodies matter */
			if (h->type == PERF_RECORD_LOST || h->type == PERF_RECORD_LOST_SAMPLES ||
			    h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2) {
				memcpy(w->scratch, h, first - off);
				memcpy(w->scratch + (first - off), c[1].ptr, size - (first - off));
				pk_rec_walk__record(w, (const void *)w->scratch);
			}
		} else {
			pk_rec_walk__record(w, h);
		}
		off += size;
	}
}
