/* SPDX-License-Identifier: MIT */
/*
 * Naming rules of perf that no demangler library has (the names themselves come from
 * demangle.c, already in perf's short form): which DWARF function name and which ELF
 * symbol name are one function, as perf decides when it marks frames "(inlined)".
 */
#include <stdbool.h>
#include <string.h>

#include "internal.h"
#include <perfkit/symbol.h>

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
