#!/usr/bin/env bash
# `make demo`: run perfkit's main jobs on the bundled demo workload.
set -euo pipefail
build=${1:-build}
pk=$build/tool/perfkit
wl=$build/examples/demo-workload
bash "$(dirname "$0")/tracefs.sh"
run() { echo; echo "\$ perfkit $*"; "$pk" "$@"; }
run --version
run check
run list 'sched:sched_switch*'
run list sw
