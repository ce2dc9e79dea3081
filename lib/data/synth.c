/* SPDX-License-Identifier: MIT */
/*
 * lib/data/synth.c - synthesized records for the state that existed before recording
 * started (synth.h; docs/perfkit-record.md, "What is recorded").
 */
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "internal.h"
#include "synth-internal.h"
#include <perfkit/synth.h>
#include <perfkit/data.h>

#define MAX_ID_SIZE 48
/* header + fixed MMAP2 fields + PATH_MAX filename + trailer, rounded up */
#define RECBUF_U64 ((8 + 64 + PATH_MAX + 8 + MAX_ID_SIZE) / 8 + 1)

struct synth {
	pk_synth_cb cb;
	void *ctx;
	uint32_t id_size;
	bool mmap_data;
	const char *proc;
	const char *modules;
	uint64_t buf[RECBUF_U64];
};

/* A synthesis context for cb/ctx with options o (free it with free()), or NULL with *err
 * = -EINVAL (no callback, bad options) or -ENOMEM. What every pk_synth__* call starts
 * with. */
static struct synth *synth_new(pk_synth_cb cb, void *ctx, const struct pk_synth_opts *o,
			       int *err)
{
	*err = -EINVAL;
	if (!cb || !PK_OPTS_VALID(o, pk_synth_opts))
		return NULL;
	uint32_t id_size = PK_OPTS_GET(o, id_size, 0);
	if (id_size % 8 || id_size > MAX_ID_SIZE)
		return NULL;
	struct synth *s = malloc(sizeof(*s));
	*err = s ? 0 : -ENOMEM;
	if (!s)
		return NULL;
	s->cb = cb;
	s->ctx = ctx;
	s->id_size = id_size;
	s->mmap_data = PK_OPTS_GET(o, mmap_data, false);
	s->proc = PK_OPTS_GET(o, procfs_root, NULL);
	if (!s->proc)
		s->proc = "/proc";
	s->modules = PK_OPTS_GET(o, modules_root, NULL);
	return s;
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Append the string str[0..n) NUL-terminated and padded to 8, then the zero trailer, at
 * byte `off`; emit. The caller measures str within its own bounds (a strnlen here with
 * one bound for every caller reads past a short array as far as the compiler can tell). */
static int emit(struct synth *s, uint32_t type, uint16_t misc, size_t off, const char *str,
		size_t n)
{
	uint8_t *p = (uint8_t *)s->buf;
	if (str) {
		if (n > PATH_MAX - 1)
			n = PATH_MAX - 1;
		size_t padded = pad8(n + 1);
		memcpy(p + off, str, n);
		memset(p + off + n, 0, padded - n);
		off += padded;
	}
	memset(p + off, 0, s->id_size);
	off += s->id_size;
	struct perf_event_header *h = (struct perf_event_header *)p;
	h->type = type;
	h->misc = misc;
	h->size = (uint16_t)off;
	return s->cb(h, s->ctx);
}

static void put32(uint8_t *p, size_t off, uint32_t v)
{
	memcpy(p + off, &v, 4);
}

static void put64(uint8_t *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, 8);
}

static int do_comm(struct synth *s, pid_t pid, pid_t tid, const char *comm)
{
	uint8_t *p = (uint8_t *)s->buf;
	char name[16];
	size_t n = strnlen(comm, sizeof(name) - 1);
	memcpy(name, comm, n);
	name[n] = 0;
	put32(p, 8, (uint32_t)pid);
	put32(p, 12, (uint32_t)tid);
	return emit(s, PERF_RECORD_COMM, 0, 16, name, n);
}

static int do_fork(struct synth *s, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid)
{
	uint8_t *p = (uint8_t *)s->buf;
	put32(p, 8, (uint32_t)pid);
	put32(p, 12, (uint32_t)ppid);
	put32(p, 16, (uint32_t)tid);
	put32(p, 20, (uint32_t)ptid);
	put64(p, 24, 0);
	return emit(s, PERF_RECORD_FORK, 0, 32, NULL, 0);
}

/* The namespace links in the kernel's order (NET_NS_INDEX .. CGROUP_NS_INDEX), as the
 * names of their /proc/PID/ns entries. */
static const char *const ns_names[] = { "net", "uts", "ipc", "pid", "user", "mnt", "cgroup" };
#define NR_NS (sizeof(ns_names) / sizeof(ns_names[0]))

/* A NAMESPACES record for thread tid of process pid: device and inode of every
 * <procfs>/PID/task/TID/ns/NAME; a link that cannot be read stays 0, as perf leaves it. */
static int do_namespaces(struct synth *s, pid_t pid, pid_t tid)
{
	uint8_t *p = (uint8_t *)s->buf;
	char path[PATH_MAX];
	size_t off = 24;

	put32(p, 8, (uint32_t)pid);
	put32(p, 12, (uint32_t)tid);
	put64(p, 16, NR_NS);
	for (size_t i = 0; i < NR_NS; i++, off += 16) {
		struct stat st;
		uint64_t dev = 0, ino = 0;
		pk_snprintf(path, sizeof(path), "%s/%d/task/%d/ns/%s", s->proc, (int)pid,
			    (int)tid, ns_names[i]);
		if (stat(path, &st) == 0) {
			dev = (uint64_t)st.st_dev;
			ino = (uint64_t)st.st_ino;
		}
		put64(p, off, dev);
		put64(p, off + 8, ino);
	}
	return emit(s, PERF_RECORD_NAMESPACES, 0, off, NULL, 0);
}

/* ---- parsers ---- */

int pk_synth_parse_hex(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int n = 0;
	while (isxdigit((unsigned char)*p)) {
		if (v >> 60)
			return -PK_ERR_PARSE;
		int d = isdigit((unsigned char)*p) ? *p - '0' : (tolower((unsigned char)*p) - 'a' + 10);
		v = v * 16 + (uint64_t)d;
		p++;
		n++;
	}
	if (!n)
		return -PK_ERR_PARSE;
	*pp = p;
	*out = v;
	return 0;
}

int pk_synth_parse_dec(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int n = 0;
	while (isdigit((unsigned char)*p)) {
		if (v > (UINT64_MAX - 9) / 10)
			return -PK_ERR_PARSE;
		v = v * 10 + (uint64_t)(*p - '0');
		p++;
		n++;
	}
	if (!n)
		return -PK_ERR_PARSE;
	*pp = p;
	*out = v;
	return 0;
}

int pk_maps__parse_line(char *line, struct pk_maps_entry *out)
{
	const char *p = line;
	uint64_t maj, min;
	char *nl;

	if (!line || !out)
		return -EINVAL;
	nl = strchr(line, '\n');
	if (nl)
		*nl = 0;
	memset(out, 0, sizeof(*out));
	if (pk_synth_parse_hex(&p, &out->start) || *p++ != '-' ||
	    pk_synth_parse_hex(&p, &out->end) || *p++ != ' ')
		return -PK_ERR_PARSE;
	if (out->end < out->start)
		return -PK_ERR_PARSE;
	for (int i = 0; i < 4; i++, p++) {
		switch (*p) {
		case 'r': out->prot |= PROT_READ; break;
		case 'w': out->prot |= PROT_WRITE; break;
		case 'x': out->prot |= PROT_EXEC; break;
		case 'p': out->flags = MAP_PRIVATE; break;
		case 's': out->flags = MAP_SHARED; break;
		case '-': break;
		default: return -PK_ERR_PARSE;
		}
	}
	if (*p++ != ' ' || pk_synth_parse_hex(&p, &out->pgoff) || *p++ != ' ')
		return -PK_ERR_PARSE;
	if (pk_synth_parse_hex(&p, &maj) || *p++ != ':' || pk_synth_parse_hex(&p, &min) || *p++ != ' ')
		return -PK_ERR_PARSE;
	if (maj > UINT32_MAX || min > UINT32_MAX)
		return -PK_ERR_PARSE;
	out->maj = (uint32_t)maj;
	out->min = (uint32_t)min;
	if (pk_synth_parse_dec(&p, &out->ino))
		return -PK_ERR_PARSE;
	if (*p && *p != ' ')
		return -PK_ERR_PARSE;
	while (*p == ' ' || *p == '\t')
		p++;
	out->path = p;
	return 0;
}

int pk_notes__build_id(const void *buf, size_t size, uint8_t *out, size_t *len)
{
	const uint8_t *p = buf;
	size_t off = 0;

	if (!buf || !out || !len)
		return -EINVAL;
	while (size - off >= 12) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		off += 12;
		size_t nsz = ((size_t)namesz + 3) & ~(size_t)3;
		size_t dsz = ((size_t)descsz + 3) & ~(size_t)3;
		if (nsz > size - off || dsz > size - off - nsz)
			return -PK_ERR_FORMAT;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && !memcmp(p + off, "GNU", 4)) {
			size_t n = PK_MIN((size_t)descsz, *len);
			if (!descsz)
				return -PK_ERR_FORMAT;
			memcpy(out, p + off + nsz, n);
			*len = n;
			return 0;
		}
		off += nsz + dsz;
	}
	return -ENOENT;
}

/* ---- kernel ---- */

PK_API int pk_synth__kernel_mmap(pk_synth_cb cb, void *ctx, const struct pk_synth_opts *opts)
{
	int err;
	struct synth *s = synth_new(cb, ctx, opts, &err);
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	uint64_t text = 0, etext = 0;
	bool have_text = false, have_etext = false;
	FILE *f;

	if (!s)
		return pk_err(err);
	pk_snprintf(path, sizeof(path), "%s/kallsyms", s->proc);
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		free(s);
		return pk_err(err);
	}
	while (getline(&line, &cap, f) > 0 && !(have_text && have_etext)) {
		const char *p = line;
		uint64_t addr;
		if (pk_synth_parse_hex(&p, &addr) || *p++ != ' ' || !*p || p[1] != ' ')
			continue;
		p += 2;
		if (!strcmp(p, "_text\n")) {
			text = addr;
			have_text = true;
		} else if (!strcmp(p, "_etext\n")) {
			etext = addr;
			have_etext = true;
		}
	}
	free(line);
	fclose(f);
	if (!have_text || !text) {
		/* all-zero addresses: kptr_restrict hides them from us */
		free(s);
		return pk_err(have_text ? -EACCES : -ENOENT);
	}
	uint8_t *p = (uint8_t *)s->buf;
	put32(p, 8, UINT32_MAX); /* pid -1: the host kernel */
	put32(p, 12, 0);
	put64(p, 16, text);
	put64(p, 24, etext > text ? etext - text : 0);
	put64(p, 32, text);
	err = emit(s, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 40, "[kernel.kallsyms]_text",
		   sizeof("[kernel.kallsyms]_text") - 1);
	free(s);
	return err;
}

PK_API int pk_synth__modules(pk_synth_cb cb, void *ctx, const struct pk_synth_opts *opts)
{
	int err;
	struct synth *s = synth_new(cb, ctx, opts, &err);
	struct pk_kmod_ent *v;
	size_t nr;

	if (!s)
		return pk_err(err);
	err = pk_kmods__read(s->proc, s->modules, &v, &nr);
	if (err == -ENOENT)
		err = 0; /* no module support in this kernel */
	for (size_t i = 0; !err && i < nr; i++) {
		uint8_t *p = (uint8_t *)s->buf;
		char bracket[sizeof(v[i].name) + 2];
		const char *name = v[i].path;
		if (!name) {
			snprintf(bracket, sizeof(bracket), "[%s]", v[i].name);
			name = bracket;
		}
		put32(p, 8, UINT32_MAX); /* pid -1: the host kernel */
		put32(p, 12, 0);
		put64(p, 16, v[i].start);
		put64(p, 24, v[i].size);
		put64(p, 32, 0);
		err = emit(s, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 40, name,
			   strnlen(name, PATH_MAX - 1));
	}
	pk_kmods__free(v, nr);
	free(s);
	return err < 0 ? pk_err(err) : err;
}

PK_API int pk_synth__comm(pid_t pid, pid_t tid, const char *comm, pk_synth_cb cb, void *ctx,
			  const struct pk_synth_opts *opts)
{
	int err;
	struct synth *s = synth_new(cb, ctx, opts, &err);
	if (!s)
		return pk_err(err);
	err = comm ? do_comm(s, pid, tid, comm) : -EINVAL;
	free(s);
	return err < 0 ? pk_err(err) : err;
}

PK_API int pk_synth__namespaces(pid_t pid, pid_t tid, pk_synth_cb cb, void *ctx,
				const struct pk_synth_opts *opts)
{
	int err;
	struct synth *s = synth_new(cb, ctx, opts, &err);
	if (!s)
		return pk_err(err);
	err = pid > 0 && tid > 0 ? do_namespaces(s, pid, tid) : -EINVAL;
	free(s);
	return err < 0 ? pk_err(err) : err;
}

/* ---- processes ---- */

static int read_comm(struct synth *s, pid_t pid, pid_t tid, char *comm, size_t len)
{
	char path[PATH_MAX];
	pk_snprintf(path, sizeof(path), "%s/%d/task/%d/comm", s->proc, (int)pid, (int)tid);
	ssize_t n = pk_read_small_file(path, comm, len);
	if (n < 0)
		return (int)n;
	comm[n] = 0;
	pk_strtrim(comm);
	return 0;
}

/* Tgid and PPid of a task from its status file. */
static int read_status(struct synth *s, pid_t tid, pid_t *tgid, pid_t *ppid)
{
	char path[PATH_MAX], buf[4096];
	pk_snprintf(path, sizeof(path), "%s/%d/status", s->proc, (int)tid);
	ssize_t n = pk_read_small_file(path, buf, sizeof(buf));
	if (n < 0 && n != -EFBIG)
		return (int)n;
	if (n < 0) {
		/* longer than our buffer: the fields we need are near the top; read a prefix */
		FILE *f = fopen(path, "re");
		if (!f)
			return -errno;
		n = (ssize_t)fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	*tgid = tid;
	*ppid = 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (!strncmp(l, "Tgid:", 5))
			*tgid = (pid_t)strtol(l + 5, NULL, 10);
		else if (!strncmp(l, "PPid:", 5))
			*ppid = (pid_t)strtol(l + 5, NULL, 10);
	}
	return 0;
}

static int do_mmaps(struct synth *s, pid_t pid)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	pk_snprintf(path, sizeof(path), "%s/%d/task/%d/maps", s->proc, (int)pid, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0; /* gone, or a kernel thread without maps: nothing to say */
	while (getline(&line, &cap, f) > 0) {
		struct pk_maps_entry e;
		uint8_t *p = (uint8_t *)s->buf;
		uint16_t misc = PERF_RECORD_MISC_USER;
		const char *name;
		size_t name_len;

		if (pk_maps__parse_line(line, &e) < 0)
			continue;
		if (!(e.prot & PROT_EXEC)) {
			/* data mappings as perf synthesizes them: readable ones only (no guard
			 * pages), anonymous ones included */
			if (!s->mmap_data || !(e.prot & PROT_READ))
				continue;
			misc |= PERF_RECORD_MISC_MMAP_DATA;
		}
		if (e.path[0]) {
			name = e.path;
			name_len = strnlen(e.path, PATH_MAX - 1);
		} else {
			name = "//anon";
			name_len = sizeof("//anon") - 1;
		}
		put32(p, 8, (uint32_t)pid);
		put32(p, 12, (uint32_t)pid);
		put64(p, 16, e.start);
		put64(p, 24, e.end - e.start);
		put64(p, 32, e.pgoff);
		put32(p, 40, e.maj);
		put32(p, 44, e.min);
		put64(p, 48, e.ino);
		put64(p, 56, 0);
		put32(p, 64, e.prot);
		put32(p, 68, e.flags);
		err = emit(s, PERF_RECORD_MMAP2, misc, 72, name, name_len);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	return err;
}

static int do_process(struct synth *s, pid_t pid, unsigned flags)
{
	char path[PATH_MAX], comm[64];
	pid_t tgid, ppid;
	struct dirent *de;
	int err = 0;
	DIR *d;

	pk_snprintf(path, sizeof(path), "%s/%d/task", s->proc, (int)pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	if (read_status(s, pid, &tgid, &ppid) < 0) {
		closedir(d);
		return -ESRCH;
	}
	while ((de = readdir(d))) {
		uint64_t tid;
		const char *p = de->d_name;
		if (pk_synth_parse_dec(&p, &tid) || *p || tid > INT_MAX)
			continue;
		if (read_comm(s, pid, (pid_t)tid, comm, sizeof(comm)) < 0)
			continue; /* exited meanwhile */
		if (flags & PK_SYNTH_FORK) {
			bool leader = (pid_t)tid == pid;
			err = do_fork(s, pid, leader ? ppid : pid, (pid_t)tid, leader ? ppid : pid);
			if (err)
				break;
		}
		err = do_comm(s, pid, (pid_t)tid, comm);
		if (!err && (flags & PK_SYNTH_NAMESPACES))
			err = do_namespaces(s, pid, (pid_t)tid);
		if (err)
			break;
	}
	closedir(d);
	if (!err && (flags & PK_SYNTH_MMAPS))
		err = do_mmaps(s, pid);
	return err;
}

PK_API int pk_synth__process(pid_t pid, unsigned flags, pk_synth_cb cb, void *ctx,
			     const struct pk_synth_opts *opts)
{
	int err;
	struct synth *s = synth_new(cb, ctx, opts, &err);
	if (!s)
		return pk_err(err);
	err = do_process(s, pid, flags);
	free(s);
	return err < 0 ? pk_err(err) : err;
}

PK_API int pk_synth__thread(pid_t tid, unsigned flags, pk_synth_cb cb, void *ctx,
			    const struct pk_synth_opts *opts)
{
	int err;
	struct synth *s = synth_new(cb, ctx, opts, &err);
	char comm[64];
	pid_t tgid, ppid;
	if (!s)
		return pk_err(err);
	err = read_status(s, tid, &tgid, &ppid) < 0 ? -ESRCH : 0;
	if (!err)
		err = read_comm(s, tgid, tid, comm, sizeof(comm)) < 0 ? -ESRCH : 0;
	if (!err && (flags & PK_SYNTH_FORK))
		err = do_fork(s, tgid, tgid == tid ? ppid : tgid, tid, tgid == tid ? ppid : tgid);
	if (!err)
		err = do_comm(s, tgid, tid, comm);
	if (!err && (flags & PK_SYNTH_NAMESPACES))
		err = do_namespaces(s, tgid, tid);
	if (!err && (flags & PK_SYNTH_MMAPS))
		err = do_mmaps(s, tgid);
	free(s);
	return err < 0 ? pk_err(err) : err;
}

PK_API int pk_synth__all(unsigned flags, pk_synth_cb cb, void *ctx,
			 const struct pk_synth_opts *opts)
{
	int err;
	struct synth *s = synth_new(cb, ctx, opts, &err);
	struct dirent *de;
	DIR *d;
	if (!s)
		return pk_err(err);
	d = opendir(s->proc);
	if (!d) {
		err = -errno;
		free(s);
		return pk_err(err);
	}
	while ((de = readdir(d))) {
		uint64_t pid;
		const char *p = de->d_name;
		if (pk_synth_parse_dec(&p, &pid) || *p || pid > INT_MAX || pid == 0)
			continue;
		err = do_process(s, (pid_t)pid, flags);
		if (err == -ESRCH)
			err = 0; /* exited meanwhile */
		if (err)
			break;
	}
	closedir(d);
	free(s);
	return err < 0 ? pk_err(err) : err;
}

PK_API int pk_synth__finished_init(pk_synth_cb cb, void *ctx)
{
	struct perf_event_header h = { .type = PK_RECORD_FINISHED_INIT, .misc = 0, .size = 8 };
	if (!cb)
		return pk_err(-EINVAL);
	return cb(&h, ctx);
}

PK_API int pk_kernel_build_id(const char *sysfs_root, uint8_t *buf, size_t *len)
{
	char path[PATH_MAX];
	uint8_t notes[4096];
	pk_snprintf(path, sizeof(path), "%s/kernel/notes", sysfs_root ? sysfs_root : "/sys");
	ssize_t n = pk_read_small_file(path, (char *)notes, sizeof(notes));
	if (n < 0)
		return pk_err((int)n);
	int err = pk_notes__build_id(notes, (size_t)n, buf, len);
	return err < 0 ? pk_err(err) : 0;
}
