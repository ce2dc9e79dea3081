/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the sysfs PMU parsers: the input is taken as (1) a format file ("config1:1,6-10,44"),
 * checked by an encode/decode round trip, (2) a term list for a fixed PMU, (3) the content
 * of an event alias file, expanded by the term encoder, and (4) the content of format,
 * events and type files in a small sysfs tree loaded through pk_pmu_set__load.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "internal.h"
#include "event/pmu-internal.h"

static struct pk_pmu *fixed;
static char tree[PATH_MAX];

static void quiet(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static const char *const formats[][2] = {
	{ "event", "config:0-7" },      { "umask", "config:8-15" },
	{ "inv", "config:23" },         { "cmask", "config:24-31" },
	{ "ldlat", "config1:0-15" },    { "split", "config2:0-3,60-63" },
	{ "frontend", "config3:0-23" }, { "wide", "config:32-63" },
};

static void add_formats(struct pk_pmu *p)
{
	for (size_t i = 0; i < PK_ARRAY_SIZE(formats); i++)
		if (pk_pmu__add_format(p, formats[i][0], formats[i][1], strlen(formats[i][1])))
			abort();
}

static void put(const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	if (len && fwrite(data, 1, len, f) != len)
		abort();
	fclose(f);
}

static void mkd(const char *rel)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	mkdir(path, 0755);
}

static void cleanup(void)
{
	static const char *const files[] = {
		"bus/event_source/devices/p/format/fz", "bus/event_source/devices/p/format/event",
		"bus/event_source/devices/p/events/fz", "bus/event_source/devices/p/events/fz.scale",
		"bus/event_source/devices/p/events/fz.unit", "bus/event_source/devices/p/type",
		"bus/event_source/devices/q/type",
	};
	static const char *const dirs[] = {
		"bus/event_source/devices/p/format", "bus/event_source/devices/p/events",
		"bus/event_source/devices/p", "bus/event_source/devices/q",
		"bus/event_source/devices", "bus/event_source", "bus", "",
	};
	char path[PATH_MAX * 2];
	for (size_t i = 0; i < PK_ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", tree, files[i]);
		unlink(path);
	}
	for (size_t i = 0; i < PK_ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", tree, dirs[i]);
		rmdir(path);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pk_set_log(quiet, NULL, PK_LOG_ERROR);

	fixed = pk_pmu__new("fuzz", 42);
	if (!fixed)
		abort();
	add_formats(fixed);
	static const char *const aliases[][2] = {
		{ "cycles", "event=0x3c" },     { "mem-loads", "event=0xcd,umask=0x1,ldlat=3" },
		{ "needs", "event=0x10,umask=?" }, { "nested", "cycles,inv" },
		{ "loop1", "loop2" },           { "loop2", "loop1" },
		{ "self", "self" },             { "raw", "config=0x1234,config1=5" },
	};
	for (size_t i = 0; i < PK_ARRAY_SIZE(aliases); i++)
		if (pk_pmu__add_alias(fixed, aliases[i][0], aliases[i][1], 1.0, NULL))
			abort();

	snprintf(tree, sizeof(tree), "/tmp/perfkit-fuzz-sysfs.%d", (int)getpid());
	mkd("");
	atexit(cleanup);
	mkd("bus");
	mkd("bus/event_source");
	mkd("bus/event_source/devices");
	mkd("bus/event_source/devices/p");
	mkd("bus/event_source/devices/p/format");
	mkd("bus/event_source/devices/p/events");
	mkd("bus/event_source/devices/q");
	put("bus/event_source/devices/p/type", "7\n", 2);
	put("bus/event_source/devices/p/format/event", "config:0-7\n", 11);
	return 0;
}

/* Pull the bits of cfg[word] at the format's positions back into a value. */
static uint64_t decode(const struct pk_format *f, const uint64_t cfg[4])
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (unsigned i = 0; i < f->nr_ranges; i++) {
		unsigned lo = f->ranges[i].lo, w = f->ranges[i].hi - lo + 1u;
		uint64_t mask = w == 64 ? ~0ULL : (1ULL << w) - 1;
		v |= ((cfg[f->word] >> lo) & mask) << shift;
		shift += w;
	}
	return v;
}

static void check_format(const uint8_t *data, size_t size)
{
	struct pk_format f;
	uint64_t cfg[4] = { 0 }, val = 0;

	if (pk_format__parse(&f, (const char *)data, size) != 0)
		return;
	if (f.width == 0 || f.width > 64 || f.nr_ranges == 0 || f.nr_ranges > PK_FORMAT_MAX_RANGES)
		abort();
	memcpy(&val, data, PK_MIN(size, sizeof(val)));
	uint64_t fit = f.width == 64 ? val : val & ((1ULL << f.width) - 1);
	if (pk_format__encode(&f, fit, cfg) != 0)
		abort();
	if (decode(&f, cfg) != fit)
		abort();
	if ((unsigned)__builtin_popcountll(cfg[f.word]) != (unsigned)__builtin_popcountll(fit))
		abort();
	uint64_t all[4] = { 0 };
	if (pk_format__encode(&f, f.width == 64 ? ~0ULL : (1ULL << f.width) - 1, all) != 0)
		abort();
	if ((unsigned)__builtin_popcountll(all[f.word]) != f.width)
		abort();
	if (f.width < 64) {
		uint64_t before[4] = { 1, 2, 3, 4 }, c[4] = { 1, 2, 3, 4 };
		if (pk_format__encode(&f, 1ULL << f.width, c) != -ERANGE ||
		    memcmp(before, c, sizeof(c)))
			abort();
	}
}

static void check_terms(const struct pk_pmu *p, const char *terms)
{
	struct pk_attr a;
	char err[256];

	memset(&a, 0, sizeof(a));
	memset(err, 'x', sizeof(err));
	int r = pk_pmu__encode(p, terms, &a, err, sizeof(err));
	if (memchr(err, '\0', sizeof(err)) == NULL)
		abort();
	if (r < 0 && (a.attr.config || a.attr.config1 || a.attr.config2 || pk_attr__config3(&a)))
		abort(); /* nothing written on failure */
	if (r == 0 && err[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	check_format(data, size);

	char *s = pk_strndup((const char *)data, size); /* stops at an embedded NUL too */
	if (!s)
		return 0;
	check_terms(fixed, s);

	/* the input as an alias's content, used alone and through another alias */
	struct pk_pmu *p = pk_pmu__new("fz", 1);
	if (p) {
		add_formats(p);
		if (pk_pmu__add_alias(p, "x", s, 1.0, NULL) == 0 &&
		    pk_pmu__add_alias(p, "y", "x,inv", 1.0, NULL) == 0) {
			check_terms(p, "x");
			check_terms(p, "y");
			check_terms(p, "x,event=1,umask=2");
		}
		pk_pmu__delete(p);
	}
	free(s);

	/* the input as sysfs file content */
	put("bus/event_source/devices/p/format/fz", data, size);
	put("bus/event_source/devices/p/events/fz", data, size);
	put("bus/event_source/devices/p/events/fz.scale", data, size);
	put("bus/event_source/devices/p/events/fz.unit", data, size);
	put("bus/event_source/devices/q/type", data, size);
	struct pk_pmu_set *set = NULL;
	PK_OPTS(pk_pmu_opts, o, .sysfs_root = tree);
	if (pk_pmu_set__load(&set, &o) != 0)
		abort();
	const struct pk_pmu *pp = pk_pmu_set__find(set, "p");
	if (!pp)
		abort();
	long i = pk_pmu__find_alias(pp, "fz");
	if (i >= 0) {
		check_terms(pp, "fz");
		(void)pk_pmu__alias_scale(pp, (size_t)i);
		(void)pk_pmu__alias_unit(pp, (size_t)i);
	}
	pk_pmu_set__free(set);
	return 0;
}
