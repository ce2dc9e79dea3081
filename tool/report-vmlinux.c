/* SPDX-License-Identifier: MIT */
/*
 * tool/report-vmlinux.c - `perfkit report --vmlinux FILE`: the kernel's symbols from an
 * uncompressed ELF kernel image, as perf 6.1 takes them. Like perf, the image is used only
 * when its build-id is the one the recording names for [kernel.kallsyms] (a file without
 * one, or a recording without one, is taken as it is). Its function symbols are handed to
 * the report as a kallsyms file (the machine's kallsyms override), written to a temporary
 * file removed when the report is done. The ELF is read with libelf, every offset and
 * count checked by it; names are cut at 255 bytes and must be printable.
 */
#include "report.h"
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>

bool rpt_kernel_bid(struct pk_data_reader *rd, const uint8_t **id, size_t *len)
{
	const struct pk_data_env *env = pk_data_reader__env(rd);
	for (size_t i = 0; env && i < env->nr_build_ids; i++) {
		const struct pk_data_build_id *b = &env->build_ids[i];
		if (b->filename && !strcmp(b->filename, "[kernel.kallsyms]") && b->build_id_size) {
			*id = b->build_id;
			*len = b->build_id_size;
			return true;
		}
	}
	return false;
}

static bool name_ok(const char *n)
{
	size_t l = 0;
	for (; n[l]; l++)
		if ((unsigned char)n[l] <= ' ' || (unsigned char)n[l] >= 0x7f || l >= 255)
			return false;
	return l > 0;
}

/* the symbols of a symbol table section into out as "addr t name" lines; count in *nr */
static int write_syms(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, FILE *out, size_t *nr)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !sh->sh_entsize)
		return -EINVAL;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			return -EINVAL;
		const char *name = elf_strptr(e, sh->sh_link, s.st_name);
		int t = GELF_ST_TYPE(s.st_info);
		if (!name || !name_ok(name) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		bool text = !strcmp(name, "_text") || !strcmp(name, "_stext") || !strcmp(name, "_etext");
		if (t != STT_FUNC && !text)
			continue;
		fprintf(out, "%016" PRIx64 " %c %s\n", (uint64_t)s.st_value,
			GELF_ST_BIND(s.st_info) == STB_LOCAL ? 't' : 'T', name);
		(*nr)++;
	}
	return 0;
}

/* 0 with *path (malloc'd) the kallsyms file to use, 1 when the image does not go with
 * the recording (said; the kernel stays unresolved as perf leaves it), -1 on an error
 * (said) */
int rpt_vmlinux_kallsyms(const char *vmlinux, struct pk_data_reader *rd, char **path)
{
	*path = NULL;
	uint8_t bid[PK_BUILD_ID_MAX];
	size_t blen = sizeof(bid);
	const uint8_t *want;
	size_t wlen;
	if (access(vmlinux, R_OK)) {
		tool_error("--vmlinux '%s': %s", vmlinux, strerror(errno));
		return -1;
	}
	int err = pk_build_id__read(vmlinux, bid, &blen);
	if (err && err != -ENOENT) {
		tool_error("--vmlinux '%s': %s", vmlinux,
			   err == -EINVAL ? "not an ELF file" : pk_strerror(err));
		return -1;
	}
	if (rpt_kernel_bid(rd, &want, &wlen) && (err || wlen != blen || memcmp(want, bid, blen))) {
		tool_warn("--vmlinux '%s' is not the recorded kernel (its build-id %s): "
			  "kernel symbols unresolved", vmlinux, err ? "is missing" : "differs");
		return 1;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	int fd = open(vmlinux, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tool_error("--vmlinux '%s': %s", vmlinux, strerror(errno));
		return -1;
	}
	char *p = strdup("/tmp/perfkit-ksyms.XXXXXX");
	int tfd = p ? mkstemp(p) : -1;
	FILE *out = tfd >= 0 ? fdopen(tfd, "w") : NULL;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t nr = 0;
	err = -EINVAL;
	if (out && e && elf_kind(e) == ELF_K_ELF) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB &&
			    (err = write_syms(e, scn, &sh, out, &nr)))
				break;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	if (out && fclose(out))
		err = -EIO;
	else if (!out && tfd >= 0)
		close(tfd);
	if (err || !nr) {
		if (tfd >= 0)
			unlink(p);
		free(p);
		if (!out)
			tool_error("--vmlinux: cannot write a temporary file in /tmp");
		else
			tool_error("--vmlinux '%s': %s", vmlinux,
				   err ? "not a readable ELF image" : "has no function symbols");
		return -1;
	}
	*path = p;
	return 0;
}
