/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/kernel.c - symbol sources that are not ELF files on disk: /proc/kallsyms
 * (kernel and modules), /tmp/perf-PID.map (JIT compilers), and our own vdso image.
 */
#include <ctype.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"
#include "symbol-internal.h"

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
 * Parse kallsyms: "ADDR TYPE NAME [MODULE]". Text symbols (t/T/w/W) only, since samples
 * land in code. All-zero addresses (kptr_restrict for non-root) mean "unavailable".
 */
int pk_kernel_syms_load(struct pk_machine *m)
{
	if (m->ksyms_loaded)
		return m->nr_ksyms ? 0 : -ENOENT;
	m->ksyms_loaded = true;
	if (!m->host)
		return -ENOENT;

	int fd = pk_open_regular(m->kallsyms_path, 256u << 20, NULL);
	if (fd < 0) {
		pk_warn("cannot read '%s': %s; kernel symbols unresolved", m->kallsyms_path,
			pk_strerror(fd));
		return fd;
	}
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
	uint64_t text_addr = 0;
	bool nonzero = false;
	while ((len = getline(&line, &lcap, f)) > 0 && !err) {
		char *p = line, *end;
		uint64_t a = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		char type = *p;
		if (!type || p[1] != ' ')
			continue;
		p += 2;
		size_t nl = strcspn(p, "\t\n ");
		if (!nl)
			continue;
		p[nl] = '\0';
		if (a)
			nonzero = true;
		if (!strcmp(p, "_text"))
			text_addr = a;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		const char *n = pk_arena_strdup(&m->karena, p);
		if (!n) {
			err = -ENOMEM;
			break;
		}
		pk_ksym_add(&v, &nr, &cap, a, n, &err);
	}
	free(line);
	fclose(f);
	if (err || !nonzero) {
		free(v);
		if (!err)
			pk_warn("'%s' shows no addresses (kptr_restrict?); kernel symbols unresolved",
				m->kallsyms_path);
		return err ? err : -EACCES;
	}
	/* A different KASLR offset than the recording's (the _text map's pgoff is the
	 * recorded address of _text): shift everything by the difference. */
	if (m->have_kernel_text && text_addr && m->kernel_text_pgoff != text_addr) {
		uint64_t delta = m->kernel_text_pgoff - text_addr;
		for (size_t i = 0; i < nr; i++)
			v[i].start += delta, v[i].end += delta;
	}
	m->nr_ksyms = pk_syms_finish(v, nr);
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
	d->nr_syms = pk_syms_finish(v, nr);
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
