/* SPDX-License-Identifier: MIT */
/*
 * perfkit/sched.h - scheduler analysis from sched tracepoints (the engine of `perfkit
 * sched latency`, `timehist` and `map`; perf sched's counterparts).
 *
 * The state machine follows each task through switch-out (sched_switch prev), wake-up
 * (sched_waking, else sched_wakeup / sched_wakeup_new: whichever the recording has; the
 * first after a switch-out counts) and switch-in (sched_switch next):
 *     wait time   switch-out -> switch-in: the time off the CPU (perf timehist's)
 *     sch delay   wake-up (or the preemption) -> switch-in: the part of it runnable
 *     run time    switch-in -> switch-out
 * Feed it from a recording (pk_sched__process) or event by event (pk_sched__switch,
 * pk_sched__wakeup: tests, live sources).
 */
#ifndef PERFKIT_SCHED_H
#define PERFKIT_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfkit/common.h>
#include <perfkit/data.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One context switch as analysed (for timehist and map). Times in ns. */
struct pk_sched_switch {
	uint64_t time;
	uint32_t cpu;
	int32_t prev_tid, next_tid;     /* 0: the idle task */
	const char *prev_comm, *next_comm;
	int64_t prev_state;             /* as sched_switch has it: 0 runnable (preempted) */
	bool run_known;                 /* prev's switch-in was seen */
	bool wait_known;                /* prev's previous switch-out was seen */
	uint64_t run_ns, wait_ns;       /* of prev's run that ends here, and the time off the
					 * CPU before it */
	uint64_t delay_ns;              /* wake-up -> switch-in before that run; 0 after a
					 * preemption (as perf timehist; latency counts both) */
};
typedef int (*pk_sched_switch_fn)(void *ctx, const struct pk_sched_switch *sw);

struct pk_sched_opts {
	size_t sz;
	pk_sched_switch_fn on_switch;   /* every sched_switch, in time order; may be NULL.
					 * Returns 0, PK_SESSION_STOP or a negative errno. */
	void *ctx;
	size_t :0;
};

/* Per task (tid), for latency. */
struct pk_sched_task {
	int32_t tid, pid;               /* pid -1 if unknown */
	char comm[16];                  /* the last name it ran under */
	uint64_t runtime_ns;            /* summed run times */
	uint64_t switches;              /* switch-outs */
	uint64_t delays;                /* switch-ins with a known delay */
	uint64_t total_delay_ns, max_delay_ns;
	uint64_t max_delay_start, max_delay_end; /* wake-up and switch-in of the max */
};

struct pk_sched;
/* NULL + errno EINVAL / ENOMEM. */
PK_API struct pk_sched *pk_sched__new(const struct pk_sched_opts *opts);
PK_API void pk_sched__free(struct pk_sched *s);
/*
 * Feed a recording with sched:sched_switch (and wake-ups) through a session. Returns 0,
 * -ENOENT when it has no sched_switch events, a callback's negative return or the
 * session's error. Call once per object.
 */
PK_API int pk_sched__process(struct pk_sched *s, struct pk_data_reader *r);
/* Feed one event directly (times must not go backwards per task). 0 or -ENOMEM. */
PK_API int pk_sched__switch(struct pk_sched *s, uint64_t time, uint32_t cpu, int32_t prev_tid,
			    const char *prev_comm, int64_t prev_state, int32_t next_tid,
			    const char *next_comm);
PK_API int pk_sched__wakeup(struct pk_sched *s, uint64_t time, int32_t tid, const char *comm);
/* Tell the tid -> pid of a task (from samples' pid/tid). */
PK_API void pk_sched__set_pid(struct pk_sched *s, int32_t tid, int32_t pid);
/* Tasks seen (idle excluded), in order of appearance. */
PK_API size_t pk_sched__nr_tasks(const struct pk_sched *s);
PK_API const struct pk_sched_task *pk_sched__task(const struct pk_sched *s, size_t idx);
/* The wake-up events in use: "sched_waking", "sched_wakeup" or NULL (none yet). */
PK_API const char *pk_sched__wakeup_source(const struct pk_sched *s);

#ifdef __cplusplus
}
#endif

#endif
