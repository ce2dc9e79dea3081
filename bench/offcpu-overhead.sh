#!/usr/bin/env bash
# bench/offcpu-overhead.sh - the cost of `perfkit record --off-cpu` on a context-switch-
# heavy workload: bench/pingpong (two threads ping-ponging a byte over pipes, N round
# trips, about 2N context switches) recorded with -g, without and with --off-cpu, runs
# alternating (median of RUNS each). Prints the wall times, the slowdown that --off-cpu
# adds (with / without; the issue's bound: under 1.5x), and the bytes it adds to the file
# per context switch (the file size difference over the offcpu-time samples written).
# usage: bench/offcpu-overhead.sh [BUILD_DIR] [ROUND_TRIPS] [RUNS]
set -u
build=${1:-build}
n=${2:-200000}
runs=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
pk=$(cd "$build" && pwd)/tool/perfkit
wl=$(cd "$build" && pwd)/bench/pingpong
[ -x "$pk" ] && [ -x "$wl" ] || { echo "build $build first" >&2; exit 1; }
# shellcheck source=bench/common.bash
. "$here/common.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

read -r bare _ < <(run "$runs" "$wl" "$n")
read -r t_off _ t_on _ < <(run_pair "$runs" "$runs" \
	"$pk record -q -g -o plain.data $wl $n" "$pk record -q -g --off-cpu -o off.data $wl $n")
size_off=$(stat -c %s plain.data)
size_on=$(stat -c %s off.data)
switches=$("$pk" script -i off.data -F event | grep -c 'offcpu-time')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
printf "workload: %d round trips, %d offcpu-time samples (blocked intervals)\n" "$n" "$switches"
printf "%-28s %10s %12s\n" "run" "wall_s" "file_bytes"
printf "%-28s %10s %12s\n" "no recorder" "$bare" "-"
printf "%-28s %10s %12s\n" "record -g" "$t_off" "$size_off"
printf "%-28s %10s %12s\n" "record -g --off-cpu" "$t_on" "$size_on"
printf "slowdown of --off-cpu: %sx (record -g --off-cpu / record -g; vs no recorder: %sx)\n" \
	"$(ratio "$t_on" "$t_off")" "$(ratio "$t_on" "$bare")"
printf "bytes per context switch: %s (file growth / offcpu-time samples)\n" \
	"$(awk -v a="$size_on" -v b="$size_off" -v s="$switches" 'BEGIN { if (s > 0) printf "%.0f", (a - b) / s; else print "-" }')"
