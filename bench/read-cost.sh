#!/bin/bash
# read-cost: ns per counter read (raw read(2), pk_self_reader single and 4-event group, region
# begin+end, PAPI_read when available) and the ratios to a raw read(2).
# usage: bench/read-cost.sh [BUILD_DIR] [ITERS]   (default build, 200000)
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
bin=$build/bench/read-cost
[ -x "$bin" ] || { echo "read-cost.sh: $bin not built (cmake --build $build --target bench-read-cost)" >&2; exit 1; }
exec "$bin" "${2:-200000}"
