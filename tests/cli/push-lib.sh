# Sourced by the push-* CLI cases: a Pyroscope ingest receiver (push-receiver.py) on
# 127.0.0.1, bounded in time, and helpers. Every receiver is killed when the case exits.
command -v python3 >/dev/null || { echo "python3 is not installed" >&2; exit 77; }
RECEIVER=$PK_SRC_DIR/tests/cli/push-receiver.py
recv_pids=()
trap 'for p in "${recv_pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null' EXIT

# a TCP port nothing listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_receiver NAME [receiver options...]: stores into NAME.store, port in $port,
# pid in $recv_pid; the receiver exits by itself after 120 s at most
start_receiver() {
	local name=$1
	shift
	rm -f "$name.port"
	python3 "$RECEIVER" --store "$name.store" --port-file "$name.port" --lifetime 120 "$@" \
		2>> "$name.log" &
	recv_pid=$!
	recv_pids+=("$recv_pid")
	for _ in $(seq 100); do
		[ -s "$name.port" ] && break
		sleep 0.05
	done
	[ -s "$name.port" ] || { echo "receiver did not start"; cat "$name.log"; exit 1; }
	port=$(cat "$name.port")
}

stop_receiver() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# record the demo workload into FILE with perfkit (perf's recorder: perf_record FILE)
pk_record() {
	local demo=$PK_BUILD_DIR/examples/demo-workload
	[ -x "$demo" ] || { echo "demo-workload not built" >&2; exit 77; }
	"$PERFKIT" record -q -g -e cpu-clock -o "$1" "$demo" "${2:-300}" > /dev/null 2> "$1.err" ||
		{ cat "$1.err"; echo "perfkit record failed"; exit 1; }
}

# same_top PERF_DATA PPROF [MIN_ROWS]: `go tool pprof -top` of PPROF lists the same top
# functions as `perfkit report --no-children --sort sym` of PERF_DATA (5, or as many as
# the report has when fewer, at least MIN_ROWS), in the same order up to ties, with flat
# percentages within 0.5 points. Prints the first two names; 1 with the two tables.
same_top() {
	local data=$1 prof=$2 min=${3:-5}
	go tool pprof -top -nodefraction=0 -symbolize=none "$prof" > go.top 2> go.err ||
		{ cat go.err; return 1; }
	awk 'f && NF >= 6 { n = $6; for (i = 7; i <= NF; i++) n = n " " $i; sub(/%$/, "", $2); print $2 "\t" n }
	     /flat%/ { f = 1 }' go.top | head -n 5 > go.5
	"$PERFKIT" report -i "$data" --no-children --sort sym 2> pk.err |
		awk '/^ +[0-9.]+%  \[.\] / { p = $1; sub(/%$/, "", p); n = $0; sub(/^ +[0-9.]+%  \[.\] /, "", n);
		     sub(/ +$/, "", n); print p "\t" n }' > pk.all
	head -n 5 pk.all > pk.5
	sed -i -E 's/\t0x0*/\t0x/' go.5 pk.5 pk.all
	local rows
	rows=$(wc -l < pk.5)
	[ "$rows" -ge "$min" ] && [ "$(wc -l < go.5)" -ge "$rows" ] ||
		{ echo "$data: $rows report rows, $(wc -l < go.5) pprof rows"; cat go.top pk.err; return 1; }
	paste pk.5 go.5 | awk -F'\t' -v rows="$rows" '
		function same(a, b) { return a == b || (a ~ /^0x[0-9a-f]+$/ && b ~ /^0x[0-9a-f]+$/) }
		FNR == NR { ap[FNR] = $1; an[FNR] = $2; na = FNR; next }
		{ pp[FNR] = $1; pn[FNR] = $2; gp[FNR] = $3; gn[FNR] = $4 }
		END {
			bad = 0
			for (i = 1; i <= rows; i++) {
				d = pp[i] - gp[i]; if (d < 0) d = -d
				if (d > 0.5) { printf "row %d: report %s%% %s, pprof %s%% %s\n", i, pp[i], pn[i], gp[i], gn[i]; bad = 1 }
				ok = same(pn[i], gn[i])
				for (j = 1; j <= na && !ok; j++)
					if (ap[j] == pp[i] && same(an[j], gn[i])) ok = 1
				if (!ok) { printf "row %d: report has %s, pprof %s\n", i, pn[i], gn[i]; bad = 1 }
			}
			exit bad
		}' pk.all - || { echo "--- $data: perfkit report"; cat pk.5; echo "--- pprof"; cat go.5; return 1; }
	cut -f2 go.5 | head -n 2 | paste -sd, -
}
