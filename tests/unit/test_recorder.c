/* SPDX-License-Identifier: MIT */
/* Unit tests: pk_recorder (lib/record), through the public API only: a forked child and
 * this process recorded with cpu-clock, read back with pk_data_reader; bad options. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "testutil.h"
#include <perfkit/perfkit.h>
#include "../../lib/record/record-internal.h"

/* ---- bad options ---- */

static void expect_einval(const struct pk_recorder_opts *o)
{
	errno = 0;
	assert_null(pk_recorder__new(o));
	assert_int_equal(errno, EINVAL);
}

static void test_bad_opts(void **state)
{
	(void)state;
	pk_test_quiet_log();
	expect_einval(NULL);
	{ PK_OPTS(pk_recorder_opts, o, .output = "x.data"); expect_einval(&o); } /* no target */
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .tids = "1", .output = "x.data"); expect_einval(&o); }
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .system_wide = true, .output = "x.data"); expect_einval(&o); }
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .cgroup = true, .output = "x.data"); expect_einval(&o); }
	{ PK_OPTS(pk_recorder_opts, o, .cpus = "0", .per_thread = true, .output = "x.data"); expect_einval(&o); }
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .period = 10, .freq = 10, .output = "x.data"); expect_einval(&o); }
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .mmap_pages = 3, .output = "x.data"); expect_einval(&o); }
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .compress_level = 23, .output = "x.data"); expect_einval(&o); }
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .callgraph = PK_RECORDER_CG_DWARF,
		  .stack_size = 70000, .output = "x.data"); expect_einval(&o); }
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .output_fd = -1); expect_einval(&o); }
	/* sample_type_extra: only PHYS_ADDR and the page sizes */
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .sample_type_extra = PERF_SAMPLE_RAW,
		  .output = "x.data"); expect_einval(&o); }
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .event_str = "no-such-event-xyz",
		  .output = "x.data"); expect_einval(&o); }
	{
		/* a newer caller's struct with a non-zero field we do not know */
		struct { struct pk_recorder_opts o; uint64_t extra; } big;
		memset(&big, 0, sizeof(big));
		big.o.sz = sizeof(big);
		big.o.pids = "1";
		big.o.output = "x.data";
		big.extra = 1;
		expect_einval(&big.o);
	}
	/* calls out of order */
	PK_OPTS(pk_recorder_opts, o, .pids = "1", .output = "x.data");
	struct pk_recorder *r = pk_recorder__new(&o);
	assert_non_null(r);
	assert_int_equal(pk_recorder__drain(r, 0), -EINVAL);
	assert_int_equal(pk_recorder__finish(r), -EINVAL);
	assert_int_equal(pk_recorder__snapshot(r), -EINVAL);
	PK_OPTS(pk_recorder_failure, f);
	pk_recorder__failure(r, &f);
	assert_int_equal(f.stage, PK_RECORDER_FAIL_NONE);
	pk_recorder__free(r);
	assert_int_equal(pk_recorder__open(NULL), -EINVAL);
	pk_recorder__free(NULL);
	PK_OPTS(pk_recorder_stats, st, .samples = 7);
	pk_recorder__stats(NULL, &st);
	assert_int_equal(st.samples, 0);
	assert_int_equal(access("x.data", F_OK), -1);
}

/* A target that does not exist: the failure says which step and why. */
static void test_open_failure(void **state)
{
	(void)state;
	pk_test_quiet_log();
	PK_OPTS(pk_recorder_opts, o, .pids = "999999999", .event_str = "cpu-clock",
		.output = "never.data");
	struct pk_recorder *r = pk_recorder__new(&o);
	assert_non_null(r);
	int err = pk_recorder__open(r);
	assert_true(err < 0);
	PK_OPTS(pk_recorder_failure, f);
	pk_recorder__failure(r, &f);
	assert_int_equal(f.stage, PK_RECORDER_FAIL_THREADS);
	assert_int_equal(f.err, err);
	assert_string_equal(f.what, "999999999");
	/* a short caller struct is not overrun */
	struct { size_t sz; enum pk_recorder_stage stage; } small = { sizeof(small), 0 };
	pk_recorder__failure(r, (struct pk_recorder_failure *)(void *)&small);
	assert_int_equal(small.stage, PK_RECORDER_FAIL_THREADS);
	pk_recorder__free(r);
	assert_int_equal(access("never.data", F_OK), -1);
}

/* ---- the header walk (internal): records of two attrs whose trailers differ ---- */

static size_t put(uint8_t *buf, size_t off, const void *p, size_t n)
{
	memcpy(buf + off, p, n);
	return off + n;
}

static size_t put_u64(uint8_t *buf, size_t off, uint64_t v)
{
	return put(buf, off, &v, 8);
}

static size_t put_hdr(uint8_t *buf, size_t off, uint32_t type, uint16_t misc, uint16_t size)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = size };
	return put(buf, off, &h, sizeof(h));
}

/* trailer: TID, TIME, [CPU], IDENTIFIER */
static size_t put_trailer(uint8_t *buf, size_t off, bool cpu, uint64_t id)
{
	off = put_u64(buf, off, 42);
	off = put_u64(buf, off, 1000);
	if (cpu)
		off = put_u64(buf, off, 1);
	return put_u64(buf, off, id);
}

static void test_walk(void **state)
{
	(void)state;
	struct perf_event_attr a = { .sample_id_all = 1, .sample_type = PERF_SAMPLE_IP |
		PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER };
	struct perf_event_attr b = a;
	b.sample_type |= PERF_SAMPLE_CPU | PERF_SAMPLE_RAW; /* a tracepoint's */
	uint64_t ida = 10, idb = 20;
	_Alignas(8) uint8_t buf[512];
	size_t off = 0;
	struct pk_rec_walk w;

	assert_int_equal(pk_rec_walk__init(&w), 0);
	assert_int_equal(pk_rec_walk__add_attr(&w, &a, &ida, 1), 0);
	assert_int_equal(pk_rec_walk__add_attr(&w, &b, &idb, 1), 0);
	pk_rec_walk__seal(&w);
	/* SAMPLE of a: IDENTIFIER IP TID TIME PERIOD */
	off = put_hdr(buf, off, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 48);
	for (int i = 0; i < 5; i++)
		off = put_u64(buf, off, i ? 1 : ida);
	/* LOST of b: id, lost, b's 32-byte trailer */
	off = put_hdr(buf, off, PERF_RECORD_LOST, 0, 56);
	off = put_u64(buf, off, idb);
	off = put_u64(buf, off, 5);
	off = put_trailer(buf, off, true, idb);
	/* MMAP2 of a (user space, executable), then one of data (not noted) */
	for (int data = 0; data < 2; data++) {
		uint16_t misc = PERF_RECORD_MISC_USER | (data ? PERF_RECORD_MISC_MMAP_DATA : 0);
		off = put_hdr(buf, off, PERF_RECORD_MMAP2, misc, 112);
		off = put_u64(buf, off, 42 | (42ULL << 32));
		for (int i = 0; i < 3 + 3; i++)
			off = put_u64(buf, off, 0x1000);
		off = put_u64(buf, off, 5);                  /* prot, flags */
		char name[16] = "/bin/true";
		if (data)
			memcpy(name, "/etc/passwd", 12);
		off = put(buf, off, name, sizeof(name));
		off = put_trailer(buf, off, false, ida);
	}
	/* LOST_SAMPLES of a */
	off = put_hdr(buf, off, PERF_RECORD_LOST_SAMPLES, 0, 40);
	off = put_u64(buf, off, 3);
	off = put_trailer(buf, off, false, ida);

	/* in one span, then split in the middle of the first MMAP2 (the ring's wrap) */
	for (int split = 0; split < 2; split++) {
		struct pk_ring_chunk c[2] = { { buf, off }, { NULL, 0 } };
		_Alignas(8) uint8_t second[512];
		if (split) {
			size_t at = 104 + 40; /* inside the first MMAP2 (it starts at 104) */
			memcpy(second, buf + at, off - at);
			c[0].len = at;
			c[1].ptr = second;
			c[1].len = off - at;
		}
		pk_rec_walk__scan(&w, c, split ? 2 : 1);
		assert_int_equal(w.samples, 1 + split);
		assert_int_equal(w.lost, 5 * (1 + split));
		assert_int_equal(w.lost_records, 1 + split);
		assert_int_equal(w.lost_samples, 3 * (1 + split));
		assert_int_equal(w.dsos.nr, 1);
	}
	pk_rec_walk__release(&w);
}

/* ---- reading back ---- */

struct seen {
	uint64_t samples, comm, mmap, finished_init;
	bool comm_of_pid;
};

static void read_back(const char *path, pid_t pid, const struct pk_recorder_stats *st,
		      struct seen *s)
{
	struct pk_data_reader *rd = pk_data_reader__open(path, NULL);
	struct pk_data_event ev;
	int err;

	assert_non_null(rd);
	assert_true(pk_data_reader__nr_attrs(rd) >= 1);
	const struct pk_data_attr *a = pk_data_reader__attr(rd, 0);
	assert_int_equal(a->attr.attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a->attr.attr.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_true(a->attr.attr.sample_id_all);
	assert_non_null(a->name);
	assert_int_equal(strncmp(a->name, "cpu-clock", 9), 0);
	assert_true(a->nr_ids > 0);
	memset(s, 0, sizeof(*s));
	while ((err = pk_data_reader__next(rd, &ev)) > 0) {
		const struct perf_event_header *h = ev.hdr;
		struct pk_record rec;
		if (h->type == PERF_RECORD_SAMPLE)
			s->samples++;
		else if (h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2)
			s->mmap++;
		else if (h->type == PK_RECORD_FINISHED_INIT)
			s->finished_init++;
		else if (h->type == PERF_RECORD_COMM) {
			s->comm++;
			if (ev.attr && pk_record__decode(&ev.attr->layout, h, &rec, NULL) == 0 &&
			    (pid_t)rec.comm.pid == pid)
				s->comm_of_pid = true;
		}
	}
	assert_int_equal(err, 0);
	assert_int_equal(s->samples, st->samples);
	/* the BUILD_ID feature: the kernel and the files of the recorded mappings */
	const struct pk_data_env *env = pk_data_reader__env(rd);
	assert_int_equal(env->nr_build_ids, st->build_ids);
	bool user = false;
	for (size_t i = 0; i < env->nr_build_ids; i++)
		if (env->build_ids[i].filename && env->build_ids[i].filename[0] == '/')
			user = true;
	assert_true(user);
	pk_data_reader__free(rd);
}

static volatile uint64_t sink;

static void spin_ms(long ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i * 7;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* A forked child (pk_workload) that burns CPU, recorded from its exec. */
static void test_record_workload(void **state)
{
	(void)state;
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not allowed here");
	pk_test_quiet_log();
	char *const argv[] = { "/bin/sh", "-c",
			       "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done", NULL };
	struct pk_workload *w = pk_workload__prepare(argv);
	assert_non_null(w);
	char *dir = pk_test_mkdtemp("bidcache");
	PK_OPTS(pk_recorder_opts, o, .event_str = "cpu-clock", .period = 100000, .workload = w,
		.output = "workload.data", .buildid_dir = dir);
	struct pk_recorder *r = pk_recorder__new(&o);
	assert_non_null(r);
	assert_int_equal(pk_recorder__open(r), 0);
	assert_int_equal(pk_recorder__open(r), -EALREADY);
	assert_int_equal(pk_workload__start(w), 0);
	int status = 0, err;
	while ((err = pk_workload__wait(w, false, &status)) == -EAGAIN)
		assert_true(pk_recorder__drain(r, 50) >= 0);
	assert_int_equal(err, 0);
	assert_int_equal(pk_recorder__finish(r), 0);
	PK_OPTS(pk_recorder_stats, st);
	pk_recorder__stats(r, &st);
	assert_true(st.samples > 0);
	assert_int_equal(st.freq, 0);
	assert_true(st.wakeups >= 1 && st.bytes > 0 && st.file_bytes > st.bytes);
	assert_int_equal(st.buildid_cache_err, 0);
	assert_true(st.build_ids >= 2);

	struct seen s;
	read_back("workload.data", pk_workload__pid(w), &st, &s);
	assert_true(s.comm_of_pid);
	assert_true(s.mmap > 0);      /* the exec's mappings, from the kernel */
	assert_int_equal(s.finished_init, 1);
	pk_recorder__free(r);
	pk_workload__free(w);
	/* the cache holds the recorded files */
	assert_int_equal(pk_test_sh("ls %s/.build-id | grep -q .", dir), 0);
	pk_test_rmtree(dir);
	free(dir);
}

/* This very process (-p self), written to an fd: existing mappings are synthesised. */
static void test_record_self(void **state)
{
	(void)state;
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not allowed here");
	pk_test_quiet_log();
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	int fd = open("self.data", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	PK_OPTS(pk_recorder_opts, o, .event_str = "cpu-clock", .freq = 2000, .pids = pid,
		.output_fd = fd, .no_buildid_cache = true, .mmap_pages = 8);
	struct pk_recorder *r = pk_recorder__new(&o);
	assert_non_null(r);
	assert_int_equal(pk_recorder__open(r), 0);
	for (int i = 0; i < 20; i++) {
		spin_ms(10);
		assert_true(pk_recorder__drain(r, 0) >= 0);
	}
	assert_int_equal(pk_recorder__finish(r), 0);
	PK_OPTS(pk_recorder_stats, st);
	pk_recorder__stats(r, &st);
	assert_true(st.samples > 0);
	assert_int_equal(st.freq, 2000);
	assert_int_equal(st.mmap_pages, 8);
	pk_recorder__free(r);
	close(fd);

	struct seen s;
	read_back("self.data", getpid(), &st, &s);
	assert_true(s.comm_of_pid);  /* synthesised */
	assert_true(s.mmap > 0);     /* synthesised MMAP2 of our mappings */
}

/* Count the samples of one file; its COMM of pid, MMAPs and FINISHED_INIT. */
static uint64_t count_file(const char *path, pid_t pid, struct seen *s)
{
	struct pk_data_reader *rd = pk_data_reader__open(path, NULL);
	struct pk_data_event ev;
	struct pk_record rec;
	int err;

	assert_non_null(rd);
	memset(s, 0, sizeof(*s));
	while ((err = pk_data_reader__next(rd, &ev)) > 0) {
		const struct perf_event_header *h = ev.hdr;
		if (h->type == PERF_RECORD_SAMPLE)
			s->samples++;
		else if (h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2)
			s->mmap++;
		else if (h->type == PK_RECORD_FINISHED_INIT)
			s->finished_init++;
		else if (h->type == PERF_RECORD_COMM && ev.attr &&
			 pk_record__decode(&ev.attr->layout, h, &rec, NULL) == 0 &&
			 (pid_t)rec.comm.pid == pid)
			s->comm_of_pid = true;
	}
	assert_int_equal(err, 0);
	pk_data_reader__free(rd);
	return s->samples;
}

/* Rotation: three switches and a renamed last file, every one complete alone (its own
 * COMM and MMAP2 of the target, FINISHED_INIT), together every sample; the output stays
 * locked throughout; fd output cannot rotate. */
static void test_record_rotate(void **state)
{
	(void)state;
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not allowed here");
	pk_test_quiet_log();
	char pid[32], name[4][32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	unlink("rot.data");
	PK_OPTS(pk_recorder_opts, o, .event_str = "cpu-clock", .freq = 2000, .pids = pid,
		.output = "rot.data", .no_buildid_cache = true, .mmap_pages = 8);
	struct pk_recorder *r = pk_recorder__new(&o);
	assert_non_null(r);
	assert_int_equal(pk_recorder__switch_output(r, "x", NULL), -EINVAL); /* not open */
	assert_int_equal(pk_recorder__open(r), 0);
	struct pk_recorder_file f[4];
	for (int k = 0; k < 4; k++) {
		for (int i = 0; i < 10; i++) {
			spin_ms(10);
			assert_true(pk_recorder__drain(r, 0) >= 0);
		}
		snprintf(name[k], sizeof(name[k]), "rot.data.%d", k);
		f[k] = (struct pk_recorder_file){ .sz = sizeof(f[k]) };
		if (k < 3) {
			assert_int_equal(pk_recorder__switch_output(r, name[k], &f[k]), 0);
			/* between files the path stays locked */
			PK_OPTS(pk_data_lock_opts, lo);
			errno = 0;
			assert_null(pk_data_lock__acquire("rot.data", &lo));
			assert_int_equal(errno, EBUSY);
		} else {
			assert_int_equal(pk_recorder__finish_as(r, name[k], &f[k]), 0);
		}
	}
	assert_int_equal(pk_recorder__switch_output(r, "y", NULL), -EINVAL); /* finished */
	assert_int_equal(access("rot.data", F_OK), -1);
	PK_OPTS(pk_recorder_stats, st);
	pk_recorder__stats(r, &st);
	pk_recorder__free(r);

	uint64_t total = 0;
	for (int k = 0; k < 4; k++) {
		struct seen s;
		uint64_t n = count_file(name[k], getpid(), &s);
		assert_true(s.comm_of_pid);
		assert_true(s.mmap > 0);
		assert_int_equal(s.finished_init, 1);
		assert_true(n == f[k].samples);
		assert_true(n > 0);
		assert_true(f[k].first_ns > 0 && f[k].first_ns <= f[k].last_ns);
		if (k)
			assert_true(f[k].last_ns > f[k - 1].last_ns);
		struct stat sb;
		assert_int_equal(stat(name[k], &sb), 0);
		assert_true((uint64_t)sb.st_size == f[k].bytes);
		total += n;
		unlink(name[k]);
	}
	assert_true(total == st.samples);
	/* the lock went with the last file */
	PK_OPTS(pk_data_lock_opts, lo);
	struct pk_data_lock *l = pk_data_lock__acquire("rot.data", &lo);
	assert_non_null(l);
	pk_data_lock__release(l);

	/* an fd output has no name to rotate */
	int fd = open("rotfd.data", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	PK_OPTS(pk_recorder_opts, o2, .event_str = "cpu-clock", .pids = pid, .output_fd = fd,
		.no_buildid_cache = true, .mmap_pages = 8);
	r = pk_recorder__new(&o2);
	assert_non_null(r);
	assert_int_equal(pk_recorder__open(r), 0);
	assert_int_equal(pk_recorder__switch_output(r, "z", NULL), -EINVAL);
	assert_int_equal(pk_recorder__finish(r), 0);
	pk_recorder__free(r);
	close(fd);
}

/* start_disabled: nothing is sampled until pk_recorder__enable, nothing after it is
 * turned off again; the attrs carry all_user, clockid and the register masks; group puts
 * the two events in one group (GROUP_DESC); all_user with all_kernel is refused. */
static struct perf_event_attr seen_attr;
static void keep_attr(const struct pk_evsel *ev, const struct perf_event_attr *attr, pid_t pid,
		      int cpu, int group_fd, unsigned long flags, int fd, void *ctx)
{
	(void)ev; (void)pid; (void)cpu; (void)group_fd; (void)flags; (void)ctx;
	if (fd >= 0 && attr->type == PERF_TYPE_SOFTWARE && attr->config == PERF_COUNT_SW_CPU_CLOCK)
		seen_attr = *attr;
}

static uint64_t samples_of(struct pk_recorder *r, bool on, int ms)
{
	PK_OPTS(pk_recorder_stats, st);
	pk_recorder__stats(r, &st);
	uint64_t before = st.samples;
	if (on)
		assert_int_equal(pk_recorder__enable(r, true), 0);
	for (int i = 0; i < ms / 10; i++) {
		spin_ms(10);
		assert_true(pk_recorder__drain(r, 0) >= 0);
	}
	if (on)
		assert_int_equal(pk_recorder__enable(r, false), 0);
	for (int i = 0; i < 3; i++)
		assert_true(pk_recorder__drain(r, 0) >= 0);
	pk_recorder__stats(r, &st);
	return st.samples - before;
}

static void test_start_disabled(void **state)
{
	(void)state;
	pk_test_quiet_log();
	{ PK_OPTS(pk_recorder_opts, o, .pids = "1", .all_user = true, .all_kernel = true,
		  .output = "x.data"); expect_einval(&o); }
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open is not allowed here");
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	PK_OPTS(pk_recorder_opts, o, .event_str = "cpu-clock,task-clock", .freq = 1000,
		.pids = pid, .output = "disabled.data", .no_buildid_cache = true, .mmap_pages = 8,
		.start_disabled = true, .all_user = true, .use_clockid = true,
		.clockid = CLOCK_MONOTONIC, .sample_regs_user = 0x3, .group = true,
		.on_open = keep_attr);
	struct pk_recorder *r = pk_recorder__new(&o);
	assert_non_null(r);
	assert_int_equal(pk_recorder__enable(r, true), -EINVAL); /* not open yet */
	assert_int_equal(pk_recorder__open(r), 0);
	assert_true(seen_attr.exclude_kernel && !seen_attr.exclude_user);
	assert_true(seen_attr.use_clockid && seen_attr.clockid == CLOCK_MONOTONIC);
	assert_true((seen_attr.sample_type & PERF_SAMPLE_REGS_USER) &&
		    seen_attr.sample_regs_user == 0x3);
	assert_int_equal(samples_of(r, false, 200), 0);
	assert_true(samples_of(r, true, 200) > 0);
	assert_int_equal(samples_of(r, false, 200), 0);
	assert_int_equal(pk_recorder__finish(r), 0);
	pk_recorder__free(r);
	PK_OPTS(pk_data_reader_opts, ro);
	struct pk_data_reader *rd = pk_data_reader__open("disabled.data", &ro);
	assert_non_null(rd);
	const struct pk_data_env *env = pk_data_reader__env(rd);
	assert_int_equal(env->nr_groups, 1);
	pk_data_reader__free(rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_opts),
		cmocka_unit_test(test_open_failure),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_record_workload),
		cmocka_unit_test(test_record_self),
		cmocka_unit_test(test_record_rotate),
		cmocka_unit_test(test_start_disabled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
