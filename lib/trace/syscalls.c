/* SPDX-License-Identifier: MIT */
/*
 * lib/trace/syscalls.c - system call names (x86-64 numbers), and arguments and return
 * values as text where the value itself carries the meaning.
 *
 * raw_syscalls:sys_enter carries the number and the six argument registers, nothing
 * behind them (reading user memory needs BPF): paths and structs stay pointers. The
 * argument kinds below are those of the kernel's prototypes (include/linux/syscalls.h);
 * the flag values are the UAPI ones, the same on every architecture for the flags decoded
 * here except the mmap/open bits checked against <fcntl.h>/<sys/mman.h> of x86-64.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <perfkit/trace.h>
#include "syscalls-x86_64.h"

#define NR_SYSCALLS ((long)(sizeof(pk_syscalls_x86_64) / sizeof(pk_syscalls_x86_64[0])))

const char *pk_syscall__name(long nr)
{
	return nr >= 0 && nr < NR_SYSCALLS ? pk_syscalls_x86_64[nr] : NULL;
}

long pk_syscall__nr(const char *name)
{
	if (name)
		for (long i = 0; i < NR_SYSCALLS; i++)
			if (pk_syscalls_x86_64[i] && !strcmp(pk_syscalls_x86_64[i], name))
				return i;
	errno = ENOENT;
	return -1;
}

long pk_syscall__max(void)
{
	return NR_SYSCALLS;
}

const char *pk_errno__name(int err)
{
	if (err <= 0 || err > 4095)
		return NULL;
	return strerrorname_np(err);
}

bool pk_syscall__failed(int64_t ret)
{
	return ret < 0 && ret >= -4095;
}

/* Argument kinds. */
enum {
	A_HEX = 'x',    /* a number best read in hex, or a pointer */
	A_UINT = 'u',   /* a count or size */
	A_INT = 'd',
	A_FD = 'f',
	A_DFD = 'D',    /* a directory fd: AT_FDCWD is CWD */
	A_OFLAGS = 'O', /* open flags */
	A_MODE = 'm',   /* octal */
	A_PROT = 'p',   /* mmap prot */
	A_MFLAGS = 'M', /* mmap flags */
	A_SIG = 's',
	A_PID = 'P',
	A_ATFLAGS = 'a',/* AT_* flags */
	A_WHENCE = 'w',
};

/* "name:kind,..." per system call; the kinds are the letters above. */
static const struct { const char *name, *args; } specs[] = {
	{ "read", "fd:f,buf:x,count:u" },
	{ "write", "fd:f,buf:x,count:u" },
	{ "pread64", "fd:f,buf:x,count:u,pos:d" },
	{ "pwrite64", "fd:f,buf:x,count:u,pos:d" },
	{ "readv", "fd:f,vec:x,vlen:u" },
	{ "writev", "fd:f,vec:x,vlen:u" },
	{ "open", "filename:x,flags:O,mode:m" },
	{ "openat", "dfd:D,filename:x,flags:O,mode:m" },
	{ "creat", "pathname:x,mode:m" },
	{ "close", "fd:f" },
	{ "stat", "filename:x,statbuf:x" },
	{ "lstat", "filename:x,statbuf:x" },
	{ "fstat", "fd:f,statbuf:x" },
	{ "newfstatat", "dfd:D,filename:x,statbuf:x,flag:a" },
	{ "statx", "dfd:D,filename:x,flags:a,mask:x,buffer:x" },
	{ "access", "filename:x,mode:d" },
	{ "faccessat", "dfd:D,filename:x,mode:d" },
	{ "faccessat2", "dfd:D,filename:x,mode:d,flags:a" },
	{ "lseek", "fd:f,offset:d,whence:w" },
	{ "mmap", "addr:x,len:u,prot:p,flags:M,fd:f,off:x" },
	{ "mprotect", "start:x,len:u,prot:p" },
	{ "munmap", "addr:x,len:u" },
	{ "brk", "brk:x" },
	{ "ioctl", "fd:f,cmd:x,arg:x" },
	{ "dup", "fildes:f" },
	{ "dup2", "oldfd:f,newfd:f" },
	{ "dup3", "oldfd:f,newfd:f,flags:x" },
	{ "pipe2", "fildes:x,flags:x" },
	{ "fcntl", "fd:f,cmd:d,arg:x" },
	{ "getdents64", "fd:f,dirent:x,count:u" },
	{ "kill", "pid:P,sig:s" },
	{ "tkill", "pid:P,sig:s" },
	{ "tgkill", "tgid:P,pid:P,sig:s" },
	{ "rt_sigaction", "sig:s,act:x,oact:x,sigsetsize:u" },
	{ "rt_sigprocmask", "how:d,nset:x,oset:x,sigsetsize:u" },
	{ "exit", "error_code:d" },
	{ "exit_group", "error_code:d" },
	{ "wait4", "upid:P,stat_addr:x,options:x,ru:x" },
	{ "clone", "clone_flags:x,newsp:x,parent_tidptr:x,child_tidptr:x,tls:x" },
	{ "execve", "filename:x,argv:x,envp:x" },
	{ "unlink", "pathname:x" },
	{ "unlinkat", "dfd:D,pathname:x,flag:a" },
	{ "mkdir", "pathname:x,mode:m" },
	{ "mkdirat", "dfd:D,pathname:x,mode:m" },
	{ "readlink", "path:x,buf:x,bufsiz:u" },
	{ "readlinkat", "dfd:D,pathname:x,buf:x,bufsiz:u" },
	{ "fchmodat", "dfd:D,filename:x,mode:m" },
	{ "fchownat", "dfd:D,filename:x,user:u,group:u,flag:a" },
	{ "utimensat", "dfd:D,filename:x,utimes:x,flags:a" },
	{ "chdir", "filename:x" },
	{ "fchdir", "fd:f" },
	{ "getcwd", "buf:x,size:u" },
	{ "nanosleep", "rqtp:x,rmtp:x" },
	{ "clock_nanosleep", "which_clock:d,flags:x,rqtp:x,rmtp:x" },
	{ "futex", "uaddr:x,op:d,val:u,utime:x,uaddr2:x,val3:u" },
	{ "getrandom", "buf:x,count:u,flags:x" },
	{ "set_tid_address", "tidptr:x" },
	{ "set_robust_list", "head:x,len:u" },
	{ "rseq", "rseq:x,rseq_len:u,flags:x,sig:x" },
	{ "prlimit64", "pid:P,resource:d,new_rlim:x,old_rlim:x" },
	{ "arch_prctl", "option:x,arg2:x" },
	{ "getppid", "" },
	{ "getpid", "" },
	{ "gettid", "" },
	{ "getuid", "" },
	{ "geteuid", "" },
	{ "getgid", "" },
	{ "getegid", "" },
	{ "sched_yield", "" },
	{ "fsync", "fd:f" },
	{ "fdatasync", "fd:f" },
	{ "ftruncate", "fd:f,length:d" },
	{ "fadvise64", "fd:f,offset:d,len:u,advice:d" },
	{ "socket", "family:d,type:x,protocol:d" },
	{ "connect", "fd:f,uservaddr:x,addrlen:u" },
	{ "sendto", "fd:f,buff:x,len:u,flags:x,addr:x,addr_len:u" },
	{ "recvfrom", "fd:f,ubuf:x,size:u,flags:x,addr:x,addr_len:x" },
	{ "poll", "ufds:x,nfds:u,timeout_msecs:d" },
	{ "ppoll", "ufds:x,nfds:u,tsp:x,sigmask:x,sigsetsize:u" },
	{ "epoll_wait", "epfd:f,events:x,maxevents:d,timeout:d" },
	{ "epoll_pwait", "epfd:f,events:x,maxevents:d,timeout:d,sigmask:x,sigsetsize:u" },
	{ "madvise", "start:x,len_in:u,behavior:d" },
	{ "sysinfo", "info:x" },
	{ "uname", "name:x" },
};

struct out {
	char *buf;
	size_t len, used; /* used may pass len: the length needed */
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = o->used < o->len ? o->len - o->used : 0;
	int n = vsnprintf(room ? o->buf + o->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used += (size_t)n;
}

struct flag { uint64_t bit; const char *name; };

static void put_flags(struct out *o, uint64_t v, const struct flag *f, size_t n)
{
	bool any = false;
	for (size_t i = 0; i < n; i++)
		if (f[i].bit && (v & f[i].bit) == f[i].bit) {
			put(o, "%s%s", any ? "|" : "", f[i].name);
			v &= ~f[i].bit;
			any = true;
		}
	if (v || !any)
		put(o, any ? "|%#llx" : "%#llx", (unsigned long long)v);
}

#define F(x) { x, #x }
static const struct flag oflags[] = {
	F(O_CREAT), F(O_EXCL), F(O_NOCTTY), F(O_TRUNC), F(O_APPEND), F(O_NONBLOCK),
	F(O_SYNC), F(O_DSYNC), F(O_DIRECT), F(O_TMPFILE), F(O_DIRECTORY), F(O_NOFOLLOW),
	F(O_NOATIME), F(O_CLOEXEC), F(O_PATH), F(O_ASYNC), { 0100000, "O_LARGEFILE" },
};
static const struct flag prot[] = { F(PROT_READ), F(PROT_WRITE), F(PROT_EXEC) };
static const struct flag mflags[] = {
	F(MAP_SHARED), F(MAP_PRIVATE), F(MAP_FIXED), F(MAP_ANONYMOUS), F(MAP_GROWSDOWN),
	F(MAP_DENYWRITE), F(MAP_EXECUTABLE), F(MAP_LOCKED), F(MAP_NORESERVE),
	F(MAP_POPULATE), F(MAP_NONBLOCK), F(MAP_STACK), F(MAP_HUGETLB),
	F(MAP_FIXED_NOREPLACE),
};
static const struct flag atflags[] = {
	F(AT_SYMLINK_NOFOLLOW), F(AT_REMOVEDIR), F(AT_SYMLINK_FOLLOW), F(AT_NO_AUTOMOUNT),
	F(AT_EMPTY_PATH),
};
#undef F

static void put_arg(struct out *o, char kind, uint64_t v)
{
	int64_t s = (int64_t)v;
	switch (kind) {
	case A_UINT: put(o, "%llu", (unsigned long long)v); break;
	case A_INT: case A_PID: put(o, "%lld", (long long)s); break;
	case A_FD: put(o, "%d", (int)v); break;
	case A_DFD:
		if ((int)v == AT_FDCWD)
			put(o, "CWD");
		else
			put(o, "%d", (int)v);
		break;
	case A_OFLAGS: {
		/* the access mode is a two-bit number, not flags: O_RDONLY is 0 */
		static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE" };
		uint64_t rest = v & ~(uint64_t)O_ACCMODE;
		put(o, "%s", acc[v & O_ACCMODE]);
		if (rest) {
			put(o, "|");
			put_flags(o, rest, oflags, sizeof(oflags) / sizeof(oflags[0]));
		}
		break;
	}
	case A_MODE: put(o, "%#llo", (unsigned long long)v); break;
	case A_PROT:
		if (!v)
			put(o, "PROT_NONE");
		else
			put_flags(o, v, prot, sizeof(prot) / sizeof(prot[0]));
		break;
	case A_MFLAGS: put_flags(o, v, mflags, sizeof(mflags) / sizeof(mflags[0])); break;
	case A_ATFLAGS:
		if (!v)
			put(o, "0");
		else
			put_flags(o, v, atflags, sizeof(atflags) / sizeof(atflags[0]));
		break;
	case A_SIG: {
		const char *n = v > 0 && v < 65 ? sigabbrev_np((int)v) : NULL;
		if (n)
			put(o, "SIG%s", n);
		else
			put(o, "%lld", (long long)s);
		break;
	}
	case A_WHENCE: {
		static const char *const w[] = { "SET", "CUR", "END", "DATA", "HOLE" };
		if (v < 5)
			put(o, "%s", w[v]);
		else
			put(o, "%llu", (unsigned long long)v);
		break;
	}
	default: put(o, "%#llx", (unsigned long long)v); break;
	}
}

static const char *spec_of(long nr)
{
	const char *name = pk_syscall__name(nr);
	if (name)
		for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
			if (!strcmp(specs[i].name, name))
				return specs[i].args;
	return NULL;
}

int pk_syscall__format_args(long nr, const uint64_t args[6], char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	const char *spec = spec_of(nr);

	if (len)
		buf[0] = 0;
	if (!spec) {
		for (int i = 0; i < 6; i++)
			if (args[i])
				put(&o, "%sarg%d: %#llx", o.used ? ", " : "", i,
				    (unsigned long long)args[i]);
		return (int)o.used;
	}
	for (int i = 0; *spec && i < 6; i++) {
		const char *colon = strchr(spec, ':');
		if (!colon)
			break;
		put(&o, "%s%.*s: ", i ? ", " : "", (int)(colon - spec), spec);
		put_arg(&o, colon[1], args[i]);
		spec = colon[2] == ',' ? colon + 3 : colon + 2;
	}
	return (int)o.used;
}

/* calls whose return value is an address */
static bool returns_addr(const char *name)
{
	return name && (!strcmp(name, "mmap") || !strcmp(name, "brk") ||
			!strcmp(name, "mremap") || !strcmp(name, "shmat"));
}

int pk_syscall__format_ret(long nr, int64_t ret, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	if (len)
		buf[0] = 0;
	if (pk_syscall__failed(ret)) {
		int e = (int)-ret;
		const char *n = pk_errno__name(e);
		if (n)
			put(&o, "-1 %s (%s)", n, strerror(e));
		else
			put(&o, "-1 (errno %d)", e);
	} else if (returns_addr(pk_syscall__name(nr))) {
		put(&o, "%#llx", (unsigned long long)ret);
	} else {
		put(&o, "%lld", (long long)ret);
	}
	return (int)o.used;
}
