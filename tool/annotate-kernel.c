/* SPDX-License-Identifier: MIT */
/*
 * tool/annotate-kernel.c - perfkit annotate and kernel code: the symbols of a vmlinux
 * given with -k (those of report --vmlinux), and, when neither a vmlinux of the
 * recorded kernel nor /proc/kcore can be read, why (per cause) and what to do. The
 * library (pk_annotate__kernel) chooses the file as perf does.
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
	char rec[2 * PK_BUILD_ID_MAX + 1], other[2 * PK_BUILD_ID_MAX + 1];
	hex(k->recorded_bid, k->recorded_bid_len, rec, sizeof(rec));
	const char *rel = k->release ? k->release : "$(uname -r)";
	tool_error("cannot show %zu kernel function%s: no code of the recorded kernel%s%s%s", nr,
		   nr == 1 ? "" : "s", rec[0] ? " (build id " : "", rec, rec[0] ? ")" : "");
	const char *vp = k->vmlinux_path ? k->vmlinux_path : "vmlinux";
	switch (-k->vmlinux_err) {
	case ESTALE:
		hex(k->vmlinux_bid, k->vmlinux_bid_len, other, sizeof(other));
		fprintf(stderr, "  vmlinux: '%s' is another kernel: its build id %s%s\n", vp,
			other[0] ? "differs: " : "is missing", other);
		break;
	case ENODATA:
		fprintf(stderr, "  vmlinux: '%s' holds no code, only debug information\n", vp);
		break;
	case EINVAL:
		fprintf(stderr, "  vmlinux: '%s' is not a 64-bit ELF kernel image, or a corrupt one\n",
			vp);
		break;
	case ENOENT:
		if (k->vmlinux_path)
			fprintf(stderr, "  vmlinux: '%s' does not exist\n", vp);
		else
			fprintf(stderr, "  vmlinux: none found (perf's places: the build-id cache, "
				"./vmlinux, /boot/vmlinux, /boot/vmlinux-%s, "
				"/usr/lib/debug/boot/vmlinux-%s, /lib/modules/%s/build/vmlinux, ...)\n",
				rel, rel, rel);
		break;
	default:
		fprintf(stderr, "  vmlinux: '%s': %s\n", vp, pk_strerror(k->vmlinux_err));
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
			fprintf(stderr, "  %s: the running kernel is not the recorded one (its build id "
				"%s)\n", kp, other[0] ? other : "unknown");
		else
			fprintf(stderr, "  %s: the running kernel is not the recorded one (the "
				"recording's release is %s)\n", kp, rel);
		fix = "annotate on the machine and boot that recorded, or pass the recorded "
		      "kernel's image with -k/--vmlinux FILE (Debian: linux-image-%s-dbg)";
		break;
	case ENOENT:
		fprintf(stderr, "  %s does not exist%s\n", kp,
			proc ? " (kernel built without CONFIG_PROC_KCORE)" : "");
		break;
	case EACCES:
	case EPERM:
		fprintf(stderr, "  %s needs root (CAP_SYS_RAWIO)\n", kp);
		fix = "run as root, or pass the recorded kernel's image with -k/--vmlinux FILE "
		      "(Debian: linux-image-%s-dbg)";
		break;
	case EINVAL:
		fprintf(stderr, "  %s is not an ELF core file\n", kp);
		break;
	case ENODATA:
		fprintf(stderr, "  %s does not map the kernel's text\n", kp);
		break;
	default:
		fprintf(stderr, "  %s: %s\n", kp, pk_strerror(k->kcore_err));
		break;
	}
	fputs("  fix: ", stderr);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	fprintf(stderr, fix, rel);
#pragma GCC diagnostic pop
	fputc('\n', stderr);
}
