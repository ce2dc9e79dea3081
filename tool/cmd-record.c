/* SPDX-License-Identifier: MIT */
/*
 * tool/cmd-record.c - `perfkit record`: sample a command, processes, threads or CPUs into
 * a perf.data file that perf report / perf script read.
 *
 * Shape (as perf record): parse -> evlist over cpu_map x thread_map -> open (disabled or
 * enable_on_exec) -> one ring per CPU (pk_evlist__mmap) -> perf.data writer with the attrs
 * and their ids -> synthesized state (kernel map, COMM/FORK/MMAP2, FINISHED_INIT) -> start
 * -> drain loop -> final drain, build-ids, header.
 *
 * The drain loop never parses records beyond their headers: ring bytes are handed to the
 * writer as the (at most two) raw spans the ring exposes. The header walk counts samples,
 * LOST and LOST_SAMPLES, and picks up MMAP/MMAP2 file names for the BUILD_ID feature.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"

const char cmd_record_usage[] =
	"usage: perfkit record [<options>] [--] [<command> [<args>]]\n"
	"\n"
	"Sample <command> (or -p/-t/-a/-C targets until Ctrl-C or until they exit) into a\n"
	"perf.data file that `perfkit script`, `perf report` and `perf script` read.\n"
	"\n"
	"    -e, --event <spec>     events to sample (repeatable; default: cycles, or cpu-clock\n"
	"                           when there is no hardware PMU)\n"
	"    -F, --freq <hz|max>    sampling frequency (default 4000; max: perf_event_max_sample_rate)\n"
	"    -c, --count <n>        sample every n events instead of a frequency\n"
	"    -g                     record frame-pointer call chains\n"
	"        --call-graph <fp|dwarf[,size]>  call chains: frame pointers, or user registers\n"
	"                           and a copy of the user stack (default 8192 bytes) for DWARF\n"
	"                           unwinding later\n"
	"    -p, --pid <pid,...>    record existing processes (all their threads)\n"
	"    -t, --tid <tid,...>    record existing threads\n"
	"    -a, --all-cpus         system-wide: every online CPU\n"
	"    -C, --cpu <list>       system-wide on these CPUs (\"0-3,6\")\n"
	"    -G, --cgroup <name>    only tasks of this cgroup (with -a or -C)\n"
	"    -o, --output <file>    output file (default perf.data, an existing one becomes\n"
	"                           perf.data.old); '-' writes the pipe format to stdout\n"
	"    -m, --mmap-pages <n>   data pages per ring buffer, a power of two (default 128)\n"
	"    -z, --compression-level[=<n>]  zstd-compress the data (level 1..22, default 1)\n"
	"        --overwrite        flight recorder: keep only the newest data, written on\n"
	"                           SIGUSR2 and at the end\n"
	"    -T, --timestamp        sample timestamps (always recorded; accepted for perf habits)\n"
	"    -d, --data             sample data addresses (and record data mappings)\n"
	"        --sample-cpu       record the CPU in samples (always with -a/-C)\n"
	"    -s, --stat             per-thread counts at thread exit (PERF_RECORD_READ)\n"
	"        --switch-events    record context switches\n"
	"        --namespaces       record namespace changes\n"
	"        --all-cgroups      record cgroup changes and each sample's cgroup id\n"
	"    -i, --no-inherit       do not follow threads and children created later\n"
	"        --per-thread       one buffer per thread instead of per CPU (no inherit)\n"
	"    -N, --no-buildid-cache  do not copy the recorded binaries into the build-id cache\n"
	"                           ($PERF_BUILDID_DIR, default ~/.debug), where report finds\n"
	"                           them once they are rebuilt or deleted\n"
	"    -q, --quiet            print nothing but errors\n"
	"    -v, --verbose          show every perf_event_open\n"
	"\n"
	"The exit status is the command's (128 + signal if a signal killed it); 127 if it could\n"
	"not be executed; 1 for errors of perfkit itself.\n";

#define DEFAULT_FREQ 4000
#define DEFAULT_STACK 8192
#define DRAIN_INTERVAL_MS 250
#define STATUS_INTERVAL_MS 500

enum cg_mode { CG_NONE, CG_FP, CG_DWARF };

struct rec_opts {
	struct pk_event_list *events;
	bool default_event;
	long freq;               /* 0: not given */
	bool freq_max;
	uint64_t period;         /* -c */
	enum cg_mode cg;
	uint32_t stack_size;
	const char *pid_list, *tid_list, *cpu_list, *cgroup;
	bool system_wide;
	const char *output;
	size_t pages;
	int zlevel;
	bool overwrite, addr, sample_cpu, stat, switch_events, namespaces, all_cgroups;
	bool quiet, no_inherit, per_thread;
	int verbose;
	bool no_buildid_cache;   /* -N */
	char **argv;             /* workload or NULL */
};

/* A set of DSO file names (for BUILD_ID): open addressing, grown at half load. */
struct nameset {
	char **slot;
	size_t cap, nr;
};

struct rec {
	struct rec_opts *o;
	struct pk_evlist *el, *sb_el;          /* sb_el: forward side-band in --overwrite */
	struct pk_evlist_mmap *mm, *sb_mm;
	struct pk_data_writer *w;
	const char **names;                    /* display name per evsel of el */
	struct pk_attr *attrs;                 /* attr as opened, per evsel of el */
	bool *attr_ok;
	struct pk_attr sb_attr;
	bool sb_attr_ok;
	int nev;
	uint64_t samples, lost, lost_records, lost_samples, wakeups, bytes;
	uint64_t keepup, overrun_bytes;
	int write_err;
	struct nameset dsos;
	uint8_t *rec_copy;                     /* 64 KiB for records split by the wrap */
};

static volatile sig_atomic_t got_signal, got_usr2, got_chld, signal_from_user;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGCHLD) {
		got_chld = 1;
		return;
	}
	if (sig == SIGUSR2) {
		got_usr2 = 1;
		return;
	}
	got_signal = sig;
	signal_from_user = si && (si->si_code == SI_USER || si->si_code == SI_QUEUE);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- DSO names ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
	return h;
}

static int nameset_add(struct nameset *ns, const char *name)
{
	if (ns->nr * 2 >= ns->cap) {
		size_t ncap = ns->cap ? ns->cap * 2 : 256;
		char **n = calloc(ncap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < ns->cap; i++) {
			if (!ns->slot[i])
				continue;
			size_t j = hash_str(ns->slot[i]) & (ncap - 1);
			while (n[j])
				j = (j + 1) & (ncap - 1);
			n[j] = ns->slot[i];
		}
		free(ns->slot);
		ns->slot = n;
		ns->cap = ncap;
	}
	size_t j = hash_str(name) & (ns->cap - 1);
	while (ns->slot[j]) {
		if (!strcmp(ns->slot[j], name))
			return 0;
		j = (j + 1) & (ns->cap - 1);
	}
	ns->slot[j] = strdup(name);
	if (!ns->slot[j])
		return -ENOMEM;
	ns->nr++;
	return 0;
}

static void nameset_release(struct nameset *ns)
{
	for (size_t i = 0; i < ns->cap; i++)
		free(ns->slot[i]);
	free(ns->slot);
	memset(ns, 0, sizeof(*ns));
}

/* Remember the file of an executable MMAP/MMAP2 record (rec holds hdr->size bytes). */
static void note_mmap(struct rec *rc, const struct perf_event_header *h)
{
	size_t off = h->type == PERF_RECORD_MMAP2 ? 72 : 40;
	if (h->misc & PERF_RECORD_MISC_MMAP_DATA)
		return;
	if ((h->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER)
		return;
	if (h->size <= off)
		return;
	const char *name = (const char *)h + off;
	size_t n = strnlen(name, h->size - off);
	if (n == h->size - off || name[0] != '/')
		return; /* not terminated, or [vdso], //anon, ... */
	nameset_add(&rc->dsos, name);
}

/* ---- scanning ring bytes (headers only) ---- */

static uint64_t read_u64_at(const struct pk_ring_chunk *c, size_t off)
{
	uint64_t v;
	if (off + 8 <= c[0].len) {
		memcpy(&v, (const uint8_t *)c[0].ptr + off, 8);
	} else if (off >= c[0].len) {
		memcpy(&v, (const uint8_t *)c[1].ptr + (off - c[0].len), 8);
	} else {
		/* cannot happen: records are 8-aligned and so is the wrap point */
		v = 0;
	}
	return v;
}

static void scan(struct rec *rc, const struct pk_ring_chunk *c, int n)
{
	size_t total = c[0].len + (n > 1 ? c[1].len : 0), off = 0;

	while (off + 8 <= total) {
		const struct perf_event_header *h;
		if (off < c[0].len)
			h = (const void *)((const uint8_t *)c[0].ptr + off);
		else
			h = (const void *)((const uint8_t *)c[1].ptr + (off - c[0].len));
		if (h->size < 8 || off + h->size > total)
			break;
		switch (h->type) {
		case PERF_RECORD_SAMPLE:
			rc->samples++;
			break;
		case PERF_RECORD_LOST:
			if (h->size >= 24) {
				rc->lost += read_u64_at(c, off + 16);
				rc->lost_records++;
			}
			break;
		case PERF_RECORD_LOST_SAMPLES:
			if (h->size >= 16)
				rc->lost_samples += read_u64_at(c, off + 8);
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			if (off < c[0].len && off + h->size > c[0].len) {
				/* split by the wrap: reassemble (rare: mmaps are few) */
				size_t first = c[0].len - off;
				memcpy(rc->rec_copy, h, first);
				memcpy(rc->rec_copy + first, c[1].ptr, h->size - first);
				h = (const void *)rc->rec_copy;
			}
			note_mmap(rc, h);
			break;
		default:
			break;
		}
		off += h->size;
	}
}

/* ---- draining ---- */

static int write_bytes(struct rec *rc, const void *p, size_t len)
{
	int err;
	if (rc->write_err)
		return rc->write_err;
	err = pk_data_writer__write(rc->w, p, len);
	if (err < 0)
		rc->write_err = err;
	return err;
}

/* One pass over one ring: returns bytes written, or a negative error. */
static int64_t drain_ring(struct rec *rc, struct pk_ring *r)
{
	struct pk_ring_chunk c[2];
	int err = pk_ring__read_init(r), n;
	uint64_t len;

	if (err == -EOVERFLOW) {
		rc->keepup++;
	} else if (err < 0) {
		return err;
	}
	n = pk_ring__chunks(r, c);
	if (n <= 0) {
		pk_ring__read_done(r);
		return 0;
	}
	len = c[0].len + (n > 1 ? c[1].len : 0);
	scan(rc, c, n);
	err = write_bytes(rc, c[0].ptr, c[0].len);
	if (!err && n > 1)
		err = write_bytes(rc, c[1].ptr, c[1].len);
	pk_ring__advance(r, len);
	pk_ring__read_done(r);
	if (err < 0)
		return err;
	rc->bytes += len;
	return (int64_t)len;
}

static int64_t drain_set(struct rec *rc, struct pk_evlist_mmap *mm)
{
	int64_t total = 0;
	for (int i = 0; i < pk_evlist_mmap__nr(mm); i++) {
		int64_t n = drain_ring(rc, pk_evlist_mmap__ring(mm, i));
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

/* ---- synthesis ---- */

static int synth_cb(const struct perf_event_header *h, void *ctx)
{
	struct rec *rc = ctx;
	if (h->type == PERF_RECORD_MMAP2 || h->type == PERF_RECORD_MMAP)
		note_mmap(rc, h);
	int err = pk_data_writer__write_record(rc->w, h);
	if (err < 0)
		rc->write_err = err;
	return err;
}

static uint32_t id_size_of(const struct perf_event_attr *a)
{
	if (!a->sample_id_all)
		return 0;
	return 8u * (uint32_t)__builtin_popcountll(a->sample_type & PK_SAMPLE_ID_ALL_MASK);
}

/* ---- argument parsing ---- */

static int parse_callgraph(struct rec_opts *o, const char *arg)
{
	if (!strcmp(arg, "fp")) {
		o->cg = CG_FP;
		return 0;
	}
	if (!strncmp(arg, "dwarf", 5) && (arg[5] == 0 || arg[5] == ',')) {
		o->cg = CG_DWARF;
		o->stack_size = DEFAULT_STACK;
		if (arg[5] == ',') {
			char *end;
			unsigned long v = strtoul(arg + 6, &end, 0);
			if (*end || v == 0 || v > 65528) {
				pk_tool_error("invalid dwarf stack size '%s' (1..65528 bytes)", arg + 6);
				return -1;
			}
			o->stack_size = (uint32_t)((v + 7) & ~7UL);
		}
		return 0;
	}
	if (!strcmp(arg, "no")) {
		o->cg = CG_NONE;
		return 0;
	}
	pk_tool_error("unsupported call-graph mode '%s' (fp, dwarf[,size] or no)", arg);
	return -1;
}

enum {
	OPT_CALLGRAPH = 256, OPT_OVERWRITE, OPT_SAMPLE_CPU, OPT_SWITCH, OPT_NS, OPT_ALLCG,
	OPT_PER_THREAD,
};

/* Returns -1 to go on, else an exit status. */
static int parse_args(struct rec_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "call-graph", required_argument, NULL, OPT_CALLGRAPH },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "output", required_argument, NULL, 'o' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "compression-level", optional_argument, NULL, 'z' },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "timestamp", no_argument, NULL, 'T' },
		{ "data", no_argument, NULL, 'd' },
		{ "sample-cpu", no_argument, NULL, OPT_SAMPLE_CPU },
		{ "stat", no_argument, NULL, 's' },
		{ "switch-events", no_argument, NULL, OPT_SWITCH },
		{ "namespaces", no_argument, NULL, OPT_NS },
		{ "all-cgroups", no_argument, NULL, OPT_ALLCG },
		{ "no-inherit", no_argument, NULL, 'i' },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ "no-buildid-cache", no_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct pk_parse_error perr;
	char *end;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:F:c:gp:t:aC:G:o:m:z::TdsiNqv", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (pk_event_list__parse(o->events, optarg, NULL, &perr) < 0) {
				pk_tool_error("invalid event '%s': %s", optarg, perr.msg);
				return 129;
			}
			break;
		case 'F':
			if (!strcmp(optarg, "max")) {
				o->freq_max = true;
				break;
			}
			o->freq = strtol(optarg, &end, 10);
			if (*end || o->freq <= 0) {
				pk_tool_error("invalid frequency '%s'", optarg);
				return 129;
			}
			break;
		case 'c':
			o->period = strtoull(optarg, &end, 0);
			if (*end || !o->period) {
				pk_tool_error("invalid period '%s'", optarg);
				return 129;
			}
			break;
		case 'g':
			o->cg = CG_FP;
			break;
		case OPT_CALLGRAPH:
			if (parse_callgraph(o, optarg) < 0)
				return 129;
			break;
		case 'p': o->pid_list = optarg; break;
		case 't': o->tid_list = optarg; break;
		case 'a': o->system_wide = true; break;
		case 'C': o->cpu_list = optarg; o->system_wide = true; break;
		case 'G': o->cgroup = optarg; break;
		case 'o': o->output = optarg; break;
		case 'm': {
			unsigned long v = strtoul(optarg, &end, 0);
			if (*end || !v || (v & (v - 1)) || v > (1UL << 20)) {
				pk_tool_error("invalid --mmap-pages '%s': a power of two is needed", optarg);
				return 129;
			}
			o->pages = v;
			break;
		}
		case 'z':
			o->zlevel = 1;
			if (optarg) {
				long v = strtol(optarg, &end, 10);
				if (*end || v < 1 || v > 22) {
					pk_tool_error("invalid compression level '%s' (1..22)", optarg);
					return 129;
				}
				o->zlevel = (int)v;
			}
			break;
		case OPT_OVERWRITE: o->overwrite = true; break;
		case 'T': break; /* timestamps are always recorded */
		case 'd': o->addr = true; break;
		case OPT_SAMPLE_CPU: o->sample_cpu = true; break;
		case 's': o->stat = true; break;
		case OPT_SWITCH: o->switch_events = true; break;
		case OPT_NS: o->namespaces = true; break;
		case OPT_ALLCG: o->all_cgroups = true; break;
		case 'i': o->no_inherit = true; break;
		case OPT_PER_THREAD: o->per_thread = true; break;
		case 'N': o->no_buildid_cache = true; break;
		case 'q': o->quiet = true; break;
		case 'v': o->verbose++; break;
		default:
			if (optopt && optopt < 256)
				pk_tool_error("unknown or incomplete option '-%c'", optopt);
			else
				pk_tool_error("unknown or incomplete option '%s'", argv[optind - 1]);
			fputs(cmd_record_usage, stderr);
			return 129;
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	/* DWARF call chains imply -d, as in perf: its unwinder finds .eh_frame_hdr and the
	 * CFI through the non-executable mappings of a binary (the r--p segments of a PIE
	 * linked with separate code), which only mmap_data records */
	if (o->cg == CG_DWARF)
		o->addr = true;
	int ntargets = !!o->pid_list + !!o->tid_list + !!o->system_wide;
	if (!o->argv && !ntargets) {
		pk_tool_error("nothing to record: give a command, -p, -t, -a or -C");
		fputs(cmd_record_usage, stderr);
		return 129;
	}
	if (ntargets > 1 || (o->argv && (o->pid_list || o->tid_list))) {
		pk_tool_error("-p, -t, -a/-C and a command exclude each other");
		return 129;
	}
	if (o->cgroup && !o->system_wide) {
		pk_tool_error("-G needs -a or -C");
		return 129;
	}
	if (o->per_thread && o->system_wide) {
		pk_tool_error("--per-thread does not go with -a or -C");
		return 129;
	}
	if (o->period && (o->freq || o->freq_max)) {
		pk_tool_error("-c and -F exclude each other");
		return 129;
	}
	if (!o->output)
		o->output = "perf.data";
	return -1;
}

/* ---- targets ---- */

/* ---- attrs ---- */

static bool hw_cycles_available(void)
{
	struct pk_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.type = PERF_TYPE_HARDWARE;
	a.attr.config = PERF_COUNT_HW_CPU_CYCLES;
	a.attr.disabled = 1;
	a.attr.exclude_kernel = 1;
	a.attr.exclude_hv = 1;
	int fd = pk_sys_perf_event_open(&a.attr, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return !(fd == -ENOENT || fd == -ENODEV || fd == -EOPNOTSUPP);
}

/* The user registers a DWARF unwinder needs, as perf's sample_regs_user of this
 * architecture; 0 where perfkit's unwinder does not read them (lib/symbol/unwind.c maps
 * x86-64 and arm64 only), so record refuses rather than write stacks nothing unwinds. */
static uint64_t dwarf_regs_mask(void)
{
#if defined(__x86_64__)
	return 0xff0fffULL; /* AX..R15 and IP/FLAGS/SP, without the segment registers */
#elif defined(__aarch64__)
	return (1ULL << 33) - 1;
#else
	return 0;
#endif
}

/* Configure a sampling attr the way perf record does (evsel__config). */
static int config_attr(struct rec_opts *o, struct perf_event_attr *a, bool tracepoint,
		       unsigned spec_flags, bool many, long freq)
{
	a->size = 0; /* let pk_sys_perf_event_open pick the smallest ABI size for the fields */
	a->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (many)
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (o->system_wide || o->sample_cpu)
		a->sample_type |= PERF_SAMPLE_CPU;
	/* data addresses, as perf's -d: ADDR and DATA_SRC in every sample; the data
	 * mappings (mmap_data) are asked of the tracking event only (sideband_bits) */
	if (o->addr)
		a->sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
	if (o->all_cgroups)
		a->sample_type |= PERF_SAMPLE_CGROUP;
	if (tracepoint)
		a->sample_type |= PERF_SAMPLE_RAW | PERF_SAMPLE_CPU;
	if (o->cg == CG_FP) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	} else if (o->cg == CG_DWARF) {
		uint64_t mask = dwarf_regs_mask();
		if (!mask) {
			struct utsname u;
			pk_tool_error("--call-graph dwarf: not supported on %s: perfkit unwinds "
				      "x86-64 and arm64 stacks only; use --call-graph fp",
				      uname(&u) == 0 ? u.machine : "this architecture");
			return -1;
		}
		a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
				  PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = mask;
		a->sample_stack_user = o->stack_size;
		a->exclude_callchain_user = 1;
	}
	if (!(spec_flags & (PK_EVF_PERIOD_SET | PK_EVF_FREQ_SET))) {
		if (o->period) {
			a->freq = 0;
			a->sample_period = o->period;
		} else if (tracepoint) {
			a->freq = 0;
			a->sample_period = 1;
		} else {
			a->freq = 1;
			a->sample_freq = (uint64_t)freq;
		}
	}
	if (o->stat) {
		a->inherit_stat = 1;
		/* the exit-time READ records carry the times, as perf asks for them */
		a->read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	}
	if (o->overwrite)
		a->write_backward = 1;
	a->sample_id_all = 1;
	return 0;
}

static void sideband_bits(struct rec_opts *o, struct perf_event_attr *a)
{
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	if (o->addr)
		a->mmap_data = 1;
	if (o->switch_events)
		a->context_switch = 1;
	if (o->namespaces)
		a->namespaces = 1;
	if (o->all_cgroups)
		a->cgroup = 1;
}

/* Leader sampling ("{a,b}:S"), as perf 6.1 sets it up: every event of the group carries
 * PERF_SAMPLE_READ (the group read format is added when the evlist opens the group), only
 * the leader samples (members get period 0), and nothing inherits (the kernel delivers no
 * group reads for inherited counters). On an event outside a group, ":S" only adds
 * PERF_SAMPLE_READ (perf keeps inheritance there; kernels before 6.12 refuse the pair).
 * Returns true when some group samples this way. */
static bool leader_sampling(struct rec_opts *o, struct pk_evlist *el)
{
	const struct pk_evsel *ev;
	bool any = false;
	size_t i = 0;

	pk_evlist__for_each_evsel(el, ev) {
		const struct pk_evsel *l = pk_evsel__leader(ev);
		const struct pk_evsel *next = pk_evlist__next(el, ev);
		const struct pk_event_spec *spec = pk_event_list__get(o->events, i++);
		bool grouped = l != ev || (next && pk_evsel__leader(next) == ev);
		struct perf_event_attr *a = &pk_evsel__attr((struct pk_evsel *)ev)->attr;

		if (!spec || !(pk_event_spec__flags(spec) & PK_EVF_SAMPLE_READ))
			continue;
		a->sample_type |= PERF_SAMPLE_READ | PERF_SAMPLE_ID; /* perf adds ID too */
		if (!grouped)
			continue; /* "a:S": its own count in each sample, inherited as usual */
		if (l != ev) {
			a->freq = 0;
			a->sample_period = 0;
		}
		any = true;
	}
	if (any)
		o->no_inherit = true;
	return any;
}

/* GROUP_DESC: one entry per group of two or more recorded events, by file attr index. */
static int add_groups(struct rec *rc)
{
	const struct pk_evsel *ev;
	int i = 0, fidx = 0, lead_fidx = -1;
	uint32_t members = 0;
	const struct pk_evsel *lead = NULL;

	for (ev = pk_evlist__next(rc->el, NULL);; ev = pk_evlist__next(rc->el, ev), i++) {
		const struct pk_evsel *l = ev ? pk_evsel__leader(ev) : NULL;
		if (lead && l != lead) {
			if (members >= 2) {
				int err = pk_data_writer__add_group(rc->w, NULL, (uint32_t)lead_fidx,
								    members);
				if (err < 0)
					return err;
			}
			lead = NULL;
		}
		if (!ev || i >= rc->nev)
			break;
		if (!rc->attr_ok[i])
			continue;
		if (l == ev) {
			lead = ev;
			lead_fidx = fidx;
			members = 1;
		} else if (lead && l == lead) {
			members++;
		}
		fidx++;
	}
	return 0;
}

static void dummy_attr(struct rec_opts *o, struct pk_attr *d, bool many)
{
	memset(d, 0, sizeof(*d));
	d->attr.type = PERF_TYPE_SOFTWARE;
	d->attr.config = PERF_COUNT_SW_DUMMY;
	d->attr.sample_period = 1;
	d->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (many)
		d->attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (o->system_wide || o->sample_cpu)
		d->attr.sample_type |= PERF_SAMPLE_CPU;
	d->attr.sample_id_all = 1;
	sideband_bits(o, &d->attr);
}

static void print_open(const struct pk_evsel *ev, const struct perf_event_attr *attr, pid_t pid,
		       int cpu, int group_fd, unsigned long flags, int fd, void *ctx)
{
	struct rec *rc = ctx;
	int idx = 0;
	struct pk_evsel *pos;

	pk_evlist__for_each_evsel(rc->el, pos) {
		if (pos == ev)
			break;
		idx++;
	}
	if (fd >= 0) {
		if (pos && idx < rc->nev && !rc->attr_ok[idx]) {
			memset(&rc->attrs[idx], 0, sizeof(rc->attrs[idx]));
			memcpy(&rc->attrs[idx].attr, attr, sizeof(*attr));
			rc->attr_ok[idx] = true;
		} else if (!pos && !rc->sb_attr_ok) {
			memset(&rc->sb_attr, 0, sizeof(rc->sb_attr));
			memcpy(&rc->sb_attr.attr, attr, sizeof(*attr));
			rc->sb_attr_ok = true;
		}
	}
	if (rc->o->verbose)
		fprintf(stderr,
			"perf_event_open(%s: type %u, config %#llx, sample_type %#llx, freq %u, "
			"period %llu, pid %d, cpu %d, group_fd %d, flags %#lx) = %d%s%s\n",
			pk_evsel__name(ev), attr->type, (unsigned long long)attr->config,
			(unsigned long long)attr->sample_type, (unsigned)attr->freq,
			(unsigned long long)attr->sample_period, (int)pid, cpu, group_fd, flags, fd,
			fd < 0 ? " " : "", fd < 0 ? pk_strerror(fd) : "");
}

static void report_open_failure(struct pk_evlist *el, int err, const char *const *names)
{
	struct perf_event_attr attr;
	pid_t pid = -1;
	int cpu = -1, group_fd = -1, idx = 0;
	char buf[1024];
	const struct pk_evsel *ev = pk_evlist__open_failure(el, &pid, &cpu, &group_fd, &attr);
	struct pk_evsel *pos;
	const char *name;

	if (!ev) {
		pk_tool_error("cannot open the events: %s", pk_strerror(err));
		return;
	}
	name = pk_evsel__name(ev);
	if (names) {
		pk_evlist__for_each_evsel(el, pos) {
			if (pos == ev) {
				name = names[idx];
				break;
			}
			idx++;
		}
	}
	PK_OPTS(pk_open_ctx, ctx, .attr = &attr, .pid = pid, .cpu = cpu, .group_fd = group_fd,
		.event_name = name);
	pk_explain_open_error(buf, sizeof(buf), err, &ctx);
	pk_tool_error("cannot open '%s': %s", name, buf);
}

/* Build the evlist (and the side-band one for --overwrite). */
static int build(struct rec *rc, pid_t child, long freq)
{
	struct rec_opts *o = rc->o;
	struct pk_cpu_map *cpus;
	struct pk_thread_map *threads;
	struct pk_evsel *ev;
	bool cycles_ok = true, cycles_checked = false, many;
	int i = 0, nspec;

	rc->el = pk_evlist__new();
	if (!rc->el || pk_evlist__add_events(rc->el, o->events) < 0) {
		pk_tool_error("out of memory");
		return -1;
	}
	nspec = pk_evlist__nr_evsels(rc->el);
	/* perf adds a side-band dummy for system-wide and multi-event recordings; in
	 * --overwrite mode it lives in its own (forward) evlist */
	bool want_dummy = (o->system_wide || nspec > 1) && !o->overwrite;
	many = nspec + (want_dummy ? 1 : 0) > 1 || o->overwrite;
	rc->nev = nspec + (want_dummy ? 1 : 0);
	rc->names = calloc((size_t)rc->nev, sizeof(*rc->names));
	rc->attrs = calloc((size_t)rc->nev, sizeof(*rc->attrs));
	rc->attr_ok = calloc((size_t)rc->nev, sizeof(*rc->attr_ok));
	if (!rc->names || !rc->attrs || !rc->attr_ok) {
		pk_tool_error("out of memory");
		return -1;
	}
	pk_evlist__for_each_evsel(rc->el, ev) {
		const struct pk_event_spec *spec = pk_event_list__get(o->events, (size_t)i);
		struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
		bool tp = spec && pk_event_spec__kind(spec) == PK_EV_TRACEPOINT;
		unsigned fl = spec ? pk_event_spec__flags(spec) : 0;

		rc->names[i] = pk_evsel__name(ev);
		if (a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_CPU_CYCLES) {
			if (!cycles_checked) {
				cycles_ok = hw_cycles_available();
				cycles_checked = true;
			}
			if (!cycles_ok) {
				if (!o->quiet)
					fprintf(stderr, "perfkit record: notice: '%s' is not supported "
						"here (no hardware PMU); sampling cpu-clock instead\n",
						rc->names[i]);
				a->type = PERF_TYPE_SOFTWARE;
				a->config = PERF_COUNT_SW_CPU_CLOCK;
				a->precise_ip = 0;
				rc->names[i] = "cpu-clock";
			}
		}
		if (config_attr(o, a, tp, fl, many, freq) < 0)
			return -1;
		if (i == 0 && !want_dummy && !o->overwrite)
			sideband_bits(o, a);
		i++;
	}
	if (want_dummy) {
		struct pk_attr d;
		dummy_attr(o, &d, many);
		ev = pk_evsel__new(&d, "dummy");
		if (!ev || pk_evlist__add(rc->el, ev) < 0) {
			pk_tool_error("out of memory");
			return -1;
		}
		rc->names[i] = "dummy:u";
	}
	leader_sampling(o, rc->el);

	/* targets */
	for (int pass = 0; pass < (o->overwrite ? 2 : 1); pass++) {
		struct pk_evlist *el = rc->el;
		if (pass == 1) {
			struct pk_attr d;
			rc->sb_el = pk_evlist__new();
			dummy_attr(o, &d, true);
			ev = pk_evsel__new(&d, "dummy");
			if (!rc->sb_el || !ev || pk_evlist__add(rc->sb_el, ev) < 0) {
				pk_tool_error("out of memory");
				return -1;
			}
			el = rc->sb_el;
		}
		if (o->per_thread)
			cpus = pk_cpu_map__new_dummy();
		else
			cpus = pk_cpu_map__new(o->cpu_list);
		if (!cpus) {
			pk_tool_error("invalid CPU list '%s': %s", o->cpu_list ? o->cpu_list : "",
				      strerror(errno));
			return -1;
		}
		if (o->system_wide)
			threads = pk_thread_map__new_dummy();
		else if (child > 0)
			threads = pk_thread_map__new_array(&child, 1);
		else if (o->pid_list)
			threads = pk_tool_threads_of_pids(o->pid_list, true);
		else if (o->tid_list)
			threads = pk_thread_map__new_list(o->tid_list);
		else
			threads = pk_thread_map__new_dummy();
		if (!threads) {
			pk_cpu_map__free(cpus);
			pk_tool_error("cannot find the threads of '%s': %s",
				      o->pid_list ? o->pid_list : o->tid_list, strerror(errno));
			return -1;
		}
		if (pk_evlist__set_maps(el, cpus, threads) < 0) {
			pk_tool_error("out of memory");
			return -1;
		}
	}
	return 0;
}

/* ---- status ---- */

static void status_line(struct rec *rc)
{
	fprintf(stderr, "\r[ perfkit record: %" PRIu64 " samples, %" PRIu64 " lost, %.1f MB ]\033[K",
		rc->samples, rc->lost + rc->lost_samples, (double)rc->bytes / (1024.0 * 1024.0));
	fflush(stderr);
}

static void summary(struct rec *rc, uint64_t file_bytes, bool reader_gone)
{
	struct rec_opts *o = rc->o;
	if (o->quiet)
		return;
	fprintf(stderr, "[ perfkit record: woken up %" PRIu64 " times to write data ]\n", rc->wakeups);
	if (reader_gone) {
		/* a reader that stops early (`| head -c N`) is not an error, but the data
		 * did not all arrive: do not claim it was written */
		fprintf(stderr, "[ perfkit record: the reader of %s went away after %.3f MB; "
			"recording stopped (%" PRIu64 " samples captured by then) ]\n",
			strcmp(o->output, "-") ? o->output : "<stdout>",
			(double)file_bytes / (1024.0 * 1024.0), rc->samples);
		return;
	}
	fprintf(stderr, "[ perfkit record: captured and wrote %.3f MB %s (%" PRIu64 " samples) ]\n",
		(double)file_bytes / (1024.0 * 1024.0), strcmp(o->output, "-") ? o->output : "<stdout>",
		rc->samples);
}

static void lost_warnings(struct rec *rc, long freq)
{
	struct rec_opts *o = rc->o;
	size_t pages = o->pages ? o->pages : 128;
	if (rc->lost)
		pk_tool_warn("lost %" PRIu64 " events in %" PRIu64 " LOST records (%.2f%% of the "
			     "samples): the ring buffers filled up; use bigger buffers (-m %zu, now "
			     "%zu pages) or a lower frequency (-F%s%ld)", rc->lost, rc->lost_records,
			     100.0 * (double)rc->lost / (double)(rc->lost + rc->samples + !rc->samples),
			     pages * 2, pages, o->period ? "; now -c " : " ", o->period ? 0L : freq / 2);
	if (rc->lost_samples)
		pk_tool_warn("the kernel dropped %" PRIu64 " samples it could not record "
			     "(PERF_RECORD_LOST_SAMPLES)", rc->lost_samples);
	if (rc->keepup)
		pk_tool_warn("failed to keep up %" PRIu64 " times: data was overwritten before it "
			     "could be read; use bigger buffers (-m) or a lower frequency (-F)",
			     rc->keepup);
}

/* ---- the run ---- */

static int add_attrs(struct rec *rc, struct pk_evlist *el, bool sideband)
{
	int ncpus = pk_cpu_map__nr(pk_evlist__cpus(el));
	int nthreads = pk_thread_map__nr(pk_evlist__threads(el));
	uint64_t *ids = calloc((size_t)ncpus * (size_t)nthreads, sizeof(*ids));
	struct pk_evsel *ev;
	int i = 0, err = 0;

	if (!ids)
		return -ENOMEM;
	pk_evlist__for_each_evsel(el, ev) {
		size_t n = 0;
		const struct pk_attr *a = sideband ? &rc->sb_attr : &rc->attrs[i];
		bool ok = sideband ? rc->sb_attr_ok : rc->attr_ok[i];
		const char *name = sideband ? "dummy:u" : rc->names[i];
		i++;
		if (!ok)
			continue;
		for (int ci = 0; ci < ncpus; ci++)
			for (int ti = 0; ti < nthreads; ti++) {
				uint64_t id = pk_evsel__id(ev, ci, ti);
				if (id)
					ids[n++] = id;
			}
		err = pk_data_writer__add_attr(rc->w, a, name, ids, n);
		if (err < 0)
			break;
		err = 0;
	}
	free(ids);
	return err;
}

/* The TRACING_DATA blob (tracefs formats of the recorded tracepoints): without it perf
 * refuses the file. Not fatal for us: perfkit reads the file either way. */
static int add_tracing_data(struct rec *rc)
{
	uint64_t *ids = calloc((size_t)rc->nev, sizeof(*ids));
	size_t n = 0, len = 0;
	void *blob = NULL;
	int err;

	if (!ids)
		return -ENOMEM;
	for (int i = 0; i < rc->nev; i++)
		if (rc->attr_ok[i] && rc->attrs[i].attr.type == PERF_TYPE_TRACEPOINT)
			ids[n++] = rc->attrs[i].attr.config;
	if (!n) {
		free(ids);
		return 0;
	}
	err = pk_tracing_data__build(NULL, ids, n, &blob, &len);
	free(ids);
	if (err < 0) {
		pk_tool_warn("cannot collect the tracepoint formats from tracefs (%s): perf will "
			     "not be able to read the file", pk_strerror(err));
		return 0;
	}
	err = pk_data_writer__set_tracing_data(rc->w, blob, len);
	free(blob);
	return err < 0 ? err : 0;
}

/* Copies of the recorded binaries in perf's build-id cache, as perf record makes them, so
 * that a report of this file still finds the symbols after a rebuild. Never fatal. */
struct bid_cache {
	bool off;           /* -N, or the cache turned out unwritable */
	int err;            /* first error that stopped the filling */
	const char *err_name;
	size_t too_big;     /* files not copied for their size */
};

static void bid_cache_add(struct bid_cache *bc, const char *name,
			  const uint8_t *id, size_t len)
{
	PK_OPTS(pk_build_id_cache_opts, co);
	int err;

	if (bc->off)
		return;
	err = name ? pk_build_id_cache__add(name, id, len, &co)
		   : pk_build_id_cache__add_kallsyms(NULL, id, len, &co);
	if (err == -EFBIG) {
		bc->too_big++;
	} else if (err == -EACCES || err == -EPERM || err == -EROFS || err == -ENOSPC ||
		   err == -EDQUOT || err == -ENOTDIR || err == -ENOENT || err == -ENAMETOOLONG) {
		/* the cache itself is the problem (or the file vanished: ENOENT from
		 * realpath is told apart below by still trying the other files) */
		if (err == -ENOENT && name && access(name, F_OK) < 0)
			return;
		if (!name && err == -EACCES)
			return; /* kallsyms addresses hidden (kptr_restrict): nothing to keep */
		bc->off = true;
		bc->err = err;
		bc->err_name = name ? name : "[kernel.kallsyms]";
	}
}

static void bid_cache_report(const struct rec *rc, const struct bid_cache *bc)
{
	char dir[PATH_MAX];

	if (rc->o->quiet || (!bc->err && !bc->too_big))
		return;
	if (pk_build_id_cache__dir(NULL, dir, sizeof(dir)))
		snprintf(dir, sizeof(dir), "~/.debug"); /* no $HOME: the cache the user may set */
	if (bc->err)
		pk_tool_warn("cannot fill the build-id cache '%s' (at %s: %s): a report of this "
			     "file will miss the symbols of binaries rebuilt later; set "
			     "PERF_BUILDID_DIR to a writable directory, or -N to skip the cache",
			     dir, bc->err_name, pk_strerror(bc->err));
	if (bc->too_big)
		pk_tool_warn("%zu recorded file%s larger than %llu MiB not copied into the "
			     "build-id cache '%s' (a cache on the files' own file system holds "
			     "hard links instead of copies)", bc->too_big, bc->too_big == 1 ? "" : "s",
			     PK_BUILD_ID_CACHE_MAX_COPY >> 20, dir);
}

static void add_build_ids(struct rec *rc)
{
	uint8_t id[PK_BUILD_ID_MAX], kid[PK_BUILD_ID_MAX];
	size_t len = sizeof(id), klen = sizeof(kid);
	struct bid_cache bc = { .off = rc->o->no_buildid_cache };
	bool kernel = pk_kernel_build_id(NULL, kid, &klen) == 0;

	if (kernel)
		pk_data_writer__add_build_id(rc->w, -1, PERF_RECORD_MISC_KERNEL, kid, klen,
					     "[kernel.kallsyms]");
	for (size_t i = 0; i < rc->dsos.cap; i++) {
		const char *name = rc->dsos.slot[i];
		if (!name)
			continue;
		len = sizeof(id);
		if (pk_build_id__read(name, id, &len) == 0) {
			pk_data_writer__add_build_id(rc->w, -1, PERF_RECORD_MISC_USER, id, len, name);
			bid_cache_add(&bc, name, id, len);
		}
	}
	if (kernel)
		bid_cache_add(&bc, NULL, kid, klen);
	bid_cache_report(rc, &bc);
}

static int synthesize(struct rec *rc, pid_t child)
{
	struct rec_opts *o = rc->o;
	const struct pk_attr *first = &rc->attrs[0];
	PK_OPTS(pk_synth_opts, so, .id_size = id_size_of(&first->attr), .mmap_data = o->addr);
	/* the kernel reports namespace changes only: the namespaces the targets are in when
	 * recording starts are synthesized, as perf does */
	unsigned ns = o->namespaces ? PK_SYNTH_NAMESPACES : 0;
	int err = 0;

	pk_synth__kernel_mmap(synth_cb, rc, &so);
	if (o->system_wide) {
		err = pk_synth__all(PK_SYNTH_FORK | PK_SYNTH_MMAPS | ns, synth_cb, rc, &so);
	} else if (child > 0) {
		char comm[64] = "perfkit", path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)child);
		FILE *f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		err = pk_synth__comm(child, child, comm, synth_cb, rc, &so);
		if (!err && ns)
			err = pk_synth__namespaces(child, child, synth_cb, rc, &so);
	} else if (o->pid_list) {
		struct pk_thread_map *ids = pk_thread_map__new_list(o->pid_list);
		for (int i = 0; ids && i < pk_thread_map__nr(ids) && !rc->write_err; i++)
			pk_synth__process(pk_thread_map__tid(ids, i), PK_SYNTH_MMAPS | ns, synth_cb,
					  rc, &so);
		pk_thread_map__free(ids);
	} else if (o->tid_list) {
		struct pk_thread_map *ids = pk_thread_map__new_list(o->tid_list);
		for (int i = 0; ids && i < pk_thread_map__nr(ids) && !rc->write_err; i++)
			pk_synth__thread(pk_thread_map__tid(ids, i), PK_SYNTH_MMAPS | ns, synth_cb, rc,
					 &so);
		pk_thread_map__free(ids);
	}
	if (!rc->write_err)
		pk_synth__finished_init(synth_cb, rc);
	(void)err;
	return rc->write_err;
}

static long effective_freq(struct rec_opts *o)
{
	PK_OPTS(pk_limits, lim);
	long max = 0, freq = o->freq ? o->freq : DEFAULT_FREQ;
	if (pk_limits__read(&lim, NULL) == 0 && lim.max_sample_rate > 0)
		max = lim.max_sample_rate;
	if (o->freq_max)
		return max > 0 ? max : DEFAULT_FREQ;
	if (max > 0 && freq > max) {
		if (!o->quiet)
			pk_tool_warn("-F %ld exceeds perf_event_max_sample_rate; using %ld Hz", freq, max);
		freq = max;
	}
	return freq;
}

static void rename_old(const char *path)
{
	struct stat st;
	char old[PATH_MAX];
	if (!strcmp(path, "-") || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	snprintf(old, sizeof(old), "%s.old", path);
	if (rename(path, old) < 0)
		pk_tool_warn("cannot rename '%s' to '%s': %s", path, old, strerror(errno));
}

static void rec_release(struct rec *rc)
{
	pk_evlist_mmap__free(rc->mm);
	pk_evlist_mmap__free(rc->sb_mm);
	pk_evlist__free(rc->el);
	pk_evlist__free(rc->sb_el);
	free(rc->names);
	free(rc->attrs);
	free(rc->attr_ok);
	free(rc->rec_copy);
	nameset_release(&rc->dsos);
}

static int run(struct rec *rc)
{
	struct rec_opts *o = rc->o;
	struct pk_workload *w = NULL;
	pid_t child = -1;
	int status = 0, wstatus = 0, err, cgroup_fd = -1;
	bool pipe_out = !strcmp(o->output, "-"), child_done = false, tty;
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	sigset_t block, orig;
	long freq = effective_freq(o);
	struct pollfd *pfds = NULL;
	int npfds = 0, nsb = 0, nlive = 0;
	uint64_t next_status = 0, file_bytes = 0;

	/* Stop signals are caught from the very start (the handler only sets a flag): one that
	 * arrives while events are still being opened ends the recording right after set-up
	 * with a complete file, instead of killing us before the header exists. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL); /* a closed terminal must still leave a complete file */

	rc->rec_copy = malloc(65536);
	if (!rc->rec_copy) {
		pk_tool_error("out of memory");
		return 1;
	}
	if (o->argv) {
		/* in pipe mode the command's stdout would corrupt the stream: send it to stderr */
		int saved = -1;
		if (pipe_out) {
			fflush(stdout);
			saved = dup(1);
			dup2(2, 1);
		}
		w = pk_workload__prepare(o->argv);
		if (saved >= 0) {
			dup2(saved, 1);
			close(saved);
		}
		if (!w) {
			pk_tool_error("cannot start '%s': %s", o->argv[0], strerror(errno));
			return 1;
		}
		child = pk_workload__pid(w);
	}
	if (build(rc, child, freq) < 0)
		goto fail;
	if (o->cgroup) {
		cgroup_fd = pk_tool_open_cgroup(o->cgroup);
		if (cgroup_fd < 0)
			goto fail;
	}
	PK_OPTS(pk_evlist_open_opts, oo, .inherit = !o->no_inherit && !o->per_thread,
		.enable_on_exec = w && !o->system_wide, .cgroup_fd = cgroup_fd,
		.on_open = print_open, .ctx = rc, .user_fallback = true, .sampling = true);
	err = pk_evlist__open(rc->el, &oo);
	if (err == -EMFILE && pk_tool_raise_nofile())
		err = pk_evlist__open(rc->el, &oo);
	if (err < 0) {
		report_open_failure(rc->el, err, rc->names);
		goto fail;
	}
	{
		/* events that fell back to user space only are recorded under their new name
		 * ("cpu-clock:u"), as perf names them */
		int i = 0;
		for (struct pk_evsel *ev = pk_evlist__next(rc->el, NULL); ev;
		     ev = pk_evlist__next(rc->el, ev), i++) {
			const struct perf_event_attr *a = &pk_evsel__attr(ev)->attr;
			size_t n = strlen(rc->names[i]);
			if (!a->exclude_kernel || a->exclude_user || !strcmp(rc->names[i], "dummy:u"))
				continue;
			if (!strcmp(rc->names[i], "cpu-clock"))
				rc->names[i] = "cpu-clock:u";
			else if (strcmp(pk_evsel__name(ev), rc->names[i]) && n &&
				 !strncmp(pk_evsel__name(ev), rc->names[i], n))
				rc->names[i] = pk_evsel__name(ev);
		}
	}
	if (rc->sb_el) {
		err = pk_evlist__open(rc->sb_el, &oo);
		if (err < 0) {
			report_open_failure(rc->sb_el, err, NULL);
			goto fail;
		}
	}
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	cgroup_fd = -1;

	/* Rings over the locked-memory allowance (perf_event_mlock_kb per CPU, then
	 * RLIMIT_MEMLOCK) fail with EPERM for an unprivileged user: halve them until
	 * they fit, with a notice, as perf does. */
	for (size_t pages = o->pages ? o->pages : 128;; pages /= 2) {
		PK_OPTS(pk_evlist_mmap_opts, mo, .pages = pages, .overwrite = o->overwrite);
		rc->mm = pk_evlist__mmap(rc->el, &mo);
		if (rc->mm && rc->sb_el) {
			PK_OPTS(pk_evlist_mmap_opts, so, .pages = pages);
			rc->sb_mm = pk_evlist__mmap(rc->sb_el, &so);
		}
		if (rc->mm && (!rc->sb_el || rc->sb_mm)) {
			if (pages != (o->pages ? o->pages : 128)) {
				fprintf(stderr, "perfkit record: notice: %zu-page ring buffers exceed "
					"the locked-memory limit (/proc/sys/kernel/perf_event_mlock_kb, "
					"ulimit -l); using %zu pages\n", o->pages ? o->pages : (size_t)128,
					pages);
				o->pages = pages;
			}
			break;
		}
		int e = errno;
		pk_evlist_mmap__free(rc->mm);
		rc->mm = NULL;
		errno = e;
		if (e != EPERM || pages <= 1)
			break;
	}
	if (!rc->mm || (rc->sb_el && !rc->sb_mm)) {
		int e = errno;
		pk_tool_error("cannot mmap the ring buffers: %s%s", strerror(e),
			      e == EPERM || e == ENOMEM ?
			      " (locked memory limit: try a smaller -m, or raise "
			      "/proc/sys/kernel/perf_event_mlock_kb / ulimit -l)" : "");
		goto fail;
	}

	rename_old(o->output);
	/* -o - is the pipe format even when stdout is a regular file, as with perf */
	PK_OPTS(pk_data_writer_opts, wo, .compress_level = o->zlevel, .pipe = pipe_out);
	rc->w = pk_data_writer__open(o->output, &wo);
	if (!rc->w) {
		pk_tool_error("cannot open '%s': %s", o->output, strerror(errno));
		goto fail;
	}
	err = add_attrs(rc, rc->el, false);
	if (!err)
		err = add_groups(rc);
	if (!err && rc->sb_el)
		err = add_attrs(rc, rc->sb_el, true);
	if (!err)
		err = add_tracing_data(rc);
	if (err < 0) {
		pk_tool_error("cannot write '%s': %s", o->output, pk_strerror(err));
		goto fail;
	}
	if (synthesize(rc, child) < 0) {
		pk_tool_error("cannot write '%s': %s", o->output, pk_strerror(rc->write_err));
		goto fail;
	}

	/* signals: blocked except while waiting in ppoll, so none is missed */
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &orig);

	/* without enable_on_exec, enable before the command execs so that its exec COMM
	 * and first mmaps are seen (the side-band evlist of --overwrite follows the same
	 * rule: it was opened with the same options) */
	if (!oo.enable_on_exec) {
		pk_evlist__enable(rc->el);
		if (rc->sb_el)
			pk_evlist__enable(rc->sb_el);
	}
	if (w) {
		err = pk_workload__start(w);
		if (err < 0) {
			pk_tool_error("cannot run '%s': %s", o->argv[0], strerror(-err));
			pk_workload__free(w);
			w = NULL;
			status = 127;
			child_done = true;
		}
	}

	/* poll set: the side-band fds (overwrite mode) and every event fd */
	{
		int n1 = 0, n2 = 0;
		struct pollfd *p1 = pk_evlist_mmap__pollfds(rc->mm, &n1);
		struct pollfd *p2 = rc->sb_mm ? pk_evlist_mmap__pollfds(rc->sb_mm, &n2) : NULL;
		pfds = calloc((size_t)(n1 + n2) + 1, sizeof(*pfds));
		if (!pfds) {
			pk_tool_error("out of memory");
			goto fail_unblock;
		}
		memcpy(pfds, p1, sizeof(*pfds) * (size_t)n1);
		if (n2)
			memcpy(pfds + n1, p2, sizeof(*pfds) * (size_t)n2);
		npfds = n1 + n2;
		nsb = n1;
		/* overwrite rings are only read on demand: wait for hang-ups only */
		for (int i = 0; o->overwrite && i < nsb; i++)
			pfds[i].events = 0;
		nlive = npfds;
	}

	tty = !o->quiet && isatty(2);
	bool done = child_done;
	while (!rc->write_err) {
		int64_t wrote = 0;
		if (!o->overwrite) {
			wrote = drain_set(rc, rc->mm);
		} else {
			wrote = drain_set(rc, rc->sb_mm);
			if (got_usr2) {
				got_usr2 = 0;
				wrote += drain_set(rc, rc->mm);
			}
		}
		if (wrote < 0)
			break;
		if (wrote > 0 && !o->overwrite)
			pk_data_writer__finish_round(rc->w);
		if (done)
			break;
		if (got_signal)
			done = true;
		if (got_chld && w) {
			got_chld = 0;
			if (pk_workload__wait(w, false, &wstatus) == 0) {
				child_done = true;
				done = true;
			}
		}
		if (done)
			continue; /* one more pass to drain what is left */
		if (tty) {
			uint64_t t = now_ms();
			if (t >= next_status) {
				status_line(rc);
				next_status = t + STATUS_INTERVAL_MS;
			}
		}
		if (wrote)
			continue;
		/* Wake at least every DRAIN_INTERVAL_MS even without a ring wake-up, so that
		 * what the kernel wrote reaches the file soon: a recorder killed with SIGKILL
		 * (or a crash) then loses a fraction of a second, not a whole buffer. */
		long wait_ms = tty ? STATUS_INTERVAL_MS : DRAIN_INTERVAL_MS;
		struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };
		int r = ppoll(pfds, (nfds_t)npfds, &ts, &orig);
		if (r > 0) {
			rc->wakeups++;
			for (int i = 0; i < npfds; i++) {
				if (pfds[i].fd >= 0 && (pfds[i].revents & (POLLHUP | POLLERR))) {
					pfds[i].fd = -1;
					nlive--;
				}
			}
			/* every target thread has gone (-p/-t); system-wide fds never hang up */
			if (nlive == 0 && !w)
				done = true;
		}
	}
	/* drain the rest: a final pass over every ring (the overwrite snapshot included);
	 * the end of the recording counts as a wake-up, as in perf's summary */
	rc->wakeups++;
	if (!rc->write_err) {
		int64_t n;
		if (o->overwrite) {
			drain_set(rc, rc->sb_mm);
			drain_set(rc, rc->mm);
		}
		while ((n = drain_set(rc, o->overwrite ? rc->sb_mm : rc->mm)) > 0)
			pk_data_writer__finish_round(rc->w);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	/* the file cannot grow (disk full, reader gone): stop measuring now rather than when
	 * the workload ends; the workload itself runs on undisturbed */
	if (rc->write_err)
		pk_evlist__disable(rc->el);

	if (w && !child_done) {
		/* stopped by a signal: end the command too, then finish the file */
		if (got_signal && (signal_from_user || got_signal != SIGINT))
			pk_workload__kill(w, got_signal);
		while (pk_workload__wait(w, true, &wstatus) == -EINTR)
			;
		child_done = true;
	}
	pk_evlist__disable(rc->el);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	if (w) {
		status = pk_wait_status__exit_code(wstatus);
		if (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) != SIGINT)
			pk_tool_error("'%s' was killed by signal %d (%s)", o->argv[0],
				      WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
		pk_workload__free(w);
		w = NULL;
	}

	if (!pipe_out)
		add_build_ids(rc);
	pk_data_writer__stats(rc->w, NULL, NULL, NULL, &file_bytes);
	int werr = rc->write_err;
	err = pk_data_writer__close(rc->w);
	rc->w = NULL;
	if (!werr)
		werr = err;
	if (werr == -EPIPE) {
		/* the reader went away: nothing to report */
	} else if (werr < 0) {
		pk_tool_error("cannot write '%s': %s", o->output, pk_strerror(werr));
		if (!status)
			status = 1;
	}
	if (!pipe_out) {
		struct stat st;
		if (stat(o->output, &st) == 0)
			file_bytes = (uint64_t)st.st_size;
	}
	lost_warnings(rc, freq);
	summary(rc, file_bytes, werr == -EPIPE);
	free(pfds);
	return status;

fail_unblock:
	sigprocmask(SIG_SETMASK, &orig, NULL);
fail:
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	if (rc->w)
		pk_data_writer__close(rc->w);
	rc->w = NULL;
	pk_workload__free(w);
	free(pfds);
	return status ? status : 1;
}

int cmd_record(int argc, char **argv)
{
	struct rec_opts o = { .stack_size = DEFAULT_STACK };
	struct rec rc = { .o = &o };
	int r;

	pk_tool_setup_log(0);
	for (int i = 1; i < argc && strcmp(argv[i], "--") && argv[i][0] == '-'; i++)
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			pk_tool_setup_log(1);
	o.events = pk_event_list__new();
	if (!o.events) {
		pk_tool_error("out of memory");
		return 1;
	}
	r = parse_args(&o, argc, argv);
	if (r >= 0) {
		pk_event_list__free(o.events);
		return r;
	}
	if (!pk_event_list__count(o.events)) {
		struct pk_parse_error perr;
		o.default_event = true;
		if (pk_event_list__parse(o.events, "cycles", NULL, &perr) < 0) {
			pk_tool_error("cannot set up the default event: %s", perr.msg);
			pk_event_list__free(o.events);
			return 1;
		}
	}
	for (size_t i = 0; i < pk_event_list__count(o.events); i++)
		if (pk_event_spec__kind(pk_event_list__get(o.events, i)) == PK_EV_TRACEPOINT) {
			pk_tool_ensure_tracefs();
			break;
		}
	r = run(&rc);
	rec_release(&rc);
	pk_event_list__free(o.events);
	fflush(stderr);
	return pk_tool_finish_stdout(r);
}
