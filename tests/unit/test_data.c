/* SPDX-License-Identifier: MIT */
/* lib/data: perf.data writer round trip, interop with the real perf, hostile input. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CPU)
#define NR_SAMPLES 60
#define ASIZE(a) (sizeof(a) / sizeof((a)[0]))
#define T0 1000000000ULL

static const uint64_t ids_a[] = { 101, 102 };
static const uint64_t ids_b[] = { 201 };

/* Records we write, kept to compare with what is read back. */
struct recs {
	uint8_t buf[65536];
	size_t len;
	size_t nr;
	size_t off[256];
};

static void put(struct recs *r, const void *p, size_t n)
{
	assert_true(r->len + n <= sizeof(r->buf));
	memcpy(r->buf + r->len, p, n);
	r->len += n;
}

/* sample_id_all trailer for ST: TID, TIME, CPU, IDENTIFIER */
static void trailer(struct recs *r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
		    uint64_t id)
{
	uint32_t pt[2] = { pid, tid }, cr[2] = { cpu, 0 };
	put(r, pt, 8);
	put(r, &time, 8);
	put(r, cr, 8);
	put(r, &id, 8);
}

static void begin(struct recs *r, uint32_t type, uint16_t misc, uint16_t size)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = size };
	r->off[r->nr++] = r->len;
	put(r, &h, sizeof(h));
}

static void build_records(struct recs *r, uint32_t pid)
{
	memset(r, 0, sizeof(*r));
	/* COMM: pid, tid, "pkdata\0\0" (8 bytes), trailer 32 */
	begin(r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, 8 + 8 + 8 + 32);
	uint32_t pt[2] = { pid, pid };
	put(r, pt, 8);
	char comm[8] = "pkdata";
	put(r, comm, 8);
	trailer(r, pid, pid, T0 - 10, 0, ids_a[0]);
	/* MMAP2 of /usr/bin/true at 0x400000 */
	char fname[16] = "/usr/bin/true";
	begin(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 8 + 64 + 16 + 32);
	put(r, pt, 8);
	uint64_t addr = 0x400000, len = 0x10000, pgoff = 0;
	put(r, &addr, 8);
	put(r, &len, 8);
	put(r, &pgoff, 8);
	uint32_t majmin[2] = { 8, 1 };
	uint64_t ino = 1234, gen = 0;
	put(r, majmin, 8);
	put(r, &ino, 8);
	put(r, &gen, 8);
	uint32_t protflags[2] = { 5, 2 };
	put(r, protflags, 8);
	put(r, fname, 16);
	trailer(r, pid, pid, T0 - 5, 0, ids_a[0]);
	for (int i = 0; i < NR_SAMPLES; i++) {
		uint64_t id = i % 3 == 2 ? ids_b[0] : ids_a[i % 2];
		uint64_t ip = 0x401000 + 16 * (uint64_t)i, time = T0 + 1000 * (uint64_t)i;
		uint64_t period = 100000;
		uint32_t cpu[2] = { (uint32_t)(i % 2), 0 };
		begin(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 6 * 8);
		put(r, &id, 8);
		put(r, &ip, 8);
		put(r, pt, 8);
		put(r, &time, 8);
		put(r, cpu, 8);
		put(r, &period, 8);
	}
}

static void make_attr(struct pk_attr *a, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->attr.type = PERF_TYPE_SOFTWARE;
	a->attr.config = config;
	a->attr.sample_period = 100000;
	a->attr.sample_type = ST;
	a->attr.sample_id_all = 1;
	a->attr.mmap2 = 1;
	a->attr.comm = 1;
	a->attr.exclude_kernel = 1;
}

struct wcfg {
	bool pipe;
	int level;
	bool split;       /* feed the data in odd-sized chunks that split records */
};

static void write_file(const char *path, const struct recs *r, const struct wcfg *c)
{
	const char *argv[] = { "perfkit", "record", "-e", "cpu-clock", "--", "pkdata" };
	PK_OPTS(pk_data_writer_opts, o, .pipe = c->pipe, .compress_level = c->level,
		.argv = argv, .argc = 6);
	struct pk_data_writer *w = pk_data_writer__open(path, &o);
	assert_non_null(w);
	struct pk_attr a, b;
	make_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	make_attr(&b, PERF_COUNT_SW_TASK_CLOCK);
	assert_int_equal(pk_data_writer__add_attr(w, &a, "cpu-clock", ids_a, 2), 0);
	assert_int_equal(pk_data_writer__add_attr(w, &b, "task-clock", ids_b, 1), 1);
	uint8_t bid[PK_BUILD_ID_MAX];
	size_t blen = sizeof(bid);
	if (pk_build_id__read("/usr/bin/true", bid, &blen) == 0)
		assert_int_equal(pk_data_writer__add_build_id(w, -1, PERF_RECORD_MISC_USER, bid,
							      blen, "/usr/bin/true"), 0);
	size_t half = r->off[r->nr / 2];
	if (c->split) {
		/* chunks of 13 bytes: every record straddles calls */
		for (size_t off = 0; off < half; off += 13)
			assert_int_equal(pk_data_writer__write(w, r->buf + off,
							       off + 13 > half ? half - off : 13), 0);
	} else {
		assert_int_equal(pk_data_writer__write(w, r->buf, half), 0);
	}
	assert_int_equal(pk_data_writer__finish_round(w), 0);
	for (size_t i = r->nr / 2; i < r->nr; i++)
		assert_int_equal(pk_data_writer__write_record(
					 w, (const struct perf_event_header *)(r->buf + r->off[i])),
				 0);
	assert_int_equal(pk_data_writer__finish_round(w), 0);
	uint64_t nrec = 0, nsamp = 0;
	pk_data_writer__stats(w, NULL, &nrec, &nsamp, NULL);
	assert_int_equal(nsamp, NR_SAMPLES);
	assert_int_equal(nrec, r->nr + 2);
	assert_int_equal(pk_data_writer__finish(w), 0);
	/* finished: the writer stays until freed, writes nothing more, finishes once */
	assert_int_equal(pk_data_writer__write_record(
				 w, (const struct perf_event_header *)(r->buf + r->off[0])),
			 -EINVAL);
	assert_int_equal(pk_data_writer__finish_round(w), -EINVAL);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__stats(w, NULL, &nrec, NULL, NULL);
	assert_int_equal(nrec, r->nr + 2);
	pk_data_writer__free(w);
}

/* Read `path` back and compare everything with what write_file wrote. */
static void check_file(const char *path, const struct recs *r, const struct wcfg *c,
		       bool use_fd_pipe)
{
	struct pk_data_reader *rd;
	int pfd[2] = { -1, -1 };
	pid_t child = -1;

	if (use_fd_pipe) {
		/* feed through a real pipe: the reader must not need to seek */
		assert_int_equal(pipe(pfd), 0);
		child = fork();
		assert_true(child >= 0);
		if (child == 0) {
			close(pfd[0]);
			int fd = open(path, O_RDONLY);
			char b[4096];
			ssize_t n;
			while (fd >= 0 && (n = read(fd, b, sizeof(b))) > 0)
				if (write(pfd[1], b, (size_t)n) != n)
					break;
			_exit(0);
		}
		close(pfd[1]);
		rd = pk_data_reader__fdopen(pfd[0], NULL);
	} else {
		rd = pk_data_reader__open(path, NULL);
	}
	assert_non_null(rd);
	assert_int_equal(pk_data_reader__is_pipe(rd), c->pipe);
	assert_false(pk_data_reader__truncated(rd));
	assert_int_equal(pk_data_reader__nr_attrs(rd), 2);
	const struct pk_data_attr *a0 = pk_data_reader__attr(rd, 0);
	const struct pk_data_attr *a1 = pk_data_reader__attr(rd, 1);
	assert_int_equal(a0->attr.attr.sample_type, ST);
	assert_int_equal(a0->attr.attr.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(a1->attr.attr.config, PERF_COUNT_SW_TASK_CLOCK);
	assert_int_equal(a0->nr_ids, 2);
	assert_int_equal(a0->ids[1], 102);
	assert_int_equal(a1->nr_ids, 1);
	assert_int_equal(a1->ids[0], 201);
	assert_non_null(a0->name);
	assert_string_equal(a0->name, "cpu-clock");
	assert_string_equal(a1->name, "task-clock");
	assert_ptr_equal(pk_data_reader__attr_by_id(rd, 201), a1);
	assert_true(a0->layout_ok);
	/* the leading records the reader consumed: kept for report -D (pipe), none (file) */
	size_t lead_len = 1;
	const uint8_t *lead = pk_data_reader__pipe_lead(rd, &lead_len);
	if (c->pipe) {
		struct perf_event_header lh;
		size_t nattr = 0;
		assert_non_null(lead);
		for (size_t at = 0; at + sizeof(lh) <= lead_len; at += lh.size) {
			memcpy(&lh, lead + at, sizeof(lh));
			assert_true(lh.size >= sizeof(lh) && lh.size <= lead_len - at);
			assert_true(lh.type == PK_RECORD_HEADER_ATTR || lh.type == PK_RECORD_HEADER_FEATURE ||
				    lh.type == PK_RECORD_EVENT_UPDATE ||
				    lh.type == PK_RECORD_HEADER_TRACING_DATA);
			nattr += lh.type == PK_RECORD_HEADER_ATTR;
		}
		assert_int_equal(nattr, 2);
	} else {
		assert_null(lead);
		assert_int_equal(lead_len, 0);
	}

	const struct pk_data_env *env = pk_data_reader__env(rd);
	struct utsname u;
	uname(&u);
	assert_non_null(env->hostname);
	assert_string_equal(env->hostname, u.nodename);
	assert_string_equal(env->osrelease, u.release);
	assert_string_equal(env->arch, u.machine);
	assert_true(env->nr_cpus_online >= 1);
	assert_true(env->nr_cpus_avail >= env->nr_cpus_online);
	assert_int_equal(env->nr_cpus_online, sysconf(_SC_NPROCESSORS_ONLN));
	assert_true(env->total_mem_kb > 1024);
	assert_int_equal(env->nr_cmdline, 6);
	assert_string_equal(env->cmdline[5], "pkdata");
	assert_true(env->cmdline[0][0] == '/');
	assert_true(env->nr_cpu_topo == env->nr_cpus_avail);
	assert_true(env->nr_package_cpus >= 1);
	if (!c->pipe) {
		assert_int_equal(env->first_sample_time, T0);
		assert_int_equal(env->last_sample_time, T0 + 1000 * (NR_SAMPLES - 1));
		uint8_t bid[PK_BUILD_ID_MAX];
		size_t blen = sizeof(bid);
		if (pk_build_id__read("/usr/bin/true", bid, &blen) == 0) {
			assert_int_equal(env->nr_build_ids, 1);
			assert_int_equal(env->build_ids[0].build_id_size, blen);
			assert_memory_equal(env->build_ids[0].build_id, bid, blen);
			assert_string_equal(env->build_ids[0].filename, "/usr/bin/true");
			assert_int_equal(env->build_ids[0].pid, -1);
		}
	}
	if (c->level) {
		assert_int_equal(env->comp_type, 1);
		assert_int_equal(env->comp_level, (uint32_t)c->level);
		assert_true(env->comp_mmap_len >= 32768);
	}

	struct pk_data_event ev;
	size_t i = 0, rounds = 0;
	int ret;
	while ((ret = pk_data_reader__next(rd, &ev)) > 0) {
		if (ev.hdr->type == 68) {
			rounds++;
			continue;
		}
		assert_true(i < r->nr);
		const struct perf_event_header *want =
			(const struct perf_event_header *)(r->buf + r->off[i]);
		assert_int_equal(ev.hdr->size, want->size);
		assert_memory_equal(ev.hdr, want, want->size);
		assert_int_equal(ev.compressed, c->level > 0);
		assert_int_equal(((uintptr_t)ev.hdr) & 7, 0);
		/* attr mapping by IDENTIFIER */
		uint64_t id;
		memcpy(&id, (const uint8_t *)want + (want->type == PERF_RECORD_SAMPLE ? 8 :
						    want->size - 8), 8);
		assert_non_null(ev.attr);
		assert_ptr_equal(ev.attr, id == 201 ? a1 : a0);
		if (want->type == PERF_RECORD_SAMPLE) {
			struct pk_sample s;
			assert_int_equal(pk_sample__decode(&ev.attr->layout, ev.hdr, &s, NULL), 0);
			size_t k = i - 2;
			assert_int_equal(s.ip, 0x401000 + 16 * k);
			assert_int_equal(s.time, T0 + 1000 * k);
			assert_int_equal(s.cpu, k % 2);
			assert_int_equal(s.period, 100000);
		}
		i++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(i, r->nr);
	assert_int_equal(rounds, 2);
	assert_string_equal(a0->name, "cpu-clock");
	uint64_t nrec, nsamp;
	pk_data_reader__stats(rd, &nrec, &nsamp);
	assert_int_equal(nsamp, NR_SAMPLES);
	pk_data_reader__free(rd);
	if (use_fd_pipe) {
		close(pfd[0]);
		waitpid(child, NULL, 0);
	}
}

static void roundtrip(const struct wcfg *c, const char *path)
{
	struct recs *r = malloc(sizeof(*r));
	assert_non_null(r);
	pk_test_quiet_log();
	pk_test_log_clear();
	build_records(r, (uint32_t)getpid());
	write_file(path, r, c);
	check_file(path, r, c, false);
	if (c->pipe)
		check_file(path, r, c, true);
	free(r);
	/* no warnings while writing and reading a good file */
	assert_string_equal(pk_test_log_text(), "");
}

static void test_roundtrip_file(void **state)
{
	(void)state;
	struct wcfg c = { 0 };
	roundtrip(&c, "rt.data");
	c.split = true;
	roundtrip(&c, "rt-split.data");
}

/* The EVENT_UPDATE(NAME) records of a pipe stream (perf script takes names from them):
 * "id:name" of each, in order. */
static void pipe_event_names(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static uint8_t buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	out[0] = 0;
	for (size_t off = 16; off + 8 <= n;) {
		struct perf_event_header h;
		memcpy(&h, buf + off, sizeof(h));
		if (h.size < 8 || off + h.size > n)
			break;
		if (h.type == PK_RECORD_EVENT_UPDATE) {
			uint64_t type, id;
			memcpy(&type, buf + off + 8, 8);
			memcpy(&id, buf + off + 16, 8);
			assert_int_equal(type, 2);
			snprintf(out + strlen(out), len - strlen(out), "%llu:%.*s ",
				 (unsigned long long)id, (int)(h.size - 24),
				 (const char *)buf + off + 24);
		}
		off += h.size;
	}
}

static void test_roundtrip_pipe(void **state)
{
	(void)state;
	struct wcfg c = { .pipe = true, .split = true };
	roundtrip(&c, "rt.pipe");
	char names[256];
	pipe_event_names("rt.pipe", names, sizeof(names));
	assert_string_equal(names, "101:cpu-clock 201:task-clock ");
}

static void test_roundtrip_compressed(void **state)
{
	(void)state;
	struct wcfg c = { .level = 3, .split = true };
	roundtrip(&c, "rt-z.data");
	c.pipe = true;
	roundtrip(&c, "rt-z.pipe");
}

/* ---- interop with the real perf ---- */

static bool have_perf(void)
{
	return system("perf version >/dev/null 2>&1") == 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return strdup("");
	char *buf = malloc(1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* stderr of perf must not carry warnings */
static void assert_clean_stderr(const char *path)
{
	char *e = slurp(path);
	if (e[0]) {
		printf("perf stderr (%s):\n%s\n", path, e);
		fail_msg("perf wrote to stderr");
	}
	free(e);
}

static void interop_check(const char *data, bool pipe)
{
	struct recs *r = malloc(sizeof(*r));
	uint32_t pid = (uint32_t)getpid();
	build_records(r, pid);
	free(r);
	if (pipe)
		assert_int_equal(pk_test_sh("perf script -F pid,tid,time,ip,event --ns -i - < %s "
				    ">script.out 2>script.err", data), 0);
	else
		assert_int_equal(pk_test_sh("perf script -F pid,tid,time,ip,event --ns -i %s "
				    ">script.out 2>script.err", data), 0);
	assert_clean_stderr("script.err");
	FILE *f = fopen("script.out", "r");
	assert_non_null(f);
	char line[512];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned p, t;
		unsigned long long sec, nsec, ip;
		char ev[64];
		if (sscanf(line, " %u/%u %llu.%llu: %63[^:]: %llx", &p, &t, &sec, &nsec, ev, &ip) !=
		    6) {
			printf("unparsed perf script line: %s", line);
			fail();
		}
		assert_int_equal(p, pid);
		assert_int_equal(t, pid);
		assert_int_equal(sec * 1000000000ULL + nsec, T0 + 1000 * (uint64_t)n);
		assert_int_equal(ip, 0x401000 + 16 * (uint64_t)n);
		assert_string_equal(ev, n % 3 == 2 ? "task-clock" : "cpu-clock");
		n++;
	}
	fclose(f);
	assert_int_equal(n, NR_SAMPLES);

	if (pipe)
		assert_int_equal(pk_test_sh("perf report --header-only -i - < %s >hdr.out 2>hdr.err", data),
				 0);
	else
		assert_int_equal(pk_test_sh("perf report --header-only -i %s >hdr.out 2>hdr.err", data), 0);
	assert_clean_stderr("hdr.err");
	char *h = slurp("hdr.out");
	struct utsname u;
	uname(&u);
	char want[512];
	snprintf(want, sizeof(want), "# hostname : %s\n", u.nodename);
	assert_non_null(strstr(h, want));
	snprintf(want, sizeof(want), "# os release : %s\n", u.release);
	assert_non_null(strstr(h, want));
	snprintf(want, sizeof(want), "# arch : %s\n", u.machine);
	assert_non_null(strstr(h, want));
	snprintf(want, sizeof(want), "# nrcpus online : %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	assert_non_null(strstr(h, want));
	assert_non_null(strstr(h, "record -e cpu-clock -- pkdata"));
	assert_non_null(strstr(h, "# event : name = cpu-clock"));
	assert_non_null(strstr(h, "# event : name = task-clock"));
	assert_non_null(strstr(h, "# perf version : perfkit"));
	if (!pipe) {
		assert_non_null(strstr(h, "# time of first sample : 1.000000"));
		assert_non_null(strstr(h, "# cpuid : "));
	}
	free(h);
}

static void test_interop_ours(void **state)
{
	(void)state;
	if (!have_perf())
		PK_SKIP("perf is not installed");
	struct recs *r = malloc(sizeof(*r));
	build_records(r, (uint32_t)getpid());
	struct wcfg c = { .split = true };
	write_file("io.data", r, &c);
	interop_check("io.data", false);
	c.pipe = true;
	write_file("io.pipe", r, &c);
	interop_check("io.pipe", true);
	c.pipe = false;
	c.level = 1;
	write_file("io-z.data", r, &c);
	interop_check("io-z.data", false);
	/* perf must really have decompressed: the header says so */
	assert_int_equal(pk_test_sh("perf report --header-only -i io-z.data | grep -q '# compressed : "
			    "Zstd, level = 1'"), 0);
	c.pipe = true;
	write_file("io-z.pipe", r, &c);
	interop_check("io-z.pipe", true);
	free(r);
}

/* Count samples in a real recording with our reader. */
static uint64_t our_samples(const char *path, bool via_stdin_pipe, bool *compressed_seen)
{
	struct pk_data_reader *rd;
	int fd = -1;
	FILE *p = NULL;
	if (via_stdin_pipe) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "cat %s", path);
		p = popen(cmd, "r");
		assert_non_null(p);
		fd = fileno(p);
		rd = pk_data_reader__fdopen(fd, NULL);
	} else {
		rd = pk_data_reader__open(path, NULL);
	}
	assert_non_null(rd);
	struct pk_data_event ev;
	int ret;
	uint64_t decoded = 0;
	while ((ret = pk_data_reader__next(rd, &ev)) > 0) {
		if (ev.compressed && compressed_seen)
			*compressed_seen = true;
		if (ev.hdr->type == PERF_RECORD_SAMPLE) {
			struct pk_sample s;
			assert_non_null(ev.attr);
			assert_int_equal(pk_sample__decode(&ev.attr->layout, ev.hdr, &s, NULL), 0);
			assert_true(s.callchain.nr > 0);
			decoded++;
		}
	}
	assert_int_equal(ret, 0);
	assert_false(pk_data_reader__truncated(rd));
	const struct pk_data_env *env = pk_data_reader__env(rd);
	assert_non_null(env->hostname);
	assert_true(pk_data_reader__nr_attrs(rd) >= 1);
	assert_non_null(pk_data_reader__attr(rd, 0)->name);
	assert_string_equal(pk_data_reader__attr(rd, 0)->name, "cpu-clock");
	uint64_t n;
	pk_data_reader__stats(rd, NULL, &n);
	assert_int_equal(n, decoded);
	pk_data_reader__free(rd);
	if (p)
		pclose(p);
	return n;
}

static uint64_t perf_samples(const char *path)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "perf report -D -i %s 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE(' > cnt.out", path);
	assert_true(system(cmd) != -1);
	char *s = slurp("cnt.out");
	uint64_t n = strtoull(s, NULL, 10);
	free(s);
	return n;
}

#define WORKLOAD "sh -c 'i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done'"

static void test_interop_real_perf(void **state)
{
	(void)state;
	if (!have_perf())
		PK_SKIP("perf is not installed");
	pk_test_quiet_log();
	if (pk_test_sh("perf record -q -e cpu-clock -c 100000 -g -o real.data -- " WORKLOAD
	       " >/dev/null 2>rec.err") != 0)
		PK_SKIP("perf record failed here (see rec.err)");
	uint64_t want = perf_samples("real.data");
	assert_true(want > 10);
	assert_int_equal(our_samples("real.data", false, NULL), want);

	assert_int_equal(pk_test_sh("perf record -q -e cpu-clock -c 100000 -g -o - -- " WORKLOAD
			    " >real.pipe 2>rec.err"), 0);
	want = perf_samples("real.pipe");
	assert_true(want > 10);
	assert_int_equal(our_samples("real.pipe", false, NULL), want);
	assert_int_equal(our_samples("real.pipe", true, NULL), want);

	assert_int_equal(pk_test_sh("perf record -q -z -e cpu-clock -c 100000 -g -o real-z.data -- "
			    WORKLOAD " >/dev/null 2>rec.err"), 0);
	assert_int_equal(pk_test_sh("perf script -i real-z.data 2>/dev/null | grep -c cpu-clock "
			    ">cnt.out"), 0);
	char *s = slurp("cnt.out");
	want = strtoull(s, NULL, 10);
	free(s);
	assert_true(want > 10);
	bool comp = false;
	assert_int_equal(our_samples("real-z.data", false, &comp), want);
	assert_true(comp);
}

/* ---- hostile input ---- */

static void read_all(const void *buf, size_t len)
{
	struct pk_data_reader *rd = pk_data_reader__open_mem(buf, len, NULL);
	if (!rd)
		return;
	struct pk_data_event ev;
	int ret, guard = 0;
	while ((ret = pk_data_reader__next(rd, &ev)) > 0) {
		assert_true(ev.hdr->size >= 8);
		assert_true(++guard < 1000000);
		if (ev.attr && ev.attr->layout_ok && ev.hdr->type == PERF_RECORD_SAMPLE) {
			struct pk_sample s;
			pk_sample__decode(&ev.attr->layout, ev.hdr, &s, NULL);
		}
	}
	pk_data_reader__free(rd);
}

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*len ? *len : 1);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

/* Every record of rd (NULL: failed to open, errno), then rd freed: the count, whether it
 * was truncated, and the error. */
static uint64_t count_reader(struct pk_data_reader *rd, bool *truncated, int *err)
{
	*err = rd ? 0 : -errno;
	*truncated = false;
	if (!rd)
		return 0;
	struct pk_data_event ev;
	int ret, guard = 0;
	while ((ret = pk_data_reader__next(rd, &ev)) > 0) {
		assert_true(ev.hdr->size >= 8);
		assert_true(++guard < 1000000);
	}
	uint64_t n;
	pk_data_reader__stats(rd, &n, NULL);
	*truncated = pk_data_reader__truncated(rd);
	if (ret < 0)
		*err = ret;
	pk_data_reader__free(rd);
	return n;
}

static uint64_t count_records(const void *buf, size_t len, bool *truncated, int *err)
{
	return count_reader(pk_data_reader__open_mem(buf, len, NULL), truncated, err);
}

static void test_hostile(void **state)
{
	(void)state;
	pk_test_quiet_log();
	struct recs *r = malloc(sizeof(*r));
	build_records(r, 4242);
	const char *files[] = { "h.data", "h.pipe", "hz.data" };
	struct wcfg cfg[] = { { 0 }, { .pipe = true }, { .level = 1 } };
	for (int f = 0; f < 3; f++) {
		write_file(files[f], r, &cfg[f]);
		size_t len;
		uint8_t *b = load(files[f], &len);
		uint8_t *m = malloc(len);
		/* truncation at every 1% and every byte of the first 300 */
		for (size_t cut = 0; cut <= len; cut += (cut < 300 ? 1 : len / 100 + 1)) {
			memcpy(m, b, cut);
			read_all(m, cut);
		}
		/* single corrupted u64 / u16 at many offsets */
		for (size_t off = 0; off + 8 <= len; off += 4) {
			static const uint64_t vals[] = { 0, 1, 4, 7, 0xffff, 4096,
							 0x7fffffffffffffffULL, ~0ULL, 0x10000 };
			for (size_t v = 0; v < ASIZE(vals); v++) {
				memcpy(m, b, len);
				memcpy(m + off, &vals[v], 8);
				read_all(m, len);
				memcpy(m, b, len);
				uint16_t s16 = (uint16_t)vals[v];
				memcpy(m + off, &s16, 2);
				read_all(m, len);
			}
		}
		free(m);
		free(b);
	}
	free(r);
}

/* A pipe that ends inside the payload of an AUXTRACE record whose bytes look like samples:
 * the end is where the payload starts, also when the caller asks again (the ordered queue
 * does whenever records were still queued at the end): nothing of the payload is ever
 * read as records (a second call went on reading them). */
static void test_truncated_payload_stays_ended(void **state)
{
	(void)state;
	pk_test_quiet_log();
	struct recs *r = malloc(sizeof(*r));
	build_records(r, 4242);
	const char *argv[] = { "perfkit", "record" };
	PK_OPTS(pk_data_writer_opts, o, .pipe = true, .argv = argv, .argc = 2);
	struct pk_data_writer *w = pk_data_writer__open("tp.pipe", &o);
	assert_non_null(w);
	struct pk_attr a;
	make_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(pk_data_writer__add_attr(w, &a, "cpu-clock", ids_a, 2), 0);
	/* the COMM, the MMAP2 and 4 samples as records */
	assert_int_equal(pk_data_writer__write(w, r->buf, r->off[6]), 0);
	/* AUXTRACE (48 bytes): a payload of 1 TiB follows, of which the file holds the
	 * bytes of 10 samples */
	uint64_t aux[6] = { 0, (uint64_t)1 << 40, 0, 0, 0, 0 };
	struct perf_event_header ah = { .type = PK_RECORD_AUXTRACE, .size = sizeof(aux) };
	memcpy(aux, &ah, sizeof(ah));
	assert_int_equal(pk_data_writer__write(w, aux, sizeof(aux)), 0);
	assert_int_equal(pk_data_writer__write(w, r->buf + r->off[6], r->off[16] - r->off[6]), 0);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	size_t len;
	uint8_t *b = load("tp.pipe", &len);
	for (int how = 0; how < 2; how++) {
		struct pk_data_reader *rd = how ? pk_data_reader__open("tp.pipe", NULL)
						: pk_data_reader__open_mem(b, len, NULL);
		assert_non_null(rd);
		struct pk_data_event ev;
		int ret, samples = 0;
		while ((ret = pk_data_reader__next(rd, &ev)) > 0)
			samples += ev.hdr->type == PERF_RECORD_SAMPLE;
		assert_int_equal(ret, 0);
		assert_true(pk_data_reader__truncated(rd));
		assert_int_equal(samples, 4);
		for (int again = 0; again < 3; again++)
			assert_int_equal(pk_data_reader__next(rd, &ev), 0);
		pk_data_reader__free(rd);
	}
	free(b);
	free(r);
	unlink("tp.pipe");
}

/* Records, truncation flag and error of a file read through pread (the tool's default). */
static uint64_t count_records_pread(const void *buf, size_t len, bool *truncated, int *err)
{
	FILE *f = fopen("hp.data", "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	PK_OPTS(pk_data_reader_opts, ro, .no_mmap = true);
	return count_reader(pk_data_reader__open("hp.data", &ro), truncated, err);
}

/* Cut and corrupted files read through pread: the records, the truncation flag and
 * whether it failed are those of the same bytes read from memory. */
static void test_hostile_pread(void **state)
{
	(void)state;
	pk_test_quiet_log();
	struct recs *r = malloc(sizeof(*r));
	build_records(r, 4242);
	const char *files[] = { "h.data", "hz.data" };
	struct wcfg cfg[] = { { 0 }, { .level = 1 } };
	for (int f = 0; f < 2; f++) {
		write_file(files[f], r, &cfg[f]);
		size_t len;
		uint8_t *b = load(files[f], &len);
		uint8_t *m = malloc(len);
		size_t tried = 0;
		for (size_t cut = 0; cut <= len; cut += (cut < 200 ? 7 : len / 50 + 1)) {
			memcpy(m, b, cut);
			bool t1, t2;
			int e1, e2;
			uint64_t n1 = count_records(m, cut, &t1, &e1);
			uint64_t n2 = count_records_pread(m, cut, &t2, &e2);
			assert_int_equal(n1, n2);
			assert_int_equal(t1, t2);
			assert_int_equal(e1 < 0, e2 < 0);
			tried++;
		}
		for (size_t off = 0; off + 8 <= len; off += len / 97 + 4) {
			static const uint64_t vals[] = { 0, 7, 0xffff, 0x7fffffffffffffffULL, ~0ULL };
			for (size_t v = 0; v < ASIZE(vals); v++) {
				memcpy(m, b, len);
				memcpy(m + off, &vals[v], 8);
				bool t1, t2;
				int e1, e2;
				uint64_t n1 = count_records(m, len, &t1, &e1);
				uint64_t n2 = count_records_pread(m, len, &t2, &e2);
				assert_int_equal(n1, n2);
				assert_int_equal(e1 < 0, e2 < 0);
				tried++;
			}
		}
		assert_true(tried > 100);
		free(m);
		free(b);
	}
	free(r);
}

static void set64(uint8_t *b, size_t off, uint64_t v) { memcpy(b + off, &v, 8); }
static void set32(uint8_t *b, size_t off, uint32_t v) { memcpy(b + off, &v, 4); }

static void test_errors(void **state)
{
	(void)state;
	pk_test_quiet_log();
	struct recs *r = malloc(sizeof(*r));
	build_records(r, 4242);
	struct wcfg c = { 0 };
	write_file("e.data", r, &c);
	size_t len;
	uint8_t *b = load("e.data", &len);
	uint8_t *m = malloc(len + 64);
	bool tr;
	int err;
	uint64_t full = count_records(b, len, &tr, &err);
	assert_int_equal(err, 0);
	assert_false(tr);
	assert_int_equal(full, r->nr + 2);

	/* byte-swapped magic: rejected with a clear message */
	memcpy(m, b, len);
	set64(m, 0, 0x50455246494c4532ULL);
	struct pk_data_head head = { .len = 99 };
	PK_OPTS(pk_data_reader_opts, ho, .head = &head);
	assert_null(pk_data_reader__open_mem(m, len, &ho));
	assert_int_equal(errno, PK_ERR_BYTE_ORDER);
	assert_int_equal(head.len, 8);
	assert_memory_equal(head.bytes, "2ELIFREP", 8);
	/* not perf.data: the error says so and head holds what the input starts with */
	assert_null(pk_data_reader__open_mem("hello, world", 12, &ho));
	assert_int_equal(errno, PK_ERR_NOT_PERF_DATA);
	assert_int_equal(head.len, 8);
	assert_memory_equal(head.bytes, "hello, w", 8);
	assert_null(pk_data_reader__open_mem("hi\n", 3, &ho));
	assert_int_equal(errno, PK_ERR_NOT_PERF_DATA);
	assert_int_equal(head.len, 3);
	/* empty; a prefix of the magic is a truncated perf.data, not "not perf.data" */
	assert_null(pk_data_reader__open_mem("", 0, &ho));
	assert_int_equal(errno, PK_ERR_EMPTY);
	assert_null(pk_data_reader__open_mem("PERF", 4, &ho));
	assert_int_equal(errno, PK_ERR_FORMAT);
	/* the same through a pipe: empty, and not perf.data */
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	close(pfd[1]);
	assert_null(pk_data_reader__fdopen(pfd[0], &ho));
	assert_int_equal(errno, PK_ERR_EMPTY);
	close(pfd[0]);
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(write(pfd[1], "#!/bin/sh\n", 10), 10);
	close(pfd[1]);
	assert_null(pk_data_reader__fdopen(pfd[0], &ho));
	assert_int_equal(errno, PK_ERR_NOT_PERF_DATA);
	assert_int_equal(head.len, 8);
	assert_memory_equal(head.bytes, "#!/bin/s", 8);
	close(pfd[0]);

	/* attr sizes 0 (read as 64: mismatch with attr_size), 1, 4096 */
	uint64_t attrs_off;
	memcpy(&attrs_off, b + 24, 8);
	uint32_t sizes[] = { 1, 4096, 63 };
	for (size_t i = 0; i < ASIZE(sizes); i++) {
		memcpy(m, b, len);
		set32(m, attrs_off + 4, sizes[i]);
		pk_test_log_clear();
		assert_null(pk_data_reader__open_mem(m, len, NULL));
		assert_non_null(strstr(pk_test_log_text(), "attr.size"));
	}
	/* attr_size that does not match attr.size */
	memcpy(m, b, len);
	uint64_t asz;
	memcpy(&asz, b + 16, 8);
	set64(m, 16, asz + 8);
	assert_null(pk_data_reader__open_mem(m, len, NULL));

	/* sections outside the file / overlapping */
	memcpy(m, b, len);
	set64(m, 24, len + 100);
	assert_null(pk_data_reader__open_mem(m, len, NULL));
	memcpy(m, b, len);
	set64(m, 40, 8); /* data offset inside the header */
	pk_test_log_clear();
	assert_null(pk_data_reader__open_mem(m, len, NULL));
	assert_non_null(strstr(pk_test_log_text(), "offset 0x28"));

	/* record sizes 0, 4, and larger than what remains */
	uint64_t data_off, data_size;
	memcpy(&data_off, b + 40, 8);
	memcpy(&data_size, b + 48, 8);
	uint16_t bad_sizes[] = { 0, 4, 65535 };
	for (size_t i = 0; i < ASIZE(bad_sizes); i++) {
		memcpy(m, b, len);
		/* the third record */
		size_t at = data_off + r->off[2];
		memcpy(m + at + 6, &bad_sizes[i], 2);
		pk_test_log_clear();
		uint64_t n = count_records(m, len, &tr, &err);
		if (bad_sizes[i] == 65535) {
			/* runs past the data section end */
			assert_int_equal(err, -PK_ERR_FORMAT);
		} else {
			assert_int_equal(err, -PK_ERR_FORMAT);
		}
		assert_int_equal(n, 2);
		char want[64];
		snprintf(want, sizeof(want), "offset %#llx", (unsigned long long)at);
		assert_non_null(strstr(pk_test_log_text(), want));
		assert_non_null(strstr(pk_test_log_text(), "2 records read"));
	}

	/* feature section with a lying length: skipped, the rest still parsed */
	uint64_t table = data_off + data_size;
	memcpy(m, b, len);
	set64(m, table + 8, 1ULL << 40); /* first feature (BUILD_ID) claims 1 TiB */
	pk_test_log_clear();
	struct pk_data_reader *rd = pk_data_reader__open_mem(m, len, NULL);
	assert_non_null(rd);
	assert_non_null(pk_data_reader__env(rd)->hostname);
	assert_non_null(strstr(pk_test_log_text(), "beyond the end"));
	pk_data_reader__free(rd);
	/* a hostname whose string length lies */
	memcpy(m, b, len);
	struct { uint64_t off, size; } sec;
	memcpy(&sec, b + table + 16, 16); /* second entry: HOSTNAME */
	set32(m, sec.off, 1000);
	pk_test_log_clear();
	rd = pk_data_reader__open_mem(m, len, NULL);
	assert_non_null(rd);
	assert_null(pk_data_reader__env(rd)->hostname);
	assert_non_null(pk_data_reader__env(rd)->osrelease);
	assert_non_null(strstr(pk_test_log_text(), "HOSTNAME"));
	pk_data_reader__free(rd);

	/* killed recorder: data.size 0 and no features -> read to the last full record */
	memcpy(m, b, len);
	set64(m, 48, 0);
	memset(m + 72, 0, 32);
	size_t cut = data_off + r->off[10] + 5; /* inside record 10 */
	pk_test_log_clear();
	uint64_t n = count_records(m, cut, &tr, &err);
	assert_int_equal(err, 0);
	assert_true(tr);
	/* records 0..9 plus the FINISHED_ROUND written after the first half */
	assert_int_equal(n, r->off[10] <= r->off[r->nr / 2] ? 10 : 11);
	assert_non_null(strstr(pk_test_log_text(), "truncated"));

	/* data section extending past EOF (file cut short) */
	n = count_records(b, data_off + r->off[5] + 3, &tr, &err);
	assert_int_equal(err, 0);
	assert_true(tr);
	assert_int_equal(n, 5);
	free(m);
	free(b);
	free(r);
}

/* A writer whose disk fills up: the error is reported and the file stays readable up to
 * the last complete record. /dev/full gives ENOSPC but cannot be read back, so a small
 * tmpfs-less simulation: write through a pipe-less fd limited with RLIMIT_FSIZE. */
static void test_write_error(void **state)
{
	(void)state;
	pk_test_quiet_log();
	/* /dev/full: every write fails with ENOSPC (it is not a regular file: pipe mode) */
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		PK_SKIP("no /dev/full");
	struct pk_data_writer *w = pk_data_writer__fdopen(fd, NULL);
	assert_non_null(w);
	struct pk_attr a;
	make_attr(&a, 0);
	assert_int_equal(pk_data_writer__add_attr(w, &a, NULL, ids_a, 2), 0);
	struct recs *r = malloc(sizeof(*r));
	build_records(r, 1);
	int ret = 0;
	/* buffered: the error surfaces at the latest on close */
	for (int i = 0; i < 200 && !ret; i++)
		ret = pk_data_writer__write(w, r->buf, r->len);
	int cret = pk_data_writer__finish(w);
	pk_data_writer__free(w);
	assert_true(ret == -ENOSPC || cret == -ENOSPC);
	close(fd);

	/* file mode with RLIMIT_FSIZE in a child: EFBIG mid-way, file still readable */
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = { 300000, 300000 };
		setrlimit(RLIMIT_FSIZE, &rl);
		struct pk_data_writer *cw = pk_data_writer__open("full.data", NULL);
		if (!cw)
			_exit(2);
		pk_data_writer__add_attr(cw, &a, NULL, ids_a, 2);
		int e = 0;
		for (int i = 0; i < 1000 && !e; i++)
			e = pk_data_writer__write(cw, r->buf, r->len);
		int c = pk_data_writer__finish(cw);
		pk_data_writer__free(cw);
		_exit((e == -EFBIG || c == -EFBIG) ? 0 : 1);
	}
	int st;
	waitpid(child, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	size_t len;
	uint8_t *b = load("full.data", &len);
	assert_true(len <= 300000);
	bool tr;
	int err;
	uint64_t n = count_records(b, len, &tr, &err);
	assert_int_equal(err, 0);
	assert_true(n > 100);
	assert_int_equal(n % r->nr, n % r->nr); /* any whole-record count */
	if (have_perf()) {
		assert_int_equal(pk_test_sh("perf script -i full.data >/dev/null 2>full.err"), 0);
	}
	free(b);
	free(r);
}

static void test_clockid(void **state)
{
	(void)state;
	pk_test_quiet_log();
	struct pk_data_writer *w = pk_data_writer__open("clk.data", NULL);
	assert_non_null(w);
	struct pk_attr a;
	make_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	a.attr.use_clockid = 1;
	a.attr.clockid = CLOCK_MONOTONIC;
	assert_int_equal(pk_data_writer__add_attr(w, &a, NULL, ids_a, 2), 0);
	struct recs *r = malloc(sizeof(*r));
	build_records(r, (uint32_t)getpid());
	assert_int_equal(pk_data_writer__write(w, r->buf, r->len), 0);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	struct timespec ts;
	clock_getres(CLOCK_MONOTONIC, &ts);
	struct pk_data_reader *rd = pk_data_reader__open("clk.data", NULL);
	assert_non_null(rd);
	const struct pk_data_env *env = pk_data_reader__env(rd);
	assert_int_equal(env->clockid_res_ns, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
	assert_true(env->features[0] & (1ULL << PK_FEAT_CLOCKID));
	/* default name derived from the attr */
	assert_string_equal(pk_data_reader__attr(rd, 0)->name, "cpu-clock");
	pk_data_reader__free(rd);
	/* attr.size 0 is read as 64 (perf does the same) */
	struct wcfg c = { 0 };
	write_file("sz0.data", r, &c);
	size_t len;
	uint8_t *b = load("sz0.data", &len);
	uint64_t attrs_off;
	memcpy(&attrs_off, b + 24, 8);
	set32(b, attrs_off + 4, 0);
	rd = pk_data_reader__open_mem(b, len, NULL);
	assert_non_null(rd);
	assert_int_equal(pk_data_reader__attr(rd, 0)->attr.attr.size, 64);
	pk_data_reader__free(rd);
	free(b);
	free(r);
	if (have_perf()) {
		assert_int_equal(pk_test_sh("perf report --header-only -i clk.data 2>clk.err | "
				    "grep -q 'clockid frequency: '"), 0);
		assert_clean_stderr("clk.err");
	}
}

/* GROUP_DESC: written as declared, read back by attr index; a hostile section (nr_groups,
 * a string length or a member range beyond the attrs) is dropped, never trusted. */
static const struct pk_data_group *groups_of(const uint8_t *b, size_t len, uint32_t *nr)
{
	struct pk_data_reader *rd = pk_data_reader__open_mem(b, len, NULL);
	assert_non_null(rd);
	const struct pk_data_env *env = pk_data_reader__env(rd);
	static struct pk_data_group copy[4];
	*nr = env->nr_groups;
	assert_true(*nr <= 4);
	for (uint32_t i = 0; i < *nr; i++) {
		copy[i] = env->groups[i];
		copy[i].name = copy[i].name ? "named" : NULL;
	}
	pk_data_reader__free(rd);
	return copy;
}

static void test_group_desc(void **state)
{
	(void)state;
	pk_test_quiet_log();
	struct pk_data_writer *w = pk_data_writer__open("grp.data", NULL);
	assert_non_null(w);
	struct pk_attr a;
	static const uint64_t ids_c[] = { 301 }, ids_d[] = { 401 };
	make_attr(&a, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(pk_data_writer__add_attr(w, &a, NULL, ids_a, 2), 0);
	make_attr(&a, PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(pk_data_writer__add_attr(w, &a, NULL, ids_b, 1), 1);
	make_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	assert_int_equal(pk_data_writer__add_attr(w, &a, NULL, ids_c, 1), 2);
	make_attr(&a, PERF_COUNT_SW_CONTEXT_SWITCHES);
	assert_int_equal(pk_data_writer__add_attr(w, &a, NULL, ids_d, 1), 3);
	/* refused: a single member, a range past the attrs, an overlap */
	assert_int_equal(pk_data_writer__add_group(w, NULL, 0, 1), -EINVAL);
	assert_int_equal(pk_data_writer__add_group(w, NULL, 3, 2), -EINVAL);
	assert_int_equal(pk_data_writer__add_group(w, NULL, 4, 2), -EINVAL);
	assert_int_equal(pk_data_writer__add_group(w, NULL, 0, 2), 0);
	assert_int_equal(pk_data_writer__add_group(w, NULL, 1, 2), -EINVAL);
	assert_int_equal(pk_data_writer__add_group(w, "g2", 2, 2), 0);
	struct recs *r = malloc(sizeof(*r));
	build_records(r, (uint32_t)getpid());
	assert_int_equal(pk_data_writer__write(w, r->buf, r->len), 0);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);
	free(r);

	size_t len;
	uint8_t *b = load("grp.data", &len);
	uint32_t nr;
	const struct pk_data_group *g = groups_of(b, len, &nr);
	assert_int_equal(nr, 2);
	assert_null(g[0].name); /* "{anon_group}" */
	assert_int_equal(g[0].leader_idx, 0);
	assert_int_equal(g[0].nr_members, 2);
	assert_non_null(g[1].name);
	assert_int_equal(g[1].leader_idx, 2);
	assert_int_equal(g[1].nr_members, 2);

	/* find the section: the feature table follows the data, one {offset, size} per bit */
	uint64_t doff, dsize, feats;
	memcpy(&doff, b + 40, 8);
	memcpy(&dsize, b + 48, 8);
	memcpy(&feats, b + 72, 8);
	assert_true(feats & (1ULL << PK_FEAT_GROUP_DESC));
	size_t slot = (size_t)__builtin_popcountll(feats & ((1ULL << PK_FEAT_GROUP_DESC) - 1));
	uint64_t goff;
	memcpy(&goff, b + doff + dsize + slot * 16, 8);
	uint32_t v;
	memcpy(&v, b + goff, 4);
	assert_int_equal(v, 2);
	memcpy(&v, b + goff + 4, 4); /* first name's length */
	uint64_t lead0 = goff + 8 + v, nr0 = lead0 + 4;
	static const struct { uint64_t off; uint32_t val; } bad[] = {
		{ 0, 0xffffffffu }, { 0, 5 }, { 4, 0x7fffffffu }, { 0, 0 }, { 0, 0 }, { 0, 0 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t *m = malloc(len);
		memcpy(m, b, len);
		uint64_t off = i == 3 ? lead0 : i == 4 ? nr0 : i == 5 ? nr0 : goff + bad[i].off;
		uint32_t val = i == 3 ? 4 : i == 4 ? 0 : i == 5 ? 0xfffffffeu : bad[i].val;
		memcpy(m + off, &val, 4);
		g = groups_of(m, len, &nr);
		assert_int_equal(nr, 0);
		free(m);
	}
	free(b);
	if (have_perf()) {
		assert_int_equal(pk_test_sh("perf report --header-only -i grp.data 2>grp.err | "
				    "grep -q '^# group: {cpu-clock,page-faults}'"), 0);
		assert_clean_stderr("grp.err");
	}
}

/* The section {offset, size} of feature bit `feat` in a file image, or 0. */
static uint64_t feat_section(const uint8_t *b, int feat, uint64_t *size)
{
	uint64_t doff, dsize, feats[4];
	memcpy(&doff, b + 40, 8);
	memcpy(&dsize, b + 48, 8);
	memcpy(feats, b + 72, sizeof(feats));
	if (feat >= 64 || !(feats[0] & (1ULL << feat)))
		return 0;
	size_t slot = (size_t)__builtin_popcountll(feats[0] & ((1ULL << feat) - 1));
	uint64_t off;
	memcpy(&off, b + doff + dsize + slot * 16, 8);
	memcpy(size, b + doff + dsize + slot * 16 + 8, 8);
	return off;
}

/* NUMA_TOPOLOGY, PMU_MAPPINGS, CACHE and MEM_TOPOLOGY of a file perf recorded here: parsed
 * (the values of this machine's sysfs), and dropped whole when a count claims more than
 * the section holds or the section is cut short. */
static void test_topology_features(void **state)
{
	(void)state;
	if (!have_perf())
		PK_SKIP("perf is not installed");
	if (pk_test_sh("perf record -q -e cpu-clock -o topo.data true >/dev/null 2>&1"))
		PK_SKIP("perf record failed");
	pk_test_quiet_log();
	size_t len;
	uint8_t *b = load("topo.data", &len);
	struct pk_data_reader *rd = pk_data_reader__open_mem(b, len, NULL);
	assert_non_null(rd);
	const struct pk_data_env *e = pk_data_reader__env(rd);
	assert_int_equal(e->header_version, 1);
	uint64_t doff;
	memcpy(&doff, b + 40, 8);
	assert_int_equal(e->data_offset, doff);
	assert_int_equal(e->feat_offset, e->data_offset + e->data_size);
	bool sw = false;
	for (uint32_t i = 0; i < e->nr_pmu_mappings; i++)
		sw |= !strcmp(e->pmu_mappings[i].name, "software") && e->pmu_mappings[i].type == 1;
	assert_true(sw);
	if (e->nr_numa_nodes)
		assert_non_null(e->numa_nodes[0].cpus);
	for (uint32_t i = 0; i < e->nr_caches; i++)
		assert_true(e->caches[i].level >= 1 && e->caches[i].map && e->caches[i].size);
	for (uint32_t i = 0; i < e->nr_mem_nodes; i++)
		assert_true(!e->mem_nodes[i].nr_blocks || e->mem_nodes[i].blocks);
	pk_data_reader__free(rd);

	/* hostile: a count past the section (at the count's offset), a bitmap longer than
	 * the section (MEM_TOPOLOGY's first node), a section cut to a few bytes */
	static const struct { int feat; uint64_t at; } cnt[] = {
		{ PK_FEAT_NUMA_TOPOLOGY, 0 }, { PK_FEAT_PMU_MAPPINGS, 0 }, { PK_FEAT_CACHE, 4 },
		{ PK_FEAT_MEM_TOPOLOGY, 16 }, { PK_FEAT_MEM_TOPOLOGY, 40 },
	};
	for (size_t i = 0; i < sizeof(cnt) / sizeof(cnt[0]) * 2; i++) {
		int feat = cnt[i % 5].feat;
		uint64_t size, off = feat_section(b, feat, &size);
		if (!off || size < cnt[i % 5].at + 8)
			continue;
		uint8_t *m = malloc(len);
		memcpy(m, b, len);
		if (i < 5) {
			uint32_t big = 0x7ffffff0u;
			memcpy(m + off + cnt[i].at, &big, 4);
		} else {
			/* the table entry's size: 6 bytes */
			uint64_t six = 6, dsize, feats;
			memcpy(&dsize, m + 48, 8);
			memcpy(&feats, m + 72, 8);
			size_t slot = (size_t)__builtin_popcountll(feats & ((1ULL << feat) - 1));
			memcpy(m + doff + dsize + slot * 16 + 8, &six, 8);
		}
		rd = pk_data_reader__open_mem(m, len, NULL);
		assert_non_null(rd);
		e = pk_data_reader__env(rd);
		uint32_t n = feat == PK_FEAT_NUMA_TOPOLOGY ? e->nr_numa_nodes :
			     feat == PK_FEAT_PMU_MAPPINGS ? e->nr_pmu_mappings :
			     feat == PK_FEAT_CACHE ? e->nr_caches : e->nr_mem_nodes;
		assert_int_equal(n, 0);
		assert_false(e->features[0] & (1ULL << feat));
		pk_data_reader__free(rd);
		free(m);
	}
	free(b);
}

/* Pipe mode: HEADER_ATTR carries a 128-byte attr whatever the attr's own minimal size,
 * because perf 6.1 (and up to 6.5) reads the ids at 8 + sizeof(its attr) = 136. With ids
 * whose bit 11 is set, a short attr made perf read an id as branch_sample_type with
 * PERF_SAMPLE_BRANCH_CALL_STACK and crash on the first call chain. */
static void test_pipe_attr_layout(void **state)
{
	(void)state;
	const uint64_t ids[] = { 0x800, 0x801 };
	struct pk_attr a;
	pk_test_cpu_clock_attr(&a, 100000, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					   PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN);
	a.attr.exclude_kernel = 1;
	PK_OPTS(pk_data_writer_opts, o, .pipe = true);
	struct pk_data_writer *w = pk_data_writer__open("cc.pipe", &o);
	assert_non_null(w);
	assert_int_equal(pk_data_writer__add_attr(w, &a, "cpu-clock", ids, 2), 0);
	uint32_t pid = (uint32_t)getpid();
	for (int i = 0; i < 4; i++) {
		uint64_t rec[12];
		struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
					       .misc = PERF_RECORD_MISC_USER,
					       .size = sizeof(rec) };
		memcpy(&rec[0], &h, 8);
		rec[1] = 0x401000 + 16 * (uint64_t)i;           /* ip */
		rec[2] = (uint64_t)pid << 32 | pid;             /* pid, tid */
		rec[3] = T0 + 1000 * (uint64_t)i;               /* time */
		rec[4] = 100000;                                /* period */
		rec[5] = 6;                                     /* callchain nr */
		rec[6] = (uint64_t)PERF_CONTEXT_USER;
		rec[7] = rec[1];
		rec[8] = 0x402000;
		rec[9] = 0x403000;
		rec[10] = 0x404000;
		rec[11] = 0x405000;
		assert_int_equal(pk_data_writer__write_record(w, (void *)rec), 0);
	}
	assert_int_equal(pk_data_writer__finish_round(w), 0);
	assert_int_equal(pk_data_writer__finish(w), 0);
	pk_data_writer__free(w);

	size_t len;
	uint8_t *b = load("cc.pipe", &len);
	struct perf_event_header h;
	uint32_t asz;
	uint64_t id0;
	memcpy(&h, b + 16, 8);
	assert_int_equal(h.type, PK_RECORD_HEADER_ATTR);
	assert_int_equal(h.size, 8 + 128 + 16);
	memcpy(&asz, b + 16 + 8 + 4, 4);
	assert_int_equal(asz, 128);
	memcpy(&id0, b + 16 + 8 + 128, 8);
	assert_int_equal(id0, 0x800);
	for (size_t i = 64; i < 128; i++) /* zero beyond the fields we set */
		assert_int_equal(b[16 + 8 + i], 0);
	free(b);
	struct pk_data_reader *r = pk_data_reader__open("cc.pipe", NULL);
	assert_non_null(r);
	const struct pk_data_attr *ra = pk_data_reader__attr(r, 0);
	assert_non_null(ra);
	assert_int_equal(ra->file_attr_size, 128);
	assert_int_equal(ra->nr_ids, 2);
	assert_int_equal(ra->ids[1], 0x801);
	assert_ptr_equal(pk_data_reader__attr_by_id(r, 0x801), ra);
	pk_data_reader__free(r);

	if (!have_perf())
		return;
	assert_int_equal(pk_test_sh("cat cc.pipe | perf script -i - >cc.out 2>cc.err"), 0);
	assert_clean_stderr("cc.err");
	assert_int_equal(pk_test_sh("grep -c 405000 cc.out | grep -qx 4"), 0);
	assert_int_equal(pk_test_sh("cat cc.pipe | perf evlist -v -i - >ev.out 2>&1"), 0);
	char *ev = slurp("ev.out");
	assert_null(strstr(ev, "branch_sample_type"));
	assert_null(strstr(ev, "config2"));
	assert_non_null(strstr(ev, "size: 128"));
	free(ev);
}

static void test_build_id(void **state)
{
	(void)state;
	uint8_t bid[PK_BUILD_ID_MAX];
	size_t len = sizeof(bid);
	/* our own test binary: linked with a build-id by default on Debian */
	int ret = pk_build_id__read("/proc/self/exe", bid, &len);
	if (ret == -ENOENT)
		PK_SKIP("test binary has no build-id note");
	assert_int_equal(ret, 0);
	assert_int_equal(len, 20);
	/* compare with readelf's view of the same file */
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	char hex[64] = "";
	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", bid[i]);
	if (system("command -v readelf >/dev/null 2>&1") == 0)
		assert_int_equal(pk_test_sh("readelf -n '%s' | grep -q 'Build ID: %s'", exe, hex), 0);
	/* not regular files / not ELF */
	len = sizeof(bid);
	assert_int_equal(pk_build_id__read("/dev/null", bid, &len), -EINVAL);
	assert_int_equal(pk_build_id__read("/", bid, &len), -EINVAL);
	pk_test_write_file(".", "notelf.bin", "this is not an ELF file, just some text........"
			   "......................................");
	assert_int_equal(pk_build_id__read("notelf.bin", bid, &len), -EINVAL);
	assert_int_equal(pk_build_id__read("/nonexistent/x", bid, &len), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_file),
		cmocka_unit_test(test_roundtrip_pipe),
		cmocka_unit_test(test_pipe_attr_layout),
		cmocka_unit_test(test_roundtrip_compressed),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_clockid),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_group_desc),
		cmocka_unit_test(test_topology_features),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_truncated_payload_stays_ended),
		cmocka_unit_test(test_hostile_pread),
		cmocka_unit_test(test_interop_ours),
		cmocka_unit_test(test_interop_real_perf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
