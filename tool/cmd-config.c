/* SPDX-License-Identifier: MIT */
/*
 * perfkit config: read and write perf's configuration files, as `perf config` does
 * (-l/--list, NAME, NAME=VALUE, --user/--system), and tool_config(): the configuration
 * every command runs with. The keys perfkit applies are listed in docs/perfkit-config.md;
 * the others are kept and listed, not used.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "builtin.h"
#include "perfconfig.h"

#define SYSTEM_CONFIG "/etc/perfconfig"

static struct tool_cfg config;
static bool config_loaded;

/* Add a file's entries; a file that does not parse is reported and left out whole. */
static void load_file(const char *path)
{
	struct tool_cfg one = { 0 };
	int bad = 0, r = tool_cfg_read_file(&one, path, &bad);
	if (r == -ENOENT || (r && !path[0])) {
		tool_cfg_free(&one);
		return;
	}
	if (r == -EINVAL && bad)
		tool_warn("%s:%d: not a configuration line perf would read; the file is ignored",
			  path, bad);
	else if (r)
		tool_warn("%s: %s; the file is ignored", path, strerror(-r));
	if (r)
		tool_cfg_free(&one);
	else
		tool_cfg_take(&config, &one);
}

const struct tool_cfg *tool_config(void)
{
	if (config_loaded)
		return &config;
	config_loaded = true;
	bool exclusive, nosystem;
	const char *user = tool_user_config_path(&exclusive, &nosystem);
	if (!exclusive && !nosystem)
		load_file(SYSTEM_CONFIG);
	if (user[0])
		load_file(user);
	return &config;
}

const char *tool_config_get(const char *key)
{
	return tool_cfg_get(tool_config(), key);
}

enum { O_USER = 256, O_SYSTEM };
static const struct tool_opt opts[] = {
	{ 'l', "list", no_argument, NULL, "every NAME=VALUE of the files read" },
	{ O_USER, "user", no_argument, NULL,
	  "the user's file only ($PERF_CONFIG or ~/.perfconfig; where\nNAME=VALUE writes by default)" },
	{ O_SYSTEM, "system", no_argument, NULL, "the system's file only (" SYSTEM_CONFIG ")" },
	{ 0 },
};

const struct tool_help cmd_config_help = {
	.synopsis = "usage: perfkit config [--user | --system] [-l | NAME[=VALUE]...]\n",
	.intro = "Read or write perf's configuration files (~/.perfconfig, " SYSTEM_CONFIG ",\n"
		 "or the one file $PERF_CONFIG names), which perfkit and perf both read.\n"
		 "NAME prints NAME=VALUE (exit 1 if it is not set); NAME=VALUE sets it.\n",
	.opts = opts,
	.outro = "NAME is section.name (e.g. report.children) or section.subsection.name.\n"
		 "The keys perfkit applies: report.children, report.percent-limit,\n"
		 "call-graph.record-mode (and record.call-graph), buildid.dir, core.pager,\n"
		 "pager.CMD, color.ui, colors.{top,medium,normal,selected,root}.\n",
};

int cmd_config(int argc, char **argv)
{
	bool list = false;
	int which = 0;   /* 0 both (reading) or the user's (writing), O_USER, O_SYSTEM */
	int opt;
	optind = 1;
	opterr = 0;
	while ((opt = tool_getopt(argc, argv, opts, 0)) != -1) {
		switch (opt) {
		case 'l': list = true; break;
		case O_USER: case O_SYSTEM: which = opt; break;
		default:
			tool_error("unknown option '%s'", argv[optind - 1]);
			tool_print_usage(stderr, &cmd_config_help);
			return 129;
		}
	}
	if (list == (optind < argc)) {
		tool_error(list ? "-l takes no NAME" : "nothing to do: give -l or NAME[=VALUE]");
		tool_print_usage(stderr, &cmd_config_help);
		return 129;
	}
	bool exclusive, nosystem;
	const char *user = tool_user_config_path(&exclusive, &nosystem);
	const struct tool_cfg *c = tool_config();
	struct tool_cfg one = { 0 };
	if (which) {   /* reading one file only */
		const char *path = which == O_SYSTEM ? SYSTEM_CONFIG : user;
		int bad = 0, r = path[0] ? tool_cfg_read_file(&one, path, &bad) : -ENOENT;
		if (r && r != -ENOENT) {
			if (bad)
				tool_error("%s:%d: not a configuration line perf would read", path, bad);
			else
				tool_error("%s: %s", path, strerror(-r));
			tool_cfg_free(&one);
			return 1;
		}
		c = &one;
	}
	int status = 0;
	if (list) {
		for (size_t i = 0; i < c->n; i++)
			printf("%s=%s\n", c->v[i].key, c->v[i].value);
	}
	for (int i = optind; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		if (!eq) {
			const char *v = tool_cfg_get(c, argv[i]);
			if (v)
				printf("%s=%s\n", argv[i], v);   /* as perf config prints it */
			else
				status = 1;
			continue;
		}
		char key[512];
		if ((size_t)(eq - argv[i]) >= sizeof(key)) {
			tool_error("'%s': the name is too long", argv[i]);
			status = 1;
			continue;
		}
		memcpy(key, argv[i], (size_t)(eq - argv[i]));
		key[eq - argv[i]] = '\0';
		const char *path = which == O_SYSTEM ? SYSTEM_CONFIG : user;
		if (!path[0]) {
			tool_error("no file to write: $HOME is not set (set PERF_CONFIG to name one)");
			status = 1;
			break;
		}
		int r = tool_cfg_set_in_file(path, key, eq + 1);
		if (r == -EINVAL)
			tool_error("'%s': not a NAME (section.name or section.subsection.name)", key);
		else if (r == -EBADMSG)
			tool_error("%s: the file does not parse; not changed (fix or remove it first)",
				   path);
		else if (r)
			tool_error("%s: %s", path, strerror(-r));
		if (r)
			status = 1;
	}
	tool_cfg_free(&one);
	return tool_finish_stdout(status);
}
