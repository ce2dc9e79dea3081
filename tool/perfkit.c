/* SPDX-License-Identifier: MIT */
/*
 * tool/perfkit.c - the command table and dispatcher.
 *
 * Adding a command:
 *   1. write tool/cmd-<name>.c with `int cmd_<name>(int, char **)` and its option table
 *      and usage, `const struct tool_help cmd_<name>_help` (tool/options.c);
 *   2. TOOL_DECLARE_CMD(<name>) in builtin.h;
 *   3. add a row to `commands` below (keep it sorted by how often people use it);
 *   4. add docs/perfkit-<name>.md and tests/cli/cases/<name>-*.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

struct cmd {
	const char *name;
	int (*fn)(int, char **);
	const struct tool_help *help;
	const char *summary;
};

static const struct cmd commands[] = {
	{ "stat", cmd_stat, &cmd_stat_help, "count events of a command, processes or CPUs" },
	{ "record", cmd_record, &cmd_record_help, "sample a command, processes or CPUs into perf.data" },
	{ "report", cmd_report, &cmd_report_help, "show where the samples of perf.data went (perf report --stdio)" },
	{ "script", cmd_script, &cmd_script_help, "dump the records of a perf.data file (text or JSON)" },
	{ "flamegraph", cmd_flamegraph, &cmd_flamegraph_help, "interactive HTML flame graph of perf.data (or of two: --diff)" },
	{ "convert", cmd_convert, &cmd_convert_help, "perf.data to folded, pprof, speedscope, Firefox Profiler or JSON" },
	{ "diff", cmd_diff, &cmd_diff_help, "per-symbol comparison of two perf.data files" },
	{ "push", cmd_push, &cmd_push_help, "send perf.data files as pprof to a Pyroscope-compatible server" },
	{ "annotate", cmd_annotate, &cmd_annotate_help, "per-instruction samples of the hottest functions (perf annotate --stdio)" },
	{ "top", cmd_top, &cmd_top_help, "live profile of the system, processes or a command (perf top)" },
	{ "trace", cmd_trace, &cmd_trace_help, "system calls of a command, processes or the system (perf trace, strace)" },
	{ "sched", cmd_sched, &cmd_sched_help, "scheduler latency, per-switch history and CPU map (perf sched)" },
	{ "list", cmd_list, &cmd_list_help, "list the events that can be measured here" },
	{ "probe", cmd_probe, &cmd_probe_help, "functions and SDT markers of a binary, where a probe would go" },
	{ "buildid-list", cmd_buildid_list, &cmd_buildid_list_help, "the build-ids of the objects a recording names (perf buildid-list)" },
	{ "archive", cmd_archive, &cmd_archive_help, "pack the binaries and debug files a recording needs into a tar (perf archive)" },
	{ "check", cmd_check, &cmd_check_help, "show what can be measured here, and why not" },
	{ "config", cmd_config, &cmd_config_help, "read or write perf's configuration files (~/.perfconfig)" },
	{ "version", NULL, NULL, "print perfkit's version" },
};

/* `perfkit --list-cmds`: the command names, one a line (for shell completion) */
static void list_cmds(FILE *f)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "%s\n", commands[i].name);
	fprintf(f, "help\n");
}

/*
 * `perfkit help CMD` on a terminal shows CMD's manual page when one is installed (as
 * `git help` does); otherwise, and when stdout is not a terminal, the usage text.
 */
static void help_man(const char *cmd)
{
	char page[64];
	if (!isatty(STDOUT_FILENO))
		return;
	snprintf(page, sizeof(page), "perfkit-%s", cmd);
	pid_t pid = fork();
	if (pid == 0) {   /* is the page there? (man -w prints its path, quietly here) */
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execlp("man", "man", "-w", page, (char *)NULL);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return;
	fflush(stdout);
	execlp("man", "man", page, (char *)NULL);
}

static void main_usage(FILE *f)
{
	fprintf(f, "usage: perfkit [--version] [--help] [--no-pager | --paginate] <command> [<args>]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'perfkit help <command>' or 'perfkit <command> --help' shows a command's options.\n");
}

/*
 * Input files (perf.data, the ELF files a recording names) are read through mmap. If one
 * of them is truncated by someone else while we read it, touching the vanished pages
 * raises SIGBUS: say what happened instead of dying with "Bus error". Only
 * async-signal-safe calls here.
 */
static void on_sigbus(int sig)
{
	static const char a[] = "perfkit ";
	static const char b[] = ": an input file shrank while it was being read (SIGBUS on a "
				"mapped page): it was truncated or rewritten by another program "
				"during the run; run again on a copy that nothing is writing\n";
	const char *cmd = tool_cmd_name ? tool_cmd_name : "";
	ssize_t r = write(STDERR_FILENO, a, sizeof(a) - 1);
	r += write(STDERR_FILENO, cmd, strlen(cmd));
	r += write(STDERR_FILENO, b, sizeof(b) - 1);
	(void)r;
	(void)sig;
	_exit(1);
}

static void print_usage(FILE *f, const struct cmd *c)
{
	tool_print_usage(f, c->help);
}

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	tool_cmd_name = NULL;
	if (argc < 2) {
		main_usage(stderr);
		return 129;
	}
	/* perf's options before the command: -P/--no-pager, -p/--paginate */
	int pager_mode = 0;
	while (argc > 1 && (!strcmp(argv[1], "--no-pager") || !strcmp(argv[1], "-P") ||
			    !strcmp(argv[1], "--paginate") || !strcmp(argv[1], "-p"))) {
		pager_mode = argv[1][1] == 'P' || argv[1][2] == 'n' ? -1 : 1;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2) {
		main_usage(stderr);
		return 129;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
		printf("perfkit %s (libperfkit %s)\n", PK_VERSION_STRING, pk_version());
		return tool_finish_stdout(0);
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		main_usage(stdout);
		return tool_finish_stdout(0);
	}
	if (!strcmp(name, "--list-cmds")) {
		list_cmds(stdout);
		return tool_finish_stdout(0);
	}
	if (!strcmp(name, "help")) {
		if (argc < 3) {
			main_usage(stdout);
			return tool_finish_stdout(0);
		}
		const struct cmd *c = find_cmd(argv[2]);
		if (!c || !c->help) {
			fprintf(stderr, "perfkit: '%s' is not a perfkit command; see 'perfkit --help'\n",
				argv[2]);
			return 129;
		}
		help_man(c->name);   /* returns only when there is no page to show */
		print_usage(stdout, c);
		return tool_finish_stdout(0);
	}
	const struct cmd *c = find_cmd(name);
	if (!c || !c->fn) {
		fprintf(stderr, "perfkit: '%s' is not a perfkit command; see 'perfkit --help'\n", name);
		return 129;
	}
	tool_cmd_name = c->name;
	if (argc == 3 && !strcmp(argv[2], "--list-opts") && c->help) {
		tool_list_opts(stdout, c->help->opts);   /* for shell completion, as perf's */
		return tool_finish_stdout(0);
	}
	if (tool_wants_help(argc - 1, argv + 1)) {
		print_usage(stdout, c);
		return tool_finish_stdout(0);
	}
	/* Writes to a closed pipe return EPIPE (reported quietly by tool_finish_stdout)
	 * instead of killing us mid-output with no chance to finish files. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGBUS, on_sigbus);
	tool_env_load();
	/* (report's browser is a screen of its own: no pager under it) */
	if (tool_pager_wanted(c->name, pager_mode) &&
	    !(pager_mode <= 0 && !strcmp(c->name, "report") && rpt_tui_wanted(argc - 1, argv + 1)))
		tool_setup_pager();
	return c->fn(argc - 1, argv + 1);
}
