#!/usr/bin/env bash
# bench/annotate-speed.sh [BUILD_DIR] [RUNS]: `perfkit annotate --stdio` against
# `perf annotate --stdio` (which runs objdump per symbol) on the recordings of
# bench/report-speed.sh, every symbol above 0.5 % (perf's --percent-limit 0.5, perfkit's
# --min-percent 0.5). Issue 18's target: >= 20x faster.
#   Recordings: those in PK_BENCH_DIR (fp.data, deep.data, dwarf.data, xz.data, py.data,
#   sys.data: whichever exist); when it is unset, or holds none of them, report-speed.sh
#   makes them there first (PK_BENCH_RECORD_ONLY=1).
#   A file whose objects holding >= 0.5 % of its samples are gone or rebuilt is named,
#   and skipped when those hold 10 % or more (neither tool can annotate them).
#   RUNS (default 5) runs of each tool per file, alternating perf, perfkit, perf, ...;
#   each run's input read once untimed before it (the page cache of a VM may lose it).
#   (perfkit annotate reads the file on one thread, sorting no samples, while a second
#   one reads the symbol tables of the hot objects and the kallsyms cache, see
#   docs/perfkit-annotate.md; perf runs objdump with source lines, its default.)
#   Each run is started with posix_spawn, so that the harness's own fork is not
#   counted; CPU time is that of every thread of the child.
# Prints per file the symbols each tool annotated, the median wall time and CPU time
# (user + system, children included: perf's objdump) of each, and the ratios. Exit
# status 0 either way (not a ctest test: timings depend on the machine).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
runs=${2:-5}
pk=$(cd "$build" && pwd)/tool/perfkit
[ -x "$pk" ] || { echo "annotate-speed: build first ($pk)" >&2; exit 1; }
command -v perf > /dev/null || { echo "annotate-speed: perf is not installed; skipped"; exit 0; }
dir=${PK_BENCH_DIR:-}
if [ -z "$dir" ]; then
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
files=()
for f in fp deep dwarf xz py sys; do [ -s "$dir/$f.data" ] && files+=("$f"); done
if [ ${#files[@]} = 0 ]; then
	PK_BENCH_DIR=$dir PK_BENCH_RECORD_ONLY=1 bash "$here/report-speed.sh" "$build"
	for f in fp deep dwarf xz py sys; do [ -s "$dir/$f.data" ] && files+=("$f"); done
fi
cd "$dir"
# A recording whose programs were deleted or rebuilt since annotates nothing of them in
# either tool (fp.data of a build that is gone: 0 symbols in both, a meaningless ratio).
# The objects holding >= 0.5 % of a file's samples must exist with the recorded
# build-id; a file where such missing objects hold 10 % or more is skipped (re-record:
# delete it, or leave PK_BENCH_DIR unset to record afresh), smaller ones are named.
stale_share() { # file: prints the share (integer %) of its samples in missing objects
	local f=$1 bad=0 pct path want have
	while read -r pct path; do
		case $path in /*) ;; *) continue ;; esac
		want=$(perf buildid-list -i "$f" 2> /dev/null | awk -v p="$path" '$2 == p { print $1; exit }')
		have=$( [ -r "$path" ] && perf buildid-list -i "$path" 2> /dev/null || true)
		if [ -z "$have" ] || { [ -n "$want" ] && [ "$want" != "$have" ]; }; then
			echo "annotate-speed: $f: $path ($pct) is missing or rebuilt since the recording" >&2
			bad=$(awk -v b="$bad" -v p="${pct%\%}" 'BEGIN { print b + p }')
		fi
	done < <(perf report -i "$f" --stdio --no-children --sort dso -v -g none --percent-limit 0.5 \
			2> /dev/null | awk '/%/ && !/^#/ { print $1, $2 }')
	awk -v b="$bad" 'BEGIN { printf "%d\n", b }'
}
ok=()
for f in "${files[@]}"; do
	if [ "$(stale_share "$f.data")" -ge 10 ]; then
		echo "annotate-speed: $f.data skipped: its programs are gone (re-record it)" >&2
	else
		ok+=("$f")
	fi
done
files=("${ok[@]}")
[ ${#files[@]} -gt 0 ] || { echo "annotate-speed: no recording whose programs exist" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${PK_BENCH_DIR:-}" ] || rm -rf "$dir"' EXIT

one() { # file cmd...: "wall cpu" of one run (rusage of the command and its children)
	local f=$1; shift
	cat "$f" > /dev/null
	python3 - "$@" <<'PY'
import os, sys, time
# posix_spawn (vfork semantics): a fork of this python process would add the copy of
# its page tables to the child's wall and CPU time (2-3 ms in a VM), not the tool's
fd = os.open(os.devnull, os.O_WRONLY)
t0 = time.monotonic()
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ,
                      file_actions=[(os.POSIX_SPAWN_DUP2, fd, 1), (os.POSIX_SPAWN_DUP2, fd, 2)])
_, _, ru = os.wait4(pid, 0)
print("%.4f %.4f" % (time.monotonic() - t0, ru.ru_utime + ru.ru_stime))
PY
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf "%-10s %8s %8s %9s %9s %8s %9s %9s %8s\n" file "perf sy" "pk sy" "perf s" "pk s" "wall x" \
	"perf cpu" "pk cpu" "cpu x"
for f in "${files[@]}"; do
	pa=(perf annotate -i "$f.data" --stdio --percent-limit 0.5)
	ka=("$pk" annotate -i "$f.data" --stdio --min-percent 0.5)
	# what each annotates: its symbols' title lines
	ps=$("${pa[@]}" 2> /dev/null | grep -c "Disassembly of .* for " || true)
	ks=$("${ka[@]}" 2> /dev/null | grep -c "Disassembly of .* for " || true)
	: > "$tmp/p"; : > "$tmp/k"
	for _ in $(seq "$runs"); do
		one "$f.data" "${pa[@]}" >> "$tmp/p"
		one "$f.data" "${ka[@]}" >> "$tmp/k"
	done
	pw=$(cut -d' ' -f1 "$tmp/p" | median); pc=$(cut -d' ' -f2 "$tmp/p" | median)
	kw=$(cut -d' ' -f1 "$tmp/k" | median); kc=$(cut -d' ' -f2 "$tmp/k" | median)
	awk -v f="$f" -v ps="$ps" -v ks="$ks" -v pw="$pw" -v kw="$kw" -v pc="$pc" -v kc="$kc" 'BEGIN {
		printf "%-10s %8d %8d %9.3f %9.3f %7.1fx %9.4f %9.4f %7.1fx\n", f, ps, ks, pw, kw,
			(kw > 0 ? pw / kw : 0), pc, kc, (kc > 0 ? pc / kc : 0) }'
done
echo "sy: symbols annotated (kernel ones by both only when a vmlinux of the recorded kernel or"
echo "/proc/kcore can be read; else both leave them out, saying why). target: >= 20x (wall)"
