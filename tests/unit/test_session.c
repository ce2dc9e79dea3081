/* SPDX-License-Identifier: MIT */
/* lib/session: the one pipeline of perf.data readers (callbacks in time order, the machine
 * model before the callback, routing, early stop, errors) and lib/data's naming helpers. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <linux/hw_breakpoint.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

#define ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

static void put(struct pk_data_writer *w, const uint64_t *u)
{
	assert_int_equal(pk_data_writer__write_record(w, (const struct perf_event_header *)u), 0);
}

static void sample(struct pk_data_writer *w, uint64_t time, uint32_t tid, uint64_t ip)
{
	uint64_t u[4];
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER,
				       .size = sizeof(u) };
	memcpy(&u[0], &h, 8);
	u[1] = ip;
	u[2] = (uint64_t)tid << 32 | 100;
	u[3] = time;
	put(w, u);
}

/* COMM of thread tid of process 100, with its sample_id trailer (TID, TIME) */
static void comm(struct pk_data_writer *w, uint64_t time, uint32_t tid, const char *name)
{
	uint64_t u[6];
	memset(u, 0, sizeof(u));
	struct perf_event_header h = { .type = PERF_RECORD_COMM, .size = sizeof(u) };
	memcpy(&u[0], &h, 8);
	u[1] = (uint64_t)tid << 32 | 100;
	snprintf((char *)&u[2], 16, "%s", name);
	u[4] = (uint64_t)tid << 32 | 100;
	u[5] = time;
	put(w, u);
}

/*
 * Round 1: samples at 30, 10 (thread 1), COMM "renamed" of thread 1 at 20; round 2: a
 * sample at 25 (late: still before round 1's largest time), 40, a LOST record (no
 * callback of its own but `lost`), a sample at 50.
 */
static char *write_file(void)
{
	char *dir = pk_test_mkdtemp("session");
	char *path = malloc(strlen(dir) + 16);
	assert_non_null(path);
	sprintf(path, "%s/s.data", dir);
	free(dir);
	struct pk_attr at;
	pk_test_cpu_clock_attr(&at, 1000, ST);
	struct pk_data_writer *w = pk_data_writer__open(path, NULL);
	assert_non_null(w);
	uint64_t id = 1;
	assert_int_equal(pk_data_writer__add_attr(w, &at, "cpu-clock", &id, 1), 0);
	comm(w, 1, 1, "first");
	sample(w, 30, 1, 0x1030);
	sample(w, 10, 1, 0x1010);
	comm(w, 20, 1, "renamed");
	assert_int_equal(pk_data_writer__finish_round(w), 0);
	sample(w, 25, 1, 0x1025);
	sample(w, 40, 1, 0x1040);
	uint64_t u[5];
	struct perf_event_header h = { .type = PERF_RECORD_LOST, .size = sizeof(u) };
	memcpy(&u[0], &h, 8);
	u[1] = 1;
	u[2] = 7;
	u[3] = (uint64_t)1 << 32 | 100;
	u[4] = 45;
	put(w, u);
	sample(w, 50, 1, 0x1050);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	return path;
}

struct seen {
	struct pk_session *s;
	char log[8192];
	size_t len;
	int stop_at;            /* a sample callback returns `stop_ret` at this sample (1-based) */
	int stop_ret;
	int samples;
	bool prefix;            /* sessions opts.sample_prefix */
	bool unordered;         /* opts.samples_unordered */
	uint64_t rounds;        /* FINISHED_ROUNDs in the file (0: 1) */
	bool no_mmap;           /* read through the reader's window, not a mapping */
	size_t max_bytes;       /* opts.max_queued_bytes */
};

static void note(struct seen *x, const char *fmt, unsigned long long v, const char *str)
{
	int n = snprintf(x->log + x->len, sizeof(x->log) - x->len, fmt, v, str ? str : "");
	assert_true(n > 0 && (size_t)n < sizeof(x->log) - x->len);
	x->len += (size_t)n;
}

static int on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct seen *x = ctx;
	assert_non_null(r);
	assert_int_equal(ev->hdr->type, PERF_RECORD_SAMPLE);
	/* the thread's name as the machine knows it at this time */
	note(x, "S%llu:%s ", (unsigned long long)r->sample.time,
	     pk_machine__comm_of(pk_session__machine(x->s), r->sample.tid));
	/* the writer's samples: time T (decimal) at ip 0x1T (hex), process 100 */
	assert_int_equal(r->sample.ip, 0x1000 + r->sample.time / 10 * 16 + r->sample.time % 10);
	assert_int_equal(r->sample.pid, 100);
	if (++x->samples == x->stop_at)
		return x->stop_ret;
	return 0;
}

static int on_comm(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct seen *x = ctx;
	(void)ev;
	/* the machine took the record before this callback */
	assert_string_equal(pk_machine__comm_of(pk_session__machine(x->s), r->comm.tid),
			    r->comm.comm);
	note(x, "C%llu:%s ", (unsigned long long)r->sid.time, r->comm.comm);
	return 0;
}

static int on_lost(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	(void)ev;
	note(ctx, "L%llu%s ", (unsigned long long)r->lost.lost, NULL);
	return 0;
}

static int on_round(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	assert_null(r);
	assert_int_equal(ev->hdr->type, PK_RECORD_FINISHED_ROUND);
	note(ctx, "R%.0llu%s ", 0, NULL);
	return 0;
}

static int on_other(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	(void)r;
	note(ctx, "O%llu%s ", (unsigned long long)ev->hdr->type, NULL);
	return 0;
}

static int run(const char *path, bool threaded, bool with_lost, struct seen *x)
{
	PK_OPTS(pk_data_reader_opts, ro, .no_mmap = x->no_mmap);
	struct pk_data_reader *r = pk_data_reader__open(path, &ro);
	assert_non_null(r);
	PK_OPTS(pk_session_opts, so, .reader_thread = threaded, .sample_prefix = x->prefix,
		.samples_unordered = x->unordered, .max_queued_bytes = x->max_bytes);
	x->s = pk_session__new(r, &so);
	assert_non_null(x->s);
	assert_ptr_equal(pk_session__reader(x->s), r);
	PK_OPTS(pk_session_ops, ops, .sample = on_sample, .comm = on_comm,
		.lost = with_lost ? on_lost : NULL, .finished_round = on_round,
		.other = on_other);
	int err = pk_session__process(x->s, &ops, x);
	/* once only */
	assert_int_equal(pk_session__process(x->s, &ops, x), -EALREADY);
	struct pk_ordered_stats st = { .sz = sizeof(st) };
	pk_session__ordered_stats(x->s, &st);
	if (!err && !x->stop_at)
		assert_int_equal(st.rounds, x->rounds ? x->rounds : 1);
	/* a caller built against a shorter struct gets only the fields it has */
	struct { struct pk_ordered_stats s; uint64_t canary; } old;
	memset(&old, 0x5a, sizeof(old));
	old.s.sz = offsetof(struct pk_ordered_stats, queued) + sizeof(old.s.queued);
	pk_session__ordered_stats(x->s, &old.s);
	assert_int_equal(old.s.sz, offsetof(struct pk_ordered_stats, queued) + sizeof(uint64_t));
	assert_int_equal(old.s.queued, st.queued);
	assert_int_equal(old.s.immediate, 0x5a5a5a5a5a5a5a5aULL); /* not written */
	pk_session__free(x->s);
	pk_data_reader__free(r);
	return err;
}

/* Time order (perf's round rule), the machine before each callback, routing of records
 * without a callback of their own to `other`; the same with the reader thread. */
static void test_session_order_and_routing(void **state)
{
	(void)state;
	char *path = write_file();
	/* (FINISHED_ROUND has no timestamp: delivered when read, as perf's queue does; the
	 * records of round 1 wait for a later round or the end, and 25 comes before 30) */
	const char *want = "R C1:first S10:first C20:renamed S25:renamed S30:renamed "
			   "S40:renamed L7 S50:renamed ";
	for (int threaded = 0; threaded < 2; threaded++) {
		struct seen x = { 0 };
		assert_int_equal(run(path, threaded, true, &x), 0);
		assert_string_equal(x.log, want);
		/* samples decoded up to PERIOD only: the same records, in the same order */
		struct seen p = { .prefix = true };
		assert_int_equal(run(path, threaded, true, &p), 0);
		assert_string_equal(p.log, want);
	}
	/* no lost callback: the LOST record goes to other */
	struct seen y = { 0 };
	assert_int_equal(run(path, false, false, &y), 0);
	assert_non_null(strstr(y.log, "O2 "));
	assert_null(strstr(y.log, "L7"));
	free(path);
}

/* The log with the samples between two other records sorted: what samples_unordered
 * keeps of the time order (the others' order, and where each sample falls among them) */
static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void canon(const char *log, char *out, size_t cap)
{
	static char buf[8192];
	char *tok[1024], *save = NULL;
	size_t n = 0, len = 0;
	snprintf(buf, sizeof(buf), "%s", log);
	for (char *t = strtok_r(buf, " ", &save); t && n < 1024; t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && tok[j][0] == 'S')
			j++;
		if (j == i)
			j = i + 1; /* another record: as it is */
		else
			qsort(tok + i, j - i, sizeof(*tok), str_cmp);
		for (; i < j; i++)
			len += (size_t)snprintf(out + len, cap - len, "%s ", tok[i]);
	}
	assert_true(len < cap);
}

/* 240 samples of two threads over 12 rounds, each round's records a little out of time
 * order (two "CPUs"), with COMMs that rename the threads between them */
static char *write_file_many(void)
{
	char *dir = pk_test_mkdtemp("session-many");
	char *path = malloc(strlen(dir) + 16);
	assert_non_null(path);
	sprintf(path, "%s/m.data", dir);
	free(dir);
	struct pk_attr at;
	pk_test_cpu_clock_attr(&at, 1000, ST);
	struct pk_data_writer *w = pk_data_writer__open(path, NULL);
	assert_non_null(w);
	uint64_t id = 1;
	assert_int_equal(pk_data_writer__add_attr(w, &at, "cpu-clock", &id, 1), 0);
	comm(w, 1, 1, "a0");
	comm(w, 1, 2, "b0");
	for (unsigned r = 0; r < 12; r++) {
		uint64_t base = 100 + r * 100;
		/* "CPU 1": times base+0, +10, ..., +90; "CPU 2": base-35 ... (older), with a
		 * COMM in between on each */
		for (unsigned k = 0; k < 10; k++)
			sample(w, base + k * 10, 1, 0x1000 + (base + k * 10) / 10 * 16 +
			       (base + k * 10) % 10);
		char nm[16];
		snprintf(nm, sizeof(nm), "a%u", r + 1);
		comm(w, base + 55, 1, nm);
		for (unsigned k = 0; k < 10; k++) {
			uint64_t t = base - 35 + k * 10;
			sample(w, t, 2, 0x1000 + t / 10 * 16 + t % 10);
		}
		snprintf(nm, sizeof(nm), "b%u", r + 1);
		comm(w, base - 5, 2, nm);
		assert_int_equal(pk_data_writer__finish_round(w), 0);
	}
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	return path;
}

/* samples_unordered: the same as the time order but for the order of the samples between
 * two other records, with and without early flushes (max_queued_bytes) */
static void test_session_unordered(void **state)
{
	(void)state;
	char *path = write_file();
	for (int no_mmap = 0; no_mmap < 2; no_mmap++) {
		struct seen x = { .unordered = true, .prefix = true, .no_mmap = no_mmap };
		assert_int_equal(run(path, false, true, &x), 0);
		assert_string_equal(x.log, "R C1:first S10:first C20:renamed S30:renamed "
					   "S25:renamed S40:renamed L7 S50:renamed ");
	}
	free(path);
	path = write_file_many();
	size_t limits[] = { 0, 1, 64, 200, 1000, 4000 };
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		/* (without a mapping every queued record is a copy) */
		for (int prefix = 0; prefix < 4; prefix++) {
			struct seen o = { .prefix = prefix & 1, .max_bytes = limits[i],
					  .rounds = 12 };
			struct seen u = { .prefix = prefix & 1, .max_bytes = limits[i],
					  .rounds = 12, .unordered = true, .no_mmap = prefix & 2 };
			assert_int_equal(run(path, false, true, &o), 0);
			assert_int_equal(run(path, false, true, &u), 0);
			static char co[8192], cu[8192];
			canon(o.log, co, sizeof(co));
			canon(u.log, cu, sizeof(cu));
			assert_string_equal(co, cu);
		}
	}
	free(path);
}

/* A callback ends the processing: PK_SESSION_STOP without error, a negative errno with it */
static void test_session_stop(void **state)
{
	(void)state;
	char *path = write_file();
	struct seen x = { .stop_at = 2, .stop_ret = PK_SESSION_STOP };
	assert_int_equal(run(path, true, true, &x), 0);
	assert_string_equal(x.log, "R C1:first S10:first C20:renamed S25:renamed ");
	struct seen y = { .stop_at = 1, .stop_ret = -ECANCELED };
	assert_int_equal(run(path, false, true, &y), -ECANCELED);
	assert_int_equal(y.samples, 1);
	free(path);
}

/* A file cut in the middle of a record: everything before it is delivered, then the
 * reader's error (not 0). */
static void test_session_reader_error(void **state)
{
	(void)state;
	char *path = write_file();
	struct pk_data_reader *r = pk_data_reader__open(path, NULL);
	assert_non_null(r);
	uint64_t data_off = 0, data_size = 0;
	{
		/* perf.data header: magic, size, attr_size, attrs{off,size}, data{off,size} */
		FILE *f = fopen(path, "rb");
		uint64_t h[8];
		assert_non_null(f);
		assert_int_equal(fread(h, 8, 8, f), 8);
		fclose(f);
		data_off = h[5];
		data_size = h[6];
	}
	pk_data_reader__free(r);
	/* overwrite the size of the last sample (the last 32 bytes) with a size past the end */
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)(data_off + data_size - 32 + 6), SEEK_SET), 0);
	uint16_t big = 0x4000;
	assert_int_equal(fwrite(&big, 2, 1, f), 1);
	fclose(f);
	struct seen x = { 0 };
	r = pk_data_reader__open(path, NULL);
	assert_non_null(r);
	x.s = pk_session__new(r, NULL);
	assert_non_null(x.s);
	PK_OPTS(pk_session_ops, ops, .sample = on_sample);
	int err = pk_session__process(x.s, &ops, &x);
	assert_true(err < 0);
	assert_int_equal(x.samples, 4); /* all but the broken one */
	pk_session__free(x.s);
	pk_data_reader__free(r);
	free(path);
}

static void test_session_bad_args(void **state)
{
	(void)state;
	errno = 0;
	assert_null(pk_session__new(NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pk_session__process(NULL, NULL, NULL), -EINVAL);
	pk_session__free(NULL);
	assert_null(pk_session__machine(NULL));
}

/* Event names as perf gives them when the file names none */
static void test_attr_name(void **state)
{
	(void)state;
	struct pk_data_attr a;
	char buf[64];
	memset(&a, 0, sizeof(a));
	a.name = "custom";
	assert_string_equal(pk_data_attr__name(&a, buf, sizeof(buf)), "custom");
	a.name = "";
	a.attr.attr.type = PERF_TYPE_SOFTWARE;
	a.attr.attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	assert_string_equal(pk_data_attr__name(&a, buf, sizeof(buf)), "page-faults");
	a.attr.attr.type = PERF_TYPE_HARDWARE;
	a.attr.attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	assert_string_equal(pk_data_attr__name(&a, buf, sizeof(buf)), "instructions");
	a.attr.attr.type = PERF_TYPE_HW_CACHE;
	a.attr.attr.config = PERF_COUNT_HW_CACHE_L1D | PERF_COUNT_HW_CACHE_OP_READ << 8 |
			     PERF_COUNT_HW_CACHE_RESULT_MISS << 16;
	assert_string_equal(pk_data_attr__name(&a, buf, sizeof(buf)), "L1-dcache-load-misses");
	a.attr.attr.type = PERF_TYPE_RAW;
	a.attr.attr.config = 0x1c2;
	assert_string_equal(pk_data_attr__name(&a, buf, sizeof(buf)), "raw 0x1c2");
	a.attr.attr.type = PERF_TYPE_BREAKPOINT;
	a.attr.attr.bp_addr = 0x1234;
	a.attr.attr.bp_type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
	assert_string_equal(pk_data_attr__name(&a, buf, sizeof(buf)), "mem:0x1234:rw");
	a.attr.attr.type = 77;
	a.attr.attr.config = 3;
	assert_string_equal(pk_data_attr__name(&a, buf, sizeof(buf)),
			    "unknown attr type: 77 config 0x3");
	/* a short buffer is cut, not overrun */
	char small[8];
	assert_int_equal(strlen(pk_data_attr__name(&a, small, sizeof(small))), 7);
	assert_string_equal(pk_data_attr__name(NULL, buf, sizeof(buf)), "unknown");
}

static void test_same_host(void **state)
{
	(void)state;
	struct utsname u;
	assert_int_equal(uname(&u), 0);
	struct pk_data_env env;
	memset(&env, 0, sizeof(env));
	assert_true(pk_data_env__same_host(&env)); /* nothing to compare */
	env.osrelease = u.release;
	assert_true(pk_data_env__same_host(&env));
	env.osrelease = "0.0.0-not-this-kernel";
	assert_false(pk_data_env__same_host(&env));
}

/* The profile loader is a session client: an unknown event name is ENOENT; the samples
 * of the file all arrive */
static void test_profile_load(void **state)
{
	(void)state;
	char *path = write_file();
	struct pk_data_reader *r = pk_data_reader__open(path, NULL);
	assert_non_null(r);
	PK_OPTS(pk_profile_load_opts, o, .event = "no-such-event");
	struct pk_profile_load_stats st = { .sz = sizeof(st) };
	errno = 0;
	assert_null(pk_profile__load(r, &o, &st));
	assert_int_equal(errno, ENOENT);
	pk_data_reader__free(r);
	r = pk_data_reader__open(path, NULL);
	assert_non_null(r);
	PK_OPTS(pk_profile_load_opts, o2, .event = "cpu-clock", .reader_thread = true);
	struct pk_profile *p = pk_profile__load(r, &o2, &st);
	assert_non_null(p);
	assert_int_equal(st.samples, 5);
	assert_int_equal(st.reader_error, 0);
	uint64_t n = 0, period = 0;
	assert_int_equal(pk_profile__totals(p, 0, &n, &period), 0);
	assert_int_equal(n, 5);
	pk_profile__free(p);
	pk_data_reader__free(r);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_order_and_routing),
		cmocka_unit_test(test_session_stop),
		cmocka_unit_test(test_session_unordered),
		cmocka_unit_test(test_session_reader_error),
		cmocka_unit_test(test_session_bad_args),
		cmocka_unit_test(test_attr_name),
		cmocka_unit_test(test_same_host),
		cmocka_unit_test(test_profile_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
