#!/usr/bin/env bash
# bench/push-overhead.sh [BUILD_DIR] [RUNS]: what `record --push` costs (issue 21: the
# pushing thread adds <= 5 % CPU).
#   `perfkit record -g -F 4000 --switch-output=5s` attached with -p to a busy two-thread
#   workload (tests/cli/workloads/hot2.c), PK_BENCH_SECONDS (default 30) s, with and
#   without `--push` to a local Pyroscope ingest receiver (tests/cli/push-receiver.py;
#   its CPU is not counted); RUNS (default 2) runs of each, alternating.
#   PK_BENCH_SYSTEM_WIDE=1: record -a instead (every process of the machine: many more
#   distinct stacks and objects to symbolise per file than the two-loop workload).
#   Measured per run from the recorder's own rusage (/usr/bin/time: the workload is not
#   its child): user + system CPU seconds and peak RSS; the profiles the receiver got.
# Prints the medians and the push's added CPU, as a share of one CPU over the recording
# and relative to the plain recorder (exit status 0 either way: not a ctest test).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
runs=${2:-2}
pk=$(cd "$build" && pwd)/tool/perfkit
[ -x "$pk" ] || { echo "push-overhead: build first ($pk)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "push-overhead: /usr/bin/time (package time) is missing" >&2; exit 1; }
secs=${PK_BENCH_SECONDS:-30}
tmp=$(mktemp -d)
wl_pid= rc_pid=
trap '[ -z "$wl_pid" ] || kill "$wl_pid" 2> /dev/null; [ -z "$rc_pid" ] || kill "$rc_pid" 2> /dev/null; rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/hot2" "$here/../tests/cli/workloads/hot2.c" -pthread
"$tmp/hot2" $(( (secs + 5) * 2 * runs * 1000 + 5000 )) 2 & wl_pid=$!
python3 "$here/../tests/cli/push-receiver.py" --store "$tmp/store" --port-file "$tmp/port" \
	--lifetime $(( (secs + 10) * 2 * runs + 60 )) 2> "$tmp/receiver.log" & rc_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
url=http://127.0.0.1:$(cat "$tmp/port")

# one run: "cpu_seconds rss_kb samples"
measure() {
	local dir=$tmp/run.$RANDOM
	mkdir "$dir"
	local target=(-p "$wl_pid")
	[ "${PK_BENCH_SYSTEM_WIDE:-0}" = 1 ] && target=(-a)
	( cd "$dir" && timeout -s INT "$secs" /usr/bin/time -f '%U %S %M' -o "$dir/time" \
		"$pk" record -q -g -F 4000 -e cpu-clock --switch-output=5s "${target[@]}" -o out.data \
		"$@" > /dev/null 2> "$dir/err" ) || true
	local n=0 f
	for f in "$dir"/out.data.*; do
		n=$(( n + $("$pk" script -i "$f" -G 2> /dev/null | wc -l) ))
	done
	awk -v n="$n" '{ printf "%.3f %d %d\n", $1 + $2, $3, n }' "$dir/time"
	rm -rf "$dir"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: > "$tmp/plain"; : > "$tmp/push"
for r in $(seq "$runs"); do
	measure >> "$tmp/plain"
	measure --push "$url" --spool "$tmp/spool" >> "$tmp/push"
done
pc=$(cut -d' ' -f1 "$tmp/plain" | median); pr=$(cut -d' ' -f2 "$tmp/plain" | median)
qc=$(cut -d' ' -f1 "$tmp/push" | median); qr=$(cut -d' ' -f2 "$tmp/push" | median)
got=$(ls "$tmp/store" 2> /dev/null | grep -c '\.pprof$' || true)
ps=$(cut -d' ' -f3 "$tmp/plain" | median); qs=$(cut -d' ' -f3 "$tmp/push" | median)
printf "%-34s %10s %10s %10s\n" "recorder (${secs} s, -F 4000 -g$([ "${PK_BENCH_SYSTEM_WIDE:-0}" = 1 ] && echo ' -a'))" "cpu_s" "rss_kb" "samples"
printf "%-34s %10s %10s %10s\n" "record --switch-output=5s" "$pc" "$pr" "$ps"
printf "%-34s %10s %10s %10s\n" "record --switch-output=5s --push" "$qc" "$qr" "$qs"
awk -v p="$pc" -v q="$qc" -v s="$secs" -v pr="$pr" -v qr="$qr" -v got="$got" -v runs="$runs" 'BEGIN {
	add = q - p
	rel = (p > 0) ? 100 * add / p : 0
	printf "push adds %.3f CPU s = %.2f %% of one CPU over the recording (%.1f %% of the plain recorder); RSS %+d KB\n",
		add, 100 * add / s, rel, qr - pr
	printf "profiles received: %d over %d runs\n", got, runs
	printf "target (<= 5 %% CPU): %s\n", (100 * add / s <= 5) ? "met" : "NOT met"
}'
