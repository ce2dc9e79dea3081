#!/usr/bin/env bash
# bench/offcpu-overhead.sh - the cost of `perfkit record --off-cpu` on a context-switch-
# heavy workload: bench/pingpong (two threads ping-ponging a byte over pipes, N round
# trips, about 2N context switches) recorded with -g, without and with --off-cpu, runs
# alternating (median of RUNS each). Prints the workload's own wall time (measured by
# pingpong from its first to its last round trip) and CPU time (user + system of its
# threads: the kernel's recording work in their context shows there), the recorder's
# whole wall time (start-up and the off-CPU pairing at the end included), the slowdown
# of the workload that --off-cpu adds (with / without; the issue's bound: under 1.5x),
# and the bytes it adds to the file per context switch (the file size difference over
# the offcpu-time samples written). On a shared machine the wall times of single runs
# spread widely (0.5 s to 3 s for one configuration at load 15 on 2 CPUs): run it more
# than once; the workload's CPU time is the steadier measure of the kernel's share.
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

# one line per run of pingpong in each of these: "wall_s cpu_s"
read -r _ _ < <(run "$runs" "$wl" "$n" "$tmp/bare.t")
read -r r_off _ r_on _ < <(run_pair "$runs" "$runs" \
	"$pk record -q -g -o plain.data $wl $n $tmp/plain.t" \
	"$pk record -q -g --off-cpu -o off.data $wl $n $tmp/off.t")
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
col() { awk -v c="$2" '{ print $c }' "$1" | med; }
bare=$(col bare.t 1) t_off=$(col plain.t 1) t_on=$(col off.t 1)
c_bare=$(col bare.t 2) c_off=$(col plain.t 2) c_on=$(col off.t 2)
size_off=$(stat -c %s plain.data)
size_on=$(stat -c %s off.data)
switches=$("$pk" script -i off.data -F event | grep -c 'offcpu-time')
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
printf "workload: %d round trips, %d offcpu-time samples (blocked intervals)\n" "$n" "$switches"
printf "%-22s %12s %12s %12s %12s\n" "run" "workload_s" "wl_cpu_s" "recorder_s" "file_bytes"
printf "%-22s %12s %12s %12s %12s\n" "no recorder" "$bare" "$c_bare" "-" "-"
printf "%-22s %12s %12s %12s %12s\n" "record -g" "$t_off" "$c_off" "$r_off" "$size_off"
printf "%-22s %12s %12s %12s %12s\n" "record -g --off-cpu" "$t_on" "$c_on" "$r_on" "$size_on"
printf "workload runs (s): -g: %s; --off-cpu: %s\n" "$(cut -d' ' -f1 plain.t | tr '\n' ' ')" \
	"$(cut -d' ' -f1 off.t | tr '\n' ' ')"
printf "slowdown of --off-cpu: %sx (workload wall time, with / without; vs no recorder: %sx)\n" \
	"$(ratio "$t_on" "$t_off")" "$(ratio "$t_on" "$bare")"
printf "workload CPU with --off-cpu: %sx; recorder wall time: %sx\n" \
	"$(ratio "$c_on" "$c_off")" "$(ratio "$r_on" "$r_off")"
printf "bytes per context switch: %s (file growth / offcpu-time samples)\n" \
	"$(awk -v a="$size_on" -v b="$size_off" -v s="$switches" 'BEGIN { if (s > 0) printf "%.0f", (a - b) / s; else print "-" }')"
if grep -q 'lost' err.out 2> /dev/null; then
	echo "note: the last --off-cpu run lost events:"; cat err.out
fi
