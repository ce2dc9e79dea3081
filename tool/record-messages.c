/* SPDX-License-Identifier: MIT */
/*
 * tool/record-messages.c - what `perfkit record` says: the library's notices, a failed
 * open explained, the status line, the summary, lost-event warnings and the build-id
 * cache report.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "builtin.h"
#include "record.h"

/* ---- messages ---- */

void rec_on_notice(const struct pk_recorder_notice *n, void *ctx)
{
	const struct rec_opts *o = ctx;

	if (n->kind == PK_RECORDER_FREQ_CLAMPED && !o->quiet)
		tool_warn("-F %" PRIu64 " exceeds perf_event_max_sample_rate; using %" PRIu64 " Hz",
			     n->asked, n->used);
	else if (n->kind == PK_RECORDER_CYCLES_FALLBACK && !o->quiet)
		fprintf(stderr, "perfkit record: notice: '%s' is not supported here (no hardware "
			"PMU); sampling cpu-clock instead\n", n->name);
	else if (n->kind == PK_RECORDER_PAGES_REDUCED)
		fprintf(stderr, "perfkit record: notice: %" PRIu64 "-page ring buffers exceed the "
			"locked-memory limit (/proc/sys/kernel/perf_event_mlock_kb, ulimit -l); "
			"using %" PRIu64 " pages\n", n->asked, n->used);
	else if (n->kind == PK_RECORDER_LOCK_TAKEN_OVER)
		fprintf(stderr, "perfkit record: notice: '%s' was being written by pid %d, which "
			"ended without finishing it (killed?); taking over its lock\n", n->name,
			(int)n->pid);
	else if (n->kind == PK_RECORDER_NO_TRACING_DATA)
		tool_warn("cannot collect the tracepoint formats from tracefs (%s): perf will "
			     "not be able to read the file", pk_strerror(n->err));
}

void rec_print_open(const struct pk_evsel *ev, const struct perf_event_attr *attr, pid_t pid,
		       int cpu, int group_fd, unsigned long flags, int fd, void *ctx)
{
	(void)ctx;
	fprintf(stderr,
		"perf_event_open(%s: type %u, config %#llx, sample_type %#llx, freq %u, "
		"period %llu, pid %d, cpu %d, group_fd %d, flags %#lx) = %d%s%s\n",
		pk_evsel__name(ev), attr->type, (unsigned long long)attr->config,
		(unsigned long long)attr->sample_type, (unsigned)attr->freq,
		(unsigned long long)attr->sample_period, (int)pid, cpu, group_fd, flags, fd,
		fd < 0 ? " " : "", fd < 0 ? pk_strerror(fd) : "");
}

bool tool_report_target_failure(const struct pk_recorder_failure *f)
{
	char buf[1024];

	if (f->stage == PK_RECORDER_FAIL_CPUS) {
		tool_error("invalid CPU list '%s': %s", f->what, strerror(-f->err));
	} else if (f->stage == PK_RECORDER_FAIL_THREADS) {
		tool_error("cannot find the threads of '%s': %s", f->what, strerror(-f->err));
	} else if (f->stage == PK_RECORDER_FAIL_OPEN && f->event) {
		PK_OPTS(pk_open_ctx, ctx, .attr = &f->attr, .pid = f->pid, .cpu = f->cpu,
			.group_fd = f->group_fd, .event_name = f->event);
		pk_explain_open_error(buf, sizeof(buf), f->err, &ctx);
		tool_error("cannot open '%s': %s", f->event, buf);
	} else {
		return false;
	}
	return true;
}

void rec_report_failure(const struct pk_recorder *r, const char *output)
{
	PK_OPTS(pk_recorder_failure, f);

	pk_recorder__failure(r, &f);
	if (f.stage == PK_RECORDER_FAIL_OPEN && f.what) {
		tool_error("the kernel refused the filter '%s'%s%s%s: %s (check the field names "
			   "in the event's format file under tracefs)", f.what,
			   f.event ? " of '" : "", f.event ? f.event : "", f.event ? "'" : "",
			   strerror(-f.err));
	} else if (tool_report_target_failure(&f)) {
		return;
	} else if (f.stage == PK_RECORDER_FAIL_OPEN) {
		tool_error("cannot open the events: %s", pk_strerror(f.err));
	} else if (f.stage == PK_RECORDER_FAIL_MMAP) {
		tool_error("cannot mmap the ring buffers: %s%s", strerror(-f.err),
			      f.err == -EPERM || f.err == -ENOMEM ?
			      " (locked memory limit: try a smaller -m, or raise "
			      "/proc/sys/kernel/perf_event_mlock_kb / ulimit -l)" : "");
	} else if (f.stage == PK_RECORDER_FAIL_OUTPUT && f.err == -EBUSY) {
		char pid[32] = "";
		if (f.pid > 0)
			snprintf(pid, sizeof(pid), " (pid %d)", (int)f.pid);
		tool_error("'%s' is being written by another perfkit record%s; use -o to choose "
			   "another file", output, pid);
	} else if (f.stage == PK_RECORDER_FAIL_OUTPUT) {
		tool_error("cannot open '%s': %s", output, strerror(-f.err));
	} else if (f.stage == PK_RECORDER_FAIL_WRITE) {
		tool_error("cannot write '%s': %s", output, pk_strerror(f.err));
	} else if (f.err == -EOPNOTSUPP) {
		struct utsname u;
		tool_error("--call-graph dwarf: not supported on %s: perfkit unwinds x86-64 "
			      "and arm64 stacks only; use --call-graph fp",
			      uname(&u) == 0 ? u.machine : "this architecture");
	} else {
		tool_error("out of memory");
	}
}

void rec_status_line(const struct pk_recorder *r)
{
	PK_OPTS(pk_recorder_stats, st);
	pk_recorder__stats(r, &st);
	fprintf(stderr, "\r[ perfkit record: %" PRIu64 " samples, %" PRIu64 " lost, %.1f MB ]\033[K",
		st.samples, st.lost + st.lost_samples, (double)st.bytes / (1024.0 * 1024.0));
	fflush(stderr);
}

void rec_summary(const struct rec_opts *o, const struct pk_recorder_stats *st, bool reader_gone)
{
	const char *out = strcmp(o->output, "-") ? o->output : "<stdout>";
	if (o->quiet)
		return;
	fprintf(stderr, "[ perfkit record: woken up %" PRIu64 " times to write data ]\n", st->wakeups);
	if (reader_gone) {
		/* a reader that stops early (`| head -c N`) is not an error, but the data
		 * did not all arrive: do not claim it was written */
		fprintf(stderr, "[ perfkit record: the reader of %s went away after %.3f MB; "
			"recording stopped (%" PRIu64 " samples captured by then) ]\n", out,
			(double)st->file_bytes / (1024.0 * 1024.0), st->samples);
		return;
	}
	/* with rotation, as perf: the size of the last file, every file's samples */
	fprintf(stderr, "[ perfkit record: captured and wrote %.3f MB %s%s (%" PRIu64 " samples) ]\n",
		(double)st->file_bytes / (1024.0 * 1024.0), out,
		o->rot.mode ? ".<timestamp>" : "", st->samples);
	if (o->ro.off_cpu)
		fprintf(stderr, "[ perfkit record: %" PRIu64 " offcpu-time samples, %" PRIu64
			" blocked intervals dropped ]\n", st->offcpu_samples, st->offcpu_dropped);
}

void rec_dumped(const struct rec_opts *o, const char *path, const struct pk_recorder_file *f,
		double ms)
{
	if (o->quiet)
		return;
	if (o->verbose)
		fprintf(stderr, "[ perfkit record: dump %s (%" PRIu64 " samples, %.3f MB, "
			"switched in %.1f ms) ]\n", path, f->samples,
			(double)f->bytes / (1024.0 * 1024.0), ms);
	else
		fprintf(stderr, "[ perfkit record: dump %s ]\n", path);
}

void rec_lost_warnings(const struct rec_opts *o, const struct pk_recorder_stats *st)
{
	uint64_t pages = st->mmap_pages;
	char fewer[96]; /* with -c, a longer period (it printed "-c 0" before) */
	if (o->ro.period)
		snprintf(fewer, sizeof(fewer), "a longer period (-c %" PRIu64 ", now %" PRIu64 ")",
			 o->ro.period * 2, o->ro.period);
	else
		snprintf(fewer, sizeof(fewer), "a lower frequency (-F %ld)", (long)st->freq / 2);
	if (st->lost)
		tool_warn("lost %" PRIu64 " events in %" PRIu64 " LOST records (%.2f%% of the "
			     "samples): the ring buffers filled up; use bigger buffers (-m %" PRIu64
			     ", now %" PRIu64 " pages) or %s", st->lost, st->lost_records,
			     100.0 * (double)st->lost / (double)(st->lost + st->samples + !st->samples),
			     pages * 2, pages, fewer);
	if (st->lost_samples)
		tool_warn("the kernel dropped %" PRIu64 " samples it could not record "
			     "(PERF_RECORD_LOST_SAMPLES)", st->lost_samples);
	if (st->keepup)
		tool_warn("failed to keep up %" PRIu64 " times: data was overwritten before it "
			     "could be read; use bigger buffers (-m) or a lower frequency (-F)",
			     st->keepup);
}

void rec_bid_cache_report(const struct rec_opts *o, const struct pk_recorder_stats *st)
{
	char dir[PATH_MAX];

	if (o->quiet || (!st->buildid_cache_err && !st->buildid_cache_too_big))
		return;
	PK_OPTS(pk_build_id_cache_opts, co, .dir = tool_buildid_dir());
	if (pk_build_id_cache__dir(&co, dir, sizeof(dir)))
		snprintf(dir, sizeof(dir), "~/.debug"); /* no $HOME: the cache the user may set */
	if (st->buildid_cache_err)
		tool_warn("cannot fill the build-id cache '%s' (at %s: %s): a report of this "
			     "file will miss the symbols of binaries rebuilt later; set "
			     "PERF_BUILDID_DIR to a writable directory, or -N to skip the cache",
			     dir, st->buildid_cache_err_file, pk_strerror(st->buildid_cache_err));
	if (st->buildid_cache_too_big)
		tool_warn("%" PRIu64 " recorded file%s larger than %llu MiB not copied into the "
			     "build-id cache '%s' (a cache on the files' own file system holds "
			     "hard links instead of copies)", st->buildid_cache_too_big,
			     st->buildid_cache_too_big == 1 ? "" : "s",
			     PK_BUILD_ID_CACHE_MAX_COPY >> 20, dir);
}

