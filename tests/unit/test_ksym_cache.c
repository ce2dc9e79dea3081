/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/ksym-cache.c: the on-disk cache of the parsed kallsyms table. A table is
 * written and read back; the key changes with each of its sources (boot id, modules,
 * the first page of kallsyms); corrupt, truncated, foreign-owned or world-writable
 * files are refused; and through a machine on the real /proc/kallsyms the cache is
 * written, reused, and ignored (then rewritten) when corrupt, with the same symbols.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"
#include "internal.h"
#include "symbol/symbol-internal.h"
#include "symbol/dso-internal.h"

#define PK_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* header layout (ksym-cache.c): key at 16, nr at 80, crc at 108, records from 128 */
#define HDR_KEY 16
#define HDR_NR 80
#define HDR_CRC 108
#define HDR_SIZE 128
#define REC_SIZE 32

static char *tmp;
static char src_ks[PATH_MAX], src_boot[PATH_MAX], src_mod[PATH_MAX], cache[PATH_MAX];

static void sources(const char *ks, const char *boot, const char *mod)
{
	pk_test_write_file(tmp, "kallsyms", ks);
	pk_test_write_file(tmp, "boot_id", boot);
	if (mod)
		pk_test_write_file(tmp, "modules", mod);
	else
		unlink(src_mod);
}

static void key_of(uint8_t key[PK_KSYM_KEY_LEN])
{
	const struct pk_ksym_cache_src src = { src_ks, src_boot, src_mod, false };
	assert_int_equal(pk_ksym_cache_key(&src, key), 0);
}

/* a small finished table: names in one block */
static const char names[] = "_text\0do_one\0do_two\0mod_fn";
static const struct pk_sym table[] = {
	{ 0xffffffff81000000ULL, 0xffffffff81001000ULL, names + 0, 1, false, 0 },
	{ 0xffffffff81001000ULL, 0xffffffff81001100ULL, names + 6, 1, false, 2 },
	{ 0xffffffff81001100ULL, 0xffffffff81003000ULL, names + 13, 1, false, 3 },
	{ 0xffffffffc0001000ULL, 0xffffffffc0002000ULL, names + 20, 1, false, 5 },
};

static int load(const uint8_t *key, struct pk_sym **v, size_t *nr, uint64_t *text)
{
	struct pk_arena a = { 0 };
	int err = pk_ksym_cache_load(cache, key, &a, v, nr, text);
	if (!err) {
		/* names copied into the arena: compare before releasing it */
		assert_int_equal(*nr, PK_ARRAY_SIZE(table));
		for (size_t i = 0; i < *nr; i++) {
			assert_true((*v)[i].start == table[i].start);
			assert_true((*v)[i].end == table[i].end);
			assert_string_equal((*v)[i].name, table[i].name);
			assert_int_equal((*v)[i].seq, table[i].seq);
			assert_int_equal((*v)[i].bind, table[i].bind);
		}
		free(*v);
	}
	pk_arena_release(&a);
	/* read through the descriptor: the same checks, the same answers */
	struct pk_ksym_view kv;
	assert_int_equal(pk_ksym_cache_open(cache, key, &kv), err);
	if (!err) {
		assert_true(kv.by_fd && kv.nr == PK_ARRAY_SIZE(table));
		for (size_t i = 0; i < kv.nr; i++) {
			struct pk_sym s;
			assert_true(pk_ksym_view_get(&kv, i, &s));
			assert_true(s.start == table[i].start && s.end == table[i].end);
			assert_string_equal(s.name, table[i].name);
			assert_int_equal(s.seq, table[i].seq);
		}
		pk_ksym_view_release(&kv);
	}
	return err;
}

static size_t slurp(uint8_t **buf)
{
	FILE *f = fopen(cache, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	*buf = malloc((size_t)n);
	assert_int_equal(fread(*buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return (size_t)n;
}

static void spill(const uint8_t *buf, size_t n, bool fix_crc)
{
	uint8_t *b = malloc(n);
	memcpy(b, buf, n);
	if (fix_crc && n >= HDR_SIZE) {
		/* a forged file with a consistent CRC: only the structural checks stop it */
		memset(b + HDR_CRC, 0, 4);
		uint32_t c = pk_crc32c(0, b, n);
		memcpy(b + HDR_CRC, &c, 4);
	}
	unlink(cache);
	FILE *f = fopen(cache, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
	chmod(cache, 0600);
	free(b);
}

static void test_roundtrip_and_key(void **state)
{
	(void)state;
	uint8_t key[PK_KSYM_KEY_LEN], k2[PK_KSYM_KEY_LEN];
	struct pk_sym *v;
	size_t nr;
	uint64_t text = 0;

	sources("ffffffff81000000 T _text\n", "0b5a1c3e-0000-4000-8000-000000000001\n",
		"ext4 1000 0 - Live 0xffffffffc0000000\n");
	key_of(key);
	/* nothing there yet */
	assert_int_equal(load(key, &v, &nr, &text), -ENOENT);
	assert_int_equal(pk_ksym_cache_store(cache, key, table, PK_ARRAY_SIZE(table), names,
					     sizeof(names), 0xffffffff81000000ULL),
			 0);
	struct stat st;
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* reused */
	assert_int_equal(load(key, &v, &nr, &text), 0);
	assert_true(text == 0xffffffff81000000ULL);
	key_of(k2);
	assert_memory_equal(key, k2, sizeof(key));

	/* each source changes the key: a module loaded, a reboot, addresses hidden */
	sources("ffffffff81000000 T _text\n", "0b5a1c3e-0000-4000-8000-000000000001\n",
		"ext4 1000 0 - Live 0xffffffffc0000000\nxfs 2000 0 - Live 0xffffffffc0100000\n");
	key_of(k2);
	assert_memory_not_equal(key, k2, sizeof(key));
	assert_int_equal(load(k2, &v, &nr, &text), -ESTALE);
	sources("ffffffff81000000 T _text\n", "0b5a1c3e-0000-4000-8000-000000000002\n",
		"ext4 1000 0 - Live 0xffffffffc0000000\n");
	key_of(k2);
	assert_memory_not_equal(key, k2, sizeof(key));
	assert_int_equal(load(k2, &v, &nr, &text), -ESTALE);
	sources("0000000000000000 T _text\n", "0b5a1c3e-0000-4000-8000-000000000001\n",
		"ext4 1000 0 - Live 0xffffffffc0000000\n");
	key_of(k2);
	assert_memory_not_equal(key, k2, sizeof(key));
	/* no /proc/modules (a kernel without modules) is a key of its own, not an error */
	sources("ffffffff81000000 T _text\n", "0b5a1c3e-0000-4000-8000-000000000001\n", NULL);
	key_of(k2);
	assert_memory_not_equal(key, k2, sizeof(key));
	/* back to the first sources: the first key again, and the cache is good */
	sources("ffffffff81000000 T _text\n", "0b5a1c3e-0000-4000-8000-000000000001\n",
		"ext4 1000 0 - Live 0xffffffffc0000000\n");
	key_of(k2);
	assert_memory_equal(key, k2, sizeof(key));
	assert_int_equal(load(key, &v, &nr, &text), 0);
	/* unreadable sources: no key */
	const struct pk_ksym_cache_src bad = { src_ks, "/nonexistent/boot_id", src_mod, false };
	assert_true(pk_ksym_cache_key(&bad, k2) < 0);

	/* a table whose names are not in the block is refused by the writer */
	struct pk_sym odd = table[0];
	odd.name = "elsewhere";
	assert_int_equal(pk_ksym_cache_store(cache, key, &odd, 1, names, sizeof(names), 0),
			 -EINVAL);
	assert_int_equal(load(key, &v, &nr, &text), 0);
}

static void test_corrupt(void **state)
{
	(void)state;
	uint8_t key[PK_KSYM_KEY_LEN];
	struct pk_sym *v;
	size_t nr;
	uint64_t text;
	uint8_t *good;

	sources("ffffffff81000000 T _text\n", "0b5a1c3e-0000-4000-8000-00000000000a\n", "");
	key_of(key);
	assert_int_equal(pk_ksym_cache_store(cache, key, table, PK_ARRAY_SIZE(table), names,
					     sizeof(names), 0),
			 0);
	size_t n = slurp(&good);
	assert_int_equal(n, HDR_SIZE + PK_ARRAY_SIZE(table) * REC_SIZE + sizeof(names));
	uint8_t *b = malloc(n);

	/* any flipped bit: the CRC */
	for (size_t off = 0; off < n; off += 7) {
		memcpy(b, good, n);
		b[off] ^= 0x10;
		spill(b, n, false);
		int err = load(key, &v, &nr, &text);
		assert_true(err == -EINVAL || err == -ESTALE);
	}
	/* truncated */
	spill(good, n - 1, false);
	assert_int_equal(load(key, &v, &nr, &text), -EINVAL);
	spill(good, HDR_SIZE, false);
	assert_int_equal(load(key, &v, &nr, &text), -EINVAL);
	spill(good, 10, false);
	assert_true(load(key, &v, &nr, &text) < 0);
	memcpy(b, good, n);
	spill(b, n, false);
	assert_int_equal(load(key, &v, &nr, &text), 0);

	/* forged with a consistent CRC: a name offset out of the block */
	memcpy(b, good, n);
	uint64_t off = sizeof(names);
	memcpy(b + HDR_SIZE + 2 * REC_SIZE + 16, &off, 8);
	spill(b, n, true);
	assert_int_equal(load(key, &v, &nr, &text), -EINVAL);
	/* unsorted records */
	memcpy(b, good, n);
	memcpy(b + HDR_SIZE, good + HDR_SIZE + REC_SIZE, REC_SIZE);
	memcpy(b + HDR_SIZE + REC_SIZE, good + HDR_SIZE, REC_SIZE);
	spill(b, n, true);
	assert_int_equal(load(key, &v, &nr, &text), -EINVAL);
	/* an empty range */
	memcpy(b, good, n);
	memcpy(b + HDR_SIZE + 8, b + HDR_SIZE, 8);
	spill(b, n, true);
	assert_int_equal(load(key, &v, &nr, &text), -EINVAL);
	/* names not NUL-terminated at the end of the block */
	memcpy(b, good, n);
	b[n - 1] = 'x';
	spill(b, n, true);
	assert_int_equal(load(key, &v, &nr, &text), -EINVAL);
	/* a record count that does not match the size (huge, then one more) */
	memcpy(b, good, n);
	uint64_t huge = UINT64_MAX / 16;
	memcpy(b + HDR_NR, &huge, 8);
	spill(b, n, true);
	assert_int_equal(load(key, &v, &nr, &text), -EINVAL);
	memcpy(b, good, n);
	uint64_t more = PK_ARRAY_SIZE(table) + 1;
	memcpy(b + HDR_NR, &more, 8);
	spill(b, n, true);
	assert_int_equal(load(key, &v, &nr, &text), -EINVAL);
	/* a consistent forgery of another key is stale */
	memcpy(b, good, n);
	b[HDR_KEY] ^= 1;
	spill(b, n, true);
	assert_int_equal(load(key, &v, &nr, &text), -ESTALE);

	/* writable by others, or not a regular file: not trusted */
	spill(good, n, false);
	assert_int_equal(load(key, &v, &nr, &text), 0);
	chmod(cache, 0622);
	assert_int_equal(load(key, &v, &nr, &text), -EPERM);
	unlink(cache);
	assert_int_equal(mkdir(cache, 0700), 0);
	assert_true(load(key, &v, &nr, &text) < 0);
	rmdir(cache);
	free(b);
	free(good);
}

static const char *resolve(struct pk_machine *m, uint64_t a)
{
	struct pk_addr_loc loc;
	if (pk_machine__resolve(m, 0, 0, a, PK_CPUMODE_KERNEL, &loc))
		return NULL;
	return loc.sym;
}

/* The machine on the real /proc/kallsyms: cold (written), warm (reused), corrupt. */
static void test_machine_uses_cache(void **state)
{
	(void)state;
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		PK_SKIP("no /proc/kallsyms");
	char line[512];
	unsigned long long addr[3] = { 0 };
	const char *want[3] = { "schedule", "do_sys_openat2", "vfs_read" };
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		unsigned long long v;
		if (sscanf(line, "%llx %c %255s", &v, &type, name) != 3)
			continue;
		for (int i = 0; i < 3; i++)
			if (!strcmp(name, want[i]) && !addr[i])
				addr[i] = v;
	}
	fclose(f);
	if (!addr[0])
		PK_SKIP("kallsyms hides addresses (not root or kptr_restrict)");
	char xdg[PATH_MAX], cdir[PATH_MAX + 16], file[PATH_MAX + 32];
	snprintf(xdg, sizeof(xdg), "%s/xdg", tmp);
	snprintf(cdir, sizeof(cdir), "%s/perfkit", xdg);
	snprintf(file, sizeof(file), "%s/kallsyms-v3", cdir);
	char path[PATH_MAX];
	assert_int_equal(pk_ksym_cache_path(cdir, path, sizeof(path), false), 0);
	assert_string_equal(path, file);
	assert_int_equal(pk_ksym_cache_path(NULL, path, sizeof(path), false), -ENOENT);

	/* no cache directory given: nothing written, whatever the environment says (the
	 * tool's variables name this very directory) */
	setenv("XDG_CACHE_HOME", xdg, 1);
	unsetenv("PK_NO_CACHE");
	PK_OPTS(pk_machine_opts, o0, .host = true);
	struct pk_machine *m = pk_machine__new(&o0);
	assert_string_equal(resolve(m, addr[0] + 1), "schedule");
	pk_machine__free(m);
	struct stat st;
	assert_int_equal(stat(file, &st), -1);
	unsetenv("XDG_CACHE_HOME");

	/* and with one, the tool's PK_NO_CACHE=1 does not stop the library */
	setenv("PK_NO_CACHE", "1", 1);
	PK_OPTS(pk_machine_opts, o, .host = true, .cache_dir = cdir);
	for (int round = 0; round < 3; round++) {
		m = pk_machine__new(&o);
		for (int i = 0; i < 3; i++)
			if (addr[i])
				assert_string_equal(resolve(m, addr[i] + 1), want[i]);
		/* by name too (round 1 reads the cache in place) */
		struct pk_addr_loc loc;
		uint64_t a = 0;
		assert_int_equal(pk_machine__resolve(m, 0, 0, addr[0], PK_CPUMODE_KERNEL, &loc), 0);
		assert_non_null(loc.dso);
		assert_int_equal(pk_dso__symbol_addr(loc.dso, "schedule", &a), 0);
		assert_int_equal(a, addr[0]);
		assert_true(pk_dso__load(loc.dso) > 1000);
		pk_machine__free(m);
		assert_int_equal(stat(file, &st), 0);
		if (round != 1)   /* written (round 0) or rewritten after the corruption (2) */
			assert_int_equal(st.st_mode & 0777, 0600);
		if (round == 0) {
			/* mark the file: a reuse leaves it alone */
			assert_int_equal(chmod(file, 0400), 0);
		} else if (round == 1) {
			/* reused, not rewritten (a rewrite would be 0600 again); now corrupt
			 * it (a CRC-breaking byte in the names) */
			assert_int_equal(st.st_mode & 0777, 0400);
			chmod(file, 0600);
			FILE *c = fopen(file, "r+b");
			assert_non_null(c);
			fseek(c, -2, SEEK_END);
			fputc('#', c);
			fclose(c);
		}
	}
	/* a long-lived machine (close_files) reads the cache through its descriptor: the
	 * same answers, by address and by name */
	PK_OPTS(pk_machine_opts, oc, .host = true, .cache_dir = cdir, .close_files = true);
	m = pk_machine__new(&oc);
	for (int i = 0; i < 3; i++)
		if (addr[i])
			assert_string_equal(resolve(m, addr[i] + 1), want[i]);
	assert_true(m->kview.by_fd && !m->kview.map);
	struct pk_addr_loc loc;
	uint64_t a = 0;
	assert_int_equal(pk_machine__resolve(m, 0, 0, addr[1], PK_CPUMODE_KERNEL, &loc), 0);
	assert_int_equal(pk_dso__symbol_addr(loc.dso, "schedule", &a), 0);
	assert_int_equal(a, addr[0]);
	assert_int_equal(pk_dso__symbol_addr(loc.dso, "no such symbol here", &a), -ENOENT);
	pk_machine__free(m);
	/* the cache checked and opened ahead on the preload thread (pk_machine_preload_dso
	 * of the kernel's object), mapped or by descriptor: once, the same answers; asked
	 * for and never used: released with the machine */
	for (int run = 0; run < 3; run++) {
		m = pk_machine__new(run == 1 ? &oc : &o);
		struct pk_dso *kd = pk_dso_findnew(m, "[kernel.kallsyms]");
		assert_non_null(kd);
		assert_true(pk_machine_preload_dso(m, kd));
		assert_false(pk_machine_preload_dso(m, kd));
		if (run == 2) {
			pk_machine__free(m);
			continue;
		}
		/* done ahead (at most 10 s), not yet taken */
		for (int i = 0; i < 10000 && pk_preload_kcache_state(m) != PK_PRE_DONE; i++)
			usleep(1000);
		assert_int_equal(pk_preload_kcache_state(m), PK_PRE_DONE);
		assert_null(m->kview.map);
		assert_false(m->kview.by_fd);
		for (int i = 0; i < 3; i++)
			if (addr[i])
				assert_string_equal(resolve(m, addr[i] + 1), want[i]);
		if (run == 1)
			assert_true(m->kview.by_fd && !m->kview.map);
		else
			assert_non_null(m->kview.map);
		assert_false(pk_machine_preload_dso(m, kd)); /* read: not again */
		pk_machine__free(m);
	}
	unsetenv("PK_NO_CACHE");
}

/* A cache mapped, or read through its descriptor, is looked up through its block index
 * (every PK_KSYM_IDX_STRIDE-th start): the answers are those of a plain search over the
 * records, for addresses before the first symbol, in gaps, at block boundaries, in the
 * last (partial) block and past the end; and a name is found as a scan of the records
 * finds it, the first of equal ones, also past (and across) a 64 KiB block of names. */
static void test_mapped_index(void **state)
{
	(void)state;
	enum { N = 12000, W = 7 };
	static struct pk_sym big[N];
	static char bnames[N * W];
	uint64_t a = 0xffffffff81000000ULL;
	for (size_t i = 0; i < N; i++) {
		/* (two symbols share each name of the form d%zu) */
		if (i % 1000 == 7 || i % 1000 == 9)
			snprintf(bnames + i * W, W, "d%zu", i / 1000);
		else
			snprintf(bnames + i * W, W, "f%zu", i);
		/* sizes 16..79, a gap of 32 after every third */
		uint64_t size = 16 + (i * 7) % 64;
		big[i] = (struct pk_sym){ a, a + size, bnames + i * W, 1, false, (uint32_t)i };
		a += size + (i % 3 == 2 ? 32 : 0);
	}
	/* a name that is the tail of another's string ("2999" of "f2999", as a linker
	 * shares string tails) */
	big[3000].name = bnames + 2999 * W + 1;
	uint8_t key[PK_KSYM_KEY_LEN];
	sources("ffffffff81000000 T _text\n", "0b5a1c3e-0000-4000-8000-000000000002\n", NULL);
	key_of(key);
	unlink(cache);
	assert_int_equal(pk_ksym_cache_store(cache, key, big, N, bnames, sizeof(bnames),
					     big[0].start), 0);
	for (int by_fd = 0; by_fd < 2; by_fd++) {
		struct pk_ksym_view kv;
		assert_int_equal((by_fd ? pk_ksym_cache_open : pk_ksym_cache_map)(cache, key, &kv), 0);
		assert_non_null(kv.idx);
		assert_int_equal(kv.nr, N);
		assert_int_equal(kv.by_fd, by_fd);
		size_t checked = 0, lo = 0;
		for (uint64_t x = big[0].start - 40; x < a + 40; x += by_fd ? 13 : 3) {
			const struct pk_sym *want = NULL;
			while (lo < N && big[lo].end <= x)
				lo++;
			if (lo < N && big[lo].start <= x)
				want = &big[lo];
			struct pk_sym got;
			bool found = pk_ksym_view_find(&kv, x, &got);
			assert_int_equal(found, want != NULL);
			if (want) {
				assert_true(got.start == want->start && got.end == want->end);
				assert_string_equal(got.name, want->name);
			}
			checked++;
		}
		assert_true(checked > N);
		static const size_t probe[] = { 0, 1, 127, 128, 9361, 9362, 9363, 11999, 5007 };
		for (size_t k = 0; k < PK_ARRAY_SIZE(probe); k++) {
			uint64_t st = 0;
			assert_int_equal(pk_ksym_view_find_name(&kv, big[probe[k]].name, &st), 0);
			/* the first symbol of that name */
			size_t first = probe[k];
			for (size_t i = 0; i < N; i++)
				if (!strcmp(big[i].name, big[probe[k]].name)) {
					first = i;
					break;
				}
			assert_true(st == big[first].start);
		}
		uint64_t st;
		assert_int_equal(pk_ksym_view_find_name(&kv, "nope", &st), -ENOENT);
		assert_int_equal(pk_ksym_view_find_name(&kv, "2999", &st), 0);
		assert_true(st == big[3000].start);
		assert_int_equal(pk_ksym_view_find_name(&kv, "f1200", &st), 0);
		assert_true(st == big[1200].start);
		pk_ksym_view_release(&kv);
		assert_null(kv.idx);
	}
}

static int setup(void **state)
{
	(void)state;
	tmp = pk_test_mkdtemp("ksymcache");
	snprintf(src_ks, sizeof(src_ks), "%s/kallsyms", tmp);
	snprintf(src_boot, sizeof(src_boot), "%s/boot_id", tmp);
	snprintf(src_mod, sizeof(src_mod), "%s/modules", tmp);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pk_test_rmtree(tmp);
	free(tmp);
	return 0;
}

/* the cache's check value: CRC-32C, the same on the SSE4.2 path and the portable one */
static void test_crc32c(void **state)
{
	(void)state;
	assert_int_equal(pk_crc32c(0, "123456789", 9), 0xE3069283u); /* the standard check */
	assert_int_equal(pk_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(pk_crc32c(0, "", 0), 0);
	static uint8_t buf[4096 + 16];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len < 200; len += 7) {
			assert_int_equal(pk_crc32c(0, buf + off, len), pk_crc32c_sw(0, buf + off, len));
			/* streaming: in two pieces = in one */
			uint32_t a = pk_crc32c(pk_crc32c(0, buf + off, len / 3), buf + off + len / 3,
					       len - len / 3);
			assert_int_equal(a, pk_crc32c(0, buf + off, len));
		}
	assert_int_equal(pk_crc32c(0, buf, sizeof(buf)), pk_crc32c_sw(0, buf, sizeof(buf)));
	/* joined: crc(A.B) from crc(A), crc(B), |B| */
	for (size_t la = 0; la < 300; la += 37)
		for (size_t lb = 0; lb < 3000; lb += 211)
			assert_int_equal(pk_crc32c_join(pk_crc32c_sw(0, buf, la),
							pk_crc32c_sw(0, buf + la, lb), lb),
					 pk_crc32c_sw(0, buf, la + lb));
	/* long buffers (the SSE4.2 path runs three parts at once and joins them), around
	 * the length where that starts, at every alignment, streamed in two pieces too */
	size_t big = 1u << 20;
	uint8_t *lb = malloc(big + 16);
	assert_non_null(lb);
	for (size_t i = 0; i < big + 16; i++) {
		x = x * 1103515245u + 12345u;
		lb[i] = (uint8_t)(x >> 16);
	}
	static const size_t lens[] = { 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 1, 3 * 8192 + 23,
				       100003, 1u << 20 };
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
		for (size_t off = 0; off < 9; off += 3) {
			uint32_t want = pk_crc32c_sw(0, lb + off, lens[k]);
			assert_int_equal(pk_crc32c(0, lb + off, lens[k]), want);
			assert_int_equal(pk_crc32c(pk_crc32c(0, lb + off, 5), lb + off + 5,
						   lens[k] - 5), want);
		}
	free(lb);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_roundtrip_and_key),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_machine_uses_cache),
		cmocka_unit_test(test_mapped_index),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
