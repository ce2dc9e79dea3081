/* SPDX-License-Identifier: MIT */
/*
 * lib/self/timeconv.c - perf timestamps <-> cycle counter (TSC) through the mmap page
 * (the man page's cap_user_time), and perf clock <-> POSIX clocks by measurement (self.h).
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/self.h>
#include <perfkit/ring.h>
#include <perfkit/record.h>

#define LD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)

PK_API int pk_time_conv__from_page(struct pk_time_conv *tc, const struct perf_event_mmap_page *pc)
{
	if (!tc || !pc)
		return pk_err(-EINVAL);
	for (int tries = 0; tries < PK_SELF_READ_MAX_RETRIES; tries++) {
		uint32_t seq = LD(pc->lock);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		tc->capabilities = LD(pc->capabilities);
		tc->time_shift = LD(pc->time_shift);
		tc->time_mult = LD(pc->time_mult);
		tc->time_zero = LD(pc->time_zero);
		tc->time_offset = LD(pc->time_offset);
		if (tc->capabilities & PK_CAP_USER_TIME_SHORT) {
			tc->time_cycles = LD(pc->time_cycles);
			tc->time_mask = LD(pc->time_mask);
		} else {
			tc->time_cycles = 0;
			tc->time_mask = ~0ULL;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!(seq & 1) && LD(pc->lock) == seq)
			return (tc->capabilities & PK_CAP_USER_TIME_ZERO) ? 0 : -EOPNOTSUPP;
	}
	return pk_err(-EAGAIN);
}

PK_API int pk_time_conv__read(struct pk_time_conv *tc)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
				     .exclude_kernel = 1, .exclude_hv = 1 };
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	void *p;
	int fd, err;

	if (!tc)
		return pk_err(-EINVAL);
	if ((fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0)) < 0)
		return fd;
	p = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = pk_err(-errno);
		close(fd);
		return err;
	}
	err = pk_time_conv__from_page(tc, p);
	munmap(p, ps);
	close(fd);
	return err;
}

PK_API uint64_t pk_time_conv__cyc_to_perf(const struct pk_time_conv *tc, uint64_t cyc)
{
	if (tc->capabilities & PK_CAP_USER_TIME_SHORT)
		cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
	return tc->time_zero + pk_mul_u64_u32_shr(cyc, tc->time_mult, tc->time_shift);
}

PK_API uint64_t pk_time_conv__perf_to_cyc(const struct pk_time_conv *tc, uint64_t ns)
{
	uint64_t d = ns - tc->time_zero, quot, rem;
	if (!tc->time_mult || tc->time_shift >= 64)
		return 0; /* parameters no kernel produces: nothing meaningful to return */
	quot = d / tc->time_mult;
	rem = d % tc->time_mult;
	/* (quot << shift) + (rem << shift) / mult, the second term in 128 bits */
	return (quot << tc->time_shift) +
	       (uint64_t)(((unsigned __int128)rem << tc->time_shift) / tc->time_mult);
}

PK_API int pk_time_conv__now(const struct pk_time_conv *tc, uint64_t *ns)
{
	const struct pk_counter_source *src = pk_counter_source__native();
	if (!tc || !ns)
		return pk_err(-EINVAL);
	if (!src || !src->read_cycles || !(tc->capabilities & PK_CAP_USER_TIME_ZERO))
		return pk_err(-EOPNOTSUPP);
	*ns = pk_time_conv__cyc_to_perf(tc, src->read_cycles(src->ctx));
	return 0;
}

/* ---- perf clock <-> POSIX clocks ------------------------------------------------------- */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A dummy event of the calling thread that records COMM with a timestamp trailer. */
static int stamp_open(clockid_t clk, struct pk_ring **ring, struct pk_sample_layout *l)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
				     .sample_type = PERF_SAMPLE_TIME, .sample_id_all = 1,
				     .comm = 1, .exclude_kernel = 1, .exclude_hv = 1,
				     .watermark = 0, .wakeup_events = 1 };
	int fd;
	if (clk >= 0) {
		a.use_clockid = 1;
		a.clockid = (int)clk;
	}
	if ((fd = pk_sys_perf_event_open(&a, 0, -1, -1, 0)) < 0)
		return fd;
	if (!(*ring = pk_ring__mmap(fd, 1, 0))) {
		int err = -errno;
		close(fd);
		return pk_err(err);
	}
	pk_sample_layout__init(l, &a);
	return fd;
}

/* Rename the thread to its own name: the kernel emits PERF_RECORD_COMM, timestamped now. */
static int stamp_once(struct pk_ring *ring, const struct pk_sample_layout *l, clockid_t bracket,
		      uint64_t *t, uint64_t *before, uint64_t *after)
{
	char name[17] = { 0 };
	const struct perf_event_header *h;
	bool found = false;
	int err;

	if (prctl(PR_GET_NAME, name, 0, 0, 0) < 0)
		return pk_err(-errno);
	*before = now_ns(bracket);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	*after = now_ns(bracket);
	if ((err = pk_ring__read_init(ring)) < 0 && err != -EOVERFLOW)
		return err;
	while (pk_ring__next(ring, &h) == 1) {
		struct pk_sample_id sid;
		if (h->type == PERF_RECORD_COMM && pk_record__sample_id(l, h, &sid) == 0 &&
		    (sid.type & PERF_SAMPLE_TIME)) {
			*t = sid.time;
			found = true;
		}
	}
	pk_ring__read_done(ring);
	return found ? 0 : pk_err(-EIO);
}

PK_API int pk_perf_clock__stamp(clockid_t clk, uint64_t *perf_ns, uint64_t *mono_before,
				uint64_t *mono_after)
{
	struct pk_sample_layout l;
	struct pk_ring *ring = NULL;
	uint64_t t = 0, b = 0, a = 0;
	int fd, err;

	if (!perf_ns)
		return pk_err(-EINVAL);
	if ((fd = stamp_open(clk, &ring, &l)) < 0)
		return fd;
	err = stamp_once(ring, &l, CLOCK_MONOTONIC, &t, &b, &a);
	pk_ring__munmap(ring);
	close(fd);
	if (err < 0)
		return err;
	*perf_ns = t;
	if (mono_before)
		*mono_before = b;
	if (mono_after)
		*mono_after = a;
	return 0;
}

PK_API int pk_clock_offset__measure(struct pk_clock_offset *out, clockid_t clk, int rounds)
{
	struct pk_sample_layout l;
	struct pk_ring *ring = NULL;
	uint64_t best = UINT64_MAX;
	int fd, err = 0, ok = 0;

	if (!out)
		return pk_err(-EINVAL);
	if (rounds <= 0)
		rounds = 5;
	if ((fd = stamp_open(-1, &ring, &l)) < 0)
		return fd;
	for (int i = 0; i < rounds; i++) {
		uint64_t t, b, a;
		err = stamp_once(ring, &l, clk, &t, &b, &a);
		if (err == -EIO) {
			err = 0;
			continue;
		}
		if (err < 0)
			break;
		ok++;
		if (a - b < best) {
			best = a - b;
			out->clockid = clk;
			/* the record was stamped somewhere in [b, a]: take the middle */
			out->offset_ns = (int64_t)(b + (a - b) / 2 - t);
			out->error_ns = (a - b) / 2 + 1;
		}
	}
	pk_ring__munmap(ring);
	close(fd);
	if (err < 0)
		return err;
	return ok ? 0 : pk_err(-EIO);
}

PK_API uint64_t pk_clock_offset__to_clock(const struct pk_clock_offset *o, uint64_t perf_ns)
{
	return perf_ns + (uint64_t)o->offset_ns;
}

PK_API uint64_t pk_clock_offset__to_perf(const struct pk_clock_offset *o, uint64_t clock_ns)
{
	return clock_ns - (uint64_t)o->offset_ns;
}
