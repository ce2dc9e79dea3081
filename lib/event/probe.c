/* SPDX-License-Identifier: MIT */
/*
 * lib/event/probe.c - a function of a binary as a uprobe: its symbol (.symtab, else
 * .dynsym, else the debug file found by build-id or .gnu_debuglink), the file offset of
 * its address through the program headers, an offset into it proved to be an instruction
 * start by disassembling from the symbol (capstone), and the listing of functions.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <capstone/capstone.h>
#include "internal.h"
#include "probe-internal.h"

#define MAX_CANDS 8
#define MAX_DISASM (1u << 20) /* bytes of one function we are willing to decode */

/* ---- symbol tables ---- */

struct symtab {
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *data;
	size_t count;
};

static bool get_symtab(Elf *elf, Elf64_Word type, struct symtab *t)
{
	Elf_Scn *s = NULL;
	while ((s = elf_nextscn(elf, s))) {
		if (!gelf_getshdr(s, &t->sh) || t->sh.sh_type != type || !t->sh.sh_entsize)
			continue;
		t->data = elf_getdata(s, NULL);
		if (!t->data)
			return false;
		t->scn = s;
		t->count = PK_MIN(t->sh.sh_size / t->sh.sh_entsize,
				  t->data->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT));
		return t->count > 0;
	}
	return false;
}

static bool is_func(const GElf_Sym *s)
{
	int ty = GELF_ST_TYPE(s->st_info);
	return (ty == STT_FUNC || ty == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF &&
	       s->st_shndx < SHN_LORESERVE;
}

/* Walk the function symbols of one table; cb returns non-zero to stop. `file` is the
 * STT_FILE symbol before a local (its source file). */
typedef int (*sym_cb)(const GElf_Sym *s, const char *name, const char *file, void *ctx);

static int walk_syms(Elf *elf, const struct symtab *t, sym_cb cb, void *ctx)
{
	const char *file = NULL;
	for (size_t i = 0; i < t->count; i++) {
		GElf_Sym s;
		if (!gelf_getsym(t->data, (int)i, &s))
			break;
		const char *name = elf_strptr(elf, t->sh.sh_link, s.st_name);
		if (GELF_ST_TYPE(s.st_info) == STT_FILE) {
			file = name;
			continue;
		}
		if (GELF_ST_BIND(s.st_info) != STB_LOCAL)
			file = NULL;
		if (!name || !*name || !is_func(&s))
			continue;
		int r = cb(&s, name, GELF_ST_BIND(s.st_info) == STB_LOCAL ? file : NULL, ctx);
		if (r)
			return r;
	}
	return 0;
}

struct cand {
	uint64_t vaddr, size;
	bool local, ifunc;
	char file[96];
};

struct find_ctx {
	const char *want;
	struct cand c[MAX_CANDS];
	size_t n, total;
};

static int find_cb(const GElf_Sym *s, const char *name, const char *file, void *ctx)
{
	struct find_ctx *f = ctx;
	if (strcmp(name, f->want))
		return 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->c[i].vaddr == s->st_value) { /* an alias of one already seen */
			f->c[i].size = PK_MAX(f->c[i].size, s->st_size);
			return 0;
		}
	f->total++;
	if (f->n < MAX_CANDS) {
		struct cand *c = &f->c[f->n++];
		c->vaddr = s->st_value;
		c->size = s->st_size;
		c->local = GELF_ST_BIND(s->st_info) == STB_LOCAL;
		c->ifunc = GELF_ST_TYPE(s->st_info) == STT_GNU_IFUNC;
		pk_snprintf(c->file, sizeof(c->file), "%s", file ? file : "");
	}
	return 0;
}

/* ---- the debug file ---- */

static bool build_id_of(Elf *elf, char *hex, size_t len)
{
	Elf_Scn *s = NULL;
	GElf_Shdr sh;
	while ((s = elf_nextscn(elf, s))) {
		if (!gelf_getshdr(s, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + noff, "GNU", 4) || nh.n_descsz < 2 ||
			    nh.n_descsz * 2 + 1 > len)
				continue;
			const unsigned char *b = (const unsigned char *)d->d_buf + doff;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", b[i]);
			return true;
		}
	}
	return false;
}

static bool debuglink_of(Elf *elf, const GElf_Ehdr *eh, char *name, size_t len)
{
	Elf_Scn *s = NULL;
	GElf_Shdr sh;
	size_t shstr;
	if (elf_getshdrstrndx(elf, &shstr) < 0)
		return false;
	(void)eh;
	while ((s = elf_nextscn(elf, s))) {
		if (!gelf_getshdr(s, &sh))
			continue;
		const char *sn = elf_strptr(elf, shstr, sh.sh_name);
		if (!sn || strcmp(sn, ".gnu_debuglink"))
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		if (!d || !d->d_size)
			return false;
		size_t n = strnlen(d->d_buf, d->d_size);
		if (n == 0 || n == d->d_size || n >= len || memchr(d->d_buf, '/', n))
			return false;
		memcpy(name, d->d_buf, n);
		name[n] = '\0';
		return true;
	}
	return false;
}

/* Open the separate debug file of pe, if installed: /usr/lib/debug/.build-id/xx/rest.debug,
 * else the debuglink beside the binary, in its .debug/ or under /usr/lib/debug. */
static int open_debug(const struct probe_elf *pe, struct probe_elf *dbg)
{
	char id[130], link[256], p[PK_PROBE_PATH_MAX], dir[PK_PROBE_PATH_MAX];
	if (build_id_of(pe->elf, id, sizeof(id))) {
		pk_snprintf(p, sizeof(p), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
		if (pk_probe_elf_open(dbg, p, NULL, 0) == 0)
			return 0;
	}
	if (!debuglink_of(pe->elf, &pe->eh, link, sizeof(link)))
		return -ENOENT;
	pk_snprintf(dir, sizeof(dir), "%s", pe->path);
	char *sl = strrchr(dir, '/');
	if (sl)
		*sl = '\0';
	else
		strcpy(dir, ".");
	const char *fmts[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
	for (size_t i = 0; i < 3; i++) {
		pk_snprintf(p, sizeof(p), fmts[i], dir, link);
		if (strcmp(p, pe->path) && pk_probe_elf_open(dbg, p, NULL, 0) == 0)
			return 0;
	}
	return -ENOENT;
}

/* The table resolve uses: .symtab of the binary, else .dynsym, else the debug file's
 * .symtab (whose addresses are the binary's). *src says which. */
enum sym_src { SRC_SYMTAB, SRC_DYNSYM, SRC_DEBUG };

static int walk_best(struct probe_elf *pe, struct probe_elf *dbg, bool want_all, sym_cb cb,
		     void *ctx, enum sym_src *src, bool (*found)(void *), char *msg, size_t msglen)
{
	struct symtab t;
	int r;
	if (get_symtab(pe->elf, SHT_SYMTAB, &t)) {
		*src = SRC_SYMTAB;
		return walk_syms(pe->elf, &t, cb, ctx);
	}
	/* a listing takes the debug file's .symtab (a superset of .dynsym) when installed */
	if (want_all && open_debug(pe, dbg) == 0 && get_symtab(dbg->elf, SHT_SYMTAB, &t)) {
		*src = SRC_DEBUG;
		return walk_syms(dbg->elf, &t, cb, ctx);
	}
	bool have_dyn = get_symtab(pe->elf, SHT_DYNSYM, &t);
	if (have_dyn && (r = walk_syms(pe->elf, &t, cb, ctx)) != 0)
		return r;
	*src = SRC_DYNSYM;
	if (have_dyn && (want_all || found(ctx)))
		return 0;
	if (!want_all && open_debug(pe, dbg) == 0 && get_symtab(dbg->elf, SHT_SYMTAB, &t)) {
		*src = SRC_DEBUG;
		return walk_syms(dbg->elf, &t, cb, ctx);
	}
	if (!have_dyn) {
		pk_snprintf(msg, msglen,
			    "'%s' has no symbols (stripped, no .dynsym) and no debug file under "
			    "/usr/lib/debug: install its debug package or give a raw offset",
			    pe->path);
		return -ENOENT;
	}
	return 0;
}

static bool find_found(void *ctx)
{
	return ((struct find_ctx *)ctx)->n > 0;
}

/* ---- instruction boundaries ---- */

/* Is sym_off + plus the start of an instruction, decoding from the symbol's start? */
static int check_insn(const struct probe_elf *pe, uint64_t sym_vaddr, uint64_t sym_off,
		      uint64_t plus, char *msg, size_t msglen, const char *func)
{
	cs_arch arch;
	cs_mode mode;
	switch (pe->eh.e_machine) {
	case EM_X86_64:
		arch = CS_ARCH_X86;
		mode = CS_MODE_64;
		break;
	case EM_386:
		arch = CS_ARCH_X86;
		mode = CS_MODE_32;
		break;
	case EM_AARCH64:
		arch = CS_ARCH_ARM64;
		mode = CS_MODE_ARM;
		break;
	default:
		pk_snprintf(msg, msglen, "cannot decode machine %u to check '%s+%#" PRIx64 "'",
			    pe->eh.e_machine, func, plus);
		return -EILSEQ;
	}
	/* one instruction past plus is all we need to see */
	size_t len = (size_t)plus + 16;
	uint8_t *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	ssize_t got = pread(pe->fd, buf, len, (off_t)sym_off);
	if (got <= 0) {
		free(buf);
		pk_snprintf(msg, msglen, "cannot read '%s' at %#" PRIx64, pe->path, sym_off);
		return -EIO;
	}
	csh h;
	if (cs_open(arch, mode, &h) != CS_ERR_OK) {
		free(buf);
		return -ENOMEM;
	}
	cs_insn *in = cs_malloc(h);
	const uint8_t *p = buf;
	size_t left = (size_t)got;
	uint64_t pc = sym_vaddr, want = sym_vaddr + plus, last = sym_vaddr;
	int r = -EILSEQ;
	char last_txt[80] = "";
	while (in && pc < want && left) {
		last = pc;
		if (!cs_disasm_iter(h, &p, &left, &pc, in))
			break;
		pk_snprintf(last_txt, sizeof(last_txt), "%s %s", in->mnemonic, in->op_str);
	}
	if (!in)
		r = -ENOMEM;
	else if (pc == want)
		r = 0;
	else if (pc > want)
		pk_snprintf(msg, msglen,
			    "'%s+%#" PRIx64 "' is inside the instruction at %s+%#" PRIx64
			    " (%s): a probe there would corrupt it; use an instruction start "
			    "(perfkit annotate shows them)",
			    func, plus, func, last - sym_vaddr, last_txt);
	else
		pk_snprintf(msg, msglen,
			    "cannot decode '%s' up to +%#" PRIx64 " (undecodable bytes at +%#" PRIx64
			    "): refusing a probe not proved to start an instruction",
			    func, plus, pc - sym_vaddr);
	cs_free(in, 1);
	cs_close(&h);
	free(buf);
	return r;
}

/* ---- resolve ---- */

static void list_cands(char *msg, size_t msglen, const char *func, const char *path,
		       const struct find_ctx *f)
{
	size_t o = pk_snprintf(msg, msglen, "'%s' is ambiguous in '%s': %zu symbols:", func, path,
			       f->total);
	for (size_t i = 0; i < f->n && o + 1 < msglen; i++)
		o += pk_snprintf(msg + o, msglen - o, "%s %s%s%s at %#" PRIx64 "%s", i ? "," : "",
				 f->c[i].local ? "static" : "global", f->c[i].file[0] ? " in " : "",
				 f->c[i].file, f->c[i].vaddr, "");
	if (o + 1 < msglen)
		pk_snprintf(msg + o, msglen - o,
			    "; pick one with uprobe/path=FILE,offset=N/ (perfkit probe -x %s "
			    "--list-functions '%s' shows the offsets)",
			    path, func);
}

PK_API int pk_probe__resolve(const char *binary, const char *function, uint64_t plus,
			     const struct pk_probe_opts *opts, struct pk_probe_point *pt, char *msg,
			     size_t msglen)
{
	char path[PK_PROBE_PATH_MAX];
	struct probe_elf pe, dbg = { .fd = -1 };
	struct find_ctx f = { .want = function };
	enum sym_src src = SRC_SYMTAB;
	int r;

	if ((r = pk_probe_open_binary(binary, function && pt, opts, path, &pe, msg, msglen)) < 0)
		return r;
	r = walk_best(&pe, &dbg, false, find_cb, &f, &src, find_found, msg, msglen);
	if (r < 0)
		goto out;
	if (f.n == 0) {
		r = -ENOENT;
		pk_snprintf(msg, msglen, "no function '%s' in '%s' (searched %s)", function, path,
			    src == SRC_SYMTAB ? ".symtab"
			    : src == SRC_DEBUG ? ".dynsym and the debug file"
			    : ".dynsym; no .symtab and no debug file under /usr/lib/debug: a "
			      "function that is not exported needs the debug package");
		goto out;
	}
	if (f.total > 1) {
		r = -ENOTUNIQ;
		list_cands(msg, msglen, function, path, &f);
		goto out;
	}
	if (f.c[0].ifunc) {
		r = -EINVAL;
		pk_snprintf(msg, msglen,
			    "'%s' in '%s' is an IFUNC: its address is the resolver's, not the "
			    "implementation's; probe the implementation by its own name",
			    function, path);
		goto out;
	}
	uint64_t off;
	r = pk_probe_vaddr_to_offset(&pe, f.c[0].vaddr, true, &off);
	if (r < 0) {
		pk_snprintf(msg, msglen, "'%s' at %#" PRIx64 " in '%s' is in %s", function,
			    f.c[0].vaddr, path,
			    r == -ENOEXEC ? "a segment that is not executable"
					  : "no loaded segment of the file");
		r = -EINVAL;
		goto out;
	}
	if (plus) {
		if (f.c[0].size && plus >= f.c[0].size) {
			r = -ERANGE;
			pk_snprintf(msg, msglen,
				    "'%s+%#" PRIx64 "' is past the end of '%s' (%" PRIu64 " bytes)",
				    function, plus, function, f.c[0].size);
			goto out;
		}
		if (!f.c[0].size || plus > MAX_DISASM) {
			r = -EILSEQ;
			pk_snprintf(msg, msglen,
				    "'%s' has no size in the symbol table: cannot prove '+%#" PRIx64
				    "' starts an instruction",
				    function, plus);
			goto out;
		}
		if ((r = check_insn(&pe, f.c[0].vaddr, off, plus, msg, msglen, function)) < 0)
			goto out;
	}
	memset(pt, 0, sizeof(*pt));
	strcpy(pt->path, path);
	pt->dev = pe.dev;
	pt->ino = pe.ino;
	pk_snprintf(pt->symbol, sizeof(pt->symbol), "%s", function);
	pt->vaddr = f.c[0].vaddr + plus;
	pt->offset = off + plus;
	pt->sym_size = f.c[0].size;
	pt->from_dynsym = src == SRC_DYNSYM;
	pt->from_debug = src == SRC_DEBUG;
	r = 0;
out:
	pk_probe_elf_close(&dbg);
	pk_probe_elf_close(&pe);
	return r;
}

/* ---- listing ---- */

struct list_ctx {
	const struct probe_elf *pe;
	const char *glob;
	pk_probe_func_cb cb;
	void *ctx;
};

static int list_cb(const GElf_Sym *s, const char *name, const char *file, void *ctx)
{
	struct list_ctx *l = ctx;
	if (l->glob && fnmatch(l->glob, name, 0))
		return 0;
	struct pk_probe_func f = {
		.name = name,
		.file = file,
		.vaddr = s->st_value,
		.size = s->st_size,
		.local = GELF_ST_BIND(s->st_info) == STB_LOCAL,
	};
	if (pk_probe_vaddr_to_offset(l->pe, s->st_value, true, &f.offset) < 0)
		return 0;
	return l->cb(&f, l->ctx);
}

static bool never(void *ctx)
{
	(void)ctx;
	return false;
}

PK_API int pk_probe__for_each_function(const char *binary, const char *glob,
				       const struct pk_probe_opts *opts, pk_probe_func_cb cb,
				       void *ctx, char *msg, size_t msglen)
{
	char path[PK_PROBE_PATH_MAX];
	struct probe_elf pe, dbg = { .fd = -1 };
	enum sym_src src;
	int r;

	if ((r = pk_probe_open_binary(binary, cb, opts, path, &pe, msg, msglen)) < 0)
		return r;
	struct list_ctx l = { .pe = &pe, .glob = glob, .cb = cb, .ctx = ctx };
	r = walk_best(&pe, &dbg, true, list_cb, &l, &src, never, msg, msglen);
	pk_probe_elf_close(&dbg);
	pk_probe_elf_close(&pe);
	return r;
}

/* ---- arguments ---- */

#if defined(__x86_64__)
/* perf_regs.h of x86: AX 0, CX 2, DX 3, SI 4, DI 5, R8 16, R9 17 */
static const int arg_regs[] = { 5, 4, 3, 2, 16, 17 };
static const int ret_reg = 0;
#elif defined(__aarch64__)
static const int arg_regs[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
static const int ret_reg = 0;
#else
static const int arg_regs[] = { -1 };
static const int ret_reg = -1;
#endif

PK_API int pk_probe__arg_reg(unsigned i)
{
	return i < sizeof(arg_regs) / sizeof(arg_regs[0]) ? arg_regs[i] : -1;
}

PK_API int pk_probe__ret_reg(void)
{
	return ret_reg;
}

PK_API uint64_t pk_probe__args_mask(void)
{
	uint64_t m = 0;
	for (size_t i = 0; i < sizeof(arg_regs) / sizeof(arg_regs[0]); i++)
		if (arg_regs[i] >= 0)
			m |= 1ULL << arg_regs[i];
	if (ret_reg >= 0)
		m |= 1ULL << ret_reg;
	return m;
}
