/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/dso.c - DSO objects: opening files defensively, the machine's table of DSOs
 * by name, and the public DSO API (names, build-id, addresses, symbol look-ups). Loading
 * a DSO's ELF file and symbols is in dso-load.c, finding its debug file in debuginfo.c,
 * sorted symbol tables in syms.c, source lines and inline chains in srcline.c
 * (demangling: demangle.c).
 */
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include "internal.h"
#include "symbol-internal.h"
#include "dso-internal.h"
#include <perfkit/data.h>

/* ------------------------------------------------------------------------------------ */
/* Opening files                                                                        */

int pk_open_regular(const char *path, uint64_t max_size, uint64_t *size)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer; O_NOCTTY: a tty
	 * named by a hostile record must not become our controlling terminal. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	if ((uint64_t)st.st_size > max_size) {
		close(fd);
		return -EFBIG;
	}
	/* back to blocking reads: a regular file never blocks, and libelf retries EAGAIN
	 * poorly */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (size)
		*size = (uint64_t)st.st_size;
	return fd;
}

/* ------------------------------------------------------------------------------------ */
/* DSO table                                                                            */

static enum pk_dso_kind pk_dso_classify(const char *name)
{
	if (!strncmp(name, "[kernel.kallsyms]", 17) || !strncmp(name, "[guest.kernel", 13))
		return PK_DSO_KERNEL;
	if (!strcmp(name, "[vdso]"))
		return PK_DSO_VDSO;
	if (!strcmp(name, "[vsyscall]"))
		return PK_DSO_VSYSCALL;
	if (!strcmp(name, "[unknown]"))
		return PK_DSO_UNKNOWN;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	size_t bl = strlen(base);
	if (!strncmp(base, "perf-", 5) && bl > 9 && !strcmp(base + bl - 4, ".map"))
		return PK_DSO_JIT;
	if (name[0] == '[' || !strncmp(name, "//anon", 6) || !strncmp(name, "/memfd:", 7) ||
	    !strncmp(name, "/dev/zero", 9) || !strncmp(name, "/SYSV", 5) ||
	    !strncmp(name, "/anon_hugepage", 14))
		return PK_DSO_ANON;
	return PK_DSO_ELF;
}

struct pk_dso *pk_dso_findnew(struct pk_machine *m, const char *name)
{
	if (m->dso_hash_cap == 0 || m->nr_dsos * 2 >= m->dso_hash_cap) {
		size_t ncap = m->dso_hash_cap ? m->dso_hash_cap * 2 : 256;
		struct pk_dso **nh = calloc(ncap, sizeof(*nh));
		if (!nh)
			return pk_err_ptr(-ENOMEM);
		for (size_t i = 0; i < m->dso_hash_cap; i++) {
			struct pk_dso *d = m->dso_hash[i];
			while (d) {
				struct pk_dso *n = d->hnext;
				size_t b = pk_str_hash(d->name) & (ncap - 1);
				d->hnext = nh[b];
				nh[b] = d;
				d = n;
			}
		}
		free(m->dso_hash);
		m->dso_hash = nh;
		m->dso_hash_cap = ncap;
	}
	size_t b = pk_str_hash(name) & (m->dso_hash_cap - 1);
	for (struct pk_dso *d = m->dso_hash[b]; d; d = d->hnext)
		if (!strcmp(d->name, name))
			return d;

	struct pk_dso *d = calloc(1, sizeof(*d));
	if (!d)
		return pk_err_ptr(-ENOMEM);
	d->machine = m;
	d->memfd = -1;
	d->kind = pk_dso_classify(name);
	d->name = strdup(name);
	if (!d->name) {
		free(d);
		return pk_err_ptr(-ENOMEM);
	}
	if (d->kind == PK_DSO_KERNEL) {
		d->short_name = strdup("[kernel.kallsyms]");
	} else if (name[0] == '/' && (d->kind == PK_DSO_ELF || d->kind == PK_DSO_JIT ||
				      !strncmp(name, "/memfd:", 7))) {
		/* perf shows a memfd map like a file's: "memfd:name (deleted)" */
		const char *s = strrchr(name, '/');
		d->short_name = strdup(s + 1);
	} else {
		d->short_name = strdup(name);
	}
	if (!d->short_name) {
		free(d->name);
		free(d);
		return pk_err_ptr(-ENOMEM);
	}
	d->hnext = m->dso_hash[b];
	m->dso_hash[b] = d;
	d->seq = (uint32_t)m->nr_dsos++;
	return d;
}

struct pk_dso *pk_dso_new_ksym(struct pk_machine *m, const char *name)
{
	struct pk_dso *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->machine = m;
	d->memfd = -1;
	d->kind = PK_DSO_KSYM;
	d->loaded = true;       /* nothing to read: the records give its symbols */
	d->mapped_code = true;
	d->name = strdup(name);
	d->short_name = strdup(name);
	if (!d->name || !d->short_name) {
		pk_dso_free(d);
		return NULL;
	}
	d->hnext = m->ksym_dsos;
	m->ksym_dsos = d;
	d->seq = (uint32_t)m->nr_dsos++;
	return d;
}

int pk_dso_ksym_add(struct pk_dso *d, uint64_t start, uint64_t len, const char *name)
{
	if (d->nr_syms >= PK_KSYM_SYMS_MAX)
		return -ENOSPC;
	struct pk_sym *v = realloc(d->syms, (d->nr_syms + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	d->syms = v;
	const char *n = pk_arena_strdup(&d->arena, name);
	if (!n)
		return -ENOMEM;
	v[d->nr_syms] = (struct pk_sym){ .start = start, .end = start + len, .name = n,
					 .seq = (uint32_t)d->nr_syms };
	d->nr_syms++;
	return 0;
}

void pk_dso_free(struct pk_dso *d)
{
	if (!d)
		return;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	if (d->memfd >= 0)
		close(d->memfd);
	pk_u64map_release(&d->srclines);
	pk_u64map_release(&d->inlines);
	pk_u64map_release(&d->funcnames);
	pk_scope_cus_free(d);
	pk_arena_release(&d->arena);
	pk_plt_view_free(d->plt_view); /* read at open, normally freed by the load */
	free(d->syms);
	free(d->dsyms);
	free(d->cus);
	free(d->fnfiles);
	free(d->segs);
	free(d->load_path);
	free(d->kmod_path);
	free(d->short_name);
	free(d->name);
	free(d);
}

/* ------------------------------------------------------------------------------------ */
/* Public DSO API                                                                       */

PK_API struct pk_dso *pk_machine__dso(struct pk_machine *m, const char *path)
{
	if (!m || !path)
		return pk_err_ptr(-EINVAL);
	return pk_dso_findnew(m, path);
}

PK_API const char *pk_dso__name(const struct pk_dso *d)
{
	return d ? d->name : "[unknown]";
}

PK_API const char *pk_dso__short_name(const struct pk_dso *d)
{
	return d ? d->short_name : "[unknown]";
}

PK_API bool pk_dso__is_kernel(const struct pk_dso *d)
{
	return d && (d->kind == PK_DSO_KERNEL || d->kind == PK_DSO_MODULE ||
		     d->kind == PK_DSO_KSYM);
}

PK_API int pk_dso__load(struct pk_dso *d)
{
	if (!d)
		return pk_err(-EINVAL);
	int err = pk_dso_ensure_loaded(d);
	if (err)
		return pk_err(err);
	if (d->kind == PK_DSO_KERNEL || d->kind == PK_DSO_MODULE)
		return (int)PK_MIN(d->machine->nr_ksyms + d->machine->kview.nr, (size_t)INT32_MAX);
	return (int)PK_MIN(d->nr_syms, (size_t)INT32_MAX);
}

PK_API size_t pk_dso__build_id(struct pk_dso *d, const uint8_t **id)
{
	if (!d)
		return 0;
	pk_dso_ensure_loaded(d);
	if (id)
		*id = d->bid;
	return d->bid_len;
}

PK_API uint64_t pk_dso__offset_to_addr(struct pk_dso *d, uint64_t off)
{
	if (!d || (d->kind != PK_DSO_ELF && d->kind != PK_DSO_VDSO))
		return off;
	pk_dso_ensure_loaded(d);
	for (size_t i = 0; i < d->nr_segs; i++) {
		const struct pk_load_seg *s = &d->segs[i];
		if (off >= s->offset && off - s->offset < PK_MAX(s->filesz, s->memsz))
			return off - s->offset + s->vaddr;
	}
	if (d->nr_segs)
		return off - d->segs[0].offset + d->segs[0].vaddr;
	return off;
}

/*
 * The ELF address of the first byte of an executable mapping of d made at file offset
 * pgoff (the maps a machine keeps are the executable ones: data maps are dropped).
 * ld.so (and the kernel for the program) maps each PT_LOAD from its offset rounded down
 * to a page, so a mapping belongs to the segment whose rounded-down offset is pgoff.
 * GNU ld pads segments to page boundaries in the file and the segment containing pgoff
 * is that one; lld packs them: its r-x segment of a Rust program starts at offset
 * 0x13bc0, address 0x14bc0, right after the r-- one ending at 0x13bb4 (the mapping's
 * pgoff 0x13000 lies inside the r-- segment), and in a small C program every segment
 * starts in file page 0 (all four mappings have pgoff 0). In order:
 *  - the executable segment starting in page pgoff (4 KiB pages tried first, then 16
 *    and 64 KiB: arm64 kernels);
 *  - the executable segment whose pages hold pgoff (a mapping split by mprotect; the
 *    segment after it may start in its last page);
 *  - any segment starting in page pgoff, then any holding pgoff.
 */
static uint64_t pk_seg_addr(const struct pk_load_seg *s, uint64_t pgoff)
{
	return s->vaddr - (s->offset - pgoff);
}

uint64_t pk_dso_map_vaddr(struct pk_dso *d, uint64_t pgoff)
{
	if (!d || (d->kind != PK_DSO_ELF && d->kind != PK_DSO_VDSO))
		return pgoff;
	pk_dso_ensure_loaded(d);
	const struct pk_load_seg *starts = NULL;
	for (uint64_t page = 4096; page <= 65536 && !(pgoff & (page - 1)); page *= 4) {
		for (size_t i = 0; i < d->nr_segs; i++) {
			const struct pk_load_seg *s = &d->segs[i];
			if ((s->offset & ~(page - 1)) != pgoff)
				continue;
			if (s->flags & PF_X)
				return pk_seg_addr(s, pgoff);
			if (!starts)
				starts = s;
		}
	}
	for (size_t i = 0; i < d->nr_segs; i++) {
		const struct pk_load_seg *s = &d->segs[i];
		if ((s->flags & PF_X) && pgoff >= (s->offset & ~4095ULL) &&
		    pgoff - s->offset < PK_MAX(s->filesz, s->memsz))
			return pk_seg_addr(s, pgoff);
	}
	if (starts)
		return pk_seg_addr(starts, pgoff);
	return pk_dso__offset_to_addr(d, pgoff);
}

static const struct pk_sym *pk_dso_find_sym(struct pk_dso *d, uint64_t addr)
{
	if (pk_dso_ensure_loaded(d))
		return NULL;
	if (d->kind == PK_DSO_KERNEL || d->kind == PK_DSO_MODULE) {
		struct pk_machine *m = d->machine;
		if (!m->kview.nr)
			return pk_syms_find(m->ksyms, m->nr_ksyms, addr);
		/* the cache in place: found unshifted, returned shifted (valid until the
		 * next look-up; callers copy what they need) */
		struct pk_sym *s = &m->kscratch;
		if (!pk_ksym_view_find(&m->kview, addr - m->kview_delta, s))
			return NULL;
		s->start += m->kview_delta;
		s->end += m->kview_delta;
		return s;
	}
	if (d->kind == PK_DSO_KSYM) {
		/* a few symbols, which may overlap (a register inside another's map adds
		 * one at the map's start): the first registered that holds addr */
		for (size_t i = 0; i < d->nr_syms; i++)
			if (addr >= d->syms[i].start && addr < d->syms[i].end)
				return &d->syms[i];
		return NULL;
	}
	return pk_syms_find(d->syms, d->nr_syms, addr);
}

const char *pk_dso_sym_name(struct pk_dso *d, const struct pk_sym *s)
{
	if (s->raw) {
		/* d's own table (only those are raw), not a copy */
		struct pk_sym *w = (struct pk_sym *)(uintptr_t)s;
		const char *n = pk_demangle_into(d->machine, &d->arena, w->name);
		if (n) {
			w->name = n;
			w->raw = false;
		}
	}
	return s->name;
}

PK_API const char *pk_dso__symbol(struct pk_dso *d, uint64_t addr, uint64_t *start,
				  uint64_t *size)
{
	if (!d)
		return NULL;
	const struct pk_sym *s = pk_dso_find_sym(d, addr);
	if (!s)
		return NULL;
	if (start)
		*start = s->start;
	if (size)
		*size = s->end - s->start;
	return pk_dso_sym_name(d, s);
}

/* The symbol holding a data address: in a data mapping a data object; in a code
 * mapping (a fault on an instruction) a function, or an object the function symbols
 * leave uncovered. NULL when none. */
const char *pk_dso_data_symbol(struct pk_dso *d, uint64_t addr, bool in_data, uint64_t *start,
			       uint64_t *size)
{
	if (!d || pk_dso_ensure_loaded(d))
		return NULL;
	const struct pk_sym *s = d->nr_dsyms ? pk_syms_find(d->dsyms, d->nr_dsyms, addr) : NULL;
	uint64_t fs = 0, fz = 0;
	const char *fn = in_data ? NULL : pk_dso__symbol(d, addr, &fs, &fz);
	if (fn || !s) {
		*start = fs;
		*size = fz;
		return fn;
	}
	*start = s->start;
	*size = s->end - s->start;
	return pk_dso_sym_name(d, s);
}

PK_API int pk_dso__symbol_addr(struct pk_dso *d, const char *name, uint64_t *addr)
{
	if (!d || !name)
		return pk_err(-EINVAL);
	if (pk_dso_ensure_loaded(d))
		return pk_err(-ENOENT);
	const struct pk_sym *v = d->syms;
	size_t n = d->nr_syms;
	if (d->kind == PK_DSO_KERNEL || d->kind == PK_DSO_MODULE) {
		struct pk_machine *m = d->machine;
		uint64_t start;
		if (m->kview.nr && !pk_ksym_view_find_name(&m->kview, name, &start)) {
			if (addr)
				*addr = start + m->kview_delta;
			return 0;
		}
		v = m->ksyms;
		n = m->nr_ksyms;
	}
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(pk_dso_sym_name(d, &v[i]), name)) {
			if (addr)
				*addr = v[i].start;
			return 0;
		}
	}
	return pk_err(-ENOENT);
}

uint32_t pk_dso_seq(const struct pk_dso *d)
{
	return d ? d->seq : 0;
}
