/* SPDX-License-Identifier: MIT */
/*
 * tool/report-stats.c - `perfkit report --stats` (records per type, samples per event, as
 * perf report --stats prints them) and `--tasks` (the tree of the threads the file names,
 * as perf report --tasks prints it). Both read the file through a session without a
 * machine model: --stats counts records, --tasks keeps its own table of threads with
 * perf's rules for creating them (COMM, FORK, user MMAPs, samples).
 */
#include "report.h"

/* perf's names of the record types it counts (PERF_RECORD_HEADER_MAX = 83) */
#define NR_TYPES 83
static const char *const type_names[NR_TYPES] = {
	[0] = "TOTAL", [1] = "MMAP", [2] = "LOST", [3] = "COMM", [4] = "EXIT",
	[5] = "THROTTLE", [6] = "UNTHROTTLE", [7] = "FORK", [8] = "READ", [9] = "SAMPLE",
	[10] = "MMAP2", [11] = "AUX", [12] = "ITRACE_START", [13] = "LOST_SAMPLES",
	[14] = "SWITCH", [15] = "SWITCH_CPU_WIDE", [16] = "NAMESPACES", [17] = "KSYMBOL",
	[18] = "BPF_EVENT", [19] = "CGROUP", [20] = "TEXT_POKE", [21] = "AUX_OUTPUT_HW_ID",
	[64] = "ATTR", [65] = "EVENT_TYPE", [66] = "TRACING_DATA", [67] = "BUILD_ID",
	[68] = "FINISHED_ROUND", [69] = "ID_INDEX", [70] = "AUXTRACE_INFO", [71] = "AUXTRACE",
	[72] = "AUXTRACE_ERROR", [73] = "THREAD_MAP", [74] = "CPU_MAP", [75] = "STAT_CONFIG",
	[76] = "STAT", [77] = "STAT_ROUND", [78] = "EVENT_UPDATE", [79] = "TIME_CONV",
	[80] = "FEATURE", [81] = "COMPRESSED", [82] = "FINISHED_INIT",
};

struct stats_ctx {
	uint64_t nr[NR_TYPES];
	uint64_t *samples, *lost; /* per attr */
	size_t nr_attrs;
	uint64_t last_compressed; /* offset of the COMPRESSED record counted last, +1 */
	const struct report *dump; /* -D: each record dumped too (report-dump.c) */
	struct rpt_dump *D;
	struct pk_data_reader *rd;
};

const char *rpt_record_type_name(unsigned type)
{
	return type < NR_TYPES ? type_names[type] : NULL;
}

static void stats_count(struct stats_ctx *c, unsigned type)
{
	if (type >= NR_TYPES)
		return; /* perf stops at such a record; here it is not counted */
	c->nr[0]++;
	c->nr[type]++;
}

static void stats_count_lead(void *ctx, unsigned int type)
{
	stats_count(ctx, type);
}

static int stats_rec(void *ctx, const struct pk_data_event *ev, const struct pk_record *rec)
{
	struct stats_ctx *c = ctx;
	if (c->dump)
		rpt_dump_rec(c->D, c->dump, c->rd, ev, rec);
	/* perf counts a COMPRESSED record, then each record inside it */
	if (ev->compressed && ev->offset + 1 != c->last_compressed) {
		c->last_compressed = ev->offset + 1;
		stats_count(c, 81);
	}
	stats_count(c, ev->hdr->type);
	if (!rec || !ev->attr || ev->attr->idx < 0 || (size_t)ev->attr->idx >= c->nr_attrs)
		return 0;
	if (ev->hdr->type == PERF_RECORD_SAMPLE)
		c->samples[ev->attr->idx]++;
	else if (ev->hdr->type == PERF_RECORD_LOST_SAMPLES)
		c->lost[ev->attr->idx] += rec->lost_samples.lost;
	return 0;
}

/* One pass over the records of rd without a machine model (the side views: --stats,
 * --tasks, -T); errors are printed, with what was read before still shown. */
int rpt_run_side_session(struct pk_data_reader *rd, bool file_order,
			 const struct pk_session_ops *ops, void *ctx, const char *input)
{
	PK_OPTS(pk_session_opts, so, .no_machine = true, .file_order = file_order);
	struct pk_session *s = pk_session__new(rd, &so);
	if (!s) {
		tool_error("cannot read '%s': %s", input, pk_strerror(errno));
		return -1;
	}
	int err = pk_session__process(s, ops, ctx);
	pk_session__free(s);
	if (err < 0)
		tool_error("'%s' %s: %s (showing what was read before)", input,
			   err == -PK_ERR_TRUNCATED ? "ended early" : "is corrupt", pk_strerror(err));
	return err;
}

int rpt_print_stats(struct report *R, struct pk_data_reader *rd)
{
	struct stats_ctx c = { .nr_attrs = pk_data_reader__nr_attrs(rd),
			       .dump = R->dump_raw ? R : NULL, .rd = rd };
	c.samples = calloc(c.nr_attrs + 1, sizeof(*c.samples));
	c.lost = calloc(c.nr_attrs + 1, sizeof(*c.lost));
	if (!c.samples || !c.lost) {
		free(c.samples);
		free(c.lost);
		tool_error("out of memory");
		return -ENOMEM;
	}
	PK_OPTS(pk_session_ops, ops, .other = stats_rec);
	const struct pk_data_attr *a0 = c.nr_attrs ? pk_data_reader__attr(rd, 0) : NULL;
	if (c.dump && a0 && !a0->attr.attr.sample_id_all) /* perf's, on stdout (perf stat record) */
		fprintf(R->out, "WARNING: No sample_id_all support, falling back to unordered processing\n");
	if (c.dump && !R->quiet)
		fprintf(R->out, "# To display the perf.data header info, please use "
			"--header/--header-only options.\n#\n");
	if (c.dump && !(c.D = rpt_dump_new(R, rd))) {
		free(c.samples);
		free(c.lost);
		tool_error("out of memory");
		return -ENOMEM;
	}
	if (c.dump)
		rpt_dump_lead(R, rd, stats_count_lead, &c);
	int err = rpt_run_side_session(rd, true, &ops, &c, R->input);
	if (rpt_dump_finish(c.D, R->out) < 0) {
		tool_error("out of memory");
		err = -ENOMEM;
	}
	FILE *f = R->out;
	fprintf(f, "\nAggregated stats:\n");
	for (size_t i = 0; i < NR_TYPES; i++) {
		if (!type_names[i] || !c.nr[i])
			continue;
		if (i && c.nr[0])
			fprintf(f, "%16s events: %10" PRIu64 "  (%4.1f%%)\n", type_names[i], c.nr[i],
				100.0 * (double)c.nr[i] / (double)c.nr[0]);
		else
			fprintf(f, "%16s events: %10" PRIu64 "\n", type_names[i], c.nr[i]);
	}
	/* perf 6.1 -D counts no LOST_SAMPLES in an event's stats (--stats does) */
	for (size_t i = 0; c.dump && i < c.nr_attrs; i++)
		c.lost[i] = 0;
	for (size_t i = 0; i < c.nr_attrs; i++) {
		const struct pk_data_attr *a = pk_data_reader__attr(rd, i);
		if (!a || (!c.samples[i] && !c.lost[i]))
			continue;
		char nb[256];
		fprintf(f, "%s stats:\n", pk_data_attr__name(a, nb, sizeof(nb)));
		if (c.samples[i])
			fprintf(f, "%16s events: %10" PRIu64 "\n", "SAMPLE", c.samples[i]);
		if (c.lost[i])
			fprintf(f, "%16s events: %10" PRIu64 "\n", "LOST_SAMPLES", c.lost[i]);
	}
	free(c.samples);
	free(c.lost);
	return err < 0 ? err : 0;
}

/* ---- --tasks ---- */

struct task {
	int32_t pid, tid, ppid;
	char *comm;             /* NULL: perf's ":<tid>" */
	bool comm_set;
	bool listed;
	size_t first, last, next; /* children (indices + 1, 0 none) */
};

struct tasks_ctx {
	struct task *t;
	size_t n, cap;
	size_t *hash;           /* tid -> index + 1, open addressing */
	size_t hcap;
	bool oom;
	struct rpt_maps *maps;  /* --mmaps */
};

static size_t hslot(const struct tasks_ctx *c, int32_t tid)
{
	size_t h = ((uint32_t)tid * 2654435761u) & (c->hcap - 1);
	while (c->hash[h] && c->t[c->hash[h] - 1].tid != tid)
		h = (h + 1) & (c->hcap - 1);
	return h;
}

static struct task *task_find(struct tasks_ctx *c, int32_t tid)
{
	if (!c->hcap)
		return NULL;
	size_t h = hslot(c, tid);
	return c->hash[h] ? &c->t[c->hash[h] - 1] : NULL;
}

/* a new thread for tid (replacing the one of that tid, as perf removes it first) */
static struct task *task_new(struct tasks_ctx *c, int32_t pid, int32_t tid)
{
	struct task *old = task_find(c, tid);
	if (old) {
		free(old->comm);
		*old = (struct task){ .pid = pid, .tid = tid, .ppid = -1 };
		return old;
	}
	if (c->n + 1 > c->hcap / 2) {
		size_t nh = c->hcap ? c->hcap * 2 : 256;
		size_t *h = calloc(nh, sizeof(*h));
		if (!h)
			goto oom;
		free(c->hash);
		c->hash = h;
		c->hcap = nh;
		for (size_t i = 0; i < c->n; i++)
			c->hash[hslot(c, c->t[i].tid)] = i + 1;
	}
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 64;
		struct task *t = realloc(c->t, nc * sizeof(*t));
		if (!t)
			goto oom;
		c->t = t;
		c->cap = nc;
	}
	c->t[c->n] = (struct task){ .pid = pid, .tid = tid, .ppid = -1 };
	c->hash[hslot(c, tid)] = c->n + 1;
	return &c->t[c->n++];
oom:
	c->oom = true;
	return NULL;
}

/* perf's machine__findnew_thread: a known tid learns its pid; a thread of another
 * process's leader makes the leader exist too */
static struct task *task_findnew(struct tasks_ctx *c, int32_t pid, int32_t tid)
{
	struct task *t = task_find(c, tid);
	if (t) {
		if (pid != -1 && t->pid == -1 && pid != tid) {
			t->pid = pid;
			task_findnew(c, pid, pid);
			t = task_find(c, tid);
		} else if (pid != -1 && t->pid == -1) {
			t->pid = pid;
		}
		return t;
	}
	if (!task_new(c, pid, tid))
		return NULL;
	if (pid != -1 && pid != tid)
		task_findnew(c, pid, pid);
	return task_find(c, tid); /* (the table may have moved) */
}

static int task_set_comm(struct tasks_ctx *c, struct task *t, const char *comm)
{
	char *s = strdup(comm);
	if (!s) {
		c->oom = true;
		return -ENOMEM;
	}
	free(t->comm);
	t->comm = s;
	t->comm_set = true;
	return 0;
}

static int tasks_rec(void *ctx, const struct pk_data_event *ev, const struct pk_record *rec)
{
	struct tasks_ctx *c = ctx;
	struct task *t, *p;
	if (!rec)
		return 0;
	if (c->maps && rpt_maps_rec(c->maps, ev, rec))
		c->oom = true;
	switch (ev->hdr->type) {
	case PERF_RECORD_COMM:
		t = task_findnew(c, (int32_t)rec->comm.pid, (int32_t)rec->comm.tid);
		if (t)
			task_set_comm(c, t, rec->comm.comm);
		break;
	case PERF_RECORD_FORK: {
		const struct pk_rec_task *k = &rec->task;
		p = task_findnew(c, (int32_t)k->ppid, (int32_t)k->ptid);
		if (p && p->pid != (int32_t)k->ppid) /* a stale thread of that tid: replaced */
			task_new(c, (int32_t)k->ppid, (int32_t)k->ptid);
		if (!task_new(c, (int32_t)k->pid, (int32_t)k->tid))
			break;
		if (!task_findnew(c, (int32_t)k->ppid, (int32_t)k->ptid))
			break;
		t = task_find(c, (int32_t)k->tid);
		p = task_find(c, (int32_t)k->ptid);
		if (!t || !p)
			break;
		if (p->comm_set && t != p)
			task_set_comm(c, t, p->comm);
		t->ppid = p->tid;
		break;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		unsigned m = ev->hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK;
		if (m == PERF_RECORD_MISC_KERNEL || m == PERF_RECORD_MISC_GUEST_KERNEL)
			break;
		if (ev->hdr->type == PERF_RECORD_MMAP)
			task_findnew(c, (int32_t)rec->mmap.pid, (int32_t)rec->mmap.tid);
		else
			task_findnew(c, (int32_t)rec->mmap2.pid, (int32_t)rec->mmap2.tid);
		break;
	}
	case PERF_RECORD_SAMPLE:
		if (rec->sample.type & PERF_SAMPLE_TID)
			task_findnew(c, (int32_t)rec->sample.pid, (int32_t)rec->sample.tid);
		else
			task_findnew(c, -1, -1);
		break;
	default:
		break;
	}
	return c->oom ? -ENOMEM : 0;
}

static int task_cmp(const void *a, const void *b)
{
	const struct task *x = a, *y = b;
	unsigned bx = (uint32_t)x->tid % 256, by = (uint32_t)y->tid % 256;
	if (bx != by)
		return bx < by ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void task_print(FILE *f, const struct task *t, size_t level, const struct rpt_maps *maps)
{
	int ind = fprintf(f, "  %8d %8d %8d |%*s", t->pid, t->tid, t->ppid,
			  (int)(level > INT_MAX ? INT_MAX : level), "");
	if (t->comm)
		fprintf(f, "%s\n", t->comm);
	else
		fprintf(f, ":%d\n", t->tid);
	if (maps && rpt_maps_print(maps, f, t->pid, ind < 0 ? 0 : ind))
		tool_error("out of memory");
}

int rpt_print_tasks(struct report *R, struct pk_data_reader *rd)
{
	struct tasks_ctx c = { 0 };
	if (R->mmaps && !(c.maps = rpt_maps_new()))
		c.oom = true;
	struct task *sw = task_new(&c, 0, 0); /* perf's idle thread */
	if (sw)
		task_set_comm(&c, sw, "swapper");
	PK_OPTS(pk_session_ops, ops, .other = tasks_rec);
	int err = c.oom ? -ENOMEM : rpt_run_side_session(rd, false, &ops, &c, R->input);
	size_t *roots = NULL, nroots = 0, *stack = NULL;
	size_t *depth = NULL;
	if (c.oom)
		goto oom;
	/* perf walks its thread table: buckets by tid % 256, each ordered by tid */
	qsort(c.t, c.n, sizeof(*c.t), task_cmp);
	for (size_t i = 0; i < c.n; i++)
		c.hash[hslot(&c, c.t[i].tid)] = i + 1;
	roots = calloc(c.n + 1, sizeof(*roots));
	stack = calloc(c.n + 1, sizeof(*stack));
	depth = calloc(c.n + 1, sizeof(*depth));
	if (!roots || !stack || !depth)
		goto oom;
	/* link each thread under its parent, up to a thread without one (perf's order:
	 * a parent's children in the order they were first reached) */
	for (size_t i = 0; i < c.n; i++) {
		size_t k = i;
		while (!c.t[k].listed) {
			struct task *t = &c.t[k];
			if (t->ppid == -1) {
				t->listed = true;
				roots[nroots++] = k;
				break;
			}
			struct task *p = task_find(&c, t->ppid);
			if (!p) {
				tool_error("'%s': thread %d has a parent %d the file does not name",
					   R->input, t->tid, t->ppid);
				err = -PK_ERR_FORMAT;
				goto out;
			}
			size_t pk = (size_t)(p - c.t);
			t->listed = true;
			if (p->last)
				c.t[p->last - 1].next = k + 1;
			else
				p->first = k + 1;
			p->last = k + 1;
			k = pk;
		}
	}
	FILE *f = R->out;
	fprintf(f, "# %8s %8s %8s  %s\n", "pid", "tid", "ppid", "comm");
	for (size_t r = 0; r < nroots; r++) {
		size_t sp = 0;
		stack[sp] = roots[r];
		depth[sp++] = 0;
		while (sp) {
			sp--;
			size_t k = stack[sp], lvl = depth[sp];
			task_print(f, &c.t[k], lvl, c.maps);
			/* children pushed last-first: printed in order */
			size_t nch = 0;
			for (size_t ch = c.t[k].first; ch && sp + nch < c.n; ch = c.t[ch - 1].next)
				nch++;
			size_t j = sp + nch;
			for (size_t ch = c.t[k].first; ch && j > sp; ch = c.t[ch - 1].next) {
				j--;
				stack[j] = ch - 1;
				depth[j] = lvl + 1;
			}
			sp += nch;
		}
	}
	goto out;
oom:
	tool_error("out of memory");
	err = -ENOMEM;
out:
	for (size_t i = 0; i < c.n; i++)
		free(c.t[i].comm);
	free(c.t);
	free(c.hash);
	rpt_maps_free(c.maps);
	free(roots);
	free(stack);
	free(depth);
	return err < 0 ? err : 0;
}
