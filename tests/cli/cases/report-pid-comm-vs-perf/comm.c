// SPDX-License-Identifier: MIT
// report-pid-comm-vs-perf's workload: the main thread runs under its long executable
// name, then renames itself "x"; a second thread named argv[1] ("t2" by default) spins too.
#include <pthread.h>
#include <sys/prctl.h>

static volatile long sink;
static const char *tname = "t2";

static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

static void *thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, tname);
	spin(60000000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 1)
		tname = argv[1];
	spin(60000000);
	prctl(PR_SET_NAME, "x");
	spin(60000000);
	if (pthread_create(&t, NULL, thread, NULL) || pthread_join(t, NULL))
		return 1;
	return 0;
}
