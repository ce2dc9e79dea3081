# Helpers of the record-unwind-* cases (sourced by their cmd scripts).
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 77; }
command -v cc >/dev/null || { echo "no C compiler" >&2; exit 77; }
command -v python3 >/dev/null || { echo "python3 is not installed" >&2; exit 77; }
src=$PK_SRC_DIR/tests/cli/cases/record-unwind-vs-perf/chain.c
# a PIE whose code is separate from its read-only data (the .eh_frame_hdr and CFI perf's
# unwinder needs lie in a non-executable r--p segment) and a position-dependent one
cc -O2 -g -fno-omit-frame-pointer -pie -fPIE -Wl,-z,separate-code -o chain-pie "$src" || exit 1
cc -O2 -g -fno-omit-frame-pointer -no-pie -o chain-nopie "$src" || exit 1
fail=0

# children% of main in the rows of command $2 of file $1: perf report's, then ours
main_share() {
	perf report -i "$1" --stdio --children --sort sym --comms "$2" -g none 2>/dev/null |
		awk '$NF == "main" && $(NF-1) == "[.]" { sub("%", "", $1); print $1; exit }'
}
our_main_share() {
	"$PERFKIT" report -i "$1" -q --children --sort sym --comms "$2" -g none |
		awk '$NF == "main" && $(NF-1) == "[.]" { sub("%", "", $1); print $1; exit }'
}
# compare_main FILE COMM LABEL MIN: both reports show main, within 1 point of each other,
# at MIN percent or more in ours
compare_main() {
	local p k
	p=$(main_share "$1" "$2"); k=$(our_main_share "$1" "$2")
	echo "$3: main children perf=${p:-none} perfkit=${k:-none}" >&2
	if ! python3 -c 'import sys; p, k, m = sys.argv[1:]; sys.exit(not (p and k and abs(float(p) - float(k)) <= 1 and float(k) >= float(m)))' "$p" "$k" "$4"; then
		echo "$3: perf report's main share differs from perfkit's" >&2
		fail=1
	else
		echo "$3: ok"
	fi
}
# median number of frames of the samples of command $2 in `perf script` of file $1
median_frames() {
	perf script -i "$1" --comms "$2" -F comm,tid,ip,sym 2>/dev/null | python3 -c '
import sys, statistics
counts, n = [], None
for line in sys.stdin:
    if not line.strip():
        if n is not None: counts.append(n)
        n = None
    elif line[0] in " \t":
        n = (n or 0) + 1
    else:
        if n is not None: counts.append(n)
        n = 0
if n is not None: counts.append(n)
print(statistics.median(counts) if counts else 0)'
}
