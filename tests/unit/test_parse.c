/* SPDX-License-Identifier: MIT */
/* lib/event: the event-spec parser and the name tables (perf's -e syntax). */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <perfkit/perfkit.h>
#include "internal.h"
#include "testutil.h"

static char *g_root;      /* scratch dir holding the synthetic trees */
static char g_sysfs[PATH_MAX], g_tracefs[PATH_MAX];

#define DEV "bus/event_source/devices/"

static int setup(void **state)
{
	(void)state;
	pk_test_quiet_log();
	g_root = pk_test_mkdtemp("parse");
	snprintf(g_sysfs, sizeof(g_sysfs), "%s/sys", g_root);
	snprintf(g_tracefs, sizeof(g_tracefs), "%s/tracing", g_root);

	/* a PMU with split-range formats and terms landing in config1/config2 */
	pk_test_write_file(g_sysfs, DEV "fake/type", "42\n");
	pk_test_write_file(g_sysfs, DEV "fake/format/event", "config:0-7\n");
	pk_test_write_file(g_sysfs, DEV "fake/format/umask", "config:8-15\n");
	pk_test_write_file(g_sysfs, DEV "fake/format/inv", "config:23\n");
	pk_test_write_file(g_sysfs, DEV "fake/format/split", "config:16-19,32-35\n");
	pk_test_write_file(g_sysfs, DEV "fake/format/ldlat", "config1:0-15\n");
	pk_test_write_file(g_sysfs, DEV "fake/format/fe", "config2:0-23\n");
	pk_test_write_file(g_sysfs, DEV "fake/events/cyc", "event=0x3c\n");
	pk_test_write_file(g_sysfs, DEV "fake/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	pk_test_write_file(g_sysfs, DEV "fake/events/energy", "event=0x02\n");
	pk_test_write_file(g_sysfs, DEV "fake/events/energy.scale", "0.25\n");
	pk_test_write_file(g_sysfs, DEV "fake/events/energy.unit", "Joules\n");
	/* the dynamic probe PMUs */
	pk_test_write_file(g_sysfs, DEV "kprobe/type", "6\n");
	pk_test_write_file(g_sysfs, DEV "kprobe/format/retprobe", "config:0\n");
	pk_test_write_file(g_sysfs, DEV "uprobe/type", "7\n");
	pk_test_write_file(g_sysfs, DEV "uprobe/format/retprobe", "config:0\n");
	pk_test_write_file(g_sysfs, DEV "uprobe/format/ref_ctr_offset", "config:32-63\n");

	/* a tracefs with a few tracepoints */
	pk_test_write_file(g_tracefs, "events/sched/sched_switch/id", "300\n");
	pk_test_write_file(g_tracefs, "events/sched/sched_wakeup/id", "301\n");
	pk_test_write_file(g_tracefs, "events/sched/sched_waking/id", "302\n");
	pk_test_write_file(g_tracefs, "events/sched/enable", "0\n");
	pk_test_write_file(g_tracefs, "events/syscalls/sys_enter_getppid/id", "500\n");
	pk_test_write_file(g_tracefs, "events/syscalls/sys_exit_getppid/id", "501\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pk_test_rmtree(g_root);
	free(g_root);
	return 0;
}

/* Parse `s` with the synthetic trees into a fresh list; asserts success. */
static struct pk_event_list *parse_ok(const char *s)
{
	PK_OPTS(pk_parse_opts, o, .sysfs_root = g_sysfs, .tracefs_root = g_tracefs,
		.no_pfm = true);
	struct pk_parse_error err;
	struct pk_event_list *l = pk_event_list__new();
	assert_non_null(l);
	int r = pk_event_list__parse(l, s, &o, &err);
	if (r != 0)
		fail_msg("'%s' failed: %d at %d: %s", s, r, err.column, err.msg);
	assert_true(pk_event_list__count(l) > 0);
	for (size_t i = 0; i < pk_event_list__count(l); i++) {
		const struct pk_attr *a = pk_event_spec__attr(pk_event_list__get(l, i));
		assert_int_equal(a->attr.size, pk_attr__min_size(a));
	}
	return l;
}

/* Parse a single-event spec and return a copy of its attr. */
static struct pk_attr attr_of(const char *s)
{
	struct pk_event_list *l = parse_ok(s);
	assert_int_equal(pk_event_list__count(l), 1);
	struct pk_attr a = *pk_event_spec__attr(pk_event_list__get(l, 0));
	pk_event_list__free(l);
	return a;
}

/* Parse `s`, expect failure `code` at `col` with `msg_part` in the message; also
 * checks that nothing was appended to a list that already held one event. */
static void parse_fail(const char *s, int code, int col, const char *msg_part)
{
	PK_OPTS(pk_parse_opts, o, .sysfs_root = g_sysfs, .tracefs_root = g_tracefs,
		.no_pfm = true);
	struct pk_parse_error err = { .column = -1 };
	struct pk_event_list *l = pk_event_list__new();
	assert_int_equal(pk_event_list__parse(l, "cs", &o, NULL), 0);
	int r = pk_event_list__parse(l, s, &o, &err);
	if (r != code || (col >= 0 && err.column != col) ||
	    (msg_part && !strstr(err.msg, msg_part)))
		fail_msg("'%.60s': got %d at col %d '%s'; want %d at col %d '%s'", s, r,
			 err.column, err.msg, code, col, msg_part ? msg_part : "");
	assert_int_equal(pk_event_list__count(l), 1);
	pk_event_list__free(l);
}

/* ---- name tables ---- */

struct want { const char *name; uint32_t type; uint64_t config; };

/* Written out by hand from the man page's enum values. */
static const struct want generic[] = {
	{ "cycles", 0, 0 }, { "cpu-cycles", 0, 0 }, { "instructions", 0, 1 },
	{ "cache-references", 0, 2 }, { "cache-misses", 0, 3 }, { "branches", 0, 4 },
	{ "branch-instructions", 0, 4 }, { "branch-misses", 0, 5 }, { "bus-cycles", 0, 6 },
	{ "stalled-cycles-frontend", 0, 7 }, { "idle-cycles-frontend", 0, 7 },
	{ "stalled-cycles-backend", 0, 8 }, { "idle-cycles-backend", 0, 8 },
	{ "ref-cycles", 0, 9 },
	{ "cpu-clock", 1, 0 }, { "task-clock", 1, 1 }, { "page-faults", 1, 2 },
	{ "faults", 1, 2 }, { "context-switches", 1, 3 }, { "cs", 1, 3 },
	{ "cpu-migrations", 1, 4 }, { "migrations", 1, 4 }, { "minor-faults", 1, 5 },
	{ "major-faults", 1, 6 }, { "alignment-faults", 1, 7 }, { "emulation-faults", 1, 8 },
	{ "dummy", 1, 9 }, { "bpf-output", 1, 10 }, { "cgroup-switches", 1, 11 },
};

static void test_generic_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++) {
		struct pk_event_list *l = parse_ok(generic[i].name);
		const struct pk_event_spec *e = pk_event_list__get(l, 0);
		const struct pk_attr *a = pk_event_spec__attr(e);
		assert_int_equal(a->attr.type, generic[i].type);
		assert_int_equal(a->attr.config, generic[i].config);
		assert_int_equal(pk_event_spec__kind(e),
				 generic[i].type ? PK_EV_SOFTWARE : PK_EV_HARDWARE);
		assert_string_equal(pk_event_spec__name(e), generic[i].name);
		assert_int_equal(pk_event_spec__group(e), -1);
		assert_true(pk_event_spec__is_leader(e));
		assert_null(pk_event_spec__pmu(e));
		assert_true(pk_event_spec__scale(e) == 1.0);
		assert_false(a->attr.exclude_user || a->attr.exclude_kernel || a->attr.pinned);
		pk_event_list__free(l);
	}
	/* the tables cover exactly these names */
	size_t nhw, nsw, seen = 0;
	const struct pk_event_name *hw = pk_hw_event_names(&nhw), *sw = pk_sw_event_names(&nsw);
	assert_int_equal(nhw, 10);
	assert_int_equal(nsw, 12);
	for (size_t i = 0; i < nhw + nsw; i++) {
		const struct pk_event_name *n = i < nhw ? &hw[i] : &sw[i - nhw];
		assert_non_null(n->desc);
		for (size_t j = 0; j < sizeof(generic) / sizeof(generic[0]); j++)
			if (!strcmp(generic[j].name, n->name) ||
			    (n->alias && !strcmp(generic[j].name, n->alias))) {
				assert_int_equal(generic[j].type, n->type);
				assert_int_equal(generic[j].config, n->config);
				seen++;
			}
	}
	assert_int_equal(seen, sizeof(generic) / sizeof(generic[0]));
	/* case matters for generic names, as in perf */
	parse_fail("CYCLES", -ENOENT, 0, "unknown event 'CYCLES'");
}

/* config = cache | op << 8 | result << 16, computed by hand */
static const struct want caches[] = {
	{ "L1-dcache-loads", 3, 0x00000 },        { "L1-dcache-load-misses", 3, 0x10000 },
	{ "L1-dcache-stores", 3, 0x00100 },       { "L1-dcache-store-misses", 3, 0x10100 },
	{ "L1-dcache-prefetches", 3, 0x00200 },   { "L1-dcache-prefetch-misses", 3, 0x10200 },
	{ "L1-icache-loads", 3, 0x00001 },        { "L1-icache-load-misses", 3, 0x10001 },
	{ "LLC-loads", 3, 0x00002 },              { "LLC-load-misses", 3, 0x10002 },
	{ "LLC-stores", 3, 0x00102 },             { "LLC-store-misses", 3, 0x10102 },
	{ "dTLB-load-misses", 3, 0x10003 },       { "dTLB-stores", 3, 0x00103 },
	{ "iTLB-loads", 3, 0x00004 },             { "iTLB-load-misses", 3, 0x10004 },
	{ "branch-loads", 3, 0x00005 },           { "branch-load-misses", 3, 0x10005 },
	{ "node-loads", 3, 0x00006 },             { "node-store-misses", 3, 0x10106 },
	{ "node-prefetches", 3, 0x00206 },
	/* aliases, short forms, any case, result before op */
	{ "L1-dcache-misses", 3, 0x10000 },       { "L1-dcache", 3, 0x00000 },
	{ "l1d-read-miss", 3, 0x10000 },          { "l1-d-loads", 3, 0x00000 },
	{ "Data-TLB-write-access", 3, 0x00103 },  { "bpu-miss", 3, 0x10005 },
	{ "L2-speculative-read", 3, 0x00202 },    { "LLC-misses-stores", 3, 0x10102 },
	{ "dtlb-LOADS", 3, 0x00003 },             { "L1-Instruction-prefetch", 3, 0x00201 },
	{ "i-tlb-misses", 3, 0x10004 },           { "LLC", 3, 0x00002 },
	{ "btb-Reference", 3, 0x00005 },          { "node-prefetch-ops", 3, 0x00206 },
};

static void test_cache_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		struct pk_event_list *l = parse_ok(caches[i].name);
		const struct pk_event_spec *e = pk_event_list__get(l, 0);
		if (pk_event_spec__attr(e)->attr.config != caches[i].config)
			fail_msg("%s: config %#llx, want %#llx", caches[i].name,
				 (unsigned long long)pk_event_spec__attr(e)->attr.config,
				 (unsigned long long)caches[i].config);
		assert_int_equal(pk_event_spec__attr(e)->attr.type, PERF_TYPE_HW_CACHE);
		assert_int_equal(pk_event_spec__kind(e), PK_EV_HWCACHE);
		assert_string_equal(pk_event_spec__name(e), caches[i].name);
		pk_event_list__free(l);
	}
	/* ops a cache does not have, doubled parts, too many parts */
	parse_fail("L1-icache-stores", -PK_ERR_PARSE, 0, "no 'store'");
	parse_fail("iTLB-prefetches", -PK_ERR_PARSE, 0, "no 'prefetch'");
	parse_fail("branch-stores", -PK_ERR_PARSE, 0, "no 'store'");
	parse_fail("LLC-loads-stores", -PK_ERR_PARSE, 0, "unexpected 'stores'");
	parse_fail("L1-dcache-misses-refs", -PK_ERR_PARSE, 0, "unexpected 'refs'");
	parse_fail("L1-dcache-load-misses-x", -PK_ERR_PARSE, 0, "unexpected 'x'");
	parse_fail("L1-dcache-foo", -ENOENT, 0, "unknown event");
	parse_fail("cycles,L1-dcache-lods", -ENOENT, 7, "did you mean 'L1-dcache-loads'");
}

struct cache_seen { int n, stop_after; bool bad; char names[64][40]; };

static int cache_cb(const char *name, uint64_t config, void *ctx)
{
	struct cache_seen *s = ctx;
	/* every emitted name parses back to the same config */
	struct pk_attr a = attr_of(name);
	if (a.attr.config != config || a.attr.type != PERF_TYPE_HW_CACHE)
		s->bad = true;
	for (int i = 0; i < s->n && i < 64; i++)
		if (!strcmp(s->names[i], name))
			s->bad = true; /* duplicate */
	if (s->n < 64)
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	s->n++;
	return s->stop_after && s->n == s->stop_after ? 7 : 0;
}

static bool cache_has(const struct cache_seen *s, const char *name)
{
	for (int i = 0; i < s->n && i < 64; i++)
		if (!strcmp(s->names[i], name))
			return true;
	return false;
}

static void test_cache_foreach(void **state)
{
	(void)state;
	struct cache_seen s = { 0 };
	assert_int_equal(pk_hwcache__foreach(cache_cb, &s), 0);
	assert_false(s.bad);
	/* perf's valid combinations: L1d 3 ops, L1i 2, LLC 3, dTLB 3, iTLB 1, branch 1,
	 * node 3 = 16 ops x {access, miss} */
	assert_int_equal(s.n, 32);
	const char *must[] = { "L1-dcache-load-misses", "L1-dcache-loads", "LLC-stores",
			       "dTLB-load-misses", "branch-loads", "node-loads",
			       "L1-icache-prefetch-misses", "iTLB-load-misses" };
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		assert_true(cache_has(&s, must[i]));
	assert_false(cache_has(&s, "L1-icache-stores"));
	struct cache_seen s2 = { .stop_after = 3 };
	assert_int_equal(pk_hwcache__foreach(cache_cb, &s2), 7);
	assert_int_equal(s2.n, 3);
	assert_int_equal(pk_hwcache__foreach(NULL, NULL), -EINVAL);
}

static void test_raw(void **state)
{
	(void)state;
	struct pk_attr a = attr_of("r1a8");
	assert_int_equal(a.attr.type, PERF_TYPE_RAW);
	assert_int_equal(a.attr.config, 0x1a8);
	assert_int_equal(attr_of("r0x1A8").attr.config, 0x1a8);
	assert_true(attr_of("rffffffffffffffff").attr.config == UINT64_MAX);
	a = attr_of("rc0:u");
	assert_int_equal(a.attr.config, 0xc0);
	assert_true(a.attr.exclude_kernel);
	struct pk_event_list *l = parse_ok("r1a8/period=5000/");
	assert_string_equal(pk_event_spec__name(pk_event_list__get(l, 0)), "r1a8/period=5000/");
	assert_int_equal(pk_event_spec__kind(pk_event_list__get(l, 0)), PK_EV_RAW);
	pk_event_list__free(l);
	parse_fail("r10000000000000000", -PK_ERR_PARSE, 0, "too large");
	parse_fail("r", -ENOENT, 0, "unknown event 'r'");
	parse_fail("rxyz", -ENOENT, 0, NULL);
}

/* ---- modifiers ---- */

struct modcase {
	const char *spec;
	unsigned eu, ek, eh, eH, eG, eI, precise, pinned, excl, flags;
};

static const struct modcase mods[] = {
	{ "cycles:u",    0, 1, 1, 0, 0, 0, 0, 0, 0, 0 },
	{ "cycles:k",    1, 0, 1, 0, 0, 0, 0, 0, 0, 0 },
	{ "cycles:h",    1, 1, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "cycles:uk",   0, 0, 1, 0, 0, 0, 0, 0, 0, 0 },
	{ "cycles:ku",   0, 0, 1, 0, 0, 0, 0, 0, 0, 0 },
	{ "cycles:ukh",  0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "cycles:G",    0, 0, 0, 1, 0, 0, 0, 0, 0, 0 },
	{ "cycles:H",    0, 0, 0, 0, 1, 0, 0, 0, 0, 0 },
	{ "cycles:GH",   0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "cycles:I",    0, 0, 0, 0, 0, 1, 0, 0, 0, 0 },
	{ "cycles:p",    0, 0, 0, 0, 1, 0, 1, 0, 0, 0 },
	{ "cycles:ppp",  0, 0, 0, 0, 1, 0, 3, 0, 0, 0 },
	{ "cycles:pG",   0, 0, 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "cycles:Gp",   0, 0, 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "cycles:upp",  0, 1, 1, 0, 1, 0, 2, 0, 0, 0 },
	{ "cycles:P",    0, 0, 0, 0, 0, 0, 0, 0, 0, PK_EVF_PRECISE_MAX },
	{ "cycles:S",    0, 0, 0, 0, 0, 0, 0, 0, 0, PK_EVF_SAMPLE_READ },
	{ "cycles:W",    0, 0, 0, 0, 0, 0, 0, 0, 0, PK_EVF_WEAK_GROUP },
	{ "cycles:D",    0, 0, 0, 0, 0, 0, 0, 1, 0, 0 },
	{ "cycles:e",    0, 0, 0, 0, 0, 0, 0, 0, 1, 0 },
	{ "cycles:kDSe", 1, 0, 1, 0, 0, 0, 0, 1, 1, PK_EVF_SAMPLE_READ },
	{ "task-clock:uI", 0, 1, 1, 0, 0, 1, 0, 0, 0, 0 },
};

static void check_mods(const struct perf_event_attr *a, unsigned flags, const struct modcase *m)
{
	unsigned got[] = { a->exclude_user, a->exclude_kernel, a->exclude_hv, a->exclude_host,
			   a->exclude_guest, a->exclude_idle, a->precise_ip, a->pinned,
			   a->exclusive, flags };
	unsigned want[] = { m->eu, m->ek, m->eh, m->eH, m->eG, m->eI, m->precise, m->pinned,
			    m->excl, m->flags };
	const char *what[] = { "exclude_user", "exclude_kernel", "exclude_hv", "exclude_host",
			       "exclude_guest", "exclude_idle", "precise_ip", "pinned",
			       "exclusive", "flags" };
	for (size_t i = 0; i < sizeof(got) / sizeof(got[0]); i++)
		if (got[i] != want[i])
			fail_msg("%s: %s is %u, want %u", m->spec, what[i], got[i], want[i]);
}

static void test_modifiers(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		struct pk_event_list *l = parse_ok(mods[i].spec);
		const struct pk_event_spec *e = pk_event_list__get(l, 0);
		check_mods(&pk_event_spec__attr(e)->attr, pk_event_spec__flags(e), &mods[i]);
		assert_string_equal(pk_event_spec__name(e), mods[i].spec);
		pk_event_list__free(l);
	}
	parse_fail("cycles:pppp", -PK_ERR_PARSE, 10, "at most 3");
	parse_fail("cycles:z", -PK_ERR_PARSE, 7, "unknown modifier 'z'");
	parse_fail("cycles:ub", -PK_ERR_PARSE, 8, "unknown modifier 'b'");
	parse_fail("cycles:uu", -PK_ERR_PARSE, 8, "duplicate modifier 'u'");
	parse_fail("cycles:", -PK_ERR_PARSE, 7, "modifier expected");
	parse_fail("cycles:u2", -PK_ERR_PARSE, 8, "unexpected '2'");
	parse_fail("cycles::u", -PK_ERR_PARSE, 7, "unknown modifier ':'");
}

/* ---- generic terms, display names ---- */

static void test_terms(void **state)
{
	(void)state;
	struct pk_event_list *l = parse_ok("cycles/name=foo/,task-clock/period=1000/:u,"
					   "cs/freq=99,call-graph=dwarf,stack-size=8192/");
	assert_int_equal(pk_event_list__count(l), 3);
	const struct pk_event_spec *e0 = pk_event_list__get(l, 0), *e1 = pk_event_list__get(l, 1),
				   *e2 = pk_event_list__get(l, 2);
	assert_string_equal(pk_event_spec__name(e0), "foo");
	assert_int_equal(pk_event_spec__flags(e0), PK_EVF_NAME_SET);
	assert_string_equal(pk_event_spec__name(e1), "task-clock/period=1000/:u");
	assert_int_equal(pk_event_spec__attr(e1)->attr.sample_period, 1000);
	assert_int_equal(pk_event_spec__attr(e1)->attr.freq, 0);
	assert_true(pk_event_spec__attr(e1)->attr.exclude_kernel);
	assert_int_equal(pk_event_spec__flags(e1), PK_EVF_PERIOD_SET);
	assert_int_equal(pk_event_spec__attr(e2)->attr.sample_freq, 99);
	assert_int_equal(pk_event_spec__attr(e2)->attr.freq, 1);
	assert_int_equal(pk_event_spec__flags(e2), PK_EVF_FREQ_SET);
	assert_string_equal(pk_event_spec__callgraph(e2), "dwarf");
	assert_int_equal(pk_event_spec__stack_size(e2), 8192);
	assert_null(pk_event_spec__callgraph(e0));
	assert_int_equal(pk_event_spec__stack_size(e0), 0);
	pk_event_list__free(l);

	/* quoted names; modifiers straight after the closing '/' */
	l = parse_ok("cycles/name='my cycles'/u");
	assert_string_equal(pk_event_spec__name(pk_event_list__get(l, 0)), "my cycles");
	assert_true(pk_event_spec__attr(pk_event_list__get(l, 0))->attr.exclude_kernel);
	pk_event_list__free(l);

	parse_fail("cycles/call-graph=xx/", -PK_ERR_PARSE, 18, "call-graph must be");
	parse_fail("cycles/bogus=1/", -PK_ERR_PARSE, 7, "unknown term 'bogus'");
	parse_fail("cycles/period=/", -PK_ERR_PARSE, 14, "value expected");
	parse_fail("cycles/period/", -PK_ERR_PARSE, 7, "needs a value");
	parse_fail("cycles/period=1x/", -PK_ERR_PARSE, 14, "invalid number");
	parse_fail("cycles/period=1", -PK_ERR_PARSE, 6, "unterminated");
	parse_fail("cycles/period=99999999999999999999999/", -PK_ERR_PARSE, 14, "too large");
	parse_fail("cycles/name='x/", -PK_ERR_PARSE, 12, "unterminated quote");
	parse_fail("cycles/,/", -PK_ERR_PARSE, 7, "term name expected");
}

/* ---- groups and lists ---- */

static void test_groups(void **state)
{
	(void)state;
	struct pk_event_list *l = parse_ok("{cycles,instructions}:u,cs, { faults , task-clock }");
	assert_int_equal(pk_event_list__count(l), 5);
	int want_group[] = { 0, 0, -1, 1, 1 };
	bool want_leader[] = { true, false, true, true, false };
	const char *want_name[] = { "cycles", "instructions", "cs", "faults", "task-clock" };
	for (size_t i = 0; i < 5; i++) {
		const struct pk_event_spec *e = pk_event_list__get(l, i);
		assert_int_equal(pk_event_spec__group(e), want_group[i]);
		assert_int_equal(pk_event_spec__is_leader(e), want_leader[i]);
		assert_string_equal(pk_event_spec__name(e), want_name[i]);
		bool u = i < 2;
		assert_int_equal(pk_event_spec__attr(e)->attr.exclude_kernel, u);
		assert_int_equal(pk_event_spec__attr(e)->attr.exclude_user, 0);
	}
	assert_null(pk_event_list__get(l, 5));
	pk_event_list__free(l);

	/* a group modifier merges with the members' own */
	l = parse_ok("{cycles:u,instructions,cs:p}:kpS");
	const struct perf_event_attr *a0 = &pk_event_spec__attr(pk_event_list__get(l, 0))->attr,
				     *a1 = &pk_event_spec__attr(pk_event_list__get(l, 1))->attr,
				     *a2 = &pk_event_spec__attr(pk_event_list__get(l, 2))->attr;
	assert_int_equal(a0->exclude_user, 0);
	assert_int_equal(a0->exclude_kernel, 0);
	assert_int_equal(a0->exclude_hv, 1);
	assert_int_equal(a1->exclude_user, 1);
	assert_int_equal(a1->exclude_kernel, 0);
	assert_int_equal(a1->exclude_hv, 1);
	assert_int_equal(a0->precise_ip, 1);
	assert_int_equal(a2->precise_ip, 2);
	for (size_t i = 0; i < 3; i++)
		assert_true(pk_event_spec__flags(pk_event_list__get(l, i)) & PK_EVF_SAMPLE_READ);
	pk_event_list__free(l);

	/* D and e land on the leader only; W on every member */
	l = parse_ok("{cycles,instructions}:DeW");
	assert_int_equal(pk_event_spec__attr(pk_event_list__get(l, 0))->attr.pinned, 1);
	assert_int_equal(pk_event_spec__attr(pk_event_list__get(l, 0))->attr.exclusive, 1);
	assert_int_equal(pk_event_spec__attr(pk_event_list__get(l, 1))->attr.pinned, 0);
	assert_int_equal(pk_event_spec__attr(pk_event_list__get(l, 1))->attr.exclusive, 0);
	assert_true(pk_event_spec__flags(pk_event_list__get(l, 1)) & PK_EVF_WEAK_GROUP);
	pk_event_list__free(l);

	parse_fail("{cycles:ppp,cs}:p", -PK_ERR_PARSE, 16, "at most 3");
	parse_fail("{cycles,instructions:D}", -PK_ERR_PARSE, 21, "group leader");
	parse_fail("{cycles,{instructions}}", -PK_ERR_PARSE, 8, "nested");
	parse_fail("{cycles", -PK_ERR_PARSE, 0, "unterminated group");
	parse_fail("cs,{cycles,", -PK_ERR_PARSE, 3, "unterminated group");
	parse_fail("cycles}", -PK_ERR_PARSE, 6, "unexpected '}'");
	parse_fail("}", -PK_ERR_PARSE, 0, "unexpected '}'");
	parse_fail("{}", -PK_ERR_PARSE, 1, "empty group");
	parse_fail("{cycles,}", -PK_ERR_PARSE, 8, "empty event");
	parse_fail(",cycles", -PK_ERR_PARSE, 0, "empty event");
	parse_fail("cycles,", -PK_ERR_PARSE, 7, "empty event");
	parse_fail("cycles,,cs", -PK_ERR_PARSE, 7, "empty event");
	parse_fail("", -PK_ERR_PARSE, 0, "empty");
	parse_fail("   ", -PK_ERR_PARSE, 3, "empty");
	parse_fail("{cycles}u", -PK_ERR_PARSE, 8, "unexpected 'u'");
	parse_fail("{cycles}:q", -PK_ERR_PARSE, 9, "unknown modifier 'q'");
	parse_fail("cycles instructions", -PK_ERR_PARSE, 7, "unexpected 'i'");
}

static void test_repeated_parse(void **state)
{
	(void)state;
	PK_OPTS(pk_parse_opts, o, .sysfs_root = g_sysfs, .tracefs_root = g_tracefs,
		.no_pfm = true);
	struct pk_parse_error err;
	struct pk_event_list *l = pk_event_list__new();
	assert_int_equal(pk_event_list__parse(l, "{cycles,instructions}", &o, &err), 0);
	assert_int_equal(pk_event_list__parse(l, "cs,{faults,task-clock}", &o, &err), 0);
	/* a failed call appends nothing and consumes no group number */
	assert_int_equal(pk_event_list__parse(l, "{cs,cs},{cs,bogus}", &o, &err), -ENOENT);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(err.column, 12);
	assert_int_equal(pk_event_list__count(l), 5);
	assert_int_equal(pk_event_list__parse(l, "{cs,cpu-clock}", &o, &err), 0);
	assert_int_equal(pk_event_list__count(l), 7);
	int want[] = { 0, 0, -1, 1, 1, 2, 2 };
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(pk_event_spec__group(pk_event_list__get(l, i)), want[i]);
	assert_true(pk_event_spec__is_leader(pk_event_list__get(l, 5)));
	assert_false(pk_event_spec__is_leader(pk_event_list__get(l, 6)));
	pk_event_list__free(l);
}

static void test_unknown_and_suggestions(void **state)
{
	(void)state;
	parse_fail("cylces", -ENOENT, 0, "unknown event 'cylces' (did you mean 'cycles'?)");
	parse_fail("instructions,cylces:u", -ENOENT, 13, "did you mean 'cycles'");
	parse_fail("task-clok", -ENOENT, 0, "did you mean 'task-clock'");
	parse_fail("contxt-switches", -ENOENT, 0, "did you mean 'context-switches'");
	parse_fail("fakr/event=1/", -ENOENT, 0, "unknown PMU 'fakr' (did you mean 'fake'?)");
	/* PMU names are candidates for bare names too */
	parse_fail("fakee", -ENOENT, 0, "did you mean 'fake'");
	/* nothing close: no suggestion */
	PK_OPTS(pk_parse_opts, o, .sysfs_root = g_sysfs, .tracefs_root = g_tracefs,
		.no_pfm = true);
	struct pk_parse_error err;
	struct pk_event_list *l = pk_event_list__new();
	assert_int_equal(pk_event_list__parse(l, "xyzzyplugh", &o, &err), -ENOENT);
	assert_string_equal(err.msg, "unknown event 'xyzzyplugh'");
	/* err may be NULL */
	assert_int_equal(pk_event_list__parse(l, "cylces", &o, NULL), -ENOENT);
	/* options validation */
	struct { struct pk_parse_opts o; char tail[8]; } big;
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	assert_int_equal(pk_event_list__parse(l, "cycles", &big.o, NULL), 0);
	big.tail[3] = 1;
	assert_int_equal(pk_event_list__parse(l, "cycles", &big.o, NULL), -EINVAL);
	assert_int_equal(pk_event_list__parse(NULL, "cycles", NULL, NULL), -EINVAL);
	assert_int_equal(pk_event_list__parse(l, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(pk_event_list__parse(l, "cs", NULL, NULL), 0);
	assert_int_equal(pk_event_list__count(l), 2);
	pk_event_list__free(l);
	pk_event_list__free(NULL);
}

/* ---- breakpoints ---- */

static void test_breakpoints(void **state)
{
	(void)state;
	struct pk_event_list *l = parse_ok("mem:0x1000");
	const struct pk_event_spec *e = pk_event_list__get(l, 0);
	const struct perf_event_attr *a = &pk_event_spec__attr(e)->attr;
	assert_int_equal(pk_event_spec__kind(e), PK_EV_BREAKPOINT);
	assert_int_equal(a->type, PERF_TYPE_BREAKPOINT);
	assert_int_equal(a->bp_type, HW_BREAKPOINT_R | HW_BREAKPOINT_W);
	assert_int_equal(a->bp_addr, 0x1000);
	assert_int_equal(a->bp_len, 4);
	assert_int_equal(a->sample_period, 1);
	assert_string_equal(pk_event_spec__name(e), "mem:0x1000");
	pk_event_list__free(l);

	struct pk_attr b = attr_of("mem:0x2000/8:w");
	assert_int_equal(b.attr.bp_type, HW_BREAKPOINT_W);
	assert_int_equal(b.attr.bp_len, 8);
	assert_int_equal(b.attr.bp_addr, 0x2000);
	b = attr_of("mem:4096:x");
	assert_int_equal(b.attr.bp_type, HW_BREAKPOINT_X);
	assert_int_equal(b.attr.bp_len, sizeof(long));
	assert_int_equal(b.attr.bp_addr, 4096);
	b = attr_of("mem:0x1000:rw:u");
	assert_int_equal(b.attr.bp_type, HW_BREAKPOINT_RW);
	assert_true(b.attr.exclude_kernel);
	b = attr_of("mem:0x1000:wr");
	assert_int_equal(b.attr.bp_type, HW_BREAKPOINT_RW);
	b = attr_of("mem:0x1000/2:r");
	assert_int_equal(b.attr.bp_type, HW_BREAKPOINT_R);
	assert_int_equal(b.attr.bp_len, 2);
	b = attr_of("mem:0x1000:k");
	assert_int_equal(b.attr.bp_type, HW_BREAKPOINT_RW);
	assert_true(b.attr.exclude_user);
	l = parse_ok("{mem:0x1000:w,mem:0x1008:w}");
	assert_int_equal(pk_event_list__count(l), 2);
	assert_int_equal(pk_event_spec__group(pk_event_list__get(l, 1)), 0);
	pk_event_list__free(l);

	parse_fail("mem:", -PK_ERR_PARSE, 4, "mem: address missing");
	parse_fail("cs,mem:/4", -PK_ERR_PARSE, 7, "mem: address missing");
	parse_fail("mem:zz", -PK_ERR_PARSE, 4, "invalid breakpoint address");
	parse_fail("mem:0x1000/3", -PK_ERR_PARSE, 11, "length must be");
	parse_fail("mem:0x1000:rwx", -PK_ERR_PARSE, 11, "execute");
	parse_fail("mem:0x1000:ww", -PK_ERR_PARSE, 12, "duplicate access 'w'");
	parse_fail("mem:0x1000:q", -PK_ERR_PARSE, 11, "unknown modifier 'q'");
	parse_fail("mem:0x1000:w:", -PK_ERR_PARSE, 13, "modifier expected");
	parse_fail("mem:0x1ffffffffffffffff", -PK_ERR_PARSE, 4, "invalid breakpoint address");
}

/* ---- tracepoints ---- */

static void test_tracepoints_synthetic(void **state)
{
	(void)state;
	struct pk_event_list *l = parse_ok("sched:sched_switch");
	const struct pk_event_spec *e = pk_event_list__get(l, 0);
	assert_int_equal(pk_event_spec__kind(e), PK_EV_TRACEPOINT);
	assert_int_equal(pk_event_spec__attr(e)->attr.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(pk_event_spec__attr(e)->attr.config, 300);
	assert_string_equal(pk_event_spec__name(e), "sched:sched_switch");
	assert_string_equal(pk_event_spec__pmu(e), "sched:sched_switch");
	pk_event_list__free(l);

	/* a glob expands in sorted order, each with the modifiers as written */
	l = parse_ok("sched:sched_wak*:u,cs");
	assert_int_equal(pk_event_list__count(l), 3);
	assert_string_equal(pk_event_spec__name(pk_event_list__get(l, 0)), "sched:sched_wakeup:u");
	assert_string_equal(pk_event_spec__name(pk_event_list__get(l, 1)), "sched:sched_waking:u");
	assert_int_equal(pk_event_spec__attr(pk_event_list__get(l, 0))->attr.config, 301);
	assert_int_equal(pk_event_spec__attr(pk_event_list__get(l, 1))->attr.config, 302);
	assert_true(pk_event_spec__attr(pk_event_list__get(l, 1))->attr.exclude_kernel);
	assert_true(pk_event_spec__is_leader(pk_event_list__get(l, 1)));
	pk_event_list__free(l);

	/* globs over subsystems and events; in a group the first match leads */
	l = parse_ok("{*:sys_*_getppid}");
	assert_int_equal(pk_event_list__count(l), 2);
	assert_string_equal(pk_event_spec__name(pk_event_list__get(l, 0)),
			    "syscalls:sys_enter_getppid");
	assert_true(pk_event_spec__is_leader(pk_event_list__get(l, 0)));
	assert_false(pk_event_spec__is_leader(pk_event_list__get(l, 1)));
	assert_int_equal(pk_event_spec__group(pk_event_list__get(l, 1)), 0);
	pk_event_list__free(l);

	l = parse_ok("sched:sched_switch/call-graph=fp,name=sw/:k");
	assert_string_equal(pk_event_spec__name(pk_event_list__get(l, 0)), "sw");
	assert_string_equal(pk_event_spec__callgraph(pk_event_list__get(l, 0)), "fp");
	pk_event_list__free(l);

	parse_fail("sched:nomatch*", -ENOENT, 0, "no tracepoint matches 'sched:nomatch*'");
	parse_fail("cs,sched:sched_swich", -ENOENT, 3,
		   "did you mean 'sched:sched_switch'");
	parse_fail("schde:sched_switch", -ENOENT, 0, "did you mean 'sched'");
	parse_fail("sched:", -PK_ERR_PARSE, 6, "tracepoint name missing");
	parse_fail("sched:sched_switch:x", -PK_ERR_PARSE, 19, "unknown modifier 'x'");
	parse_fail("sched:..", -ENOENT, 0, NULL);
	/* "enable" is a file, not a tracepoint */
	parse_fail("sched:enable", -ENOENT, 0, NULL);
}

static void test_tracepoints_real(void **state)
{
	(void)state;
	const char *root = pk_tracefs__root();
	if (!root)
		PK_SKIP("tracefs is not mounted");
	long long id = pk_tracepoint__id(root, "sched", "sched_switch");
	if (id < 0)
		PK_SKIP("no sched:sched_switch tracepoint");
	PK_OPTS(pk_parse_opts, o, .no_pfm = true);
	struct pk_parse_error err;
	struct pk_event_list *l = pk_event_list__new();
	assert_int_equal(pk_event_list__parse(l, "sched:sched_switch", &o, &err), 0);
	assert_int_equal(pk_event_spec__attr(pk_event_list__get(l, 0))->attr.config, id);
	size_t before = pk_event_list__count(l);
	assert_int_equal(pk_event_list__parse(l, "sched:sched_*", &o, &err), 0);
	size_t n = pk_event_list__count(l) - before;
	assert_true(n >= 2);
	for (size_t i = before + 1; i < pk_event_list__count(l); i++)
		assert_true(strcmp(pk_event_spec__name(pk_event_list__get(l, i - 1)),
				   pk_event_spec__name(pk_event_list__get(l, i))) < 0);
	pk_event_list__free(l);
}

/* ---- PMUs (synthetic sysfs) ---- */

static void test_pmu_terms(void **state)
{
	(void)state;
	struct pk_attr a = attr_of("fake/event=0x3c,umask=0x1/");
	assert_int_equal(a.attr.type, 42);
	assert_int_equal(a.attr.config, 0x13c);
	/* split range config:16-19,32-35: low nibble to 16-19, high nibble to 32-35 */
	a = attr_of("fake/split=0xab/");
	assert_true(a.attr.config == 0xa000b0000ull);
	a = attr_of("fake/event=1,ldlat=3,fe=0x10,inv/");
	assert_int_equal(a.attr.config, 0x800001);
	assert_int_equal(a.attr.config1, 3);
	assert_int_equal(a.attr.config2, 0x10);
	a = attr_of("fake/event=1,config1=0x5,config3=0x7/");
	assert_int_equal(a.attr.config1, 5);
	assert_int_equal(pk_attr__config3(&a), 7);
	assert_int_equal(a.attr.size, PK_ATTR_SIZE_VER8);

	struct pk_event_list *l = parse_ok("fake/cyc/,fake/mem-loads/:u,fake/energy/");
	const struct pk_event_spec *e0 = pk_event_list__get(l, 0), *e1 = pk_event_list__get(l, 1),
				   *e2 = pk_event_list__get(l, 2);
	assert_int_equal(pk_event_spec__kind(e0), PK_EV_PMU);
	assert_string_equal(pk_event_spec__pmu(e0), "fake");
	assert_string_equal(pk_event_spec__name(e0), "fake/cyc/");
	assert_int_equal(pk_event_spec__attr(e0)->attr.config, 0x3c);
	assert_int_equal(pk_event_spec__attr(e1)->attr.config, 0x1cd);
	assert_int_equal(pk_event_spec__attr(e1)->attr.config1, 3);
	assert_true(pk_event_spec__attr(e1)->attr.exclude_kernel);
	assert_string_equal(pk_event_spec__name(e1), "fake/mem-loads/:u");
	assert_true(pk_event_spec__scale(e2) == 0.25);
	assert_string_equal(pk_event_spec__unit(e2), "Joules");
	assert_null(pk_event_spec__unit(e0));
	assert_true(pk_event_spec__scale(e0) == 1.0);
	pk_event_list__free(l);

	/* generic terms are stripped before the PMU sees the rest */
	l = parse_ok("fake/event=0x3c,period=1000,name=x,call-graph=fp,stack-size=4096/uk");
	const struct pk_event_spec *e = pk_event_list__get(l, 0);
	assert_int_equal(pk_event_spec__attr(e)->attr.config, 0x3c);
	assert_int_equal(pk_event_spec__attr(e)->attr.sample_period, 1000);
	assert_string_equal(pk_event_spec__name(e), "x");
	assert_string_equal(pk_event_spec__callgraph(e), "fp");
	assert_int_equal(pk_event_spec__stack_size(e), 4096);
	assert_true(pk_event_spec__attr(e)->attr.exclude_hv);
	assert_false(pk_event_spec__attr(e)->attr.exclude_kernel);
	pk_event_list__free(l);

	/* a PMU set passed in by the caller */
	struct pk_pmu_set *set = NULL;
	PK_OPTS(pk_pmu_opts, po, .sysfs_root = g_sysfs);
	assert_int_equal(pk_pmu_set__load(&set, &po), 0);
	PK_OPTS(pk_parse_opts, o, .pmus = set, .no_pfm = true, .tracefs_root = g_tracefs);
	l = pk_event_list__new();
	assert_int_equal(pk_event_list__parse(l, "{fake/cyc/,fake//}", &o, NULL), 0);
	assert_int_equal(pk_event_spec__attr(pk_event_list__get(l, 0))->attr.type, 42);
	assert_int_equal(pk_event_spec__attr(pk_event_list__get(l, 1))->attr.config, 0);
	pk_event_list__free(l);
	pk_pmu_set__free(set);

	parse_fail("fake/bogus=1/", -PK_ERR_PARSE, 5, "bogus");
	parse_fail("fake/cyx/", -PK_ERR_PARSE, 5, "did you mean 'cyc'");
	parse_fail("fake/evnt=1/", -PK_ERR_PARSE, 5, "did you mean 'event'");
	parse_fail("cs,fake/event=0x3c,bogus=1/", -PK_ERR_PARSE, 19, "bogus");
	parse_fail("fake/event=0x1ff/", -PK_ERR_PARSE, 5, NULL);
	parse_fail("nopmu/event=1/", -ENOENT, 0, "unknown PMU 'nopmu'");
	parse_fail("fake/event=1", -PK_ERR_PARSE, 4, "unterminated");
	parse_fail("fake/event=1/x", -PK_ERR_PARSE, 13, "unknown modifier 'x'");
	parse_fail("fake/event=1/:", -PK_ERR_PARSE, 14, "modifier expected");
	parse_fail("fake/event=1//", -PK_ERR_PARSE, 13, "unexpected '/'");
}

static const char *probe_str(const struct pk_attr *a)
{
	return (const char *)(uintptr_t)a->attr.config1;
}

static void test_probe_pmus_synthetic(void **state)
{
	(void)state;
	struct pk_event_list *l = parse_ok("uprobe/path=/bin/bash,offset=0x1234/,"
					   "uprobe/offset=16,path=/usr/lib/pk/x.so,retprobe,"
					   "ref_ctr_offset=0x20/u,"
					   "kprobe/func=do_sys_open,retprobe/,"
					   "kprobe/func=vfs_read,offset=4/k,"
					   "kprobe/addr=0xffffffff81000000/");
	assert_int_equal(pk_event_list__count(l), 5);
	const struct pk_attr *a = pk_event_spec__attr(pk_event_list__get(l, 0));
	assert_int_equal(a->attr.type, 7);
	assert_string_equal(probe_str(a), "/bin/bash");
	assert_int_equal(a->attr.config2, 0x1234);
	assert_int_equal(a->attr.config, 0);
	assert_string_equal(pk_event_spec__name(pk_event_list__get(l, 0)),
			    "uprobe/path=/bin/bash,offset=0x1234/");
	a = pk_event_spec__attr(pk_event_list__get(l, 1));
	assert_string_equal(probe_str(a), "/usr/lib/pk/x.so");
	assert_int_equal(a->attr.config2, 16);
	assert_true(a->attr.config == (0x20ull << 32 | 1));
	assert_true(a->attr.exclude_kernel);
	a = pk_event_spec__attr(pk_event_list__get(l, 2));
	assert_int_equal(a->attr.type, 6);
	assert_string_equal(probe_str(a), "do_sys_open");
	assert_int_equal(a->attr.config, 1);
	assert_int_equal(a->attr.config2, 0);
	a = pk_event_spec__attr(pk_event_list__get(l, 3));
	assert_string_equal(probe_str(a), "vfs_read");
	assert_int_equal(a->attr.config2, 4);
	assert_true(a->attr.exclude_user);
	a = pk_event_spec__attr(pk_event_list__get(l, 4));
	assert_int_equal(a->attr.config1, 0);
	assert_true(a->attr.config2 == 0xffffffff81000000ull);
	pk_event_list__free(l);

	parse_fail("uprobe/offset=1/", -PK_ERR_PARSE, 6, "needs path=");
	parse_fail("kprobe/retprobe/", -PK_ERR_PARSE, 6, "func=");
	parse_fail("kprobe/func=a,addr=1/", -PK_ERR_PARSE, 14, "not both");
	parse_fail("kprobe/addr=1,offset=2/", -PK_ERR_PARSE, 14, "offset=");
	parse_fail("uprobe/path=/bin/bash,offset=zz/", -PK_ERR_PARSE, 29, "invalid number");
	parse_fail("uprobe/path=/bin/bash,bogus/", -PK_ERR_PARSE, 22, "bogus");
}

/* The real uprobe PMU (and kprobe if the kernel has it). */
static void test_probe_pmus_real(void **state)
{
	(void)state;
	long long type;
	if (pk_read_int_file("/sys/" DEV "uprobe/type", &type) < 0)
		PK_SKIP("no uprobe PMU in /sys");
	PK_OPTS(pk_parse_opts, o, .no_pfm = true);
	struct pk_parse_error err;
	struct pk_event_list *l = pk_event_list__new();
	assert_int_equal(pk_event_list__parse(l, "uprobe/path=/bin/true,offset=0x10,retprobe/",
					      &o, &err), 0);
	const struct pk_attr *a = pk_event_spec__attr(pk_event_list__get(l, 0));
	assert_int_equal(a->attr.type, type);
	assert_string_equal(probe_str(a), "/bin/true");
	assert_int_equal(a->attr.config2, 0x10);
	assert_true(a->attr.config & 1); /* retprobe is config:0 on every kernel so far */
	long long ktype;
	int r = pk_event_list__parse(l, "kprobe/func=do_sys_openat2/", &o, &err);
	if (pk_read_int_file("/sys/" DEV "kprobe/type", &ktype) == 0) {
		assert_int_equal(r, 0);
		a = pk_event_spec__attr(pk_event_list__get(l, 1));
		assert_int_equal(a->attr.type, ktype);
	} else {
		printf("note: this kernel has no kprobe PMU\n");
		assert_int_equal(r, -ENOENT);
		assert_non_null(strstr(err.msg, "unknown PMU 'kprobe'"));
	}
	/* msr/tsc/ where it exists: an alias of a real PMU */
	long long mtype;
	if (pk_read_int_file("/sys/" DEV "msr/type", &mtype) == 0 &&
	    access("/sys/" DEV "msr/events/tsc", F_OK) == 0) {
		size_t n = pk_event_list__count(l);
		assert_int_equal(pk_event_list__parse(l, "msr/tsc/", &o, &err), 0);
		const struct pk_event_spec *e = pk_event_list__get(l, n);
		assert_int_equal(pk_event_spec__attr(e)->attr.type, mtype);
		assert_string_equal(pk_event_spec__name(e), "msr/tsc/");
		assert_string_equal(pk_event_spec__pmu(e), "msr");
	}
	pk_event_list__free(l);
}

/* ---- libpfm4 ---- */

static void test_pfm(void **state)
{
	(void)state;
	const char *names[] = { "PERF_COUNT_SW_TASK_CLOCK", "perf::PERF_COUNT_SW_PAGE_FAULTS" };
	for (size_t i = 0; i < 2; i++) {
		struct pk_attr want;
		memset(&want, 0, sizeof(want));
		if (pk_pfm__encode(names[i], &want) < 0)
			PK_SKIP("libpfm4 does not know '%s' here", names[i]);
		PK_OPTS(pk_parse_opts, o, .sysfs_root = g_sysfs, .tracefs_root = g_tracefs);
		struct pk_parse_error err;
		struct pk_event_list *l = pk_event_list__new();
		char spec[128];
		snprintf(spec, sizeof(spec), "cs,%s", names[i]);
		assert_int_equal(pk_event_list__parse(l, spec, &o, &err), 0);
		const struct pk_event_spec *e = pk_event_list__get(l, 1);
		assert_int_equal(pk_event_spec__kind(e), PK_EV_PFM);
		assert_int_equal(pk_event_spec__attr(e)->attr.type, want.attr.type);
		assert_int_equal(pk_event_spec__attr(e)->attr.config, want.attr.config);
		assert_string_equal(pk_event_spec__name(e), names[i]);
		pk_event_list__free(l);
		/* no_pfm turns the bridge off */
		parse_fail(names[i], i == 0 ? -ENOENT : -PK_ERR_PARSE, i == 0 ? 0 : 5, NULL);
	}
}

/* ---- hostile input ---- */

static char *repeat(const char *unit, size_t total, const char *head, const char *tail)
{
	size_t ul = strlen(unit), hl = strlen(head), tl = strlen(tail);
	char *s = malloc(hl + total + ul + tl + 1);
	assert_non_null(s);
	memcpy(s, head, hl);
	size_t o = hl;
	while (o < hl + total) {
		memcpy(s + o, unit, ul);
		o += ul;
	}
	memcpy(s + o, tail, tl + 1);
	return s;
}

static void test_hostile(void **state)
{
	(void)state;
	const size_t MB = 1 << 20;
	char *s = repeat("cycles,", MB, "", "cs");
	parse_fail(s, -PK_ERR_PARSE, -1, "too many events");
	free(s);
	s = repeat("{", MB, "", "");
	parse_fail(s, -PK_ERR_PARSE, 1, "nested");
	free(s);
	s = repeat("a", MB, "", "");
	parse_fail(s, -ENOENT, 0, "unknown event");
	free(s);
	s = repeat("p", MB, "cycles:", "");
	parse_fail(s, -PK_ERR_PARSE, 10, "at most 3");
	free(s);
	s = repeat("1", MB, "r", "");
	parse_fail(s, -PK_ERR_PARSE, 0, "too large");
	free(s);
	s = repeat("9", MB, "mem:", "");
	parse_fail(s, -PK_ERR_PARSE, 4, "invalid breakpoint address");
	free(s);
	s = repeat("inv,", MB, "fake/", "/");
	parse_fail(s, -PK_ERR_PARSE, -1, "too many terms");
	free(s);
	s = repeat("x", MB, "cycles/name=", "/");
	parse_fail(s, -PK_ERR_PARSE, 12, "too long");
	free(s);
	s = repeat("*", MB, "sched:", "");
	parse_fail(s, -PK_ERR_PARSE, 0, "too long");
	free(s);
	s = repeat("{cs},", MB / 4, "", "cs");
	struct pk_event_list *l = parse_ok(s);
	assert_true(pk_event_list__count(l) > 50000);
	free(s);
	pk_event_list__free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generic_names),
		cmocka_unit_test(test_cache_names),
		cmocka_unit_test(test_cache_foreach),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_modifiers),
		cmocka_unit_test(test_terms),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_repeated_parse),
		cmocka_unit_test(test_unknown_and_suggestions),
		cmocka_unit_test(test_breakpoints),
		cmocka_unit_test(test_tracepoints_synthetic),
		cmocka_unit_test(test_tracepoints_real),
		cmocka_unit_test(test_pmu_terms),
		cmocka_unit_test(test_probe_pmus_synthetic),
		cmocka_unit_test(test_probe_pmus_real),
		cmocka_unit_test(test_pfm),
		cmocka_unit_test(test_hostile),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
