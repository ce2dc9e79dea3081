/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/machine.c - threads and their maps over time, and address resolution.
 *
 * A process's maps are one refcounted `pk_mapset` (a sorted array, binary searched)
 * shared by all its threads; a fork of a new process copies it, an mmap inserts into it
 * (cutting whatever it overlaps, as the kernel does). An exec keeps it (perf's rule: the
 * new image's mappings cut the old ones as they come).
 */
#include <inttypes.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "symbol-internal.h"
#include "dso-internal.h"

#define PK_PID_NONE ((uint32_t)-1)

/* ------------------------------------------------------------------------------------ */
/* Map sets                                                                             */

/* Give ms a generation no map set of m ever had (see pk_machine__maps_gen). */
static void pk_mapset_touch(struct pk_machine *m, struct pk_mapset *ms)
{
	ms->gen = ++m->maps_stamp;
}

static struct pk_mapset *pk_mapset_new(struct pk_machine *m, uint32_t pid)
{
	struct pk_mapset *ms = calloc(1, sizeof(*ms));
	if (!ms)
		return NULL;
	ms->refcnt = 1;
	ms->pid = pid;
	pk_mapset_touch(m, ms);
	return ms;
}

static struct pk_mapset *pk_mapset_get(struct pk_mapset *ms)
{
	if (ms)
		ms->refcnt++;
	return ms;
}

static void pk_mapset_put(struct pk_mapset *ms)
{
	if (!ms || --ms->refcnt > 0)
		return;
	pk_unwind_ctx_free(ms->unwind);
	pk_mapset_put(ms->data);
	free(ms->v);
	free(ms);
}

static struct pk_mapset *pk_mapset_clone(struct pk_machine *m, const struct pk_mapset *src,
					 uint32_t pid)
{
	struct pk_mapset *ms = pk_mapset_new(m, pid);
	if (ms && src && src->data && !(ms->data = pk_mapset_clone(m, src->data, pid))) {
		free(ms);
		return NULL;
	}
	if (!ms || !src || !src->nr)
		return ms;
	ms->v = malloc(src->nr * sizeof(*ms->v));
	if (!ms->v) {
		pk_mapset_put(ms);
		return NULL;
	}
	memcpy(ms->v, src->v, src->nr * sizeof(*ms->v));
	ms->nr = ms->cap = src->nr;
	return ms;
}

/* The index of the map holding addr, or SIZE_MAX. */
static size_t pk_mapset_index(const struct pk_mapset *ms, uint64_t addr)
{
	if (!ms)
		return SIZE_MAX;
	size_t lo = PK_UPPER_BOUND(ms->nr, ms->v[mid].start <= addr);
	if (!lo || addr >= ms->v[lo - 1].end)
		return SIZE_MAX;
	return lo - 1;
}

const struct pk_mapent *pk_mapset_find(const struct pk_mapset *ms, uint64_t addr)
{
	size_t i = pk_mapset_index(ms, addr);
	return i == SIZE_MAX ? NULL : &ms->v[i];
}

/* The unmapped range [*lo, *hi) around addr, which no map of ms covers. */
static void pk_mapset_gap(const struct pk_mapset *ms, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	*lo = 0;
	*hi = UINT64_MAX;
	if (!ms)
		return;
	size_t i = PK_UPPER_BOUND(ms->nr, ms->v[mid].start <= addr);
	if (i)
		*lo = ms->v[i - 1].end;
	if (i < ms->nr)
		*hi = ms->v[i].start;
}

/* Insert, cutting away the parts of older maps that the new one covers. */
static int pk_mapset_insert(struct pk_mapset *ms, const struct pk_mapent *ne)
{
	if (ne->end <= ne->start)
		return 0;
	size_t i = 0, j;
	/* first entry ending after ne->start (ends are sorted: entries do not overlap) */
	size_t lo = 0, hi = ms->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ms->v[mid].end <= ne->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	for (j = i; j < ms->nr && ms->v[j].start < ne->end; j++)
		;
	struct pk_mapent repl[3];
	size_t r = 0;
	if (i < j && ms->v[i].start < ne->start) {
		repl[r] = ms->v[i];
		repl[r++].end = ne->start;
	}
	repl[r++] = *ne;
	if (i < j && ms->v[j - 1].end > ne->end) {
		struct pk_mapent right = ms->v[j - 1];
		right.pgoff += ne->end - right.start;
		right.start = ne->end;
		repl[r++] = right;
	}
	size_t removed = j - i;
	size_t nnr = ms->nr - removed + r;
	if (nnr > ms->cap) {
		size_t ncap = ms->cap ? ms->cap * 2 : 16;
		while (ncap < nnr)
			ncap *= 2;
		struct pk_mapent *nv = realloc(ms->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		ms->v = nv;
		ms->cap = ncap;
	}
	memmove(&ms->v[i + r], &ms->v[j], (ms->nr - j) * sizeof(*ms->v));
	memcpy(&ms->v[i], repl, r * sizeof(*repl));
	ms->nr = nnr;
	return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Threads                                                                              */

static void pk_thread_free(struct pk_thread *t)
{
	if (!t)
		return;
	pk_mapset_put(t->maps);
	free(t);
}

int pk_thread_drop_maps(struct pk_machine *m, struct pk_thread *t)
{
	struct pk_mapset *ms = pk_mapset_new(m, t->maps ? t->maps->pid : t->pid);
	if (!ms)
		return -ENOMEM;
	pk_mapset_put(t->maps);
	t->maps = ms;
	return 0;
}

static struct pk_thread *pk_thread_new(struct pk_machine *m, uint32_t pid, uint32_t tid)
{
	struct pk_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->tid = tid;
	snprintf(t->comm, sizeof(t->comm), ":%d", (int)tid);
	struct pk_thread *old = pk_u64map_get(&m->threads, tid);
	if (pk_u64map_put(&m->threads, tid, t)) {
		free(t);
		return NULL;
	}
	pk_thread_free(old);
	return t;
}

struct pk_thread *pk_machine_thread(struct pk_machine *m, uint32_t pid, uint32_t tid,
				    bool create)
{
	struct pk_thread *t = pk_u64map_get(&m->threads, tid);
	if (t) {
		if (t->pid == PK_PID_NONE && pid != PK_PID_NONE && pid != tid) {
			/* learned the process of a thread first seen without one */
			struct pk_thread *leader = pk_machine_thread(m, pid, pid, true);
			if (leader && leader->maps && (!t->maps || !t->maps->nr)) {
				pk_mapset_put(t->maps);
				t->maps = pk_mapset_get(leader->maps);
			}
			t->pid = pid;
		}
		return t;
	}
	if (!create)
		return NULL;
	struct pk_thread *leader = NULL;
	if (pid != PK_PID_NONE && pid != tid) {
		leader = pk_machine_thread(m, pid, pid, true);
		if (!leader)
			return NULL;
	}
	t = pk_thread_new(m, pid, tid);
	if (!t)
		return NULL;
	if (leader) {
		t->maps = pk_mapset_get(leader->maps);
		memcpy(t->comm, leader->comm, sizeof(t->comm));
	} else {
		t->maps = pk_mapset_new(m, pid == PK_PID_NONE ? tid : pid);
		if (!t->maps)
			return NULL;
	}
	return t;
}

/* ------------------------------------------------------------------------------------ */
/* Machine                                                                              */

PK_API struct pk_machine *pk_machine__new(const struct pk_machine_opts *opts)
{
	if (!PK_OPTS_VALID(opts, pk_machine_opts))
		return pk_err_ptr(-EINVAL);
	struct pk_machine *m = calloc(1, sizeof(*m));
	if (!m)
		return pk_err_ptr(-ENOMEM);
	m->host = PK_OPTS_GET(opts, host, false);
	m->no_demangle = PK_OPTS_GET(opts, no_demangle, false);
	m->uw_libdwfl_only = PK_OPTS_GET(opts, unwind_libdwfl_only, false);
	m->scopes_libdw = PK_OPTS_GET(opts, scopes_libdw, false);
	m->no_data_syms = PK_OPTS_GET(opts, no_data_symbols, false);
	m->close_files = PK_OPTS_GET(opts, close_files, false);
	m->preload = PK_OPTS_GET(opts, preload, false) &&
		     !PK_OPTS_GET(opts, find_debuginfo, NULL);
	const char *ks = PK_OPTS_GET(opts, kallsyms, NULL);
	const char *jd = PK_OPTS_GET(opts, jit_dir, NULL);
	const char *dd = PK_OPTS_GET(opts, debug_dir, NULL);
	m->kallsyms_path = strdup(ks ? ks : "/proc/kallsyms");
	m->jit_dir = strdup(jd ? jd : "/tmp");
	const char *sf = PK_OPTS_GET(opts, symfs, NULL);
	if (sf && *sf && !(m->symfs = strdup(sf))) {
		pk_machine__free(m);
		return pk_err_ptr(-ENOMEM);
	}
	m->find_debuginfo = PK_OPTS_GET(opts, find_debuginfo, NULL);
	m->find_debuginfo_ctx = PK_OPTS_GET(opts, find_debuginfo_ctx, NULL);
	if (!dd && m->symfs) {
		size_t n = strlen(m->symfs) + sizeof("/usr/lib/debug");
		m->debug_dir = malloc(n);
		if (m->debug_dir)
			snprintf(m->debug_dir, n, "%s/usr/lib/debug", m->symfs);
	} else {
		m->debug_dir = strdup(dd ? dd : "/usr/lib/debug");
	}
	const char *bd = PK_OPTS_GET(opts, buildid_dir, NULL);
	char bdir[PATH_MAX];
	if (!pk_build_id_dir(bd, bdir, sizeof(bdir)) && !(m->buildid_dir = strdup(bdir))) {
		pk_machine__free(m);
		return pk_err_ptr(-ENOMEM);
	}
	/* a second cache (perf's own ~/.debug when the first one is elsewhere) */
	const char *xd = PK_OPTS_GET(opts, extra_buildid_dir, NULL);
	char pdir[PATH_MAX];
	if (xd && *xd && !pk_build_id_dir(xd, pdir, sizeof(pdir)) &&
	    (!m->buildid_dir || strcmp(pdir, m->buildid_dir)) &&
	    !(m->perf_buildid_dir = strdup(pdir))) {
		pk_machine__free(m);
		return pk_err_ptr(-ENOMEM);
	}
	const char *cd = PK_OPTS_GET(opts, cache_dir, NULL);
	if (cd && *cd && !(m->cache_dir = strdup(cd))) {
		pk_machine__free(m);
		return pk_err_ptr(-ENOMEM);
	}
	m->kmaps = pk_mapset_new(m, PK_PID_NONE);
	if (!m->kallsyms_path || !m->jit_dir || !m->debug_dir || !m->kmaps) {
		pk_machine__free(m);
		return pk_err_ptr(-ENOMEM);
	}
	return m;
}

PK_API void pk_machine__free(struct pk_machine *m)
{
	if (!m)
		return;
	pk_preload_stop(m);
	for (size_t i = 0; i < m->threads.cap; i++)
		if (m->threads.vals[i])
			pk_thread_free(m->threads.vals[i]);
	pk_u64map_release(&m->threads);
	pk_mapset_put(m->kmaps);
	while (m->ksym_dsos) {
		struct pk_dso *d = m->ksym_dsos;
		m->ksym_dsos = d->hnext;
		pk_dso_free(d);
	}
	for (size_t i = 0; i < m->dso_hash_cap; i++) {
		struct pk_dso *d = m->dso_hash[i];
		while (d) {
			struct pk_dso *n = d->hnext;
			pk_dso_free(d);
			d = n;
		}
	}
	free(m->dso_hash);
	free(m->ksyms);
	pk_ksym_view_release(&m->kview);
	pk_arena_release(&m->karena);
	free(m->kallsyms_path);
	free(m->jit_dir);
	free(m->debug_dir);
	free(m->buildid_dir);
	free(m->perf_buildid_dir);
	free(m->cache_dir);
	free(m->symfs);
	free(m);
}

PK_API int pk_machine__comm(struct pk_machine *m, uint32_t pid, uint32_t tid, const char *comm,
			    bool exec)
{
	if (!m || !comm)
		return pk_err(-EINVAL);
	struct pk_thread *t = pk_machine_thread(m, pid, tid, true);
	if (!t)
		return pk_err(-ENOMEM);
	if (exec) {
		/*
		 * The old image's maps stay until the new image's mappings cut them, as in
		 * perf: the COMM comes before the new MMAPs, and a sample taken in between
		 * (inside execve) still has its user frames in the old image (the
		 * `__GI___execve+0x7` of the old libc). A new generation all the same: the
		 * process is another program now.
		 */
		if (t->maps)
			pk_mapset_touch(m, t->maps);
		t->dead = false;
		t->trim_dead = 0;
	}
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return 0;
}

PK_API int pk_machine__fork(struct pk_machine *m, uint32_t pid, uint32_t ppid, uint32_t tid,
			    uint32_t ptid)
{
	if (!m)
		return pk_err(-EINVAL);
	struct pk_thread *parent = pk_machine_thread(m, ppid, ptid, true);
	if (!parent)
		return pk_err(-ENOMEM);
	char comm[sizeof(parent->comm)];
	memcpy(comm, parent->comm, sizeof(comm));
	struct pk_mapset *maps;
	if (pid == ppid && parent->maps)
		maps = pk_mapset_get(parent->maps);     /* a thread: same address space */
	else
		maps = pk_mapset_clone(m, parent->maps, pid); /* a process: a copy */
	if (!maps)
		return pk_err(-ENOMEM);
	/* parent may be freed below if tid == ptid (a bogus record): copied what we need */
	struct pk_thread *t = pk_thread_new(m, pid, tid);
	if (!t) {
		pk_mapset_put(maps);
		return pk_err(-ENOMEM);
	}
	t->maps = maps;
	memcpy(t->comm, comm, sizeof(t->comm));
	return 0;
}

PK_API int pk_machine__exit(struct pk_machine *m, uint32_t pid, uint32_t tid)
{
	(void)pid;
	if (!m)
		return pk_err(-EINVAL);
	struct pk_thread *t = pk_machine_thread(m, pid, tid, false);
	if (t)
		t->dead = true;
	return 0;
}

/* "/lib/modules/6.1.0/kernel/fs/ext4/ext4.ko.xz" -> "[ext4]" (perf's module naming:
 * the basename up to the first dot, dashes as underscores). */
static void pk_module_name(const char *path, char *out, size_t len)
{
	if (path[0] == '[') {
		snprintf(out, len, "%s", path);
		return;
	}
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strcspn(b, ".");
	if (n + 3 > len)
		n = len - 3;
	out[0] = '[';
	for (size_t i = 0; i < n; i++)
		out[1 + i] = b[i] == '-' ? '_' : b[i];
	out[1 + n] = ']';
	out[2 + n] = '\0';
}

PK_API int pk_machine__mmap(struct pk_machine *m, const struct pk_mmap_event *ev)
{
	if (!m || !ev || !ev->filename)
		return pk_err(-EINVAL);
	/* the kernel's data mappings have no use */
	if (ev->data && (ev->kernel || ev->pid == PK_PID_NONE))
		return 0;
	struct pk_mapent e = { .start = ev->addr, .end = ev->addr + ev->len, .pgoff = ev->pgoff,
			       .prot = ev->prot, .flags = ev->flags };
	if (e.end < e.start)
		e.end = UINT64_MAX;
	struct pk_mapset *ms;
	if (ev->kernel || ev->pid == PK_PID_NONE) {
		ms = m->kmaps;
		if (!strncmp(ev->filename, "[kernel.kallsyms]", 17) ||
		    !strncmp(ev->filename, "[guest.kernel.kallsyms", 22)) {
			e.dso = pk_dso_findnew(m, "[kernel.kallsyms]");
			if (!strcmp(ev->filename, "[kernel.kallsyms]_text")) {
				m->kernel_text_pgoff = ev->pgoff;
				m->have_kernel_text = true;
			}
		} else {
			char name[128];
			pk_module_name(ev->filename, name, sizeof(name));
			e.dso = pk_dso_findnew(m, name);
			if (e.dso && e.dso->kind == PK_DSO_ANON)
				e.dso->kind = PK_DSO_MODULE;
			/* the .ko, whose code annotate reads (lib/annotate/kmod.c) */
			if (e.dso && !e.dso->kmod_path && ev->filename[0] == '/')
				e.dso->kmod_path = strdup(ev->filename);
		}
	} else {
		struct pk_thread *t = pk_machine_thread(m, ev->pid, ev->tid, true);
		if (!t)
			return pk_err(-ENOMEM);
		ms = t->maps;
		/* a process's data mappings (record -d) go to a set of their own: only data
		 * addresses are looked up there (pk_machine__resolve_data); code lookups and
		 * the unwinder never see them */
		if (ev->data && !ms->data && !(ms->data = pk_mapset_new(m, ms->pid)))
			return pk_err(-ENOMEM);
		/* a data map changes what pk_machine__resolve_data finds: the owner's
		 * generation too */
		if (ev->data)
			pk_mapset_touch(m, ms);
		if (ev->data)
			ms = ms->data;
		e.dso = pk_dso_findnew(m, ev->filename);
	}
	if (!e.dso)
		return pk_err(-ENOMEM);
	if (!ev->data) {
		e.dso->mapped_code = true;
		e.dso->data_only = false;
	} else if (!e.dso->mapped_code) {
		e.dso->data_only = true;
	}
	if (ev->build_id && ev->build_id_size && !e.dso->want_bid_len && !e.dso->loaded) {
		e.dso->want_bid_len = PK_MIN(ev->build_id_size, sizeof(e.dso->want_bid));
		memcpy(e.dso->want_bid, ev->build_id, e.dso->want_bid_len);
	}
	int err = pk_mapset_insert(ms, &e);
	if (err)
		return pk_err(err);
	pk_mapset_touch(m, ms);
	if (!ev->data && !ev->kernel && ev->pid != PK_PID_NONE)
		pk_preload_queue(m, e.dso);
	return 0;
}

/*
 * KSYMBOL: kernel code that comes and goes during a recording (BPF programs, their
 * trampolines and dispatchers, out-of-line code such as kprobe instruction pages), as
 * perf 6.1 takes it. A register at an address no kernel map holds makes the map
 * [addr, addr + len) of an object of its own named by the record, whose one symbol of that
 * name covers the whole map (the object's addresses are relative to the map, as perf's);
 * perf's map of a BPF image (bpf_trampoline_*, bpf_dispatcher_*) or out-of-line code is
 * named the same way, its other flags only matter to annotation. The map fills the gap
 * it starts in and no more: it never cuts a recorded map (perf would let them overlap).
 * A register inside the map of such an object adds a symbol of its name and length at
 * the map's start (perf's rule); inside the kernel's or a module's map it adds nothing
 * (perf adds a symbol at that map's start; kallsyms names those addresses here).
 * An unregister drops the whole map holding its address unless it is the kernel's (then
 * perf drops the symbol it added there: none here). len 0 and a range past 2^64 make
 * nothing: perf's map of them can never be found.
 */
static int pk_machine_ksymbol(struct pk_machine *m, const struct pk_rec_ksymbol *k)
{
	struct pk_mapset *ms = m->kmaps;
	size_t i = pk_mapset_index(ms, k->addr);
	if (k->unregister) {
		if (i == SIZE_MAX || (ms->v[i].dso && ms->v[i].dso->kind == PK_DSO_KERNEL))
			return 0;
		memmove(&ms->v[i], &ms->v[i + 1], (ms->nr - i - 1) * sizeof(*ms->v));
		ms->nr--;
		pk_mapset_touch(m, ms);
		return 0;
	}
	if (!k->name || !k->len)
		return 0;
	if (i != SIZE_MAX) {
		struct pk_dso *d = ms->v[i].dso;
		if (!d || d->kind != PK_DSO_KSYM)
			return 0;
		int err = pk_dso_ksym_add(d, ms->v[i].pgoff, k->len, k->name);
		if (err == -ENOSPC)
			pk_debug("KSYMBOL %s at %#" PRIx64 ": %s holds %d symbols already: "
				 "ignored", k->name, k->addr, d->name, PK_KSYM_SYMS_MAX);
		if (!err)
			pk_mapset_touch(m, ms);
		return err == -ENOMEM ? pk_err(err) : 0;
	}
	if (k->len > UINT64_MAX - k->addr) {
		pk_debug("KSYMBOL %s at %#" PRIx64 ": its length %#" PRIx32 " runs past the "
			 "end of the address space: ignored", k->name, k->addr, k->len);
		return 0;
	}
	uint64_t lo, hi;
	pk_mapset_gap(ms, k->addr, &lo, &hi);
	struct pk_mapent e = { .start = k->addr, .end = PK_MIN(k->addr + k->len, hi) };
	e.dso = pk_dso_new_ksym(m, k->name);
	if (!e.dso || pk_dso_ksym_add(e.dso, 0, k->len, k->name) ||
	    pk_mapset_insert(ms, &e))
		return pk_err(-ENOMEM);
	pk_mapset_touch(m, ms);
	return 0;
}

PK_API int pk_machine__add_build_id(struct pk_machine *m, const char *filename,
				    const uint8_t *build_id, size_t len)
{
	if (!m || !filename || !build_id || !len)
		return pk_err(-EINVAL);
	struct pk_dso *d = pk_dso_findnew(m, filename);
	if (!d)
		return pk_err(-ENOMEM);
	if (d->loaded || pk_preload_state(d) != PK_PRE_NONE)
		return 0;   /* too late to matter for this DSO (read, or being read ahead) */
	d->want_bid_len = PK_MIN(len, sizeof(d->want_bid));
	memcpy(d->want_bid, build_id, d->want_bid_len);
	return 0;
}

PK_API int pk_machine__process(struct pk_machine *m, const struct pk_record *r)
{
	if (!m || !r)
		return pk_err(-EINVAL);
	uint8_t mode = r->cpumode;
	bool kmode = mode == PK_CPUMODE_KERNEL || mode == PK_CPUMODE_GUEST_KERNEL;
	switch (r->type) {
	case PERF_RECORD_COMM:
		return pk_machine__comm(m, r->comm.pid, r->comm.tid, r->comm.comm, r->comm.exec);
	case PERF_RECORD_FORK:
		return pk_machine__fork(m, r->task.pid, r->task.ppid, r->task.tid, r->task.ptid);
	case PERF_RECORD_EXIT:
		return pk_machine__exit(m, r->task.pid, r->task.tid);
	case PERF_RECORD_MMAP: {
		struct pk_mmap_event ev = {
			.pid = r->mmap.pid, .tid = r->mmap.tid, .addr = r->mmap.addr,
			.len = r->mmap.len, .pgoff = r->mmap.pgoff, .filename = r->mmap.filename,
			.kernel = kmode, .data = r->mmap.data,
		};
		return pk_machine__mmap(m, &ev);
	}
	case PERF_RECORD_MMAP2: {
		struct pk_mmap_event ev = {
			.pid = r->mmap2.pid, .tid = r->mmap2.tid, .addr = r->mmap2.addr,
			.len = r->mmap2.len, .pgoff = r->mmap2.pgoff, .prot = r->mmap2.prot,
			.flags = r->mmap2.flags, .filename = r->mmap2.filename,
			.build_id = r->mmap2.has_build_id ? r->mmap2.build_id : NULL,
			.build_id_size = r->mmap2.has_build_id ? r->mmap2.build_id_size : 0,
			.kernel = kmode, .data = r->mmap2.data,
		};
		return pk_machine__mmap(m, &ev);
	}
	case PERF_RECORD_KSYMBOL:
		return pk_machine_ksymbol(m, &r->ksymbol);
	default:
		return 0;
	}
}

PK_API uint64_t pk_machine__maps_gen(struct pk_machine *m, uint32_t pid, uint32_t tid,
				     uint8_t cpumode)
{
	if (!m)
		return 0;
	uint64_t kgen = m->kmaps ? m->kmaps->gen : 0;
	if (cpumode == PK_CPUMODE_KERNEL || cpumode == PK_CPUMODE_GUEST_KERNEL ||
	    cpumode == PK_CPUMODE_HYPERVISOR)
		return kgen;
	/* the thread as resolution makes it (a thread first seen here gets an empty map
	 * set of its own, replaced when its process becomes known: a new generation) */
	struct pk_thread *t = pk_machine_thread(m, pid, tid, true);
	uint64_t tgen = t && t->maps ? t->maps->gen : 0;
	if (cpumode == PK_CPUMODE_USER || cpumode == PK_CPUMODE_GUEST_USER)
		return tgen;
	/* another mode searches both: a change of either shows */
	return tgen ^ kgen << 40;
}

PK_API const char *pk_machine__comm_of(struct pk_machine *m, uint32_t tid)
{
	if (!m)
		return NULL;
	struct pk_thread *t = pk_u64map_get(&m->threads, tid);
	return t ? t->comm : NULL;
}

/* ------------------------------------------------------------------------------------ */
/* Resolution                                                                           */

/*
 * An anonymous executable map may be JIT code described by <jit_dir>/perf-PID.map. The
 * DSO of that path is returned whether or not the file exists (then without symbols):
 * perf names such code by it, "[JIT] tid PID" in reports (PID: the process), the path in
 * perf script. *loaded: the map file was read.
 */
static struct pk_dso *pk_machine_jit_dso(struct pk_machine *m, uint32_t pid, bool *loaded)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/perf-%u.map", m->jit_dir, pid);
	struct pk_dso *d = pk_dso_findnew(m, path);
	*loaded = false;
	if (!d)
		return NULL;
	if (d->kind != PK_DSO_JIT || d->jit_pid != pid || strncmp(d->short_name, "[JIT]", 5)) {
		char sn[32];
		snprintf(sn, sizeof(sn), "[JIT] tid %u", pid);
		char *dup = strdup(sn);
		if (!dup)
			return NULL;
		free(d->short_name);
		d->short_name = dup;
	}
	d->kind = PK_DSO_JIT;
	d->jit_pid = pid;
	*loaded = pk_dso_ensure_loaded(d) == 0;
	return d;
}

static bool pk_anon_may_be_jit(const char *name)
{
	return !strncmp(name, "//anon", 6) || !strncmp(name, "[anon", 5) ||
	       !strncmp(name, "/memfd:", 7) || !strncmp(name, "/dev/zero", 9) ||
	       !strncmp(name, "/anon_hugepage", 14);
}

int pk_machine_preload_kernel(struct pk_machine *m)
{
	struct pk_dso *d = m ? pk_dso_findnew(m, "[kernel.kallsyms]") : NULL;
	return d ? pk_dso_ensure_loaded(d) : -ENOMEM;
}

static int pk_machine_resolve_map_in(struct pk_machine *m, uint32_t pid, uint32_t tid,
				     uint64_t addr, uint8_t cpumode, bool *in_data,
				     bool *is_offset, struct pk_addr_loc *loc);

/* pk_machine__resolve without the symbol: 0 with loc->dso set, or its errors. */
int pk_machine_resolve_map(struct pk_machine *m, uint32_t pid, uint32_t tid, uint64_t addr,
			   uint8_t cpumode, struct pk_addr_loc *loc)
{
	return pk_machine_resolve_map_in(m, pid, tid, addr, cpumode, NULL, NULL, loc);
}

int pk_machine_resolve_map_lazy(struct pk_machine *m, uint32_t pid, uint32_t tid, uint64_t addr,
				uint8_t cpumode, struct pk_addr_loc *loc, bool *is_offset)
{
	*is_offset = false;
	return pk_machine_resolve_map_in(m, pid, tid, addr, cpumode, NULL, is_offset, loc);
}

/* in_data: also look in the data mappings (after the code maps); *in_data tells
 * whether the map found is one. is_offset: an ELF's dso_addr is left a file offset (the
 * translation loads the file), *is_offset set then. */
static int pk_machine_resolve_map_in(struct pk_machine *m, uint32_t pid, uint32_t tid,
				     uint64_t addr, uint8_t cpumode, bool *in_data,
				     bool *is_offset, struct pk_addr_loc *loc)
{
	if (!m || !loc)
		return -EINVAL;
	memset(loc, 0, sizeof(*loc));
	loc->dso_name = "[unknown]";
	loc->dso_addr = addr;
	loc->cpumode = cpumode;

	const struct pk_mapent *e = NULL;
	struct pk_thread *t = NULL;
	bool kmode = cpumode == PK_CPUMODE_KERNEL || cpumode == PK_CPUMODE_GUEST_KERNEL;
	if (!kmode && cpumode != PK_CPUMODE_HYPERVISOR) {
		t = pk_machine_thread(m, pid, tid, true);
		if (t)
			e = pk_mapset_find(t->maps, addr);
		if (t && !e && in_data && t->maps && (e = pk_mapset_find(t->maps->data, addr)))
			*in_data = true;
	}
	if (!e && (kmode || cpumode == PK_CPUMODE_UNKNOWN)) {
		e = pk_mapset_find(m->kmaps, addr);
		if (e)
			kmode = true;
	}
	struct pk_dso *d;
	if (e) {
		d = e->dso;
		loc->map_start = e->start;
		loc->map_end = e->end;
		loc->map_pgoff = e->pgoff;
	} else if (kmode && cpumode == PK_CPUMODE_KERNEL) {
		/* no recorded kernel map holds addr: still the kernel, whose kallsyms also
		 * names what had no map recorded (modules, BPF programs loaded before the
		 * recording). Where kallsyms is read but no symbol of it holds addr (an
		 * unregistered program, garbage), perf finds no map: "[unknown]". The
		 * symbol found is the address's: kept in loc, not looked up again. */
		d = pk_dso_findnew(m, "[kernel.kallsyms]");
		if (d && !pk_dso_ensure_loaded(d) && (m->nr_ksyms || m->kview.nr)) {
			loc->sym = pk_dso__symbol(d, addr, &loc->sym_start, &loc->sym_size);
			if (!loc->sym)
				return -ENOENT;
			loc->sym_off = addr - loc->sym_start;
		}
		loc->map_end = UINT64_MAX;
	} else {
		if (t && cpumode == PK_CPUMODE_USER) {
			pk_mapset_gap(t->maps, addr, &loc->map_start, &loc->map_end);
			if (in_data && t->maps && t->maps->data) {
				/* unmapped in the data mappings too */
				uint64_t lo, hi;
				pk_mapset_gap(t->maps->data, addr, &lo, &hi);
				loc->map_start = PK_MAX(loc->map_start, lo);
				loc->map_end = PK_MIN(loc->map_end, hi);
			}
		}
		return -ENOENT;
	}
	if (!d)
		return -ENOMEM;
	loc->kernel = kmode;
	if ((d->kind == PK_DSO_ELF || d->kind == PK_DSO_VDSO) && is_offset) {
		loc->dso_addr = addr - e->start + e->pgoff;
		*is_offset = true;
	} else if (d->kind == PK_DSO_ELF || d->kind == PK_DSO_VDSO) {
		loc->dso_addr = pk_dso__offset_to_addr(d, addr - e->start + e->pgoff);
	} else if (d->kind == PK_DSO_KSYM) {
		loc->dso_addr = addr - e->start + e->pgoff;
	} else if (d->kind == PK_DSO_ANON && t && !(in_data && *in_data) &&
		   pk_anon_may_be_jit(d->name)) {
		/* (code maps only: an anonymous data map stays "//anon", as in perf) */
		bool loaded;
		bool memfd = !strncmp(d->name, "/memfd:", 7);
		struct pk_dso *j = pk_machine_jit_dso(m, t->maps ? t->maps->pid : pid, &loaded);
		if (j && (loaded || !memfd))
			d = j; /* perf's "[JIT] tid PID", with or without a map file */
		else if (memfd)
			/* no JIT map: a memfd is a file, addressed by offset as perf does */
			loc->dso_addr = addr - e->start + e->pgoff;
	}
	loc->dso = d;
	loc->dso_name = d->name;
	return 0;
}

PK_API int pk_machine__resolve(struct pk_machine *m, uint32_t pid, uint32_t tid, uint64_t addr,
			       uint8_t cpumode, struct pk_addr_loc *loc)
{
	int err = pk_machine_resolve_map(m, pid, tid, addr, cpumode, loc);
	if (err)
		return pk_err(err);
	if (loc->sym)
		return 0;       /* (looked up already: a kernel address outside every map) */
	const char *s = pk_dso__symbol(loc->dso, loc->dso_addr, &loc->sym_start, &loc->sym_size);
	if (!s)
		return pk_err(-ENODATA);
	loc->sym = s;
	loc->sym_off = loc->dso_addr - loc->sym_start;
	return 0;
}

PK_API int pk_machine__resolve_data(struct pk_machine *m, uint32_t pid, uint32_t tid,
				    uint64_t addr, uint8_t cpumode, struct pk_addr_loc *loc)
{
	bool in_data = false;
	int err = pk_machine_resolve_map_in(m, pid, tid, addr, cpumode, &in_data, NULL, loc);
	if (err)
		return pk_err(err);
	const char *s = pk_dso_data_symbol(loc->dso, loc->dso_addr, in_data, &loc->sym_start,
					   &loc->sym_size);
	if (!s)
		return pk_err(-ENODATA);
	loc->sym = s;
	loc->sym_off = loc->dso_addr - loc->sym_start;
	return 0;
}
