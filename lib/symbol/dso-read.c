/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/dso-read.c - the bytes of a DSO at one of its addresses, for disassembly:
 * read from the ELF file the symbols came from (libdwfl already holds it open), through
 * its section headers, every size checked against the section's data.
 */
#include <gelf.h>
#include <string.h>
#include <elfutils/libdwfl.h>
#include "internal.h"
#include "symbol-internal.h"

PK_API long pk_dso__read(struct pk_dso *d, uint64_t dso_addr, void *buf, size_t len,
			 uint16_t *e_machine)
{
	if (!d || (!buf && len))
		return -EINVAL;
	if (d->kind != PK_DSO_ELF && d->kind != PK_DSO_VDSO)
		return -EOPNOTSUPP;
	int err = pk_dso_ensure_loaded(d);
	if (err)
		return err;
	Dwfl_Module *mod = pk_dso_module(d);
	if (!mod)
		return -ENOENT;
	Dwarf_Addr bias = 0;
	Elf *e = dwfl_module_getelf(mod, &bias);
	if (!e)
		return -EINVAL;
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh))
		return -EINVAL;
	if (e_machine)
		*e_machine = eh.e_machine;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || !sh.sh_size)
			continue;
		if (dso_addr < sh.sh_addr || dso_addr - sh.sh_addr >= sh.sh_size)
			continue;
		if (sh.sh_type == SHT_NOBITS)
			continue; /* no contents in this file (a debug file's .text, .bss) */
		Elf_Data *data = elf_rawdata(scn, NULL);
		if (!data || !data->d_buf)
			return -EINVAL;
		uint64_t off = dso_addr - sh.sh_addr;
		/* the header's size is not trusted: the data libelf read bounds the copy */
		if (off >= data->d_size)
			return -ENODATA;
		size_t n = (size_t)PK_MIN((uint64_t)len, (uint64_t)data->d_size - off);
		memcpy(buf, (const char *)data->d_buf + off, n);
		return (long)n;
	}
	return -ENODATA;
}
