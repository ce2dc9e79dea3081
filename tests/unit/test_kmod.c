/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/kmod.c: the code of kernel modules for annotate. Synthetic relocatable
 * objects written here stand for a .ko: .text and the build-id note are found through
 * the section headers (an extended count too); hostile headers (wrong class or type,
 * counts and offsets past the end, a .text past the end, names out of range, notes
 * with huge sizes) are refused or ignored; gzip data is inflated within a bound; the
 * choice follows perf's order (build-id cache, the recorded path, then /lib/modules/R)
 * with the build-id checked, each failure with its own error; the code is read at the
 * recorded address minus the load address; kcore only in the boot that recorded.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <perfkit/perfkit.h>
#include "testutil.h"
#include "internal.h"
#include "annotate/kmod.h"

#define LOAD 0xffffffffc0a00000ULL

static char *tmp;
static const uint8_t BID[20] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa,
				 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x12, 0x34, 0x56, 0x78 };

/*
 * A relocatable object: sections null, .text (64 bytes i*3), .note.gnu.build-id, .shstrtab;
 * *len its size. xnum: the count through section 0.
 */
static uint8_t *mk_ko(size_t *len, const uint8_t *bid, bool xnum)
{
	static const char names[] = "\0.text\0.note.gnu.build-id\0.shstrtab";
	size_t text_off = 64, note_off = 128, str_off = 128 + 36, sh_off = 256;
	size_t n = sh_off + 4 * sizeof(Elf64_Shdr);
	uint8_t *b = calloc(1, n);
	assert_non_null(b);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_shoff = sh_off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = xnum ? 0 : 4;
	eh->e_shstrndx = xnum ? SHN_XINDEX : 3;
	for (int i = 0; i < 64; i++)
		b[text_off + i] = (uint8_t)(i * 3);
	uint32_t nh[3] = { 4, 20, NT_GNU_BUILD_ID };
	memcpy(b + note_off, nh, 12);
	memcpy(b + note_off + 12, "GNU", 4);
	memcpy(b + note_off + 16, bid, 20);
	memcpy(b + str_off, names, sizeof(names));
	Elf64_Shdr *sh = (Elf64_Shdr *)(b + sh_off);
	if (xnum) {
		sh[0].sh_size = 4;
		sh[0].sh_link = 3;
	}
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = text_off,
			      .sh_size = 64, .sh_flags = SHF_ALLOC | SHF_EXECINSTR };
	sh[2] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_NOTE, .sh_offset = note_off,
			      .sh_size = 36 };
	sh[3] = (Elf64_Shdr){ .sh_name = 26, .sh_type = SHT_STRTAB, .sh_offset = str_off,
			      .sh_size = sizeof(names) };
	*len = n;
	return b;
}

static Elf64_Shdr *shdr(uint8_t *b, int i)
{
	return (Elf64_Shdr *)(b + 256) + i;
}

static void put(const char *rel, const void *p, size_t n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	pk_test_sh("mkdir -p '%s'", path);
	*slash = '/';
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

static void test_parse(void **state)
{
	(void)state;
	for (int x = 0; x < 2; x++) {
		size_t n;
		uint8_t *b = mk_ko(&n, BID, x);
		struct pk_kmod_elf e;
		assert_int_equal(pk_kmod_elf_parse_mem(b, n, &e), 0);
		assert_int_equal(e.machine, EM_X86_64);
		assert_int_equal(e.text_off, 64);
		assert_int_equal(e.text_size, 64);
		assert_int_equal(e.text_addr, 0);
		assert_int_equal(e.bid_len, 20);
		assert_memory_equal(e.bid, BID, 20);
		free(b);
	}
}

static void test_parse_hostile(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = mk_ko(&n, BID, false);
	uint8_t *c = malloc(n);
	struct pk_kmod_elf e;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)c;
	/* each corruption on a fresh copy */
#define FRESH() memcpy(c, b, n)
	FRESH();
	assert_int_equal(pk_kmod_elf_parse_mem(c, 40, &e), -EINVAL);    /* short */
	FRESH();
	eh->e_type = ET_EXEC;
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -EINVAL);
	FRESH();
	eh->e_ident[EI_CLASS] = ELFCLASS32;
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -EINVAL);
	FRESH();
	eh->e_shentsize = 40;
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -EINVAL);
	FRESH();
	eh->e_shnum = 60000; /* past the end */
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -EINVAL);
	FRESH();
	eh->e_shoff = UINT64_MAX - 8;
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -EINVAL);
	FRESH();
	eh->e_shstrndx = 9;
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -EINVAL);
	FRESH();
	eh->e_shnum = 0; /* extended count, but section 0 says 0 */
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -EINVAL);
	FRESH();
	shdr(c, 3)->sh_size = UINT64_MAX; /* the names past the end */
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -EINVAL);
	FRESH();
	shdr(c, 1)->sh_offset = n - 8; /* .text past the end: no code */
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -ENODATA);
	FRESH();
	shdr(c, 1)->sh_name = 5000; /* a name out of range: not .text */
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), -ENODATA);
	FRESH();
	uint32_t huge = 0xfffffff0u; /* a note whose sizes run past its section */
	memcpy(c + 128 + 4, &huge, 4);
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), 0);
	assert_int_equal(e.bid_len, 0);
	FRESH();
	shdr(c, 2)->sh_size = UINT64_MAX - 100;
	assert_int_equal(pk_kmod_elf_parse_mem(c, n, &e), 0);
	assert_int_equal(e.bid_len, 0);
#undef FRESH
	free(c);
	free(b);
}

static void gz(const void *in, size_t n, uint8_t **out, size_t *out_len)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
			 Z_OK);
	size_t cap = deflateBound(&z, (uLong)n) + 64;
	*out = malloc(cap);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = cap - z.avail_out;
	deflateEnd(&z);
}

static void test_gunzip(void **state)
{
	(void)state;
	size_t n = 300000;
	uint8_t *big = malloc(n);
	for (size_t i = 0; i < n; i++)
		big[i] = (uint8_t)(i * 7 / 5);
	uint8_t *z, *out;
	size_t zl, ol;
	gz(big, n, &z, &zl);
	assert_int_equal(pk_kmod_compression(z, zl), 'g');
	assert_int_equal(pk_kmod_gunzip(z, zl, n, &out, &ol), 0);
	assert_int_equal(ol, n);
	assert_memory_equal(out, big, n);
	free(out);
	assert_int_equal(pk_kmod_gunzip(z, zl, n - 1, &out, &ol), -EFBIG);
	assert_null(out);
	z[zl / 2] ^= 0x55; /* corrupt */
	int r = pk_kmod_gunzip(z, zl, n, &out, &ol);
	assert_true(r == -EINVAL || (r == 0 && ol <= n));
	free(out);
	assert_int_equal(pk_kmod_gunzip(z, 5, n, &out, &ol) != 0, 1); /* truncated */
	assert_int_equal(pk_kmod_gunzip("plain", 5, n, &out, &ol), -EINVAL);
	assert_int_equal(pk_kmod_compression("\xfd" "7zXZ\0", 6), 'x');
	assert_int_equal(pk_kmod_compression("\x28\xb5\x2f\xfd", 4), 'z');
	assert_int_equal(pk_kmod_compression(ELFMAG, 4), 0);
	free(z);
	free(big);
}

static struct pk_annotate_kmod choose(const struct pk_kmod_opts *o, struct pk_kmod **k)
{
	assert_int_equal(pk_kmod_open(o, k), 0);
	struct pk_annotate_kmod ki = { .sz = sizeof(ki) };
	pk_kmod_info(*k, &ki);
	return ki;
}

static void test_choose(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = mk_ko(&n, BID, false);
	put("rec/x.ko", b, n);
	char rec[PATH_MAX], mods[PATH_MAX], cache[PATH_MAX];
	snprintf(rec, sizeof(rec), "%s/rec/x.ko", tmp);
	snprintf(mods, sizeof(mods), "%s/mods", tmp);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	struct pk_kmod_opts o = { .name = "[x]", .path = rec, .release = "9.9", .modules_dir = mods,
				  .buildid_dirs = { cache }, .want_bid = BID, .want_bid_len = 20,
				  .map_start = LOAD, .have_map = true };
	struct pk_kmod *k;
	/* at the recorded path: read at the recorded address less the load address */
	struct pk_annotate_kmod ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_MODULE);
	assert_string_equal(ki.path, rec);
	assert_true(ki.bias == LOAD);
	assert_true(pk_kmod_text_end(k) == LOAD + 64);
	uint8_t buf[16];
	uint16_t em;
	assert_int_equal(pk_kmod_read(k, LOAD + 10, buf, 16, &em), 16);
	assert_int_equal(em, EM_X86_64);
	assert_int_equal(buf[0], 30);
	assert_int_equal(pk_kmod_read(k, LOAD + 60, buf, 16, &em), 4); /* short at .text's end */
	assert_int_equal(pk_kmod_read(k, LOAD + 64, buf, 16, &em), -ENODATA);
	assert_int_equal(pk_kmod_read(k, LOAD - 1, buf, 16, &em), -ENODATA);
	pk_kmod_free(k);
	/* another build-id: said, with the file's */
	uint8_t other[20] = { 1 };
	o.want_bid = other;
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	assert_int_equal(ki.ko_err, -ESTALE);
	assert_string_equal(ki.ko_path, rec);
	assert_int_equal(ki.ko_bid_len, 20);
	assert_memory_equal(ki.ko_bid, BID, 20);
	pk_kmod_free(k);
	o.want_bid = BID;
	/* the build-id cache first */
	put("cache/.build-id/11/2233445566778899aabbccddeeff0012345678/elf", b, n);
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_MODULE);
	assert_non_null(strstr(ki.path, "/cache/.build-id/11/"));
	pk_kmod_free(k);
	pk_test_sh("rm -r '%s/cache' '%s/rec'", tmp, tmp);
	/* none: -ENOENT; kcore not tried unless the kernel's code is kcore's */
	o.kcore_err = -EACCES;
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	assert_int_equal(ki.ko_err, -ENOENT);
	assert_int_equal(ki.kcore_err, -EACCES);
	pk_kmod_free(k);
	/* under /lib/modules/R, by name (a dash in the file's is an underscore) */
	o.name = "[x_y]";
	put("mods/9.9/kernel/drivers/x-y.ko", b, n);
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_MODULE);
	assert_non_null(strstr(ki.path, "/mods/9.9/kernel/drivers/x-y.ko"));
	pk_kmod_free(k);
	/* gzip-compressed */
	uint8_t *z;
	size_t zl;
	gz(b, n, &z, &zl);
	pk_test_sh("rm '%s/mods/9.9/kernel/drivers/x-y.ko'", tmp);
	put("mods/9.9/kernel/drivers/x_y.ko.gz", z, zl);
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_MODULE);
	assert_int_equal(pk_kmod_read(k, LOAD + 10, buf, 16, &em), 16);
	assert_int_equal(buf[0], 30);
	pk_kmod_free(k);
	free(z);
	/* xz: said */
	pk_test_sh("rm '%s/mods/9.9/kernel/drivers/x_y.ko.gz'", tmp);
	put("mods/9.9/kernel/x_y.ko.xz", "\xfd" "7zXZ\0....", 10);
	ki = choose(&o, &k);
	assert_int_equal(ki.ko_err, -EOPNOTSUPP);
	assert_int_equal(ki.ko_comp, 'x');
	pk_kmod_free(k);
	/* not ELF */
	pk_test_sh("rm '%s/mods/9.9/kernel/x_y.ko.xz'", tmp);
	const char *text = "text, not an object, long enough to hold an ELF header.........";
	put("mods/9.9/x_y.ko", text, strlen(text));
	ki = choose(&o, &k);
	assert_int_equal(ki.ko_err, -EINVAL);
	pk_kmod_free(k);
	free(b);
}

static void test_kcore(void **state)
{
	(void)state;
	const char *pmods = "ext4 1 0 - Live 0xffffffffc0100000\n"
			    "x 16384 0 - Live 0xffffffffc0a00000 (O)\n";
	put("modules", pmods, strlen(pmods));
	char pm[PATH_MAX];
	snprintf(pm, sizeof(pm), "%s/modules", tmp);
	struct pk_kmod_opts o = { .name = "[x]", .map_start = LOAD, .have_map = true,
				  .kcore_ok = true, .proc_modules = pm, .modules_dir = "/nonexistent" };
	struct pk_kmod *k;
	struct pk_annotate_kmod ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_KCORE);
	assert_int_equal(ki.bias, 0);
	uint8_t buf[4];
	assert_int_equal(pk_kmod_read(k, LOAD, buf, 4, NULL), -ENOENT); /* kcore: the caller's */
	pk_kmod_free(k);
	o.map_start = LOAD + 0x1000; /* loaded elsewhere now: another boot */
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	assert_int_equal(ki.kcore_err, -ESTALE);
	pk_kmod_free(k);
	o.map_start = LOAD;
	o.have_map = false; /* no recorded map: nothing read, even in this boot */
	ki = choose(&o, &k);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	assert_int_equal(ki.ko_err, -ENOENT);
	pk_kmod_free(k);
}

int main(void)
{
	pk_test_quiet_log();
	tmp = pk_test_mkdtemp("pk-kmod");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_gunzip),
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_kcore),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	pk_test_rmtree(tmp);
	free(tmp);
	return rc;
}
