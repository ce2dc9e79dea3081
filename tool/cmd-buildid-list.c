/* SPDX-License-Identifier: MIT */
/*
 * perfkit buildid-list: the build-ids a recording names (its BUILD_ID feature), one
 * "<build-id> <path>" a line in perf buildid-list's format; only the objects its samples
 * hit with --with-hits; or the running kernel's build-id with -k.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "buildid.h"

static const struct tool_opt opts[] = {
	{ 'i', "input", required_argument, "<file>", "perf.data to read (default perf.data)" },
	{ 'H', "with-hits", no_argument, NULL, "only the objects that samples hit" },
	{ 'k', "kernel", no_argument, NULL, "the running kernel's build-id" },
	{ 'f', "force", no_argument, NULL, "accepted for perf's sake (no effect)" },
	{ 'v', "verbose", no_argument, NULL, "more messages" },
	{ 0 },
};

const struct tool_help cmd_buildid_list_help = {
	.synopsis = "usage: perfkit buildid-list [-i perf.data] [-H] [-k]\n",
	.intro = "List the build-ids of the objects a recording names, \"<build-id> <path>\" a line, as\n"
		 "perf buildid-list prints them. perfkit archive packs the files behind them.\n",
	.opts = opts,
};

static int print_kernel(void)
{
	uint8_t id[PK_BUILD_ID_MAX];
	size_t len = sizeof(id);
	int err = pk_kernel_build_id(NULL, id, &len);
	if (err) {
		tool_error("cannot read the running kernel's build-id: %s (is "
			   "/sys/kernel/notes readable?)", pk_strerror(err));
		return 1;
	}
	char hex[2 * PK_BUILD_ID_MAX + 1];
	tool_build_id_hex(id, len, hex);
	printf("%s\n", hex);
	return tool_finish_stdout(0);
}

int cmd_buildid_list(int argc, char **argv)
{
	const char *input = "perf.data";
	bool hits = false, kernel = false;
	int verbose = 0, c;
	opterr = 0;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'H': hits = true; break;
		case 'k': kernel = true; break;
		case 'f': break;
		case 'v': verbose++; break;
		default: return tool_bad_option(argv, &cmd_buildid_list_help);
		}
	}
	if (optind < argc)
		return tool_usage_error(&cmd_buildid_list_help, "unexpected argument");
	tool_setup_log(verbose);
	if (kernel)
		return print_kernel();

	struct pk_data_reader *r = tool_open_input(input, NULL);
	if (!r)
		return 1;
	const struct pk_data_env *env = pk_data_reader__env(r);
	struct tool_hits h = { .verbose = verbose };
	int status = 0;
	/* a recording without build-ids (record -B, a pipe): perf lists the objects hit,
	 * with no id, in the order its machine made them (the kernel, then by first MMAP) */
	bool no_ids = !env->nr_build_ids;
	h.mmap_order = no_ids;
	if (hits || no_ids) {
		int err = tool_hits_collect(r, false, &h);
		if (err) {
			tool_error("cannot read '%s': %s", input, pk_strerror(err));
			status = 1;
			goto out;
		}
	}
	if (no_ids) {
		if (tool_hits_name(&h, "[kernel.kallsyms]"))
			printf("%-40s %s\n", "", "[kernel.kallsyms]");
		for (size_t i = 0; i < h.nr_mapped; i++)
			if (tool_hits_name(&h, h.mapped[i]))
				printf("%-40s %s\n", "", h.mapped[i]);
	}
	for (size_t i = 0; i < env->nr_build_ids; i++) {
		const struct pk_data_build_id *b = &env->build_ids[i];
		if (!b->filename || (hits && !tool_hits_has(&h, b)))
			continue;
		char hex[2 * PK_BUILD_ID_MAX + 1];
		tool_build_id_hex(b->build_id, b->build_id_size, hex);
		printf("%-40s %s\n", hex, b->filename);
	}
	status = tool_finish_stdout(0);
out:
	tool_hits_free(&h);
	pk_data_reader__free(r);
	return status;
}
