/* SPDX-License-Identifier: MIT */
/*
 * perfkit/synth.h - records describing what existed before recording started, as
 * `perf record` synthesizes them: the kernel map, COMM / FORK records for
 * existing threads, their NAMESPACES, MMAP2 records for every executable mapping of
 * existing processes (and their data mappings on request), from
 * /proc/PID/{comm,task,maps,status,ns}, and FINISHED_INIT. With them `-p` and `-a`
 * recordings symbolise.
 *
 * Every record is handed to a callback (e.g. one that calls pk_data_writer__write_record);
 * records are built in a buffer owned by the library and valid only during the call.
 * Synthesized kernel records end with an all-zero sample_id trailer of opts.id_size bytes
 * (time 0 and id 0: perf sorts them first and maps them to the first attr).
 */
#ifndef PERFKIT_SYNTH_H
#define PERFKIT_SYNTH_H

#include <sys/types.h>
#include <linux/perf_event.h>
#include <perfkit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return non-zero to stop the synthesis (that value is returned by the pk_synth__ call). */
typedef int (*pk_synth_cb)(const struct perf_event_header *rec, void *ctx);

struct pk_synth_opts {
	size_t sz;
	/* Bytes of the sample_id_all trailer to append (8 x the number of TID, TIME, ID,
	 * STREAM_ID, CPU, IDENTIFIER bits of the first attr's sample_type when it has
	 * sample_id_all; 0 otherwise). Must be a multiple of 8, at most 48. */
	uint32_t id_size;
	/* Also synthesize the readable non-executable mappings, file-backed or anonymous
	 * (MMAP2 with PERF_RECORD_MISC_MMAP_DATA), as perf does for `record -d` and for
	 * `--call-graph dwarf`. */
	bool mmap_data;
	/* procfs root (tests); NULL = "/proc". */
	const char *procfs_root;
	/* where the kernel's modules are installed (tests); NULL = "/lib/modules". */
	const char *modules_root;
	size_t :0;
};

/* Flags for pk_synth__process / pk_synth__all */
#define PK_SYNTH_FORK  (1u << 0)  /* a FORK record before each thread's COMM (as for -a) */
#define PK_SYNTH_MMAPS (1u << 1)  /* MMAP2 records for the process's mappings */
#define PK_SYNTH_NAMESPACES (1u << 2) /* a NAMESPACES record after each thread's COMM
				       * (for attr.namespaces, `record --namespaces`) */

/*
 * The kernel map: an MMAP record with pid -1, misc KERNEL, start = pgoff = address of
 * `_text`, len = `_etext` - `_text` (from <procfs>/kallsyms) and filename
 * "[kernel.kallsyms]_text". Returns 0, -EACCES when kallsyms hides the addresses
 * (kptr_restrict), -ENOENT when it has no _text, or the callback's value.
 */
PK_API int pk_synth__kernel_mmap(pk_synth_cb cb, void *ctx, const struct pk_synth_opts *opts);

/*
 * The loaded kernel modules, as perf record synthesizes them: one MMAP record per module
 * of <procfs>/modules in address order, pid -1, misc KERNEL, start = its load address,
 * len = its size, pgoff 0, filename = its file as listed by depmod in
 * <modules_root>/<release>/modules.dep (release: <procfs>/sys/kernel/osrelease), or
 * "[NAME]" when it is not listed there. Returns 0 (also without modules or without
 * <procfs>/modules: a kernel built without module support), -EACCES when the addresses
 * are hidden (kptr_restrict), or the callback's value.
 */
PK_API int pk_synth__modules(pk_synth_cb cb, void *ctx, const struct pk_synth_opts *opts);

/* One COMM record for thread tid of process pid with name comm (truncated to 15 bytes). */
PK_API int pk_synth__comm(pid_t pid, pid_t tid, const char *comm, pk_synth_cb cb, void *ctx,
			  const struct pk_synth_opts *opts);

/*
 * One NAMESPACES record for thread tid of process pid: the device and inode numbers of
 * <procfs>/PID/task/TID/ns/{net,uts,ipc,pid,user,mnt,cgroup} (the kernel's index order),
 * each left 0 when it cannot be read (no permission, or an older kernel). perf
 * synthesizes these for the threads that exist when `record --namespaces` starts; the
 * kernel only reports later changes. Returns 0, -EINVAL, or the callback's value.
 */
PK_API int pk_synth__namespaces(pid_t pid, pid_t tid, pk_synth_cb cb, void *ctx,
				const struct pk_synth_opts *opts);

/*
 * Process `pid` as found in procfs: for every thread in <procfs>/PID/task a FORK (with
 * PK_SYNTH_FORK: parent = PPid for the leader, the leader for other threads) and a COMM
 * (from /proc/PID/task/TID/comm) followed, with PK_SYNTH_NAMESPACES, by the thread's
 * NAMESPACES record (as pk_synth__namespaces), then with PK_SYNTH_MMAPS one MMAP2 per
 * executable mapping of /proc/PID/maps (and per readable one with opts.mmap_data;
 * anonymous ones named "//anon"). Returns 0, -ESRCH if the
 * process is gone, or the callback's value. A thread vanishing meanwhile is not an error.
 */
PK_API int pk_synth__process(pid_t pid, unsigned flags, pk_synth_cb cb, void *ctx,
			     const struct pk_synth_opts *opts);

/*
 * Only the listed thread (for -t): COMM of tid (with its process's pid from
 * /proc/TID/status Tgid), with PK_SYNTH_NAMESPACES its NAMESPACES and, with
 * PK_SYNTH_MMAPS, the process's mappings.
 */
PK_API int pk_synth__thread(pid_t tid, unsigned flags, pk_synth_cb cb, void *ctx,
			    const struct pk_synth_opts *opts);

/* Every process in procfs (system-wide recording), as pk_synth__process. */
PK_API int pk_synth__all(unsigned flags, pk_synth_cb cb, void *ctx,
			 const struct pk_synth_opts *opts);

/* A PERF_RECORD_FINISHED_INIT (82): the end of the synthesized initial state. */
PK_API int pk_synth__finished_init(pk_synth_cb cb, void *ctx);

/*
 * The running kernel's GNU build-id from <sysfs>/kernel/notes (sysfs_root NULL = "/sys").
 * On entry *len is the capacity of buf; returns 0 and *len, -ENOENT, or a negative errno.
 */
PK_API int pk_kernel_build_id(const char *sysfs_root, uint8_t *buf, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
