# bench/common.bash: helpers shared by the bench scripts (sourced, not run).

# run N cmd...: N timed runs of cmd (stdout discarded, stderr kept in err.out of the
# current directory); prints "median_seconds max_rss_kb". Needs /usr/bin/time.
run() {
	local n=$1; shift
	local ts=() rss=0
	for _ in $(seq "$n"); do
		local t0=$EPOCHREALTIME
		/usr/bin/time -f "%e %M" -o t.out "$@" > /dev/null 2> err.out || { echo "failed: $*" >&2; tail -3 err.out >&2; }
		local t1=$EPOCHREALTIME
		read -r _ m < t.out
		# wall time to the microsecond (time's %e has 10 ms steps)
		ts+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')")
		[ "$m" -gt "$rss" ] && rss=$m
	done
	printf '%s\n' "${ts[@]}" | sort -n | awk -v r="$rss" '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], r }'
}
