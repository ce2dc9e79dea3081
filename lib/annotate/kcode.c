/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/kcode.c - the kernel's code for annotate. perf 6.1 reads it from, in
 * order: the vmlinux given with -k (only it); a vmlinux in the build-id cache
 * (<cache>/.build-id/xx/yyyy.../elf); perf's vmlinux paths (vmlinux, /boot/vmlinux,
 * /boot/vmlinux-R, /usr/lib/debug/boot/vmlinux-R, /lib/modules/R/build/vmlinux,
 * /usr/lib/debug/lib/modules/R/vmlinux, /usr/lib/debug/boot/vmlinux-R.debug, R the
 * recorded release; with --symfs only the first two, under it); each taken only when
 * its build-id is the recorded kernel's. Then /proc/kcore, when the running kernel is
 * the recorded one (its build-id in /sys/kernel/notes) and the file can be opened
 * (CAP_SYS_RAWIO). Both are ELF files whose PT_LOAD segments map kernel addresses: a
 * vmlinux's at its link addresses (the recording's are those plus the KASLR offset,
 * the recorded _text minus the image's), kcore's at the running kernel's (the recorded
 * ones minus the difference of the recorded and the running _text). Only the bytes of
 * the functions annotated are read, with pread: /proc/kcore is as large as the address
 * space it maps.
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <perfkit/data.h>
#include "internal.h"
#include "annotate/kcode.h"

struct pk_kcode {
	int fd;
	struct pk_kc_elf elf;
	int source;
	char *path;
	uint64_t bias;
	char release[65];
	uint8_t want[PK_BUILD_ID_MAX];
	size_t want_len;
	int vm_err;
	char *vm_path;
	uint8_t vm_bid[PK_BUILD_ID_MAX];
	size_t vm_bid_len;
	int kc_err;
	char *kc_path;
	uint8_t run[PK_BUILD_ID_MAX];
	size_t run_len;
};

/* all of [off, off + len) unless the file ends first: bytes read, or -errno */
static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		if (off + done > (uint64_t)INT64_MAX)
			break;
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return done ? (ssize_t)done : -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int seg_cmp(const void *pa, const void *pb)
{
	const struct pk_kc_seg *a = pa, *b = pb;
	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	/* the same start: the one first in the file wins (offsets stand for the order) */
	return (a->flags > b->flags) - (a->flags < b->flags);
}

/*
 * The segments sorted by address, without overlaps: where two overlap the one starting
 * lower (at the same start: the earlier in the file) keeps the bytes and the other is
 * cut to begin after it (or dropped). A look-up is then a binary search. seq: the file
 * order, kept in flags' high bits while sorting.
 */
static size_t segs_normalise(struct pk_kc_seg *v, size_t n)
{
	qsort(v, n, sizeof(*v), seg_cmp);
	size_t w = 0;
	uint64_t last = 0; /* the last address covered so far (inclusive) */
	for (size_t i = 0; i < n; i++) {
		struct pk_kc_seg s = v[i];
		s.flags &= 0xffu;
		if (w) {
			if (last == UINT64_MAX)
				break; /* the rest is covered */
			if (s.vaddr <= last) {
				uint64_t cut = last - s.vaddr + 1;
				if (cut >= s.filesz)
					continue;
				s.vaddr += cut;
				s.offset += cut;
				s.filesz -= cut;
			}
		}
		v[w++] = s;
		last = s.vaddr + (s.filesz - 1);
	}
	return w;
}

int pk_kc_elf_read(int fd, uint64_t size, struct pk_kc_elf *e)
{
	memset(e, 0, sizeof(*e));
	Elf64_Ehdr eh;
	ssize_t n = pread_full(fd, &eh, sizeof(eh), 0);
	if (n < 0)
		return (int)n;
	if ((size_t)n < sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -EINVAL;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return -EOPNOTSUPP;
#endif
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phoff)
		return -EINVAL;
	uint64_t nph = eh.e_phnum;
	if (nph == PN_XNUM) {
		/* more than 65534: the count is section header 0's sh_info */
		Elf64_Shdr sh0;
		if (!eh.e_shoff || eh.e_shentsize != sizeof(Elf64_Shdr) ||
		    pread_full(fd, &sh0, sizeof(sh0), eh.e_shoff) != (ssize_t)sizeof(sh0))
			return -EINVAL;
		nph = sh0.sh_info;
	}
	if (!nph)
		return -EINVAL;
	if (nph > PK_KC_MAX_PHDRS)
		return -E2BIG;
	uint64_t bytes = nph * sizeof(Elf64_Phdr);
	if (eh.e_phoff > UINT64_MAX - bytes || (size && eh.e_phoff + bytes > size))
		return -EINVAL;
	Elf64_Phdr *ph = malloc((size_t)bytes);
	struct pk_kc_seg *v = malloc((size_t)nph * sizeof(*v));
	if (!ph || !v) {
		free(ph);
		free(v);
		return -ENOMEM;
	}
	n = pread_full(fd, ph, (size_t)bytes, eh.e_phoff);
	if (n != (ssize_t)bytes) {
		free(ph);
		free(v);
		return n < 0 ? (int)n : -EINVAL;
	}
	size_t nr = 0;
	for (size_t i = 0; i < nph; i++) {
		const Elf64_Phdr *p = &ph[i];
		uint64_t fs = p->p_filesz;
		if (p->p_type != PT_LOAD || !fs || p->p_offset > (uint64_t)INT64_MAX)
			continue;
		/* the file bytes that exist, at addresses that do not wrap */
		if (size) {
			if (p->p_offset >= size)
				continue;
			fs = PK_MIN(fs, size - p->p_offset);
		}
		fs = PK_MIN(fs, (uint64_t)INT64_MAX - p->p_offset + 1);
		if (fs - 1 > UINT64_MAX - p->p_vaddr)
			fs = UINT64_MAX - p->p_vaddr + 1;
		/* the file order in the high bits until sorted (segs_normalise) */
		v[nr++] = (struct pk_kc_seg){ .vaddr = p->p_vaddr, .offset = p->p_offset,
					      .filesz = fs,
					      .flags = (p->p_flags & 0xffu) | (uint32_t)(i << 8) };
	}
	free(ph);
	e->type = eh.e_type;
	e->machine = eh.e_machine;
	e->nr = segs_normalise(v, nr);
	e->segs = v;
	return 0;
}

void pk_kc_elf_release(struct pk_kc_elf *e)
{
	if (!e)
		return;
	free(e->segs);
	e->segs = NULL;
	e->nr = 0;
}

/* the segment holding a, or NULL */
static const struct pk_kc_seg *seg_find(const struct pk_kc_elf *e, uint64_t a)
{
	size_t lo = 0, hi = e->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e->segs[mid].vaddr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct pk_kc_seg *s = &e->segs[lo - 1];
	return a - s->vaddr < s->filesz ? s : NULL;
}

long pk_kc_elf_pread(int fd, const struct pk_kc_elf *e, uint64_t vaddr, void *buf, size_t len)
{
	if (!e || (!buf && len) || len > (size_t)LONG_MAX)
		return -EINVAL;
	size_t done = 0;
	while (done < len) {
		uint64_t a = vaddr + done;
		if (a < vaddr)
			break; /* past the top of the address space */
		const struct pk_kc_seg *s = seg_find(e, a);
		if (!s)
			break;
		uint64_t in = a - s->vaddr;
		size_t want = (size_t)PK_MIN((uint64_t)(len - done), s->filesz - in);
		ssize_t n = pread_full(fd, (char *)buf + done, want, s->offset + in);
		if (n < 0)
			return done ? (long)done : (long)n;
		done += (size_t)n;
		if ((size_t)n < want)
			break;
	}
	return done ? (long)done : -ENODATA;
}

/* ---- the choice of the file ---- */

/* the address of symbol `name` in an ELF file's symbol table (libelf checks every
 * offset); false when there is none */
static bool elf_sym_addr(int fd, const char *name, uint64_t *addr)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool found = false;
	Elf_Scn *scn = NULL;
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		Elf_Data *sd = elf_getdata(elf_getscn(e, sh.sh_link), NULL);
		if (!d || !sd || !sd->d_buf || !d->d_buf)
			continue;
		/* the string table read once: a name is compared only when its first byte
		 * matches (a kernel has 100k+ symbols; elf_strptr per symbol was most of it) */
		const char *str = sd->d_buf;
		size_t strsz = sd->d_size;
		size_t nlen = strlen(name);
		uint64_t nsym = d->d_size / sizeof(Elf64_Sym);
		bool raw = gelf_getclass(e) == ELFCLASS64 && d->d_type == ELF_T_SYM;
		for (uint64_t i = 0; i < nsym && i <= INT_MAX; i++) {
			GElf_Sym s;
			if (raw) {
				Elf64_Sym r;
				memcpy(&r, (const char *)d->d_buf + i * sizeof(r), sizeof(r));
				s.st_name = r.st_name;
				s.st_shndx = r.st_shndx;
				s.st_value = r.st_value;
			} else if (!gelf_getsym(d, (int)i, &s)) {
				break;
			}
			if (!s.st_name || s.st_shndx == SHN_UNDEF || s.st_name >= strsz ||
			    str[s.st_name] != name[0] || strsz - s.st_name <= nlen ||
			    memcmp(str + s.st_name, name, nlen + 1))
				continue;
			*addr = s.st_value;
			found = true;
			break;
		}
	}
	if (e)
		elf_end(e);
	return found;
}

/* the running kernel's _text from a kallsyms file: false when not there (or 0) */
static bool kallsyms_text(const char *path, uint64_t *text)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char line[512];
	bool found = false;
	/* _text is among the first lines; a bound for files that are not kallsyms */
	for (unsigned i = 0; !found && i < (1u << 22) && fgets(line, sizeof(line), f); i++) {
		char *p = line, *end;
		uint64_t a = strtoull(p, &end, 16);
		if (end == p || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		p = end + 3;
		size_t l = strcspn(p, " \t\n");
		if (l == 5 && !memcmp(p, "_text", 5) && a) {
			*text = a;
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? strdup(s) : NULL;
}

/* keep the first reason a vmlinux was not usable (a missing file is no reason) */
static void vm_fail(struct pk_kcode *k, const char *path, int err)
{
	if (k->vm_err && k->vm_err != -ENOENT)
		return;
	k->vm_err = err;
	set_str(&k->vm_path, path);
}

/* open path as a regular file: fd, *size, or -errno */
static int open_reg(const char *path, uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st)) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/* a vmlinux candidate: 0 when chosen, else its error (recorded in k unless -ENOENT) */
static int try_vmlinux(struct pk_kcode *k, const struct pk_kcode_opts *o, const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return -ENOENT;
	uint64_t size = 0;
	int fd = open_reg(path, &size);
	if (fd < 0) {
		vm_fail(k, path, fd);
		return fd;
	}
	if (k->want_len) {
		uint8_t bid[PK_BUILD_ID_MAX];
		size_t blen = sizeof(bid);
		int err = pk_build_id__read(path, bid, &blen);
		if (err == -EINVAL) {
			close(fd);
			vm_fail(k, path, -EINVAL);
			return -EINVAL;
		}
		if (err)
			blen = 0; /* no build-id: not the recorded kernel's */
		if (blen != k->want_len || memcmp(bid, k->want, blen)) {
			close(fd);
			vm_fail(k, path, -ESTALE);
			if (k->vm_err == -ESTALE && !strcmp(k->vm_path ? k->vm_path : "", path)) {
				memcpy(k->vm_bid, bid, blen);
				k->vm_bid_len = blen;
			}
			return -ESTALE;
		}
	}
	struct pk_kc_elf e;
	int err = pk_kc_elf_read(fd, size, &e);
	if (!err && e.type != ET_EXEC && e.type != ET_DYN)
		err = -EINVAL;
	uint64_t lowx = UINT64_MAX;
	for (size_t i = 0; !err && i < e.nr; i++)
		if (e.segs[i].flags & PF_X)
			lowx = PK_MIN(lowx, e.segs[i].vaddr);
	if (!err && lowx == UINT64_MAX)
		err = -ENODATA; /* no code in the file: a separate debug file */
	if (err) {
		pk_kc_elf_release(&e);
		close(fd);
		vm_fail(k, path, err == -E2BIG ? -EINVAL : err);
		return err;
	}
	/* the link address of _text (else the first code) against the recorded one */
	uint64_t text = lowx;
	if (!elf_sym_addr(fd, "_text", &text))
		text = lowx;
	k->fd = fd;
	k->elf = e;
	k->source = PK_ANNOTATE_KSRC_VMLINUX;
	k->bias = o->have_text ? o->text - text : 0;
	set_str(&k->path, path);
	return k->path ? 0 : -ENOMEM;
}

static void try_kcore(struct pk_kcode *k, const struct pk_kcode_opts *o)
{
	const char *path = o->kcore ? o->kcore : "/proc/kcore";
	set_str(&k->kc_path, path);
	/* the running kernel must be the recorded one: by build-id, else by release */
	if (k->want_len ? (k->run_len != k->want_len || memcmp(k->run, k->want, k->run_len))
			: !o->host) {
		k->kc_err = -ESTALE;
		return;
	}
	uint64_t size = 0;
	int fd = open_reg(path, &size);
	if (fd < 0) {
		k->kc_err = fd;
		return;
	}
	struct pk_kc_elf e;
	int err = pk_kc_elf_read(fd, size, &e);
	if (!err && e.type != ET_CORE) {
		pk_kc_elf_release(&e);
		err = -EINVAL;
	}
	uint64_t bias = 0, now;
	if (!err && o->have_text &&
	    kallsyms_text(o->kallsyms ? o->kallsyms : "/proc/kallsyms", &now))
		bias = o->text - now;
	uint8_t b;
	if (!err && o->have_text && pk_kc_elf_pread(fd, &e, o->text - bias, &b, 1) != 1) {
		pk_kc_elf_release(&e);
		err = -ENODATA; /* no segment maps the kernel's text */
	}
	if (err) {
		close(fd);
		k->kc_err = err == -E2BIG ? -EINVAL : err;
		return;
	}
	k->fd = fd;
	k->elf = e;
	k->source = PK_ANNOTATE_KSRC_KCORE;
	k->bias = bias;
	set_str(&k->path, path);
}

int pk_kcode_open(const struct pk_kcode_opts *o, struct pk_kcode **out)
{
	struct pk_kcode *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->fd = -1;
	k->want_len = PK_MIN(o->want_bid_len, sizeof(k->want));
	if (k->want_len)
		memcpy(k->want, o->want_bid, k->want_len);
	k->run_len = PK_MIN(o->run_bid_len, sizeof(k->run));
	if (k->run_len)
		memcpy(k->run, o->run_bid, k->run_len);
	struct utsname u;
	if (o->release && *o->release)
		snprintf(k->release, sizeof(k->release), "%s", o->release);
	else if (!uname(&u))
		snprintf(k->release, sizeof(k->release), "%s", u.release);
	*out = k;
	if (o->vmlinux) {
		/* perf: "use it and only it" */
		if (try_vmlinux(k, o, o->vmlinux) == -ENOENT)
			vm_fail(k, o->vmlinux, -ENOENT);
		return 0;
	}
	char path[PATH_MAX + 64];
	/* the build-id caches: <dir>/.build-id/xx/yyyy.../elf */
	char hex[2 * PK_BUILD_ID_MAX + 1];
	for (size_t i = 0; i < k->want_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", k->want[i]);
	for (size_t d = 0; k->want_len && d < PK_ARRAY_SIZE(o->buildid_dirs) && !k->source; d++) {
		if (!o->buildid_dirs[d] || !*o->buildid_dirs[d])
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/elf", o->buildid_dirs[d],
				     hex, hex + 2) < sizeof(path))
			try_vmlinux(k, o, path);
	}
	static const char *const plain[] = { "vmlinux", "/boot/vmlinux" };
	static const char *const per_release[] = {
		"/boot/vmlinux-%s", "/usr/lib/debug/boot/vmlinux-%s", "/lib/modules/%s/build/vmlinux",
		"/usr/lib/debug/lib/modules/%s/vmlinux", "/usr/lib/debug/boot/vmlinux-%s.debug",
	};
	bool symfs = o->symfs && *o->symfs;
	for (size_t i = 0; i < PK_ARRAY_SIZE(plain) && !k->source; i++) {
		/* perf joins a relative path with --symfs */
		if (symfs && plain[i][0] != '/')
			snprintf(path, sizeof(path), "%s/%s", o->symfs, plain[i]);
		else
			snprintf(path, sizeof(path), "%s", plain[i]);
		try_vmlinux(k, o, path);
	}
	for (size_t i = 0; !symfs && k->release[0] && i < PK_ARRAY_SIZE(per_release) && !k->source;
	     i++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(path, sizeof(path), per_release[i], k->release);
#pragma GCC diagnostic pop
		try_vmlinux(k, o, path);
	}
	if (k->source)
		return 0;
	if (!k->vm_err)
		k->vm_err = -ENOENT;
	/* perf does not look at the running kernel with --symfs */
	if (!symfs && !(o->kcore && !*o->kcore))
		try_kcore(k, o);
	return 0;
}

void pk_kcode_free(struct pk_kcode *k)
{
	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	pk_kc_elf_release(&k->elf);
	free(k->path);
	free(k->vm_path);
	free(k->kc_path);
	free(k);
}

void pk_kcode_info(const struct pk_kcode *k, struct pk_annotate_kernel *out)
{
	size_t sz = out->sz && out->sz < sizeof(*out) ? out->sz : sizeof(*out);
	struct pk_annotate_kernel t;
	memset(&t, 0, sizeof(t));
	if (k) {
		t.source = k->source;
		t.path = k->path;
		t.bias = k->bias;
		t.release = k->release[0] ? k->release : NULL;
		t.recorded_bid = k->want_len ? k->want : NULL;
		t.recorded_bid_len = k->want_len;
		t.vmlinux_err = k->source == PK_ANNOTATE_KSRC_VMLINUX ? 0 : k->vm_err;
		t.vmlinux_path = k->vm_path;
		t.vmlinux_bid = k->vm_bid_len ? k->vm_bid : NULL;
		t.vmlinux_bid_len = k->vm_bid_len;
		t.kcore_err = k->kc_err;
		t.kcore_path = k->kc_path;
		t.running_bid = k->run_len ? k->run : NULL;
		t.running_bid_len = k->run_len;
	}
	t.sz = sz;
	memcpy(out, &t, sz);
}

long pk_kcode_read(struct pk_kcode *k, uint64_t addr, void *buf, size_t len, uint16_t *e_machine)
{
	if (!k || k->fd < 0)
		return -ENOENT;
	if (e_machine)
		*e_machine = k->elf.machine;
	return pk_kc_elf_pread(k->fd, &k->elf, addr - k->bias, buf, len);
}
