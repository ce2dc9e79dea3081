/* SPDX-License-Identifier: MIT */
/*
 * tool/buildid-hits.c - the objects a recording's samples hit (tool/buildid.h): one pass
 * of the session, each sample's address (and call chain, for archive) resolved to its map.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "buildid.h"

struct hits_ctx {
	struct tool_hits *h;
	struct pk_machine *m;
	bool callchains;
	const struct pk_dso *last;  /* the DSO of the last address noted (most repeat it) */
	struct pk_chain_entry chain[512];
	int err;
};

static bool hits_find(const struct tool_hits *h, const char *name)
{
	for (size_t i = 0; i < h->nr; i++)
		if (!strcmp(h->names[i], name))
			return true;
	return false;
}

/* append a copy of name to the array *v (*nr used of *cap); false without memory */
static bool strv_add(char ***v, size_t *nr, size_t *cap, const char *name)
{
	if (*nr == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		char **n = realloc(*v, ncap * sizeof(*n));
		if (!n)
			return false;
		*v = n;
		*cap = ncap;
	}
	if (!((*v)[*nr] = strdup(name)))
		return false;
	(*nr)++;
	return true;
}

static void note(struct hits_ctx *c, uint32_t pid, uint32_t tid, uint64_t ip, uint8_t mode)
{
	struct pk_addr_loc loc;
	if (pk_machine__resolve(c->m, pid, tid, ip, mode, &loc) == -ENOENT || !loc.dso)
		return;
	if (loc.dso == c->last)
		return;
	c->last = loc.dso;
	struct tool_hits *h = c->h;
	if (!hits_find(h, loc.dso_name) && !strv_add(&h->names, &h->nr, &h->cap, loc.dso_name))
		c->err = -ENOMEM;
}

static int on_mmap(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct hits_ctx *c = ctx;
	(void)ev;
	if (!r)
		return 0;
	const char *fn = r->type == PERF_RECORD_MMAP ? r->mmap.filename : r->mmap2.filename;
	if (r->type == PERF_RECORD_MMAP && r->mmap.data)
		return 0;
	struct tool_hits *h = c->h;
	if (!fn || (fn[0] != '/' && fn[0] != '[') || r->cpumode == PK_CPUMODE_KERNEL)
		return 0;
	for (size_t i = 0; i < h->nr_mapped; i++)
		if (!strcmp(h->mapped[i], fn))
			return 0;
	return strv_add(&h->mapped, &h->nr_mapped, &h->cap_mapped, fn) ? 0 : -ENOMEM;
}

static int on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct hits_ctx *c = ctx;
	(void)ev;
	if (!r)
		return 0;
	const struct pk_sample *s = &r->sample;
	c->h->samples++;
	if (!c->callchains) {
		note(c, s->pid, s->tid, s->ip, s->cpumode);
		return c->err;
	}
	int n = pk_machine__callchain(c->m, s, c->chain, sizeof(c->chain) / sizeof(c->chain[0]));
	if (!n) /* a corrupted chain, dropped: the sampled location still is a hit */
		note(c, s->pid, s->tid, s->ip, s->cpumode);
	for (int i = 0; i < n; i++)
		note(c, s->pid, s->tid, c->chain[i].ip, c->chain[i].cpumode);
	return c->err;
}

int tool_hits_collect(struct pk_data_reader *r, bool callchains, struct tool_hits *h)
{
	/* resolving loads symbol tables; a stripped object's debug file is not needed to
	 * know it was hit */
	tool_set_no_debuginfod(true);
	/* what symbols loading says (a rebuilt object's build-id mismatch) is no concern of
	 * a list of hits: the library's warnings are off meanwhile (-v keeps them) */
	PK_OPTS(pk_session_opts, so, .reader_thread = tool_threads_allowed(),
		.machine_opts = tool_machine_opts());
	struct pk_session *ses = pk_session__new(r, &so);
	if (!ses)
		return -errno;
	struct hits_ctx *c = calloc(1, sizeof(*c));
	if (!c) {
		pk_session__free(ses);
		return -ENOMEM;
	}
	if (!h->verbose)
		pk_set_log(NULL, NULL, PK_LOG_ERROR);
	c->h = h;
	c->m = pk_session__machine(ses);
	c->callchains = callchains;
	PK_OPTS(pk_session_ops, ops, .sample = on_sample, .mmap = h->mmap_order ? on_mmap : NULL);
	int err = pk_session__process(ses, &ops, c);
	if (!err)
		err = c->err;
	free(c);
	pk_session__free(ses);
	tool_setup_log(h->verbose);
	return err < 0 ? err : 0;
}

/* "[name]" of a kernel module's path (/lib/modules/.../ext4.ko.xz -> [ext4]; '-' -> '_'
 * as the kernel names modules) */
static void module_name(const char *path, char *buf, size_t len)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strcspn(b, ".");
	snprintf(buf, len, "[%.*s]", (int)n, b);
	for (char *p = buf; *p; p++)
		if (*p == '-')
			*p = '_';
}

bool tool_hits_name(const struct tool_hits *h, const char *name)
{
	return hits_find(h, name);
}

bool tool_hits_has(const struct tool_hits *h, const struct pk_data_build_id *b)
{
	if (!b->filename)
		return false;
	if (hits_find(h, b->filename))
		return true;
	if (b->cpumode == PK_CPUMODE_KERNEL && b->filename[0] == '/') {
		char mod[256];
		module_name(b->filename, mod, sizeof(mod));
		return hits_find(h, mod);
	}
	return false;
}

void tool_hits_free(struct tool_hits *h)
{
	for (size_t i = 0; i < h->nr; i++)
		free(h->names[i]);
	free(h->names);
	for (size_t i = 0; i < h->nr_mapped; i++)
		free(h->mapped[i]);
	free(h->mapped);
	memset(h, 0, sizeof(*h));
}

void tool_build_id_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * len] = '\0';
}
