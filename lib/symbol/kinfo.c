/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/kinfo.c - what a machine knows of the recorded kernel, for the reader of
 * its code (lib/annotate/kcode.c): the recorded _text, the build-id, where symbols and
 * build-id caches are looked for.
 */
#include <string.h>
#include "internal.h"
#include "symbol-internal.h"
#include "dso-internal.h"

void pk_machine_kinfo(struct pk_machine *m, struct pk_machine_kinfo *out)
{
	memset(out, 0, sizeof(*out));
	if (!m)
		return;
	out->host = m->host;
	out->have_text = m->have_kernel_text;
	out->text = m->kernel_text_pgoff;
	out->kallsyms = m->kallsyms_path;
	out->buildid_dir = m->buildid_dir;
	out->extra_buildid_dir = m->perf_buildid_dir;
	out->symfs = m->symfs;
	struct pk_dso *d = pk_dso_findnew(m, "[kernel.kallsyms]");
	if (d && d->want_bid_len) {
		out->bid = d->want_bid;
		out->bid_len = d->want_bid_len;
	}
}
