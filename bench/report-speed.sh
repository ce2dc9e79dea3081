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
#   - dwarf.data: --call-graph dwarf,4096 samples (fewer: each carries a stack copy),
# and, so that the bench does not only measure what was tuned on, recordings of programs
# the project did not write (PK_BENCH_FOREIGN=0 skips them):
#   - xz.data: `xz -6 -T1` compressing generated text (seeded, the same bytes every run;
#     PK_BENCH_SECONDS MB of it, ~1 s per MB here), -F 10000 -g. liblzma is stripped to
#     its .dynsym, which names none of its internal functions: nearly every frame is an
#     address with no symbol,
#   - py.data: python3 running bench/py-workload.py (JSON and regular expressions) with
#     --call-graph dwarf (8 KiB stacks, -F 10000: ~200 MB),
#   - sys.data: system-wide (-a -g, -F 10000) while gcc -O2 compiles the project's lib/
#     and tool/ sources two at a time (many short processes, the kernel, cc1's deep stacks).
# Times (median of RUNS, default 3, perf and perfkit runs alternating; perf's slow srcline
# run once) and peak RSS of
#     perf report --stdio (--children, --no-children)  vs perfkit report (same)
#     perf report --stdio --no-children --sort srcline   vs perfkit report (same)
#     perf script                                        vs perfkit script --json, and
#     perf script                                        vs perfkit script (text)
# and prints the ratios. Targets: report >= 10x faster, srcline >= 50x, script >= 5x,
# peak RSS <= 0.5x perf's. Not a ctest test (timings depend on the machine).
# PK_BENCH_DIR keeps the recordings there (made only when missing); with
# PK_BENCH_RECORD_ONLY=1 the script stops once they are made.
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
foreign=${PK_BENCH_FOREIGN:-1}
if [ "$foreign" = 1 ] && [ ! -s xz.data ]; then
	echo "recording xz.data (xz -6 -T1 on ${secs} MB of generated text)..." >&2
	# 5000 random words, then lines of 3-14 of them: compresses like text, not like noise
	awk -v size=$((secs * 1000000)) 'BEGIN {
		srand(16)
		for (i = 0; i < 5000; i++) {
			w = ""; n = 2 + int(rand() * 8)
			for (j = 0; j < n; j++) w = w sprintf("%c", 97 + int(rand() * 26))
			words[i] = w
		}
		for (total = 0; total < size; total += length(line) + 1) {
			n = 3 + int(rand() * 12); line = words[int(rand() * 5000)]
			for (j = 1; j < n; j++) line = line " " words[int(rand() * 5000)]
			print line
		} }' > xz.in
	perf record -q -F 10000 -g -o xz.data -- xz -6 -T1 -c xz.in > /dev/null 2>&1
	rm -f xz.in
fi
if [ "$foreign" = 1 ] && [ ! -s py.data ]; then
	# the interpreter itself, not a wrapper script (pyenv's shims are shell scripts)
	py=$(python3 -c 'import sys; print(sys.executable)')
	echo "recording py.data ($py, --call-graph dwarf)..." >&2
	perf record -q -F 10000 --call-graph dwarf -o py.data -- "$py" "$here/py-workload.py" 50 > /dev/null 2>&1
fi
if [ "$foreign" = 1 ] && [ ! -s sys.data ]; then
	echo "recording sys.data (system-wide, gcc -O2 on lib/ and tool/)..." >&2
	src=$(cd "$here/.." && pwd)
	perf record -q -a -g -F 10000 -o sys.data -- sh -c "ls '$src'/lib/*/*.c '$src'/tool/*.c |
		xargs -P 2 -I {} gcc -O2 -std=gnu11 -D_GNU_SOURCE -I'$src/lib/include' -I'$src/lib' \
			-DPK_VERSION_STRING='\"bench\"' -c {} -o /dev/null" > /dev/null 2>&1
fi
# PK_BENCH_RECORD_ONLY=1: only the recordings (bench/annotate-speed.sh reads them)
[ "${PK_BENCH_RECORD_ONLY:-0}" = 1 ] && exit 0
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
if [ "$foreign" = 1 ]; then
	for f in xz py sys; do
		echo "$f.data: $(du -h $f.data | cut -f1), $(perf report -i $f.data --stats 2>/dev/null |
			awk '/SAMPLE events/ {print $3; exit}' || true) samples"
	done
	for f in xz py sys; do
		cmp "report $f --children" "$runs" "perf report -i $f.data --stdio --children" "$pk report -i $f.data -q --children"
		cmp "report $f --no-children" "$runs" "perf report -i $f.data --stdio --no-children" "$pk report -i $f.data -q --no-children"
		cmp "script $f (perf script / --json)" "$runs" "perf script -i $f.data" "$pk script -i $f.data --json"
		cmp "script $f (perf script / text)" "$runs" "perf script -i $f.data" "$pk script -i $f.data"
	done
fi
echo "targets: report >= 10x, srcline >= 50x, script >= 5x, RSS x <= 0.5"
