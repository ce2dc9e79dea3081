/* SPDX-License-Identifier: MIT */
/*
 * perfkit annotate's source lines: what perf annotate 6.1 shows between the instructions
 * of a symbol, which is what `objdump -l -S` prints for that symbol alone. objdump asks,
 * at every instruction, for the address's function (the innermost one, inlined or not),
 * source file and line; a function other than the last is announced ("mix():"), and a
 * line other than the last one shown of that file brings its text, together with the
 * lines before it not shown yet (up to five, never lines already shown). perf drops
 * objdump's "file:line" lines and trims each source line. Line tables come through the
 * library (pk_dso__srcline, pk_dso__inline_names: the CUs of the annotated code only),
 * the text through its bounded pk_source_cache.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "annotate-src.h"
#include "builtin.h"

#define ANN_SRC_CONTEXT 5       /* objdump's lines of context before a line */
#define ANN_SRC_TEXT_MAX 1024   /* longer source lines are cut (with "...") */

struct src_state {
	const char *path;
	unsigned int max_printed, last_line;
};

struct ann_src {
	struct pk_source_cache *cache;
	struct pk_dso *dso;
	const char *sym;
	char *prev_func;        /* the function named last (a copy: names have no length limit) */
	bool have_prev_func;
	bool no_dwarf;          /* the symbol's start lies in no DWARF unit */
	struct src_state *files;
	size_t nr_files, cap_files;
	char **warned;          /* files whose unreadability was reported */
	size_t nr_warned;
	bool quiet;             /* ann_src_quiet: warnings kept in first_warning */
	char first_warning[600];
};

struct ann_src *ann_src_new(void)
{
	struct ann_src *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cache = pk_source_cache__new(NULL);
	if (!s->cache) {
		free(s);
		return NULL;
	}
	return s;
}

void ann_src_free(struct ann_src *s)
{
	if (!s)
		return;
	pk_source_cache__free(s->cache);
	free(s->prev_func);
	for (size_t i = 0; i < s->nr_warned; i++)
		free(s->warned[i]);
	free(s->warned);
	free(s->files);
	free(s);
}

void ann_src_symbol(struct ann_src *s, struct pk_dso *dso, const char *sym_name, uint64_t start)
{
	s->dso = dso;
	s->sym = sym_name;
	s->have_prev_func = false;
	s->nr_files = 0;
	/* code without DWARF (most of a system's libraries) has no source lines to show: its
	 * instructions are not looked up one by one (the library's symbol table fallback
	 * would give line 0 to each, after building a table of the whole symbol table) */
	const struct pk_inline_frame *fr;
	s->no_dwarf = pk_dso__inline_names(dso, start, &fr) == -ENOENT;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

/* perf's presentation of a source line: trimmed, tabs to 8-column stops; control bytes
 * (the file is not ours) shown as '?', and a very long line cut */
static void src_text(char *dst, size_t cap, const char *p, size_t len)
{
	while (len && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) {
		p++;
		len--;
	}
	while (len && (p[len - 1] == ' ' || (p[len - 1] >= '\t' && p[len - 1] <= '\r')))
		len--;
	size_t n = 0, lim = cap - 4 < ANN_SRC_TEXT_MAX ? cap - 4 : ANN_SRC_TEXT_MAX;
	for (size_t i = 0; i < len; i++) {
		if (n >= lim) {
			memcpy(dst + n, "...", 3);
			n += 3;
			break;
		}
		unsigned char ch = (unsigned char)p[i];
		if (ch == '\t') {
			do
				dst[n++] = ' ';
			while (n % 8 && n < lim);
		} else {
			dst[n++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
		}
	}
	dst[n] = 0;
}

static struct src_state *src_state_of(struct ann_src *s, const char *path)
{
	for (size_t i = 0; i < s->nr_files; i++)
		if (s->files[i].path == path || !strcmp(s->files[i].path, path))
			return &s->files[i];
	if (s->nr_files == s->cap_files) {
		size_t nc = s->cap_files ? s->cap_files * 2 : 8;
		void *n = realloc(s->files, nc * sizeof(*s->files));
		if (!n)
			return NULL;
		s->files = n;
		s->cap_files = nc;
	}
	s->files[s->nr_files] = (struct src_state){ .path = path };
	return &s->files[s->nr_files++];
}

/* say once per file why its lines are not shown */
static void src_warn(struct ann_src *s, const char *path, int err)
{
	for (size_t i = 0; i < s->nr_warned; i++)
		if (!strcmp(s->warned[i], path))
			return;
	char **n = realloc(s->warned, (s->nr_warned + 1) * sizeof(*n));
	if (!n)
		return;
	s->warned = n;
	if (!(n[s->nr_warned] = strdup(path)))
		return;
	s->nr_warned++;
	const char *why = err == -EFBIG ? "larger than 16 MiB"
			  : err == -EINVAL ? "not a regular file" : pk_strerror(err);
	if (s->quiet) {
		if (!s->first_warning[0])
			snprintf(s->first_warning, sizeof(s->first_warning),
				 "cannot read source file '%.400s': %s (its lines are shown as "
				 "file:line)", path, why);
		return;
	}
	tool_warn("cannot read source file '%s': %s (its lines are shown as file:line; "
		  "annotate where the source tree of the build is, or use --no-source)", path, why);
}

void ann_src_quiet(struct ann_src *s)
{
	s->quiet = true;
}

const char *ann_src_first_warning(const struct ann_src *s)
{
	return s->first_warning[0] ? s->first_warning : NULL;
}

int ann_src_before(struct ann_src *s, uint64_t addr, struct ann_src_line *out)
{
	int n = 0;
	const struct pk_inline_frame *fr = NULL;
	const char *func = s->sym;
	if (s->no_dwarf) {
		if (!s->have_prev_func && func) {
			out[0] = (struct ann_src_line){ .kind = ANN_SRC_FUNC };
			snprintf(out[0].text, sizeof(out[0].text), "%.1000s%s:", func,
				 strchr(func, '(') ? "" : "()");
			s->have_prev_func = true;
			return 1;
		}
		return 0;
	}
	if (pk_dso__inline_names(s->dso, addr, &fr) > 0 && fr[0].func && strcmp(fr[0].func, "??"))
		func = fr[0].func;
	if (func && (!s->have_prev_func || strcmp(func, s->prev_func))) {
		/* a demangled C++ name carries its parameters; objdump adds "()" otherwise */
		out[n] = (struct ann_src_line){ .kind = ANN_SRC_FUNC };
		snprintf(out[n].text, sizeof(out[n].text), "%.1000s%s:", func,
			 strchr(func, '(') ? "" : "()");
		n++;
		char *copy = strdup(func);
		if (copy) {
			free(s->prev_func);
			s->prev_func = copy;
		}
		s->have_prev_func = copy || s->prev_func;
	}
	const char *file = NULL;
	unsigned int line = 0;
	if (pk_dso__srcline(s->dso, addr, &file, &line) || !file || !*file || !line)
		return n;
	struct src_state *st = src_state_of(s, file);
	if (!st || line == st->last_line)
		return n;
	st->last_line = line;
	/* a relative name is relative to the unit's compilation directory (as binutils
	 * reads it), never to ours */
	char joined[4096];
	const char *path = file;
	if (file[0] != '/') {
		const char *dir = pk_dso__comp_dir(s->dso, addr);
		if (dir && snprintf(joined, sizeof(joined), "%s/%s", dir, file) < (int)sizeof(joined))
			path = joined;
	}
	size_t nr = 0;
	int err = path[0] == '/' ? pk_source_cache__lines(s->cache, path, &nr) : -ENOENT;
	if (err) {
		src_warn(s, path, err);
		out[n] = (struct ann_src_line){ .kind = ANN_SRC_LOC, .file = file, .line = line };
		snprintf(out[n].text, sizeof(out[n].text), "%.1000s:%u", base_name(file), line);
		return n + 1;
	}
	/* objdump's range: up to five lines before, none shown already */
	unsigned int l = line - ANN_SRC_CONTEXT;
	if (l >= line)
		l = 1;
	if (st->max_printed >= l)
		l = st->max_printed < line ? st->max_printed + 1 : line;
	if (!l)
		l = 1;
	for (unsigned int k = l; k <= line && k <= nr; k++) {
		const char *t;
		size_t len;
		if (pk_source_cache__line(s->cache, path, k, &t, &len))
			break;
		out[n] = (struct ann_src_line){ .kind = ANN_SRC_TEXT, .file = file, .line = k };
		src_text(out[n].text, sizeof(out[n].text), t, len);
		n++;
	}
	if (line > nr) {
		/* the file changed since the build (or the table is corrupt) */
		out[n] = (struct ann_src_line){ .kind = ANN_SRC_LOC, .file = file, .line = line };
		snprintf(out[n].text, sizeof(out[n].text), "%.900s:%u (past the end of the file, "
			 "%zu lines)", base_name(file), line, nr);
		n++;
	}
	if (st->max_printed < line)
		st->max_printed = line;
	return n;
}

int ann_src_addr_width(uint64_t start, uint64_t size)
{
	uint64_t last = start + (size ? size - 1 : 0);
	int w = 1;
	while (last >>= 4)
		w++;
	return w;
}

void ann_src_format(char *buf, size_t len, const struct ann_src_line *l, int addr_width)
{
	if (l->kind == ANN_SRC_TEXT && !l->text[0])
		snprintf(buf, len, "         :");
	else if (l->kind == ANN_SRC_TEXT)
		snprintf(buf, len, "         : %-*u %s", addr_width, l->line, l->text);
	else
		snprintf(buf, len, "         : %*s %s", addr_width, "", l->text);
}

void ann_src_srcline(struct pk_dso *dso, const char *dso_name, uint64_t addr, char *buf,
		     size_t len)
{
	const char *file = NULL;
	unsigned int line = 0;
	int err = pk_dso__srcline(dso, addr, &file, &line);
	if (!err && file)
		snprintf(buf, len, "%s:%u", base_name(file), line);
	else if (err == -ENODATA)
		snprintf(buf, len, "??:0");
	else
		snprintf(buf, len, "%s[%" PRIx64 "]", base_name(dso_name), addr);
}

char *ann_insn_text(const struct pk_annotate_insn *in, bool pad, char *buf, size_t cap)
{
	const char *ops = in->operands ? in->operands : "";
	const char *fmt = !*ops ? "%s%s" : pad ? "%-6s %s" : "%s %s";
	int n = snprintf(buf, cap, fmt, in->mnemonic, ops);
	if (n < 0)
		return NULL;
	if ((size_t)n < cap)
		return buf;
	char *b = malloc((size_t)n + 1);
	if (b)
		snprintf(b, (size_t)n + 1, fmt, in->mnemonic, ops);
	return b;
}
