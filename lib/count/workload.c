/* SPDX-License-Identifier: MIT */
/*
 * lib/count/workload.c - a launched command: fork now, exec later.
 *
 * The child blocks on a "go" pipe so the parent can open counters on its pid (with
 * enable_on_exec) first. An "exec error" pipe with O_CLOEXEC tells the parent how exec went:
 * EOF means the exec succeeded (the kernel closed the pipe), four bytes are the errno.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "internal.h"
#include <perfkit/count.h>

struct pk_workload {
	pid_t pid;
	int go_fd;    /* parent's write end of the go pipe, -1 once started */
	int err_fd;   /* parent's read end of the exec-error pipe */
	bool reaped;
	int status;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

PK_API struct pk_workload *pk_workload__prepare(char *const argv[])
{
	int go[2], ep[2];
	struct pk_workload *w;

	if (!argv || !argv[0])
		return pk_err_ptr(-EINVAL);
	if (!(w = calloc(1, sizeof(*w))))
		return pk_err_ptr(-ENOMEM);
	if (pipe2(go, O_CLOEXEC) < 0) {
		int e = -errno;
		free(w);
		return pk_err_ptr(e);
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		int e = -errno;
		close(go[0]);
		close(go[1]);
		free(w);
		return pk_err_ptr(e);
	}
	w->pid = fork();
	if (w->pid < 0) {
		int e = -errno;
		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		free(w);
		return pk_err_ptr(e);
	}
	if (w->pid == 0) {
		char c;
		ssize_t n;
		int e;
		close(go[1]);
		close(ep[0]);
		signal(SIGPIPE, SIG_DFL);
		do
			n = read(go[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127); /* the parent gave up before starting us */
		execvp(argv[0], argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0) {
			/* nothing more we can do */
		}
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	w->go_fd = go[1];
	w->err_fd = ep[0];
	return w;
}

PK_API pid_t pk_workload__pid(const struct pk_workload *w)
{
	return w ? w->pid : -1;
}

PK_API int pk_workload__start(struct pk_workload *w)
{
	int e = 0;
	ssize_t n;

	if (!w || w->go_fd < 0)
		return pk_err(-EINVAL);
	do
		n = write(w->go_fd, "g", 1);
	while (n < 0 && errno == EINTR);
	close_fd(&w->go_fd);
	if (n != 1)
		return pk_err(-EPIPE);
	do
		n = read(w->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close_fd(&w->err_fd);
	if (n == (ssize_t)sizeof(e)) {
		pid_t r;
		do
			r = waitpid(w->pid, &w->status, 0);
		while (r < 0 && errno == EINTR);
		w->reaped = true;
		return pk_err(e > 0 ? -e : -ENOEXEC);
	}
	return 0;
}

PK_API int pk_workload__wait(struct pk_workload *w, bool block, int *status)
{
	pid_t r;
	if (!w)
		return pk_err(-EINVAL);
	if (!w->reaped) {
		r = waitpid(w->pid, &w->status, block ? 0 : WNOHANG);
		if (r < 0)
			return pk_err(-errno);
		if (r == 0)
			return pk_err(-EAGAIN);
		w->reaped = true;
	}
	if (status)
		*status = w->status;
	return 0;
}

PK_API int pk_workload__kill(struct pk_workload *w, int sig)
{
	if (!w || w->reaped)
		return pk_err(-ESRCH);
	if (kill(w->pid, sig) < 0)
		return pk_err(-errno);
	return 0;
}

PK_API void pk_workload__free(struct pk_workload *w)
{
	if (!w)
		return;
	close_fd(&w->go_fd); /* a child still waiting sees EOF and exits 127 */
	close_fd(&w->err_fd);
	if (!w->reaped) {
		pid_t r;
		kill(w->pid, SIGKILL);
		do
			r = waitpid(w->pid, &w->status, 0);
		while (r < 0 && errno == EINTR);
	}
	free(w);
}

PK_API int pk_wait_status__exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
