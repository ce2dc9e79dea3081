/* SPDX-License-Identifier: MIT */
/*
 * perfkit/mmap.h - the ring buffers of an opened evlist, as a recorder needs them: one
 * ring per CPU of the evlist's CPU map (one per thread when the CPU map is the dummy {-1}),
 * with every other fd of that CPU (other events, other threads) redirected into it with
 * PERF_EVENT_IOC_SET_OUTPUT, so a recorder drains nr_cpus buffers whatever the number of
 * events and threads.
 *
 *     struct pk_evlist_mmap *m = pk_evlist__mmap(el, &opts);     // after pk_evlist__open
 *     for (int i = 0; i < pk_evlist_mmap__nr(m); i++)
 *             ... pk_ring__read_init(pk_evlist_mmap__ring(m, i)) ... (see ring.h)
 *     poll(pk_evlist_mmap__pollfds(m, &n), n, -1);               // POLLIN: data above the
 *                                                                // watermark; POLLHUP: the
 *                                                                // fd's task has exited
 *     pk_evlist_mmap__free(m);                                   // before pk_evlist__free
 *
 * The kernel only accepts SET_OUTPUT between events of the same CPU (or, for cpu == -1,
 * of the same task), with the same clock and the same write direction; so per-thread
 * evlists get one ring per thread. The kernel also refuses to mmap an inherited event
 * opened with cpu == -1 (EINVAL): record an inheriting target per CPU.
 */
#ifndef PERFKIT_MMAP_H
#define PERFKIT_MMAP_H

#include <poll.h>
#include <sys/types.h>
#include <perfkit/common.h>
#include <perfkit/count.h>
#include <perfkit/ring.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pk_evlist_mmap;

struct pk_evlist_mmap_opts {
	size_t sz;
	/* Data pages per ring (a power of two; 0 = 128, i.e. 512 KiB with 4 KiB pages). */
	size_t pages;
	/* The events were opened with attr.write_backward = 1: map the rings read-only
	 * (overwrite, flight-recorder mode) and read them with PK_RING_BACKWARD. */
	bool overwrite;
	size_t :0;
};

/*
 * Map the rings of an opened evlist (fds of unsupported events are skipped). Returns NULL
 * and errno: EINVAL (not open, pages not a power of two), EPERM/ENOMEM from mmap (the
 * locked-memory limit perf_event_mlock_kb / RLIMIT_MEMLOCK for unprivileged users), or
 * the errno of a failed SET_OUTPUT ioctl. The evlist must outlive the result.
 */
PK_API struct pk_evlist_mmap *pk_evlist__mmap(struct pk_evlist *el,
					      const struct pk_evlist_mmap_opts *opts);
/* Unmap every ring and free. The evlist's fds stay open. NULL is fine. */
PK_API void pk_evlist_mmap__free(struct pk_evlist_mmap *m);
/* Number of rings. */
PK_API int pk_evlist_mmap__nr(const struct pk_evlist_mmap *m);
/* Ring idx (owned by m), NULL out of range. */
PK_API struct pk_ring *pk_evlist_mmap__ring(const struct pk_evlist_mmap *m, int idx);
/* CPU number of ring idx (-1 for a per-thread ring or out of range). */
PK_API int pk_evlist_mmap__cpu(const struct pk_evlist_mmap *m, int idx);
/* Thread id of ring idx (-1 for a per-CPU ring or out of range). */
PK_API pid_t pk_evlist_mmap__tid(const struct pk_evlist_mmap *m, int idx);
/*
 * Every open fd of the evlist as a pollfd array (events = POLLIN), owned by m; *nr receives
 * its length. The caller may change fd (e.g. to -1 after POLLHUP) and revents.
 */
PK_API struct pollfd *pk_evlist_mmap__pollfds(struct pk_evlist_mmap *m, int *nr);

#ifdef __cplusplus
}
#endif
#endif
