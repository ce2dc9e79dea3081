#!/usr/bin/env bash
# bench/report-speed.sh [BUILD_DIR] [RUNS]: analysis speed and memory of perfkit against
# perf on the same files, recorded here by real `perf record`:
#   - fp.data: ~1M cpu-clock samples with frame-pointer call chains (-c 50000 = 20 kHz on
#     both CPUs for ~25 s; two demo-workload processes keep both CPUs busy). The demo
#     workload is two leaf loops built without frame pointers: short chains, and one
#     loop's caller frame is a garbage address unique to nearly every sample (the worst
#     case for a per-address cache),
#   - deep.data: the same rate and length on bench/callgraph-workload (frame pointers,
#     10-20 deep stacks, a few thousand call paths: the shape of an application),
#   - dwarf.data: --call-graph dwarf,4096 samples (fewer: each carries a stack copy).
# Times (median of RUNS, default 3, perf and perfkit runs alternating; perf's slow srcline
# run once) and peak RSS of
#     perf report --stdio (--children, --no-children)  vs perfkit report (same)
#     perf report --stdio --no-children --sort srcline   vs perfkit report (same)
#     perf script                                        vs perfkit script --json, and
#     perf script                                        vs perfkit script (text)
# and prints the ratios. Targets: report >= 10x faster, srcline >= 50x, script >= 5x,
# peak RSS <= 0.5x perf's. Not a ctest test (timings depend on the machine).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
runs=${2:-3}
pk=$(cd "$build" && pwd)/tool/perfkit
wl=$(cd "$build" && pwd)/examples/demo-workload
cg=$(cd "$build" && pwd)/bench/callgraph-workload
[ -x "$pk" ] && [ -x "$wl" ] && [ -x "$cg" ] || { echo "report-speed: build first ($pk, $wl, $cg)" >&2; exit 1; }
command -v perf >/dev/null || { echo "report-speed: perf is not installed; skipped"; exit 0; }
[ -x /usr/bin/time ] || { echo "report-speed: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
tmp=${PK_BENCH_DIR:-$(mktemp -d)}
[ -n "${PK_BENCH_DIR:-}" ] || trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
secs=${PK_BENCH_SECONDS:-25}
if [ ! -s fp.data ]; then
	echo "recording fp.data (${secs}s, 2 CPUs at 20 kHz)..." >&2
	perf record -q -g -e cpu-clock -c 50000 -o fp.data -- \
		sh -c "'$wl' $((secs * 1000)) & '$wl' $((secs * 1000)); wait" > /dev/null 2>&1
fi
if [ ! -s deep.data ]; then
	echo "recording deep.data (${secs}s, 2 threads at 20 kHz)..." >&2
	perf record -q -g -e cpu-clock -c 50000 -o deep.data -- "$cg" $((secs * 1000)) > /dev/null 2>&1
fi
if [ ! -s dwarf.data ]; then
	echo "recording dwarf.data..." >&2
	perf record -q --call-graph dwarf,4096 -e cpu-clock -c 250000 -o dwarf.data -- \
		sh -c "'$wl' 4000 & '$wl' 4000; wait" > /dev/null 2>&1
fi
nfp=$(perf report -i fp.data --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}' || true)
ndw=$(perf report -i dwarf.data --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}' || true)
ndp=$(perf report -i deep.data --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}' || true)
echo "fp.data: $(du -h fp.data | cut -f1), ${nfp:-?} samples; deep.data: $(du -h deep.data | cut -f1), ${ndp:-?} samples; dwarf.data: $(du -h dwarf.data | cut -f1), ${ndw:-?} samples"
echo "perfkit reads on a second thread when there are 2+ CPUs ($(nproc) here); '1 thread' rows set PERFKIT_NO_THREADS=1"
echo "(they show what the thread is worth; the targets are for the default, as a user runs it)"

# run N cmd...: median time and peak RSS (common.bash)
. "$here/common.bash"
printf "%-38s %10s %10s %9s %10s %10s %8s\n" case "perf s" "perfkit s" speedup "perf MB" "pk MB" "RSS x"
# The page cache may lose the files between runs (this VM's balloon reclaims it): both
# tools get the case's file warm, read before each run (BENCH_WARM, common.bash).
cmp() { # label perf_runs "perf args" "perfkit args"
	local label=$1 pr=$2 pa=$3 ka=$4
	# the file this case reads, read again before every run (see run_pair)
	local BENCH_WARM
	BENCH_WARM=$(echo "$pa" | grep -o '[a-z]*\.data' | head -1)
	read -r pt pm kt km < <(run_pair "$pr" "$runs" "$pa" "$ka")
	awk -v l="$label" -v pt="$pt" -v kt="$kt" -v pm="$pm" -v km="$km" 'BEGIN {
		s = kt > 0 ? pt / kt : 0; if (kt == 0) kt = 0.005
		printf "%-38s %10.3f %10.3f %8.1fx %10.1f %10.1f %7.2fx\n", l, pt, kt, pt / kt, pm / 1024, km / 1024, km / pm }'
}
cmp "report fp --children" "$runs" "perf report -i fp.data --stdio --children" "$pk report -i fp.data -q --children"
cmp "report fp --no-children" "$runs" "perf report -i fp.data --stdio --no-children" "$pk report -i fp.data -q --no-children"
cmp "report deep --children" "$runs" "perf report -i deep.data --stdio --children" "$pk report -i deep.data -q --children"
cmp "report deep --no-children" "$runs" "perf report -i deep.data --stdio --no-children" "$pk report -i deep.data -q --no-children"
cmp "report deep --children, 1 thread" "$runs" "perf report -i deep.data --stdio --children" "env PERFKIT_NO_THREADS=1 $pk report -i deep.data -q --children"
cmp "report deep --no-children, 1 thread" "$runs" "perf report -i deep.data --stdio --no-children" "env PERFKIT_NO_THREADS=1 $pk report -i deep.data -q --no-children"
cmp "report fp --no-children, 1 thread" "$runs" "perf report -i fp.data --stdio --no-children" "env PERFKIT_NO_THREADS=1 $pk report -i fp.data -q --no-children"
cmp "report dwarf --children" "$runs" "perf report -i dwarf.data --stdio --children" "$pk report -i dwarf.data -q --children"
cmp "report dwarf --no-children" "$runs" "perf report -i dwarf.data --stdio --no-children" "$pk report -i dwarf.data -q --no-children"
cmp "report fp --sort srcline" 1 "perf report -i fp.data --stdio --no-children --sort srcline -g none" "$pk report -i fp.data -q --no-children --sort srcline -g none"
cmp "script fp (perf script / --json)" "$runs" "perf script -i fp.data" "$pk script -i fp.data --json"
cmp "script dwarf (perf script / --json)" "$runs" "perf script -i dwarf.data" "$pk script -i dwarf.data --json"
cmp "script fp (perf script / text)" "$runs" "perf script -i fp.data" "$pk script -i fp.data"
cmp "script dwarf (perf script / text)" "$runs" "perf script -i dwarf.data" "$pk script -i dwarf.data"
echo "targets: report >= 10x, srcline >= 50x, script >= 5x, RSS x <= 0.5"
