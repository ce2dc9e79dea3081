/* SPDX-License-Identifier: MIT */
/*
 * regions: two named regions in two threads with the region API, then the report as a
 * table and as JSON. Each thread counts itself (its counters open on its first region).
 *
 *   "compute" - arithmetic (task-clock, no page faults to speak of)
 *   "touch"   - touches fresh pages (page faults), nested inside "compute" in thread 2
 *
 * usage: regions [table|json]   (default: both)
 * Events: $PERFKIT_EVENTS or the default set (task-clock,context-switches,page-faults
 * plus cycles,instructions where they exist).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <perfkit/perfkit.h>

#define PAGES 256
static volatile unsigned long sink;

static void compute(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 2654435761u;
}

static int touch(void)
{
	size_t len = PAGES * 4096;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	madvise(m, len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < len; i += 4096)
		m[i] = 1;
	munmap(m, len);
	return 0;
}

static void *thread1(void *arg)
{
	(void)arg;
	for (int k = 0; k < 5; k++) {
		pk_region_begin("compute");
		compute(4000000);
		pk_region_end("compute");
	}
	pk_region_begin("touch");
	touch();
	pk_region_end("touch");
	return NULL;
}

static void *thread2(void *arg)
{
	/* handle-based: no name lookup per call */
	struct pk_region *c = pk_region__get("compute"), *t = pk_region__get("touch");
	(void)arg;
	for (int k = 0; k < 3; k++) {
		pk_region__begin(c);
		compute(8000000);
		pk_region__begin(t); /* nested */
		touch();
		pk_region__end(t);
		pk_region__end(c);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *fmt = argc > 1 ? argv[1] : "both";
	pthread_t a, b;
	/* as a program that never calls pk_regions__init would: $PERFKIT_EVENTS if set */
	PK_OPTS(pk_regions_opts, ro, .use_env = true);
	int err = pk_regions__init(NULL, &ro);

	if (err < 0) {
		fprintf(stderr, "regions: cannot set up the events: %s\n", pk_strerror(err));
		return 1;
	}
	if (pthread_create(&a, NULL, thread1, NULL) || pthread_create(&b, NULL, thread2, NULL)) {
		fprintf(stderr, "regions: cannot create threads\n");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (strcmp(fmt, "json"))
		pk_regions__report(stdout, PK_REGION_TABLE);
	if (!strcmp(fmt, "both"))
		printf("\n");
	if (strcmp(fmt, "table"))
		pk_regions__report(stdout, PK_REGION_JSON);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}
