/* SPDX-License-Identifier: MIT */
/* lib/data: the tracing-data blob (TRACING_DATA feature): builder from tracefs, parser,
 * writer/reader transport in file and pipe mode, libtraceevent round trip, and interop
 * with perf (our recordings read by perf script, perf's blob read by us). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <event-parse.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

#define FMT_SWITCH                                                                        \
	"name: sched_switch\nID: 316\nformat:\n"                                          \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"            \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"            \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"    \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"                      \
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"                   \
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\n"                     \
	"print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n"
#define FMT_WAKEUP "name: sched_wakeup\nID: 320\nformat:\n\tfield:int common_pid;\toffset:4;" \
	"\tsize:4;\tsigned:1;\n\nprint fmt: \"x\"\n"
#define FMT_FUNCTION "name: function\nID: 1\nformat:\n\tfield:unsigned long ip;\toffset:8;" \
	"\tsize:8;\tsigned:0;\n\nprint fmt: \" %ps\", (void *)REC->ip\n"
#define FMT_IRQ "name: irq_handler_entry\nID: 40\nformat:\n\tfield:int irq;\toffset:8;" \
	"\tsize:4;\tsigned:1;\n\nprint fmt: \"irq=%d\", REC->irq\n"
#define HDR_PAGE "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n" \
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"       \
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"        \
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n"
#define HDR_EVENT "# compressed entry header\n\ttype_len    :    5 bits\n"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	size_t r;
	while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n - 1 == 0)
			b = realloc(b, cap *= 2);
	}
	fclose(f);
	b[n] = 0;
	if (len)
		*len = n;
	return b;
}

static bool have_perf(void)
{
	return system("perf version >/dev/null 2>&1") == 0;
}

/* A fake tracefs with four events in three systems. */
static char *fake_tracefs(void)
{
	char *root = pk_test_mkdtemp("tfs");
	pk_test_write_file(root, "events/header_page", HDR_PAGE);
	pk_test_write_file(root, "events/header_event", HDR_EVENT);
	pk_test_write_file(root, "events/sched/sched_switch/id", "316\n");
	pk_test_write_file(root, "events/sched/sched_switch/format", FMT_SWITCH);
	pk_test_write_file(root, "events/sched/sched_wakeup/id", "320\n");
	pk_test_write_file(root, "events/sched/sched_wakeup/format", FMT_WAKEUP);
	pk_test_write_file(root, "events/ftrace/function/id", "1\n");
	pk_test_write_file(root, "events/ftrace/function/format", FMT_FUNCTION);
	pk_test_write_file(root, "events/irq/irq_handler_entry/id", "40\n");
	pk_test_write_file(root, "events/irq/irq_handler_entry/format", FMT_IRQ);
	pk_test_write_file(root, "printk_formats", "0xffffffff81000000 : \"hello\\n\"\n");
	pk_test_write_file(root, "saved_cmdlines", "1 init\n");
	return root;
}

static void test_build_parse(void **state)
{
	(void)state;
	char *root = fake_tracefs();
	const uint64_t ids[] = { 316, 1, 40, 316 }; /* duplicates are fine */
	void *blob;
	size_t len;

	assert_int_equal(pk_tracing_data__build(root, ids, 4, &blob, &len), 0);
	struct pk_tracing_data *td = pk_tracing_data__parse(blob, len);
	assert_non_null(td);
	const struct pk_tracing_info *in = pk_tracing_data__info(td);
	assert_string_equal(in->version, "0.6");
	assert_int_equal(in->long_size, sizeof(long));
	assert_int_equal(in->page_size, (uint32_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(in->parsed_len, len);
	assert_string_equal(in->header_page, HDR_PAGE);
	assert_int_equal(in->header_page_len, strlen(HDR_PAGE));
	assert_string_equal(in->header_event, HDR_EVENT);
	assert_int_equal(in->kallsyms_len, 0);
	assert_string_equal(in->printk, "0xffffffff81000000 : \"hello\\n\"\n");
	assert_string_equal(in->saved_cmdlines, "1 init\n");
	/* exactly the three recorded events: ftrace section first, then systems sorted */
	assert_int_equal(pk_tracing_data__nr_events(td), 3);
	const struct pk_tracing_event *e = pk_tracing_data__event(td, 0);
	assert_string_equal(e->system, "ftrace");
	assert_string_equal(e->name, "function");
	assert_int_equal(e->id, 1);
	assert_string_equal(e->format, FMT_FUNCTION);
	e = pk_tracing_data__event(td, 1);
	assert_string_equal(e->system, "irq");
	assert_string_equal(e->name, "irq_handler_entry");
	e = pk_tracing_data__event(td, 2);
	assert_string_equal(e->system, "sched");
	assert_string_equal(e->name, "sched_switch");
	assert_int_equal(e->id, 316);
	assert_int_equal(e->format_len, strlen(FMT_SWITCH));
	assert_memory_equal(e->format, FMT_SWITCH, e->format_len);
	assert_null(pk_tracing_data__event(td, 3));
	assert_ptr_equal(pk_tracing_data__find_id(td, 316), e);
	assert_null(pk_tracing_data__find_id(td, 320)); /* not recorded: not included */
	size_t n = 0;
	pk_tracing_data__for_each_event(e, td)
		n++;
	assert_int_equal(n, 3);
	pk_tracing_data__free(td);

	/* byte layout at the start, as perf's reader expects it */
	const uint8_t *b = blob;
	assert_memory_equal(b, "\x17\x08\x44tracing0.6\0", 14);
	assert_memory_equal(b + 20, "header_page\0", 12);
	free(blob);

	/* no events at all is a valid (empty) blob; an unknown id is not */
	assert_int_equal(pk_tracing_data__build(root, NULL, 0, &blob, &len), 0);
	td = pk_tracing_data__parse(blob, len);
	assert_non_null(td);
	assert_int_equal(pk_tracing_data__nr_events(td), 0);
	pk_tracing_data__free(td);
	free(blob);
	const uint64_t bad[] = { 316, 99999 };
	assert_int_equal(pk_tracing_data__build(root, bad, 2, &blob, &len), -ENOENT);
	assert_null(blob);
	assert_int_equal(pk_tracing_data__build(root, ids, 1, NULL, &len), -EINVAL);
	assert_int_equal(pk_tracing_data__build("/nonexistent-tracefs", ids, 1, &blob, &len),
			 -ENOENT);
	pk_test_rmtree(root);
	free(root);
}

/* Append helpers for hand-made blobs in either byte order. */
struct hb {
	uint8_t b[4096];
	size_t n;
	bool be;
};
static void hb_put(struct hb *h, const void *p, size_t n)
{
	assert_true(h->n + n <= sizeof(h->b));
	memcpy(h->b + h->n, p, n);
	h->n += n;
}
static void hb_u32(struct hb *h, uint32_t v)
{
	if (h->be)
		v = __builtin_bswap32(v);
	hb_put(h, &v, 4);
}
static void hb_u64(struct hb *h, uint64_t v)
{
	if (h->be)
		v = __builtin_bswap64(v);
	hb_put(h, &v, 8);
}
static void hb_text64(struct hb *h, const char *s)
{
	hb_u64(h, strlen(s));
	hb_put(h, s, strlen(s));
}

static void make_blob(struct hb *h, bool be, const char *version)
{
	memset(h, 0, sizeof(*h));
	h->be = be;
	hb_put(h, "\x17\x08\x44tracing", 10);
	hb_put(h, version, strlen(version) + 1);
	uint8_t e = be, l = 8;
	hb_put(h, &e, 1);
	hb_put(h, &l, 1);
	hb_u32(h, 4096);
	hb_put(h, "header_page", 12);
	hb_text64(h, HDR_PAGE);
	hb_put(h, "header_event", 13);
	hb_text64(h, HDR_EVENT);
	hb_u32(h, 0);               /* ftrace */
	hb_u32(h, 2);               /* systems */
	hb_put(h, "sched", 6);
	hb_u32(h, 2);
	hb_text64(h, FMT_SWITCH);
	hb_text64(h, FMT_WAKEUP);
	hb_put(h, "irq", 4);
	hb_u32(h, 1);
	hb_text64(h, FMT_IRQ);
	hb_u32(h, 3);               /* kallsyms */
	hb_put(h, "abc", 3);
	hb_u32(h, 0);               /* printk */
	if (strcmp(version, "0.5"))
		hb_text64(h, "42 sh\n");
}

static void test_parse_hostile(void **state)
{
	(void)state;
	struct hb h;

	pk_test_quiet_log();
	/* other byte order and version 0.5 (no saved_cmdlines) */
	for (int be = 0; be < 2; be++) {
		for (int v = 0; v < 2; v++) {
			make_blob(&h, be, v ? "0.5" : "0.6");
			struct pk_tracing_data *td = pk_tracing_data__parse(h.b, h.n);
			assert_non_null(td);
			assert_int_equal(pk_tracing_data__nr_events(td), 3);
			assert_int_equal(pk_tracing_data__info(td)->big_endian, be);
			assert_int_equal(pk_tracing_data__info(td)->page_size, 4096);
			assert_string_equal(pk_tracing_data__info(td)->kallsyms, "abc");
			assert_string_equal(pk_tracing_data__info(td)->saved_cmdlines,
					    v ? "" : "42 sh\n");
			assert_string_equal(pk_tracing_data__event(td, 2)->system, "irq");
			assert_int_equal(pk_tracing_data__event(td, 1)->id, 320);
			assert_int_equal(pk_tracing_data__info(td)->parsed_len, h.n);
			pk_tracing_data__free(td);
		}
	}
	/* every truncation fails cleanly; trailing padding is accepted */
	make_blob(&h, false, "0.6");
	for (size_t n = 0; n < h.n; n++) {
		uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees any over-read */
		memcpy(copy, h.b, n);
		assert_null(pk_tracing_data__parse(copy, n));
		free(copy);
	}
	size_t full = h.n;
	hb_put(&h, "\0\0\0\0\0\0", 6);
	struct pk_tracing_data *td = pk_tracing_data__parse(h.b, h.n);
	assert_non_null(td);
	assert_int_equal(pk_tracing_data__info(td)->parsed_len, full);
	pk_tracing_data__free(td);
	/* corrupt single fields */
	struct {
		size_t off;
		uint8_t val;
	} bad[] = {
		{ 0, 24 },          /* magic */
		{ 5, 'X' },         /* "tracing" */
		{ 14, 2 },          /* endianness */
		{ 15, 3 },          /* long size */
		{ 20, 'X' },        /* header_page tag */
		{ 32 + 7, 0x80 },   /* header_page size: huge */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		make_blob(&h, false, "0.6");
		h.b[bad[i].off] = bad[i].val;
		errno = 0;
		assert_null(pk_tracing_data__parse(h.b, h.n));
		assert_int_equal(errno, PK_ERR_FORMAT);
	}
	/* page size 0; version string without NUL */
	make_blob(&h, false, "0.6");
	memset(h.b + 16, 0, 4);
	assert_null(pk_tracing_data__parse(h.b, h.n));
	assert_null(pk_tracing_data__parse("\x17\x08\x44tracing0.6666666", 18));
	/* huge counts must not allocate or loop: system count and format count */
	make_blob(&h, false, "0.6");
	size_t at = 20 + 12 + 8 + strlen(HDR_PAGE) + 13 + 8 + strlen(HDR_EVENT);
	uint32_t big = 0x7fffffff;
	memcpy(h.b + at, &big, 4);              /* ftrace count */
	assert_null(pk_tracing_data__parse(h.b, h.n));
	make_blob(&h, false, "0.6");
	memcpy(h.b + at + 4, &big, 4);          /* system count */
	assert_null(pk_tracing_data__parse(h.b, h.n));
	make_blob(&h, false, "0.6");
	memcpy(h.b + at + 8 + 6, &big, 4);      /* sched format count */
	assert_null(pk_tracing_data__parse(h.b, h.n));
	assert_null(pk_tracing_data__parse(NULL, 0));
	assert_null(pk_tracing_data__parse(NULL, 5));
	assert_int_equal(errno, EINVAL);
	pk_tracing_data__free(NULL);
	assert_int_equal(pk_tracing_data__nr_events(NULL), 0);
}

/* Writer -> reader in both modes carries the blob unchanged (pipe: zero-padded to 8). */
static void roundtrip(bool pipe_mode)
{
	struct hb h;
	make_blob(&h, false, "0.6");
	if (h.n % 8 == 0) /* trailing padding is allowed: make the pipe padding non-empty */
		hb_put(&h, "", 1);
	struct pk_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_TRACEPOINT;
	a.attr.config = 316;
	a.attr.sample_period = 1;
	a.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			     PERF_SAMPLE_RAW | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	a.attr.sample_id_all = 1;
	const uint64_t id = 7;
	const char *path = pipe_mode ? "td-pipe.data" : "td-file.data";
	PK_OPTS(pk_data_writer_opts, wo, .pipe = pipe_mode);
	struct pk_data_writer *w = pk_data_writer__open(path, &wo);
	assert_non_null(w);
	assert_true(pk_data_writer__add_attr(w, &a, "sched:sched_switch", &id, 1) >= 0);
	assert_int_equal(pk_data_writer__set_tracing_data(w, NULL, 3), -EINVAL);
	assert_int_equal(pk_data_writer__set_tracing_data(w, "junk", 4), 0); /* replaced */
	assert_int_equal(pk_data_writer__set_tracing_data(w, h.b, h.n), 0);
	assert_int_equal(pk_data_writer__finish_round(w), 0);
	/* pipe mode: the record has gone out with the header */
	assert_int_equal(pk_data_writer__set_tracing_data(w, h.b, h.n), pipe_mode ? -EBUSY : 0);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);

	for (int no_mmap = 0; no_mmap < 2; no_mmap++) {
		PK_OPTS(pk_data_reader_opts, ro, .no_mmap = no_mmap);
		struct pk_data_reader *r = pk_data_reader__open(path, &ro);
		assert_non_null(r);
		size_t len;
		const uint8_t *t = pk_data_reader__tracing_data(r, &len);
		assert_non_null(t);
		assert_int_equal(len, pipe_mode ? (h.n + 7) / 8 * 8 : h.n);
		assert_memory_equal(t, h.b, h.n);
		for (size_t i = h.n; i < len; i++)
			assert_int_equal(t[i], 0);
		struct pk_tracing_data *td = pk_tracing_data__parse(t, len);
		assert_non_null(td);
		assert_int_equal(pk_tracing_data__nr_events(td), 3);
		pk_tracing_data__free(td);
		if (!pipe_mode)
			assert_true(pk_data_reader__env(r)->features[0] &
				    (1ULL << PK_FEAT_TRACING_DATA));
		struct pk_data_event ev;
		int n = 0, ret;
		while ((ret = pk_data_reader__next(r, &ev)) > 0)
			if (ev.hdr->type != PK_RECORD_EVENT_UPDATE) /* a pipe's event names */
				n++;
		assert_int_equal(ret, 0);
		assert_int_equal(n, 1); /* the round; the tracing record was consumed at open */
		pk_data_reader__free(r);
	}
	/* stdin-like stream (pipe mode only) */
	if (pipe_mode) {
		int fd = open(path, O_RDONLY);
		int p[2];
		assert_int_equal(pipe(p), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			char buf[4096];
			ssize_t k;
			close(p[0]);
			while ((k = read(fd, buf, sizeof(buf))) > 0)
				if (write(p[1], buf, (size_t)k) != k)
					_exit(1);
			_exit(0);
		}
		close(p[1]);
		struct pk_data_reader *r = pk_data_reader__fdopen(p[0], NULL);
		assert_non_null(r);
		size_t len;
		const uint8_t *t = pk_data_reader__tracing_data(r, &len);
		assert_non_null(t);
		assert_memory_equal(t, h.b, h.n);
		pk_data_reader__free(r);
		close(p[0]);
		close(fd);
		waitpid(pid, NULL, 0);
	}
	/* a pipe stream that ends inside the blob: no blob, no garbage records */
	if (pipe_mode) {
		size_t flen;
		char *all = slurp(path, &flen);
		for (int kind = 0; kind < 2; kind++) {
			FILE *f = fopen("td-trunc.pipe", "wb");
			assert_non_null(f);
			/* cut in the middle of the blob (records after it: names, the round) */
			const char *blob = memmem(all, flen, h.b, h.n);
			assert_non_null(blob);
			size_t cut = (size_t)(blob - all) + h.n / 2;
			assert_int_equal(fwrite(all, 1, cut, f), cut);
			fclose(f);
			int fd = open("td-trunc.pipe", O_RDONLY);
			int p[2] = { -1, -1 };
			pid_t pid = -1;
			struct pk_data_reader *r;
			if (kind) {
				assert_int_equal(pipe(p), 0);
				pid = fork();
				assert_true(pid >= 0);
				if (pid == 0) {
					close(p[0]);
					if (write(p[1], all, cut) < 0)
						_exit(1);
					_exit(0);
				}
				close(p[1]);
				r = pk_data_reader__fdopen(p[0], NULL);
			} else {
				r = pk_data_reader__fdopen(fd, NULL);
			}
			assert_non_null(r);
			size_t len;
			assert_null(pk_data_reader__tracing_data(r, &len));
			struct pk_data_event ev;
			assert_int_equal(pk_data_reader__next(r, &ev), 0);
			assert_true(pk_data_reader__truncated(r));
			pk_data_reader__free(r);
			if (kind) {
				close(p[0]);
				waitpid(pid, NULL, 0);
			}
			close(fd);
		}
		free(all);
	}
	/* a file without tracing data */
	w = pk_data_writer__open(path, &wo);
	assert_non_null(w);
	assert_true(pk_data_writer__add_attr(w, &a, NULL, &id, 1) >= 0);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	struct pk_data_reader *r = pk_data_reader__open(path, NULL);
	assert_non_null(r);
	size_t len = 1;
	errno = 0;
	assert_null(pk_data_reader__tracing_data(r, &len));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(len, 0);
	pk_data_reader__free(r);
}

static void test_roundtrip_file(void **state)
{
	(void)state;
	roundtrip(false);
}

static void test_roundtrip_pipe(void **state)
{
	(void)state;
	roundtrip(true);
}

/* The real tracefs: build for two tracepoints and parse every piece with libtraceevent. */
static void test_libtraceevent(void **state)
{
	(void)state;
	if (!pk_test_have_tracefs())
		PK_SKIP("tracefs is not mounted");
	long long sw = pk_tracepoint__id(NULL, "sched", "sched_switch");
	long long ex = pk_tracepoint__id(NULL, "sched", "sched_process_exec");
	if (sw < 0 || ex < 0)
		PK_SKIP("no sched:sched_switch / sched_process_exec tracepoint");
	uint64_t ids[2] = { (uint64_t)sw, (uint64_t)ex };
	void *blob;
	size_t len;
	assert_int_equal(pk_tracing_data__build(NULL, ids, 2, &blob, &len), 0);
	struct pk_tracing_data *td = pk_tracing_data__parse(blob, len);
	assert_non_null(td);
	assert_int_equal(pk_tracing_data__nr_events(td), 2);
	const struct pk_tracing_info *in = pk_tracing_data__info(td);

	struct tep_handle *tep = tep_alloc();
	assert_non_null(tep);
	tep_set_long_size(tep, in->long_size);
	tep_set_page_size(tep, (int)in->page_size);
	tep_set_file_bigendian(tep, in->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	assert_int_equal(tep_parse_header_page(tep, (char *)in->header_page,
					       in->header_page_len, in->long_size), 0);
	const struct pk_tracing_event *e;
	pk_tracing_data__for_each_event(e, td) {
		assert_string_equal(e->system, "sched");
		assert_int_equal(tep_parse_event(tep, e->format, e->format_len, e->system),
				 TEP_ERRNO__SUCCESS);
	}
	struct tep_event *te = tep_find_event(tep, (int)sw);
	assert_non_null(te);
	assert_string_equal(te->name, "sched_switch");
	assert_string_equal(te->system, "sched");
	assert_non_null(tep_find_field(te, "prev_comm"));
	assert_non_null(tep_find_field(te, "next_pid"));
	te = tep_find_event(tep, (int)ex);
	assert_non_null(te);
	assert_non_null(tep_find_field(te, "filename"));
	tep_free(tep);
	pk_tracing_data__free(td);
	free(blob);
}

/* Events of our recording's blob, as a sorted "sys:name" list in buf. */
static void blob_events(const char *path, char *buf, size_t cap)
{
	struct pk_data_reader *r = pk_data_reader__open(path, NULL);
	assert_non_null(r);
	size_t len;
	const void *t = pk_data_reader__tracing_data(r, &len);
	assert_non_null(t);
	struct pk_tracing_data *td = pk_tracing_data__parse(t, len);
	assert_non_null(td);
	const struct pk_tracing_event *e;
	buf[0] = 0;
	pk_tracing_data__for_each_event(e, td) {
		size_t n = strlen(buf);
		snprintf(buf + n, cap - n, "%s:%s\n", e->system, e->name);
		/* every format is the one tracefs has now */
		char fpath[512];
		snprintf(fpath, sizeof(fpath), "%s/events/%s/%s/format", pk_tracefs__root(),
			 e->system, e->name);
		size_t flen;
		char *now = slurp(fpath, &flen);
		assert_int_equal(flen, e->format_len);
		assert_memory_equal(now, e->format, flen);
		free(now);
	}
	pk_tracing_data__free(td);
	pk_data_reader__free(r);
}

static int list_cb(const char *sys, const char *name, long long id, void *ctx)
{
	(void)id;
	char *buf = ctx;
	size_t n = strlen(buf);
	snprintf(buf + n, 4096 - n, "%s:%s\n", sys, name);
	return 0;
}

/* perfkit record with tracepoints (file and pipe mode): the blob lists exactly the
 * recorded events, and perf script decodes their fields with nothing on stderr. */
static void test_interop_record(void **state)
{
	(void)state;
	if (!pk_test_have_tracefs() || !pk_test_is_root())
		PK_SKIP("needs tracefs and root");
	if (pk_tracepoint__id(NULL, "sched", "sched_switch") < 0)
		PK_SKIP("no sched:sched_switch tracepoint");
	const char *tool = PK_TOOL_PATH;
	assert_int_equal(pk_test_sh("'%s' record -q -e sched:sched_switch -e 'sched:sched_process_*' "
			    "-a -o ours.data -- sh -c 'sleep 0.05; /bin/true' >/dev/null 2>rec.err",
			    tool), 0);
	char got[4096], want[8192];
	blob_events("ours.data", got, sizeof(got));
	char procs[4096] = "";
	assert_int_equal(pk_tracepoint__foreach(NULL, "sched:sched_process_*", list_cb, procs), 0);
	/* the blob is sorted by system then name: sched_process_* sort before sched_switch */
	snprintf(want, sizeof(want), "%ssched:sched_switch\n", procs);
	assert_string_equal(got, want);
	/* pipe mode: the same events through HEADER_TRACING_DATA */
	assert_int_equal(pk_test_sh("'%s' record -q -e sched:sched_switch -a -o - -- sleep 0.05 "
			    "2>/dev/null | cat > ours.pipe", tool), 0);
	blob_events("ours.pipe", got, sizeof(got));
	assert_string_equal(got, "sched:sched_switch\n");
	if (!have_perf()) {
		printf("perf is not installed: perf side not checked\n");
		return;
	}
	assert_int_equal(pk_test_sh("perf script -i ours.data > s.out 2> s.err"), 0);
	size_t n;
	char *err = slurp("s.err", &n);
	if (n)
		printf("perf script stderr:\n%s\n", err);
	assert_int_equal(n, 0);
	free(err);
	assert_int_equal(pk_test_sh("grep -q 'sched:sched_switch: prev_comm=.* ==> next_comm=' s.out"), 0);
	assert_int_equal(pk_test_sh("grep -q 'sched:sched_process_exec: filename=/bin/true' s.out"), 0);
	assert_int_equal(pk_test_sh("cat ours.pipe | perf script -i - > p.out 2> p.err && ! test -s p.err "
			    "&& grep -q 'prev_comm=' p.out"), 0);
}

/* perf's own recording: our reader finds and parses its blob (exactly its events). */
static void test_interop_perf_blob(void **state)
{
	(void)state;
	if (!have_perf() || !pk_test_have_tracefs() || !pk_test_is_root())
		PK_SKIP("needs perf, tracefs and root");
	if (pk_tracepoint__id(NULL, "sched", "sched_switch") < 0)
		PK_SKIP("no sched:sched_switch tracepoint");
	assert_int_equal(pk_test_sh("perf record -q -e sched:sched_switch -e irq:irq_handler_entry -a "
			    "-o perf.data -- sleep 0.05 >/dev/null 2>&1"), 0);
	char got[4096];
	blob_events("perf.data", got, sizeof(got));
	assert_string_equal(got, "irq:irq_handler_entry\nsched:sched_switch\n");
	assert_int_equal(pk_test_sh("perf record -q -e sched:sched_switch -a -o - -- sleep 0.05 "
			    "2>/dev/null > perf.pipe"), 0);
	blob_events("perf.pipe", got, sizeof(got));
	assert_string_equal(got, "sched:sched_switch\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_parse),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_roundtrip_file),
		cmocka_unit_test(test_roundtrip_pipe),
		cmocka_unit_test(test_libtraceevent),
		cmocka_unit_test(test_interop_record),
		cmocka_unit_test(test_interop_perf_blob),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
