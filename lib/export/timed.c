/* SPDX-License-Identifier: MIT */
/*
 * lib/export/timed.c - the time-ordered formats, written from the profile's timeline:
 * speedscope's file format, the Firefox Profiler's Gecko format and our JSON sample
 * stream.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "export-internal.h"

static const char *kind_name(uint8_t k)
{
	switch (k) {
	case PK_FRAME_USER: return "user";
	case PK_FRAME_KERNEL: return "kernel";
	case PK_FRAME_JIT: return "jit";
	case PK_FRAME_COMM: return "comm";
	default: return "unknown";
	}
}

static inline bool node_is_comm(const struct pk_profile *p, uint32_t n)
{
	return p->func[p->loc[p->node[n].loc].func].kind == PK_FRAME_COMM;
}

/*
 * Group the time-ordered samples by key (event, thread): returns a malloc'd array of the
 * sample indices (stable within a group) and fills start[] (nr_groups + 1 entries).
 */
static uint32_t *group_by_thread(const struct pk_profile *p, const uint32_t *order,
				 uint32_t **startp)
{
	size_t groups = (size_t)p->nr_event * (p->nr_thread ? p->nr_thread : 1);
	uint32_t *start = calloc(groups + 1, sizeof(*start));
	uint32_t *out = malloc((p->nr_time ? p->nr_time : 1) * sizeof(*out));
	if (!start || !out) {
		free(start);
		free(out);
		return NULL;
	}
	for (size_t i = 0; i < p->nr_time; i++) {
		const struct pk_xtime *t = &p->timeline[i];
		start[(size_t)t->event * p->nr_thread + t->thread + 1]++;
	}
	for (size_t g = 0; g < groups; g++)
		start[g + 1] += start[g];
	uint32_t *fill = malloc((groups + 1) * sizeof(*fill));
	if (!fill) {
		free(start);
		free(out);
		return NULL;
	}
	memcpy(fill, start, (groups + 1) * sizeof(*fill));
	for (size_t i = 0; i < p->nr_time; i++) {
		const struct pk_xtime *t = &p->timeline[order[i]];
		out[fill[(size_t)t->event * p->nr_thread + t->thread]++] = order[i];
	}
	free(fill);
	*startp = start;
	return out;
}

/* ------------------------------------------------------------------------------------ */
/* speedscope                                                                           */

int pk_export__speedscope(const struct pk_profile *p, FILE *f,
			  const struct pk_speedscope_opts *opts)
{
	if (!p || !f || !p->o.timeline || !PK_OPTS_VALID(opts, pk_speedscope_opts))
		return pk_err(-EINVAL);
	int err = 0;
	uint32_t *order = pk_xtimeline_order(p), *start = NULL, *grouped = NULL;
	uint32_t *frame_of = malloc(((size_t)p->nr_func + 1) * sizeof(*frame_of));
	uint32_t *path = malloc(1025 * sizeof(*path));
	if (!order || !frame_of || !path || !(grouped = group_by_thread(p, order, &start))) {
		err = -ENOMEM;
		goto out;
	}
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", f);
	fputs("\"exporter\":\"perfkit\",\"name\":", f);
	pk_xjson_str(f, pk_xstr(p, p->title));
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	uint32_t nr_frames = 0;
	for (uint32_t i = 0; i < p->nr_func; i++) {
		const struct pk_xfunc *fn = &p->func[i];
		frame_of[i] = PK_NONE;
		if (fn->kind == PK_FRAME_COMM)
			continue;
		frame_of[i] = nr_frames++;
		fputs(nr_frames > 1 ? ",{\"name\":" : "{\"name\":", f);
		pk_xjson_str(f, pk_xstr(p, fn->name));
		if (fn->file) {
			fputs(",\"file\":", f);
			pk_xjson_str(f, pk_xstr(p, fn->file));
			if (fn->line)
				fprintf(f, ",\"line\":%" PRIu32, fn->line);
		} else if (fn->dso) {
			fputs(",\"file\":", f);
			pk_xjson_str(f, pk_xstr(p, fn->dso));
		}
		putc('}', f);
	}
	fputs("]},\"profiles\":[", f);
	bool first_profile = true;
	for (uint32_t e = 0; e < p->nr_event; e++) {
		bool ns = !strcmp(pk_xstr(p, p->event[e].unit), "nanoseconds");
		for (uint32_t th = 0; th < p->nr_thread; th++) {
			size_t g = (size_t)e * p->nr_thread + th;
			if (start[g] == start[g + 1])
				continue;
			const struct pk_xthread *t = &p->thread[th];
			if (!first_profile)
				putc(',', f);
			first_profile = false;
			char name[512];
			snprintf(name, sizeof(name), "%s (pid %" PRId32 ", tid %" PRId32 ") %s",
				 pk_xstr(p, t->comm), (int32_t)t->pid, (int32_t)t->tid,
				 pk_xstr(p, p->event[e].name));
			fputs("{\"type\":\"sampled\",\"name\":", f);
			pk_xjson_str(f, name);
			fprintf(f, ",\"unit\":\"%s\",\"startValue\":0", ns ? "nanoseconds" : "none");
			/* consecutive samples with the same stack are merged into one */
			uint64_t total = 0;
			fputs(",\"samples\":[", f);
			size_t nout = 0;
			for (uint32_t i = start[g]; i < start[g + 1];) {
				uint32_t node = p->timeline[grouped[i]].node;
				uint32_t j = i;
				while (j < start[g + 1] && p->timeline[grouped[j]].node == node)
					j++;
				size_t depth = 0;
				for (uint32_t n = node; n != PK_NONE && depth < 1025;
				     n = p->node[n].parent)
					if (!node_is_comm(p, n))
						path[depth++] = frame_of[p->loc[p->node[n].loc].func];
				fputs(nout++ ? ",[" : "[", f);
				for (size_t d = depth; d-- > 0;)
					fprintf(f, d + 1 == depth ? "%" PRIu32 : ",%" PRIu32, path[d]);
				putc(']', f);
				i = j;
			}
			fputs("],\"weights\":[", f);
			nout = 0;
			for (uint32_t i = start[g]; i < start[g + 1];) {
				uint32_t node = p->timeline[grouped[i]].node;
				uint64_t w = 0;
				while (i < start[g + 1] && p->timeline[grouped[i]].node == node)
					w += p->timeline[grouped[i++]].period;
				total += w;
				fprintf(f, nout++ ? ",%" PRIu64 : "%" PRIu64, w);
			}
			fprintf(f, "],\"endValue\":%" PRIu64 "}", total);
		}
	}
	fputs("]}\n", f);
	err = pk_xfinish(f);
out:
	free(order);
	free(start);
	free(grouped);
	free(frame_of);
	free(path);
	return err < 0 ? pk_err(err) : 0;
}

/* ------------------------------------------------------------------------------------ */
/* Gecko (Firefox Profiler)                                                             */

/* Category indices of meta.categories below. */
static unsigned gecko_category(uint8_t kind)
{
	switch (kind) {
	case PK_FRAME_USER: return 0;
	case PK_FRAME_KERNEL: return 1;
	case PK_FRAME_JIT: return 2;
	default: return 3;
	}
}

/*
 * A native frame's location string as the Firefox Profiler reads it (and as perf's own
 * Gecko converter writes it): "function (in library)", which it splits into a function
 * and a library resource. Without a usable library name: the bare function name.
 */
static int gecko_location(FILE *f, const struct pk_profile *p, const struct pk_xfunc *fn)
{
	const char *name = pk_xstr(p, fn->name), *dso = pk_xstr(p, fn->dso);
	const char *base = strrchr(dso, '/');
	base = base && base[1] ? base + 1 : dso;
	if (!*base || strpbrk(base, "()")) {
		pk_xjson_str(f, name);
		return 0;
	}
	size_t n = strlen(name) + strlen(base) + 8;
	char *s = malloc(n);
	if (!s)
		return -ENOMEM;
	snprintf(s, n, "%s (in %s)", name, base);
	pk_xjson_str(f, s);
	free(s);
	return 0;
}

int pk_export__gecko(const struct pk_profile *p, FILE *f, const struct pk_gecko_opts *opts)
{
	if (!p || !f || !p->o.timeline || !PK_OPTS_VALID(opts, pk_gecko_opts))
		return pk_err(-EINVAL);
	uint32_t event = PK_OPTS_GET(opts, event, 0);
	if (p->nr_event && event >= p->nr_event)
		return pk_err(-EINVAL);
	int err = 0;
	uint32_t *order = pk_xtimeline_order(p), *start = NULL, *grouped = NULL;
	uint32_t *stack_of = malloc(((size_t)p->nr_node + 1) * sizeof(*stack_of));
	uint32_t *frame_of = malloc(((size_t)p->nr_func + 1) * sizeof(*frame_of));
	/* per thread: the nodes/functions touched, in table order */
	uint32_t *nodes = malloc(((size_t)p->nr_node + 1) * sizeof(*nodes));
	uint32_t *funcs = malloc(((size_t)p->nr_func + 1) * sizeof(*funcs));
	uint32_t *path = malloc(1025 * sizeof(*path));
	if (!order || !stack_of || !frame_of || !nodes || !funcs || !path ||
	    (p->nr_event && !(grouped = group_by_thread(p, order, &start)))) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < p->nr_node; i++)
		stack_of[i] = PK_NONE;
	for (uint32_t i = 0; i < p->nr_func; i++)
		frame_of[i] = PK_NONE;
	uint64_t t0 = p->nr_time ? p->timeline[order[0]].time : 0;
	double interval = 1.0;
	if (p->nr_time > 1) {
		uint64_t span = p->timeline[order[p->nr_time - 1]].time - t0;
		if (span)
			interval = (double)span / 1e6 / (double)(p->nr_time - 1);
	}
	fprintf(f, "{\"meta\":{\"version\":27,\"interval\":%.6f,\"startTime\":%.3f,"
		"\"shutdownTime\":null,\"processType\":0,\"product\":", interval,
		(double)p->epoch_ns / 1e6);
	pk_xjson_str(f, pk_xstr(p, p->title));
	fputs(",\"platform\":\"Linux\",\"oscpu\":\"\",\"abi\":\"\",\"misc\":\"\","
	      "\"toolkit\":\"\",\"stackwalk\":1,\"debug\":false,\"gcpoison\":false,"
	      "\"asyncstack\":false,\"startup\":false,\"pausedRanges\":[],"
	      "\"extensions\":{\"schema\":{\"id\":0,\"name\":1,\"baseURL\":2},\"length\":0,"
	      "\"data\":[]},\"markerSchema\":[],"
	      "\"categories\":["
	      "{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
	      "{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
	      "{\"name\":\"JIT\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	      "{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]}]},"
	      "\"libs\":[],\"pausedRanges\":[],\"processes\":[],\"threads\":[", f);
	bool first_thread = true;
	for (uint32_t th = 0; p->nr_event && th < p->nr_thread; th++) {
		size_t g = (size_t)event * p->nr_thread + th;
		if (start[g] == start[g + 1])
			continue;
		const struct pk_xthread *t = &p->thread[th];
		uint32_t nr_nodes = 0, nr_funcs = 0;
		/* assign stack and frame indices in first-use order */
		for (uint32_t i = start[g]; i < start[g + 1]; i++) {
			uint32_t node = p->timeline[grouped[i]].node;
			size_t depth = 0;
			for (uint32_t n = node; n != PK_NONE && stack_of[n] == PK_NONE && depth < 1025;
			     n = p->node[n].parent)
				path[depth++] = n;
			for (size_t d = depth; d-- > 0;) {
				uint32_t n = path[d];
				if (node_is_comm(p, n))
					continue;
				stack_of[n] = nr_nodes;
				nodes[nr_nodes++] = n;
				uint32_t fn = p->loc[p->node[n].loc].func;
				if (frame_of[fn] == PK_NONE) {
					frame_of[fn] = nr_funcs;
					funcs[nr_funcs++] = fn;
				}
			}
		}
		if (!first_thread)
			putc(',', f);
		first_thread = false;
		fputs("{\"name\":", f);
		pk_xjson_str(f, pk_xstr(p, t->comm));
		fprintf(f, ",\"processName\":");
		pk_xjson_str(f, pk_xstr(p, t->comm));
		fprintf(f, ",\"processType\":\"default\",\"pid\":%" PRId32 ",\"tid\":%" PRId32
			",\"registerTime\":0,\"unregisterTime\":null,"
			"\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,"
			"\"phase\":3,\"category\":4,\"data\":5},\"data\":[]},"
			"\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2,"
			"\"weight\":3},\"weightType\":\"samples\",\"data\":[", (int32_t)t->pid,
			(int32_t)t->tid);
		for (uint32_t i = start[g]; i < start[g + 1]; i++) {
			const struct pk_xtime *x = &p->timeline[grouped[i]];
			/* the stack of a sample is its innermost non-comm node */
			uint32_t n = x->node;
			while (n != PK_NONE && node_is_comm(p, n))
				n = p->node[n].parent;
			if (n == PK_NONE)
				fputs(i == start[g] ? "[null" : ",[null", f);
			else
				fprintf(f, i == start[g] ? "[%" PRIu32 : ",[%" PRIu32, stack_of[n]);
			fprintf(f, ",%.6f,0,1]", (double)(x->time - t0) / 1e6);
		}
		fputs("]},\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[", f);
		for (uint32_t i = 0; i < nr_nodes; i++) {
			uint32_t n = nodes[i], par = p->node[n].parent;
			while (par != PK_NONE && node_is_comm(p, par))
				par = p->node[par].parent;
			if (par == PK_NONE)
				fprintf(f, i ? ",[null,%" PRIu32 "]" : "[null,%" PRIu32 "]",
					frame_of[p->loc[p->node[n].loc].func]);
			else
				fprintf(f, i ? ",[%" PRIu32 ",%" PRIu32 "]" : "[%" PRIu32 ",%" PRIu32 "]",
					stack_of[par], frame_of[p->loc[p->node[n].loc].func]);
		}
		fputs("]},\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,"
		      "\"innerWindowID\":2,\"implementation\":3,\"line\":4,\"column\":5,"
		      "\"category\":6,\"subcategory\":7},\"data\":[", f);
		for (uint32_t i = 0; i < nr_funcs; i++) {
			const struct pk_xfunc *fn = &p->func[funcs[i]];
			/* frame i's location is string i */
			fprintf(f, "%s[%" PRIu32 ",false,0,null,", i ? "," : "", i);
			if (fn->line)
				fprintf(f, "%" PRIu32, fn->line);
			else
				fputs("null", f);
			fprintf(f, ",null,%u,0]", gecko_category(fn->kind));
		}
		fputs("]},\"stringTable\":[", f);
		for (uint32_t i = 0; i < nr_funcs; i++) {
			if (i)
				putc(',', f);
			if (gecko_location(f, p, &p->func[funcs[i]])) {
				err = -ENOMEM;
				goto out;
			}
		}
		fputs("]}", f);
		/* reset the maps for the next thread */
		for (uint32_t i = 0; i < nr_nodes; i++)
			stack_of[nodes[i]] = PK_NONE;
		for (uint32_t i = 0; i < nr_funcs; i++)
			frame_of[funcs[i]] = PK_NONE;
	}
	fputs("]}\n", f);
	err = pk_xfinish(f);
out:
	free(order);
	free(start);
	free(grouped);
	free(stack_of);
	free(frame_of);
	free(nodes);
	free(funcs);
	free(path);
	return err < 0 ? pk_err(err) : 0;
}

/* ------------------------------------------------------------------------------------ */
/* JSON sample stream                                                                   */

int pk_export__json(const struct pk_profile *p, FILE *f, const struct pk_json_export_opts *opts)
{
	if (!p || !f || !p->o.timeline || !PK_OPTS_VALID(opts, pk_json_export_opts))
		return pk_err(-EINVAL);
	uint32_t *order = pk_xtimeline_order(p);
	if (!order)
		return pk_err(-ENOMEM);
	for (size_t i = 0; i < p->nr_time; i++) {
		const struct pk_xtime *x = &p->timeline[order[i]];
		const struct pk_xthread *t = &p->thread[x->thread];
		fputs("{\"type\":\"SAMPLE\",\"event\":", f);
		pk_xjson_str(f, pk_xstr(p, p->event[x->event].name));
		fprintf(f, ",\"pid\":%" PRId32 ",\"tid\":%" PRId32 ",\"comm\":", (int32_t)t->pid,
			(int32_t)t->tid);
		pk_xjson_str(f, pk_xstr(p, t->comm));
		fprintf(f, ",\"time\":%" PRIu64 ",\"period\":%" PRIu64, x->time, x->period);
		/* the addresses as perfkit script --json prints them, leaf first */
		bool first_ip = true;
		for (uint32_t n = x->node; n != PK_NONE; n = p->node[n].parent) {
			const struct pk_xloc *l = &p->loc[p->node[n].loc];
			if (p->func[l->func].kind == PK_FRAME_COMM || l->inlined)
				continue;
			if (first_ip)
				fprintf(f, ",\"ip\":\"0x%" PRIx64 "\",\"callchain\":[", l->addr);
			fprintf(f, first_ip ? "\"0x%" PRIx64 "\"" : ",\"0x%" PRIx64 "\"", l->addr);
			first_ip = false;
		}
		fputs(first_ip ? ",\"stack\":[" : "],\"stack\":[", f);
		bool first = true;
		for (uint32_t n = x->node; n != PK_NONE; n = p->node[n].parent) {
			const struct pk_xloc *l = &p->loc[p->node[n].loc];
			const struct pk_xfunc *fn = &p->func[l->func];
			if (fn->kind == PK_FRAME_COMM)
				continue;
			fputs(first ? "{\"name\":" : ",{\"name\":", f);
			first = false;
			pk_xjson_str(f, pk_xstr(p, fn->name));
			fputs(",\"dso\":", f);
			pk_xjson_str(f, pk_xstr(p, fn->dso));
			if (l->addr)
				fprintf(f, ",\"addr\":\"0x%" PRIx64 "\"", l->addr);
			uint32_t line = l->line ? l->line : fn->line;
			if (fn->file) {
				fputs(",\"file\":", f);
				pk_xjson_str(f, pk_xstr(p, fn->file));
			}
			if (line)
				fprintf(f, ",\"line\":%" PRIu32, line);
			fprintf(f, ",\"kind\":\"%s\"%s}", kind_name(fn->kind),
				l->inlined ? ",\"inlined\":true" : "");
		}
		fputs("]}\n", f);
	}
	free(order);
	return pk_xfinish(f);
}
