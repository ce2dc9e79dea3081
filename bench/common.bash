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

# run_pair NA NB "cmdA ..." "cmdB ...": NA runs of A and NB of B, alternating (A, B, A, B,
# ...), so that a machine whose speed drifts during the measurement (a VM sharing its
# host) weighs on both alike; prints "medianA rssA medianB rssB" (seconds, KB). The
# commands are split on spaces.
run_pair() {
	local na=$1 nb=$2 ca=$3 cb=$4
	local ta=() tb=() ra=0 rb=0 i n=$(( na > nb ? na : nb ))
	one() { # cmd... -> "seconds rss"
		# the input in the page cache before each run (BENCH_WARM: files), untimed:
		# this VM's balloon reclaims the page cache between runs
		[ -z "${BENCH_WARM:-}" ] || cat $BENCH_WARM > /dev/null
		local t0=$EPOCHREALTIME
		/usr/bin/time -f "%e %M" -o t.out "$@" > /dev/null 2> err.out || { echo "failed: $*" >&2; tail -3 err.out >&2; }
		local t1=$EPOCHREALTIME m
		read -r _ m < t.out
		echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') $m"
	}
	for i in $(seq "$n"); do
		local t m
		if [ "$i" -le "$na" ]; then
			read -r t m < <(one $ca)
			ta+=("$t"); [ "$m" -gt "$ra" ] && ra=$m
		fi
		if [ "$i" -le "$nb" ]; then
			read -r t m < <(one $cb)
			tb+=("$t"); [ "$m" -gt "$rb" ] && rb=$m
		fi
	done
	local ma mb
	ma=$(printf '%s\n' "${ta[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	mb=$(printf '%s\n' "${tb[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	echo "$ma $ra $mb $rb"
}
