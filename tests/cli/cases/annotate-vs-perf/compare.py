#!/usr/bin/env python3
"""Compare one symbol's annotation by perfkit annotate with perf annotate --stdio.

usage: compare.py OURS PERF [TOL]

Both outputs are read for their instruction lines ("  12.34 :   13c4:   add ...").
Checks: the hottest instruction of ours is one of perf's hottest (ties allowed), and
every instruction above 1 % in either output has shares within TOL points (0.5).
Prints what differs and exits 1 when something does.
"""
import re
import sys

LINE = re.compile(r'^\s*(\d+\.\d+)\s+:\s+([0-9a-f]+):')


def shares(path):
    out = {}
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if m:
                addr = int(m.group(2), 16)
                out[addr] = out.get(addr, 0.0) + float(m.group(1))
    return out


def main():
    ours, perf = shares(sys.argv[1]), shares(sys.argv[2])
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
    bad = []
    if not ours or not perf:
        print('no instruction lines: ours %d, perf %d' % (len(ours), len(perf)))
        return 1
    top = max(ours.values())
    ptop = max(perf.values())
    ours_hot = min(a for a, v in ours.items() if v == top)
    perf_hot = {a for a, v in perf.items() if abs(v - ptop) < 1e-9}
    if ours_hot not in perf_hot:
        bad.append('hottest instruction: ours %x (%.2f), perf %s (%.2f)' %
                   (ours_hot, top, ' '.join('%x' % a for a in sorted(perf_hot)), ptop))
    for a in sorted(set(ours) | set(perf)):
        o, p = ours.get(a, 0.0), perf.get(a, 0.0)
        if (o > 1 or p > 1) and abs(o - p) > tol:
            bad.append('%x: ours %.2f, perf %.2f' % (a, o, p))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
