/* SPDX-License-Identifier: MIT */
/*
 * tool/push-convert.c - one perf.data file into what a push sends: the profile (pprof
 * through the same loader and exporter as `perfkit convert --to pprof`, folded stacks,
 * or pprof inside Parca's WriteRaw JSON), its time range, and the query of Pyroscope's
 * /ingest (application name, labels, from/until, format, sampleRate).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "profile-load.h"
#include "push.h"

/* a label value or application name as Pyroscope's name syntax allows: other bytes
 * (braces, commas, '=', quotes, spaces, non-ASCII) become '_' */
static void sanitize(char *dst, size_t cap, const char *src)
{
	size_t j = 0;
	for (; *src && j + 1 < cap; src++) {
		char c = *src;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '/' ||
			  c == ':';
		dst[j++] = ok ? c : '_';
	}
	dst[j] = '\0';
}

/* samples per second of the file's sampling event: its frequency, or for cpu-clock and
 * task-clock with a period, 1 s / period (0: unknown; the server assumes 100) */
static unsigned sample_rate(struct pk_data_reader *r)
{
	size_t n = pk_data_reader__nr_attrs(r);
	for (size_t i = 0; i < n; i++) {
		const struct perf_event_attr *a = &pk_data_reader__attr(r, i)->attr.attr;
		if (a->freq && a->sample_freq)
			return a->sample_freq > 1000000 ? 1000000 : (unsigned)a->sample_freq;
		if (!a->freq && a->sample_period && a->type == PERF_TYPE_SOFTWARE &&
		    (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK))
			return (unsigned)(1000000000ull / a->sample_period);
	}
	return 0;
}

/* a JSON string into f */
static void json_str(FILE *f, const char *s)
{
	pk_json__write_str(f, s, 0);
}

static void json_label(FILE *f, const char *name, const char *value, bool comma)
{
	fprintf(f, "%s{\"name\":", comma ? "," : "");
	json_str(f, name);
	fputs(",\"value\":", f);
	json_str(f, value);
	fputc('}', f);
}

/*
 * Parca's WriteRaw request (parca.profilestore.v1alpha1) as the JSON its HTTP gateway
 * takes at /profiles/writeraw: one series, labelled __name__=perfkit, app, hostname,
 * comm and the tags, holding the pprof (bytes are base64 in the JSON mapping of
 * protobuf). Replaces j->body. -ENOMEM.
 */
static int parca_body(const struct tool_push_opts *o, struct push_job *j, const char *app,
		      const char *host, const char *comm)
{
	char *b64 = malloc(4 * ((j->len + 2) / 3) + 1);
	char *out = NULL;
	size_t len = 0;
	FILE *f = b64 ? open_memstream(&out, &len) : NULL;
	if (!f) {
		free(b64);
		return -ENOMEM;
	}
	push_base64(b64, j->body, j->len);
	fputs("{\"series\":[{\"labels\":{\"labels\":[", f);
	json_label(f, "__name__", "perfkit", false);
	json_label(f, "app", app, true);
	if (!o->no_default_labels) {
		json_label(f, "hostname", host, true);
		json_label(f, "comm", comm, true);
	}
	for (size_t i = 0; i < o->nr_tags; i++) {
		char key[128];
		const char *eq = strchr(o->tags[i], '=');
		snprintf(key, sizeof(key), "%.*s", (int)(eq - o->tags[i]), o->tags[i]);
		json_label(f, key, eq + 1, true);
	}
	fputs("]},\"samples\":[{\"rawProfile\":\"", f);
	fputs(b64, f);
	fputs("\"}]}],\"normalized\":false}", f);
	free(b64);
	int bad = ferror(f);
	if (fclose(f) || bad) {
		free(out);
		return -ENOMEM;
	}
	free(j->body);
	j->body = out;
	j->len = len;
	return 0;
}

/* path -> job; 1: no samples (nothing to send); -1 after printing why */
int push_convert(const struct tool_push_opts *o, const char *path, struct push_job *j)
{
	memset(j, 0, sizeof(*j));
	struct pk_data_reader *r = tool_open_input(path, NULL);
	if (!r)
		return -1;
	char host[128] = "";
	const struct pk_data_env *env = pk_data_reader__env(r);
	if (env && env->hostname)
		sanitize(host, sizeof(host), env->hostname);
	else if (gethostname(host, sizeof(host) - 1) == 0)
		sanitize(host, sizeof(host), host);
	unsigned hz = sample_rate(r);
	bool folded = o->format == PUSH_FOLDED;
	struct tool_load_opts lo = { .addresses = !folded, .srcline = o->srcline && !folded,
				     .unknown_hex = !folded, .event = o->event };
	struct pk_profile_load_stats st;
	struct pk_profile *p = tool_load_profile_reader(r, path, &lo, &st);
	pk_data_reader__free(r);
	if (!p)
		return -1;
	if (!st.samples) {
		pk_profile__free(p);
		if (o->verbose)
			fprintf(stderr, "%s: no samples, nothing to push\n", path);
		return 1;
	}
	/* the range: the file was complete at its mtime, which is its last sample's time
	 * give or take the rotation; back from it by the span of the samples */
	struct stat sb;
	uint64_t until = strcmp(path, "-") && stat(path, &sb) == 0
			 ? (uint64_t)sb.st_mtim.tv_sec * 1000000000ull + (uint64_t)sb.st_mtim.tv_nsec
			 : (uint64_t)time(NULL) * 1000000000ull;
	uint64_t dur = st.last_time > st.first_time ? st.last_time - st.first_time : 0;
	uint64_t from = until > dur ? until - dur : 0;
	pk_profile__set_info(p, path, from, dur);

	FILE *f = open_memstream(&j->body, &j->len);
	int err = f ? 0 : -ENOMEM;
	if (f && folded) {
		/* one event (the server has one value per stack), counted in samples: the
		 * server turns samples into time with sampleRate */
		PK_OPTS(pk_folded_opts, fo, .event = 0, .weight = PK_WEIGHT_SAMPLES);
		err = pk_export__folded(p, f, &fo);
	} else if (f) {
		err = pk_export__pprof(p, f, NULL);
	}
	if (f && fclose(f) && !err)
		err = -EIO;
	pk_profile__free(p);
	if (err) {
		tool_error("cannot convert '%s': %s", path, pk_strerror(err));
		free(j->body);
		j->body = NULL;
		return -1;
	}

	/* name=APP{hostname=..,comm=..,tags} */
	char app[128], comm[64], name[2048];
	sanitize(app, sizeof(app), o->app ? o->app : st.top_comm[0] ? st.top_comm : "perfkit");
	sanitize(comm, sizeof(comm), st.top_comm[0] ? st.top_comm : "unknown");
	size_t n = (size_t)snprintf(name, sizeof(name), "%s{", app);
	const char *sep = "";
	if (!o->no_default_labels) {
		n += (size_t)snprintf(name + n, sizeof(name) - n, "hostname=%s,comm=%s", host, comm);
		sep = ",";
	}
	for (size_t i = 0; i < o->nr_tags && n < sizeof(name); i++) {
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%s%s", sep, o->tags[i]);
		sep = ",";
	}
	if (n + 2 > sizeof(name)) {
		tool_error("labels too long for '%s'", path);
		free(j->body);
		j->body = NULL;
		return -1;
	}
	memcpy(name + n, "}", 2);
	char ename[3 * sizeof(name) + 1];
	push_url_escape(ename, sizeof(ename), name);
	uint64_t fs = from / 1000000000ull, us = (until + 999999999ull) / 1000000000ull;
	if (us <= fs)
		us = fs + 1;
	char rate[32] = "";
	if (hz)
		snprintf(rate, sizeof(rate), "&sampleRate=%u", hz);
	if (asprintf(&j->query, "name=%s&from=%" PRIu64 "&until=%" PRIu64 "&format=%s%s&spyName=perfkit%s",
		     ename, fs, us, push_format_names[o->format], rate,
		     folded ? "&units=samples&aggregationType=sum" : "") < 0) {
		j->query = NULL;
		free(j->body);
		j->body = NULL;
		tool_error("out of memory");
		return -1;
	}
	j->from_ms = from / 1000000;
	j->until_ms = until / 1000000;
	if (o->format == PUSH_PARCA && parca_body(o, j, app, host, comm)) {
		free(j->query);
		free(j->body);
		j->query = j->body = NULL;
		tool_error("out of memory");
		return -1;
	}
	return 0;
}

