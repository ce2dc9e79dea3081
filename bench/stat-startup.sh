#!/usr/bin/env bash
# bench/stat-startup.sh [BUILD_DIR] [RUNS]: start-up cost of `perfkit stat` against
# `perf stat` on a command that does nothing:
#     perfkit stat -e task-clock,page-faults,context-switches -- true
#     perf    stat -e task-clock,page-faults,context-switches -- true
# run alternately RUNS times (default 200); prints the median wall time of each and the
# ratio. Target: perfkit <= 0.1 x perf. Not a ctest test (timings depend on the machine).
# stat-floor (bench/stat-floor.c) is timed too: the same syscalls with nothing else (child
# created with clone(CLONE_VM), as perfkit does), i.e.
# the lowest start-up this machine allows any tool.
set -euo pipefail
build=${1:-build}
runs=${2:-200}
pk=$build/tool/perfkit
floor=$build/bench/stat-floor
events=task-clock,page-faults,context-switches
[ -x "$pk" ] && [ -x "$floor" ] || { echo "stat-startup: no $pk or $floor (build first)" >&2; exit 1; }
command -v perf >/dev/null || { echo "stat-startup: perf is not installed; skipped"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# bash's $EPOCHREALTIME (microseconds, no fork) around each fork+exec
"$pk" stat -q -e $events -- true
perf stat -q -e $events -- true 2>/dev/null || perf stat -e $events -- true 2>/dev/null
for _ in $(seq "$runs"); do
	t=${EPOCHREALTIME/./}; "$pk" stat -e $events -- true 2>/dev/null
	u=${EPOCHREALTIME/./}; echo $((u - t)) >> "$tmp/pk"
	t=${EPOCHREALTIME/./}; perf stat -e $events -- true 2>/dev/null
	u=${EPOCHREALTIME/./}; echo $((u - t)) >> "$tmp/perf"
	t=${EPOCHREALTIME/./}; "$floor" true 2>/dev/null
	u=${EPOCHREALTIME/./}; echo $((u - t)) >> "$tmp/floor"
	t=${EPOCHREALTIME/./}; /bin/true
	u=${EPOCHREALTIME/./}; echo $((u - t)) >> "$tmp/true"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
a=$(median "$tmp/pk"); b=$(median "$tmp/perf"); c=$(median "$tmp/true"); d=$(median "$tmp/floor")
awk -v a="$a" -v b="$b" -v c="$c" -v d="$d" -v n="$runs" 'BEGIN {
	printf "stat-startup: %d runs each, median wall time (fork+exec of the tool included)\n", n
	printf "  perfkit stat  %8.3f ms\n", a / 1e3
	printf "  perf stat     %8.3f ms\n", b / 1e3
	printf "  stat-floor    %8.3f ms  (clone, 3 counters, exec, wait, read: nothing else)\n", d / 1e3
	printf "  /bin/true     %8.3f ms  (fork+exec floor of this shell loop)\n", c / 1e3
	printf "  ratio perfkit/perf = %.3f (target <= 0.100)\n", a / b
	printf "  ratio stat-floor/perf = %.3f (the best any tool could reach here)\n", d / b
	if (b > d) printf "  perfkit above the floor: %.3f ms = %.3f of perf above it\n", (a - d) / 1e3, (a - d) / (b - d)
}'
