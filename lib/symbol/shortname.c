/* SPDX-License-Identifier: MIT */
/*
 * The short display form of a demangled C++ name, as perf shows symbols: what the GNU
 * demangler prints without DMGL_PARAMS (`c++filt -p`). From the full form that
 * __cxa_demangle gives ("RET NAME(PARAMS) QUALS [clone .x]") it keeps NAME only:
 *   - the parameter list, cv/ref qualifiers and GCC clone suffixes are dropped;
 *   - the return type of a template function (the only functions whose mangling carries
 *     one, hence the only ones printed with one) is dropped;
 *   - special names ("vtable for X", "guard variable for ...") are not functions and stay
 *     as they are; thunks ("non-virtual thunk to X::f()") keep their full form, as the GNU
 *     demangler does.
 * The input is a symbol name from a file we did not produce: everything is bounded by its
 * length and by `len`, nothing is allocated.
 */
#include <stdbool.h>
#include <string.h>

#include "internal.h"
#include <perfkit/symbol.h>

static bool has_prefix(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);
	return n >= l && !memcmp(s, p, l);
}

static bool has_suffix(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);
	return n >= l && !memcmp(s + n - l, p, l);
}

/* Length of `s[0..n)` without trailing " [clone .xxx]" groups. */
static size_t strip_clones(const char *s, size_t n)
{
	while (n > 0 && s[n - 1] == ']') {
		size_t i = n - 1;
		while (i > 0 && s[i] != '[')
			i--;
		if (s[i] != '[' || i < 1 || s[i - 1] != ' ' || !has_prefix(s + i, n - i, "[clone "))
			break;
		n = i - 1;
	}
	return n;
}

/* Length without trailing function qualifiers (" const", " volatile", " &", " &&", ...). */
static size_t strip_quals(const char *s, size_t n)
{
	static const char *const quals[] = { " const", " volatile", " restrict", " &&", " &",
					     " noexcept", " transaction_safe" };
	for (bool again = true; again;) {
		again = false;
		for (size_t q = 0; q < sizeof(quals) / sizeof(quals[0]); q++)
			if (has_suffix(s, n, quals[q])) {
				n -= strlen(quals[q]);
				again = true;
			}
	}
	return n;
}

/* True if the token ending just before s[i] is the word "operator". */
static bool after_operator(const char *s, size_t i)
{
	if (i < 8 || memcmp(s + i - 8, "operator", 8))
		return false;
	return i == 8 || s[i - 9] == ':' || s[i - 9] == ' ';
}

/*
 * Position of the '(' opening the trailing parameter list of s[0..n) (which ends with
 * ')'), or n if there is none.
 */
static size_t params_start(const char *s, size_t n)
{
	if (n == 0 || s[n - 1] != ')')
		return n;
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			/* "X::operator()" with no parameter list: that pair is the name */
			return after_operator(s, i) ? n : i;
	}
	return n;
}

/* "const::" and the like: the qualifiers of an enclosing function in the name of a
 * local entity ("f(int) const::$_0::operator()"), not a space after a return type. */
static bool local_scope_quals(const char *s, size_t n)
{
	static const char *const q[] = { "const::", "volatile::", "const volatile::", "&::",
					  "&&::" };
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
		if (has_prefix(s, n, q[k]))
			return true;
	return false;
}

/*
 * Start of the name after a return type in s[0..n): one past the last space at bracket
 * depth 0 that comes before an "operator" token (whose own name may hold spaces and
 * brackets: "operator int", "operator<"), or 0 without such a space.
 */
static size_t name_start(const char *s, size_t n)
{
	int depth = 0;
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (depth == 0 && c == 'o' && (i == 0 || s[i - 1] == ':' || s[i - 1] == ' ') &&
		    has_prefix(s + i, n - i, "operator") &&
		    (i + 8 == n || !((s[i + 8] >= 'a' && s[i + 8] <= 'z') ||
				     (s[i + 8] >= 'A' && s[i + 8] <= 'Z') ||
				     (s[i + 8] >= '0' && s[i + 8] <= '9') || s[i + 8] == '_')))
			break;
		if (c == '(' || c == '<' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0)
			depth--;
		else if (c == ' ' && depth == 0 && !local_scope_quals(s + i + 1, n - i - 1))
			start = i + 1;
	}
	return start;
}

PK_API const char *pk_symbol__short_name(const char *name, char *buf, size_t len)
{
	if (!name || !buf || len == 0)
		return name;
	size_t n = strlen(name);
	if (n >= len)
		return name;
	/* a PLT stub "f(int)@plt": the short form of f, then the suffix (as perf names it) */
	if (n > 4 && !memcmp(name + n - 4, "@plt", 4) && n < len) {
		char tmp[1024];
		if (n - 4 < sizeof(tmp)) {
			memcpy(tmp, name, n - 4);
			tmp[n - 4] = '\0';
			const char *s = pk_symbol__short_name(tmp, buf, len);
			if (s == buf || s == tmp) {
				size_t l = strlen(s);
				if (l + 4 < len) {
					memmove(buf, s, l);
					memcpy(buf + l, "@plt", 5);
					return buf;
				}
			}
		}
		return name;
	}
	/* thunks keep their full form; "vtable for", "typeinfo for", "guard variable for"
	 * and the like are not functions and have no parameter list to drop */
	static const char *const keep[] = {
		"non-virtual thunk to ", "virtual thunk to ", "covariant return thunk",
		"transaction clone for ", "typeinfo for ", "typeinfo name for ", "vtable for ",
		"VTT for ", "construction vtable for ", "guard variable for ",
		"reference temporary #", "TLS init function for ", "TLS wrapper function for ",
		"hidden alias for ", "java Class for ", "non-transaction clone for ",
	};
	for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
		if (has_prefix(name, n, keep[k]))
			return name;
	size_t end = strip_quals(name, strip_clones(name, n));
	size_t p = params_start(name, end);
	if (p == end || p == 0)
		return name; /* not a function */
	/* a function returning a function pointer, "void (*f<int>(int))()": the name and
	 * its own parameter list sit inside "(*...)" */
	size_t b = 0, e = p;
	if (name[e - 1] == ')') {
		int depth = 0;
		for (size_t q = 0; q + 1 < e; q++) {
			if (depth == 0 && name[q] == '(' && name[q + 1] == '*') {
				size_t ie = strip_quals(name, e - 1), ip = params_start(name, ie);
				if (ip > q + 2 && ip < ie) {
					b = q + 2;
					e = ip;
				}
				break;
			}
			if (name[q] == '(' || name[q] == '<' || name[q] == '[' || name[q] == '{')
				depth++;
			else if ((name[q] == ')' || name[q] == '>' || name[q] == ']' ||
				  name[q] == '}') && depth > 0)
				depth--;
		}
	}
	if (b == 0)
		b = name_start(name, e);
	if (e <= b)
		return name;
	memcpy(buf, name + b, e - b);
	buf[e - b] = '\0';
	return buf;
}

/* The DWARF name of a function vs its ELF symbol: equal, or equal but for leading
 * underscores (assembler entry points such as __clone3 / clone3 have no DWARF
 * subprogram of their own; perf's addr2line then reports the ELF name). glibc's
 * internal aliases are different names to perf: its report and script show
 * "__GI___fstatat64 (inlined)" above fstatat64. */
static const char *core_name(const char *n)
{
	while (*n == '_')
		n++;
	return n;
}

/* Also one function: the ELF name with a symbol version ("clock_nanosleep@GLIBC_2.2.5",
 * a literal .symtab alias), DWARF's without. */
PK_API bool pk_symbol__same_function(const char *dwarf, const char *elf)
{
	if (!dwarf || !elf)
		return false;
	if (!strcmp(dwarf, elf))
		return true;
	const char *a = core_name(dwarf), *b = core_name(elf);
	/* (a GCC clone, "msort.constprop.0" for DWARF's "msort", is another function to
	 * perf: it shows "msort (inlined)" in the clone's unwound frames) */
	size_t la = strcspn(a, "@"), lb = strcspn(b, "@");
	return la == lb && !memcmp(a, b, la);
}
