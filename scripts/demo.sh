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
run stat -- "$wl" 200
run record -q -g -o /tmp/perfkit-demo.data "$wl"
echo; echo "\$ perfkit report -i /tmp/perfkit-demo.data --no-children -g none | head -n 25"
"$pk" report -i /tmp/perfkit-demo.data --no-children -g none | head -n 25
echo; echo "\$ perfkit script -i /tmp/perfkit-demo.data | head -n 20"
"$pk" script -i /tmp/perfkit-demo.data | head -n 20
