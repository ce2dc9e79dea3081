/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/srcline.c - source lines and inline chains of DSO addresses from DWARF:
 * CU ranges for files without .debug_aranges, per-DSO caches of both answers, and the
 * per-CU trees of scope DIEs that inline chains are read from.
 */
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include "internal.h"
#include "symbol-internal.h"
#include "dso-internal.h"

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
	return pk_dso_module(d);
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

void pk_dso_warm_lines(struct pk_dso *d)
{
	/* d->mod, not pk_dso_module (which would load d: this runs inside its load) */
	Dwfl_Module *mod = d->kind == PK_DSO_ELF ? d->mod : NULL;
	Dwarf_Addr bias = 0;
	Dwarf *dw = mod && d->nr_syms ? dwfl_module_getdwarf(mod, &bias) : NULL;
	if (!dw)
		return;
	/* libdwfl's table of address ranges (.debug_aranges) is made at the first look-up.
	 * (Not srcline.c's own unit table, which only addresses that table misses need:
	 * made from every unit of libc's debug file, 7 ms, where the ranges take 1.) */
	dwfl_module_addrdie(mod, d->syms[0].start, &bias);
}

/*
 * ---- the symbol table's answer ----
 * perf 6.1 (built without libbfd, as Debian's is) asks binutils' addr2line, and for an
 * address that no line table covers (code from an object built without -g: libgcc's
 * cpuinfo.o in a library, a stripped library) binutils falls back to the symbol table:
 * the function symbol of the address's section with the highest address at or below it
 * (however far below: sizes are not checked), the largest one among those of that
 * address, the first in table order among equals; its source file is the STT_FILE
 * symbol last seen before it in table order, unless the symbol is global and a file
 * symbol came after some other symbol (a linked file's globals follow all files), and
 * its line 0. Symbols that are no functions to binutils: sections, files, objects, TLS,
 * and hidden local untyped labels of size 0.
 */
static int pk_fnfile_cmp(const void *pa, const void *pb)
{
	const struct pk_fnfile *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void pk_dso_build_fnfiles(struct pk_dso *d, Dwfl_Module *mod)
{
	d->fnfiles_built = true;
	int n = dwfl_module_getsymtab(mod);
	const char *file = NULL;
	bool have_file = false;
	enum { NOTHING, SYMBOL, FILE_AFTER_SYMBOL } state = NOTHING;
	size_t cap = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf,
							   &bias);
		if (!name)
			continue;
		int t = GELF_ST_TYPE(sym.st_info), b = GELF_ST_BIND(sym.st_info);
		if (t == STT_FILE) {
			file = name;
			have_file = true;
			if (state == SYMBOL)
				state = FILE_AFTER_SYMBOL;
			continue;
		}
		bool fn = t != STT_SECTION && t != STT_OBJECT && t != STT_COMMON && t != STT_TLS &&
			  shndx != SHN_UNDEF && shndx != SHN_ABS && shndx != SHN_COMMON &&
			  !(sym.st_size == 0 && b == STB_LOCAL && t == STT_NOTYPE &&
			    GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN);
		GElf_Shdr sh;
		Elf_Scn *scn = fn && elf ? elf_getscn(elf, shndx) : NULL;
		if (scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) &&
		    sh.sh_addr + sh.sh_size > sh.sh_addr) {
			if (d->nr_fnfiles == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct pk_fnfile *nv = realloc(d->fnfiles, nc * sizeof(*nv));
				if (!nv)
					break;
				d->fnfiles = nv;
				cap = nc;
			}
			const char *f = NULL;
			if (have_file && (b == STB_LOCAL || state != FILE_AFTER_SYMBOL))
				f = pk_arena_strdup(&d->arena, file ? file : "");
			d->fnfiles[d->nr_fnfiles++] = (struct pk_fnfile){
				.start = addr, .size = sym.st_size ? sym.st_size : 1,
				.sec_lo = sh.sh_addr + bias, .sec_hi = sh.sh_addr + bias + sh.sh_size,
				.file = f, .order = (uint32_t)i };
		}
		if (state == NOTHING)
			state = SYMBOL;
	}
	if (d->nr_fnfiles)
		qsort(d->fnfiles, d->nr_fnfiles, sizeof(*d->fnfiles), pk_fnfile_cmp);
}

/* 0 and the file (line 0), -ENODATA: a function but no file (binutils' "??"), -ENOENT:
 * no function symbol either */
static int pk_dso_symtab_file(struct pk_dso *d, Dwfl_Module *mod, uint64_t addr,
			      const char **file)
{
	if (d->kind != PK_DSO_ELF)
		return -ENOENT;   /* (perf asks addr2line about files only, not the vdso) */
	if (!d->fnfiles_built)
		pk_dso_build_fnfiles(d, mod);
	size_t i = PK_UPPER_BOUND(d->nr_fnfiles, d->fnfiles[mid].start <= addr);
	/* the highest start of a symbol whose section holds addr (the last of a section may
	 * sit at its end, where the next one starts), then the first of its equals */
	const struct pk_fnfile *best = NULL;
	for (size_t k = 0; i > 0 && k < 64; i--, k++) {
		const struct pk_fnfile *e = &d->fnfiles[i - 1];
		if (best && e->start != best->start)
			break;
		if (addr >= e->sec_lo && addr < e->sec_hi)
			best = e;
	}
	if (!best)
		return -ENOENT;
	if (!best->file)
		return -ENODATA;
	*file = best->file;
	return 0;
}

/*
 * binutils 2.40 (the addr2line perf 6.1 asks) starts each sequence of a DWARF 5 line
 * table with the file of entry 0 where DWARF 5 says 1: rows before the sequence's first
 * DW_LNS_set_file are named by entry 0, the CU's own file. gcc repeats that file as
 * entry 1, so this shows only where the CU's file #includes the code of another
 * (glibc's dl-sbrk.c, whose rows of sbrk.c addr2line names dl-sbrk.c:37). The name of
 * entry 0 when dl is such a row, else NULL.
 */
static Dwarf_Addr pk_line_addr(Dwarf_Lines *lines, size_t i)
{
	Dwarf_Addr a = 0;
	dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
	return a;
}

static const char *pk_bfd_seq_file(Dwarf_Die *cu, Dwarf_Line *dl)
{
	Dwarf_Files *files;
	size_t idx, nf, nl;
	Dwarf_Half ver;
	Dwarf_Lines *lines;
	Dwarf_Addr a;
	if (!cu || dwarf_line_file(dl, &files, &idx) || idx != 1 ||
	    dwarf_getsrcfiles(cu, &files, &nf) || nf < 2)
		return NULL;
	const char *f0 = dwarf_filesrc(files, 0, NULL, NULL);
	const char *f1 = dwarf_filesrc(files, 1, NULL, NULL);
	if (!f0 || !f1 || !strcmp(f0, f1) ||
	    dwarf_cu_info(cu->cu, &ver, NULL, NULL, NULL, NULL, NULL, NULL) || ver < 5 ||
	    dwarf_getsrclines(cu, &lines, &nl) || dwarf_lineaddr(dl, &a))
		return NULL;
	/* dl's row (rows are sorted by address), then back to its sequence's start: any
	 * other file on the way means a DW_LNS_set_file set this one */
	size_t k = PK_UPPER_BOUND(nl, pk_line_addr(lines, mid) < a);
	while (k < nl && dwarf_onesrcline(lines, k) != dl) {
		if (pk_line_addr(lines, k) != a)
			return NULL;
		k++;
	}
	if (k == nl)
		return NULL;
	/* back by groups of rows of one address: libdw sorts a sequence's end marker
	 * before the rows at its address, so a group that starts with one is the end of
	 * the sequence before (or the start of this one): the boundary */
	for (size_t i = k; i > 0;) {
		Dwarf_Addr ga = pk_line_addr(lines, i - 1);
		size_t g = i - 1;
		while (g > 0 && pk_line_addr(lines, g - 1) == ga)
			g--;
		bool end = false;
		if (dwarf_lineendsequence(dwarf_onesrcline(lines, g), &end) || end)
			break;
		for (size_t j = g; j < i; j++) {
			size_t pi;
			Dwarf_Files *pf;
			if (dwarf_line_file(dwarf_onesrcline(lines, j), &pf, &pi) || pi != 1)
				return NULL;
		}
		i = g;
	}
	return f0;
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
		Dwarf_Addr lb;
		Dwarf_Line *dl = dwfl_dwarf_line(l, &lb);
		const char *f0 = dl ? pk_bfd_seq_file(dwfl_linecu(l), dl) : NULL;
		if (f0)
			f = f0;
	} else {
		Dwarf_Die cu;
		Dwarf_Addr bias = 0;
		Dwarf_Line *dl = NULL;
		if (pk_dso_addr_cu(d, mod, addr, &cu, &bias))
			dl = dwarf_getsrc_die(&cu, addr - bias);
		if (!dl) {
			*line = 0;
			return pk_dso_symtab_file(d, mod, addr, file);
		}
		f = dwarf_linesrc(dl, NULL, NULL);
		dwarf_lineno(dl, &lineno);
		const char *f0 = pk_bfd_seq_file(&cu, dl);
		if (f0)
			f = f0;
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

PK_API const char *pk_dso__comp_dir(struct pk_dso *d, uint64_t dso_addr)
{
	if (!d)
		return pk_err_ptr(-EINVAL);
	Dwfl_Module *mod = pk_dso_dwarf_mod(d);
	Dwarf_Die cu;
	Dwarf_Addr bias = 0;
	Dwarf_Attribute at;
	const char *dir = NULL;
	if (mod && pk_dso_addr_cu(d, mod, dso_addr, &cu, &bias) &&
	    dwarf_attr_integrate(&cu, DW_AT_comp_dir, &at))
		dir = dwarf_formstring(&at);
	return dir && *dir ? dir : pk_err_ptr(-ENOENT);
}

static const char *pk_die_funcname(struct pk_dso *d, Dwarf_Die *die)
{
	/* (the attributes' look-up, through abstract origins, was a third of the inline
	 * chains of annotate's source lines: once per DIE) */
	uint64_t key = (uint64_t)(uintptr_t)die->addr;
	const char *n = key ? pk_u64map_get(&d->funcnames, key) : NULL;
	if (n)
		return n;
	Dwarf_Attribute a;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	if (n) {
		n = pk_demangle_into(d->machine, &d->arena, n);
	} else {
		n = dwarf_diename(die);
		if (!n)
			n = "??";
	}
	if (n && key)
		(void)pk_u64map_put(&d->funcnames, key, (void *)(uintptr_t)n); /* (a cache) */
	return n;
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

void pk_scope_cus_free(struct pk_dso *d)
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

/* ---- parameters of the function at an address (record --args, perfkit script) ---- */

/* perf's register number (sample_regs_user bit) of a DWARF register, -1 if none. */
static int pk_dwarf_reg_to_perf(unsigned int r)
{
#if defined(__x86_64__)
	/* DWARF: rax rdx rcx rbx rsi rdi rbp rsp r8..r15; perf: ax bx cx dx si di bp sp ip
	 * flags cs ss ds es fs gs r8..r15 */
	static const signed char map[16] = { 0, 3, 2, 1, 4, 5, 6, 7,
					     16, 17, 18, 19, 20, 21, 22, 23 };
	return r < 16 ? map[r] : -1;
#else
	(void)r;
	return -1;
#endif
}

static void pk_cat(char *buf, size_t len, const char *s)
{
	size_t n = strlen(buf);
	if (n + 1 < len)
		snprintf(buf + n, len - n, "%s", s);
}

/* The C spelling of type DIE t (NULL: void) into buf; size, signedness and pointerness
 * of the value it describes. */
static void pk_type_name(Dwarf_Die *t, char *buf, size_t len, int depth, struct pk_param *p)
{
	Dwarf_Attribute at;
	Dwarf_Die next, *nt = NULL;
	Dwarf_Word w;
	if (!t) {
		pk_cat(buf, len, "void");
		return;
	}
	if (depth > 8) {
		pk_cat(buf, len, "?");
		return;
	}
	if (dwarf_attr_integrate(t, DW_AT_type, &at))
		nt = dwarf_formref_die(&at, &next);
	const char *name = dwarf_diename(t);
	int bytes = dwarf_bytesize(t);
	switch (dwarf_tag(t)) {
	case DW_TAG_base_type:
		pk_cat(buf, len, name ? name : "?");
		if (bytes > 0 && bytes <= 8 && dwarf_attr(t, DW_AT_encoding, &at) &&
		    !dwarf_formudata(&at, &w) &&
		    (w == DW_ATE_signed || w == DW_ATE_signed_char || w == DW_ATE_unsigned ||
		     w == DW_ATE_unsigned_char || w == DW_ATE_boolean)) {
			p->size = (uint8_t)bytes;
			p->is_signed = w == DW_ATE_signed || w == DW_ATE_signed_char;
		}
		return;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		struct pk_param tmp = { 0 };
		pk_type_name(nt, buf, len, depth + 1, &tmp);
		size_t n = strlen(buf);
		bool stacked = n && (buf[n - 1] == '*' || buf[n - 1] == '&'); /* "char **" */
		pk_cat(buf, len, dwarf_tag(t) == DW_TAG_pointer_type ? (stacked ? "*" : " *")
								     : (stacked ? "&" : " &"));
		p->size = bytes > 0 && bytes <= 8 ? (uint8_t)bytes : (uint8_t)sizeof(void *);
		p->is_pointer = true;
		p->is_signed = false;
		return;
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type: {
		const char *q = dwarf_tag(t) == DW_TAG_const_type ? "const" : "volatile";
		Dwarf_Die inner;
		bool ptr_below = nt && (inner = *nt, dwarf_tag(&inner) == DW_TAG_pointer_type);
		if (!ptr_below) {
			pk_cat(buf, len, q);
			pk_cat(buf, len, " ");
		}
		pk_type_name(nt, buf, len, depth + 1, p);
		if (ptr_below) {
			pk_cat(buf, len, " ");
			pk_cat(buf, len, q);
		}
		return;
	}
	case DW_TAG_typedef: {
		char scratch[8];
		scratch[0] = 0;
		pk_cat(buf, len, name ? name : "?");
		pk_type_name(nt, scratch, sizeof(scratch), depth + 1, p); /* size/sign only */
		return;
	}
	case DW_TAG_enumeration_type:
		pk_cat(buf, len, "enum ");
		pk_cat(buf, len, name ? name : "<anon>");
		if (bytes > 0 && bytes <= 8)
			p->size = (uint8_t)bytes;
		return;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		pk_cat(buf, len, dwarf_tag(t) == DW_TAG_union_type ? "union " : "struct ");
		pk_cat(buf, len, name ? name : "<anon>");
		return; /* passed by value: not one register */
	default:
		pk_cat(buf, len, name ? name : "?");
		return;
	}
}

PK_API int pk_dso__params(struct pk_dso *d, uint64_t dso_addr, struct pk_param *out, size_t max)
{
	if (!d || (!out && max))
		return pk_err(-EINVAL);
	Dwfl_Module *mod = pk_dso_dwarf_mod(d);
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Addr bias = 0;
	if (!mod || !pk_dso_addr_cu(d, mod, dso_addr, &cu, &bias))
		return pk_err(-ENOENT);
	Dwarf_Addr pc = dso_addr - bias;
	int n = dwarf_getscopes(&cu, pc, &scopes), fn = -1;
	for (int i = 0; i < n && fn < 0; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			fn = i;
	if (fn < 0) {
		free(scopes);
		return pk_err(-ENOENT);
	}
	Dwarf_Die c;
	size_t nr = 0;
	if (dwarf_child(&scopes[fn], &c) == 0) {
		do {
			if (dwarf_tag(&c) != DW_TAG_formal_parameter)
				continue;
			if (nr < max) {
				struct pk_param *p = &out[nr];
				Dwarf_Attribute at;
				Dwarf_Die td, *t = NULL;
				const char *name = NULL;
				memset(p, 0, sizeof(*p));
				p->reg = -1;
				if (dwarf_attr_integrate(&c, DW_AT_name, &at))
					name = dwarf_formstring(&at);
				snprintf(p->name, sizeof(p->name), "%s", name ? name : "?");
				if (dwarf_attr_integrate(&c, DW_AT_type, &at))
					t = dwarf_formref_die(&at, &td);
				pk_type_name(t, p->type, sizeof(p->type), 0, p);
				Dwarf_Op *ops;
				size_t nops;
				if (dwarf_attr(&c, DW_AT_location, &at) &&
				    dwarf_getlocation_addr(&at, pc, &ops, &nops, 1) == 1 && nops == 1) {
					if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
						p->reg = pk_dwarf_reg_to_perf(ops[0].atom - DW_OP_reg0);
					else if (ops[0].atom == DW_OP_regx && ops[0].number < 64)
						p->reg = pk_dwarf_reg_to_perf((unsigned int)ops[0].number);
				}
			}
			nr++;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	free(scopes);
	return (int)(nr > (size_t)INT32_MAX ? INT32_MAX : nr);
}
