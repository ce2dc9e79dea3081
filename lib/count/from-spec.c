/* SPDX-License-Identifier: MIT */
/*
 * lib/count/from-spec.c - evsels from parsed event specs (perf -e syntax): one evsel per
 * event, group leaders and members linked, flags and scales carried over.
 */
#include <stdlib.h>
#include "internal.h"
#include <perfkit/count.h>
#include <perfkit/event.h>

PK_API int pk_evlist__add_events(struct pk_evlist *el, const struct pk_event_list *list)
{
	size_t n = pk_event_list__count(list);
	struct {
		int group;
		struct pk_evsel *leader;
	} *leaders;
	size_t nleaders = 0;
	int err = 0;

	if (!el || !list)
		return pk_err(-EINVAL);
	if (!(leaders = calloc(n ? n : 1, sizeof(*leaders))))
		return pk_err(-ENOMEM);
	for (size_t i = 0; i < n; i++) {
		const struct pk_event_spec *sp = pk_event_list__get(list, i);
		int group = pk_event_spec__group(sp);
		struct pk_evsel *ev = pk_evsel__new(pk_event_spec__attr(sp), pk_event_spec__name(sp));
		if (!ev) {
			err = -ENOMEM;
			break;
		}
		pk_evsel__set_flags(ev, pk_event_spec__flags(sp));
		pk_evsel__set_scale(ev, pk_event_spec__scale(sp), pk_event_spec__unit(sp));
		if (group >= 0 && !pk_event_spec__is_leader(sp)) {
			struct pk_evsel *leader = NULL;
			for (size_t j = 0; j < nleaders; j++)
				if (leaders[j].group == group)
					leader = leaders[j].leader;
			if (leader && (err = pk_evsel__set_leader(ev, leader)) < 0) {
				pk_evsel__free(ev);
				break;
			}
		}
		if ((err = pk_evlist__add(el, ev)) < 0)
			break;
		if (group >= 0 && pk_event_spec__is_leader(sp)) {
			leaders[nleaders].group = group;
			leaders[nleaders++].leader = ev;
		}
	}
	free(leaders);
	return err < 0 ? pk_err(err) : 0;
}
