#!/usr/bin/env bash
# bench/record-loss.sh - perf record vs perfkit record on the same 2-thread CPU-bound
# workload (examples/demo-workload), attached with -p so that the recorder's own CPU time
# can be measured alone (bash `time` of the recorder process; the workload is not its
# child). Prints samples, lost events, recorder CPU time and perfkit/perf ratios for
#   -F 20000 -g,   -F max -g,   --call-graph dwarf -F 4000.
# usage: bench/record-loss.sh [BUILD_DIR] [WORKLOAD_MS]
set -u
build=${1:-build}
ms=${2:-3000}
pk=$build/tool/perfkit
wl=$build/examples/demo-workload
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 77; }
[ -x "$pk" ] && [ -x "$wl" ] || { echo "build $build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TIMEFORMAT='%U %S'

# run_one RECORDER OUT ARGS... -> "samples lost cpu_seconds"
run_one() {
	local rec=$1 out=$2; shift 2
	"$wl" "$ms" > /dev/null & local wp=$!
	sleep 0.05
	local t
	t=$( { time "$rec" record -q -o "$out" -p $wp "$@" > /dev/null 2>&1; } 2>&1 )
	wait $wp 2>/dev/null
	local cpu samples lost
	cpu=$(awk '{ printf "%.3f", $1 + $2 }' <<< "$t")
	samples=$("$pk" script -i "$out" --json | grep -c '"type":"SAMPLE"')
	lost=$("$pk" script -i "$out" --json --show-all-records |
		awk -F'"lost":' '/"type":"LOST(_SAMPLES)?"/ { split($2, a, /[,}]/); s += a[1] } END { print s + 0 }')
	echo "$samples $lost $cpu"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

printf "%-28s %-8s %10s %8s %8s\n" "mode" "tool" "samples" "lost" "cpu_s"
for mode in "-F 20000 -g" "-F max -g" "--call-graph dwarf -F 4000"; do
	read -r ps pl pc <<< "$(run_one perf "$tmp/perf.data" $mode)"
	read -r ks kl kc <<< "$(run_one "$pk" "$tmp/pk.data" $mode)"
	printf "%-28s %-8s %10s %8s %8s\n" "$mode" perf "$ps" "$pl" "$pc"
	printf "%-28s %-8s %10s %8s %8s\n" "" perfkit "$ks" "$kl" "$kc"
	printf "%-28s %-8s %10s %8s %8s\n" "" ratio "$(ratio "$ks" "$ps")" "$(ratio "$kl" "$pl")" "$(ratio "$kc" "$pc")"
done
