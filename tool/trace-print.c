/* SPDX-License-Identifier: MIT */
/*
 * tool/trace-print.c - `perfkit trace` output: one line per system call (perf trace's
 * layout, strace's "= -1 ENOENT (No such file or directory)"), the per-thread and total
 * summary of -s (perf trace -s's columns), and -e's filter.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "builtin.h"
#include "trace.h"

int trace_parse_filter(struct trace_opts *o, const char *list)
{
	bool negate = list[0] == '!';
	char *copy = strdup(list + negate), *save = NULL;
	long max = pk_syscall__max();

	if (!copy) {
		tool_error("out of memory");
		return 1;
	}
	if (!o->filter) {
		o->filter = calloc((size_t)max, 1);
		o->filter_max = max;
		if (!o->filter) {
			free(copy);
			tool_error("out of memory");
			return 1;
		}
		if (negate)
			memset(o->filter, 1, (size_t)max);
	}
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		long nr = pk_syscall__nr(name);
		if (nr < 0) {
			tool_error("unknown system call '%s' in -e '%s' (names as in "
				   "/usr/include/asm/unistd_64.h, e.g. openat,read)", name, list);
			free(copy);
			return 129;
		}
		o->filter[nr] = !negate;
	}
	free(copy);
	return 0;
}

static bool shown(const struct trace_opts *o, long nr)
{
	if (!o->filter)
		return true;
	return nr >= 0 && nr < o->filter_max && o->filter[nr];
}

int trace_on_call(void *ctx, const struct pk_syscall_call *c)
{
	struct trace_opts *o = ctx;
	char args[512], ret[128], nrbuf[32];
	const char *name;

	if (o->self && c->pid == (uint32_t)o->self)
		return 0;
	if (!shown(o, c->nr))
		return 0;
	if (o->stats && c->returned && pk_syscall_stats__add(o->stats, c) < 0)
		return -ENOMEM;
	if (o->summary)
		return 0;
	uint64_t t = c->entered ? c->enter_time : c->exit_time;
	if (!o->first_time)
		o->first_time = t;
	if (o->failure && !(c->returned && pk_syscall__failed(c->ret)))
		return 0;
	bool timed = c->entered && c->returned && c->exit_time >= c->enter_time;
	uint64_t dur = timed ? c->exit_time - c->enter_time : 0;
	if (o->duration_ns && (!timed || dur < o->duration_ns))
		return 0;
	name = pk_syscall__name(c->nr);
	if (!name) {
		snprintf(nrbuf, sizeof(nrbuf), "syscall_%ld", c->nr);
		name = nrbuf;
	}
	fprintf(o->out, "%10.3f (", t >= o->first_time ? (double)(t - o->first_time) / 1e6 : 0.0);
	if (timed)
		fprintf(o->out, "%6.3f ms", (double)dur / 1e6);
	else
		fprintf(o->out, "%9s", "");
	if (o->comm)
		fprintf(o->out, "): %s/%" PRIu32 " ", c->comm[0] ? c->comm : ":", c->tid);
	else
		fprintf(o->out, "): %" PRIu32 " ", c->tid);
	if (c->entered) {
		pk_syscall__format_args(c->nr, c->args, args, sizeof(args));
		fprintf(o->out, "%s(%s)", name, args);
	} else {
		fprintf(o->out, "... [continued]: %s()", name);
	}
	if (c->returned) {
		pk_syscall__format_ret(c->nr, c->ret, ret, sizeof(ret));
		fprintf(o->out, " = %s\n", ret);
	} else {
		fprintf(o->out, " = ?\n");
	}
	if (ferror(o->out) && !o->err)
		o->err = -EIO;
	return 0;
}

static struct trace_pf *pf_of(struct trace_opts *o, uint32_t tid)
{
	for (size_t i = o->npf; i-- > 0;)
		if (o->pf[i].tid == tid)
			return &o->pf[i];
	if (o->npf == o->cappf) {
		size_t n = o->cappf ? o->cappf * 2 : 16;
		struct trace_pf *v = realloc(o->pf, n * sizeof(*v));
		if (!v)
			return NULL;
		o->pf = v;
		o->cappf = n;
	}
	o->pf[o->npf] = (struct trace_pf){ .tid = tid };
	return &o->pf[o->npf++];
}

/* "sym+0xoff", "dso@0xaddr" or "0xaddr", as perf trace shows a fault's places */
static void location(FILE *f, const struct pk_syscall_fault *pf, uint64_t addr, bool data,
		     char *map_type)
{
	struct pk_addr_loc loc;
	int err = -ENOENT;
	if (pf->machine)
		err = data ? pk_machine__resolve_data(pf->machine, pf->pid, pf->tid, addr,
						      pf->cpumode, &loc)
			   : pk_machine__resolve(pf->machine, pf->pid, pf->tid, addr, pf->cpumode,
						 &loc);
	if (err >= 0 && loc.sym)
		fprintf(f, "%s+0x%" PRIx64, loc.sym, loc.dso_addr - loc.sym_start);
	else if (err >= 0 && loc.dso)
		fprintf(f, "%s@0x%" PRIx64, loc.dso_name, loc.dso_addr);
	else
		fprintf(f, "0x%" PRIx64, addr);
	if (map_type)
		*map_type = err >= 0 && loc.dso ? 'd' : '?';
}

int trace_on_fault(void *ctx, const struct pk_syscall_fault *f)
{
	struct trace_opts *o = ctx;
	char map_type = '?';

	if (o->self && f->pid == (uint32_t)o->self)
		return 0;
	if (!(o->faults & (f->major ? TRACE_PF_MAJ : TRACE_PF_MIN)))
		return 0;
	struct trace_pf *c = pf_of(o, f->tid);
	if (!c)
		return -ENOMEM;
	f->major ? c->maj++ : c->min++;
	if (o->summary || o->failure || o->duration_ns)
		return 0;
	if (!o->first_time)
		o->first_time = f->time;
	fprintf(o->out, "%10.3f (%9s", f->time >= o->first_time ?
		(double)(f->time - o->first_time) / 1e6 : 0.0, "");
	if (o->comm)
		fprintf(o->out, "): %s/%" PRIu32 " ", f->comm[0] ? f->comm : ":", f->tid);
	else
		fprintf(o->out, "): %" PRIu32 " ", f->tid);
	fprintf(o->out, "%sfault [", f->major ? "maj" : "min");
	location(o->out, f, f->ip, false, NULL);
	fprintf(o->out, "] => ");
	location(o->out, f, f->addr, true, &map_type);
	fprintf(o->out, " (%c%c)\n", map_type,
		f->cpumode == PERF_RECORD_MISC_KERNEL ? 'k' : '.');
	if (ferror(o->out) && !o->err)
		o->err = -EIO;
	return 0;
}

/* one row of the summary's table */
struct row {
	long nr;
	uint64_t calls, errors, total, min, max, timed;
	double sumsq;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static void add_row(struct row *r, const struct pk_syscall_stat *s)
{
	if (s->timed && (!r->timed || s->min_ns < r->min))
		r->min = s->min_ns;
	if (s->max_ns > r->max)
		r->max = s->max_ns;
	r->calls += s->calls;
	r->errors += s->errors;
	r->total += s->total_ns;
	r->timed += s->timed;
	r->sumsq += s->sumsq_ns;
}

static void print_table(FILE *f, struct row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), cmp_row);
	fprintf(f, "\n   syscall            calls  errors  total       min       avg       max"
		   "       stddev\n"
		   "                                     (msec)    (msec)    (msec)    (msec)"
		   "        (%%)\n"
		   "   --------------- --------  ------ -------- --------- --------- ---------"
		   "     ------\n");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		const char *name = pk_syscall__name(r->nr);
		double avg = r->timed ? (double)r->total / (double)r->timed : 0.0;
		double var = r->timed > 1 ? (r->sumsq - (double)r->timed * avg * avg) /
						    (double)(r->timed - 1) : 0.0;
		/* perf's stddev column: the standard error of the mean, in % of it */
		double sd = var > 0 && avg > 0 ? 100.0 * sqrt(var / (double)r->timed) / avg : 0.0;
		if (name)
			fprintf(f, "   %-15s", name);
		else
			fprintf(f, "   syscall_%-7ld", r->nr);
		fprintf(f, " %8" PRIu64 " %7" PRIu64 " %8.3f %9.3f %9.3f %9.3f %9.2f%%\n",
			r->calls, r->errors, (double)r->total / 1e6, (double)r->min / 1e6,
			avg / 1e6, (double)r->max / 1e6, sd);
	}
}

static int cmp_stat_tid(const void *a, const void *b)
{
	const struct pk_syscall_stat *x = *(const struct pk_syscall_stat *const *)a;
	const struct pk_syscall_stat *y = *(const struct pk_syscall_stat *const *)b;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void trace_print_summary(struct trace_opts *o)
{
	size_t n = pk_syscall_stats__nr(o->stats);
	const struct pk_syscall_stat **v = calloc(n + 1, sizeof(*v));
	struct row *rows = calloc(n + 1, sizeof(*rows)), *tot = calloc(n + 1, sizeof(*tot));
	uint64_t all = 0;
	size_t ntot = 0, threads = 0;
	FILE *f = o->out;

	if (!v || !rows || !tot) {
		tool_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = pk_syscall_stats__get(o->stats, i);
		all += v[i]->calls;
	}
	/* stable by tid: a thread's rows stay in the order they appeared */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp_stat_tid(&v[j - 1], &v[j]) > 0; j--) {
			const struct pk_syscall_stat *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	fprintf(f, "\n Summary of events:\n");
	for (size_t i = 0; i < n;) {
		size_t j = i, nr = 0;
		uint64_t calls = 0;
		for (; j < n && v[j]->tid == v[i]->tid; j++) {
			memset(&rows[nr], 0, sizeof(rows[nr]));
			rows[nr].nr = v[j]->nr;
			add_row(&rows[nr++], v[j]);
			calls += v[j]->calls;
			size_t k = 0;
			while (k < ntot && tot[k].nr != v[j]->nr)
				k++;
			if (k == ntot) {
				memset(&tot[ntot], 0, sizeof(tot[0]));
				tot[ntot++].nr = v[j]->nr;
			}
			add_row(&tot[k], v[j]);
		}
		fprintf(f, "\n %s (%" PRIu32 "), %" PRIu64 " events, %.1f%%",
			v[i]->comm[0] ? v[i]->comm : ":", v[i]->tid, calls,
			all ? 100.0 * (double)calls / (double)all : 0.0);
		for (size_t k = 0; k < o->npf; k++) {
			if (o->pf[k].tid != v[i]->tid)
				continue;
			if (o->pf[k].maj)
				fprintf(f, ", %" PRIu64 " majfaults", o->pf[k].maj);
			if (o->pf[k].min)
				fprintf(f, ", %" PRIu64 " minfaults", o->pf[k].min);
		}
		fputc('\n', f);
		print_table(f, rows, nr);
		threads++;
		i = j;
	}
	if (threads > 1) {
		fprintf(f, "\n total (%zu threads), %" PRIu64 " events\n", threads, all);
		print_table(f, tot, ntot);
	}
	fprintf(f, "\n");
out:
	free(v);
	free(rows);
	free(tot);
}
