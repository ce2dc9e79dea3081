/* SPDX-License-Identifier: MIT */
/*
 * lib/record/record-internal.h - the parts of the recorder (perfkit/recorder.h) that the
 * recorder's files share: the attr policy (policy.c) and the header walk over ring bytes
 * (walk.c). Not installed; unit tests may include it.
 */
#ifndef PK_RECORD_INTERNAL_H
#define PK_RECORD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <perfkit/perfkit.h>

/* ---- the header walk (walk.c) ---- */

/* A set of file names (open addressing, grown at half load). */
struct pk_rec_nameset {
	char **slot;
	size_t cap, nr;
};

/* 1 when name was added, 0 when it was there, -ENOMEM */
int pk_rec_nameset__add(struct pk_rec_nameset *ns, const char *name);
void pk_rec_nameset__release(struct pk_rec_nameset *ns);

struct pk_rec_walk_id {
	uint64_t id;
	uint32_t layout;
};

/*
 * What the drain loop learns from the records it passes on: it reads record headers
 * only, except for the bodies of LOST/LOST_SAMPLES (counts) and of user-space MMAP/MMAP2
 * (file names for the BUILD_ID feature), which pk_record__decode decodes with the layout
 * of the attr that wrote them. Scanning allocates nothing (names aside).
 */
struct pk_rec_walk {
	struct pk_sample_layout *layouts;  /* one per attr of the file */
	size_t nr_layouts;
	struct pk_rec_walk_id *ids;        /* sorted by id: which layout wrote a record */
	size_t nr_ids, cap_ids;
	bool mixed_trailers;               /* layouts differ in their trailer size */
	uint8_t *scratch;                  /* 64 KiB: a record split by the ring's wrap */
	uint64_t samples, lost, lost_records, lost_samples;
	struct pk_rec_nameset dsos;        /* executable files of user-space MMAPs */
	/* the first user-space [vdso] map seen: the recorder copies the image from that
	 * process while it runs, for the build-id list and cache (as perf record does) */
	bool vdso_seen;
	uint32_t vdso_pid;
	uint64_t vdso_start, vdso_len;
};

int pk_rec_walk__init(struct pk_rec_walk *w);
/* Add the layout of one attr and the sample ids of its fds. 0 or -errno. */
int pk_rec_walk__add_attr(struct pk_rec_walk *w, const struct perf_event_attr *attr,
			  const uint64_t *ids, size_t nr);
/* Sort the ids: call once after the last __add_attr. */
void pk_rec_walk__seal(struct pk_rec_walk *w);
/* Walk the (one or two) spans of ring bytes, whole records. */
void pk_rec_walk__scan(struct pk_rec_walk *w, const struct pk_ring_chunk *c, int n);
/* One whole, 8-aligned record (synthesised ones): note an MMAP's file. */
void pk_rec_walk__record(struct pk_rec_walk *w, const struct perf_event_header *h);
/* Forget the file names noted so far (a rotation starts a file with its own BUILD_IDs). */
void pk_rec_walk__clear_files(struct pk_rec_walk *w);
void pk_rec_walk__release(struct pk_rec_walk *w);

/* ---- off-CPU time (offcpu.c) ---- */

struct pk_rec_offcpu;
/* From the sched:sched_switch attr as opened and its ids; fills *out with the
 * "offcpu-time" attr whose samples carry id out_id. NULL: out of memory. */
struct pk_rec_offcpu *pk_rec_offcpu__new(const struct perf_event_attr *sw, const uint64_t *ids,
					 size_t nr, uint64_t thresh, uint64_t out_id,
					 struct pk_attr *out);
void pk_rec_offcpu__free(struct pk_rec_offcpu *oc);
/* Also read the wake-ups: the sched_waking attr as opened, its ids, the offsets of the
 * woken thread's "pid" and of "common_flags" (-1: unknown) in its raw data; fills *out
 * with the "offcpu-waker" attr (samples of id out_id). -ENOMEM. */
int pk_rec_offcpu__set_waker(struct pk_rec_offcpu *oc, const struct perf_event_attr *wk,
			     const uint64_t *ids, size_t nr, uint32_t pid_off, int flags_off,
			     uint64_t out_id, struct pk_attr *out);
/* Look at every record of ring bytes: the switches are queued, and the other records are
 * passed to `write` as spans (0 or the first error of `write`). __record: one whole record,
 * true if it is a switch (not to be written). */
int pk_rec_offcpu__scan(struct pk_rec_offcpu *oc, const struct pk_ring_chunk *c, int n,
			int (*write)(const void *p, size_t len, void *ctx), void *ctx);
bool pk_rec_offcpu__record(struct pk_rec_offcpu *oc, const struct perf_event_header *h);
/* Defer the decoding of the records a scan keeps to a flush, in a spool of at most
 * `cap` bytes (0: decode at the scan, the default). */
void pk_rec_offcpu__set_spool(struct pk_rec_offcpu *oc, size_t cap);
/* Records spooled and not decoded yet: the samples made of them are still to come. */
bool pk_rec_offcpu__deferred(const struct pk_rec_offcpu *oc);
/* End of a drain pass (PK_OFFCPU_PASS): pair the queued switches up to the previous pass's
 * newest time (deferred: only once the spool is nearly full); PK_OFFCPU_BATCH: the same,
 * spool or not; PK_OFFCPU_ALL: every switch (the end). The samples synthesised are kept
 * until __consumed. */
enum { PK_OFFCPU_PASS = 0, PK_OFFCPU_ALL = 1, PK_OFFCPU_BATCH = 2 };
void pk_rec_offcpu__flush(struct pk_rec_offcpu *oc, int mode);
const void *pk_rec_offcpu__output(const struct pk_rec_offcpu *oc, size_t *len);
void pk_rec_offcpu__consumed(struct pk_rec_offcpu *oc);
/* offcpu-waker samples written */
uint64_t pk_rec_offcpu__wakers(const struct pk_rec_offcpu *oc);
/* offcpu-time samples written, blocked intervals dropped, sched_switch samples consumed */
void pk_rec_offcpu__stats(const struct pk_rec_offcpu *oc, uint64_t *emitted, uint64_t *dropped,
			  uint64_t *filtered);

/* ---- the attr policy (policy.c) ---- */

/* The options as pk_recorder__new validated them, with the defaults filled in. */
struct pk_rec_policy {
	const struct pk_recorder_opts *o;  /* the recorder's copy */
	long freq;                         /* effective (0 with a period) */
	bool no_inherit;                   /* o->no_inherit, or forced by leader sampling */
};

/* The events of one recording as policy.c builds them. */
struct pk_rec_events {
	struct pk_evlist *el, *sb_el;      /* sb_el: forward side-band of --overwrite */
	const char **names;                /* display name per evsel of el */
	int nev;
	int offcpu_idx;                    /* evsel of context-switches (off_cpu), or -1 */
	int waker_idx;                     /* evsel of sched:sched_waking (off_cpu_wakers) */
	int dummy_idx;                     /* the side-band dummy in el, or -1 */
};

/* The frequency in use: opts' (or 4000, or the maximum) clamped to
 * perf_event_max_sample_rate (PK_RECORDER_FREQ_CLAMPED). */
long pk_rec_policy__freq(const struct pk_recorder_opts *o, struct pk_recorder_notice *clamped);
/* Build el (and sb_el) with perf record's attrs and the targets' maps. On failure, fills
 * f (stage, err, what) and returns -errno. */
int pk_rec_policy__build(struct pk_rec_policy *p, const struct pk_event_list *events,
			 struct pk_rec_events *ev, struct pk_recorder_failure *f);
void pk_rec_events__release(struct pk_rec_events *ev);

#endif
