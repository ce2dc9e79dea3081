/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/klive.c - where the kernel's code is read, chosen from a machine model:
 * for a recording (pk_annotate__kernel) and for a live machine, the running kernel
 * (pk_annotate_kcode: perfkit top's annotate view). One choice, kcode.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/annotate.h>
#include <perfkit/synth.h>
#include "internal.h"
#include "annotate/klive.h"

int pk_kcode_open_machine(struct pk_machine *m, const char *vmlinux, const char *kcore,
			  const char *release, bool live, struct pk_kcode **out)
{
	struct pk_machine_kinfo mk;
	pk_machine_kinfo(m, &mk);
	uint8_t run[PK_BUILD_ID_MAX];
	size_t run_len = sizeof(run);
	if (pk_kernel_build_id(NULL, run, &run_len))
		run_len = 0;
	struct pk_kcode_opts ko = {
		.vmlinux = vmlinux, .kcore = kcore,
		.kallsyms = mk.kallsyms && *mk.kallsyms ? mk.kallsyms : NULL,
		.release = release,
		.buildid_dirs = { mk.buildid_dir, mk.extra_buildid_dir, mk.symfs },
		.symfs = mk.symfs, .want_bid = mk.bid, .want_bid_len = mk.bid_len,
		.run_bid = run, .run_bid_len = run_len, .host = mk.host || live,
		.have_text = mk.have_text, .text = mk.text,
	};
	if (live && !ko.want_bid_len) {
		ko.want_bid = run;
		ko.want_bid_len = run_len;
	}
	return pk_kcode_open(&ko, out);
}

struct pk_annotate_kcode {
	struct pk_kcode *kc;
};

PK_API struct pk_annotate_kcode *pk_annotate_kcode__open(struct pk_machine *m,
							 const struct pk_annotate_kcode_opts *o)
{
	if (!m)
		return pk_err_ptr(-EINVAL);
	struct pk_annotate_kcode *k = calloc(1, sizeof(*k));
	if (!k)
		return pk_err_ptr(-ENOMEM);
	int err = pk_kcode_open_machine(m, PK_OPTS_GET(o, vmlinux, NULL), PK_OPTS_GET(o, kcore, NULL),
					NULL, true, &k->kc);
	if (err) {
		free(k);
		return pk_err_ptr(err);
	}
	return k;
}

PK_API void pk_annotate_kcode__info(const struct pk_annotate_kcode *k, struct pk_annotate_kernel *out)
{
	if (out)
		pk_kcode_info(k ? k->kc : NULL, out);
}

PK_API long pk_annotate_kcode__read(struct pk_annotate_kcode *k, uint64_t addr, void *buf,
				    size_t len, uint16_t *e_machine)
{
	if (!k || !buf)
		return -EINVAL;
	return pk_kcode_read(k->kc, addr, buf, len, e_machine);
}

PK_API void pk_annotate_kcode__free(struct pk_annotate_kcode *k)
{
	if (!k)
		return;
	pk_kcode_free(k->kc);
	free(k);
}
