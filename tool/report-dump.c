/* SPDX-License-Identifier: MIT */
/*
 * tool/report-dump.c - `perfkit report -D/--dump-raw-trace`: every record of the file in
 * file order as perf report -D prints it: "OFFSET@FILE [SIZE]: event: TYPE", the bytes in
 * hex and text, then the timestamp prefix, "PERF_RECORD_NAME" and the decoded fields of
 * SAMPLE (ip line, call chain, weight, data_src, phys_addr), of COMM, FORK, EXIT, MMAP
 * and MMAP2 (record-text.c) and of every other kernel and user record type perf 6.1
 * knows (record-dump.c); then perf's "Aggregated stats" (report-stats.c). Samples lack
 * perf's " ... thread:"/" ...... dso:" lines (docs/perfkit-report.md).
 */
#include "report.h"

#include <ctype.h>
#include <stdarg.h>

static void hexdump(FILE *f, const uint8_t *b, size_t n)
{
	fprintf(f, ".\n. ... raw event: size %zu bytes\n", n);
	for (size_t off = 0; off < n; off += 16) {
		size_t m = n - off < 16 ? n - off : 16;
		fprintf(f, ".  %04zx: ", off);
		for (size_t i = 0; i < 16; i++)
			fprintf(f, i < m ? " %02x" : "   ", i < m ? b[off + i] : 0);
		fputs("  ", f);
		for (size_t i = 0; i < 16; i++)
			fputc(i < m ? (b[off + i] >= 0x20 && b[off + i] < 0x7f ? b[off + i] : '.') : ' ', f);
		fputc('\n', f);
	}
	fputc('\n', f);
}

/* perf's evlist__print_tstamp: CPU and time of the sample or of the sample_id trailer
 * (zero for user records), "-1 -1 " without sample_id_all */
static void tstamp(FILE *f, const struct pk_data_attr *a, const struct perf_event_header *h,
		   const struct pk_record *rec)
{
	if (!a || (h->type != PERF_RECORD_SAMPLE && !a->attr.attr.sample_id_all)) {
		fputs("-1 -1 ", f); /* perf's, for no attr too (the first HEADER_ATTR) */
		return;
	}
	const struct perf_event_attr *pa = &a->attr.attr;
	uint64_t cpu = 0, time = 0;
	if (rec && h->type == PERF_RECORD_SAMPLE) {
		cpu = rec->sample.cpu;
		time = rec->sample.time;
	} else if (rec && h->type < 64 && rec->has_sid) {
		cpu = rec->sid.cpu;
		time = rec->sid.time;
	}
	if (pa->sample_type & PERF_SAMPLE_CPU)
		fprintf(f, "%u ", (unsigned)cpu);
	if (pa->sample_type & PERF_SAMPLE_TIME)
		fprintf(f, "%" PRIu64 " ", time);
}

static void sample(FILE *f, const struct pk_data_attr *a, const struct perf_event_header *h,
		   const struct pk_sample *s)
{
	uint64_t period = (s->type & PERF_SAMPLE_PERIOD) ? s->period
			  : a ? a->attr.attr.sample_period : 0;
	fprintf(f, "(IP, 0x%x): %d/%d: %#" PRIx64 " period: %" PRIu64 " addr: %#" PRIx64 "\n",
		h->misc, (int32_t)s->pid, (int32_t)s->tid, s->ip, period, s->addr);
	if ((s->type & PERF_SAMPLE_CALLCHAIN) && s->callchain.ips) {
		fprintf(f, "... FP chain: nr:%" PRIu64 "\n", s->callchain.nr);
		for (uint64_t i = 0; i < s->callchain.nr; i++)
			fprintf(f, "..... %2d: %016" PRIx64 "\n", (int)i, s->callchain.ips[i]);
	}
	if (s->type & PERF_SAMPLE_WEIGHT)
		fprintf(f, "... weight: %" PRIu64 "\n", s->weight);
	if (s->type & PERF_SAMPLE_DATA_SRC)
		fprintf(f, " . data_src: 0x%" PRIx64 "\n", s->data_src);
	if (s->type & PERF_SAMPLE_PHYS_ADDR)
		fprintf(f, " .. phys_addr: 0x%" PRIx64 "\n", s->phys_addr);
}

/* tool_side_record_text's printf into the dump's FILE */
static void file_pf(void *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(ctx, fmt, ap);
	va_end(ap);
}

/* the record's offset as perf prints it: in the pipe format, from the end of the
 * 16-byte pipe header */
static uint64_t dump_offset(struct pk_data_reader *rd, uint64_t off)
{
	return pk_data_reader__is_pipe(rd) && off >= 16 ? off - 16 : off;
}

/* nattr: the attrs perf would know at this record (-1: all the reader has) */
static void dump_one(FILE *f, const struct report *R, struct pk_data_reader *rd,
		     const struct pk_data_event *ev, const struct pk_record *rec, long nattr,
		     struct pk_machine *m)
{
	const struct perf_event_header *h = ev->hdr;
	uint64_t off = dump_offset(rd, ev->offset);
	/* perf names the input "pipe" whenever it is in the pipe format */
	fprintf(f, "\n%#" PRIx64 "@%s [%#x]: event: %u\n", off,
		strcmp(R->input, "-") && !pk_data_reader__is_pipe(rd) ? R->input : "pipe",
		h->size, h->type);
	hexdump(f, (const uint8_t *)h, h->size);
	const struct pk_data_attr *a = ev->attr;
	if (!a && pk_data_reader__nr_attrs(rd) && nattr != 0)
		a = pk_data_reader__attr(rd, 0);
	tstamp(f, a, h, rec);
	fprintf(f, "%#" PRIx64 " [%#x]: ", off, h->size);
	if (rec && tool_side_record_text(rec, file_pf, f))
		return;
	const char *name = rpt_record_type_name(h->type);
	fprintf(f, "PERF_RECORD_%s", name ? name : "UNKNOWN");
	if (rec && h->type == PERF_RECORD_SAMPLE)
		sample(f, a, h, &rec->sample);
	else if (rec && tool_record_tail_text(rec, a, m, file_pf, f))
		;
	else if (h->type >= PK_RECORD_HEADER_ATTR)
		tool_user_record_tail_text(h, file_pf, f);
	else
		fputc('\n', f);
}

/* The pipe format's leading records, which the reader consumed when it opened the
 * input, dumped first as perf does; calls count(ctx, type) for each for --stats. */
void rpt_dump_lead(const struct report *R, struct pk_data_reader *rd,
		   void (*count)(void *ctx, unsigned int type), void *ctx)
{
	size_t len;
	const uint8_t *p = pk_data_reader__pipe_lead(rd, &len);
	uint64_t off = 16;
	long nattr = 0;
	static uint64_t rec[65536 / 8]; /* an aligned copy: records are at most 64 KiB */

	for (size_t at = 0; p && len - at >= 8;) {
		struct perf_event_header h;
		memcpy(&h, p + at, sizeof(h));
		if (h.size < 8 || h.size > len - at)
			break;
		memcpy(rec, p + at, h.size);
		struct pk_data_event ev = { .hdr = (const struct perf_event_header *)rec, .offset = off };
		dump_one(R->out, R, rd, &ev, NULL, nattr, NULL);
		count(ctx, h.type);
		nattr += h.type == PK_RECORD_HEADER_ATTR;
		at += h.size;
		off += h.size;
		if (h.type == PK_RECORD_HEADER_TRACING_DATA && h.size >= 12) {
			uint32_t psize; /* the payload that follows the record, 8-byte aligned */
			memcpy(&psize, rec + 1, sizeof(psize));
			off += ((uint64_t)psize + 7) & ~(uint64_t)7;
		}
	}
}

/* perf's order: user records and records without a time as they are read, the others
 * held (their text in one buffer) and printed by time: at a FINISHED_ROUND those up to
 * the latest time seen at the round before (perf's ordered-events flush), the rest at
 * the end */
struct held {
	uint64_t time, seq;
	size_t off, len;
};

struct rpt_dump {
	FILE *mf;
	char *buf;
	size_t size;
	struct held *h;
	size_t n, cap;
	uint64_t max_time, next_flush, seq;
	bool oom;
	struct pk_machine *m;   /* the kernel maps, for the symbol of a TEXT_POKE address */
};

static uint64_t rec_time(const struct pk_data_event *ev, const struct pk_record *rec)
{
	if (!rec || ev->hdr->type >= 64)
		return 0;
	if (ev->hdr->type == PERF_RECORD_SAMPLE)
		return (rec->sample.type & PERF_SAMPLE_TIME) ? rec->sample.time : 0;
	return rec->has_sid && (rec->sid.type & PERF_SAMPLE_TIME) ? rec->sid.time : 0;
}

struct rpt_dump *rpt_dump_new(const struct report *R, struct pk_data_reader *rd)
{
	struct rpt_dump *D = calloc(1, sizeof(*D));
	if (D && !(D->mf = open_memstream(&D->buf, &D->size))) {
		free(D);
		return NULL;
	}
	if (D) {
		/* the kernel's symbols as report has them (without a machine, TEXT_POKE
		 * lines go without their symbol) */
		struct pk_machine_opts mo = *tool_machine_opts();
		mo.host = pk_data_env__same_host(pk_data_reader__env(rd));
		if (R->kallsyms)
			mo.kallsyms = R->kallsyms;
		D->m = pk_machine__new(&mo);
	}
	return D;
}

static int held_cmp(const void *a, const void *b);

/* print the held records of time <= limit, in time order */
static void flush_upto(struct rpt_dump *D, FILE *out, uint64_t limit)
{
	if (!D->n || fflush(D->mf)) {
		D->oom |= D->n != 0;
		return;
	}
	qsort(D->h, D->n, sizeof(*D->h), held_cmp);
	size_t k = 0;
	while (k < D->n && D->h[k].time <= limit) {
		fwrite(D->buf + D->h[k].off, 1, D->h[k].len, out);
		k++;
	}
	memmove(D->h, D->h + k, (D->n - k) * sizeof(*D->h));
	D->n -= k;
	if (!D->n)
		fseek(D->mf, 0, SEEK_SET); /* the buffer's text all out: write over it */
}

void rpt_dump_rec(struct rpt_dump *D, const struct report *R, struct pk_data_reader *rd,
		  const struct pk_data_event *ev, const struct pk_record *rec)
{
	uint64_t t = rec_time(ev, rec);
	/* the kernel's maps as perf's machine has them (records in file order) */
	if (D->m && rec && (rec->type == PERF_RECORD_MMAP || rec->type == PERF_RECORD_MMAP2) &&
	    (rec->cpumode == PK_CPUMODE_KERNEL || rec->cpumode == PK_CPUMODE_GUEST_KERNEL))
		(void)pk_machine__process(D->m, rec);
	if (!t) {
		dump_one(R->out, R, rd, ev, rec, -1, D->m);
		if (ev->hdr->type == PK_RECORD_FINISHED_ROUND) {
			flush_upto(D, R->out, D->next_flush);
			D->next_flush = D->max_time;
		}
		return;
	}
	if (t > D->max_time)
		D->max_time = t;
	if (D->n == D->cap) {
		size_t nc = D->cap ? D->cap * 2 : 1024;
		struct held *h = realloc(D->h, nc * sizeof(*h));
		if (!h) {
			D->oom = true;
			return;
		}
		D->h = h;
		D->cap = nc;
	}
	long at = ftell(D->mf);
	dump_one(D->mf, R, rd, ev, rec, -1, D->m);
	long end = ftell(D->mf);
	if (at < 0 || end < at) {
		D->oom = true;
		return;
	}
	D->h[D->n] = (struct held){ .time = t, .seq = D->seq++, .off = (size_t)at, .len = (size_t)(end - at) };
	D->n++;
}

static int held_cmp(const void *a, const void *b)
{
	const struct held *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* print what was held and free; -ENOMEM when something could not be kept */
int rpt_dump_finish(struct rpt_dump *D, FILE *out)
{
	if (!D)
		return 0;
	flush_upto(D, out, UINT64_MAX);
	int err = D->oom ? -ENOMEM : 0;
	fclose(D->mf);
	free(D->buf);
	free(D->h);
	pk_machine__free(D->m);
	free(D);
	return err;
}
