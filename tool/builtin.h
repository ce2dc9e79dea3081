/* SPDX-License-Identifier: MIT */
/* tool/builtin.h - the command table's entry points and shared tool helpers. */
#ifndef TOOL_BUILTIN_H
#define TOOL_BUILTIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * A command's options, one table (tool/options.c): getopt_long's tables and the option
 * lines of the usage text are made from it. The table ends with an entry whose id is 0.
 */
struct tool_opt {
	int id;                 /* what tool_getopt returns: the short option's letter, or
				 * a value >= 256 for an option with a long name only */
	const char *name;       /* long name without "--", or NULL */
	int has_arg;            /* no_argument, required_argument or optional_argument */
	const char *arg;        /* the argument as the usage shows it ("<file>"), or NULL */
	const char *help;       /* its lines ('\n' between them); NULL: a hidden alias */
};
/* A command's usage text: synopsis, intro, the option lines, outro. */
struct tool_help {
	const char *synopsis;   /* "usage: perfkit <cmd> ...\n" */
	const char *intro;      /* paragraphs after a blank line, or NULL */
	const struct tool_opt *opts;
	const char *outro;      /* after the options and a blank line, or NULL */
};
/* getopt_long over the table (optind/optarg/opterr as for getopt_long). Flags:
 * TOOL_OPT_STOP_AT_ARG stops at the first argument that is not an option (a command to
 * run follows). */
#define TOOL_OPT_STOP_AT_ARG 1u
int tool_getopt(int argc, char **argv, const struct tool_opt *opts, unsigned flags);
void tool_print_usage(FILE *f, const struct tool_help *h);
/* The default case of a tool_getopt loop: "unknown or incomplete option" (the letter, or
 * the word getopt stopped at) and the usage on stderr. Returns 129, the usage-error exit
 * status. tool_usage_error: the same for a command line that is wrong as a whole. */
int tool_bad_option(char **argv, const struct tool_help *h);
int tool_usage_error(const struct tool_help *h, const char *msg);
/* -m/--mmap-pages: a power of two, at most 2^20, into *pages; 0, or 129 after the error. */
int tool_parse_mmap_pages(const char *arg, size_t *pages);
/* every option of the table, one a line (`perfkit CMD --list-opts`, shell completion) */
void tool_list_opts(FILE *f, const struct tool_opt *opts);

/*
 * Each subcommand lives in tool/cmd-<name>.c and exports
 *     int cmd_<name>(int argc, char **argv);
 *     extern const struct tool_help cmd_<name>_help;
 * argv[0] is the command name. The return value is the process exit status.
 */
#define TOOL_DECLARE_CMD(name)                    \
	int cmd_##name(int argc, char **argv);  \
	extern const struct tool_help cmd_##name##_help

/* one line per command, e.g. TOOL_DECLARE_CMD(list);
TOOL_DECLARE_CMD(record);
TOOL_DECLARE_CMD(report); */
TOOL_DECLARE_CMD(annotate);
TOOL_DECLARE_CMD(archive);
TOOL_DECLARE_CMD(buildid_list);
TOOL_DECLARE_CMD(check);
TOOL_DECLARE_CMD(config);
TOOL_DECLARE_CMD(convert);
TOOL_DECLARE_CMD(diff);
TOOL_DECLARE_CMD(flamegraph);
TOOL_DECLARE_CMD(list);
TOOL_DECLARE_CMD(probe);
TOOL_DECLARE_CMD(push);
TOOL_DECLARE_CMD(record);
TOOL_DECLARE_CMD(report);
TOOL_DECLARE_CMD(script);
TOOL_DECLARE_CMD(stat);
TOOL_DECLARE_CMD(trace);
TOOL_DECLARE_CMD(sched);
TOOL_DECLARE_CMD(top);

/* Warn about each u:/r:/sdt: event whose binary was replaced or removed since it was
 * parsed (the probe stays on the file as it was). */
struct pk_event_list;
void tool_probe_check(const struct pk_event_list *events);

/* Name of the running subcommand, for messages ("perfkit <cmd>: ..."). */
extern const char *tool_cmd_name;

/* "perfkit <cmd>: <fmt...>\n" on stderr. */
/* tool/record-text.c: perf's line for a COMM, FORK, EXIT, MMAP or MMAP2 record
 * ("PERF_RECORD_COMM exec: ls:12/12\n"), written through pf; false for other types */
struct pk_record;
typedef void (*tool_printf_fn)(void *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool tool_side_record_text(const struct pk_record *r, tool_printf_fn pf, void *ctx);
/* tool/record-dump.c: perf's text after "PERF_RECORD_<NAME>" (perf report -D, perf script)
 * of the other kernel records (LOST ... AUX_OUTPUT_HW_ID; false for SAMPLE and the types
 * above) and of the user records (64-82, decoded from their hdr->size bytes) */
struct pk_data_attr;
struct perf_event_header;
struct pk_machine;
/* (m: the machine whose kernel maps name a TEXT_POKE address, as perf's; NULL: none) */
bool tool_record_tail_text(const struct pk_record *r, const struct pk_data_attr *a,
			   struct pk_machine *m, tool_printf_fn pf, void *ctx);
void tool_user_record_tail_text(const struct perf_event_header *h, tool_printf_fn pf, void *ctx);
void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "perfkit <cmd>: warning: <fmt...>\n" on stderr. */
void tool_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* True if argv has -h/--help at the option level (stops at "--"). */
bool tool_wants_help(int argc, char **argv);
/* Flush stdout and report a write error (full disk, closed pipe) as failure. Returns
 * `status` if stdout is fine, 1 (with a message) if not; EPIPE exits quietly. */
int tool_finish_stdout(int status);
/* Open a perf.data input (pk_data_reader__open with opts, NULL for none); on failure
 * print what the input is ("'x' is empty: ...", "is a directory", "is not a perf.data
 * file (starts with ...)", ...) and return NULL. Every reader command opens through it. */
struct pk_data_reader_opts;
struct pk_data_head;
struct pk_data_reader *tool_open_input(const char *path, const struct pk_data_reader_opts *opts);
/* The message alone, for an error `err` (errno or PK_ERR_*, either sign) of opening path. */
void tool_input_error(const char *path, int err, const struct pk_data_head *head);
/* tool/input-dir.c: perf's directory format (perf.data/data + data.N) as one perf.data
 * image in *image (malloc'd, *image_len bytes); 0 or -errno (PK_ERR_FORMAT) */
int tool_dir_image(const char *dir, void **image, size_t *image_len);
/*
 * Whole-file outputs (tool/outfile.c): -o of flamegraph and convert, and of any command
 * that writes a file of its own. tool_outfile_open returns the stream to write ("-" is
 * stdout); a regular file is written to a hidden temporary file beside `path` and
 * renamed over it by tool_outfile_close when complete, so `path` is never seen half
 * written and a killed command leaves the previous file intact. Prints its error and
 * returns NULL on failure. tool_outfile_close(o, err) takes the writer's error (0 or a
 * negative errno), flushes, and renames only if all went well (else the temporary file
 * is removed); it returns the first error, printing nothing.
 */
struct tool_outfile {
	const char *path;
	FILE *f;
	char *tmp, *target;
};
FILE *tool_outfile_open(struct tool_outfile *o, const char *path);
/* PERFKIT_TEST_OUTPUT_PAUSE_MS: a test hook; whole-file outputs pause that long after
 * creating their file and again before completing it (0: no pause). */
unsigned tool_test_output_pause_ms(void);
int tool_outfile_close(struct tool_outfile *o, int err);
/* Install library logging that prints "perfkit <cmd>: ..." for warnings (and, with
 * verbose > 0, info/debug). */
void tool_setup_log(int verbose);
/* How sched and trace read a perf.data file: false (the default) reads it through a
 * reused window with pread, true maps it (PERFKIT_READ=mmap). Report and script map it
 * by default (tool_read_pread); see docs/perfkit-report.md for the measurements. */
bool tool_read_mmap(void);
/* PERFKIT_READ=pread: read perf.data through the window even where the command maps it
 * by default (script: see cmd-script.c) */
bool tool_read_pread(void);
/* Whether readers of perf.data may use a second thread (PERFKIT_NO_THREADS unset). */
bool tool_threads_allowed(void);
/* tool_threads_allowed, and a CPU is free for the second thread: the 1-minute load
 * average is below the CPUs online (report's rule; annotate's measurements agree). */
bool tool_threads_worthwhile(void);
/*
 * tool/env.c: the environment, read once (tool_env_load, before a command runs; the
 * functions below load it too if needed). It sets the library's process-wide settings
 * (pk_set_config: PERFKIT_TRACEFS, PERFKIT_THP) and keeps the rest for the calls that
 * take it: the options of every machine the tool has made (build-id and cache
 * directories, check knobs), and the build-id cache record fills.
 */
struct pk_machine_opts;
void tool_env_load(void);
const struct pk_machine_opts *tool_machine_opts(void);
/* --symfs DIR of a reading command (NULL: none) and --no-debuginfod, for the machines it
 * makes after the call (tool_machine_opts) */
void tool_set_symfs(const char *dir);
void tool_set_no_debuginfod(bool off);
/* The options that choose where symbols come from, in the tables of report, script,
 * flamegraph and annotate; tool_symbol_source_opt takes them (tool_set_symfs,
 * tool_set_no_debuginfod). */
enum { TOOL_OPT_SYMFS = 900, TOOL_OPT_NO_DEBUGINFOD };
#define TOOL_SYMBOL_SOURCE_OPTS                                                           \
	{ TOOL_OPT_SYMFS, "symfs", required_argument, "<dir>",                            \
	  "look for the recorded files under <dir> (and in it as\n"                       \
	  "a build-id cache: an extracted perfkit archive)" },                             \
	{ TOOL_OPT_NO_DEBUGINFOD, "no-debuginfod", no_argument, NULL,                     \
	  "fetch no debug files from $DEBUGINFOD_URLS" }
void tool_symbol_source_opt(int c, const char *arg);
/* $DEBUGINFOD_URLS and $DEBUGINFOD_TIMEOUT (NULL when unset) */
const char *tool_debuginfod_urls(void);
const char *tool_debuginfod_timeout(void);
/* PERFKIT_KCORE: the file annotate reads as /proc/kcore (tests; NULL: unset) */
const char *tool_kcore_path(void);
/* tool/debuginfod.c: set mo's debug-file finder to fetch from debuginfod when enabled
 * and $DEBUGINFOD_URLS names servers; otherwise clear it */
void tool_debuginfod_setup(struct pk_machine_opts *mo, bool enable);
/* the same finder called directly: an fd and *path (malloc'ed) of the debug file with
 * build-id id from $DEBUGINFOD_URLS, or -ENOENT (none, or no servers) / -errno */
int tool_debuginfod_find(const uint8_t *id, size_t len, char **path);
/* $PERF_BUILDID_DIR, else buildid.dir of the configuration, else $HOME/.debug, else ""
 * (no cache). */
const char *tool_buildid_dir(void);
/* $HOME/.debug (perf record's cache whatever PERF_BUILDID_DIR says), "" if no HOME */
const char *tool_home_debug(void);
/* The user's configuration file ($PERF_CONFIG, *exclusive: the only one read; else
 * $HOME/.perfconfig; "" if none) and whether /etc/perfconfig is skipped. */
const char *tool_user_config_path(bool *exclusive, bool *nosystem);
/* tool/pager.c: whether CMD's output goes through a pager (mode: -1 --no-pager, 1
 * --paginate, 0 the command's default and pager.CMD of the configuration; never when
 * stdout is not a terminal), and starting it (stdout, and stderr on a terminal, go to it;
 * it is waited for at exit). */
bool tool_pager_wanted(const char *cmd, int mode);
void tool_setup_pager(void);
/* tool/report-tui.c: whether `perfkit report ARGS` (argv[0] "report") opens its browser: a
 * terminal without --stdio/--json/--header/--header-only, or --tui (then no pager) */
bool rpt_tui_wanted(int argc, char **argv);
/* the pager runs (stdout goes to it); --stdio-color's word (1 always, -1 never, 0 auto,
 * TOOL_COLOR_BAD); whether to colour stdout in that mode (perf's rule, color.ui) */
bool tool_pager_in_use(void);
#define TOOL_COLOR_BAD 2
int tool_color_mode(const char *s);
bool tool_use_color(int mode);
/* $PERF_PAGER and $PAGER (NULL when unset) */
void tool_pager_env(const char **perf_pager, const char **pager);
/* Mount tracefs at /sys/kernel/tracing if we are root and it is not mounted (perf does
 * the same). Returns true if tracefs is available afterwards. */
bool tool_ensure_tracefs(void);
/* The error after tool_ensure_tracefs failed: not mounted, or not readable by this user
 * (the fix either way). `events` names what needs it ("raw_syscalls"). */
void tool_no_tracefs_error(const char *events);

/* After EMFILE: raise the soft RLIMIT_NOFILE to the hard limit (many events x CPUs x
 * threads need many fds), with a notice. True if raised (retry the open); EMFILE past that
 * is explained by pk_explain_open_error. */
bool tool_raise_nofile(void);

/* The threads of a -p/-t list: with whole_process, every thread of each listed process
 * (from /proc/PID/task); otherwise exactly the listed ids. NULL + errno on failure. */
struct pk_thread_map;
struct pk_thread_map *tool_threads_of_pids(const char *list, bool whole_process);
/* Append the threads of process pid (from /proc/PID/task) to the growing array
 * *tids (*n used, *cap allocated). 0, or -errno (the process is gone: -ESRCH/-ENOENT). */
int tool_add_threads_of(pid_t pid, pid_t **tids, size_t *n, size_t *cap);

/* An O_RDONLY directory fd on cgroup NAME under the cgroup2 (or v1 perf_event) mount, for
 * PERF_FLAG_PID_CGROUP; prints the error and returns -1 on failure. */
int tool_open_cgroup(const char *name);

/* tool/recorder-opts.c: the options of the commands that sample (record, top): -e, -F,
 * -c, -g, the call-graph option (its id: callgraph_id), -p, -t, -a, -C. Returns 1 if c
 * was one of them and is taken, 0 if it is not one of them, 129 after printing a usage
 * error. tool_parse_callgraph: "fp", "no" or "dwarf[,SIZE]" (0 or 129). */
struct pk_recorder_opts;
struct pk_event_list;
int tool_recorder_opt(struct pk_recorder_opts *ro, struct pk_event_list *events, int c,
		      const char *arg, int callgraph_id);
int tool_parse_callgraph(struct pk_recorder_opts *ro, const char *arg);
/* A sampling command's command line: the shared options into ro and events, each of its
 * own to take(), up to its first argument (a command to run: *command, else NULL). take()
 * returns 0, 129 after printing a usage error, or TOOL_OPT_UNKNOWN for an option that is
 * not the command's (reported with the usage). 0, or 129. */
#define TOOL_OPT_UNKNOWN (-1)
struct tool_recorder_cmdline {
	const struct tool_help *help; /* its options, and the usage on errors */
	int callgraph_id;
	struct pk_recorder_opts *ro;
	struct pk_event_list *events;
	int (*take)(int c, char *arg, void *ctx);
	void *ctx;
};
int tool_recorder_parse(const struct tool_recorder_cmdline *cl, int argc, char **argv,
			char ***command);
/* tool/record-messages.c: the error of a pk_recorder__open failure that lies with the
 * targets or the events (an invalid CPU list, threads not found, an event that would not
 * open, explained), the same for every command that samples. False: f is none of these;
 * the caller says what it means for it. */
struct pk_recorder_failure;
bool tool_report_target_failure(const struct pk_recorder_failure *f);

/* Option values of the perf.data readers: "a,b" appended to *out (strdup'd); "1,3-5"
 * appended as ints; perf's --time "START,END" (seconds) or "A%-B%" (of the file's
 * sample_time span) as nanoseconds, 0 for an open end. 0 or -errno (-EINVAL: bad text). */
int tool_split_list(const char *s, char ***out, size_t *nr);
int tool_parse_ints(const char *s, int32_t **out, size_t *nr);
struct pk_data_reader;
int tool_parse_time_window(const char *spec, struct pk_data_reader *rd, uint64_t *start,
			   uint64_t *end);

/* A quoted JSON string through the library's one escaper (pk_json__write_str). */
void tool_json_str(FILE *f, const char *s);

#endif
