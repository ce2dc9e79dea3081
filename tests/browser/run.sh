#!/usr/bin/env bash
# Browser test of perfkit's HTML flame graph and speedscope/gecko exports (ctest
# "browser/exports"). Records examples/demo-workload, writes the exports into OUT and runs
# browser-test.mjs in headless Chromium. Installs the pinned npm packages
# (package-lock.json) into tests/browser/node_modules on first use. Exits 77 (skip) only
# when Chromium, Node or the npm packages cannot be had.
#   run.sh PERFKIT BUILD_DIR OUT_DIR
set -u
perfkit=$1 build=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*" >&2; exit 77; }
chromium=${PK_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || skip "chromium is not installed (apt-get install chromium)"
command -v node >/dev/null || skip "node is not installed"
command -v npm >/dev/null || skip "npm is not installed"
if [ ! -f "$here/node_modules/playwright-core/package.json" ] ||
   [ ! -f "$here/node_modules/speedscope/package.json" ] ||
   [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error) >&2 ||
		skip "npm ci failed (no access to the npm registry?)"
fi
demo=$build/examples/demo-workload
[ -x "$demo" ] || { echo "demo-workload not built: $demo" >&2; exit 1; }
mkdir -p "$out"
cd "$out" || exit 1
rm -f rec.data deep.data deep.html deep deep*.png flamegraph*.png speedscope.png gecko-speedscope*.png rec.gecko-devtools.json
if command -v perf >/dev/null; then
	perf record -q -g -e cpu-clock -o rec.data "$demo" 300 >/dev/null 2>perf.err ||
		{ cat perf.err >&2; exit 1; }
	samples=$(perf script -i rec.data -F period 2>/dev/null | grep -c .)
else
	"$perfkit" record -g -e cpu-clock -o rec.data "$demo" 300 >/dev/null 2>rec.err ||
		{ cat rec.err >&2; exit 1; }
	samples=$("$perfkit" convert --to folded --weight samples -i rec.data | awk '{ s += $NF } END { print s }')
fi
"$perfkit" flamegraph -i rec.data -o flamegraph.html --title "demo-workload" || exit 1
"$perfkit" convert --to folded -i rec.data -o rec.folded || exit 1
"$perfkit" convert --to speedscope -i rec.data -o rec.speedscope.json || exit 1
"$perfkit" convert --to gecko -i rec.data -o rec.gecko.json || exit 1
echo "flamegraph.html: $(stat -c %s flamegraph.html) bytes, $samples samples"
# a 100-call-deep profile (the shape of a Python program's stacks)
${CC:-cc} -O2 -o deep "$here/deep.c" || exit 1
if command -v perf >/dev/null; then
	perf record -q -g -e cpu-clock -o deep.data ./deep 200 >/dev/null 2>perf.err ||
		{ cat perf.err >&2; exit 1; }
else
	"$perfkit" record -g -e cpu-clock -o deep.data ./deep 200 >/dev/null 2>rec.err ||
		{ cat rec.err >&2; exit 1; }
fi
"$perfkit" flamegraph -i deep.data -o deep.html --title "deep" || exit 1
PK_CHROMIUM=$chromium node "$here/browser-test.mjs" --html flamegraph.html --folded rec.folded \
	--samples "$samples" --speedscope rec.speedscope.json --gecko rec.gecko.json --deep deep.html --out "$out"
status=$?
echo "screenshots: $out/*.png"
exit $status
