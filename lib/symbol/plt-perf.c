/* SPDX-License-Identifier: MIT */
/*
 * Names of addresses in a PLT as perf 6.1 gives them.
 *
 * perf 6.1 does not simply name a PLT stub "func@plt". It loads the function symbols of
 * the symbol table into a red-black tree keyed by start address (equal starts go right),
 * gives every zero-sized symbol the room up to the next symbol (the last one to the end of
 * the page after next), drops all but one symbol of each address, and only then adds its
 * "func@plt" symbols: one per .rela.plt entry, in relocation order, in .plt after a
 * header, header and entries both .plt's sh_entsize (16 for GNU ld, 0 for lld, whose
 * entries then all sit at .plt's start with no size), at file offsets. A look-up walks
 * the tree from the root and takes the first symbol holding the address. So where a
 * zero-sized symbol ahead of the PLT (_init in .init, _fini with lld) was stretched over
 * it, the answer depends on the tree's shape: "_init+0x60" for one program,
 * "rand@plt" for another, "[unknown]" for a third; .plt.sec (IBT) and .plt.got stubs
 * have no symbol of their own.
 *
 * pk_plt_view_read() takes what perf reads from the ELF file (at open time);
 * pk_plt_view_apply() replays perf's tree over the DSO's function symbols and rewrites
 * the symbols of the PLT sections so that an ordinary sorted look-up gives perf's
 * answer there: a stretched symbol ends where perf stops finding it, a PLT symbol is
 * perf's, an address perf finds nothing for has no symbol. x86-64 only (the only PLT
 * layout perfkit names). The tree is the textbook red-black tree the kernel's rbtree.c
 * implements, insertion and erasure, so the shape is perf's.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "symbol-internal.h"
#include "core/radix.h"

struct pk_plt_ent {
	uint64_t off;           /* file offset, as perf places it */
	uint64_t size;
	const char *name;       /* "func@plt", in the DSO's arena */
};

/* the last section perf_keeps() looked at, and its answers */
struct keep_memo {
	Elf *elf;
	GElf_Word shndx;
	bool valid, alloc, text_data;
};

struct node;

struct pk_plt_view {
	struct pk_plt_ent *ents;
	size_t nr;
	uint64_t lo, hi;        /* the PLT sections' span, in DSO addresses */
	/* the symbol table's entries perf loads (pk_plt_view_note, in table order), with
	 * room for the PLT entries after them */
	struct node *nodes;
	size_t nn, cap;
	struct keep_memo memo;
	int err;
};

void pk_plt_view_free(struct pk_plt_view *p)
{
	if (!p)
		return;
	free(p->ents);
	free(p->nodes);
	free(p);
}

static const char *section_name(Elf *e, const GElf_Shdr *sh)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return NULL;
	return elf_strptr(e, shstrndx, sh->sh_name);
}

struct pk_plt_view *pk_plt_view_read(struct pk_dso *d, Elf *e)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64)
		return NULL;
	GElf_Shdr plt = { 0 }, rel = { 0 }, sh;
	Elf_Scn *relscn = NULL, *dynscn = NULL;
	size_t dynidx = 0;
	bool have_plt = false;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *n = section_name(e, &sh);
		if (!n)
			continue;
		if (sh.sh_type == SHT_DYNSYM && !dynscn) {
			dynscn = scn;
			dynidx = elf_ndxscn(scn);
		}
		if (!strcmp(n, ".rela.plt") || (!relscn && !strcmp(n, ".rel.plt"))) {
			relscn = scn;
			rel = sh;
		}
		if (!strcmp(n, ".plt") && !have_plt) {
			plt = sh;
			have_plt = true;
		}
		if ((!strcmp(n, ".plt") || !strcmp(n, ".plt.sec") || !strcmp(n, ".plt.got")) &&
		    sh.sh_size && sh.sh_addr < UINT64_MAX - sh.sh_size) {
			lo = PK_MIN(lo, sh.sh_addr);
			hi = PK_MAX(hi, sh.sh_addr + sh.sh_size);
		}
	}
	if (lo >= hi)
		return NULL;
	struct pk_plt_view *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->lo = lo;
	p->hi = hi;
	/* perf's conditions for its PLT symbols: a .dynsym, .rela.plt (or .rel.plt) linked
	 * to it, a .plt; anything else and there are none */
	if (!dynscn || !relscn || rel.sh_link != dynidx || !have_plt || !rel.sh_entsize ||
	    (rel.sh_type != SHT_RELA && rel.sh_type != SHT_REL))
		return p;
	GElf_Shdr dsh;
	Elf_Data *rd = elf_getdata(relscn, NULL), *sd = elf_getdata(dynscn, NULL);
	if (!rd || !sd || !gelf_getshdr(dynscn, &dsh))
		return p;
	size_t nrel = rel.sh_size / rel.sh_entsize;
	if (nrel > (1u << 20))
		return p;
	p->ents = calloc(nrel ? nrel : 1, sizeof(*p->ents));
	if (!p->ents)
		return p;
	uint64_t ent = plt.sh_entsize, off = plt.sh_offset + ent;
	for (size_t i = 0; i < nrel; i++, off += ent) {
		uint64_t info;
		if (!pk_elf_rel_info(rd, rel.sh_type == SHT_RELA, i, &info))
			break;
		const char *name = pk_plt_stub_name(d, e, sd, dsh.sh_link, true, info);
		if (name)
			p->ents[p->nr++] = (struct pk_plt_ent){ off, ent, name };
	}
	return p;
}

/* ---- perf's symbol tree ---- */

struct node {
	struct node *l, *r, *up;
	bool red;
	uint64_t start, end;    /* file offsets, [start, end), perf's fixed-up end */
	uint64_t addr;          /* start as a DSO address */
	bool symtab;            /* from the symbol table (else one of perf's PLT entries) */
	uint8_t bind;
	const char *name;
};

struct tree {
	struct node *root;
};

static void rotate(struct tree *t, struct node *x, bool left)
{
	struct node *y = left ? x->r : x->l;
	if (left) {
		x->r = y->l;
		if (y->l)
			y->l->up = x;
		y->l = x;
	} else {
		x->l = y->r;
		if (y->r)
			y->r->up = x;
		y->r = x;
	}
	y->up = x->up;
	if (!x->up)
		t->root = y;
	else if (x->up->l == x)
		x->up->l = y;
	else
		x->up->r = y;
	x->up = y;
}

static bool is_red(const struct node *n)
{
	return n && n->red;
}

static void insert(struct tree *t, struct node *z)
{
	struct node *parent = NULL, **link = &t->root;
	while (*link) {
		parent = *link;
		link = z->start < parent->start ? &parent->l : &parent->r;
	}
	z->l = z->r = NULL;
	z->up = parent;
	z->red = true;
	*link = z;
	while (is_red(z->up)) {
		struct node *p = z->up, *g = p->up;
		bool pleft = g->l == p;
		struct node *uncle = pleft ? g->r : g->l;
		if (is_red(uncle)) {
			p->red = uncle->red = false;
			g->red = true;
			z = g;
			continue;
		}
		if (z == (pleft ? p->r : p->l)) {
			rotate(t, p, pleft);
			z = p;
			p = z->up;
		}
		p->red = false;
		g->red = true;
		rotate(t, g, !pleft);
	}
	t->root->red = false;
}

static struct node *first(struct node *n)
{
	while (n && n->l)
		n = n->l;
	return n;
}

static struct node *next(struct node *n)
{
	if (n->r)
		return first(n->r);
	while (n->up && n->up->r == n)
		n = n->up;
	return n->up;
}

static void replace_child(struct tree *t, struct node *old, struct node *new, struct node *up)
{
	if (!up)
		t->root = new;
	else if (up->l == old)
		up->l = new;
	else
		up->r = new;
}

/* the kernel's rb_erase: a node with two children is replaced by its successor; a lone
 * child (always red) takes the node's place and color; a black leaf removed rebalances */
static void erase(struct tree *t, struct node *n)
{
	struct node *child = n->r ? n->r : n->l, *rebalance = NULL;
	if (!n->l || !n->r) {
		replace_child(t, n, child, n->up);
		if (child) {
			child->up = n->up;
			child->red = n->red;
		} else if (!n->red) {
			rebalance = n->up;
		}
	} else {
		struct node *s = n->r, *parent, *child2;
		if (!s->l) {
			parent = s;
			child2 = s->r;
		} else {
			s = first(s);
			parent = s->up;
			child2 = s->r;
			parent->l = child2;
			if (child2)
				child2->up = parent;
			s->r = n->r;
			n->r->up = s;
		}
		s->l = n->l;
		n->l->up = s;
		replace_child(t, n, s, n->up);
		s->up = n->up;
		bool s_red = s->red;
		s->red = n->red;
		if (child2) {
			child2->red = false;
		} else if (!s_red) {
			rebalance = parent;
		}
	}
	if (!rebalance)
		return;
	/* the classic fix-up for one missing black on the side of x (x starts NULL) */
	struct node *x = NULL, *parent = rebalance;
	while (parent) {
		bool xleft = parent->l == x;
		struct node *w = xleft ? parent->r : parent->l;
		if (is_red(w)) {
			w->red = false;
			parent->red = true;
			rotate(t, parent, xleft);
			w = xleft ? parent->r : parent->l;
		}
		struct node *nearc = xleft ? w->l : w->r, *farc = xleft ? w->r : w->l;
		if (!is_red(nearc) && !is_red(farc)) {
			w->red = true;
			if (parent->red) {
				parent->red = false;
				return;
			}
			x = parent;
			parent = x->up;
			continue;
		}
		if (!is_red(farc)) {
			nearc->red = false;
			w->red = true;
			rotate(t, w, !xleft);
			w = xleft ? parent->r : parent->l;
			farc = xleft ? w->r : w->l;
		}
		w->red = parent->red;
		parent->red = false;
		if (farc)
			farc->red = false;
		rotate(t, parent, xleft);
		return;
	}
}

/* perf's look-up: the first symbol on the way down that holds ip (a zero-sized one only
 * at its start) */
static const struct node *find(const struct tree *t, uint64_t ip)
{
	const struct node *n = t->root;
	while (n) {
		if (ip < n->start)
			n = n->l;
		else if (ip > n->end || (ip == n->end && ip != n->start))
			n = n->r;
		else
			return n;
	}
	return NULL;
}

/* perf's choice between two symbols of one address (choose_best_symbol): true keeps a */
static bool keep_first(const struct node *a, const struct node *b)
{
	return pk_sym_rank(a->end != a->start, a->bind, a->name, b->end != b->start, b->bind,
			   b->name) >= 0;
}

/* DSO address <-> file offset through the PT_LOAD segment holding it (perf keeps symbols
 * at file offsets and drops those outside every segment) */
static bool to_off(const struct pk_dso *d, uint64_t addr, uint64_t *off)
{
	for (size_t i = 0; i < d->nr_segs; i++) {
		const struct pk_load_seg *s = &d->segs[i];
		if (addr >= s->vaddr && addr - s->vaddr < s->memsz) {
			*off = addr - s->vaddr + s->offset;
			return true;
		}
	}
	return false;
}

static uint64_t to_addr(const struct pk_dso *d, uint64_t off)
{
	for (size_t i = 0; i < d->nr_segs; i++) {
		const struct pk_load_seg *s = &d->segs[i];
		if (off >= s->offset && off - s->offset < PK_MAX(s->filesz, s->memsz))
			return off - s->offset + s->vaddr;
	}
	return off;
}

static int add_sym(struct pk_sym **v, size_t *nr, size_t *cap, struct pk_sym s)
{
	if (*nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct pk_sym *n = realloc(*v, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		*v = n;
		*cap = ncap;
	}
	(*v)[(*nr)++] = s;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The section of a symbol as perf filters it: allocated; for a label (NOTYPE), a section
 * named like text or data. Symbols come grouped by section: the last section's answers
 * are kept in *memo. */
static bool perf_keeps(Elf *elf, GElf_Word shndx, int type, struct keep_memo *memo)
{
	if (!memo->valid || memo->elf != elf || memo->shndx != shndx) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
		*memo = (struct keep_memo){ .elf = elf, .shndx = shndx, .valid = true };
		if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			return false;
		memo->alloc = true;
		const char *n = section_name(elf, &sh);
		memo->text_data = n && (strstr(n, "text") || strstr(n, "data"));
	}
	return memo->alloc && (type != STT_NOTYPE || memo->text_data);
}

/* perf's tree: the symbol-table nodes [0, nst) inserted in order, zero-sized ones reaching
 * the next start (already done by the caller: a no-op then), one node per start kept,
 * then the PLT nodes [nst, nn) */
static void tree_build(struct tree *t, struct node *nodes, size_t nst, size_t nn)
{
	for (size_t i = 0; i < nst; i++)
		insert(t, &nodes[i]);
	for (struct node *n = first(t->root), *m; n; n = m) {
		m = next(n);
		if (n->end != n->start)
			continue;
		n->end = m ? m->start : (n->start + 4095) / 4096 * 4096 + 4096;
	}
	struct node *cur = first(t->root);
	while (cur) {
		struct node *nx = next(cur);
		if (!nx)
			break;
		if (cur->start != nx->start) {
			cur = nx;
			continue;
		}
		if (keep_first(cur, nx)) {
			erase(t, nx);
		} else {
			erase(t, cur);
			cur = nx;
		}
	}
	for (size_t i = nst; i < nn; i++)
		insert(t, &nodes[i]);
}

/* a node of perf's tree in order: its start, its index in nodes (= insertion order),
 * and (once in order) the furthest end of the nodes up to it */
struct ordkey {
	uint64_t start, reach;
	uint32_t i;
};

PK_DEFINE_RADIX_SORT(ordkey_radix, struct ordkey, start)

/* ord[0 .. n) stably by start (so equal starts keep their order: insertion order), with
 * tmp[n] of room; a radix sort by bytes, skipping the bytes all starts share */
static void ord_sort(struct ordkey *ord, struct ordkey *tmp, size_t n)
{
	if (n < 32) {
		for (size_t i = 1; i < n; i++) {
			struct ordkey x = ord[i];
			size_t j = i;
			for (; j && ord[j - 1].start > x.start; j--)
				ord[j] = ord[j - 1];
			ord[j] = x;
		}
		return;
	}
	ordkey_radix(ord, tmp, n);
}

/*
 * find() without building the tree, where its shape cannot matter: the nodes in order
 * (ord, nk), for every boundary cuts[0 .. nc - 1) of the span. Let c be the last node
 * starting at or before the address: if no node before c reaches past the address and
 * no other node starts where c does, c is the only node that can hold it, and the walk
 * down from the root meets c (a node where it turned right instead of towards c would
 * start between c's start and the address, and there is none). False when that does
 * not hold for some boundary: then only the tree answers.
 */
static bool sorted_answers(const struct pk_dso *d, const struct node *nodes,
			   const struct ordkey *ord, size_t nk, const uint64_t *cuts, size_t nc,
			   const struct node **res)
{
	for (size_t i = 0; i + 1 < nc; i++) {
		uint64_t off;
		res[i] = NULL;
		if (!to_off(d, cuts[i], &off))
			continue;
		size_t k = PK_UPPER_BOUND(nk, ord[mid].start <= off);
		if (!k)
			continue; /* every node starts after it */
		const struct node *c = &nodes[ord[k - 1].i];
		if (k >= 2 && (ord[k - 2].start == c->start || ord[k - 2].reach > off))
			return false;
		if (off >= c->start && !(off > c->end || (off == c->end && off != c->start)))
			res[i] = c;
	}
	return true;
}

/*
 * One entry of the symbol table (in table order, as pk_dso_collect_symtab reads it, which
 * spares reading the table twice): kept when perf 6.1 loads it, functions, objects and
 * labels, at file offsets through the PT_LOAD segment holding each.
 */
void pk_plt_view_note(const struct pk_dso *d, struct pk_plt_view *p, const char *name,
		      const GElf_Sym *sym, GElf_Addr addr, GElf_Word shndx, Elf *elf)
{
	int type = GELF_ST_TYPE(sym->st_info);
	uint64_t off;
	if (!p || p->err || !name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS ||
	    shndx >= SHN_LORESERVE ||
	    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT &&
	     type != STT_NOTYPE))
		return;
	if (type == STT_NOTYPE && (GELF_ST_VISIBILITY(sym->st_other) == STV_HIDDEN ||
				   GELF_ST_VISIBILITY(sym->st_other) == STV_INTERNAL))
		return;
	if (!perf_keeps(elf, shndx, type, &p->memo) || !to_off(d, addr, &off))
		return;
	if (p->nn == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 256;
		struct node *n = realloc(p->nodes, ncap * sizeof(*n));
		if (!n) {
			p->err = -ENOMEM;
			return;
		}
		p->nodes = n;
		p->cap = ncap;
	}
	p->nodes[p->nn++] = (struct node){ .start = off, .end = off + sym->st_size, .addr = addr,
					   .symtab = true,
					   .bind = (uint8_t)GELF_ST_BIND(sym->st_info),
					   .name = name };
}

int pk_plt_view_apply(struct pk_dso *d, struct pk_plt_view *p, struct pk_sym **v,
		      size_t *nr, size_t *cap)
{
	if (!p || !d->mod)
		return 0;
	if (p->err)
		return p->err;
	/* the symbol table's entries (pk_plt_view_note), then room for perf's PLT ones.
	 * perf synthesizes those only when its symbol table gave it at least one symbol
	 * (dso__load: "ret > 0"): a stripped program whose .dynsym defines nothing has no
	 * "func@plt" either, its PLT is [unknown] */
	size_t nst = p->nn, nplt = nst ? p->nr : 0, room = nst + nplt + 1;
	if (room > p->cap) {
		struct node *n = realloc(p->nodes, room * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->nodes = n;
		p->cap = room;
	}
	struct node *nodes = p->nodes;
	memset(nodes + nst, 0, (room - nst) * sizeof(*nodes));
	uint64_t *cuts = malloc((3 * (nst + nplt) + 2) * sizeof(*cuts));
	const struct node **res = NULL;
	struct ordkey *ord = NULL;
	int err = -ENOMEM;
	if (!cuts)
		goto out;
	size_t nn = nst;
	/* perf's tree in order: by start, equal starts in insertion order */
	ord = malloc(2 * room * sizeof(*ord));
	if (!ord)
		goto out;
	for (size_t i = 0; i < nst; i++)
		ord[i] = (struct ordkey){ .start = nodes[i].start, .i = (uint32_t)i };
	ord_sort(ord, ord + room, nst);
	/* zero-sized symbols reach the next one; the last, the end of the next page */
	for (size_t k = 0; k < nst; k++) {
		struct node *n = &nodes[ord[k].i];
		if (n->end == n->start)
			n->end = k + 1 < nst ? ord[k + 1].start
					     : (n->start + 4095) / 4096 * 4096 + 4096;
	}
	/* one symbol per address: what the in-order walk erasing one of two equal starts
	 * keeps */
	size_t nk = 0;
	for (size_t k = 0; k < nst; k++) {
		if (nk && ord[nk - 1].start == ord[k].start) {
			if (!keep_first(&nodes[ord[nk - 1].i], &nodes[ord[k].i]))
				ord[nk - 1] = ord[k];
			continue;
		}
		ord[nk++] = ord[k];
	}
	/* then perf's PLT symbols (inserted after those: right of equal starts) */
	for (size_t i = 0; i < nplt; i++) {
		struct node *n = &nodes[nn++];
		n->start = p->ents[i].off;
		n->end = p->ents[i].off + p->ents[i].size;
		n->addr = to_addr(d, n->start);
		n->bind = STB_GLOBAL;
		n->name = p->ents[i].name;
		ord[nk++] = (struct ordkey){ .start = n->start, .i = (uint32_t)(nn - 1) };
	}
	ord_sort(ord, ord + room, nk);
	for (size_t k = 0; k < nk; k++)
		ord[k].reach = PK_MAX(k ? ord[k - 1].reach : 0, nodes[ord[k].i].end);
	/* the answer is constant between consecutive boundaries of the symbols in the span */
	size_t nc = 0;
	cuts[nc++] = p->lo;
	cuts[nc++] = p->hi;
	for (size_t i = 0; i < nn; i++) {
		uint64_t b[3] = { to_addr(d, nodes[i].start), to_addr(d, nodes[i].end),
				  to_addr(d, nodes[i].start) + 1 };
		bool zero = nodes[i].end == nodes[i].start;
		for (int k = 0; k < 3; k++)
			if (b[k] > p->lo && b[k] < p->hi && (k < 2 || zero))
				cuts[nc++] = b[k];
	}
	qsort(cuts, nc, sizeof(*cuts), u64_cmp);
	size_t u = 0;
	for (size_t i = 0; i < nc; i++)
		if (!u || cuts[i] != cuts[u - 1])
			cuts[u++] = cuts[i];
	nc = u;
	res = calloc(nc, sizeof(*res));
	if (!res)
		goto out;
	if (!sorted_answers(d, nodes, ord, nk, cuts, nc, res)) {
		/* symbols overlap where it is asked: the answer depends on the tree's shape */
		struct tree t = { NULL };
		tree_build(&t, nodes, nst, nn);
		for (size_t i = 0; i + 1 < nc; i++) {
			uint64_t off;
			res[i] = to_off(d, cuts[i], &off) ? find(&t, off) : NULL;
		}
	}
	/* rewrite the span: no symbol of ours starts in it, none from before reaches into
	 * it (the zero-sized ones just before it get their end, else they would stretch over
	 * it); a symbol from before that perf stretches over its start ends where perf stops
	 * finding it; every other stretch perf finds a symbol for becomes one (named as
	 * perf's, from where perf's starts if that lies in the stretch) */
	size_t o = 0;
	uint64_t last = 0;
	bool any = false;
	for (size_t i = 0; i < *nr; i++) {
		struct pk_sym *s = &(*v)[i];
		if (s->start >= p->lo && s->start < p->hi)
			continue;
		if (s->start < p->lo && s->end > p->lo)
			s->end = p->lo;
		if (s->start < p->lo && (!any || s->start > last)) {
			last = s->start;
			any = true;
		}
		(*v)[o++] = *s;
	}
	*nr = o;
	for (size_t i = 0; any && i < *nr; i++)
		if ((*v)[i].start == last && (*v)[i].end == last)
			(*v)[i].end = p->lo;
	size_t i = 0;
	if (nc > 1 && res[0] && res[0]->addr < p->lo) {
		/* the leading run of a symbol from before the span: that symbol, with perf's
		 * name, to where perf stops finding it (merged with ours of that address) */
		const struct node *r = res[0];
		while (i + 1 < nc && res[i] == r)
			i++;
		const char *name = r->symtab ? pk_demangle_into(d->machine, &d->arena, r->name)
					     : r->name;
		if (!name)
			goto out;
		struct pk_sym s = { .start = r->addr, .end = cuts[i], .name = name,
				    .bind = r->bind };
		if (add_sym(v, nr, cap, s))
			goto out;
	}
	while (i + 1 < nc) {
		const struct node *r = res[i];
		size_t j = i + 1;
		while (j + 1 < nc && res[j] == r)
			j++;
		if (r) {
			const char *name = r->symtab ? pk_demangle_into(d->machine, &d->arena,
									 r->name) : r->name;
			if (!name)
				goto out;
			uint64_t a = r->addr;
			if (a < cuts[i] || a >= cuts[j])
				a = cuts[i];
			struct pk_sym s = { .start = a, .end = cuts[j], .name = name,
					    .bind = r->bind };
			if (add_sym(v, nr, cap, s))
				goto out;
		}
		i = j;
	}
	err = 0;
out:
	free(ord);
	free(res);
	free(cuts);
	return err;
}
