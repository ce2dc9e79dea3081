/* SPDX-License-Identifier: MIT */
/* tool/browser-colors.h - colours of the terminal browser (browser-colors.c) */
#ifndef PK_TOOL_BROWSER_COLORS_H
#define PK_TOOL_BROWSER_COLORS_H

enum tui_color {
	TUI_COL_TOP, TUI_COL_MEDIUM, TUI_COL_NORMAL, TUI_COL_SELECTED,
	TUI_COL_JUMP_ARROWS, TUI_COL_ADDR, TUI_COL_ROOT,
	TUI_COL_INSN,           /* an instruction in the annotate view (--stdio-color's blue) */
	TUI_COL__MAX
};

/* after initscr(): the colour pairs from the colors.* configuration keys */
void tui_colors_init(void);
/* the attribute to attron() for a colour set (A_REVERSE for the selection and the title
 * on a terminal without colours) */
int tui_color_attr(enum tui_color c);
/* the n cells from (y, x) in colour set c (as they are, without colours) */
void tui_recolor(int y, int x, int n, enum tui_color c);
/* perf's set for a share: top from 5 %, medium above 0.5 %, else normal */
enum tui_color tui_percent_color(double pct);
/* "FG, BG" -> colour numbers (0..15, -1 default); -1 when it does not parse */
int tui_color_parse(const char *v, int *fg, int *bg);

#endif
