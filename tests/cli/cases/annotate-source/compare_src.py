#!/usr/bin/env python3
"""Compare the source lines of one symbol's annotation, perfkit's against perf's.

usage: compare_src.py OURS PERF [OURS_JSON]

Both are `annotate --stdio` text of one symbol. Before every instruction both must show
the same lines (text, as perf trims it), from the symbol's "<sym>:" line on. Line
numbers: perf 6.1 numbers a block of lines from the line objdump named (the last line of
the block) upwards, one per line; perfkit prints each line's own number, so the last
numbered line of each of our blocks must carry the number of perf's first. With
OURS_JSON (`--json` of the same symbol), every source line it lists must be the text of
that line of that file. Prints what differs; exits 1 when something does.
"""
import json
import re
import sys

INSN = re.compile(r'^\s*(\d+\.\d+|\d+)\s+:\s+([0-9a-f]+):')
SRC = re.compile(r'^ {9}:(?: (\d+)? +(.*))?$')
SYMLINE = re.compile(r'[0-9a-f]{16} <.*>:$')


def blocks(path):
    """{addr: [(number or None, text), ...]} of the lines shown before each instruction"""
    out, cur, started = {}, [], False
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            line = re.sub(r'\x1b\[[0-9;]*m', '', line)
            if not started:
                started = bool(SYMLINE.search(line))
                continue
            m = INSN.match(line)
            if m:
                out[int(m.group(2), 16)] = cur
                cur = []
                continue
            m = SRC.match(line)
            if m:
                num = int(m.group(1)) if m.group(1) else None
                cur.append((num, (m.group(2) or '').strip()))
    return out


def expand(t):
    t = t.strip(' \t\r\n\v\f')
    o = ''
    for ch in t:
        if ch == '\t':
            o += ' '
            while len(o) % 8:
                o += ' '
        else:
            o += ch
    return o.strip()


def main():
    ours, perf = blocks(sys.argv[1]), blocks(sys.argv[2])
    bad = []
    if not perf or not ours:
        print('no instructions: ours %d, perf %d' % (len(ours), len(perf)))
        return 1
    nlines = 0
    for a in sorted(perf):
        if a not in ours:
            bad.append('%x: not among our instructions' % a)
            continue
        ot = [t for _, t in ours[a]]
        pt = [t for _, t in perf[a]]
        nlines += len(pt)
        if ot != pt:
            bad.append('%x: ours %r, perf %r' % (a, ot, pt))
            continue
        # perf's numbers: the function-name lines (unnumbered in ours) carry a counter
        funcs = {i for i, (n, t) in enumerate(ours[a]) if n is None and t}
        pn = [n for i, (n, t) in enumerate(perf[a]) if i not in funcs and n is not None]
        on = [n for n, t in ours[a] if n is not None]
        if pn and on and pn[0] != on[-1]:
            bad.append('%x: our block ends at line %d, perf names line %d' % (a, on[-1], pn[0]))
    if nlines == 0:
        bad.append('perf shows no source lines (no debug info?)')
    if len(sys.argv) > 3:
        cache = {}
        for line in open(sys.argv[3]):
            o = json.loads(line)
            for ins in o['instructions']:
                for s in ins.get('source', []):
                    if 'text' not in s:
                        continue
                    f = s['file']
                    if f not in cache:
                        cache[f] = open(f, encoding='utf-8', errors='replace').read().split('\n')
                    real = expand(cache[f][s['line'] - 1])
                    if real != s['text']:
                        bad.append('%s:%d is %r, we showed %r' % (f, s['line'], real, s['text']))
    for b in bad:
        print(b)
    print('%d source lines compared' % nlines, file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
