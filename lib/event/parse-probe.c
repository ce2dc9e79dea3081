/* SPDX-License-Identifier: MIT */
/*
 * lib/event/parse-probe.c - dynamic probes by name in the event parser:
 *   u:BINARY:FUNCTION[+OFFSET]   uprobe at a function (or an instruction in it)
 *   r:BINARY:FUNCTION            its return probe
 *   u:BINARY:%PROVIDER:NAME      an SDT marker of BINARY
 *   sdt:PROVIDER:NAME            an SDT marker of the library named PROVIDER (or of the
 *                                process given as probe_pid)
 *   k:FUNCTION[+OFFSET], kr:FUNCTION   kprobe / kretprobe through the kprobe PMU
 * each optionally followed by :modifiers. All become events of the uprobe/kprobe PMU, so
 * the kernel creates the probe with the event and removes it when the event is closed:
 * nothing is left in tracefs. The binary stays open in the spec from resolution to the
 * close of the event, and the PMU is handed /proc/self/fd/N: the offset computed is the
 * offset in the very file probed, whatever happens to the path meanwhile.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <perfkit/probe.h>
#include "parser-internal.h"

static bool field_end(char c)
{
	return !c || c == ',' || c == '}' || c == '{' || isspace((unsigned char)c);
}

/* Scan a field up to one of `stops` (or a field end); returns its length. */
static size_t scan_field(struct parser *p, const char *stops)
{
	size_t s = p->pos;
	while (!field_end(cur(p)) && !strchr(stops, cur(p)))
		p->pos++;
	return p->pos - s;
}

static int expect_colon(struct parser *p, const char *what)
{
	if (cur(p) != ':')
		return pk_ep_fail(p, -PK_ERR_PARSE, p->pos, "':' and %s expected", what);
	p->pos++;
	return 0;
}

static int copy_field(struct parser *p, char *out, size_t outlen, size_t col, size_t n,
		      const char *what)
{
	if (n == 0)
		return pk_ep_fail(p, -PK_ERR_PARSE, col, "%s missing", what);
	if (n >= outlen)
		return pk_ep_fail(p, -PK_ERR_PARSE, col, "%s too long", what);
	memcpy(out, p->s + col, n);
	out[n] = '\0';
	return 0;
}

/* Encode PMU format terms (retprobe, ref_ctr_offset=N) into the spec's config. */
static int encode_terms(struct parser *p, const struct pk_pmu *pmu, const char *terms,
			struct pk_event_spec *e, size_t col)
{
	struct pk_attr enc;
	char msg[200];
	memset(&enc, 0, sizeof(enc));
	msg[0] = '\0';
	if (terms[0] && pk_pmu__encode(pmu, terms, &enc, msg, sizeof(msg)) < 0)
		return pk_ep_fail(p, -PK_ERR_PARSE, col,
				  "the %s PMU cannot take '%s': %s (a kernel without it cannot "
				  "place this probe)",
				  pk_pmu__name(pmu), terms, msg[0] ? msg : "unknown format");
	e->attr.attr.config = enc.attr.config;
	return 0;
}

static const struct pk_pmu *find_probe_pmu(struct parser *p, const char *name, size_t col)
{
	const struct pk_pmu_set *set = pk_ep_pmus(p);
	const struct pk_pmu *pmu = set ? pk_pmu_set__find(set, name) : NULL;
	if (!pmu)
		pk_ep_fail(p, -ENOENT, col,
			   "no %s PMU on this machine (/sys/bus/event_source/devices/%s is missing; "
			   "the kernel needs CONFIG_%s_EVENTS)",
			   name, name, !strcmp(name, "kprobe") ? "KPROBE" : "UPROBE");
	return pmu;
}

/* The probe PMU `name` into *pmu and the modifiers after the probe into *m. */
static int probe_pmu(struct parser *p, const char *name, size_t col, const struct pk_pmu **pmu,
		     struct mods *m)
{
	*pmu = find_probe_pmu(p, name, col);
	if (!*pmu)
		return p->code;
	return pk_ep_parse_opt_mods(p, m, false);
}

/* An optional "+OFFSET" after a function name into *off (left as is without one). */
static int parse_offset(struct parser *p, bool ret, uint64_t *off)
{
	if (cur(p) != '+')
		return 0;
	size_t ocol = ++p->pos, on = scan_field(p, ":");
	if (ret)
		return pk_ep_fail(p, -PK_ERR_PARSE, ocol - 1, "a return probe takes no offset");
	if (pk_parse_u64(p->s + ocol, on, off) < 0)
		return pk_ep_fail(p, -PK_ERR_PARSE, ocol, "invalid offset '%.*s'", QLEN(on),
				  p->s + ocol);
	return 0;
}

/* PROVIDER:MARKER at p->pos into prov and func; *fcol gets the marker's column. */
static int parse_sdt_name(struct parser *p, char *prov, size_t prov_len, char *func,
			  size_t func_len, size_t *fcol)
{
	size_t pcol = p->pos, n = scan_field(p, ":");
	int r;

	if ((r = copy_field(p, prov, prov_len, pcol, n, "SDT provider")) < 0 ||
	    (r = expect_colon(p, "the marker name")) < 0)
		return r;
	*fcol = p->pos;
	n = scan_field(p, ":");
	return copy_field(p, func, func_len, *fcol, n, "SDT marker name");
}

/*
 * What every probe event ends with: each hit a sample, as perf does for probes (counting
 * is unaffected); config1 the probe (kprobe_func, uprobe_path), config2 its offset
 * (probe_offset); the PMU's name and the modifiers.
 */
static int finish_probe(struct parser *p, struct pk_event_spec *e, const char *pmu_name,
			uint64_t offset, const struct mods *m, size_t col)
{
	int r;

	e->attr.attr.sample_period = 1;
	e->flags |= PK_EVF_PERIOD_SET | PK_EVF_NO_INHERIT;
	e->attr.attr.config1 = (uint64_t)(uintptr_t)e->probe;
	e->attr.attr.config2 = offset;
	if ((r = pk_ep_dup_bounded(p, &e->pmu, pmu_name, strlen(pmu_name), col)) < 0 ||
	    (r = pk_ep_apply_mods(p, e, m, false)) < 0)
		return r;
	return pk_ep_finish(p, e, p->s + col, p->pos - col, col);
}

static int parse_kprobe(struct parser *p, size_t col, bool ret, bool leader)
{
	char func[256];
	uint64_t off = 0;
	size_t fcol = p->pos, n = scan_field(p, ":+");
	int r;

	if ((r = copy_field(p, func, sizeof(func), fcol, n, "kernel function")) < 0)
		return r;
	if ((r = parse_offset(p, ret, &off)) < 0)
		return r;
	const struct pk_pmu *pmu;
	struct mods m;
	if ((r = probe_pmu(p, "kprobe", col, &pmu, &m)) < 0)
		return r;
	struct pk_event_spec *e = pk_ep_new_spec(p, PK_EV_PMU, col);
	if (!e)
		return p->code;
	e->leader = leader;
	e->attr.attr.type = pk_pmu__type(pmu);
	if ((r = encode_terms(p, pmu, ret ? "retprobe" : "", e, col)) < 0)
		return r;
	if ((r = pk_ep_dup_bounded(p, &e->probe, func, strlen(func), fcol)) < 0)
		return r;
	return finish_probe(p, e, "kprobe", off, &m, col);
}

/* Hold the resolved file open and point the PMU at the descriptor; refuse if the path
 * no longer names the file that was resolved. */
static int hold_file(struct parser *p, struct pk_event_spec *e, const struct pk_probe_point *pt,
		     size_t col)
{
	struct stat st;
	char fdpath[64];
	int fd = open(pt->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return pk_ep_fail(p, -errno, col, "cannot open '%s': %s", pt->path, strerror(errno));
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_dev != pt->dev || (uint64_t)st.st_ino != pt->ino) {
		close(fd);
		return pk_ep_fail(p, -ESTALE, col,
				  "'%s' was replaced while its symbols were read: the offset "
				  "found may not be the new file's; try again",
				  pt->path);
	}
	e->probe_fd = fd;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	int r;
	if ((r = pk_ep_dup_bounded(p, &e->probe, fdpath, strlen(fdpath), col)) < 0 ||
	    (r = pk_ep_dup_bounded(p, &e->probe_file, pt->path, strlen(pt->path), col)) < 0)
		return r;
	e->probe_dev = pt->dev;
	e->probe_ino = pt->ino;
	return 0;
}

/* u:, r: and sdt: */
static int parse_uprobe(struct parser *p, size_t col, const char *kind, bool leader)
{
	char bin[PK_PROBE_PATH_MAX], func[256], prov[128] = "", msg[256];
	bool ret = !strcmp(kind, "r"), sdt = !strcmp(kind, "sdt");
	uint64_t plus = 0;
	size_t bcol = p->pos, fcol, n;
	int r;

	if (sdt) {
		if ((r = parse_sdt_name(p, prov, sizeof(prov), func, sizeof(func), &fcol)) < 0)
			return r;
		if (p->probe_pid > 0) {
			snprintf(bin, sizeof(bin), "/proc/%d/exe", p->probe_pid);
		} else {
			PK_OPTS(pk_probe_opts, fo);
			if (pk_probe__find_binary(prov, &fo, bin, sizeof(bin), NULL, 0) < 0)
				return pk_ep_fail(p, -ENOENT, col,
						  "no library named like the provider '%s': name the "
						  "binary, u:BINARY:%%%s:%s (or give -p)",
						  prov, prov, func);
		}
	} else {
		n = scan_field(p, ":");
		if ((r = copy_field(p, bin, sizeof(bin), bcol, n, "binary")) < 0)
			return r;
		if ((r = expect_colon(p, "a function")) < 0)
			return r;
		fcol = p->pos;
		if (cur(p) == '%') {
			p->pos++;
			if ((r = parse_sdt_name(p, prov, sizeof(prov), func, sizeof(func),
						&fcol)) < 0)
				return r;
			sdt = true;
			if (ret)
				return pk_ep_fail(p, -PK_ERR_PARSE, col,
						  "an SDT marker has no return probe (use u:)");
		} else {
			n = scan_field(p, ":+");
			if ((r = copy_field(p, func, sizeof(func), fcol, n, "function")) < 0)
				return r;
			if ((r = parse_offset(p, ret, &plus)) < 0)
				return r;
		}
	}
	const struct pk_pmu *pmu;
	struct mods m;
	if ((r = probe_pmu(p, "uprobe", col, &pmu, &m)) < 0)
		return r;

	struct pk_probe_point *pt = malloc(sizeof(*pt));
	if (!pt)
		return pk_ep_fail_nomem(p, col);
	PK_OPTS(pk_probe_opts, po, .pid = p->probe_pid);
	msg[0] = '\0';
	r = sdt ? pk_probe__resolve_sdt(bin, prov, func, &po, pt, msg, sizeof(msg))
		: pk_probe__resolve(bin, func, plus, &po, pt, msg, sizeof(msg));
	if (r < 0) {
		free(pt);
		return pk_ep_fail(p, r, sdt ? col : fcol, "%s", msg[0] ? msg : pk_strerror(r));
	}
	struct pk_event_spec *e = pk_ep_new_spec(p, PK_EV_PMU, col);
	if (!e) {
		free(pt);
		return p->code;
	}
	e->leader = leader;
	e->attr.attr.type = pk_pmu__type(pmu);
	char terms[64] = "";
	if (ret)
		snprintf(terms, sizeof(terms), "retprobe");
	else if (pt->ref_ctr_offset)
		snprintf(terms, sizeof(terms), "ref_ctr_offset=%#" PRIx64, pt->ref_ctr_offset);
	if ((r = encode_terms(p, pmu, terms, e, col)) < 0 || (r = hold_file(p, e, pt, col)) < 0) {
		free(pt);
		return r;
	}
	e->probe_offset = pt->offset;
	free(pt);
	return finish_probe(p, e, "uprobe", e->probe_offset, &m, col);
}

bool pk_ep_is_probe_kind(const char *tok, size_t n)
{
	static const char *const kinds[] = { "u", "r", "k", "kr", "sdt" };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (n == strlen(kinds[i]) && !memcmp(tok, kinds[i], n))
			return true;
	return false;
}

int pk_ep_parse_probe(struct parser *p, size_t col, size_t n, bool leader)
{
	char kind[4];
	memcpy(kind, p->s + col, n);
	kind[n] = '\0';
	p->pos = col + n + 1; /* the ':' */
	if (kind[0] == 'k')
		return parse_kprobe(p, col, n == 2, leader);
	return parse_uprobe(p, col, kind, leader);
}

PK_API int pk_event_spec__probe_check(const struct pk_event_spec *ev)
{
	struct stat st;
	if (!ev || !ev->probe_file)
		return 0;
	if (stat(ev->probe_file, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_dev != ev->probe_dev || (uint64_t)st.st_ino != ev->probe_ino)
		return -ESTALE;
	return 0;
}

PK_API const char *pk_event_spec__probe_file(const struct pk_event_spec *ev)
{
	return ev ? ev->probe_file : NULL;
}

PK_API uint64_t pk_event_spec__probe_offset(const struct pk_event_spec *ev)
{
	return ev ? ev->probe_offset : 0;
}
