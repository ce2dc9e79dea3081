/* SPDX-License-Identifier: MIT */
/* tool/profile-load.h - perf.data -> symbolised pk_profile, shared by flamegraph, convert
 * and diff. */
#ifndef TOOL_PROFILE_LOAD_H
#define TOOL_PROFILE_LOAD_H

#include <stdbool.h>
#include <perfkit/perfkit.h>

struct tool_load_opts {
	bool timeline;          /* keep per-sample times (speedscope, gecko, json) */
	bool root_comm;         /* thread name as the root frame (folded, flame graph) */
	bool addresses;         /* keep addresses apart (pprof, json) */
	bool srcline;           /* look up source file:line of every frame (DWARF) */
	bool inlines;           /* expand inlined functions into frames */
	bool unknown_hex;       /* name unresolved frames by address (else "[unknown]") */
	bool no_callchain;      /* only the sampled IP */
	const char *event;      /* keep only this event (NULL: all) */
};

/*
 * Read `path` (perf.data, "-" = stdin), symbolise every sample and return a profile.
 * Prints its own errors (tool_error) and returns NULL on failure.
 * Records are processed in time order within each FINISHED_ROUND, as perf does.
 */
struct pk_profile *tool_load_profile(const char *path, const struct tool_load_opts *o);
/* The same on an open reader (not freed), with the loader's statistics in *st. */
struct pk_profile *tool_load_profile_reader(struct pk_data_reader *r, const char *path,
					   const struct tool_load_opts *o,
					   struct pk_profile_load_stats *st);

/* --weight's value ("period" or "samples") into *w; -1 after printing the error. */
int profile_weight_arg(const char *arg, enum pk_export_weight *w);

#endif
