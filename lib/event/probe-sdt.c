/* SPDX-License-Identifier: MIT */
/*
 * lib/event/probe-sdt.c - SDT (USDT) markers: the NT_STAPSDT notes of .note.stapsdt
 * (systemtap's sys/sdt.h), the probe address corrected by the .stapsdt.base section when
 * the file was prelinked or relinked, and the semaphore's file offset, which the uprobe
 * PMU's ref_ctr_offset term takes so the kernel raises the semaphore while the probe is
 * open.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "probe-internal.h"

#define NT_STAPSDT 3

int pk_sdt_parse_desc(const uint8_t *desc, size_t len, bool is64, struct sdt_raw *out)
{
	size_t asz = is64 ? 8 : 4, o = 3 * asz;
	uint64_t a[3];
	if (!desc || len < o + 3)
		return -EINVAL;
	for (int i = 0; i < 3; i++) {
		if (is64) {
			memcpy(&a[i], desc + i * 8, 8);
		} else {
			uint32_t v;
			memcpy(&v, desc + i * 4, 4);
			a[i] = v;
		}
	}
	const char *s[3];
	for (int i = 0; i < 3; i++) {
		const char *p = (const char *)desc + o;
		const char *z = memchr(p, '\0', len - o);
		if (!z)
			return -EINVAL;
		s[i] = p;
		o = (size_t)(z - (const char *)desc) + 1;
		if (i < 2 && o >= len)
			return -EINVAL;
	}
	if (!s[0][0] || !s[1][0])
		return -EINVAL;
	out->pc = a[0];
	out->base = a[1];
	out->sem = a[2];
	out->provider = s[0];
	out->name = s[1];
	out->args = s[2];
	return 0;
}

/* Address of the .stapsdt.base section (0: none). */
static uint64_t sdt_base(Elf *elf)
{
	size_t shstr;
	Elf_Scn *s = NULL;
	GElf_Shdr sh;
	if (elf_getshdrstrndx(elf, &shstr) < 0)
		return 0;
	while ((s = elf_nextscn(elf, s))) {
		const char *n;
		if (gelf_getshdr(s, &sh) && (n = elf_strptr(elf, shstr, sh.sh_name)) &&
		    !strcmp(n, ".stapsdt.base"))
			return sh.sh_addr;
	}
	return 0;
}

static int walk_sdt(const struct probe_elf *pe, pk_sdt_marker_cb cb, void *ctx)
{
	uint64_t base = sdt_base(pe->elf);
	bool is64 = gelf_getclass(pe->elf) == ELFCLASS64;
	Elf_Scn *s = NULL;
	GElf_Shdr sh;
	while ((s = elf_nextscn(pe->elf, s))) {
		if (!gelf_getshdr(s, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && off < d->d_size && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			struct sdt_raw raw;
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((char *)d->d_buf + noff, "stapsdt", 8))
				continue;
			if (pk_sdt_parse_desc((const uint8_t *)d->d_buf + doff, nh.n_descsz, is64,
					      &raw) < 0)
				continue;
			struct pk_sdt_marker m = {
				.provider = raw.provider,
				.name = raw.name,
				.args = raw.args,
				.vaddr = raw.pc,
				.sem_vaddr = raw.sem,
			};
			/* the note holds link-time addresses; .stapsdt.base says how far the
			 * file moved since */
			if (base && raw.base)
				m.vaddr += base - raw.base;
			if (pk_probe_vaddr_to_offset(pe, m.vaddr, true, &m.offset) < 0)
				continue;
			if (m.sem_vaddr && pk_probe_vaddr_to_offset(pe, m.sem_vaddr, false,
								    &m.sem_offset) < 0)
				continue;
			int r = cb(&m, ctx);
			if (r)
				return r;
		}
	}
	return 0;
}

PK_API int pk_probe__for_each_sdt(const char *binary, const struct pk_probe_opts *opts,
				  pk_sdt_marker_cb cb, void *ctx, char *msg, size_t msglen)
{
	char path[PK_PROBE_PATH_MAX];
	struct probe_elf pe;
	int r;

	if ((r = pk_probe_open_binary(binary, cb, opts, path, &pe, msg, msglen)) < 0)
		return r;
	r = walk_sdt(&pe, cb, ctx);
	pk_probe_elf_close(&pe);
	return r;
}

struct sdt_find {
	const char *provider, *name;
	struct pk_probe_point *pt;
	size_t n;
	uint64_t first_vaddr;
};

static int sdt_find_cb(const struct pk_sdt_marker *m, void *ctx)
{
	struct sdt_find *f = ctx;
	if (strcmp(m->provider, f->provider) || strcmp(m->name, f->name))
		return 0;
	if (f->n++ == 0) {
		f->pt->vaddr = m->vaddr;
		f->pt->offset = m->offset;
		f->pt->ref_ctr_offset = m->sem_offset;
	}
	return 0;
}

PK_API int pk_probe__resolve_sdt(const char *binary, const char *provider, const char *name,
				 const struct pk_probe_opts *opts, struct pk_probe_point *pt,
				 char *msg, size_t msglen)
{
	char path[PK_PROBE_PATH_MAX];
	struct probe_elf pe;
	int r;

	if ((r = pk_probe_open_binary(binary, provider && name && pt, opts, path, &pe, msg,
				       msglen)) < 0)
		return r;
	memset(pt, 0, sizeof(*pt));
	struct sdt_find f = { .provider = provider, .name = name, .pt = pt };
	walk_sdt(&pe, sdt_find_cb, &f);
	pk_probe_elf_close(&pe);
	if (f.n == 0) {
		pk_snprintf(msg, msglen,
			    "no SDT marker '%s:%s' in '%s' (perfkit list sdt '%s' lists its markers)",
			    provider, name, path, path);
		return -ENOENT;
	}
	if (f.n > 1) {
		pk_snprintf(msg, msglen,
			    "SDT marker '%s:%s' is at %zu places in '%s': one probe covers one; "
			    "perfkit probe -x '%s' --list-sdt shows their offsets",
			    provider, name, f.n, path, path);
		return -ENOTUNIQ;
	}
	strcpy(pt->path, path);
	pt->dev = pe.dev;
	pt->ino = pe.ino;
	pk_snprintf(pt->symbol, sizeof(pt->symbol), "%s:%s", provider, name);
	return 0;
}
