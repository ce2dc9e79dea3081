/* SPDX-License-Identifier: MIT */
/* lib/export/folded.c - collapsed stacks ("a;b;c N"), as flamegraph.pl and inferno read. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "export-internal.h"

struct line {
	char *text;
	uint64_t n;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* Append a frame's name to buf, sanitised: ';' -> ':', control chars -> ' ', and for
 * comm frames ' ' -> '_' (stackcollapse-perf's rule for process names). */
static size_t put_frame(char *buf, size_t at, const char *name, uint8_t kind, bool annotate)
{
	for (const char *c = name; *c; c++) {
		char ch = *c;
		if (ch == ';')
			ch = ':';
		else if ((unsigned char)ch < 0x20)
			ch = ' ';
		if (kind == PK_FRAME_COMM && ch == ' ')
			ch = '_';
		buf[at++] = ch;
	}
	if (annotate && (kind == PK_FRAME_KERNEL || kind == PK_FRAME_JIT)) {
		memcpy(buf + at, kind == PK_FRAME_KERNEL ? "_[k]" : "_[j]", 4);
		at += 4;
	}
	return at;
}

int pk_export__folded(const struct pk_profile *p, FILE *f, const struct pk_folded_opts *opts)
{
	if (!p || !f || !PK_OPTS_VALID(opts, pk_folded_opts))
		return pk_err(-EINVAL);
	int event = PK_OPTS_GET(opts, event, -1);
	enum pk_export_weight w = PK_OPTS_GET(opts, weight, PK_WEIGHT_PERIOD);
	bool annotate = PK_OPTS_GET(opts, annotate_kind, false);
	if (event >= (int)p->nr_event)
		return pk_err(-EINVAL);

	struct pk_ftree t;
	struct line *lines = NULL;
	uint32_t *path = NULL;
	size_t nr = 0;
	int err = pk_ftree_init(&t);
	if (!err)
		err = pk_ftree_add(&t, p, event, 0, w);
	if (err)
		goto out;
	lines = calloc(t.n ? t.n : 1, sizeof(*lines));
	path = malloc(((size_t)t.n + 1) * sizeof(*path));
	if (!lines || !path) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 1; i < t.n; i++) {
		if (!t.self[0][i])
			continue;
		size_t depth = 0, len = 0;
		for (uint32_t n = i; n != 0 && n != PK_NONE; n = t.parent[n]) {
			path[depth++] = n;
			len += strlen(t.name[n]) + 5;
		}
		char *text = malloc(len + 1);
		if (!text) {
			err = -ENOMEM;
			goto out;
		}
		size_t at = 0;
		for (size_t d = depth; d-- > 0;) {
			at = put_frame(text, at, t.name[path[d]], t.kind[path[d]], annotate);
			if (d)
				text[at++] = ';';
		}
		text[at] = '\0';
		lines[nr].text = text;
		lines[nr].n = t.self[0][i];
		nr++;
	}
	qsort(lines, nr, sizeof(*lines), cmp_line);
	/* different tree nodes can fold to one text after sanitising: merge neighbours */
	for (size_t i = 0; i < nr;) {
		uint64_t n = lines[i].n;
		size_t j = i + 1;
		while (j < nr && !strcmp(lines[j].text, lines[i].text))
			n += lines[j++].n;
		fprintf(f, "%s %" PRIu64 "\n", lines[i].text, n);
		i = j;
	}
	err = pk_xfinish(f);
out:
	for (size_t i = 0; i < nr; i++)
		free(lines[i].text);
	free(lines);
	free(path);
	pk_ftree_release(&t);
	return err < 0 ? pk_err(err) : 0;
}
