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
