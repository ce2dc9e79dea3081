/* SPDX-License-Identifier: MIT */
/* tool/report-json.c - perfkit report: the --json document (the same numbers, whole trees). */
#include "report.h"

/* ---- JSON ---- */

static void json_node(struct report *R, const struct pk_callnode *n, int depth)
{
	FILE *f = R->out;
	char nb[1024];
	rpt_cg_name(n, nb, sizeof(nb));
	fprintf(f, "{\"sym\":");
	tool_json_str(f, nb);
	fprintf(f, ",\"dso\":");
	tool_json_str(f, n->dso);
	fprintf(f, ",\"kernel\":%s,\"period\":%" PRIu64 ",\"samples\":%" PRIu64
		",\"self_period\":%" PRIu64 ",\"percent\":%.4f",
		n->kernel ? "true" : "false", n->period, n->samples, n->self_period,
		rpt_pct(R, n->period));
	if (n->child && depth < 512) {
		fprintf(f, ",\"children\":[");
		for (const struct pk_callnode *c = n->child; c; c = c->next) {
			json_node(R, c, depth + 1);
			if (c->next)
				fputc(',', f);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

void rpt_json_hist(struct report *R, const struct pk_hist *h)
{
	FILE *f = R->out;
	char buf[2048];
	struct pk_hist one;
	struct pk_hist_entry one_e;
	const struct pk_hist_entry *one_p;
	if (R->no_keys) /* -s sample/period/overhead alone: one entry */
		h = rpt_one_entry(h, &one, &one_e, &one_p);
	R->total = R->by_samples ? h->nr_samples : h->total_period;
	fprintf(f, "{\"event\":");
	tool_json_str(f, h->name);
	fprintf(f, ",\"samples\":%" PRIu64 ",\"filtered\":%" PRIu64 ",\"event_count\":%" PRIu64
		",\"lost\":%" PRIu64 ",\"children_mode\":%s,\"entries\":[",
		h->nr_samples, h->nr_filtered, h->total_period, h->nr_lost,
		R->children == 1 ? "true" : "false");
	bool first = true;
	for (size_t i = 0; i < h->nr_entries; i++) {
		const struct pk_hist_entry *e = h->entries[i];
		uint64_t key = R->children == 1 ? rpt_weight_total(R, e) : rpt_weight_self(R, e);
		if (!key || (R->percent_limit > 0 && rpt_pct(R, key) < R->percent_limit))
			continue;
		fprintf(f, "%s{\"overhead\":%.4f,\"self\":%.4f", first ? "" : ",",
			rpt_pct(R, key), rpt_pct(R, rpt_weight_self(R, e)));
		if (R->children == 1)
			fprintf(f, ",\"children\":%.4f", rpt_pct(R, rpt_weight_total(R, e)));
		fprintf(f, ",\"period\":%" PRIu64 ",\"samples\":%" PRIu64
			",\"total_period\":%" PRIu64 ",\"total_samples\":%" PRIu64,
			e->self_period, e->self_samples, e->total_period, e->total_samples);
		for (size_t k = 0; k < R->nr_sort; k++) {
			switch (R->sort[k]) {
			case PK_SORT_COMM: fprintf(f, ",\"comm\":"); tool_json_str(f, e->comm); break;
			case PK_SORT_PID: fprintf(f, ",\"pid\":%d", e->pid); break;
			case PK_SORT_TID:
				fprintf(f, ",\"pid\":%d,\"tid\":%d,\"thread_comm\":", e->pid, e->tid);
				tool_json_str(f, e->thread_comm);
				break;
			case PK_SORT_CPU: fprintf(f, ",\"cpu\":%d", e->cpu); break;
			case PK_SORT_PARENT:
				fprintf(f, ",\"parent\":");
				tool_json_str(f, e->parent ? e->parent : "[other]");
				break;
			case PK_SORT_DSO: fprintf(f, ",\"dso\":"); tool_json_str(f, e->dso); break;
			case PK_SORT_SYM:
				if (e->sym) {
					fprintf(f, ",\"sym\":");
					tool_json_str(f, e->sym);
				} else {
					fprintf(f, ",\"sym\":null,\"addr\":\"0x%" PRIx64 "\"", e->addr);
				}
				fprintf(f, ",\"kernel\":%s", e->kernel ? "true" : "false");
				break;
			case PK_SORT_SRCLINE: fprintf(f, ",\"srcline\":"); tool_json_str(f, e->srcline); break;
			case PK_SORT_SRCFILE: fprintf(f, ",\"srcfile\":"); tool_json_str(f, e->srcfile); break;
			case PK_SORT_SOCKET: fprintf(f, ",\"socket\":%d", e->socket); break;
			case PK_SORT_TIME: fprintf(f, ",\"time_ns\":%" PRIu64, e->time); break;
			case PK_SORT_SYMOFF:
				fprintf(f, ",\"symoff\":");
				if (e->symoff)
					tool_json_str(f, e->symoff);
				else
					fprintf(f, "null");
				break;
			default: break;
			}
		}
		(void)buf;
		const struct pk_callnode *root = R->cg != CG_NONE ?
						 pk_report__callchain(R->rep, e, 0) : NULL;
		if (root) {
			fprintf(f, ",\"callchain\":[");
			for (const struct pk_callnode *c = root->child; c; c = c->next) {
				json_node(R, c, 0);
				if (c->next)
					fputc(',', f);
			}
			fputc(']', f);
			pk_report__callchain_release(R->rep);
		}
		fputc('}', f);
		first = false;
	}
	fprintf(f, "]}");
}
