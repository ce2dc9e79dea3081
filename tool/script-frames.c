/* SPDX-License-Identifier: MIT */
/* tool/script-frames.c - perfkit script: addresses resolved to symbols, and the frame text
 * cache (each distinct frame formatted once per map generation of the machine) */
#include "script.h"

/* ---- symbols ---- */


static void resolve_ip(struct script *s, const struct pk_sample *smp, uint64_t ip, uint8_t cm,
		       struct symres *r)
{
	r->sym = NULL;
	r->sn = 0;
	r->dn = 9;
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
	r->sn = r->sym ? strlen(r->sym) : 0;
	r->off = r->loc.sym_off;
	if (r->loc.dso_name) {
		r->dso = r->loc.dso_name;
		r->dn = strlen(r->dso);
	}
}

/*
 * The srcline of a frame as perf 6.1 script prints it: "file.c:12" (the file's base
 * name); for an object addr2line is not asked about (the kernel's, bracketed names, JIT
 * maps) or has no answer for, the object's short name and the address, "dso[addr]";
 * nothing (NULL) outside every map, or where addr2line names a function but no file
 * (perf's "??:0", which it leaves out).
 */
static const char *srcline(struct symres *r, char *buf, size_t len)
{
	const char *file;
	unsigned int line;
	if (!r->loc.dso)
		return NULL;
	const char *name = pk_dso__name(r->loc.dso);
	int err = -ENOENT;
	if (!r->loc.kernel && name && name[0] != '[' && strncmp(name, "/tmp/perf-", 10))
		err = pk_dso__srcline(r->loc.dso, r->loc.dso_addr, &file, &line);
	if (err == -ENODATA)
		return NULL;
	if (err) {
		const char *sn = pk_dso__short_name(r->loc.dso);
		snprintf(buf, len, "%s[%" PRIx64 "]", sn ? sn : "", r->loc.dso_addr);
		return buf;
	}
	const char *b = strrchr(file, '/');
	snprintf(buf, len, "%s:%u", b ? b + 1 : file, line);
	return buf;
}

/* The chain as recorded (markers dropped), or just the ip: without symbols, or when the
 * machine has nothing for the sample. */
static int raw_chain(struct script *s, const struct pk_sample *smp)
{
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
		if (c == PK_CTX_UNKNOWN)
			return 0; /* corrupted (pk_machine__callchain) */
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

/* The chain of a sample (resolved, innermost first), or just the ip; cut as perf script
 * cuts it at --max-stack (pk_callchain__cut: recorded and unwound frames each). */
int sample_chain(struct script *s, const struct pk_sample *smp)
{
	int n = 0;
	/* room for every recorded entry and max_stack unwound ones: no deeper unwinding */
	size_t cap = sizeof(s->chain) / sizeof(s->chain[0]);
	if ((smp->type & PERF_SAMPLE_CALLCHAIN) && smp->callchain.nr + s->max_stack < cap)
		cap = (size_t)smp->callchain.nr + s->max_stack;
	if (s->m && cap && (smp->type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER))) {
		n = pk_machine__callchain(s->m, smp, s->chain, cap);
		if (!n)
			return 0; /* a corrupted chain: perf prints no frame */
	}
	if (n <= 0)
		n = raw_chain(s, smp);
	n = pk_callchain__cut(s->chain, (size_t)n, s->max_stack);
	return n < 0 ? 0 : n;
}

char *put_json_memo(struct jmemo *m, char *p, const char *str, size_t n)
{
	if (m->ok && n == m->rawlen && !memcmp(m->raw, str, n)) {
		memcpy(p, m->esc, m->esclen);
		return p + m->esclen;
	}
	char *q = fmt_json_str(p, str, n);
	if (n <= JMEMO_MAX) {
		memcpy(m->raw, str, n);
		memcpy(m->esc, p, (size_t)(q - p));
		m->rawlen = (uint16_t)n;
		m->esclen = (uint16_t)(q - p);
		m->ok = true;
	}
	return q;
}

/* ---- frame text cache ---- */

int fc_init(struct script *s)
{
	s->fc = calloc(FC_MIN, sizeof(*s->fc));
	s->fc_cap = FC_MIN;
	return s->fc ? 0 : -ENOMEM;
}

/* Forget every cached frame (the maps changed, or the cache is full). */
void fc_flush(struct script *s)
{
	memset(s->fc, 0, s->fc_cap * sizeof(*s->fc));
	s->fc_nr = 0;
	s->arena_len = 0;
}

static inline uint64_t fc_hash(uint64_t ip, uint64_t mgen, uint8_t cm, uint8_t kind)
{
	uint64_t h = ip ^ (mgen * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)cm << 56) ^
		     ((uint64_t)kind << 48);
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

/* a slot's tag: the hash's upper half, odd (never 0, a free slot's) */
#define FC_TAG(h) ((uint64_t)((h) >> 32 | 1) << 32)

static inline struct frag_ent *fc_ent(const struct script *s, uint64_t slot)
{
	return (struct frag_ent *)(void *)(s->arena + (uint32_t)slot);
}

/* The slot of a key: its entry's, or the free one where it goes (*e NULL). */
static inline size_t fc_slot(const struct script *s, uint64_t h, uint64_t ip, uint64_t mgen,
			     uint8_t cm, uint8_t kind, struct frag_ent **e)
{
	size_t mask = s->fc_cap - 1, j = (size_t)h & mask;
	uint64_t tag = FC_TAG(h);
	for (;;) {
		uint64_t v = s->fc[j];
		if (!v) {
			*e = NULL;
			return j;
		}
		if ((v & ~(uint64_t)UINT32_MAX) == tag) {
			struct frag_ent *x = fc_ent(s, v);
			if (x->ip == ip && x->mgen == mgen && x->cm == cm && x->kind == kind) {
				*e = x;
				return j;
			}
		}
		j = (j + 1) & mask;
	}
}

/* The machine's generation of the maps that resolving (smp's thread, cm) searches:
 * the kernel's for kernel modes, else the thread's and the kernel's together. */
static uint64_t maps_gen(struct script *s, const struct pk_sample *smp, uint8_t cm)
{
	if (cm == PK_CPUMODE_KERNEL || cm == PK_CPUMODE_GUEST_KERNEL ||
	    cm == PK_CPUMODE_HYPERVISOR) {
		if (s->kg_epoch != s->rec_epoch) {
			s->kg = pk_machine__maps_gen(s->m, 0, 0, PK_CPUMODE_KERNEL);
			s->kg_epoch = s->rec_epoch;
		}
		return s->kg;
	}
	struct script_ugen *u = &s->ugc[(smp->tid * 0x9e3779b1u) >> 28];
	if (u->epoch != s->rec_epoch || u->pid != smp->pid || u->tid != smp->tid) {
		u->gen = pk_machine__maps_gen(s->m, smp->pid, smp->tid, PK_CPUMODE_UNKNOWN);
		u->pid = smp->pid;
		u->tid = smp->tid;
		u->epoch = s->rec_epoch;
	}
	return u->gen;
}

/* Make room for one more entry: double the table, or start over at the size limit. */
static void fc_make_room(struct script *s)
{
	if ((s->fc_nr + 1) * 2 <= s->fc_cap)
		return;
	uint64_t *old = s->fc, *n = NULL;
	size_t ocap = s->fc_cap;
	if (ocap < FC_MAX)
		n = calloc(ocap * 2, sizeof(*n));
	if (!n) {
		fc_flush(s);
		return;
	}
	s->fc = n;
	s->fc_cap = ocap * 2;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i])
			continue;
		const struct frag_ent *x = fc_ent(s, old[i]);
		size_t j = (size_t)fc_hash(x->ip, x->mgen, x->cm, x->kind) & (s->fc_cap - 1);
		while (n[j])
			j = (j + 1) & (s->fc_cap - 1);
		n[j] = old[i];
	}
	free(old);
}


/*
 * An address as perf 6.1 prints it in a call chain: for a user map, the address within
 * the map (ip - map start + file offset: perf's map_ip), except in the maps perf maps
 * one to one (anonymous memory, the stack, the heap, SysV shared memory, perf-PID.map
 * JIT code: "//anon", "/dev/zero", "/anon_hugepage", "[stack", "/SYSV", "[heap]",
 * "/tmp/perf-" at the start of the name); kernel
 * addresses and addresses no map covers as they are. Call chains of frame pointers and
 * of DWARF unwinding print the same; the sample's own address is printed absolute.
 */
static bool identity_map(const char *d)
{
	/* by the first two bytes, so that a file's path costs one comparison, not seven */
	switch (d[0]) {
	case '/':
		switch (d[1]) {
		case '/': return !strncmp(d, "//anon", 6);
		case 'd': return !strncmp(d, "/dev/zero", 9);
		case 'a': return !strncmp(d, "/anon_hugepage", 14);
		case 'S': return !strncmp(d, "/SYSV", 5);
		case 't': return !strncmp(d, "/tmp/perf-", 10);
		default: return false;
		}
	case '[':
		return !strncmp(d, "[stack", 6) || !strncmp(d, "[heap]", 6);
	default:
		return false;
	}
}

static uint64_t shown_ip(const struct symres *r, uint64_t ip)
{
	if (!r->loc.dso || r->loc.kernel || identity_map(r->dso))
		return ip;
	return ip - r->loc.map_start + r->loc.map_pgoff;
}

/*
 * The text of a frame: FR_FRAME is a JSON call-chain element ({"ip":...}), a text-mode
 * frame ("ip sym+off (dso)") or an -F frame; FR_TOP the sample's own ,"sym":...,"dso":...
 * (JSON). At most 96 + 6 * (sym, dso and srcline lengths) bytes.
 */
static char *build_frag(struct script *s, int kind, uint64_t ip, const struct symres *r,
			const char *sl, char *p)
{
	size_t sn = r->sn, dn = r->dn;

	if (s->json) {
		if (kind == FR_FRAME) {
			p = PUT(p, "{\"ip\":\"0x");
			p = fmt_hex_fast(p, ip);
			*p++ = '"';
			if (!s->m) {
				*p++ = '}';
				return p;
			}
		}
		p = PUT(p, ",\"sym\":");
		p = r->sym ? put_json_memo(&s->jm_sym, p, r->sym, sn) : PUT(p, "null");
		if (kind == FR_TOP && r->sym) {
			p = PUT(p, ",\"symoff\":");
			p = fmt_u64(p, r->off);
		}
		p = PUT(p, ",\"dso\":");
		if (dn == 9 && !memcmp(r->dso, "[unknown]", 9))
			p = PUT(p, "\"[unknown]\""); /* no map: a quarter of sys.data's frames */
		else
			p = put_json_memo(&s->jm_dso, p, r->dso, dn);
		if (kind == FR_FRAME)
			*p++ = '}';
		return p;
	}
	unsigned int F = s->frame_fields;
	if (kind == FR_CHAIN)
		ip = shown_ip(r, ip);
	if (F & SF_IP)
		p = fmt_hex16_fast(p, ip);
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
	if ((F & SF_SRCLINE) && sl) {
		p = PUT(p, "\n  ");
		p = put_lit(p, sl, strlen(sl));
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
static char *build_unwound(struct script *s, uint64_t ip, const struct symres *r,
			   const struct pk_inline_frame *ifr, int ni, const char *sl, char *p)
{
	uint64_t shown = shown_ip(r, ip);
	for (int k = 0; k < (ni > 0 ? ni : 1); k++) {
		struct symres t = *r;
		if (ni > 0) {
			const char *fn = ifr[k].func ? ifr[k].func : "??";
			if (!pk_symbol__same_function(fn, r->sym)) {
				t.sym = fn;
				t.sn = strlen(fn);
				t.inlined = true;
			}
		}
		*p++ = '\t';
		p = build_frag(s, FR_FRAME, shown, &t, sl, p);
		*p++ = '\n';
	}
	return p;
}

/* The text of a frame that no map covers (r: resolve_ip's answer, or the same made
 * without it: no symbol, no srcline, no inline frames), never cached. */
static void put_nomap(struct script *s, uint64_t ip, int kind, const struct symres *r)
{
	char *p = ob_room(&s->ob, 2 * (96 + 6 * r->dn));
	p = kind == FR_UNW ? build_unwound(s, ip, r, NULL, 0, NULL, p)
			   : build_frag(s, kind, ip, r, NULL, p);
	s->ob.len = (size_t)(p - s->ob.buf);
}

/* put_nomap of an address without symbol or DSO ("[unknown]"): the same text, written
 * directly (a quarter of a system-wide recording's frames) */
static void put_unknown(struct script *s, uint64_t ip, int kind)
{
	if (kind != FR_FRAME && kind != FR_CHAIN) {
		struct symres r = { .dso = "[unknown]", .dn = 9 };
		put_nomap(s, ip, kind, &r);
		return;
	}
	char *p = ob_room(&s->ob, 96);
	if (s->json) {
		p = PUT(p, "{\"ip\":\"0x");
		p = fmt_hex_fast(p, ip);
		p = s->m ? PUT(p, "\",\"sym\":null,\"dso\":\"[unknown]\"}") : PUT(p, "\"}");
	} else {
		unsigned int F = s->frame_fields;
		if (F & SF_IP)
			p = fmt_hex16_fast(p, ip);
		if (s->m) {
			if (F & SF_SYM)
				p = PUT(p, " [unknown]");
			if (F & SF_DSO)
				p = PUT(p, " ([unknown])");
			if (F & SF_SRCLINE)
				p = PUT(p, "\n  ??:0");
		}
	}
	s->ob.len = (size_t)(p - s->ob.buf);
}

/* A cached text into the output: one fixed-size copy for a short one (the arena has
 * ARENA_SLACK readable bytes after every text), not a call to memcpy */
static inline void put_text(struct obuf *o, const char *p, size_t n)
{
	if (o->cap - o->len >= ARENA_SLACK) {
		/* (no more lines of the arena read than the text's own, give or take one) */
		if (n <= ARENA_SLACK / 2) {
			memcpy(o->buf + o->len, p, ARENA_SLACK / 2);
			o->len += n;
			return;
		}
		if (n <= ARENA_SLACK) {
			memcpy(o->buf + o->len, p, ARENA_SLACK);
			o->len += n;
			return;
		}
	}
	ob_put(o, p, n);
}

/*
 * Append the text of frame (ip, cm) of sample smp to the output, from the cache or
 * resolved and formatted now (then cached). The key is the machine's generation of the
 * maps the look-up searches (threads of a process share entries; an mmap, an exec or a
 * reused tid gives new keys, and stale entries go at the next flush), the mode and the
 * address. An address no map covers is formatted every time instead, to keep the
 * garbage callers of broken frame-pointer chains out.
 */
static void put_frag_new(struct script *s, const struct pk_sample *smp, uint64_t ip,
			 uint8_t cm, int kind, uint64_t mg, uint64_t h);

void put_frag(struct script *s, const struct pk_sample *smp, uint64_t ip, uint8_t cm,
		     int kind)
{
	uint64_t mg = maps_gen(s, smp, cm);
	if (cm == PK_CPUMODE_USER && pk_gapcache__hit(&s->gaps, smp->pid, mg, ip, PK_GAP_WAYS)) {
		/* in an unmapped range of the process met before: what resolve_ip would
		 * find (nothing), without a look at the maps or the cache */
		put_unknown(s, ip, kind);
		return;
	}
	uint64_t h = fc_hash(ip, mg, cm, (uint8_t)kind);
	struct frag_ent *e;
	fc_slot(s, h, ip, mg, cm, (uint8_t)kind, &e);
	if (e) {
		put_text(&s->ob, (const char *)(e + 1), e->len);
		return;
	}
	put_frag_new(s, smp, ip, cm, kind, mg, h);
}

/* put_frag of a frame not in the cache: resolved, formatted, cached (apart from the
 * hit path, whose every call paid this part's frame set-up) */
static __attribute__((noinline)) void put_frag_new(struct script *s, const struct pk_sample *smp,
						   uint64_t ip, uint8_t cm, int kind, uint64_t mg,
						   uint64_t h)
{
	struct frag_ent *e;
	size_t j;
	struct symres r;
	char sb[1024];
	const char *sl = NULL;
	/* the last address resolved, under the same maps, is not resolved again: a JSON
	 * sample's own address (FR_TOP) is the first of its call chain (FR_FRAME), two
	 * keys of the cache and two misses when new */
	if (s->last_ok && s->last_ip == ip && s->last_mg == mg && s->last_cm == cm) {
		r = s->last_r;
	} else {
		resolve_ip(s, smp, ip, cm, &r);
		s->last_r = r;
		s->last_ip = ip;
		s->last_mg = mg;
		s->last_cm = cm;
		s->last_ok = true;
	}
	if (kind != FR_TOP && !s->json && (s->frame_fields & SF_SRCLINE))
		sl = srcline(&r, sb, sizeof(sb));
	size_t bound = 96 + 6 * (r.sn + r.dn + (sl ? strlen(sl) : 0));
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
	if (!r.loc.dso && cm == PK_CPUMODE_USER)
		pk_gapcache__put(&s->gaps, smp->pid, mg, r.loc.map_start, r.loc.map_end, PK_GAP_WAYS);
	if (!r.loc.dso && bound <= OB_CAP) {
		/* no map: the text is the address alone. Not cached, so that the garbage
		 * addresses of broken frame-pointer chains do not crowd out real frames. */
		put_nomap(s, ip, kind, &r);
		return;
	}
	/* the entry: its key, its text, and room to read a whole short text past it */
	bound += sizeof(struct frag_ent) + 8 + ARENA_SLACK;
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
	/* a new entry (the table may have been flushed or grown meanwhile) */
	fc_make_room(s);
	j = fc_slot(s, h, ip, mg, cm, (uint8_t)kind, &e);
	e = (struct frag_ent *)(void *)(s->arena + s->arena_len);
	e->ip = ip;
	e->mgen = mg;
	e->cm = cm;
	e->kind = (uint8_t)kind;
	char *p0 = (char *)(e + 1);
	char *p = kind == FR_UNW ? build_unwound(s, ip, &r, ifr, ni, sl, p0)
				 : build_frag(s, kind, ip, &r, sl, p0);
	e->len = (uint32_t)(p - p0);
	s->fc[j] = FC_TAG(h) | (uint32_t)s->arena_len;
	s->fc_nr++;
	s->arena_len += sizeof(*e) + ((size_t)(p - p0) + 7) / 8 * 8;
	ob_put(&s->ob, p0, (size_t)(p - p0));
}
