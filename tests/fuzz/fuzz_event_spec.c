/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the event-spec parser (pk_event_list__parse). Deterministic: the
 * PMUs come from a synthetic sysfs tree and the tracepoints from a synthetic tracefs, both
 * written to a temporary directory at start-up, and libpfm4 is not consulted.
 */
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/perfkit.h>

static char g_dir[] = "/tmp/pk-fuzz-event-spec-XXXXXX";
static char g_sysfs[PATH_MAX], g_tracefs[PATH_MAX];
static struct pk_pmu_set *g_pmus;

static void write_file(const char *root, const char *rel, const char *content)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	}
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fputs(content, f);
	fclose(f);
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	pk_pmu_set__free(g_pmus);
	nftw(g_dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void quiet(enum pk_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pk_set_log(quiet, NULL, PK_LOG_ERROR);
	if (!mkdtemp(g_dir))
		abort();
	snprintf(g_sysfs, sizeof(g_sysfs), "%s/sys", g_dir);
	snprintf(g_tracefs, sizeof(g_tracefs), "%s/tracing", g_dir);
#define DEV "bus/event_source/devices/"
	write_file(g_sysfs, DEV "cpu/type", "4\n");
	write_file(g_sysfs, DEV "cpu/format/event", "config:0-7\n");
	write_file(g_sysfs, DEV "cpu/format/umask", "config:8-15\n");
	write_file(g_sysfs, DEV "cpu/format/inv", "config:23\n");
	write_file(g_sysfs, DEV "cpu/format/cmask", "config:24-31\n");
	write_file(g_sysfs, DEV "cpu/format/split", "config:16-19,32-35\n");
	write_file(g_sysfs, DEV "cpu/format/ldlat", "config1:0-15\n");
	write_file(g_sysfs, DEV "cpu/format/fe", "config2:0-23\n");
	write_file(g_sysfs, DEV "cpu/events/cycles-t", "event=0x3c,in_tx=1\n");
	write_file(g_sysfs, DEV "cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	write_file(g_sysfs, DEV "cpu/events/needs-val", "event=0xcd,umask=?\n");
	write_file(g_sysfs, DEV "power/type", "11\n");
	write_file(g_sysfs, DEV "power/format/event", "config:0-7\n");
	write_file(g_sysfs, DEV "power/events/energy-pkg", "event=0x02\n");
	write_file(g_sysfs, DEV "power/events/energy-pkg.scale", "2.3283064365386962890625e-10\n");
	write_file(g_sysfs, DEV "power/events/energy-pkg.unit", "Joules\n");
	write_file(g_sysfs, DEV "kprobe/type", "6\n");
	write_file(g_sysfs, DEV "kprobe/format/retprobe", "config:0\n");
	write_file(g_sysfs, DEV "uprobe/type", "7\n");
	write_file(g_sysfs, DEV "uprobe/format/retprobe", "config:0\n");
	write_file(g_sysfs, DEV "uprobe/format/ref_ctr_offset", "config:32-63\n");
	write_file(g_tracefs, "events/sched/sched_switch/id", "300\n");
	write_file(g_tracefs, "events/sched/sched_wakeup/id", "301\n");
	write_file(g_tracefs, "events/sched/sched_waking/id", "302\n");
	write_file(g_tracefs, "events/syscalls/sys_enter_getppid/id", "500\n");
	write_file(g_tracefs, "events/syscalls/sys_exit_getppid/id", "501\n");
	PK_OPTS(pk_pmu_opts, po, .sysfs_root = g_sysfs);
	if (pk_pmu_set__load(&g_pmus, &po) < 0)
		abort();
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	/* every other input loads sysfs itself, to cover the lazy path too */
	PK_OPTS(pk_parse_opts, o, .sysfs_root = g_sysfs, .tracefs_root = g_tracefs,
		.pmus = (size & 1) ? g_pmus : NULL, .no_pfm = true);
	struct pk_parse_error err;
	struct pk_event_list *l = pk_event_list__new();
	if (!l) {
		free(s);
		return 0;
	}
	int r = pk_event_list__parse(l, s, &o, &err);
	if (r < 0) {
		if (pk_event_list__count(l) != 0 || err.column < 0 || (size_t)err.column > size ||
		    !memchr(err.msg, '\0', sizeof(err.msg)) || !err.msg[0])
			abort();
	} else {
		/* a second parse of the same text appends as many again, with fresh groups */
		size_t n = pk_event_list__count(l);
		if (pk_event_list__parse(l, s, &o, NULL) != 0 || pk_event_list__count(l) != 2 * n)
			abort();
		for (size_t i = 0; i < 2 * n; i++) {
			const struct pk_event_spec *e = pk_event_list__get(l, i);
			const struct pk_attr *a = pk_event_spec__attr(e);
			const char *name = pk_event_spec__name(e);
			if (!a || !name || a->attr.size < PK_ATTR_SIZE_VER0 ||
			    a->attr.size != pk_attr__min_size(a) || a->attr.precise_ip > 3)
				abort();
			int g = pk_event_spec__group(e);
			if (i >= n && g >= 0 && g == pk_event_spec__group(pk_event_list__get(l, i - n)))
				abort();
			(void)pk_event_spec__kind(e);
			(void)pk_event_spec__pmu(e);
			(void)pk_event_spec__is_leader(e);
			(void)pk_event_spec__flags(e);
			(void)pk_event_spec__callgraph(e);
			(void)pk_event_spec__stack_size(e);
			(void)pk_event_spec__scale(e);
			(void)pk_event_spec__unit(e);
			(void)strlen(name);
		}
	}
	pk_event_list__free(l);
	free(s);
	return 0;
}
