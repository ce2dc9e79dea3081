#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Compare the top rows of two `report --stdio` outputs (ours, perf's).
# usage: compare.py OURS PERF [N] [TOL]
# Rows: lines starting with percentages. Per event section ("# Samples: ... of event 'X'"),
# our top N rows must be perf's: every row of ours is in perf's output with percentages
# within TOL points; perf's rows clearly above our N-th row are in our top N; our order
# agrees with perf's percentages (ties within TOL may be in any order).
import re, sys

def parse(path):
    sections, cur = [], None
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"# Samples: .* of event '(.*)'", line)
        if m:
            cur = (m.group(1), [])
            sections.append(cur)
            continue
        m = re.match(r"^\s+(\d+\.\d+)%\s+(?:(\d+\.\d+)%\s+)?(\S.*?)\s*$", line)
        if m and cur is not None:
            pcts = [float(m.group(1))] + ([float(m.group(2))] if m.group(2) else [])
            name = re.sub(r"\s+", " ", m.group(3))
            # symbol versions (clock_nanosleep@GLIBC_2.2.5): perf shows them, we do not
            name = re.sub(r"@@?GLIBC_[0-9.]+", "", name)
            # the k-th row with the same name matches perf's k-th such row
            seen = sum(1 for n, _ in cur[1] if n.split("#")[0] == name)
            if seen:
                name = "%s#%d" % (name, seen)
            cur[1].append((name, pcts))
    return sections

ours, theirs = parse(sys.argv[1]), parse(sys.argv[2])
N = int(sys.argv[3]) if len(sys.argv) > 3 else 10
TOL = float(sys.argv[4]) if len(sys.argv) > 4 else 0.2
bad = 0
if [s[0] for s in ours] != [s[0] for s in theirs]:
    print("event sections differ: ours %s perf %s" % ([s[0] for s in ours], [s[0] for s in theirs]))
    sys.exit(1)
for (ev, orows), (_, prows) in zip(ours, theirs):
    pmap = {}
    for name, p in prows:
        pmap.setdefault(name, p)
    top = orows[:N]
    if not top and prows:
        print("[%s] we show no rows, perf shows %d" % (ev, len(prows))); bad += 1; continue
    for name, p in top:
        q = pmap.get(name)
        if q is None:
            # a row perf does not have counts as 0%: fine within the tolerance
            if max(p) <= TOL:
                continue
            print("[%s] our row '%s' %s is not in perf's output" % (ev, name, p)); bad += 1; continue
        if len(p) != len(q) or any(abs(a - b) > TOL for a, b in zip(p, q)):
            print("[%s] '%s': ours %s perf %s" % (ev, name, p, q)); bad += 1
    if top:
        floor = top[-1][1][0]
        names = {n for n, _ in top}
        for name, q in prows[:N]:
            if q[0] > floor + TOL and name not in names:
                print("[%s] perf's row '%s' %s missing from our top %d" % (ev, name, q, N)); bad += 1
    # order: perf's percentages along our order never rise by more than TOL
    seq = [pmap[n][0] for n, _ in top if n in pmap]
    for a, b in zip(seq, seq[1:]):
        if b > a + TOL:
            print("[%s] order differs: %s" % (ev, [n for n, _ in top])); bad += 1; break
    print("[%s] %d rows compared" % (ev, len(top)), file=sys.stderr)
sys.exit(1 if bad else 0)
