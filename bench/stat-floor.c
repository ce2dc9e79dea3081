/*
 * bench/stat-floor: the least work any counting tool must do for
 *     stat -e task-clock,page-faults,context-switches -- CMD...
 * create the child (clone(CLONE_VM), the cheapest way, as perfkit does), open three
 * software counters on it with enable_on_exec, let it exec, wait, read the three values. No
 * option parsing, no event names, no output formatting, no library, no error handling. bench/stat-startup.sh times it beside `perfkit stat` and `perf stat` to show how
 * much of perfkit's start-up is the machine's fork+exec floor rather than perfkit.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int go[2];
static char **cmd;

static int child_fn(void *arg)
{
	char c;
	(void)arg;
	if (read(go[0], &c, 1) != 1)
		_exit(126);
	execvp(cmd[0], cmd);
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: stat-floor CMD [ARG...]\n");
		return 2;
	}
	static const uint64_t cfg[3] = { PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
					 PERF_COUNT_SW_CONTEXT_SWITCHES };
	if (pipe2(go, O_CLOEXEC))
		return 1;
	cmd = argv + 1;
	/* the child only makes raw-enough calls: read() and execvp() of a process that
	 * shares our memory (fine for a benchmark; perfkit's real launcher uses raw syscalls) */
	char *stack = malloc(64 * 1024);
	pid_t child = stack ? clone(child_fn, stack + 64 * 1024, CLONE_VM | SIGCHLD, NULL) : -1;
	if (child < 0)
		return 1;
	close(go[0]);
	int fds[3];
	for (int i = 0; i < 3; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = cfg[i];
		a.disabled = 1;
		a.inherit = 1;
		a.enable_on_exec = 1;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		fds[i] = (int)syscall(SYS_perf_event_open, &a, child, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[i] < 0)
			perror("perf_event_open");
	}
	if (write(go[1], "g", 1) != 1)
		return 1;
	close(go[1]);
	int st;
	if (waitpid(child, &st, 0) < 0)
		return 1;
	for (int i = 0; i < 3; i++) {
		uint64_t v[3] = { 0, 0, 0 };
		if (fds[i] >= 0 && read(fds[i], v, sizeof(v)) == (ssize_t)sizeof(v))
			fprintf(stderr, "%llu\n", (unsigned long long)v[0]);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
