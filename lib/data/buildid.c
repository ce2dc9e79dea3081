/* SPDX-License-Identifier: MIT */
/* lib/data: the GNU build-id note of an ELF file, read with libelf. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "data-internal.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* Look through one note data block; returns 0 and fills buf/len when found. */
static int scan_notes(Elf_Data *data, uint8_t *buf, size_t *len)
{
	GElf_Nhdr nhdr;
	size_t off = 0, name_off, desc_off, next;

	if (!data || !data->d_buf)
		return -ENOENT;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nhdr.n_descsz > 0 &&
		    desc_off + nhdr.n_descsz <= data->d_size) {
			size_t n = PK_MIN((size_t)nhdr.n_descsz, *len);
			memcpy(buf, (const uint8_t *)data->d_buf + desc_off, n);
			*len = n;
			return 0;
		}
		if (next <= off)
			break;
		off = next;
	}
	return -ENOENT;
}

PK_API int pk_build_id__read(const char *path, uint8_t *buf, size_t *len)
{
	struct stat st;
	Elf *elf = NULL;
	int fd, ret = -ENOENT;
	size_t shnum = 0;

	if (!path || !buf || !len || !*len)
		return pk_err(-EINVAL);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return pk_err(-errno);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 64 ||
	    (uint64_t)st.st_size > (4ULL << 30)) {
		close(fd);
		return pk_err(-EINVAL);
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return pk_err(-EINVAL);
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -EINVAL;
		goto out;
	}
	if (elf_getshdrnum(elf, &shnum) == 0 && shnum > 0 && shnum < 65536) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
				continue;
			if (scan_notes(elf_getdata(scn, NULL), buf, len) == 0) {
				ret = 0;
				goto out;
			}
		}
	}
	/* no section headers (stripped core-style files): try PT_NOTE segments */
	size_t phnum = 0;
	if (elf_getphdrnum(elf, &phnum) == 0 && phnum < 65536) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			if (ph.p_offset > (uint64_t)st.st_size ||
			    ph.p_filesz > (uint64_t)st.st_size - ph.p_offset)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
							   ELF_T_NHDR);
			if (scan_notes(d, buf, len) == 0) {
				ret = 0;
				goto out;
			}
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret ? pk_err(ret) : 0;
}
