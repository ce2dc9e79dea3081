/* SPDX-License-Identifier: MIT */
/*
 * lib/record/recorder.c - pk_recorder: sample targets into a perf.data file, as perf
 * record does (perfkit/recorder.h).
 *
 * Shape: policy (policy.c) -> evlist over cpu_map x thread_map -> open (disabled or
 * enable_on_exec) -> one ring per CPU (pk_evlist__mmap) -> perf.data writer with the attrs
 * as opened and their ids -> synthesised state (kernel map, COMM/FORK/MMAP2,
 * FINISHED_INIT; file-state.c) -> enable -> drain passes -> final drain, build-ids
 * (file-state.c), header. A rotation closes the file and starts the next one the same way.
 *
 * The drain never parses records beyond their headers: ring bytes are handed to the
 * writer as the (at most two) raw spans the ring exposes, and walk.c counts samples and
 * losses and notes MMAP file names on the way.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "record/record-internal.h"
#include "data/data-internal.h"

#include "record/recorder-internal.h"

/* ---- options ---- */

static bool pow2(size_t v)
{
	return v && !(v & (v - 1));
}

static int check_opts(const struct pk_recorder_opts *o)
{
	int ntargets = !!o->pids + !!o->tids + !!o->system_wide;

	if (!ntargets && !o->workload)
		return -EINVAL;
	if (ntargets > 1 || (o->workload && (o->pids || o->tids)))
		return -EINVAL;
	if ((o->cgroup && !o->system_wide) || (o->per_thread && o->system_wide))
		return -EINVAL;
	if (o->period && (o->freq || o->freq_max))
		return -EINVAL;
	if (o->freq < 0 || (o->mmap_pages && (!pow2(o->mmap_pages) || o->mmap_pages > (1UL << 20))))
		return -EINVAL;
	if (o->compress_level < 0 || o->compress_level > 22 || o->stack_size > 65528)
		return -EINVAL;
	if (o->callgraph > PK_RECORDER_CG_DWARF || (!o->output && o->output_fd < 0))
		return -EINVAL;
	if (o->off_cpu && o->overwrite)
		return -EINVAL;
	if (o->sample_type_extra & ~(uint64_t)(PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_PAGE_SIZE |
					       PERF_SAMPLE_CODE_PAGE_SIZE))
		return -EINVAL;
	if ((o->all_user && o->all_kernel) || (o->nr_event_filters && !o->event_filters))
		return -EINVAL;
	return 0;
}

PK_API struct pk_recorder *pk_recorder__new(const struct pk_recorder_opts *opts)
{
	struct pk_recorder *r;
	int err;

	if (!opts || !PK_OPTS_VALID(opts, pk_recorder_opts))
		return pk_err_ptr(-EINVAL);
	r = calloc(1, sizeof(*r));
	if (!r)
		return pk_err_ptr(-ENOMEM);
	r->vdso_fd = -1;
	memcpy(&r->o, opts, PK_MIN(opts->sz, sizeof(r->o)));
	r->o.sz = sizeof(r->o);
	struct pk_recorder_opts *o = &r->o;
	if (o->cpus)
		o->system_wide = true;
	if (o->per_thread)
		o->no_inherit = true;
	if (o->no_buildid)
		o->no_buildid_cache = true;
	err = check_opts(o);
	if (err < 0)
		goto fail;
	if (o->sigmask) {
		r->mask = *o->sigmask;
		r->has_mask = true;
		o->sigmask = NULL;
	}
	if (o->callgraph == PK_RECORDER_CG_DWARF) {
		o->stack_size = o->stack_size ? (o->stack_size + 7) & ~7u : DEFAULT_STACK;
		/* DWARF call chains imply -d, as in perf: its unwinder finds .eh_frame_hdr and
		 * the CFI through the non-executable mappings of a binary (the r--p segments of
		 * a PIE linked with separate code), which only mmap_data records */
		o->addr = true;
	}
	if (!o->mmap_pages)
		/* every context switch of the targets is a sample: room for bursts */
		o->mmap_pages = o->off_cpu ? 4 * DEFAULT_PAGES : DEFAULT_PAGES;
	r->events = o->events;
	if (!r->events || !pk_event_list__count(r->events)) {
		struct pk_parse_error perr;
		r->own_events = pk_event_list__new();
		if (!r->own_events) {
			err = -ENOMEM;
			goto fail;
		}
		const char *s = !o->events && o->event_str ? o->event_str : "cycles";
		if (pk_event_list__parse(r->own_events, s, NULL, &perr) < 0) {
			pk_info("recorder: invalid event '%s': %s", s, perr.msg);
			err = -EINVAL;
			goto fail;
		}
		r->events = r->own_events;
	}
	o->events = NULL;
	o->event_str = NULL;
	r->p.o = o;
	r->p.no_inherit = o->no_inherit;
	r->write_err = 0;
	return r;
fail:
	pk_recorder__free(r);
	return pk_err_ptr(err);
}

/* ---- failures ---- */

static int failed(struct pk_recorder *r, enum pk_recorder_stage stage, int err, const char *what)
{
	memset(&r->fail, 0, sizeof(r->fail));
	r->fail.stage = stage;
	r->fail.err = err < 0 ? err : -err;
	r->fail.what = what;
	r->fail.pid = -1;
	r->fail.cpu = -1;
	r->fail.group_fd = -1;
	return r->fail.err;
}

static int open_failed(struct pk_recorder *r, struct pk_evlist *el, int err, bool named)
{
	const struct pk_evsel *ev;
	struct pk_evsel *pos;
	int idx = 0;

	failed(r, PK_RECORDER_FAIL_OPEN, err, NULL);
	ev = pk_evlist__open_failure(el, &r->fail.pid, &r->fail.cpu, &r->fail.group_fd,
				     &r->fail.attr);
	if (!ev)
		return r->fail.err;
	r->fail.event = pk_evsel__name(ev);
	pk_evlist__for_each_evsel(el, pos) {
		if (pos == ev) {
			if (named && idx < r->ev.nev)
				r->fail.event = r->ev.names[idx];
			break;
		}
		idx++;
	}
	return r->fail.err;
}

PK_API void pk_recorder__failure(const struct pk_recorder *r, struct pk_recorder_failure *out)
{
	if (!out)
		return;
	if (!r) {
		struct pk_recorder_failure none = { .stage = PK_RECORDER_FAIL_NONE };
		PK_OUT_COPY(out, &none);
		return;
	}
	PK_OUT_COPY(out, &r->fail);
}

/* ---- writing ---- */

static int write_bytes(struct pk_recorder *r, const void *p, size_t len)
{
	int err;
	if (r->write_err)
		return r->write_err;
	err = pk_data_writer__write(r->w, p, len);
	if (err < 0)
		r->write_err = err;
	return err;
}

/* Each evsel's attr as opened (after fallbacks), for the file; then --verbose's callback. */
static void on_open(const struct pk_evsel *ev, const struct perf_event_attr *attr, pid_t pid,
		    int cpu, int group_fd, unsigned long flags, int fd, void *ctx)
{
	struct pk_recorder *r = ctx;
	struct pk_evsel *pos;
	int idx = 0;

	pk_evlist__for_each_evsel(r->ev.el, pos) {
		if (pos == ev)
			break;
		idx++;
	}
	if (fd >= 0) {
		if (pos && idx < r->ev.nev && !r->attr_ok[idx]) {
			memset(&r->attrs[idx], 0, sizeof(r->attrs[idx]));
			memcpy(&r->attrs[idx].attr, attr, sizeof(*attr));
			r->attr_ok[idx] = true;
		} else if (!pos && !r->sb_attr_ok) {
			memset(&r->sb_attr, 0, sizeof(r->sb_attr));
			memcpy(&r->sb_attr.attr, attr, sizeof(*attr));
			r->sb_attr_ok = true;
		}
	}
	if (r->o.on_open)
		r->o.on_open(ev, attr, pid, cpu, group_fd, flags, fd, r->o.ctx);
}

/* The attrs of an evlist with the ids of their fds, to the file and to the walk. */
/* The wake-up event's samples go to offcpu.c, which needs where the woken thread's pid
 * sits in their raw data (the tracepoint's format). Without the format the wakers are
 * not reported, and recording goes on. */
static int waker_setup(struct pk_recorder *r, const struct perf_event_attr *a,
		       const uint64_t *ids, size_t n)
{
	char path[PATH_MAX], buf[8192];
	struct pk_tp_field pid, flags;
	const char *root = pk_tracefs__root();
	const char *name = r->ev.names[r->ev.waker_idx], *ev = strchr(name, ':');

	if (!root || !ev)
		return 0;
	pk_snprintf(path, sizeof(path), "%s/events/sched/%.*s/format", root,
		    (int)strcspn(ev + 1, ":"), ev + 1);
	ssize_t len = pk_read_small_file(path, buf, sizeof(buf));
	if (len <= 0 || pk_tp_format__field(buf, (size_t)len, "pid", &pid) < 0 || pid.size != 4)
		return 0;
	int flags_off = pk_tp_format__field(buf, (size_t)len, "common_flags", &flags) == 0 &&
			flags.size == 1 ? (int)flags.offset : -1;
	return pk_rec_offcpu__set_waker(r->oc, a, ids, n, pid.offset, flags_off, WAKER_ID,
					&r->wk_attr);
}

static int add_attrs(struct pk_recorder *r, struct pk_evlist *el, bool sideband, bool again)
{
	int ncpus = pk_cpu_map__nr(pk_evlist__cpus(el));
	int nthreads = pk_thread_map__nr(pk_evlist__threads(el));
	uint64_t *ids = calloc((size_t)ncpus * (size_t)nthreads, sizeof(*ids));
	struct pk_evsel *ev;
	int i = 0, err = 0;

	if (!ids)
		return -ENOMEM;
	pk_evlist__for_each_evsel(el, ev) {
		size_t n = 0;
		const struct pk_attr *a = sideband ? &r->sb_attr : &r->attrs[i];
		bool ok = sideband ? r->sb_attr_ok : r->attr_ok[i];
		const char *name = sideband ? "dummy:u" : r->ev.names[i];
		i++;
		if (!ok)
			continue;
		for (int ci = 0; ci < ncpus; ci++)
			for (int ti = 0; ti < nthreads; ti++) {
				uint64_t id = pk_evsel__id(ev, ci, ti);
				if (id)
					ids[n++] = id;
			}
		err = pk_data_writer__add_attr(r->w, a, name, ids, n);
		if (err >= 0 && !again)
			err = pk_rec_walk__add_attr(&r->walk, &a->attr, ids, n);
		if (err >= 0 && !again && !sideband && i - 1 == r->ev.offcpu_idx) {
			r->oc = pk_rec_offcpu__new(&a->attr, ids, n, r->o.off_cpu_thresh, OFFCPU_ID,
						   &r->oc_attr);
			if (!r->oc)
				err = -ENOMEM;
			else /* the switches are decoded and paired off the targets' time */
				pk_rec_offcpu__set_spool(r->oc, OFFCPU_SPOOL);
		}
		if (err >= 0 && !again && !sideband && i - 1 == r->ev.waker_idx && r->oc)
			err = waker_setup(r, &a->attr, ids, n);
		if (err < 0)
			break;
		err = 0;
	}
	free(ids);
	return err;
}

/* The synthesised events' attrs, after every opened event (perf adds its BPF off-CPU
 * event last); the walk learns them with the first file only (AGAIN: a later file of a
 * rotation). */
static int add_offcpu_attrs(struct pk_recorder *r, bool again)
{
	uint64_t id = OFFCPU_ID;
	int err = pk_data_writer__add_attr(r->w, &r->oc_attr, "offcpu-time", &id, 1);

	if (err >= 0 && !again)
		err = pk_rec_walk__add_attr(&r->walk, &r->oc_attr.attr, &id, 1);
	if (err >= 0 && r->wk_attr.attr.size) {
		id = WAKER_ID;
		err = pk_data_writer__add_attr(r->w, &r->wk_attr, "offcpu-waker", &id, 1);
		if (err >= 0 && !again)
			err = pk_rec_walk__add_attr(&r->walk, &r->wk_attr.attr, &id, 1);
	}
	return err < 0 ? err : 0;
}

/* GROUP_DESC: one entry per group of two or more recorded events, by file attr index. */
static int add_groups(struct pk_recorder *r)
{
	const struct pk_evsel *ev, *lead = NULL;
	int i = 0, fidx = 0, lead_fidx = -1;
	uint32_t members = 0;

	for (ev = pk_evlist__next(r->ev.el, NULL);; ev = pk_evlist__next(r->ev.el, ev), i++) {
		const struct pk_evsel *l = ev ? pk_evsel__leader(ev) : NULL;
		if (lead && l != lead) {
			if (members >= 2) {
				int err = pk_data_writer__add_group(r->w, NULL, (uint32_t)lead_fidx,
								    members);
				if (err < 0)
					return err;
			}
			lead = NULL;
		}
		if (!ev || i >= r->ev.nev)
			break;
		if (!r->attr_ok[i])
			continue;
		if (l == ev) {
			lead = ev;
			lead_fidx = fidx;
			members = 1;
		} else if (lead && l == lead) {
			members++;
		}
		fidx++;
	}
	return 0;
}

/* The TRACING_DATA blob (tracefs formats of the recorded tracepoints): without it perf
 * refuses the file. Not fatal: perfkit reads the file either way. */
static int add_tracing_data(struct pk_recorder *r)
{
	uint64_t *ids;
	const char **names;
	size_t n = 0, len = 0;
	void *blob = NULL;
	int err;

	if (r->tdata_done) /* a later file of a rotation: the same formats (or none) */
		return r->tdata && pk_data_writer__set_tracing_data(r->w, r->tdata, r->tdata_len) < 0
			       ? -ENOMEM : 0;
	r->tdata_done = true;
	ids = calloc((size_t)r->ev.nev, sizeof(*ids));
	names = calloc((size_t)r->ev.nev, sizeof(*names));
	if (!ids || !names) {
		free(ids);
		free(names);
		return -ENOMEM;
	}
	for (int i = 0; i < r->ev.nev; i++)
		if (r->attr_ok[i] && r->attrs[i].attr.type == PERF_TYPE_TRACEPOINT) {
			names[n] = r->ev.names[i];
			ids[n++] = r->attrs[i].attr.config;
		}
	err = n ? pk_tracing_data_build_hinted(NULL, ids, names, n, &blob, &len) : 0;
	free(ids);
	free(names);
	if (!n)
		return 0;
	if (err < 0) {
		struct pk_recorder_notice nt = { .kind = PK_RECORDER_NO_TRACING_DATA, .err = err };
		if (r->o.on_notice)
			r->o.on_notice(&nt, r->o.ctx);
		return 0;
	}
	err = pk_data_writer__set_tracing_data(r->w, blob, len);
	r->tdata = blob;
	r->tdata_len = len;
	return err < 0 ? err : 0;
}

/* ---- open ---- */

/* Rings over the locked-memory allowance (perf_event_mlock_kb per CPU, then RLIMIT_MEMLOCK)
 * fail with EPERM for an unprivileged user: halve them until they fit, as perf does. */
static int map_rings(struct pk_recorder *r)
{
	const size_t asked = r->o.mmap_pages;

	for (size_t pages = asked;; pages /= 2) {
		PK_OPTS(pk_evlist_mmap_opts, mo, .pages = pages, .overwrite = r->o.overwrite);
		r->mm = pk_evlist__mmap(r->ev.el, &mo);
		if (r->mm && r->ev.sb_el) {
			PK_OPTS(pk_evlist_mmap_opts, so, .pages = pages);
			r->sb_mm = pk_evlist__mmap(r->ev.sb_el, &so);
		}
		if (r->mm && (!r->ev.sb_el || r->sb_mm)) {
			if (pages != asked) {
				struct pk_recorder_notice n = { .kind = PK_RECORDER_PAGES_REDUCED,
								.asked = asked, .used = pages };
				if (r->o.on_notice)
					r->o.on_notice(&n, r->o.ctx);
			}
			r->st.mmap_pages = pages;
			return 0;
		}
		int e = errno;
		pk_evlist_mmap__free(r->mm);
		r->mm = NULL;
		if (e != EPERM || pages <= 1)
			return failed(r, PK_RECORDER_FAIL_MMAP, -(e ? e : ENOMEM), NULL);
	}
}

/* Poll set: the data rings' fds, then the side-band ones (overwrite mode). */
static int make_pollfds(struct pk_recorder *r)
{
	int n1 = 0, n2 = 0;
	struct pollfd *p1 = pk_evlist_mmap__pollfds(r->mm, &n1);
	struct pollfd *p2 = r->sb_mm ? pk_evlist_mmap__pollfds(r->sb_mm, &n2) : NULL;

	r->pfds = calloc((size_t)(n1 + n2) + 1, sizeof(*r->pfds));
	if (!r->pfds)
		return -ENOMEM;
	if (n1)
		memcpy(r->pfds, p1, sizeof(*r->pfds) * (size_t)n1);
	if (n2)
		memcpy(r->pfds + n1, p2, sizeof(*r->pfds) * (size_t)n2);
	r->npfds = r->nlive = n1 + n2;
	/* overwrite rings are only read on demand: wait for hang-ups only */
	for (int i = 0; r->o.overwrite && i < n1; i++)
		r->pfds[i].events = 0;
	return 0;
}

/* Events that fell back to user space only are recorded under their new name
 * ("cpu-clock:u"), as perf names them. */
static void user_names(struct pk_recorder *r)
{
	int i = 0;
	for (struct pk_evsel *ev = pk_evlist__next(r->ev.el, NULL); ev && i < r->ev.nev;
	     ev = pk_evlist__next(r->ev.el, ev), i++) {
		const struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
		const char *name = r->ev.names[i];
		size_t n = strlen(name);
		if (!a->exclude_kernel || a->exclude_user || !strcmp(name, "dummy:u"))
			continue;
		if (!strcmp(name, "cpu-clock"))
			r->ev.names[i] = "cpu-clock:u";
		else if (strcmp(pk_evsel__name(ev), name) && n &&
			 !strncmp(pk_evsel__name(ev), name, n))
			r->ev.names[i] = pk_evsel__name(ev);
	}
}

static int build(struct pk_recorder *r)
{
	struct pk_recorder_notice clamped;
	int err;

	r->p.freq = r->o.period ? 0 : pk_rec_policy__freq(&r->o, &clamped);
	if (r->p.freq && clamped.kind && r->o.on_notice)
		r->o.on_notice(&clamped, r->o.ctx);
	r->st.freq = (uint64_t)r->p.freq;
	memset(&r->fail, 0, sizeof(r->fail));
	err = pk_rec_policy__build(&r->p, r->events, &r->ev, &r->fail);
	if (err < 0) {
		r->fail.err = err;
		r->fail.pid = -1;
		r->fail.cpu = -1;
		r->fail.group_fd = -1;
		pk_rec_events__release(&r->ev);
		return err;
	}
	r->attrs = calloc((size_t)r->ev.nev, sizeof(*r->attrs));
	r->attr_ok = calloc((size_t)r->ev.nev, sizeof(*r->attr_ok));
	if (!r->attrs || !r->attr_ok)
		return failed(r, PK_RECORDER_FAIL_SETUP, -ENOMEM, NULL);
	r->built = true;
	return 0;
}

/* The output file: the first one (again = false) takes the path's lock, which the recorder
 * (not the writer) holds, so that it stays taken while a rotation closes one file and
 * creates the next; the order is the writer's own: lock, rename to .old, create. */
static struct pk_data_writer *open_output(struct pk_recorder *r, bool again)
{
	const struct pk_recorder_opts *o = &r->o;
	/* "-" is the pipe format even when stdout is a regular file, as with perf */
	bool pipe = o->pipe || (o->output && !strcmp(o->output, "-"));
	PK_OPTS(pk_data_writer_opts, wo, .compress_level = o->compress_level, .pipe = pipe,
		.keep_old = o->keep_old && !pipe && !again);

	if (!o->output)
		return pk_data_writer__fdopen(o->output_fd, &wo);
	if (!pipe && !again) {
		PK_OPTS(pk_data_lock_opts, lo, .holder = &r->lock_holder, .stale = &r->lock_stale);
		r->lock = pk_data_lock__acquire(o->output, &lo);
		if (!r->lock && errno != ENOLCK && errno != EOPNOTSUPP)
			return NULL;
		if (!r->lock)
			/* a file system without locks: record unprotected rather than not at all */
			pk_warn("cannot lock '%s' (%s): a second recorder of this path would not be "
				"stopped", o->output, strerror(errno));
	}
	struct pk_data_writer *w = pk_data_writer__open(o->output, &wo);
	if (!w) {
		int e = errno;
		if (!again) {
			pk_data_lock__release(r->lock);
			r->lock = NULL;
		}
		errno = e;
		return NULL;
	}
	if (!again && r->lock_stale && r->o.on_notice) {
		struct pk_recorder_notice n = { .kind = PK_RECORDER_LOCK_TAKEN_OVER,
						.name = o->output, .pid = r->lock_stale };
		r->o.on_notice(&n, r->o.ctx);
	}
	return w;
}

/* Each user event's filter (opts.event_filters), else opts.tp_filter on a tracepoint
 * event, on every fd of the event (the kernel checks the text). */
static int set_filters(struct pk_recorder *r)
{
	const struct pk_evsel *pos;
	int ncpu = pk_cpu_map__nr(pk_evlist__cpus(r->ev.el));
	int nthr = pk_thread_map__nr(pk_evlist__threads(r->ev.el));
	size_t i = 0, nuser = pk_event_list__count(r->events);

	pk_evlist__for_each_evsel(r->ev.el, pos) {
		const char *flt = NULL;
		if (i < r->o.nr_event_filters && i < nuser)
			flt = r->o.event_filters[i];
		if (!flt && pk_evsel__attr((struct pk_evsel *)pos)->attr.type == PERF_TYPE_TRACEPOINT)
			flt = r->o.tp_filter;
		i++;
		if (!flt)
			continue;
		for (int c = 0; c < ncpu; c++)
			for (int t = 0; t < nthr; t++) {
				int fd = pk_evsel__fd(pos, c, t), err;
				if (fd >= 0 && (err = pk_ioc_set_filter(fd, flt)) < 0) {
					failed(r, PK_RECORDER_FAIL_OPEN, err, flt);
					r->fail.event = r->ev.names[i - 1];
					pk_evlist__close(r->ev.el);
					return err;
				}
			}
	}
	return 0;
}

/* Enable or disable the leaders of the recorded events (dummy false), or the side-band
 * dummy alone (dummy true): start_disabled opens everything disabled, then turns the
 * side band on. 0 or the first -errno. */
static int ioc_events(struct pk_recorder *r, bool dummy, bool on)
{
	const struct pk_evsel *pos;
	int ncpu = pk_cpu_map__nr(pk_evlist__cpus(r->ev.el));
	int nthr = pk_thread_map__nr(pk_evlist__threads(r->ev.el));
	int i = 0, first = 0;

	pk_evlist__for_each_evsel(r->ev.el, pos) {
		bool is_dummy = i++ == r->ev.dummy_idx;
		if (pk_evsel__leader(pos) != pos || is_dummy != dummy)
			continue;
		for (int c = 0; c < ncpu; c++)
			for (int t = 0; t < nthr; t++) {
				int fd = pk_evsel__fd(pos, c, t), err = 0;
				if (fd >= 0)
					err = on ? pk_ioc_enable(fd, true) : pk_ioc_disable(fd, true);
				if (err < 0 && !first)
					first = err;
			}
	}
	return first;
}

PK_API int pk_recorder__enable(struct pk_recorder *r, bool on)
{
	if (!r || !r->opened || r->finished)
		return pk_err(-EINVAL);
	return pk_err(ioc_events(r, false, on));
}

PK_API int pk_recorder__open(struct pk_recorder *r)
{
	int err;

	if (!r)
		return pk_err(-EINVAL);
	if (r->opened || r->finished)
		return pk_err(-EALREADY);
	if (!r->built && (err = build(r)) < 0)
		return pk_err(err);

	PK_OPTS(pk_evlist_open_opts, oo, .inherit = !r->p.no_inherit,
		.enable_on_exec = r->o.workload && !r->o.system_wide && !r->o.start_disabled,
		.cgroup_fd = r->o.cgroup ? r->o.cgroup_fd : -1, .on_open = on_open, .ctx = r,
		.user_fallback = true, .sampling = true);
	err = pk_evlist__open(r->ev.el, &oo);
	if (err < 0)
		return pk_err(open_failed(r, r->ev.el, err, true));
	user_names(r);
	if ((r->o.tp_filter || r->o.nr_event_filters) && (err = set_filters(r)) < 0)
		return pk_err(err);
	if (r->ev.sb_el) {
		err = pk_evlist__open(r->ev.sb_el, &oo);
		if (err < 0) {
			open_failed(r, r->ev.sb_el, err, false);
			pk_evlist__close(r->ev.el);
			return pk_err(r->fail.err);
		}
	}
	r->opened = true;
	if ((err = map_rings(r)) < 0)
		goto fail;
	r->w = open_output(r, false);
	if (!r->w) {
		err = failed(r, PK_RECORDER_FAIL_OUTPUT, -errno, r->o.output ? r->o.output : "<fd>");
		if (err == -EBUSY)
			r->fail.pid = r->lock_holder;
		goto fail;
	}
	err = pk_rec_walk__init(&r->walk);
	if (!err)
		err = add_attrs(r, r->ev.el, false, false);
	if (!err)
		err = add_groups(r);
	if (!err && r->oc)
		err = add_offcpu_attrs(r, false);
	if (!err && r->ev.sb_el)
		err = add_attrs(r, r->ev.sb_el, true, false);
	if (!err)
		err = add_tracing_data(r);
	pk_rec_walk__seal(&r->walk);
	if (!err)
		err = pk_rec_synthesize(r, false);
	if (!err)
		err = make_pollfds(r);
	if (err < 0) {
		failed(r, PK_RECORDER_FAIL_WRITE, err, r->o.output ? r->o.output : "<fd>");
		goto fail;
	}
	/* without enable_on_exec, enable now, before a workload execs, so that its exec COMM
	 * and first mmaps are seen (the side-band evlist follows the same rule) */
	if (r->o.start_disabled) {
		ioc_events(r, true, true);
		if (r->ev.sb_el)
			pk_evlist__enable(r->ev.sb_el);
	} else if (!oo.enable_on_exec) {
		pk_evlist__enable(r->ev.el);
		if (r->ev.sb_el)
			pk_evlist__enable(r->ev.sb_el);
	}
	return 0;
fail:
	/* not retryable past the events' open: the caller frees the recorder */
	r->finished = true;
	return pk_err(err);
}

/* ---- draining ---- */

static int write_span(const void *p, size_t len, void *ctx)
{
	return write_bytes(ctx, p, len);
}

/* One pass over one ring: bytes written, or a negative error. */
static int64_t drain_ring(struct pk_recorder *r, struct pk_ring *ring)
{
	struct pk_ring_chunk c[2];
	int err = pk_ring__read_init(ring), n;
	uint64_t len;

	if (err == -EOVERFLOW)
		r->st.keepup++;
	else if (err < 0)
		return err;
	n = pk_ring__chunks(ring, c);
	if (n <= 0) {
		pk_ring__read_done(ring);
		return 0;
	}
	len = c[0].len + (n > 1 ? c[1].len : 0);
	pk_rec_walk__scan(&r->walk, c, n);
	pk_rec_capture_vdso(r);
	if (r->oc) {
		err = pk_rec_offcpu__scan(r->oc, c, n, write_span, r);
	} else {
		err = write_bytes(r, c[0].ptr, c[0].len);
		if (!err && n > 1)
			err = write_bytes(r, c[1].ptr, c[1].len);
	}
	pk_ring__advance(ring, len);
	pk_ring__read_done(ring);
	if (err < 0)
		return err;
	r->st.bytes += len;
	return (int64_t)len;
}

/* The end of a pass: the off-CPU samples of the blocked intervals that can be paired. */
static int write_offcpu(struct pk_recorder *r, int mode)
{
	size_t olen;
	int err = 0;

	if (!r->oc)
		return 0;
	pk_rec_offcpu__flush(r->oc, mode);
	const void *ob = pk_rec_offcpu__output(r->oc, &olen);
	if (olen)
		err = write_bytes(r, ob, olen);
	pk_rec_offcpu__consumed(r->oc);
	return err;
}

/* Off-CPU switches spooled, not yet decoded: their samples will come later with older
 * times, so no round may end (a reader flushes what a round ended; perf warns of "out of
 * order events"): the rounds resume once the spool is decoded. */
static bool offcpu_deferred(const struct pk_recorder *r)
{
	return r->oc && pk_rec_offcpu__deferred(r->oc);
}

static int64_t drain_set(struct pk_recorder *r, struct pk_evlist_mmap *mm)
{
	int64_t total = 0;
	for (int i = 0; mm && i < pk_evlist_mmap__nr(mm); i++) {
		int64_t n = drain_ring(r, pk_evlist_mmap__ring(mm, i));
		if (n < 0)
			return n;
		total += n;
	}
	if (total > 0 && mm == r->mm) {
		int err = write_offcpu(r, PK_OFFCPU_PASS);
		if (err < 0)
			return err;
	}
	return total;
}

/* The file cannot grow (disk full, reader gone): stop measuring now rather than when the
 * targets end; they run on undisturbed. */
static int write_failed(struct pk_recorder *r)
{
	if (r->fail.stage == PK_RECORDER_FAIL_NONE)
		failed(r, PK_RECORDER_FAIL_WRITE, r->write_err, r->o.output ? r->o.output : "<fd>");
	pk_evlist__disable(r->ev.el);
	return pk_err(r->write_err);
}

PK_API int pk_recorder__drain(struct pk_recorder *r, int timeout_ms)
{
	int64_t wrote;

	if (!r || !r->opened || r->finished)
		return pk_err(-EINVAL);
	if (r->write_err)
		return pk_err(r->write_err);
	wrote = drain_set(r, r->o.overwrite ? r->sb_mm : r->mm);
	if (wrote < 0)
		return write_failed(r);
	if (wrote > 0) {
		if (!r->o.overwrite && !offcpu_deferred(r))
			pk_data_writer__finish_round(r->w);
		/* off-CPU: every context switch of the targets writes, so the rings are never
		 * empty for long; the next pass waits for a ring's wake-up (half full) or the
		 * timeout rather than following the targets switch by switch, which takes the
		 * CPUs they switch on (bench/offcpu-overhead.sh) */
		if (!r->oc || timeout_ms <= 0)
			return 1;
	} else if (timeout_ms <= 0) {
		return 0;
	}
	struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };
	int n = ppoll(r->pfds, (nfds_t)r->npfds, &ts, r->has_mask ? &r->mask : NULL);
	if (n > 0) {
		r->st.wakeups++;
		for (int i = 0; i < r->npfds; i++) {
			if (r->pfds[i].fd >= 0 && (r->pfds[i].revents & (POLLHUP | POLLERR))) {
				r->pfds[i].fd = -1;
				r->nlive--;
			}
		}
	}
	/* every target thread has gone (-p/-t, a workload); system-wide fds never hang up */
	return r->nlive == 0 ? PK_RECORDER_HUNGUP : wrote > 0;
}

PK_API int pk_recorder__snapshot(struct pk_recorder *r)
{
	if (!r || !r->opened || r->finished || !r->o.overwrite)
		return pk_err(-EINVAL);
	if (r->write_err)
		return pk_err(r->write_err);
	if (drain_set(r, r->mm) < 0)
		return write_failed(r);
	return 0;
}

/* ---- the end ---- */

static bool pipe_output(const struct pk_recorder_opts *o)
{
	return o->pipe || (o->output && !strcmp(o->output, "-"));
}

/* Finish the current file (BUILD_ID feature, header) and rename it (file output,
 * rename_to set); describe it in *closed. The first write error, else the rename's. */
static int close_file(struct pk_recorder *r, const char *rename_to,
		      struct pk_recorder_file *closed)
{
	const struct pk_recorder_opts *o = &r->o;
	struct pk_recorder_file f = { .sz = sizeof(f) };
	const char *path = o->output;
	bool pipe = pipe_output(o);
	int err, rerr = 0;

	if (!pipe && !o->no_buildid)
		pk_rec_add_build_ids(r);
	pk_data_writer__stats(r->w, NULL, NULL, &f.samples, &r->st.file_bytes);
	if (pk_data_writer__sample_time(r->w, &f.first_ns, &f.last_ns) < 0)
		f.first_ns = f.last_ns = 0;
	err = r->write_err;
	int cerr = pk_data_writer__finish(r->w);
	pk_data_writer__free(r->w);
	r->w = NULL;
	if (!err)
		err = cerr;
	if (!pipe && path && rename_to) {
		/* still under the path's lock: no other recorder has created it meanwhile */
		if (rename(path, rename_to) < 0)
			rerr = -errno;
		else
			path = rename_to;
	}
	if (!pipe) {
		struct stat sb;
		if (path ? stat(path, &sb) == 0 : fstat(o->output_fd, &sb) == 0)
			r->st.file_bytes = (uint64_t)sb.st_size;
	}
	f.bytes = r->st.file_bytes;
	if (closed)
		PK_OUT_COPY(closed, &f);
	return err ? err : rerr;
}

PK_API int pk_recorder__finish_as(struct pk_recorder *r, const char *rename_to,
				  struct pk_recorder_file *closed)
{
	const struct pk_recorder_opts *o;
	int64_t n;
	int err;

	if (!r || !r->opened || r->finished)
		return pk_err(-EINVAL);
	o = &r->o;
	r->finished = true;
	/* a final pass over every ring (the overwrite snapshot included); the end of the
	 * recording counts as a wake-up, as in perf's summary */
	r->st.wakeups++;
	/* the events stop first: rings that keep filling (a recording of the recorder's own
	 * system calls writes an event for each write of the drain) would never empty */
	pk_evlist__disable(r->ev.el);
	if (r->ev.sb_el)
		pk_evlist__disable(r->ev.sb_el);
	if (!r->write_err) {
		if (o->overwrite) {
			drain_set(r, r->sb_mm);
			drain_set(r, r->mm);
		}
		while ((n = drain_set(r, o->overwrite ? r->sb_mm : r->mm)) > 0)
			if (!offcpu_deferred(r))
				pk_data_writer__finish_round(r->w);
		if (r->oc && write_offcpu(r, PK_OFFCPU_ALL) == 0)
			pk_data_writer__finish_round(r->w);
	}
	err = close_file(r, rename_to, closed);
	/* the file is complete: the next writer of the path may rename it now */
	pk_data_lock__release(r->lock);
	r->lock = NULL;
	if (err < 0) {
		if (r->fail.stage == PK_RECORDER_FAIL_NONE)
			failed(r, PK_RECORDER_FAIL_WRITE, err, o->output ? o->output : "<fd>");
		return pk_err(err);
	}
	return 0;
}

PK_API int pk_recorder__finish(struct pk_recorder *r)
{
	return pk_recorder__finish_as(r, NULL, NULL);
}

/* The attrs, groups, tracing data and state of a new file of a rotation. */
static int start_next_file(struct pk_recorder *r)
{
	int err;

	r->w = open_output(r, true);
	if (!r->w)
		return -errno;
	pk_rec_walk__clear_files(&r->walk);
	err = add_attrs(r, r->ev.el, false, true);
	if (!err)
		err = add_groups(r);
	if (!err && r->oc)
		err = add_offcpu_attrs(r, true);
	if (!err && r->ev.sb_el)
		err = add_attrs(r, r->ev.sb_el, true, true);
	if (!err)
		err = add_tracing_data(r);
	if (!err)
		err = pk_rec_synthesize(r, true);
	return err;
}

PK_API int pk_recorder__switch_output(struct pk_recorder *r, const char *rename_to,
				      struct pk_recorder_file *closed)
{
	const struct pk_recorder_opts *o;
	int err;

	if (!r || !r->opened || r->finished || !r->w || !r->o.output || pipe_output(&r->o))
		return pk_err(-EINVAL);
	o = &r->o;
	if (r->write_err)
		return pk_err(r->write_err);
	/* One pass: each ring up to its head now. What the kernel writes after a ring's
	 * pass stays in the ring (the tail is published exactly at the end of what was
	 * written) and opens the next file: nothing is lost or written twice. */
	int64_t wrote = drain_set(r, o->overwrite ? r->sb_mm : r->mm);
	if (wrote < 0)
		return write_failed(r);
	/* the off-CPU samples of the switches spooled so far belong to this file */
	if (write_offcpu(r, PK_OFFCPU_BATCH) < 0)
		return write_failed(r);
	if (wrote > 0 || r->oc)
		pk_data_writer__finish_round(r->w);
	err = close_file(r, rename_to, closed);
	if (err < 0 && r->write_err)
		return write_failed(r);
	int serr = start_next_file(r);
	if (serr < 0) {
		r->write_err = serr;
		return write_failed(r);
	}
	return err < 0 ? pk_err(err) : 0;
}

PK_API void pk_recorder__stats(const struct pk_recorder *r, struct pk_recorder_stats *st)
{
	struct pk_recorder_stats s;

	if (!st)
		return;
	memset(&s, 0, sizeof(s));
	if (r) {
		s = r->st;
		s.samples = r->walk.samples;
		s.lost = r->walk.lost;
		s.lost_records = r->walk.lost_records;
		s.lost_samples = r->walk.lost_samples;
		s.buildid_cache_err_file = r->bid_err_file;
		if (r->w) /* the current file so far */
			pk_data_writer__stats(r->w, NULL, NULL, NULL, &s.file_bytes);
		if (r->oc) {
			/* the samples of the file: the switches' became offcpu-time's */
			uint64_t filtered;
			pk_rec_offcpu__stats(r->oc, &s.offcpu_samples, &s.offcpu_dropped, &filtered);
			s.samples = s.samples - filtered + s.offcpu_samples + pk_rec_offcpu__wakers(r->oc);
		}
	}
	s.sz = sizeof(s);
	PK_OUT_COPY(st, &s);
}

PK_API void pk_recorder__free(struct pk_recorder *r)
{
	if (!r)
		return;
	if (r->w) {
		/* never stopped: still a file perf can read */
		pk_data_writer__finish(r->w);
		pk_data_writer__free(r->w);
	}
	free(r->pfds);
	pk_evlist_mmap__free(r->mm);
	pk_evlist_mmap__free(r->sb_mm);
	pk_rec_events__release(&r->ev);
	free(r->attrs);
	free(r->attr_ok);
	pk_rec_walk__release(&r->walk);
	pk_rec_offcpu__free(r->oc);
	if (r->vdso_fd >= 0)
		close(r->vdso_fd);
	pk_event_list__free(r->own_events);
	free(r->bid_err_file);
	free(r->tdata);
	free(r->kmaps);
	pk_rec_nameset__release(&r->cached);
	pk_data_lock__release(r->lock);
	free(r);
}
