/* SPDX-License-Identifier: MIT */
/*
 * tool/script-extra.c - perf script's options beyond the basic ones: --header,
 * --header-only and -I (the header block of perf report --header-only), -S/--symbols and
 * --dsos (samples by where their address lies), --kallsyms, -q and -v.
 */
#include "script.h"
#include "report.h"

int script_extra_opt(struct script *s, int c, const char *arg)
{
	switch (c) {
	case OPT_X_HEADER: s->header = true; return 0;
	case OPT_X_HEADER_ONLY: s->header_only = true; return 0;
	case 'I': s->show_info = true; return 0;
	case 'S':
	case OPT_X_DSOS: {
		bool sym = c == 'S';
		if (tool_split_list(arg, sym ? &s->f_syms : &s->f_dsos,
				    sym ? &s->f_nsyms : &s->f_ndsos)) {
			tool_error("invalid %s '%s'", sym ? "-S/--symbols" : "--dsos", arg);
			return 129;
		}
		return 0;
	}
	case OPT_X_KALLSYMS:
		if (access(arg, R_OK)) {
			tool_error("cannot read '%s': %s", arg, strerror(errno));
			return 129;
		}
		s->kallsyms = arg;
		return 0;
	case OPT_X_SHOW_BPF: s->show_bpf = true; return 0;
	case OPT_X_SHOW_POKE: s->show_poke = true; return 0;
	case 'q': s->quiet = true; return 0;
	case 'v': s->verbose++; return 0;
	default: return 1;
	}
}

static bool in_list(char **v, size_t n, const char *x)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], x))
			return true;
	return false;
}

/* -S and --dsos: the function and the object of the sampled address (perf matches a DSO
 * by its short name, the file name, or by its path) */
bool script_sym_wanted(struct script *s, const struct pk_sample *smp)
{
	struct pk_addr_loc loc;

	if (!s->f_nsyms && !s->f_ndsos)
		return true;
	if (!s->m)
		return false;
	/* (an address without a symbol still has its object) */
	memset(&loc, 0, sizeof(loc));
	pk_machine__resolve(s->m, smp->pid, smp->tid, smp->ip, smp->cpumode, &loc);
	if (s->f_nsyms && (!loc.sym || !in_list(s->f_syms, s->f_nsyms, loc.sym)))
		return false;
	if (s->f_ndsos) {
		const char *d = loc.dso_name ? loc.dso_name : "[unknown]";
		const char *base = strrchr(d, '/');
		if (!in_list(s->f_dsos, s->f_ndsos, d) &&
		    !(base && in_list(s->f_dsos, s->f_ndsos, base + 1)))
			return false;
	}
	return true;
}

/* --header/--header-only: perf report --header-only's block (-q: none, as perf) */
bool script_print_header(struct script *s, const char *input)
{
	if (s->quiet || (!s->header && !s->header_only))
		return false;
	struct report R;
	memset(&R, 0, sizeof(R));
	R.input = input;
	R.out = stdout;
	R.show_info = s->show_info;
	ob_flush(&s->ob);
	rpt_print_header(&R, s->rd);
	fflush(stdout);
	return s->header_only;
}

const struct pk_machine_opts *script_machine_opts(const struct script *s)
{
	static struct pk_machine_opts mo;

	mo = *tool_machine_opts();
	/* symbol tables read on a thread of their own, ahead of the samples that need
	 * them (the same output; not with PERFKIT_NO_THREADS) */
	mo.preload = tool_threads_allowed();
	if (!s->kallsyms)
		return &mo;
	/* the given kernel symbols are used whatever machine the file comes from */
	mo.kallsyms = s->kallsyms;
	mo.host = true;
	return &mo;
}
