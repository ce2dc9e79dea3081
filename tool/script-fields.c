/* SPDX-License-Identifier: MIT */
/*
 * tool/script-fields.c - which fields `perfkit script` prints: -F (a list, or +/- changes
 * to the defaults), the fields of each event's samples as perf script picks them, and
 * the check that a field -F asks for is in the recording.
 */
#include "script.h"

static const struct { const char *n; unsigned int f; } field_tab[] = {
	{ "comm", SF_COMM }, { "tid", SF_TID }, { "pid", SF_PID }, { "cpu", SF_CPU },
	{ "time", SF_TIME }, { "event", SF_EVENT }, { "ip", SF_IP }, { "sym", SF_SYM },
	{ "symoff", SF_SYMOFF | SF_SYM }, { "dso", SF_DSO }, { "srcline", SF_SRCLINE },
	{ "period", SF_PERIOD }, { "addr", SF_ADDR }, { "trace", SF_TRACE },
};

static const char *field_name(unsigned int f)
{
	for (size_t i = 0; i < sizeof(field_tab) / sizeof(field_tab[0]); i++)
		if (field_tab[i].f == f)
			return field_tab[i].n;
	return "?";
}

/*
 * -F: a list of fields ("comm,tid,ip"), or of changes to the default fields
 * ("+addr,-period"); as in perf script, the two forms do not mix.
 */
int parse_fields(struct script *s, const char *spec)
{
	char *dup = strdup(spec), *save = NULL;
	if (!dup)
		return -ENOMEM;
	int mode = FM_DEFAULT;
	unsigned int set = 0, rm = 0;
	for (char *w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int m = FM_SET;
		char sign = *w;
		if (sign == '+' || sign == '-') {
			m = FM_CHANGE;
			w++;
		}
		if (mode != FM_DEFAULT && m != mode) {
			tool_error("cannot mix fields and +/- changes in '%s': give either the "
				      "list of fields or only changes to the defaults", spec);
			free(dup);
			return -EINVAL;
		}
		mode = m;
		size_t i;
		for (i = 0; i < sizeof(field_tab) / sizeof(field_tab[0]); i++)
			if (!strcmp(w, field_tab[i].n))
				break;
		if (i == sizeof(field_tab) / sizeof(field_tab[0])) {
			tool_error("unknown field '%s'", w);
			free(dup);
			return -EINVAL;
		}
		if (sign == '-')
			rm |= field_tab[i].f == (SF_SYMOFF | SF_SYM) ? SF_SYMOFF : field_tab[i].f;
		else
			set |= field_tab[i].f;
	}
	free(dup);
	s->fmode = mode;
	s->fields = set & ~rm;
	s->fields_rm = rm;
	return 0;
}

/*
 * The fields printed for a sample of event a, as perf script chooses them: the -F list;
 * or the defaults of the event's type (tracepoints: comm, tid, cpu, time, event and
 * fields, plus the frames when the event records call chains and they are shown;
 * others: comm, tid, cpu, time, event, ip, sym+off, dso, period) with the +/- changes
 * of -F, less the fields the sample type lacks that -F did not ask for (those -F asks
 * for were checked by check_fields). *user gets the fields -F asked for.
 */
unsigned int sample_fields(const struct script *s, const struct pk_data_attr *a,
				  uint64_t st, unsigned int *user)
{
	unsigned int F, drop = 0;
	if (s->fmode == FM_SET) {
		*user = s->fields;
		/* tracepoint fields only for tracepoints (perf ignores 'trace' for the rest) */
		if (!a || a->attr.attr.type != PERF_TYPE_TRACEPOINT)
			return s->fields & ~SF_TRACE;
		return s->fields;
	}
	if (a && a->attr.attr.type == PERF_TYPE_TRACEPOINT) {
		F = SF_DEFAULT_TP;
		/* (perf adds them only when -F did not touch the fields at all) */
		if ((a->attr.attr.sample_type & PERF_SAMPLE_CALLCHAIN) && !s->hide_cg &&
		    s->fmode == FM_DEFAULT)
			F |= SF_FRAME_DEFAULT;
	} else {
		F = SF_DEFAULT;
	}
	*user = s->fmode == FM_CHANGE ? s->fields : 0;
	F = (F | *user) & ~s->fields_rm;
	if (!(st & PERF_SAMPLE_TID))
		drop |= SF_COMM | SF_TID | SF_PID;
	if (!(st & PERF_SAMPLE_CPU))
		drop |= SF_CPU;
	if (!(st & PERF_SAMPLE_TIME))
		drop |= SF_TIME;
	if (!(st & PERF_SAMPLE_IP))
		drop |= SF_IP;
	if (!(st & PERF_SAMPLE_ADDR))
		drop |= SF_ADDR;
	return F & ~(drop & ~*user);
}

/* the sample type bit a field needs, its name, and how a recording gets it */
static uint64_t field_needs(unsigned int f, const char **what, const char **how)
{
	*how = "it was not recorded";
	switch (f) {
	case SF_COMM: case SF_TID: case SF_PID: *what = "TID"; return PERF_SAMPLE_TID;
	case SF_CPU:
		*what = "CPU";
		*how = "record with --sample-cpu or -a to have it";
		return PERF_SAMPLE_CPU;
	case SF_TIME: *what = "TIME"; return PERF_SAMPLE_TIME;
	case SF_IP: *what = "IP"; return PERF_SAMPLE_IP;
	case SF_ADDR:
		*what = "ADDR";
		*how = "record with -d to have it";
		return PERF_SAMPLE_ADDR;
	default: return 0;
	}
}

/*
 * A field -F asks for that the samples of event a cannot have (no PERF_SAMPLE_CPU for
 * cpu, ...) is an error, as in perf script, rather than a column of zeros. Returns 0 or
 * -EINVAL after printing the error.
 */
static int check_fields(struct script *s, const struct pk_data_attr *a)
{
	unsigned int user = s->fmode == FM_SET ? s->fields : s->fmode == FM_CHANGE ? s->fields : 0;
	uint64_t st = a->attr.attr.sample_type;
	char nbuf[64];
	unsigned int u2, F = sample_fields(s, a, st, &u2);
	if ((F & SF_SYMOFF) && !(F & SF_SYM)) {
		tool_error("cannot print field 'symoff' without 'sym': add sym, or leave "
			      "symoff out (-F -sym,-symoff)");
		return -EINVAL;
	}
	for (unsigned int f = 1; f && f <= user; f <<= 1) {
		const char *what = NULL, *how = NULL;
		uint64_t need = (user & f) ? field_needs(f, &what, &how) : 0;
		if (need && !(st & need)) {
			tool_error("cannot print field '%s': the samples of event '%s' have no "
				      "PERF_SAMPLE_%s (%s, or leave the field out)",
				      field_name(f), event_name(a, nbuf, sizeof(nbuf)), what, how);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * When the file's attrs are first known or grow (a pipe's arrive in its stream): the
 * width perf pads event names to (the longest name), and the check of -F against the
 * new attrs. Returns 0 or -EINVAL (error printed).
 */
int attrs_update(struct script *s)
{
	size_t n = pk_data_reader__nr_attrs(s->rd);
	if (n == s->name_width_attrs)
		return 0;
	char nbuf[64];
	for (size_t i = 0; i < n; i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(s->rd, i);
		int l = (int)strlen(event_name(a, nbuf, sizeof(nbuf)));
		if (l > s->name_width)
			s->name_width = l;
		if (i >= s->name_width_attrs && a && check_fields(s, a)) {
			s->fields_failed = true;
			return -EINVAL;
		}
	}
	s->name_width_attrs = n;
	return 0;
}
