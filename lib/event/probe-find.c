/* SPDX-License-Identifier: MIT */
/*
 * lib/event/probe-find.c - finding the binary of a dynamic probe (a path, a library name
 * looked up in a process's maps or as the dynamic linker would, the current directory)
 * and opening it as a probe target: a regular ELF file whose PT_LOAD headers turn
 * addresses into the file offsets the uprobe PMU takes.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "probe-internal.h"

#define MAX_LIB_DIRS 64
#define MAX_CONF_DEPTH 4

/* ---- opening a target ---- */

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#else
#define HOST_MACHINE EM_NONE
#endif

int pk_probe_elf_open(struct probe_elf *pe, const char *path, char *msg, size_t msglen)
{
	struct stat st;

	memset(pe, 0, sizeof(*pe));
	pe->fd = -1;
	if (strlen(path) >= sizeof(pe->path)) {
		pk_snprintf(msg, msglen, "'%.64s...': path too long", path);
		return -ENAMETOOLONG;
	}
	/* O_NONBLOCK: a FIFO named as the binary must not hang the open */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		pk_snprintf(msg, msglen, "cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		bool dir = S_ISDIR(st.st_mode);
		close(fd);
		pk_snprintf(msg, msglen, "'%s' is %s, not a binary", path,
			    dir ? "a directory" : "not a regular file");
		return dir ? -EISDIR : -EINVAL;
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &pe->eh)) {
		if (elf)
			elf_end(elf);
		close(fd);
		pk_snprintf(msg, msglen, "'%s' is not an ELF file", path);
		return -EINVAL;
	}
	if (pe->eh.e_type != ET_EXEC && pe->eh.e_type != ET_DYN) {
		elf_end(elf);
		close(fd);
		pk_snprintf(msg, msglen, "'%s' is not an executable or a shared object", path);
		return -EINVAL;
	}
	pe->fd = fd;
	pe->elf = elf;
	pe->dev = st.st_dev;
	pe->ino = st.st_ino;
	strcpy(pe->path, path);
	return 0;
}

void pk_probe_elf_close(struct probe_elf *pe)
{
	if (pe->elf)
		elf_end(pe->elf);
	if (pe->fd >= 0)
		close(pe->fd);
	pe->elf = NULL;
	pe->fd = -1;
}

/* The segment holding vaddr in the file decides the offset: st_value alone is right only
 * when the segment's vaddr and offset agree, which non-PIE, prelinked and split-code
 * layouts do not promise. */
int pk_probe_vaddr_to_offset(const struct probe_elf *pe, uint64_t vaddr, bool need_exec,
			     uint64_t *off)
{
	size_t n;
	if (elf_getphdrnum(pe->elf, &n) < 0)
		return -EINVAL;
	for (size_t i = 0; i < n && i < 65536; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(pe->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		if (need_exec && !(ph.p_flags & PF_X))
			return -ENOEXEC;
		*off = vaddr - ph.p_vaddr + ph.p_offset;
		return 0;
	}
	return -ERANGE;
}

/* ---- library names ---- */

/* Does file name b answer to the library name n? "libc" matches libc.so.6, libc.so,
 * libc-2.31.so; "c" matches those too, as the linker's -lc would. */
static bool lib_name_matches(const char *b, const char *n)
{
	size_t nl = strlen(n);
	if (!strcmp(b, n))
		return true;
	if (!strncmp(b, n, nl)) {
		const char *r = b + nl;
		if (!strncmp(r, ".so", 3) && (r[3] == '\0' || r[3] == '.'))
			return true;
		if (r[0] == '-' && r[1] >= '0' && r[1] <= '9' && strstr(r, ".so"))
			return true;
	}
	if (strncmp(n, "lib", 3) && !strncmp(b, "lib", 3))
		return lib_name_matches(b + 3, n) && strncmp(b + 3, n, nl + 1);
	return false;
}

/* Is path an ELF shared object or executable of this machine's kind? */
static bool usable_elf(const char *path)
{
	unsigned char id[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return false;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		  pread(fd, id, sizeof(id), 0) == (ssize_t)sizeof(id) && !memcmp(id, ELFMAG, SELFMAG) &&
		  id[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32);
	if (ok && HOST_MACHINE != EM_NONE) {
		uint16_t m;
		memcpy(&m, id + 18, 2);
		ok = m == HOST_MACHINE;
	}
	close(fd);
	return ok;
}

/* The files a process maps, searched for the library name. */
static int find_in_maps(int pid, const char *name, char *out, size_t len)
{
	char p[64], line[PK_PROBE_PATH_MAX + 256];
	snprintf(p, sizeof(p), "/proc/%d/maps", pid);
	FILE *f = fopen(p, "re");
	int r = -ENOENT;
	if (!f)
		return -errno;
	while (r == -ENOENT && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		const char *b = strrchr(path, '/') + 1;
		if (!lib_name_matches(b, name) && strcmp(path, name))
			continue;
		/* through the process's root: a container's file is not ours by that name */
		char full[PK_PROBE_PATH_MAX];
		struct stat sa, sb;
		pk_snprintf(full, sizeof(full), "/proc/%d/root%s", pid, path);
		if (strlen(full) < len && usable_elf(full)) {
			/* the plain name when it is the same file here (it outlives the process) */
			bool same = stat(full, &sa) == 0 && stat(path, &sb) == 0 &&
				    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
			strcpy(out, same ? path : full);
			r = 0;
		}
	}
	fclose(f);
	return r;
}

struct dirs {
	char *v[MAX_LIB_DIRS];
	size_t n;
};

static void add_dir(struct dirs *d, const char *dir)
{
	if (d->n >= MAX_LIB_DIRS || dir[0] != '/')
		return;
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i], dir))
			return;
	char *c = pk_strndup(dir, strlen(dir));
	if (c)
		d->v[d->n++] = c;
}

/* ld.so.conf: one directory per line, '#' comments, "include GLOB" (relative to the
 * including file's directory), nested at most MAX_CONF_DEPTH deep. */
static void read_conf(struct dirs *d, const char *path, int depth)
{
	char line[1024];
	FILE *f;
	if (depth > MAX_CONF_DEPTH || !(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#\n")] = '\0';
		char *s = pk_strtrim(line);
		if (!*s)
			continue;
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			char pat[1200];
			s = pk_strtrim(s + 7);
			if (s[0] == '/')
				pk_snprintf(pat, sizeof(pat), "%s", s);
			else
				pk_snprintf(pat, sizeof(pat), "/etc/%s", s);
			glob_t g;
			if (glob(pat, 0, NULL, &g) == 0)
				for (size_t i = 0; i < g.gl_pathc && i < 256; i++)
					read_conf(d, g.gl_pathv[i], depth + 1);
			globfree(&g);
		} else if (strncmp(s, "hwcap", 5)) {
			s[strcspn(s, " \t=:")] = '\0';
			add_dir(d, s);
		}
	}
	fclose(f);
}

/* The first usable file of dir matching the name (sorted: libc.so before libc.so.6). */
static int find_in_dir(const char *dir, const char *name, char *out, size_t len)
{
	size_t n = 0;
	char **v = pk_dir_list_sorted(AT_FDCWD, dir, 100000, false, &n, NULL);
	int r = -ENOENT;
	for (size_t i = 0; i < n && r; i++) {
		char full[PK_PROBE_PATH_MAX];
		if (!lib_name_matches(v[i], name))
			continue;
		if (pk_snprintf(full, sizeof(full), "%s/%s", dir, v[i]) >= sizeof(full) - 1)
			continue;
		/* libc.so is a linker script on most systems: only ELF files count */
		if (strlen(full) < len && usable_elf(full)) {
			strcpy(out, full);
			r = 0;
		}
	}
	pk_strv_free(v, n);
	return r;
}

PK_API int pk_probe__find_binary(const char *binary, const struct pk_probe_opts *opts, char *out,
				 size_t len, char *msg, size_t msglen)
{
	if (!binary || !out || !len || !PK_OPTS_VALID(opts, pk_probe_opts))
		return pk_err(-EINVAL);
	int pid = PK_OPTS_GET(opts, pid, 0);
	if (!binary[0]) {
		pk_snprintf(msg, msglen, "empty binary name");
		return -EINVAL;
	}
	if (strlen(binary) >= len) {
		pk_snprintf(msg, msglen, "binary name too long");
		return -ENAMETOOLONG;
	}
	if (strchr(binary, '/')) {
		strcpy(out, binary);
		return 0;
	}
	if (pid > 0 && find_in_maps(pid, binary, out, len) == 0)
		return 0;
	struct dirs d = { .n = 0 };
	read_conf(&d, "/etc/ld.so.conf", 0);
	static const char *const sys_dirs[] = {
#if defined(__x86_64__)
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
		"/lib64", "/usr/lib64", "/lib", "/usr/lib",
	};
	for (size_t i = 0; i < sizeof(sys_dirs) / sizeof(sys_dirs[0]); i++)
		add_dir(&d, sys_dirs[i]);
	int r = -ENOENT;
	for (size_t i = 0; i < d.n; i++) {
		if (r)
			r = find_in_dir(d.v[i], binary, out, len);
		free(d.v[i]);
	}
	if (r == 0)
		return 0;
	struct stat st;
	if (stat(binary, &st) == 0) {
		strcpy(out, binary);
		return 0;
	}
	if (pid > 0)
		pk_snprintf(msg, msglen,
			    "no binary '%s': not mapped by process %d, not a library in the "
			    "ld.so.conf directories, not in the current directory",
			    binary, pid);
	else
		pk_snprintf(msg, msglen,
			    "no binary '%s': not a library in the ld.so.conf directories, not in "
			    "the current directory (give a path)",
			    binary);
	return -ENOENT;
}

int pk_probe_open_binary(const char *binary, bool args_ok, const struct pk_probe_opts *opts,
			 char path[PK_PROBE_PATH_MAX], struct probe_elf *pe, char *msg,
			 size_t msglen)
{
	int r;

	if (msg && msglen)
		msg[0] = '\0';
	if (!binary || !args_ok || !PK_OPTS_VALID(opts, pk_probe_opts))
		return pk_err(-EINVAL);
	if ((r = pk_probe__find_binary(binary, opts, path, PK_PROBE_PATH_MAX, msg, msglen)) < 0)
		return r;
	return pk_probe_elf_open(pe, path, msg, msglen);
}
