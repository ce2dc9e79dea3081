#!/usr/bin/env bash
# bench/flamegraph-speed.sh [BUILD_DIR] [RUNS]: how long `perfkit flamegraph` takes on a
# ~1M-sample recording compared with `perfkit report` on the same file, and how big the
# HTML page gets (issue 7: flame graph <= 2x report's time, HTML < 10 MB).
#   fp.data: cpu-clock samples with frame-pointer call chains, recorded here by real
#   `perf record -g -c 50000` (20 kHz per CPU) over two demo-workload processes for
#   PK_BENCH_SECONDS (default 25) s: ~1M samples when both CPUs are free. Set PK_BENCH_DIR
#   to keep (or reuse) the recording, e.g. the one bench/report-speed.sh made.
# Times are medians of RUNS (default 3) of
#     perfkit report -i fp.data            (default mode, output to /dev/null)
#     perfkit flamegraph -i fp.data -o fp.html
# Prints both, the ratio, the peak RSS, the page size and whether the targets are met
# (exit status 0 either way: timings depend on the machine; not a ctest test).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
runs=${2:-3}
pk=$(cd "$build" && pwd)/tool/perfkit
wl=$(cd "$build" && pwd)/examples/demo-workload
[ -x "$pk" ] && [ -x "$wl" ] || { echo "flamegraph-speed: build first ($pk, $wl)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "flamegraph-speed: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
tmp=${PK_BENCH_DIR:-$(mktemp -d)}
[ -n "${PK_BENCH_DIR:-}" ] || trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
cd "$tmp"
secs=${PK_BENCH_SECONDS:-25}
if [ ! -s fp.data ]; then
	echo "recording fp.data (${secs}s, 2 CPUs at 20 kHz)..." >&2
	if command -v perf >/dev/null; then
		perf record -q -g -e cpu-clock -c 50000 -o fp.data -- \
			sh -c "'$wl' $((secs * 1000)) & '$wl' $((secs * 1000)); wait" > /dev/null 2>&1
	else
		echo "flamegraph-speed: perf is not installed; recording with perfkit" >&2
		"$pk" record -g -e cpu-clock -c 50000 -o fp.data -- \
			sh -c "'$wl' $((secs * 1000)) & '$wl' $((secs * 1000)); wait" > /dev/null 2>&1
	fi
fi
# the sample count, from the flame graph's own summary line (checked against perf's if any)
nsamples=$("$pk" flamegraph -i fp.data -o fp.html 2>&1 | sed -n "s/.*(\([0-9]*\) samples).*/\1/p")
if command -v perf >/dev/null; then
	nperf=$(perf report -i fp.data --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}' || true)
	[ -z "$nperf" ] || [ "$nperf" = "$nsamples" ] ||
		echo "flamegraph-speed: warning: perfkit saw $nsamples samples, perf $nperf" >&2
fi
echo "fp.data: $(du -h fp.data | cut -f1), ${nsamples:-?} samples"

# run N cmd...: median time and peak RSS (common.bash)
. "$here/common.bash"
read -r rt rm < <(run "$runs" "$pk" report -i fp.data)
read -r ft fm < <(run "$runs" "$pk" flamegraph -i fp.data -o fp.html)
size=$(stat -c %s fp.html)
awk -v rt="$rt" -v ft="$ft" -v rm="$rm" -v fm="$fm" -v sz="$size" 'BEGIN {
	printf "%-40s %9s %9s\n", "case", "seconds", "RSS MB"
	printf "%-40s %9.2f %9.1f\n", "perfkit report -i fp.data", rt, rm / 1024
	printf "%-40s %9.2f %9.1f\n", "perfkit flamegraph -i fp.data", ft, fm / 1024
	r = rt > 0 ? ft / rt : 0
	printf "flamegraph / report time: %.2fx (target <= 2x): %s\n", r, r <= 2 ? "met" : "NOT MET"
	printf "HTML size: %.2f MB (%d bytes; target < 10 MB): %s\n", sz / 1e6, sz,
	       sz < 10e6 ? "met" : "NOT MET"
}'
