/* SPDX-License-Identifier: MIT */
/* lib/export: the profile builder and every writer, on synthetic profiles. */

#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

#define ASIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A small program: main -> a -> b, main -> a, main -> c (kernel leaf). */
static const struct pk_export_frame F_MAIN = { .name = "main", .dso = "/bin/prog", .addr = 0x1000,
					       .file = "prog.c", .line = 10, .kind = PK_FRAME_USER };
static const struct pk_export_frame F_A = { .name = "a", .dso = "/bin/prog", .addr = 0x1100,
					    .kind = PK_FRAME_USER };
static const struct pk_export_frame F_A2 = { .name = "a", .dso = "/bin/prog", .addr = 0x1108,
					     .kind = PK_FRAME_USER };
static const struct pk_export_frame F_B = { .name = "b", .dso = "/lib/libb.so", .addr = 0x7f0000001000,
					    .kind = PK_FRAME_USER };
static const struct pk_export_frame F_C = { .name = "c", .dso = "/bin/prog", .addr = 0x1200,
					    .kind = PK_FRAME_USER };
static const struct pk_export_frame F_K = { .name = "do_syscall_64", .dso = "[kernel.kallsyms]",
					    .addr = 0xffffffff81000000ULL, .kind = PK_FRAME_KERNEL };

static void add(struct pk_profile *p, uint32_t ev, uint32_t tid, const char *comm, uint64_t time,
		uint64_t period, const struct pk_export_frame *const *fr, size_t n)
{
	struct pk_export_frame frames[16];
	for (size_t i = 0; i < n; i++)
		frames[i] = *fr[i];
	struct pk_export_sample s = { .event = ev, .pid = 100, .tid = tid, .comm = comm,
				      .time = time, .period = period, .frames = frames,
				      .nr_frames = n };
	assert_int_equal(pk_profile__add_sample(p, &s), 0);
}

/* leaf first */
static const struct pk_export_frame *const S_AB[] = { &F_B, &F_A, &F_MAIN };
static const struct pk_export_frame *const S_A[] = { &F_A, &F_MAIN };
static const struct pk_export_frame *const S_A2[] = { &F_A2, &F_MAIN };
static const struct pk_export_frame *const S_CK[] = { &F_K, &F_C, &F_MAIN };

static struct pk_profile *small_profile(bool timeline, bool addresses)
{
	PK_OPTS(pk_profile_opts, o, .timeline = timeline, .root_comm = true,
		.addresses = addresses);
	struct pk_profile *p = pk_profile__new(&o);
	assert_non_null(p);
	assert_int_equal(pk_profile__add_event(p, "cpu-clock", "nanoseconds"), 0);
	/* out of time order on purpose */
	add(p, 0, 100, "prog", 300, 10, S_AB, 3);
	add(p, 0, 100, "prog", 100, 10, S_AB, 3);
	add(p, 0, 100, "prog", 200, 10, S_AB, 3);
	add(p, 0, 100, "prog", 400, 5, S_A, 2);
	add(p, 0, 100, "prog", 450, 7, S_A2, 2);
	add(p, 0, 101, "prog worker", 500, 20, S_CK, 3);
	return p;
}

/* Write with fn into a memory buffer; returns the malloc'd text and its size. */
static char *capture(int (*fn)(const struct pk_profile *, FILE *, const void *),
		     const struct pk_profile *p, const void *opts, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	assert_int_equal(fn(p, f, opts), 0);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

static int folded_fn(const struct pk_profile *p, FILE *f, const void *o)
{
	return pk_export__folded(p, f, o);
}
static int gecko_fn(const struct pk_profile *p, FILE *f, const void *o)
{
	return pk_export__gecko(p, f, o);
}
static int flame_fn(const struct pk_profile *p, FILE *f, const void *o)
{
	return pk_export__flamegraph(p, f, o);
}
static int pprof_fn(const struct pk_profile *p, FILE *f, const void *o)
{
	return pk_export__pprof(p, f, o);
}
static int speedscope_fn(const struct pk_profile *p, FILE *f, const void *o)
{
	return pk_export__speedscope(p, f, o);
}
static int json_fn(const struct pk_profile *p, FILE *f, const void *o)
{
	return pk_export__json(p, f, o);
}

/* Exports on two threads at once, each of its own profile, give what one thread alone
 * gives: no writer keeps state outside its arguments (the TSan stage runs this). */
struct exp_job {
	struct pk_profile *p;
	char *want[3];
	size_t want_len[3];
	int bad;
};

static int (*const exp_fns[3])(const struct pk_profile *, FILE *, const void *) = {
	pprof_fn, speedscope_fn, flame_fn };

static void *export_loop(void *arg)
{
	struct exp_job *j = arg;
	for (int it = 0; it < 20; it++)
		for (int k = 0; k < 3; k++) {
			char *buf = NULL;
			size_t n = 0;
			FILE *f = open_memstream(&buf, &n);
			if (!f || exp_fns[k](j->p, f, NULL)) {
				j->bad++;
				if (f)
					fclose(f);
				free(buf);
				continue;
			}
			fclose(f);
			if (n != j->want_len[k] || memcmp(buf, j->want[k], n))
				j->bad++;
			free(buf);
		}
	return NULL;
}

static void test_concurrent_exports(void **state)
{
	(void)state;
	struct exp_job jobs[2];
	pthread_t th[2];
	for (int i = 0; i < 2; i++) {
		jobs[i].p = small_profile(true, true);
		jobs[i].bad = 0;
		for (int k = 0; k < 3; k++)
			jobs[i].want[k] = capture(exp_fns[k], jobs[i].p, NULL, &jobs[i].want_len[k]);
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, export_loop, &jobs[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(jobs[i].bad, 0);
		for (int k = 0; k < 3; k++)
			free(jobs[i].want[k]);
		pk_profile__free(jobs[i].p);
	}
}

static void test_folded(void **state)
{
	(void)state;
	for (int addresses = 0; addresses < 2; addresses++) {
		struct pk_profile *p = small_profile(false, addresses);
		PK_OPTS(pk_folded_opts, o, .event = -1);
		char *t = capture(folded_fn, p, &o, NULL);
		/* a at two addresses folds into one line; comm spaces become '_' */
		assert_string_equal(t, "prog;main;a 12\n"
				       "prog;main;a;b 30\n"
				       "prog_worker;main;c;do_syscall_64 20\n");
		free(t);
		PK_OPTS(pk_folded_opts, o2, .event = 0, .weight = PK_WEIGHT_SAMPLES,
			.annotate_kind = true);
		t = capture(folded_fn, p, &o2, NULL);
		assert_string_equal(t, "prog;main;a 2\n"
				       "prog;main;a;b 3\n"
				       "prog_worker;main;c;do_syscall_64_[k] 1\n");
		free(t);
		PK_OPTS(pk_folded_opts, bad, .event = 3);
		FILE *f = fopen("/dev/null", "w");
		assert_int_equal(pk_export__folded(p, f, &bad), -EINVAL);
		fclose(f);
		pk_profile__free(p);
	}
}

static void test_builder_errors_and_stats(void **state)
{
	(void)state;
	struct pk_profile *p = small_profile(false, false);
	struct pk_export_sample s = { .event = 1 };
	assert_int_equal(pk_profile__add_sample(p, &s), -EINVAL);
	uint32_t bad = 999;
	s.event = 0;
	assert_int_equal(pk_profile__add_sample_ids(p, &s, &bad, 1), -EINVAL);
	/* an empty stack is a valid sample */
	assert_int_equal(pk_profile__add_sample(p, &s), 0);
	uint64_t ns, period;
	assert_int_equal(pk_profile__totals(p, 0, &ns, &period), 0);
	assert_int_equal(ns, 7);
	assert_int_equal(period, 10 * 3 + 5 + 7 + 20 + 1);
	assert_int_equal(pk_profile__totals(p, 1, &ns, &period), -EINVAL);
	struct pk_profile_stats st = { .sz = sizeof(st) };
	pk_profile__stats(p, &st);
	assert_int_equal(st.samples, 7);
	/* main, a, b, c, do_syscall_64 and three comms ("[unknown]" of the empty sample) */
	assert_int_equal(st.functions, 8);
	assert_int_equal(st.frames, 8);
	/* prog, prog/main, prog/main/a, prog/main/a/b, worker, worker/main, .../c, .../k,
	 * [unknown] */
	assert_int_equal(st.stack_nodes, 9);
	/* equal frames intern to equal ids */
	uint32_t i1, i2;
	assert_int_equal(pk_profile__intern_frame(p, &F_B, &i1), 0);
	assert_int_equal(pk_profile__intern_frame(p, &F_B, &i2), 0);
	assert_int_equal(i1, i2);
	pk_profile__free(p);
	pk_profile__free(NULL);
}

/* 1M samples over 100k distinct stacks: memory follows the stacks, not the samples. */
static void test_bounded_memory(void **state)
{
	(void)state;
	struct pk_profile *p = pk_profile__new(NULL);
	assert_non_null(p);
	assert_int_equal(pk_profile__add_event(p, "cycles", NULL), 0);
	enum { NFUNC = 2000, NSTACK = 100000, NSAMPLE = 1000000, DEPTH = 12 };
	uint32_t *ids = malloc(NFUNC * sizeof(*ids));
	for (uint32_t i = 0; i < NFUNC; i++) {
		char name[32];
		snprintf(name, sizeof(name), "func_%u", i);
		struct pk_export_frame fr = { .name = name, .dso = "/usr/lib/libbig.so",
					      .addr = 0x400000 + i * 16, .kind = PK_FRAME_USER };
		assert_int_equal(pk_profile__intern_frame(p, &fr, &ids[i]), 0);
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t rng = 12345;
	for (uint32_t i = 0; i < NSAMPLE; i++) {
		/* stack k (of NSTACK): a shared prefix of 6 frames, then 6 frames from k */
		uint32_t k = (uint32_t)(i * 2654435761u) % NSTACK;
		uint32_t st[DEPTH];
		for (int d = 0; d < DEPTH; d++) {
			uint32_t v = d < 6 ? (uint32_t)d : (k / (d == 6 ? 1 : d * 7) + (uint32_t)d * 131) % NFUNC;
			st[DEPTH - 1 - d] = ids[v];
		}
		st[0] = ids[k % NFUNC];
		rng = rng * 6364136223846793005ULL + 1;
		struct pk_export_sample s = { .event = 0, .pid = 1, .tid = 1, .comm = "big",
					      .period = 1 + (rng >> 60) };
		assert_int_equal(pk_profile__add_sample_ids(p, &s, st, DEPTH), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	struct pk_profile_stats ps = { .sz = sizeof(ps) };
	pk_profile__stats(p, &ps);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("# 1M samples: %.2f s, %llu stack nodes, %llu KiB of tables\n", secs,
	       (unsigned long long)ps.stack_nodes, (unsigned long long)(ps.bytes / 1024));
	assert_int_equal(ps.samples, NSAMPLE);
	assert_true(ps.stack_nodes <= (uint64_t)NSTACK * 6 + 6);
	/* 32 bytes a sample would already be 32 MB: the tables must be far below that */
	assert_true(ps.bytes < 48u * 1024 * 1024);
	/* the flame graph of it stays small */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(pk_export__flamegraph(p, f, NULL), 0);
	fclose(f);
	printf("# flame graph HTML: %zu bytes\n", len);
	assert_true(len < 10u * 1024 * 1024);
	free(buf);
	free(ids);
	pk_profile__free(p);
}

/* ---- a minimal protobuf reader for checking the pprof output ---- */

struct pbr {
	const uint8_t *p, *end;
};
static bool pb_varint(struct pbr *r, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && r->p < r->end; s += 7) {
		uint8_t b = *r->p++;
		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return true;
	}
	return false;
}
/* Next field: returns false at the end; `sub` receives length-delimited contents. */
static bool pb_next(struct pbr *r, uint32_t *field, uint64_t *val, struct pbr *sub)
{
	if (r->p >= r->end)
		return false;
	uint64_t key;
	assert_true(pb_varint(r, &key));
	*field = (uint32_t)(key >> 3);
	switch (key & 7) {
	case 0:
		assert_true(pb_varint(r, val));
		return true;
	case 2:
		assert_true(pb_varint(r, val));
		assert_true(*val <= (uint64_t)(r->end - r->p));
		sub->p = r->p;
		sub->end = r->p + *val;
		r->p += *val;
		return true;
	default:
		fail_msg("unexpected wire type %u", (unsigned)(key & 7));
		return false;
	}
}

static void test_pprof(void **state)
{
	(void)state;
	struct pk_profile *p = small_profile(false, true);
	assert_int_equal(pk_profile__add_event(p, "page-faults", NULL), 1);
	add(p, 1, 100, "prog", 600, 1, S_A, 2);
	static const uint8_t bid[] = { 0xde, 0xad, 0xbe, 0xef };
	assert_int_equal(pk_profile__set_dso(p, "/bin/prog", 0x1000, 0x2000, 0, bid, 4), 0);
	size_t zlen;
	char *z = capture(pprof_fn, p, NULL, &zlen);
	assert_true(zlen > 18);
	assert_int_equal((uint8_t)z[0], 0x1f); /* gzip magic */
	assert_int_equal((uint8_t)z[1], 0x8b);
	/* inflate */
	uint8_t *raw = malloc(1 << 20);
	z_stream zs = { 0 };
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)z;
	zs.avail_in = (uInt)zlen;
	zs.next_out = raw;
	zs.avail_out = 1 << 20;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	size_t rawlen = zs.total_out;
	inflateEnd(&zs);

	/* walk the Profile */
	const char *strings[256];
	size_t nstr = 0, nsample_types = 0, nsamples = 0, nloc = 0, nfunc = 0, nmap = 0;
	uint64_t loc_ids[64], func_ids[64], sum_period0 = 0, sum_samples1 = 0;
	uint64_t default_type = 0;
	uint64_t map_build_id = 0, map_file = 0;
	struct pbr r = { raw, raw + rawlen }, sub, sub2, sub3;
	uint32_t field;
	uint64_t v;
	/* strings first (they come last in the message) */
	while (pb_next(&r, &field, &v, &sub))
		if (field == 6) {
			assert_true(nstr < ASIZE(strings));
			strings[nstr++] = strndup((const char *)sub.p, v);
		}
	assert_true(nstr > 3);
	assert_string_equal(strings[0], "");
	r = (struct pbr){ raw, raw + rawlen };
	while (pb_next(&r, &field, &v, &sub)) {
		switch (field) {
		case 1: nsample_types++; break;
		case 2: {
			uint64_t vals[8];
			size_t nv = 0;
			nsamples++;
			while (pb_next(&sub, &field, &v, &sub2)) {
				if (field == 1) { /* packed location ids: all must exist (checked below) */
					while (sub2.p < sub2.end)
						assert_true(pb_varint(&sub2, &v) && v >= 1);
				} else if (field == 2) {
					while (sub2.p < sub2.end) {
						assert_true(nv < 8);
						assert_true(pb_varint(&sub2, &vals[nv++]));
					}
				}
			}
			assert_int_equal(nv, 4); /* 2 events x (samples, period) */
			sum_period0 += vals[1];
			sum_samples1 += vals[2];
			break;
		}
		case 3:
			nmap++;
			while (pb_next(&sub, &field, &v, &sub2)) {
				if (field == 5)
					map_file = v;
				if (field == 6 && v)
					map_build_id = v;
			}
			break;
		case 4:
			while (pb_next(&sub, &field, &v, &sub2)) {
				if (field == 1)
					loc_ids[nloc] = v;
				if (field == 4)
					while (pb_next(&sub2, &field, &v, &sub3))
						if (field == 1)
							assert_true(v >= 1);
			}
			nloc++;
			break;
		case 5:
			while (pb_next(&sub, &field, &v, &sub2))
				if (field == 1)
					func_ids[nfunc] = v;
			nfunc++;
			break;
		case 14: default_type = v; break;
		}
	}
	assert_int_equal(nsample_types, 4);
	assert_int_equal(sum_period0, 10 * 3 + 5 + 7 + 20);
	assert_int_equal(sum_samples1, 1);
	/* frames at distinct addresses are distinct locations (a at 0x1100 and 0x1108) */
	assert_int_equal(nloc, 6);
	assert_int_equal(nfunc, 5); /* main a b c do_syscall_64 (comm frames left out) */
	(void)loc_ids;
	(void)func_ids;
	assert_int_equal(nmap, 3);
	assert_true(default_type < nstr);
	assert_string_equal(strings[default_type], "cpu-clock");
	/* the last mapping seen is the kernel or libb; find /bin/prog's build id string */
	bool found = false;
	for (size_t i = 0; i < nstr; i++)
		if (!strcmp(strings[i], "deadbeef"))
			found = true;
	assert_true(found);
	(void)map_build_id;
	(void)map_file;
	for (size_t i = 0; i < nstr; i++)
		free((void *)strings[i]);
	free(raw);
	free(z);
	pk_profile__free(p);
}

static void test_speedscope_gecko_json(void **state)
{
	(void)state;
	struct pk_profile *p = small_profile(true, false);
	char *t = capture(speedscope_fn, p, NULL, NULL);
	assert_non_null(strstr(t, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
	/* two threads -> two sampled profiles; stacks root first; the three a;b samples
	 * come first in time order (100, 200, 300) and merge into one weight of 30 */
	assert_non_null(strstr(t, "\"type\":\"sampled\""));
	assert_non_null(strstr(t, "\"unit\":\"nanoseconds\""));
	assert_non_null(strstr(t, "\"weights\":[30,12]"));
	assert_non_null(strstr(t, "\"endValue\":42"));
	assert_null(strstr(t, "prog worker\"")); /* comm frames are not frames */
	free(t);

	t = capture(gecko_fn, p, NULL, NULL);
	assert_non_null(strstr(t, "\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1}"));
	assert_non_null(strstr(t, "\"name\":\"prog worker\""));
	/* first thread: sample times relative to the first sample, in ms, sorted */
	assert_non_null(strstr(t, "\"data\":[[2,0.000000,0,1],[2,0.000100,0,1],[2,0.000200,0,1],[1,0.000300,0,1],[1,0.000350,0,1]]"));
	free(t);
	PK_OPTS(pk_gecko_opts, go, .event = 4);
	FILE *f = fopen("/dev/null", "w");
	assert_int_equal(pk_export__gecko(p, f, &go), -EINVAL);
	fclose(f);

	t = capture(json_fn, p, NULL, NULL);
	static const char want[] = "{\"type\":\"SAMPLE\",\"event\":\"cpu-clock\",\"pid\":100,\"tid\":100,"
			    "\"comm\":\"prog\",\"time\":100,\"period\":10,\"ip\":\"0x0\",\"callchain\":"
			    "[\"0x0\",\"0x0\",\"0x0\"],\"stack\":[{\"name\":\"b\",\"dso\":\"/lib/libb.so\"";
	assert_true(strncmp(t, want, strlen(want)) == 0);
	size_t lines = 0;
	for (const char *c = t; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 6);
	free(t);
	pk_profile__free(p);

	/* time-ordered formats need the timeline */
	p = small_profile(false, false);
	f = fopen("/dev/null", "w");
	assert_int_equal(pk_export__speedscope(p, f, NULL), -EINVAL);
	assert_int_equal(pk_export__json(p, f, NULL), -EINVAL);
	fclose(f);
	pk_profile__free(p);
}

static void test_flamegraph(void **state)
{
	(void)state;
	struct pk_profile *p = small_profile(false, false);
	PK_OPTS(pk_flamegraph_opts, o, .title = "t<i>tle & co");
	size_t len;
	char *t = capture(flame_fn, p, &o, &len);
	assert_non_null(strstr(t, "<title>t&lt;i&gt;tle &amp; co</title>"));
	assert_null(strstr(t, "@PK_DATA@"));
	assert_null(strstr(t, "@PK_TITLE@"));
	/* self-contained: nothing loaded from elsewhere */
	assert_null(strstr(t, "src=\"http"));
	assert_null(strstr(t, "href=\"http"));
	assert_null(strstr(t, "@import"));
	/* root total = all periods; preorder: all, prog, main, a, b, prog worker, ... */
	assert_non_null(strstr(t, "\"total\":62,"));
	assert_non_null(strstr(t, "\"v\":[62,42,42,42,30,20,20,20,20]"));
	assert_non_null(strstr(t, "\"s\":[6,5,5,5,3,1,1,1,1]"));
	assert_non_null(strstr(t, "\"c\":[2,1,1,1,0,1,1,1,0]"));
	free(t);

	/* pruning: frames under 40% of the total go, and are counted */
	PK_OPTS(pk_flamegraph_opts, o2, .min_percent = 40);
	t = capture(flame_fn, p, &o2, &len);
	assert_non_null(strstr(t, "\"v\":[62,42,42,42,30]"));
	assert_non_null(strstr(t, "\"pruned\":1"));
	free(t);
	/* max_nodes raises the threshold (doubling) until the tree fits */
	PK_OPTS(pk_flamegraph_opts, o3, .max_nodes = 5);
	t = capture(flame_fn, p, &o3, &len);
	assert_non_null(strstr(t, "\"c\":[1,1,1,0]"));
	free(t);

	/* hostile names stay inside their JSON strings */
	struct pk_export_frame evil = { .name = "</script><script>alert(1)</script>\xff\xfe\"\\",
					.dso = "x" };
	struct pk_export_sample s = { .event = 0, .comm = "e", .frames = &evil, .nr_frames = 1 };
	assert_int_equal(pk_profile__add_sample(p, &s), 0);
	t = capture(flame_fn, p, NULL, &len);
	assert_null(strstr(t, "<script>alert"));
	assert_non_null(strstr(t, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\\ufffd\\ufffd\\\"\\\\"));
	free(t);
	pk_profile__free(p);
}

/* gunzip a pprof profile into a malloc'd buffer */
static uint8_t *gunzip_pprof(const char *z, size_t zlen, size_t *rawlen)
{
	uint8_t *raw = malloc(1 << 20);
	assert_non_null(raw);
	z_stream zs = { 0 };
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)z;
	zs.avail_in = (uInt)zlen;
	zs.next_out = raw;
	zs.avail_out = 1 << 20;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	*rawlen = zs.total_out;
	inflateEnd(&zs);
	return raw;
}

struct pp_map {
	uint64_t id, start, limit, off, file, bid;
};

/* Issue #16: each described mapping of an object is its own pprof Mapping (start, limit,
 * file offset, build id as given); addresses in no described range get a span at offset 0;
 * every Location points at the Mapping that holds its address. */
static void test_pprof_mappings(void **state)
{
	(void)state;
	PK_OPTS(pk_profile_opts, o, .addresses = true);
	struct pk_profile *p = pk_profile__new(&o);
	assert_non_null(p);
	assert_int_equal(pk_profile__add_event(p, "cpu-clock", "nanoseconds"), 0);
	static const uint8_t bid[] = { 0xab, 0xcd };
	/* build id first (the loader knows it from the header), then the mappings as the
	 * samples meet them; the same library in two processes at two addresses */
	assert_int_equal(pk_profile__set_dso(p, "/lib/x.so", 0, 0, 0, bid, 2), 0);
	assert_int_equal(pk_profile__set_dso(p, "/lib/x.so", 0x7000000, 0x7010000, 0x1000, NULL, 0), 0);
	assert_int_equal(pk_profile__set_dso(p, "/lib/x.so", 0x9000000, 0x9008000, 0x2000, NULL, 0), 0);
	assert_int_equal(pk_profile__set_dso(p, "/lib/x.so", 0x7000000, 0x7010000, 0x1000, NULL, 0), 0);
	assert_int_equal(pk_profile__set_dso(p, "/lib/x.so", 0x10, 0x8, 0, NULL, 0), -EINVAL);
	static const uint64_t addrs[] = { 0x7000100, 0x700ff00, 0x9000200, 0x5000, 0x5100 };
	for (size_t i = 0; i < ASIZE(addrs); i++) {
		struct pk_export_frame fr = { .name = "f", .dso = "/lib/x.so", .addr = addrs[i],
					      .kind = PK_FRAME_USER };
		struct pk_export_sample s = { .comm = "x", .period = 1, .frames = &fr, .nr_frames = 1 };
		assert_int_equal(pk_profile__add_sample(p, &s), 0);
	}
	size_t zlen, rawlen;
	char *z = capture(pprof_fn, p, NULL, &zlen);
	uint8_t *raw = gunzip_pprof(z, zlen, &rawlen);
	struct pp_map maps[8];
	uint64_t loc_map[8], loc_addr[8];
	size_t nmap = 0, nloc = 0, nstr = 0;
	char *strings[64];
	struct pbr r = { raw, raw + rawlen }, sub, sub2;
	uint32_t field;
	uint64_t v;
	while (pb_next(&r, &field, &v, &sub)) {
		if (field == 6) {
			assert_true(nstr < ASIZE(strings));
			strings[nstr++] = strndup((const char *)sub.p, v);
		} else if (field == 3) {
			assert_true(nmap < ASIZE(maps));
			struct pp_map *m = &maps[nmap++];
			memset(m, 0, sizeof(*m));
			while (pb_next(&sub, &field, &v, &sub2)) {
				uint64_t *dst[] = { NULL, &m->id, &m->start, &m->limit, &m->off, &m->file,
						    &m->bid };
				if (field >= 1 && field <= 6)
					*dst[field] = v;
			}
		} else if (field == 4) {
			assert_true(nloc < ASIZE(loc_map));
			loc_map[nloc] = loc_addr[nloc] = 0;
			while (pb_next(&sub, &field, &v, &sub2)) {
				if (field == 2)
					loc_map[nloc] = v;
				if (field == 3)
					loc_addr[nloc] = v;
			}
			nloc++;
		}
	}
	assert_int_equal(nloc, ASIZE(addrs));
	assert_int_equal(nmap, 3); /* the two mappings in use and the span of the rest */
	static const uint64_t want[3][3] = { { 0x7000000, 0x7010000, 0x1000 },
					     { 0x9000000, 0x9008000, 0x2000 },
					     { 0x5000, 0x5101, 0 } };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(maps[i].id, i + 1);
		assert_int_equal(maps[i].start, want[i][0]);
		assert_int_equal(maps[i].limit, want[i][1]);
		assert_int_equal(maps[i].off, want[i][2]);
		assert_true(maps[i].file < nstr && maps[i].bid < nstr);
		assert_string_equal(strings[maps[i].file], "/lib/x.so");
		assert_string_equal(strings[maps[i].bid], "abcd");
	}
	for (size_t l = 0; l < nloc; l++) {
		assert_true(loc_map[l] >= 1 && loc_map[l] <= nmap);
		const struct pp_map *m = &maps[loc_map[l] - 1];
		assert_true(m->start <= loc_addr[l] && loc_addr[l] < m->limit);
	}
	for (size_t i = 0; i < nstr; i++)
		free(strings[i]);
	free(raw);
	free(z);
	pk_profile__free(p);
}

static void test_template_in_sync(void **state)
{
	(void)state;
	/* flamegraph-template.c is generated from flamegraph.html.in: they must agree */
	char path[4096];
	snprintf(path, sizeof(path), "%s/../../../lib/export/flamegraph.html.in", PK_FIXTURES);
	FILE *f = fopen(path, "r");
	if (!f)
		PK_SKIP("template source %s not found", path);
	char *src = malloc(1 << 20);
	size_t n = fread(src, 1, (1 << 20) - 1, f);
	fclose(f);
	src[n] = '\0';
	/* the page written for an empty profile is the template with the two fields filled */
	struct pk_profile *p = pk_profile__new(NULL);
	PK_OPTS(pk_flamegraph_opts, o, .title = "T");
	char *page = capture(flame_fn, p, &o, NULL);
	const char *a = strstr(src, "@PK_TITLE@"), *b = strstr(src, "@PK_DATA@");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(strncmp(page, src, (size_t)(a - src)) == 0);
	const char *tail = b + strlen("@PK_DATA@");
	size_t pl = strlen(page), tl = strlen(tail);
	assert_true(pl > tl);
	if (strcmp(page + pl - tl, tail) != 0)
		fail_msg("lib/export/flamegraph-template.c is stale: run lib/export/embed-template.sh");
	free(page);
	free(src);
	pk_profile__free(p);
}

static void test_diff(void **state)
{
	(void)state;
	struct pk_profile *a = small_profile(false, false), *b = small_profile(false, false);
	/* b: c grows a lot */
	for (int i = 0; i < 4; i++)
		add(b, 0, 101, "prog worker", 900, 20, S_CK, 3);
	struct pk_diff_entry *e = NULL;
	int n = pk_profile__diff(a, b, NULL, PK_WEIGHT_PERIOD, &e);
	assert_int_equal(n, 3); /* b, a, do_syscall_64 */
	assert_string_equal(e[0].name, "do_syscall_64");
	assert_int_equal(e[0].before, 20);
	assert_int_equal(e[0].after, 100);
	assert_true(e[0].after_pct > e[0].before_pct);
	assert_true(e[0].before_pct > 32.2 && e[0].before_pct < 32.3); /* 20/62 */
	free(e);
	assert_int_equal(pk_profile__diff(a, b, "nope", PK_WEIGHT_PERIOD, &e), -ENOENT);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(pk_export__flamegraph_diff(a, b, f, NULL), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"diff\":true"));
	assert_non_null(strstr(buf, "\"totalBefore\":62"));
	free(buf);
	pk_profile__free(a);
	pk_profile__free(b);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_builder_errors_and_stats),
		cmocka_unit_test(test_pprof),
		cmocka_unit_test(test_pprof_mappings),
		cmocka_unit_test(test_speedscope_gecko_json),
		cmocka_unit_test(test_flamegraph),
		cmocka_unit_test(test_template_in_sync),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_bounded_memory),
		cmocka_unit_test(test_concurrent_exports),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
