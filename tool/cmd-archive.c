/* SPDX-License-Identifier: MIT */
/*
 * perfkit archive: one tar (zstd, or bzip2 as perf archive writes it) of every object a
 * recording's samples hit (their call chains included) and their debug files, in the
 * layout of perf's build-id cache, so that the recording symbolises on another machine
 * (`tar xf FILE -C ~/.debug` for perf and perfkit, or perfkit's --symfs DIR):
 *   <path>/<build-id>/elf       the object as recorded (".../vdso", ".../kallsyms")
 *   <path>/<build-id>/debug     its separate debug file, when there is one (here, or
 *                               from the debuginfod servers of $DEBUGINFOD_URLS)
 *   .build-id/<xx>/<rest>       symlink to ../../<path>/<build-id>
 * Each file comes from the build-id cache (what record stored) or, when it still has the
 * recorded build-id, from its place; nothing with another build-id is ever packed.
 * The tar is written by libarchive, opened with dlopen (see tool/debuginfod.c for why).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <archive.h>
#include <archive_entry.h>
#include <perfkit/perfkit.h>
#include "builtin.h"
#include "buildid.h"

enum { OPT_BZ2 = 256, OPT_ZSTD, OPT_NO_CALLCHAINS };

static const struct tool_opt opts[] = {
	{ 'o', "output", required_argument, "<file>",
	  "the archive to write (default FILE.tar.zst, or\nFILE.tar.bz2 with --bz2)" },
	{ OPT_BZ2, "bz2", no_argument, NULL, "bzip2, as perf archive writes (slower, larger)" },
	{ OPT_ZSTD, "zstd", no_argument, NULL, "zstd (the default)" },
	{ OPT_NO_CALLCHAINS, "sampled-only", no_argument, NULL,
	  "only the objects of sampled addresses (perf archive's\n"
	  "choice), not those of their call chains" },
	{ TOOL_OPT_NO_DEBUGINFOD, "no-debuginfod", no_argument, NULL,
	  "fetch no missing debug files from $DEBUGINFOD_URLS" },
	{ 'v', "verbose", no_argument, NULL, "name each file packed" },
	{ 0 },
};

const struct tool_help cmd_archive_help = {
	.synopsis = "usage: perfkit archive [<options>] [FILE]\n",
	.intro = "Pack the binaries, debug files, kernel symbols and vdso that the samples of FILE\n"
		 "(default perf.data) hit into FILE.tar.zst, keyed by build-id in the layout of\n"
		 "perf's build-id cache. On another machine: tar xf FILE.tar.zst -C ~/.debug, then\n"
		 "perf report or perfkit report; or tar xf it into DIR and perfkit report --symfs DIR.\n",
	.opts = opts,
};

/* the libarchive calls we make, found with dlsym */
static struct {
	struct archive *(*write_new)(void);
	int (*set_format_pax_restricted)(struct archive *);
	int (*add_filter_zstd)(struct archive *);
	int (*add_filter_bzip2)(struct archive *);
	int (*open_FILE)(struct archive *, FILE *);
	int (*set_bytes_in_last_block)(struct archive *, int);
	int (*write_header)(struct archive *, struct archive_entry *);
	la_ssize_t (*write_data)(struct archive *, const void *, size_t);
	int (*write_close)(struct archive *);
	int (*write_free)(struct archive *);
	const char *(*error_string)(struct archive *);
	struct archive_entry *(*entry_new)(void);
	void (*entry_free)(struct archive_entry *);
	void (*entry_set_pathname)(struct archive_entry *, const char *);
	void (*entry_set_size)(struct archive_entry *, la_int64_t);
	void (*entry_set_filetype)(struct archive_entry *, unsigned int);
	void (*entry_set_perm)(struct archive_entry *, __LA_MODE_T);
	void (*entry_set_symlink)(struct archive_entry *, const char *);
	void (*entry_set_mtime)(struct archive_entry *, time_t, long);
} la;

static bool la_load(void)
{
	void *so = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!so) {
		tool_error("cannot load libarchive.so.13: %s (install libarchive13)", dlerror());
		return false;
	}
	static const struct { const char *name; size_t off; } syms[] = {
#define LA(f, n) { n, offsetof(__typeof__(la), f) }
		LA(write_new, "archive_write_new"),
		LA(set_format_pax_restricted, "archive_write_set_format_pax_restricted"),
		LA(add_filter_zstd, "archive_write_add_filter_zstd"),
		LA(add_filter_bzip2, "archive_write_add_filter_bzip2"),
		LA(open_FILE, "archive_write_open_FILE"),
		LA(set_bytes_in_last_block, "archive_write_set_bytes_in_last_block"),
		LA(write_header, "archive_write_header"),
		LA(write_data, "archive_write_data"),
		LA(write_close, "archive_write_close"),
		LA(write_free, "archive_write_free"),
		LA(error_string, "archive_error_string"),
		LA(entry_new, "archive_entry_new"),
		LA(entry_free, "archive_entry_free"),
		LA(entry_set_pathname, "archive_entry_set_pathname"),
		LA(entry_set_size, "archive_entry_set_size"),
		LA(entry_set_filetype, "archive_entry_set_filetype"),
		LA(entry_set_perm, "archive_entry_set_perm"),
		LA(entry_set_symlink, "archive_entry_set_symlink"),
		LA(entry_set_mtime, "archive_entry_set_mtime"),
#undef LA
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = dlsym(so, syms[i].name);
		if (!p) {
			tool_error("libarchive.so.13 has no %s: too old a libarchive", syms[i].name);
			return false;
		}
		memcpy((char *)&la + syms[i].off, &p, sizeof(p));
	}
	return true;
}

struct packer {
	struct archive *a;
	time_t now;
	int verbose;
	bool debuginfod;        /* fetch debug files missing here */
	unsigned files, links, fetched;
	uint64_t bytes;
	char **done;            /* the .build-id links written (one object per build-id) */
	size_t nr_done, cap_done;
	int err;                /* the first write error, reported once */
};

static int pk_write_entry(struct packer *p, const char *name, unsigned type, const void *buf,
			  size_t len, const char *target)
{
	struct archive_entry *e = la.entry_new();
	if (!e)
		return -ENOMEM;
	la.entry_set_pathname(e, name);
	la.entry_set_filetype(e, type);
	la.entry_set_perm(e, type == AE_IFLNK ? 0777 : 0644);
	la.entry_set_mtime(e, p->now, 0);
	if (target)
		la.entry_set_symlink(e, target);
	la.entry_set_size(e, (la_int64_t)len);
	int rc = la.write_header(p->a, e);
	la.entry_free(e);
	if (rc < ARCHIVE_WARN)
		return -EIO;
	if (buf && len && la.write_data(p->a, buf, len) != (la_ssize_t)len)
		return -EIO;
	if (p->verbose)
		fprintf(stderr, "  %s\n", name);
	return 0;
}

/* the whole file (regular files only; /proc files have no size, so it is read to the end)
 * into a malloc'ed buffer */
static int read_file(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1LL << 32)) {
		close(fd);
		return -EINVAL;
	}
	size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 1u << 20, n = 0;
	char *b = malloc(cap);
	for (;;) {
		if (!b) {
			close(fd);
			return -ENOMEM;
		}
		if (n == cap) {
			if (cap > (1ULL << 32)) {
				free(b);
				close(fd);
				return -EFBIG;
			}
			char *nb = realloc(b, cap * 2);
			if (!nb)
				free(b);
			b = nb;
			cap *= 2;
			continue;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			free(b);
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*out = b;
	*len = n;
	return 0;
}

/* a regular file of known size, streamed (debug files can be larger than memory allows);
 * a file that shrinks meanwhile is completed with zeros, so the archive stays readable */
static int stream_file(struct packer *p, const char *name, int fd, uint64_t size)
{
	int err = pk_write_entry(p, name, AE_IFREG, NULL, size, NULL);
	if (err)
		return err;
	static char chunk[1 << 20];
	bool short_read = false;
	for (uint64_t left = size; left;) {
		size_t want = left < sizeof(chunk) ? (size_t)left : sizeof(chunk);
		ssize_t r = short_read ? 0 : read(fd, chunk, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (!short_read)
				tool_warn("'%s' shrank while it was packed: its copy is not usable",
					  name);
			short_read = true;
			memset(chunk, 0, want);
			r = (ssize_t)want;
		}
		if (la.write_data(p->a, chunk, (size_t)r) != r)
			return -EIO;
		left -= (uint64_t)r;
	}
	p->files++;
	p->bytes += size;
	return 0;
}

static int add_file(struct packer *p, const char *name, const char *src)
{
	int fd = open(src, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (st.st_size > 0) {
		int e = stream_file(p, name, fd, (uint64_t)st.st_size);
		close(fd);
		return e;
	}
	close(fd);
	/* no size (/proc/kallsyms): read to its end first */
	char *buf = NULL;
	size_t len = 0;
	int err = read_file(src, &buf, &len);
	if (err)
		return err;
	err = pk_write_entry(p, name, AE_IFREG, buf, len, NULL);
	free(buf);
	if (!err) {
		p->files++;
		p->bytes += len;
	}
	return err;
}

static bool has_id(const char *path, const uint8_t *id, size_t len)
{
	uint8_t b[PK_BUILD_ID_MAX];
	size_t bl = sizeof(b);
	return pk_build_id__read(path, b, &bl) == 0 && bl == len && !memcmp(b, id, len);
}

/* the first of the build-id caches' copies <cache>/.build-id/xx/yyyy/<base> */
static bool cache_copy(const char *hex, const char *base, char *out, size_t len)
{
	const char *dirs[] = { tool_buildid_dir(), tool_home_debug() };
	for (size_t i = 0; i < 2; i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		int n = snprintf(out, len, "%s/.build-id/%.2s/%s/%s", dirs[i], hex, hex + 2, base);
		if (n > 0 && (size_t)n < len && access(out, R_OK) == 0)
			return true;
	}
	return false;
}

/* /proc/kallsyms, when this is the recorded kernel and its addresses are readable */
static bool host_kallsyms(const uint8_t *id, size_t len)
{
	uint8_t k[PK_BUILD_ID_MAX];
	size_t kl = sizeof(k);
	if (pk_kernel_build_id(NULL, k, &kl) || kl != len || memcmp(k, id, len))
		return false;
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	bool ok = f && fgets(line, sizeof(line), f) && strspn(line, "0") < 16;
	if (f)
		fclose(f);
	return ok;
}

static bool seen(struct packer *p, const char *link)
{
	for (size_t i = 0; i < p->nr_done; i++)
		if (!strcmp(p->done[i], link))
			return true;
	if (p->nr_done == p->cap_done) {
		size_t n = p->cap_done ? 2 * p->cap_done : 16;
		char **d = realloc(p->done, n * sizeof(*d));
		if (!d)
			return false;
		p->done = d;
		p->cap_done = n;
	}
	char *s = strdup(link);
	if (s)
		p->done[p->nr_done++] = s;
	return false;
}

/* A recorded path usable as a member name: absolute, no "." or ".." component, no empty
 * one (a hostile recording must not make a tar that writes outside the directory it is
 * extracted into) */
static bool path_ok(const char *fn)
{
	if (fn[0] != '/' || strlen(fn) >= PATH_MAX - 64)
		return false;
	for (const char *c = fn + 1; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
		if (*c)
			c++;
		else
			break;
	}
	return true;
}

/* One object: its file, its debug file, the .build-id link. 0 (packed, or nothing found
 * for it: *missing is set), or -EIO/-ENOMEM. */
static int pack_object(struct packer *p, const struct pk_data_build_id *b, bool *missing)
{
	char hex[2 * PK_BUILD_ID_MAX + 1];
	tool_build_id_hex(b->build_id, b->build_id_size, hex);
	const uint8_t *id = b->build_id;
	size_t idlen = b->build_id_size;
	const char *fn = b->filename;
	bool kernel = !strcmp(fn, "[kernel.kallsyms]"), vdso = !strcmp(fn, "[vdso]");
	if (idlen < 2 || (!kernel && !vdso && !path_ok(fn)))
		return 0; /* (guest kernels, JIT dumps, anonymous maps, hostile names) */
	char link[64], dir[PATH_MAX], name[PATH_MAX + 16], src[PATH_MAX], target[PATH_MAX + 8];
	snprintf(link, sizeof(link), ".build-id/%.2s/%s", hex, hex + 2);
	if (seen(p, link))
		return 0;
	/* the directory as perf's cache names it: the path without its leading '/' */
	if (snprintf(dir, sizeof(dir), "%s/%s", fn + (fn[0] == '/'), hex) >= (int)sizeof(dir))
		return 0;
	const char *base = kernel ? "kallsyms" : vdso ? "vdso" : "elf";
	bool found = cache_copy(hex, base, src, sizeof(src)) &&
		     (kernel || has_id(src, id, idlen));
	if (!found && kernel && host_kallsyms(id, idlen)) {
		snprintf(src, sizeof(src), "/proc/kallsyms");
		found = true;
	}
	if (!found && !kernel && !vdso && has_id(fn, id, idlen)) {
		snprintf(src, sizeof(src), "%s", fn);
		found = true;
	}
	if (!found) {
		*missing = true;
		if (p->verbose)
			fprintf(stderr, "  (no copy of %s with build-id %s)\n", fn, hex);
		return 0;
	}
	snprintf(name, sizeof(name), "%s/%s", dir, base);
	int err = add_file(p, name, src);
	if (err == -EIO || err == -ENOMEM)
		return err;
	if (err) {
		*missing = true;
		return 0;
	}
	/* its separate debug file: perf's cache copy, else the system's */
	if (!kernel) {
		bool dbg = cache_copy(hex, "debug", src, sizeof(src));
		if (!dbg) {
			int n = snprintf(src, sizeof(src), "/usr/lib/debug/.build-id/%.2s/%s.debug",
					 hex, hex + 2);
			dbg = n > 0 && (size_t)n < sizeof(src) && access(src, R_OK) == 0;
		}
		char *fetched = NULL;
		if (!dbg && p->debuginfod) {
			/* a debug file that is nowhere here: from debuginfod, if it has one */
			int fd = tool_debuginfod_find(id, idlen, &fetched);
			if (fd >= 0) {
				close(fd);
				dbg = fetched && snprintf(src, sizeof(src), "%s", fetched) <
							 (int)sizeof(src);
			}
			free(fetched);
			if (dbg)
				p->fetched++;
		}
		if (dbg && has_id(src, id, idlen)) {
			snprintf(name, sizeof(name), "%s/debug", dir);
			err = add_file(p, name, src);
			if (err == -EIO || err == -ENOMEM)
				return err;
		}
	}
	snprintf(target, sizeof(target), "../../%s", dir);
	err = pk_write_entry(p, link, AE_IFLNK, NULL, 0, target);
	if (!err)
		p->links++;
	return err;
}

int cmd_archive(int argc, char **argv)
{
	const char *output = NULL;
	bool bz2 = false, callchains = true;
	bool debuginfod = true;
	int verbose = 0, c;
	opterr = 0;
	optind = 1;
	while ((c = tool_getopt(argc, argv, opts, 0)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case TOOL_OPT_NO_DEBUGINFOD: debuginfod = false; break;
		case OPT_BZ2: bz2 = true; break;
		case OPT_ZSTD: bz2 = false; break;
		case OPT_NO_CALLCHAINS: callchains = false; break;
		case 'v': verbose++; break;
		default: return tool_bad_option(argv, &cmd_archive_help);
		}
	}
	if (argc - optind > 1)
		return tool_usage_error(&cmd_archive_help, "one recording at a time");
	const char *input = optind < argc ? argv[optind] : "perf.data";
	tool_setup_log(verbose);
	char defout[PATH_MAX];
	if (!output) {
		if (snprintf(defout, sizeof(defout), "%s.tar.%s", input, bz2 ? "bz2" : "zst") >=
		    (int)sizeof(defout)) {
			tool_error("'%s': name too long", input);
			return 1;
		}
		output = defout;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct pk_data_reader *r = tool_open_input(input, NULL);
	if (!r)
		return 1;
	const struct pk_data_env *env = pk_data_reader__env(r);
	struct tool_hits h = { .verbose = verbose };
	struct packer p = { .now = time(NULL), .verbose = verbose, .debuginfod = debuginfod };
	struct tool_outfile of = { 0 };
	FILE *f = NULL;
	int status = 1, err;
	if (!env->nr_build_ids) {
		tool_error("'%s' names no build-ids (recorded with --no-buildid?): nothing to "
			   "archive", input);
		goto out;
	}
	if ((err = tool_hits_collect(r, callchains, &h))) {
		tool_error("cannot read '%s': %s", input, pk_strerror(err));
		goto out;
	}
	if (!la_load())
		goto out;
	if (!(f = tool_outfile_open(&of, output)))
		goto out;
	p.a = la.write_new();
	if (!p.a || la.set_format_pax_restricted(p.a) ||
	    (bz2 ? la.add_filter_bzip2(p.a) : la.add_filter_zstd(p.a)) < ARCHIVE_WARN ||
	    /* no zero padding of the compressed stream to tar's 10 KiB blocks (which
	     * open_filename leaves out for regular files, open_FILE does not) */
	    la.set_bytes_in_last_block(p.a, 1) || la.open_FILE(p.a, f)) {
		tool_error("cannot start the archive '%s': %s", output,
			   p.a ? la.error_string(p.a) : "out of memory");
		goto out;
	}
	unsigned missing = 0;
	err = 0;
	for (size_t i = 0; i < env->nr_build_ids && !err; i++) {
		const struct pk_data_build_id *b = &env->build_ids[i];
		bool miss = false;
		if (!b->filename || !tool_hits_has(&h, b))
			continue;
		err = pack_object(&p, b, &miss);
		if (miss) {
			missing++;
			tool_warn("no file with the recorded build-id of '%s': not in the archive "
				  "(rebuilt or removed since, and not in the build-id cache)",
				  b->filename);
		}
	}
	if (!err && la.write_close(p.a))
		err = -EIO;
	if (err)
		tool_error("cannot write '%s': %s", output,
			   err == -EIO && la.error_string(p.a) ? la.error_string(p.a)
							      : pk_strerror(err));
	la.write_free(p.a);
	p.a = NULL;
	int cerr = tool_outfile_close(&of, err);
	f = NULL;
	if (!err && cerr)
		tool_error("cannot write '%s': %s", output, pk_strerror(cerr));
	if (err || cerr)
		goto out;
	if (!p.links) {
		tool_error("no object of '%s' could be packed", input);
		unlink(output);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	struct stat st;
	long long size = stat(output, &st) == 0 ? (long long)st.st_size : -1;
	char dnote[64] = "";
	if (p.fetched)
		snprintf(dnote, sizeof(dnote), ", %u debug file%s from debuginfod", p.fetched,
			 p.fetched == 1 ? "" : "s");
	printf("%s: %u objects (%u files%s, %.1f MB) into %.1f MB in %.2f s%s\n", output,
	       p.links, p.files, dnote, (double)p.bytes / 1e6, (double)size / 1e6,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       missing ? " (some objects missing: see above)" : "");
	printf("On the machine that reads %s:\n"
	       "  mkdir -p ~/.debug && tar xf %s -C ~/.debug    (perf report, perfkit report)\n"
	       "or\n"
	       "  mkdir DIR && tar xf %s -C DIR && perfkit report -i %s --symfs DIR\n",
	       input, output, output, input);
	status = tool_finish_stdout(0);
out:
	if (p.a)
		la.write_free(p.a);
	if (f)
		tool_outfile_close(&of, -ECANCELED);
	for (size_t i = 0; i < p.nr_done; i++)
		free(p.done[i]);
	free(p.done);
	tool_hits_free(&h);
	pk_data_reader__free(r);
	return status;
}
