/* SPDX-License-Identifier: MIT */
/*
 * perfkit probe: what a binary offers to dynamic probes and where a probe would go. It
 * creates nothing: a probe is an event of the uprobe PMU (-e u:BINARY:FUNCTION in stat,
 * record, ...), created and destroyed with the event, so nothing stays behind in tracefs.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

enum { OPT_LIST_FUNCS = 256, OPT_LIST_SDT, OPT_DRY_RUN, OPT_RETURN };

static const struct tool_opt opts[] = {
	{ 'x', "exec", required_argument, "<binary>",
	  "the binary: a path, or a library name (libc)\nlooked up as the dynamic linker does" },
	{ 'p', "pid", required_argument, "<pid>",
	  "look library names up in this process's maps first" },
	{ OPT_LIST_FUNCS, "list-functions", no_argument, NULL,
	  "list the functions (matching the GLOB argument)\nwith their addresses and file offsets" },
	{ OPT_LIST_SDT, "list-sdt", no_argument, NULL, "list the SDT markers" },
	{ OPT_DRY_RUN, "dry-run", no_argument, NULL,
	  "print the path, offset and attr a probe at\nFUNC[+OFF] or %PROVIDER:NAME would open" },
	{ 'r', "return", no_argument, NULL, "a return probe (with FUNC)" },
	{ 0 },
};

const struct tool_help cmd_probe_help = {
	.synopsis = "usage: perfkit probe -x <binary> --list-functions [GLOB]\n"
		    "       perfkit probe -x <binary> --list-sdt\n"
		    "       perfkit probe -x <binary> [--dry-run] [-r] FUNC[+OFF] | %PROVIDER:NAME\n",
	.intro = "Show what a binary offers to dynamic probes and where a probe would be placed.\n"
		 "Probes are events of the uprobe PMU, created with the event and removed when it\n"
		 "is closed: use them as -e u:BINARY:FUNC[+OFF], -e r:BINARY:FUNC (return) or\n"
		 "-e u:BINARY:%PROVIDER:NAME in stat, record and the other commands.\n",
	.opts = opts,
	.outro = "Exit status: 0, 1 if the binary, function or marker cannot be resolved, 129 on a\n"
		 "usage error.\n",
};

static int func_cb(const struct pk_probe_func *f, void *ctx)
{
	size_t *n = ctx;
	(*n)++;
	printf("%-40s vaddr %#-10" PRIx64 " offset %#-10" PRIx64 " size %-6" PRIu64 "%s%s%s\n",
	       f->name, f->vaddr, f->offset, f->size, f->local ? " static" : "",
	       f->file ? " in " : "", f->file ? f->file : "");
	return 0;
}

static int sdt_cb(const struct pk_sdt_marker *m, void *ctx)
{
	size_t *n = ctx;
	(*n)++;
	printf("%s:%s offset %#" PRIx64, m->provider, m->name, m->offset);
	if (m->sem_vaddr)
		printf(" semaphore %#" PRIx64, m->sem_offset);
	printf(" args '%s'\n", m->args);
	return 0;
}

/* Parse the event as stat would and print what it opens. */
static int dry_run(const char *bin, const char *what, bool ret, int pid)
{
	bool sdt = what[0] == '%';
	size_t n = strlen(bin) + strlen(what) + 8;
	char *spec = malloc(n), msg[256];
	struct pk_event_list *l = pk_event_list__new();
	struct pk_parse_error pe = { .column = -1 };
	int status = 1;

	if (!spec || !l) {
		tool_error("out of memory");
		goto out;
	}
	snprintf(spec, n, "%s:%s:%s", ret ? "r" : "u", bin, what);
	PK_OPTS(pk_parse_opts, po, .probe_pid = pid);
	if (pk_event_list__parse(l, spec, &po, &pe) < 0) {
		tool_error("%s", pe.msg[0] ? pe.msg : pk_strerror(errno));
		goto out;
	}
	const struct pk_event_spec *e = pk_event_list__get(l, 0);
	const struct pk_attr *a = pk_event_spec__attr(e);
	struct pk_probe_point pt;
	PK_OPTS(pk_probe_opts, qo, .pid = pid);
	const char *src = "";
	if (!sdt) {
		char fn[256];
		snprintf(fn, sizeof(fn), "%s", what);
		char *plus = strchr(fn, '+');
		uint64_t off = 0;
		if (plus) {
			*plus = '\0';
			off = strtoull(plus + 1, NULL, 0);
		}
		if (pk_probe__resolve(bin, fn, off, &qo, &pt, msg, sizeof(msg)) == 0)
			src = pt.from_debug ? " (debug file)" : pt.from_dynsym ? " (.dynsym)" : " (.symtab)";
	}
	printf("event     %s\n", spec);
	printf("path      %s\n", pk_event_spec__probe_file(e));
	printf("where     %s%s\n", what, src);
	printf("offset    %#" PRIx64 "\n", pk_event_spec__probe_offset(e));
	printf("attr      type %u (uprobe) config %#llx config1 -> the path (held open) "
	       "config2 %#llx\n",
	       a->attr.type, (unsigned long long)a->attr.config,
	       (unsigned long long)a->attr.config2);
	if (sdt && (a->attr.config >> 32))
		printf("semaphore ref_ctr_offset %#llx\n", (unsigned long long)(a->attr.config >> 32));
	status = 0;
out:
	pk_event_list__free(l);
	free(spec);
	return status;
}

int cmd_probe(int argc, char **argv)
{
	const char *bin = NULL;
	bool list_funcs = false, list_sdt = false, ret = false;
	int pid = 0, c;
	char msg[256];

	optind = 1;
	opterr = 0;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		switch (c) {
		case 'x': bin = optarg; break;
		case 'p': pid = atoi(optarg); break;
		case OPT_LIST_FUNCS: list_funcs = true; break;
		case OPT_LIST_SDT: list_sdt = true; break;
		case OPT_DRY_RUN: break; /* probe never creates anything */
		case 'r': ret = true; break;
		default:
			tool_error("unknown or incomplete option '%s'; see 'perfkit probe --help'",
				   argv[optind - 1]);
			return 129;
		}
	}
	if (!bin) {
		tool_error("which binary? give -x <binary>; see 'perfkit probe --help'");
		return 129;
	}
	int nargs = argc - optind;
	if (list_funcs + list_sdt + (nargs > 0 && !list_funcs) != 1 || nargs > 1) {
		tool_error("give one of --list-functions [GLOB], --list-sdt or FUNC; see "
			   "'perfkit probe --help'");
		return 129;
	}
	tool_setup_log(0);
	PK_OPTS(pk_probe_opts, po, .pid = pid);
	size_t n = 0;
	int r;
	if (list_funcs) {
		r = pk_probe__for_each_function(bin, nargs ? argv[optind] : NULL, &po, func_cb, &n,
						msg, sizeof(msg));
		if (r == 0 && !n && nargs) {
			tool_error("no function of '%s' matches '%s'", bin, argv[optind]);
			r = -ENOENT;
		}
	} else if (list_sdt) {
		r = pk_probe__for_each_sdt(bin, &po, sdt_cb, &n, msg, sizeof(msg));
		if (r == 0 && !n)
			fprintf(stderr, "perfkit probe: '%s' has no SDT markers\n", bin);
	} else {
		return tool_finish_stdout(dry_run(bin, argv[optind], ret, pid));
	}
	if (r < 0 && msg[0])
		tool_error("%s", msg);
	return tool_finish_stdout(r < 0 ? 1 : 0);
}
