/* SPDX-License-Identifier: MIT */
/*
 * lib/annotate/klive.h - the choice of the kernel's code file from a machine model
 * (klive.c): what pk_annotate__kernel (a recording) and pk_annotate_kcode__open (a live
 * machine: perfkit top) both give pk_kcode_open. Internal.
 */
#ifndef PK_ANNOTATE_KLIVE_H
#define PK_ANNOTATE_KLIVE_H

#include "annotate/kcode.h"

/*
 * pk_kcode_open with the machine's kernel facts (its kallsyms, build-id caches, --symfs,
 * the kernel's build-id and _text) and this system's running kernel's build-id. vmlinux:
 * only it is tried (NULL: perf's search); kcore: NULL "/proc/kcore", "" not tried;
 * release: the recorded `uname -r` (NULL: this system's). live: the machine is this
 * system's running kernel (its build-id is the one wanted when the machine knows none).
 */
int pk_kcode_open_machine(struct pk_machine *m, const char *vmlinux, const char *kcore,
			  const char *release, bool live, struct pk_kcode **out);

#endif
