/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/trim.c - what a long-lived machine (perfkit top, system-wide) gives back:
 * the symbol tables of objects no live process maps any more (read again if one of their
 * addresses comes up), the kallsyms cache's pages, and the slack of a table's names.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include "internal.h"
#include "symbol-internal.h"

int pk_dso_pack_names(struct pk_dso *d)
{
	size_t nr = d->nr_syms + d->nr_dsyms;
	if (!nr) {
		pk_arena_release(&d->arena);
		return 0;
	}
	const char ***v = malloc(nr * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < d->nr_syms; i++)
		v[n++] = &d->syms[i].name;
	for (size_t i = 0; i < d->nr_dsyms; i++)
		v[n++] = &d->dsyms[i].name;
	int err = pk_arena_pack(&d->arena, v, n);
	free(v);
	return err;
}

/* mark the objects ms (and its data maps) hold as seen by call `stamp` */
static void pk_trim_mark(struct pk_mapset *ms, uint32_t stamp)
{
	for (; ms && ms->trim_seen != stamp; ms = ms->data) {
		ms->trim_seen = stamp;
		for (size_t i = 0; i < ms->nr; i++)
			if (ms->v[i].dso)
				ms->v[i].dso->trim_seen = stamp;
	}
}

/* A loaded object's tables can go: an ELF file's symbols, with nothing of its DWARF
 * in use (source lines, inline frames and their strings live in the same arena, and
 * an open libdwfl session may have handed out pointers into its file). */
static bool pk_trim_may_drop(const struct pk_dso *d)
{
	return d->kind == PK_DSO_ELF && d->loaded && !d->load_err && !d->dwfl && !d->mod &&
	       !d->srclines.nr && !d->inlines.nr && !d->funcnames.nr && !d->scope_list && !d->cus &&
	       !d->plt_view && (d->syms || d->dsyms || d->arena.head);
}

static void pk_trim_drop(struct pk_dso *d)
{
	free(d->syms);
	free(d->dsyms);
	d->syms = d->dsyms = NULL;
	d->nr_syms = d->nr_dsyms = 0;
	pk_arena_release(&d->arena);
	d->arena.chunk = 0;
	/* read again, from the file at its path, when an address of it is looked up */
	d->loaded = false;
	d->load_err = 0;
}

PK_API size_t pk_machine__trim(struct pk_machine *m, unsigned int idle)
{
	if (!m)
		return 0;
	uint32_t stamp = ++m->trim_stamp;
	if (!stamp)
		stamp = ++m->trim_stamp; /* (0 is never a walk's) */
	for (size_t i = 0; i < m->threads.cap; i++) {
		struct pk_thread *t = m->threads.vals[i];
		if (!t)
			continue;
		if (!t->dead) {
			pk_trim_mark(t->maps, stamp);
			continue;
		}
		/* its maps, once no late sample can come for it any more (the thread itself
		 * stays, with its command name): those of a process that exited were kept
		 * to the end, a map set (and libdwfl session, -g dwarf) per process */
		if (t->trim_dead < UINT32_MAX)
			t->trim_dead++;
		if (t->trim_dead > idle && t->maps && (t->maps->nr || t->maps->data))
			pk_thread_drop_maps(m, t);
	}
	pk_trim_mark(m->kmaps, stamp);
	size_t dropped = 0;
	for (size_t i = 0; i < m->dso_hash_cap; i++) {
		for (struct pk_dso *d = m->dso_hash[i]; d; d = d->hnext) {
			/* (counted while loaded: a table read again starts over) */
			if (d->trim_seen == stamp || !d->loaded) {
				d->trim_idle = 0;
				continue;
			}
			if (d->trim_idle < UINT32_MAX)
				d->trim_idle++;
			/* an object that comes back (a program run again and again: the
			 * assembler of a build) waits twice as long at each drop */
			uint64_t wait = ((uint64_t)idle + 1) << PK_MIN(d->trim_drops, 16);
			if (d->trim_idle >= wait && pk_trim_may_drop(d)) {
				if (d->trim_drops < UINT8_MAX)
					d->trim_drops++;
				pk_trim_drop(d);
				dropped++;
			}
		}
	}
	/* the kallsyms cache's pages back to the page cache (see pk_ksym_cache_map): the
	 * ones the next look-ups touch come back */
	if (m->kview.map)
		madvise(m->kview.map, m->kview.map_len, MADV_DONTNEED);
	return dropped;
}
