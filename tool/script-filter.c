/* SPDX-License-Identifier: MIT */
/*
 * tool/script-filter.c - which samples `perfkit script` prints (--pid, --tid, -C/--cpu,
 * --comms, --time, as perf script's filters) and the time a line shows (--reltime: since
 * the first line's time; --deltatime: since the line before's; both updated by every line
 * printed, samples and other records alike, as perf does).
 */
#include "script.h"

static bool has_int(const int32_t *v, size_t n, int32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

bool script_sample_wanted(struct script *s, const struct pk_sample *smp)
{
	if (s->f_npids && !has_int(s->f_pids, s->f_npids, (int32_t)smp->pid))
		return false;
	if (s->f_ntids && !has_int(s->f_tids, s->f_ntids, (int32_t)smp->tid))
		return false;
	if (s->f_ncpus && !has_int(s->f_cpus, s->f_ncpus, (int32_t)smp->cpu))
		return false;
	if ((s->t_start && smp->time < s->t_start) || (s->t_end && smp->time > s->t_end))
		return false;
	if (s->f_ncomms) {
		const char *c = comm_of(s, smp->tid);
		for (size_t i = 0; i < s->f_ncomms; i++)
			if (!strcmp(c, s->f_comms[i]))
				return true;
		return false;
	}
	return true;
}

uint64_t script_shown_time(struct script *s, uint64_t t)
{
	switch (s->time_mode) {
	case TM_REL:
		if (!s->first_time)
			s->first_time = t;
		return t - s->first_time;
	case TM_DELTA: {
		uint64_t d = s->prev_time ? t - s->prev_time : 0;
		s->prev_time = t;
		return d;
	}
	default:
		return t;
	}
}

void script_filters_free(struct script *s)
{
	free(s->f_pids);
	free(s->f_tids);
	free(s->f_cpus);
	for (size_t i = 0; i < s->f_ncomms; i++)
		free(s->f_comms[i]);
	free(s->f_comms);
	s->f_pids = s->f_tids = s->f_cpus = NULL;
	s->f_comms = NULL;
	for (size_t i = 0; i < s->f_nsyms; i++)
		free(s->f_syms[i]);
	for (size_t i = 0; i < s->f_ndsos; i++)
		free(s->f_dsos[i]);
	free(s->f_syms);
	free(s->f_dsos);
	s->f_syms = s->f_dsos = NULL;
	s->f_nsyms = s->f_ndsos = 0;
	s->f_npids = s->f_ntids = s->f_ncpus = s->f_ncomms = 0;
}
