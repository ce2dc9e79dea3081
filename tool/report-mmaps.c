/* SPDX-License-Identifier: MIT */
/*
 * tool/report-mmaps.c - `perfkit report --mmaps`: the maps of each process as perf
 * report --mmaps prints them under the --tasks tree. perf's rules: the user MMAP/MMAP2
 * records of a process build its maps (a new map cuts the ones it overlaps), the threads
 * of a process share them, a FORK into a new process starts from a copy of the parent's.
 * MMAP records have no protection: perf takes --xp for code (---p for data), inode 0.
 */
#include "report.h"

#include <sys/mman.h>

struct rmap {
	int32_t pid;
	uint64_t start, end, pgoff, ino;
	uint32_t prot, flags;
	char *name;
};

struct rpt_maps {
	struct rmap *m;
	size_t n, cap;
	bool oom;
};

struct rpt_maps *rpt_maps_new(void)
{
	return calloc(1, sizeof(struct rpt_maps));
}

void rpt_maps_free(struct rpt_maps *M)
{
	if (!M)
		return;
	for (size_t i = 0; i < M->n; i++)
		free(M->m[i].name);
	free(M->m);
	free(M);
}

static struct rmap *maps_add(struct rpt_maps *M, const struct rmap *r)
{
	if (M->n == M->cap) {
		size_t nc = M->cap ? M->cap * 2 : 64;
		struct rmap *m = realloc(M->m, nc * sizeof(*m));
		if (!m) {
			M->oom = true;
			return NULL;
		}
		M->m = m;
		M->cap = nc;
	}
	M->m[M->n] = *r;
	M->m[M->n].name = strdup(r->name);
	if (!M->m[M->n].name) {
		M->oom = true;
		return NULL;
	}
	return &M->m[M->n++];
}

static void maps_del(struct rpt_maps *M, size_t i)
{
	free(M->m[i].name);
	M->m[i] = M->m[--M->n];
}

/* a new map of a process: the parts of older maps it covers go (perf's
 * maps__fixup_overlappings), then it is added */
static void maps_insert(struct rpt_maps *M, const struct rmap *r)
{
	for (size_t i = 0; i < M->n && !M->oom;) {
		struct rmap *o = &M->m[i];
		if (o->pid != r->pid || o->end <= r->start || o->start >= r->end) {
			i++;
			continue;
		}
		if (o->end > r->end) { /* the part after the new map stays */
			struct rmap after = *o;
			after.pgoff += r->end - o->start;
			after.start = r->end;
			if (!maps_add(M, &after))
				return;
			o = &M->m[i];
		}
		if (o->start < r->start) { /* the part before stays */
			o->end = r->start;
			i++;
			continue;
		}
		maps_del(M, i);
	}
	maps_add(M, r);
}

int rpt_maps_rec(struct rpt_maps *M, const struct pk_data_event *ev, const struct pk_record *rec)
{
	unsigned m = ev->hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	struct rmap r = { 0 };
	switch (ev->hdr->type) {
	case PERF_RECORD_MMAP:
		if (m == PERF_RECORD_MISC_KERNEL || m == PERF_RECORD_MISC_GUEST_KERNEL)
			return 0;
		r = (struct rmap){ .pid = (int32_t)rec->mmap.pid, .start = rec->mmap.addr,
				   .end = rec->mmap.addr + rec->mmap.len, .pgoff = rec->mmap.pgoff,
				   .prot = rec->mmap.data ? 0 : PROT_EXEC,
				   .name = (char *)rec->mmap.filename };
		maps_insert(M, &r);
		break;
	case PERF_RECORD_MMAP2:
		if (m == PERF_RECORD_MISC_KERNEL || m == PERF_RECORD_MISC_GUEST_KERNEL)
			return 0;
		r = (struct rmap){ .pid = (int32_t)rec->mmap2.pid, .start = rec->mmap2.addr,
				   .end = rec->mmap2.addr + rec->mmap2.len, .pgoff = rec->mmap2.pgoff,
				   .ino = rec->mmap2.has_build_id ? 0 : rec->mmap2.ino,
				   .prot = rec->mmap2.prot, .flags = rec->mmap2.flags,
				   .name = (char *)rec->mmap2.filename };
		maps_insert(M, &r);
		break;
	case PERF_RECORD_FORK: {
		int32_t pid = (int32_t)rec->task.pid, ppid = (int32_t)rec->task.ppid;
		if (pid == ppid)
			break; /* a thread: shares the maps */
		for (size_t i = 0; i < M->n;)
			if (M->m[i].pid == pid)
				maps_del(M, i);
			else
				i++;
		size_t n = M->n;
		for (size_t i = 0; i < n && !M->oom; i++) {
			if (M->m[i].pid != ppid)
				continue;
			struct rmap c = M->m[i];
			c.pid = pid;
			maps_add(M, &c);
		}
		break;
	}
	default:
		break;
	}
	return M->oom ? -ENOMEM : 0;
}

static int rmap_cmp(const void *a, const void *b)
{
	const struct rmap *x = *(const struct rmap *const *)a, *y = *(const struct rmap *const *)b;
	return (x->start > y->start) - (x->start < y->start);
}

/* the maps of process pid, by address, indented as perf: under the comm column */
int rpt_maps_print(const struct rpt_maps *M, FILE *f, int32_t pid, int indent)
{
	size_t n = 0;
	for (size_t i = 0; i < M->n; i++)
		n += M->m[i].pid == pid;
	if (!n)
		return 0;
	const struct rmap **v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < M->n; i++)
		if (M->m[i].pid == pid)
			v[n++] = &M->m[i];
	qsort(v, n, sizeof(*v), rmap_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct rmap *r = v[i];
		fprintf(f, "%*s  %" PRIx64 "-%" PRIx64 " %c%c%c%c %08" PRIx64 " %" PRIu64 " %s\n", indent, "",
			r->start, r->end, r->prot & PROT_READ ? 'r' : '-', r->prot & PROT_WRITE ? 'w' : '-',
			r->prot & PROT_EXEC ? 'x' : '-', r->flags & MAP_SHARED ? 's' : 'p', r->pgoff,
			r->ino, r->name);
	}
	free(v);
	return 0;
}
