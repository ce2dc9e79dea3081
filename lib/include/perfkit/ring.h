/* SPDX-License-Identifier: MIT */
/*
 * perfkit/ring.h - reader of a perf_event mmap ring buffer (a control page followed by a
 * power-of-two data area; perf_event_open(2), "MMAP layout").
 *
 * Read protocol (forward, the normal mode):
 *
 *     pk_ring__read_init(r);                 // snapshot data_head (load-acquire)
 *     const struct perf_event_header *rec;
 *     while ((err = pk_ring__next(r, &rec)) == 1) {
 *             ... use rec (valid until the next next / consume / read_done) ...
 *             pk_ring__consume(r);           // optional: give the bytes read so far back
 *     }                                      //   to the kernel now (store-release of tail)
 *     pk_ring__read_done(r);                 // publish data_tail for everything read
 *
 * Raw mode (a recorder copying bytes to a file without parsing them):
 *
 *     pk_ring__read_init(r);
 *     struct pk_ring_chunk c[2];
 *     int n = pk_ring__chunks(r, c);         // up to two spans covering [tail, head)
 *     ... write c[0..n) ...
 *     pk_ring__advance(r, c[0].len + c[1].len);
 *     pk_ring__read_done(r);
 *
 * Overwrite mode (PK_RING_BACKWARD: the event was opened with attr.write_backward = 1 and
 * the buffer is mapped read-only, so the kernel keeps overwriting the oldest data):
 * read_init pauses the output (PERF_EVENT_IOC_PAUSE_OUTPUT), finds the readable range from
 * data_head, and records come out NEWEST FIRST; read_done resumes the output. Records
 * the kernel had to drop while paused are counted as lost by the kernel.
 *
 * A ring is used by one thread at a time. Records never straddle from the caller's point
 * of view: one that wraps around the end of the data area is copied into a per-ring
 * 64 KiB scratch buffer allocated with the ring.
 */
#ifndef PERFKIT_RING_H
#define PERFKIT_RING_H

#include <perfkit/common.h>
#include <perfkit/sys.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pk_ring;

enum pk_ring_flags {
	/* The event has attr.write_backward = 1: map read-only (overwrite), read newest
	 * first from a paused buffer. */
	PK_RING_BACKWARD = 1u << 0,
	/* Map without PROT_WRITE so the kernel overwrites old data. Only meaningful with
	 * PK_RING_BACKWARD (forward overwrite has no safe record boundary): alone -EINVAL. */
	PK_RING_OVERWRITE = 1u << 1,
};

/*
 * mmap (1 + data_pages) pages of perf event `fd`. data_pages must be a power of two
 * (else -EINVAL). The ring does not own fd (pk_ring__munmap does not close it).
 * Returns NULL and errno: EINVAL, EPERM/ENOMEM from mmap (mlock limit: perf_event_mlock_kb),
 * ENOMEM.
 */
PK_API struct pk_ring *pk_ring__mmap(int fd, size_t data_pages, unsigned flags);

/*
 * A ring over caller memory laid out like a perf mmap: a control page (struct
 * perf_event_mmap_page) followed by the data area, `total_size` bytes in all. data_offset
 * and data_size are taken from the control page when non-zero, else page size and
 * total_size - page size. `base` must be 8-byte aligned; data_size a power of two; the
 * data area inside total_size (else NULL, errno EINVAL). No fd: BACKWARD mode does not
 * pause. The memory stays the caller's.
 */
PK_API struct pk_ring *pk_ring__from_memory(void *base, size_t total_size, unsigned flags);

/* Unmap (if mapped by us) and free. Accepts NULL. */
PK_API void pk_ring__munmap(struct pk_ring *r);

/* The control page (data_head, data_tail, time_* fields for self-monitoring, ...). */
PK_API struct perf_event_mmap_page *pk_ring__control(const struct pk_ring *r);
/* Start and size of the data area. */
PK_API const void *pk_ring__data(const struct pk_ring *r);
PK_API size_t pk_ring__data_size(const struct pk_ring *r);
/* The fd given to pk_ring__mmap, or -1. */
PK_API int pk_ring__fd(const struct pk_ring *r);

/*
 * Start a read pass: snapshot the head. Forward mode: returns 0, or -EOVERFLOW when
 * head - tail exceeds the data size ("failed to keep up": the unread data was overwritten;
 * the tail is moved to head, data_tail published, and the pass is empty). BACKWARD mode:
 * pauses output (if there is an fd) and computes the readable range; returns 0 or a
 * negative errno from the pause ioctl.
 */
PK_API int pk_ring__read_init(struct pk_ring *r);

/* Bytes left to read in the current pass. */
PK_API uint64_t pk_ring__pending(const struct pk_ring *r);

/*
 * Next record of the pass: returns 1 and *rec (8-byte aligned; valid until the next
 * next/consume/read_done call: after consume the kernel may overwrite it), 0 at the end of the pass (including a record only partly
 * published: it stays for the next pass), or -PK_ERR_FORMAT for a header.size below 8,
 * not a multiple of 8, or larger than the data area (corrupt buffer; the position does not
 * move, so every further call fails the same way until pk_ring__discard).
 */
PK_API int pk_ring__next(struct pk_ring *r, const struct perf_event_header **rec);

/* Forward mode: publish the position reached so far as data_tail (store-release), giving
 * that space back to the kernel. No-op in BACKWARD mode. */
PK_API void pk_ring__consume(struct pk_ring *r);

/* End the pass: consume (forward) or remember the head and resume output (BACKWARD). */
PK_API void pk_ring__read_done(struct pk_ring *r);

/* Drop everything up to the head snapshot of the current pass (after a corrupt record). */
PK_API void pk_ring__discard(struct pk_ring *r);

/* Raw access: a span of the data area. */
struct pk_ring_chunk {
	const void *ptr;
	size_t len;
};
/*
 * The unread bytes of the pass, [position, end), as up to two spans (the second one when
 * the range wraps around the end of the data area). Returns the number of spans (0..2).
 */
PK_API int pk_ring__chunks(struct pk_ring *r, struct pk_ring_chunk chunks[2]);
/* Move the position forward by `bytes` (clamped to what is pending). */
PK_API void pk_ring__advance(struct pk_ring *r, uint64_t bytes);

/* Counters kept by the reader. */
struct pk_ring_stats {
	uint64_t records;         /* returned by pk_ring__next */
	uint64_t bytes;           /* consumed, by next or advance */
	uint64_t wrapped;         /* records reassembled in the scratch buffer */
	uint64_t keepup_failures; /* read_init found head - tail > data size */
	uint64_t overrun_bytes;   /* bytes lost that way */
	uint64_t reserved[3];
};
PK_API void pk_ring__stats(const struct pk_ring *r, struct pk_ring_stats *out);

#ifdef __cplusplus
}
#endif
#endif
