/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/kcode.c: the kernel's code for annotate. Synthetic ELF files written
 * here stand for /proc/kcore (an ET_CORE file whose PT_LOAD segments map kernel virtual
 * addresses) and for a vmlinux image: bytes come from the right segment (across two
 * adjacent ones, short at the end of one, none outside); hostile program headers (bad
 * sizes and counts, an extended count, segments past the file's end, overlapping or
 * wrapping at the top of the address space, huge) are refused or cut; and the choice of
 * the file follows perf's rules: kcore only when the running kernel is the recorded one,
 * read at the recorded address minus the difference of the recorded and the running
 * _text; each failure with its own error.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"
#include "internal.h"
#include "annotate/kcode.h"

#define KTEXT 0xffffffff81000000ULL

static char *tmp;

struct tseg {
	uint32_t type;
	uint64_t vaddr, offset, filesz;
	char fill; /* the segment's bytes: fill + (i & 0x0f); 0: none written */
	uint32_t flags;
};

/*
 * An ELF64 file of type etype with these program headers at offset 64; xnum: the count
 * through section header 0 (PN_XNUM), xcount the value given there. The bytes of each
 * segment are written at its offset. Returns the path (static buffer per name).
 */
static const char *mkelf(const char *name, uint16_t etype, const struct tseg *s, size_t n,
			 bool xnum, uint32_t xcount)
{
	static char path[8][PATH_MAX];
	static unsigned next;
	char *p = path[next++ % 8];
	snprintf(p, PATH_MAX, "%s/%s", tmp, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = etype;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = 64;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = xnum ? PN_XNUM : (uint16_t)n;
	eh.e_ehsize = sizeof(eh);
	if (xnum) {
		Elf64_Shdr sh0;
		memset(&sh0, 0, sizeof(sh0));
		sh0.sh_info = xcount;
		eh.e_shoff = 64 + n * sizeof(Elf64_Phdr);
		eh.e_shentsize = sizeof(Elf64_Shdr);
		eh.e_shnum = 0;
		assert_int_equal(pwrite(fd, &sh0, sizeof(sh0), (off_t)eh.e_shoff), sizeof(sh0));
	}
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	for (size_t i = 0; i < n; i++) {
		Elf64_Phdr ph = { .p_type = s[i].type, .p_flags = s[i].flags ? s[i].flags : PF_R | PF_X,
				  .p_offset = s[i].offset, .p_vaddr = s[i].vaddr,
				  .p_filesz = s[i].filesz, .p_memsz = s[i].filesz };
		assert_int_equal(pwrite(fd, &ph, sizeof(ph), (off_t)(64 + i * sizeof(ph))),
				 sizeof(ph));
		if (!s[i].fill)
			continue;
		uint8_t *b = malloc(s[i].filesz);
		assert_non_null(b);
		for (uint64_t j = 0; j < s[i].filesz; j++)
			b[j] = (uint8_t)(s[i].fill + (j & 0x0f));
		assert_int_equal(pwrite(fd, b, s[i].filesz, (off_t)s[i].offset), (ssize_t)s[i].filesz);
		free(b);
	}
	close(fd);
	return p;
}

/* read the program headers of path: the result of pk_kc_elf_read, *fd left open */
static int readelf(const char *path, struct pk_kc_elf *e, int *fd)
{
	*fd = open(path, O_RDONLY);
	assert_true(*fd >= 0);
	struct stat st;
	assert_int_equal(fstat(*fd, &st), 0);
	return pk_kc_elf_read(*fd, (uint64_t)st.st_size, e);
}

static void expect_bytes(const uint8_t *b, size_t n, char fill, uint64_t seg_off)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(b[i], (uint8_t)(fill + ((seg_off + i) & 0x0f)));
}

static void test_segments(void **state)
{
	(void)state;
	const struct tseg s[] = {
		{ PT_NOTE, 0, 0x800, 0x20, 0, 0 },
		{ PT_LOAD, KTEXT, 0x1000, 0x100, 'A', 0 },
		{ PT_LOAD, KTEXT + 0x100, 0x3000, 0x80, 'a', 0 },          /* adjacent */
		{ PT_LOAD, 0xffffc90000000000ULL, 0x2000, 0x40, 'V', PF_R | PF_W },
	};
	struct pk_kc_elf e;
	int fd;
	assert_int_equal(readelf(mkelf("kcore", ET_CORE, s, 4, false, 0), &e, &fd), 0);
	assert_int_equal(e.type, ET_CORE);
	assert_int_equal(e.machine, EM_X86_64);
	assert_int_equal(e.nr, 3);
	uint8_t b[64];
	/* inside one */
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0x10, b, 16), 16);
	expect_bytes(b, 16, 'A', 0x10);
	/* across two adjacent segments: all of it, in order */
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0xf8, b, 16), 16);
	expect_bytes(b, 8, 'A', 0xf8);
	expect_bytes(b + 8, 8, 'a', 0);
	/* short at the end of the last one */
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0x170, b, 64), 16);
	expect_bytes(b, 16, 'a', 0x70);
	/* outside every segment, and just past them */
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT - 1, b, 1), -ENODATA);
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0x180, b, 8), -ENODATA);
	assert_int_equal(pk_kc_elf_pread(fd, &e, 0, b, 8), -ENODATA);
	/* the note is no code; another segment far away */
	assert_int_equal(pk_kc_elf_pread(fd, &e, 0xffffc90000000000ULL + 0x3c, b, 64), 4);
	expect_bytes(b, 4, 'V', 0x3c);
	/* bad arguments */
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT, NULL, 4), -EINVAL);
	pk_kc_elf_release(&e);
	close(fd);
}

static void test_hostile(void **state)
{
	(void)state;
	struct pk_kc_elf e;
	int fd;
	/* not ELF */
	pk_test_write_file(tmp, "text", "not an ELF file at all, but long enough to hold a header "
				      "of sixty-four bytes");
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/text", tmp);
	assert_int_equal(readelf(p, &e, &fd), -EINVAL);
	close(fd);
	const struct tseg one[] = { { PT_LOAD, KTEXT, 0x1000, 0x100, 'A', 0 } };
	/* a 32-bit class, a wrong phentsize, a header too short */
	const char *f = mkelf("c32", ET_CORE, one, 1, false, 0);
	int w = open(f, O_WRONLY);
	uint8_t c = ELFCLASS32;
	assert_int_equal(pwrite(w, &c, 1, EI_CLASS), 1);
	close(w);
	assert_int_equal(readelf(f, &e, &fd), -EINVAL);
	close(fd);
	f = mkelf("phent", ET_CORE, one, 1, false, 0);
	w = open(f, O_WRONLY);
	uint16_t pe = 32;
	assert_int_equal(pwrite(w, &pe, 2, offsetof(Elf64_Ehdr, e_phentsize)), 2);
	close(w);
	assert_int_equal(readelf(f, &e, &fd), -EINVAL);
	close(fd);
	f = mkelf("short", ET_CORE, one, 1, false, 0);
	assert_int_equal(truncate(f, 40), 0);
	assert_int_equal(readelf(f, &e, &fd), -EINVAL);
	close(fd);
	/* more program headers than the file holds */
	f = mkelf("count", ET_CORE, one, 1, false, 0);
	w = open(f, O_WRONLY);
	uint16_t nph = 60000;
	assert_int_equal(pwrite(w, &nph, 2, offsetof(Elf64_Ehdr, e_phnum)), 2);
	close(w);
	assert_int_equal(readelf(f, &e, &fd), -EINVAL);
	close(fd);
	/* an extended count (PN_XNUM) in section header 0: right, and too many */
	const struct tseg two[] = { { PT_LOAD, KTEXT, 0x1000, 0x100, 'A', 0 },
				    { PT_LOAD, KTEXT + 0x1000, 0x2000, 0x100, 'B', 0 } };
	assert_int_equal(readelf(mkelf("xnum", ET_CORE, two, 2, true, 2), &e, &fd), 0);
	assert_int_equal(e.nr, 2);
	pk_kc_elf_release(&e);
	close(fd);
	assert_int_equal(readelf(mkelf("xbig", ET_CORE, two, 2, true, 70000), &e, &fd), -E2BIG);
	close(fd);
	assert_int_equal(readelf(mkelf("xzero", ET_CORE, two, 2, true, 0), &e, &fd), -EINVAL);
	close(fd);
	/* segments past the end of the file: left out, or cut to the file's bytes */
	const struct tseg past[] = {
		{ PT_LOAD, KTEXT, 0x1000, 0x100, 'A', 0 },
		{ PT_LOAD, KTEXT + 0x10000, 0x100000, 0x100, 0, 0 },            /* beyond */
		{ PT_LOAD, KTEXT + 0x20000, 0x1080, 0x4000000000000000ULL, 0, 0 }, /* huge */
		{ PT_LOAD, KTEXT + 0x30000, 0x7fffffffffffffffULL, 0x10, 0, 0 },
		{ PT_LOAD, KTEXT + 0x40000, 0x8000000000000000ULL, 0x10, 0, 0 },
	};
	assert_int_equal(readelf(mkelf("past", ET_CORE, past, 5, false, 0), &e, &fd), 0);
	assert_int_equal(e.nr, 2);
	uint8_t b[256];
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0x10000, b, 8), -ENODATA);
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0x20000, b, 256), 0x80);
	expect_bytes(b, 0x80, 'A', 0x80);
	pk_kc_elf_release(&e);
	close(fd);
	/* overlapping: the lower start keeps its bytes; at one start the first in the file */
	const struct tseg ovl[] = {
		{ PT_LOAD, KTEXT + 0x80, 0x2000, 0x100, 'Y', 0 },
		{ PT_LOAD, KTEXT, 0x1000, 0x100, 'X', 0 },
		{ PT_LOAD, KTEXT, 0x3000, 0x400, 'Z', 0 },
		{ PT_LOAD, KTEXT + 0x10, 0x4000, 0x20, 'W', 0 },             /* inside X */
	};
	assert_int_equal(readelf(mkelf("overlap", ET_CORE, ovl, 4, false, 0), &e, &fd), 0);
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0x70, b, 0x40), 0x40);
	expect_bytes(b, 0x40, 'X', 0x70);
	/* past X's end, the rest of Z (Y, inside Z, has nothing left) */
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0xf8, b, 0x10), 0x10);
	expect_bytes(b, 8, 'X', 0xf8);
	expect_bytes(b + 8, 8, 'Z', 0x100);
	assert_int_equal(e.nr, 2);
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0x180, b, 0x10), 0x10);
	expect_bytes(b, 0x10, 'Z', 0x180);
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT + 0x3f8, b, 0x40), 8);
	pk_kc_elf_release(&e);
	close(fd);
	/* a segment reaching past the top of the address space is cut there */
	const struct tseg top[] = { { PT_LOAD, 0xfffffffffffff000ULL, 0x1000, 0x2000, 'T', 0 } };
	assert_int_equal(readelf(mkelf("top", ET_CORE, top, 1, false, 0), &e, &fd), 0);
	assert_int_equal(e.nr, 1);
	assert_int_equal(e.segs[0].filesz, 0x1000);
	assert_int_equal(pk_kc_elf_pread(fd, &e, 0xffffffffffffff00ULL, b, 256), 256);
	expect_bytes(b, 256, 'T', 0xf00);
	assert_int_equal(pk_kc_elf_pread(fd, &e, 0xfffffffffffffff0ULL, b, 64), 16);
	pk_kc_elf_release(&e);
	close(fd);
	/* no PT_LOAD at all: nothing to read */
	const struct tseg note[] = { { PT_NOTE, 0, 0x100, 0x10, 0, 0 } };
	assert_int_equal(readelf(mkelf("note", ET_CORE, note, 1, false, 0), &e, &fd), 0);
	assert_int_equal(e.nr, 0);
	assert_int_equal(pk_kc_elf_pread(fd, &e, KTEXT, b, 8), -ENODATA);
	pk_kc_elf_release(&e);
	close(fd);
}

static const uint8_t BID[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
				 19, 20 };
static const uint8_t OTHER[20] = { 9 };

static struct pk_annotate_kernel choose(const struct pk_kcode_opts *o, struct pk_kcode **k)
{
	assert_int_equal(pk_kcode_open(o, k), 0);
	struct pk_annotate_kernel ki = { .sz = sizeof(ki) };
	pk_kcode_info(*k, &ki);
	return ki;
}

static void test_choice(void **state)
{
	(void)state;
	/* the running kernel's _text 16 MiB below the recorded one: another boot */
	pk_test_write_file(tmp, "kallsyms", "0000000000000000 A fixed_percpu_data\n"
					  "ffffffff82000000 T startup_64\n"
					  "ffffffff82000000 T _text\n");
	char ks[PATH_MAX];
	snprintf(ks, sizeof(ks), "%s/kallsyms", tmp);
	const struct tseg core[] = { { PT_LOAD, 0xffffffff82000000ULL, 0x1000, 0x200, 'K', 0 } };
	const char *kc = mkelf("kcore", ET_CORE, core, 1, false, 0);
	struct pk_kcode_opts o = {
		.kcore = kc, .kallsyms = ks, .release = "0.0.0-unit", .want_bid = BID,
		.want_bid_len = 20, .run_bid = BID, .run_bid_len = 20, .have_text = true,
		.text = 0xffffffff83000000ULL,
	};
	struct pk_kcode *k;
	struct pk_annotate_kernel ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_KCORE);
	assert_string_equal(ki.path, kc);
	assert_true(ki.bias == 0x1000000);
	assert_int_equal(ki.vmlinux_err, -ENOENT);
	assert_null(ki.vmlinux_path);
	assert_string_equal(ki.release, "0.0.0-unit");
	uint8_t b[32];
	uint16_t em = 0;
	assert_int_equal(pk_kcode_read(k, 0xffffffff83000010ULL, b, 32, &em), 32);
	assert_int_equal(em, EM_X86_64);
	expect_bytes(b, 32, 'K', 0x10);
	assert_int_equal(pk_kcode_read(k, 0xffffffff82000010ULL, b, 32, &em), -ENODATA);
	pk_kcode_free(k);

	/* another running kernel: kcore is not read */
	o.run_bid = OTHER;
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	assert_int_equal(ki.kcore_err, -ESTALE);
	assert_memory_equal(ki.running_bid, OTHER, 20);
	assert_memory_equal(ki.recorded_bid, BID, 20);
	assert_int_equal(pk_kcode_read(k, 0xffffffff83000010ULL, b, 8, &em), -ENOENT);
	pk_kcode_free(k);
	/* no recorded build-id: the release decides (host) */
	o.want_bid_len = 0;
	ki = choose(&o, &k);
	assert_int_equal(ki.kcore_err, -ESTALE);
	pk_kcode_free(k);
	o.host = true;
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_KCORE);
	pk_kcode_free(k);
	o.run_bid = BID;
	o.want_bid_len = 20;

	/* missing, a directory, not a core file, not mapping _text, not tried */
	char missing[PATH_MAX];
	snprintf(missing, sizeof(missing), "%s/no-kcore", tmp);
	o.kcore = missing;
	ki = choose(&o, &k);
	assert_int_equal(ki.kcore_err, -ENOENT);
	assert_string_equal(ki.kcore_path, missing);
	pk_kcode_free(k);
	o.kcore = tmp;
	ki = choose(&o, &k);
	assert_int_equal(ki.kcore_err, -EISDIR);
	pk_kcode_free(k);
	o.kcore = mkelf("exec", ET_EXEC, core, 1, false, 0);
	ki = choose(&o, &k);
	assert_int_equal(ki.kcore_err, -EINVAL);
	pk_kcode_free(k);
	const struct tseg elsewhere[] = { { PT_LOAD, 0xffffffffa0000000ULL, 0x1000, 0x200, 'K', 0 } };
	o.kcore = mkelf("elsewhere", ET_CORE, elsewhere, 1, false, 0);
	ki = choose(&o, &k);
	assert_int_equal(ki.kcore_err, -ENODATA);
	pk_kcode_free(k);
	o.kcore = "";
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	assert_int_equal(ki.kcore_err, 0);
	pk_kcode_free(k);
	if (!pk_test_is_root()) {
		/* as root the mode does not stop the open: checked only without */
		const char *ro = mkelf("kcore-ro", ET_CORE, core, 1, false, 0);
		assert_int_equal(chmod(ro, 0), 0);
		o.kcore = ro;
		ki = choose(&o, &k);
		assert_int_equal(ki.kcore_err, -EACCES);
		pk_kcode_free(k);
	}
	o.kcore = kc;

	/* a vmlinux given: only it (kcore not tried); its code at link addresses */
	const struct tseg img[] = {
		{ PT_LOAD, 0x400000, 0x800, 0x100, 'N', PF_R },
		{ PT_LOAD, KTEXT, 0x1000, 0x100, 'L', PF_R | PF_X },
	};
	o.vmlinux = mkelf("vmlinux", ET_EXEC, img, 2, false, 0);
	ki = choose(&o, &k);
	/* it has no build-id: not the recorded kernel's */
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	assert_int_equal(ki.vmlinux_err, -ESTALE);
	assert_string_equal(ki.vmlinux_path, o.vmlinux);
	assert_int_equal(ki.vmlinux_bid_len, 0);
	assert_int_equal(ki.kcore_err, 0);
	pk_kcode_free(k);
	/* without a recorded build-id it is taken; no _text symbol: its first code */
	o.want_bid_len = 0;
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_VMLINUX);
	assert_true(ki.bias == 0xffffffff83000000ULL - KTEXT);
	assert_int_equal(pk_kcode_read(k, 0xffffffff83000020ULL, b, 16, &em), 16);
	expect_bytes(b, 16, 'L', 0x20);
	pk_kcode_free(k);
	/* no code in it (a debug file), not there, a core file */
	const struct tseg nocode[] = { { PT_LOAD, KTEXT, 0x1000, 0x100, 'L', PF_R } };
	o.vmlinux = mkelf("vmlinux.dbg", ET_EXEC, nocode, 1, false, 0);
	ki = choose(&o, &k);
	assert_int_equal(ki.vmlinux_err, -ENODATA);
	pk_kcode_free(k);
	o.vmlinux = missing;
	ki = choose(&o, &k);
	assert_int_equal(ki.vmlinux_err, -ENOENT);
	assert_string_equal(ki.vmlinux_path, missing);
	pk_kcode_free(k);
	o.vmlinux = kc;
	ki = choose(&o, &k);
	assert_int_equal(ki.vmlinux_err, -EINVAL);
	pk_kcode_free(k);
}

int main(void)
{
	tmp = pk_test_mkdtemp("pk-kcore");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_choice),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	pk_test_rmtree(tmp);
	free(tmp);
	return r;
}
