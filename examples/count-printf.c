/* SPDX-License-Identifier: MIT */
/*
 * count-printf: the perf_event_open(2) man page's EXAMPLES program with perfkit: count
 * the instructions one printf() takes. Where the machine has no hardware PMU (VMs without
 * a virtual PMU) it says so and counts task-clock (ns of CPU time) instead.
 *
 * usage: count-printf [EVENT]     (default: instructions, user space only)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>

int main(int argc, char **argv)
{
	const char *event = argc > 1 ? argv[1] : "instructions:u";
	PK_OPTS(pk_self_reader_opts, opts, .disabled = true, .exclude_kernel = true);
	struct pk_self_reader *r = pk_self_reader__open(event, &opts);
	struct pk_count_value v;

	if (!r && (errno == ENODEV || errno == ENOENT) && argc <= 1) {
		/* no PMU: no instruction counter to read */
		fprintf(stderr, "count-printf: '%s' is not supported on this machine (%s); "
				"counting task-clock instead\n", event, pk_strerror(errno));
		event = "task-clock";
		r = pk_self_reader__open(event, &opts);
	}
	if (!r) {
		fprintf(stderr, "count-printf: cannot open '%s': %s\n", event, pk_strerror(errno));
		return 1;
	}
	/* the man page: reset, enable, printf, disable, read */
	pk_self_reader__reset(r);
	pk_self_reader__enable(r);
	printf("Measuring %s for this printf\n", event);
	pk_self_reader__disable(r);
	if (pk_self_reader__read(r, &v, 1) < 0) {
		fprintf(stderr, "count-printf: read failed: %s\n", pk_strerror(errno));
		pk_self_reader__free(r);
		return 1;
	}
	printf("Used %llu %s\n", (unsigned long long)v.val,
	       !strncmp(event, "instructions", 12) ? "instructions" :
	       !strcmp(event, "task-clock") ? "ns of task-clock" : event);
	printf("(read path: %s, enabled %llu ns, running %llu ns)\n",
	       pk_read_path__name(pk_self_reader__last_path(r)), (unsigned long long)v.ena,
	       (unsigned long long)v.run);
	pk_self_reader__free(r);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}
