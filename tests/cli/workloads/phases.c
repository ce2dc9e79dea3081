/* SPDX-License-Identifier: MIT */
/*
 * phases A B: for attaching to a running process. Starts thread A at once and prints
 * "PID TID_A" on stdout; then waits for SIGUSR1. On the signal, thread A touches A fresh
 * pages and a new thread B (created only now) touches B fresh pages; then both end.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static long pages_a, pages_b;
static pid_t tid_a;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go, ready;

static void touch(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		exit(1);
	madvise(m, (size_t)(n * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		((volatile char *)m)[i * page] = 1;
}

static void *thread_a(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	tid_a = (pid_t)syscall(SYS_gettid);
	ready = 1;
	pthread_cond_broadcast(&cv);
	while (!go)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	touch(pages_a);
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	touch(pages_b);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	sigset_t set;
	int sig;
	pages_a = argc > 1 ? atol(argv[1]) : 300;
	pages_b = argc > 2 ? atol(argv[2]) : 500;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_mutex_lock(&mu);
	while (!ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	printf("%d %d\n", (int)getpid(), (int)tid_a);
	fflush(stdout);
	sigwait(&set, &sig);
	pthread_mutex_lock(&mu);
	go = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
