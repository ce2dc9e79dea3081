/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/ksym-cache.c - an on-disk cache of the parsed /proc/kallsyms text symbols.
 *
 * Reading /proc/kallsyms costs ~30 ms of kernel time per run (the kernel expands and
 * formats every one of ~120k lines on each read), more than the rest of a small report.
 * The parsed, finished table is kept in the machine's cache directory
 * (pk_machine_opts.cache_dir; the tool's is $XDG_CACHE_HOME/perfkit or ~/.cache/perfkit)
 * under a key that changes whenever the table could: the boot id (a reboot changes the
 * kernel and its KASLR offset), /proc/modules (modules loaded or unloaded) and the first
 * page of /proc/kallsyms itself (address visibility: kptr_restrict, privileges), and the
 * ids of the loaded BPF programs (bpf(BPF_PROG_GET_NEXT_ID); their symbols sit at the end
 * of kallsyms, which is what we avoid reading; when they cannot be listed, e.g. without
 * CAP_SYS_ADMIN / CAP_BPF, the cache is not used). Caveat: ftrace and BPF trampolines
 * attached after the cache was written do not change the key (the tool's PK_NO_CACHE=1
 * turns the cache off, passing no directory).
 *
 * The file is written atomically (0600 temporary file, then rename) and is hostile input
 * when read back: owner and permissions checked, every size and offset bounds-checked,
 * magic, version, key and a CRC-32C of the whole file compared; on any doubt it is ignored
 * and /proc/kallsyms is parsed.
 *
 * Layout (host byte order; the magic read back as a u64 rejects the other one):
 *   header (struct pk_ksym_cache_hdr, 128 bytes), nr records of 32 bytes
 *   (start, end, name offset: u64; seq: u32; bind: u8; 3 zero bytes), names (NUL-ended).
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"
#include "symbol-internal.h"

#define PK_KSYM_CACHE_MAGIC 0x31434d59534b4b50ULL   /* "PKKSYMC1" */
#define PK_KSYM_CACHE_VERSION 3u
#define PK_KSYM_CACHE_MAX_SYMS (16u << 20)
#define PK_KSYM_CACHE_MAX_NAMES (256u << 20)

struct pk_ksym_cache_hdr {
	uint64_t magic;
	uint32_t version, hdr_size;
	uint8_t key[PK_KSYM_KEY_LEN];
	uint64_t nr, names_len, text_addr;
	uint32_t rec_size, crc;         /* crc: of the whole file with this field zero */
	uint8_t pad[128 - 8 - 8 - PK_KSYM_KEY_LEN - 24 - 8];
};
_Static_assert(sizeof(struct pk_ksym_cache_hdr) == 128, "cache header layout");

struct pk_ksym_cache_rec {
	uint64_t start, end, name_off;
	uint32_t seq;
	uint8_t bind, pad[3];
};
_Static_assert(sizeof(struct pk_ksym_cache_rec) == 32, "cache record layout");

/* Up to `max` bytes of a file (a /proc file reports size 0: read until EOF). */
static int pk_read_prefix(const char *path, char *buf, size_t max, size_t *len)
{
	ssize_t n = pk_read_prefixat(AT_FDCWD, path, buf, max);
	if (n < 0)
		return (int)n;
	*len = (size_t)n;
	return 0;
}

/* CRC-32C of a whole file, streamed; -errno on a read error or a file over `max`. */
static int pk_crc_file(const char *path, size_t max, uint32_t *crc, size_t *total)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	char buf[16384];
	uint32_t c = 0;
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			close(fd);
			return -EFBIG;
		}
		c = pk_crc32c(c, buf, (size_t)r);
	}
	close(fd);
	*crc = c;
	*total = n;
	return 0;
}

static void pk_key_put(uint8_t *key, size_t *o, const void *p, size_t n)
{
	n = PK_MIN(n, PK_KSYM_KEY_LEN - *o);
	memcpy(key + *o, p, n);
	*o += n;
}

/* Count and CRC of the ids of the BPF programs loaded in the running kernel. */
static int pk_bpf_prog_ids(uint32_t *count, uint32_t *crc)
{
	uint32_t c = 0;
	uint32_t id = 0, n = 0;
	for (;;) {
		union bpf_attr a;
		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (syscall(__NR_bpf, BPF_PROG_GET_NEXT_ID, &a, sizeof(a)) < 0) {
			if (errno == ENOENT)
				break;
			return -errno;
		}
		if (a.next_id <= id || ++n > (1u << 20))
			return -ERANGE;
		id = a.next_id;
		c = pk_crc32c(c, &id, sizeof(id));
	}
	*count = n;
	*crc = c;
	return 0;
}

int pk_ksym_cache_key(const struct pk_ksym_cache_src *src, uint8_t key[PK_KSYM_KEY_LEN])
{
	char boot[64], page[4096];
	size_t blen = 0, plen = 0, mlen = 0, o = 0;
	uint32_t mcrc = 0;
	int err;

	memset(key, 0, PK_KSYM_KEY_LEN);
	if ((err = pk_read_prefix(src->boot_id, boot, sizeof(boot), &blen)) < 0)
		return err;
	if (blen < 16 || blen >= sizeof(boot))
		return -EINVAL;   /* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\n" is 37 bytes */
	/* no /proc/modules: a kernel without module support, which cannot gain modules */
	err = pk_crc_file(src->modules, 64u << 20, &mcrc, &mlen);
	if (err == -ENOENT)
		mcrc = 0, mlen = SIZE_MAX;
	else if (err < 0)
		return err;
	if ((err = pk_read_prefix(src->kallsyms, page, sizeof(page), &plen)) < 0)
		return err;
	if (!plen)
		return -ENODATA;
	uint32_t pcrc = pk_crc32c(0, page, plen);
	uint32_t uid = (uint32_t)geteuid(), ml = (uint32_t)mlen, pl = (uint32_t)plen;
	/* the 36 characters of the id (its newline left out), then 5 + 2 u32: 64 bytes */
	pk_key_put(key, &o, boot, PK_MIN(blen, (size_t)36));
	o = 36;
	pk_key_put(key, &o, &mcrc, 4);
	pk_key_put(key, &o, &ml, 4);
	pk_key_put(key, &o, &pcrc, 4);
	pk_key_put(key, &o, &pl, 4);
	pk_key_put(key, &o, &uid, 4);
	if (src->live_bpf) {
		uint32_t nb = 0, bcrc = 0;
		if ((err = pk_bpf_prog_ids(&nb, &bcrc)) < 0)
			return err;
		pk_key_put(key, &o, &nb, 4);
		pk_key_put(key, &o, &bcrc, 4);
	}
	return 0;
}

int pk_cache_dir(const char *dir, char *buf, size_t len, bool create)
{
	if (!dir || !*dir)
		return -ENOENT;
	int n = snprintf(buf, len, "%s", dir);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	if (create) {
		/* the parent of perfkit/ (~/.cache) may not exist yet either */
		char *slash = strrchr(buf, '/');
		if (slash && slash != buf) {
			*slash = '\0';
			int e = mkdir(buf, 0700) < 0 && errno != EEXIST ? -errno : 0;
			*slash = '/';
			if (e)
				return e;
		}
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -errno;
	}
	return 0;
}

int pk_ksym_cache_path(const char *cache_dir, char *buf, size_t len, bool create)
{
	char dir[PATH_MAX];
	int err = pk_cache_dir(cache_dir, dir, sizeof(dir), create);
	if (err)
		return err;
	int n = snprintf(buf, len, "%s/kallsyms-v%u", dir, PK_KSYM_CACHE_VERSION);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

static uint32_t pk_cache_crc(const uint8_t *buf, size_t len)
{
	/* the header with its crc field zero, then the rest */
	struct pk_ksym_cache_hdr h;
	memcpy(&h, buf, sizeof(h));
	h.crc = 0;
	return pk_crc32c(pk_crc32c(0, &h, sizeof(h)), buf + sizeof(h), len - sizeof(h));
}

int pk_ksym_cache_store(const char *path, const uint8_t key[PK_KSYM_KEY_LEN],
			const struct pk_sym *v, size_t nr, const char *names, size_t names_len,
			uint64_t text_addr)
{
	if (!nr || nr > PK_KSYM_CACHE_MAX_SYMS || !names_len ||
	    names_len > PK_KSYM_CACHE_MAX_NAMES || names[names_len - 1] != '\0')
		return -EINVAL;
	size_t total = sizeof(struct pk_ksym_cache_hdr) + nr * sizeof(struct pk_ksym_cache_rec) +
		       names_len;
	uint8_t *buf = calloc(1, total);
	if (!buf)
		return -ENOMEM;
	struct pk_ksym_cache_hdr h = {
		.magic = PK_KSYM_CACHE_MAGIC, .version = PK_KSYM_CACHE_VERSION,
		.hdr_size = sizeof(h), .nr = nr, .names_len = names_len, .text_addr = text_addr,
		.rec_size = sizeof(struct pk_ksym_cache_rec),
	};
	memcpy(h.key, key, PK_KSYM_KEY_LEN);
	struct pk_ksym_cache_rec *r = (struct pk_ksym_cache_rec *)(buf + sizeof(h));
	for (size_t i = 0; i < nr; i++) {
		if (v[i].name < names || v[i].name >= names + names_len) {
			free(buf);
			return -EINVAL;
		}
		r[i] = (struct pk_ksym_cache_rec){ .start = v[i].start, .end = v[i].end,
						   .name_off = (uint64_t)(v[i].name - names),
						   .seq = v[i].seq, .bind = v[i].bind };
	}
	memcpy(buf + sizeof(h) + nr * sizeof(*r), names, names_len);
	memcpy(buf, &h, sizeof(h));
	h.crc = pk_cache_crc(buf, total);
	memcpy(buf, &h, sizeof(h));

	size_t plen = strlen(path);
	char *tmp = malloc(plen + 8);
	if (!tmp) {
		free(buf);
		return -ENOMEM;
	}
	memcpy(tmp, path, plen);
	memcpy(tmp + plen, ".XXXXXX", 8);
	int fd = mkostemp(tmp, O_CLOEXEC);   /* mode 0600 */
	int err = fd < 0 ? -errno : 0;
	for (size_t off = 0; !err && off < total;) {
		ssize_t w = write(fd, buf + off, total - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			err = w < 0 ? -errno : -EIO;
		else
			off += (size_t)w;
	}
	if (fd >= 0 && close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err && fd >= 0)
		unlink(tmp);
	if (!err) {
		/* the files of older cache versions next to it are of no use any more */
		const char *base = strrchr(path, '/');
		size_t dl = base ? (size_t)(base - path) : 0;
		for (unsigned int ver = 1; ver < PK_KSYM_CACHE_VERSION && dl + 16 < plen + 8; ver++) {
			snprintf(tmp, plen + 8, "%.*s/kallsyms-v%u", (int)dl, path, ver);
			unlink(tmp);
		}
	}
	free(tmp);
	free(buf);
	return err;
}

/* The input of the decoder: a buffer, or a file read piecewise (no copy of the whole). */
struct pk_kc_in {
	const uint8_t *buf;
	int fd;
};

static int pk_kc_read(const struct pk_kc_in *in, void *dst, size_t n, size_t off)
{
	if (in->buf) {
		memcpy(dst, in->buf + off, n);   /* the caller checked off + n <= len */
		return 0;
	}
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(in->fd, (char *)dst + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;   /* shorter than it was: changed under us */
		got += (size_t)r;
	}
	return 0;
}

#define PK_KC_CHUNK 512   /* records per read */

/* The header's own checks, and the file length it implies. */
static int pk_kc_header(const struct pk_ksym_cache_hdr *h, size_t len,
			const uint8_t key[PK_KSYM_KEY_LEN])
{
	if (h->magic != PK_KSYM_CACHE_MAGIC || h->version != PK_KSYM_CACHE_VERSION ||
	    h->hdr_size != sizeof(*h) || h->rec_size != sizeof(struct pk_ksym_cache_rec))
		return -EINVAL;
	if (memcmp(h->key, key, PK_KSYM_KEY_LEN))
		return -ESTALE;
	if (!h->nr || h->nr > PK_KSYM_CACHE_MAX_SYMS || !h->names_len ||
	    h->names_len > PK_KSYM_CACHE_MAX_NAMES)
		return -EINVAL;
	/* both bounded above: no overflow */
	if (len != sizeof(*h) + (size_t)h->nr * sizeof(struct pk_ksym_cache_rec) +
			   (size_t)h->names_len)
		return -EINVAL;
	return 0;
}

static int pk_kc_decode(const struct pk_kc_in *in, size_t len,
			const uint8_t key[PK_KSYM_KEY_LEN], struct pk_arena *arena,
			struct pk_sym **out, size_t *nr_out, uint64_t *text_addr)
{
	struct pk_ksym_cache_hdr h;
	int err;
	if (len < sizeof(h))
		return -EINVAL;
	if ((err = pk_kc_read(in, &h, sizeof(h), 0)))
		return err;
	if ((err = pk_kc_header(&h, len, key)))
		return err;
	/* both bounded above: no overflow */
	size_t nr = (size_t)h.nr, names_len = (size_t)h.names_len;
	size_t recs = nr * sizeof(struct pk_ksym_cache_rec);
	/* the CRC covers the header with its crc field zero, then the rest */
	uint32_t want = h.crc;
	h.crc = 0;
	uint32_t crc = pk_crc32c(0, &h, sizeof(h));
	struct pk_sym *v = malloc(nr * sizeof(*v));
	if (!v)
		return -ENOMEM;
	struct pk_ksym_cache_rec chunk[PK_KC_CHUNK];
	for (size_t i = 0; i < nr && !err;) {
		size_t k = PK_MIN(nr - i, (size_t)PK_KC_CHUNK);
		if ((err = pk_kc_read(in, chunk, k * sizeof(*chunk),
				      sizeof(h) + i * sizeof(*chunk))))
			break;
		crc = pk_crc32c(crc, chunk, k * sizeof(*chunk));
		for (size_t j = 0; j < k; j++, i++) {
			const struct pk_ksym_cache_rec *r = &chunk[j];
			/* what pk_syms_finish guarantees: sorted, distinct, non-empty ranges */
			if (r->name_off >= names_len || r->end <= r->start ||
			    (i && r->start <= v[i - 1].start)) {
				err = -EINVAL;
				break;
			}
			v[i] = (struct pk_sym){ .start = r->start, .end = r->end,
						.name = (const char *)(uintptr_t)r->name_off,
						.bind = r->bind, .seq = r->seq };
		}
	}
	/* the names go straight to the arena (a corrupt file leaves that block unused
	 * there until the machine is freed) */
	char *names = err ? NULL : pk_arena_alloc(arena, names_len);
	if (!err && !names)
		err = -ENOMEM;
	if (!err)
		err = pk_kc_read(in, names, names_len, sizeof(h) + recs);
	if (!err) {
		crc = pk_crc32c(crc, names, names_len);
		/* every name ends before the block does */
		if (crc != want || names[names_len - 1] != '\0')
			err = -EINVAL;
	}
	if (err) {
		free(v);
		return err;
	}
	for (size_t i = 0; i < nr; i++)
		v[i].name = names + (uintptr_t)v[i].name;
	*out = v;
	*nr_out = nr;
	*text_addr = h.text_addr;
	return 0;
}

int pk_ksym_cache_decode(const void *data, size_t len, const uint8_t key[PK_KSYM_KEY_LEN],
			 struct pk_arena *arena, struct pk_sym **out, size_t *nr_out,
			 uint64_t *text_addr)
{
	const struct pk_kc_in in = { .buf = data, .fd = -1 };
	return pk_kc_decode(&in, len, key, arena, out, nr_out, text_addr);
}

/* Open a cache file for reading: a regular file of sane size, ours and not writable by
 * others (anyone else could feed us symbols), at least a header long. */
static int pk_kc_open(const char *path, uint64_t *size)
{
	int fd = pk_open_regular(path, sizeof(struct pk_ksym_cache_hdr) +
					       (uint64_t)PK_KSYM_CACHE_MAX_SYMS *
						       sizeof(struct pk_ksym_cache_rec) +
					       PK_KSYM_CACHE_MAX_NAMES,
				 size);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    *size < sizeof(struct pk_ksym_cache_hdr)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int pk_ksym_cache_load(const char *path, const uint8_t key[PK_KSYM_KEY_LEN],
		       struct pk_arena *arena, struct pk_sym **out, size_t *nr,
		       uint64_t *text_addr)
{
	uint64_t size;
	int fd = pk_kc_open(path, &size);
	if (fd < 0)
		return fd;
	const struct pk_kc_in in = { .buf = NULL, .fd = fd };
	int err = pk_kc_decode(&in, (size_t)size, key, arena, out, nr, text_addr);
	close(fd);
	return err;
}

/*
 * The cache used in place: the file mapped and checked as pk_kc_decode checks it, then
 * read through the records (no copy of 120k symbols into fresh memory: 5-10 ms of a
 * report on this VM, where first-touched memory is slow).
 */
int pk_ksym_cache_view(const void *data, size_t len, const uint8_t key[PK_KSYM_KEY_LEN],
		       struct pk_ksym_view *kv)
{
	struct pk_ksym_cache_hdr h;
	int err;
	memset(kv, 0, sizeof(*kv));
	if (len < sizeof(h) || ((uintptr_t)data & 7))
		return -EINVAL;
	memcpy(&h, data, sizeof(h));
	if ((err = pk_kc_header(&h, len, key)))
		return err;
	size_t nr = (size_t)h.nr, names_len = (size_t)h.names_len;
	const uint8_t *base = data;
	const struct pk_ksym_cache_rec *r =
		(const struct pk_ksym_cache_rec *)(const void *)(base + sizeof(h));
	const char *names = (const char *)(r + nr);
	uint32_t want = h.crc;
	h.crc = 0;
	uint32_t crc = pk_crc32c(pk_crc32c(0, &h, sizeof(h)), base + sizeof(h), len - sizeof(h));
	if (crc != want || names[names_len - 1] != '\0')
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		if (r[i].name_off >= names_len || r[i].end <= r[i].start ||
		    (i && r[i].start <= r[i - 1].start))
			return -EINVAL;
	kv->recs = r;
	kv->nr = nr;
	kv->names = names;
	kv->text_addr = h.text_addr;
	return 0;
}

int pk_ksym_cache_map(const char *path, const uint8_t key[PK_KSYM_KEY_LEN],
		      struct pk_ksym_view *kv)
{
	uint64_t size;
	memset(kv, 0, sizeof(*kv));
	int fd = pk_kc_open(path, &size);
	if (fd < 0)
		return fd;
	/* (the file is only ever replaced by rename, never rewritten in place) */
	void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	int err = pk_ksym_cache_view(m, (size_t)size, key, kv);
	if (err) {
		munmap(m, (size_t)size);
		return err;
	}
	size_t ni = (kv->nr + PK_KSYM_IDX_STRIDE - 1) / PK_KSYM_IDX_STRIDE;
	if (ni && (kv->idx = malloc(ni * sizeof(*kv->idx)))) {
		for (size_t i = 0; i < ni; i++)
			kv->idx[i] = kv->recs[i * PK_KSYM_IDX_STRIDE].start;
		kv->nr_idx = ni;
	}
	/* The check read every page; lookups touch a few. Give the pages back to the page
	 * cache (a private mapping never written holds no copies of its own): they come back
	 * on the next touch, and a long-lived machine (perfkit top) does not carry the whole
	 * file, 7 MB of a distribution kernel's, in its resident set. */
	madvise(m, (size_t)size, MADV_DONTNEED);
	kv->map = m;
	kv->map_len = (size_t)size;
	return 0;
}

/*
 * The cache read through its descriptor. The check is pk_kc_decode's, in pieces (a chunk
 * of records, then the names a block at a time); what stays is the index of every
 * PK_KSYM_IDX_STRIDE-th start (8 KB for 120k symbols). A mapping would do for the
 * look-ups, but the page cache hands out large folios: one touched byte maps up to 2 MB
 * into the resident set, and a system-wide top's kernel samples touch the whole 7 MB
 * file within a second (and the check itself reads every page of it).
 */
int pk_ksym_cache_open(const char *path, const uint8_t key[PK_KSYM_KEY_LEN],
		       struct pk_ksym_view *kv)
{
	uint64_t size;
	memset(kv, 0, sizeof(*kv));
	int fd = pk_kc_open(path, &size);
	if (fd < 0)
		return fd;
	const struct pk_kc_in in = { .buf = NULL, .fd = fd };
	struct pk_ksym_cache_hdr h;
	struct pk_ksym_cache_rec chunk[PK_KC_CHUNK];
	char *buf = NULL;
	int err = pk_kc_read(&in, &h, sizeof(h), 0);
	if (!err)
		err = pk_kc_header(&h, (size_t)size, key);
	if (err)
		goto fail;
	size_t nr = (size_t)h.nr, names_len = (size_t)h.names_len;
	size_t ni = (nr + PK_KSYM_IDX_STRIDE - 1) / PK_KSYM_IDX_STRIDE;
	uint32_t want = h.crc;
	h.crc = 0;
	uint32_t crc = pk_crc32c(0, &h, sizeof(h));
	kv->idx = malloc(ni * sizeof(*kv->idx));
	if (!kv->idx) {
		err = -ENOMEM;
		goto fail;
	}
	uint64_t prev = 0;
	for (size_t i = 0; i < nr && !err;) {
		size_t k = PK_MIN(nr - i, (size_t)PK_KC_CHUNK);
		if ((err = pk_kc_read(&in, chunk, k * sizeof(*chunk), sizeof(h) + i * sizeof(*chunk))))
			break;
		crc = pk_crc32c(crc, chunk, k * sizeof(*chunk));
		for (size_t j = 0; j < k; j++, i++) {
			const struct pk_ksym_cache_rec *r = &chunk[j];
			if (r->name_off >= names_len || r->end <= r->start ||
			    (i && r->start <= prev)) {
				err = -EINVAL;
				break;
			}
			prev = r->start;
			if (!(i % PK_KSYM_IDX_STRIDE))
				kv->idx[i / PK_KSYM_IDX_STRIDE] = r->start;
		}
	}
	size_t bl = 65536;
	if (!err && !(buf = malloc(bl)))
		err = -ENOMEM;
	uint64_t names_off = sizeof(h) + (uint64_t)nr * sizeof(struct pk_ksym_cache_rec);
	for (size_t o = 0; !err && o < names_len; o += bl) {
		size_t k = PK_MIN(names_len - o, bl);
		if ((err = pk_kc_read(&in, buf, k, (size_t)names_off + o)))
			break;
		crc = pk_crc32c(crc, buf, k);
		/* every name ends before the block does */
		if (o + k == names_len && buf[k - 1] != '\0')
			err = -EINVAL;
	}
	free(buf);
	if (!err && crc != want)
		err = -EINVAL;
	if (err)
		goto fail;
	kv->nr = nr;
	kv->nr_idx = ni;
	kv->text_addr = h.text_addr;
	kv->by_fd = true;
	kv->fd = fd;
	kv->names_off = names_off;
	kv->names_len = names_len;
	kv->arena.chunk = 4096;
	return 0;
fail:
	free(kv->idx);
	memset(kv, 0, sizeof(*kv));
	close(fd);
	return err;
}

void pk_ksym_view_release(struct pk_ksym_view *kv)
{
	if (kv->map)
		munmap(kv->map, kv->map_len);
	if (kv->by_fd) {
		close(kv->fd);
		pk_u64map_release(&kv->seen);
		pk_arena_release(&kv->arena);
	}
	free(kv->idx);
	memset(kv, 0, sizeof(*kv));
}

/* The name at offset off of a view by_fd, read once and kept (NULL on a read error or
 * no memory). Names are short (KSYM_NAME_LEN, 512): one read, unless it is longer. */
static const char *pk_kv_name(struct pk_ksym_view *kv, uint64_t off)
{
	const char *n = pk_u64map_get(&kv->seen, off);
	if (n)
		return n;
	char sbuf[512], *buf = sbuf;
	size_t cap = sizeof(sbuf), have = 0;
	const char *z = NULL;
	while (!z && off + have < kv->names_len) {
		if (have == cap) {
			char *nb = malloc(cap * 2);
			if (!nb)
				break;
			memcpy(nb, buf, have);
			if (buf != sbuf)
				free(buf);
			buf = nb;
			cap *= 2;
		}
		size_t want = (size_t)PK_MIN((uint64_t)(cap - have), kv->names_len - off - have);
		ssize_t got = pread(kv->fd, buf + have, want, (off_t)(kv->names_off + off + have));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		z = memchr(buf + have, '\0', (size_t)got);
		have += (size_t)got;
	}
	char *s = z ? pk_arena_alloc(&kv->arena, (size_t)(z - buf) + 1) : NULL;
	if (s)
		memcpy(s, buf, (size_t)(z - buf) + 1);
	if (buf != sbuf)
		free(buf);
	if (!s || pk_u64map_put(&kv->seen, off, s))
		return NULL;
	return s;
}

static void pk_kv_sym(const struct pk_ksym_cache_rec *r, const char *name, struct pk_sym *out)
{
	*out = (struct pk_sym){ .start = r->start, .end = r->end, .name = name,
				.bind = r->bind, .seq = r->seq };
}

bool pk_ksym_view_get(struct pk_ksym_view *kv, size_t i, struct pk_sym *out)
{
	if (!kv->by_fd) {
		const struct pk_ksym_cache_rec *r = &kv->recs[i];
		pk_kv_sym(r, kv->names + r->name_off, out);
		return true;
	}
	struct pk_ksym_cache_rec r;
	const struct pk_kc_in in = { .buf = NULL, .fd = kv->fd };
	const char *n;
	if (i >= kv->nr || pk_kc_read(&in, &r, sizeof(r),
				     sizeof(struct pk_ksym_cache_hdr) + i * sizeof(r)) ||
	    r.name_off >= kv->names_len || !(n = pk_kv_name(kv, r.name_off)))
		return false;
	pk_kv_sym(&r, n, out);
	return true;
}

bool pk_ksym_view_find(struct pk_ksym_view *kv, uint64_t addr, struct pk_sym *out)
{
	/* the last record with start <= addr (as pk_syms_find): in the block the index
	 * names, when there is one */
	size_t lo;
	if (kv->by_fd) {
		size_t b = PK_UPPER_BOUND(kv->nr_idx, kv->idx[mid] <= addr);
		if (!b)
			return false;
		size_t first = (b - 1) * PK_KSYM_IDX_STRIDE;
		size_t n = PK_MIN(kv->nr - first, (size_t)PK_KSYM_IDX_STRIDE);
		struct pk_ksym_cache_rec blk[PK_KSYM_IDX_STRIDE];
		const struct pk_kc_in in = { .buf = NULL, .fd = kv->fd };
		const char *name;
		if (pk_kc_read(&in, blk, n * sizeof(*blk),
			       sizeof(struct pk_ksym_cache_hdr) + first * sizeof(*blk)))
			return false;
		lo = PK_UPPER_BOUND(n, blk[mid].start <= addr);
		/* (checked at the opening; a file changed since is hostile as any) */
		if (!lo || addr >= blk[lo - 1].end || addr < blk[lo - 1].start ||
		    blk[lo - 1].name_off >= kv->names_len ||
		    !(name = pk_kv_name(kv, blk[lo - 1].name_off)))
			return false;
		pk_kv_sym(&blk[lo - 1], name, out);
		return true;
	}
	if (kv->idx) {
		size_t b = PK_UPPER_BOUND(kv->nr_idx, kv->idx[mid] <= addr);
		if (!b)
			return false;
		size_t first = (b - 1) * PK_KSYM_IDX_STRIDE;
		size_t n = PK_MIN(kv->nr - first, (size_t)PK_KSYM_IDX_STRIDE);
		lo = first + PK_UPPER_BOUND(n, kv->recs[first + mid].start <= addr);
	} else {
		lo = PK_UPPER_BOUND(kv->nr, kv->recs[mid].start <= addr);
	}
	if (!lo || addr >= kv->recs[lo - 1].end)
		return false;
	pk_ksym_view_get(kv, lo - 1, out);
	return true;
}

#define PK_KV_NAME_HITS 64

/* by_fd: the offsets of the names equal to name (at most PK_KV_NAME_HITS; false when
 * there may be more, or some could not be told), one pass over the names a block at a
 * time (each block but the first starts at a string). A record's name may start inside
 * a string of the block (its tail): a hit is every string that ends with name. */
static bool pk_kv_name_offsets(struct pk_ksym_view *kv, const char *name, uint64_t *hits,
			       size_t *nr)
{
	size_t len = strlen(name), nh = 0, bl = 65536;
	char *buf = malloc(bl);
	const struct pk_kc_in in = { .buf = NULL, .fd = kv->fd };
	bool skip = false;      /* inside a string longer than a block */
	bool all = buf != NULL;
	size_t o = 0;
	while (all && o < kv->names_len) {
		size_t k = PK_MIN(kv->names_len - o, bl), p = 0;
		if (pk_kc_read(&in, buf, k, (size_t)kv->names_off + o)) {
			all = false;
			break;
		}
		while (p < k) {
			const char *z = memchr(buf + p, '\0', k - p);
			if (!z)
				break; /* cut by the block: the next one starts with it */
			size_t e = (size_t)(z - buf);
			if (skip && e < len) {
				all = false; /* (its tail began in the block before) */
			} else if (e - p >= len || skip) {
				if (!memcmp(buf + e - len, name, len)) {
					if (nh == PK_KV_NAME_HITS)
						all = false;
					else
						hits[nh++] = o + e - len;
				}
			}
			skip = false;
			p = e + 1;
		}
		if (p == k) {
			o += k;
		} else if (p > 0) {
			o += p;
		} else {
			o += k; /* a string longer than the block (not a kernel's) */
			skip = true;
		}
	}
	free(buf);
	*nr = nh;
	return all && nh < PK_KV_NAME_HITS;
}

static bool pk_kv_name_is(struct pk_ksym_view *kv, uint64_t off, const char *name)
{
	size_t len = strlen(name);
	char buf[1024];
	if (len >= sizeof(buf) || off >= kv->names_len || kv->names_len - off < len + 1)
		return false;
	const struct pk_kc_in in = { .buf = NULL, .fd = kv->fd };
	return !pk_kc_read(&in, buf, len + 1, (size_t)(kv->names_off + off)) &&
	       !memcmp(buf, name, len) && !buf[len];
}

int pk_ksym_view_find_name(struct pk_ksym_view *kv, const char *name, uint64_t *start)
{
	if (!kv->by_fd) {
		for (size_t i = 0; i < kv->nr; i++) {
			if (!strcmp(kv->names + kv->recs[i].name_off, name)) {
				*start = kv->recs[i].start;
				return 0;
			}
		}
		return -ENOENT;
	}
	uint64_t hits[PK_KV_NAME_HITS];
	size_t nh;
	bool all = pk_kv_name_offsets(kv, name, hits, &nh);
	struct pk_ksym_cache_rec chunk[PK_KC_CHUNK];
	const struct pk_kc_in in = { .buf = NULL, .fd = kv->fd };
	for (size_t i = 0; (nh || !all) && i < kv->nr;) {
		size_t k = PK_MIN(kv->nr - i, (size_t)PK_KC_CHUNK);
		if (pk_kc_read(&in, chunk, k * sizeof(*chunk),
			       sizeof(struct pk_ksym_cache_hdr) + i * sizeof(*chunk)))
			break;
		for (size_t j = 0; j < k; j++, i++) {
			bool eq = false;
			for (size_t h = 0; h < nh && !eq; h++)
				eq = chunk[j].name_off == hits[h];
			/* more names of it than noted: each record's own read */
			if (!eq && !all)
				eq = pk_kv_name_is(kv, chunk[j].name_off, name);
			if (eq) {
				*start = chunk[j].start;
				return 0;
			}
		}
	}
	return -ENOENT;
}
