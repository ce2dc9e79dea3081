/* SPDX-License-Identifier: MIT */
/*
 * tool/pager.c - long output through a pager on a terminal, as perf and git do: the
 * commands that print listings (report, script, annotate, diff, list) write into a pipe
 * to $PERF_PAGER, else core.pager of the configuration, else $PAGER, else `less` (with
 * LESS=FRSX unless set: one screen or less is printed and the pager exits at once).
 * "" or "cat" means no pager; so do `perfkit --no-pager CMD` and pager.CMD=false in the
 * configuration; `perfkit --paginate CMD` pages any command. Never when stdout is not a
 * terminal.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "builtin.h"
#include "perfconfig.h"

static pid_t pager_pid = -1;

/* at exit: end the pager's input and wait until the user leaves it */
static void wait_for_pager(void)
{
	if (pager_pid < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	pager_pid = -1;
}

static const char *pick_pager(void)
{
	const char *perf_pager, *pager;
	tool_pager_env(&perf_pager, &pager);
	const char *p = perf_pager;
	if (!p)
		p = tool_config_get("core.pager");
	if (!p)
		p = pager;
	if (!p)
		p = access("/usr/bin/pager", X_OK) == 0 ? "/usr/bin/pager" : "less";
	return *p && strcmp(p, "cat") ? p : NULL;
}

bool tool_pager_wanted(const char *cmd, int mode)
{
	static const char *const paged[] = { "report", "script", "annotate", "diff", "list" };
	if (mode < 0 || !isatty(STDOUT_FILENO))
		return false;
	if (mode > 0)
		return true;
	char key[64];
	snprintf(key, sizeof(key), "pager.%s", cmd);
	const char *v = tool_config_get(key);
	if (v && tool_cfg_bool(v) >= 0)
		return tool_cfg_bool(v) == 1;
	for (size_t i = 0; i < sizeof(paged) / sizeof(paged[0]); i++)
		if (!strcmp(cmd, paged[i]))
			return true;
	return false;
}

void tool_setup_pager(void)
{
	const char *pager = pick_pager();
	int fds[2];
	if (!pager || pipe(fds))
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		setenv("LESS", "FRSX", 0);
		setenv("LV", "-c", 0);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		_exit(127);
	}
	dup2(fds[1], STDOUT_FILENO);
	if (isatty(STDERR_FILENO))
		dup2(fds[1], STDERR_FILENO);   /* messages on the pager's screen, in order */
	close(fds[0]);
	close(fds[1]);
	pager_pid = pid;
	atexit(wait_for_pager);
}

bool tool_pager_in_use(void)
{
	return pager_pid >= 0;
}

int tool_color_mode(const char *s)
{
	if (!strcmp(s, "always") || !strcmp(s, "true") || !strcmp(s, "yes"))
		return 1;
	if (!strcmp(s, "never") || !strcmp(s, "false") || !strcmp(s, "no"))
		return -1;
	if (!strcmp(s, "auto"))
		return 0;
	return TOOL_COLOR_BAD;
}

/* perf's colour rule: the option, else color.ui of the configuration, else auto: colour
 * when stdout is a terminal or goes to the pager (less -R shows the escapes) */
bool tool_use_color(int mode)
{
	if (!mode) {
		const char *ui = tool_config_get("color.ui");
		int m = ui ? tool_color_mode(ui) : 0;
		mode = m == TOOL_COLOR_BAD ? 0 : m;
	}
	if (mode)
		return mode > 0;
	return isatty(STDOUT_FILENO) || tool_pager_in_use();
}
