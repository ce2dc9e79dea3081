/* SPDX-License-Identifier: MIT */
/*
 * pk_annotate_kcode (lib/annotate/klive.c): the running kernel's code for a live
 * machine (perfkit top's annotate view), chosen as pk_annotate__kernel chooses it. A
 * synthetic ELF core file stands for /proc/kcore (the running kernel's build-id is the
 * one wanted, so it is read); a given vmlinux that is not ELF is refused and, being
 * given, nothing else is tried; a missing one is said; bad arguments.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

static char *tmp;

/* an ET_CORE file mapping 0x100 bytes ('K' + (i & 15)) at vaddr */
static const char *mkcore(uint64_t vaddr)
{
	static char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/kcore", tmp);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = 64;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 1;
	eh.e_ehsize = sizeof(eh);
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x1000,
			  .p_vaddr = vaddr, .p_filesz = 0x100, .p_memsz = 0x100 };
	assert_int_equal(pwrite(fd, &ph, sizeof(ph), 64), sizeof(ph));
	uint8_t b[0x100];
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)('K' + (i & 15));
	assert_int_equal(pwrite(fd, b, sizeof(b), 0x1000), sizeof(b));
	close(fd);
	return p;
}

static struct pk_machine *machine(void)
{
	/* no kernel symbols, no caches: only the code's choice is looked at */
	PK_OPTS(pk_machine_opts, mo, .host = true, .kallsyms = "", .buildid_dir = "");
	struct pk_machine *m = pk_machine__new(&mo);
	assert_non_null(m);
	return m;
}

static void test_kcore(void **state)
{
	(void)state;
	uint8_t bid[PK_BUILD_ID_MAX];
	size_t len = sizeof(bid);
	if (pk_kernel_build_id(NULL, bid, &len)) {
		print_message("no build-id of the running kernel: skipped\n");
		skip();
	}
	struct pk_machine *m = machine();
	const char *kc = mkcore(0xffffffff81000000ULL);
	PK_OPTS(pk_annotate_kcode_opts, o, .kcore = kc);
	/* perf's vmlinux paths come first: this machine may hold one */
	struct pk_annotate_kcode *k = pk_annotate_kcode__open(m, &o);
	assert_non_null(k);
	struct pk_annotate_kernel ki = { .sz = sizeof(ki) };
	pk_annotate_kcode__info(k, &ki);
	if (ki.source == PK_ANNOTATE_KSRC_VMLINUX) {
		print_message("a vmlinux of the running kernel is installed: skipped\n");
		pk_annotate_kcode__free(k);
		pk_machine__free(m);
		skip();
	}
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_KCORE);
	assert_string_equal(ki.path, kc);
	assert_int_equal(ki.kcore_err, 0);
	/* the running kernel's build-id is the one wanted */
	assert_int_equal(ki.recorded_bid_len, len);
	assert_memory_equal(ki.recorded_bid, bid, len);
	uint8_t b[16];
	uint16_t em = 0;
	assert_int_equal(pk_annotate_kcode__read(k, 0xffffffff81000010ULL, b, 16, &em), 16);
	assert_int_equal(em, EM_X86_64);
	for (size_t i = 0; i < 16; i++)
		assert_int_equal(b[i], (uint8_t)('K' + i));
	assert_int_equal(pk_annotate_kcode__read(k, 0xffffffff80000000ULL, b, 16, NULL), -ENODATA);
	assert_int_equal(pk_annotate_kcode__read(k, 0xffffffff81000010ULL, NULL, 16, NULL), -EINVAL);
	pk_annotate_kcode__free(k);
	pk_machine__free(m);
}

static void test_failures(void **state)
{
	(void)state;
	struct pk_machine *m = machine();
	/* a given vmlinux that is not ELF: only it is tried */
	char vm[PATH_MAX];
	snprintf(vm, sizeof(vm), "%s/vmlinux", tmp);
	pk_test_write_file(tmp, "vmlinux", "not an image\n");
	PK_OPTS(pk_annotate_kcode_opts, o, .vmlinux = vm, .kcore = mkcore(0xffffffff81000000ULL));
	struct pk_annotate_kcode *k = pk_annotate_kcode__open(m, &o);
	assert_non_null(k);
	struct pk_annotate_kernel ki = { .sz = sizeof(ki) };
	pk_annotate_kcode__info(k, &ki);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	assert_null(ki.path);
	assert_int_equal(ki.vmlinux_err, -EINVAL);
	assert_string_equal(ki.vmlinux_path, vm);
	assert_int_equal(ki.kcore_err, 0); /* not tried */
	uint8_t b[4];
	assert_int_equal(pk_annotate_kcode__read(k, 0xffffffff81000000ULL, b, 4, NULL), -ENOENT);
	pk_annotate_kcode__free(k);

	/* a missing vmlinux, said */
	char gone[PATH_MAX];
	snprintf(gone, sizeof(gone), "%s/no-vmlinux", tmp);
	o.vmlinux = gone;
	k = pk_annotate_kcode__open(m, &o);
	assert_non_null(k);
	pk_annotate_kcode__info(k, &ki);
	assert_int_equal(ki.vmlinux_err, -ENOENT);
	assert_string_equal(ki.vmlinux_path, gone);
	pk_annotate_kcode__free(k);

	/* "" : kcore not tried */
	o.vmlinux = gone;
	o.kcore = "";
	k = pk_annotate_kcode__open(m, &o);
	assert_non_null(k);
	pk_annotate_kcode__info(k, &ki);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	pk_annotate_kcode__free(k);

	/* bad arguments */
	errno = 0;
	assert_null(pk_annotate_kcode__open(NULL, &o));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pk_annotate_kcode__read(NULL, 0, b, 4, NULL), -EINVAL);
	pk_annotate_kcode__info(NULL, &ki);
	assert_int_equal(ki.source, PK_ANNOTATE_KSRC_NONE);
	pk_annotate_kcode__info(NULL, NULL);
	pk_annotate_kcode__free(NULL);
	pk_machine__free(m);
}

int main(void)
{
	tmp = pk_test_mkdtemp("pk-kclive");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kcore),
		cmocka_unit_test(test_failures),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	pk_test_rmtree(tmp);
	free(tmp);
	return r;
}
