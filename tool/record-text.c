/* SPDX-License-Identifier: MIT */
/*
 * tool/record-text.c - perf's one-line text of the side-band records COMM, FORK, EXIT,
 * MMAP and MMAP2 ("PERF_RECORD_MMAP2 1/1: [0x...(0x...) @ 0x... 08:01 123 0]: r-xp /bin/x"),
 * which perf prints alike in `perf script --show-task-events/--show-mmap-events` and in
 * `perf report -D`. Both of perfkit's printers (script-records.c, report-dump.c) take it
 * from here, each through its own output (the script buffer, a FILE).
 */
#include <inttypes.h>
#include <sys/mman.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

bool tool_side_record_text(const struct pk_record *r, tool_printf_fn pf, void *ctx)
{
	switch (r->type) {
	case PERF_RECORD_COMM:
		pf(ctx, "PERF_RECORD_COMM%s: %s:%d/%d\n", r->comm.exec ? " exec" : "", r->comm.comm,
		   (int32_t)r->comm.pid, (int32_t)r->comm.tid);
		return true;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		pf(ctx, "PERF_RECORD_%s(%d:%d):(%d:%d)\n", r->type == PERF_RECORD_FORK ? "FORK" : "EXIT",
		   (int32_t)r->task.pid, (int32_t)r->task.tid, (int32_t)r->task.ppid,
		   (int32_t)r->task.ptid);
		return true;
	case PERF_RECORD_MMAP:
		pf(ctx, "PERF_RECORD_MMAP %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %s\n",
		   (int32_t)r->mmap.pid, (int32_t)r->mmap.tid, r->mmap.addr, r->mmap.len,
		   r->mmap.pgoff, r->mmap.data ? 'r' : 'x', r->mmap.filename);
		return true;
	case PERF_RECORD_MMAP2: {
		const struct pk_rec_mmap2 *m = &r->mmap2;
		pf(ctx, "PERF_RECORD_MMAP2 %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64,
		   (int32_t)m->pid, (int32_t)m->tid, m->addr, m->len, m->pgoff);
		if (m->has_build_id) {
			pf(ctx, " <");
			for (unsigned i = 0; i < m->build_id_size && i < 20; i++)
				pf(ctx, "%02x", m->build_id[i]);
			pf(ctx, ">");
		} else {
			pf(ctx, " %02x:%02x %" PRIu64 " %" PRIu64, m->maj, m->min, m->ino,
			   m->ino_generation);
		}
		pf(ctx, "]: %c%c%c%c %s\n", (m->prot & PROT_READ) ? 'r' : '-',
		   (m->prot & PROT_WRITE) ? 'w' : '-', (m->prot & PROT_EXEC) ? 'x' : '-',
		   (m->flags & MAP_SHARED) ? 's' : 'p', m->filename);
		return true;
	}
	default:
		return false;
	}
}
