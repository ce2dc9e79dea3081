/* SPDX-License-Identifier: MIT */
/*
 * lib/self/counter.c - counting a region of the calling thread's own code (open a spec
 * string, start, stop, read scaled values), on an evlist.
 */
#include <stdlib.h>
#include "internal.h"
#include <perfkit/event.h>
#include <perfkit/self.h>

struct pk_self_counter {
	struct pk_evlist *el;
	bool started;
};

PK_API struct pk_self_counter *pk_self_counter__open(const char *spec)
{
	struct pk_self_counter *sc;
	struct pk_event_list *list;
	pid_t self = 0;
	int err;
	PK_OPTS(pk_evlist_open_opts, oo, .skip_unsupported = true, .cgroup_fd = -1);

	if (!spec)
		return pk_err_ptr(-EINVAL);
	if (!(list = pk_event_list__new()))
		return NULL;
	err = pk_event_list__parse(list, spec, NULL, NULL);
	if (err < 0) {
		pk_event_list__free(list);
		return pk_err_ptr(err);
	}
	if (!(sc = calloc(1, sizeof(*sc))) || !(sc->el = pk_evlist__new())) {
		free(sc);
		pk_event_list__free(list);
		return pk_err_ptr(-ENOMEM);
	}
	err = pk_evlist__add_events(sc->el, list);
	pk_event_list__free(list);
	/* pid 0 = the calling thread, on any CPU */
	if (!err)
		err = pk_evlist__set_maps(sc->el, pk_cpu_map__new_dummy(),
					  pk_thread_map__new_array(&self, 1));
	if (!err)
		err = pk_evlist__open(sc->el, &oo);
	if (err) {
		pk_self_counter__free(sc);
		return pk_err_ptr(err);
	}
	return sc;
}

PK_API int pk_self_counter__start(struct pk_self_counter *sc)
{
	int err;
	if (!sc)
		return pk_err(-EINVAL);
	/* the base is a read, not PERF_EVENT_IOC_RESET: reset does not clear the enabled and
	 * running times, so deltas keep scaling right across repeated start/stop */
	if ((err = pk_evlist__read(sc->el)) < 0)
		return err;
	pk_evlist__save_counts(sc->el);
	sc->started = true;
	return pk_evlist__enable(sc->el);
}

PK_API int pk_self_counter__stop(struct pk_self_counter *sc)
{
	int err;
	if (!sc)
		return pk_err(-EINVAL);
	if ((err = pk_evlist__disable(sc->el)) < 0)
		return err;
	return pk_evlist__read(sc->el);
}

PK_API int pk_self_counter__nr(const struct pk_self_counter *sc)
{
	return sc ? pk_evlist__nr_evsels(sc->el) : 0;
}

PK_API const char *pk_self_counter__name(const struct pk_self_counter *sc, int idx)
{
	struct pk_evsel *ev;
	int i = 0;
	if (!sc)
		return NULL;
	pk_evlist__for_each_evsel(sc->el, ev)
		if (i++ == idx)
			return pk_evsel__name(ev);
	return NULL;
}

PK_API int pk_self_counter__read(struct pk_self_counter *sc, struct pk_count *out, size_t max)
{
	struct pk_evsel *ev;
	size_t i = 0;
	int err;
	if (!sc)
		return pk_err(-EINVAL);
	if ((err = pk_evlist__read(sc->el)) < 0)
		return err;
	pk_evlist__for_each_evsel(sc->el, ev) {
		if (i < max && out)
			pk_evsel__aggregate(ev, PK_AGGR_GLOBAL, NULL, sc->started ? PK_AGGR_DELTA : 0,
					    &out[i]);
		i++;
	}
	return (int)i;
}

PK_API struct pk_evlist *pk_self_counter__evlist(struct pk_self_counter *sc)
{
	return sc ? sc->el : NULL;
}

PK_API void pk_self_counter__free(struct pk_self_counter *sc)
{
	if (!sc)
		return;
	pk_evlist__free(sc->el);
	free(sc);
}
