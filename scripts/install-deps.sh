#!/usr/bin/env bash
# Install perfkit's build and test dependencies from Debian's archive.
# Does nothing (and needs no network) when everything is already installed.
set -euo pipefail

pkgs=(
	cmake make pkg-config gcc clang
	libclang-rt-14-dev      # ASan/UBSan/libFuzzer runtimes for clang
	libcapstone-dev         # disassembler for perfkit annotate (lib/annotate)
	libcmocka-dev           # unit tests
	libelf-dev libdw-dev    # elfutils: ELF, symbols, DWARF, unwinding
	libiberty-dev           # C++ and Rust demanglers (static archive, lib/symbol/demangle.c)
	liblzma-dev libbz2-dev  # static archives libdw.a needs: the tool links statically (tool/CMakeLists.txt)
	libpfm4-dev             # named hardware events
	libtraceevent-dev       # tracepoint formats
	libzstd-dev             # compressed perf.data
	zlib1g-dev              # gzip-compressed pprof output (lib/export)
	chromium nodejs         # browser test of the HTML flame graph (tests/browser)
	golang-go               # `go tool pprof` reads our pprof output in tests
	linux-perf              # the reference we compare against in tests and benches
	strace                  # trace-vs-strace and bench/trace-overhead compare perfkit trace with it
	valgrind                # CLI suite under memcheck
	procps                  # ps/pgrep used by some CLI tests
	time                    # /usr/bin/time -v: peak RSS in bench/report-speed.sh
	python3                 # JSON/number checks in some CLI cases
	locales                 # localedef and locale sources: cli/stat-locale compiles en_US/de_DE
	libc6-dbg python3.11-dbg # debug symbols: report-vs-perf's DWARF cases (inline chains)
	lld rustc               # lld-linked C and Rust: cli/record-unwind-lld; arm64/riscv64 objects: test_unwind_arch
)

# npm ships inside nodesource's nodejs; Debian's nodejs needs the separate package
command -v npm >/dev/null 2>&1 || pkgs+=(npm)

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
