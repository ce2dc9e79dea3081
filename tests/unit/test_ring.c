/* SPDX-License-Identifier: MIT */
/* lib/sample/ring.c: the ring reader on simulated buffers, and live on a cpu-clock event. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "testutil.h"

#define PAGE 4096
#define PK_ARRAY_LEN_T(a) (sizeof(a) / sizeof((a)[0]))
#define TEST_TYPE 0x4242 /* a record type the kernel never writes */

/* ---------------------------------------------------------------------------------- */
/* A simulated kernel side.                                                            */

struct sim {
	uint8_t *mem;
	struct perf_event_mmap_page *pc;
	uint8_t *data;
	uint64_t size;
	uint64_t head;     /* private head; published by sim_publish */
	uint64_t seq;      /* next sequence number written */
	uint64_t dropped;  /* records that did not fit (forward mode respects data_tail) */
};

static void sim_init(struct sim *s, uint64_t data_size)
{
	memset(s, 0, sizeof(*s));
	s->mem = aligned_alloc(64, PAGE + data_size); /* size must be a multiple */
	assert_non_null(s->mem);
	memset(s->mem, 0, PAGE + data_size);
	s->pc = (struct perf_event_mmap_page *)(void *)s->mem;
	s->pc->data_offset = PAGE;
	s->pc->data_size = data_size;
	s->data = s->mem + PAGE;
	s->size = data_size;
}

static void sim_free(struct sim *s)
{
	free(s->mem);
}

/* record `seq`: header + seq + filler words derived from seq; 16..64 bytes */
static size_t make_rec(uint64_t seq, uint64_t *buf)
{
	size_t words = 2 + seq % 7;
	struct perf_event_header h = { .type = TEST_TYPE, .misc = 0, .size = (uint16_t)(words * 8) };
	memcpy(&buf[0], &h, 8);
	buf[1] = seq;
	for (size_t i = 2; i < words; i++)
		buf[i] = seq * 1000 + i;
	return words * 8;
}

static void check_rec(const struct perf_event_header *h, uint64_t seq)
{
	const uint64_t *w = (const uint64_t *)(const void *)h;
	assert_int_equal(((uintptr_t)h) & 7, 0);
	assert_int_equal(h->type, TEST_TYPE);
	assert_int_equal(h->size, (2 + seq % 7) * 8);
	assert_int_equal(w[1], seq);
	for (size_t i = 2; i < h->size / 8; i++)
		assert_int_equal(w[i], seq * 1000 + i);
}

static void copy_in(struct sim *s, uint64_t pos, const void *src, size_t n)
{
	const uint8_t *p = src;
	for (size_t i = 0; i < n; i++)
		s->data[(pos + i) & (s->size - 1)] = p[i];
}

/* Forward write like the kernel: only if it fits before data_tail. */
static bool sim_write(struct sim *s)
{
	uint64_t buf[8];
	size_t n = make_rec(s->seq, buf);
	uint64_t tail = __atomic_load_n(&s->pc->data_tail, __ATOMIC_ACQUIRE);
	if (s->head + n - tail > s->size) {
		s->dropped++;
		return false;
	}
	copy_in(s, s->head, buf, n);
	s->head += n;
	s->seq++;
	return true;
}

static void sim_publish(struct sim *s)
{
	__atomic_store_n(&s->pc->data_head, s->head, __ATOMIC_RELEASE);
}

/* Backward write (write_backward): head moves down, the record is written at the new head. */
static void sim_write_back(struct sim *s)
{
	uint64_t buf[8];
	size_t n = make_rec(s->seq, buf);
	s->head -= n;
	copy_in(s, s->head, buf, n);
	s->seq++;
	sim_publish(s);
}

/* ---------------------------------------------------------------------------------- */

static void test_ring_invalid(void **state)
{
	struct sim s;
	sim_init(&s, 256);
	struct pk_ring *r;
	/* forward overwrite is refused; unknown flags too */
	assert_null(pk_ring__from_memory(s.mem, PAGE + 256, PK_RING_OVERWRITE));
	assert_int_equal(errno, EINVAL);
	assert_null(pk_ring__from_memory(s.mem, PAGE + 256, 0x100));
	/* data area beyond the buffer, size not a power of two, too small */
	assert_null(pk_ring__from_memory(s.mem, PAGE + 128, 0));
	s.pc->data_size = 96;
	assert_null(pk_ring__from_memory(s.mem, PAGE + 256, 0));
	s.pc->data_size = 4;
	assert_null(pk_ring__from_memory(s.mem, PAGE + 256, 0));
	s.pc->data_size = 256;
	s.pc->data_offset = 8; /* inside the control page */
	assert_null(pk_ring__from_memory(s.mem, PAGE + 256, 0));
	s.pc->data_offset = PAGE;
	assert_null(pk_ring__from_memory(s.mem + 4, PAGE + 252, 0));
	assert_null(pk_ring__from_memory(NULL, PAGE + 256, 0));
	assert_null(pk_ring__from_memory(s.mem, 100, 0));
	r = pk_ring__from_memory(s.mem, PAGE + 256, 0);
	assert_non_null(r);
	assert_int_equal(pk_ring__data_size(r), 256);
	assert_ptr_equal(pk_ring__data(r), s.data);
	assert_ptr_equal(pk_ring__control(r), s.pc);
	assert_int_equal(pk_ring__fd(r), -1);
	pk_ring__munmap(r);
	pk_ring__munmap(NULL);

	/* mmap: pages must be a power of two, fd valid */
	assert_null(pk_ring__mmap(-1, 1, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(pk_ring__mmap(0, 3, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(pk_ring__mmap(0, 0, 0));
	assert_int_equal(errno, EINVAL);
	sim_free(&s);
}

/* Many rounds of write/read with records straddling the end; consume at random points. */
static void test_ring_wrap(void **state)
{
	struct sim s;
	sim_init(&s, 256);
	struct pk_ring *r = pk_ring__from_memory(s.mem, PAGE + 256, 0);
	assert_non_null(r);
	uint64_t expect = 0, rnd = 12345;
	for (int round = 0; round < 2000; round++) {
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		int n = 1 + (int)((rnd >> 33) % 8);
		for (int i = 0; i < n; i++)
			sim_write(&s);
		sim_publish(&s);
		assert_int_equal(pk_ring__read_init(r), 0);
		assert_int_equal(pk_ring__pending(r), s.head - s.pc->data_tail);
		const struct perf_event_header *h;
		int got;
		while ((got = pk_ring__next(r, &h)) == 1) {
			check_rec(h, expect++);
			if ((rnd >> 40) & 1)
				pk_ring__consume(r);
		}
		assert_int_equal(got, 0);
		pk_ring__read_done(r);
		assert_int_equal(s.pc->data_tail, s.head);
		assert_int_equal(expect, s.seq);
	}
	struct pk_ring_stats st;
	pk_ring__stats(r, &st);
	assert_int_equal(st.records, s.seq);
	assert_true(st.wrapped > 100);
	assert_int_equal(st.keepup_failures, 0);
	assert_true(s.dropped > 0); /* the simulated kernel did hit a full buffer */
	pk_ring__munmap(r);
	sim_free(&s);
}

/* The kernel's view: space is given back only by consume/read_done. */
static void test_ring_tail(void **state)
{
	struct sim s;
	sim_init(&s, 256);
	struct pk_ring *r = pk_ring__from_memory(s.mem, PAGE + 256, 0);
	while (sim_write(&s))
		;
	sim_publish(&s);
	uint64_t full_seq = s.seq;
	assert_int_equal(pk_ring__read_init(r), 0);
	const struct perf_event_header *h;
	assert_int_equal(pk_ring__next(r, &h), 1);
	check_rec(h, 0);
	/* not consumed yet: the kernel still sees a full buffer */
	assert_int_equal(s.pc->data_tail, 0);
	assert_false(sim_write(&s));
	pk_ring__consume(r);
	assert_int_equal(s.pc->data_tail, h->size);
	assert_int_equal(pk_ring__next(r, &h), 1);
	check_rec(h, 1);
	pk_ring__read_done(r);
	assert_int_equal(s.pc->data_tail, 16 + 24);
	/* more records after the consumed ones, read in the next pass */
	assert_true(sim_write(&s));
	sim_publish(&s);
	assert_int_equal(pk_ring__read_init(r), 0);
	uint64_t seq = 2;
	while (pk_ring__next(r, &h) == 1)
		check_rec(h, seq++);
	assert_int_equal(seq, full_seq + 1);
	pk_ring__read_done(r);
	assert_int_equal(s.pc->data_tail, s.head);
	pk_ring__munmap(r);
	sim_free(&s);
}

/* data_head in the middle of a record (or of its header): the record stays unread. */
static void test_ring_partial(void **state)
{
	struct sim s;
	sim_init(&s, 256);
	struct pk_ring *r = pk_ring__from_memory(s.mem, PAGE + 256, 0);
	sim_write(&s); /* seq 0: 16 bytes */
	sim_write(&s); /* seq 1: 24 bytes */
	const struct perf_event_header *h;
	uint64_t cuts[] = { 16 + 4, 16 + 8, 16 + 16 };
	for (size_t i = 0; i < 3; i++) {
		__atomic_store_n(&s.pc->data_head, cuts[i], __ATOMIC_RELEASE);
		assert_int_equal(pk_ring__read_init(r), 0);
		if (i == 0) {
			assert_int_equal(pk_ring__next(r, &h), 1);
			check_rec(h, 0);
		}
		assert_int_equal(pk_ring__next(r, &h), 0);
		assert_int_equal(pk_ring__next(r, &h), 0);
		assert_int_equal(pk_ring__pending(r), cuts[i] - 16);
		pk_ring__read_done(r);
		assert_int_equal(s.pc->data_tail, 16);
	}
	sim_publish(&s);
	assert_int_equal(pk_ring__read_init(r), 0);
	assert_int_equal(pk_ring__next(r, &h), 1);
	check_rec(h, 1);
	assert_int_equal(pk_ring__next(r, &h), 0);
	pk_ring__read_done(r);
	assert_int_equal(s.pc->data_tail, 40);
	pk_ring__munmap(r);
	sim_free(&s);
}

/* Corrupt sizes fail every time (no endless loop, no progress) until discard. */
static void test_ring_bad_sizes(void **state)
{
	static const uint16_t bad[] = { 0, 4, 12, 260, 512, 65528 };
	for (size_t i = 0; i < PK_ARRAY_LEN_T(bad); i++) {
		struct sim s;
		sim_init(&s, 256);
		struct pk_ring *r = pk_ring__from_memory(s.mem, PAGE + 256, 0);
		sim_write(&s);
		struct perf_event_header h = { .type = TEST_TYPE, .size = bad[i] };
		copy_in(&s, s.head, &h, 8);
		s.head += bad[i] >= 8 && bad[i] <= 256 ? bad[i] : 64;
		sim_publish(&s);
		assert_int_equal(pk_ring__read_init(r), 0);
		const struct perf_event_header *rec;
		assert_int_equal(pk_ring__next(r, &rec), 1);
		for (int k = 0; k < 3; k++)
			assert_int_equal(pk_ring__next(r, &rec), -PK_ERR_FORMAT);
		pk_ring__read_done(r);
		assert_int_equal(s.pc->data_tail, 16);
		pk_ring__discard(r);
		assert_int_equal(s.pc->data_tail, s.head);
		assert_int_equal(pk_ring__next(r, &rec), 0);
		pk_ring__munmap(r);
		sim_free(&s);
	}
}

static void test_ring_keepup(void **state)
{
	struct sim s;
	sim_init(&s, 256);
	struct pk_ring *r = pk_ring__from_memory(s.mem, PAGE + 256, 0);
	/* a kernel that did not honour data_tail (or a reader that fell behind) */
	for (int i = 0; i < 40; i++) {
		uint64_t buf[8];
		size_t n = make_rec(s.seq++, buf);
		copy_in(&s, s.head, buf, n);
		s.head += n;
	}
	sim_publish(&s);
	assert_int_equal(pk_ring__read_init(r), -EOVERFLOW);
	const struct perf_event_header *h;
	assert_int_equal(pk_ring__next(r, &h), 0);
	assert_int_equal(s.pc->data_tail, s.head);
	struct pk_ring_stats st;
	pk_ring__stats(r, &st);
	assert_int_equal(st.keepup_failures, 1);
	assert_int_equal(st.overrun_bytes, s.head);
	/* afterwards normal reading resumes */
	sim_write(&s);
	sim_publish(&s);
	assert_int_equal(pk_ring__read_init(r), 0);
	assert_int_equal(pk_ring__next(r, &h), 1);
	check_rec(h, 40);
	pk_ring__read_done(r);
	pk_ring__munmap(r);
	sim_free(&s);
}

static void test_ring_chunks(void **state)
{
	struct sim s;
	sim_init(&s, 256);
	struct pk_ring *r = pk_ring__from_memory(s.mem, PAGE + 256, 0);
	struct pk_ring_chunk c[2];
	assert_int_equal(pk_ring__read_init(r), 0);
	assert_int_equal(pk_ring__chunks(r, c), 0);
	pk_ring__read_done(r);
	uint8_t expect[512];
	uint64_t seq = 0;
	int two = 0;
	for (int round = 0; round < 200; round++) {
		size_t n = 0;
		for (int i = 0; i < 1 + round % 6; i++) {
			uint64_t buf[8];
			size_t len = make_rec(s.seq, buf);
			if (!sim_write(&s))
				break;
			memcpy(expect + n, buf, len);
			n += len;
		}
		sim_publish(&s);
		assert_int_equal(pk_ring__read_init(r), 0);
		int k = pk_ring__chunks(r, c);
		assert_true(k >= 1 && k <= 2);
		two += k == 2;
		assert_int_equal(c[0].len + (k == 2 ? c[1].len : 0), n);
		assert_memory_equal(c[0].ptr, expect, c[0].len);
		if (k == 2) {
			assert_ptr_equal(c[1].ptr, s.data);
			assert_memory_equal(c[1].ptr, expect + c[0].len, c[1].len);
		}
		/* the bytes, copied linearly, parse as whole records */
		for (size_t off = 0; off < n;) {
			const struct perf_event_header *h = (const void *)(expect + off);
			check_rec(h, seq++);
			off += h->size;
		}
		pk_ring__advance(r, n + 1000); /* clamped */
		assert_int_equal(pk_ring__pending(r), 0);
		pk_ring__read_done(r);
		assert_int_equal(s.pc->data_tail, s.head);
	}
	assert_true(two > 10);
	pk_ring__munmap(r);
	sim_free(&s);
}

/* Overwrite/backward mode: newest first, bounded by the data size, stop at zero memory. */
static void test_ring_backward(void **state)
{
	struct sim s;
	sim_init(&s, 256);
	struct pk_ring *r = pk_ring__from_memory(s.mem, PAGE + 256, PK_RING_BACKWARD);
	assert_non_null(r);
	const struct perf_event_header *h;

	/* nothing written */
	assert_int_equal(pk_ring__read_init(r), 0);
	assert_int_equal(pk_ring__next(r, &h), 0);
	pk_ring__read_done(r);

	for (int i = 0; i < 3; i++)
		sim_write_back(&s);
	assert_int_equal(pk_ring__read_init(r), 0);
	for (int want = 2; want >= 0; want--) {
		assert_int_equal(pk_ring__next(r, &h), 1);
		check_rec(h, (uint64_t)want);
	}
	assert_int_equal(pk_ring__next(r, &h), 0);
	pk_ring__read_done(r);
	assert_int_equal(s.pc->data_tail, 0); /* never written in overwrite mode */

	/* only the records since the previous pass */
	sim_write_back(&s);
	sim_write_back(&s);
	assert_int_equal(pk_ring__read_init(r), 0);
	assert_int_equal(pk_ring__next(r, &h), 1);
	check_rec(h, 4);
	assert_int_equal(pk_ring__next(r, &h), 1);
	check_rec(h, 3);
	assert_int_equal(pk_ring__next(r, &h), 0);
	pk_ring__read_done(r);

	/* far more than the buffer holds: the newest ones that fit completely */
	for (int i = 0; i < 100; i++)
		sim_write_back(&s);
	assert_int_equal(pk_ring__read_init(r), 0);
	uint64_t want = s.seq - 1, total = 0;
	int n = 0;
	while (pk_ring__next(r, &h) == 1) {
		check_rec(h, want--);
		total += h->size;
		n++;
	}
	assert_true(n >= 4);
	assert_true(total <= 256);
	/* maximal: the next older record would not have fitted */
	assert_true(total + (2 + want % 7) * 8 > 256);
	pk_ring__read_done(r);

	/* chunks in backward mode cover the same newest-first range */
	sim_write_back(&s);
	assert_int_equal(pk_ring__read_init(r), 0);
	struct pk_ring_chunk c[2];
	int k = pk_ring__chunks(r, c);
	assert_true(k >= 1);
	assert_int_equal(c[0].len + (k == 2 ? c[1].len : 0), (2 + (s.seq - 1) % 7) * 8);
	pk_ring__advance(r, c[0].len + (k == 2 ? c[1].len : 0));
	pk_ring__read_done(r);
	pk_ring__munmap(r);
	sim_free(&s);

	/* the kernel's head did not start at our "previous head": the walk must stop at
	 * never-written (zero) memory */
	sim_init(&s, 256);
	s.head = 1024 + 128;
	r = pk_ring__from_memory(s.mem, PAGE + 256, PK_RING_BACKWARD | PK_RING_OVERWRITE);
	for (int i = 0; i < 3; i++)
		sim_write_back(&s);
	assert_int_equal(pk_ring__read_init(r), 0);
	n = 0;
	while (pk_ring__next(r, &h) == 1)
		check_rec(h, (uint64_t)(2 - n++));
	assert_int_equal(n, 3);
	pk_ring__read_done(r);
	pk_ring__munmap(r);
	sim_free(&s);
}

/* ---------------------------------------------------------------------------------- */
/* Live                                                                                */

/* Thread CPU time: what a cpu-clock event on this thread samples, so the number of
 * samples does not depend on how busy the machine is. */
static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define LIVE_PERIOD 100000
volatile uint64_t sink; /* keeps the spin loops */
#define LIVE_ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

struct live {
	struct pk_sample_layout l;
	uint64_t samples, last_time, mmaps, comms, others;
	bool found_mmap, found_comm;
	char exe[PATH_MAX];
};

static void drain(struct pk_ring *r, struct live *lv)
{
	int err = pk_ring__read_init(r);
	assert_int_equal(err, 0);
	const struct perf_event_header *h;
	while ((err = pk_ring__next(r, &h)) == 1) {
		struct pk_record rec;
		const char *bad = NULL;
		int d = pk_record__decode(&lv->l, h, &rec, &bad);
		if (d)
			fail_msg("type %u: %d (%s)", h->type, d, bad ? bad : "?");
		switch (rec.type) {
		case PERF_RECORD_SAMPLE:
			assert_int_equal(rec.sample.pid, getpid());
			assert_int_equal(rec.sample.tid, gettid());
			assert_int_equal(rec.sample.period, LIVE_PERIOD);
			assert_true(rec.sample.time > lv->last_time);
			assert_true(rec.sample.cpu < 4096);
			assert_true(rec.sample.ip != 0);
			lv->last_time = rec.sample.time;
			lv->samples++;
			break;
		case PERF_RECORD_MMAP:
			lv->mmaps++;
			/* the trailer carries tid/time/cpu */
			assert_true(rec.has_sid);
			if (!strcmp(rec.mmap.filename, lv->exe)) {
				assert_int_equal(rec.mmap.pid, getpid());
				assert_int_equal(rec.sid.tid, gettid());
				assert_int_equal(rec.mmap.len, PAGE);
				lv->found_mmap = true;
			}
			break;
		case PERF_RECORD_COMM:
			lv->comms++;
			if (!strcmp(rec.comm.comm, "pk-ring-live")) {
				assert_int_equal(rec.comm.tid, gettid());
				assert_false(rec.comm.exec);
				lv->found_comm = true;
			}
			break;
		default:
			lv->others++;
		}
	}
	assert_int_equal(err, 0);
	pk_ring__read_done(r);
}

/* pages: data pages; side: also trigger and check MMAP and COMM records */
static void live_run(size_t pages, bool side)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = LIVE_PERIOD, .sample_type = LIVE_ST,
				     .disabled = 1, .mmap = side, .comm = side, .sample_id_all = 1 };
	int fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	struct live lv;
	memset(&lv, 0, sizeof(lv));
	assert_int_equal(pk_sample_layout__init(&lv.l, &a), 0);
	ssize_t n = readlink("/proc/self/exe", lv.exe, sizeof(lv.exe) - 1);
	assert_true(n > 0);
	lv.exe[n] = 0;
	struct pk_ring *r = pk_ring__mmap(fd, pages, 0);
	assert_non_null(r);
	assert_int_equal(pk_ring__data_size(r), pages * (size_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(pk_ring__control(r)->data_size, pk_ring__data_size(r));

	char oldname[17] = { 0 };
	prctl(PR_GET_NAME, oldname);
	assert_int_equal(pk_ioc_enable(fd, false), 0);
	uint64_t start = now_ns();
	bool did_mmap = false, did_comm = false;
	void *exec_map = MAP_FAILED;
	while (now_ns() - start < 50000000ull) {
		for (int i = 0; i < 200000; i++)
			sink += (uint64_t)i * 7;
		if (side && !did_mmap && now_ns() - start > 10000000ull) {
			int efd = open(lv.exe, O_RDONLY);
			assert_true(efd >= 0);
			exec_map = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, efd, 0);
			assert_true(exec_map != MAP_FAILED);
			close(efd);
			did_mmap = true;
		}
		if (side && !did_comm && now_ns() - start > 20000000ull) {
			prctl(PR_SET_NAME, "pk-ring-live");
			did_comm = true;
		}
		drain(r, &lv);
	}
	assert_int_equal(pk_ioc_disable(fd, false), 0);
	prctl(PR_SET_NAME, oldname);
	drain(r, &lv);
	struct pk_ring_stats st;
	pk_ring__stats(r, &st);
	printf("live: %llu samples, %llu mmap, %llu comm, %llu other, %llu wrapped\n",
	       (unsigned long long)lv.samples, (unsigned long long)lv.mmaps,
	       (unsigned long long)lv.comms, (unsigned long long)lv.others,
	       (unsigned long long)st.wrapped);
	/* 50 ms of CPU at 100 us: ~500 */
	assert_true(lv.samples >= 250);
	if (side) {
		assert_true(lv.found_mmap);
		assert_true(lv.found_comm);
		munmap(exec_map, PAGE);
	} else if (!lv.others) {
		/* only 48-byte samples from offset 0: the one crossing the end of a
		 * 4096-byte area (at 4080) straddles it */
		assert_true(st.wrapped > 0);
	}
	assert_int_equal(pk_ring__control(r)->data_tail, pk_ring__control(r)->data_head);
	pk_ring__munmap(r);
	close(fd);
}

static void test_ring_live(void **state)
{
	live_run(8, true);
}

static void test_ring_live_one_page(void **state)
{
	live_run(1, false);
}

static void test_ring_live_backward(void **state)
{
	if (!pk_test_can_perf())
		PK_SKIP("perf_event_open of a software event is not permitted here");
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = LIVE_PERIOD, .sample_type = LIVE_ST,
				     .disabled = 1, .write_backward = 1 };
	int fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0);
	if (fd == -EINVAL)
		PK_SKIP("kernel does not support write_backward");
	assert_true(fd >= 0);
	struct pk_sample_layout l;
	assert_int_equal(pk_sample_layout__init(&l, &a), 0);
	struct pk_ring *r = pk_ring__mmap(fd, 1, PK_RING_BACKWARD);
	assert_non_null(r);
	size_t dsz = pk_ring__data_size(r);
	assert_int_equal(pk_ioc_enable(fd, false), 0);
	uint64_t start = now_ns();
	while (now_ns() - start < 40000000ull)
		sink += 1;
	/* read while still enabled: read_init pauses the output */
	assert_int_equal(pk_ring__read_init(r), 0);
	const struct perf_event_header *h;
	uint64_t prev_time = UINT64_MAX, newest = 0, n = 0, bytes = 0;
	while (pk_ring__next(r, &h) == 1) {
		bytes += h->size;
		if (h->type != PERF_RECORD_SAMPLE)
			continue; /* e.g. LOST for what was dropped while paused */
		struct pk_sample s;
		assert_int_equal(pk_sample__decode(&l, h, &s, NULL), 0);
		assert_int_equal(s.pid, getpid());
		assert_int_equal(s.period, LIVE_PERIOD);
		assert_true(s.time < prev_time); /* newest first */
		if (!n)
			newest = s.time;
		prev_time = s.time;
		n++;
	}
	pk_ring__read_done(r);
	printf("backward: %llu samples (%llu bytes of %zu)\n", (unsigned long long)n,
	       (unsigned long long)bytes, dsz);
	/* 40 ms at 100 us writes ~400 x 48 bytes: the buffer wrapped, we read it full */
	assert_true(bytes <= dsz);
	assert_true(bytes + 48 > dsz);
	/* output resumed: more samples arrive, and the next pass returns only those */
	start = now_ns();
	while (now_ns() - start < 5000000ull)
		sink += 1;
	assert_int_equal(pk_ring__read_init(r), 0);
	uint64_t m = 0;
	while (pk_ring__next(r, &h) == 1) {
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		struct pk_sample s;
		assert_int_equal(pk_sample__decode(&l, h, &s, NULL), 0);
		assert_true(s.time > newest);
		m++;
	}
	pk_ring__read_done(r);
	assert_true(m > 0);
	assert_int_equal(pk_ioc_disable(fd, false), 0);
	pk_ring__munmap(r);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_invalid),
		cmocka_unit_test(test_ring_wrap),
		cmocka_unit_test(test_ring_tail),
		cmocka_unit_test(test_ring_partial),
		cmocka_unit_test(test_ring_bad_sizes),
		cmocka_unit_test(test_ring_keepup),
		cmocka_unit_test(test_ring_chunks),
		cmocka_unit_test(test_ring_backward),
		cmocka_unit_test(test_ring_live),
		cmocka_unit_test(test_ring_live_one_page),
		cmocka_unit_test(test_ring_live_backward),
	};
	pk_test_quiet_log();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
