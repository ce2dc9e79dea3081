#!/usr/bin/env python3
"""Compare the -l summaries ("Sorted summary for file"): the same srclines, each share
within TOL points (0.5), and the same order where the shares differ by more than TOL.

usage: compare_summary.py OURS PERF [TOL]
"""
import re
import sys

ROW = re.compile(r'^\s+(\d+\.\d+) (\S+)$')


def summary(path):
    rows, on = [], False
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = re.sub(r'\x1b\[[0-9;]*m', '', line.rstrip('\n'))
            if line.startswith('Sorted summary for file'):
                on = True
                continue
            if on and line.startswith(' Percent |'):
                break
            m = ROW.match(line) if on else None
            if m:
                rows.append((m.group(2), float(m.group(1))))
    return rows


def main():
    ours, perf = summary(sys.argv[1]), summary(sys.argv[2])
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
    o, p = dict(ours), dict(perf)
    bad = []
    if not perf:
        bad.append('perf printed no summary rows')
    for k in sorted(set(o) | set(p)):
        a, b = o.get(k), p.get(k)
        # a line near the 0.5 % cut may be on one side only
        if a is None or b is None:
            if (a or b) > 0.5 + tol:
                bad.append('%s: ours %s, perf %s' % (k, a, b))
        elif abs(a - b) > tol:
            bad.append('%s: ours %.2f, perf %.2f' % (k, a, b))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
