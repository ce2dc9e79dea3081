/* SPDX-License-Identifier: MIT */
/*
 * tool/env.c - the environment variables that configure perfkit, read here and nowhere
 * else (the library reads none for its configuration: docs/architecture.md,
 * "Configuration"). tool_env_load() runs once before a command; the values then
 * reach the library through pk_set_config and the options structs of each call.
 *
 *   PERF_BUILDID_DIR    perf's build-id cache (else buildid.dir of the configuration, else
 *                       $HOME/.debug, which is searched too)
 *   XDG_CACHE_HOME      perfkit's cache directory is $XDG_CACHE_HOME/perfkit, else
 *   HOME                $HOME/.cache/perfkit
 *   PK_NO_CACHE         set, not "" or "0": no cache directory at all
 *   PERFKIT_TRACEFS     tracefs directory tried first
 *   PERFKIT_THP=1       huge pages for big arrays
 *   PERFKIT_UNWIND=libdwfl, PERFKIT_SCOPES=libdw   check knobs of the symbol code
 *   PERFKIT_NO_THREADS  no reader thread; PERFKIT_READ=mmap  map perf.data files,
 *                       PERFKIT_READ=pread  read them through a window (each command
 *                       has its default: tool_read_mmap, tool_read_pread)
 *   PERF_CONFIG         the one configuration file to read (else /etc/perfconfig, unless
 *   PERF_CONFIG_NOSYSTEM is set, then $HOME/.perfconfig)
 *   PERF_PAGER, PAGER   the pager of long output on a terminal (tool/pager.c)
 *   DEBUGINFOD_URLS     set and not empty: debug files missing here are fetched by build-id
 *                       (tool/debuginfod.c; libdebuginfod reads it and its other
 *                       variables itself); --no-debuginfod of a command turns it off
 *   DEBUGINFOD_TIMEOUT  seconds all debuginfod queries of one command may take together
 *   PERFKIT_KCORE       (tests) the file annotate reads as /proc/kcore ("": none)
 *   PYROSCOPE_SERVER_ADDRESS, PYROSCOPE_APPLICATION_NAME, PYROSCOPE_BASIC_AUTH_USER,
 *   PYROSCOPE_BASIC_AUTH_PASSWORD, PYROSCOPE_AUTH_TOKEN, PYROSCOPE_TENANT_ID
 *                       defaults of push's options, named as Pyroscope's own clients
 *                       name them (tool/push-opts.c)
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "perfconfig.h"
#include "push-opts.h"

static struct {
	bool loaded;
	bool no_threads, read_mmap, read_pread;
	unsigned output_pause_ms;       /* PERFKIT_TEST_OUTPUT_PAUSE_MS (tests only) */
	char buildid_dir[PATH_MAX];     /* "" = none */
	char home_debug[PATH_MAX];      /* $HOME/.debug, "" = none */
	char cache_dir[PATH_MAX];       /* "" = none */
	char user_config[PATH_MAX];     /* $PERF_CONFIG or $HOME/.perfconfig, "" = none */
	bool buildid_from_env, buildid_done; /* buildid_dir set by the variable; complete */
	bool config_exclusive, config_nosystem;
	const char *perf_pager, *pager;
	const char *debuginfod_urls, *debuginfod_timeout;
	const char *kcore;              /* PERFKIT_KCORE (tests), NULL = /proc/kcore */
	const char *symfs;              /* --symfs of the command, NULL = none */
	bool no_debuginfod;             /* --no-debuginfod of the command */
	struct pk_machine_opts mo;
} env;

/* "<a><b>" into buf, or "" when it does not fit */
static void join(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s%s", a, b);
	if (n < 0 || (size_t)n >= len)
		buf[0] = '\0';
}

void tool_env_load(void)
{
	if (env.loaded)
		return;
	env.loaded = true;
	const char *s;

	env.no_threads = getenv("PERFKIT_NO_THREADS") != NULL;
	/* a test hook: whole-file outputs pause this long after creating their file and
	 * before completing it, so that tests can kill the command mid-write (tool/outfile.c) */
	s = getenv("PERFKIT_TEST_OUTPUT_PAUSE_MS");
	if (s)
		env.output_pause_ms = (unsigned)strtoul(s, NULL, 10) % 60000;
	s = getenv("PERFKIT_READ");
	env.read_mmap = s && !strcmp(s, "mmap");
	env.read_pread = s && !strcmp(s, "pread");

	const char *home = getenv("HOME");
	if (home && *home)
		join(env.home_debug, sizeof(env.home_debug), home, "/.debug");
	s = getenv("PERF_CONFIG");
	env.config_exclusive = s != NULL;
	if (s)
		join(env.user_config, sizeof(env.user_config), s, "");
	else if (home && *home)
		join(env.user_config, sizeof(env.user_config), home, "/.perfconfig");
	env.config_nosystem = getenv("PERF_CONFIG_NOSYSTEM") != NULL;
	env.perf_pager = getenv("PERF_PAGER");
	env.pager = getenv("PAGER");
	env.debuginfod_urls = getenv("DEBUGINFOD_URLS");
	env.debuginfod_timeout = getenv("DEBUGINFOD_TIMEOUT");
	env.kcore = getenv("PERFKIT_KCORE");

	s = getenv("PERF_BUILDID_DIR");
	if (s && *s)
		join(env.buildid_dir, sizeof(env.buildid_dir), s, "");
	env.buildid_from_env = s && *s;

	/* the XDG base directory rule: relative values are ignored */
	const char *nc = getenv("PK_NO_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME");
	if (nc && *nc && strcmp(nc, "0"))
		env.cache_dir[0] = '\0';
	else if (xdg && xdg[0] == '/')
		join(env.cache_dir, sizeof(env.cache_dir), xdg, "/perfkit");
	else if (home && home[0] == '/')
		join(env.cache_dir, sizeof(env.cache_dir), home, "/.cache/perfkit");

	s = getenv("PERFKIT_UNWIND");
	bool uw = s && !strcmp(s, "libdwfl");
	s = getenv("PERFKIT_SCOPES");
	bool sc = s && !strcmp(s, "libdw");
	PK_OPTS(pk_machine_opts, mo, .buildid_dir = env.buildid_dir,
		.extra_buildid_dir = env.home_debug, .cache_dir = env.cache_dir,
		.unwind_libdwfl_only = uw, .scopes_libdw = sc);
	env.mo = mo;

	s = getenv("PERFKIT_THP");
	PK_OPTS(pk_config_opts, co, .tracefs_root = getenv("PERFKIT_TRACEFS"),
		.huge_pages = s && !strcmp(s, "1"));
	if (pk_set_config(&co) < 0) {
		co.tracefs_root = NULL;  /* too long to name a directory: as if unset */
		pk_set_config(&co);
	}
}

/*
 * The build-id directory: the variable (perf only sets it, for its scripts), then
 * buildid.dir of perf's configuration (as perf reads it), then ~/.debug. Completed on
 * first use, not in tool_env_load: only readers and record need it, and reading the
 * configuration files is no part of every command's start-up (stat's is measured).
 */
static void buildid_dir_load(void)
{
	tool_env_load();
	if (env.buildid_done)
		return;
	env.buildid_done = true;
	if (env.buildid_from_env)
		return;
	const char *s = tool_config_get("buildid.dir");
	if (s && *s)
		join(env.buildid_dir, sizeof(env.buildid_dir), s, "");
	else
		memcpy(env.buildid_dir, env.home_debug, sizeof(env.buildid_dir));
}

const struct pk_machine_opts *tool_machine_opts(void)
{
	buildid_dir_load();   /* env.mo.buildid_dir points at env.buildid_dir */
	env.mo.symfs = env.symfs;
	tool_debuginfod_setup(&env.mo, !env.no_debuginfod);
	return &env.mo;
}

void tool_set_symfs(const char *dir)
{
	tool_env_load();
	env.symfs = dir && *dir ? dir : NULL;
}

void tool_set_no_debuginfod(bool off)
{
	tool_env_load();
	env.no_debuginfod = off;
}

void tool_symbol_source_opt(int c, const char *arg)
{
	if (c == TOOL_OPT_SYMFS)
		tool_set_symfs(arg);
	else if (c == TOOL_OPT_NO_DEBUGINFOD)
		tool_set_no_debuginfod(true);
}

const char *tool_debuginfod_urls(void)
{
	tool_env_load();
	return env.debuginfod_urls;
}

const char *tool_kcore_path(void)
{
	tool_env_load();
	return env.kcore;
}

const char *tool_debuginfod_timeout(void)
{
	tool_env_load();
	return env.debuginfod_timeout;
}

const char *tool_buildid_dir(void)
{
	buildid_dir_load();
	return env.buildid_dir;
}

const char *tool_home_debug(void)
{
	tool_env_load();
	return env.home_debug;
}

bool tool_threads_allowed(void)
{
	tool_env_load();
	return !env.no_threads;
}

bool tool_read_mmap(void)
{
	tool_env_load();
	return env.read_mmap;
}

bool tool_read_pread(void)
{
	tool_env_load();
	return env.read_pread;
}

const char *tool_user_config_path(bool *exclusive, bool *nosystem)
{
	tool_env_load();
	*exclusive = env.config_exclusive;
	*nosystem = env.config_nosystem;
	return env.user_config;
}

void tool_pager_env(const char **perf_pager, const char **pager)
{
	tool_env_load();
	*perf_pager = env.perf_pager;
	*pager = env.pager;
}

unsigned tool_test_output_pause_ms(void)
{
	tool_env_load();
	return env.output_pause_ms;
}

static const char *nonempty(const char *name)
{
	const char *s = getenv(name);
	return s && *s ? s : NULL;
}

void tool_push_env(struct tool_push_env *e)
{
	static char spool[PATH_MAX];
	tool_env_load();
	e->server = nonempty("PYROSCOPE_SERVER_ADDRESS");
	e->app = nonempty("PYROSCOPE_APPLICATION_NAME");
	e->user = nonempty("PYROSCOPE_BASIC_AUTH_USER");
	e->password = nonempty("PYROSCOPE_BASIC_AUTH_PASSWORD");
	e->token = nonempty("PYROSCOPE_AUTH_TOKEN");
	e->tenant = nonempty("PYROSCOPE_TENANT_ID");
	/* the spool is state, not a cache, but it goes where perfkit keeps its files; with
	 * PK_NO_CACHE there is no default spool */
	e->spool_dir = NULL;
	if (env.cache_dir[0]) {
		join(spool, sizeof(spool), env.cache_dir, "/push-spool");
		e->spool_dir = spool[0] ? spool : NULL;
	}
}
