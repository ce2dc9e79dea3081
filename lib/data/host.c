/* SPDX-License-Identifier: MIT */
/* lib/data: byte buffers and the host-description features of perf.data (uname, sysfs,
 * procfs), encoded exactly as perf's readers expect (perf.data-file-format.txt). */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "internal.h"
#include "data-internal.h"

/* ---- byte buffer ---- */

static bool dbuf_reserve(struct pk_dbuf *b, size_t more)
{
	if (b->err)
		return false;
	if (more > SIZE_MAX / 2 - b->len) {
		b->err = -ENOMEM;
		return false;
	}
	if (b->len + more <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void pk_dbuf_put(struct pk_dbuf *b, const void *data, size_t len)
{
	if (!len || !dbuf_reserve(b, len))
		return;
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

void pk_dbuf_zero(struct pk_dbuf *b, size_t len)
{
	if (!len || !dbuf_reserve(b, len))
		return;
	memset(b->p + b->len, 0, len);
	b->len += len;
}

void pk_dbuf_u16(struct pk_dbuf *b, uint16_t v) { pk_dbuf_put(b, &v, sizeof(v)); }
void pk_dbuf_u32(struct pk_dbuf *b, uint32_t v) { pk_dbuf_put(b, &v, sizeof(v)); }
void pk_dbuf_u64(struct pk_dbuf *b, uint64_t v) { pk_dbuf_put(b, &v, sizeof(v)); }

void pk_dbuf_str(struct pk_dbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	size_t padded = pk_align_up(n + 1, PK_DATA_NAME_ALIGN);

	if (padded > UINT32_MAX) {
		b->err = -E2BIG;
		return;
	}
	pk_dbuf_u32(b, (uint32_t)padded);
	pk_dbuf_put(b, s, n);
	pk_dbuf_zero(b, padded - n);
}

void pk_dbuf_release(struct pk_dbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- host features ---- */

static void host_path(char *out, size_t len, const char *root, const char *def, const char *rel)
{
	pk_snprintf(out, len, "%s/%s", root ? root : def, rel);
}

int pk_host__uname(struct pk_dbuf *b, int feat)
{
	struct utsname u;

	if (uname(&u) < 0)
		return -errno;
	switch (feat) {
	case PK_FEAT_HOSTNAME: pk_dbuf_str(b, u.nodename); break;
	case PK_FEAT_OSRELEASE: pk_dbuf_str(b, u.release); break;
	case PK_FEAT_ARCH: pk_dbuf_str(b, u.machine); break;
	default: return -EINVAL;
	}
	return b->err;
}

/* Parse a CPU list ("0-3,8,10-11"); calls fn for every CPU (bounded to 1<<20). Returns
 * the number of CPUs or a negative error. */
static int cpulist_parse(const char *s, void (*fn)(unsigned, void *), void *ctx)
{
	int n = 0;

	while (*s) {
		char *end;
		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		unsigned long a = strtoul(s, &end, 10), z = a;
		if (end == s)
			return -PK_ERR_PARSE;
		s = end;
		if (*s == '-') {
			z = strtoul(s + 1, &end, 10);
			if (end == s + 1)
				return -PK_ERR_PARSE;
			s = end;
		}
		if (z < a || z >= (1u << 20))
			return -PK_ERR_PARSE;
		for (unsigned long c = a; c <= z; c++) {
			if (fn)
				fn((unsigned)c, ctx);
			n++;
		}
	}
	return n;
}

static void max_cpu_cb(unsigned c, void *ctx)
{
	unsigned *m = ctx;
	if (c + 1 > *m)
		*m = c + 1;
}

int pk_host__nrcpus(struct pk_dbuf *b, const struct pk_host_info *h, uint32_t *avail)
{
	char path[PATH_MAX], buf[4096];
	unsigned nr_avail = 0;
	int online;

	host_path(path, sizeof(path), h->sysfs_root, "/sys", "devices/system/cpu/present");
	if (pk_read_small_file(path, buf, sizeof(buf)) < 0 ||
	    cpulist_parse(buf, max_cpu_cb, &nr_avail) <= 0)
		nr_avail = 0;
	host_path(path, sizeof(path), h->sysfs_root, "/sys", "devices/system/cpu/online");
	online = pk_read_small_file(path, buf, sizeof(buf)) < 0 ? -1 : cpulist_parse(buf, NULL, NULL);
	if (online <= 0)
		online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (online <= 0)
		return -ENOENT;
	if (nr_avail < (unsigned)online)
		nr_avail = (unsigned)online;
	pk_dbuf_u32(b, nr_avail);
	pk_dbuf_u32(b, (uint32_t)online);
	*avail = nr_avail;
	return b->err;
}

/* Value of the first "key<spaces>: value" line of /proc/cpuinfo, trimmed. */
static int cpuinfo_value(const struct pk_host_info *h, const char *key, char *out, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	char line[1024];
	size_t klen = strlen(key);
	int ret = -ENOENT;

	host_path(path, sizeof(path), h->procfs_root, "/proc", "cpuinfo");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || (line[klen] != '\t' && line[klen] != ' ' &&
						 line[klen] != ':'))
			continue;
		char *colon = strchr(line + klen, ':');
		if (!colon)
			continue;
		pk_snprintf(out, len, "%s", pk_strtrim(colon + 1));
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int pk_host__cpudesc(struct pk_dbuf *b, const struct pk_host_info *h)
{
	char v[512], out[512];
	size_t o = 0;

	if (cpuinfo_value(h, "model name", v, sizeof(v)) < 0 &&
	    cpuinfo_value(h, "Processor", v, sizeof(v)) < 0 &&
	    cpuinfo_value(h, "cpu model", v, sizeof(v)) < 0 &&
	    cpuinfo_value(h, "cpu", v, sizeof(v)) < 0)
		return -ENOENT;
	/* squeeze runs of blanks into one space, as perf does */
	for (const char *s = v; *s && o + 1 < sizeof(out); s++) {
		if (isspace((unsigned char)*s)) {
			if (o && out[o - 1] != ' ')
				out[o++] = ' ';
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
	pk_dbuf_str(b, out);
	return b->err;
}

int pk_host__cpuid(struct pk_dbuf *b, const struct pk_host_info *h)
{
	char vendor[128], fam[32], model[32], step[32], out[256];

#if defined(__x86_64__) || defined(__i386__)
	if (cpuinfo_value(h, "vendor_id", vendor, sizeof(vendor)) < 0 ||
	    cpuinfo_value(h, "cpu family", fam, sizeof(fam)) < 0 ||
	    cpuinfo_value(h, "model", model, sizeof(model)) < 0)
		return -ENOENT;
	if (cpuinfo_value(h, "stepping", step, sizeof(step)) < 0)
		pk_snprintf(step, sizeof(step), "0");
	pk_snprintf(out, sizeof(out), "%s,%s,%s,%s", vendor, fam, model, step);
#else
	char path[PATH_MAX];
	(void)vendor; (void)fam; (void)model; (void)step;
	host_path(path, sizeof(path), h->sysfs_root, "/sys",
		  "devices/system/cpu/cpu0/regs/identification/midr_el1");
	if (pk_read_small_file(path, out, sizeof(out)) < 0)
		return -ENOENT;
	pk_strtrim(out);
#endif
	pk_dbuf_str(b, out);
	return b->err;
}

int pk_host__total_mem(struct pk_dbuf *b, const struct pk_host_info *h)
{
	char path[PATH_MAX], buf[16384];
	const char *p;
	uint64_t kb = 0;

	host_path(path, sizeof(path), h->procfs_root, "/proc", "meminfo");
	if (pk_read_small_file(path, buf, sizeof(buf)) < 0)
		return -ENOENT;
	p = strstr(buf, "MemTotal:");
	if (!p)
		return -ENOENT;
	kb = strtoull(p + 9, NULL, 10);
	if (!kb)
		return -ENOENT;
	pk_dbuf_u64(b, kb);
	return b->err;
}

int pk_host__cmdline(struct pk_dbuf *b, const struct pk_host_info *h,
		     const char *const *argv, int argc)
{
	char exe[PATH_MAX], path[PATH_MAX];
	const size_t cmd_max = 65536;
	ssize_t n;

	host_path(path, sizeof(path), h->procfs_root, "/proc", "self/exe");
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		n = 0;
	exe[n] = 0;
	if (argv && argc > 0) {
		pk_dbuf_u32(b, (uint32_t)argc);
		pk_dbuf_str(b, n ? exe : argv[0]);
		for (int i = 1; i < argc; i++)
			pk_dbuf_str(b, argv[i] ? argv[i] : "");
		return b->err;
	}
	/* /proc/self/cmdline: NUL-separated arguments */
	host_path(path, sizeof(path), h->procfs_root, "/proc", "self/cmdline");
	char *buf = malloc(cmd_max);
	if (!buf)
		return -ENOMEM;
	ssize_t len = pk_read_small_file(path, buf, cmd_max);
	if (len <= 0) {
		free(buf);
		return len < 0 ? (int)len : -ENOENT;
	}
	uint32_t nr = 0;
	for (ssize_t i = 0; i < len; i++)
		nr += buf[i] == 0;
	if (buf[len - 1] != 0)
		nr++;
	pk_dbuf_u32(b, nr);
	const char *s = buf;
	for (uint32_t i = 0; i < nr; i++) {
		pk_dbuf_str(b, i == 0 && n ? exe : s);
		s += strlen(s) + 1;
	}
	free(buf);
	return b->err;
}

/* ---- CPU_TOPOLOGY ---- */

struct strlist {
	char **s;
	uint32_t nr;
};

static int strlist_add_unique(struct strlist *l, const char *v)
{
	for (uint32_t i = 0; i < l->nr; i++)
		if (!strcmp(l->s[i], v))
			return 0;
	char **n = realloc(l->s, (l->nr + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	l->s = n;
	l->s[l->nr] = strdup(v);
	if (!l->s[l->nr])
		return -ENOMEM;
	l->nr++;
	return 0;
}

static void strlist_put(struct pk_dbuf *b, const struct strlist *l)
{
	pk_dbuf_u32(b, l->nr);
	for (uint32_t i = 0; i < l->nr; i++)
		pk_dbuf_str(b, l->s[i]);
}

static void strlist_free(struct strlist *l)
{
	for (uint32_t i = 0; i < l->nr; i++)
		free(l->s[i]);
	free(l->s);
}

static int topo_read(const struct pk_host_info *h, unsigned cpu, const char *file, char *buf,
		     size_t len)
{
	char rel[128], path[PATH_MAX];
	pk_snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%u/topology/%s", cpu, file);
	host_path(path, sizeof(path), h->sysfs_root, "/sys", rel);
	ssize_t n = pk_read_small_file(path, buf, len);
	if (n < 0)
		return (int)n;
	pk_strtrim(buf);
	return 0;
}

int pk_host__cpu_topology(struct pk_dbuf *b, const struct pk_host_info *h, uint32_t nr_avail)
{
	struct strlist pkg = { 0 }, thr = { 0 }, die = { 0 };
	struct pk_dbuf ids = { 0 }, dieids = { 0 };
	char v[4096];
	bool have_die = true;
	int ret = 0;

	if (nr_avail == 0 || nr_avail > 65536)
		return -EINVAL;
	for (unsigned cpu = 0; cpu < nr_avail; cpu++) {
		long long core = -1, sock = -1, dieid = -1;
		if (topo_read(h, cpu, "core_id", v, sizeof(v)) == 0)
			core = strtoll(v, NULL, 10);
		if (topo_read(h, cpu, "physical_package_id", v, sizeof(v)) == 0)
			sock = strtoll(v, NULL, 10);
		if (topo_read(h, cpu, "die_id", v, sizeof(v)) == 0)
			dieid = strtoll(v, NULL, 10);
		pk_dbuf_u32(&ids, (uint32_t)core);
		pk_dbuf_u32(&ids, (uint32_t)sock);
		pk_dbuf_u32(&dieids, (uint32_t)dieid);
		if (core == -1 && sock == -1)
			continue; /* offline CPU: no topology directory */
		if (topo_read(h, cpu, "package_cpus_list", v, sizeof(v)) == 0 ||
		    topo_read(h, cpu, "core_siblings_list", v, sizeof(v)) == 0)
			ret = ret ? ret : strlist_add_unique(&pkg, v);
		if (topo_read(h, cpu, "core_cpus_list", v, sizeof(v)) == 0 ||
		    topo_read(h, cpu, "thread_siblings_list", v, sizeof(v)) == 0)
			ret = ret ? ret : strlist_add_unique(&thr, v);
		if (topo_read(h, cpu, "die_cpus_list", v, sizeof(v)) == 0)
			ret = ret ? ret : strlist_add_unique(&die, v);
		else
			have_die = false;
	}
	if (!ret && (pkg.nr == 0 || thr.nr == 0))
		ret = -ENOENT;
	if (!ret) {
		strlist_put(b, &pkg);
		strlist_put(b, &thr);
		pk_dbuf_put(b, ids.p, ids.len);
		if (have_die && die.nr) {
			strlist_put(b, &die);
			pk_dbuf_put(b, dieids.p, dieids.len);
		}
		ret = b->err ? b->err : ids.err ? ids.err : dieids.err;
	}
	strlist_free(&pkg);
	strlist_free(&thr);
	strlist_free(&die);
	pk_dbuf_release(&ids);
	pk_dbuf_release(&dieids);
	return ret;
}
