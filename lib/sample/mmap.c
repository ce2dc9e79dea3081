/* SPDX-License-Identifier: MIT */
/*
 * lib/sample/mmap.c - one ring buffer per CPU (or per thread) for an opened evlist, the
 * other fds redirected with PERF_EVENT_IOC_SET_OUTPUT (mmap.h).
 */
#include <stdlib.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/mmap.h>

struct pk_evlist_mmap {
	struct pk_ring **rings;
	int *cpu;
	pid_t *tid;
	int nr;
	struct pollfd *pfds;
	int nr_pfds;
};

PK_API void pk_evlist_mmap__free(struct pk_evlist_mmap *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nr; i++)
		pk_ring__munmap(m->rings[i]);
	free(m->rings);
	free(m->cpu);
	free(m->tid);
	free(m->pfds);
	free(m);
}

static bool is_pow2(size_t v)
{
	return v && !(v & (v - 1));
}

PK_API struct pk_evlist_mmap *pk_evlist__mmap(struct pk_evlist *el,
					      const struct pk_evlist_mmap_opts *opts)
{
	struct pk_cpu_map *cpus;
	struct pk_thread_map *threads;
	struct pk_evlist_mmap *m;
	struct pk_evsel *ev;
	size_t pages = PK_OPTS_GET(opts, pages, 0);
	bool overwrite = PK_OPTS_GET(opts, overwrite, false);
	unsigned rflags = overwrite ? PK_RING_BACKWARD | PK_RING_OVERWRITE : 0;
	int ncpus, nthreads, nkeys, nev, err = 0;
	bool per_thread;

	if (!el || !PK_OPTS_VALID(opts, pk_evlist_mmap_opts))
		return pk_err_ptr(-EINVAL);
	if (!pages)
		pages = 128;
	if (!is_pow2(pages))
		return pk_err_ptr(-EINVAL);
	cpus = pk_evlist__cpus(el);
	threads = pk_evlist__threads(el);
	ncpus = pk_cpu_map__nr(cpus);
	nthreads = pk_thread_map__nr(threads);
	nev = pk_evlist__nr_evsels(el);
	if (ncpus <= 0 || nthreads <= 0 || nev <= 0)
		return pk_err_ptr(-EINVAL);
	per_thread = ncpus == 1 && pk_cpu_map__cpu(cpus, 0) == -1;
	nkeys = per_thread ? nthreads : ncpus;

	m = calloc(1, sizeof(*m));
	if (!m)
		return pk_err_ptr(-ENOMEM);
	m->rings = calloc((size_t)nkeys, sizeof(*m->rings));
	m->cpu = calloc((size_t)nkeys, sizeof(*m->cpu));
	m->tid = calloc((size_t)nkeys, sizeof(*m->tid));
	m->pfds = calloc((size_t)ncpus * (size_t)nthreads * (size_t)nev, sizeof(*m->pfds));
	if (!m->rings || !m->cpu || !m->tid || !m->pfds) {
		err = -ENOMEM;
		goto fail;
	}

	for (int k = 0; k < nkeys; k++) {
		int owner = -1;
		/* the fds feeding this ring: per CPU every thread, per thread that thread */
		int ci0 = per_thread ? 0 : k, ci1 = per_thread ? 1 : k + 1;
		int ti0 = per_thread ? k : 0, ti1 = per_thread ? k + 1 : nthreads;

		for (int ci = ci0; ci < ci1; ci++) {
			for (int ti = ti0; ti < ti1; ti++) {
				pk_evlist__for_each_evsel(el, ev) {
					int fd = pk_evsel__fd(ev, ci, ti);
					if (fd < 0)
						continue;
					m->pfds[m->nr_pfds++] = (struct pollfd){ .fd = fd, .events = POLLIN };
					if (owner < 0) {
						struct pk_ring *r = pk_ring__mmap(fd, pages, rflags);
						if (!r) {
							err = -errno;
							goto fail;
						}
						owner = fd;
						m->rings[m->nr] = r;
						m->cpu[m->nr] = per_thread ? -1 : pk_cpu_map__cpu(cpus, ci);
						m->tid[m->nr] = per_thread ? pk_thread_map__tid(threads, ti) : -1;
						m->nr++;
						continue;
					}
					err = pk_ioc_set_output(fd, owner);
					if (err < 0) {
						pk_debug("SET_OUTPUT %d -> %d (%s): %s", fd, owner,
							 pk_evsel__name(ev), pk_strerror(err));
						goto fail;
					}
				}
			}
		}
	}
	if (!m->nr) {
		err = -EINVAL; /* nothing is open */
		goto fail;
	}
	return m;
fail:
	pk_evlist_mmap__free(m);
	return pk_err_ptr(err);
}

PK_API int pk_evlist_mmap__nr(const struct pk_evlist_mmap *m)
{
	return m ? m->nr : 0;
}

PK_API struct pk_ring *pk_evlist_mmap__ring(const struct pk_evlist_mmap *m, int idx)
{
	return m && idx >= 0 && idx < m->nr ? m->rings[idx] : NULL;
}

PK_API int pk_evlist_mmap__cpu(const struct pk_evlist_mmap *m, int idx)
{
	return m && idx >= 0 && idx < m->nr ? m->cpu[idx] : -1;
}

PK_API pid_t pk_evlist_mmap__tid(const struct pk_evlist_mmap *m, int idx)
{
	return m && idx >= 0 && idx < m->nr ? m->tid[idx] : -1;
}

PK_API struct pollfd *pk_evlist_mmap__pollfds(struct pk_evlist_mmap *m, int *nr)
{
	if (nr)
		*nr = m ? m->nr_pfds : 0;
	return m ? m->pfds : NULL;
}
