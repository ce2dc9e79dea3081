/* SPDX-License-Identifier: MIT */
/*
 * tool/report-options.c - the values of `perfkit report`'s options: lists of names and of
 * ids, --sort keys, -F columns, -g specs and the --time window.
 */
#include "report.h"
#include "perfconfig.h"

/* The column of a sort key (pid: see parse_sort) */
enum col rpt_key_col(enum pk_sort_key k)
{
	static const enum col kc[PK_SORT__MAX] = {
		[PK_SORT_COMM] = COL_COMM, [PK_SORT_PID] = COL_PID,
		[PK_SORT_TID] = COL_TID, [PK_SORT_DSO] = COL_DSO,
		[PK_SORT_SYM] = COL_SYM, [PK_SORT_SRCLINE] = COL_SRCLINE,
		[PK_SORT_CPU] = COL_CPU, [PK_SORT_PARENT] = COL_PARENT,
		[PK_SORT_TIME] = COL_TIME, [PK_SORT_SOCKET] = COL_SOCKET,
		[PK_SORT_SRCFILE] = COL_SRCFILE, [PK_SORT_SYMOFF] = COL_SYMOFF,
	};
	return (unsigned)k < PK_SORT__MAX ? kc[k] : COL_SYM;
}

int rpt_parse_sort(struct report *R, const char *s)
{
	char **keys = NULL;
	size_t n = 0;
	int err = tool_split_list(s, &keys, &n);
	R->nr_sort = 0;
	R->nr_xcol = 0;
	R->no_keys = false;
	bool outputs = false;
	for (size_t i = 0; !err && i < n; i++) {
		/* perf's output fields, accepted as sort keys: a column, no key */
		if (!strcmp(keys[i], "overhead") || !strcmp(keys[i], "sample") ||
		    !strcmp(keys[i], "period")) {
			outputs = true;
			if (keys[i][0] != 'o' && R->nr_xcol < 8) {
				R->xcol[R->nr_xcol] = keys[i][0] == 's' ? COL_SAMPLES : COL_PERIOD;
				R->xpos[R->nr_xcol++] = R->nr_sort;
			}
			continue;
		}
		int k = pk_sort_key__parse(keys[i]);
		enum col col = k >= 0 ? rpt_key_col((enum pk_sort_key)k) : COL_SYM;
		if (!strcmp(keys[i], "pid")) {
			/* perf's pid key is the thread: its tid and last comm */
			k = PK_SORT_TID;
			col = COL_PID;
		}
		if (k < 0) {
			tool_error("unknown sort key '%s' (known: comm,pid,tid,dso,sym,srcline,srcfile,"
				   "cpu,socket,parent,time,symoff, and overhead,sample,period)", keys[i]);
			err = -EINVAL;
		} else if (R->nr_sort < PK_SORT__MAX) {
			bool dup = false;
			for (size_t j = 0; j < R->nr_sort; j++)
				dup |= R->sort[j] == (enum pk_sort_key)k;
			if (!dup) {
				R->sort_col[R->nr_sort] = col;
				R->sort[R->nr_sort++] = (enum pk_sort_key)k;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	R->no_keys = !err && outputs && !R->nr_sort;
	bool symoff = false, src = false;
	for (size_t i = 0; i < R->nr_sort; i++) {
		symoff |= R->sort[i] == PK_SORT_SYMOFF;
		src |= R->sort[i] == PK_SORT_SRCLINE || R->sort[i] == PK_SORT_SRCFILE;
	}
	if (!err && symoff && src) {
		tool_error("the symoff key does not go with srcline or srcfile: use one of them");
		err = -EINVAL;
	}
	return err;
}

void rpt_add_key_cols(struct report *R)
{
	size_t x = 0, cap = sizeof(R->cols) / sizeof(R->cols[0]);
	for (size_t k = 0; k <= R->nr_sort; k++) {
		for (; x < R->nr_xcol && R->xpos[x] == k; x++) {
			bool dup = false;
			for (size_t c = 0; c < R->nr_cols; c++)
				dup |= R->cols[c] == R->xcol[x];
			if (!dup && R->nr_cols < cap)
				R->cols[R->nr_cols++] = R->xcol[x];
		}
		if (k < R->nr_sort && R->nr_cols < cap)
			R->cols[R->nr_cols++] = R->sort_col[k];
	}
}

int rpt_parse_quantum(struct report *R, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mul = 1000000;
	if (end == s || errno || *s == '-')
		return -EINVAL;
	if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "us"))
		mul = 1000;
	else if (!strcmp(end, "s"))
		mul = 1000000000;
	else if (*end && strcmp(end, "ms"))
		return -EINVAL;
	if (!v || v > UINT64_MAX / mul) {
		tool_error("--time-quantum '%s': must be above 0 (and below 2^64 ns)", s);
		return -EINVAL;
	}
	R->time_quantum = (uint64_t)v * mul;
	return 0;
}

const struct pk_hist *rpt_one_entry(const struct pk_hist *h, struct pk_hist *one,
				    struct pk_hist_entry *e, const struct pk_hist_entry **ep)
{
	*one = *h;
	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < h->nr_entries; i++) {
		e->self_period += h->entries[i]->self_period;
		e->self_samples += h->entries[i]->self_samples;
	}
	/* every sample is in the one entry once, through its chain too */
	e->total_period = e->self_period;
	e->total_samples = e->self_samples;
	*ep = e;
	one->entries = ep;
	one->nr_entries = h->nr_entries ? 1 : 0;
	return one;
}

int rpt_parse_fields(struct report *R, const char *s)
{
	static const struct { const char *name; enum col c; int key; } tab[] = {
		{ "overhead", COL_OVERHEAD, -1 }, { "children", COL_CHILDREN, -1 },
		{ "overhead_children", COL_CHILDREN, -1 }, { "self", COL_SELF, -1 },
		{ "sample", COL_SAMPLES, -1 }, { "samples", COL_SAMPLES, -1 },
		{ "period", COL_PERIOD, -1 }, { "comm", COL_COMM, PK_SORT_COMM },
		{ "pid", COL_PID, PK_SORT_TID }, { "tid", COL_TID, PK_SORT_TID },
		{ "dso", COL_DSO, PK_SORT_DSO }, { "sym", COL_SYM, PK_SORT_SYM },
		{ "symbol", COL_SYM, PK_SORT_SYM }, { "srcline", COL_SRCLINE, PK_SORT_SRCLINE },
		{ "cpu", COL_CPU, PK_SORT_CPU }, { "parent", COL_PARENT, PK_SORT_PARENT },
		{ "time", COL_TIME, PK_SORT_TIME }, { "socket", COL_SOCKET, PK_SORT_SOCKET },
		{ "srcfile", COL_SRCFILE, PK_SORT_SRCFILE }, { "symoff", COL_SYMOFF, PK_SORT_SYMOFF },
	};
	char **f = NULL;
	size_t n = 0;
	int err = tool_split_list(s, &f, &n);
	R->nr_cols = 0;
	R->nr_sort = 0;
	for (size_t i = 0; !err && i < n; i++) {
		size_t j;
		for (j = 0; j < (sizeof(tab) / sizeof(tab[0])); j++)
			if (!strcmp(f[i], tab[j].name))
				break;
		if (j == (sizeof(tab) / sizeof(tab[0]))) {
			tool_error("unknown field '%s'", f[i]);
			err = -EINVAL;
			break;
		}
		if (R->nr_cols < 16)
			R->cols[R->nr_cols++] = tab[j].c;
		if (tab[j].key >= 0 && R->nr_sort < PK_SORT__MAX) {
			R->sort_col[R->nr_sort] = tab[j].c;
			R->sort[R->nr_sort++] = (enum pk_sort_key)tab[j].key;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(f[i]);
	free(f);
	R->fields_given = !err;
	return err;
}

int rpt_parse_cg(struct report *R, const char *s)
{
	char **t = NULL;
	size_t n = 0;
	int err = tool_split_list(s, &t, &n);
	R->cg_given = true;
	for (size_t i = 0; !err && i < n; i++) {
		char *e;
		if (!strcmp(t[i], "graph"))
			R->cg = CG_GRAPH;
		else if (!strcmp(t[i], "fractal"))
			R->cg = CG_FRACTAL;
		else if (!strcmp(t[i], "flat"))
			R->cg = CG_FLAT;
		else if (!strcmp(t[i], "folded"))
			R->cg = CG_FOLDED;
		else if (!strcmp(t[i], "none"))
			R->cg = CG_NONE;
		else if (!strcmp(t[i], "caller"))
			R->order = PK_CG_ORDER_CALLER;
		else if (!strcmp(t[i], "callee"))
			R->order = PK_CG_ORDER_CALLEE;
		else if (!strcmp(t[i], "function") || !strcmp(t[i], "percent"))
			; /* perf's defaults, accepted */
		else if ((R->cg_threshold = strtod(t[i], &e)), e != t[i] && !*e)
			;
		else {
			tool_error("bad call-graph spec '%s'", t[i]);
			err = -EINVAL;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(t[i]);
	free(t);
	return err;
}

bool rpt_looks_like_cg_spec(const char *s)
{
	static const char *const w[] = { "graph", "flat", "folded", "fractal", "none",
					 "caller", "callee", NULL };
	if (!s || !*s)
		return false;
	if ((*s >= '0' && *s <= '9') || *s == '.')
		return true;
	for (int i = 0; w[i]; i++)
		if (!strncmp(s, w[i], strlen(w[i])))
			return true;
	return false;
}

/* perf's configuration keys for report: report.children (false: self overhead only; true
 * keeps the default, children when the file has call chains) and report.percent-limit.
 * The command line overrides both. A value perf would not take is reported and ignored. */
void rpt_config_defaults(struct report *R)
{
	const char *v = tool_config_get("report.children");
	if (v) {
		int b = tool_cfg_bool(v);
		if (b < 0)
			tool_warn("report.children = '%s' in the configuration is not a boolean; ignored", v);
		else if (!b)
			R->children = 0;
	}
	v = tool_config_get("report.percent-limit");
	if (v) {
		char *end;
		double p = strtod(v, &end);
		if (end == v || *end || !(p >= 0 && p <= 100))
			tool_warn("report.percent-limit = '%s' in the configuration is not a percentage; "
				  "ignored", v);
		else
			R->percent_limit = p;
	}
}

int rpt_parse_percentage(struct report *R, const char *s)
{
	if (!strcmp(s, "relative") || !strcmp(s, "absolute")) {
		R->relative = s[0] == 'r';
		return 0;
	}
	tool_error("bad --percentage '%s' (relative or absolute)", s);
	return -EINVAL;
}

/* perf's --percentage: absolute is of every sample of the event, relative of those the
 * filters (--comms, --dsos, --pid, ...) keep, and then the "# Samples" and "# Event
 * count" lines count those too. Every kept sample is one entry's self. */
uint64_t rpt_hist_total(const struct report *R, const struct pk_hist *h, uint64_t *nr,
			uint64_t *period)
{
	uint64_t n = h->nr_samples, p = h->total_period;
	if (R->relative) {
		n = p = 0;
		for (size_t i = 0; i < h->nr_entries; i++) {
			n += h->entries[i]->self_samples;
			p += h->entries[i]->self_period;
		}
	}
	if (nr)
		*nr = n;
	if (period)
		*period = p;
	return R->by_samples ? n : p;
}

const struct pk_machine_opts *rpt_machine_opts(const struct report *R, bool preload)
{
	static struct pk_machine_opts mo;
	const struct pk_machine_opts *t = tool_machine_opts();
	memcpy(&mo, t, sizeof(mo));
	mo.no_demangle = R->no_demangle;
	/* symbol tables read on a thread of their own, ahead of the samples that need
	 * them (the same output) */
	mo.preload = preload;
	return &mo;
}

void rpt_add_parent_key(struct report *R)
{
	for (size_t k = 0; k < R->nr_sort; k++)
		R->parent_on |= R->sort[k] == PK_SORT_PARENT;
	if (!R->parent_re || R->parent_on || R->nr_sort >= PK_SORT__MAX)
		return;
	R->sort[R->nr_sort] = PK_SORT_PARENT;
	R->sort_col[R->nr_sort++] = COL_PARENT;
	if (R->fields_given && R->nr_cols < sizeof(R->cols) / sizeof(R->cols[0]))
		R->cols[R->nr_cols++] = COL_PARENT;
	R->parent_on = true;
}
