/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/dso.c - DSOs: opening ELF files defensively, symbol tables (.symtab /
 * .dynsym through libdwfl, separate debug files, synthesised PLT entries), build-id
 * checks, source lines and inline chains from DWARF (demangling: demangle.c).
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

static size_t pk_str_hash(const char *s)
{
	size_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

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
	m->nr_dsos++;
	return d;
}

static void pk_scope_cus_free(struct pk_dso *d);

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
	pk_scope_cus_free(d);
	pk_arena_release(&d->arena);
	free(d->syms);
	free(d->dsyms);
	free(d->cus);
	free(d->segs);
	free(d->load_path);
	free(d->short_name);
	free(d->name);
	free(d);
}

/* ------------------------------------------------------------------------------------ */
/* Symbol tables                                                                        */

/*
 * a is a better name than b for the same address, by perf's rules: a symbol with a size
 * over a zero-sized one, non-weak over weak, global over local, fewer leading
 * underscores, the longer name; on a tie the one that came first.
 */
static bool pk_sym_better(const struct pk_sym *a, const struct pk_sym *b)
{
	bool sa = a->end > a->start, sb = b->end > b->start;
	if (sa != sb)
		return sa;
	bool wa = a->bind == STB_WEAK, wb = b->bind == STB_WEAK;
	if (wa != wb)
		return wb;
	bool ga = a->bind == STB_GLOBAL, gb = b->bind == STB_GLOBAL;
	if (ga != gb)
		return ga;
	size_t ua = strspn(a->name, "_"), ub = strspn(b->name, "_");
	if (ua != ub)
		return ua < ub;
	size_t la = strlen(a->name), lb = strlen(b->name);
	if (la != lb)
		return la > lb;
	return a->seq < b->seq;
}

/* by address, the best alias first */
static int pk_sym_cmp(const void *pa, const void *pb)
{
	const struct pk_sym *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a == b)
		return 0;
	return pk_sym_better(a, b) ? -1 : 1;
}

/* by address, the last alias first: /proc/kallsyms has no sizes, and perf gives the
 * last of the names at one address the size up to the next symbol, so it wins */
static int pk_ksym_cmp(const void *pa, const void *pb)
{
	const struct pk_sym *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->seq < b->seq) - (a->seq > b->seq);
}

size_t pk_syms_finish(struct pk_sym *syms, size_t nr, bool kallsyms)
{
	if (!nr)
		return 0;
	int (*cmp)(const void *, const void *) = kallsyms ? pk_ksym_cmp : pk_sym_cmp;
	for (size_t i = 0; i < nr; i++)
		syms[i].seq = (uint32_t)i;
	/* kallsyms arrives sorted by address: then only the aliases of one address need
	 * ordering */
	size_t i0 = 1;
	while (i0 < nr && syms[i0 - 1].start <= syms[i0].start)
		i0++;
	if (i0 < nr) {
		qsort(syms, nr, sizeof(*syms), cmp);
	} else {
		for (size_t a = 0, b; a < nr; a = b) {
			for (b = a + 1; b < nr && syms[b].start == syms[a].start; b++)
				;
			if (b - a > 1)
				qsort(syms + a, b - a, sizeof(*syms), cmp);
		}
	}
	size_t o = 0;
	for (size_t i = 0; i < nr; i++) {
		if (o && syms[o - 1].start == syms[i].start) {
			/* an alias: keep the first (best) name, the larger size */
			if (syms[i].end > syms[o - 1].end)
				syms[o - 1].end = syms[i].end;
			continue;
		}
		syms[o++] = syms[i];
	}
	/* zero-sized symbols extend to the next symbol (capped at a page) */
	for (size_t i = 0; i < o; i++) {
		if (syms[i].end > syms[i].start)
			continue;
		uint64_t next = i + 1 < o ? syms[i + 1].start : syms[i].start + 4096;
		if (next - syms[i].start > 4096 && i + 1 == o)
			next = syms[i].start + 4096;
		syms[i].end = next > syms[i].start ? next : syms[i].start + 1;
	}
	return o;
}

const struct pk_sym *pk_syms_find(const struct pk_sym *syms, size_t nr, uint64_t addr)
{
	/* the last symbol with start <= addr */
	size_t lo = PK_UPPER_BOUND(nr, syms[mid].start <= addr);
	if (!lo)
		return NULL;
	const struct pk_sym *s = &syms[lo - 1];
	return addr < s->end ? s : NULL;
}

struct pk_symvec {
	struct pk_sym *v;
	size_t nr, cap;
	int err;
};

static void pk_symvec_add(struct pk_symvec *sv, uint64_t start, uint64_t size, const char *name,
			  uint8_t bind)
{
	if (sv->err)
		return;
	if (sv->nr == sv->cap) {
		size_t ncap = sv->cap ? sv->cap * 2 : 1024;
		struct pk_sym *n = realloc(sv->v, ncap * sizeof(*n));
		if (!n) {
			sv->err = -ENOMEM;
			return;
		}
		sv->v = n;
		sv->cap = ncap;
	}
	sv->v[sv->nr++] = (struct pk_sym){ .start = start, .end = start + size, .name = name,
					   .bind = bind };
}

/* ------------------------------------------------------------------------------------ */
/* ELF checks (our own libelf pass over the file, read with pread: no mmap, so a file that
 * shrinks under us cannot SIGBUS this pass)                                            */

static int pk_elf_validate(struct pk_dso *d, Elf *e, uint64_t fsize)
{
	GElf_Ehdr eh;
	size_t shnum = 0, phnum = 0;

	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return -EINVAL;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN && eh.e_type != ET_REL)
		return -EINVAL;
	if (eh.e_shoff && (eh.e_shoff > fsize || eh.e_shentsize == 0 ||
			   fsize - eh.e_shoff < eh.e_shentsize))
		return -EINVAL;
	if (eh.e_phoff && (eh.e_phoff > fsize || fsize - eh.e_phoff < eh.e_phentsize))
		return -EINVAL;
	if (elf_getshdrnum(e, &shnum) < 0 || elf_getphdrnum(e, &phnum) < 0)
		return -EINVAL;
	if (shnum > 1u << 18 || phnum > 1u << 16)
		return -EINVAL;
	if (shnum && (uint64_t)shnum * eh.e_shentsize > fsize - eh.e_shoff)
		return -EINVAL;
	if (phnum && (uint64_t)phnum * eh.e_phentsize > fsize - eh.e_phoff)
		return -EINVAL;
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(e, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			return -EINVAL;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		if (sh.sh_offset > fsize || sh.sh_size > fsize - sh.sh_offset)
			return -EINVAL;
	}
	free(d->segs);
	d->segs = NULL;
	d->nr_segs = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph))
			return -EINVAL;
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_filesz && (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset))
			return -EINVAL;
		struct pk_load_seg *n = realloc(d->segs, (d->nr_segs + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->segs = n;
		d->segs[d->nr_segs++] = (struct pk_load_seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz,
							      ph.p_memsz, ph.p_flags };
	}
	d->is_dyn = eh.e_type == ET_DYN;
	d->e_machine = eh.e_machine;
	return 0;
}

static Elf_Scn *pk_elf_section(Elf *e, const char *name, GElf_Shdr *out)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return NULL;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		if (!gelf_getshdr(scn, out))
			continue;
		const char *n = elf_strptr(e, shstrndx, out->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/*
 * PLT stubs: x86 lazy-binding PLTs have one 16-byte stub per .rela.plt entry in relocation
 * order, after a 16-byte header in .plt; with IBT (-fcf-protection) the stubs that calls
 * go to live in .plt.sec, with no header. Named "func@plt" like perf does.
 */
static void pk_elf_plt_syms(struct pk_dso *d, Elf *e, struct pk_symvec *sv)
{
	GElf_Ehdr eh;
	GElf_Shdr plt, rela, dynsym;
	if (!gelf_getehdr(e, &eh) || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_386))
		return;
	Elf_Scn *rscn = pk_elf_section(e, ".rela.plt", &rela);
	if (!rscn)
		rscn = pk_elf_section(e, ".rel.plt", &rela);
	if (!rscn || (rela.sh_type != SHT_RELA && rela.sh_type != SHT_REL))
		return;
	uint64_t base, first;
	if (pk_elf_section(e, ".plt.sec", &plt)) {
		base = plt.sh_addr;
		first = 0;
	} else if (pk_elf_section(e, ".plt", &plt)) {
		base = plt.sh_addr;
		first = 1;
	} else {
		return;
	}
	const uint64_t ent = 16;
	Elf_Scn *dscn = elf_getscn(e, rela.sh_link);
	if (!dscn || !gelf_getshdr(dscn, &dynsym))
		return;
	Elf_Data *rd = elf_getdata(rscn, NULL);
	Elf_Data *sd = elf_getdata(dscn, NULL);
	if (!rd || !sd || !rela.sh_entsize)
		return;
	size_t nrel = rela.sh_size / rela.sh_entsize;
	if ((first + nrel) * ent > plt.sh_size)
		nrel = plt.sh_size / ent > first ? plt.sh_size / ent - first : 0;
	for (size_t i = 0; i < nrel; i++) {
		uint64_t info;
		if (rela.sh_type == SHT_RELA) {
			GElf_Rela r;
			if (!gelf_getrela(rd, (int)i, &r))
				break;
			info = r.r_info;
		} else {
			GElf_Rel r;
			if (!gelf_getrel(rd, (int)i, &r))
				break;
			info = r.r_info;
		}
		size_t symi = eh.e_ident[EI_CLASS] == ELFCLASS64 ? GELF_R_SYM(info)
								 : ELF32_R_SYM(info);
		GElf_Sym sym;
		const char *n = NULL;
		if (symi && gelf_getsym(sd, (int)symi, &sym))
			n = elf_strptr(e, dynsym.sh_link, sym.st_name);
		/* a stub without a symbol (an IRELATIVE ifunc slot) is "@plt", as perf 6.1
		 * names it */
		const char *dn = n && *n ? pk_demangle_into(d->machine, &d->arena, n) : "";
		if (!dn)
			continue;
		size_t len = strlen(dn) + 5;
		char *name = pk_arena_alloc(&d->arena, len);
		if (!name)
			continue;
		snprintf(name, len, "%s@plt", dn);
		pk_symvec_add(sv, base + (first + i) * ent, ent, name, STB_GLOBAL);
	}
}

/* ------------------------------------------------------------------------------------ */
/* libdwfl: one session per DSO at bias 0, with our own debuginfo finder (libdwfl's
 * standard one opens candidates with a blocking open(), which a FIFO would hang).      */

static char *pk_build_id_path(const char *debug_dir, const uint8_t *id, size_t len)
{
	if (len < 2)
		return NULL;
	size_t n = strlen(debug_dir) + 16 + 2 * len + 8;
	char *p = malloc(n);
	if (!p)
		return NULL;
	size_t o = (size_t)snprintf(p, n, "%s/.build-id/%02x/", debug_dir, id[0]);
	for (size_t i = 1; i < len && o + 3 < n; i++)
		o += (size_t)snprintf(p + o, n - o, "%02x", id[i]);
	snprintf(p + o, n - o, ".debug");
	return p;
}

/* perf's build-id cache copy: <dir>/.build-id/xx/yyyy.../elf (".../vdso" for the vdso) */
static char *pk_build_id_cache_path(const char *dir, const uint8_t *id, size_t len,
				    bool vdso)
{
	char *p = pk_build_id_path(dir, id, len);
	size_t n = p ? strlen(p) : 0;
	if (!p || n < 6)
		return p;
	char *q = realloc(p, n + 8);
	if (!q) {
		free(p);
		return NULL;
	}
	strcpy(q + n - 6, vdso ? "/vdso" : "/elf"); /* replaces ".debug" */
	return q;
}

static bool pk_file_has_build_id(const char *path, const uint8_t *id, size_t len)
{
	uint8_t b[PK_BUILD_ID_BYTES];
	size_t bl = sizeof(b);
	if (pk_build_id__read(path, b, &bl) < 0)
		return false;
	return bl == len && !memcmp(b, id, len);
}

static int pk_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct pk_dso *d = *userdata;
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	const uint8_t *id;
	size_t idlen;
	char *cand[4] = { NULL, NULL, NULL, NULL };
	int fd = -1;

	(void)modname;
	(void)base;
	(void)debuglink_crc;
	if (!d)
		return -1;
	const char *ddir = d->machine->debug_dir;
	if (d->want_bid_len) {
		id = d->want_bid;
		idlen = d->want_bid_len;
	} else {
		int n = dwfl_module_build_id(mod, &bits, &vaddr);
		id = bits;
		idlen = n > 0 ? (size_t)n : 0;
	}
	if (idlen)
		cand[0] = pk_build_id_path(ddir, id, idlen);
	if (debuglink_file && file_name && !strchr(debuglink_file, '/')) {
		char *tmp = strdup(file_name);
		if (tmp) {
			const char *dir = dirname(tmp);
			size_t n = strlen(dir) + strlen(ddir) + strlen(debuglink_file) + 16;
			for (int k = 1; k < 4; k++)
				cand[k] = malloc(n);
			if (cand[1])
				snprintf(cand[1], n, "%s/%s", dir, debuglink_file);
			if (cand[2])
				snprintf(cand[2], n, "%s/.debug/%s", dir, debuglink_file);
			if (cand[3])
				snprintf(cand[3], n, "%s%s/%s", ddir, dir, debuglink_file);
			free(tmp);
		}
	}
	struct stat self;
	bool have_self = file_name && stat(file_name, &self) == 0;
	for (int k = 0; k < 4 && fd < 0; k++) {
		if (!cand[k])
			continue;
		struct stat st;
		if (stat(cand[k], &st) < 0)
			continue;
		if (have_self && st.st_dev == self.st_dev && st.st_ino == self.st_ino)
			continue; /* the debuglink names the file itself */
		if (idlen && !pk_file_has_build_id(cand[k], id, idlen))
			continue;
		int f = pk_open_regular(cand[k], PK_DSO_MAX_FILE, NULL);
		if (f < 0)
			continue;
		/* compressed sections: the inflated copy, made once (debug-cache.c) */
		char *cp = NULL;
		int c = idlen ? pk_debug_cache_open(d->machine, f, id, idlen, &cp) : -ENOENT;
		if (c >= 0) {
			close(f);
			fd = c;
			*debuginfo_file_name = cp;
			continue;
		}
		fd = f;
		*debuginfo_file_name = cand[k];
		cand[k] = NULL;
	}
	for (int k = 0; k < 4; k++)
		free(cand[k]);
	return fd;
}

static const Dwfl_Callbacks pk_dso_dwfl_callbacks = {
	.find_elf = NULL,
	.find_debuginfo = pk_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = NULL,
};

const Dwfl_Callbacks *pk_dwfl_callbacks(void)
{
	return &pk_dso_dwfl_callbacks;
}

static void pk_dso_warn(struct pk_dso *d, const char *what, int err)
{
	if (d->warned)
		return;
	d->warned = true;
	pk_warn("cannot load symbols of '%s': %s%s%s", d->name, what, err ? ": " : "",
		err ? pk_strerror(err) : "");
}

static void pk_set_module_userdata(Dwfl_Module *mod, void *ud)
{
	void **udp = NULL;
	dwfl_module_info(mod, &udp, NULL, NULL, NULL, NULL, NULL, NULL);
	if (udp)
		*udp = ud;
}

/* Open `path`, check it, collect PLT symbols, and report it to a fresh Dwfl at bias 0. */
static int pk_dso_open_elf(struct pk_dso *d, const char *path, struct pk_symvec *sv)
{
	uint64_t fsize;
	int fd = pk_open_regular(path, PK_DSO_MAX_FILE, &fsize);
	if (fd < 0)
		return fd;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		close(fd);
		return -EINVAL;
	}
	int err = pk_elf_validate(d, e, fsize);
	if (!err)
		pk_elf_plt_syms(d, e, sv);
	elf_end(e);
	if (err) {
		close(fd);
		return err;
	}
	Dwfl *dwfl = dwfl_begin(&pk_dso_dwfl_callbacks);
	if (!dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(dwfl);
	/* libdwfl takes over fd on success */
	Dwfl_Module *mod = dwfl_report_elf(dwfl, d->short_name, path, fd, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		close(fd);
		dwfl_end(dwfl);
		return -EINVAL;
	}
	pk_set_module_userdata(mod, d);
	if (d->dwfl)
		dwfl_end(d->dwfl);
	d->dwfl = dwfl;
	d->mod = mod;
	free(d->load_path);
	d->load_path = strdup(path);
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	d->bid_len = 0;
	if (n > 0) {
		d->bid_len = PK_MIN((size_t)n, sizeof(d->bid));
		memcpy(d->bid, bits, d->bid_len);
	}
	return 0;
}

/* A NOTYPE symbol that names code: in an SHF_ALLOC section whose name has "text", not
 * absolute, not a local assembler label or an ARM mapping symbol. */
static bool pk_is_text_label(Elf *elf, GElf_Word shndx, const char *name)
{
	if (!elf || shndx == SHN_ABS || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE ||
	    name[0] == '$' || !strncmp(name, ".L", 2))
		return false;
	Elf_Scn *scn = elf_getscn(elf, shndx);
	GElf_Shdr sh;
	size_t shstrndx;
	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	const char *sn = elf_strptr(elf, shstrndx, sh.sh_name);
	return sn && strstr(sn, "text");
}

static int pk_sym_start_cmp(const void *pa, const void *pb)
{
	const struct pk_sym *a = pa, *b = pb;
	return (a->start > b->start) - (a->start < b->start);
}

/*
 * Zero-sized data objects (__TMC_END__, __bss_start's neighbours) reach to the next
 * address that has one, before the best alias of an address is chosen: perf sizes them
 * so first, then a global alias wins over a local one of the same address (perf names
 * a fault on the first .bss byte __TMC_END__, not completed.0).
 */
static void pk_data_syms_sizes(struct pk_sym *v, size_t nr)
{
	if (!nr)
		return; /* (v may be NULL) */
	qsort(v, nr, sizeof(*v), pk_sym_start_cmp);
	for (size_t i = 0, j = 0; i < nr; i++) {
		if (v[i].end > v[i].start)
			continue;
		if (j <= i)
			j = i + 1;
		while (j < nr && v[j].start == v[i].start)
			j++;
		uint64_t next = j < nr ? v[j].start : v[i].start + 1;
		v[i].end = next - v[i].start > 4096 ? v[i].start + 4096 : next;
	}
}

/* The function symbols of the module into sv, its data objects into dv. */
static void pk_dso_collect_symtab(struct pk_dso *d, struct pk_symvec *sv, struct pk_symvec *dv)
{
	int n = dwfl_module_getsymtab(d->mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(d->mod, i, &sym, &addr, &shndx, &elf,
							   &bias);
		if (!name || !*name || shndx == SHN_UNDEF)
			continue;
		int t = GELF_ST_TYPE(sym.st_info);
		if (t == STT_OBJECT) {
			/* data: kept apart, so that code addresses never resolve to it. Absolute
			 * ones (version names, GLIBC_PRIVATE) are no addresses. */
			if (shndx == SHN_ABS)
				continue;
			const char *dn = pk_demangle_into(d->machine, &d->arena, name);
			if (dn)
				pk_symvec_add(dv, addr, sym.st_size, dn,
					      (uint8_t)GELF_ST_BIND(sym.st_info));
			continue;
		}
		if (t == STT_NOTYPE) {
			/* a code label (ld.so's _start): kept, as perf keeps it, when it
			 * lies in an allocated text section */
			if (!pk_is_text_label(elf, shndx, name))
				continue;
		} else if (t != STT_FUNC && t != STT_GNU_IFUNC) {
			continue;
		}
		/* names are kept as the table has them: a debug file's .symtab holds literal
		 * "memcpy@@GLIBC_2.14" aliases, which perf shows as they are */
		const char *dn = pk_demangle_into(d->machine, &d->arena, name);
		if (dn)
			pk_symvec_add(sv, addr, sym.st_size, dn, (uint8_t)GELF_ST_BIND(sym.st_info));
	}
}

static int pk_dso_load_elf(struct pk_dso *d)
{
	struct pk_symvec sv = { 0 };
	const char *path = d->name;
	int err;

	if (d->kind == PK_DSO_VDSO) {
		/* this machine's vdso only for a recording made here */
		if (d->memfd < 0 && d->machine->host)
			d->memfd = pk_vdso_memfd();
		if (d->memfd < 0) {
			/* another machine's, or none here (valgrind hides it): the cache */
			err = d->machine->host ? d->memfd : -ENOENT;
		} else {
			char p[64];
			snprintf(p, sizeof(p), "/proc/self/fd/%d", d->memfd);
			err = pk_dso_open_elf(d, p, &sv);
		}
	} else {
		err = pk_dso_open_elf(d, path, &sv);
	}
	/* the recorded file is gone or was rebuilt: perf's build-id cache may hold it (perf
	 * record also keeps the vdso image there) */
	const char *bdirs[] = { d->machine->buildid_dir, d->machine->perf_buildid_dir };
	for (size_t k = 0; k < PK_ARRAY_SIZE(bdirs); k++) {
		if (!bdirs[k] || !(d->kind == PK_DSO_ELF || d->kind == PK_DSO_VDSO) ||
		    !d->want_bid_len ||
		    !(err || (d->bid_len && (d->bid_len != d->want_bid_len ||
					     memcmp(d->bid, d->want_bid, d->bid_len)))))
			continue;
		char *cp = pk_build_id_cache_path(bdirs[k], d->want_bid, d->want_bid_len,
						  d->kind == PK_DSO_VDSO);
		if (cp && pk_file_has_build_id(cp, d->want_bid, d->want_bid_len)) {
			if (d->dwfl)
				dwfl_end(d->dwfl);
			d->dwfl = NULL;
			d->mod = NULL;
			sv.nr = 0;
			err = pk_dso_open_elf(d, cp, &sv);
		}
		free(cp);
	}
	if (!err && d->want_bid_len && d->bid_len &&
	    (d->bid_len != d->want_bid_len || memcmp(d->bid, d->want_bid, d->bid_len))) {
		/* not the file that was recorded: its symbols would be wrong. A debug file
		 * carrying the recorded build-id still has the right symbol table. */
		d->warned = true;
		dwfl_end(d->dwfl);
		d->dwfl = NULL;
		d->mod = NULL;
		sv.nr = 0;
		char *dp = pk_build_id_path(d->machine->debug_dir, d->want_bid, d->want_bid_len);
		err = dp ? pk_dso_open_elf(d, dp, &sv) : -ENOMEM;
		if (err)
			err = -ESTALE;
		else
			pk_warn("build-id mismatch for '%s' (the file changed since the "
				"recording): using the debug file '%s'", d->name, dp);
		free(dp);
	}
	if (err) {
		free(sv.v);
		return err;
	}
	struct pk_symvec dv = { 0 };
	pk_dso_collect_symtab(d, &sv, &dv);
	if (sv.err || dv.err) {
		free(sv.v);
		free(dv.v);
		return sv.err ? sv.err : dv.err;
	}
	d->nr_syms = pk_syms_finish(sv.v, sv.nr, false);
	d->syms = sv.v;
	pk_data_syms_sizes(dv.v, dv.nr);
	d->nr_dsyms = pk_syms_finish(dv.v, dv.nr, false);
	d->dsyms = dv.v;
	return 0;
}

int pk_dso_ensure_loaded(struct pk_dso *d)
{
	if (d->loaded)
		return d->load_err;
	d->loaded = true;
	elf_version(EV_CURRENT);
	int err;
	switch (d->kind) {
	case PK_DSO_ELF:
	case PK_DSO_VDSO:
		err = pk_dso_load_elf(d);
		break;
	case PK_DSO_KERNEL:
	case PK_DSO_MODULE:
		err = pk_kernel_syms_load(d->machine);
		break;
	case PK_DSO_JIT:
		err = pk_dso_load_jit(d);
		break;
	default:
		err = -ENOENT;
		break;
	}
	d->load_err = err;
	if (err == -ESTALE)
		pk_warn("build-id mismatch for '%s' (the file changed since the recording) and "
			"no debug file with the recorded build-id: no symbols (install its debug "
			"package)", d->name);
	else if (err && d->kind == PK_DSO_ELF && !d->data_only)
		pk_dso_warn(d, "cannot read it as ELF", err);
	return err;
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
	return d && (d->kind == PK_DSO_KERNEL || d->kind == PK_DSO_MODULE);
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
	return pk_syms_find(d->syms, d->nr_syms, addr);
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
	return s->name;
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
	return s->name;
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
		const struct pk_machine *m = d->machine;
		for (size_t i = 0; i < m->kview.nr; i++) {
			struct pk_sym s;
			pk_ksym_view_get(&m->kview, i, &s);
			if (!strcmp(s.name, name)) {
				if (addr)
					*addr = s.start + m->kview_delta;
				return 0;
			}
		}
		v = m->ksyms;
		n = m->nr_ksyms;
	}
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v[i].name, name)) {
			if (addr)
				*addr = v[i].start;
			return 0;
		}
	}
	return pk_err(-ENOENT);
}

/* ------------------------------------------------------------------------------------ */
/* Source lines and inline chains                                                       */

struct pk_srcline_ent {
	const char *file;
	unsigned int line;
	int err;
};

struct pk_inline_ent {
	int nr;                 /* frames, or negative errno */
	bool lines;             /* with file and line (not pk_dso__inline_names only) */
	struct pk_inline_frame *frames;
};

static Dwfl_Module *pk_dso_dwarf_mod(struct pk_dso *d)
{
	if (d->kind != PK_DSO_ELF && d->kind != PK_DSO_VDSO)
		return NULL;
	if (pk_dso_ensure_loaded(d) || !d->mod)
		return NULL;
	return d->mod;
}

static int pk_cu_range_cmp(const void *pa, const void *pb)
{
	const struct pk_cu_range *a = pa, *b = pb;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static void pk_dso_build_cus(struct pk_dso *d, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	size_t cap = 0;
	d->cus_built = true;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t it = 0;
			while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (d->nr_cus == cap) {
					size_t nc = cap ? cap * 2 : 64;
					struct pk_cu_range *n = realloc(d->cus, nc * sizeof(*n));
					if (!n)
						return;
					d->cus = n;
					cap = nc;
				}
				d->cus[d->nr_cus++] = (struct pk_cu_range){ lo, hi, off + hsize };
			}
		}
		off = next;
	}
	if (d->nr_cus)
		qsort(d->cus, d->nr_cus, sizeof(*d->cus), pk_cu_range_cmp);
}

/* The CU DIE containing `addr`: libdwfl's aranges first, then our CU range table. */
static bool pk_dso_addr_cu(struct pk_dso *d, Dwfl_Module *mod, uint64_t addr, Dwarf_Die *out,
			   Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
	if (cu) {
		*out = *cu;
		return true;
	}
	Dwarf *dw = dwfl_module_getdwarf(mod, bias);
	if (!dw)
		return false;
	if (!d->cus_built)
		pk_dso_build_cus(d, dw);
	uint64_t a = addr - *bias;
	size_t lo = PK_UPPER_BOUND(d->nr_cus, d->cus[mid].lo <= a);
	/* ranges of different CUs may interleave: look back a little */
	for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++) {
		const struct pk_cu_range *r = &d->cus[i - 1];
		if (a >= r->lo && a < r->hi)
			return dwarf_offdie(dw, r->die_off, out) != NULL;
	}
	return false;
}

static int pk_dso_srcline_uncached(struct pk_dso *d, uint64_t addr, const char **file,
				   unsigned int *line)
{
	Dwfl_Module *mod = pk_dso_dwarf_mod(d);
	if (!mod)
		return -ENOENT;
	int lineno = 0;
	const char *f = NULL;
	Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
	if (l) {
		f = dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL);
	} else {
		Dwarf_Die cu;
		Dwarf_Addr bias = 0;
		if (!pk_dso_addr_cu(d, mod, addr, &cu, &bias))
			return -ENOENT;
		Dwarf_Line *dl = dwarf_getsrc_die(&cu, addr - bias);
		if (!dl)
			return -ENOENT;
		f = dwarf_linesrc(dl, NULL, NULL);
		dwarf_lineno(dl, &lineno);
	}
	if (!f)
		return -ENOENT;
	*file = f;      /* owned by the module's Dwarf, alive as long as the DSO */
	*line = lineno > 0 ? (unsigned int)lineno : 0;
	return 0;
}

PK_API int pk_dso__srcline(struct pk_dso *d, uint64_t addr, const char **file,
			   unsigned int *line)
{
	if (!d || !file || !line)
		return pk_err(-EINVAL);
	struct pk_srcline_ent *e = pk_u64map_get(&d->srclines, addr);
	if (!e) {
		e = pk_arena_alloc(&d->arena, sizeof(*e));
		if (!e)
			return pk_err(-ENOMEM);
		e->err = pk_dso_srcline_uncached(d, addr, &e->file, &e->line);
		if (pk_u64map_put(&d->srclines, addr, e))
			return pk_err(-ENOMEM);
	}
	if (e->err)
		return pk_err(e->err);
	*file = e->file;
	*line = e->line;
	return 0;
}

static const char *pk_die_funcname(struct pk_dso *d, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	if (n)
		return pk_demangle_into(d->machine, &d->arena, n);
	n = dwarf_diename(die);
	return n ? n : "??";
}

/*
 * ---- scope trees ----
 * The inline chain of an address is the physical nesting of the innermost scope DIE that
 * contains it: dwarf_getscopes (which finds that DIE) and dwarf_getscopes_die (its
 * ancestors) walk the CU's DIE tree again for every address, twice, and reading the
 * attributes of every DIE on the way was a quarter of a report of a DWARF recording. A
 * CU's tree of DIEs with address ranges is read once instead (the DIEs libdw's scope walk
 * can reach: children of the tags it descends into, imported units walked in place, DIEs
 * without ranges pruned with their subtrees); an address then descends it, taking at each
 * level the first child that contains it, exactly as that walk does.
 */
#define PK_SCOPE_NONE UINT32_MAX
#define PK_SCOPE_MAX_DEPTH 512  /* deeper nesting (only hostile input) is not descended */

struct pk_scope {
	Dwarf_Die die;
	uint32_t parent, kid, last_kid, next;
	uint32_t r0, nr;        /* ranges rg[r0 .. r0 + nr) */
};

struct pk_scope_cu {
	struct pk_scope_cu *next;
	struct pk_scope *v;
	size_t n, cap;
	uint64_t (*rg)[2];
	size_t nrg, caprg;
	uint32_t kid, last_kid; /* the top-level scopes */
	bool failed;            /* no memory: use libdw's walk */
};

static void pk_scope_cus_free(struct pk_dso *d)
{
	for (struct pk_scope_cu *c = d->scope_list, *n; c; c = n) {
		n = c->next;
		free(c->v);
		free(c->rg);
		free(c);
	}
	d->scope_list = NULL;
	pk_u64map_release(&d->scope_cus);
}

static bool pk_may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_module: case DW_TAG_lexical_block:
	case DW_TAG_with_stmt: case DW_TAG_catch_block: case DW_TAG_try_block:
	case DW_TAG_entry_point: case DW_TAG_inlined_subroutine: case DW_TAG_subprogram:
	case DW_TAG_namespace: case DW_TAG_class_type: case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

/* Add die (with its ranges) under parent; false when out of memory. */
static bool pk_scope_add(struct pk_scope_cu *c, Dwarf_Die *die, uint32_t parent, uint32_t *id)
{
	size_t r0 = c->nrg;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (c->nrg >= UINT32_MAX)
			return false; /* (r0 and nr are 32-bit) */
		if (c->nrg == c->caprg) {
			size_t nc = c->caprg ? c->caprg * 2 : 64;
			void *p = realloc(c->rg, nc * sizeof(*c->rg));
			if (!p)
				return false;
			c->rg = p;
			c->caprg = nc;
		}
		c->rg[c->nrg][0] = lo;
		c->rg[c->nrg][1] = hi;
		c->nrg++;
	}
	if (c->nrg == r0) {
		*id = PK_SCOPE_NONE; /* no address ranges: pruned, as by the scope walk */
		return true;
	}
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 64;
		if (nc > PK_SCOPE_NONE)
			return false;
		void *p = realloc(c->v, nc * sizeof(*c->v));
		if (!p)
			return false;
		c->v = p;
		c->cap = nc;
	}
	uint32_t i = (uint32_t)c->n++;
	c->v[i] = (struct pk_scope){ .die = *die, .parent = parent, .kid = PK_SCOPE_NONE,
				     .last_kid = PK_SCOPE_NONE, .next = PK_SCOPE_NONE,
				     .r0 = (uint32_t)r0, .nr = (uint32_t)(c->nrg - r0) };
	uint32_t *first = parent == PK_SCOPE_NONE ? &c->kid : &c->v[parent].kid;
	uint32_t *last = parent == PK_SCOPE_NONE ? &c->last_kid : &c->v[parent].last_kid;
	if (*last == PK_SCOPE_NONE)
		*first = i;
	else
		c->v[*last].next = i;
	*last = i;
	*id = i;
	return true;
}

struct pk_scope_import {
	const void *addr;
	const struct pk_scope_import *up;
};

/* The children of `die` (and of the units it imports, in place) under parent. */
static bool pk_scope_walk(struct pk_scope_cu *c, Dwarf_Die *die, uint32_t parent,
			  const struct pk_scope_import *imports, unsigned int depth)
{
	Dwarf_Die child;
	if (depth > PK_SCOPE_MAX_DEPTH || dwarf_child(die, &child) != 0)
		return true;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_imported_unit) {
			Dwarf_Attribute a;
			Dwarf_Die unit;
			if (dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &a), &unit) &&
			    dwarf_tag(&unit) != DW_TAG_compile_unit) {
				bool cycle = false;
				for (const struct pk_scope_import *i = imports; i && !cycle; i = i->up)
					cycle = i->addr == child.addr;
				struct pk_scope_import here = { child.addr, imports };
				if (!cycle && !pk_scope_walk(c, &unit, parent, &here, depth + 1))
					return false;
			}
			continue;
		}
		uint32_t id;
		if (!pk_scope_add(c, &child, parent, &id))
			return false;
		if (id != PK_SCOPE_NONE && pk_may_have_scopes(tag) && dwarf_haschildren(&child) > 0 &&
		    !pk_scope_walk(c, &child, id, imports, depth + 1))
			return false;
	} while (dwarf_siblingof(&child, &child) == 0);
	return true;
}

static struct pk_scope_cu *pk_scope_cu_get(struct pk_dso *d, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu);
	struct pk_scope_cu *c = pk_u64map_get(&d->scope_cus, key);
	if (c)
		return c->failed ? NULL : c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->kid = c->last_kid = PK_SCOPE_NONE;
	c->next = d->scope_list;
	d->scope_list = c;
	if (!pk_scope_walk(c, cu, PK_SCOPE_NONE, NULL, 0) ||
	    pk_u64map_put(&d->scope_cus, key, c)) {
		c->failed = true;
		pk_u64map_put(&d->scope_cus, key, c);
		return NULL;
	}
	return c;
}

/* The innermost scope containing pc and its ancestors (innermost first) into *out
 * (malloc'd); the count, 0 if no scope contains pc. */
static int pk_scope_chain(const struct pk_scope_cu *c, Dwarf_Addr pc, Dwarf_Die **out)
{
	uint32_t cur = PK_SCOPE_NONE, depth = 0;
	for (uint32_t k = c->kid; k != PK_SCOPE_NONE;) {
		const struct pk_scope *s = &c->v[k];
		bool in = false;
		for (uint32_t r = 0; r < s->nr && !in; r++)
			in = pc >= c->rg[s->r0 + r][0] && pc < c->rg[s->r0 + r][1];
		if (in) {
			cur = k;
			depth++;
			k = s->kid;
		} else {
			k = s->next;
		}
	}
	if (cur == PK_SCOPE_NONE)
		return 0;
	Dwarf_Die *v = malloc(depth * sizeof(*v));
	if (!v)
		return -ENOMEM;
	int n = 0;
	for (uint32_t k = cur; k != PK_SCOPE_NONE; k = c->v[k].parent)
		v[n++] = c->v[k].die;
	*out = v;
	return n;
}

static int pk_dso_inlines_uncached(struct pk_dso *d, uint64_t addr,
				   struct pk_inline_frame **out, bool lines)
{
	Dwfl_Module *mod = pk_dso_dwarf_mod(d);
	if (!mod)
		return -ENOENT;
	Dwarf_Addr bias = 0;
	Dwarf_Die cu_mem, *cu = &cu_mem;
	if (!pk_dso_addr_cu(d, mod, addr, &cu_mem, &bias))
		return -ENOENT;
	Dwarf_Die *scopes = NULL;
	int n;
	struct pk_scope_cu *sc = d->machine && d->machine->scopes_libdw ? NULL : pk_scope_cu_get(d, cu);
	if (sc) {
		n = pk_scope_chain(sc, addr - bias, &scopes);
		if (n <= 0)
			return n < 0 ? n : -ENOENT;
	} else {
		n = dwarf_getscopes(cu, addr - bias, &scopes);
		if (n <= 0) {
			free(scopes);
			return -ENOENT;
		}
		/* dwarf_getscopes continues an inlined instance with the scopes of its
		 * abstract definition; the physical nesting (inlined instance -> the
		 * function it was inlined into -> ...) is what an inline chain needs. */
		Dwarf_Die inner = scopes[0];
		free(scopes);
		scopes = NULL;
		n = dwarf_getscopes_die(&inner, &scopes);
		if (n <= 0) {
			free(scopes);
			return -ENOENT;
		}
	}
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (lines && dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;

	int nf = 0;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
			nf++;
		if (tag == DW_TAG_subprogram)
			break;
	}
	if (!nf) {
		free(scopes);
		return -ENOENT;
	}
	struct pk_inline_frame *fr = pk_arena_alloc(&d->arena, (size_t)nf * sizeof(*fr));
	if (!fr) {
		free(scopes);
		return -ENOMEM;
	}
	const char *file = NULL;
	unsigned int line = 0;
	if (lines)
		pk_dso__srcline(d, addr, &file, &line);
	int k = 0;
	for (int i = 0; i < n && k < nf; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		fr[k].func = pk_die_funcname(d, &scopes[i]);
		fr[k].file = file ? file : lines ? "??" : NULL;
		fr[k].line = line;
		k++;
		if (tag == DW_TAG_subprogram)
			break;
		if (!lines)
			continue;
		/* the caller's location: this inlined instance's call site */
		Dwarf_Attribute a;
		Dwarf_Word cf = 0, cl = 0;
		file = NULL;
		line = 0;
		if (dwarf_attr(&scopes[i], DW_AT_call_file, &a) && dwarf_formudata(&a, &cf) == 0 &&
		    files && cf < nfiles)
			file = dwarf_filesrc(files, cf, NULL, NULL);
		if (dwarf_attr(&scopes[i], DW_AT_call_line, &a) && dwarf_formudata(&a, &cl) == 0)
			line = (unsigned int)cl;
	}
	free(scopes);
	*out = fr;
	return k;
}

static int pk_dso_inlines_get(struct pk_dso *d, uint64_t addr,
			      const struct pk_inline_frame **frames, bool lines)
{
	if (!d || !frames)
		return pk_err(-EINVAL);
	struct pk_inline_ent *e = pk_u64map_get(&d->inlines, addr);
	if (e && lines && !e->lines) {
		/* looked up for names only before: again with the source locations */
		e->nr = pk_dso_inlines_uncached(d, addr, &e->frames, true);
		e->lines = true;
	}
	if (!e) {
		e = pk_arena_alloc(&d->arena, sizeof(*e));
		if (!e)
			return pk_err(-ENOMEM);
		e->nr = pk_dso_inlines_uncached(d, addr, &e->frames, lines);
		e->lines = lines;
		if (pk_u64map_put(&d->inlines, addr, e))
			return pk_err(-ENOMEM);
	}
	if (e->nr < 0)
		return pk_err(e->nr);
	*frames = e->frames;
	return e->nr;
}

PK_API int pk_dso__inlines(struct pk_dso *d, uint64_t addr, const struct pk_inline_frame **frames)
{
	return pk_dso_inlines_get(d, addr, frames, true);
}

PK_API int pk_dso__inline_names(struct pk_dso *d, uint64_t addr,
				const struct pk_inline_frame **frames)
{
	return pk_dso_inlines_get(d, addr, frames, false);
}
