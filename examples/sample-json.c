/* SPDX-License-Identifier: MIT */
/*
 * sample-json: frequency-mode sampling of this program's own thread, as in the blog post
 * "counting and sampling modes": PERF_SAMPLE_IP|TID|TIME|READ|CPU|PERIOD at a requested
 * rate, one JSON object per sample on stdout:
 *
 *     {"ip":"0x5591f152694d","pid":5440,"tid":5440,"cpu":0,"time":34369394238916,"count":5,"period":1}
 *
 * and a last line {"summary":{...}} with the achieved rate: the kernel adjusts the period
 * so that lambda / period = requested rate, where lambda = d(count) / d(time) is the event
 * rate between consecutive samples (the blog's feedback-loop arithmetic); we report that
 * estimate over the second half of the run (after the loop has converged) and the plain
 * samples per second over the whole run. Time is the event's time_running (read with
 * each sample): the kernel targets samples per second of running time, and a thread
 * that shares its CPU runs less than wall-clock time.
 *
 * usage: sample-json [-e EVENT] [-F HZ] [-d MILLISECONDS]
 *        (default: instructions, or task-clock with a notice where there is no PMU;
 *         1000 Hz; 500 ms)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>

struct run {
	uint64_t n;
	size_t cap;
	uint64_t *time, *count, *period, *running;
};

static int on_record(struct pk_sampler *s, const struct pk_record *rec, void *ctx)
{
	struct run *r = ctx;
	const struct pk_sample *sm = &rec->sample;
	struct pk_count_value v = { 0 };

	if (rec->type != PERF_RECORD_SAMPLE)
		return 0;
	if (pk_sample__read_values(pk_sampler__layout(s), sm, &v, 1) < 1)
		return 0;
	printf("{\"ip\":\"0x%llx\",\"pid\":%u,\"tid\":%u,\"cpu\":%u,\"time\":%llu,\"count\":%llu,"
	       "\"period\":%llu}\n", (unsigned long long)sm->ip, sm->pid, sm->tid, sm->cpu,
	       (unsigned long long)sm->time, (unsigned long long)v.val,
	       (unsigned long long)sm->period);
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		uint64_t *t = realloc(r->time, cap * sizeof(*t));
		if (t)
			r->time = t;
		uint64_t *c = realloc(r->count, cap * sizeof(*c));
		if (c)
			r->count = c;
		uint64_t *p = realloc(r->period, cap * sizeof(*p));
		if (p)
			r->period = p;
		uint64_t *ru = realloc(r->running, cap * sizeof(*ru));
		if (ru)
			r->running = ru;
		if (!t || !c || !p || !ru)
			return 1;
		r->cap = cap;
	}
	r->time[r->n] = sm->time;
	r->count[r->n] = v.val;
	r->period[r->n] = sm->period;
	r->running[r->n] = v.run;
	r->n++;
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	const char *event = NULL;
	unsigned long hz = 1000, ms = 500;
	struct run run = { 0 };
	int opt;

	while ((opt = getopt(argc, argv, "e:F:d:")) != -1) {
		if (opt == 'e')
			event = optarg;
		else if (opt == 'F')
			hz = strtoul(optarg, NULL, 0);
		else if (opt == 'd')
			ms = strtoul(optarg, NULL, 0);
		else {
			fprintf(stderr, "usage: sample-json [-e EVENT] [-F HZ] [-d MILLISECONDS]\n");
			return 2;
		}
	}
	PK_OPTS(pk_sampler_opts, o, .event = event ? event : "instructions:u", .freq = hz,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_READ | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
		.wakeup_events = 1, .exclude_kernel = true, .start_enabled = true,
		.cb = on_record, .ctx = &run);
	struct pk_sampler *s = pk_sampler__new(&o);
	if (!s && !event && (errno == ENOENT || errno == ENODEV || errno == EOPNOTSUPP)) {
		fprintf(stderr, "sample-json: instructions are not countable here (%s); "
				"sampling task-clock instead\n", pk_strerror(errno));
		o.event = "task-clock";
		s = pk_sampler__new(&o);
	}
	if (!s) {
		fprintf(stderr, "sample-json: cannot sample '%s' at %lu Hz: %s\n", o.event, hz,
			pk_strerror(errno));
		return 1;
	}
	/* the workload: spin, draining the ring now and then */
	double end = now_ms() + (double)ms;
	while (now_ms() < end) {
		for (unsigned long i = 0; i < 200000; i++)
			sink += i ^ (sink >> 3);
		if (pk_sampler__drain(s) < 0)
			break;
	}
	pk_sampler__disable(s);
	pk_sampler__drain(s);

	struct pk_sampler_stats st;
	pk_sampler__stats(s, &st);
	double achieved = 0, wall = 0, feedback = 0;
	uint64_t used = 0;
	/* The kernel aims at `hz` samples per second of the event's running time (the event
	 * does not count while this thread is off the CPU), so time is time_running here;
	 * the wall-clock rate is printed too. */
	if (run.n >= 2 && run.running[run.n - 1] > run.running[0])
		achieved = (double)(run.n - 1) * 1e9 / (double)(run.running[run.n - 1] - run.running[0]);
	if (run.n >= 2 && run.time[run.n - 1] > run.time[0])
		wall = (double)(run.n - 1) * 1e9 / (double)(run.time[run.n - 1] - run.time[0]);
	/* lambda / P between consecutive samples, second half of the run */
	for (uint64_t i = run.n / 2 + 1; i < run.n; i++) {
		uint64_t dt = run.running[i] - run.running[i - 1], dc = run.count[i] - run.count[i - 1];
		if (!dt || !run.period[i])
			continue;
		double lambda = (double)dc * 1e9 / (double)dt;
		feedback += lambda / (double)run.period[i];
		used++;
	}
	if (used)
		feedback /= (double)used;
	printf("{\"summary\":{\"event\":\"%s\",\"requested_hz\":%lu,\"samples\":%llu,"
	       "\"lost\":%llu,\"achieved_hz\":%.1f,\"wall_hz\":%.1f,\"feedback_hz\":%.1f,"
	       "\"ratio\":%.3f}}\n",
	       o.event, hz, (unsigned long long)run.n, (unsigned long long)st.lost, achieved, wall,
	       feedback, hz ? achieved / (double)hz : 0.0);
	pk_sampler__free(s);
	free(run.time);
	free(run.count);
	free(run.period);
	free(run.running);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}
