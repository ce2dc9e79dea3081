/* SPDX-License-Identifier: MIT */
/* Unit tests: synthesis of pre-existing state (lib/data/synth.c) and its parsers. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include <perfkit/perfkit.h>
#include "../../lib/data/synth-internal.h"

/* ---- parsers ---- */

static void test_maps_line(void **state)
{
	(void)state;
	struct pk_maps_entry e;
	char l1[] = "55d0c3a4e000-55d0c3a50000 r-xp 00002000 fe:01 5308560    /usr/bin/my prog\n";
	assert_int_equal(pk_maps__parse_line(l1, &e), 0);
	assert_true(e.start == 0x55d0c3a4e000ULL && e.end == 0x55d0c3a50000ULL);
	assert_true(e.pgoff == 0x2000 && e.maj == 0xfe && e.min == 1 && e.ino == 5308560);
	assert_int_equal(e.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(e.flags, MAP_PRIVATE);
	assert_string_equal(e.path, "/usr/bin/my prog");

	char l2[] = "7f00aa000000-7f00aa021000 rw-s 00000000 00:00 0 \n";
	assert_int_equal(pk_maps__parse_line(l2, &e), 0);
	assert_int_equal(e.prot, PROT_READ | PROT_WRITE);
	assert_int_equal(e.flags, MAP_SHARED);
	assert_string_equal(e.path, "");

	char bad1[] = "7f00aa021000-7f00aa000000 r-xp 00000000 00:00 0 x"; /* end < start */
	char bad2[] = "7f00aa000000-7f00aa021000 rzxp 00000000 00:00 0";
	char bad3[] = "7f00aa000000 r-xp 00000000 00:00 0";
	char bad4[] = "7f00aa000000-7f00aa021000 r-xp 00000000 00:00";
	char bad5[] = "11111111111111111-2 r-xp 0 0:0 0";                /* > 64 bits */
	assert_int_equal(pk_maps__parse_line(bad1, &e), -PK_ERR_PARSE);
	assert_int_equal(pk_maps__parse_line(bad2, &e), -PK_ERR_PARSE);
	assert_int_equal(pk_maps__parse_line(bad3, &e), -PK_ERR_PARSE);
	assert_int_equal(pk_maps__parse_line(bad4, &e), -PK_ERR_PARSE);
	assert_int_equal(pk_maps__parse_line(bad5, &e), -PK_ERR_PARSE);
}

static size_t put_note(uint8_t *p, const char *name, uint32_t type, const uint8_t *desc,
		       uint32_t dlen)
{
	uint32_t nlen = (uint32_t)strlen(name) + 1;
	size_t off = 0;
	memcpy(p, &nlen, 4);
	memcpy(p + 4, &dlen, 4);
	memcpy(p + 8, &type, 4);
	off = 12;
	memset(p + off, 0, (nlen + 3) & ~3u);
	memcpy(p + off, name, nlen);
	off += (nlen + 3) & ~3u;
	memset(p + off, 0, (dlen + 3) & ~3u);
	memcpy(p + off, desc, dlen);
	return off + ((dlen + 3) & ~3u);
}

static void test_notes(void **state)
{
	(void)state;
	uint8_t buf[256], id[20], want[20];
	size_t n = 0, len;
	for (int i = 0; i < 20; i++)
		want[i] = (uint8_t)(0xa0 + i);
	n += put_note(buf + n, "Xen", 1, want, 8);           /* other notes are skipped */
	n += put_note(buf + n, "GNU", 1, want, 4);           /* wrong type */
	size_t at = n;
	n += put_note(buf + n, "GNU", 3, want, 20);
	len = sizeof(id);
	assert_int_equal(pk_notes__build_id(buf, n, id, &len), 0);
	assert_int_equal(len, 20);
	assert_memory_equal(id, want, 20);
	/* capacity smaller than the id: truncated like perf's 20 bytes */
	len = 8;
	assert_int_equal(pk_notes__build_id(buf, n, id, &len), 0);
	assert_int_equal(len, 8);
	/* the GNU note cut short: malformed */
	len = sizeof(id);
	assert_int_equal(pk_notes__build_id(buf, at + 20, id, &len), -PK_ERR_FORMAT);
	/* none at all */
	len = sizeof(id);
	assert_int_equal(pk_notes__build_id(buf, at, id, &len), -ENOENT);
}

/* ---- synthesis over a fake procfs ---- */

struct collected {
	uint8_t buf[16384];
	size_t len;
	int nr;
	int stop_after;
};

static int collect(const struct perf_event_header *h, void *ctx)
{
	struct collected *c = ctx;
	assert_true(h->size >= 8 && h->size % 8 == 0);
	assert_true(c->len + h->size <= sizeof(c->buf));
	memcpy(c->buf + c->len, h, h->size);
	c->len += h->size;
	c->nr++;
	return c->stop_after && c->nr >= c->stop_after ? 42 : 0;
}

static const struct perf_event_header *rec_at(struct collected *c, int idx)
{
	size_t off = 0;
	for (int i = 0; i < idx; i++)
		off += ((const struct perf_event_header *)(c->buf + off))->size;
	return (const struct perf_event_header *)(c->buf + off);
}

static char *fake_proc(void)
{
	char *root = pk_test_mkdtemp("synth");
	pk_test_write_file(root, "kallsyms",
			   "0000000000000000 A fixed_percpu_data\n"
			   "ffffffff81000000 T _text\n"
			   "ffffffff81000100 T startup_64\n"
			   "ffffffff82000000 T _etext\n");
	pk_test_write_file(root, "100/status", "Name:\tprog\nTgid:\t100\nPid:\t100\nPPid:\t1\n");
	pk_test_write_file(root, "100/task/100/comm", "prog\n");
	pk_test_write_file(root, "100/task/101/comm", "worker\n");
	pk_test_write_file(root, "101/status", "Name:\tworker\nTgid:\t100\nPid:\t101\nPPid:\t1\n");
	pk_test_write_file(root, "100/task/100/maps",
			   "55d0c3a4e000-55d0c3a50000 r--p 00000000 fe:00 77 /usr/bin/prog\n"
			   "55d0c3a50000-55d0c3a52000 r-xp 00002000 fe:00 77 /usr/bin/prog\n"
			   "7f0000000000-7f0000001000 rwxp 00000000 00:00 0 \n"
			   "7f0000001000-7f0000003000 rw-p 00000000 00:00 0 \n"
			   "7f0000003000-7f0000004000 ---p 00004000 fe:00 77 /usr/bin/prog\n"
			   "garbage line\n"
			   "7ffd1b3f2000-7ffd1b3f4000 r-xp 00000000 00:00 0 [vdso]\n");
	return root;
}

static void test_kernel_mmap(void **state)
{
	(void)state;
	char *root = fake_proc();
	struct collected c = { 0 };
	struct pk_sample_layout l;
	struct perf_event_attr a = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
				     .sample_id_all = 1 };
	struct pk_record r;

	PK_OPTS(pk_synth_opts, o, .id_size = 16, .procfs_root = root);
	assert_int_equal(pk_synth__kernel_mmap(collect, &c, &o), 0);
	assert_int_equal(c.nr, 1);
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	assert_int_equal(pk_record__decode(&l, rec_at(&c, 0), &r, NULL), 0);
	assert_int_equal(r.type, PERF_RECORD_MMAP);
	assert_int_equal(r.cpumode, PK_CPUMODE_KERNEL);
	assert_int_equal(r.mmap.pid, UINT32_MAX);
	assert_true(r.mmap.addr == 0xffffffff81000000ULL && r.mmap.pgoff == r.mmap.addr);
	assert_true(r.mmap.len == 0x1000000);
	assert_string_equal(r.mmap.filename, "[kernel.kallsyms]_text");
	assert_true(r.has_sid && r.sid.time == 0 && r.sid.pid == 0);

	/* kptr_restrict: every address reads 0 */
	pk_test_write_file(root, "kallsyms", "0000000000000000 T _text\n0000000000000000 T _etext\n");
	assert_int_equal(pk_synth__kernel_mmap(collect, &c, &o), -EACCES);
	/* a bad trailer size is refused */
	PK_OPTS(pk_synth_opts, bad, .id_size = 12, .procfs_root = root);
	assert_int_equal(pk_synth__kernel_mmap(collect, &c, &bad), -EINVAL);
	pk_test_rmtree(root);
	free(root);
}

/* ---- kernel modules ---- */

static void test_modules_parsers(void **state)
{
	(void)state;
	struct pk_kmod_ent e;
	char name[64];
	assert_int_equal(pk_modules__parse_line("xfs 1961984 1 - Live 0xffffffffc0a3b000 (OE)\n", &e), 0);
	assert_string_equal(e.name, "xfs");
	assert_true(e.size == 1961984 && e.start == 0xffffffffc0a3b000ULL && !e.path);
	assert_int_equal(pk_modules__parse_line("snd_hda 40960 2 snd_a,snd_b, Loading 0xffffffffc0001000", &e), 0);
	assert_true(e.size == 40960 && e.start == 0xffffffffc0001000ULL);
	assert_int_equal(pk_modules__parse_line("xfs 1961984 1 - Live\n", &e), -PK_ERR_PARSE);
	assert_int_equal(pk_modules__parse_line("xfs 1961984 1 - Live ffffffffc0a3b000\n", &e), -PK_ERR_PARSE);
	assert_int_equal(pk_modules__parse_line("a/b 1 1 - Live 0x1000\n", &e), -PK_ERR_PARSE);
	assert_int_equal(pk_modules__parse_line(" 1 1 - Live 0x1000\n", &e), -PK_ERR_PARSE);
	assert_int_equal(pk_modules__parse_line("x 2 1 - Live 0xffffffffffffffff\n", &e), -PK_ERR_PARSE);
	assert_int_equal(pk_modules__parse_line("x 99999999999999999999 1 - Live 0x1\n", &e), -PK_ERR_PARSE);
	const char *f = "kernel/sound/pci/hda/snd-hda-intel.ko.xz: kernel/x.ko";
	assert_int_equal(pk_kmod__name_of(f, 40, name, sizeof(name)), 0);
	assert_string_equal(name, "snd_hda_intel");
	assert_int_equal(pk_kmod__name_of("xfs.ko", 6, name, sizeof(name)), 0);
	assert_string_equal(name, "xfs");
	assert_int_equal(pk_kmod__name_of("a.kox", 5, name, sizeof(name)), -PK_ERR_PARSE);
	assert_int_equal(pk_kmod__name_of("dir/.ko", 7, name, sizeof(name)), -PK_ERR_PARSE);
	assert_int_equal(pk_kmod__name_of("xfs.ko", 6, name, 3), -PK_ERR_PARSE);
	assert_int_equal(pk_kmod__name_of("xfs.ko", 6, name, 4), 0);
}

/* the bytes of a test file, NULs and all */
static void write_bytes(const char *root, const char *rel, const char *b, size_t n)
{
	char path[PATH_MAX];
	pk_test_write_file(root, rel, "");
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

/* a fake procfs and modules tree under a new directory: the module tests' set-up, and
 * the layout of the records synthesized with id_size 16 (TID, TIME) */
struct kmod_fix {
	char *root;
	char proc[PATH_MAX], mods[PATH_MAX];
	struct pk_sample_layout l;
};

static void kmod_fix_init(struct kmod_fix *f, const char *name)
{
	struct perf_event_attr a = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
				     .sample_id_all = 1 };
	f->root = pk_test_mkdtemp(name);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->root);
	snprintf(f->mods, sizeof(f->mods), "%s/lib/modules", f->root);
	assert_int_equal(pk_sample_layout__init(&f->l, &a), 0);
}

static void test_modules(void **state)
{
	(void)state;
	struct kmod_fix F;
	kmod_fix_init(&F, "synth-kmod");
	char *root = F.root, sys[PATH_MAX];
	struct collected c = { 0 };
	struct pk_record r;

	snprintf(sys, sizeof(sys), "%s/sys", root);
	/* no modules file: a kernel without modules, nothing to say */
	PK_OPTS(pk_synth_opts, o, .id_size = 16, .procfs_root = F.proc, .modules_root = F.mods);
	assert_int_equal(pk_synth__modules(collect, &c, &o), 0);
	assert_int_equal(c.nr, 0);
	pk_test_write_file(root, "proc/modules",
			   "xfs 1961984 1 - Live 0xffffffffc0a3b000\n"
			   "snd_hda_intel 57344 0 - Live 0xffffffffc0001000 (OE)\n"
			   "garbage\n"
			   "mine 4096 0 - Live 0xffffffffc0002000\n");
	pk_test_write_file(root, "proc/sys/kernel/osrelease", "6.1.0-test\n");
	pk_test_write_file(root, "lib/modules/6.1.0-test/modules.dep",
			   "kernel/fs/xfs/xfs.ko: kernel/lib/libcrc32c.ko\n"
			   "kernel/sound/pci/hda/snd-hda-intel.ko.xz:\n"
			   "updates/xfs.ko:\n");
	assert_int_equal(pk_synth__modules(collect, &c, &o), 0);
	assert_int_equal(c.nr, 3);
	const char *want[] = { "/lib/modules/6.1.0-test/kernel/sound/pci/hda/snd-hda-intel.ko.xz",
			       "[mine]", "/lib/modules/6.1.0-test/kernel/fs/xfs/xfs.ko" };
	const uint64_t start[] = { 0xffffffffc0001000ULL, 0xffffffffc0002000ULL,
				   0xffffffffc0a3b000ULL };
	const uint64_t len[] = { 57344, 4096, 1961984 };
	for (int i = 0; i < 3; i++) {
		char path[PATH_MAX];
		assert_int_equal(pk_record__decode(&F.l, rec_at(&c, i), &r, NULL), 0);
		assert_int_equal(r.type, PERF_RECORD_MMAP);
		assert_int_equal(r.cpumode, PK_CPUMODE_KERNEL);
		assert_int_equal(r.mmap.pid, UINT32_MAX);
		assert_true(r.mmap.addr == start[i] && r.mmap.len == len[i] && r.mmap.pgoff == 0);
		if (want[i][0] == '/')
			snprintf(path, sizeof(path), "%s%s", root, want[i]);
		else
			snprintf(path, sizeof(path), "%s", want[i]);
		assert_string_equal(r.mmap.filename, path);
		assert_true(r.has_sid && r.sid.time == 0);
	}
	/* the callback's value stops it */
	struct collected c2 = { .stop_after = 1 };
	assert_int_equal(pk_synth__modules(collect, &c2, &o), 42);
	assert_int_equal(c2.nr, 1);
	/* kptr_restrict: every address 0 */
	pk_test_write_file(root, "proc/modules", "xfs 1961984 1 - Live 0x0000000000000000\n");
	assert_int_equal(pk_synth__modules(collect, &c2, &o), -EACCES);
	/* the build id from sysfs */
	uint8_t notes[64], id[20], wid[20];
	for (int i = 0; i < 20; i++)
		wid[i] = (uint8_t)(0x10 + i);
	size_t n = put_note(notes, "GNU", 3, wid, 20), idlen = sizeof(id);
	char rel[64];
	snprintf(rel, sizeof(rel), "sys/module/xfs/notes/.note.gnu.build-id");
	write_bytes(root, rel, (const char *)notes, n);
	assert_int_equal(pk_kmod__build_id(sys, "xfs", id, &idlen), 0);
	assert_int_equal(idlen, 20);
	assert_memory_equal(id, wid, 20);
	assert_int_equal(pk_kmod__build_id(sys, "..", id, &idlen), -EINVAL);
	assert_int_equal(pk_kmod__build_id(sys, "a/b", id, &idlen), -EINVAL);
	assert_true(pk_kmod__build_id(sys, "ext4", id, &idlen) < 0);
	pk_test_rmtree(root);
	free(root);
}

/* hostile module lists: a NUL byte inside a line must not take the next line with it,
 * and a list without an end (a device) must not be read forever */
static void test_modules_hostile(void **state)
{
	(void)state;
	struct kmod_fix F;
	kmod_fix_init(&F, "synth-kmod-bad");
	char *root = F.root, path[PATH_MAX];
	struct collected c = { 0 };
	struct pk_record r;

	PK_OPTS(pk_synth_opts, o, .id_size = 16, .procfs_root = F.proc, .modules_root = F.mods);
	static const char m[] = "junk\0more\nxfs 1961984 1 - Live 0xffffffffc0a3b000\n";
	write_bytes(root, "proc/modules", m, sizeof(m) - 1);
	pk_test_write_file(root, "proc/sys/kernel/osrelease", "6.1.0-test\n");
	static const char dep[] = "\0x.ko:\nkernel/fs/xfs/xfs.ko:\n";
	write_bytes(root, "lib/modules/6.1.0-test/modules.dep", dep, sizeof(dep) - 1);
	assert_int_equal(pk_synth__modules(collect, &c, &o), 0);
	assert_int_equal(c.nr, 1);
	assert_int_equal(pk_record__decode(&F.l, rec_at(&c, 0), &r, NULL), 0);
	snprintf(path, sizeof(path), "%s/lib/modules/6.1.0-test/kernel/fs/xfs/xfs.ko", root);
	assert_string_equal(r.mmap.filename, path);

	/* endless lists: modules.dep, then the modules themselves (killed by the alarm,
	 * the test fails, where they were read forever) */
	snprintf(path, sizeof(path), "%s/lib/modules/6.1.0-test/modules.dep", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/dev/zero", path), 0);
	alarm(60);
	struct collected c2 = { 0 };
	assert_int_equal(pk_synth__modules(collect, &c2, &o), 0);
	assert_int_equal(c2.nr, 1);
	assert_int_equal(pk_record__decode(&F.l, rec_at(&c2, 0), &r, NULL), 0);
	assert_string_equal(r.mmap.filename, "[xfs]");
	snprintf(path, sizeof(path), "%s/proc/modules", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/dev/zero", path), 0);
	struct collected c3 = { 0 };
	assert_int_equal(pk_synth__modules(collect, &c3, &o), 0);
	assert_int_equal(c3.nr, 0);
	alarm(0);
	pk_test_rmtree(root);
	free(root);
}

static void test_process(void **state)
{
	(void)state;
	char *root = fake_proc();
	struct collected c = { 0 };
	struct pk_sample_layout l;
	struct perf_event_attr a = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						    PERF_SAMPLE_IDENTIFIER,
				     .sample_id_all = 1 };
	struct pk_record r;
	int forks = 0, comms = 0, mmaps = 0;
	bool saw_worker = false, saw_anon = false, saw_vdso = false, saw_prog = false;

	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	PK_OPTS(pk_synth_opts, o, .id_size = 24, .procfs_root = root);
	assert_int_equal(pk_synth__process(100, PK_SYNTH_FORK | PK_SYNTH_MMAPS, collect, &c, &o), 0);
	for (int i = 0; i < c.nr; i++) {
		const struct perf_event_header *h = rec_at(&c, i);
		assert_int_equal(pk_record__decode(&l, h, &r, NULL), 0);
		assert_true(r.has_sid && r.sid.id == 0 && r.sid.time == 0);
		switch (r.type) {
		case PERF_RECORD_FORK:
			forks++;
			assert_int_equal(r.task.pid, 100);
			if (r.task.tid == 100)
				assert_int_equal(r.task.ppid, 1);
			else
				assert_true(r.task.tid == 101 && r.task.ppid == 100 && r.task.ptid == 100);
			break;
		case PERF_RECORD_COMM:
			comms++;
			assert_int_equal(r.comm.pid, 100);
			if (r.comm.tid == 101) {
				assert_string_equal(r.comm.comm, "worker");
				saw_worker = true;
			}
			break;
		case PERF_RECORD_MMAP2:
			mmaps++;
			assert_int_equal(r.cpumode, PK_CPUMODE_USER);
			assert_true(r.mmap2.prot & PROT_EXEC);
			if (!strcmp(r.mmap2.filename, "/usr/bin/prog")) {
				saw_prog = true;
				assert_true(r.mmap2.addr == 0x55d0c3a50000ULL && r.mmap2.len == 0x2000 &&
					    r.mmap2.pgoff == 0x2000 && r.mmap2.ino == 77 &&
					    r.mmap2.maj == 0xfe && r.mmap2.flags == MAP_PRIVATE);
			}
			saw_anon |= !strcmp(r.mmap2.filename, "//anon");
			saw_vdso |= !strcmp(r.mmap2.filename, "[vdso]");
			break;
		default:
			fail_msg("unexpected record type %u", r.type);
		}
	}
	assert_int_equal(forks, 2);
	assert_int_equal(comms, 2);
	assert_int_equal(mmaps, 3); /* the r--p mapping and the garbage line are skipped */
	assert_true(saw_worker && saw_anon && saw_vdso && saw_prog);

	/* with mmap_data the readable data mappings come too, flagged as data: the read-only
	 * file mapping and the anonymous one (as "//anon"), not the ---p guard */
	struct collected d = { 0 };
	int data_maps = 0;
	PK_OPTS(pk_synth_opts, od, .id_size = 24, .procfs_root = root, .mmap_data = true);
	assert_int_equal(pk_synth__process(100, PK_SYNTH_MMAPS, collect, &d, &od), 0);
	assert_int_equal(d.nr, 2 + 5);
	for (int i = 2; i < d.nr; i++) {
		assert_int_equal(pk_record__decode(&l, rec_at(&d, i), &r, NULL), 0);
		assert_int_equal(r.type, PERF_RECORD_MMAP2);
		assert_true(r.mmap2.data == !(r.mmap2.prot & PROT_EXEC));
		if (!r.mmap2.data)
			continue;
		data_maps++;
		assert_true(r.mmap2.prot & PROT_READ);
		if (r.mmap2.addr == 0x7f0000001000ULL)
			assert_true(!strcmp(r.mmap2.filename, "//anon") && r.mmap2.len == 0x2000);
		else
			assert_true(!strcmp(r.mmap2.filename, "/usr/bin/prog") &&
				    r.mmap2.addr == 0x55d0c3a4e000ULL);
	}
	assert_int_equal(data_maps, 2);

	/* the callback's value stops the walk and is returned */
	struct collected s = { .stop_after = 1 };
	assert_int_equal(pk_synth__process(100, PK_SYNTH_FORK, collect, &s, &o), 42);
	assert_int_equal(s.nr, 1);

	/* one thread (-t): its COMM with the process id from status */
	struct collected t = { 0 };
	assert_int_equal(pk_synth__thread(101, 0, collect, &t, &o), 0);
	assert_int_equal(t.nr, 1);
	assert_int_equal(pk_record__decode(&l, rec_at(&t, 0), &r, NULL), 0);
	assert_true(r.type == PERF_RECORD_COMM && r.comm.pid == 100 && r.comm.tid == 101);

	/* a process that is not there */
	assert_int_equal(pk_synth__process(4242, 0, collect, &c, &o), -ESRCH);

	/* everything in the fake procfs */
	struct collected all = { 0 };
	assert_int_equal(pk_synth__all(PK_SYNTH_FORK, collect, &all, &o), 0);
	assert_int_equal(all.nr, 4); /* 101 has no task dir: only process 100's two threads */
	pk_test_rmtree(root);
	free(root);
}

/* The inode of a file of the fake procfs (what a NAMESPACES link must carry). */
static uint64_t ino_of(const char *root, const char *rel)
{
	char path[4096];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

static void test_namespaces(void **state)
{
	(void)state;
	char *root = fake_proc();
	struct collected c = { 0 };
	struct pk_sample_layout l;
	struct perf_event_attr a = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
				     .sample_id_all = 1 };
	struct pk_record r;
	int ns = 0, comms = 0;

	/* thread 100 has net, pid and cgroup links; 101 only mnt */
	pk_test_write_file(root, "100/task/100/ns/net", "");
	pk_test_write_file(root, "100/task/100/ns/pid", "");
	pk_test_write_file(root, "100/task/100/ns/cgroup", "");
	pk_test_write_file(root, "100/task/101/ns/mnt", "");
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	PK_OPTS(pk_synth_opts, o, .id_size = 16, .procfs_root = root);
	assert_int_equal(pk_synth__process(100, PK_SYNTH_NAMESPACES, collect, &c, &o), 0);
	for (int i = 0; i < c.nr; i++) {
		assert_int_equal(pk_record__decode(&l, rec_at(&c, i), &r, NULL), 0);
		if (r.type == PERF_RECORD_COMM) {
			comms++;
			continue;
		}
		assert_int_equal(r.type, PERF_RECORD_NAMESPACES);
		/* each thread's record right after its COMM */
		assert_int_equal(i, 2 * ns + 1);
		ns++;
		assert_int_equal(r.namespaces.pid, 100);
		assert_int_equal((int)r.namespaces.nr, 7);
		assert_true(r.has_sid && r.sid.time == 0);
		if (r.namespaces.tid == 100) {
			/* index order net, uts, ipc, pid, user, mnt, cgroup */
			assert_true(r.namespaces.ns[0].ino == ino_of(root, "100/task/100/ns/net"));
			assert_true(r.namespaces.ns[3].ino == ino_of(root, "100/task/100/ns/pid"));
			assert_true(r.namespaces.ns[6].ino == ino_of(root, "100/task/100/ns/cgroup"));
			assert_true(r.namespaces.ns[0].ino != r.namespaces.ns[3].ino);
			assert_true(r.namespaces.ns[0].dev != 0);
			for (int k = 1; k < 6; k++)
				if (k != 3)
					assert_true(!r.namespaces.ns[k].ino && !r.namespaces.ns[k].dev);
		} else {
			assert_int_equal(r.namespaces.tid, 101);
			assert_true(r.namespaces.ns[5].ino == ino_of(root, "100/task/101/ns/mnt"));
			assert_true(!r.namespaces.ns[0].ino && !r.namespaces.ns[6].ino);
		}
	}
	assert_int_equal(comms, 2);
	assert_int_equal(ns, 2);

	/* without the flag: none */
	struct collected n = { 0 };
	assert_int_equal(pk_synth__process(100, 0, collect, &n, &o), 0);
	assert_int_equal(n.nr, 2);

	/* one thread (-t) */
	struct collected t = { 0 };
	assert_int_equal(pk_synth__thread(101, PK_SYNTH_NAMESPACES, collect, &t, &o), 0);
	assert_int_equal(t.nr, 2);
	assert_int_equal(pk_record__decode(&l, rec_at(&t, 1), &r, NULL), 0);
	assert_true(r.type == PERF_RECORD_NAMESPACES && r.namespaces.tid == 101 &&
		    r.namespaces.ns[5].ino == ino_of(root, "100/task/101/ns/mnt"));

	/* a single record, for a launched command */
	struct collected one = { 0 };
	assert_int_equal(pk_synth__namespaces(100, 100, collect, &one, &o), 0);
	assert_int_equal(one.nr, 1);
	assert_int_equal(rec_at(&one, 0)->size, 8 + 8 + 8 + 7 * 16 + 16);
	assert_int_equal(pk_synth__namespaces(0, 100, collect, &one, &o), -EINVAL);
	assert_int_equal(pk_synth__namespaces(100, 100, NULL, &one, &o), -EINVAL);
	pk_test_rmtree(root);
	free(root);
}

static void test_finished_init_and_self(void **state)
{
	(void)state;
	struct collected c = { 0 };
	assert_int_equal(pk_synth__finished_init(collect, &c), 0);
	assert_int_equal(rec_at(&c, 0)->type, PK_RECORD_FINISHED_INIT);
	assert_int_equal(rec_at(&c, 0)->size, 8);

	/* the real /proc: our own process has an executable mapping of this test binary */
	struct collected s = { 0 };
	struct pk_sample_layout l;
	struct perf_event_attr a = { 0 };
	struct pk_record r;
	bool found = false;
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	assert_int_equal(pk_synth__process(getpid(), PK_SYNTH_MMAPS, collect, &s, NULL), 0);
	for (int i = 0; i < s.nr; i++) {
		assert_int_equal(pk_record__decode(&l, rec_at(&s, i), &r, NULL), 0);
		if (r.type == PERF_RECORD_MMAP2 && strstr(r.mmap2.filename, "test_synth"))
			found = true;
	}
	assert_true(found);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_line),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_kernel_mmap),
		cmocka_unit_test(test_modules_parsers),
		cmocka_unit_test(test_modules),
		cmocka_unit_test(test_modules_hostile),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_namespaces),
		cmocka_unit_test(test_finished_init_and_self),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
