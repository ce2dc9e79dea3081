/* SPDX-License-Identifier: MIT */
/* tool/browser-annotate.h - the annotate view of the browser (browser-annotate.c) */
#ifndef PK_TOOL_BROWSER_ANNOTATE_H
#define PK_TOOL_BROWSER_ANNOTATE_H

#include <stdbool.h>

struct top_ann;

/* where the view is: the selected line, the first on screen, source lines shown or not */
struct ann_view {
	long sel;               /* index into top_ann.lines */
	long first;             /* position of the first line on screen among those shown */
	bool placed;            /* the hottest instruction selected once (or the user moved) */
	bool hide_src;          /* s: source lines hidden (kept across symbols, as perf) */
};

/* a new symbol: the view opens at its hottest instruction */
void ann_view_reset(struct ann_view *v);
/* draw a (NULL: still coming) from the third line of the screen down; live: top's
 * decayed counts */
void ann_view_draw(struct ann_view *v, const struct top_ann *a, bool live);
/* a key of the view (moves, s, H); false when it is not one of them */
bool ann_view_key(struct ann_view *v, const struct top_ann *a, int ch);

#endif
