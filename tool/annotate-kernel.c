/* SPDX-License-Identifier: MIT */
/*
 * tool/annotate-kernel.c - perfkit annotate and kernel code: the symbols of a vmlinux
 * given with -k (those of report --vmlinux), and, when neither a vmlinux of the
 * recorded kernel nor /proc/kcore can be read (or no .ko of a module), why (per cause)
 * and what to do. The library (pk_annotate__kernel, pk_annotate__module) chooses the
 * file as perf does.
 */
#include "annotate-kernel.h"
#include "builtin.h"
#include "report.h"

static void hex(const uint8_t *id, size_t len, char *out, size_t cap)
{
	out[0] = '\0';
	for (size_t i = 0; i < len && 2 * i + 2 < cap; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

int tool_ann_vmlinux(const char *vmlinux, struct pk_data_reader *rd, char **ksyms)
{
	*ksyms = NULL;
	if (access(vmlinux, R_OK)) {
		tool_error("-k/--vmlinux '%s': %s", vmlinux, strerror(errno));
		return -1;
	}
	uint8_t bid[PK_BUILD_ID_MAX];
	size_t blen = sizeof(bid);
	int err = pk_build_id__read(vmlinux, bid, &blen);
	if (err && err != -ENOENT) {
		tool_error("-k/--vmlinux '%s': %s", vmlinux,
			   err == -EINVAL ? "not an ELF file" : pk_strerror(err));
		return -1;
	}
	const uint8_t *want;
	size_t wlen;
	if (rpt_kernel_bid(rd, &want, &wlen) && (err || wlen != blen || memcmp(want, bid, blen))) {
		char h1[2 * PK_BUILD_ID_MAX + 1], h2[2 * PK_BUILD_ID_MAX + 1];
		hex(bid, err ? 0 : blen, h1, sizeof(h1));
		hex(want, wlen, h2, sizeof(h2));
		tool_error("-k/--vmlinux '%s' is not the recorded kernel: its build id %s%s, the "
			   "recording's %s; its kernel functions are not shown (pass the image of "
			   "the kernel that was recorded)", vmlinux, err ? "is missing" : "is ",
			   err ? "" : h1, h2);
		return 1;
	}
	return rpt_vmlinux_kallsyms(vmlinux, rd, ksyms);
}

void tool_ann_kernel_explain(const struct pk_annotate_kernel *k, size_t nr, bool vmlinux_said)
{
	if (vmlinux_said)
		return;
	char rec[2 * PK_BUILD_ID_MAX + 1];
	hex(k->recorded_bid, k->recorded_bid_len, rec, sizeof(rec));
	tool_error("cannot show %zu kernel function%s: no code of the recorded kernel%s%s%s", nr,
		   nr == 1 ? "" : "s", rec[0] ? " (build id " : "", rec, rec[0] ? ")" : "");
	tool_ann_kernel_why(k, stderr);
}

void tool_ann_kernel_why(const struct pk_annotate_kernel *k, FILE *f)
{
	char other[2 * PK_BUILD_ID_MAX + 1];
	const char *rel = k->release ? k->release : "$(uname -r)";
	const char *vp = k->vmlinux_path ? k->vmlinux_path : "vmlinux";
	switch (-k->vmlinux_err) {
	case ESTALE:
		hex(k->vmlinux_bid, k->vmlinux_bid_len, other, sizeof(other));
		fprintf(f, "  vmlinux: '%s' is another kernel: its build id %s%s\n", vp,
			other[0] ? "differs: " : "is missing", other);
		break;
	case ENODATA:
		fprintf(f, "  vmlinux: '%s' holds no code, only debug information\n", vp);
		break;
	case EINVAL:
		fprintf(f, "  vmlinux: '%s' is not a 64-bit ELF kernel image, or a corrupt one\n",
			vp);
		break;
	case ENOENT:
		if (k->vmlinux_path)
			fprintf(f, "  vmlinux: '%s' does not exist\n", vp);
		else
			fprintf(f, "  vmlinux: none found (perf's places: the build-id cache, "
				"./vmlinux, /boot/vmlinux, /boot/vmlinux-%s, "
				"/usr/lib/debug/boot/vmlinux-%s, /lib/modules/%s/build/vmlinux, ...)\n",
				rel, rel, rel);
		break;
	default:
		fprintf(f, "  vmlinux: '%s': %s\n", vp, pk_strerror(k->vmlinux_err));
		break;
	}
	const char *kp = k->kcore_path ? k->kcore_path : "/proc/kcore";
	bool proc = !strcmp(kp, "/proc/kcore");
	const char *fix = "pass the recorded kernel's image with -k/--vmlinux FILE, or install it "
			  "where perf looks (Debian: linux-image-%s-dbg)";
	switch (-k->kcore_err) {
	case 0:
		break;
	case ESTALE:
		hex(k->running_bid, k->running_bid_len, other, sizeof(other));
		if (k->recorded_bid_len)
			fprintf(f, "  %s: the running kernel is not the recorded one (its build id "
				"%s)\n", kp, other[0] ? other : "unknown");
		else
			fprintf(f, "  %s: the running kernel is not the recorded one (the "
				"recording's release is %s)\n", kp, rel);
		fix = "annotate on the machine and boot that recorded, or pass the recorded "
		      "kernel's image with -k/--vmlinux FILE (Debian: linux-image-%s-dbg)";
		break;
	case ENOENT:
		fprintf(f, "  %s does not exist%s\n", kp,
			proc ? " (kernel built without CONFIG_PROC_KCORE)" : "");
		break;
	case EACCES:
	case EPERM:
		fprintf(f, "  %s needs root (CAP_SYS_RAWIO)\n", kp);
		fix = "run as root, or pass the recorded kernel's image with -k/--vmlinux FILE "
		      "(Debian: linux-image-%s-dbg)";
		break;
	case EINVAL:
		fprintf(f, "  %s is not an ELF core file\n", kp);
		break;
	case ENODATA:
		fprintf(f, "  %s does not map the kernel's text\n", kp);
		break;
	default:
		fprintf(f, "  %s: %s\n", kp, pk_strerror(k->kcore_err));
		break;
	}
	fputs("  fix: ", f);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	fprintf(f, fix, rel);
#pragma GCC diagnostic pop
	fputc('\n', f);
}

char *tool_ann_kernel_msg(const struct pk_annotate_kernel *k, const char *sym, const char *which)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	char rec[2 * PK_BUILD_ID_MAX + 1];
	hex(k->recorded_bid, k->recorded_bid_len, rec, sizeof(rec));
	fprintf(f, "cannot disassemble '%s': no code of the %s kernel%s%s%s\n", sym, which,
		rec[0] ? " (build id " : "", rec, rec[0] ? ")" : "");
	tool_ann_kernel_why(k, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	/* the fix names the kernel meant ("the running kernel's image" for top) */
	static const char rk[] = "the recorded kernel's";
	size_t wl = strlen(which);
	for (char *p = buf; strcmp(which, "recorded") && wl <= 8 && (p = strstr(p, rk)); p += 4 + wl) {
		memcpy(p + 4, which, wl);
		memmove(p + 4 + wl, p + 12, strlen(p + 12) + 1);
	}
	return buf;
}

static void module_explain(const struct pk_annotate_kmod *m, size_t nr)
{
	char rec[2 * PK_BUILD_ID_MAX + 1], other[2 * PK_BUILD_ID_MAX + 1];
	hex(m->recorded_bid, m->recorded_bid_len, rec, sizeof(rec));
	const char *name = m->name ? m->name : "[unknown]";
	tool_error("cannot show %zu function%s of the kernel module %s: no code of the recorded "
		   "module%s%s%s", nr, nr == 1 ? "" : "s", name, rec[0] ? " (build id " : "", rec,
		   rec[0] ? ")" : "");
	const char *kp = m->ko_path ? m->ko_path : "";
	switch (-m->ko_err) {
	case ESTALE:
		hex(m->ko_bid, m->ko_bid_len, other, sizeof(other));
		fprintf(stderr, "  .ko: '%s' is another build: its build id %s%s\n", kp,
			other[0] ? "differs: " : "is missing", other);
		break;
	case EOPNOTSUPP:
		if (m->ko_comp == 'x')
			fprintf(stderr, "  .ko: '%s' is xz-compressed, which perfkit does not read "
				"(it is not linked with liblzma): decompress it (xz -dk) and put the "
				".ko in perf's build-id cache (perf buildid-cache -a FILE.ko)\n", kp);
		else
			fprintf(stderr, "  .ko: '%s' is zstd-compressed, which perf 6.1 does not read "
				"either: decompress it (zstd -d) and put the .ko in perf's build-id "
				"cache (perf buildid-cache -a FILE.ko)\n", kp);
		break;
	case EINVAL:
		fprintf(stderr, "  .ko: '%s' is not a 64-bit relocatable ELF object, or a corrupt "
			"one\n", kp);
		break;
	case ENODATA:
		fprintf(stderr, "  .ko: '%s' holds no code (.text)\n", kp);
		break;
	case EFBIG:
		fprintf(stderr, "  .ko: '%s' is too large once uncompressed\n", kp);
		break;
	case ENOENT:
		fprintf(stderr, "  .ko: none found (perf's places: the build-id cache%s%s%s, then "
			"/lib/modules/RELEASE/.../%.*s.ko*)\n", m->recorded_path ? ", '" : "",
			m->recorded_path ? m->recorded_path : "", m->recorded_path ? "'" : "",
			(int)strcspn(name + (name[0] == '['), "]"), name + (name[0] == '['));
		break;
	default:
		fprintf(stderr, "  .ko: '%s': %s\n", kp, pk_strerror(m->ko_err));
		break;
	}
	switch (-m->kcore_err) {
	case 0:
		break;
	case ESTALE:
		fprintf(stderr, "  /proc/kcore: not the boot that recorded (the running kernel is "
			"another, or the module is not loaded at its recorded address now)\n");
		break;
	case ENOENT:
		fprintf(stderr, "  /proc/kcore does not exist\n");
		break;
	case EACCES:
	case EPERM:
		fprintf(stderr, "  /proc/kcore needs root (CAP_SYS_RAWIO)\n");
		break;
	default:
		fprintf(stderr, "  /proc/kcore: %s\n", pk_strerror(m->kcore_err));
		break;
	}
	fprintf(stderr, "  fix: put the recorded build of the module's .ko in perf's build-id cache "
		"(perf buildid-cache -a FILE.ko) or at %s\n",
		m->recorded_path ? "its recorded path" : "/lib/modules/RELEASE/");
}

int tool_ann_module(struct pk_annotate *a, size_t i, struct pk_annotate_sym *sym,
		    struct tool_ann_mskip *s, const char **file, uint64_t *bias)
{
	struct pk_annotate_kmod M = { .sz = sizeof(M) };
	int e = pk_annotate__module(a, i, &M);
	if (e == -ENOMEM) {
		tool_error("out of memory");
		return -1;
	}
	if (!e && M.source == PK_ANNOTATE_KSRC_NONE) {
		size_t k = 0;
		while (k < s->nr && s->v[k].m.name != M.name)
			k++;
		if (k == s->nr && k < sizeof(s->v) / sizeof(s->v[0]))
			s->v[s->nr++].m = M;
		if (k < s->nr)
			s->v[k].nr++;
		else
			s->more++;
		return 1;
	}
	*file = M.path;
	*bias = M.bias;
	pk_annotate__symbol(a, i, sym); /* its size cut at the module's code's end */
	return 0;
}

size_t tool_ann_modules_explain(const struct tool_ann_mskip *s)
{
	size_t n = s->more;
	for (size_t k = 0; k < s->nr; k++) {
		module_explain(&s->v[k].m, s->v[k].nr);
		n += s->v[k].nr;
	}
	if (s->more)
		tool_error("cannot show %zu functions of other kernel modules (no code of them)",
			   s->more);
	return n;
}
