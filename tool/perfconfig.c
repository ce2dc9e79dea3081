/* SPDX-License-Identifier: MIT */
/*
 * tool/perfconfig.c - perf's configuration files (~/.perfconfig, /etc/perfconfig, or the
 * one file $PERF_CONFIG names), git-style: "[section]" or "[section "sub"]" headers,
 * "name = value" lines ("name" alone is true), '#' and ';' comments, values trimmed or
 * double-quoted with \" \\ \n \t escapes. Keys are "section.name" or
 * "section.sub.name"; section and name compare without case, as perf's do.
 *
 * The parser (tool_cfg_parse) takes hostile text: bounded lines, values and entry counts,
 * never more than the input; tests/fuzz/fuzz_perfconfig.c runs it. Reading (the merged
 * files, later ones overriding: /etc then the user's) and writing one key back into a
 * file (tool_cfg_set_in_file, through a temporary file and rename) are below it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfconfig.h"

#define CFG_MAX_FILE (1u << 20)  /* a bigger file is not a configuration */
#define CFG_MAX_KEY 256
#define CFG_MAX_VALUE 4096
#define CFG_MAX_ENTRIES 4096

void tool_cfg_free(struct tool_cfg *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].key);
		free(c->v[i].value);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* room for one more entry, c holding at most max: 0, -E2BIG or -ENOMEM */
static int cfg_grow(struct tool_cfg *c, size_t max)
{
	if (c->n >= max)
		return -E2BIG;
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 16;
		struct tool_cfg_entry *v = realloc(c->v, nc * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = nc;
	}
	return 0;
}

int tool_cfg_take(struct tool_cfg *dst, struct tool_cfg *src)
{
	int r = 0;
	for (size_t i = 0; i < src->n && !(r = cfg_grow(dst, SIZE_MAX)); i++) {
		dst->v[dst->n++] = src->v[i];
		src->v[i].key = src->v[i].value = NULL;   /* moved */
	}
	tool_cfg_free(src);
	return r;
}

static int cfg_add(struct tool_cfg *c, const char *key, const char *value, int line)
{
	int r = cfg_grow(c, CFG_MAX_ENTRIES);   /* per file */
	if (r)
		return r;
	char *k = strdup(key), *val = strdup(value);
	if (!k || !val) {
		free(k);
		free(val);
		return -ENOMEM;
	}
	c->v[c->n++] = (struct tool_cfg_entry){ k, val, line };
	return 0;
}

static bool name_char(int ch)
{
	return isalnum(ch) || ch == '-' || ch == '_';
}

/* "[section]" or "[section "sub"]" at p (after the '['): the key prefix into sec */
static int parse_section(const char *p, const char *end, char *sec, size_t cap)
{
	size_t n = 0;
	while (p < end && name_char((unsigned char)*p) && n + 1 < cap)
		sec[n++] = (char)tolower((unsigned char)*p++);
	if (!n)
		return -EINVAL;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p == '"') {          /* subsection: kept as written */
		sec[n++] = '.';
		for (p++; p < end && *p != '"'; p++) {
			if (*p == '\\' && p + 1 < end)
				p++;
			if (n + 2 >= cap || *p == '\n')
				return -EINVAL;
			sec[n++] = *p;
		}
		if (p == end)
			return -EINVAL;
		p++;
	}
	if (p == end || *p != ']' || n + 2 >= cap)
		return -EINVAL;
	sec[n++] = '.';
	sec[n] = '\0';
	return 0;
}

/* the value after '=' up to end: trimmed, quotes and escapes resolved, a comment cut */
static int parse_value(const char *p, const char *end, char *out, size_t cap)
{
	size_t n = 0, keep = 0;   /* keep: length up to the last quoted or non-space char */
	bool quoted = false;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (; p < end; p++) {
		char ch = *p;
		if (!quoted && (ch == '#' || ch == ';'))
			break;
		if (ch == '"') {
			quoted = !quoted;
			keep = n;
			continue;
		}
		if (ch == '\\') {
			if (++p == end)
				return -EINVAL;
			switch (*p) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case '"': case '\\': ch = *p; break;
			default: return -EINVAL;
			}
			if (n + 1 >= cap)
				return -E2BIG;
			out[n++] = ch;
			keep = n;
			continue;
		}
		if (n + 1 >= cap)
			return -E2BIG;
		out[n++] = ch;
		if (quoted || (ch != ' ' && ch != '\t' && ch != '\r'))
			keep = n;
	}
	if (quoted)
		return -EINVAL;
	out[keep] = '\0';
	return 0;
}

int tool_cfg_parse(struct tool_cfg *c, const char *text, size_t len, int *bad_line)
{
	char sec[CFG_MAX_KEY] = "", key[2 * CFG_MAX_KEY];
	char *value = malloc(CFG_MAX_VALUE);
	int line = 0, r = 0;

	if (!value)
		return -ENOMEM;
	for (const char *p = text, *end = text + len; p < end && !r;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		line++;
		const char *s = p;
		p = eol + (eol < end);
		while (s < eol && isspace((unsigned char)*s))
			s++;
		if (s == eol || *s == '#' || *s == ';')
			continue;
		if (memchr(s, '\0', (size_t)(eol - s))) {
			r = -EINVAL;
			break;
		}
		if (*s == '[') {
			r = parse_section(s + 1, eol, sec, sizeof(sec));
			continue;
		}
		if (!sec[0] || !isalpha((unsigned char)*s)) {   /* a variable outside a section */
			r = -EINVAL;
			break;
		}
		size_t n = strlen(sec);
		memcpy(key, sec, n);
		while (s < eol && name_char((unsigned char)*s) && n + 1 < sizeof(key))
			key[n++] = (char)tolower((unsigned char)*s++);
		key[n] = '\0';
		while (s < eol && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s == eol || *s == '#' || *s == ';') {
			r = cfg_add(c, key, "true", line);   /* "name" alone: a true boolean */
		} else if (*s == '=') {
			r = parse_value(s + 1, eol, value, CFG_MAX_VALUE);
			if (!r)
				r = cfg_add(c, key, value, line);
		} else {
			r = -EINVAL;
		}
	}
	free(value);
	if (r && bad_line)
		*bad_line = line;
	return r;
}

const char *tool_cfg_get(const struct tool_cfg *c, const char *key)
{
	for (size_t i = c->n; i-- > 0;)   /* the last one wins, as in perf and git */
		if (!strcasecmp(c->v[i].key, key))
			return c->v[i].value;
	return NULL;
}

int tool_cfg_bool(const char *v)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0", "" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcasecmp(v, yes[i]))
			return 1;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcasecmp(v, no[i]))
			return 0;
	return -1;
}

/* The whole of a regular file of at most CFG_MAX_FILE bytes: 0, -ENOENT, -EFBIG, ... */
static int slurp(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (st.st_size > (off_t)CFG_MAX_FILE) {
		close(fd);
		return -EFBIG;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	ssize_t got = 0;
	while (buf && n < (size_t)st.st_size &&
	       (got = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)got;
	close(fd);
	if (!buf || got < 0) {
		free(buf);
		return buf ? -EIO : -ENOMEM;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

int tool_cfg_read_file(struct tool_cfg *c, const char *path, int *bad_line)
{
	char *text;
	size_t len;
	int r = slurp(path, &text, &len);
	if (r)
		return r;
	r = tool_cfg_parse(c, text, len, bad_line);
	free(text);
	return r;
}

/* Split "a.b.c" into section "a", subsection "b" (or none) and name "c". */
static int split_key(const char *key, char *sec, char *sub, char *name, size_t cap)
{
	const char *d1 = strchr(key, '.'), *d2 = strrchr(key, '.');
	if (!d1 || d1 == key || !d2[1] || (size_t)(d1 - key) >= cap || strlen(d2 + 1) >= cap)
		return -EINVAL;
	memcpy(sec, key, (size_t)(d1 - key));
	sec[d1 - key] = '\0';
	sub[0] = '\0';
	if (d2 != d1) {
		if ((size_t)(d2 - d1 - 1) >= cap)
			return -EINVAL;
		memcpy(sub, d1 + 1, (size_t)(d2 - d1 - 1));
		sub[d2 - d1 - 1] = '\0';
	}
	strcpy(name, d2 + 1);
	for (const char *s = sec; *s; s++)
		if (!name_char((unsigned char)*s))
			return -EINVAL;
	for (const char *s = name; *s; s++)
		if (!name_char((unsigned char)*s))
			return -EINVAL;
	return isalpha((unsigned char)name[0]) ? 0 : -EINVAL;
}

/* value as the file holds it: quoted when it has spaces at its ends or special chars */
static void put_value(FILE *f, const char *v)
{
	bool quote = !*v || v[0] == ' ' || v[strlen(v) - 1] == ' ' || strpbrk(v, "#;\"\\\n\t");
	if (!quote) {
		fputs(v, f);
		return;
	}
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else if (*v == '\t')
			fputs("\\t", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

int tool_cfg_set_in_file(const char *path, const char *key, const char *value)
{
	char sec[CFG_MAX_KEY], sub[CFG_MAX_KEY], name[CFG_MAX_KEY], want[3 * CFG_MAX_KEY];
	char *text = NULL;
	size_t len = 0;
	int r = split_key(key, sec, sub, name, sizeof(sec));
	if (r)
		return r;
	snprintf(want, sizeof(want), "%s.%s%s%s", sec, sub, sub[0] ? "." : "", name);
	r = slurp(path, &text, &len);
	if (r == -ENOENT) {
		text = strdup("");
		r = text ? 0 : -ENOMEM;
	}
	if (r)
		return r;
	/* the file must parse: we edit what we understand only */
	struct tool_cfg c = { 0 };
	int bad = 0;
	r = tool_cfg_parse(&c, text, len, &bad);
	/* where the key's last assignment is, and the last line of its section */
	int key_line = 0;
	for (size_t i = 0; !r && i < c.n; i++)
		if (!strcasecmp(c.v[i].key, want))
			key_line = c.v[i].line;
	tool_cfg_free(&c);
	if (r) {
		free(text);
		return -EBADMSG;
	}
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp)) {
		free(text);
		return -ENAMETOOLONG;
	}
	int fd = mkstemp(tmp);
	if (fd < 0) {
		free(text);
		return -errno;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		free(text);
		return -ENOMEM;
	}
	int line = 0, sec_end = 0;
	bool in_sec = false, done = false;
	char hdr[CFG_MAX_KEY], prefix[2 * CFG_MAX_KEY + 2];   /* "sec." or "sec.sub." */
	snprintf(prefix, sizeof(prefix), "%s.%s%s", sec, sub, sub[0] ? "." : "");
	/* pass 1: the last line of the wanted section (to append the key there) */
	for (const char *p = text, *end = text + len; p < end && !key_line;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		eol = eol ? eol : end;
		line++;
		const char *s = p;
		while (s < eol && isspace((unsigned char)*s))
			s++;
		if (s < eol && *s == '[') {
			in_sec = !parse_section(s + 1, eol, hdr, sizeof(hdr)) &&
				 !strcasecmp(hdr, prefix);
		} else if (in_sec && s < eol) {
			sec_end = line;
		}
		if (in_sec && !sec_end)
			sec_end = line;
		p = eol + (eol < end);
	}
	line = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		eol = eol ? eol : end;
		line++;
		if (line == key_line) {
			fprintf(f, "\t%s = ", name);
			put_value(f, value);
			fputc('\n', f);
			done = true;
		} else {
			fwrite(p, 1, (size_t)(eol - p), f);
			fputc('\n', f);
		}
		if (line == sec_end && !done) {
			fprintf(f, "\t%s = ", name);
			put_value(f, value);
			fputc('\n', f);
			done = true;
		}
		p = eol + (eol < end);
	}
	if (!done) {
		if (sub[0])
			fprintf(f, "[%s \"%s\"]\n", sec, sub);
		else
			fprintf(f, "[%s]\n", sec);
		fprintf(f, "\t%s = ", name);
		put_value(f, value);
		fputc('\n', f);
	}
	free(text);
	struct stat st;
	if (!stat(path, &st))
		fchmod(fd, st.st_mode & 07777);
	r = fflush(f) || fsync(fd) ? -errno : 0;
	if (fclose(f) && !r)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}
