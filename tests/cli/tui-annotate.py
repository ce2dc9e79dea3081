#!/usr/bin/env python3
# tui-annotate.py SCREEN SYMBOL: what the browser's annotate view of SYMBOL shows, from a
# `tmux capture-pane -p -e` (with the escape sequences of the colours). The tmux cases
# (top-tui, report-tui) poll it until the line they wait for comes, one fact a line:
#   view: yes|no                 the view of SYMBOL ("Annotate SYMBOL (")
#   instructions: N              instruction lines ("   12.34 :   1a2b:   insn")
#   hot: N                       their shares added up, rounded down (the shown part)
#   hot over 50: yes|no          those of 1 % or more add up to 50 % or more (and 90)
#   hot over 90: yes|no
#   source lines: N              source lines ("         : 19   text")
#   hot loop source: yes|no      the workload's hot loop line (x ^= x << 13, ...)
#   selected: hottest|hot|other|none   the selected line (the one line drawn with a
#                                background colour) is the hottest instruction shown, one
#                                with 10 % or more, another line, or there is none
#   selected row: N              the screen row of the selected instruction (none: left out)
#   selected 10 or more: yes|no  its share is 10 % or more
#   jump named: yes|no           a jump to a place in SYMBOL named "<SYMBOL+0x..>"
#   source toggle key: yes|no    the help lists s (show / hide the source lines)
import re
import sys

esc = re.compile(r"\x1b\[[0-9;]*m")
raw = open(sys.argv[1], encoding="utf-8", errors="replace").read().splitlines()
sym = sys.argv[2]
text = [esc.sub("", l) for l in raw]
insn = re.compile(r"\s+(\d+\.\d\d) :\s+[0-9a-f]+:\s+(\S+)")
src = re.compile(r"\s{9}: (\d+)?\s")
print("view: %s" % ("yes" if any(l.startswith("Annotate %s (" % sym) for l in text) else "no"))
ins = [(i, float(m.group(1))) for i, l in enumerate(text) for m in [insn.match(l)] if m]
print("instructions: %d" % len(ins))
print("hot: %d" % int(sum(p for _, p in ins)))
hot = sum(p for _, p in ins if p >= 1)
print("hot over 50: %s" % ("yes" if hot >= 50 else "no"))
print("hot over 90: %s" % ("yes" if hot >= 90 else "no"))
print("source lines: %d" % sum(1 for l in text if src.match(l)))
print("hot loop source: %s" % ("yes" if any(src.match(l) and "x ^= x << 13" in l for l in text)
                               else "no"))
# the selection: a background colour (40-47, 100-107, 48;5;N) or reverse video (7)
bg = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:4[0-7]|10[0-7]|48;5;\d+|7)(?:;[0-9;]*)?m")
sel = [i for i, l in enumerate(raw) if i > 2 and bg.search(l)]
what = "none"
if sel:
    p = dict(ins).get(sel[0])
    if p is not None and ins and p == max(q for _, q in ins):
        what = "hottest"
    elif p is not None and p >= 10:
        what = "hot"
    else:
        what = "other"
print("selected: %s" % what)
# the selected line's screen row and share (Tab steps to another row; ties of share are
# possible with few samples, so the row tells the steps apart)
if sel and dict(ins).get(sel[0]) is not None:
    print("selected row: %d" % sel[0])
    print("selected 10 or more: %s" % ("yes" if dict(ins)[sel[0]] >= 10 else "no"))
print("jump named: %s" % ("yes" if any(re.search(r"\bj\w+\s+[0-9a-f]+ <%s\+0x[0-9a-f]+>" % re.escape(sym), l)
                                       for l in text) else "no"))
print("source toggle key: %s" % ("yes" if any(re.match(r"\s+s\s+show / hide the source lines", l)
                                              for l in text) else "no"))
