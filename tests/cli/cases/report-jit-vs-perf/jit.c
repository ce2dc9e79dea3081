// SPDX-License-Identifier: MIT
// report-jit-vs-perf's workload: code run from anonymous executable memory, as a JIT
// compiler's. "thread": run by a second thread; "map": described by /tmp/perf-PID.map.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* x86-64: mov $0x10000000, %rcx; 1: dec %rcx; jnz 1b; ret */
static const unsigned char code[] = { 0x48, 0xc7, 0xc1, 0x00, 0x00, 0x00, 0x10,
				      0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
static void *jitted;

static void *run(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++)
		((void (*)(void))jitted)();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	jitted = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jitted == MAP_FAILED)
		return 1;
	memcpy(jitted, code, sizeof(code));
	if (!strcmp(mode, "map")) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		FILE *f = fopen(path, "w");
		if (!f)
			return 1;
		fprintf(f, "%lx %zx jitted_loop\n", (unsigned long)jitted, sizeof(code));
		fclose(f);
	}
	if (!strcmp(mode, "thread")) {
		pthread_t t;
		if (pthread_create(&t, NULL, run, NULL) || pthread_join(t, NULL))
			return 1;
	} else {
		run(NULL);
	}
	return 0;
}
