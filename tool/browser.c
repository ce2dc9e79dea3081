/* SPDX-License-Identifier: MIT */
/*
 * tool/browser.c - the histogram browser of `perfkit top` and `perfkit report` on a
 * terminal (ncursesw): the header, the sorted table (refreshed with every snapshot top
 * hands over), navigation, call-graph expansion, zoom into a DSO / thread / command,
 * kernel symbols on and off, decay or zero (top), perf.hist.N, help, and the annotate
 * view of the selected symbol. What it shows comes through struct browser_ops; terminal
 * handling is ncurses' alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <ncurses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "browser-annotate.h"
#include "browser-colors.h"
#include "builtin.h"
#include "top.h"

enum mode { M_TABLE, M_HELP, M_ANNOTATE };

struct tui {
	const struct top_opts *o;
	const struct browser_ops *ops;
	void *ctx;
	struct top_snap *snap;
	struct top_ann *ann;            /* the annotate view shown */
	char *ann_dso, *ann_sym;        /* and the one asked for */
	struct top_view v;
	char *zoom_dso, *zoom_comm;
	enum mode mode;
	long sel, first;                /* selected visible row, first line on screen */
	struct ann_view av;             /* where the annotate view is */
	enum mode help_back;            /* the view the help returns to */
	char **expanded;                /* keys of rows toggled from all_expanded */
	size_t nr_expanded;
	bool all_expanded;              /* E: every row expanded, C: none */
	bool zero;
	char msg[256];
};

/* a row's identity across snapshots */
static void row_id(const struct top_row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s|%s|%s|%d|%" PRIx64, r->comm ? r->comm : "", r->dso_long ? r->dso_long : "",
		 r->sym ? r->sym : "", r->tid, r->addr);
}

static bool is_expanded(const struct tui *t, const struct top_row *r)
{
	char id[1024];
	if (!r->nr_cc)
		return false;
	row_id(r, id, sizeof(id));
	for (size_t i = 0; i < t->nr_expanded; i++)
		if (!strcmp(t->expanded[i], id))
			return !t->all_expanded;
	return t->all_expanded;
}

static void clear_expanded(struct tui *t, bool all)
{
	for (size_t i = 0; i < t->nr_expanded; i++)
		free(t->expanded[i]);
	t->nr_expanded = 0;
	t->all_expanded = all;
}

static void toggle_expanded(struct tui *t, const struct top_row *r)
{
	char id[1024];
	row_id(r, id, sizeof(id));
	for (size_t i = 0; i < t->nr_expanded; i++)
		if (!strcmp(t->expanded[i], id)) {
			free(t->expanded[i]);
			t->expanded[i] = t->expanded[--t->nr_expanded];
			return;
		}
	char **n = realloc(t->expanded, (t->nr_expanded + 1) * sizeof(*n));
	if (!n)
		return;
	t->expanded = n;
	if ((n[t->nr_expanded] = strdup(id)))
		t->nr_expanded++;
}

/* The visible rows (indexes into snap->rows) and their total. */
static size_t visible_rows(const struct tui *t, long **out, uint64_t *total)
{
	const struct top_snap *s = t->snap;
	*out = NULL;
	*total = 0;
	if (!s || !s->nr)
		return 0;
	long *ix = malloc(s->nr * sizeof(*ix));
	if (!ix)
		return 0;
	uint64_t tot = 0;
	for (size_t i = 0; i < s->nr; i++)
		if (top_row_visible(&t->v, &s->rows[i]))
			tot += s->rows[i].period;
	if (t->o->children)
		tot = s->total_period; /* rows overlap: shares of the event's total, as perf */
	size_t n = 0;
	for (size_t i = 0; i < s->nr; i++) {
		const struct top_row *r = &s->rows[i];
		if (!top_row_visible(&t->v, r) ||
		    (tot && 100.0 * (double)r->period / (double)tot < t->o->percent_limit))
			continue;
		if (t->o->rows && (long)n >= t->o->rows)
			break;
		ix[n++] = (long)i;
	}
	*out = ix;
	*total = tot;
	return n;
}

static const enum pk_sort_key default_keys[] = { PK_SORT_DSO, PK_SORT_SYM };

static void draw_header(struct tui *t)
{
	char hb[512];
	t->ops->header(t->ctx, hb, sizeof(hb), t->snap);
	attron(tui_color_attr(TUI_COL_ROOT));
	mvhline(0, 0, ' ', COLS);
	mvaddnstr(0, 0, hb, COLS);
	attroff(tui_color_attr(TUI_COL_ROOT));
	char zb[512];
	snprintf(zb, sizeof(zb), "%s%s%s%s%s%s%s%s", t->v.hide_kernel ? "kernel hidden  " : "",
		 t->v.hide_user ? "user hidden  " : "", t->zoom_dso ? "DSO: " : "",
		 t->zoom_dso ? t->zoom_dso : "", t->zoom_comm ? "  comm: " : "",
		 t->zoom_comm ? t->zoom_comm : "", t->v.zoom_tid >= 0 ? "  thread zoom" : "",
		 t->zero ? "  zero at refresh" : "");
	move(1, 0);
	clrtoeol();
	if (t->msg[0])
		mvaddnstr(1, 0, t->msg, COLS);
	else if (zb[0])
		mvaddnstr(1, 0, zb, COLS);
	else
		mvaddnstr(1, 0, "h: help  q: quit", COLS);
}

static void draw_table(struct tui *t)
{
	const enum pk_sort_key *keys = t->o->nr_sort ? t->o->sort : default_keys;
	size_t nk = t->o->nr_sort ? t->o->nr_sort : 2;
	int rows_top = 3, avail = LINES - rows_top;
	char kb[PK_SORT__MAX][256], line[1024];
	long *ix;
	uint64_t total;
	size_t n = visible_rows(t, &ix, &total);
	size_t w[PK_SORT__MAX] = { 0 };
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k + 1 < nk; k++) {
			size_t l = strlen(top_row_key(&t->snap->rows[ix[i]], keys[k], kb[k], sizeof(kb[k])));
			if (l > w[k])
				w[k] = l;
		}
	/* column titles */
	int off = t->o->children ? snprintf(line, sizeof(line), "%10s  %8s", "Children", "Self")
				 : snprintf(line, sizeof(line), "%10s", "Overhead");
	for (size_t k = 0; k < nk; k++) {
		static const char *const title[PK_SORT__MAX] = {
			[PK_SORT_COMM] = "Command", [PK_SORT_PID] = "Pid:Command",
			[PK_SORT_TID] = "Tid:Command", [PK_SORT_DSO] = "Shared Object",
			[PK_SORT_SYM] = "Symbol", [PK_SORT_SRCLINE] = "Source:Line", [PK_SORT_CPU] = "CPU",
			[PK_SORT_PARENT] = "Parent symbol" };
		size_t tl = strlen(title[keys[k]]);
		if (k + 1 < nk && tl > w[k])
			w[k] = tl;
		off += snprintf(line + off, sizeof(line) - (size_t)off, "  %-*s",
				k + 1 < nk ? (int)w[k] : 0, title[keys[k]]);
		if (off >= (int)sizeof(line))
			break;
	}
	attron(A_BOLD);
	mvaddnstr(2, 0, line, COLS);
	attroff(A_BOLD);
	if (t->sel >= (long)n)
		t->sel = n ? (long)n - 1 : 0;
	if (t->sel < 0)
		t->sel = 0;
	/* lines: rows and the call-graph lines of expanded rows; keep the selection shown */
	long sel_line = 0, sel_end = 0, nlines = 0;
	for (size_t i = 0; i < n; i++) {
		const struct top_row *r = &t->snap->rows[ix[i]];
		long rl = 1 + (is_expanded(t, r) ? (long)r->nr_cc : 0);
		if ((long)i == t->sel)
			sel_line = nlines, sel_end = nlines + rl - 1;
		nlines += rl;
	}
	/* the selected row on screen, and its call graph as far as the screen allows */
	if (sel_end >= t->first + avail)
		t->first = sel_end - avail + 1;
	if (sel_line < t->first)
		t->first = sel_line;
	if (t->first > nlines - avail)
		t->first = nlines - avail > 0 ? nlines - avail : 0;
	long ln = 0;
	int y = rows_top;
	for (size_t i = 0; i < n && y < LINES; i++) {
		const struct top_row *r = &t->snap->rows[ix[i]];
		bool ex = is_expanded(t, r);
		if (ln >= t->first) {
			double pct[2] = { total ? 100.0 * (double)r->period / (double)total : 0.0,
					  total ? 100.0 * (double)r->self / (double)total : 0.0 };
			off = snprintf(line, sizeof(line), "%c%8.2f%%",
				       r->nr_cc ? (ex ? '-' : '+') : r->cc_pending && t->ops->fill_cc ? '+' : ' ',
				       pct[0]);
			if (t->o->children)
				off += snprintf(line + off, sizeof(line) - (size_t)off, "  %7.2f%%", pct[1]);
			for (size_t k = 0; k < nk && off < (int)sizeof(line); k++)
				off += snprintf(line + off, sizeof(line) - (size_t)off, "  %-*s",
						k + 1 < nk ? (int)w[k] : 0,
						top_row_key(r, keys[k], kb[k], sizeof(kb[k])));
			bool sel = (long)i == t->sel;
			if (sel)
				attron(tui_color_attr(TUI_COL_SELECTED));
			mvhline(y, 0, ' ', COLS);
			mvaddnstr(y, 0, line, COLS);
			if (sel)
				attroff(tui_color_attr(TUI_COL_SELECTED));
			else /* the share cells in perf's colours: "+ 12.34%" and "  12.34%" */
				for (int c = 0; c < (t->o->children ? 2 : 1); c++)
					tui_recolor(y, c ? 12 : 1, c ? 8 : 9, tui_percent_color(pct[c]));
			y++;
		}
		ln++;
		for (size_t j = 0; ex && j < r->nr_cc && y < LINES; j++, ln++) {
			if (ln < t->first)
				continue;
			top_cc_format(line, sizeof(line), &r->cc[j]);
			mvaddnstr(y++, 0, line, COLS);
		}
	}
	if (!n)
		mvaddnstr(rows_top, 2, t->snap ? "no samples to show" : "collecting samples...", COLS);
	else if (t->snap && t->snap->has_cc && sel_line == 0 && !t->first && avail > (long)nlines + 1)
		mvaddnstr(LINES - 1, 0, "Enter/+: callers and callees of the row  E/C: all  a: annotate"
			  "  h: help", COLS);
	free(ix);
}

static void draw_help(const struct tui *t)
{
	static const char *const lines[] = {
		"",
		"  Up/Down, PgUp/PgDn, Home/End   move the selection",
		"  Enter, +                       expand / collapse the row's call graph (-g)",
		"  E / C                          expand / collapse every row",
		"  a                              annotate the selected symbol",
		"  d / t / c                      zoom into the selected DSO / thread / command",
		"                                 (again, or Esc: back)",
		"  k                              show / hide kernel symbols",
		"  z                              zero at each refresh / decay by 7/8",
		"  P                              write the table to perf.hist.N",
		"  Tab                            the next event (files with several)",
		"  h, ?                           this help",
		"  q, Ctrl-C                      quit",
		"",
		"In the annotate view (a):",
		"  Up/Down, PgUp/PgDn, Home/End   move the selection",
		"  s                              show / hide the source lines",
		"  H                              the hottest instruction",
		"  Tab / Shift-Tab                the next / previous hot instruction",
		"  Esc, q, Left                   back to the table",
		"",
		"Press any key.",
	};
	char title[64];
	snprintf(title, sizeof(title), "perfkit %s keys", t->ops->name);
	mvaddnstr(2, 2, title, COLS - 2);
	int y = 3;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]) && y < LINES; i++) {
		if ((!t->ops->live && !strncmp(lines[i], "  z ", 4)) ||
		    (!t->ops->next_event && !strncmp(lines[i], "  Tab ", 6)))
			continue;
		mvaddnstr(y++, 2, lines[i], COLS - 2);
	}
}

static void draw(struct tui *t)
{
	erase();
	draw_header(t);
	if (t->mode == M_HELP)
		draw_help(t);
	else if (t->mode == M_ANNOTATE)
		ann_view_draw(&t->av, t->ann, t->ops->live);
	else
		draw_table(t);
	refresh();
}

static const struct top_row *selected(struct tui *t)
{
	long *ix;
	uint64_t total;
	size_t n = visible_rows(t, &ix, &total);
	const struct top_row *r = NULL;
	if (t->sel >= 0 && t->sel < (long)n) {
		size_t i = (size_t)ix[t->sel];
		if (t->snap->rows[i].cc_pending && t->ops->fill_cc)
			t->ops->fill_cc(t->ctx, t->snap, i); /* its call graph, when first selected */
		r = &t->snap->rows[i];
	}
	free(ix);
	return r;
}

static void write_hist(struct tui *t)
{
	char name[64];
	FILE *f = NULL;
	for (int i = 0; i < 1000 && !f; i++) {
		snprintf(name, sizeof(name), "perf.hist.%d", i);
		if (access(name, F_OK) == 0)
			continue;
		f = fopen(name, "wx");
	}
	if (!f || !t->snap) {
		snprintf(t->msg, sizeof(t->msg), "cannot write perf.hist.N: %s",
			 t->snap ? strerror(errno) : "no samples yet");
		if (f)
			fclose(f);
		return;
	}
	top_print_table(f, t->o, t->snap->event, t->snap, &t->v, t->o->rows, t->ops->live);
	bool ok = !ferror(f);
	ok = !fclose(f) && ok;
	snprintf(t->msg, sizeof(t->msg), ok ? "wrote %s" : "cannot write %s", name);
}

static void zoom_str(char **slot, const char **view, const char *val)
{
	if (*slot || !val) {
		free(*slot);
		*slot = NULL;
	} else {
		*slot = strdup(val);
	}
	*view = *slot;
}

/* a key in the table; false to quit */
static bool table_key(struct tui *t, int ch)
{
	const struct top_row *r = selected(t);
	int page = LINES > 4 ? LINES - 4 : 1;
	switch (ch) {
	case 'q': case 'Q': return false;
	case KEY_UP: t->sel--; break;
	case KEY_DOWN: t->sel++; break;
	case KEY_PPAGE: t->sel -= page; break;
	case KEY_NPAGE: t->sel += page; break;
	case KEY_HOME: t->sel = 0; break;
	case KEY_END: t->sel = 1L << 30; break;
	case '\n': case '\r': case KEY_ENTER: case '+':
		if (r && r->nr_cc)
			toggle_expanded(t, r);
		else if (r)
			snprintf(t->msg, sizeof(t->msg), "%s", t->snap && t->snap->has_cc ?
				 "no call graph above 0.5 % for this row" : t->ops->no_cc_hint);
		break;
	case 'E': clear_expanded(t, true); break;
	case 'C': clear_expanded(t, false); break;
	case 'a':
		if (r && r->sym && r->dso_long) {
			free(t->ann_dso), free(t->ann_sym);
			t->ann_dso = strdup(r->dso_long);
			t->ann_sym = strdup(r->sym);
			top_ann__free(t->ann);
			t->ann = NULL;
			t->mode = M_ANNOTATE;
			ann_view_reset(&t->av);
			draw(t); /* "annotating..." while a file's annotate loads */
			t->ann = t->ops->annotate(t->ctx, r->dso_long, r->sym);
		} else {
			snprintf(t->msg, sizeof(t->msg), "no symbol to annotate");
		}
		break;
	case 'd': zoom_str(&t->zoom_dso, &t->v.zoom_dso, r ? r->dso_long : NULL); t->sel = 0; break;
	case 'c': zoom_str(&t->zoom_comm, &t->v.zoom_comm, r ? r->comm : NULL); t->sel = 0; break;
	case 't': t->v.zoom_tid = t->v.zoom_tid >= 0 || !r ? -1 : r->tid; t->sel = 0; break;
	case 27: /* Esc: out of every zoom */
		zoom_str(&t->zoom_dso, &t->v.zoom_dso, NULL);
		zoom_str(&t->zoom_comm, &t->v.zoom_comm, NULL);
		t->v.zoom_tid = -1;
		break;
	case 'k': t->v.hide_kernel = !t->v.hide_kernel; break;
	case 'z':
		if (!t->ops->set_zero)
			break;
		t->zero = !t->zero;
		t->ops->set_zero(t->ctx, t->zero);
		break;
	case 'P': write_hist(t); break;
	case '\t':
		if (t->ops->next_event && t->ops->next_event(t->ctx)) {
			t->sel = t->first = 0;
			clear_expanded(t, false);
		} else {
			snprintf(t->msg, sizeof(t->msg), "one event only");
		}
		break;
	case 'h': case '?': t->mode = M_HELP; t->help_back = M_TABLE; break;
	default: break;
	}
	return true;
}

int browser_run(const struct browser_ops *ops, void *ctx, const struct top_opts *o,
		volatile sig_atomic_t *stop)
{
	struct tui t = { .o = o, .ops = ops, .ctx = ctx, .zero = o->zero,
			 .v = { .hide_kernel = o->hide_kernel, .hide_user = o->hide_user,
				.zoom_tid = -1 } };
	if (!initscr()) {
		tool_error("cannot set up the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
		return 1;
	}
	set_escdelay(25);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	tui_colors_init();
	timeout(100);
	bool dirty = true, run = true;
	while (run && !*stop) {
		struct top_snap *s = ops->take(ctx);
		if (s) {
			/* the annotate view asked for comes with the snapshots (top) */
			if (s->ann && t.mode == M_ANNOTATE && t.ann_sym && s->ann->sym &&
			    !strcmp(s->ann->sym, t.ann_sym) && s->ann->dso &&
			    !strcmp(s->ann->dso, t.ann_dso)) {
				top_ann__free(t.ann);
				t.ann = s->ann;
				s->ann = NULL;
			}
			top_snap__free(t.snap);
			t.snap = s;
			dirty = true;
		}
		if (dirty)
			draw(&t);
		dirty = false;
		int ch = getch();
		if (ch == ERR)
			continue;
		dirty = true;
		if (ch == KEY_RESIZE)
			continue; /* ncurses has the new size: redrawn above */
		t.msg[0] = 0;
		if (ch == 3) /* Ctrl-C in raw terminals */
			break;
		if (t.mode == M_HELP) {
			t.mode = t.help_back;
		} else if (t.mode == M_ANNOTATE) {
			if (ch == 27 || ch == 'q' || ch == KEY_LEFT) {
				t.mode = M_TABLE;
				top_ann__free(t.ann);
				t.ann = NULL;
				top_ann__free(ops->annotate(ctx, NULL, NULL));
			} else if (ch == 'h' || ch == '?') {
				t.mode = M_HELP;
				t.help_back = M_ANNOTATE;
			} else {
				ann_view_key(&t.av, t.ann, ch);
			}
		} else {
			run = table_key(&t, ch);
		}
	}
	endwin();
	top_snap__free(t.snap);
	top_ann__free(t.ann);
	free(t.ann_dso), free(t.ann_sym);
	free(t.zoom_dso), free(t.zoom_comm);
	clear_expanded(&t, false);
	free(t.expanded);
	return 0;
}
