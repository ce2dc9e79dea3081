/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the symbol loaders: the input is written to a memfd and read as an ELF file
 * (symbols, PLT, program headers, DWARF lines and inline chains), as a kallsyms file and
 * as a perf-PID.map file; a few addresses derived from the input are looked up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <perfkit/perfkit.h>

static void quiet(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static char jdir[64];

static void cleanup_jdir(void)
{
	char p[96];
	snprintf(p, sizeof(p), "%s/perf-1.map", jdir);
	unlink(p);
	rmdir(jdir);
}

static void lookups(struct pk_dso *d, const uint8_t *data, size_t size)
{
	const char *file;
	unsigned int line;
	const struct pk_inline_frame *fr;
	for (size_t i = 0; i < 4; i++) {
		uint64_t a = 0;
		if (size >= (i + 1) * 8)
			memcpy(&a, data + size - (i + 1) * 8, 8);
		a = i == 0 ? a : (a & 0xffff) + 0x1000 * i;
		uint64_t start, sz;
		const char *s = pk_dso__symbol(d, a, &start, &sz);
		if (s && (start > a || (sz && a - start >= sz)))
			__builtin_trap();
		pk_dso__srcline(d, a, &file, &line);
		int n = pk_dso__inlines(d, a, &fr);
		for (int k = 0; k < n; k++)
			if (!fr[k].func || !fr[k].file)
				__builtin_trap();
	}
	pk_dso__offset_to_addr(d, size / 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		pk_set_log(quiet, NULL, PK_LOG_ERROR);
		init = 1;
	}
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t off = 0;
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	/* as an ELF file */
	struct pk_machine *m = pk_machine__new(NULL);
	if (m) {
		struct pk_dso *d = pk_machine__dso(m, path);
		if (d) {
			pk_dso__load(d);
			lookups(d, data, size);
		}
		struct pk_mmap_event ev = { .pid = 1, .tid = 1, .addr = 0x400000, .len = 0x100000,
					    .pgoff = 0, .filename = path };
		pk_machine__mmap(m, &ev);
		struct pk_addr_loc loc;
		pk_machine__resolve(m, 1, 1, 0x401000, PK_CPUMODE_USER, &loc);
		pk_machine__free(m);
	}

	/* as kallsyms (host mode reads it) and as a JIT map */
	PK_OPTS(pk_machine_opts, o, .host = true, .kallsyms = path);
	m = pk_machine__new(&o);
	if (m) {
		struct pk_addr_loc loc;
		uint64_t a = 0xffffffff81000000ULL;
		if (size >= 8)
			memcpy(&a, data, 8);
		pk_machine__resolve(m, 0, 0, a, PK_CPUMODE_KERNEL, &loc);
		pk_machine__free(m);
	}
	/* as <jit_dir>/perf-1.map for an anonymous map of pid 1 */
	if (!jdir[0]) {
		snprintf(jdir, sizeof(jdir), "/tmp/pk-fuzz-elf-XXXXXX");
		if (!mkdtemp(jdir))
			jdir[0] = '\0';
		else
			atexit(cleanup_jdir);
	}
	if (jdir[0]) {
		char jp[96];
		snprintf(jp, sizeof(jp), "%s/perf-1.map", jdir);
		FILE *f = fopen(jp, "w");
		if (f) {
			fwrite(data, 1, size, f);
			fclose(f);
		}
		PK_OPTS(pk_machine_opts, oj, .jit_dir = jdir);
		m = pk_machine__new(&oj);
		if (m) {
			struct pk_mmap_event ev = { .pid = 1, .tid = 1, .addr = 0,
						    .len = UINT64_MAX, .filename = "//anon" };
			pk_machine__mmap(m, &ev);
			struct pk_addr_loc loc;
			for (int i = 0; i < 4; i++) {
				uint64_t a = 0;
				if (size >= (size_t)(i + 1) * 8)
					memcpy(&a, data + (size_t)i * 8, 8);
				pk_machine__resolve(m, 1, 1, a, PK_CPUMODE_USER, &loc);
			}
			pk_machine__free(m);
		}
	}
	close(fd);
	return 0;
}
