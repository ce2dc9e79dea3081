/* SPDX-License-Identifier: MIT */
/* tool/perfconfig.h - perf's configuration files: see tool/perfconfig.c. */
#ifndef PK_TOOL_PERFCONFIG_H
#define PK_TOOL_PERFCONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct tool_cfg_entry {
	char *key;      /* "section.name" or "section.sub.name", section and name lower case */
	char *value;
	int line;       /* in its file */
};
struct tool_cfg {
	struct tool_cfg_entry *v;
	size_t n, cap;
};

/* Add the entries of a file's text to c. 0; -EINVAL (a line perf would not read; its
 * number in *bad_line), -E2BIG (a value or the entry count over the limits) or -ENOMEM. */
int tool_cfg_parse(struct tool_cfg *c, const char *text, size_t len, int *bad_line);
/* The same for a file (regular, at most 1 MiB): also -ENOENT, -EFBIG, ... */
int tool_cfg_read_file(struct tool_cfg *c, const char *path, int *bad_line);
void tool_cfg_free(struct tool_cfg *c);
/* Move src's entries to the end of dst (later ones win) and free src: 0, or -ENOMEM with
 * the entries not moved dropped. */
int tool_cfg_take(struct tool_cfg *dst, struct tool_cfg *src);
/* The value of key's last assignment, or NULL. */
const char *tool_cfg_get(const struct tool_cfg *c, const char *key);
/* true/yes/on/1 -> 1, false/no/off/0/"" -> 0, else -1 */
int tool_cfg_bool(const char *v);
/* Set key to value in the file at path (created if missing), keeping the rest of it: the
 * key's last line is replaced, or the key added to its section, or the section added.
 * Written to a temporary file and renamed. -EINVAL for a bad key, -EBADMSG if the file
 * does not parse, -errno. */
int tool_cfg_set_in_file(const char *path, const char *key, const char *value);

/* The configuration perfkit runs with (tool/cmd-config.c): $PERF_CONFIG alone if set,
 * else /etc/perfconfig (unless $PERF_CONFIG_NOSYSTEM) then ~/.perfconfig, loaded once;
 * a file that does not parse is reported once and left out. */
const struct tool_cfg *tool_config(void);
/* tool_cfg_get on it */
const char *tool_config_get(const char *key);

#endif
