/* SPDX-License-Identifier: MIT */
/*
 * tool/outfile.c - whole-file outputs (-o of flamegraph and convert; meant for every
 * command that writes a file of its own: annotate, diff, archive when they gain -o).
 *
 * The output is written to a temporary file in the same directory (".<name>.pk<pid>.XXXXXX",
 * so that the rename cannot cross file systems) and renamed over `path` only once it is
 * complete and flushed (fsync: after a machine crash too). A reader of `path` never sees
 * half an HTML or pprof file, and a command killed in any way leaves the previous file as
 * it was (or none). SIGINT, SIGTERM and SIGHUP remove the temporary file before the
 * command dies of them; after a SIGKILL it stays behind under its hidden name, never
 * under `path`, until the next command writing `path` removes it (its pid names a
 * process that no longer exists).
 *
 * Kept as they are: "-" (stdout) and paths that exist and are not regular files
 * (/dev/null, a FIFO, a terminal) are written in place. A symbolic link is followed: its
 * target is replaced, the link stays. The new file gets the mode of the one it replaces,
 * or 0666 less the umask, as fopen(path, "w") would.
 *
 * The perf.data writer has its own scheme (lib/data: a lock, the file written in place
 * so that a killed recording stays readable): see docs/reliability.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "builtin.h"

/* the temporary file being written, for the signal handler (one at a time) */
static char *volatile active_tmp;
static struct sigaction saved[3];
static const int cleanup_sigs[3] = { SIGINT, SIGTERM, SIGHUP };

static void on_signal(int sig)
{
	char *t = active_tmp;
	if (t)
		unlink(t);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void guard(char *tmp)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	active_tmp = tmp;
	for (int i = 0; i < 3; i++) {
		sigaction(cleanup_sigs[i], NULL, &saved[i]);
		/* a signal the caller ignores (nohup) stays ignored */
		if (saved[i].sa_handler == SIG_DFL)
			sigaction(cleanup_sigs[i], &sa, NULL);
	}
}

static void unguard(void)
{
	for (int i = 0; i < 3; i++)
		if (saved[i].sa_handler == SIG_DFL)
			sigaction(cleanup_sigs[i], &saved[i], NULL);
	active_tmp = NULL;
}

/* PERFKIT_TEST_OUTPUT_PAUSE_MS: widen the moments a kill must not spoil the output (right
 * after the file is created, and with part of it written) so tests can hit them */
static void pause_for_tests(void)
{
	unsigned ms = tool_test_output_pause_ms();
	if (ms)
		usleep(ms * 1000u);
}

/* Remove what killed writers of base left in dir: ".<base>.pk<pid>.XXXXXX" regular files
 * of ours whose pid is gone (a live pid, even a reused one, keeps its file). */
static void sweep_stale(const char *dir, size_t dlen, const char *base)
{
	char dpath[PATH_MAX];
	if (dlen >= sizeof(dpath))
		return;
	if (dlen)
		snprintf(dpath, sizeof(dpath), "%.*s", (int)dlen, dir);
	else
		strcpy(dpath, ".");
	DIR *d = opendir(dpath);
	if (!d)
		return;
	size_t blen = strlen(base);
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (n[0] != '.' || strncmp(n + 1, base, blen) || strncmp(n + 1 + blen, ".pk", 3))
			continue;
		char *end;
		errno = 0;
		long pid = strtol(n + blen + 4, &end, 10);
		if (errno || pid <= 0 || pid > INT_MAX || end == n + blen + 4 || *end != '.' ||
		    strlen(end + 1) != 6 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		struct stat st;
		if (!fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid())
			unlinkat(dirfd(d), n, 0);
	}
	closedir(d);
}

FILE *tool_outfile_open(struct tool_outfile *o, const char *path)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return o->f;
	}
	bool exists = stat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		o->f = fopen(path, "w");
		if (!o->f)
			tool_error("cannot create '%s': %s", path, strerror(errno));
		return o->f;
	}
	/* the target of a symbolic link is what gets replaced */
	char *real = exists ? realpath(path, NULL) : NULL;
	const char *target = real ? real : path;
	const char *slash = strrchr(target, '/');
	size_t dlen = slash ? (size_t)(slash - target) + 1 : 0;
	const char *base = slash ? slash + 1 : target;
	sweep_stale(target, dlen, base);
	size_t n = dlen + 1 + strlen(base) + sizeof(".pk.XXXXXX") + 12;
	o->tmp = malloc(n);
	if (o->tmp)
		snprintf(o->tmp, n, "%.*s.%s.pk%d.XXXXXX", (int)dlen, target, base, (int)getpid());
	o->target = strdup(target);
	free(real);   /* (target and base point into it: used above, not below) */
	if (!o->tmp || !o->target) {
		tool_error("out of memory");
		goto fail;
	}
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		tool_error("cannot create '%s': %s", path, strerror(errno));
		goto fail;
	}
	mode_t mode;
	if (exists) {
		mode = st.st_mode & 07777;
	} else {
		mode_t um = umask(0);
		umask(um);
		mode = 0666 & ~um;
	}
	if (fchmod(fd, mode) < 0) {
		/* not fatal: the file is only less readable than asked */
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		tool_error("cannot create '%s': %s", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		goto fail;
	}
	guard(o->tmp);
	pause_for_tests();
	return o->f;
fail:
	free(o->tmp);
	free(o->target);
	o->tmp = o->target = NULL;
	return NULL;
}

int tool_outfile_close(struct tool_outfile *o, int err)
{
	if (!o->f)
		return err;
	if (o->f == stdout) {
		o->f = NULL;
		return err;
	}
	if (o->tmp)
		pause_for_tests();
	errno = 0;
	if (fflush(o->f) && !err)
		err = errno > 0 ? -errno : -EIO;
	if (o->tmp && !err && fsync(fileno(o->f)) < 0 && errno != EINVAL && errno != EROFS)
		err = -errno;
	errno = 0;
	if (fclose(o->f) && !err)
		err = errno > 0 ? -errno : -EIO;
	o->f = NULL;
	if (o->tmp) {
		if (!err && rename(o->tmp, o->target) < 0)
			err = -errno;
		if (err)
			unlink(o->tmp);
		unguard();
		free(o->tmp);
		free(o->target);
		o->tmp = o->target = NULL;
	}
	return err;
}
