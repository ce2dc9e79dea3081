/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/dso-load.c - loading a DSO: its ELF file checked by our own libelf pass,
 * reported to a libdwfl session of its own, and read into symbol tables (.symtab /
 * .dynsym, synthesised PLT entries, data objects apart), with perf's build-id cache or
 * a debug file standing in for a file that is gone or was rebuilt.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include "internal.h"
#include "symbol-internal.h"
#include "dso-internal.h"

/* ------------------------------------------------------------------------------------ */
/* Symbols being collected (sorted by pk_syms_finish once the file is read)              */

struct pk_symvec {
	struct pk_sym *v;
	size_t nr, cap;
	int err;
};

static void pk_symvec_add_raw(struct pk_symvec *sv, uint64_t start, uint64_t size,
			      const char *name, uint8_t bind, bool raw)
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
					   .bind = bind, .raw = raw };
}

/* The table at its final size: it grew by doubling (up to half of it unused), and a
 * long-lived machine (perfkit top, system-wide) keeps the tables of every object it saw. */
static struct pk_sym *pk_syms_shrink(struct pk_sym *v, size_t nr)
{
	if (!v || !nr) {
		free(v);
		return NULL;
	}
	struct pk_sym *n = realloc(v, nr * sizeof(*v));
	return n ? n : v;
}

static void pk_symvec_add(struct pk_symvec *sv, uint64_t start, uint64_t size, const char *name,
			  uint8_t bind)
{
	pk_symvec_add_raw(sv, start, size, name, bind, false);
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

/* The name of the PLT stub of relocation `info` ("func@plt", demangled as the machine
 * wants; a stub without a symbol, an IRELATIVE ifunc slot, is "@plt", as perf 6.1 names
 * it), in the DSO's arena; NULL without memory. sd/strndx: the .dynsym data and its
 * string table. */
const char *pk_plt_stub_name(struct pk_dso *d, Elf *e, Elf_Data *sd, size_t strndx,
			     bool elf64, uint64_t info)
{
	size_t symi = elf64 ? GELF_R_SYM(info) : ELF32_R_SYM(info);
	GElf_Sym sym;
	const char *n = NULL;
	if (symi && symi <= INT32_MAX && gelf_getsym(sd, (int)symi, &sym))
		n = elf_strptr(e, strndx, sym.st_name);
	/* (one copy: the demangled name and the suffix straight into the arena; a
	 * system-wide report names some 47k stubs) */
	return pk_demangle_sfx_into(d->machine, &d->arena, n ? n : "", "@plt");
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
		if (!pk_elf_rel_info(rd, rela.sh_type == SHT_RELA, i, &info))
			break;
		const char *name = pk_plt_stub_name(d, e, sd, dynsym.sh_link,
						    eh.e_ident[EI_CLASS] == ELFCLASS64, info);
		if (name)
			pk_symvec_add(sv, base + (first + i) * ent, ent, name, STB_GLOBAL);
	}
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
	if (!err) {
		pk_elf_plt_syms(d, e, sv);
		pk_plt_view_free(d->plt_view);
		/* perf 6.1's names in a PLT replay its tree over every symbol of the file,
		 * ~150 bytes of each while it loads: not for a long-lived machine, whose PLT
		 * entries are named func@plt as the relocations say (a compiler's symbol
		 * table made perfkit top's peak 8 MB higher) */
		d->plt_view = d->machine->close_files ? NULL : pk_plt_view_read(d, e);
	}
	elf_end(e);
	if (err) {
		close(fd);
		return err;
	}
	Dwfl *dwfl = dwfl_begin(pk_dwfl_callbacks());
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
	pk_syms_sort_start(v, nr);
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
	/* room for them all at once: a table grown by doubling copies itself, and at a
	 * copy the old and the new one live side by side (shrunk once finished) */
	if (n > 1 && sv->cap - sv->nr < (size_t)n) {
		struct pk_sym *nv = realloc(sv->v, (sv->nr + (size_t)n) * sizeof(*nv));
		if (nv) {
			sv->v = nv;
			sv->cap = sv->nr + (size_t)n;
		}
	}
	/* a long-lived machine packs the names it keeps into one block once the table is
	 * finished (pk_dso_pack_names), before the file is closed: until then they are
	 * libdwfl's, not copied one by one into chunks that the packing copies again */
	bool borrow = d->machine->close_files;
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
		pk_plt_view_note(d, d->plt_view, name, &sym, addr, shndx, elf);
		int t = GELF_ST_TYPE(sym.st_info);
		if (t == STT_OBJECT) {
			/* data: kept apart, so that code addresses never resolve to it. Absolute
			 * ones (version names, GLIBC_PRIVATE) are no addresses. */
			if (shndx == SHN_ABS || d->machine->no_data_syms)
				continue;
			const char *dn = borrow ? name : pk_arena_strdup(&d->arena, name);
			if (dn)
				pk_symvec_add_raw(dv, addr, sym.st_size, dn,
						  (uint8_t)GELF_ST_BIND(sym.st_info), true);
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
		/* demangled when looked up: most symbols of a library never are (a
		 * system-wide recording's C++ DSOs: 8 % of its perfkit script) */
		const char *dn = borrow ? name : pk_arena_strdup(&d->arena, name);
		if (dn)
			pk_symvec_add_raw(sv, addr, sym.st_size, dn,
					  (uint8_t)GELF_ST_BIND(sym.st_info), true);
	}
}

/* Aliases (symbols of one address) are ranked by their demangled names, as perf ranks
 * them: those names now. v is sorted by start. */
static void pk_dso_demangle_aliases(struct pk_dso *d, struct pk_sym *v, size_t nr)
{
	for (size_t a = 0, b; a < nr; a = b) {
		for (b = a + 1; b < nr && v[b].start == v[a].start; b++)
			;
		for (size_t i = a; b - a > 1 && i < b; i++)
			pk_dso_sym_name(d, &v[i]);
	}
}

int pk_dso_load_elf(struct pk_dso *d)
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
	} else if (d->machine->symfs && path[0] == '/') {
		/* --symfs: the file under that root (perf's rule: nothing else for the path) */
		size_t n = strlen(d->machine->symfs) + strlen(path) + 1;
		char *sp = malloc(n);
		if (sp) {
			snprintf(sp, n, "%s%s", d->machine->symfs, path);
			err = pk_dso_open_elf(d, sp, &sv);
			free(sp);
		} else {
			err = -ENOMEM;
		}
	} else {
		err = pk_dso_open_elf(d, path, &sv);
	}
	/* the recorded file is gone or was rebuilt: perf's build-id cache may hold it (perf
	 * record also keeps the vdso image there), and so may an extracted archive given as
	 * the symfs */
	const char *bdirs[] = { d->machine->buildid_dir, d->machine->perf_buildid_dir,
				d->machine->symfs };
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
			d->debug_warn = true; /* said by pk_dso_ensure_loaded */
		free(dp);
	}
	if (err) {
		pk_plt_view_free(d->plt_view);
		d->plt_view = NULL;
		free(sv.v);
		return err;
	}
	struct pk_symvec dv = { 0 };
	pk_dso_collect_symtab(d, &sv, &dv);
	if (!sv.err)
		sv.err = pk_plt_view_apply(d, d->plt_view, &sv.v, &sv.nr, &sv.cap);
	pk_plt_view_free(d->plt_view);
	d->plt_view = NULL;
	if (sv.err || dv.err) {
		free(sv.v);
		free(dv.v);
		return sv.err ? sv.err : dv.err;
	}
	/* sorted first (stably: pk_syms_finish then numbers them in the same order within
	 * an address, which is all its ranking looks at) so that aliases are found */
	pk_syms_sort_start(sv.v, sv.nr);
	pk_dso_demangle_aliases(d, sv.v, sv.nr);
	d->nr_syms = pk_syms_finish(sv.v, sv.nr, false);
	d->syms = pk_syms_shrink(sv.v, d->nr_syms);
	pk_data_syms_sizes(dv.v, dv.nr);
	pk_dso_demangle_aliases(d, dv.v, dv.nr);
	d->nr_dsyms = pk_syms_finish(dv.v, dv.nr, false);
	d->dsyms = pk_syms_shrink(dv.v, d->nr_dsyms);
	/* a long-lived machine keeps the tables of many objects: their names without the
	 * load's slack (without memory for the copy they stay where they are) */
	bool packed = d->machine->close_files && !pk_dso_pack_names(d);
	/* (names not packed may still be libdwfl's: the file stays open) */
	if (packed && d->dwfl) {
		dwfl_end(d->dwfl);
		d->dwfl = NULL;
		d->mod = NULL;
		d->file_closed = true;
	}
	return 0;
}

Dwfl_Module *pk_dso_module(struct pk_dso *d)
{
	if (pk_dso_ensure_loaded(d))
		return NULL;
	if (d->mod || !d->file_closed || !d->load_path)
		return d->mod;
	d->file_closed = false;
	/* the same file as at the load, or nothing: its build-id must not have changed */
	uint8_t bid[PK_BUILD_ID_BYTES];
	size_t bl = d->bid_len;
	memcpy(bid, d->bid, bl);
	struct pk_symvec sv = { 0 };
	char *path = strdup(d->load_path);
	int err = path ? pk_dso_open_elf(d, path, &sv) : -ENOMEM;
	free(path);
	free(sv.v);
	pk_plt_view_free(d->plt_view);
	d->plt_view = NULL;
	if (!err && (d->bid_len != bl || memcmp(d->bid, bid, bl))) {
		pk_warn("'%s' changed since its symbols were read: its code is not read", d->name);
		dwfl_end(d->dwfl);
		d->dwfl = NULL;
		d->mod = NULL;
	}
	d->bid_len = bl;
	memcpy(d->bid, bid, bl);
	return d->mod;
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
		if (!pk_preload_take(d, &err))
			err = pk_dso_load_elf(d);
		if (!err && d->debug_warn)
			pk_warn("build-id mismatch for '%s' (the file changed since the "
				"recording): using the debug file '%s'", d->name, d->load_path);
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
