/* SPDX-License-Identifier: MIT */
/*
 * tool/browser-colors.c - the colours of the terminal browser (top, report): perf's
 * colour sets and its `colors.*` configuration keys.
 *
 * Each set is "FG, BG" with perf's (S-Lang's) colour names: default, black, red, green,
 * brown, blue, magenta, cyan, lightgray, gray, brightred, brightgreen, yellow,
 * brightblue, brightmagenta, brightcyan, white. Sets and their defaults, as perf 6.1:
 *   colors.top          red, default       a share of 5 % or more
 *   colors.medium       green, default     above 0.5 %
 *   colors.normal       default, default   the rest
 *   colors.selected     black, yellow      the selected row
 *   colors.jump_arrows  blue, default      (read; the annotate view does not use it yet)
 *   colors.addr         magenta, default   an address in the annotate view
 *   colors.root         white, blue        the title line
 * A value that does not parse keeps the default. No colours when the terminal has none
 * or color.ui is "never"; then the selected row and the title are reversed.
 */
#include <ncurses.h>
#include <stdbool.h>
#include <string.h>
#include "browser-colors.h"
#include "perfconfig.h"

static const char *const color_names[] = {
	"black", "red", "green", "brown", "blue", "magenta", "cyan", "lightgray",
	"gray", "brightred", "brightgreen", "yellow", "brightblue", "brightmagenta",
	"brightcyan", "white",
};

static const struct {
	const char *key, *fg, *bg;
} sets[TUI_COL__MAX] = {
	[TUI_COL_TOP] = { "colors.top", "red", "default" },
	[TUI_COL_MEDIUM] = { "colors.medium", "green", "default" },
	[TUI_COL_NORMAL] = { "colors.normal", "default", "default" },
	[TUI_COL_SELECTED] = { "colors.selected", "black", "yellow" },
	[TUI_COL_JUMP_ARROWS] = { "colors.jump_arrows", "blue", "default" },
	[TUI_COL_ADDR] = { "colors.addr", "magenta", "default" },
	[TUI_COL_ROOT] = { "colors.root", "white", "blue" },
	[TUI_COL_INSN] = { NULL, "blue", "default" }, /* no key: annotate --stdio-color's */
};

static bool enabled;

/* one colour name of s[0..len) (blanks around it allowed): 0..15, -1 for default, -2 bad */
static int color_number(const char *s, size_t len)
{
	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len == 7 && !strncmp(s, "default", 7))
		return -1;
	for (int i = 0; i < (int)(sizeof(color_names) / sizeof(color_names[0])); i++)
		if (strlen(color_names[i]) == len && !strncmp(s, color_names[i], len))
			return i;
	return -2;
}

int tui_color_parse(const char *v, int *fg, int *bg)
{
	const char *comma = v ? strchr(v, ',') : NULL;
	if (!comma || strchr(comma + 1, ','))
		return -1;
	int f = color_number(v, (size_t)(comma - v)), b = color_number(comma + 1, strlen(comma + 1));
	if (f == -2 || b == -2)
		return -1;
	*fg = f;
	*bg = b;
	return 0;
}

/* a terminal with 8 colours shows the bright ones as their dim halves */
static short on_terminal(int c)
{
	return (short)(c >= 8 && COLORS < 16 ? c - 8 : c);
}

void tui_colors_init(void)
{
	const char *ui = tool_config_get("color.ui");
	enabled = false;
	if ((ui && (!strcmp(ui, "never") || !strcmp(ui, "false") || !strcmp(ui, "no"))) ||
	    !has_colors() || start_color() == ERR)
		return;
	use_default_colors();
	for (int i = 0; i < TUI_COL__MAX; i++) {
		int fg, bg;
		if (!sets[i].key || tui_color_parse(tool_config_get(sets[i].key), &fg, &bg)) {
			fg = color_number(sets[i].fg, strlen(sets[i].fg));
			bg = color_number(sets[i].bg, strlen(sets[i].bg));
		}
		init_pair((short)(i + 1), on_terminal(fg), on_terminal(bg));
	}
	enabled = true;
}

int tui_color_attr(enum tui_color c)
{
	if (enabled)
		return COLOR_PAIR(c + 1);
	return c == TUI_COL_SELECTED || c == TUI_COL_ROOT ? A_REVERSE : A_NORMAL;
}

void tui_recolor(int y, int x, int n, enum tui_color c)
{
	if (enabled)
		mvchgat(y, x, n, A_NORMAL, (short)(c + 1), NULL);
	else if (c == TUI_COL_SELECTED || c == TUI_COL_ROOT)
		mvchgat(y, x, n, A_REVERSE, 0, NULL);
}

enum tui_color tui_percent_color(double pct)
{
	return pct >= 5.0 ? TUI_COL_TOP : pct > 0.5 ? TUI_COL_MEDIUM : TUI_COL_NORMAL;
}
