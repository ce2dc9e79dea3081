/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-script.c - `perfkit script`: dump the records of a perf.data file, ours or
 * perf's, file or pipe format, in time order (FINISHED_ROUND rules, lib/report), as text
 * lines like perf script's output (-F fields, symbolised call chains, tracepoint fields
 * decoded with libtraceevent from the recording's TRACING_DATA, or tracefs formats when
 * it has none) or as JSON lines with symbols.
 *
 * Speed: output goes through one large buffer written with write(2) (tool/script-out.h),
 * numbers are formatted by hand, and the output text of a frame (ip, symbol, dso) is
 * formatted once per distinct (pid, tid, cpumode, ip) and kept in a cache whose entries of
 * a process go stale whenever a record changes its maps (MMAP, MMAP2, COMM, FORK, EXIT;
 * all entries when the kernel's maps change): a frame's symbol only depends on the maps
 * at that moment. The cache and its text arena have
 * fixed upper bounds, so memory stays bounded however long the input is.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "script-out.h"
#include "script-trace.h"

enum { OPT_NO_SYMBOLS = 256, OPT_FILE_ORDER, OPT_TRACEFS, OPT_NO_INLINE, OPT_SHOW_SWITCH };

static const struct pk_tool_opt opts[] = {
	{ 'i', "input", required_argument, "<file>",
	  "input file (default perf.data; '-' reads stdin, pipe format)" },
	{ 'j', "json", no_argument, NULL, "one JSON object per line instead of text" },
	{ 'a', "show-all-records", no_argument, NULL,
	  "also the non-sample records (COMM, MMAP2, FORK, LOST, ...)" },
	{ 'G', "hide-call-graph", no_argument, NULL, "do not print call chains" },
	{ 'F', "fields", required_argument, "<list>",
	  "text fields: comm,tid,pid,cpu,time,event,ip,sym,symoff,dso,\n"
	  "srcline,period,addr,trace (perf script's -F); +field,-field\n"
	  "change the default fields instead" },
	{ OPT_NO_SYMBOLS, "no-symbols", no_argument, NULL, "do not resolve symbols (raw addresses, faster)" },
	{ OPT_FILE_ORDER, "file-order", no_argument, NULL, "records in file order instead of time order" },
	{ OPT_NO_INLINE, "no-inline", no_argument, NULL,
	  "no inlined-function lines in DWARF-unwound call chains" },
	{ OPT_SHOW_SWITCH, "show-switch-events", no_argument, NULL,
	  "also the context switch records (record --switch-events)" },
	{ OPT_TRACEFS, "tracefs", required_argument, "<dir>",
	  "tracepoint formats the recording does not carry are read\n"
	  "from <dir>/events (default: the mounted tracefs; 'none':\n"
	  "only the recording's)" },
	{ 0 },
};

const struct pk_tool_help cmd_script_help = {
	.synopsis = "usage: perfkit script [<options>]\n",
	.intro = "Print the samples (and with --show-all-records every record) of a perf.data file.\n",
	.opts = opts,
	.outro = "Text lines follow perf script's default: comm tid [cpu] time: period event: ip, then\n"
		 "one call-chain address per line. JSON samples carry event, ip, pid, tid, cpu, time,\n"
		 "period, count (the PERF_SAMPLE_READ value, when recorded), sym, symoff, dso and\n"
		 "callchain ([{\"ip\":...,\"sym\":...,\"dso\":...}]).\n",
};

enum sfield {
	SF_COMM = 1 << 0, SF_TID = 1 << 1, SF_PID = 1 << 2, SF_CPU = 1 << 3, SF_TIME = 1 << 4,
	SF_EVENT = 1 << 5, SF_IP = 1 << 6, SF_SYM = 1 << 7, SF_SYMOFF = 1 << 8, SF_DSO = 1 << 9,
	SF_SRCLINE = 1 << 10, SF_PERIOD = 1 << 11, SF_ADDR = 1 << 12, SF_TRACE = 1 << 13,
};

/* the fields perf script prints by default: for tracepoints (plus the frames when the
 * event has call chains), and for every other event type */
#define SF_DEFAULT_TP (SF_COMM | SF_TID | SF_CPU | SF_TIME | SF_EVENT | SF_TRACE)
#define SF_FRAME_DEFAULT (SF_IP | SF_SYM | SF_SYMOFF | SF_DSO)
#define SF_DEFAULT (SF_COMM | SF_TID | SF_CPU | SF_TIME | SF_EVENT | SF_FRAME_DEFAULT | SF_PERIOD)
#define SF_FRAME_MASK (SF_IP | SF_SYM | SF_SYMOFF | SF_DSO | SF_SRCLINE)

/* how -F was given: not at all, as the list of fields, or as +field/-field changes to
 * the defaults (perf script's rules: the two forms cannot be mixed) */
enum { FM_DEFAULT, FM_SET, FM_CHANGE };

/* kinds of preformatted frame text: FR_FRAME the sample's own address (text) or a JSON
 * call-chain element, FR_CHAIN a text call-chain frame (user addresses within their
 * map, as perf 6.1 prints call chains), FR_TOP the JSON sample's symbol, FR_UNW the
 * lines of a DWARF-unwound frame */
enum { FR_FRAME, FR_CHAIN, FR_TOP, FR_UNW, FR_NR };

/* One cached frame: valid while gen is the cache's generation. */
struct frag_ent {
	uint64_t ip;
	uint32_t pid, tid;
	uint32_t gen;
	uint32_t mgen;          /* pgen[] of its pid's bucket when formatted */
	uint32_t off[FR_NR], len[FR_NR]; /* in the arena; len UINT32_MAX: not formatted yet */
	uint8_t cm;
};

#define FC_MIN ((size_t)1 << 12)
#define FC_MAX ((size_t)1 << 16)      /* entries (2.5 MiB) */
#define ARENA_MAX ((size_t)8 << 20)   /* bytes of frame text */
#define PGEN_BUCKETS 4096

struct script {
	bool json, all, hide_cg, no_inline;
	struct obuf ob;
	bool line_flush;        /* stdout is a terminal: write each line at once */
	struct pk_data_reader *rd;
	/* tid -> comm */
	struct comm_slot { uint32_t tid; char comm[16]; bool used; } *comms;
	size_t comm_cap, comm_nr;
	uint64_t nr_samples;
	struct pk_count_value *vals;
	size_t nvals;
	/* symbols */
	bool no_syms, file_order;
	int fmode;              /* FM_*: how -F was given */
	unsigned int fields;    /* FM_SET: the SF_* fields; FM_CHANGE: those added */
	unsigned int fields_rm; /* FM_CHANGE: the SF_* fields removed */
	unsigned int frame_fields; /* the SF_FRAME_MASK part, the same for every event */
	bool show_switch;       /* --show-switch-events */
	int name_width;         /* the longest event name (perf aligns names to it) */
	size_t name_width_attrs; /* attrs it was computed over (a pipe adds attrs later) */
	char unk_comm[16];      /* ":<tid>", the comm of a thread without COMM */
	bool fields_failed;     /* -F asks for a field an event cannot have (check_fields) */
	struct pk_machine *m;
	struct pk_chain_entry chain[512];
	/* frame text cache (see the top of the file) */
	struct frag_ent *fc;
	size_t fc_cap, fc_nr;
	uint32_t fc_gen;
	/* map generations by pid bucket: a record that changes the maps of a process bumps
	 * its bucket, which makes the cached frames of that process (and of the few others
	 * in the bucket) stale; the kernel's maps changing empties the whole cache */
	uint32_t pgen[PGEN_BUCKETS];
	char *arena;
	size_t arena_len, arena_cap;
	/* tracepoint fields (script-trace.c), set up at the first tracepoint sample */
	struct script_trace *trace;
	const char *tracefs;    /* --tracefs: NULL = the mounted one, "none" = none */
	/* PERF_SAMPLE_READ: one line per counter read, with its delta (print_read_sample) */
	struct pk_read_delta *rdelta;
	struct pk_count_value *rvals;
	size_t nrvals;
	bool read_line;
};

/* ---- comm table ---- */

static struct comm_slot *comm_find(struct script *s, uint32_t tid, bool create)
{
	if (create && (s->comm_nr + 1) * 2 > s->comm_cap) {
		size_t ncap = s->comm_cap ? s->comm_cap * 2 : 1024;
		struct comm_slot *n = calloc(ncap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; i < s->comm_cap; i++) {
			if (!s->comms[i].used)
				continue;
			size_t j = (s->comms[i].tid * 2654435761u) & (ncap - 1);
			while (n[j].used)
				j = (j + 1) & (ncap - 1);
			n[j] = s->comms[i];
		}
		free(s->comms);
		s->comms = n;
		s->comm_cap = ncap;
	}
	if (!s->comm_cap)
		return NULL;
	size_t j = (tid * 2654435761u) & (s->comm_cap - 1);
	while (s->comms[j].used) {
		if (s->comms[j].tid == tid)
			return &s->comms[j];
		j = (j + 1) & (s->comm_cap - 1);
	}
	if (!create)
		return NULL;
	s->comms[j].used = true;
	s->comms[j].tid = tid;
	s->comms[j].comm[0] = 0;
	s->comm_nr++;
	return &s->comms[j];
}

static void comm_set(struct script *s, uint32_t tid, const char *comm)
{
	struct comm_slot *c = comm_find(s, tid, true);
	if (c)
		snprintf(c->comm, sizeof(c->comm), "%s", comm);
}

/* The comm of a thread as perf names it: its COMM (or its parent's), "swapper" for the
 * idle task (pid 0 never has a COMM record), ":<tid>" for a thread never seen. */
static const char *comm_of(struct script *s, uint32_t tid)
{
	struct comm_slot *c = comm_find(s, tid, false);
	if (c && c->comm[0])
		return c->comm;
	if (tid == 0)
		return "swapper";
	snprintf(s->unk_comm, sizeof(s->unk_comm), ":%d", (int32_t)tid);
	return s->unk_comm;
}

/* ---- names ---- */

static const char *event_name(const struct pk_data_attr *a, char *buf, size_t len)
{
	size_t n;
	const struct pk_event_name *t;

	if (!a)
		return "unknown";
	if (a->name)
		return a->name;
	if (a->attr.attr.type == PERF_TYPE_SOFTWARE || a->attr.attr.type == PERF_TYPE_HARDWARE) {
		t = a->attr.attr.type == PERF_TYPE_SOFTWARE ? pk_sw_event_names(&n) : pk_hw_event_names(&n);
		for (size_t i = 0; i < n; i++)
			if (t[i].config == a->attr.attr.config)
				return t[i].name;
	}
	snprintf(buf, len, "%u:%#" PRIx64, a->attr.attr.type, (uint64_t)a->attr.attr.config);
	return buf;
}

static const char *user_record_name(uint32_t type)
{
	static const char *const names[] = {
		"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID",
		"FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR",
		"THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE",
		"TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT",
	};
	if (type >= 64 && type - 64 < sizeof(names) / sizeof(names[0]))
		return names[type - 64];
	return NULL;
}

static void json_hex(struct obuf *o, const char *key, uint64_t v, bool comma)
{
	ob_printf(o, "%s\"%s\":\"0x%" PRIx64 "\"", comma ? "," : "", key, v);
}

static void json_u64(struct obuf *o, const char *key, uint64_t v)
{
	ob_printf(o, ",\"%s\":%" PRIu64, key, v);
}

/* ---- symbols ---- */

struct symres {
	const char *sym, *dso;
	uint64_t off;
	struct pk_addr_loc loc;
	bool found;
	bool inlined;           /* a function DWARF says is inlined at the address */
};

static void resolve_ip(struct script *s, const struct pk_sample *smp, uint64_t ip, uint8_t cm,
		       struct symres *r)
{
	r->sym = NULL;
	r->off = 0;
	r->found = false;
	r->inlined = false;
	memset(&r->loc, 0, sizeof(r->loc));
	r->dso = "[unknown]";
	if (!s->m)
		return;
	int err = pk_machine__resolve(s->m, smp->pid, smp->tid, ip, cm, &r->loc);
	/* in no code map: perf's maps hold the data mappings too (record -d), so a stray
	 * frame address in the stack reads "[unknown] ([stack])" */
	if (err == -ENOENT && cm == PK_CPUMODE_USER)
		err = pk_machine__resolve_data(s->m, smp->pid, smp->tid, ip, cm, &r->loc);
	r->found = err == 0;
	r->sym = r->loc.sym; /* already perf's form (pk_symbol__demangle) */
	r->off = r->loc.sym_off;
	if (r->loc.dso_name)
		r->dso = r->loc.dso_name;
}

/* "file.c:12" of an address, or NULL */
static const char *srcline(struct symres *r, char *buf, size_t len)
{
	const char *file;
	unsigned int line;
	if (!r->loc.dso || r->loc.kernel || pk_dso__srcline(r->loc.dso, r->loc.dso_addr, &file, &line))
		return NULL;
	snprintf(buf, len, "%s:%u", file, line);
	return buf;
}

/* The chain of a sample (resolved, innermost first), or just the ip. */
static int sample_chain(struct script *s, const struct pk_sample *smp)
{
	if (s->m && (smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER))) {
		int n = pk_machine__callchain(s->m, smp, s->chain, sizeof(s->chain) / sizeof(s->chain[0]));
		if (n > 0)
			return n;
	}
	if (!(smp->type & PERF_SAMPLE_CALLCHAIN) || !smp->callchain.nr) {
		s->chain[0].ip = smp->ip;
		s->chain[0].cpumode = smp->cpumode;
		s->chain[0].flags = 0;
		return 1;
	}
	int n = 0;
	uint8_t cm = smp->cpumode;
	for (uint64_t i = 0; i < smp->callchain.nr && n < 512; i++) {
		uint64_t ip = smp->callchain.ips[i];
		enum pk_callchain_ctx c = pk_callchain__context(ip);
		if (c == PK_CTX_KERNEL)
			cm = PK_CPUMODE_KERNEL;
		else if (c == PK_CTX_USER)
			cm = PK_CPUMODE_USER;
		if (c != PK_CTX_NONE)
			continue;
		s->chain[n].ip = ip;
		s->chain[n].flags = 0;
		s->chain[n++].cpumode = cm;
	}
	return n;
}

/* ---- frame text cache ---- */

static int fc_init(struct script *s)
{
	s->fc = calloc(FC_MIN, sizeof(*s->fc));
	s->fc_cap = FC_MIN;
	s->fc_gen = 1;  /* calloc'd entries (gen 0) are free */
	return s->fc ? 0 : -ENOMEM;
}

/* Forget every cached frame (the maps changed, or the cache is full). */
static void fc_flush(struct script *s)
{
	if (++s->fc_gen == 0) {
		memset(s->fc, 0, s->fc_cap * sizeof(*s->fc));
		s->fc_gen = 1;
	}
	s->fc_nr = 0;
	s->arena_len = 0;
}

static inline size_t fc_hash(uint64_t ip, uint32_t pid, uint32_t tid, uint8_t cm)
{
	uint64_t h = ip ^ (((uint64_t)pid << 32 | tid) * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)cm << 56);
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ (h >> 31));
}

/* The entry of a key, or the free slot where it goes (gen != s->fc_gen). */
static inline struct frag_ent *fc_slot(struct script *s, uint64_t ip, uint32_t pid, uint32_t tid,
				       uint8_t cm)
{
	size_t mask = s->fc_cap - 1, j = fc_hash(ip, pid, tid, cm) & mask;
	for (;;) {
		struct frag_ent *e = &s->fc[j];
		if (e->gen != s->fc_gen ||
		    (e->ip == ip && e->pid == pid && e->tid == tid && e->cm == cm))
			return e;
		j = (j + 1) & mask;
	}
}

/* Make room for one more entry: double the table, or start over at the size limit. */
static void fc_make_room(struct script *s)
{
	if ((s->fc_nr + 1) * 2 <= s->fc_cap)
		return;
	struct frag_ent *old = s->fc, *n = NULL;
	size_t ocap = s->fc_cap;
	if (ocap < FC_MAX)
		n = calloc(ocap * 2, sizeof(*n));
	if (!n) {
		fc_flush(s);
		return;
	}
	s->fc = n;
	s->fc_cap = ocap * 2;
	uint32_t gen = s->fc_gen;
	s->fc_gen = 1;
	for (size_t i = 0; i < ocap; i++) {
		if (old[i].gen != gen)
			continue;
		struct frag_ent *e = fc_slot(s, old[i].ip, old[i].pid, old[i].tid, old[i].cm);
		*e = old[i];
		e->gen = 1;
	}
	free(old);
}

static inline char *put_lit(char *p, const char *lit, size_t n)
{
	memcpy(p, lit, n);
	return p + n;
}
#define PUT(p, lit) put_lit((p), (lit), sizeof(lit) - 1)

/*
 * An address as perf 6.1 prints it in a call chain: for a user map, the address within
 * the map (ip - map start + file offset: perf's map_ip), except in the maps perf maps
 * one to one (anonymous memory, the stack, the heap, SysV shared memory); kernel
 * addresses and addresses no map covers as they are. Call chains of frame pointers and
 * of DWARF unwinding print the same; the sample's own address is printed absolute.
 */
static uint64_t shown_ip(const struct symres *r, uint64_t ip)
{
	static const char *const identity[] = { "//anon", "/dev/zero", "/anon_hugepage",
						"[stack", "/SYSV", "[heap]", "/tmp/perf-" };
	if (!r->loc.dso || r->loc.kernel)
		return ip;
	for (size_t i = 0; i < sizeof(identity) / sizeof(identity[0]); i++)
		if (!strncmp(r->dso, identity[i], strlen(identity[i])))
			return ip;
	return ip - r->loc.map_start + r->loc.map_pgoff;
}

/*
 * The text of a frame: FR_FRAME is a JSON call-chain element ({"ip":...}), a text-mode
 * frame ("ip sym+off (dso)") or an -F frame; FR_TOP the sample's own ,"sym":...,"dso":...
 * (JSON). At most 96 + 6 * (sym, dso and srcline lengths) bytes.
 */
static char *build_frag(const struct script *s, int kind, uint64_t ip, const struct symres *r,
			const char *sl, char *p)
{
	size_t sn = r->sym ? strlen(r->sym) : 0, dn = strlen(r->dso);

	if (s->json) {
		if (kind == FR_FRAME) {
			p = PUT(p, "{\"ip\":\"0x");
			p = fmt_hex(p, ip);
			*p++ = '"';
			if (!s->m) {
				*p++ = '}';
				return p;
			}
		}
		p = PUT(p, ",\"sym\":");
		p = r->sym ? fmt_json_str(p, r->sym, sn) : PUT(p, "null");
		if (kind == FR_TOP && r->sym) {
			p = PUT(p, ",\"symoff\":");
			p = fmt_u64(p, r->off);
		}
		p = PUT(p, ",\"dso\":");
		p = fmt_json_str(p, r->dso, dn);
		if (kind == FR_FRAME)
			*p++ = '}';
		return p;
	}
	unsigned int F = s->frame_fields;
	if (kind == FR_CHAIN)
		ip = shown_ip(r, ip);
	if (F & SF_IP)
		p = fmt_hex16(p, ip);
	if (!s->m)
		return p;
	if (F & SF_SYM) {
		*p++ = ' ';
		p = r->sym ? put_lit(p, r->sym, sn) : PUT(p, "[unknown]");
		if ((F & SF_SYMOFF) && r->sym) {
			p = PUT(p, "+0x");
			p = fmt_hex(p, r->off);
		}
	}
	if ((F & SF_DSO) && !r->inlined) {
		p = PUT(p, " (");
		p = put_lit(p, r->dso, dn);
		*p++ = ')';
	}
	if (F & SF_SRCLINE) {
		p = PUT(p, "\n  ");
		p = sl ? put_lit(p, sl, strlen(sl)) : PUT(p, "??:0");
	}
	if (r->inlined)
		p = PUT(p, " (inlined)");
	return p;
}

/*
 * FR_UNW: the lines of a frame of DWARF unwinding, as perf 6.1 prints them (each
 * "\tip sym+off (dso)\n"): the address within its map (ip - map start + file offset)
 * and, when DWARF knows functions inlined there (ifr[0..ni), innermost first, then the
 * containing function), one line per function, "(inlined)" in place of the DSO for
 * those that are not the ELF symbol itself.
 */
static char *build_unwound(const struct script *s, uint64_t ip, const struct symres *r,
			   const struct pk_inline_frame *ifr, int ni, const char *sl, char *p)
{
	uint64_t shown = shown_ip(r, ip);
	for (int k = 0; k < (ni > 0 ? ni : 1); k++) {
		struct symres t = *r;
		if (ni > 0) {
			const char *fn = ifr[k].func ? ifr[k].func : "??";
			if (!pk_symbol__same_function(fn, r->sym)) {
				t.sym = fn;
				t.inlined = true;
			}
		}
		*p++ = '\t';
		p = build_frag(s, FR_FRAME, shown, &t, sl, p);
		*p++ = '\n';
	}
	return p;
}

/*
 * Append the text of frame (ip, cm) of sample smp to the output, from the cache or
 * resolved and formatted now (then cached). The key is what pk_machine__resolve looks
 * at: the thread (whose maps change only through the records that flush the cache) and
 * the address; kernel lookups ignore the thread. An address no map covers is formatted
 * every time instead: besides keeping garbage out, this never caches the answer for a
 * thread whose maps are still empty (the machine may later attach it to its process).
 */
static void put_frag(struct script *s, const struct pk_sample *smp, uint64_t ip, uint8_t cm,
		     int kind)
{
	uint32_t pid = smp->pid, tid = smp->tid;
	/* kernel lookups do not depend on the thread (pk_machine__resolve) */
	if (cm == PK_CPUMODE_KERNEL || cm == PK_CPUMODE_GUEST_KERNEL || cm == PK_CPUMODE_HYPERVISOR)
		pid = tid = UINT32_MAX;
	uint32_t mg = s->pgen[pid % PGEN_BUCKETS];
	struct frag_ent *e = fc_slot(s, ip, pid, tid, cm);
	if (e->gen == s->fc_gen && e->mgen == mg && e->len[kind] != UINT32_MAX) {
		ob_put(&s->ob, s->arena + e->off[kind], e->len[kind]);
		return;
	}

	struct symres r;
	char sb[1024];
	const char *sl = NULL;
	resolve_ip(s, smp, ip, cm, &r);
	if (kind != FR_TOP && !s->json && (s->frame_fields & SF_SRCLINE))
		sl = srcline(&r, sb, sizeof(sb));
	size_t bound = 96 + 6 * ((r.sym ? strlen(r.sym) : 0) + strlen(r.dso) + (sl ? strlen(sl) : 0));
	const struct pk_inline_frame *ifr = NULL;
	int ni = 0;
	if (kind == FR_UNW) {
		if (!s->no_inline && r.loc.dso && r.sym && !r.loc.kernel)
			ni = pk_dso__inline_names(r.loc.dso, r.loc.dso_addr, &ifr);
		ni = ni < 0 ? 0 : ni > 64 ? 64 : ni;
		size_t lmax = 0;
		for (int k = 0; k < ni; k++) {
			size_t l = ifr[k].func ? strlen(ifr[k].func) : 2;
			if (l > lmax)
				lmax = l;
		}
		bound = (size_t)(ni + 1) * (bound + 2 + 6 * lmax);
		if (bound > ARENA_MAX / 4)
			return; /* absurd names: nothing sensible to print */
	}
	if (!r.loc.dso && bound <= OB_CAP) {
		/* no map: the text is the address alone. Not cached, so that the garbage
		 * addresses of broken frame-pointer chains do not crowd out real frames. */
		char *p = ob_room(&s->ob, bound);
		p = kind == FR_UNW ? build_unwound(s, ip, &r, ifr, ni, sl, p)
				   : build_frag(s, kind, ip, &r, sl, p);
		s->ob.len = (size_t)(p - s->ob.buf);
		return;
	}
	if (bound > s->arena_cap - s->arena_len) {
		if (s->arena_len && s->arena_len + bound > ARENA_MAX)
			fc_flush(s);
		if (bound > s->arena_cap - s->arena_len) {
			size_t ncap = s->arena_cap ? s->arena_cap * 2 : (size_t)1 << 16;
			while (ncap < s->arena_len + bound)
				ncap *= 2;
			char *na = realloc(s->arena, ncap);
			if (!na) {
				s->ob.err = ENOMEM;
				return;
			}
			s->arena = na;
			s->arena_cap = ncap;
		}
	}
	if (e->gen != s->fc_gen || e->ip != ip || e->pid != pid || e->tid != tid || e->cm != cm) {
		/* new entry (the table may have been flushed or grown meanwhile) */
		fc_make_room(s);
		e = fc_slot(s, ip, pid, tid, cm);
		if (e->gen != s->fc_gen) {
			e->gen = s->fc_gen;
			e->ip = ip;
			e->pid = pid;
			e->tid = tid;
			e->cm = cm;
			for (int k = 0; k < FR_NR; k++)
				e->len[k] = UINT32_MAX;
			s->fc_nr++;
		}
	}
	if (e->mgen != mg) {
		/* formatted under maps that changed since: its texts are stale */
		for (int k = 0; k < FR_NR; k++)
			e->len[k] = UINT32_MAX;
		e->mgen = mg;
	}
	char *p0 = s->arena + s->arena_len;
	char *p = kind == FR_UNW ? build_unwound(s, ip, &r, ifr, ni, sl, p0)
				 : build_frag(s, kind, ip, &r, sl, p0);
	e->off[kind] = (uint32_t)s->arena_len;
	e->len[kind] = (uint32_t)(p - p0);
	s->arena_len += (size_t)(p - p0);
	ob_put(&s->ob, p0, (size_t)(p - p0));
}

/* ---- tracepoint fields ---- */

/* Tracepoint fields of a RAW sample as perf script prints them ("prev_comm=... ==> ..."). */
static const char *trace_text(struct script *s, const struct pk_data_attr *a,
			      const struct pk_sample *smp)
{
	size_t len;
	if (!a || !(smp->type & PERF_SAMPLE_RAW) || a->attr.attr.type != PERF_TYPE_TRACEPOINT || !smp->raw.size)
		return NULL;
	if (!s->trace && !(s->trace = script_trace__new(s->tracefs)))
		return NULL;
	const void *blob = pk_data_reader__tracing_data(s->rd, &len);
	return script_trace__text(s->trace, blob, len, a, smp);
}

/* ---- samples ---- */

static bool sample_count(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp,
			 uint64_t *count)
{
	int n;
	if (!(smp->type & PERF_SAMPLE_READ))
		return false;
	n = pk_sample__read_values(&a->layout, smp, s->vals, s->nvals);
	if (n <= 0)
		return false;
	if ((size_t)n > s->nvals) {
		struct pk_count_value *nv = realloc(s->vals, sizeof(*nv) * (size_t)n);
		if (!nv)
			return false;
		s->vals = nv;
		s->nvals = (size_t)n;
		n = pk_sample__read_values(&a->layout, smp, s->vals, s->nvals);
		if (n <= 0)
			return false;
	}
	*count = s->vals[0].val;
	/* in a group read, this event's own value is the one with the sample's id */
	for (int i = 0; i < n; i++)
		if (smp->id && s->vals[i].id == smp->id) {
			*count = s->vals[i].val;
			break;
		}
	return true;
}

/* "secs.usecs: " as perf prints times (printf("%12s: ") of "%lu.%06lu"): at most 30 bytes */
static inline char *fmt_time(char *p, uint64_t t)
{
	p = fmt_u64_pad(p, t / (uint64_t)1000000000, 5, ' ');
	*p++ = '.';
	p = fmt_u64_pad(p, (t % (uint64_t)1000000000) / 1000, 6, '0');
	*p++ = ':';
	*p++ = ' ';
	return p;
}

/* the frames of a sample, one per line, each after `pre` */
static void put_frames(struct script *s, const struct pk_sample *smp, int n, char pre)
{
	for (int i = 0; i < n; i++) {
		if (!s->json && (s->chain[i].flags & PK_CHAIN_UNWOUND) && s->m && pre == '\t') {
			put_frag(s, smp, s->chain[i].ip, PK_CPUMODE_USER, FR_UNW);
			continue;
		}
		ob_putc(&s->ob, pre);
		put_frag(s, smp, s->chain[i].ip, s->chain[i].cpumode,
			 !s->json && pre == '\t' ? FR_CHAIN : FR_FRAME);
		ob_putc(&s->ob, '\n');
	}
}

/*
 * The fields printed for a sample of event a, as perf script chooses them: the -F list;
 * or the defaults of the event's type (tracepoints: comm, tid, cpu, time, event and
 * fields, plus the frames when the event records call chains and they are shown;
 * others: comm, tid, cpu, time, event, ip, sym+off, dso, period) with the +/- changes
 * of -F, less the fields the sample type lacks that -F did not ask for (those -F asks
 * for were checked by check_fields). *user gets the fields -F asked for.
 */
static unsigned int sample_fields(const struct script *s, const struct pk_data_attr *a,
				  uint64_t st, unsigned int *user)
{
	unsigned int F, drop = 0;
	if (s->fmode == FM_SET) {
		*user = s->fields;
		/* tracepoint fields only for tracepoints (perf ignores 'trace' for the rest) */
		if (!a || a->attr.attr.type != PERF_TYPE_TRACEPOINT)
			return s->fields & ~SF_TRACE;
		return s->fields;
	}
	if (a && a->attr.attr.type == PERF_TYPE_TRACEPOINT) {
		F = SF_DEFAULT_TP;
		/* (perf adds them only when -F did not touch the fields at all) */
		if ((a->attr.attr.sample_type & PERF_SAMPLE_CALLCHAIN) && !s->hide_cg &&
		    s->fmode == FM_DEFAULT)
			F |= SF_FRAME_DEFAULT;
	} else {
		F = SF_DEFAULT;
	}
	*user = s->fmode == FM_CHANGE ? s->fields : 0;
	F = (F | *user) & ~s->fields_rm;
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

static const char *field_name(unsigned int f);

/*
 * A field -F asks for that the samples of event a cannot have (no PERF_SAMPLE_CPU for
 * cpu, ...) is an error, as in perf script, rather than a column of zeros. Returns 0 or
 * -EINVAL after printing the error.
 */
static int check_fields(struct script *s, const struct pk_data_attr *a)
{
	unsigned int user = s->fmode == FM_SET ? s->fields : s->fmode == FM_CHANGE ? s->fields : 0;
	uint64_t st = a->attr.attr.sample_type;
	char nbuf[64];
	unsigned int u2, F = sample_fields(s, a, st, &u2);
	if ((F & SF_SYMOFF) && !(F & SF_SYM)) {
		pk_tool_error("cannot print field 'symoff' without 'sym': add sym, or leave "
			      "symoff out (-F -sym,-symoff)");
		return -EINVAL;
	}
	for (unsigned int f = 1; f && f <= user; f <<= 1) {
		const char *what = NULL, *how = NULL;
		uint64_t need = (user & f) ? field_needs(f, &what, &how) : 0;
		if (need && !(st & need)) {
			pk_tool_error("cannot print field '%s': the samples of event '%s' have no "
				      "PERF_SAMPLE_%s (%s, or leave the field out)",
				      field_name(f), event_name(a, nbuf, sizeof(nbuf)), what, how);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * When the file's attrs are first known or grow (a pipe's arrive in its stream): the
 * width perf pads event names to (the longest name), and the check of -F against the
 * new attrs. Returns 0 or -EINVAL (error printed).
 */
static int attrs_update(struct script *s)
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
		if (i >= s->name_width_attrs && a && check_fields(s, a)) {
			s->fields_failed = true;
			return -EINVAL;
		}
	}
	s->name_width_attrs = n;
	return 0;
}

/* does the address of a sample of this event name data (perf: page faults) */
static bool addr_has_sym(const struct pk_data_attr *a)
{
	return a && a->attr.attr.type == PERF_TYPE_SOFTWARE &&
	       (a->attr.attr.config == PERF_COUNT_SW_PAGE_FAULTS ||
		a->attr.attr.config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
		a->attr.attr.config == PERF_COUNT_SW_PAGE_FAULTS_MAJ);
}

/*
 * The start of a text line, as perf script prints it for samples and (with
 * --show-switch-events) switch records: "comm tid [cpu] time: ", each field followed by
 * a space. The comm is padded to 16 columns, except on lines followed by a call chain.
 * At most 80 bytes.
 */
static char *put_start(struct script *s, char *p, unsigned int F, bool chain, uint32_t pid,
		       uint32_t tid, uint32_t cpu, uint64_t time)
{
	if (F & SF_COMM) {
		const char *c = comm_of(s, tid);
		size_t n = strnlen(c, 16);
		p = fmt_str_pad(p, c, n, chain ? 0 : 16);
		*p++ = ' ';
	}
	if ((F & SF_PID) && (F & SF_TID)) {
		p = fmt_pid_pad(p, pid, 5);
		*p++ = '/';
		char *q = p;
		p = fmt_pid_pad(p, tid, 0);
		while (p - q < 5)
			*p++ = ' ';
		*p++ = ' ';
	} else if (F & (SF_PID | SF_TID)) {
		p = fmt_pid_pad(p, F & SF_PID ? pid : tid, 5);
		*p++ = ' ';
	}
	if (F & SF_CPU) {
		*p++ = '[';
		p = fmt_u64_pad(p, cpu, 3, '0');
		p = PUT(p, "] ");
	}
	if (F & SF_TIME)
		p = fmt_time(p, time);
	return p;
}

/* " sym+off (dso)" of a data address, as the fields ask (perf: only for page faults):
 * among the process's maps, data mappings (record -d) included, then the kernel's */
static void put_addr_sym(struct script *s, const struct pk_sample *smp, unsigned int F)
{
	struct symres r = { .dso = "[unknown]" };
	pk_machine__resolve_data(s->m, smp->pid, smp->tid, smp->addr, PK_CPUMODE_UNKNOWN, &r.loc);
	r.sym = r.loc.sym;
	r.off = r.loc.sym_off;
	if (r.loc.dso_name)
		r.dso = r.loc.dso_name;
	if (F & SF_SYM) {
		ob_putc(&s->ob, ' ');
		ob_puts(&s->ob, r.sym ? r.sym : "[unknown]");
		if ((F & SF_SYMOFF) && r.sym)
			ob_printf(&s->ob, "+0x%" PRIx64, r.off);
	}
	if (F & SF_DSO) {
		ob_puts(&s->ob, " (");
		ob_puts(&s->ob, r.dso);
		ob_putc(&s->ob, ')');
	}
}

/*
 * A sample as a text line, field by field as perf script 6.1 prints them (each field
 * followed by a space: "comm tid [cpu] time: period event: "), then the tracepoint
 * fields, the data address, and the sample's address (" ip sym+off (dso)") or, when
 * call chains are shown, a newline and one frame per line.
 */
static void print_fields(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp,
			 const char *name, bool has_count, uint64_t count)
{
	struct obuf *o = &s->ob;
	unsigned int user, F = sample_fields(s, a, smp->type, &user);
	if (attrs_update(s))
		return;
	if (!F)
		return; /* nothing to print for this event (perf prints no line either) */
	bool chain = (F & SF_IP) && (smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) &&
		     !s->hide_cg;
	char *p = ob_room(o, 128);
	p = put_start(s, p, F, chain, smp->pid, smp->tid, smp->cpu, smp->time);
	if (F & SF_PERIOD) {
		/* without PERF_SAMPLE_PERIOD (-c N) every sample stands for the fixed period */
		uint64_t period = (smp->type & PERF_SAMPLE_PERIOD) || !a ? smp->period
			: a->attr.attr.freq ? 0 : a->attr.attr.sample_period;
		p = fmt_u64_pad(p, period, 10, ' ');
		*p++ = ' ';
	}
	o->len = (size_t)(p - o->buf);
	if (F & SF_EVENT) {
		int w = s->name_width;
		size_t n = strlen(name);
		for (size_t k = n; k < (size_t)w; k++)
			ob_putc(o, ' ');
		ob_put(o, name, n);
		ob_put(o, ": ", 2);
		if (has_count && !s->read_line && s->fmode == FM_DEFAULT) {
			p = ob_room(o, 32);
			p = PUT(p, "count ");
			p = fmt_u64(p, count);
			p = PUT(p, ": ");
			o->len = (size_t)(p - o->buf);
		}
	}
	if (F & SF_TRACE) {
		const char *tr = trace_text(s, a, smp);
		if (tr)
			ob_puts(o, tr);
	}
	if (F & SF_ADDR) {
		p = ob_room(o, 16);
		o->len = (size_t)(fmt_hex16(p, smp->addr) - o->buf);
		if (s->m && addr_has_sym(a))
			put_addr_sym(s, smp, F);
	}
	if (!(F & SF_IP)) {
		ob_putc(o, '\n');
		return;
	}
	if (chain) {
		ob_putc(o, '\n');
		put_frames(s, smp, sample_chain(s, smp), '\t');
		ob_putc(o, '\n');
		return;
	}
	ob_putc(o, ' ');
	put_frag(s, smp, smp->ip, smp->cpumode, FR_FRAME);
	ob_putc(o, '\n');
}

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

/*
 * -F: a list of fields ("comm,tid,ip"), or of changes to the default fields
 * ("+addr,-period"); as in perf script, the two forms do not mix.
 */
static int parse_fields(struct script *s, const char *spec)
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
			pk_tool_error("cannot mix fields and +/- changes in '%s': give either the "
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
			pk_tool_error("unknown field '%s'", w);
			free(dup);
			return -EINVAL;
		}
		if (sign == '-')
			rm |= field_tab[i].f == (SF_SYMOFF | SF_SYM) ? SF_SYMOFF : field_tab[i].f;
		else
			set |= field_tab[i].f;
	}
	free(dup);
	s->fmode = mode;
	s->fields = set & ~rm;
	s->fields_rm = rm;
	return 0;
}

static void print_sample_json(struct script *s, const struct pk_sample *smp, const char *name,
			      bool has_count, uint64_t count, const char *tr)
{
	struct obuf *o = &s->ob;
	ob_puts(o, "{\"type\":\"SAMPLE\",\"event\":");
	ob_json_str(o, name);
	/* at most 9 fields of <= 40 bytes, a comm of <= 15 escaped bytes and a cpumode name */
	char *p = ob_room(o, 512);
	if (smp->type & PERF_SAMPLE_IP) {
		p = PUT(p, ",\"ip\":\"0x");
		p = fmt_hex(p, smp->ip);
		*p++ = '"';
	}
	if (smp->type & PERF_SAMPLE_TID) {
		const char *c = comm_of(s, smp->tid);
		p = PUT(p, ",\"pid\":");
		p = fmt_pid_pad(p, smp->pid, 0);
		p = PUT(p, ",\"tid\":");
		p = fmt_pid_pad(p, smp->tid, 0);
		p = PUT(p, ",\"comm\":");
		p = fmt_json_str(p, c, strlen(c));
	}
	if (smp->type & PERF_SAMPLE_CPU) {
		p = PUT(p, ",\"cpu\":");
		p = fmt_u64(p, smp->cpu);
	}
	if (smp->type & PERF_SAMPLE_TIME) {
		p = PUT(p, ",\"time\":");
		p = fmt_u64(p, smp->time);
	}
	if (smp->type & PERF_SAMPLE_PERIOD) {
		p = PUT(p, ",\"period\":");
		p = fmt_u64(p, smp->period);
	}
	if (has_count) {
		p = PUT(p, ",\"count\":");
		p = fmt_u64(p, count);
	}
	if (smp->type & PERF_SAMPLE_ADDR) {
		p = PUT(p, ",\"addr\":\"0x");
		p = fmt_hex(p, smp->addr);
		*p++ = '"';
	}
	const char *cmn = pk_cpumode__name((enum pk_cpumode)smp->cpumode);
	p = PUT(p, ",\"cpumode\":\"");
	p = put_lit(p, cmn, strnlen(cmn, 64));
	*p++ = '"';
	if (smp->type & PERF_SAMPLE_RAW) {
		p = PUT(p, ",\"raw_size\":");
		p = fmt_u64(p, smp->raw.size);
	}
	if (smp->type & PERF_SAMPLE_STACK_USER) {
		p = PUT(p, ",\"user_stack_size\":");
		p = fmt_u64(p, smp->stack_user.dyn_size);
	}
	o->len = (size_t)(p - o->buf);
	if (s->m && (smp->type & PERF_SAMPLE_IP))
		put_frag(s, smp, smp->ip, smp->cpumode, FR_TOP);
	if (tr) {
		ob_puts(o, ",\"trace\":");
		ob_json_str(o, tr);
	}
	if ((smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) && !s->hide_cg) {
		int n = sample_chain(s, smp);
		ob_puts(o, ",\"callchain\":[");
		for (int i = 0; i < n; i++) {
			if (i)
				ob_putc(o, ',');
			put_frag(s, smp, s->chain[i].ip, s->chain[i].cpumode, FR_FRAME);
		}
		ob_putc(o, ']');
	}
	ob_put(o, "}\n", 2);
}

static void print_sample(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp)
{
	char nbuf[64];
	const char *name = event_name(a, nbuf, sizeof(nbuf));
	uint64_t count = 0;
	bool has_count = sample_count(s, a, smp, &count);

	if (s->json) {
		print_sample_json(s, smp, name, has_count, count, trace_text(s, a, smp));
		return;
	}
	print_fields(s, a, smp, name, has_count, count);
}

/*
 * A sample that read its counters (PERF_SAMPLE_READ with ids in the read format: perf
 * record's leader sampling "{a,b}:S", or :S on a single event) is printed as perf script
 * does: once per counter it read (with PERF_FORMAT_GROUP the whole group, in the kernel's
 * order, leader first), under that counter's event, with the counter's growth since its
 * previous read (per id: per event, thread and CPU) as the period. A counter that did not
 * move, or whose id no attr lists, gets no line. Returns false when the sample is not of
 * this kind (the caller prints it as is).
 */
static bool print_read_sample(struct script *s, const struct pk_data_attr *a,
			      const struct pk_sample *smp)
{
	int n;

	if (!a || !a->layout_ok || !(smp->type & PERF_SAMPLE_READ) ||
	    !(a->layout.read_format & PERF_FORMAT_ID))
		return false;
	if (!s->rdelta && !(s->rdelta = pk_read_delta__new()))
		return false;
	n = pk_sample__read_values(&a->layout, smp, s->rvals, s->nrvals);
	if (n > 0 && (size_t)n > s->nrvals) {
		struct pk_count_value *nv = realloc(s->rvals, sizeof(*nv) * (size_t)n);
		if (!nv)
			return false;
		s->rvals = nv;
		s->nrvals = (size_t)n;
		n = pk_sample__read_values(&a->layout, smp, s->rvals, s->nrvals);
	}
	if (n <= 0)
		return false;
	for (int i = 0; i < n; i++) {
		const struct pk_count_value *v = &s->rvals[i];
		const struct pk_data_attr *m = pk_data_reader__attr_by_id(s->rd, v->id);
		uint64_t delta;
		if (!m || !m->layout_ok || pk_read_delta__update(s->rdelta, v->id, v->val, &delta))
			continue;
		if (!delta)
			continue;
		struct pk_sample c = *smp;
		c.id = v->id;
		c.period = delta;
		s->read_line = true;
		print_sample(s, m, &c);
		s->read_line = false;
	}
	return true;
}

/* ---- other records ---- */

static void print_sid(struct obuf *f, const struct pk_record *r, bool json)
{
	if (!r->has_sid)
		return;
	if (json) {
		if (r->sid.type & PERF_SAMPLE_TID)
			ob_printf(f, ",\"sample_pid\":%d,\"sample_tid\":%d", (int32_t)r->sid.pid,
				  (int32_t)r->sid.tid);
		if (r->sid.type & PERF_SAMPLE_TIME)
			json_u64(f, "time", r->sid.time);
		if (r->sid.type & PERF_SAMPLE_CPU)
			json_u64(f, "cpu", r->sid.cpu);
		if (r->sid.type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
			json_u64(f, "id", r->sid.id);
	} else if (r->sid.type & PERF_SAMPLE_TIME) {
		ob_printf(f, " %5" PRIu64 ".%06" PRIu64 ":", r->sid.time / (uint64_t)1000000000,
			(r->sid.time % (uint64_t)1000000000) / 1000);
	}
}

/* key/value output shared by text and JSON */
static void kv_u64(struct script *s, const char *k, uint64_t v)
{
	if (s->json)
		json_u64(&s->ob, k, v);
	else
		ob_printf(&s->ob, " %s=%" PRIu64, k, v);
}

static void kv_pid(struct script *s, const char *k, uint32_t v)
{
	if (s->json)
		ob_printf(&s->ob, ",\"%s\":%d", k, (int32_t)v);
	else
		ob_printf(&s->ob, " %s=%d", k, (int32_t)v);
}

static void kv_hex(struct script *s, const char *k, uint64_t v)
{
	if (s->json)
		json_hex(&s->ob, k, v, true);
	else
		ob_printf(&s->ob, " %s=0x%" PRIx64, k, v);
}

static void kv_str(struct script *s, const char *k, const char *v)
{
	if (s->json) {
		ob_printf(&s->ob, ",\"%s\":", k);
		ob_json_str(&s->ob, v);
	} else {
		ob_printf(&s->ob, " %s=%s", k, v);
	}
}

static void kv_bool(struct script *s, const char *k, bool v)
{
	if (s->json)
		ob_printf(&s->ob, ",\"%s\":%s", k, v ? "true" : "false");
	else if (v)
		ob_printf(&s->ob, " %s", k);
}

/*
 * A context switch record as perf script --show-switch-events prints it: the start of a
 * sample line (comm and tid of the task switching, cpu, time: from the record's
 * sample_id trailer, fields as for the event's samples), then "PERF_RECORD_SWITCH IN"
 * or "OUT" or "OUT preempt", padded to 11 columns, and for a CPU-wide record the task
 * switched to or from ("next pid/tid: 1234/1234 ").
 */
static void print_switch(struct script *s, const struct pk_data_attr *a, const struct pk_record *r)
{
	unsigned int user;
	uint64_t st = r->has_sid ? r->sid.type : 0;
	unsigned int F = sample_fields(s, a, st, &user);
	/* the comm is as wide as on the event's sample lines */
	bool chain = a && !s->hide_cg &&
		     (sample_fields(s, a, a->attr.attr.sample_type, &user) & SF_IP) &&
		     (a->attr.attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER));
	char *p = ob_room(&s->ob, 192);
	p = put_start(s, p, F, chain, r->sid.pid, r->sid.tid, r->sid.cpu, r->sid.time);
	p = r->type == PERF_RECORD_SWITCH ? PUT(p, "PERF_RECORD_SWITCH ")
					  : PUT(p, "PERF_RECORD_SWITCH_CPU_WIDE ");
	p = !r->sw.out ? PUT(p, "IN         ") : r->sw.preempt ? PUT(p, "OUT preempt")
							  : PUT(p, "OUT        ");
	if (r->type == PERF_RECORD_SWITCH_CPU_WIDE) {
		p = r->sw.out ? PUT(p, "  next pid/tid: ") : PUT(p, "  prev pid/tid: ");
		p = fmt_pid_pad(p, r->sw.next_prev_pid, 5);
		*p++ = '/';
		char *q = p;
		p = fmt_pid_pad(p, r->sw.next_prev_tid, 0);
		while (p - q < 5)
			*p++ = ' ';
	}
	*p++ = '\n';
	s->ob.len = (size_t)(p - s->ob.buf);
}

static void print_record(struct script *s, const struct pk_record *r)
{
	struct obuf *f = &s->ob;
	const char *tname = pk_record_type__name(r->type);
	char tb[32];

	if (!tname) {
		snprintf(tb, sizeof(tb), "%u", r->type);
		tname = tb;
	}
	if (s->json) {
		ob_printf(f, "{\"type\":\"%s\"", tname);
	} else {
		ob_printf(f, "%16s", "");
		print_sid(f, r, false);
		ob_printf(f, " PERF_RECORD_%s", tname);
	}
	switch (r->type) {
	case PERF_RECORD_MMAP:
		kv_pid(s, "pid", r->mmap.pid);
		kv_pid(s, "tid", r->mmap.tid);
		kv_hex(s, "addr", r->mmap.addr);
		kv_hex(s, "len", r->mmap.len);
		kv_hex(s, "pgoff", r->mmap.pgoff);
		kv_bool(s, "data", r->mmap.data);
		kv_str(s, "filename", r->mmap.filename);
		break;
	case PERF_RECORD_MMAP2:
		kv_pid(s, "pid", r->mmap2.pid);
		kv_pid(s, "tid", r->mmap2.tid);
		kv_hex(s, "addr", r->mmap2.addr);
		kv_hex(s, "len", r->mmap2.len);
		kv_hex(s, "pgoff", r->mmap2.pgoff);
		if (r->mmap2.has_build_id) {
			char hex[2 * 20 + 1];
			for (unsigned i = 0; i < r->mmap2.build_id_size && i < 20; i++)
				snprintf(hex + 2 * i, 3, "%02x", r->mmap2.build_id[i]);
			hex[2 * (r->mmap2.build_id_size < 20 ? r->mmap2.build_id_size : 20)] = 0;
			kv_str(s, "build_id", hex);
		} else {
			kv_u64(s, "maj", r->mmap2.maj);
			kv_u64(s, "min", r->mmap2.min);
			kv_u64(s, "ino", r->mmap2.ino);
		}
		kv_u64(s, "prot", r->mmap2.prot);
		kv_u64(s, "flags", r->mmap2.flags);
		kv_bool(s, "data", r->mmap2.data);
		kv_str(s, "filename", r->mmap2.filename);
		break;
	case PERF_RECORD_LOST:
		kv_u64(s, "id", r->lost.id);
		kv_u64(s, "lost", r->lost.lost);
		break;
	case PERF_RECORD_COMM:
		kv_pid(s, "pid", r->comm.pid);
		kv_pid(s, "tid", r->comm.tid);
		kv_str(s, "comm", r->comm.comm);
		kv_bool(s, "exec", r->comm.exec);
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		kv_pid(s, "pid", r->task.pid);
		kv_pid(s, "ppid", r->task.ppid);
		kv_pid(s, "tid", r->task.tid);
		kv_pid(s, "ptid", r->task.ptid);
		kv_u64(s, "task_time", r->task.time);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		kv_u64(s, "throttle_time", r->throttle.time);
		kv_u64(s, "event_id", r->throttle.id);
		kv_u64(s, "stream_id", r->throttle.stream_id);
		break;
	case PERF_RECORD_READ:
		kv_pid(s, "pid", r->read.pid);
		kv_pid(s, "tid", r->read.tid);
		kv_u64(s, "nr", r->read.nr);
		break;
	case PERF_RECORD_AUX:
		kv_u64(s, "aux_offset", r->aux.aux_offset);
		kv_u64(s, "aux_size", r->aux.aux_size);
		kv_hex(s, "flags", r->aux.flags);
		break;
	case PERF_RECORD_ITRACE_START:
		kv_pid(s, "pid", r->itrace_start.pid);
		kv_pid(s, "tid", r->itrace_start.tid);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		kv_u64(s, "lost", r->lost_samples.lost);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		kv_bool(s, "out", r->sw.out);
		kv_bool(s, "preempt", r->sw.preempt);
		if (r->type == PERF_RECORD_SWITCH_CPU_WIDE) {
			kv_u64(s, "next_prev_pid", r->sw.next_prev_pid);
			kv_u64(s, "next_prev_tid", r->sw.next_prev_tid);
		}
		break;
	case PERF_RECORD_NAMESPACES:
		kv_pid(s, "pid", r->namespaces.pid);
		kv_pid(s, "tid", r->namespaces.tid);
		kv_u64(s, "nr_namespaces", r->namespaces.nr);
		break;
	case PERF_RECORD_KSYMBOL:
		kv_hex(s, "addr", r->ksymbol.addr);
		kv_u64(s, "len", r->ksymbol.len);
		kv_u64(s, "ksym_type", r->ksymbol.ksym_type);
		kv_bool(s, "unregister", r->ksymbol.unregister);
		kv_str(s, "name", r->ksymbol.name);
		break;
	case PERF_RECORD_BPF_EVENT:
		kv_u64(s, "bpf_type", r->bpf_event.type);
		kv_u64(s, "bpf_id", r->bpf_event.id);
		break;
	case PERF_RECORD_CGROUP:
		kv_u64(s, "cgroup_id", r->cgroup.id);
		kv_str(s, "path", r->cgroup.path);
		break;
	case PERF_RECORD_TEXT_POKE:
		kv_hex(s, "addr", r->text_poke.addr);
		kv_u64(s, "old_len", r->text_poke.old_len);
		kv_u64(s, "new_len", r->text_poke.new_len);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		kv_u64(s, "hw_id", r->aux_output_hw_id.hw_id);
		break;
	default:
		break;
	}
	if (s->json) {
		print_sid(f, r, true);
		ob_puts(f, "}\n");
	} else {
		ob_putc(f, '\n');
	}
}

static void print_user_record(struct script *s, const struct pk_data_event *ev)
{
	const char *name = user_record_name(ev->hdr->type);
	if (s->json) {
		if (name)
			ob_printf(&s->ob, "{\"type\":\"%s\"", name);
		else
			ob_printf(&s->ob, "{\"type\":\"%u\"", ev->hdr->type);
		json_u64(&s->ob, "size", ev->hdr->size);
		ob_puts(&s->ob, "}\n");
	} else {
		if (name)
			ob_printf(&s->ob, "%16s PERF_RECORD_%s size=%u\n", "", name, ev->hdr->size);
		else
			ob_printf(&s->ob, "%16s PERF_RECORD_%u size=%u\n", "", ev->hdr->type, ev->hdr->size);
	}
}

/* records that change the machine model, and with it the symbols of cached frames */
static bool changes_maps(uint32_t type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 || type == PERF_RECORD_COMM ||
	       type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT;
}

/*
 * A record that changes the machine model makes cached frame texts stale: those of its
 * process (its pid's bucket of pgen), or all of them when it may change the kernel's maps
 * (kernel lookups ignore the process). Emptying the whole cache at every such record
 * made it nearly useless on system-wide files: a recording during a compile had one
 * MMAP2, COMM, FORK or EXIT every 16 samples, and each frame was resolved, shortened
 * and formatted again (script 0.27x of perf script's time there).
 */
static void maps_changed(struct script *s, const struct pk_record *r)
{
	uint32_t pid;
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		pid = r->type == PERF_RECORD_MMAP ? r->mmap.pid : r->mmap2.pid;
		if (r->cpumode != PK_CPUMODE_USER || pid == UINT32_MAX) {
			fc_flush(s);
			return;
		}
		break;
	case PERF_RECORD_COMM:
		pid = r->comm.pid;
		break;
	default: /* FORK, EXIT */
		pid = r->task.pid;
		break;
	}
	s->pgen[pid % PGEN_BUCKETS]++;
}

/* A record the session could not decode: an unknown type (shown with -a) or a malformed
 * one (a warning, after the lines before it). */
static int on_undecoded(struct script *s, const struct pk_data_event *ev)
{
	const struct perf_event_header *h = ev->hdr;
	struct pk_record r;
	const char *bad = NULL;
	int d = pk_record__decode(ev->attr && ev->attr->layout_ok ? &ev->attr->layout : NULL, h,
				  &r, &bad);
	if (d == PK_RECORD_SKIPPED) {
		if (s->all) {
			if (s->json)
				ob_printf(&s->ob, "{\"type\":\"%u\",\"size\":%u}\n", h->type, h->size);
			else
				ob_printf(&s->ob, "%16s PERF_RECORD_%u size=%u\n", "", h->type, h->size);
		}
	} else if (d < 0) {
		ob_flush(&s->ob);
		pk_tool_warn("record of type %u at offset %#" PRIx64 " is malformed (%s); skipped",
			     h->type, ev->offset, bad ? bad : pk_strerror(d));
	}
	return 0;
}

/* After each record: stop on a failed write or a field the file lacks */
static int record_done(struct script *s)
{
	if (s->line_flush)
		ob_flush(&s->ob);
	if (s->ob.err)
		return -EIO;
	return s->fields_failed ? -EINVAL : 0;
}

static int on_sample(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct script *s = ctx;
	if (!r)
		return on_undecoded(s, ev);
	s->nr_samples++;
	if (!print_read_sample(s, ev->attr, &r->sample))
		print_sample(s, ev->attr, &r->sample);
	return record_done(s);
}

/* Every other record (the session gave it to the machine already) */
static int on_record(void *ctx, const struct pk_data_event *ev, const struct pk_record *r)
{
	struct script *s = ctx;
	if (ev->hdr->type >= 64) {
		if (s->all)
			print_user_record(s, ev);
		return 0;
	}
	if (!r)
		return on_undecoded(s, ev);
	if (changes_maps(r->type) && s->fc_nr)
		maps_changed(s, r);
	if (r->type == PERF_RECORD_COMM) {
		comm_set(s, r->comm.tid, r->comm.comm);
	} else if (r->type == PERF_RECORD_FORK) {
		struct comm_slot *parent = comm_find(s, r->task.ptid, false);
		if (parent && !comm_find(s, r->task.tid, false)) {
			char c[16];
			memcpy(c, parent->comm, sizeof(c));
			comm_set(s, r->task.tid, c);
		}
	}
	if ((r->type == PERF_RECORD_SWITCH || r->type == PERF_RECORD_SWITCH_CPU_WIDE) &&
	    (s->show_switch || s->all) && !s->json)
		print_switch(s, ev->attr, r);
	else if (s->all)
		print_record(s, r);
	return record_done(s);
}

/* Every record through the session: in time order (or file order), the machine model
 * kept by it (none with --no-symbols), read on a second thread for a file. */
static int process(struct script *s, struct pk_data_reader *rd)
{
	PK_OPTS(pk_session_opts, so, .reader_thread = pk_tool_threads_allowed(),
		.file_order = s->file_order, .no_machine = s->no_syms);
	struct pk_session *ses = pk_session__new(rd, &so);
	if (!ses)
		return -errno;
	s->m = pk_session__machine(ses);
	PK_OPTS(pk_session_ops, ops, .sample = on_sample, .other = on_record);
	int err = pk_session__process(ses, &ops, s);
	s->m = NULL;
	pk_session__free(ses);
	return err;
}

/* Write what is buffered; a failed write is an error (EPIPE: the reader went away, quietly). */
static int finish_output(struct script *s, int status)
{
	ob_flush(&s->ob);
	if (!s->ob.err || s->ob.err == EPIPE)
		return status;
	pk_tool_error("cannot write output: %s", strerror(s->ob.err));
	return 1;
}

int cmd_script(int argc, char **argv)
{
	struct script s = { .json = false };
	const char *input = "perf.data";
	struct pk_data_reader *rd;
	int c, err, status;

	pk_tool_setup_log(0);
	opterr = 0;
	optind = 1;
	while ((c = pk_tool_getopt(argc, argv, opts, 0)) != -1) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'j': s.json = true; break;
		case 'a': s.all = true; break;
		case 'G': s.hide_cg = true; break;
		case OPT_NO_SYMBOLS: s.no_syms = true; break;
		case OPT_FILE_ORDER: s.file_order = true; break;
		case OPT_TRACEFS: s.tracefs = optarg; break;
		case OPT_NO_INLINE: s.no_inline = true; break;
		case OPT_SHOW_SWITCH: s.show_switch = true; break;
		case 'F':
			if (parse_fields(&s, optarg))
				return 129;
			break;
		default:
			pk_tool_error("unknown or incomplete option '%s'", argv[optind - 1]);
			pk_tool_print_usage(stderr, &cmd_script_help);
			return 129;
		}
	}
	if (optind < argc) {
		pk_tool_error("unexpected argument '%s'", argv[optind]);
		return 129;
	}
	/* the frame fields do not depend on the event (the frame text cache relies on it) */
	s.frame_fields = s.fmode == FM_SET ? s.fields & SF_FRAME_MASK
		: ((SF_FRAME_DEFAULT | s.fields) & ~s.fields_rm) & SF_FRAME_MASK;
	if (ob_init(&s.ob, STDOUT_FILENO) || fc_init(&s)) {
		pk_tool_error("cannot allocate the output buffer: %s", strerror(ENOMEM));
		ob_release(&s.ob);
		free(s.fc);
		return 1;
	}
	s.line_flush = isatty(STDOUT_FILENO);
	PK_OPTS(pk_data_reader_opts, ro);
	ro.no_mmap = !pk_tool_read_mmap();
	rd = pk_data_reader__open(input, &ro);
	if (!rd) {
		pk_tool_error("cannot read '%s': %s", input, pk_strerror(errno));
		ob_release(&s.ob);
		free(s.fc);
		return 1;
	}
	s.rd = rd;
	if (pk_data_reader__truncated(rd))
		pk_tool_warn("'%s' was not finalised (recording interrupted?); reading what is there",
			     input);
	err = s.json ? 0 : attrs_update(&s);
	if (!err)
		err = process(&s, rd);
	if (s.fields_failed) {
		/* -F asks for a field the file lacks: check_fields said so */
		finish_output(&s, 1);
		status = 1;
	} else if (err < 0 && err != -EIO) {
		ob_flush(&s.ob);
		if (err == -PK_ERR_TRUNCATED)
			pk_tool_error("'%s' ended early: %s (see above)", input,
				      pk_strerror(err));
		else
			pk_tool_error("'%s' is corrupt: %s", input, pk_strerror(err));
		finish_output(&s, 1);
		status = 1;
	} else {
		status = finish_output(&s, 0);
	}
	script_trace__free(s.trace);
	pk_data_reader__free(rd);
	free(s.comms);
	free(s.vals);
	free(s.rvals);
	pk_read_delta__free(s.rdelta);
	free(s.fc);
	free(s.arena);
	ob_release(&s.ob);
	return status;
}
