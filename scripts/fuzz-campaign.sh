#!/usr/bin/env bash
# scripts/fuzz-campaign.sh [SECONDS] [HARNESS...]: a long fuzz campaign, one harness after
# another, each until it has used SECONDS of CPU time (default 600 = 10 CPU-minutes)
# under ASan+UBSan,
# then a source-based coverage report of what the grown corpus reaches.
#
#   build-fuzz/            clang ASan+UBSan+libFuzzer build that runs the campaign
#   build-cov/             clang coverage build (no sanitizers) that replays the corpus
#   fuzz-campaign/corpus/<name>/    grown corpus (seeded from tests/fuzz/corpus/<name>)
#   fuzz-campaign/crashes/<name>/   crash/leak/timeout reproducers, if any
#   fuzz-campaign/summary.txt       executions, CPU seconds used, libFuzzer cov/ft, line and
#                                   region coverage
# FUZZ_OUT=DIR puts all of fuzz-campaign/ elsewhere (for a second campaign alongside).
#
# Findings are fixed in the library and their inputs added to tests/fuzz/corpus/<name>/,
# where the ctest smoke run replays them. Not part of `make check` (too long for CI); run as
# `make fuzz-long`.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
out=${FUZZ_OUT:-fuzz-campaign}
mkdir -p "$out"
# (re)configured every time: a harness added since the last campaign needs a target
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	-DPK_SANITIZE=ON -DPK_FUZZ=ON >/dev/null || exit 1
cmake -S . -B build-cov -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	-DPK_FUZZ=ON -DPK_COVERAGE=ON >/dev/null || exit 1
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do b=${f##*/fuzz_}; names+=("${b%.c}"); done
fi
targets=$(printf 'fuzz_%s ' "${names[@]}")
cmake --build build-fuzz -j2 --target $targets >/dev/null || exit 1
cmake --build build-cov -j2 --target $targets >/dev/null || exit 1

summary=$out/summary.txt
printf '%-14s %10s %9s %6s %8s %7s %6s %8s %8s\n' harness execs exec/wall cpu_s cov ft crashes lines% regions% > "$summary"
status=0
for n in "${names[@]}"; do
	corpus=$out/corpus/$n crashes=$out/crashes/$n log=$out/$n.log
	mkdir -p "$corpus" "$crashes"
	# Runs of at most 120 s each until the harness has used SECONDS of CPU time (user +
	# system, its forked children included), however busy the machine is.
	echo "fuzz-campaign: $n for ${secs} CPU seconds" >&2
	cpu=0 execs=0 wall=0 rc=0
	: > "$log"
	while [ "$cpu" -lt "$secs" ] && [ "$rc" -eq 0 ]; do
		chunk=$(( secs - cpu < 120 ? secs - cpu : 120 ))
		[ "$chunk" -lt 10 ] && chunk=10
		t0=$(date +%s)
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			/usr/bin/time -f "%U %S" -o "$out/$n.cpu" build-fuzz/tests/fuzz/fuzz_$n \
				-max_total_time="$chunk" -max_len=65536 -timeout=10 \
				-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" \
				"$corpus" "tests/fuzz/corpus/$n" > "$log.run" 2>&1
		rc=$?
		cat "$log.run" >> "$log"
		wall=$(( wall + $(date +%s) - t0 ))
		used=$(awk '{ printf "%.0f", $1 + $2 }' "$out/$n.cpu" 2>/dev/null)
		cpu=$(( cpu + ${used:-0} ))
		e=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log.run")
		execs=$(( execs + ${e:-0} ))
		[ "${used:-0}" -gt 0 ] || break
	done
	rm -f "$log.run"
	rate=$(( wall > 0 ? execs / wall : 0 ))
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{ print $2 }')
	ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | awk '{ print $2 }')
	ncrash=$(find "$crashes" -type f | wc -l)
	[ "$rc" -eq 0 ] && [ "$ncrash" -eq 0 ] || status=1
	# replay the whole corpus in the coverage build; only the library's sources count
	rm -f "$out/$n.profraw"
	LLVM_PROFILE_FILE="$out/$n.profraw" build-cov/tests/fuzz/fuzz_$n -runs=0 \
		"$corpus" "tests/fuzz/corpus/$n" > "$out/$n.cov.log" 2>&1
	llvm-profdata merge -sparse "$out/$n.profraw" -o "$out/$n.profdata"
	llvm-cov report build-cov/tests/fuzz/fuzz_$n -instr-profile="$out/$n.profdata" \
		--ignore-filename-regex='tests/' > "$out/$n.coverage.txt" 2>/dev/null
	# line and region coverage of the files the harness actually reached (TOTAL over them)
	read -r lines regions < <(awk '$1 ~ /\.c$/ && $2 > 0 && $3 < $2 {
			rt += $2; rm += $3; lt += $8; lm += $9 }
		END { printf "%.1f %.1f\n", lt ? 100 * (lt - lm) / lt : 0, rt ? 100 * (rt - rm) / rt : 0 }' \
		"$out/$n.coverage.txt")
	printf '%-14s %10s %9s %6s %8s %7s %6s %8s %8s\n' "$n" "${execs:-?}" "${rate:-?}" "${cpu:-?}" "${cov:-?}" \
		"${ft:-?}" "$ncrash" "$lines" "$regions" >> "$summary"
done
cat "$summary"
exit $status
