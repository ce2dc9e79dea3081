# Sourced by CLI cases that record system-wide (-a) and then require perf to read the file
# without a warning. On a loaded machine (or under valgrind) the recorder may not drain the
# rings in time and the kernel writes LOST records; perf then prints
#   Warning:
#   Processed N events and lost M chunks!
#
#   Check IO/CPU overload!
# That warning, and nothing else, is accepted when perfkit record reported the loss itself
# ("lost E events in M LOST records") and both numbers match the LOST records that perf
# finds in the file.
#
#   lost_tolerated PERF_STDERR RECORD_STDERR DATA   status 0: both are free of lost events,
#                                                   or PERF_STDERR holds only that warning
#                                                   and the counts agree
#   (DATA "-" reads the pipe-format file named by $LOST_PIPE_FILE.)

lost_tolerated() {
	local perr=$1 rerr=$2 data=$3 m n k sum
	if [ ! -s "$perr" ]; then
		! grep -q 'warning: lost [0-9]* events' "$rerr" && return 0
		echo "perfkit record reported lost events that perf does not see" >&2
		return 1
	fi
	if grep -v -x -e 'Warning:' -e 'Processed [0-9]* events and lost [0-9]* chunks!' \
		-e 'Check IO/CPU overload!' -e '' "$perr" | grep -q .; then
		return 1 # anything else perf says is a failure
	fi
	m=$(sed -n 's/^Processed [0-9]* events and lost \([0-9]*\) chunks!$/\1/p' "$perr" | sort -u)
	[ -n "$m" ] && [ "$m" -gt 0 ] 2>/dev/null || return 1
	read -r n k < <(sed -n 's/.*warning: lost \([0-9]*\) events in \([0-9]*\) LOST records.*/\1 \2/p' \
		"$rerr" | head -1)
	if [ -z "${k:-}" ]; then
		echo "perf saw $m LOST records that perfkit record did not report" >&2
		return 1
	fi
	if [ "$data" = - ]; then
		sum=$(perf report -D -i - < "$LOST_PIPE_FILE" 2>/dev/null)
	else
		sum=$(perf report -D -i "$data" 2>/dev/null)
	fi
	sum=$(printf '%s\n' "$sum" | sed -n 's/.*PERF_RECORD_LOST: .*lost:\([0-9]*\)$/\1/p' |
		awk '{ s += $1; r++ } END { print r + 0, s + 0 }')
	if [ "$k" != "$m" ] || [ "$sum" != "$k $n" ]; then
		echo "lost counts disagree: perfkit record $k LOST records ($n events)," \
			"perf warns of $m, the file holds (records, events) $sum" >&2
		return 1
	fi
	echo "tolerated: $k LOST records ($n events), reported by perfkit record" >&2
}
