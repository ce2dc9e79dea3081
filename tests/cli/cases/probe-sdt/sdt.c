/* SDT markers for the probe cases: pk:plain fires argv[1] times with (i, i * 2); pk:guarded
 * sits behind its semaphore and is reached argv[2] times, only when a tracer holds the
 * semaphore up. Prints how often the semaphore was seen set. */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/sdt.h>

unsigned short pk_guarded_semaphore __attribute__((section(".probes")));
unsigned short pk_plain_semaphore __attribute__((section(".probes"))); /* never tested */

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3, m = argc > 2 ? atol(argv[2]) : 2, on = 0;
	for (long i = 0; i < n; i++)
		DTRACE_PROBE2(pk, plain, i, i * 2);
	for (long i = 0; i < m; i++) {
		if (pk_guarded_semaphore) {
			on++;
			DTRACE_PROBE2(pk, guarded, i, on);
		}
	}
	printf("semaphore set %ld times\n", on);
	return 0;
}
