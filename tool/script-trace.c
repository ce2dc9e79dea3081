/* SPDX-License-Identifier: MIT */
/*
 * tool/script-trace.c - tracepoint fields for `perfkit script` (see script-trace.h).
 *
 * The recording's tracing data goes to libtraceevent as perf script feeds it: the file's
 * byte order and long size, the page header, the printk formats (for bprint events) and
 * the saved comms; each event's format when a sample of it first needs it. The kallsyms
 * text is not used (perf does not use it either). The blob is parsed and bounds-checked
 * by pk_tracing_data__parse; libtraceevent's printk-format parser also trusts the shape
 * of each line, so only well-formed lines are passed to it (printk_lines). Its event
 * format parser is not safe against hostile text either (malformed print formats make it
 * dereference NULL), and a recording is hostile input: each part of the blob is first
 * parsed in a child process (survives), and only then in ours. A part the child does not
 * survive is left out (the event's format is then looked up in tracefs).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <traceevent/event-parse.h>
#include "builtin.h"
#include "script-trace.h"

struct script_trace {
	const char *tracefs;
	struct tep_handle *tep;
	struct trace_seq seq;
	struct pk_tracing_data *td;
	bool td_bad;            /* the recording's blob did not parse (warned once) */
	unsigned int what;      /* TD_* parts of it that libtraceevent has */
	int *failed;            /* event ids without a format anywhere */
	size_t nr_failed, cap_failed;
};

struct script_trace *script_trace__new(const char *tracefs)
{
	struct script_trace *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->tracefs = tracefs;
	st->tep = tep_alloc();
	if (!st->tep) {
		free(st);
		return NULL;
	}
	trace_seq_init(&st->seq);
	return st;
}

void script_trace__free(struct script_trace *st)
{
	if (!st)
		return;
	trace_seq_destroy(&st->seq);
	tep_free(st->tep);
	pk_tracing_data__free(st->td);
	free(st->failed);
	free(st);
}

static bool failed(const struct script_trace *st, int id)
{
	for (size_t i = 0; i < st->nr_failed; i++)
		if (st->failed[i] == id)
			return true;
	return false;
}

static void fail(struct script_trace *st, int id)
{
	if (st->nr_failed == st->cap_failed) {
		size_t ncap = st->cap_failed ? st->cap_failed * 2 : 16;
		int *n = realloc(st->failed, ncap * sizeof(*n));
		if (!n)
			return;
		st->failed = n;
		st->cap_failed = ncap;
	}
	st->failed[st->nr_failed++] = id;
}

/*
 * The lines of a printk_formats text ("0xffffffff81234567 : \"fmt\\n\"") that
 * libtraceevent can take: it splits a line at its first ':', skips one more byte and
 * strips a quote and a trailing "\n" from what is left, without looking at lengths. So a
 * line must start with an address (no leading ':') and leave at least 5 bytes after the
 * ':' (4 once the skipped byte is gone). Returns a malloc'd text (maybe empty), NULL on ENOMEM.
 */
static char *printk_lines(const char *text)
{
	size_t n = strlen(text);
	char *out = malloc(n + 2), *o = out; /* + a '\n' the last line may lack, + NUL */
	if (!out)
		return NULL;
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		const char *colon = memchr(l, ':', len);
		if (colon && colon > l && (size_t)(l + len - colon) >= 6) {
			memcpy(o, l, len);
			o += len;
			*o++ = '\n';
		}
		l += len;
		if (*l == '\n')
			l++;
	}
	*o = 0;
	return out;
}

/* The parts of the blob to hand to libtraceevent */
enum { TD_HEADER = 1, TD_PRINTK = 2, TD_CMDLINES = 4 };

static void feed_info(struct tep_handle *tep, const struct pk_tracing_info *ti, unsigned int what)
{
	tep_set_file_bigendian(tep, ti->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	if (ti->long_size == 4 || ti->long_size == 8)
		tep_set_long_size(tep, ti->long_size);
	if (ti->page_size)
		tep_set_page_size(tep, (int)ti->page_size);
	if ((what & TD_HEADER) && ti->header_page_len && (ti->long_size == 4 || ti->long_size == 8))
		tep_parse_header_page(tep, (char *)ti->header_page, ti->header_page_len,
				      ti->long_size);
	if ((what & TD_PRINTK) && ti->printk_len) {
		char *p = printk_lines(ti->printk);
		if (p && *p)
			tep_parse_printk_formats(tep, p);
		free(p);
	}
	if ((what & TD_CMDLINES) && ti->saved_cmdlines_len)
		tep_parse_saved_cmdlines(tep, ti->saved_cmdlines);
}

/* what a fuzz harness that includes this file does in the child first */
#ifndef SCRIPT_TRACE_CHILD_SETUP
#define SCRIPT_TRACE_CHILD_SETUP() do { } while (0)
#endif

/*
 * Does libtraceevent survive this? Runs feed_info(what) and, with fmt, the parse of one
 * event format, in a child process (stderr silenced, 5 s at most). false if it crashed,
 * hung, or no child could be made.
 */
static bool survives(const struct pk_tracing_info *ti, unsigned int what,
		     const struct pk_tracing_event *fmt)
{
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		SCRIPT_TRACE_CHILD_SETUP();
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		alarm(5);
		struct tep_handle *tep = tep_alloc();
		if (tep) {
			feed_info(tep, ti, what);
			if (fmt)
				tep_parse_event(tep, fmt->format, fmt->format_len, fmt->system);
		}
		_exit(0);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Parse the recording's tracing data, once it is there. */
static void load_tracing_data(struct script_trace *st, const void *blob, size_t len)
{
	if (st->td || st->td_bad || !blob)
		return;
	st->td = pk_tracing_data__parse(blob, len);
	if (!st->td) {
		st->td_bad = true;
		tool_warn("the recording's tracing data is malformed (%s); tracepoint formats "
			     "are taken from tracefs", pk_strerror(-errno));
		return;
	}
	const struct pk_tracing_info *ti = pk_tracing_data__info(st->td);
	unsigned int what = TD_HEADER | TD_PRINTK | TD_CMDLINES;
	if (!survives(ti, what, NULL)) {
		what = 0;
		for (unsigned int part = TD_HEADER; part <= TD_CMDLINES; part <<= 1)
			if (survives(ti, part, NULL))
				what |= part;
		tool_warn("the recording's tracing data has parts libtraceevent cannot read; "
			     "left out");
	}
	st->what = what;
	feed_info(st->tep, ti, what);
	st->nr_failed = 0; /* formats missing before may be in it */
}

/* The format of tracepoint "sys:name" from <tracefs>/events/sys/name/format. */
static void load_tracefs_format(struct script_trace *st, const char *evname)
{
	const char *root;
	char sys[256], name[256], path[1024];
	const char *colon = evname ? strchr(evname, ':') : NULL;

	if (st->tracefs && !strcmp(st->tracefs, "none"))
		return;
	if (st->tracefs)
		root = st->tracefs;
	else
		root = tool_ensure_tracefs() ? pk_tracefs__root() : NULL;
	if (!colon || !root || (size_t)(colon - evname) >= sizeof(sys))
		return;
	memcpy(sys, evname, (size_t)(colon - evname));
	sys[colon - evname] = 0;
	snprintf(name, sizeof(name), "%s", colon + 1);
	name[strcspn(name, ":/")] = 0; /* drop modifiers */
	if (!sys[0] || !name[0] || strchr(sys, '/') || !strcmp(sys, "..") || !strcmp(name, ".."))
		return;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, sys, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *buf = malloc(1 << 16);
	size_t n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
	fclose(f);
	if (buf && n)
		tep_parse_event(st->tep, buf, n, sys);
	free(buf);
}

/* A constant of a print format: its value if the atom is a number, else 0 */
static unsigned long long atom_value(const struct tep_print_arg *a)
{
	if (!a || a->type != TEP_PRINT_ATOM || !a->atom.atom)
		return 0;
	return strtoull(a->atom.atom, NULL, 0);
}

/*
 * Whether libtraceevent may evaluate these print arguments on any record: it divides
 * without a check ("REC->a / REC->b", an int array's element size), so a hostile format
 * (or a record value of 0) would kill us with SIGFPE. A divisor must be a non-zero
 * constant, an element size 1, 2, 4 or 8; nesting is bounded.
 */
static bool args_safe(const struct tep_print_arg *a, int depth)
{
	if (depth > 32)
		return false;
	for (; a; a = a->next) {
		switch (a->type) {
		case TEP_PRINT_OP:
			if (a->op.op && (!strcmp(a->op.op, "/") || !strcmp(a->op.op, "%")) &&
			    !atom_value(a->op.right))
				return false;
			if (!args_safe(a->op.left, depth + 1) || !args_safe(a->op.right, depth + 1))
				return false;
			break;
		case TEP_PRINT_TYPE:
			if (!args_safe(a->typecast.item, depth + 1))
				return false;
			break;
		case TEP_PRINT_FLAGS:
			if (!args_safe(a->flags.field, depth + 1))
				return false;
			break;
		case TEP_PRINT_SYMBOL:
			if (!args_safe(a->symbol.field, depth + 1))
				return false;
			break;
		case TEP_PRINT_HEX:
		case TEP_PRINT_HEX_STR:
			if (!args_safe(a->hex.field, depth + 1) || !args_safe(a->hex.size, depth + 1))
				return false;
			break;
		case TEP_PRINT_INT_ARRAY: {
			unsigned long long el = atom_value(a->int_array.el_size);
			if ((el != 1 && el != 2 && el != 4 && el != 8) ||
			    !args_safe(a->int_array.field, depth + 1) ||
			    !args_safe(a->int_array.count, depth + 1))
				return false;
			break;
		}
		case TEP_PRINT_FUNC:
			if (!args_safe(a->func.args, depth + 1))
				return false;
			break;
		default:
			break;
		}
	}
	return true;
}

/*
 * libtraceevent's printing is not safe against every hostile format or record (it divides
 * unchecked in places args_safe cannot see): a SIGFPE raised while it prints is caught
 * here and the event's fields are printed raw from then on. The signal is synchronous (an
 * integer division in its code), so jumping back out of it is sound; the handler is ours
 * only while libtraceevent runs, and otherwise does what the signal did before.
 */
static sigjmp_buf fpe_jmp;
static volatile sig_atomic_t in_tep;
static struct sigaction fpe_old;

static void on_fpe(int sig, siginfo_t *si, void *uc)
{
	if (in_tep)
		siglongjmp(fpe_jmp, 1);
	sigaction(SIGFPE, &fpe_old, NULL);
	(void)si;
	(void)uc;
	raise(sig);
}

static void fpe_guard_install(void)
{
	static bool done;
	if (done)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fpe;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (!sigaction(SIGFPE, &sa, &fpe_old))
		done = true;
}

static bool event_safe(const struct tep_event *ev)
{
	for (const struct tep_format_field *f = ev->format.fields; f; f = f->next)
		if ((f->flags & TEP_FIELD_IS_ARRAY) && !f->elementsize)
			return false;
	return args_safe(ev->print_fmt.args, 0);
}

/*
 * Whether a record holds every field its format names: libtraceevent reads a field at its
 * offset (and a dynamic one where its __data_loc word points) without comparing with the
 * record's size, so a short or hostile record would be read past its end.
 */
static bool record_fits(const struct tep_event *ev, const uint8_t *data, size_t size)
{
	for (const struct tep_format_field *f = ev->format.fields; f; f = f->next) {
		if (f->offset < 0 || f->size < 0 || (size_t)f->offset + (size_t)f->size > size)
			return false;
		if (!(f->flags & TEP_FIELD_IS_DYNAMIC))
			continue;
		uint32_t loc;
		if (f->size < 4)
			return false;
		memcpy(&loc, data + f->offset, 4);
		size_t at = loc & 0xffff, n = loc >> 16;
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			at += (size_t)f->offset + (size_t)f->size;
		if (at + n > size)
			return false;
	}
	return true;
}

const char *script_trace__text(struct script_trace *st, const void *blob, size_t len,
			       const struct pk_data_attr *a, const struct pk_sample *smp)
{
	if (!st || !a || !(smp->type & PERF_SAMPLE_RAW) ||
	    a->attr.attr.type != PERF_TYPE_TRACEPOINT || !smp->raw.size)
		return NULL;
	int id = (int)a->attr.attr.config;
	struct tep_event *ev = tep_find_event(st->tep, id);
	if (!ev && !failed(st, id)) {
		load_tracing_data(st, blob, len);
		const struct pk_tracing_event *te = st->td ? pk_tracing_data__find_id(st->td, id) : NULL;
		if (te && te->format_len) {
			if (survives(pk_tracing_data__info(st->td), st->what, te))
				tep_parse_event(st->tep, te->format, te->format_len, te->system);
			else
				tool_warn("the recording's format of tracepoint %d (%s:%s) is "
					     "malformed; left out", id, te->system, te->name);
		}
		ev = tep_find_event(st->tep, id);
		if (!ev) {
			load_tracefs_format(st, a->name);
			ev = tep_find_event(st->tep, id);
		}
		if (!ev)
			fail(st, id);
	}
	if (!ev)
		return NULL;
	if (!record_fits(ev, smp->raw.data, smp->raw.size)) {
		static bool said;
		if (!said)
			tool_warn("a record of tracepoint %d (%s:%s) is shorter than its format; "
				  "its fields are not printed", id, ev->system ? ev->system : "?",
				  ev->name ? ev->name : "?");
		said = true;
		return NULL;
	}
	struct tep_record rec = { .ts = smp->time, .cpu = (int)smp->cpu, .size = (int)smp->raw.size,
				  .data = (void *)smp->raw.data };
	trace_seq_reset(&st->seq);
	fpe_guard_install();
	volatile bool ok = event_safe(ev) && !failed(st, -id - 1);
	if (ok) {
		in_tep = 1;
		if (sigsetjmp(fpe_jmp, 1)) {
			ok = false; /* it divided by zero: this event's fields raw from now on */
			trace_seq_reset(&st->seq);
		} else {
			tep_print_event(st->tep, &st->seq, &rec, "%s", TEP_PRINT_INFO);
		}
		in_tep = 0;
	}
	if (!ok) {
		/* its print format could divide by zero: the fields as they are */
		if (!failed(st, -id - 1)) {
			tool_warn("the print format of tracepoint %d (%s:%s) divides by values "
				     "that may be zero (or made libtraceevent fail); its fields are "
				     "printed raw", id,
				     ev->system ? ev->system : "?", ev->name ? ev->name : "?");
			fail(st, -id - 1);
		}
		in_tep = 1;
		if (!sigsetjmp(fpe_jmp, 1))
			tep_print_fields(&st->seq, rec.data, rec.size, ev);
		else
			trace_seq_reset(&st->seq);
		in_tep = 0;
	}
	trace_seq_terminate(&st->seq);
	return st->seq.buffer;
}
