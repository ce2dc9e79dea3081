/* SPDX-License-Identifier: MIT */
/*
 * lib/self/counter.c - counting a region of the calling thread's own code (open a spec
 * string, start, stop, read scaled values): a thin layer over pk_self_reader, the one
 * object that counts one's own thread (regions use it too), which reads with rdpmc where
 * the control page allows and with read(2) otherwise.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include <perfkit/event.h>
#include <perfkit/self.h>

struct pk_self_counter {
	struct pk_self_reader *r;
	int nr;
	bool started;
	struct pk_count_value *base; /* the values at the last start */
	struct pk_count_value *now;  /* scratch for reads */
};

PK_API struct pk_self_counter *pk_self_counter__open(const char *spec)
{
	struct pk_self_counter *sc;

	if (!spec)
		return pk_err_ptr(-EINVAL);
	/* events form groups only where the spec has braces: one group of events that do
	 * not fit the counters together would never count, where separate ones multiplex */
	PK_OPTS(pk_self_reader_opts, ro, .disabled = true, .separate = !strchr(spec, '{'));
	if (!(sc = calloc(1, sizeof(*sc))))
		return pk_err_ptr(-ENOMEM);
	sc->r = pk_self_reader__open(spec, &ro);
	if (!sc->r) {
		int err = -errno;
		free(sc);
		return pk_err_ptr(err);
	}
	sc->nr = pk_self_reader__nr(sc->r);
	sc->base = calloc((size_t)sc->nr, sizeof(*sc->base));
	sc->now = calloc((size_t)sc->nr, sizeof(*sc->now));
	if (!sc->base || !sc->now) {
		pk_self_counter__free(sc);
		return pk_err_ptr(-ENOMEM);
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
	if ((err = pk_self_reader__read(sc->r, sc->base, (size_t)sc->nr)) < 0)
		return err;
	sc->started = true;
	return pk_self_reader__enable(sc->r);
}

PK_API int pk_self_counter__stop(struct pk_self_counter *sc)
{
	if (!sc)
		return pk_err(-EINVAL);
	return pk_self_reader__disable(sc->r);
}

PK_API int pk_self_counter__nr(const struct pk_self_counter *sc)
{
	return sc ? sc->nr : 0;
}

PK_API const char *pk_self_counter__name(const struct pk_self_counter *sc, int idx)
{
	return sc ? pk_self_reader__name(sc->r, idx) : NULL;
}

PK_API int pk_self_counter__read(struct pk_self_counter *sc, struct pk_count *out, size_t max)
{
	int err;
	if (!sc)
		return pk_err(-EINVAL);
	if ((err = pk_self_reader__read(sc->r, sc->now, (size_t)sc->nr)) < 0)
		return err;
	for (int i = 0; i < sc->nr && (size_t)i < max && out; i++) {
		if (!pk_self_reader__supported(sc->r, i)) {
			memset(&out[i], 0, sizeof(out[i]));
			out[i].status = PK_COUNT_NOT_SUPPORTED;
			continue;
		}
		const struct pk_count_value *b = &sc->base[i], *n = &sc->now[i];
		/* since start (counters only grow; a wrapped difference would be garbage) */
		uint64_t v = n->val, e = n->ena, r = n->run;
		if (sc->started && v >= b->val && e >= b->ena && r >= b->run) {
			v -= b->val;
			e -= b->ena;
			r -= b->run;
		}
		pk_count__scale(v, e, r, &out[i]);
	}
	return sc->nr;
}

PK_API struct pk_self_reader *pk_self_counter__reader(struct pk_self_counter *sc)
{
	return sc ? sc->r : NULL;
}

PK_API void pk_self_counter__free(struct pk_self_counter *sc)
{
	if (!sc)
		return;
	pk_self_reader__free(sc->r);
	free(sc->base);
	free(sc->now);
	free(sc);
}
