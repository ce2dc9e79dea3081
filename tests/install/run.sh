#!/usr/bin/env bash
# run.sh BUILD_DIR SOURCE_DIR CC: see CMakeLists.txt beside this file.
set -u
build=$(realpath "$1") src=$(realpath "$2") cc=$3
here=$src/tests/install
command -v pkg-config >/dev/null || { echo "pkg-config is not installed" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "cmake --install"; }
pcdir=$(dirname "$(find "$prefix" -name perfkit.pc | head -1)")
[ -f "$pcdir/perfkit.pc" ] || fail "no perfkit.pc installed"
libdir=$(dirname "$pcdir")
[ -e "$libdir/libperfkit.so" ] && [ -e "$libdir/libperfkit.a" ] || fail "libraries missing from $libdir"

# Two programs: the example count-printf (checked by its own .test script) and
# symbolize.c beside this file, which needs libdw (static: liblzma, libbz2, ... too).
progs=("$src/examples/count-printf.c" "$here/symbolize.c")
check_run() { # name binary source
	echo "== $1"
	case $3 in
	*/count-printf.c)
		env -u LD_LIBRARY_PATH bash "$src/examples/count-printf.test" "$2" > "$tmp/$1.out" 2>&1 ;;
	*)
		env -u LD_LIBRARY_PATH "$2" > "$tmp/$1.out" 2>&1 &&
			grep -Eq '^target_function at symbolize\.c:[0-9]+$' "$tmp/$1.out" ;;
	esac || { cat "$tmp/$1.out"; fail "$1 does not run as expected"; }
	cat "$tmp/$1.out"
}
needs_so() { readelf -d "$1" | grep -q 'NEEDED.*libperfkit\.so'; }
# the programs must load the installed library, never the build tree's
loads_installed() { ldd "$1" | grep -q "$libdir/libperfkit.so" || fail "$1 does not load $libdir/libperfkit.so"; }

pc() { PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} pkg-config "$@"; }
cflags=$(pc --cflags perfkit) || fail "pkg-config --cflags"
inc_ok=0
for f in $cflags; do
	[[ $f == -I* ]] && [ "$(realpath -m "${f#-I}")" = "$(realpath "$prefix/include")" ] && inc_ok=1
done
[ $inc_ok = 1 ] || fail "pkg-config --cflags does not name the installed headers: $cflags"
libs=$(pc --libs perfkit) && slibs=$(pc --static --libs perfkit) || fail "pkg-config --libs"

for p in "${progs[@]}"; do
	n=$(basename "$p" .c)
	# pkg-config, shared (found through an rpath)
	# shellcheck disable=SC2086
	"$cc" -g -o "$tmp/pc-shared-$n" "$p" $cflags $libs -Wl,-rpath,"$libdir" ||
		fail "pkg-config shared link of $n"
	needs_so "$tmp/pc-shared-$n" || fail "pc-shared-$n is not linked to libperfkit.so"
	loads_installed "$tmp/pc-shared-$n"
	check_run "pc-shared-$n" "$tmp/pc-shared-$n" "$p"
	# pkg-config --static: fully static. glibc's notes about dlopen/getpwnam in static
	# programs are expected (the library dlopens the C++ runtime to demangle).
	# shellcheck disable=SC2086
	"$cc" -g -static -o "$tmp/pc-static-$n" "$p" $cflags $slibs 2> "$tmp/pc-static.log" ||
		{ cat "$tmp/pc-static.log"; fail "pkg-config --static link of $n"; }
	readelf -d "$tmp/pc-static-$n" | grep -q NEEDED && fail "pc-static-$n has dynamic dependencies"
	check_run "pc-static-$n" "$tmp/pc-static-$n" "$p"
done

# CMake package: perfkit::perfkit and perfkit::perfkit_static
cmake -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$cc" -DPK_PROGRAMS="${progs[*]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	> "$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "find_package(perfkit) configure"; }
cmake --build "$tmp/consumer" > "$tmp/consumer-build.log" 2>&1 ||
	{ cat "$tmp/consumer-build.log"; fail "find_package(perfkit) build"; }
for p in "${progs[@]}"; do
	n=$(basename "$p" .c)
	needs_so "$tmp/consumer/$n-shared" || fail "perfkit::perfkit is not the shared library"
	loads_installed "$tmp/consumer/$n-shared"
	needs_so "$tmp/consumer/$n-static" && fail "perfkit::perfkit_static links libperfkit.so"
	check_run "cmake-shared-$n" "$tmp/consumer/$n-shared" "$p"
	check_run "cmake-static-$n" "$tmp/consumer/$n-static" "$p"
done
echo "install/out-of-tree: pkg-config shared and --static, find_package shared and static: all ran"
