/* SPDX-License-Identifier: MIT */
/*
 * lib/record/recorder-internal.h - the recorder's state, shared by recorder.c (options,
 * open, drain, rotation, finish) and file-state.c (synthesised state, vdso, build-ids).
 * Never installed.
 */
#ifndef PK_RECORD_RECORDER_INTERNAL_H
#define PK_RECORD_RECORDER_INTERNAL_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include "record/record-internal.h"

#define DEFAULT_STACK 8192
#define DEFAULT_PAGES 128

struct pk_recorder {
	struct pk_recorder_opts o;        /* the caller's, zero-extended */
	sigset_t mask;
	bool has_mask;
	struct pk_event_list *own_events; /* parsed from event_str / the default */
	const struct pk_event_list *events;
	struct pk_rec_policy p;
	struct pk_rec_events ev;
	bool built, opened, finished;
	struct pk_evlist_mmap *mm, *sb_mm;
	struct pk_data_writer *w;
	struct pk_attr *attrs;            /* attr as opened, per evsel of ev.el */
	bool *attr_ok;
	struct pk_attr sb_attr;
	bool sb_attr_ok;
	struct pk_rec_walk walk;
	struct pollfd *pfds;
	int npfds, nlive;
	int write_err;
	struct pk_recorder_failure fail;
	struct pk_recorder_stats st;
	char *bid_err_file;
	int vdso_fd;                      /* a memfd with the workload's vdso image, or -1 */
	int32_t lock_holder, lock_stale;  /* the output lock's (pk_data_writer_opts) */
	bool vdso_tried;
	struct pk_rec_offcpu *oc;         /* off_cpu: the offcpu-time synthesis */
	struct pk_attr oc_attr;
	struct pk_data_lock *lock;        /* the output path's, held until the last file is
					   * closed (across rotations) */
	uint8_t *kmaps;                   /* the synthesised kernel and module maps (records */
	size_t kmaps_len;                 /* end to end), for every file of a rotation */
	bool kmaps_done, kmaps_lost;     /* kept; one could not be kept (no memory) */
	struct pk_rec_nameset cached;     /* files already put in the build-id cache (by an
					   * earlier file of a rotation) */
	void *tdata;                      /* the TRACING_DATA blob, for every file */
	size_t tdata_len;
	bool tdata_done;                  /* built (or found impossible) once */
	struct pk_attr wk_attr;           /* off_cpu_wakers: offcpu-waker's (type 0: none) */
};

/* The sample id of the synthesised offcpu-time samples: kernel ids count up from 1. */
#define OFFCPU_ID ((1ULL << 63) | 0x0ffcULL)
/* The bytes of switches an off-CPU recording keeps undecoded while the targets run. */
#define OFFCPU_SPOOL ((size_t)64 << 20)
#define WAKER_ID ((1ULL << 63) | 0x0ffdULL)

/* file-state.c */
/* Copy the workload's vdso image once the walk has seen its map (best effort). */
void pk_rec_capture_vdso(struct pk_recorder *r);
/* The synthesised state of a new file (AGAIN: a later file of a rotation); the first
 * write error or 0. */
int pk_rec_synthesize(struct pk_recorder *r, bool again);
/* BUILD_ID entries of the objects met (and the kernel, the vdso), and their copies in the
 * build-id cache unless no_buildid_cache. */
void pk_rec_add_build_ids(struct pk_recorder *r);

#endif
