/* SPDX-License-Identifier: MIT */
/*
 * lib/event/pmu-internal.h - building PMU objects by hand (used by the sysfs loader and by
 * tests/fuzzers that want a PMU without writing a sysfs tree). Never installed.
 */
#ifndef PK_PMU_INTERNAL_H
#define PK_PMU_INTERNAL_H

#include <perfkit/pmu.h>

/* Bounds on untrusted sysfs content. */
#define PK_PMU_FILE_MAX 4096      /* bytes per sysfs file we read */
#define PK_PMU_MAX_PMUS 1024      /* PMU directories per set */
#define PK_PMU_MAX_FORMATS 256    /* format files per PMU */
#define PK_PMU_MAX_ALIASES 4096   /* event alias files per PMU */

/* A new PMU with no formats or aliases; NULL/ENOMEM. Free with pk_pmu__delete. */
struct pk_pmu *pk_pmu__new(const char *name, uint32_t type);
void pk_pmu__delete(struct pk_pmu *pmu);
/* Add a format term parsed from `spec` (a format file's text). -PK_ERR_PARSE if malformed,
 * -EEXIST if the name is taken, -E2BIG past PK_PMU_MAX_FORMATS. */
int pk_pmu__add_format(struct pk_pmu *pmu, const char *name, const char *spec, size_t len);
/* Add an event alias (terms are copied; unit may be NULL). -EEXIST, -E2BIG as above. */
int pk_pmu__add_alias(struct pk_pmu *pmu, const char *name, const char *terms, double scale,
		      const char *unit);
/* Set cpumask (copied, may be NULL) and rdpmc (-1 = absent). */
int pk_pmu__set_misc(struct pk_pmu *pmu, const char *cpumask, int rdpmc);

#endif
