#!/usr/bin/env python3
# tests/abi/check-file-length.py SRC_DIR: no C file or header under lib/ is longer than
# 1,200 lines, none under tool/ longer than 600 (the project's limits: a file that grows
# past them is split by what its parts do). Names each file over its limit.
import sys
from pathlib import Path

root = Path(sys.argv[1])
limits = {"lib": 1200, "tool": 600}
bad = []
for top, limit in limits.items():
    for f in sorted((root / top).rglob("*")):
        if f.suffix not in (".c", ".h") or not f.is_file():
            continue
        n = len(f.read_bytes().splitlines())
        if n > limit:
            bad.append(f"{f.relative_to(root)}: {n} lines (limit {limit})")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
