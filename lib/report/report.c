/* SPDX-License-Identifier: MIT */
/* lib/report/report.c - a report's options, creation and destruction, and its sort keys'
 * names. */
#include "report-internal.h"

/* ------------------------------------------------------------------------------------ */

static const char *const sort_names[PK_SORT__MAX] = {
	[PK_SORT_COMM] = "comm", [PK_SORT_PID] = "pid", [PK_SORT_TID] = "tid",
	[PK_SORT_DSO] = "dso", [PK_SORT_SYM] = "sym", [PK_SORT_SRCLINE] = "srcline",
	[PK_SORT_CPU] = "cpu", [PK_SORT_PARENT] = "parent", [PK_SORT_TIME] = "time",
	[PK_SORT_SOCKET] = "socket", [PK_SORT_SRCFILE] = "srcfile", [PK_SORT_SYMOFF] = "symoff",
};

int pk_sort_key__parse(const char *name)
{
	if (!name)
		return pk_err(-EINVAL);
	if (!strcmp(name, "symbol"))
		return PK_SORT_SYM;
	if (!strcmp(name, "thread"))
		return PK_SORT_TID;
	for (int i = 0; i < PK_SORT__MAX; i++)
		if (!strcmp(name, sort_names[i]))
			return i;
	return pk_err(-EINVAL);
}

const char *pk_sort_key__name(enum pk_sort_key k)
{
	return (unsigned)k < PK_SORT__MAX ? sort_names[k] : NULL;
}

static int copy_ints(int32_t **dst, size_t *nr, const int32_t *src, size_t n)
{
	*nr = 0;
	if (!n || !src)
		return 0;
	*dst = malloc(n * sizeof(**dst));
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, n * sizeof(**dst));
	*nr = n;
	return 0;
}

static int copy_strs(char ***dst, size_t *nr, const char *const *src, size_t n)
{
	*nr = 0;
	if (!n || !src)
		return 0;
	*dst = calloc(n, sizeof(char *));
	if (!*dst)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		(*dst)[i] = strdup(src[i] ? src[i] : "");
		if (!(*dst)[i])
			return -ENOMEM;
		*nr = i + 1;
	}
	return 0;
}

struct pk_report *pk_report__new(const struct pk_report_opts *o)
{
	if (!PK_OPTS_VALID(o, pk_report_opts))
		return pk_err_ptr(-EINVAL);
	/* (aligned: the aggregation's fields on cache lines of their own, see struct
	 * pk_report) */
	struct pk_report *rep = aligned_alloc(_Alignof(struct pk_report), sizeof(*rep));
	if (!rep)
		return pk_err_ptr(-ENOMEM);
	memset(rep, 0, sizeof(*rep));
	size_t nr_sort = PK_OPTS_GET(o, nr_sort, 0);
	const enum pk_sort_key *sort = PK_OPTS_GET(o, sort, NULL);
	if (!sort || !nr_sort) {
		rep->sort[0] = PK_SORT_COMM;
		rep->sort[1] = PK_SORT_DSO;
		rep->sort[2] = PK_SORT_SYM;
		rep->nr_sort = 3;
	} else {
		if (nr_sort > PK_SORT__MAX)
			goto inval;
		for (size_t i = 0; i < nr_sort; i++) {
			if ((unsigned)sort[i] >= PK_SORT__MAX)
				goto inval;
			rep->sort[i] = sort[i];
		}
		rep->nr_sort = nr_sort;
	}
	for (size_t i = 0; i < rep->nr_sort; i++)
		rep->key_on[rep->sort[i]] = true;
	/* srcfile: the srcline machinery finds the lines, the key keeps their files */
	if (rep->key_on[PK_SORT_SYMOFF] &&
	    (rep->key_on[PK_SORT_SRCFILE] || rep->key_on[PK_SORT_SRCLINE]))
		goto inval; /* (one per-address string per frame) */
	rep->symoff_key = rep->key_on[PK_SORT_SYMOFF];
	/* perf's sym key compares two addresses without a symbol by address alone */
	rep->addr_key = rep->key_on[PK_SORT_SYM] && !rep->key_on[PK_SORT_DSO];
	rep->src_for_file = (rep->key_on[PK_SORT_SRCFILE] || rep->symoff_key) &&
			    !rep->key_on[PK_SORT_SRCLINE];
	if (rep->key_on[PK_SORT_SRCFILE] || rep->symoff_key)
		rep->key_on[PK_SORT_SRCLINE] = true;
	rep->direct = rep->key_on[PK_SORT_TIME] || rep->key_on[PK_SORT_SOCKET];
	rep->time_quantum = PK_OPTS_GET(o, time_quantum, (uint64_t)0);
	if (!rep->time_quantum)
		rep->time_quantum = 100000000; /* perf's default, 100 ms */
	rep->children = PK_OPTS_GET(o, children, false);
	rep->callgraph = PK_OPTS_GET(o, callgraph, false);
	rep->order = PK_OPTS_GET(o, order, PK_CG_ORDER_DEFAULT);
	if (rep->order == PK_CG_ORDER_DEFAULT)
		rep->order = rep->children ? PK_CG_ORDER_CALLER : PK_CG_ORDER_CALLEE;
	rep->no_callchain = PK_OPTS_GET(o, no_callchain, false);
	rep->max_stack = PK_OPTS_GET(o, max_stack, 0u);
	if (!rep->max_stack || rep->max_stack > MAX_CHAIN)
		rep->max_stack = rep->max_stack ? MAX_CHAIN : 127;
	rep->inlines = PK_OPTS_GET(o, inlines, false);
	rep->inlines_all = PK_OPTS_GET(o, inlines_all, false);
	rep->hide_unresolved = PK_OPTS_GET(o, hide_unresolved, false);
	rep->exclude_other = PK_OPTS_GET(o, exclude_other, false);
	if (rep->key_on[PK_SORT_PARENT] || rep->exclude_other) {
		const char *re = PK_OPTS_GET(o, parent_regex, NULL);
		if (regcomp(&rep->parent_re, re ? re : "^sys_|^do_page_fault",
			    REG_EXTENDED | REG_NOSUB))
			goto inval;
		rep->has_parent_re = true;
	}
	const char *ic = PK_OPTS_GET(o, ignore_callees, NULL);
	if (ic) {
		if (regcomp(&rep->ignore_re, ic, REG_EXTENDED | REG_NOSUB)) {
			if (rep->has_parent_re)
				regfree(&rep->parent_re);
			goto inval;
		}
		rep->has_ignore_re = true;
	}
	rep->cepoch = 1;
	rep->reader_thread = !PK_OPTS_GET(o, no_reader_thread, false);
	rep->lazy_cc = PK_OPTS_GET(o, lazy_callchains, false);
	rep->time_start = PK_OPTS_GET(o, time_start, 0);
	rep->time_end = PK_OPTS_GET(o, time_end, 0);
	if (copy_ints(&rep->pids, &rep->nr_pids, PK_OPTS_GET(o, pids, NULL), PK_OPTS_GET(o, nr_pids, 0)) ||
	    copy_ints(&rep->tids, &rep->nr_tids, PK_OPTS_GET(o, tids, NULL), PK_OPTS_GET(o, nr_tids, 0)) ||
	    copy_ints(&rep->cpus, &rep->nr_cpus, PK_OPTS_GET(o, cpus, NULL), PK_OPTS_GET(o, nr_cpus, 0)) ||
	    copy_strs(&rep->comms, &rep->nr_comms, PK_OPTS_GET(o, comms, NULL), PK_OPTS_GET(o, nr_comms, 0)) ||
	    copy_strs(&rep->dsos, &rep->nr_dsos, PK_OPTS_GET(o, dsos, NULL), PK_OPTS_GET(o, nr_dsos, 0)) ||
	    copy_strs(&rep->symbols, &rep->nr_symbols, PK_OPTS_GET(o, symbols, NULL),
		      PK_OPTS_GET(o, nr_symbols, 0))) {
		pk_report__free(rep);
		return pk_err_ptr(-ENOMEM);
	}
	/* the caller's machine options (zero-extended to ours), host and kallsyms ours */
	const struct pk_machine_opts *cmo = PK_OPTS_GET(o, machine_opts, NULL);
	if (!PK_OPTS_VALID(cmo, pk_machine_opts)) {
		pk_report__free(rep);
		return pk_err_ptr(-EINVAL);
	}
	PK_OPTS(pk_machine_opts, mo);
	if (cmo)
		memcpy(&mo, cmo, PK_MIN(cmo->sz, sizeof(mo)));
	mo.sz = sizeof(mo);
	mo.host = PK_OPTS_GET(o, host, false);
	mo.kallsyms = PK_OPTS_GET(o, kallsyms, NULL);
	rep->m = pk_machine__new(&mo);
	if (!rep->m) {
		int e = errno;
		pk_report__free(rep);
		return pk_err_ptr(-e);
	}
	return rep;
inval:
	free(rep);
	return pk_err_ptr(-EINVAL);
}

/* Free the public trees built so far (keeping one pool chunk for reuse if `keep`). */
void pk_rep_cc_trees_release(struct pk_report *rep, bool keep)
{
	struct ccpool *p = rep->ccpool;
	if (keep && p) {
		p->used = 0;
		p = p->next;
		rep->ccpool->next = NULL;
	} else {
		rep->ccpool = NULL;
	}
	while (p) {
		struct ccpool *n = p->next;
		free(p);
		p = n;
	}
	for (size_t i = 0; i < rep->nr_cc_built; i++)
		rep->cc_built[i]->cc = NULL;
	rep->nr_cc_built = 0;
}

void pk_rep_cc_release(struct pk_report *rep)
{
	if (rep->kid_off) {
		pk_arr_free(rep->kid_off, (rep->nr_kid_nodes + 1) * sizeof(*rep->kid_off));
		pk_arr_free(rep->kid, rep->nr_kid_nodes * sizeof(*rep->kid));
	}
	rep->kid_off = rep->kid = NULL;
	rep->nr_kid_nodes = 0;
	pk_rep_cc_trees_release(rep, false);
	pk_arr_free(rep->cc_built, rep->cap_cc_built * sizeof(*rep->cc_built));
	rep->cc_built = NULL;
	rep->cap_cc_built = 0;
	for (size_t i = 0; i < rep->nr_hists; i++) {
		pk_arr_free(rep->hists[i].ccs, rep->hists[i].nr_ccs * sizeof(*rep->hists[i].ccs));
		rep->hists[i].ccs = NULL;
	}
}

static void hist_release(struct hist *h)
{
	free(h->name);
	pk_arr_free(h->ccs, h->nr_ccs * sizeof(*h->ccs));
	pk_arr_free(h->ents, h->cap_ents * sizeof(*h->ents));
	pk_index_release(&h->eidx);
	pk_arr_free(h->pub_ents, h->nr_pub * sizeof(*h->pub_ents));
	pk_arr_free(h->pub_sorted, h->nr_pub * sizeof(*h->pub_sorted));
}


void pk_report__free(struct pk_report *rep)
{
	if (!rep)
		return;
	pk_rep_aggw_stop(rep);
	pk_rep_cc_release(rep);
	if (rep->has_parent_re)
		regfree(&rep->parent_re);
	if (rep->has_ignore_re)
		regfree(&rep->ignore_re);
	pk_read_delta__free(rep->rdelta);
	free(rep->rvals);
	pk_machine__free(rep->m);
	pk_str_release(&rep->strs);
	pk_u64map_release(&rep->dso_seq);
	pk_u64map_release(&rep->addr_fr);
	pk_rep_keys_release(rep);
	pk_arr_free(rep->frames, rep->cap_frames * sizeof(*rep->frames));
	pk_arr_free(rep->fsame, rep->cap_fsame * sizeof(*rep->fsame));
	pk_arr_free(rep->fagg, rep->cap_fagg * sizeof(*rep->fagg));
	pk_index_release(&rep->fidx);
	pk_rep_rents_release(rep);
	pk_arr_free(rep->nodes, rep->cap_nodes * sizeof(*rep->nodes));
	pk_index_release(&rep->nidx);
	pk_arr_free(rep->nkey, rep->cap_nkey * sizeof(*rep->nkey));
	free(rep->iname);
	for (size_t i = 0; i < rep->nr_hists; i++)
		hist_release(&rep->hists[i]);
	free(rep->hists);
	pk_arr_free(rep->udsos, rep->cap_udsos * sizeof(*rep->udsos));
	free(rep->pub_nodes);
	pk_arr_free(rep->ppool, rep->cap_ppool * sizeof(*rep->ppool));
	pk_arr_free(rep->pch, rep->cap_pch * sizeof(*rep->pch));
	pk_index_release(&rep->pidx);
	free(rep->pids);
	free(rep->tids);
	free(rep->cpus);
	for (size_t i = 0; i < rep->nr_comms; i++)
		free(rep->comms[i]);
	for (size_t i = 0; i < rep->nr_dsos; i++)
		free(rep->dsos[i]);
	for (size_t i = 0; i < rep->nr_symbols; i++)
		free(rep->symbols[i]);
	free(rep->comms);
	free(rep->dsos);
	free(rep->symbols);
	free(rep);
}

uint64_t pk_report_symbol_lookups(const struct pk_report *rep)
{
	return rep ? rep->nr_lookups : 0;
}

struct pk_machine *pk_report__machine(struct pk_report *rep)
{
	return rep ? rep->m : NULL;
}

void pk_report__ordered_stats(const struct pk_report *rep, struct pk_ordered_stats *st)
{
	if (rep && st)
		PK_OUT_COPY(st, &rep->ost);
}
