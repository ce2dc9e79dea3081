/* SPDX-License-Identifier: MIT */
/*
 * lib/event/spec.c - the objects the event parser fills: an event list (pk_event_list)
 * of parsed events (pk_event_spec), and the getters of both.
 */
#include <stdlib.h>
#include <unistd.h>
#include "parser-internal.h"

/* ---- list and getters ---- */

void pk_ep_spec_free(struct pk_event_spec *e)
{
	if (!e)
		return;
	free(e->name);
	free(e->pmu);
	free(e->callgraph);
	free(e->unit);
	free(e->probe);
	free(e->probe_file);
	if (e->probe_fd >= 0)
		close(e->probe_fd);
	free(e);
}

PK_API struct pk_event_list *pk_event_list__new(void)
{
	struct pk_event_list *l = calloc(1, sizeof(*l));
	if (!l)
		return pk_err_ptr(-ENOMEM);
	return l;
}

PK_API void pk_event_list__free(struct pk_event_list *list)
{
	if (!list)
		return;
	PK_PTRS_FREE(list->v, list->n, pk_ep_spec_free);
	free(list);
}

PK_API size_t pk_event_list__count(const struct pk_event_list *list)
{
	return list ? list->n : 0;
}

PK_API const struct pk_event_spec *pk_event_list__get(const struct pk_event_list *list, size_t i)
{
	return PK_PTRS_AT(list, v, n, i, -ENOENT);
}

PK_API const struct pk_attr *pk_event_spec__attr(const struct pk_event_spec *ev)
{
	return ev ? &ev->attr : NULL;
}
PK_API enum pk_event_kind pk_event_spec__kind(const struct pk_event_spec *ev)
{
	return ev ? ev->kind : PK_EV_RAW;
}
PK_API const char *pk_event_spec__name(const struct pk_event_spec *ev)
{
	return ev ? ev->name : NULL;
}
PK_API const char *pk_event_spec__pmu(const struct pk_event_spec *ev)
{
	return ev ? ev->pmu : NULL;
}
PK_API int pk_event_spec__group(const struct pk_event_spec *ev)
{
	return ev ? ev->group : -1;
}
PK_API bool pk_event_spec__is_leader(const struct pk_event_spec *ev)
{
	return ev && ev->leader;
}
PK_API unsigned pk_event_spec__flags(const struct pk_event_spec *ev)
{
	return ev ? ev->flags : 0;
}
PK_API const char *pk_event_spec__callgraph(const struct pk_event_spec *ev)
{
	return ev ? ev->callgraph : NULL;
}
PK_API uint32_t pk_event_spec__stack_size(const struct pk_event_spec *ev)
{
	return ev ? ev->stack_size : 0;
}
PK_API double pk_event_spec__scale(const struct pk_event_spec *ev)
{
	return ev ? ev->scale : 1.0;
}
PK_API const char *pk_event_spec__unit(const struct pk_event_spec *ev)
{
	return ev ? ev->unit : NULL;
}
