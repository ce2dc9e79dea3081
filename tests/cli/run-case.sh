#!/usr/bin/env bash
# Run one CLI golden test case.
#
#   run-case.sh CASE_DIR
#
# A case directory holds:
#   cmd            bash script run from a scratch directory; the tool is "$PERFKIT"
#                  (also PK_SRC_DIR, PK_BUILD_DIR, CASE_DIR are set). It exits 77 (after
#                  printing the reason to stderr) when this machine cannot run it.
#   stdout.exact   expected stdout, byte for byte; or
#   stdout.glob    expected stdout, line by line: each line is a bash glob pattern
#                  ([[ line == pattern ]]); a line holding only "..." matches any number
#                  of lines (including none)
#   exit           expected exit status (default 0)
#   stderr.glob    optional, same format as stdout.glob, matched against stderr
#
# Environment:
#   PK_CLI_RECORD=1    write the actual stdout/exit into the case (stdout.exact unless a
#                      stdout.glob exists, which is then left alone) instead of comparing
#   PERF_BUILDID_DIR   set to a directory in the case's scratch space: the copies perfkit
#                      record makes for its build-id cache never land in ~/.debug
#   PK_CLI_VALGRIND=1  run every $PERFKIT invocation under valgrind memcheck; any error or
#                      definitely-lost leak fails the case. A case holding a file named
#                      no-valgrind (timing-sensitive or too big for valgrind) is skipped (77).
set -u
case_dir=$(cd "$1" && pwd)
name=$(basename "$case_dir")
: "${PERFKIT:?PERFKIT must name the perfkit binary}"

work=$(mktemp -d "${TMPDIR:-/tmp}/pk-cli-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT

real_perfkit=$PERFKIT
if [ "${PK_CLI_VALGRIND:-0}" = 1 ] && [ -e "$case_dir/no-valgrind" ]; then
	echo "SKIP: not run under valgrind (timing-sensitive or too big; see $name/no-valgrind)"
	exit 77
fi
if [ "${PK_CLI_VALGRIND:-0}" = 1 ]; then
	# cases may run perfkit as another user: its log must still be writable
	chmod 755 "$work"
	mkdir -m 1777 "$work/vg"
	cat > "$work/perfkit-vg" <<EOS
#!/usr/bin/env bash
exec valgrind -q --child-silent-after-fork=yes --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
  --show-leak-kinds=definite --log-file="$work/vg/valgrind.%p.log" "$real_perfkit" "\$@"
EOS
	chmod +x "$work/perfkit-vg"
	PERFKIT="$work/perfkit-vg"
fi

mkdir "$work/run"
export PERF_BUILDID_DIR="$work/buildid-cache"
(cd "$work/run" && PERFKIT="$PERFKIT" CASE_DIR="$case_dir" bash "$case_dir/cmd") \
	> "$work/stdout" 2> "$work/stderr" < /dev/null
status=$?

if [ $status = 77 ]; then
	echo "SKIP: $(tail -n 3 "$work/stderr")"
	exit 77
fi

fail=0
report() { echo "FAIL [$name]: $*"; fail=1; }

# match_glob PATTERN_FILE ACTUAL_FILE
match_glob() {
	local -a pat act
	mapfile -t pat < "$1"
	mapfile -t act < "$2"
	local i=0 j=0
	while [ $i -lt ${#pat[@]} ]; do
		if [ "${pat[$i]}" = "..." ]; then
			i=$((i + 1))
			if [ $i -ge ${#pat[@]} ]; then return 0; fi
			while [ $j -lt ${#act[@]} ] && ! [[ "${act[$j]}" == ${pat[$i]} ]]; do
				j=$((j + 1))
			done
			if [ $j -ge ${#act[@]} ]; then
				echo "  pattern line $((i + 1)) '${pat[$i]}' never matched"
				return 1
			fi
		elif [ $j -ge ${#act[@]} ]; then
			echo "  output ended; pattern line $((i + 1)) '${pat[$i]}' unmatched"
			return 1
		elif ! [[ "${act[$j]}" == ${pat[$i]} ]]; then
			echo "  line $((j + 1)): '${act[$j]}'"
			echo "  does not match pattern line $((i + 1)): '${pat[$i]}'"
			return 1
		fi
		i=$((i + 1))
		j=$((j + 1))
	done
	if [ $j -lt ${#act[@]} ]; then
		echo "  extra output from line $((j + 1)): '${act[$j]}'"
		return 1
	fi
	return 0
}

if [ "${PK_CLI_RECORD:-0}" = 1 ]; then
	[ -f "$case_dir/stdout.glob" ] || cp "$work/stdout" "$case_dir/stdout.exact"
	if [ $status != 0 ]; then echo $status > "$case_dir/exit"; else rm -f "$case_dir/exit"; fi
	echo "recorded $name (exit $status)"
	exit 0
fi

want_status=0
[ -f "$case_dir/exit" ] && want_status=$(cat "$case_dir/exit")
[ "$status" = "$want_status" ] || report "exit status $status, expected $want_status"

if [ -f "$case_dir/stdout.exact" ]; then
	if ! cmp -s "$case_dir/stdout.exact" "$work/stdout"; then
		report "stdout differs from stdout.exact:"
		diff -u "$case_dir/stdout.exact" "$work/stdout" | head -n 40
	fi
elif [ -f "$case_dir/stdout.glob" ]; then
	match_glob "$case_dir/stdout.glob" "$work/stdout" || report "stdout does not match stdout.glob"
fi
if [ -f "$case_dir/stderr.glob" ]; then
	match_glob "$case_dir/stderr.glob" "$work/stderr" || report "stderr does not match stderr.glob"
fi

if [ "${PK_CLI_VALGRIND:-0}" = 1 ]; then
	for log in "$work"/vg/valgrind.*.log; do
		# errors and leaks are the "==PID==" lines; "--PID--" lines are valgrind's own
		# notes (e.g. a syscall it does not know, which perfkit then falls back from)
		grep -q "^==[0-9]*==" "$log" 2>/dev/null || continue
		report "valgrind reported errors:"
		grep "^==[0-9]*==" "$log" | head -n 40
	done
fi

if [ $fail != 0 ]; then
	echo "--- stdout ---"; head -n 60 "$work/stdout"
	echo "--- stderr ---"; head -n 30 "$work/stderr"
	exit 1
fi
echo "ok $name"
exit 0
