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

/* perf script's event types of -F type:fields, by perf_event_attr.type */
static const char *const type_names[6] = { "hw", "sw", "trace", NULL, "raw", "break" };
static const char *const type_words[6] = { "hardware", "software", "tracepoint", NULL, "raw",
					   "hardware breakpoint" };

/* the -F type:fields entry that applies to events of attr a, or NULL */
static const struct ftype *ftype_of(const struct script *s, const struct pk_data_attr *a)
{
	if (!a || a->attr.attr.type >= 6 || !s->ft[a->attr.attr.type].set)
		return NULL;
	return &s->ft[a->attr.attr.type];
}

bool script_type_hidden(const struct script *s, const struct pk_data_attr *a)
{
	const struct ftype *t = ftype_of(s, a);
	return t && t->fmode == FM_SET && !t->fields;
}

static int parse_list(const char *spec, int *fmode, unsigned int *fields, unsigned int *frm);

/*
 * -F: a list of fields ("comm,tid,ip"), or of changes to the default fields
 * ("+addr,-period"); as in perf script, the two forms do not mix. "type:list" (hw, sw,
 * trace, raw, break) applies to the events of that type only, the others keeping their
 * fields; "type:" with no field hides that type's events. A later -F for the same
 * events overrides the earlier one, with perf's notice.
 */
int parse_fields(struct script *s, const char *spec)
{
	const char *colon = strchr(spec, ':');
	if (colon && colon < spec + strcspn(spec, ",")) {
		size_t n = (size_t)(colon - spec), t;
		for (t = 0; t < 6; t++)
			if (type_names[t] && strlen(type_names[t]) == n && !strncmp(spec, type_names[t], n))
				break;
		if (t == 6) {
			tool_error("unknown event type '%.*s' in -F '%s' (hw, sw, trace, raw or "
				   "break)", (int)n, spec, spec);
			return -EINVAL;
		}
		struct ftype f = { .set = true };
		int err = colon[1] ? parse_list(colon + 1, &f.fmode, &f.fields, &f.rm) : 0;
		if (err)
			return err;
		if (!colon[1])
			f.fmode = FM_SET;
		if (s->ft[t].set || s->fmode != FM_DEFAULT)
			fprintf(stderr, "Overriding previous field request for %s events.\n",
				type_words[t]);
		s->ft[t] = f;
		return 0;
	}
	bool typed = false;
	for (size_t t = 0; t < 6; t++)
		typed |= s->ft[t].set;
	if (typed || s->fmode != FM_DEFAULT)
		fprintf(stderr, "Overriding previous field request for all events.\n");
	memset(s->ft, 0, sizeof(s->ft));
	return parse_list(spec, &s->fmode, &s->fields, &s->fields_rm);
}

static int parse_list(const char *spec, int *fmode, unsigned int *fields, unsigned int *frm)
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
	*fmode = mode;
	*fields = set & ~rm;
	*frm = rm;
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
	const struct ftype *t = ftype_of(s, a);
	int fmode = t ? t->fmode : s->fmode;
	unsigned int fields = t ? t->fields : s->fields, fields_rm = t ? t->rm : s->fields_rm;
	if (fmode == FM_SET) {
		*user = fields;
		/* tracepoint fields only for tracepoints (perf ignores 'trace' for the rest) */
		if (!a || a->attr.attr.type != PERF_TYPE_TRACEPOINT)
			return fields & ~SF_TRACE;
		return fields;
	}
	if (a && a->attr.attr.type == PERF_TYPE_TRACEPOINT) {
		F = SF_DEFAULT_TP;
		/* (perf adds them only when -F did not touch the fields at all) */
		if ((a->attr.attr.sample_type & PERF_SAMPLE_CALLCHAIN) && !s->hide_cg &&
		    fmode == FM_DEFAULT)
			F |= SF_FRAME_DEFAULT;
	} else {
		F = SF_DEFAULT;
	}
	/* (perf checks the +fields of an untyped -F against the samples; a type's +fields
	 * the samples lack are left out silently) */
	unsigned int added = fmode == FM_CHANGE ? fields : 0;
	*user = t ? 0 : added;
	F = (F | added) & ~fields_rm;
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
	uint64_t st = a->attr.attr.sample_type;
	char nbuf[64];
	unsigned int user, F = sample_fields(s, a, st, &user);
	if (script_type_hidden(s, a))
		return 0;
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

/* check_fields once per attr (remembered up to 64 attrs; past that every first
 * sample of a change of attr checks again, which is only slower) */
int attr_check(struct script *s, const struct pk_data_attr *a)
{
	if (a == s->last_checked)
		return 0;
	for (size_t i = 0; i < s->nr_checked; i++)
		if (s->checked[i] == a) {
			s->last_checked = a;
			return 0;
		}
	if (check_fields(s, a)) {
		s->fields_failed = true;
		return -EINVAL;
	}
	if (s->nr_checked < sizeof(s->checked) / sizeof(s->checked[0]))
		s->checked[s->nr_checked++] = a;
	s->last_checked = a;
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
		if (i < s->name_width_attrs || !a)
			continue;
		bool first_of_type = true;
		for (size_t j = 0; j < i && first_of_type; j++) {
			const struct pk_data_attr *b = pk_data_reader__attr(s->rd, j);
			first_of_type = !b || b->attr.attr.type != a->attr.attr.type;
		}
		if (first_of_type && attr_check(s, a))
			return -EINVAL;
	}
	s->name_width_attrs = n;
	return 0;
}

/* The frame fields of the events of attr a (-F type:fields may differ per type); the
 * frame text cache is emptied when they change, since its texts are formatted with
 * them. */
void script_frame_fields(struct script *s, const struct pk_data_attr *a)
{
	const struct ftype *t = ftype_of(s, a);
	int fmode = t ? t->fmode : s->fmode;
	unsigned int fields = t ? t->fields : s->fields, rm = t ? t->rm : s->fields_rm;
	unsigned int ff = fmode == FM_SET ? fields & SF_FRAME_MASK
		: ((SF_FRAME_DEFAULT | fields) & ~rm) & SF_FRAME_MASK;
	if (ff != s->frame_fields) {
		fc_flush(s);
		s->frame_fields = ff;
	}
}
