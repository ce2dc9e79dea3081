#!/usr/bin/env bash
# Build perfkit from a fresh clone on a bare Debian 12 system that has only the build
# dependencies, and check the installed result (issue 22: "make && make install" works
# without the test-only tools).
#
#   scripts/bare-build-test.sh [--if-enabled] [SRC]   (as root; SRC: this repository)
#
# --if-enabled (the ctest install/bare-machine): skip unless PK_BARE_TEST=1 (make check-bare).
#
# 1. a minimal Debian 12 root (`debootstrap --variant=minbase bookworm`, ~200 MB of
#    downloads), cached as a tarball so that later runs start from it without network
#    for the base system (PK_BARE_CACHE, default $PK_BARE_DIR/bookworm-minbase.tar.gz);
#    the .deb files of the build dependencies are kept in $PK_BARE_DIR/apt-archives;
# 2. a fresh `git clone` of SRC's committed HEAD (uncommitted changes are not part of it)
#    copied into the root, where, chrooted, `scripts/install-deps.sh --build`, `make` and
#    `make install DESTDIR=/tmp/x` run as the README says;
# 3. checks: the installed `perfkit --version` and `perfkit list` run in the chroot, every
#    installed man page renders with `man -l` (man-db is a test tool, so the host's renders
#    the chroot's files), and none of the test-only packages of install-deps.sh nor their
#    commands (valgrind, chromium, go, perf, tmux, strace, clang, ...) were installed.
#
# The root is rebuilt from the cache on every run (idempotent); the mounts under it are
# taken down on exit, whatever the outcome. Exit 77 (skip) when not root or when
# debootstrap, git or chroot are missing. Settings: PK_BARE_DIR (work directory, default
# /tmp/perfkit-bare), PK_BARE_MIRROR (default http://deb.debian.org/debian),
# PK_BARE_JOBS (make -j, default 2), PK_BARE_KEEP=1 (leave the root for inspection).
set -euo pipefail

if [ "${1:-}" = --if-enabled ]; then
	shift
	[ "${PK_BARE_TEST:-0}" = 1 ] || {
		echo "bare-build-test: skipped: opt-in (downloads ~200 MB, needs root): run 'make check-bare'" >&2
		exit 77
	}
fi
here=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-$here}
work=${PK_BARE_DIR:-/tmp/perfkit-bare}
cache=${PK_BARE_CACHE:-$work/bookworm-minbase.tar.gz}
mirror=${PK_BARE_MIRROR:-http://deb.debian.org/debian}
jobs=${PK_BARE_JOBS:-2}
root=$work/root
t0=$(date +%s)

say() { printf 'bare-build-test: %s (%ds)\n' "$*" $(($(date +%s) - t0)); }
skip() { echo "bare-build-test: skipped: $*" >&2; exit 77; }
die() { echo "bare-build-test: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap and chroot)"
for c in debootstrap git chroot tar; do
	command -v "$c" >/dev/null 2>&1 || skip "'$c' is not installed (apt-get install debootstrap git)"
done
command -v man >/dev/null 2>&1 || skip "'man' is not installed on the host (apt-get install man-db)"

# Every mount point under $root, deepest first.
mounts_under() {
	awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}
# The processes running in the root (ours: started by in_root), killed on the way out
kill_in_root() {
	local p n=0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null && n=$((n + 1))
	done
	[ $n = 0 ] || sleep 1
}
cleanup() {
	local m
	kill_in_root
	for m in $(mounts_under); do umount -l "$m" 2>/dev/null || true; done
	if [ "${PK_BARE_KEEP:-0}" != 1 ] && [ -d "$root" ] && [ -z "$(mounts_under)" ]; then
		rm -rf --one-file-system "$root"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work"
# A previous run killed before its trap: take its mounts down before deleting anything
# (rm through a bind mount of /dev would empty the host's /dev).
for m in $(mounts_under); do umount -l "$m"; done
[ -z "$(mounts_under)" ] || die "mounts remain under $root"
rm -rf --one-file-system "$root"
mkdir -p "$root"

# 1. the base system
if [ -s "$cache" ]; then
	say "base system from $cache"
	tar -C "$root" -xzpf "$cache"
else
	say "debootstrap --variant=minbase bookworm from $mirror"
	debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		{ tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed (log: $work/debootstrap.log)"; }
	tar -C "$root" -czpf "$cache.tmp" . && mv "$cache.tmp" "$cache"
	say "cached the base system in $cache ($(du -h "$cache" | cut -f1))"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
# the same suites as debootstrap's default plus updates and security, as a Debian 12 install
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF

mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
# the .deb files apt downloads are kept between runs (the packages are still installed
# from scratch each time; only their download is saved)
mkdir -p "$work/apt-archives/partial"
mount --bind "$work/apt-archives" "$root/var/cache/apt/archives"

# What the base system holds before install-deps: the test-only packages must be absent
# afterwards, so none may be there already (minbase has none of them).
test_pkgs=$(sed -n '/^test_pkgs=(/,/^)/p' "$src/scripts/install-deps.sh" |
	sed -e '1d' -e '$d' -e 's/#.*//' | tr -s ' \t' '\n' | grep -v '^$' | sort -u)
[ -n "$test_pkgs" ] || die "cannot read test_pkgs from $src/scripts/install-deps.sh"

# 2. a fresh clone, built and installed in the chroot
say "cloning $src (HEAD $(git -C "$src" rev-parse --short HEAD))"
git clone -q --no-local --no-hardlinks "$src" "$root/src/perfkit"
# run in the background and waited for, so that a signal to this script is handled at once
in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 TERM=dumb /bin/bash -c "$1" &
	wait $!
}
say "scripts/install-deps.sh --build"
in_root 'cd /src/perfkit && bash scripts/install-deps.sh --build' >"$work/deps.log" 2>&1 ||
	{ tail -30 "$work/deps.log" >&2; die "install-deps.sh --build failed (log: $work/deps.log)"; }
say "make -j$jobs"
in_root "cd /src/perfkit && make JOBS=$jobs" >"$work/make.log" 2>&1 ||
	{ tail -40 "$work/make.log" >&2; die "make failed (log: $work/make.log)"; }
say "make install DESTDIR=/tmp/x"
in_root 'cd /src/perfkit && make install DESTDIR=/tmp/x' >"$work/install.log" 2>&1 ||
	{ tail -30 "$work/install.log" >&2; die "make install failed (log: $work/install.log)"; }

# 3. the installed result
fails=0
bad() { echo "bare-build-test: FAIL: $*" >&2; fails=$((fails + 1)); }
pk=/tmp/x/usr/local/bin/perfkit
[ -x "$root$pk" ] || die "no $pk after make install"
v=$(in_root "$pk --version" 2>&1) || bad "perfkit --version: $v"
say "installed: $v"
n=$(in_root "$pk list 2>&1 | grep -c -e '^  cpu-clock ' -e '^  task-clock '" 2>/dev/null) || n=0
[ "$n" -ge 2 ] || bad "perfkit list does not list cpu-clock and task-clock: $(in_root "$pk list" 2>&1 | head -5)"
pages=("$root"/tmp/x/usr/local/share/man/man1/perfkit*.1)
[ -e "${pages[0]}" ] || bad "no man page installed under /tmp/x/usr/local/share/man/man1"
for p in "${pages[@]}"; do
	[ -e "$p" ] || continue
	# as tests/install/man.sh: man -l succeeds and renders the NAME section (troff's
	# "can't break line" warnings about long words in table cells are not errors)
	MANWIDTH=80 man -l "$p" >"$work/page.txt" 2>"$work/man.err" || bad "man -l $(basename "$p"): $(head -3 "$work/man.err")"
	grep -q '^NAME' "$work/page.txt" || bad "man -l $(basename "$p") renders no NAME section"
done
say "${#pages[@]} man pages render"
# A test package may come in as a dependency of a build one (cmake depends on procps):
# apt marks it automatically installed. What install-deps.sh asked for is marked manual.
manual=$(in_root 'apt-mark showmanual' 2>/dev/null)
for p in $test_pkgs; do
	if in_root "dpkg-query -W -f='\${Status}' $p 2>/dev/null | grep -q 'install ok installed'"; then
		if grep -qx "$p" <<<"$manual"; then
			bad "test-only package '$p' was installed by install-deps.sh --build"
		else
			say "note: test package '$p' came in as a dependency of a build package"
		fi
	fi
done
for c in valgrind chromium go perf tmux strace clang cmocka node zsh gdb; do
	if in_root "command -v $c" >/dev/null 2>&1; then bad "test-only command '$c' is present"; fi
done
[ ! -e "$root/usr/include/cmocka.h" ] || bad "cmocka.h (a test dependency) is present"
size=$(du -sh --one-file-system "$root" | cut -f1)
[ "$fails" = 0 ] || die "$fails check(s) failed"
say "PASS: fresh clone built and installed with only the build dependencies (root: $size)"
