#!/usr/bin/env bash
# bench/ab-builds.sh OLD_BUILD NEW_BUILD [RUNS]: the perfkit rows of bench/report-speed.sh
# and bench/flamegraph-speed.sh, run with two builds of perfkit side by side (old, new,
# old, new, ...) on the same recordings, so that a change can show it kept the speed
# ("within 5 % of before, or faster"). perf is not run.
#   PK_BENCH_DIR: the folder of recordings (required; make them with
#   `PK_BENCH_DIR=DIR bench/report-speed.sh`). Every one of fp, deep, dwarf, xz, py and sys
#   .data found there is used; the others are skipped.
# Prints, per row, the median wall time and the median CPU time (user + system, which a
# machine shared with other work disturbs less) of each build, and new/old for both.
# Exit status 0 either way: timings depend on the machine; not a ctest test.
set -euo pipefail
# `make bench` runs every script with one build: this one needs two
[ $# -ge 2 ] || { echo "ab-builds: compares two builds (bench/ab-builds.sh OLD_BUILD NEW_BUILD); skipped"; exit 0; }
[ -n "${PK_BENCH_DIR:-}" ] || { echo "ab-builds: PK_BENCH_DIR (a folder of recordings) not set; skipped"; exit 0; }
old=$(cd "${1:?usage: ab-builds.sh OLD_BUILD NEW_BUILD [RUNS]}" && pwd)/tool/perfkit
new=$(cd "${2:?usage: ab-builds.sh OLD_BUILD NEW_BUILD [RUNS]}" && pwd)/tool/perfkit
runs=${3:-5}
[ -x "$old" ] && [ -x "$new" ] || { echo "ab-builds: $old or $new is not built" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "ab-builds: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
dir=${PK_BENCH_DIR:?ab-builds: set PK_BENCH_DIR to a folder of recordings}
cd "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# one CMD...: one timed run; prints "wall cpu" in seconds (output to a scratch folder)
one() {
	local t0=$EPOCHREALTIME t1 u s
	(cd "$work" && /usr/bin/time -f "%U %S" -o "$work/t.out" "$@" > /dev/null 2> "$work/err.out") ||
		{ echo "failed: $*" >&2; tail -3 "$work/err.out" >&2; }
	t1=$EPOCHREALTIME
	read -r u s < "$work/t.out"
	awk -v a="$t0" -v b="$t1" -v u="$u" -v s="$s" 'BEGIN { printf "%.4f %.2f\n", b - a, u + s }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-34s %9s %9s %7s   %8s %8s %7s\n' row "old s" "new s" new/old "old cpu" "new cpu" new/old
row() { # name args...
	local name=$1 i; shift
	local wo=() wn=() co=() cn=() w c
	for i in $(seq "$runs"); do
		read -r w c < <(one "$old" "$@"); wo+=("$w"); co+=("$c")
		read -r w c < <(one "$new" "$@"); wn+=("$w"); cn+=("$c")
	done
	local a b x y
	a=$(printf '%s\n' "${wo[@]}" | median); b=$(printf '%s\n' "${wn[@]}" | median)
	x=$(printf '%s\n' "${co[@]}" | median); y=$(printf '%s\n' "${cn[@]}" | median)
	awk -v n="$name" -v a="$a" -v b="$b" -v x="$x" -v y="$y" 'BEGIN {
		printf "%-34s %9.3f %9.3f %6.2fx   %8.2f %8.2f %6.2fx\n", n, a, b, b / a, x, y, (x > 0 ? y / x : 0) }'
}

for f in fp deep dwarf xz py sys; do
	[ -s "$dir/$f.data" ] || { echo "($f.data not in $dir: skipped)"; continue; }
	cat "$dir/$f.data" > /dev/null
	row "report $f --children" report -i "$dir/$f.data" -q --children
	row "report $f --no-children" report -i "$dir/$f.data" -q --no-children
	row "script $f --json" script -i "$dir/$f.data" --json
	row "script $f" script -i "$dir/$f.data"
	row "flamegraph $f" flamegraph -i "$dir/$f.data" -o "$work/fg.html"
done
