#!/usr/bin/env bash
# Install perfkit's dependencies from Debian's archive: with --build, only what building
# and installing needs; without, the test suite's tools too.
# Does nothing (and needs no network) when everything is already installed.
set -euo pipefail

# What building and installing perfkit needs (`make`, `make install`, `make demo`)
build_pkgs=(
	cmake make pkg-config gcc
	libcapstone-dev         # disassembler for perfkit annotate (lib/annotate)
	libelf-dev libdw-dev    # elfutils: ELF, symbols, DWARF, unwinding
	libiberty-dev           # C++ and Rust demanglers (static archive, lib/symbol/demangle.c)
	liblzma-dev libbz2-dev  # static archives libdw.a needs: the tool links statically (tool/CMakeLists.txt)
	libpfm4-dev             # named hardware events
	libtraceevent-dev       # tracepoint formats
	libzstd-dev             # compressed perf.data
	zlib1g-dev              # gzip-compressed pprof output (lib/export)
	python3                 # renders docs/perfkit-*.md into man pages (scripts/md2man.py)
	libncurses-dev          # the terminal screen of perfkit top (ncursesw; tool/top-tui.c)
	libdebuginfod-dev       # debug files by build-id from debuginfod servers (tool/debuginfod.c, dlopen'ed)
	libarchive-dev          # perfkit archive's tar.zst / tar.bz2 (tool/cmd-archive.c, dlopen'ed)
	libcurl4-openssl-dev    # HTTP(S) of perfkit push (header; libcurl4 is loaded at run time)
)
# What the test suite needs on top (`make check`)
test_pkgs=(
	clang
	libclang-rt-14-dev      # ASan/UBSan/libFuzzer runtimes for clang
	libcmocka-dev           # unit tests
	chromium nodejs         # browser test of the HTML flame graph (tests/browser)
	golang-go               # `go tool pprof` reads our pprof output in tests
	linux-perf              # the reference we compare against in tests and benches
	strace                  # trace-vs-strace and bench/trace-overhead compare perfkit trace with it
	valgrind                # CLI suite under memcheck
	procps                  # ps/pgrep used by some CLI tests
	time                    # /usr/bin/time -v: peak RSS in bench/report-speed.sh
	locales                 # localedef and locale sources: cli/stat-locale compiles en_US/de_DE
	libc6-dbg python3.11-dbg # debug symbols: report-vs-perf's DWARF cases (inline chains)
	systemtap-sdt-dev       # sys/sdt.h: the SDT marker program of cli/probe-sdt
	lld rustc               # lld-linked C and Rust: cli/record-unwind-lld; arm64/riscv64 objects: test_unwind_arch
	man-db groff-base       # install/man-pages renders every installed page with man -l
	tmux                    # drives perfkit top, the pager and perfkit help in a real terminal
	zsh                     # install/man-pages checks the zsh completion script parses
	debuginfod              # a real debuginfod server for cli/report-debuginfod
	debootstrap             # make check-bare: a bare Debian 12 root (scripts/bare-build-test.sh)
)

case ${1:-all} in
--build) pkgs=("${build_pkgs[@]}") ;;
all|--all) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
*) echo "usage: install-deps.sh [--build]   (build dependencies only, or everything)" >&2; exit 2 ;;
esac

# npm ships inside nodesource's nodejs; Debian's nodejs needs the separate package
[ "${1:-all}" = --build ] || command -v npm >/dev/null 2>&1 || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root (or: sudo apt-get install ${missing[*]})" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
