/* SPDX-License-Identifier: MIT */
/*
 * tool/browser-annotate.c - the annotate view of the browser (`a` in top and report):
 * the lines of `perfkit annotate --stdio` (each instruction's share, its address and
 * text, and the source lines between them, built by tool/hist-snap.c with the code
 * annotate --stdio uses), a selection that starts on the hottest instruction, `s` to
 * hide or show the source lines, `H` back to the hottest instruction and Tab / Shift-Tab
 * through the hot instructions, as in perf's annotate browser. Colours are --stdio-color's: the share red from 5 %, green above
 * 0.5 % (perf's colors.top / colors.medium), the address magenta (colors.addr), the
 * instruction blue.
 */
#include <inttypes.h>
#include <ncurses.h>
#include <stdio.h>
#include <string.h>
#include "browser-annotate.h"
#include "browser-colors.h"
#include "top.h"

void ann_view_reset(struct ann_view *v)
{
	v->sel = v->first = 0;
	v->placed = false;
}

static bool shown(const struct ann_view *v, const struct top_ann *a, long i)
{
	return !(v->hide_src && a->lines[i].src);
}

/* the position of line i among the lines shown */
static long pos_of(const struct ann_view *v, const struct top_ann *a, long i)
{
	long p = 0;
	for (long k = 0; k < i && k < (long)a->nr; k++)
		p += shown(v, a, k);
	return p;
}

static long nr_shown(const struct ann_view *v, const struct top_ann *a)
{
	return pos_of(v, a, (long)a->nr);
}

/* the line shown n lines after (n < 0: before) line i, stopping at the ends */
static long step(const struct ann_view *v, const struct top_ann *a, long i, long n)
{
	long last = i;
	for (long k = i; n && k >= 0 && k < (long)a->nr; k += n > 0 ? 1 : -1) {
		if (k == i || !shown(v, a, k))
			continue;
		last = k;
		n += n > 0 ? -1 : 1;
	}
	return last;
}

/* the selection on a line shown: a hidden source line gives way to its instruction */
static void fix_sel(struct ann_view *v, const struct top_ann *a)
{
	if (v->sel >= (long)a->nr)
		v->sel = (long)a->nr - 1;
	if (v->sel < 0)
		v->sel = 0;
	while (v->sel + 1 < (long)a->nr && !shown(v, a, v->sel))
		v->sel++;
	while (v->sel > 0 && !shown(v, a, v->sel))
		v->sel--;
}

static long hottest(const struct top_ann *a)
{
	long h = -1;
	for (long i = 0; i < (long)a->nr; i++)
		if (!a->lines[i].src && (h < 0 || a->lines[i].samples > a->lines[h].samples))
			h = i;
	return h < 0 ? 0 : h;
}

/* the selection on the hottest instruction, a third down the screen */
static void go_hottest(struct ann_view *v, const struct top_ann *a)
{
	v->sel = hottest(a);
	v->first = pos_of(v, a, v->sel) - (LINES - 3) / 3;
	v->placed = true;
}

/* Tab / Shift-Tab: the next (dir 1) or previous (-1) instruction with samples in the
 * order of their counts, hottest first, from the selected one (perf's cycle through the
 * hot instructions); wraps around */
static void cycle_hot(struct ann_view *v, const struct top_ann *a, int dir)
{
	const struct top_ann_line *c = &a->lines[v->sel];
	long best = -1;
	/* "before" in that order: more samples, or as many at a lower address */
#define HOTTER(x, y) ((x)->samples > (y)->samples || \
		      ((x)->samples == (y)->samples && (x)->addr < (y)->addr))
	/* (from a line without a rank, Tab goes to the hottest, Shift-Tab the coldest) */
	for (long i = 0; !c->src && c->samples && i < (long)a->nr; i++) {
		const struct top_ann_line *l = &a->lines[i];
		if (l->src || !l->samples || i == v->sel || !(dir > 0 ? HOTTER(c, l) : HOTTER(l, c)))
			continue;
		if (best < 0 || (dir > 0 ? HOTTER(l, &a->lines[best]) : HOTTER(&a->lines[best], l)))
			best = i;
	}
	if (best < 0) { /* wrap: the hottest (Tab) or the coldest with samples (Shift-Tab) */
		for (long i = 0; i < (long)a->nr; i++) {
			const struct top_ann_line *l = &a->lines[i];
			if (!l->src && l->samples && (best < 0 || (dir > 0 ? HOTTER(l, &a->lines[best])
									: HOTTER(&a->lines[best], l))))
				best = i;
		}
	}
#undef HOTTER
	if (best >= 0)
		v->sel = best;
}

bool ann_view_key(struct ann_view *v, const struct top_ann *a, int ch)
{
	long page = LINES > 4 ? LINES - 4 : 1;
	if (!a || !a->nr)
		return ch == KEY_UP || ch == KEY_DOWN || ch == KEY_PPAGE || ch == KEY_NPAGE ||
		       ch == KEY_HOME || ch == KEY_END || ch == 's' || ch == 'H' || ch == '\t' ||
		       ch == KEY_BTAB;
	fix_sel(v, a);
	switch (ch) {
	case KEY_UP: v->sel = step(v, a, v->sel, -1); break;
	case KEY_DOWN: v->sel = step(v, a, v->sel, 1); break;
	case KEY_PPAGE: v->sel = step(v, a, v->sel, -page); v->first -= page; break;
	case KEY_NPAGE: v->sel = step(v, a, v->sel, page); v->first += page; break;
	case KEY_HOME: v->sel = 0; break;
	case KEY_END: v->sel = (long)a->nr - 1; break;
	case 'H': go_hottest(v, a); return true;
	case '\t': cycle_hot(v, a, 1); break;
	case KEY_BTAB: cycle_hot(v, a, -1); break;
	case 's': {
		/* the selected line stays on its row (a source line selected gives way to the
		 * instruction after it) */
		long row = pos_of(v, a, v->sel) - v->first;
		v->hide_src = !v->hide_src;
		fix_sel(v, a);
		v->first = pos_of(v, a, v->sel) - row;
		break;
	}
	default: return false;
	}
	v->placed = true;
	return true;
}

void ann_view_draw(struct ann_view *v, const struct top_ann *a, bool live)
{
	char line[1200];  /* a source line (ANN_SRC_LINE_MAX) or an instruction's */
	move(2, 0);
	clrtoeol();
	if (!a) {
		mvaddnstr(3, 2, live ? "collecting samples for annotate..." : "annotating...", COLS - 2);
		return;
	}
	snprintf(line, sizeof(line), "Annotate %s (%s): %" PRIu64 " %s   %sh: help  Esc/q: back",
		 a->sym, a->dso, a->total, live ? "samples (decayed)" : "period",
		 !a->has_src ? "" : v->hide_src ? "s: show source  " : "s: hide source  ");
	attron(A_BOLD);
	mvaddnstr(2, 0, line, COLS);
	attroff(A_BOLD);
	if (a->error) {
		/* its lines (the kernel's: per cause, and the fix), a long one wrapped */
		const char *p = a->error;
		int w = COLS > 8 ? COLS - 4 : 4;
		for (int y = 4, x = 2; *p && y < LINES; y++) {
			size_t n = strcspn(p, "\n"), k = n < (size_t)w ? n : (size_t)w;
			mvaddnstr(y, x, p, (int)k);
			p += k;
			x = k < n ? 4 : 2;
			if (*p == '\n')
				p++;
		}
		return;
	}
	if (a->note) { /* in place of the help line */
		move(1, 0);
		clrtoeol();
		mvaddnstr(1, 0, a->note, COLS);
	}
	if (!a->nr)
		return;
	long avail = LINES - 3 > 1 ? LINES - 3 : 1;
	if (!v->placed && a->total)
		go_hottest(v, a);
	fix_sel(v, a);
	long p = pos_of(v, a, v->sel), n = nr_shown(v, a);
	if (p < v->first)
		v->first = p;
	if (p >= v->first + avail)
		v->first = p - avail + 1;
	if (v->first > n - avail)
		v->first = n - avail;
	if (v->first < 0)
		v->first = 0;
	long i = 0;
	for (long k = 0; i < (long)a->nr; i++)
		if (shown(v, a, i) && k++ == v->first)
			break;
	for (int y = 3; i < (long)a->nr && y < LINES; i++) {
		const struct top_ann_line *l = &a->lines[i];
		if (!shown(v, a, i))
			continue;
		double pct = a->total ? 100.0 * (double)l->samples / (double)a->total : 0;
		if (l->src)
			snprintf(line, sizeof(line), "%s", l->text);
		else
			snprintf(line, sizeof(line), "%8.2f : %s", pct, l->text);
		bool sel = i == v->sel;
		if (sel) {
			attron(tui_color_attr(TUI_COL_SELECTED));
			mvhline(y, 0, ' ', COLS);
		}
		mvaddnstr(y, 0, line, COLS);
		if (sel) {
			attroff(tui_color_attr(TUI_COL_SELECTED));
		} else if (!l->src) {
			/* --stdio-color's: the share, the address, the instruction */
			int addr_end = 11 + (int)strcspn(l->text, ":") + 1;
			if (l->samples)
				tui_recolor(y, 0, 8, tui_percent_color(pct));
			tui_recolor(y, 11, addr_end - 11, TUI_COL_ADDR);
			tui_recolor(y, addr_end, -1, TUI_COL_INSN);
		}
		y++;
	}
}
