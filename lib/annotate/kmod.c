/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/kmod.c - the code of a kernel module for annotate, as perf 6.1 finds it:
 * the module's .ko in the build-id cache (<cache>/.build-id/xx/yyyy.../elf), then the
 * path the recording's module map names (under --symfs), then (perfkit) a file of the
 * module's name under /lib/modules/R (R the recorded release); each taken only when its
 * build-id is the recorded one. A .ko is a relocatable object: its .text runs from the
 * module's load address (the recorded map's start), and perf's objdump shows it at
 * .text's own addresses (0 up), so the addresses shown are the recorded ones minus the
 * load address. A gzip-compressed .ko is read (perf: zlib); xz (perf: liblzma, not a
 * dependency here) and zstd (perf 6.1 does not read them) are said, not read. Without a
 * .ko: /proc/kcore, when the kernel's code comes from it in the boot that recorded and
 * the module is loaded at the recorded address (/proc/modules).
 */
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "internal.h"
#include "annotate/kmod.h"

/* bounds for hostile files */
#define KMOD_MAX_SHNUM (1u << 20)
#define KMOD_MAX_SHSTR (16u << 20)
#define KMOD_MAX_GZ (512u << 20)        /* uncompressed size of a .ko.gz */
#define KMOD_MAX_FILES 200000u          /* entries looked at under /lib/modules/R */

struct pk_kmod {
	int source;
	char *name, *path, *rec_path;
	int fd;                 /* the .ko read with pread, or -1 */
	uint8_t *mem;           /* or its uncompressed bytes */
	size_t mem_len;
	struct pk_kmod_elf elf;
	uint64_t bias;
	uint8_t want[PK_BUILD_ID_MAX];
	size_t want_len;
	int ko_err, ko_comp;
	char *ko_path;
	uint8_t ko_bid[PK_BUILD_ID_MAX];
	size_t ko_bid_len;
	int kc_err;
};

/* ---- the object ---- */

static long rd_all(pk_kmod_read_fn rd, void *ctx, uint64_t off, void *buf, size_t len)
{
	long n = rd(ctx, off, buf, len);
	if (n < 0)
		return n;
	return (size_t)n == len ? 0 : -EINVAL;
}

static void find_bid(const uint8_t *p, size_t len, struct pk_kmod_elf *out)
{
	size_t o = 0;
	while (!out->bid_len && len >= 12 && o <= len - 12) {
		uint32_t nsz, dsz, type;
		memcpy(&nsz, p + o, 4);
		memcpy(&dsz, p + o + 4, 4);
		memcpy(&type, p + o + 8, 4);
		uint64_t n0 = o + 12, d0 = n0 + (((uint64_t)nsz + 3) & ~3ull);
		uint64_t next = d0 + (((uint64_t)dsz + 3) & ~3ull);
		if (d0 > len || dsz > len - d0)
			return;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(p + n0, "GNU", 4) && dsz) {
			out->bid_len = PK_MIN((size_t)dsz, sizeof(out->bid));
			memcpy(out->bid, p + d0, out->bid_len);
		}
		o = (size_t)PK_MIN(next, (uint64_t)len);
	}
}

int pk_kmod_elf_parse(pk_kmod_read_fn rd, void *ctx, uint64_t size, struct pk_kmod_elf *out)
{
	memset(out, 0, sizeof(*out));
	Elf64_Ehdr eh;
	long r = rd_all(rd, ctx, 0, &eh, sizeof(eh));
	if (r)
		return (int)r;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_REL ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shoff || eh.e_shoff >= size)
		return -EINVAL;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return -EOPNOTSUPP;
#endif
	Elf64_Shdr sh0;
	if ((r = rd_all(rd, ctx, eh.e_shoff, &sh0, sizeof(sh0))))
		return (int)r;
	uint64_t shnum = eh.e_shnum ? eh.e_shnum : sh0.sh_size;
	uint64_t strndx = eh.e_shstrndx == SHN_XINDEX ? sh0.sh_link : eh.e_shstrndx;
	if (!shnum || shnum > KMOD_MAX_SHNUM || strndx >= shnum ||
	    shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff)
		return -EINVAL;
	Elf64_Shdr *sh = malloc((size_t)shnum * sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	char *str = NULL;
	int err = (int)rd_all(rd, ctx, eh.e_shoff, sh, (size_t)shnum * sizeof(*sh));
	const Elf64_Shdr *ss = &sh[strndx];
	if (!err && (ss->sh_type != SHT_STRTAB || !ss->sh_size || ss->sh_size > KMOD_MAX_SHSTR ||
		     ss->sh_offset > size || ss->sh_size > size - ss->sh_offset))
		err = -EINVAL;
	if (!err && !(str = malloc((size_t)ss->sh_size + 1)))
		err = -ENOMEM;
	if (!err)
		err = (int)rd_all(rd, ctx, ss->sh_offset, str, (size_t)ss->sh_size);
	bool text = false;
	for (uint64_t i = 1; !err && i < shnum; i++) {
		const Elf64_Shdr *s = &sh[i];
		if (s->sh_name >= ss->sh_size)
			continue;
		str[ss->sh_size] = '\0';
		const char *name = str + s->sh_name;
		bool inside = s->sh_offset <= size && s->sh_size <= size - s->sh_offset;
		if (!text && s->sh_type == SHT_PROGBITS && !strcmp(name, ".text") && s->sh_size &&
		    inside) {
			text = true;
			out->text_off = s->sh_offset;
			out->text_size = s->sh_size;
			out->text_addr = s->sh_addr;
		} else if (!out->bid_len && s->sh_type == SHT_NOTE && inside && s->sh_size >= 12) {
			uint8_t note[1024];
			size_t n = (size_t)PK_MIN(s->sh_size, (uint64_t)sizeof(note));
			if (!rd_all(rd, ctx, s->sh_offset, note, n))
				find_bid(note, n, out);
		}
	}
	free(str);
	free(sh);
	if (err)
		return err;
	out->machine = eh.e_machine;
	return text ? 0 : -ENODATA;
}

struct mem_src {
	const uint8_t *p;
	size_t len;
};

static long mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct mem_src *m = ctx;
	if (off >= m->len)
		return 0;
	size_t n = (size_t)PK_MIN((uint64_t)len, m->len - off);
	memcpy(buf, m->p + off, n);
	return (long)n;
}

int pk_kmod_elf_parse_mem(const void *buf, size_t len, struct pk_kmod_elf *out)
{
	struct mem_src m = { buf, len };
	return pk_kmod_elf_parse(mem_read, &m, len, out);
}

static long fd_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	int fd = *(const int *)ctx;
	size_t done = 0;
	while (done < len && off + done <= (uint64_t)INT64_MAX) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		done += (size_t)n;
	}
	return (long)done;
}

int pk_kmod_compression(const void *head, size_t len)
{
	const uint8_t *h = head;
	if (len >= 2 && h[0] == 0x1f && h[1] == 0x8b)
		return 'g';
	if (len >= 6 && !memcmp(h, "\xfd" "7zXZ\0", 6))
		return 'x';
	if (len >= 4 && !memcmp(h, "\x28\xb5\x2f\xfd", 4))
		return 'z';
	return 0;
}

int pk_kmod_gunzip(const void *in, size_t len, size_t max, uint8_t **out, size_t *out_len)
{
	*out = NULL;
	*out_len = 0;
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	size_t cap = 1u << 16, n = 0;
	uint8_t *b = malloc(cap);
	int err = b ? 0 : -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)in;
	size_t left = len;
	while (!err) {
		if (n == cap) {
			if (cap >= max) {
				err = -EFBIG;
				break;
			}
			size_t nc = PK_MIN(cap * 2, max);
			uint8_t *nb = realloc(b, nc);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			b = nb;
			cap = nc;
		}
		uInt chunk = (uInt)PK_MIN(left, (size_t)UINT_MAX);
		z.avail_in = chunk;
		z.next_out = b + n;
		z.avail_out = (uInt)PK_MIN(cap - n, (size_t)UINT_MAX);
		int zr = inflate(&z, Z_NO_FLUSH);
		left -= chunk - z.avail_in;
		n = (size_t)((uint8_t *)z.next_out - b);
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK && !(zr == Z_BUF_ERROR && n == cap))
			err = zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	inflateEnd(&z);
	if (err) {
		free(b);
		return err;
	}
	*out = b;
	*out_len = n;
	return 0;
}

/* ---- the choice ---- */

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? strdup(s) : NULL;
}

/* keep the first reason a .ko was not usable (a missing file is no reason) */
static void ko_fail(struct pk_kmod *k, const char *path, int err, int comp)
{
	if (k->ko_err && k->ko_err != -ENOENT)
		return;
	k->ko_err = err;
	k->ko_comp = comp;
	set_str(&k->ko_path, path);
}

/* a candidate: 0 when chosen, else its error (recorded unless -ENOENT) */
static int try_ko(struct pk_kmod *k, const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return -ENOENT;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		ko_fail(k, path, -errno, 0);
		return -errno;
	}
	uint8_t *mem = NULL;
	size_t mem_len = 0;
	uint8_t head[8] = { 0 };
	int err = 0, comp = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		err = -EINVAL;
	if (!err && fd_read(&fd, 0, head, sizeof(head)) < 0)
		err = -EIO;
	if (!err && (comp = pk_kmod_compression(head, sizeof(head))) == 'g') {
		uint8_t *z = NULL;
		if ((uint64_t)st.st_size > KMOD_MAX_GZ)
			err = -EFBIG;
		else if (!(z = malloc((size_t)st.st_size + 1)))
			err = -ENOMEM;
		else if (fd_read(&fd, 0, z, (size_t)st.st_size) != (long)st.st_size)
			err = -EIO;
		else
			err = pk_kmod_gunzip(z, (size_t)st.st_size, KMOD_MAX_GZ, &mem, &mem_len);
		free(z);
	} else if (!err && comp) {
		err = -EOPNOTSUPP;
	}
	struct pk_kmod_elf e;
	if (!err) {
		struct mem_src ms = { mem, mem_len };
		err = mem ? pk_kmod_elf_parse(mem_read, &ms, mem_len, &e)
			  : pk_kmod_elf_parse(fd_read, &fd, (uint64_t)st.st_size, &e);
	}
	if (!err && k->want_len &&
	    (e.bid_len != k->want_len || memcmp(e.bid, k->want, k->want_len))) {
		err = -ESTALE;
		ko_fail(k, path, err, comp);
		if (k->ko_err == -ESTALE && !strcmp(k->ko_path ? k->ko_path : "", path)) {
			memcpy(k->ko_bid, e.bid, e.bid_len);
			k->ko_bid_len = e.bid_len;
		}
	}
	if (err) {
		if (err != -ESTALE)
			ko_fail(k, path, err, comp);
		free(mem);
		close(fd);
		return err;
	}
	if (mem) {
		close(fd);
		fd = -1;
	}
	k->fd = fd;
	k->mem = mem;
	k->mem_len = mem_len;
	k->elf = e;
	k->source = PK_ANNOTATE_KSRC_MODULE;
	set_str(&k->path, path);
	return k->path ? 0 : -ENOMEM;
}

/* "ext4" matches "ext4.ko", "ext4.ko.xz"; dashes of a file name count as underscores */
static bool name_matches(const char *file, const char *mod, size_t mlen)
{
	size_t n = strcspn(file, ".");
	if (n != mlen || strncmp(file + n, ".ko", 3) || (file[n + 3] && file[n + 3] != '.'))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((file[i] == '-' ? '_' : file[i]) != (mod[i] == '-' ? '_' : mod[i]))
			return false;
	return true;
}

/* a file of the module's name under dir (depth-first, bounded): tried in turn until one
 * is chosen */
static void walk(struct pk_kmod *k, char *dir, size_t dlen, size_t cap, const char *mod,
		 size_t mlen, unsigned depth, unsigned *budget)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while (!k->source && (de = readdir(d)) && (*budget)-- > 0) {
		if (de->d_name[0] == '.')
			continue;
		size_t nl = strlen(de->d_name);
		if (dlen + 1 + nl + 1 > cap)
			continue;
		dir[dlen] = '/';
		memcpy(dir + dlen + 1, de->d_name, nl + 1);
		bool isdir = de->d_type == DT_DIR;
		if (de->d_type == DT_UNKNOWN) {
			struct stat st;
			isdir = !lstat(dir, &st) && S_ISDIR(st.st_mode);
		}
		if (isdir && depth < 8 && strcmp(de->d_name, "build") && strcmp(de->d_name, "source"))
			walk(k, dir, dlen + 1 + nl, cap, mod, mlen, depth + 1, budget);
		else if (!isdir && name_matches(de->d_name, mod, mlen))
			try_ko(k, dir);
		dir[dlen] = '\0';
	}
	closedir(d);
}

/* the module loaded now at addr (a line "name size refs deps state 0xaddr ...") */
static bool loaded_at(const char *proc_modules, const char *mod, size_t mlen, uint64_t addr)
{
	FILE *f = fopen(proc_modules, "re");
	if (!f)
		return false;
	char line[1024];
	bool found = false;
	for (unsigned i = 0; !found && i < 100000 && fgets(line, sizeof(line), f); i++) {
		char name[256], state[32];
		unsigned long long a;
		if (sscanf(line, "%255s %*s %*s %*s %31s %llx", name, state, &a) == 3 &&
		    strlen(name) == mlen && !strncmp(name, mod, mlen) && a == addr)
			found = true;
	}
	fclose(f);
	return found;
}

int pk_kmod_open(const struct pk_kmod_opts *o, struct pk_kmod **out)
{
	*out = NULL;
	struct pk_kmod *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->fd = -1;
	set_str(&k->name, o->name ? o->name : "[unknown]");
	set_str(&k->rec_path, o->path);
	if (!k->name) {
		pk_kmod_free(k);
		return -ENOMEM;
	}
	k->want_len = PK_MIN(o->want_bid_len, sizeof(k->want));
	if (k->want_len)
		memcpy(k->want, o->want_bid, k->want_len);
	*out = k;
	if (!o->have_map) {
		/* no recorded map of the module: where its code ran is unknown */
		k->ko_err = -ENOENT;
		k->kc_err = o->kcore_ok ? -ESTALE : o->kcore_err;
		return 0;
	}
	char path[PATH_MAX + 64];
	bool symfs = o->symfs && *o->symfs;
	/* 1. the build-id caches */
	char hex[2 * PK_BUILD_ID_MAX + 1];
	for (size_t i = 0; i < k->want_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", k->want[i]);
	for (size_t d = 0; k->want_len && d < PK_ARRAY_SIZE(o->buildid_dirs) && !k->source; d++)
		if (o->buildid_dirs[d] && *o->buildid_dirs[d] &&
		    (size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/elf",
				     o->buildid_dirs[d], hex, hex + 2) < sizeof(path))
			try_ko(k, path);
	/* 2. the recorded path */
	if (!k->source && o->path && o->path[0] == '/' &&
	    (size_t)snprintf(path, sizeof(path), "%s%s", symfs ? o->symfs : "", o->path) <
		    sizeof(path))
		try_ko(k, path);
	/* 3. a file of its name under the recorded release's modules */
	const char *mod = k->name + (k->name[0] == '[');
	size_t mlen = strcspn(mod, "]");
	if (!k->source && mlen && o->release && *o->release && !strchr(o->release, '/')) {
		int n = snprintf(path, sizeof(path), "%s%s/%s", symfs ? o->symfs : "",
				 o->modules_dir ? o->modules_dir : "/lib/modules", o->release);
		unsigned budget = KMOD_MAX_FILES;
		if (n > 0 && (size_t)n < sizeof(path))
			walk(k, path, (size_t)n, sizeof(path), mod, mlen, 0, &budget);
	}
	if (k->source) {
		k->bias = o->map_start - k->elf.text_addr;
		return 0;
	}
	if (!k->ko_err)
		k->ko_err = -ENOENT;
	/* 4. kcore, in the boot that recorded */
	if (o->kcore_ok && mlen &&
	    loaded_at(o->proc_modules ? o->proc_modules : "/proc/modules", mod, mlen, o->map_start))
		k->source = PK_ANNOTATE_KSRC_KCORE;
	else
		k->kc_err = o->kcore_ok ? -ESTALE : o->kcore_err;
	return 0;
}

void pk_kmod_free(struct pk_kmod *k)
{
	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	free(k->mem);
	free(k->name);
	free(k->path);
	free(k->rec_path);
	free(k->ko_path);
	free(k);
}

void pk_kmod_info(const struct pk_kmod *k, struct pk_annotate_kmod *out)
{
	size_t sz = out->sz && out->sz < sizeof(*out) ? out->sz : sizeof(*out);
	struct pk_annotate_kmod t;
	memset(&t, 0, sizeof(t));
	if (k) {
		t.source = k->source;
		t.path = k->source == PK_ANNOTATE_KSRC_KCORE ? "/proc/kcore" : k->path;
		t.bias = k->source == PK_ANNOTATE_KSRC_MODULE ? k->bias : 0;
		t.name = k->name;
		t.recorded_path = k->rec_path;
		t.recorded_bid = k->want_len ? k->want : NULL;
		t.recorded_bid_len = k->want_len;
		t.ko_err = k->source == PK_ANNOTATE_KSRC_MODULE ? 0 : k->ko_err;
		t.ko_path = k->ko_path;
		t.ko_bid = k->ko_bid_len ? k->ko_bid : NULL;
		t.ko_bid_len = k->ko_bid_len;
		t.ko_comp = k->ko_comp;
		t.kcore_err = k->kc_err;
	}
	t.sz = sz;
	memcpy(out, &t, sz);
}

long pk_kmod_read(struct pk_kmod *k, uint64_t addr, void *buf, size_t len, uint16_t *e_machine)
{
	if (!k || k->source != PK_ANNOTATE_KSRC_MODULE)
		return -ENOENT;
	if (e_machine)
		*e_machine = k->elf.machine;
	uint64_t in = addr - k->bias - k->elf.text_addr; /* the offset in .text */
	if (in >= k->elf.text_size)
		return -ENODATA;
	size_t n = (size_t)PK_MIN((uint64_t)len, k->elf.text_size - in);
	uint64_t off = k->elf.text_off + in;
	if (k->mem) {
		struct mem_src ms = { k->mem, k->mem_len };
		long r = mem_read(&ms, off, buf, n);
		return r ? r : -ENODATA;
	}
	long r = fd_read(&k->fd, off, buf, n);
	return r ? r : -ENODATA;
}

uint64_t pk_kmod_text_end(const struct pk_kmod *k)
{
	if (!k || k->source != PK_ANNOTATE_KSRC_MODULE)
		return 0;
	return k->bias + k->elf.text_addr + k->elf.text_size;
}

/* ---- a session's modules ---- */

struct pk_kmods {
	struct { const void *key; struct pk_kmod *k; } *v;
	size_t nr, cap;
};

struct pk_kmod *pk_kmods_get(struct pk_kmods **set, const void *key)
{
	for (size_t i = 0; *set && i < (*set)->nr; i++)
		if ((*set)->v[i].key == key)
			return (*set)->v[i].k;
	return NULL;
}

int pk_kmods_add(struct pk_kmods **set, const void *key, struct pk_kmod *k)
{
	if (!*set && !(*set = calloc(1, sizeof(**set))))
		return -ENOMEM;
	struct pk_kmods *s = *set;
	if (s->nr == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 8;
		void *nv = realloc(s->v, nc * sizeof(*s->v));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->nr].key = key;
	s->v[s->nr++].k = k;
	return 0;
}

void pk_kmods_free(struct pk_kmods *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->nr; i++)
		pk_kmod_free(set->v[i].k);
	free(set->v);
	free(set);
}
