/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/kernel.c - symbol sources that are not ELF files on disk: /proc/kallsyms
 * (kernel and modules), /tmp/perf-PID.map (JIT compilers), and our own vdso image.
 */
#include <ctype.h>
#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"
#include "symbol-internal.h"
#include "dso-internal.h"

static void pk_ksym_add(struct pk_sym **v, size_t *nr, size_t *cap, uint64_t a, const char *n,
			int *err)
{
	if (*err)
		return;
	if (*nr == *cap) {
		size_t nc = *cap ? *cap * 2 : 4096;
		struct pk_sym *p = realloc(*v, nc * sizeof(*p));
		if (!p) {
			*err = -ENOMEM;
			return;
		}
		*v = p;
		*cap = nc;
	}
	(*v)[(*nr)++] = (struct pk_sym){ .start = a, .end = a, .name = n, .bind = STB_GLOBAL };
}

/*
 * A kallsyms symbol's end, as perf bounds it (symbols__fixup_end): the next symbol's
 * start, except where the kernel's symbols give way to a module's (or back): there the
 * last symbol ends at its start + 4 KiB rounded up to a page (or at the next start if
 * sooner), and the very last symbol a page after its page. Without this the kernel's last text symbol would
 * swallow the whole gap up to the modules. mod: by the symbols' input order (seq).
 */
static size_t pk_kallsyms_bound(struct pk_sym *v, size_t nr, const uint8_t *mod)
{
	for (size_t i = 0; i < nr; i++) {
		uint64_t s = v[i].start, cut;
		if (i + 1 == nr)
			cut = ((s + 4095) & ~4095ULL) + 4096;
		else if (mod[v[i].seq] != mod[v[i + 1].seq])
			cut = (s + 4096 + 4095) & ~4095ULL;
		else
			continue;
		if (cut <= s)
			continue; /* wrapped at the top of the address space: keep the end */
		if (i + 1 == nr || cut < v[i].end)
			v[i].end = cut;
	}
	return nr;
}

/*
 * Parse kallsyms: "ADDR TYPE NAME [MODULE]". Text symbols (t/T/w/W) only, since samples
 * land in code. All-zero addresses (kptr_restrict for non-root) mean "unavailable".
 * The file is read with a few big reads and parsed in place: the kept names are packed
 * to the front of the buffer, which then moves to the machine's arena in one copy.
 * Returns the finished table (pk_syms_finish) and the one block holding its names.
 */
static int pk_kallsyms_parse(struct pk_machine *m, struct pk_sym **out, size_t *nr_out,
			     const char **names_out, size_t *names_len, uint64_t *text_out)
{
	if (!m->kallsyms_path[0])
		return -ENOENT; /* kernel symbols not wanted (the caller said why) */
	int fd = pk_open_regular(m->kallsyms_path, 256u << 20, NULL);
	if (fd < 0) {
		pk_warn("cannot read '%s': %s; kernel symbols unresolved", m->kallsyms_path,
			pk_strerror(fd));
		return fd;
	}
	char *buf = NULL;
	size_t len = 0;
	/* big reads: /proc/kallsyms costs a syscall per read */
	int err = pk_read_fd_alloc(fd, 8u << 20, 256u << 20, &buf, &len);
	close(fd);
	if (err) {
		pk_warn("cannot read '%s': %s; kernel symbols unresolved", m->kallsyms_path,
			pk_strerror(err));
		return err;
	}
	/* ~40 bytes a line: one allocation in the common case */
	size_t cap = len / 32 + 16, nr = 0;
	struct pk_sym *v = malloc(cap * sizeof(*v));
	uint8_t *mod = malloc(cap); /* by input index: a module's (or "[bpf]") symbol */
	if (!v || !mod) {
		free(v);
		free(mod);
		free(buf);
		return -ENOMEM;
	}
	pk_thp_hint(v, cap * sizeof(*v));
	uint64_t text_addr = 0;
	bool nonzero = false;
	size_t w = 0;           /* packed names end here (w <= the read position) */
	char *p = buf, *end = buf + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *le = nl ? nl : end;
		char *line = p;
		p = nl ? nl + 1 : end;
		/* ADDR */
		uint64_t a = 0;
		char *q = line;
		int dv, nd = 0;
		while (q < le && (dv = pk_hexval((unsigned char)*q)) >= 0) {
			/* more than 64 bits saturate, as strtoull does */
			a = (a >> 60) ? UINT64_MAX : (a << 4 | (uint64_t)dv);
			nd++;
			q++;
		}
		if (!nd || q >= le || *q != ' ')
			continue;
		/* TYPE */
		q++;
		if (le - q < 2 || q[1] != ' ')
			continue;
		char type = q[0];
		q += 2;
		/* NAME: up to a tab, newline or space */
		char *ne = q;
		while (ne < le && *ne != '\t' && *ne != ' ')
			ne++;
		size_t nlen = (size_t)(ne - q);
		if (!nlen || !type)
			continue;
		if (a)
			nonzero = true;
		if (nlen == 5 && !memcmp(q, "_text", 5))
			text_addr = a;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (memchr(q, '\0', nlen))
			continue; /* a NUL inside a name: not kallsyms */
		if (nr == cap) {
			size_t nc = cap * 2;
			struct pk_sym *nv = realloc(v, nc * sizeof(*nv));
			if (nv)
				v = nv;
			uint8_t *nm = nv ? realloc(mod, nc) : NULL;
			if (!nm) {
				err = -ENOMEM;
				break;
			}
			mod = nm;
			cap = nc;
		}
		/* "[MODULE]" after the name (perf looks for a '[' anywhere in the line's
		 * rest, the name included) */
		mod[nr] = memchr(q, '[', (size_t)(le - q)) != NULL;
		/* pack the name (memmove: source and destination may overlap) */
		memmove(buf + w, q, nlen);
		buf[w + nlen] = '\0';
		v[nr++] = (struct pk_sym){ .start = a, .end = a, .name = (const char *)(uintptr_t)w,
					   .bind = STB_GLOBAL };
		w += nlen + 1;
	}
	char *names = NULL;
	if (!err && nonzero && w) {
		names = pk_arena_alloc(&m->karena, w);
		if (names)
			memcpy(names, buf, w);
		else
			err = -ENOMEM;
	}
	free(buf);
	if (err || !nonzero) {
		free(v);
		free(mod);
		if (!err)
			pk_warn("'%s' shows no addresses (kptr_restrict?); kernel symbols unresolved",
				m->kallsyms_path);
		return err ? err : -EACCES;
	}
	for (size_t i = 0; i < nr; i++)
		v[i].name = names + (uintptr_t)v[i].name;
	*out = v;
	*nr_out = pk_kallsyms_bound(v, pk_syms_finish(v, nr, true), mod);
	free(mod);
	*names_out = names;
	*names_len = w;
	*text_out = text_addr;
	return 0;
}

static int pk_ksym_start_cmp(const void *a, const void *b)
{
	const struct pk_sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Another machine's (or boot's) kernel: the copy of its kallsyms that a build-id cache
 * keeps under the recorded kernel build-id ([kernel.kallsyms]/<id>/kallsyms, reached as
 * <cache>/.build-id/xx/yyyy/kallsyms), which perf record and perfkit record store and
 * perfkit archive packs; perf report reads it the same way.
 */
static int pk_kallsyms_from_cache(struct pk_machine *m, struct pk_sym **v, size_t *nr,
				  uint64_t *text_addr)
{
	struct pk_dso *d = pk_dso_findnew(m, "[kernel.kallsyms]");
	if (!d || !d->want_bid_len)
		return -ENOENT;
	const char *dirs[] = { m->buildid_dir, m->perf_buildid_dir, m->symfs };
	int err = -ENOENT;
	for (size_t k = 0; k < PK_ARRAY_SIZE(dirs) && err; k++) {
		char *p = dirs[k] ? pk_build_id_cache_path(dirs[k], d->want_bid, d->want_bid_len,
							   false) : NULL;
		size_t n = p ? strlen(p) : 0;
		char *q = n > 4 ? realloc(p, n + 8) : NULL;
		if (!q) {
			free(p);
			continue;
		}
		strcpy(q + n - 4, "/kallsyms"); /* ".../elf" -> ".../kallsyms" */
		if (access(q, R_OK) == 0) {
			char *saved = m->kallsyms_path;
			const char *names;
			size_t names_len;
			m->kallsyms_path = q;
			err = pk_kallsyms_parse(m, v, nr, &names, &names_len, text_addr);
			m->kallsyms_path = saved;
		}
		free(q);
	}
	return err;
}

/*
 * The host's kernel symbols: from the on-disk cache (ksym-cache.c) when its key still
 * matches, else parsed from kallsyms (and the cache rewritten). Only /proc/kallsyms
 * itself is cached, and only by a machine given a cache directory (opts.cache_dir).
 * A recording of another machine or boot: the kallsyms copy of a build-id cache.
 */
void pk_kcache_prepare(const struct pk_machine *m, struct pk_kcache_pre *k)
{
	memset(&k->kv, 0, sizeof(k->kv));
	k->rc = -ENOENT;
	k->cache = !strcmp(m->kallsyms_path, "/proc/kallsyms") && m->cache_dir;
	if (k->cache) {
		const struct pk_ksym_cache_src src = {
			.kallsyms = m->kallsyms_path,
			.boot_id = "/proc/sys/kernel/random/boot_id",
			.modules = "/proc/modules",
			.live_bpf = true,
		};
		k->cache = !pk_ksym_cache_key(&src, k->key) &&
			   !pk_ksym_cache_path(m->cache_dir, k->cpath, sizeof(k->cpath), false);
	}
	/* a long-lived machine reads it through its descriptor (no mapping, no copy) */
	if (k->cache)
		k->rc = (m->close_files ? pk_ksym_cache_open : pk_ksym_cache_map)(k->cpath, k->key,
										   &k->kv);
}

int pk_kernel_syms_load(struct pk_machine *m)
{
	if (m->ksyms_loaded)
		return m->nr_ksyms || m->kview.nr ? 0 : -ENOENT;
	m->ksyms_loaded = true;
	struct pk_sym *v = NULL;
	size_t nr = 0;
	uint64_t text_addr = 0;
	if (!m->host) {
		if (pk_kallsyms_from_cache(m, &v, &nr, &text_addr))
			return -ENOENT;
		goto shift;
	}

	/* the cache's key, path and view: worked out on the preload thread when it was
	 * asked for (pk_machine_preload_dso of a kernel object), else here */
	struct pk_kcache_pre k;
	if (!pk_preload_take_kcache(m, &k))
		pk_kcache_prepare(m, &k);
	bool cache = k.cache;
	const uint8_t *key = k.key;
	char *cpath = k.cpath;
	if (cache && !k.rc) {
		m->kview = k.kv;
		/* used in place, shifted at look-up time; unless the shift wraps some
		 * addresses around (a hostile recording): then as a sorted copy below */
		struct pk_ksym_view *kv = &m->kview;
		uint64_t delta = m->have_kernel_text && kv->text_addr ?
				 m->kernel_text_pgoff - kv->text_addr : 0;
		struct pk_sym first, last;
		bool read = pk_ksym_view_get(kv, 0, &first) &&
			    pk_ksym_view_get(kv, kv->nr - 1, &last);
		if (read && first.start + delta <= last.start + delta &&
		    last.end - 1 + delta >= last.start + delta) {
			m->kview_delta = delta;
			return 0;
		}
		if (kv->by_fd) {
			/* the copy from the file itself */
			pk_ksym_view_release(kv);
			if (pk_ksym_cache_load(cpath, key, &m->karena, &v, &nr, &text_addr))
				return -ENOENT;
			goto shift;
		}
		v = malloc(kv->nr * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < kv->nr; i++)
			pk_ksym_view_get(kv, i, &v[i]);
		nr = kv->nr;
		text_addr = kv->text_addr;
		/* (the names stay in the mapping, released with the machine) */
		kv->nr = 0;
	} else if (!cache || pk_ksym_cache_load(cpath, key, &m->karena, &v, &nr, &text_addr)) {
		const char *names;
		size_t names_len;
		int err = pk_kallsyms_parse(m, &v, &nr, &names, &names_len, &text_addr);
		if (err)
			return err;
		/* best effort: a read-only home only costs the next run the parse */
		if (cache && !pk_ksym_cache_path(m->cache_dir, cpath, sizeof(k.cpath), true))
			(void)pk_ksym_cache_store(cpath, key, v, nr, names, names_len, text_addr);
	}
shift:
	/* A different KASLR offset than the recording's (the _text map's pgoff is the
	 * recorded address of _text): shift everything by the difference. A hostile
	 * offset may wrap some addresses around: then sort again. */
	if (m->have_kernel_text && text_addr && m->kernel_text_pgoff != text_addr) {
		uint64_t delta = m->kernel_text_pgoff - text_addr;
		bool sorted = true;
		for (size_t i = 0; i < nr; i++) {
			v[i].start += delta, v[i].end += delta;
			if (i && v[i].start < v[i - 1].start)
				sorted = false;
		}
		if (!sorted)
			qsort(v, nr, sizeof(*v), pk_ksym_start_cmp);
	}
	m->nr_ksyms = nr;
	m->ksyms = v;
	return 0;
}

/* /tmp/perf-PID.map: one "START SIZE name" line per symbol, hex numbers (0x optional). */
int pk_dso_load_jit(struct pk_dso *d)
{
	uint64_t fsize;
	int fd = pk_open_regular(d->name, PK_JIT_MAP_MAX, &fsize);
	if (fd < 0)
		return fd;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	struct pk_sym *v = NULL;
	size_t nr = 0, cap = 0;
	int err = 0;
	while ((len = getline(&line, &lcap, f)) > 0 && !err) {
		char *p = line, *end;
		uint64_t start = strtoull(p, &end, 16);
		if (end == p || !isspace((unsigned char)*end))
			continue;
		p = end;
		uint64_t size = strtoull(p, &end, 16);
		if (end == p || !isspace((unsigned char)*end))
			continue;
		char *name = pk_strtrim(end);
		if (!*name || start + size < start)
			continue;
		const char *n = pk_arena_strdup(&d->arena, name);
		if (!n) {
			err = -ENOMEM;
			break;
		}
		pk_ksym_add(&v, &nr, &cap, start, n, &err);
		if (!err)
			v[nr - 1].end = start + size;
	}
	free(line);
	fclose(f);
	if (err) {
		free(v);
		return err;
	}
	d->nr_syms = pk_syms_finish(v, nr, false);
	d->syms = v;
	return 0;
}

/* A memfd holding a copy of this process's vdso image (same kernel => same vdso). */
int pk_vdso_memfd(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return -ENOENT;
	/* its extent from /proc/self/maps */
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	char line[512];
	uint64_t lo = 0, hi = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[vdso]"))
			continue;
		unsigned long long a, b;
		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && a == base) {
			lo = a;
			hi = b;
		}
		break;
	}
	fclose(f);
	if (!lo || hi <= lo || hi - lo > (64u << 20))
		return -ENOENT;
	int fd = memfd_create("perfkit-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	const char *p = (const char *)(uintptr_t)lo;
	size_t left = hi - lo;
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		p += n;
		left -= (size_t)n;
	}
	return fd;
}
