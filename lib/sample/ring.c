/* SPDX-License-Identifier: MIT */
/*
 * lib/sample/ring.c - perf mmap ring-buffer reader (ring.h; the man page's "MMAP layout").
 *
 * Memory ordering: the kernel writes a record and then publishes data_head after a write
 * barrier, so we load data_head with acquire before touching the data; we finish reading
 * before we hand space back, so data_tail is stored with release.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/ring.h>

#define SCRATCH_SIZE 65536 /* header.size is a u16: no record is larger */

struct pk_ring {
	uint8_t *base;
	size_t map_len;         /* non-zero if we mmapped base */
	int fd;
	unsigned flags;
	struct perf_event_mmap_page *pc;
	uint8_t *data;
	uint64_t size;          /* data area bytes, power of two */
	uint64_t mask;
	uint64_t pos;           /* read position of the pass (free-running counter) */
	uint64_t end;           /* end of the pass */
	uint64_t head;          /* head snapshot of the pass */
	uint64_t prev;          /* BACKWARD: head at the end of the previous pass */
	uint64_t published;     /* last data_tail stored */
	bool paused;
	uint8_t *scratch;
	struct pk_ring_stats st;
};

static inline bool backward(const struct pk_ring *r)
{
	return r->flags & PK_RING_BACKWARD;
}

static int check_flags(unsigned flags)
{
	if (flags & ~(unsigned)(PK_RING_BACKWARD | PK_RING_OVERWRITE))
		return -EINVAL;
	if ((flags & PK_RING_OVERWRITE) && !(flags & PK_RING_BACKWARD))
		return -EINVAL;
	return 0;
}

static struct pk_ring *ring_new(unsigned flags)
{
	struct pk_ring *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	/* malloc alignment (16) keeps the reassembled records 8-byte aligned */
	r->scratch = malloc(SCRATCH_SIZE);
	if (!r->scratch) {
		free(r);
		return NULL;
	}
	r->fd = -1;
	r->flags = flags | (flags & PK_RING_BACKWARD ? PK_RING_OVERWRITE : 0);
	return r;
}

static void ring_start(struct pk_ring *r)
{
	r->mask = r->size - 1;
	if (backward(r)) {
		r->prev = 0;
		r->pos = r->end = r->head = 0;
	} else {
		uint64_t tail = __atomic_load_n(&r->pc->data_tail, __ATOMIC_RELAXED);
		r->pos = r->end = r->head = r->published = tail;
	}
}

PK_API struct pk_ring *pk_ring__mmap(int fd, size_t data_pages, unsigned flags)
{
	long page = sysconf(_SC_PAGESIZE);
	if (fd < 0 || page <= 0 || check_flags(flags))
		return pk_err_ptr(-EINVAL);
	if (!data_pages || (data_pages & (data_pages - 1)) || data_pages > (SIZE_MAX / (size_t)page) - 1)
		return pk_err_ptr(-EINVAL);

	struct pk_ring *r = ring_new(flags);
	if (!r)
		return pk_err_ptr(-ENOMEM);
	size_t len = (data_pages + 1) * (size_t)page;
	/* read-only mapping = overwrite mode: the kernel ignores data_tail */
	int prot = PROT_READ | (backward(r) ? 0 : PROT_WRITE);
	void *base = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		int err = -errno;
		free(r->scratch);
		free(r);
		return pk_err_ptr(err);
	}
	r->base = base;
	r->map_len = len;
	r->fd = fd;
	r->pc = base;
	r->data = r->base + page;
	r->size = (uint64_t)data_pages * (uint64_t)page;
	/* trust the kernel's description when it gives one and it agrees with the mapping */
	if (r->pc->data_size && r->pc->data_offset &&
	    (r->pc->data_offset != (uint64_t)page || r->pc->data_size != r->size))
		pk_debug("ring: control page says data at %llu size %llu; using %ld/%llu",
			 (unsigned long long)r->pc->data_offset,
			 (unsigned long long)r->pc->data_size, page, (unsigned long long)r->size);
	ring_start(r);
	return r;
}

PK_API struct pk_ring *pk_ring__from_memory(void *base, size_t total_size, unsigned flags)
{
	long page = sysconf(_SC_PAGESIZE);
	if (!base || ((uintptr_t)base & 7) || check_flags(flags) || page <= 0 ||
	    total_size < sizeof(struct perf_event_mmap_page))
		return pk_err_ptr(-EINVAL);
	struct perf_event_mmap_page *pc = base;
	uint64_t off = pc->data_offset ? pc->data_offset : (uint64_t)page;
	uint64_t size = pc->data_size ? pc->data_size : (total_size > (size_t)page ? total_size - (size_t)page : 0);
	if (off < sizeof(*pc) || (off & 7) || off > total_size || size < 8 || (size & (size - 1)) ||
	    size > total_size - off)
		return pk_err_ptr(-EINVAL);

	struct pk_ring *r = ring_new(flags);
	if (!r)
		return pk_err_ptr(-ENOMEM);
	r->base = base;
	r->pc = pc;
	r->data = r->base + off;
	r->size = size;
	ring_start(r);
	return r;
}

PK_API void pk_ring__munmap(struct pk_ring *r)
{
	if (!r)
		return;
	if (r->paused && r->fd >= 0)
		pk_ioc_pause_output(r->fd, false);
	if (r->map_len)
		munmap(r->base, r->map_len);
	free(r->scratch);
	free(r);
}

PK_API struct perf_event_mmap_page *pk_ring__control(const struct pk_ring *r)
{
	return r ? r->pc : NULL;
}

PK_API const void *pk_ring__data(const struct pk_ring *r)
{
	return r ? r->data : NULL;
}

PK_API size_t pk_ring__data_size(const struct pk_ring *r)
{
	return r ? (size_t)r->size : 0;
}

PK_API int pk_ring__fd(const struct pk_ring *r)
{
	return r ? r->fd : -1;
}

static void publish_tail(struct pk_ring *r)
{
	if (backward(r) || r->published == r->pos)
		return;
	/* all reads of the consumed bytes happen before the kernel may reuse them */
	__atomic_store_n(&r->pc->data_tail, r->pos, __ATOMIC_RELEASE);
	r->published = r->pos;
}

static inline struct perf_event_header load_header(const struct pk_ring *r, uint64_t pos)
{
	struct perf_event_header h;
	/* pos is 8-aligned and the data size a multiple of 8: a header never wraps */
	memcpy(&h, r->data + (pos & r->mask), sizeof(h));
	return h;
}

/*
 * Overwrite/backward mode (attr.write_backward): the newest record sits at head; the
 * readable range runs forward from there to the previous pass's head, unless more than
 * the whole buffer was written since, in which case we walk forward summing record sizes
 * until the buffer is covered or we meet never-written (zero) memory.
 */
static void backward_range(struct pk_ring *r)
{
	uint64_t start = r->head;
	uint64_t end = r->prev;

	if (end - start > r->size) {
		uint64_t total = 0;
		while (total + sizeof(struct perf_event_header) <= r->size) {
			struct perf_event_header h = load_header(r, start + total);
			if (h.size < sizeof(h) || (h.size & 7) || total + h.size > r->size)
				break;
			total += h.size;
		}
		end = start + total;
	}
	r->pos = start;
	r->end = end;
}

PK_API int pk_ring__read_init(struct pk_ring *r)
{
	if (!r)
		return pk_err(-EINVAL);
	if (backward(r)) {
		if (r->fd >= 0 && !r->paused) {
			int err = pk_ioc_pause_output(r->fd, true);
			if (err)
				return err;
			r->paused = true;
		}
		r->head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
		backward_range(r);
		return 0;
	}
	r->head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t avail = r->head - r->pos;
	if (avail > r->size) {
		/* we did not keep up (or data_tail was not honoured): the unread bytes
		 * were overwritten and no record boundary can be trusted; restart at head */
		r->st.keepup_failures++;
		r->st.overrun_bytes += avail;
		r->pos = r->end = r->head;
		publish_tail(r);
		return pk_err(-EOVERFLOW);
	}
	r->end = r->head;
	return 0;
}

PK_API uint64_t pk_ring__pending(const struct pk_ring *r)
{
	return r ? r->end - r->pos : 0;
}

PK_API int pk_ring__next(struct pk_ring *r, const struct perf_event_header **rec)
{
	if (!r || !rec)
		return pk_err(-EINVAL);
	uint64_t avail = r->end - r->pos;
	if (avail < sizeof(struct perf_event_header))
		return 0; /* empty, or a header not yet published */
	if (r->pos & 7)
		return pk_err(-PK_ERR_FORMAT);
	struct perf_event_header h = load_header(r, r->pos);
	if (h.size < sizeof(h) || (h.size & 7) || h.size > r->size)
		return pk_err(-PK_ERR_FORMAT);
	if (h.size > avail)
		return 0; /* partly published: leave it for the next pass */

	uint64_t off = r->pos & r->mask;
	if (off + h.size <= r->size) {
		*rec = (const struct perf_event_header *)(const void *)(r->data + off);
	} else {
		size_t first = (size_t)(r->size - off);
		memcpy(r->scratch, r->data + off, first);
		memcpy(r->scratch + first, r->data, h.size - first);
		*rec = (const struct perf_event_header *)(const void *)r->scratch;
		r->st.wrapped++;
	}
	r->pos += h.size;
	r->st.records++;
	r->st.bytes += h.size;
	return 1;
}

PK_API void pk_ring__consume(struct pk_ring *r)
{
	if (r)
		publish_tail(r);
}

PK_API void pk_ring__read_done(struct pk_ring *r)
{
	if (!r)
		return;
	if (backward(r)) {
		r->prev = r->head;
		r->pos = r->end;
		if (r->paused && r->fd >= 0) {
			pk_ioc_pause_output(r->fd, false);
			r->paused = false;
		}
		return;
	}
	publish_tail(r);
}

PK_API void pk_ring__discard(struct pk_ring *r)
{
	if (!r)
		return;
	r->pos = r->end;
	publish_tail(r);
}

PK_API int pk_ring__chunks(struct pk_ring *r, struct pk_ring_chunk chunks[2])
{
	if (!r || !chunks)
		return pk_err(-EINVAL);
	uint64_t len = r->end - r->pos;
	chunks[0] = (struct pk_ring_chunk){ NULL, 0 };
	chunks[1] = (struct pk_ring_chunk){ NULL, 0 };
	if (!len)
		return 0;
	if (len > r->size)
		len = r->size; /* cannot happen after read_init; never hand out more */
	uint64_t off = r->pos & r->mask;
	uint64_t first = PK_MIN(len, r->size - off);
	chunks[0].ptr = r->data + off;
	chunks[0].len = (size_t)first;
	if (len == first)
		return 1;
	chunks[1].ptr = r->data;
	chunks[1].len = (size_t)(len - first);
	return 2;
}

PK_API void pk_ring__advance(struct pk_ring *r, uint64_t bytes)
{
	if (!r)
		return;
	uint64_t left = r->end - r->pos;
	if (bytes > left)
		bytes = left;
	r->pos += bytes;
	r->st.bytes += bytes;
}

PK_API void pk_ring__stats(const struct pk_ring *r, struct pk_ring_stats *out)
{
	if (!out)
		return;
	if (!r) {
		memset(out, 0, sizeof(*out));
		return;
	}
	*out = r->st;
}
