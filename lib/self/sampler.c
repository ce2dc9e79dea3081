/* SPDX-License-Identifier: MIT */
/*
 * lib/self/sampler.c - in-process sampling (self.h): a sampling event on the calling
 * thread, or on every thread of the process (one fd per thread and CPU, inherit, each
 * CPU's fds redirected into one ring with PERF_EVENT_IOC_SET_OUTPUT), drained into a
 * per-record callback with the shared ring reader and record decoder.
 */
#include <dirent.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/self.h>
#include <perfkit/event.h>
#include <perfkit/ring.h>
#include <perfkit/record.h>

#define DEFAULT_SAMPLE_TYPE \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

struct pk_sampler {
	struct perf_event_attr attr;
	struct pk_sample_layout layout;
	int *fds;
	int nr_fds;
	struct pk_ring **rings;
	struct pollfd *pfds;
	int nr_rings;
	pk_sampler_cb cb;
	void *ctx;
	struct pk_sampler_stats st;
};

static int attr_from_opts(const struct pk_sampler_opts *o, struct perf_event_attr *a)
{
	const struct perf_event_attr *ua = PK_OPTS_GET(o, attr, NULL);
	const char *spec = PK_OPTS_GET(o, event, NULL);
	uint64_t period = PK_OPTS_GET(o, period, 0), freq = PK_OPTS_GET(o, freq, 0);

	memset(a, 0, sizeof(*a));
	if (ua) {
		memcpy(a, ua, PK_MIN(ua->size ? ua->size : sizeof(*a), sizeof(*a)));
	} else {
		struct pk_event_list *list = pk_event_list__new();
		int err;
		if (!list)
			return -ENOMEM;
		err = pk_event_list__parse(list, spec ? spec : "cpu-clock", NULL, NULL);
		if (!err && pk_event_list__count(list) == 0)
			err = -EINVAL;
		if (!err)
			memcpy(a, &pk_event_spec__attr(pk_event_list__get(list, 0))->attr, sizeof(*a));
		pk_event_list__free(list);
		if (err)
			return err;
		/* period= / freq= terms of the spec count unless the opts say otherwise */
	}
	a->size = sizeof(*a);
	if (period) {
		a->sample_period = period;
		a->freq = 0;
	} else if (freq) {
		a->sample_freq = freq;
		a->freq = 1;
	} else if (!a->sample_period) {
		a->sample_freq = 1000;
		a->freq = 1;
	}
	if (!ua) {
		a->sample_type = PK_OPTS_GET(o, sample_type, 0) ? PK_OPTS_GET(o, sample_type, 0)
								: DEFAULT_SAMPLE_TYPE;
		a->read_format = PK_OPTS_GET(o, read_format, 0);
		a->disabled = !PK_OPTS_GET(o, start_enabled, false);
		if (PK_OPTS_GET(o, exclude_kernel, false)) {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
		}
		a->task = PK_OPTS_GET(o, task, false);
		a->sample_id_all = 1;
		unsigned we = PK_OPTS_GET(o, wakeup_events, 0);
		if (we) {
			a->wakeup_events = we;
			a->watermark = 0;
		} else {
			a->watermark = 1;
			a->wakeup_watermark = (uint32_t)sysconf(_SC_PAGESIZE);
		}
	}
	return 0;
}

static int list_threads(pid_t **out)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0, cap = 16;
	pid_t *t = malloc(cap * sizeof(*t));

	if (!d || !t) {
		if (d)
			closedir(d);
		free(t);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		uint64_t v;
		if (pk_parse_u64(de->d_name, strlen(de->d_name), &v) < 0)
			continue;
		if (n == cap) {
			pid_t *nt = realloc(t, (size_t)(cap *= 2) * sizeof(*t));
			if (!nt) {
				closedir(d);
				free(t);
				return -ENOMEM;
			}
			t = nt;
		}
		t[n++] = (pid_t)v;
	}
	closedir(d);
	*out = t;
	return n;
}

static int add_fd(struct pk_sampler *s, int fd)
{
	s->fds[s->nr_fds++] = fd;
	return fd;
}

static int add_ring(struct pk_sampler *s, int fd, size_t pages)
{
	struct pk_ring *r = pk_ring__mmap(fd, pages, 0);
	if (!r)
		return -errno;
	s->rings[s->nr_rings] = r;
	s->pfds[s->nr_rings] = (struct pollfd){ .fd = fd, .events = POLLIN };
	s->nr_rings++;
	return 0;
}

PK_API struct pk_sampler *pk_sampler__new(const struct pk_sampler_opts *opts)
{
	struct pk_sampler *s;
	size_t pages = PK_OPTS_GET(opts, pages, 0);
	pid_t *tids = NULL;
	int err, nthreads = 0, ncpus = 1;
	struct pk_cpu_map *cpus = NULL;

	if (!PK_OPTS_VALID(opts, pk_sampler_opts))
		return pk_err_ptr(-EINVAL);
	if (!pages)
		pages = 64;
	if (pages & (pages - 1))
		return pk_err_ptr(-EINVAL);
	if (!(s = calloc(1, sizeof(*s))))
		return pk_err_ptr(-ENOMEM);
	s->cb = PK_OPTS_GET(opts, cb, NULL);
	s->ctx = PK_OPTS_GET(opts, ctx, NULL);
	if ((err = attr_from_opts(opts, &s->attr)) < 0)
		goto err;
	if ((err = pk_sample_layout__init(&s->layout, &s->attr)) < 0)
		goto err;

	if (PK_OPTS_GET(opts, scope, PK_SAMPLER_THREAD) == PK_SAMPLER_PROCESS) {
		/* inherited events cannot be mmapped with cpu == -1: one fd per thread and CPU,
		 * each CPU's fds feeding one ring */
		s->attr.inherit = 1;
		if (!(cpus = pk_cpu_map__new_online(NULL))) {
			err = -errno;
			goto err;
		}
		ncpus = pk_cpu_map__nr(cpus);
		if ((nthreads = list_threads(&tids)) < 0) {
			err = nthreads;
			goto err;
		}
		s->fds = calloc((size_t)ncpus * nthreads, sizeof(int));
		s->rings = calloc((size_t)ncpus, sizeof(*s->rings));
		s->pfds = calloc((size_t)ncpus, sizeof(*s->pfds));
		if (!s->fds || !s->rings || !s->pfds) {
			err = -ENOMEM;
			goto err;
		}
		for (int c = 0; c < ncpus; c++) {
			int first = -1;
			for (int t = 0; t < nthreads; t++) {
				int fd = pk_sys_perf_event_open(&s->attr, tids[t], pk_cpu_map__cpu(cpus, c),
								-1, 0);
				if (fd == -ESRCH)
					continue; /* the thread exited meanwhile */
				if (fd < 0) {
					err = fd;
					goto err;
				}
				add_fd(s, fd);
				if (first < 0) {
					first = fd;
					if ((err = add_ring(s, fd, pages)) < 0)
						goto err;
				} else if ((err = pk_ioc_set_output(fd, first)) < 0) {
					goto err;
				}
			}
		}
	} else {
		pid_t tid = PK_OPTS_GET(opts, tid, 0);
		int fd;
		s->fds = calloc(1, sizeof(int));
		s->rings = calloc(1, sizeof(*s->rings));
		s->pfds = calloc(1, sizeof(*s->pfds));
		if (!s->fds || !s->rings || !s->pfds) {
			err = -ENOMEM;
			goto err;
		}
		if ((fd = pk_sys_perf_event_open(&s->attr, tid, -1, -1, 0)) < 0) {
			err = fd;
			goto err;
		}
		add_fd(s, fd);
		if ((err = add_ring(s, fd, pages)) < 0)
			goto err;
	}
	free(tids);
	pk_cpu_map__free(cpus);
	return s;
err:
	free(tids);
	pk_cpu_map__free(cpus);
	pk_sampler__free(s);
	return pk_err_ptr(err);
}

PK_API void pk_sampler__free(struct pk_sampler *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nr_rings; i++)
		pk_ring__munmap(s->rings[i]);
	for (int i = 0; i < s->nr_fds; i++)
		close(s->fds[i]);
	free(s->rings);
	free(s->pfds);
	free(s->fds);
	free(s);
}

static int each_fd(struct pk_sampler *s, int (*fn)(int, bool))
{
	if (!s)
		return pk_err(-EINVAL);
	for (int i = 0; i < s->nr_fds; i++) {
		int err = fn(s->fds[i], false);
		if (err < 0)
			return err;
	}
	return 0;
}

PK_API int pk_sampler__enable(struct pk_sampler *s)
{
	return each_fd(s, pk_ioc_enable);
}

PK_API int pk_sampler__disable(struct pk_sampler *s)
{
	return each_fd(s, pk_ioc_disable);
}

static int deliver(struct pk_sampler *s, const struct perf_event_header *h, bool *stop)
{
	struct pk_record rec;
	const char *bad = NULL;
	int err;

	if (h->type == PERF_RECORD_SAMPLE) {
		memset(&rec, 0, sizeof(rec));
		rec.hdr = h;
		rec.type = h->type;
		rec.misc = h->misc;
		rec.size = h->size;
		rec.cpumode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
		err = pk_sample__decode(&s->layout, h, &rec.sample, &bad);
	} else {
		err = pk_record__decode(&s->layout, h, &rec, &bad);
	}
	if (err < 0) {
		s->st.bad++;
		return 0;
	}
	if (err == PK_RECORD_SKIPPED)
		return 0;
	s->st.records++;
	if (h->type == PERF_RECORD_SAMPLE)
		s->st.samples++;
	else if (h->type == PERF_RECORD_LOST)
		s->st.lost += rec.lost.lost;
	else if (h->type == PERF_RECORD_THROTTLE)
		s->st.throttles++;
	if (s->cb && s->cb(s, &rec, s->ctx))
		*stop = true;
	return 1;
}

PK_API int pk_sampler__drain(struct pk_sampler *s)
{
	int total = 0;
	bool stop = false;

	if (!s)
		return pk_err(-EINVAL);
	for (int i = 0; i < s->nr_rings && !stop; i++) {
		struct pk_ring *r = s->rings[i];
		const struct perf_event_header *h;
		int err = pk_ring__read_init(r);
		if (err < 0 && err != -EOVERFLOW)
			return err;
		while (!stop && (err = pk_ring__next(r, &h)) == 1)
			total += deliver(s, h, &stop);
		if (err < 0) {
			pk_ring__discard(r);
			pk_ring__read_done(r);
			return pk_err(err);
		}
		pk_ring__read_done(r);
	}
	return total;
}

PK_API int pk_sampler__poll(struct pk_sampler *s, int timeout_ms)
{
	if (!s)
		return pk_err(-EINVAL);
	if (poll(s->pfds, (nfds_t)s->nr_rings, timeout_ms) < 0 && errno != EINTR)
		return pk_err(-errno);
	return pk_sampler__drain(s);
}

PK_API const struct perf_event_attr *pk_sampler__attr(const struct pk_sampler *s)
{
	return s ? &s->attr : NULL;
}

PK_API const struct pk_sample_layout *pk_sampler__layout(const struct pk_sampler *s)
{
	return s ? &s->layout : NULL;
}

PK_API void pk_sampler__stats(const struct pk_sampler *s, struct pk_sampler_stats *out)
{
	if (s && out)
		*out = s->st;
}

PK_API int pk_sampler__nr_fds(const struct pk_sampler *s)
{
	return s ? s->nr_fds : 0;
}

PK_API int pk_sampler__fd(const struct pk_sampler *s, int idx)
{
	return s && idx >= 0 && idx < s->nr_fds ? s->fds[idx] : -1;
}
