/* SPDX-License-Identifier: MIT */
/*
 * lib/report/keys.c - the sort keys made of something else than a frame: time (the
 * sample time cut to the time quantum, perf's time key), socket (the CPU's socket in
 * the recording's HEADER_CPU_TOPOLOGY) and srcfile (the file part of the srcline).
 * Each gives a 32-bit word of the entry key (0: key off) and the entry's public field.
 * Also the frame that the sym key makes an entry for (pk_rep_sym_frame), the comm
 * key's id of a thread (pk_rep_comm_id), and an entry's identity per key
 * (pk_report__entry_key).
 */
#include "resolve.h"

/* a time slice's id (>= 1), made at its first use */
static uint32_t time_id(struct pk_report *rep, uint64_t t)
{
	uint64_t slice = t / rep->time_quantum;
	void *v = pk_u64map_get(&rep->tidx, slice + 1);
	if (v)
		return (uint32_t)(uintptr_t)v;
	if (rep->nr_tslice >= UINT32_MAX - 1 ||
	    pk_grow((void **)&rep->tslice, &rep->cap_tslice, rep->nr_tslice + 1, sizeof(uint64_t)))
		return 0;
	rep->tslice[rep->nr_tslice++] = slice * rep->time_quantum;
	uint32_t id = (uint32_t)rep->nr_tslice;
	if (pk_u64map_put(&rep->tidx, slice + 1, (void *)(uintptr_t)id))
		return 0;
	return id;
}

/* the socket of cpu as the recording's topology says, -1 when it does not */
static int32_t socket_of(const struct pk_report *rep, int32_t cpu)
{
	const struct pk_data_env *env = rep->read_rd ? pk_data_reader__env(rep->read_rd) : NULL;
	if (!env || cpu < 0 || (uint32_t)cpu >= env->nr_cpu_topo || !env->cpu)
		return -1;
	uint32_t s = env->cpu[cpu].socket_id;
	return s > INT32_MAX ? -1 : (int32_t)s;
}

/* the file of a srcline text: before its last ':' when a line number follows ("a.c:12"),
 * else none (perf's srcfile of an address without line information is "") */
static size_t file_len(const char *sl)
{
	if (sl && !strcmp(sl, "??:0"))
		return 0;       /* (perf's unknown srcline: no file) */
	const char *c = sl ? strrchr(sl, ':') : NULL;
	if (!c || c == sl || !c[1])
		return 0;
	for (const char *d = c + 1; *d; d++)
		if (*d < '0' || *d > '9')
			return 0;
	return (size_t)(c - sl);
}

/* the string id of srcline id sl's file ("" when none) */
static uint32_t srcfile_id(struct pk_report *rep, uint32_t sl)
{
	/* memo in the time slices' map, keyed apart from them by the top bit */
	uint64_t mk = (1ULL << 63) | sl;
	void *v = pk_u64map_get(&rep->tidx, mk);
	if (v)
		return (uint32_t)((uintptr_t)v - 1);
	const char *s = pk_str_get(&rep->strs, sl);
	size_t n = file_len(s);
	char buf[512];
	uint32_t id = 0;
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s ? s : "", n);
	buf[n] = 0;
	if (pk_str_intern(&rep->strs, buf, &id))
		return 0;
	pk_u64map_put(&rep->tidx, mk, (void *)((uintptr_t)id + 1)); /* (a memo: may fail) */
	return id;
}

/* The frame an entry of frame fid is made for: perf's sym key compares two addresses
 * without a symbol by address alone (sort__sym_cmp), so that, without the dso key, such
 * frames of different objects (or levels) at one address are one entry, shown as the
 * first made */
uint32_t pk_rep_sym_frame(struct pk_report *rep, uint32_t fid)
{
	if (!rep->addr_key || rep->afr[fid].sym)
		return fid;
	uint64_t a = rep->afr[fid].addr;
	void *v = pk_u64map_get(&rep->addr_fr, a);
	if (v)
		return (uint32_t)((uintptr_t)v - 1);
	(void)pk_u64map_put(&rep->addr_fr, a, (void *)((uintptr_t)fid + 1)); /* (may fail:
										 * not merged) */
	return fid;
}

void pk_rep_keys_of(struct pk_report *rep, struct hkey *k, int32_t cpu, uint32_t srcline)
{
	if (rep->key_on[PK_SORT_TIME])
		k->time = time_id(rep, rep->cur_time);
	if (rep->key_on[PK_SORT_SOCKET])
		k->socket = (uint32_t)(socket_of(rep, cpu) + 2);
	if (rep->key_on[PK_SORT_SRCFILE])
		k->srcfile = srcfile_id(rep, srcline);
	if (rep->symoff_key)
		k->symoff = srcline;
}

uint32_t pk_rep_src_of(struct pk_report *rep, struct rent *re, uint32_t fid)
{
	if (!rep->symoff_key)
		return pk_rep_srcline_of(rep, re, fid);
	/* (re->srcline holds the symoff id: srclines are not looked up with this key) */
	if (re && re->srcline)
		return re->srcline;
	const struct frame *f = &rep->frames[fid];
	char buf[600];
	uint32_t id = 0;
	if (f->sym && re && re->dso_addr >= f->sym_start)
		snprintf(buf, sizeof(buf), "%.500s+0x%" PRIx64, pk_str_get(&rep->strs, f->sym),
			 re->dso_addr - f->sym_start);
	else
		buf[0] = 0; /* unresolved: the frame is keyed by its address already */
	if (pk_str_intern(&rep->strs, buf, &id))
		return 0;
	if (re)
		re->srcline = id;
	return id;
}

int pk_rep_keys_publish(struct pk_report *rep, const struct hkey *k, int32_t cpu,
			uint32_t srcline, struct pk_hist_entry *p)
{
	p->time = k->time && k->time <= rep->nr_tslice ? rep->tslice[k->time - 1] : 0;
	p->socket = k->socket ? (int32_t)k->socket - 2 : socket_of(rep, cpu);
	p->srcfile = NULL;
	p->symoff = NULL;
	if (rep->symoff_key && k->symoff) {
		const char *s = pk_str_get(&rep->strs, k->symoff);
		p->symoff = s && *s ? s : NULL;
	}
	if (rep->key_on[PK_SORT_SRCFILE]) {
		uint32_t id = k->srcfile ? k->srcfile : srcfile_id(rep, srcline);
		p->srcfile = pk_str_get(&rep->strs, id);
		if (!p->srcfile)
			return -ENOMEM;
	}
	return 0;
}

void pk_rep_keys_release(struct pk_report *rep)
{
	pk_arr_free(rep->tslice, rep->cap_tslice * sizeof(*rep->tslice));
	rep->tslice = NULL;
	rep->nr_tslice = rep->cap_tslice = 0;
	pk_u64map_release(&rep->tidx);
}

/* The comm id of thread tid named comm; the cache entry is marked current for `epoch`
 * (0: for none). */
uint32_t pk_rep_comm_id(struct pk_report *rep, uint32_t tid, const char *comm, uint32_t epoch)
{
	char buf[32];
	/* ":0" is the placeholder name of the thread object for tid 0 (the idle task), which
	 * can reach here with another sample tid on CPU-wide recordings */
	if (comm && !strcmp(comm, ":0"))
		tid = 0;
	if (!comm || (tid == 0 && comm[0] == ':')) {
		comm = NULL;
		if (tid == 0)
			comm = "swapper"; /* the idle task, as perf names it */
		else
			snprintf(buf, sizeof(buf), ":%d", (int)tid);
		if (tid)
			comm = buf;
	}
	struct ccache *c = &rep->ccache[pk_mix64(tid) & (PK_ARRAY_SIZE(rep->ccache) - 1)];
	if (c->used && c->tid == tid && !strcmp(c->comm, comm)) {
		c->epoch = epoch;
		return c->id;
	}
	uint32_t id = 0;
	if (pk_str_intern(&rep->strs, comm, &id))
		return 0;
	c->used = true;
	c->tid = tid;
	c->id = id;
	c->epoch = epoch;
	snprintf(c->comm, sizeof(c->comm), "%s", comm);
	return id;
}

int pk_report__entry_key(const struct pk_report *rep, const struct pk_hist_entry *pe,
			 enum pk_sort_key key, uint64_t *id)
{
	if (!rep || !pe || !id || (unsigned)key >= PK_SORT__MAX || !rep->key_on[key])
		return -EINVAL;
	const struct ent *e = NULL;
	for (size_t hi = 0; hi < rep->nr_hists && !e; hi++) {
		const struct hist *h = &rep->hists[hi];
		if (h->pub_ents && pe >= h->pub_ents && pe < h->pub_ents + h->nr_pub)
			e = &h->ents[pe - h->pub_ents];
	}
	if (!e)
		return -EINVAL;
	/* the entry key's word of each key (make_key), which the flat report aggregates by */
	const struct hkey *k = &e->k;
	switch (key) {
	case PK_SORT_COMM: *id = k->comm; break;
	case PK_SORT_PID: *id = k->pid; break;
	case PK_SORT_TID: *id = k->tid; break;
	case PK_SORT_CPU: *id = k->cpu; break;
	case PK_SORT_SYM: *id = k->frame; break;
	case PK_SORT_DSO: {
		/* with the sym key on, the entry key holds the frame, whose object it is
		 * (by short name, as the entry key without it) */
		*id = rep->key_on[PK_SORT_SYM] ? rep->frames[e->frame].dso : k->dso;
		break;
	}
	case PK_SORT_SRCLINE: *id = k->srcline; break;
	case PK_SORT_PARENT: *id = k->parent; break;
	case PK_SORT_TIME: *id = k->time; break;
	case PK_SORT_SOCKET: *id = k->socket; break;
	case PK_SORT_SRCFILE: *id = k->srcfile; break;
	case PK_SORT_SYMOFF: *id = k->symoff; break;
	default: return -EINVAL;
	}
	return 0;
}
