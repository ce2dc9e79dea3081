/* SPDX-License-Identifier: MIT */
/*
 * lib/symbol/kinfo.c - what a machine knows of the recorded kernel, for the reader of
 * its code (lib/annotate/kcode.c): the recorded _text, the build-id, where symbols and
 * build-id caches are looked for; of a module, its recorded map, .ko and build-id.
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

int pk_machine_kmod(struct pk_machine *m, struct pk_dso *mod, uint64_t addr,
		    struct pk_machine_kmod *out)
{
	memset(out, 0, sizeof(*out));
	if (!m || !mod || mod->kind != PK_DSO_MODULE)
		return -ENOENT;
	const struct pk_mapent *e = pk_mapset_find(m->kmaps, addr);
	if (!e || e->dso != mod)
		return -ENOENT;
	out->name = mod->name;
	out->path = mod->kmod_path;
	out->start = e->start;
	out->end = e->end;
	struct pk_dso *b = mod->want_bid_len || !mod->kmod_path ? mod
								  : pk_dso_findnew(m, mod->kmod_path);
	if (b && b->want_bid_len) {
		out->bid = b->want_bid;
		out->bid_len = b->want_bid_len;
	}
	return 0;
}
