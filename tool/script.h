/* SPDX-License-Identifier: MIT */
/* tool/script.h - `perfkit script`'s state and the functions its files share:
 * cmd-script.c (options, comms, names, the session's callbacks), script-fields.c (-F and
 * the fields of each event), script-samples.c (samples), script-frames.c (symbols and
 * the frame text cache), script-records.c (non-sample records). */
#ifndef TOOL_SCRIPT_H
#define TOOL_SCRIPT_H

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
/* (header-only, shared with the library's report: no library symbol) */
#include "../lib/core/gapcache.h"
#include "out.h"
#include "script-fmt.h"
#include "script-trace.h"

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

/*
 * The frame text cache: an open-addressing table of 8-byte slots (0: free; else the
 * upper half of the key's hash, odd, and the offset of its entry in the arena), and in
 * the arena each entry's key (a frag_ent) followed by its text. A look-up reads one slot
 * and then one place in the arena, where the key is checked and the text lies: on
 * recordings with many distinct addresses nearly every look-up misses the CPU's caches,
 * and slots of 32 bytes (key and text offset) used to cost a miss of their own in a
 * table four times larger.
 */
struct frag_ent {
	uint64_t ip;
	uint64_t mgen;          /* the machine's map generation it was resolved under */
	uint32_t len;           /* the text's, which follows */
	uint8_t cm, kind;
};

#define FC_MIN ((size_t)1 << 12)
#define FC_MAX ((size_t)1 << 16)      /* slots (512 KiB; 32k entries, as many as the
				       * 2 MiB table of 32-byte slots held before) */
#define ARENA_MAX ((size_t)8 << 20)   /* bytes of entries and their text */
#define ARENA_SLACK 128               /* readable bytes after the last entry's text */

/* The last string written as JSON at one place of the output (put_json_memo): its
 * bytes and their escaped, quoted form, which the next identical string reuses */
#define JMEMO_MAX 256
struct jmemo {
	bool ok;
	uint16_t rawlen, esclen;
	char raw[JMEMO_MAX];
	char esc[JMEMO_MAX * 6 + 2];
};

struct symres {
	const char *sym, *dso;
	size_t sn, dn;          /* strlen of sym (0 without) and of dso */
	uint64_t off;
	struct pk_addr_loc loc;
	bool found;
	bool inlined;           /* a function DWARF says is inlined at the address */
};

struct script {
	bool json, all, hide_cg, no_inline;
	unsigned int max_stack; /* --max-stack: frames of a chain printed (perf's 127) */
	struct obuf ob;
	bool line_flush;        /* stdout is a terminal: write each line at once */
	struct pk_data_reader *rd;
	/* tid -> comm */
	struct comm_slot {
		uint32_t tid;
		char comm[16];
		bool used;
		uint8_t jlen;           /* jcomm's length, 0: not made yet (comm_json) */
		char jcomm[15 * 6 + 2]; /* the comm as a quoted JSON string */
	} *comms;
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
	bool show_task, show_mmap; /* --show-task-events, --show-mmap-events */
	bool show_ns, show_cgroup; /* --show-namespace-events, --show-cgroup-events */
	bool show_lost, show_round; /* --show-lost-events, --show-round-events */
	bool show_bpf, show_poke;  /* --show-bpf-events, --show-text-poke-events */
	int name_width;         /* the longest event name (perf aligns names to it) */
	size_t name_width_attrs; /* attrs it was computed over (a pipe adds attrs later) */
	char unk_comm[16];      /* ":<tid>", the comm of a thread without COMM */
	bool fields_failed;     /* -F asks for a field an event cannot have (check_fields) */
	/* attrs whose fields are checked: up front the first of each type (perf's rule),
	 * the others at their first sample (an attr with no samples, such as the consumed
	 * context-switches of an --off-cpu file, is never in the way) */
	const struct pk_data_attr *checked[64];
	size_t nr_checked;
	const struct pk_data_attr *last_checked;
	struct pk_machine *m;
	struct pk_chain_entry chain[512];
	/* frame text cache (see the top of the file) */
	uint64_t *fc;
	size_t fc_cap, fc_nr;
	/* the last address resolved (put_frag): its key and answer */
	struct symres last_r;
	uint64_t last_ip, last_mg;
	uint8_t last_cm;
	bool last_ok;
	/* JSON: the last event name, symbol and DSO name escaped */
	struct jmemo jm_event, jm_sym, jm_dso;
	/* map generations asked of the machine (pk_machine__maps_gen), current while no
	 * record other than a sample came (each starts a new rec_epoch, from 1; 0 is never
	 * current): the threads' (a few slots by tid: the samples of the CPUs interleave,
	 * and a single one was asked again nearly every sample), and the kernel's */
	struct script_ugen { uint64_t gen; uint32_t pid, tid, epoch; } ugc[16];
	uint64_t kg;
	uint32_t kg_epoch, rec_epoch;
	/* per process, the last ranges of user addresses that no map covers, under the
	 * map generation (see put_frag) */
	struct pk_gapcache gaps;
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
	/* filters (--pid, --tid, -C, --comms, --time) and time display (--ns, --reltime,
	 * --deltatime): script-filter.c */
	int32_t *f_pids, *f_tids, *f_cpus;
	size_t f_npids, f_ntids, f_ncpus;
	char **f_comms;
	size_t f_ncomms;
	const char *time_spec;
	uint64_t t_start, t_end;   /* 0: open */
	bool ns;                   /* --ns: nanoseconds */
	int time_mode;             /* TM_* */
	uint64_t first_time, prev_time;
	/* the seconds of the last time printed, and their text (fmt_time) */
	uint64_t sec;
	char sec_txt[24];
	uint8_t sec_len;
	/* script-extra.c: --header, --header-only, -I, -S, --dsos, --kallsyms, -q, -v and
	 * -F type:fields (per event type: hw sw trace hwcache raw break) */
	bool header, header_only, show_info, quiet;
	int verbose;
	char **f_syms, **f_dsos;
	size_t f_nsyms, f_ndsos;
	const char *kallsyms;
	struct ftype { bool set; int fmode; unsigned int fields, rm; } ft[6];
	bool typed_fields;      /* some ft[] set */
};
enum { OPT_X_HEADER = 450, OPT_X_HEADER_ONLY, OPT_X_DSOS, OPT_X_KALLSYMS, OPT_X_SHOW_BPF,
       OPT_X_SHOW_POKE };
#define SCRIPT_EXTRA_OPTS \
	{ OPT_X_HEADER, "header", no_argument, NULL, "print the perf.data header block first" }, \
	{ OPT_X_HEADER_ONLY, "header-only", no_argument, NULL, "print only the header block" }, \
	{ 'I', "show-info", no_argument, NULL, \
	  "with --header/--header-only: the CPU and NUMA topology" }, \
	{ 'S', "symbols", required_argument, "<sym,...>", \
	  "only the samples whose address is in these functions" }, \
	{ OPT_X_DSOS, "dsos", required_argument, "<dso,...>", \
	  "only the samples whose address is in these objects\n(file name or path)" }, \
	{ OPT_X_KALLSYMS, "kallsyms", required_argument, "<file>", \
	  "kernel symbols from this kallsyms file" }, \
	{ OPT_X_SHOW_BPF, "show-bpf-events", no_argument, NULL, \
	  "also the KSYMBOL and BPF_EVENT records (BPF programs\nloaded and unloaded)" }, \
	{ OPT_X_SHOW_POKE, "show-text-poke-events", no_argument, NULL, \
	  "also the TEXT_POKE and KSYMBOL records (kernel code\nmodified while recording)" }, \
	{ 'q', "quiet", no_argument, NULL, "no warnings" }, \
	{ 'v', "verbose", no_argument, NULL, "more messages" }
enum { TM_ABS, TM_REL, TM_DELTA };

/* script-filter.c: whether a sample passes --pid/--tid/-C/--comms/--time; the time to
 * print for a record (--reltime/--deltatime, as perf updates them: every line printed);
 * the option values freed */
bool script_sample_wanted(struct script *s, const struct pk_sample *smp);
uint64_t script_shown_time(struct script *s, uint64_t t);
void script_filters_free(struct script *s);
/* script-extra.c: an option of SCRIPT_EXTRA_OPTS (0, or 129 after the error; 1: not
 * one of them); -S/--dsos (true: the sample passes); the header block before the
 * records (true: --header-only, nothing else to print); whether events of this attr
 * are hidden (-F type: with no fields); the machine options (--kallsyms) */
int script_extra_opt(struct script *s, int c, const char *arg);
bool script_sym_wanted(struct script *s, const struct pk_sample *smp);
bool script_print_header(struct script *s, const char *input);
bool script_type_hidden(const struct script *s, const struct pk_data_attr *a);
const struct pk_machine_opts *script_machine_opts(const struct script *s);

static inline char *put_lit(char *p, const char *lit, size_t n)
{
	memcpy(p, lit, n);
	return p + n;
}
#define PUT(p, lit) put_lit((p), (lit), sizeof(lit) - 1)

/* script-frames.c: the frame text cache (set up; emptied), a frame's text appended to
 * the output (from the cache, or resolved and formatted now), a sample's call chain
 * into s->chain (its length) */
int fc_init(struct script *s);
void fc_flush(struct script *s);
void put_frag(struct script *s, const struct pk_sample *smp, uint64_t ip, uint8_t cm, int kind);
int sample_chain(struct script *s, const struct pk_sample *smp);
/* a JSON string of str (n bytes) with quotes at p, from m when str is m's last one:
 * at most PK_JSON_ESCAPED_MAX(n) + 2 bytes, as fmt_json_str */
char *put_json_memo(struct jmemo *m, char *p, const char *str, size_t n);
/* script-records.c: a context switch line (text); any other record (-a), kernel or user */
void print_switch(struct script *s, const struct pk_data_attr *a, const struct pk_record *r);
/* a LOST record as perf's --show-lost-events (text) */
void print_lost(struct script *s, const struct pk_data_attr *a, const struct pk_record *r);
void print_record(struct script *s, const struct pk_record *r);
void print_user_record(struct script *s, const struct pk_data_event *ev);
/* COMM/FORK/EXIT/MMAP/MMAP2 as perf's --show-task-events/--show-mmap-events (text) */
void print_side(struct script *s, const struct pk_data_attr *a, const struct pk_record *r);
/* cmd-script.c: JSON members, the comm of a thread, the name of an event (in buf when
 * it has to be made up), the name of a user record type */
void json_hex(struct obuf *o, const char *key, uint64_t v, bool comma);
void json_u64(struct obuf *o, const char *key, uint64_t v);
const char *comm_of(struct script *s, uint32_t tid);
/* the comm of a thread as a quoted JSON string at p (at most 15 * 6 + 2 bytes) */
char *put_comm_json(struct script *s, char *p, uint32_t tid);
const char *event_name(const struct pk_data_attr *a, char *buf, size_t len);
const char *user_record_name(uint32_t type);
/* script-fields.c: -F into s (0 or -EINVAL/-ENOMEM, error printed), the fields printed
 * for samples of attr a, the attrs seen so far brought up to date (name width, -F
 * checked: 0 or -EINVAL, error printed) */
int parse_fields(struct script *s, const char *spec);
unsigned int sample_fields(const struct script *s, const struct pk_data_attr *a, uint64_t st,
			   unsigned int *user);
int attrs_update(struct script *s);
/* -F checked against attr a, once (the error printed): 0 or -EINVAL */
int attr_check(struct script *s, const struct pk_data_attr *a);
void script_frame_fields(struct script *s, const struct pk_data_attr *a);
/* script-samples.c: a line's leading fields (comm, tid, cpu, time) at p, a sample as
 * text or JSON, a sample that read its counters (false: not one, print it as is) */
char *put_start(struct script *s, char *p, unsigned int F, bool chain, uint32_t pid,
		uint32_t tid, uint32_t cpu, uint64_t time);
void print_sample(struct script *s, const struct pk_data_attr *a, const struct pk_sample *smp);
bool print_read_sample(struct script *s, const struct pk_data_attr *a,
		       const struct pk_sample *smp);

#endif
