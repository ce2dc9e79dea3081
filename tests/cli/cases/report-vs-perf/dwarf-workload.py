# SPDX-License-Identifier: MIT
# The python3 workload of report-vs-perf's DWARF cases: JSON dump and load, and a
# regular-expression word count (CPython's C code, deep inline chains with -O2/LTO).
import json, re, sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
data = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i)], "v": i * 0.5}
        for i in range(2000)]
text = " ".join("word%d alpha beta gamma" % (i % 97) for i in range(20000))
for _ in range(rounds):
    back = json.loads(json.dumps(data))
    counts = {}
    for w in re.findall(r"\w+", text):
        counts[w] = counts.get(w, 0) + 1
