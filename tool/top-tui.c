/* SPDX-License-Identifier: MIT */
#include "top.h"
int top_tui_run(struct top_opts *o, struct top_engine *e, volatile sig_atomic_t *stop)
{
	(void)o; (void)e; (void)stop;
	return 0;
}
