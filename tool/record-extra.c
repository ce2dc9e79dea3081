/* SPDX-License-Identifier: MIT */
/*
 * tool/record-extra.c - perf record's finer options, kept out of cmd-record.c: -P/--period,
 * --strict-freq, --filter, --exclude-perf, -D/--delay, -k/--clockid, --user-regs,
 * -I/--intr-regs, --all-user/--all-kernel, -u/--uid, -B/--no-buildid, --buildid-all,
 * --control, --dry-run, --group; and what two of them do while recording (the delay and
 * the control commands).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "record.h"

#define bad(...) (tool_error(__VA_ARGS__), 129)

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- registers (perf's names and bits of arch/x86/include/uapi/asm/perf_regs.h) ---- */

#if defined(__x86_64__)
static const char *const reg_names[] = {
	"AX", "BX", "CX", "DX", "SI", "DI", "BP", "SP", "IP", "FLAGS", "CS", "SS",
	NULL, NULL, NULL, NULL, /* DS ES FS GS: the kernel refuses them for 64-bit tasks */
	"R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15",
};
#else
static const char *const reg_names[] = { NULL };
#endif
#define NR_REGS (sizeof(reg_names) / sizeof(reg_names[0]))

static uint64_t all_regs(void)
{
	uint64_t m = 0;
	for (size_t i = 0; i < NR_REGS; i++)
		if (reg_names[i])
			m |= 1ULL << i;
	return m;
}

/* "?" lists the names (exit 129, as perf); NULL: every register; else "ax,r15". */
static int parse_regs(const char *opt, const char *arg, uint64_t *mask)
{
	if (!all_regs())
		return bad("%s: sampling registers is not supported on this architecture", opt);
	if (!arg || !*arg) {
		*mask = all_regs();
		return 0;
	}
	if (!strcmp(arg, "?")) {
		printf("available registers: ");
		for (size_t i = 0; i < NR_REGS; i++)
			if (reg_names[i])
				printf("%s ", reg_names[i]);
		printf("\n\n");
		return 129;
	}
	*mask = 0;
	for (const char *p = arg; *p;) {
		size_t n = strcspn(p, ","), i;
		for (i = 0; i < NR_REGS; i++)
			if (reg_names[i] && strlen(reg_names[i]) == n &&
			    !strncasecmp(p, reg_names[i], n))
				break;
		if (i == NR_REGS)
			return bad("%s: unknown register '%.*s' (%s=? lists them)", opt, (int)n, p,
				   opt);
		*mask |= 1ULL << i;
		p += n + (p[n] == ',');
	}
	return 0;
}

/* ---- -k ---- */

static int parse_clockid(const char *arg, int *id)
{
	static const struct { const char *name; int id; } clocks[] = {
		{ "monotonic", CLOCK_MONOTONIC }, { "mono", CLOCK_MONOTONIC },
		{ "monotonic_raw", CLOCK_MONOTONIC_RAW }, { "raw", CLOCK_MONOTONIC_RAW },
		{ "realtime", CLOCK_REALTIME }, { "real", CLOCK_REALTIME },
		{ "boottime", CLOCK_BOOTTIME }, { "boot", CLOCK_BOOTTIME },
		{ "tai", CLOCK_TAI },
	};
	const char *s = !strncasecmp(arg, "CLOCK_", 6) ? arg + 6 : arg;
	char *end;

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (!strcasecmp(s, clocks[i].name)) {
			*id = clocks[i].id;
			return 0;
		}
	long v = strtol(arg, &end, 0);
	if (end == arg || *end || v < 0 || v > INT_MAX)
		return bad("unknown clock '%s' (monotonic, monotonic_raw, realtime, boottime, tai "
			   "or a number)", arg);
	*id = (int)v;
	return 0;
}

/* ---- filters ---- */

/* The filter of the last event given so far (perf: the event of the preceding -e). */
static int set_last_filter(struct rec_opts *o, const char *opt, const char *flt, bool append)
{
	struct rec_extra *x = &o->x;
	size_t n = pk_event_list__count(o->events);
	const struct pk_event_spec *last = n ? pk_event_list__get(o->events, n - 1) : NULL;

	if (!last || pk_event_spec__kind(last) != PK_EV_TRACEPOINT)
		return bad("%s must follow a -e tracepoint (address filters need a PMU that has "
			   "them, which perfkit does not drive)", opt);
	if (n > x->nr_filters) {
		char **f = realloc(x->filters, n * sizeof(*f));
		if (!f)
			return bad("out of memory");
		memset(f + x->nr_filters, 0, (n - x->nr_filters) * sizeof(*f));
		x->filters = f;
		x->nr_filters = n;
	}
	char *old = x->filters[n - 1], *s;
	int len = append && old ? asprintf(&s, "(%s) && (%s)", old, flt) : asprintf(&s, "%s", flt);
	if (len < 0)
		return bad("out of memory");
	free(old);
	x->filters[n - 1] = s;
	return 0;
}

/* ---- -u ---- */

static int parse_uid(const char *arg, uid_t *uid)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	if (*arg && !*end && arg[0] != '-') {
		*uid = (uid_t)v;
		return 0;
	}
	struct passwd pw, *res = NULL;
	char buf[4096];
	if (getpwnam_r(arg, &pw, buf, sizeof(buf), &res) || !res)
		return bad("-u: no such user '%s'", arg);
	*uid = res->pw_uid;
	return 0;
}

/* The processes whose /proc entry the user owns (perf's thread map by uid), as a -p list;
 * perfkit's own process is left out. NULL with an error printed. */
static char *pids_of_uid(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char *list = NULL;
	size_t len = 0, cap = 0;

	if (!d) {
		tool_error("cannot read /proc: %s", strerror(errno));
		return NULL;
	}
	while ((de = readdir(d))) {
		struct stat st;
		char path[300];
		if (!isdigit((unsigned char)de->d_name[0]) || atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s", de->d_name);
		if (stat(path, &st) || st.st_uid != uid)
			continue;
		size_t n = strlen(de->d_name);
		if (len + n + 2 > cap) {
			size_t ncap = cap ? cap * 2 : 256;
			while (ncap < len + n + 2)
				ncap *= 2;
			char *nl = realloc(list, ncap);
			if (!nl) {
				free(list);
				closedir(d);
				tool_error("out of memory");
				return NULL;
			}
			list = nl;
			cap = ncap;
		}
		if (len)
			list[len++] = ',';
		memcpy(list + len, de->d_name, n + 1);
		len += n;
	}
	closedir(d);
	if (!list)
		tool_error("-u: user %u has no process to record", (unsigned)uid);
	return list;
}

/* ---- --control ---- */

static int open_ctl(const char *arg, struct rec_extra *x)
{
	char *end;

	if (!strncmp(arg, "fd:", 3)) {
		long a = strtol(arg + 3, &end, 10), b = -1;
		if (end == arg + 3 || a < 0 || a > INT_MAX || (*end && *end != ','))
			goto bad_arg;
		if (*end) {
			const char *p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || *end || b < 0 || b > INT_MAX)
				goto bad_arg;
		}
		if (fcntl((int)a, F_GETFD) < 0 || (b >= 0 && fcntl((int)b, F_GETFD) < 0))
			return bad("--control: fd %ld or %ld is not open", a, b);
		x->ctl_fd = (int)a;
		x->ack_fd = (int)b;
		x->ctl_owned = false;
	} else if (!strncmp(arg, "fifo:", 5)) {
		char *ctl = strdup(arg + 5), *ack = NULL;
		if (!ctl)
			return bad("out of memory");
		if ((ack = strchr(ctl, ',')))
			*ack++ = '\0';
		/* O_RDWR: the fifo never reads as closed when a writer goes away */
		x->ctl_fd = open(ctl, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (x->ctl_fd < 0) {
			tool_error("--control: cannot open '%s': %s (create it with mkfifo)", ctl,
				   strerror(errno));
			free(ctl);
			return 129;
		}
		x->ack_fd = ack ? open(ack, O_RDWR | O_CLOEXEC) : -1;
		if (ack && x->ack_fd < 0) {
			tool_error("--control: cannot open '%s': %s (create it with mkfifo)", ack,
				   strerror(errno));
			free(ctl);
			return 129;
		}
		free(ctl);
		x->ctl_owned = true;
	} else {
		goto bad_arg;
	}
	fcntl(x->ctl_fd, F_SETFL, fcntl(x->ctl_fd, F_GETFL) | O_NONBLOCK);
	return 0;
bad_arg:
	return bad("invalid --control '%s' (fifo:ctl-fifo[,ack-fifo] or fd:ctl-fd[,ack-fd])", arg);
}

/* ---- options ---- */

int rec_extra_opt(struct rec_opts *o, int c, const char *arg)
{
	struct rec_extra *x = &o->x;
	char *end;

	switch (c) {
	case 'P': break; /* PERIOD is in every sample perfkit records */
	case REC_OPT_STRICT_FREQ: x->strict_freq = true; break;
	case REC_OPT_FILTER: return set_last_filter(o, "--filter", arg, true);
	case REC_OPT_EXCLUDE_PERF: {
		char f[64];
		snprintf(f, sizeof(f), "common_pid != %d", (int)getpid());
		return set_last_filter(o, "--exclude-perf", f, true);
	}
	case 'D': {
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < -1 || v > INT_MAX)
			return bad("invalid -D/--delay '%s' (milliseconds, or -1: start disabled "
				   "until --control enables; ranges are not supported)", arg);
		x->delay_ms = (int)v;
		x->delay_set = v != 0;
		o->ro.start_disabled = v != 0;
		break;
	}
	case 'k':
		if (parse_clockid(arg, &o->ro.clockid))
			return 129;
		o->ro.use_clockid = true;
		break;
	case REC_OPT_USER_REGS: return parse_regs("--user-regs", arg, &o->ro.sample_regs_user);
	case 'I': return parse_regs("--intr-regs", arg, &o->ro.sample_regs_intr);
	case REC_OPT_ALL_USER: o->ro.all_user = true; break;
	case REC_OPT_ALL_KERNEL: o->ro.all_kernel = true; break;
	case 'u': x->uid_arg = arg; break;
	case 'B': o->ro.no_buildid = true; break;
	case REC_OPT_BUILDID_ALL: break; /* every mapped binary's build-id is always listed */
	case REC_OPT_CONTROL:
		if (x->ctl_fd >= 0)
			return bad("--control given twice");
		return open_ctl(arg, x);
	case REC_OPT_DRY_RUN: x->dry_run = true; break;
	case REC_OPT_GROUP: o->ro.group = true; break;
	case REC_OPT_PHYS_DATA: o->ro.sample_type_extra |= PERF_SAMPLE_PHYS_ADDR; break;
	case REC_OPT_DATA_PAGE_SIZE: o->ro.sample_type_extra |= PERF_SAMPLE_DATA_PAGE_SIZE; break;
	case REC_OPT_CODE_PAGE_SIZE: o->ro.sample_type_extra |= PERF_SAMPLE_CODE_PAGE_SIZE; break;
	case REC_OPT_KCORE: x->kcore = true; break;
	default:
		return TOOL_OPT_UNKNOWN;
	}
	return 0;
}

/* --kcore: perf turns the output into a directory (OUT/data, OUT/kcore_dir/ with kcore's
 * kernel text segments rewritten as a small ELF, kallsyms and modules). perfkit writes one
 * file and has no such ELF writer: refused before anything is created, first for the
 * reason perf refuses too (no readable /proc/kcore). */
static int refuse_kcore(void)
{
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tool_error("--kcore: /proc/kcore is not readable: %s (perf refuses it too; it "
			   "needs a kernel with CONFIG_PROC_KCORE, root or CAP_SYS_RAWIO, and no "
			   "container hiding it)", strerror(errno));
		return 1;
	}
	close(fd);
	tool_error("--kcore is not supported: perfkit writes a single perf.data file, not "
		   "perf's directory with a kcore_dir copy of the kernel's text; record without "
		   "it (perfkit annotate reads kernel code from a vmlinux), or use perf record "
		   "--kcore");
	return 1;
}

int rec_extra_check(struct rec_opts *o)
{
	struct rec_extra *x = &o->x;

	if (x->kcore)
		return refuse_kcore();

	if (o->ro.all_user && o->ro.all_kernel)
		return bad("--all-user and --all-kernel exclude each other");
	if (o->ro.group) {
		for (size_t i = 0; i < pk_event_list__count(o->events); i++)
			if (pk_event_spec__group(pk_event_list__get(o->events, i)) >= 0)
				return bad("--group does not go with {event groups}");
	}
	if (x->delay_ms == -1 && x->ctl_fd < 0)
		tool_warn("-D -1: the events stay disabled until enabled with --control");
	if (x->strict_freq && !o->ro.period) {
		PK_OPTS(pk_limits, lim);
		long f = o->ro.freq ? o->ro.freq : 4000;
		if (!o->ro.freq_max && pk_limits__read(&lim, NULL) == 0 &&
		    lim.max_sample_rate > 0 && f > lim.max_sample_rate)
			return bad("--strict-freq: %ld Hz is over the maximum sampling rate, %d Hz "
				   "(use a lower -F or raise "
				   "/proc/sys/kernel/perf_event_max_sample_rate)",
				   f, lim.max_sample_rate);
	}
	if (x->uid_arg) {
		uid_t uid;
		if (o->ro.pids || o->ro.tids || o->ro.system_wide)
			return bad("-u, -p, -t and -a/-C exclude each other");
		if (parse_uid(x->uid_arg, &uid))
			return 129;
		x->uid_pids = pids_of_uid(uid);
		if (!x->uid_pids)
			return 129;
		o->ro.pids = x->uid_pids;
	}
	o->ro.event_filters = (const char *const *)x->filters;
	o->ro.nr_event_filters = x->nr_filters;
	return -1;
}

void rec_extra_init(struct rec_extra *x)
{
	memset(x, 0, sizeof(*x));
	x->ctl_fd = x->ack_fd = -1;
}

void rec_extra_release(struct rec_extra *x)
{
	for (size_t i = 0; i < x->nr_filters; i++)
		free(x->filters[i]);
	free(x->filters);
	free(x->uid_pids);
	if (x->ctl_owned) {
		close(x->ctl_fd);
		if (x->ack_fd >= 0)
			close(x->ack_fd);
	}
	rec_extra_init(x);
}

/* ---- while recording ---- */

static void say(const struct rec_opts *o, const char *msg)
{
	if (!o->quiet)
		fprintf(stderr, "%s\n", msg);
}

void rec_extra_started(struct rec_opts *o)
{
	struct rec_extra *x = &o->x;

	if (!o->ro.start_disabled)
		return;
	say(o, "Events disabled");
	if (x->delay_ms > 0)
		x->enable_at = mono_ms() + (uint64_t)x->delay_ms;
}

int rec_extra_timeout(const struct rec_opts *o, int timeout_ms)
{
	const struct rec_extra *x = &o->x;

	if (x->ctl_fd >= 0 && timeout_ms > 50)
		timeout_ms = 50; /* commands are read between drain passes */
	if (x->enable_at) {
		uint64_t now = mono_ms();
		uint64_t left = x->enable_at > now ? x->enable_at - now : 0;
		if (left < (uint64_t)timeout_ms)
			timeout_ms = (int)left;
	}
	return timeout_ms;
}

static void ack(const struct rec_extra *x)
{
	if (x->ack_fd >= 0 && write(x->ack_fd, "ack\n", 4) < 0)
		return; /* nobody reads the acks any more */
}

/* One command line of --control (perf's names); true when it asks to stop. */
static bool ctl_command(struct rec_opts *o, struct pk_recorder *r, const char *cmd)
{
	if (!strcmp(cmd, "enable") || !strcmp(cmd, "disable")) {
		bool on = cmd[0] == 'e';
		if (pk_recorder__enable(r, on) == 0)
			say(o, on ? "Events enabled" : "Events disabled");
		o->x.enable_at = 0;
	} else if (!strcmp(cmd, "snapshot")) {
		if (o->ro.overwrite)
			pk_recorder__snapshot(r);
	} else if (!strcmp(cmd, "stop")) {
		ack(&o->x);
		return true;
	} else if (strcmp(cmd, "ping")) {
		tool_warn("--control: unknown command '%s' (enable, disable, snapshot, stop, "
			  "ping)", cmd);
	}
	ack(&o->x);
	return false;
}

bool rec_extra_poll(struct rec_opts *o, struct pk_recorder *r)
{
	struct rec_extra *x = &o->x;
	bool stop = false;

	if (x->enable_at && mono_ms() >= x->enable_at) {
		x->enable_at = 0;
		if (pk_recorder__enable(r, true) == 0)
			say(o, "Events enabled");
	}
	if (x->ctl_fd < 0)
		return false;
	for (;;) {
		ssize_t n = read(x->ctl_fd, x->ctl_buf + x->ctl_len,
				 sizeof(x->ctl_buf) - 1 - x->ctl_len);
		if (n <= 0)
			break;
		x->ctl_len += (size_t)n;
		x->ctl_buf[x->ctl_len] = '\0';
		char *line = x->ctl_buf, *nl;
		/* a command ends at a newline or a NUL (perf's tools write either) */
		while ((nl = line + strcspn(line, "\n")) < x->ctl_buf + x->ctl_len) {
			*nl = '\0';
			if (*line && !stop)
				stop = ctl_command(o, r, line);
			line = nl + 1;
			while (line < x->ctl_buf + x->ctl_len && !*line)
				line++;
		}
		size_t rest = (size_t)(x->ctl_buf + x->ctl_len - line);
		if (*line && rest == sizeof(x->ctl_buf) - 1)
			rest = 0; /* a line longer than any command: dropped */
		memmove(x->ctl_buf, line, rest);
		x->ctl_len = rest;
	}
	return stop;
}
