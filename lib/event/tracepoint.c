/* SPDX-License-Identifier: MIT */
/* Tracepoints from tracefs: mount point discovery, ids, glob enumeration. */
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "internal.h"
#include <perfkit/pmu.h>

static bool has_events(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	pk_snprintf(path, sizeof(path), "%s/events", dir);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Not cached: tracefs may be mounted while we run (the tool mounts it on demand). */
PK_API const char *pk_tracefs__root(void)
{
	static __thread char found[PATH_MAX];
	char set[PATH_MAX];
	const char *cands[] = { pk_config_tracefs_root(set, sizeof(set)) ? set : NULL,
				"/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

	for (size_t i = 0; i < PK_ARRAY_SIZE(cands); i++) {
		if (cands[i] && *cands[i] && has_events(cands[i])) {
			pk_snprintf(found, sizeof(found), "%s", cands[i]);
			return found;
		}
	}
	FILE *m = fopen("/proc/mounts", "re");
	if (m) {
		char line[1024], dev[256], dir[768], type[64];
		while (fgets(line, sizeof(line), m)) {
			if (sscanf(line, "%255s %767s %63s", dev, dir, type) == 3 &&
			    !strcmp(type, "tracefs") && has_events(dir)) {
				fclose(m);
				pk_snprintf(found, sizeof(found), "%s", dir);
				return found;
			}
		}
		fclose(m);
	}
	errno = ENOENT;
	return NULL;
}

/* A tracepoint subsystem or event name: no path tricks, bounded length. */
static bool valid_component(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 255 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	return strchr(s, '/') == NULL;
}

PK_API long long pk_tracepoint__id(const char *root, const char *sys, const char *name)
{
	char path[PATH_MAX];
	long long id;

	if (!sys || !name || !valid_component(sys) || !valid_component(name))
		return pk_err(-EINVAL);
	if (!root && !(root = pk_tracefs__root()))
		return pk_err(-ENOENT);
	pk_snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, sys, name);
	int r = pk_read_int_file(path, &id);
	if (r < 0)
		return pk_err(r);
	if (id < 0)
		return pk_err(-PK_ERR_PARSE);
	return id;
}

/* Bounds for hostile or huge tracefs trees. */
#define PK_TP_MAX_SYSTEMS 65536
#define PK_TP_MAX_EVENTS 65536

PK_API int pk_tracepoint__foreach(const char *root, const char *glob, pk_tracepoint_cb cb,
				  void *ctx)
{
	char path[PATH_MAX], full[520];
	size_t nsys, nev;
	int ret = 0;

	if (!root && !(root = pk_tracefs__root()))
		return pk_err(-ENOENT);
	pk_snprintf(path, sizeof(path), "%s/events", root);
	char **systems = pk_dir_list_sorted(AT_FDCWD, path, PK_TP_MAX_SYSTEMS, true, &nsys, NULL);
	for (size_t i = 0; i < nsys && !ret; i++) {
		pk_snprintf(path, sizeof(path), "%s/events/%s", root, systems[i]);
		char **events = pk_dir_list_sorted(AT_FDCWD, path, PK_TP_MAX_EVENTS, true, &nev, NULL);
		for (size_t j = 0; j < nev && !ret; j++) {
			pk_snprintf(full, sizeof(full), "%s:%s", systems[i], events[j]);
			if (glob && fnmatch(glob, full, 0) != 0)
				continue;
			long long id = pk_tracepoint__id(root, systems[i], events[j]);
			if (id < 0)
				continue; /* not an event directory (e.g. "enable" files' dirs) */
			ret = cb(systems[i], events[j], id, ctx);
		}
		pk_strv_free(events, nev);
	}
	pk_strv_free(systems, nsys);
	return ret;
}
