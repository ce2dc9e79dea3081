/* SPDX-License-Identifier: MIT */
/*
 * lib/record/file-state.c - what a recorder's file holds besides the ring bytes: the
 * state synthesised when a file starts (kernel map, the targets' COMM/FORK/MMAP2, the
 * workload's tree in the later files of a rotation, FINISHED_INIT), the workload's vdso
 * image, and at the end the build-ids of the objects the recording met, copied into
 * perf's build-id cache as perf record does.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"
#include "record/record-internal.h"
#include "record/recorder-internal.h"
#include "data/data-internal.h"
#include "data/synth-internal.h"

/*
 * Copy the vdso image of the process whose [vdso] map the walk saw first, from its memory,
 * once: perf record keeps the vdso in the build-id cache, so that [vdso] frames resolve
 * where the reader cannot map this kernel's vdso itself (another machine, valgrind). Taken
 * from the workload, not from the recorder (valgrind hides the recorder's own); while the
 * process runs, so right after the walk sees the map. Best effort: no copy, no entry.
 */
void pk_rec_capture_vdso(struct pk_recorder *r)
{
	if (r->vdso_tried || !r->walk.vdso_seen)
		return;
	r->vdso_tried = true;
	uint64_t len = r->walk.vdso_len;
	if (!len || len > (1u << 20) || r->o.no_buildid_cache)
		return;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/mem", r->walk.vdso_pid);
	int mem = open(path, O_RDONLY | O_CLOEXEC);
	if (mem < 0)
		return;
	void *buf = malloc(len);
	ssize_t n = buf ? pread(mem, buf, len, (off_t)r->walk.vdso_start) : -1;
	close(mem);
	int fd = n == (ssize_t)len ? memfd_create("perfkit-vdso", MFD_CLOEXEC) : -1;
	if (fd >= 0 && write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	free(buf);
	r->vdso_fd = fd;
}

static int synth_cb(const struct perf_event_header *h, void *ctx)
{
	struct pk_recorder *r = ctx;
	pk_rec_walk__record(&r->walk, h);
	pk_rec_capture_vdso(r);
	int err = pk_data_writer__write_record(r->w, h);
	if (err < 0)
		r->write_err = err;
	return err;
}

/* The kernel and module map records, kept for the later files of a rotation (reading
 * kallsyms again would cost most of a switch's time) and for the modules' build ids */
static int kmap_cb(const struct perf_event_header *h, void *ctx)
{
	struct pk_recorder *r = ctx;
	uint8_t *n = r->kmaps_lost ? NULL : realloc(r->kmaps, r->kmaps_len + h->size);
	if (n) {
		memcpy(n + r->kmaps_len, h, h->size);
		r->kmaps = n;
		r->kmaps_len += h->size;
	} else {
		r->kmaps_lost = true; /* not kept: every file synthesizes them again */
	}
	return synth_cb(h, ctx);
}

/* A process and its descendants, as they are now (the children files of every thread;
 * bounded): the workload's tree when a rotation starts a new file. */
static void synth_tree(struct pk_recorder *r, pid_t root, unsigned flags,
		       const struct pk_synth_opts *so)
{
	enum { MAXP = 4096 };
	pid_t *q = malloc(MAXP * sizeof(*q));
	size_t n = 0, head = 0;
	char path[96];

	if (!q) {
		pk_synth__process(root, flags, synth_cb, r, so);
		return;
	}
	q[n++] = root;
	while (head < n && !r->write_err) {
		pid_t p = q[head++];
		pk_synth__process(p, flags, synth_cb, r, so);
		snprintf(path, sizeof(path), "/proc/%d/task", (int)p);
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%.20s/children", (int)p, de->d_name);
			FILE *f = fopen(path, "re");
			long c;
			while (f && n < MAXP && fscanf(f, "%ld", &c) == 1)
				if (c > 0 && c <= INT32_MAX)
					q[n++] = (pid_t)c;
			if (f)
				fclose(f);
		}
		if (d)
			closedir(d);
	}
	free(q);
}

int pk_rec_synthesize(struct pk_recorder *r, bool again)
{
	const struct pk_recorder_opts *o = &r->o;
	struct pk_sample_layout first;
	pid_t child = o->workload ? pk_workload__pid(o->workload) : -1;

	/* synthesised records carry the first attr's trailer (all zero), as perf writes */
	if (pk_sample_layout__init(&first, &r->attrs[0].attr) < 0)
		first.id_size = 0;
	PK_OPTS(pk_synth_opts, so, .id_size = first.id_size, .mmap_data = o->addr);
	/* the kernel reports namespace changes only: the namespaces the targets are in when
	 * recording starts are synthesised, as perf does */
	unsigned ns = o->namespaces ? PK_SYNTH_NAMESPACES : 0;
	int err = 0;

	if (r->kmaps_done) {
		for (size_t off = 0; off + sizeof(struct perf_event_header) <= r->kmaps_len;) {
			const struct perf_event_header *h = (const void *)(r->kmaps + off);
			synth_cb(h, r);
			off += h->size;
		}
	} else {
		/* perf synthesizes the modules after the kernel, whatever became of it */
		pk_synth__kernel_mmap(kmap_cb, r, &so);
		pk_synth__modules(kmap_cb, r, &so);
		r->kmaps_done = !r->kmaps_lost;
		if (r->kmaps_lost) {
			free(r->kmaps);
			r->kmaps = NULL;
			r->kmaps_len = 0;
			r->kmaps_lost = false;
		}
	}
	if (o->system_wide) {
		err = pk_synth__all(PK_SYNTH_FORK | PK_SYNTH_MMAPS | ns, synth_cb, r, &so);
	} else if (child > 0 && again) {
		/* a later file of a rotation: the workload runs, with its mappings, threads
		 * and children, none of which the file would know of otherwise */
		synth_tree(r, child, PK_SYNTH_MMAPS | ns, &so);
	} else if (child > 0) {
		char comm[64] = "perfkit", path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)child);
		FILE *f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		err = pk_synth__comm(child, child, comm, synth_cb, r, &so);
		if (!err && ns)
			err = pk_synth__namespaces(child, child, synth_cb, r, &so);
	} else if (o->pids || o->tids) {
		struct pk_thread_map *ids = pk_thread_map__new_list(o->pids ? o->pids : o->tids);
		for (int i = 0; ids && i < pk_thread_map__nr(ids) && !r->write_err; i++) {
			pid_t t = pk_thread_map__tid(ids, i);
			if (o->pids)
				pk_synth__process(t, PK_SYNTH_MMAPS | ns, synth_cb, r, &so);
			else
				pk_synth__thread(t, PK_SYNTH_MMAPS | ns, synth_cb, r, &so);
		}
		pk_thread_map__free(ids);
	}
	if (!r->write_err)
		pk_synth__finished_init(synth_cb, r);
	(void)err; /* a target that vanished meanwhile is not an error */
	return r->write_err;
}

/* ---- the end ---- */

/* Copies of the recorded binaries in perf's build-id cache, as perf record makes them, so
 * that a report of this file still finds the symbols after a rebuild. Never fatal. */
static void bid_cache_add(struct pk_recorder *r, bool *off, const char *name, const uint8_t *id,
			  size_t len)
{
	PK_OPTS(pk_build_id_cache_opts, co, .dir = r->o.buildid_dir);
	int err;

	if (*off || pk_rec_nameset__add(&r->cached, name ? name : "[kernel.kallsyms]") == 0)
		return; /* (an earlier file of the rotation copied it already) */
	err = name ? pk_build_id_cache__add(name, id, len, &co)
		   : pk_build_id_cache__add_kallsyms(NULL, id, len, &co);
	if (err == -EFBIG) {
		r->st.buildid_cache_too_big++;
	} else if (err == -EACCES || err == -EPERM || err == -EROFS || err == -ENOSPC ||
		   err == -EDQUOT || err == -ENOTDIR || err == -ENOENT || err == -ENAMETOOLONG) {
		/* the cache itself is the problem (or the file vanished: ENOENT from realpath
		 * is told apart by still trying the other files) */
		if (err == -ENOENT && name && access(name, F_OK) < 0)
			return;
		if (!name && err == -EACCES)
			return; /* kallsyms addresses hidden (kptr_restrict): nothing to keep */
		*off = true;
		r->st.buildid_cache_err = err;
		free(r->bid_err_file);
		r->bid_err_file = strdup(name ? name : "[kernel.kallsyms]");
	}
}

void pk_rec_add_build_ids(struct pk_recorder *r)
{
	uint8_t id[PK_BUILD_ID_MAX], kid[PK_BUILD_ID_MAX];
	size_t len, klen = sizeof(kid);
	bool off = r->o.no_buildid_cache;
	bool kernel = pk_kernel_build_id(NULL, kid, &klen) == 0;

	if (kernel && pk_data_writer__add_build_id(r->w, -1, PERF_RECORD_MISC_KERNEL, kid, klen,
						   "[kernel.kallsyms]") == 0)
		r->st.build_ids++;
	for (size_t i = 0; i < r->walk.dsos.cap; i++) {
		const char *name = r->walk.dsos.slot[i];
		if (!name)
			continue;
		len = sizeof(id);
		if (pk_build_id__read(name, id, &len) == 0) {
			if (pk_data_writer__add_build_id(r->w, -1, PERF_RECORD_MISC_USER, id, len,
							 name) == 0)
				r->st.build_ids++;
			bid_cache_add(r, &off, name, id, len);
		}
	}
	if (kernel)
		bid_cache_add(r, &off, NULL, kid, klen);
	/* the loaded modules' (from sysfs, as perf reads them), under the names their maps
	 * have; not copied into the cache */
	for (size_t o = 0; o + sizeof(struct perf_event_header) <= r->kmaps_len;) {
		const struct perf_event_header *h = (const void *)(r->kmaps + o);
		const char *f = (const char *)h + 40;
		size_t fmax = h->size > 40 ? h->size - 40u : 0, flen = strnlen(f, fmax);
		char name[64];
		o += h->size;
		if (h->type != PERF_RECORD_MMAP || flen == fmax || !strncmp(f, "[kernel.", 8))
			continue;
		if (f[0] == '[' ? flen < 3 || flen - 2 >= sizeof(name) || f[flen - 1] != ']'
				: pk_kmod__name_of(f, flen, name, sizeof(name)) < 0)
			continue;
		if (f[0] == '[') {
			memcpy(name, f + 1, flen - 2);
			name[flen - 2] = 0;
		}
		len = sizeof(id);
		if (pk_kmod__build_id(NULL, name, id, &len) == 0 &&
		    pk_data_writer__add_build_id(r->w, -1, PERF_RECORD_MISC_KERNEL, id, len, f) == 0)
			r->st.build_ids++;
	}
	/* the workload's vdso, as perf lists and caches it */
	char vp[64];
	snprintf(vp, sizeof(vp), "/proc/self/fd/%d", r->vdso_fd);
	len = sizeof(id);
	if (r->vdso_fd >= 0 && pk_build_id__read(vp, id, &len) == 0 &&
	    pk_data_writer__add_build_id(r->w, -1, PERF_RECORD_MISC_USER, id, len, "[vdso]") == 0) {
		r->st.build_ids++;
		PK_OPTS(pk_build_id_cache_opts, co, .dir = r->o.buildid_dir);
		if (!off)
			pk_build_id_cache__add_vdso(r->vdso_fd, id, len, &co);
	}
}
