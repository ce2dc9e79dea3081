/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/demangle.c - symbol names as perf shows them: C++ (Itanium ABI, `_Z...`) and
 * Rust (legacy `_ZN...17h<hash>E` and v0 `_R...`) names decoded by libiberty's
 * demanglers, called the way perf 6.1 calls them (its cplus_demangle path: the Rust
 * demangler first, since legacy Rust names are also valid C++ names, then the C++ one;
 * no DMGL_* options, so no parameter lists, qualifiers, clone suffixes or Rust hashes),
 * and OCaml names, which perf decodes itself.
 *
 * libiberty is linked statically (Debian ships only libiberty.a, built position
 * independent). Only its demangler objects are linked: cp-demangle.o and rust-demangle.o
 * carry a licence exception allowing unrestricted linking. The one other object they
 * would pull in, safe-ctype.o (a character-class table, LGPL without that exception), is
 * replaced by our own table below; see docs/design-symbols.md.
 *
 * Hostile input: names longer than PK_DEMANGLE_MAX are not decoded (the C++ demangler
 * keeps its parse tree in arrays on the stack, about 72 bytes per input byte; it refuses
 * names over 1024 bytes itself); and the output is written through a callback that stops
 * the demangler (longjmp, at a point where it holds no heap memory: dm_can_stop) once it
 * no longer fits the caller's buffer, which bounds the time spent on names whose
 * substitutions (C++) or back-references (Rust v0) expand exponentially.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "internal.h"
#include "symbol-internal.h"
#include <perfkit/symbol.h>

/*
 * libiberty's character classes (the `_sch_istable` its Rust demangler reads through
 * safe-ctype.h's ISDIGIT/ISALNUM/... macros), with the bit values of that header: plain
 * ASCII facts, defined here so that safe-ctype.o is not linked. Weak, so that a program
 * linking libperfkit.a together with libiberty's own table gets no duplicate definition.
 */
enum {
	CT_BLANK = 0x0001, CT_CNTRL = 0x0002, CT_DIGIT = 0x0004, CT_LOWER = 0x0008,
	CT_PRINT = 0x0010, CT_PUNCT = 0x0020, CT_SPACE = 0x0040, CT_UPPER = 0x0080,
	CT_XDIGIT = 0x0100, CT_IDST = 0x0200, CT_VSP = 0x0400, CT_NVSP = 0x0800,
};
#define CT_P (CT_PUNCT | CT_PRINT)
extern const unsigned short _sch_istable[256];
__attribute__((weak)) const unsigned short _sch_istable[256] = {
	[0] = CT_NVSP | CT_CNTRL,
	[1 ... 8] = CT_CNTRL,
	['\t'] = CT_NVSP | CT_SPACE | CT_BLANK | CT_CNTRL,
	['\n'] = CT_VSP | CT_SPACE | CT_CNTRL,
	['\v' ... '\f'] = CT_NVSP | CT_SPACE | CT_CNTRL,
	['\r'] = CT_VSP | CT_SPACE | CT_CNTRL,
	[14 ... 31] = CT_CNTRL,
	[' '] = CT_NVSP | CT_SPACE | CT_BLANK | CT_PRINT,
	['!' ... '/'] = CT_P,
	['0' ... '9'] = CT_DIGIT | CT_XDIGIT | CT_PRINT,
	[':' ... '@'] = CT_P,
	['A' ... 'F'] = CT_UPPER | CT_IDST | CT_XDIGIT | CT_PRINT,
	['G' ... 'Z'] = CT_UPPER | CT_IDST | CT_PRINT,
	['[' ... '^'] = CT_P,
	['_'] = CT_P | CT_IDST,
	['`'] = CT_P,
	['a' ... 'f'] = CT_LOWER | CT_IDST | CT_XDIGIT | CT_PRINT,
	['g' ... 'z'] = CT_LOWER | CT_IDST | CT_PRINT,
	['{' ... '~'] = CT_P,
	[127] = CT_CNTRL,
	/* 128..255: no class (the "C" locale) */
};

struct dm_out {
	char *buf;
	size_t cap, n;
	jmp_buf *stop;
	uintptr_t name, name_end;       /* the mangled name */
	bool rust;                      /* the Rust demangler is running */
	bool full;                      /* output was dropped */
};

/*
 * Whether the running demangler may be left from this callback. The C++ one holds only
 * stack memory in callback mode. The Rust one mallocs a buffer while it decodes and
 * prints a Punycode identifier (v0 "u<len>..."), and hands us pieces of that buffer (or
 * of its stack): leaving then would leak it. Its other output comes from the name
 * itself or from its string literals (in our own image): stop there.
 */
static bool dm_can_stop(const struct dm_out *o, const char *s)
{
	if (!o->rust)
		return true;
	uintptr_t p = (uintptr_t)s;
	if (p >= o->name && p < o->name_end)
		return true;
	Dl_info a, b;
	return dladdr(s, &a) && dladdr((const void *)(uintptr_t)pk_symbol__demangle, &b) &&
	       a.dli_fbase == b.dli_fbase;
}

static void dm_put(const char *s, size_t l, void *opaque)
{
	struct dm_out *o = opaque;
	if (!l)
		return;		/* the Rust demangler passes (NULL, 0) for empty parts */
	if (o->full || l >= o->cap - o->n) {
		o->full = true;
		if (dm_can_stop(o, s))
			longjmp(*o->stop, 1);
		return;
	}
	memcpy(o->buf + o->n, s, l);
	o->n += l;
	o->buf[o->n] = '\0';
}

static int dm_run(struct dm_out *o, const char *name)
{
	jmp_buf stop;
	o->stop = &stop;
	o->name = (uintptr_t)name;
	o->name_end = o->name + strlen(name);
	o->rust = true;
	if (setjmp(stop))
		return -ENOSPC;
	if (rust_demangle_callback(name, DMGL_NO_OPTS, dm_put, o))
		return o->full ? -ENOSPC : 0;
	/* the v0 decoder prints as it parses: drop what it wrote before it gave up */
	o->n = 0;
	o->buf[0] = '\0';
	o->full = false;
	o->rust = false;
	if (cplus_demangle_v3_callback(name, DMGL_NO_OPTS, dm_put, o))
		return 0;
	return -EINVAL;
}

/*
 * OCaml's native symbols, "caml" and a module path starting with a capital letter
 * ("camlStdlib__List__map_154"), which perf 6.1 decodes itself when libiberty does not:
 * "__" separates path components ("Stdlib.List.map_154", the leftmost pair first, so
 * "___" is "._"), "$xx" is a byte in hex, an escaped NUL ends the name, and anything else
 * (a lone '$', "$zz") is kept. No library does this. Returns the length or -ENOSPC.
 */
static int ocaml_demangle(const char *name, char *buf, size_t len)
{
	size_t n = 0;
	for (const char *p = name + 4; *p;) {
		char c = *p;
		int hi, lo;
		if (p[0] == '_' && p[1] == '_') {
			c = '.';
			p += 2;
		} else if (p[0] == '$' && (hi = pk_hexval((unsigned char)p[1])) >= 0 &&
			   (lo = pk_hexval((unsigned char)p[2])) >= 0) {
			c = (char)(hi << 4 | lo);
			p += 3;
			if (c == '\0')
				break;
		} else {
			p++;
		}
		if (n + 1 >= len)
			return -ENOSPC;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return (int)n;
}

static bool ocaml_mangled(const char *name)
{
	return !strncmp(name, "caml", 4) && name[4] >= 'A' && name[4] <= 'Z';
}

PK_API int pk_symbol__demangle(const char *name, char *buf, size_t len)
{
	if (!name || !buf || len == 0)
		return pk_err(-EINVAL);
	buf[0] = '\0';
	/* the C++ and Rust schemes start with '_' (_Z, _R, and the C++ demangler's _GLOBAL_
	 * names); OCaml's with "caml" */
	bool ocaml = ocaml_mangled(name);
	if (name[0] != '_' && !ocaml)
		return pk_err(-EINVAL);
	if (strnlen(name, PK_DEMANGLE_MAX + 1) > PK_DEMANGLE_MAX)
		return pk_err(-ENAMETOOLONG);
	int r;
	if (ocaml) {
		r = ocaml_demangle(name, buf, len);
	} else {
		struct dm_out o = { .buf = buf, .cap = len };
		r = dm_run(&o, name);
		if (r == 0)
			r = (int)o.n;
	}
	if (r <= 0) {
		buf[0] = '\0';
		return pk_err(r < 0 ? r : -EINVAL);
	}
	return r;
}

const char *pk_demangle_into(struct pk_machine *m, struct pk_arena *a, const char *name)
{
	/* demangled names are longer than mangled ones (substitutions expand) */
	char out[4 * PK_DEMANGLE_MAX];
	if (m->no_demangle || pk_symbol__demangle(name, out, sizeof(out)) < 0)
		return pk_arena_strdup(a, name);
	return pk_arena_strdup(a, out);
}

const char *pk_demangle_sfx_into(struct pk_machine *m, struct pk_arena *a, const char *name,
				 const char *sfx)
{
	char out[4 * PK_DEMANGLE_MAX];
	if (m->no_demangle || !*name || pk_symbol__demangle(name, out, sizeof(out)) < 0)
		return pk_arena_strcat(a, name, sfx);
	return pk_arena_strcat(a, out, sfx);
}
