/* SPDX-License-Identifier: MIT */
/*
 * tool/record-push.c - `perfkit record --push URL`: each file of a rotation
 * (--switch-output) goes to the pusher (tool/push.c) as soon as it is closed, through the
 * rotation's hook (record-rotate.h); without a rotation, the one file at the end. The
 * hook runs on the record thread between two drain passes: it makes a hard link when
 * --switch-max-files may delete the file before it is read, queues the name and returns;
 * converting and sending happen on the pusher's thread.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "builtin.h"
#include "push-opts.h"
#include "record.h"

int rec_push_opt(struct rec_opts *o, int c, const char *arg)
{
	if (c != PUSH_OPT_RECORD && (c < PUSH_OPT_URL || c > PUSH_OPT_SRCLINE))
		return TOOL_OPT_UNKNOWN;
	if (!o->push) {
		o->push = calloc(1, sizeof(*o->push));
		if (!o->push) {
			tool_error("out of memory");
			return 129;
		}
		tool_push_args_init(o->push);
	}
	if (c == PUSH_OPT_RECORD) {
		o->push->o.url = arg;
		o->push_on = true;
		return 0;
	}
	int rc = tool_push_parse_opt(o->push, c, arg);
	return rc == 1 ? TOOL_OPT_UNKNOWN : rc;
}

int rec_push_check(struct rec_opts *o)
{
	if (!o->push)
		return 0;
	if (!o->push_on) {
		tool_error("the push options (--url, --app, --spool, ...) need --push URL");
		return 129;
	}
	if (!strcmp(o->output, "-")) {
		tool_error("--push needs a file output, not '-'");
		return 129;
	}
	return tool_push_args_finish(o->push);
}

static void on_file_closed(const char *path, uint64_t first_ns, uint64_t last_ns, void *arg)
{
	struct rec_opts *o = arg;
	(void)first_ns;
	(void)last_ns;
	if (!o->pusher)
		return;
	int err;
	if (o->rot.max_files) {
		/* --switch-max-files deletes the oldest file; the link keeps ours until sent */
		char tmp[PATH_MAX];
		const char *slash = strrchr(path, '/');
		int n = slash ? snprintf(tmp, sizeof(tmp), "%.*s/.push-%s", (int)(slash - path), path,
					 slash + 1)
			      : snprintf(tmp, sizeof(tmp), ".push-%s", path);
		if (n <= 0 || n >= (int)sizeof(tmp) || (link(path, tmp) && errno != EEXIST)) {
			tool_warn("cannot link '%s' for --push (%s): pushed under its own name",
				  path, strerror(errno));
			err = tool_pusher_submit(o->pusher, path);
		} else {
			err = tool_pusher_submit_ex(o->pusher, tmp, true);
		}
	} else {
		err = tool_pusher_submit(o->pusher, path);
	}
	if (err == -ENOMEM)
		tool_warn("out of memory: '%s' is not pushed", path);
}

int rec_push_start(struct rec_opts *o)
{
	if (!o->push_on)
		return 0;
	o->push->o.quiet = o->quiet;
	o->pusher = tool_pusher_new(&o->push->o);
	if (!o->pusher)
		return -1;
	if (o->rot.mode) {
		o->rot.on_file_closed = on_file_closed;
		o->rot.on_file_closed_arg = o;
	}
	return 0;
}

int rec_push_finish(struct rec_opts *o, bool file_ok)
{
	int status = 0;
	if (o->pusher) {
		if (!o->rot.mode && file_ok)
			tool_pusher_submit(o->pusher, o->output);
		status = tool_pusher_finish(o->pusher, 0, NULL);
		o->pusher = NULL;
	}
	free(o->push);
	o->push = NULL;
	return status;
}
