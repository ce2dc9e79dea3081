/* SPDX-License-Identifier: MIT */
/*
 * lib/self/rdpmc.c - fast counter reads of one's own thread (self.h): the counter-source
 * interface, the mmap-page seqlock read (perf_event_open(2), "MMAP layout") and the
 * pk_self_reader object that picks rdpmc or one group read(2) on every read.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/self.h>
#include <perfkit/event.h>

/* ---- counter sources ---------------------------------------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
static uint64_t x86_rdpmc(void *ctx, uint32_t idx)
{
	uint32_t lo, hi;
	(void)ctx;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx));
	return (uint64_t)hi << 32 | lo;
}
static uint64_t x86_rdtsc(void *ctx)
{
	uint32_t lo, hi;
	(void)ctx;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
static const struct pk_counter_source native_source = { x86_rdpmc, x86_rdtsc, NULL };
#define HAVE_NATIVE 1
#elif defined(__aarch64__)
#define A64_READ(reg) ({ uint64_t v_; __asm__ __volatile__("mrs %0, " reg : "=r"(v_)); v_; })
#define A64_CASE(n) case n: return A64_READ("pmevcntr" #n "_el0")
static uint64_t a64_pmc(void *ctx, uint32_t idx)
{
	(void)ctx;
	switch (idx) {
	A64_CASE(0); A64_CASE(1); A64_CASE(2); A64_CASE(3); A64_CASE(4); A64_CASE(5);
	A64_CASE(6); A64_CASE(7); A64_CASE(8); A64_CASE(9); A64_CASE(10); A64_CASE(11);
	A64_CASE(12); A64_CASE(13); A64_CASE(14); A64_CASE(15); A64_CASE(16); A64_CASE(17);
	A64_CASE(18); A64_CASE(19); A64_CASE(20); A64_CASE(21); A64_CASE(22); A64_CASE(23);
	A64_CASE(24); A64_CASE(25); A64_CASE(26); A64_CASE(27); A64_CASE(28); A64_CASE(29);
	A64_CASE(30);
	case 31: /* the cycle counter (ARMV8_IDX_CYCLE_COUNTER) */
		return A64_READ("pmccntr_el0");
	default:
		return 0;
	}
}
static uint64_t a64_cycles(void *ctx)
{
	(void)ctx;
	__asm__ __volatile__("isb" ::: "memory");
	return A64_READ("cntvct_el0");
}
static const struct pk_counter_source native_source = { a64_pmc, a64_cycles, NULL };
#define HAVE_NATIVE 1
#endif

PK_API const struct pk_counter_source *pk_counter_source__native(void)
{
#ifdef HAVE_NATIVE
	return &native_source;
#else
	return NULL;
#endif
}

/* ---- arithmetic ----------------------------------------------------------------------- */

uint64_t pk_mul_u64_u32_shr(uint64_t cyc, uint32_t mult, unsigned shift)
{
	unsigned __int128 p = (unsigned __int128)cyc * mult;
	return shift >= 128 ? 0 : (uint64_t)(p >> shift);
}

int64_t pk_sign_extend(uint64_t v, unsigned width)
{
	if (width == 0 || width >= 64)
		return (int64_t)v;
	/* shift up as unsigned (no UB), then an arithmetic shift down */
	return (int64_t)(v << (64 - width)) >> (64 - width);
}

/* The kernel updates the page from interrupt context on the CPU the reader runs on, so a
 * compiler barrier orders the loads on x86; the acquire fence adds the dmb other
 * architectures need. Fields are loaded with relaxed atomics (they change under us). */
#define LD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define FENCE() __atomic_thread_fence(__ATOMIC_ACQUIRE)

PK_API int pk_mmap_page__read_self(const struct perf_event_mmap_page *pc,
				   const struct pk_counter_source *src, struct pk_self_read *out)
{
	uint32_t seq, idx, retries = 0;
	uint64_t caps, enabled, running, count, cyc = 0, time_offset = 0, time_cycles = 0;
	uint64_t time_mask = ~0ULL;
	uint32_t time_mult = 0;
	uint16_t time_shift = 0, width;

	if (!pc || !out)
		return pk_err(-EINVAL);
	for (;; retries++) {
		if (retries >= PK_SELF_READ_MAX_RETRIES)
			return -EAGAIN; /* hot path: errno not touched */
		seq = LD(pc->lock);
		FENCE();
		if (seq & 1) /* an update in progress (not seen for self, but cheap) */
			continue;
		caps = LD(pc->capabilities);
		idx = LD(pc->index);
		if (!(caps & PK_CAP_USER_RDPMC) || idx == 0 || !src || !src->read_pmc)
			return -EOPNOTSUPP;
		enabled = LD(pc->time_enabled);
		running = LD(pc->time_running);
		if ((caps & PK_CAP_USER_TIME) && src->read_cycles) {
			cyc = src->read_cycles(src->ctx);
			time_offset = LD(pc->time_offset);
			time_mult = LD(pc->time_mult);
			time_shift = LD(pc->time_shift);
			if (caps & PK_CAP_USER_TIME_SHORT) {
				time_cycles = LD(pc->time_cycles);
				time_mask = LD(pc->time_mask);
			}
		}
		count = (uint64_t)LD(pc->offset);
		width = LD(pc->pmc_width);
		count += (uint64_t)pk_sign_extend(src->read_pmc(src->ctx, idx - 1), width);
		FENCE();
		if (LD(pc->lock) == seq)
			break;
	}
	if ((caps & PK_CAP_USER_TIME) && src->read_cycles) {
		uint64_t delta;
		if (caps & PK_CAP_USER_TIME_SHORT)
			cyc = time_cycles + ((cyc - time_cycles) & time_mask);
		delta = time_offset + pk_mul_u64_u32_shr(cyc, time_mult, time_shift);
		enabled += delta;
		running += delta; /* idx != 0 here: the counter is on hardware, so running too */
	}
	out->count = count;
	out->enabled = enabled;
	out->running = running;
	out->retries = retries;
	out->index = idx;
	return 0;
}

/* ---- pk_self_reader ------------------------------------------------------------------------ */

#define RF_TIMES (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

struct rd_event {
	char *name;
	struct pk_attr attr;
	int fd;
	uint64_t id;
	struct perf_event_mmap_page *page;
	bool supported;
};

struct pk_self_reader {
	int nr;
	struct rd_event *ev;
	int leader;              /* index of the group leader, -1 if separate */
	int nr_open;             /* supported events */
	bool self;               /* rdpmc allowed (calling thread, no inherit) */
	bool any_page;
	const struct pk_counter_source *src;
	enum pk_read_path last;
	size_t page_size;
	uint64_t *buf;           /* group read buffer */
	size_t buf_len;
	int *order;              /* for group reads: position in the read buffer -> event */
};

/* Could this event live on a hardware counter (is an mmap page worth it)? */
static bool maybe_hw(const struct perf_event_attr *a)
{
	return a->type != PERF_TYPE_SOFTWARE && a->type != PERF_TYPE_TRACEPOINT &&
	       a->type != PERF_TYPE_BREAKPOINT;
}

static bool unsupported_errno(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV || err == -ENXIO;
}

static void close_all(struct pk_self_reader *r)
{
	for (int i = 0; i < r->nr; i++) {
		if (r->ev[i].page)
			munmap(r->ev[i].page, r->page_size);
		if (r->ev[i].fd >= 0)
			close(r->ev[i].fd);
		r->ev[i].page = NULL;
		r->ev[i].fd = -1;
	}
	r->any_page = false;
}

static int open_one(struct pk_self_reader *r, struct rd_event *e, pid_t tid, int group_fd,
		    bool is_leader, bool grouped, const struct pk_self_reader_opts *opts)
{
	struct pk_attr a = e->attr;
	int fd;

	a.attr.read_format = RF_TIMES | (grouped ? PERF_FORMAT_ID : 0) |
			     (grouped && is_leader ? PERF_FORMAT_GROUP : 0);
	/* A group's leader always opens disabled and is enabled with PERF_IOC_FLAG_GROUP once
	 * every member is in: members attached to a leader that is already counting were
	 * seen to stay inactive until the next context switch (kernel 6.18, software
	 * events), silently losing their counts. */
	a.attr.disabled = grouped ? is_leader : PK_OPTS_GET(opts, disabled, false);
	a.attr.inherit = PK_OPTS_GET(opts, inherit, false);
	if (PK_OPTS_GET(opts, exclude_kernel, false)) {
		a.attr.exclude_kernel = 1;
		a.attr.exclude_hv = 1;
	}
#if defined(__aarch64__)
	/* arm64 hands a counter to user space only when asked (config1 bit 1) */
	if (r->self && (a.attr.type == PERF_TYPE_HARDWARE || a.attr.type == PERF_TYPE_RAW ||
			a.attr.type == PERF_TYPE_HW_CACHE))
		a.attr.config1 |= 0x2;
#endif
	fd = pk_sys_perf_event_open(&a.attr, tid, -1, group_fd, 0);
#if defined(__aarch64__)
	if (fd < 0 && (a.attr.config1 & 0x2) && !(e->attr.attr.config1 & 0x2)) {
		a.attr.config1 = e->attr.attr.config1;
		fd = pk_sys_perf_event_open(&a.attr, tid, -1, group_fd, 0);
	}
#endif
	if ((fd == -EACCES || fd == -EPERM) && !a.attr.exclude_kernel) {
		/* perf_event_paranoid >= 2 for unprivileged users: user space only */
		a.attr.exclude_kernel = 1;
		a.attr.exclude_hv = 1;
		fd = pk_sys_perf_event_open(&a.attr, tid, -1, group_fd, 0);
	}
	if (fd < 0)
		return fd;
	e->fd = fd;
	e->attr = a;
	if (grouped && pk_ioc_id(fd, &e->id) < 0)
		e->id = 0;
	if (r->self && maybe_hw(&a.attr)) {
		void *p = mmap(NULL, r->page_size, PROT_READ, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) {
			e->page = p;
			r->any_page = true;
		}
	}
	return 0;
}

/* Open every event; grouped = one group led by the first supported event. */
static int open_events(struct pk_self_reader *r, bool grouped,
		       const struct pk_self_reader_opts *opts)
{
	pid_t tid = PK_OPTS_GET(opts, tid, 0);
	int group_fd = -1, err;

	r->leader = -1;
	r->nr_open = 0;
	for (int i = 0; i < r->nr; i++) {
		struct rd_event *e = &r->ev[i];
		bool is_leader = grouped && group_fd < 0;
		err = open_one(r, e, tid, grouped ? group_fd : -1, is_leader, grouped, opts);
		if (err < 0 && unsupported_errno(err)) {
			e->supported = false;
			continue;
		}
		if (err < 0) {
			close_all(r);
			return err;
		}
		e->supported = true;
		r->nr_open++;
		if (is_leader) {
			group_fd = e->fd;
			r->leader = i;
		}
	}
	if (r->nr_open == 0)
		return -ENODEV;
	if (grouped && r->nr_open == 1) {
		/* a group of one reads like a single event; keep the cheaper layout */
		close_all(r);
		return open_events(r, false, opts);
	}
	if (grouped && !PK_OPTS_GET(opts, disabled, false) &&
	    (err = pk_ioc_enable(r->ev[r->leader].fd, true)) < 0) {
		close_all(r);
		return err;
	}
	return 0;
}

PK_API struct pk_self_reader *
pk_self_reader__open_attrs(const struct pk_attr *attrs, const char *const *names, int nr,
			   const struct pk_self_reader_opts *opts)
{
	struct pk_self_reader *r;
	int err;

	if (!attrs || nr <= 0 || nr > 1024 || !PK_OPTS_VALID(opts, pk_self_reader_opts))
		return pk_err_ptr(-EINVAL);
	if (!(r = calloc(1, sizeof(*r))) || !(r->ev = calloc((size_t)nr, sizeof(*r->ev))) ||
	    !(r->order = calloc((size_t)nr, sizeof(int)))) {
		err = -ENOMEM;
		goto err;
	}
	r->nr = nr;
	r->page_size = (size_t)sysconf(_SC_PAGESIZE);
	r->self = PK_OPTS_GET(opts, tid, 0) == 0 && !PK_OPTS_GET(opts, inherit, false) &&
		  !PK_OPTS_GET(opts, no_rdpmc, false);
	r->src = PK_OPTS_GET(opts, source, NULL);
	if (!r->src)
		r->src = pk_counter_source__native();
	for (int i = 0; i < nr; i++) {
		char tmp[32];
		const char *n = names && names[i] ? names[i] : NULL;
		if (!n) {
			pk_snprintf(tmp, sizeof(tmp), "event%d", i);
			n = tmp;
		}
		r->ev[i].fd = -1;
		r->ev[i].attr = attrs[i];
		r->ev[i].attr.attr.size = 0; /* let the open negotiate */
		if (!(r->ev[i].name = strdup(n))) {
			err = -ENOMEM;
			goto err;
		}
	}
	/* {nr, ena, run, {val, id} x nr} */
	r->buf_len = (3 + 2 * (size_t)nr) * sizeof(uint64_t);
	if (!(r->buf = malloc(r->buf_len))) {
		err = -ENOMEM;
		goto err;
	}
	bool grouped = !PK_OPTS_GET(opts, separate, false) && nr > 1;
	err = open_events(r, grouped, opts);
	if (err == -EINVAL && grouped)
		err = open_events(r, false, opts); /* the group cannot be built: read apart */
	if (err < 0)
		goto err;
	/* expected order of a group read: leader, then members in order of creation */
	if (r->leader >= 0) {
		int k = 0;
		r->order[k++] = r->leader;
		for (int i = 0; i < nr; i++)
			if (i != r->leader && r->ev[i].supported)
				r->order[k++] = i;
	}
	return r;
err:
	pk_self_reader__free(r);
	return pk_err_ptr(err);
}

PK_API struct pk_self_reader *pk_self_reader__open(const char *spec,
						   const struct pk_self_reader_opts *opts)
{
	struct pk_event_list *list;
	struct pk_attr *attrs = NULL;
	const char **names = NULL;
	struct pk_self_reader *r = NULL;
	int err;
	size_t n;

	if (!spec)
		return pk_err_ptr(-EINVAL);
	if (!(list = pk_event_list__new()))
		return NULL;
	if ((err = pk_event_list__parse(list, spec, NULL, NULL)) < 0)
		goto out;
	n = pk_event_list__count(list);
	if (n == 0 || n > 1024) {
		err = -EINVAL;
		goto out;
	}
	attrs = calloc(n, sizeof(*attrs));
	names = calloc(n, sizeof(*names));
	if (!attrs || !names) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pk_event_spec *sp = pk_event_list__get(list, i);
		attrs[i] = *pk_event_spec__attr(sp);
		/* counting only: drop any sampling the spec asked for */
		attrs[i].attr.sample_period = 0;
		attrs[i].attr.freq = 0;
		names[i] = pk_event_spec__name(sp);
	}
	r = pk_self_reader__open_attrs(attrs, names, (int)n, opts);
	err = r ? 0 : -errno;
out:
	free(attrs);
	free(names);
	pk_event_list__free(list);
	if (!r)
		return pk_err_ptr(err);
	return r;
}

PK_API void pk_self_reader__free(struct pk_self_reader *r)
{
	if (!r)
		return;
	if (r->ev) {
		close_all(r);
		for (int i = 0; i < r->nr; i++)
			free(r->ev[i].name);
	}
	free(r->ev);
	free(r->order);
	free(r->buf);
	free(r);
}

PK_API int pk_self_reader__nr(const struct pk_self_reader *r)
{
	return r ? r->nr : 0;
}

PK_API const char *pk_self_reader__name(const struct pk_self_reader *r, int idx)
{
	return r && idx >= 0 && idx < r->nr ? r->ev[idx].name : NULL;
}

PK_API bool pk_self_reader__supported(const struct pk_self_reader *r, int idx)
{
	return r && idx >= 0 && idx < r->nr && r->ev[idx].supported;
}

PK_API int pk_self_reader__fd(const struct pk_self_reader *r, int idx)
{
	return r && idx >= 0 && idx < r->nr ? r->ev[idx].fd : -1;
}

PK_API const struct perf_event_mmap_page *pk_self_reader__page(const struct pk_self_reader *r,
								int idx)
{
	return r && idx >= 0 && idx < r->nr ? r->ev[idx].page : NULL;
}

PK_API bool pk_self_reader__grouped(const struct pk_self_reader *r)
{
	return r && r->leader >= 0;
}

typedef int (*ioc_fn)(int fd, bool group);
static int for_leaders(struct pk_self_reader *r, ioc_fn fn)
{
	if (!r)
		return pk_err(-EINVAL);
	if (r->leader >= 0)
		return fn(r->ev[r->leader].fd, true);
	for (int i = 0; i < r->nr; i++) {
		int err;
		if (r->ev[i].supported && (err = fn(r->ev[i].fd, false)) < 0)
			return err;
	}
	return 0;
}

PK_API int pk_self_reader__enable(struct pk_self_reader *r)
{
	return for_leaders(r, pk_ioc_enable);
}

PK_API int pk_self_reader__disable(struct pk_self_reader *r)
{
	return for_leaders(r, pk_ioc_disable);
}

PK_API int pk_self_reader__reset(struct pk_self_reader *r)
{
	return for_leaders(r, pk_ioc_reset);
}

static int read_rdpmc(struct pk_self_reader *r, struct pk_count_value *out, size_t max)
{
	for (int i = 0; i < r->nr; i++) {
		struct pk_self_read sr;
		const struct rd_event *e = &r->ev[i];
		if (!e->supported)
			continue;
		if (!e->page || pk_mmap_page__read_self(e->page, r->src, &sr) < 0)
			return -EOPNOTSUPP;
		if ((size_t)i < max)
			out[i] = (struct pk_count_value){ .val = sr.count, .ena = sr.enabled,
							  .run = sr.running, .id = e->id };
	}
	return 0;
}

static int read_group(struct pk_self_reader *r, struct pk_count_value *out, size_t max)
{
	const struct rd_event *ld = &r->ev[r->leader];
	size_t want = (3 + 2 * (size_t)r->nr_open) * sizeof(uint64_t);
	ssize_t n = read(ld->fd, r->buf, r->buf_len);
	uint64_t *b = r->buf;

	if (n < 0)
		return pk_err(-errno);
	if ((size_t)n != want || b[0] != (uint64_t)r->nr_open)
		return pk_err(-PK_ERR_FORMAT);
	for (uint64_t k = 0; k < b[0]; k++) {
		uint64_t val = b[3 + 2 * k], id = b[4 + 2 * k];
		int i = r->order[k];
		if (r->ev[i].id != id) { /* not in the expected order: find it by id */
			i = -1;
			for (int j = 0; j < r->nr; j++)
				if (r->ev[j].supported && r->ev[j].id == id)
					i = j;
			if (i < 0)
				continue;
		}
		if ((size_t)i < max)
			out[i] = (struct pk_count_value){ .val = val, .ena = b[1], .run = b[2], .id = id };
	}
	return 0;
}

static int read_single(struct pk_self_reader *r, struct pk_count_value *out, size_t max)
{
	for (int i = 0; i < r->nr && (size_t)i < max; i++) {
		uint64_t v[3];
		if (!r->ev[i].supported)
			continue;
		ssize_t n = read(r->ev[i].fd, v, sizeof(v));
		if (n < 0)
			return pk_err(-errno);
		if (n != (ssize_t)sizeof(v))
			return pk_err(-PK_ERR_FORMAT);
		out[i] = (struct pk_count_value){ .val = v[0], .ena = v[1], .run = v[2] };
	}
	return 0;
}

PK_API int pk_self_reader__read(struct pk_self_reader *r, struct pk_count_value *out, size_t max)
{
	int err;

	if (!r || (!out && max))
		return pk_err(-EINVAL);
	for (int i = 0; i < r->nr && (size_t)i < max; i++)
		if (!r->ev[i].supported)
			out[i] = (struct pk_count_value){ 0 };
	/* the capability is checked on every read: it can change at run time */
	if (r->any_page && read_rdpmc(r, out, max) == 0) {
		r->last = PK_READ_RDPMC;
		return r->nr;
	}
	if (r->leader >= 0) {
		err = read_group(r, out, max);
		r->last = PK_READ_GROUP;
	} else {
		err = read_single(r, out, max);
		r->last = PK_READ_SINGLE;
	}
	return err < 0 ? err : r->nr;
}

PK_API enum pk_read_path pk_self_reader__last_path(const struct pk_self_reader *r)
{
	return r ? r->last : PK_READ_NONE;
}

PK_API const char *pk_read_path__name(enum pk_read_path p)
{
	switch (p) {
	case PK_READ_RDPMC: return "rdpmc";
	case PK_READ_GROUP: return "group-read";
	case PK_READ_SINGLE: return "read";
	default: return "none";
	}
}
