/* SPDX-License-Identifier: MIT */
/*
 * lib/count/workload.c - a launched command: create the child now, exec later.
 *
 * The child blocks on a "go" pipe so the parent can open counters on its pid (with
 * enable_on_exec) first. An "exec error" pipe with O_CLOEXEC tells the parent how exec went:
 * EOF means the exec succeeded (the kernel closed the pipe), four bytes are the errno.
 *
 * On x86-64 the child is created with clone(CLONE_VM) on a small stack of its own, as
 * posix_spawn does, rather than with fork(): no page tables are copied and neither side
 * takes copy-on-write faults afterwards (measured: 30 fewer page faults per launch, a
 * visible share of `perfkit stat -- true`). Such a child shares our memory until it execs,
 * so it runs only raw system calls (no libc: errno and locks are shared), on data prepared
 * before the clone: the PATH candidates of execvp, an argv for the /bin/sh fallback, the
 * signal mask to restore. It first resets every caught signal to SIG_DFL, so none of our
 * handlers can ever run on its side. Elsewhere, under valgrind (which cannot run such a
 * clone) and in sanitizer builds, the child is a plain fork().
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <sched.h>
#endif
#include "internal.h"
#include <perfkit/count.h>

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if !__has_feature(address_sanitizer) && !__has_feature(thread_sanitizer) && \
	!__has_feature(memory_sanitizer)
#define PK_SPAWN_CLONE_VM 1
#endif
#else
#define PK_SPAWN_CLONE_VM 1
#endif
#endif

#define PK_SPAWN_STACK (64 * 1024)

/* What the clone(CLONE_VM) child needs, prepared by the parent. */
struct spawn_ctx {
	int go_rd, go_wr, ep_rd, ep_wr;
	char **cands;         /* paths to try, in execvp's order */
	size_t nr_cands;
	char *const *argv;
	char **sh_argv;       /* "/bin/sh", <candidate>, argv[1..], NULL: for ENOEXEC */
	char **envp;
	uint64_t orig_mask;   /* kernel sigset to restore before exec */
};

struct pk_workload {
	pid_t pid;
	int go_fd;    /* parent's write end of the go pipe, -1 once started */
	int err_fd;   /* parent's read end of the exec-error pipe */
	bool reaped;
	int status;
	/* clone(CLONE_VM) child: its stack and context live until it has exec'ed or died */
	void *stack;
	struct spawn_ctx *ctx;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void spawn_release(struct pk_workload *w)
{
	if (w->stack) {
		munmap(w->stack, PK_SPAWN_STACK);
		w->stack = NULL;
	}
	if (w->ctx) {
		for (size_t i = 0; i < w->ctx->nr_cands; i++)
			free(w->ctx->cands[i]);
		free(w->ctx->cands);
		free(w->ctx->sh_argv);
		free(w->ctx);
		w->ctx = NULL;
	}
}

#ifdef PK_SPAWN_CLONE_VM
/* x86-64 system calls without libc (no errno, no cancellation points): -errno on failure */
static inline long raw_sc(long n, long a, long b, long c, long d)
{
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

struct ksigaction {
	unsigned long handler, flags, restorer;
	uint64_t mask;
};

/* The clone(CLONE_VM) child: raw system calls only, until execve replaces our memory. */
static int spawn_child(void *arg)
{
	struct spawn_ctx *c = arg;
	struct ksigaction old, dfl = { 0, 0, 0, 0 };
	char ch;
	long n, r;
	int err = ENOENT, eacces = 0;

	raw_sc(SYS_close, c->go_wr, 0, 0, 0);
	raw_sc(SYS_close, c->ep_rd, 0, 0, 0);
	/* none of the parent's handlers may run here: caught signals go back to SIG_DFL
	 * (our sighand table is our own copy); SIGPIPE too, as a fresh process has it */
	for (long sig = 1; sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (raw_sc(SYS_rt_sigaction, sig, 0, (long)&old, 8) < 0)
			continue;
		if ((old.handler != (unsigned long)SIG_DFL && old.handler != (unsigned long)SIG_IGN) ||
		    sig == SIGPIPE)
			raw_sc(SYS_rt_sigaction, sig, (long)&dfl, 0, 8);
	}
	raw_sc(SYS_rt_sigprocmask, SIG_SETMASK, (long)&c->orig_mask, 0, 8);
	do
		n = raw_sc(SYS_read, c->go_rd, (long)&ch, 1, 0);
	while (n == -EINTR);
	if (n != 1)
		raw_sc(SYS_exit_group, 127, 0, 0, 0); /* the parent gave up before starting us */
	/* execvp's search: skip missing candidates, remember EACCES, stop at other errors */
	for (size_t i = 0; i < c->nr_cands; i++) {
		r = raw_sc(SYS_execve, (long)c->cands[i], (long)c->argv, (long)c->envp, 0);
		if (r == -ENOEXEC) {
			c->sh_argv[1] = c->cands[i];
			r = raw_sc(SYS_execve, (long)"/bin/sh", (long)c->sh_argv, (long)c->envp, 0);
			err = (int)-r;
			eacces = 0;
			break;
		}
		if (r == -EACCES) {
			eacces = 1;
			continue;
		}
		if (r == -ENOENT || r == -ENOTDIR || r == -ESTALE || r == -ENODEV || r == -ETIMEDOUT)
			continue;
		err = (int)-r;
		break;
	}
	if (eacces)
		err = EACCES;
	raw_sc(SYS_write, c->ep_wr, (long)&err, sizeof(err), 0);
	raw_sc(SYS_exit_group, 127, 0, 0, 0);
	return 127;
}

/* execvp's candidate list for argv[0] (PATH search unless it has a slash) */
static int spawn_candidates(struct spawn_ctx *c, const char *name)
{
	if (!*name)
		return 0; /* execvp("") fails with ENOENT */
	if (strchr(name, '/')) {
		c->cands = calloc(1, sizeof(*c->cands));
		if (!c->cands || !(c->cands[0] = strdup(name)))
			return -ENOMEM;
		c->nr_cands = 1;
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin"; /* glibc's default */
	size_t n = 1;
	for (const char *p = path; *p; p++)
		n += *p == ':';
	c->cands = calloc(n, sizeof(*c->cands));
	if (!c->cands)
		return -ENOMEM;
	const char *p = path;
	for (;;) {
		const char *e = strchrnul(p, ':');
		size_t dl = (size_t)(e - p), nl = strlen(name);
		char *cand = malloc(dl + nl + 2);
		if (!cand)
			return -ENOMEM;
		if (dl) {
			memcpy(cand, p, dl);
			cand[dl] = '/';
			memcpy(cand + dl + 1, name, nl + 1);
		} else {
			memcpy(cand, name, nl + 1); /* empty element: the current directory */
		}
		c->cands[c->nr_cands++] = cand;
		if (!*e)
			break;
		p = e + 1;
	}
	return 0;
}

static bool under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");
	return p && strstr(p, "vgpreload");
}

/* Create the child with clone(CLONE_VM); returns its pid, or -errno (then fork instead). */
static pid_t spawn_clone(struct pk_workload *w, char *const argv[], int go[2], int ep[2])
{
	extern char **environ;
	struct spawn_ctx *c;
	size_t argc = 0;
	sigset_t all, orig;
	pid_t pid;
	int err;

	if (under_valgrind())
		return -ENOSYS;
	while (argv[argc])
		argc++;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	w->ctx = c;
	c->go_rd = go[0];
	c->go_wr = go[1];
	c->ep_rd = ep[0];
	c->ep_wr = ep[1];
	c->argv = argv;
	c->envp = environ;
	c->sh_argv = calloc(argc + 2, sizeof(*c->sh_argv));
	if (!c->sh_argv)
		return -ENOMEM;
	c->sh_argv[0] = (char *)"/bin/sh";
	for (size_t i = 1; i < argc; i++)
		c->sh_argv[i + 1] = argv[i];
	err = spawn_candidates(c, argv[0]);
	if (err)
		return err;
	w->stack = mmap(NULL, PK_SPAWN_STACK, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (w->stack == MAP_FAILED) {
		w->stack = NULL;
		return -ENOMEM;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &orig);
	memcpy(&c->orig_mask, &orig, sizeof(c->orig_mask));
	pid = clone(spawn_child, (char *)w->stack + PK_SPAWN_STACK, CLONE_VM | SIGCHLD, c);
	err = pid < 0 ? -errno : 0;
	pthread_sigmask(SIG_SETMASK, &orig, NULL);
	return err ? err : pid;
}
#endif

static pid_t spawn_fork(char *const argv[], int go[2], int ep[2])
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
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
	return pid;
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
	pid_t pid = -ENOSYS;
#ifdef PK_SPAWN_CLONE_VM
	pid = spawn_clone(w, argv, go, ep);
	if (pid < 0)
		spawn_release(w);
#endif
	if (pid < 0)
		pid = spawn_fork(argv, go, ep);
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		free(w);
		return pk_err_ptr(pid);
	}
	w->pid = pid;
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
		spawn_release(w);
		return pk_err(e > 0 ? -e : -ENOEXEC);
	}
	/* EOF: the child has exec'ed (or died), it no longer uses our memory */
	spawn_release(w);
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
	spawn_release(w);
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
