#!/usr/bin/env bash
# bench/top-overhead.sh [BUILD_DIR] [RUNS]: what `perfkit top --stdio` costs next to
# `perf top --stdio` (issue 18: <= 0.25x perf top's CPU time and peak RSS; the first full
# screen <= 0.5 s after the start).
#   Both run system-wide with the same event and frequency (-e cpu-clock -F
#   ${PK_BENCH_FREQ:-4000}, refresh -d 1) for PK_BENCH_SECONDS (default 10) s each while
#   a busy two-thread workload (tests/cli/workloads/hot2.c) keeps both CPUs sampled;
#   RUNS (default 2) runs of each, alternating perfkit, perf, perfkit, ...
#   Measured per run from the profiler's own rusage (wait4): user + system CPU seconds and
#   peak RSS; and the time from the start to the first table row on its stdout (a pty,
#   so that neither buffers its output).
# Prints the medians, the ratios and whether the targets are met (exit status 0 either
# way: the numbers depend on the machine; not a ctest test).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
runs=${2:-2}
pk=$(cd "$build" && pwd)/tool/perfkit
[ -x "$pk" ] || { echo "top-overhead: build first ($pk)" >&2; exit 1; }
command -v perf > /dev/null || { echo "top-overhead: perf is not installed" >&2; exit 1; }
secs=${PK_BENCH_SECONDS:-10}
freq=${PK_BENCH_FREQ:-4000}
tmp=$(mktemp -d)
wl_pid=
trap '[ -z "$wl_pid" ] || kill "$wl_pid" 2> /dev/null; rm -rf "$tmp"' EXIT
cc -O1 -g -o "$tmp/hot2" "$here/../tests/cli/workloads/hot2.c" -pthread
total_ms=$(( (secs + 3) * 2 * runs * 1000 + 5000 ))
"$tmp/hot2" "$total_ms" 2 & wl_pid=$!

# one run: prints "cpu_seconds rss_kb first_screen_seconds"
measure() {
	python3 - "$secs" "$@" <<'PY'
import os, pty, re, select, signal, sys, time
secs = float(sys.argv[1]); cmd = sys.argv[2:]
master, slave = pty.openpty()
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.setsid()
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0); os.dup2(slave, 1); os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    os.execvp(cmd[0], cmd)
os.close(slave)
first = None; buf = b""; row = re.compile(rb"^\s*\d+\.\d\d%\s", re.M)
while time.monotonic() - t0 < secs:
    r, _, _ = select.select([master], [], [], 0.05)
    if r:
        try:
            d = os.read(master, 65536)
        except OSError:
            break
        if first is None:
            buf += d
            if row.search(buf):
                first = time.monotonic() - t0
            buf = buf[-4096:]
os.kill(pid, signal.SIGINT)
end = time.monotonic() + 5
while True:  # keep the pty drained while it exits
    r, _, _ = select.select([master], [], [], 0.05)
    if r:
        try: os.read(master, 65536)
        except OSError: pass
    p, status, ru = os.wait4(pid, os.WNOHANG)
    if p:
        break
    if time.monotonic() > end:
        os.kill(pid, signal.SIGKILL)
print("%.3f %d %.3f" % (ru.ru_utime + ru.ru_stime, ru.ru_maxrss, first if first is not None else -1))
PY
}

pk_cmd=("$pk" top --stdio -a -e cpu-clock -F "$freq" -d 1)
perf_cmd=(perf top --stdio -a -e cpu-clock -F "$freq" -d 1)
: > "$tmp/pk.txt"
: > "$tmp/perf.txt"
sleep 1
for i in $(seq "$runs"); do
	measure "${pk_cmd[@]}" >> "$tmp/pk.txt"
	measure "${perf_cmd[@]}" >> "$tmp/perf.txt"
	echo "run $i: perfkit $(tail -1 "$tmp/pk.txt")  perf $(tail -1 "$tmp/perf.txt")" >&2
done
med() { # column file
	sort -n -k"$1" "$2" | awk -v c="$1" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}
awk -v pc="$(med 1 "$tmp/pk.txt")" -v pr="$(med 2 "$tmp/pk.txt")" -v pf="$(med 3 "$tmp/pk.txt")" \
    -v fc="$(med 1 "$tmp/perf.txt")" -v fr="$(med 2 "$tmp/perf.txt")" -v ff="$(med 3 "$tmp/perf.txt")" \
    -v secs="$secs" -v freq="$freq" 'BEGIN {
	printf "system-wide, cpu-clock at %d Hz, %d s each, busy two-thread workload (medians)\n", freq, secs
	printf "%-22s %12s %10s %16s\n", "profiler", "CPU seconds", "RSS MB", "first screen s"
	printf "%-22s %12.2f %10.1f %16.3f\n", "perfkit top --stdio", pc, pr / 1024, pf
	printf "%-22s %12.2f %10.1f %16.3f\n", "perf top --stdio", fc, fr / 1024, ff
	rc = (fc > 0) ? pc / fc : 0
	rr = (fr > 0) ? pr / fr : 0
	printf "CPU time: %.2fx that of perf top (target <= 0.25x): %s\n", rc, (rc <= 0.25) ? "met" : "NOT MET"
	printf "peak RSS: %.2fx that of perf top (target <= 0.25x): %s\n", rr, (rr <= 0.25) ? "met" : "NOT MET"
	printf "first screen: %.3f s (target <= 0.5 s): %s\n", pf, (pf >= 0 && pf <= 0.5) ? "met" : "NOT MET"
}'
