/* SPDX-License-Identifier: MIT */
/* sleeper N: sleep 1 ms N times: N voluntary context switches. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	struct timespec ts = { 0, 1000000 };
	for (int i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	return 0;
}
