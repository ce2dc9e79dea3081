/* SPDX-License-Identifier: MIT */
/* lib/event: sysfs format terms, PMU discovery and term encoding, tracepoints, libpfm4. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "internal.h"
#include "event/pmu-internal.h"
#include "testutil.h"

/* ---- format parsing ---- */

static void test_format_parse_ok(void **state)
{
	struct pk_format f;

	assert_int_equal(pk_format__parse(&f, "config1:1,6-10,44", 17), 0);
	assert_int_equal(f.word, PK_CFG_CONFIG1);
	assert_int_equal(f.nr_ranges, 3);
	assert_int_equal(f.ranges[0].lo, 1);
	assert_int_equal(f.ranges[0].hi, 1);
	assert_int_equal(f.ranges[1].lo, 6);
	assert_int_equal(f.ranges[1].hi, 10);
	assert_int_equal(f.ranges[2].lo, 44);
	assert_int_equal(f.ranges[2].hi, 44);
	assert_int_equal(f.width, 7);

	const char *s = "config:0-7,32-35\n";
	assert_int_equal(pk_format__parse(&f, s, strlen(s)), 0);
	assert_int_equal(f.word, PK_CFG_CONFIG);
	assert_int_equal(f.nr_ranges, 2);
	assert_int_equal(f.width, 12);

	s = "config3:0-63 \t\n";
	assert_int_equal(pk_format__parse(&f, s, strlen(s)), 0);
	assert_int_equal(f.word, PK_CFG_CONFIG3);
	assert_int_equal(f.width, 64);

	s = "config2:5";
	assert_int_equal(pk_format__parse(&f, s, strlen(s)), 0);
	assert_int_equal(f.word, PK_CFG_CONFIG2);
	assert_int_equal(f.nr_ranges, 1);
	assert_int_equal(f.width, 1);

	/* not NUL-terminated: only `len` bytes count */
	char raw[] = { 'c', 'o', 'n', 'f', 'i', 'g', ':', '3', '-', '4', '9', '9' };
	assert_int_equal(pk_format__parse(&f, raw, 10), 0);
	assert_int_equal(f.ranges[0].lo, 3);
	assert_int_equal(f.ranges[0].hi, 4);
	assert_int_equal(pk_format__parse(&f, raw, 11), 0);
	assert_int_equal(f.ranges[0].hi, 49);
	assert_int_equal(pk_format__parse(&f, raw, 12), -PK_ERR_PARSE); /* bit 499 */

	/* exactly PK_FORMAT_MAX_RANGES ranges is accepted */
	char buf[256];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "config:");
	for (int i = 0; i < PK_FORMAT_MAX_RANGES; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d", i ? "," : "", i * 3);
	assert_int_equal(pk_format__parse(&f, buf, n), 0);
	assert_int_equal(f.nr_ranges, PK_FORMAT_MAX_RANGES);
	assert_int_equal(f.width, PK_FORMAT_MAX_RANGES);
	/* one more is not */
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, ",%d", PK_FORMAT_MAX_RANGES * 3);
	assert_int_equal(pk_format__parse(&f, buf, n), -PK_ERR_PARSE);
}

static void test_format_parse_bad(void **state)
{
	static const char *const bad[] = {
		"", "   \n", "config", "config:", "config5:0", "config4:1", "conf:1",
		"Config:1", "config :1", "config: 1", "config:64", "config:0-64", "config:63-64",
		"config:7-3", "config:1,,2", "config:1,", "config:,1", "config:1-", "config:-1",
		"config:a", "config:0x3", "config:1 2", "config:1;2", "config:0-7,4",
		"config:0-7,0-7", "config:10-20,20", "config:0001", "config:1-2-3",
		"config:18446744073709551617", "config1:1,6-10,44junk", "config\n:1",
		"event=0x3c", "config:1\n2",
	};
	struct pk_format f, before;

	memset(&f, 0x5a, sizeof(f));
	before = f;
	for (size_t i = 0; i < PK_ARRAY_SIZE(bad); i++) {
		int r = pk_format__parse(&f, bad[i], strlen(bad[i]));
		if (r != -PK_ERR_PARSE)
			fail_msg("'%s' parsed (ret %d)", bad[i], r);
		assert_int_equal(errno, PK_ERR_PARSE);
		assert_memory_equal(&f, &before, sizeof(f)); /* nothing written on failure */
	}
	/* an embedded NUL is garbage, a trailing one (a C string's terminator) is not */
	assert_int_equal(pk_format__parse(&f, "config:1\0x", 10), -PK_ERR_PARSE);
	assert_int_equal(pk_format__parse(&f, "config:1", 9), 0);
	assert_int_equal(pk_format__parse(NULL, "config:1", 8), -EINVAL);
}

/* ---- format encoding ---- */

static struct pk_format fmt(const char *s)
{
	struct pk_format f;
	assert_int_equal(pk_format__parse(&f, s, strlen(s)), 0);
	return f;
}

static void test_format_encode(void **state)
{
	uint64_t cfg[4] = { 0 };
	struct pk_format f = fmt("config:0-7,32-35");

	assert_int_equal(pk_format__encode(&f, 0xabc, cfg), 0);
	assert_int_equal(cfg[0], 0xa000000bcULL);
	assert_int_equal(cfg[1] | cfg[2] | cfg[3], 0);
	/* 13 bits do not fit 12: -ERANGE and nothing written */
	assert_int_equal(pk_format__encode(&f, 0x1000, cfg), -ERANGE);
	assert_int_equal(cfg[0], 0xa000000bcULL);

	/* scattered single bits and a range in config1: 0x55 = 1 010101b */
	memset(cfg, 0, sizeof(cfg));
	f = fmt("config1:1,6-10,44");
	assert_int_equal(pk_format__encode(&f, 0x55, cfg), 0);
	assert_int_equal(cfg[1], (1ULL << 1) | (0x0aULL << 6) | (1ULL << 44));
	assert_int_equal(cfg[0], 0);
	assert_int_equal(pk_format__encode(&f, 0x80, cfg), -ERANGE);
	memset(cfg, 0, sizeof(cfg));
	assert_int_equal(pk_format__encode(&f, 0x7f, cfg), 0);
	assert_int_equal(cfg[1], (1ULL << 1) | (0x1fULL << 6) | (1ULL << 44));

	/* ORs into what is there */
	memset(cfg, 0, sizeof(cfg));
	cfg[2] = 1ULL << 40;
	f = fmt("config2:0-3,60-63");
	assert_int_equal(pk_format__encode(&f, 0x9f, cfg), 0);
	assert_int_equal(cfg[2], (1ULL << 40) | 0xfULL | (0x9ULL << 60));

	/* a full 64-bit word: every value fits */
	f = fmt("config3:0-63");
	assert_int_equal(pk_format__encode(&f, UINT64_MAX, cfg), 0);
	assert_int_equal(cfg[3], UINT64_MAX);

	/* hand-made garbage structs are refused, not trusted */
	struct pk_format g = fmt("config:0-3");
	g.word = (enum pk_cfg_word)7;
	assert_int_equal(pk_format__encode(&g, 1, cfg), -EINVAL);
	g = fmt("config:0-3");
	g.ranges[0].hi = 70;
	assert_int_equal(pk_format__encode(&g, 1, cfg), -EINVAL);
	g.nr_ranges = PK_FORMAT_MAX_RANGES + 1;
	assert_int_equal(pk_format__encode(&g, 1, cfg), -EINVAL);

	struct pk_attr a;
	uint64_t w[4] = { 1, 2, 3, 4 };
	memset(&a, 0, sizeof(a));
	pk_attr__set_configs(&a, w);
	assert_int_equal(a.attr.config, 1);
	assert_int_equal(a.attr.config1, 2);
	assert_int_equal(a.attr.config2, 3);
	assert_int_equal(pk_attr__config3(&a), 4);
}

/* ---- synthetic sysfs ---- */

static char *tree_root;

static void w(const char *rel, const char *content)
{
	pk_test_write_file(tree_root, rel, content);
}

static void build_good_tree(void)
{
	const char *d = "bus/event_source/devices/cpu_fake/";
	char p[256];
#define F(rel, content) (snprintf(p, sizeof(p), "%s%s", d, rel), w(p, content))
	F("type", "4\n");
	F("cpumask", "0-1\n");
	F("rdpmc", "1\n");
	F("format/event", "config:0-7\n");
	F("format/umask", "config:8-15\n");
	F("format/inv", "config:23\n");
	F("format/cmask", "config:24-31\n");
	F("format/ldlat", "config1:0-15\n");
	F("format/split", "config2:0-3,60-63\n");
	F("format/frontend", "config3:0-23\n");
	F("events/cycles", "event=0x3c\n");
	F("events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	F("events/energy", "event=0x02\n");
	F("events/energy.scale", "2.3283064365386962890625e-10\n");
	F("events/energy.unit", "Joules\n");
	F("events/energy.per-pkg", "1\n");
	F("events/energy.snapshot", "1\n");
	F("events/needs", "event=0x10,umask=?\n");
	F("events/nested", "cycles,inv\n");
	F("events/loop1", "loop2\n");
	F("events/loop2", "loop1\n");
	F("events/self", "self\n");
	F("events/badterm", "event=1,bogus=2\n");
	F("events/dupterm", "event=1,event=2\n");

	d = "bus/event_source/devices/uncore_x/";
	F("type", "12");
	F("cpumask", "0");
	F("format/event", "config:0-7");
#undef F
	/* like real sysfs: a symlink into the device tree */
	w("devices/platform/linked_pmu/type", "33\n");
	w("devices/platform/linked_pmu/format/event", "config:0-15\n");
	char target[PATH_MAX], link[PATH_MAX];
	snprintf(target, sizeof(target), "%s/devices/platform/linked_pmu", tree_root);
	snprintf(link, sizeof(link), "%s/bus/event_source/devices/linkpmu", tree_root);
	assert_int_equal(symlink(target, link), 0);
}

static int setup_tree(void **state)
{
	tree_root = pk_test_mkdtemp("pmutree");
	return 0;
}

static int teardown_tree(void **state)
{
	pk_test_rmtree(tree_root);
	free(tree_root);
	tree_root = NULL;
	return 0;
}

static struct pk_pmu_set *load_tree(void)
{
	struct pk_pmu_set *set = NULL;
	PK_OPTS(pk_pmu_opts, o, .sysfs_root = tree_root);
	assert_int_equal(pk_pmu_set__load(&set, &o), 0);
	assert_non_null(set);
	return set;
}

static void test_sysfs_load(void **state)
{
	build_good_tree();
	struct pk_pmu_set *set = load_tree();

	assert_int_equal(pk_pmu_set__count(set), 3);
	assert_string_equal(pk_pmu__name(pk_pmu_set__get(set, 0)), "cpu_fake");
	assert_string_equal(pk_pmu__name(pk_pmu_set__get(set, 1)), "linkpmu");
	assert_string_equal(pk_pmu__name(pk_pmu_set__get(set, 2)), "uncore_x");
	assert_null(pk_pmu_set__get(set, 3));
	assert_null(pk_pmu_set__find(set, "nope"));
	assert_int_equal(errno, ENOENT);
	assert_string_equal(pk_pmu__name(pk_pmu_set__find_type(set, 12)), "uncore_x");
	assert_string_equal(pk_pmu__name(pk_pmu_set__find_type(set, 33)), "linkpmu");
	assert_null(pk_pmu_set__find_type(set, 99));

	const struct pk_pmu *cpu = pk_pmu_set__find(set, "cpu_fake");
	assert_non_null(cpu);
	assert_int_equal(pk_pmu__type(cpu), 4);
	assert_string_equal(pk_pmu__cpumask(cpu), "0-1");
	assert_int_equal(pk_pmu__rdpmc(cpu), 1);

	static const char *const fnames[] = { "cmask", "event", "frontend", "inv",
					      "ldlat", "split", "umask" };
	assert_int_equal(pk_pmu__format_count(cpu), PK_ARRAY_SIZE(fnames));
	for (size_t i = 0; i < PK_ARRAY_SIZE(fnames); i++)
		assert_string_equal(pk_pmu__format_name(cpu, i), fnames[i]);
	assert_null(pk_pmu__format_name(cpu, PK_ARRAY_SIZE(fnames)));
	const struct pk_format *f = pk_pmu__find_format(cpu, "ldlat");
	assert_non_null(f);
	assert_int_equal(f->word, PK_CFG_CONFIG1);
	assert_int_equal(f->width, 16);
	assert_ptr_equal(pk_pmu__format(cpu, 4), f);
	assert_null(pk_pmu__find_format(cpu, "nope"));

	/* side files (.scale .unit .per-pkg .snapshot) are not aliases */
	static const char *const anames[] = { "badterm", "cycles", "dupterm", "energy", "loop1",
					      "loop2", "mem-loads", "needs", "nested", "self" };
	assert_int_equal(pk_pmu__alias_count(cpu), PK_ARRAY_SIZE(anames));
	for (size_t i = 0; i < PK_ARRAY_SIZE(anames); i++)
		assert_string_equal(pk_pmu__alias_name(cpu, i), anames[i]);
	long e = pk_pmu__find_alias(cpu, "energy");
	assert_int_equal(e, 3);
	assert_string_equal(pk_pmu__alias_terms(cpu, (size_t)e), "event=0x02");
	assert_true(fabs(pk_pmu__alias_scale(cpu, (size_t)e) - 2.3283064365386962890625e-10) <
		    1e-20);
	assert_string_equal(pk_pmu__alias_unit(cpu, (size_t)e), "Joules");
	long c = pk_pmu__find_alias(cpu, "cycles");
	assert_int_equal(c, 1);
	assert_true(pk_pmu__alias_scale(cpu, (size_t)c) == 1.0);
	assert_null(pk_pmu__alias_unit(cpu, (size_t)c));
	assert_int_equal(pk_pmu__find_alias(cpu, "CYCLES"), 1);
	assert_int_equal(pk_pmu__find_alias(cpu, "nope"), -1);
	assert_int_equal(pk_pmu__find_alias(cpu, "energy.scale"), -1);

	const struct pk_pmu *unc = pk_pmu_set__find(set, "uncore_x");
	assert_string_equal(pk_pmu__cpumask(unc), "0");
	assert_int_equal(pk_pmu__rdpmc(unc), -1);
	assert_int_equal(pk_pmu__alias_count(unc), 0);
	assert_int_equal(pk_pmu__format_count(pk_pmu_set__find(set, "linkpmu")), 1);

	pk_pmu_set__free(set);
	pk_pmu_set__free(NULL);
}

/* Encode `terms` on a fresh attr; on success returns 0 and fills cfg. */
static int enc(const struct pk_pmu *pmu, const char *terms, uint64_t cfg[4], char *err,
	       size_t errlen)
{
	struct pk_attr a;
	memset(&a, 0, sizeof(a));
	int r = pk_pmu__encode(pmu, terms, &a, err, errlen);
	cfg[0] = a.attr.config;
	cfg[1] = a.attr.config1;
	cfg[2] = a.attr.config2;
	cfg[3] = pk_attr__config3(&a);
	return r;
}

static void expect_ok(const struct pk_pmu *pmu, const char *terms, uint64_t c0, uint64_t c1,
		      uint64_t c2, uint64_t c3)
{
	uint64_t cfg[4];
	char err[256];
	int r = enc(pmu, terms, cfg, err, sizeof(err));
	if (r)
		fail_msg("'%s': %d %s", terms, r, err);
	assert_string_equal(err, "");
	if (cfg[0] != c0 || cfg[1] != c1 || cfg[2] != c2 || cfg[3] != c3)
		fail_msg("'%s': got %#llx %#llx %#llx %#llx", terms, (unsigned long long)cfg[0],
			 (unsigned long long)cfg[1], (unsigned long long)cfg[2],
			 (unsigned long long)cfg[3]);
}

/* The error must be `ret`, its message must contain every given fragment, and the attr
 * must be left alone. */
static void expect_err(const struct pk_pmu *pmu, const char *terms, int ret, const char *m1,
		       const char *m2)
{
	struct pk_attr a;
	char err[512];
	memset(&a, 0, sizeof(a));
	a.attr.config = 0x77;
	int r = pk_pmu__encode(pmu, terms, &a, err, sizeof(err));
	if (r != ret)
		fail_msg("'%s': expected %d, got %d (%s)", terms, ret, r, err);
	if (m1 && !strstr(err, m1))
		fail_msg("'%s': message '%s' lacks '%s'", terms, err, m1);
	if (m2 && !strstr(err, m2))
		fail_msg("'%s': message '%s' lacks '%s'", terms, err, m2);
	assert_int_equal(a.attr.config, 0x77);
	assert_int_equal(a.attr.config1, 0);
}

static void test_encode_terms(void **state)
{
	build_good_tree();
	struct pk_pmu_set *set = load_tree();
	const struct pk_pmu *cpu = pk_pmu_set__find(set, "cpu_fake");
	assert_non_null(cpu);

	expect_ok(cpu, "event=0x3c,umask=1,inv", 0x3c | 0x100 | (1ULL << 23), 0, 0, 0);
	expect_ok(cpu, " event = 0x3c , umask=01 ", 0x3c | 0x100, 0, 0, 0);
	expect_ok(cpu, "event=60", 0x3c, 0, 0, 0);
	expect_ok(cpu, "", 0, 0, 0, 0);
	expect_ok(cpu, "cycles", 0x3c, 0, 0, 0);
	expect_ok(cpu, "CYCLES", 0x3c, 0, 0, 0);
	expect_ok(cpu, "cycles,inv,cmask=2", 0x3c | (1ULL << 23) | (2ULL << 24), 0, 0, 0);
	expect_ok(cpu, "mem-loads", 0xcd | 0x100, 3, 0, 0);
	/* the user's value wins over the alias's, whatever the order */
	expect_ok(cpu, "mem-loads,ldlat=30", 0xcd | 0x100, 30, 0, 0);
	expect_ok(cpu, "ldlat=30,mem-loads", 0xcd | 0x100, 30, 0, 0);
	expect_ok(cpu, "needs,umask=2", 0x10 | 0x200, 0, 0, 0);
	expect_ok(cpu, "nested", 0x3c | (1ULL << 23), 0, 0, 0);
	expect_ok(cpu, "split=0x9f", 0, 0, 0xfULL | (0x9ULL << 60), 0);
	expect_ok(cpu, "frontend=0x123456", 0, 0, 0, 0x123456);
	expect_ok(cpu, "config=0x1234,config1=5,config2=6,config3=7", 0x1234, 5, 6, 7);
	expect_ok(cpu, "config=0x100,event=1", 0x101, 0, 0, 0);

	expect_err(cpu, "event=1,event=2", -PK_ERR_PARSE, "duplicate term 'event'", NULL);
	expect_err(cpu, "inv,inv", -PK_ERR_PARSE, "duplicate term 'inv'", NULL);
	expect_err(cpu, "cycles,event=1,event=2", -PK_ERR_PARSE, "duplicate term 'event'", NULL);
	expect_err(cpu, "cycles,mem-loads", -PK_ERR_PARSE, "duplicate term 'event'", NULL);
	expect_err(cpu, "dupterm", -PK_ERR_PARSE, "duplicate term 'event'", "dupterm");
	expect_err(cpu, "foo=1", -PK_ERR_PARSE, "unknown term 'foo' for PMU 'cpu_fake'",
		   "valid terms: cmask, event, frontend, inv, ldlat, split, umask");
	expect_err(cpu, "period=1000", -PK_ERR_PARSE, "unknown term 'period'", NULL);
	expect_err(cpu, "badterm", -PK_ERR_PARSE, "unknown term 'bogus'", "alias 'badterm'");
	expect_err(cpu, "umask=0x1ff", -ERANGE, "value 0x1ff does not fit 'umask' (8 bits)",
		   NULL);
	expect_err(cpu, "event=0x10000000000000000", -ERANGE, "does not fit 64 bits", NULL);
	expect_err(cpu, "needs", -PK_ERR_PARSE, "'umask'", "needs");
	expect_err(cpu, "umask=?", -PK_ERR_PARSE, "needs a value", NULL);
	expect_err(cpu, "loop1", -PK_ERR_PARSE, "refers to itself", NULL);
	expect_err(cpu, "self", -PK_ERR_PARSE, "refers to itself", NULL);
	expect_err(cpu, "cycles=1", -PK_ERR_PARSE, "takes no value", NULL);
	expect_err(cpu, "event=", -PK_ERR_PARSE, "invalid value", NULL);
	expect_err(cpu, "event=zz", -PK_ERR_PARSE, "invalid value 'zz' for term 'event'", NULL);
	expect_err(cpu, "event=1,", -PK_ERR_PARSE, "empty term", NULL);
	expect_err(cpu, ",event=1", -PK_ERR_PARSE, "empty term", NULL);
	expect_err(cpu, "=5", -PK_ERR_PARSE, "has no name", NULL);

	/* terms OR into the config words already in the attr */
	struct pk_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.config = 1ULL << 40;
	assert_int_equal(pk_pmu__encode(cpu, "event=1", &a, NULL, 0), 0);
	assert_int_equal(a.attr.config, (1ULL << 40) | 1);
	assert_int_equal(pk_pmu__encode(cpu, "event=1,event=1", &a, NULL, 0), -PK_ERR_PARSE);
	assert_int_equal(pk_pmu__encode(NULL, "event=1", &a, NULL, 0), -EINVAL);

	/* a tiny error buffer is respected */
	char small[8];
	memset(&a, 0, sizeof(a));
	assert_int_equal(pk_pmu__encode(cpu, "foo", &a, small, sizeof(small)), -PK_ERR_PARSE);
	assert_int_equal(strlen(small), sizeof(small) - 1);

	pk_pmu_set__free(set);
}

/* Built by hand through the internal constructor, no files. */
static void test_internal_pmu(void **state)
{
	struct pk_pmu *p = pk_pmu__new("hand", 77);
	assert_non_null(p);
	assert_int_equal(pk_pmu__add_format(p, "event", "config:0-7", 10), 0);
	assert_int_equal(pk_pmu__add_format(p, "event", "config:0-7", 10), -EEXIST);
	assert_int_equal(pk_pmu__add_format(p, "bad", "config:99", 9), -PK_ERR_PARSE);
	assert_int_equal(pk_pmu__add_alias(p, "a1", "event=5", 2.0, "MiB"), 0);
	assert_int_equal(pk_pmu__add_alias(p, "a0", "a1", 1.0, NULL), 0);
	assert_int_equal(pk_pmu__add_alias(p, "a1", "event=6", 1.0, NULL), -EEXIST);
	assert_string_equal(pk_pmu__alias_name(p, 0), "a0");
	assert_string_equal(pk_pmu__alias_unit(p, 1), "MiB");
	expect_ok(p, "a0", 5, 0, 0, 0);
	/* alias chains: four levels expand, five are refused */
	assert_int_equal(pk_pmu__add_alias(p, "d4", "event=9", 1.0, NULL), 0);
	assert_int_equal(pk_pmu__add_alias(p, "d3", "d4", 1.0, NULL), 0);
	assert_int_equal(pk_pmu__add_alias(p, "d2", "d3", 1.0, NULL), 0);
	assert_int_equal(pk_pmu__add_alias(p, "d1", "d2", 1.0, NULL), 0);
	assert_int_equal(pk_pmu__add_alias(p, "d0", "d1", 1.0, NULL), 0);
	expect_ok(p, "d1", 9, 0, 0, 0);
	expect_err(p, "d0", -PK_ERR_PARSE, "nest more than 4 levels", NULL);
	/* no formats beyond "event": the message still lists the raw config words */
	expect_err(p, "umask=1", -PK_ERR_PARSE, "valid terms: event, config, config1", NULL);
	pk_pmu__delete(p);

	/* a PMU without formats (like "software") only takes raw config words */
	p = pk_pmu__new("bare", 1);
	expect_ok(p, "config=3", 3, 0, 0, 0);
	expect_err(p, "event=1", -PK_ERR_PARSE, "unknown term 'event' for PMU 'bare'",
		   "valid terms: config, config1, config2, config3");
	pk_pmu__delete(p);

	/* the number of terms per encode is bounded */
	char name[16], spec[32], big[4096];
	size_t n = 0;
	p = pk_pmu__new("wide", 50);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "f%02d", i);
		snprintf(spec, sizeof(spec), "config%s:%d", i < 64 ? "" : "1", i % 64);
		assert_int_equal(pk_pmu__add_format(p, name, spec, strlen(spec)), 0);
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%s%s", i ? "," : "", name);
	}
	expect_err(p, big, -PK_ERR_PARSE, "too many terms", NULL);
	expect_ok(p, "f00,f63,f64,f99", 1 | (1ULL << 63), 1 | (1ULL << 35), 0, 0);
	pk_pmu__delete(p);
}

/* ---- hostile trees ---- */

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "test_pmu: sysfs load blocked (FIFO?)\n";
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	(void)r;
	_exit(1);
}

static void mk(const char *rel, int kind)
{
	char p[2 * PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", tree_root, rel);
	switch (kind) {
	case 'd':
		assert_int_equal(mkdir(p, 0755), 0);
		break;
	case 'p':
		assert_int_equal(mkfifo(p, 0644), 0);
		break;
	case 'l': /* symlink to itself: ELOOP */
		assert_int_equal(symlink(p, p), 0);
		break;
	case 'x': /* dangling */
		assert_int_equal(symlink("/nonexistent/perfkit/x", p), 0);
		break;
	}
}

static void test_sysfs_hostile(void **state)
{
	const char *D = "bus/event_source/devices";
	char p[PATH_MAX];
#define P(rel) (snprintf(p, sizeof(p), "%s/%s", D, rel), p)

	w(P("notype/format/event"), "config:0-7");
	w(P("badtype/type"), "garbage\n");
	w(P("bigtype/type"), "99999999999\n");
	w(P("negtype/type"), "-1\n");
	w(P("emptytype/type"), "");
	w(P("ok/type"), "7\n");
	w(P("ok/cpumask"), "\x01\x02\n");
	w(P("ok/rdpmc"), "yes\n");
	w(P("ok/format/event"), "config:0-7\n");
	w(P("ok/format/bad"), "config:99\n");
	w(P("ok/format/nul"), "");
	char *huge = malloc(1 << 20);
	assert_non_null(huge);
	memset(huge, ' ', (1 << 20) - 1);
	memcpy(huge, "config:0-7", 10);
	huge[(1 << 20) - 1] = '\0';
	w(P("ok/format/huge"), huge);
	free(huge);
	mk(P("ok/format/adir"), 'd');
	mk(P("ok/format/fifo"), 'p');
	mk(P("ok/format/loop"), 'l');
	w(P("ok/events/good"), "event=1\n");
	w(P("ok/events/good.scale"), "notanumber\n");
	mk(P("ok/events/good.unit"), 'p');
	mk(P("ok/events/fifo"), 'p');
	mk(P("ok/events/adir"), 'd');
	mk(P("ok/events/loopy"), 'l');
	mk(P("ok/events/dangling"), 'x');
	w(P("ok/events/binary"), "event=\x01\x02");
	w(P("ok/events/empty"), "\n");
	w(P("ok/events/inf"), "event=2");
	w(P("ok/events/inf.scale"), "inf");
	w(P("ok/events/a,b"), "event=3");
	mk(P("ok/events/fifo2"), 'p');
	w(P("ok/events/fifo2.scale"), "2");
	mk(P("looplink"), 'l');
	mk(P("dangling"), 'x');
	w(P("plainfile"), "7\n");
	mk(P("fifopmu"), 'p');
#undef P

	signal(SIGALRM, on_alarm);
	alarm(30);
	pk_test_log_clear();
	struct pk_pmu_set *set = load_tree();
	alarm(0);

	assert_int_equal(pk_pmu_set__count(set), 1);
	const struct pk_pmu *ok = pk_pmu_set__get(set, 0);
	assert_string_equal(pk_pmu__name(ok), "ok");
	assert_int_equal(pk_pmu__type(ok), 7);
	assert_null(pk_pmu__cpumask(ok));
	assert_int_equal(pk_pmu__rdpmc(ok), -1);
	assert_int_equal(pk_pmu__format_count(ok), 1);
	assert_string_equal(pk_pmu__format_name(ok, 0), "event");
	assert_int_equal(pk_pmu__alias_count(ok), 2);
	assert_string_equal(pk_pmu__alias_name(ok, 0), "good");
	assert_true(pk_pmu__alias_scale(ok, 0) == 1.0);
	assert_null(pk_pmu__alias_unit(ok, 0));
	assert_string_equal(pk_pmu__alias_name(ok, 1), "inf");
	assert_true(pk_pmu__alias_scale(ok, 1) == 1.0);

	const char *log = pk_test_log_text();
	assert_non_null(strstr(log, "skipping PMU 'notype'"));
	assert_non_null(strstr(log, "skipping PMU 'badtype'"));
	assert_non_null(strstr(log, "skipping PMU 'bigtype'"));
	assert_non_null(strstr(log, "skipping format 'huge'"));
	assert_non_null(strstr(log, "skipping format 'bad'"));
	assert_non_null(strstr(log, "skipping event alias 'fifo'"));
	pk_pmu_set__free(set);

	/* absent tree: empty set */
	struct pk_pmu_set *empty = NULL;
	PK_OPTS(pk_pmu_opts, o, .sysfs_root = "/nonexistent/perfkit");
	assert_int_equal(pk_pmu_set__load(&empty, &o), 0);
	assert_int_equal(pk_pmu_set__count(empty), 0);
	pk_pmu_set__free(empty);
}

static void test_sysfs_alias_cap(void **state)
{
	char rel[128];
	w("bus/event_source/devices/many/type", "8");
	w("bus/event_source/devices/many/format/event", "config:0-15");
	for (int i = 0; i < PK_PMU_MAX_ALIASES + 10; i++) {
		snprintf(rel, sizeof(rel), "bus/event_source/devices/many/events/e%05d", i);
		w(rel, "event=1");
	}
	struct pk_pmu_set *set = load_tree();
	const struct pk_pmu *m = pk_pmu_set__find(set, "many");
	assert_non_null(m);
	assert_int_equal(pk_pmu__alias_count(m), PK_PMU_MAX_ALIASES);
	pk_pmu_set__free(set);
}

/* ---- the real /sys ---- */

static struct pk_pmu_set *load_real(void)
{
	struct pk_pmu_set *set = NULL;
	struct stat st;
	if (stat("/sys/bus/event_source/devices", &st) != 0)
		return NULL;
	assert_int_equal(pk_pmu_set__load(&set, NULL), 0);
	return set;
}

static void test_real_sysfs(void **state)
{
	struct pk_pmu_set *set = load_real();
	if (!set) {
		PK_SKIP("no /sys/bus/event_source/devices");
		return;
	}
	const struct pk_pmu *sw = pk_pmu_set__find(set, "software");
	const struct pk_pmu *tp = pk_pmu_set__find(set, "tracepoint");
	const struct pk_pmu *bp = pk_pmu_set__find(set, "breakpoint");
	assert_non_null(sw);
	assert_non_null(tp);
	assert_non_null(bp);
	assert_int_equal(pk_pmu__type(sw), PERF_TYPE_SOFTWARE);
	assert_int_equal(pk_pmu__type(tp), PERF_TYPE_TRACEPOINT);
	assert_int_equal(pk_pmu__type(bp), PERF_TYPE_BREAKPOINT);
	assert_ptr_equal(pk_pmu_set__find_type(set, PERF_TYPE_SOFTWARE), sw);
	/* sorted by name */
	for (size_t i = 1; i < pk_pmu_set__count(set); i++)
		assert_true(strcmp(pk_pmu__name(pk_pmu_set__get(set, i - 1)),
				   pk_pmu__name(pk_pmu_set__get(set, i))) < 0);
	/* every PMU's type agrees with its sysfs file */
	for (size_t i = 0; i < pk_pmu_set__count(set); i++) {
		const struct pk_pmu *pmu = pk_pmu_set__get(set, i);
		char path[PATH_MAX];
		long long t;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
			 pk_pmu__name(pmu));
		assert_int_equal(pk_read_int_file(path, &t), 0);
		assert_int_equal(t, pk_pmu__type(pmu));
	}

	const struct pk_pmu *up = pk_pmu_set__find(set, "uprobe");
	if (up) {
		const struct pk_format *rp = pk_pmu__find_format(up, "retprobe");
		assert_non_null(rp);
		assert_int_equal(rp->word, PK_CFG_CONFIG);
		assert_int_equal(rp->nr_ranges, 1);
		assert_int_equal(rp->ranges[0].lo, 0);
		assert_int_equal(rp->ranges[0].hi, 0);
		uint64_t cfg[4];
		char err[256];
		assert_int_equal(enc(up, "retprobe", cfg, err, sizeof(err)), 0);
		assert_int_equal(cfg[0], 1);
	} else {
		printf("[  NOTE    ] no uprobe PMU; its checks were not run\n");
	}

	const struct pk_pmu *msr = pk_pmu_set__find(set, "msr");
	if (msr) {
		long i = pk_pmu__find_alias(msr, "tsc");
		assert_true(i >= 0);
		/* the expected config comes straight from the alias file: "event=0x..." */
		char buf[64];
		uint64_t want;
		FILE *fp = fopen("/sys/bus/event_source/devices/msr/events/tsc", "r");
		assert_non_null(fp);
		assert_non_null(fgets(buf, sizeof(buf), fp));
		fclose(fp);
		assert_int_equal(strncmp(buf, "event=", 6), 0);
		want = strtoull(buf + 6, NULL, 0);
		uint64_t cfg[4];
		char err[256];
		assert_int_equal(enc(msr, "tsc", cfg, err, sizeof(err)), 0);
		assert_int_equal(cfg[0], want);
		assert_int_equal(enc(msr, "event=0x3", cfg, err, sizeof(err)), 0);
		assert_int_equal(cfg[0], 3);
		expect_err(msr, "foo", -PK_ERR_PARSE, "unknown term 'foo' for PMU 'msr'",
			   "valid terms: event");
		/* and the encoded tsc event really opens (system-wide on cpu 0) */
		if (pk_test_is_root()) {
			struct pk_attr a;
			memset(&a, 0, sizeof(a));
			a.attr.type = pk_pmu__type(msr);
			assert_int_equal(pk_pmu__encode(msr, "tsc", &a, err, sizeof(err)), 0);
			int fd = pk_sys_perf_event_open(&a.attr, -1, 0, -1, 0);
			if (fd < 0)
				fail_msg("msr/tsc/ did not open: %s", pk_strerror(fd));
			close(fd);
		}
	} else {
		printf("[  NOTE    ] no msr PMU; its checks were not run\n");
	}
	pk_pmu_set__free(set);
}

/* ---- libpfm4 ---- */

struct pfm_ctx {
	size_t n, encoded, stop_after;
	bool saw_cpu_clock;
	char first_fail[600];
};

static int pfm_cb(const char *pmu, const char *name, const char *desc, void *ctx)
{
	struct pfm_ctx *c = ctx;
	char full[512];
	struct pk_attr a;

	assert_non_null(pmu);
	assert_non_null(name);
	assert_non_null(desc);
	c->n++;
	if (!strcmp(pmu, "perf") && !strcmp(name, "PERF_COUNT_SW_CPU_CLOCK"))
		c->saw_cpu_clock = true;
	/* every event libpfm4 lists must encode (a default umask may be needed: skip those) */
	snprintf(full, sizeof(full), "%s::%s", pmu, name);
	memset(&a, 0, sizeof(a));
	int r = pk_pfm__encode(full, &a);
	if (r == 0)
		c->encoded++;
	else if (r != -PK_ERR_PARSE && !c->first_fail[0])
		snprintf(c->first_fail, sizeof(c->first_fail), "%s: %d", full, r);
	if (c->stop_after && c->n == c->stop_after)
		return 42;
	return 0;
}

static void test_pfm(void **state)
{
	struct pk_attr a;

	memset(&a, 0, sizeof(a));
	a.attr.sample_period = 1234;
	assert_int_equal(pk_pfm__encode("perf::PERF_COUNT_SW_CPU_CLOCK", &a), 0);
	assert_int_equal(a.attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.attr.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(a.attr.exclude_kernel, 0);
	assert_int_equal(a.attr.sample_period, 1234); /* untouched */

	memset(&a, 0, sizeof(a));
	assert_int_equal(pk_pfm__encode("perf::PERF_COUNT_SW_TASK_CLOCK:u", &a), 0);
	assert_int_equal(a.attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.attr.config, PERF_COUNT_SW_TASK_CLOCK);
	assert_int_equal(a.attr.exclude_kernel, 1);
	assert_int_equal(a.attr.exclude_user, 0);

	memset(&a, 0, sizeof(a));
	assert_int_equal(pk_pfm__encode("perf::PERF_COUNT_SW_CONTEXT_SWITCHES", &a), 0);
	assert_int_equal(a.attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);

	memset(&a, 0, sizeof(a));
	a.attr.config = 99;
	assert_int_equal(pk_pfm__encode("no_such_pmu::NO_SUCH_EVENT_XYZ", &a), -ENOENT);
	assert_int_equal(pk_pfm__encode("NO_SUCH_EVENT_XYZ", &a), -ENOENT);
	assert_int_equal(a.attr.config, 99);
	assert_int_equal(pk_pfm__encode("", &a), -EINVAL);

	/* the encoded software event opens and counts */
	if (pk_test_can_perf()) {
		memset(&a, 0, sizeof(a));
		assert_int_equal(pk_pfm__encode("perf::PERF_COUNT_SW_TASK_CLOCK:u", &a), 0);
		int fd = pk_sys_perf_event_open(&a.attr, 0, -1, -1, 0);
		assert_true(fd >= 0);
		volatile unsigned x = 0;
		for (unsigned i = 0; i < 1000000; i++)
			x += i;
		(void)x;
		uint64_t v = 0;
		assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
		assert_true(v > 0);
		close(fd);
	}

	struct pfm_ctx c = { 0 };
	assert_int_equal(pk_pfm__foreach(pfm_cb, &c), 0);
	assert_true(c.n > 0);
	assert_true(c.saw_cpu_clock);
	if (c.first_fail[0])
		fail_msg("listed event does not encode: %s", c.first_fail);
	assert_true(c.encoded > 0);
	printf("[  NOTE    ] libpfm4: %zu events listed, %zu encoded\n", c.n, c.encoded);

	struct pfm_ctx s = { .stop_after = 3 };
	assert_int_equal(pk_pfm__foreach(pfm_cb, &s), 42);
	assert_int_equal(s.n, 3);
	assert_int_equal(pk_pfm__foreach(NULL, NULL), -EINVAL);
}

/* ---- tracepoints ---- */

static void test_tracepoint_id(void **state)
{
	assert_int_equal(pk_tracepoint__id("/x", "..", "sched_switch"), -EINVAL);
	assert_int_equal(pk_tracepoint__id("/x", "sched", ".."), -EINVAL);
	assert_int_equal(pk_tracepoint__id("/x", "sched", "."), -EINVAL);
	assert_int_equal(pk_tracepoint__id("/x", "sched", ""), -EINVAL);
	assert_int_equal(pk_tracepoint__id("/x", "a/b", "c"), -EINVAL);
	assert_int_equal(pk_tracepoint__id("/x", "../..", "c"), -EINVAL);
	assert_int_equal(pk_tracepoint__id("/x", NULL, "c"), -EINVAL);

	const char *root = pk_tracefs__root();
	if (!root) {
		PK_SKIP("tracefs is not mounted");
		return;
	}
	long long id = pk_tracepoint__id(NULL, "sched", "sched_switch");
	assert_true(id > 0);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", root);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	long long want = -1;
	assert_int_equal(fscanf(f, "%lld", &want), 1);
	fclose(f);
	assert_int_equal(id, want);
	assert_true(pk_tracepoint__id(NULL, "sched", "no_such_event_xyz") < 0);
}

struct tp_ctx {
	size_t n;
	long long last_id;
	char prev[600];
	bool sorted;
	size_t stop_after;
};

static int tp_cb(const char *sys, const char *name, long long id, void *ctx)
{
	struct tp_ctx *c = ctx;
	char cur[600];
	snprintf(cur, sizeof(cur), "%s:%s", sys, name);
	if (c->n && strcmp(c->prev, cur) >= 0)
		c->sorted = false;
	snprintf(c->prev, sizeof(c->prev), "%s", cur);
	c->last_id = id;
	c->n++;
	return c->stop_after && c->n == c->stop_after ? 9 : 0;
}

static void test_tracepoint_foreach(void **state)
{
	const char *root = pk_tracefs__root();
	if (!root) {
		PK_SKIP("tracefs is not mounted");
		return;
	}
	struct tp_ctx c = { .sorted = true };
	assert_int_equal(pk_tracepoint__foreach(NULL, "sched:sched_switch", tp_cb, &c), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.last_id, pk_tracepoint__id(NULL, "sched", "sched_switch"));

	/* count the sched events with an id file independently */
	char path[PATH_MAX];
	size_t want = 0;
	snprintf(path, sizeof(path), "%s/events/sched", root);
	DIR *d = opendir(path);
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		char idp[PATH_MAX + 300];
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		snprintf(idp, sizeof(idp), "%s/%s/id", path, de->d_name);
		if (stat(idp, &st) == 0 && S_ISREG(st.st_mode))
			want++;
	}
	closedir(d);
	assert_true(want > 1);
	memset(&c, 0, sizeof(c));
	c.sorted = true;
	assert_int_equal(pk_tracepoint__foreach(NULL, "sched:*", tp_cb, &c), 0);
	assert_int_equal(c.n, want);
	assert_true(c.sorted);

	memset(&c, 0, sizeof(c));
	c.stop_after = 2;
	assert_int_equal(pk_tracepoint__foreach(NULL, "sched:*", tp_cb, &c), 9);
	assert_int_equal(c.n, 2);
}

static void test_tracepoint_synthetic(void **state)
{
	w("events/sys2/ev/id", "7\n");
	w("events/sys1/ev2/id", "garbage\n");
	w("events/sys1/ev1/id", "5\n");
	w("events/sys1/ev3/format", "name: ev3\n"); /* no id */
	w("events/sys1/enable", "0\n");
	w("events/header_page", "x\n");

	struct tp_ctx c = { .sorted = true };
	assert_int_equal(pk_tracepoint__foreach(tree_root, NULL, tp_cb, &c), 0);
	assert_int_equal(c.n, 2);
	assert_true(c.sorted);
	assert_string_equal(c.prev, "sys2:ev");
	assert_int_equal(c.last_id, 7);
	assert_int_equal(pk_tracepoint__id(tree_root, "sys1", "ev1"), 5);
	assert_int_equal(pk_tracepoint__id(tree_root, "sys1", "ev2"), -PK_ERR_PARSE);
	assert_int_equal(pk_tracepoint__id(tree_root, "sys1", "ev3"), -ENOENT);
}

int main(void)
{
	pk_test_quiet_log();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_parse_ok),
		cmocka_unit_test(test_format_parse_bad),
		cmocka_unit_test(test_format_encode),
		cmocka_unit_test_setup_teardown(test_sysfs_load, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_encode_terms, setup_tree, teardown_tree),
		cmocka_unit_test(test_internal_pmu),
		cmocka_unit_test_setup_teardown(test_sysfs_hostile, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_sysfs_alias_cap, setup_tree, teardown_tree),
		cmocka_unit_test(test_real_sysfs),
		cmocka_unit_test(test_pfm),
		cmocka_unit_test(test_tracepoint_id),
		cmocka_unit_test(test_tracepoint_foreach),
		cmocka_unit_test_setup_teardown(test_tracepoint_synthetic, setup_tree,
						teardown_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
