/* SPDX-License-Identifier: MIT */
/*
 * tool/report-threads.c - `perfkit report -T/--threads`: after the report, the counts of
 * each thread's events from the file's READ records (`perf record -s`, `perfkit record
 * -s`: the kernel writes one when a thread exits), laid out as perf report 6.1 prints its
 * table (a column per event, threads in the order they first appear).
 */
#include "report.h"

struct thr_row {
	int32_t pid, tid;
	uint64_t *val; /* per counter */
};

struct thr_ctx {
	struct thr_row *rows;
	size_t nr_rows, cap_rows;
	int *ctr_idx;           /* attr idx of each counter */
	char **ctr_name;
	size_t nr_ctrs, cap_ctrs;
	bool oom;
};

static int thr_counter(struct thr_ctx *c, const struct pk_data_attr *a)
{
	for (size_t i = 0; i < c->nr_ctrs; i++)
		if (c->ctr_idx[i] == a->idx)
			return (int)i;
	if (c->nr_ctrs == c->cap_ctrs) {
		size_t n = c->cap_ctrs ? c->cap_ctrs * 2 : 4;
		int *ix = realloc(c->ctr_idx, n * sizeof(*ix));
		if (ix)
			c->ctr_idx = ix;
		char **nm = realloc(c->ctr_name, n * sizeof(*nm));
		if (nm)
			c->ctr_name = nm;
		if (!ix || !nm)
			return -1;
		c->cap_ctrs = n;
		for (size_t r = 0; r < c->nr_rows; r++) {
			uint64_t *v = realloc(c->rows[r].val, n * sizeof(*v));
			if (!v)
				return -1;
			memset(v + c->nr_ctrs, 0, (n - c->nr_ctrs) * sizeof(*v));
			c->rows[r].val = v;
		}
	}
	char nb[128];
	c->ctr_name[c->nr_ctrs] = strdup(pk_data_attr__name(a, nb, sizeof(nb)));
	if (!c->ctr_name[c->nr_ctrs])
		return -1;
	c->ctr_idx[c->nr_ctrs] = a->idx;
	return (int)c->nr_ctrs++;
}

static struct thr_row *thr_row(struct thr_ctx *c, int32_t pid, int32_t tid)
{
	for (size_t i = 0; i < c->nr_rows; i++)
		if (c->rows[i].pid == pid && c->rows[i].tid == tid)
			return &c->rows[i];
	if (c->nr_rows == c->cap_rows) {
		size_t n = c->cap_rows ? c->cap_rows * 2 : 16;
		struct thr_row *r = realloc(c->rows, n * sizeof(*r));
		if (!r)
			return NULL;
		c->rows = r;
		c->cap_rows = n;
	}
	struct thr_row *r = &c->rows[c->nr_rows];
	r->val = calloc(c->cap_ctrs ? c->cap_ctrs : 1, sizeof(*r->val));
	if (!r->val)
		return NULL;
	r->pid = pid;
	r->tid = tid;
	c->nr_rows++;
	return r;
}

/* a READ record: its first value (perf adds up the raw u64 after pid and tid) */
static int thr_read(void *ctx, const struct pk_data_event *ev, const struct pk_record *rec)
{
	struct thr_ctx *c = ctx;
	if (!rec || ev->hdr->type != PERF_RECORD_READ || !ev->attr || c->oom ||
	    rec->read.size < sizeof(uint64_t))
		return 0;
	uint64_t v;
	memcpy(&v, rec->read.values, sizeof(v));
	int k = thr_counter(c, ev->attr);
	struct thr_row *r = k < 0 ? NULL : thr_row(c, (int32_t)rec->read.pid, (int32_t)rec->read.tid);
	if (!r) {
		c->oom = true;
		return 0;
	}
	r->val[k] += v;
	return 0;
}

static int width_u64(uint64_t v)
{
	char b[24];
	return snprintf(b, sizeof(b), "%" PRIu64, v);
}

static void thr_print(FILE *f, const struct thr_ctx *c)
{
	int pw = 3, tw = 3;
	int *cw = calloc(c->nr_ctrs + 1, sizeof(*cw));
	if (!cw)
		return;
	for (size_t j = 0; j < c->nr_ctrs; j++)
		cw[j] = (int)strlen(c->ctr_name[j]);
	for (size_t i = 0; i < c->nr_rows; i++) {
		char b[16];
		int w = snprintf(b, sizeof(b), "%d", c->rows[i].pid);
		pw = w > pw ? w : pw;
		w = snprintf(b, sizeof(b), "%d", c->rows[i].tid);
		tw = w > tw ? w : tw;
		for (size_t j = 0; j < c->nr_ctrs; j++) {
			w = width_u64(c->rows[i].val[j]);
			cw[j] = w > cw[j] ? w : cw[j];
		}
	}
	fprintf(f, "# %*s  %*s", pw, "PID", tw, "TID");
	for (size_t j = 0; j < c->nr_ctrs; j++)
		fprintf(f, "  %*s", cw[j], c->ctr_name[j]);
	fputc('\n', f);
	for (size_t i = 0; i < c->nr_rows; i++) {
		fprintf(f, "  %*d  %*d", pw, c->rows[i].pid, tw, c->rows[i].tid);
		for (size_t j = 0; j < c->nr_ctrs; j++)
			fprintf(f, "  %*" PRIu64, cw[j], c->rows[i].val[j]);
		fputc('\n', f);
	}
	free(cw);
}

int rpt_print_threads(struct report *R)
{
	struct thr_ctx c = { 0 };
	int err = 0;
	if (!strcmp(R->input, "-")) {
		tool_warn("-T: the per-thread counts need a second reading of the input, which "
			  "a pipe cannot give: record to a file for them");
	} else {
		PK_OPTS(pk_data_reader_opts, ro);
		struct pk_data_reader *rd = tool_open_input(R->input, &ro);
		if (!rd)
			return -1;
		PK_OPTS(pk_session_ops, ops, .other = thr_read);
		err = rpt_run_side_session(rd, false, &ops, &c, R->input);
		pk_data_reader__free(rd);
		if (c.oom && err >= 0) {
			tool_error("-T: '%s': %s (the counts read before are shown)", R->input,
				   pk_strerror(-ENOMEM));
			err = -ENOMEM;
		}
	}
	thr_print(R->out, &c);
	for (size_t i = 0; i < c.nr_rows; i++)
		free(c.rows[i].val);
	for (size_t j = 0; j < c.nr_ctrs; j++)
		free(c.ctr_name[j]);
	free(c.rows);
	free(c.ctr_idx);
	free(c.ctr_name);
	return err < 0 ? err : 0;
}
