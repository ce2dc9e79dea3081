/* SPDX-License-Identifier: MIT */
/* perf_event_open(2) with attr-size negotiation. */
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/sys.h>

static const struct {
	uint16_t off;
	const char *name;
} attr_fields[] = {
	{ 0, "type" }, { 4, "size" }, { 8, "config" }, { 16, "sample_period" },
	{ 24, "sample_type" }, { 32, "read_format" }, { 40, "flags" },
	{ 48, "wakeup_events" }, { 52, "bp_type" }, { 56, "config1/bp_addr" },
	{ 64, "config2/bp_len" }, { 72, "branch_sample_type" }, { 80, "sample_regs_user" },
	{ 88, "sample_stack_user" }, { 92, "clockid" }, { 96, "sample_regs_intr" },
	{ 104, "aux_watermark" }, { 108, "sample_max_stack" }, { 110, "__reserved_2" },
	{ 112, "aux_sample_size" }, { 116, "aux_action" }, { 120, "sig_data" },
	{ 128, "config3" }, { 136, "config4" },
};

PK_API const char *pk_attr__field_name(size_t off)
{
	const char *name = NULL;
	for (size_t i = 0; i < PK_ARRAY_SIZE(attr_fields); i++)
		if (attr_fields[i].off <= off)
			name = attr_fields[i].name;
	return off < 144 ? name : "(beyond every known field)";
}

static const uint32_t abi_sizes[] = {
	PK_ATTR_SIZE_VER0, PK_ATTR_SIZE_VER1, PK_ATTR_SIZE_VER2, PK_ATTR_SIZE_VER3,
	PK_ATTR_SIZE_VER4, PK_ATTR_SIZE_VER5, PK_ATTR_SIZE_VER6, PK_ATTR_SIZE_VER7,
	PK_ATTR_SIZE_VER8,
};

static size_t last_nonzero(const uint8_t *raw, size_t from, size_t to)
{
	size_t last = 0;
	for (size_t i = from; i < to; i++)
		if (raw[i])
			last = i + 1;
	return last;
}

PK_API uint32_t pk_attr__min_size(const struct pk_attr *a)
{
	size_t need = last_nonzero(a->raw, 0, PK_ATTR_SIZE_MAX);
	for (size_t i = 0; i < PK_ARRAY_SIZE(abi_sizes); i++)
		if (need <= abi_sizes[i])
			return abi_sizes[i];
	return PK_ATTR_SIZE_MAX;
}

PK_API int pk_sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
				  int group_fd, unsigned long flags)
{
	const uint8_t *raw = (const uint8_t *)attr;
	uint32_t orig_size = attr->size;
	unsigned long kflags = flags & ~PK_OPEN_NO_CLOEXEC;

	if (!(flags & PK_OPEN_NO_CLOEXEC))
		kflags |= PERF_FLAG_FD_CLOEXEC;
	if (orig_size == 0) {
		/* only the header's struct is known to be readable behind attr */
		size_t need = last_nonzero(raw, 0, sizeof(*attr));
		attr->size = PK_ATTR_SIZE_VER0;
		for (size_t i = 0; i < PK_ARRAY_SIZE(abi_sizes); i++)
			if (need <= abi_sizes[i]) {
				attr->size = abi_sizes[i];
				break;
			}
		orig_size = attr->size;
	}

	for (int tries = 0; tries < 2; tries++) {
		long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, kflags);
		if (fd >= 0)
			return (int)fd;
		int e = errno;
		if (e != E2BIG) {
			attr->size = orig_size;
			return pk_err(-e);
		}
		uint32_t ksize = attr->size;
		if (ksize == 0 || ksize >= orig_size) {
			/* E2BIG without a smaller size: our size is below VER0 or insane */
			attr->size = orig_size;
			pk_warn("perf_event_open: attr size %u rejected by the kernel", orig_size);
			return pk_err(-E2BIG);
		}
		size_t last = last_nonzero(raw, ksize, orig_size);
		if (last) {
			size_t off = ksize;
			while (off < orig_size && !raw[off])
				off++;
			attr->size = orig_size;
			pk_warn("perf_event_open: this kernel knows attr fields up to byte %u; "
				"'%s' (offset %zu) is set but not supported by it",
				ksize, pk_attr__field_name(off), off);
			return pk_err(-E2BIG);
		}
		pk_debug("perf_event_open: kernel attr size %u < ours %u, retrying", ksize,
			 orig_size);
		attr->size = ksize;
	}
	attr->size = orig_size;
	return pk_err(-E2BIG);
}
