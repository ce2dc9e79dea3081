/* SPDX-License-Identifier: MIT */
/* Helpers shared by the cmocka unit tests. */
#ifndef PK_TESTUTIL_H
#define PK_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>

/* Silence library logging (tests assert on return values, not on stderr noise);
 * messages are kept in a buffer readable with pk_test_log_text(). */
void pk_test_quiet_log(void);
const char *pk_test_log_text(void);
void pk_test_log_clear(void);

/* Write `content` to root/relpath, creating directories. Asserts on failure. */
void pk_test_write_file(const char *root, const char *relpath, const char *content);
/* mkdtemp under the cwd; returns a malloc'd path. */
char *pk_test_mkdtemp(const char *prefix);
/* rm -rf */
void pk_test_rmtree(const char *path);

/* Skip the current test with a reason printed to stdout. */
#define PK_SKIP(...)                                     \
	do {                                             \
		printf("[  SKIP    ] reason: " __VA_ARGS__); \
		printf("\n");                            \
		skip();                                  \
	} while (0)

/* Probe: can this process open a software event on itself? tracefs mounted? root? */
bool pk_test_can_perf(void);
bool pk_test_have_tracefs(void);
bool pk_test_is_root(void);

/* Run a shell command (printf-style); its exit status, -1 if it did not exit. */
int pk_test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct pk_attr;
/* A cpu-clock sampling attr (software event, sample_id_all) for synthetic recordings. */
void pk_test_cpu_clock_attr(struct pk_attr *a, uint64_t period, uint64_t sample_type);

struct pk_machine;
struct pk_dso;
/* A machine (default options) in *m and the DSO of this test program in it, named by
 * its real path; the caller frees *m. Fails the test when either cannot be made. */
struct pk_dso *pk_test_self_dso(struct pk_machine **m);

#endif
