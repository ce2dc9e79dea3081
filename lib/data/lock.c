/* SPDX-License-Identifier: MIT */
/*
 * lib/data: the writer's lock on an output path (pk_data_lock, perfkit/data.h).
 *
 * Two recorders writing one path would each rename the other's file to .old and write
 * through the same name: both "succeed" and the file left behind is a mixture. The lock
 * is flock(2) on a lock file beside the output, `<path>.lock`, which is never renamed
 * (a lock on the data file itself would move with it to `.old`). It holds the owner's pid
 * as text, for the message of the one that is refused.
 *
 * Why flock on a separate file:
 * - the kernel drops a flock when its last descriptor closes, on every exit path,
 *   SIGKILL included: a lock can never be held by a dead process, so taking over a
 *   "stale" lock needs no liveness test of a pid (which pid reuse would fool) and is race
 *   free: of two newcomers finding the same leftover lock file, flock lets exactly one in;
 * - it works on tmpfs and local file systems, and on NFS (the client turns it into a
 *   whole-file POSIX lock, NLM or NFSv4); a file system that supports no locking at all
 *   (some FUSE mounts) yields ENOLCK/EOPNOTSUPP, reported to the caller, who may choose to
 *   write unlocked.
 * A lock file left by a writer that died still names it: the next owner reports that pid
 * as taken over (pk_data_lock_opts.stale).
 *
 * Release: unlink the lock file, then close it. A newcomer that opened the file just
 * before the unlink may win the flock on the unlinked inode afterwards, so every owner
 * checks, once its flock is granted, that the path still names the inode it locked, and
 * starts again if not.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "perfkit/data.h"

struct pk_data_lock {
	int fd;
	char *path;  /* of the lock file */
};

/* The pid written in a lock file, 0 if none (empty, being written, not a number). */
static int32_t read_pid(int fd)
{
	char buf[24];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *end;
	long v = strtol(buf, &end, 10);
	if (end == buf || v <= 0 || v > INT32_MAX || (*end && *end != '\n'))
		return 0;
	return (int32_t)v;
}

/* pid 0 is no process; EPERM: alive, another user's */
static bool pid_alive(int32_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };
	nanosleep(&ts, NULL);
}

PK_API char *pk_data_lock__path(const char *path)
{
	size_t n;
	char *s;

	if (!path || !*path)
		return pk_err_ptr(-EINVAL);
	n = strlen(path);
	s = malloc(n + sizeof(".lock"));
	if (!s)
		return pk_err_ptr(-ENOMEM);
	memcpy(s, path, n);
	memcpy(s + n, ".lock", sizeof(".lock"));
	return s;
}

PK_API struct pk_data_lock *pk_data_lock__acquire(const char *path,
						  const struct pk_data_lock_opts *opts)
{
	int32_t *holder = PK_OPTS_GET(opts, holder, NULL);
	int32_t *stale = PK_OPTS_GET(opts, stale, NULL);
	struct pk_data_lock *l;
	int e = 0;

	if (!PK_OPTS_VALID(opts, pk_data_lock_opts))
		return pk_err_ptr(-EINVAL);
	if (holder)
		*holder = 0;
	if (stale)
		*stale = 0;
	l = calloc(1, sizeof(*l));
	if (!l)
		return pk_err_ptr(-ENOMEM);
	l->fd = -1;
	l->path = pk_data_lock__path(path);
	if (!l->path) {
		free(l);
		return NULL;
	}
	/* a loop only for the release race above: each turn that fails to keep the lock
	 * means another writer released it meanwhile */
	for (int turn = 0; turn < 1000; turn++) {
		struct stat a, b;
		int fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
		if (fd < 0 && errno == EACCES) {
			/* another user's lock file: readable, so flock tells whether it is
			 * held (and by whom); a stale one is removed if the directory allows */
			e = -EACCES;
			fd = open(l->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
			if (fd < 0)
				break;
			if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
				if (errno == EWOULDBLOCK) {
					if (holder)
						*holder = read_pid(fd);
					e = -EBUSY;
				}
				close(fd);
				break;
			}
			int32_t dead = read_pid(fd);
			int gone = unlink(l->path);
			close(fd);
			if (gone < 0)
				break;
			if (dead && stale)
				*stale = dead;  /* kept unless a later turn finds another */
			continue;
		}
		if (fd < 0) {
			e = -errno;
			break;
		}
		if (fstat(fd, &a) < 0 || !S_ISREG(a.st_mode)) {
			e = -EINVAL;  /* a FIFO or device by that name is not ours to use */
			close(fd);
			break;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			e = -errno;
			if (e == -EWOULDBLOCK) {
				/* the owner writes its pid right after its flock: wait for it a
				 * little (0: unknown). Until then the file may still name the dead
				 * owner it took over from, so only a live pid counts. */
				int32_t pid = 0;
				for (int i = 0; i < 100 && !pid_alive(pid = read_pid(fd)); i++) {
					pid = 0;
					sleep_ms(5);
				}
				if (holder)
					*holder = pid;
				e = -EBUSY;
			}
			close(fd);
			break;
		}
		if (stat(l->path, &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
			close(fd);  /* released and unlinked under us: try the new file */
			continue;
		}
		int32_t prev = read_pid(fd);
		if (prev && stale)
			*stale = prev;
		if (prev)
			pk_info("taking over the lock '%s' of pid %d, which ended without "
				"releasing it", l->path, (int)prev);
		char pid[24];
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
			e = -errno;
			if (!e)
				e = -EIO;
			unlink(l->path);
			close(fd);
			break;
		}
		l->fd = fd;
		return l;
	}
	free(l->path);
	free(l);
	return pk_err_ptr(e ? e : -EAGAIN);
}

PK_API void pk_data_lock__release(struct pk_data_lock *l)
{
	if (!l)
		return;
	if (l->fd >= 0) {
		/* the path is ours: no one else unlinks a lock file they do not hold */
		unlink(l->path);
		close(l->fd);
	}
	free(l->path);
	free(l);
}
