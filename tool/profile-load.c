/* SPDX-License-Identifier: MIT */
/*
 * tool/profile-load.c - the tool's side of loading a perf.data file into a pk_profile
 * (pk_profile__load in the library does the work): open the input, map the options,
 * say what went wrong in the tool's words; --weight's value, which they share.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "builtin.h"
#include "profile-load.h"

struct pk_profile *tool_load_profile_reader(struct pk_data_reader *r, const char *path,
					   const struct tool_load_opts *o,
					   struct pk_profile_load_stats *st)
{
	/* symbol tables read ahead on a thread of the machine's (the same profile); a copy
	 * of this call's own: diff loads its two files on two threads. Not with an event
	 * picked: the others' objects would be read for nothing. The reader thread only
	 * when a CPU is free for it (tool_threads_worthwhile, as report decides). */
	struct pk_machine_opts mo = *tool_machine_opts();
	mo.preload = tool_threads_allowed() && !o->event;
	PK_OPTS(pk_profile_load_opts, lo, .timeline = o->timeline, .root_comm = o->root_comm,
		.addresses = o->addresses, .srcline = o->srcline, .inlines = o->inlines,
		.unknown_hex = o->unknown_hex, .no_callchain = o->no_callchain,
		.event = o->event, .title = path, .reader_thread = tool_threads_worthwhile(),
		.machine_opts = &mo);
	st->sz = sizeof(*st);
	struct pk_profile *p = pk_profile__load(r, &lo, st);
	int err = p ? 0 : -errno;
	if (err == -ENOENT && o->event)
		tool_error("'%s' has no event named '%s'", path, o->event);
	else if (err == -ENOMEM)
		tool_error("out of memory");
	else if (err)
		tool_error("cannot load '%s': %s", path, pk_strerror(err));
	if (p && st->reader_error)
		tool_warn("'%s' is corrupt after %" PRIu64 " samples: %s (using what was read)",
			     path, st->samples, pk_strerror(st->reader_error));
	if (p && pk_data_reader__truncated(r))
		tool_warn("'%s' was not finished (truncated); using the samples read", path);
	return p;
}

struct pk_profile *tool_load_profile(const char *path, const struct tool_load_opts *o)
{
	struct pk_data_reader *r = tool_open_input(path, NULL);
	if (!r)
		return NULL;
	struct pk_profile_load_stats st;
	struct pk_profile *p = tool_load_profile_reader(r, path, o, &st);
	pk_data_reader__free(r);
	return p;
}

int profile_weight_arg(const char *arg, enum pk_export_weight *w)
{
	if (!strcmp(arg, "samples"))
		*w = PK_WEIGHT_SAMPLES;
	else if (!strcmp(arg, "period"))
		*w = PK_WEIGHT_PERIOD;
	else {
		tool_error("--weight must be 'period' or 'samples', not '%s'", arg);
		return -1;
	}
	return 0;
}
