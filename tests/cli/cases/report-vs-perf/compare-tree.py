#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Compare two `report --stdio` outputs (ours, perf's) in full: every entry row and its
# whole call graph, node by node.
# usage: compare-tree.py OURS PERF [ALIASES]
#
# Three differences are tolerated, each named (each prints a note when it is used):
#  - "sibling-order": siblings with the same percentage whose first frames are both
#    real (not inline) symbols may come in any order. perf orders such siblings by the
#    address of its in-memory DSO object, then symbol start (its match_chain search
#    tree), which nothing outside that process can reproduce; we order them by name.
#    Siblings where an inline frame is involved are compared in order (perf: by name,
#    descending, which we follow), unless one of them is an asm-alias (below): perf
#    then orders by a name we do not show.
#  - "mixed-sibling-order": siblings with the same percentage whose first frames mix
#    inline frames and real functions, under a node with a third child (shown, or hidden
#    below the threshold: the shown shares add up to less than the node's): perf's
#    comparison of such children (inline frames by name, real functions by address) is
#    not transitive, so its order depends on the order it met them in.
#  - "asm-alias": ALIASES lists groups of function names that share one address (one
#    group a line, names separated by spaces: glibc's assembly routines such as
#    __memmove_avx512_unaligned_erms / __memcpy_avx512_unaligned_erms). Such code has
#    no DWARF function, and perf's addr2line names it after one alias (as an inline
#    frame when that is not the ELF symbol it chose); we keep the ELF symbol. Names of
#    one group compare equal, with or without " (inlined)".
import re, sys

BRANCH = re.compile(r"--(\d+\.\d+)%--(.*)$")
ROW = re.compile(r"^\s+\d+\.\d+%\s")
notes = set()


class Node:
    def __init__(self, pct, col):
        self.pct, self.col, self.names, self.kids = pct, col, [], []


def parse(path):
    """[(row text, root Node)]"""
    out, root, stack = [], None, []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("#") or not line.strip():
            continue
        if ROW.match(line):
            root = Node(None, -1)
            stack = [root]
            out.append((re.sub(r"\s+", " ", line.strip()), root))
            continue
        if root is None:
            continue
        m = BRANCH.search(line)
        if m or "---" in line:
            # a node's further frames are indented to a fixed column (whatever the
            # width of its percentage): 10 past a branch's dashes, 3 past "---"
            if m:
                dash, pct, name = m.start(), m.group(1), m.group(2)
                col = dash + 10
            else:
                dash = line.index("---")
                pct, name, col = None, line[dash + 3:], dash + 3
            while len(stack) > 1 and stack[-1].col >= dash:
                stack.pop()
            n = Node(pct, col)
            n.names.append(name.strip())
            stack[-1].kids.append(n)
            stack.append(n)
            continue
        body = line.replace("|", " ")
        if not body.strip():
            continue
        col = len(body) - len(body.lstrip())
        while len(stack) > 1 and stack[-1].col > col:
            stack.pop()
        if stack[-1].col != col:
            print("%s: cannot place line: %r" % (path, line))
            sys.exit(2)
        stack[-1].names.append(body.strip())
    return out


def canon_name(name, alias):
    base = name[:-len(" (inlined)")] if name.endswith(" (inlined)") else name
    return "<asm-alias %d>" % alias[base] if base in alias else name


def mixed_nontransitive(n):
    """Children whose first frames mix inline frames and real functions, where a third
    child takes part: shown (three or more), or hidden below the graph's threshold (the
    shown children's shares add up to less than the node's). perf's search tree of a
    node's children compares an inline frame with another frame by name and two real
    functions by address, which is not transitive: its order of tied children then
    follows the order it met them in (the tree's shape), which no report shows."""
    firsts = [k.names[0] if k.names else "" for k in n.kids]
    inl = sum(f.endswith(" (inlined)") for f in firsts)
    if not 0 < inl < len(firsts):
        return False
    if len(firsts) >= 3:
        return True
    try:
        shown = sum(float(k.pct) for k in n.kids)
        return shown < float(n.pct) - 0.015
    except (TypeError, ValueError):
        return False


def ser(n, alias):
    names = []
    for x in n.names:
        c = canon_name(x, alias)
        if c != x:
            notes.add("asm-alias")
        names.append(c)
    kids = [ser(k, alias) for k in n.kids]
    # runs of same-percentage siblings whose first frames are all real symbols
    i = 0
    while i < len(kids):
        j = i
        while j + 1 < len(kids) and n.kids[j + 1].pct == n.kids[i].pct:
            j += 1
        run = n.kids[i:j + 1]
        # (with an asm-alias name in the run, perf orders by a name we do not show)
        firsts = [k.names[0] if k.names else "" for k in run]
        if j > i and (not any(f.endswith(" (inlined)") for f in firsts) or
                      any(canon_name(f, alias) != f for f in firsts)):
            s = sorted(kids[i:j + 1])
            if s != kids[i:j + 1]:
                notes.add("sibling-order")
            kids[i:j + 1] = s
        elif j > i and mixed_nontransitive(n):
            s = sorted(kids[i:j + 1])
            if s != kids[i:j + 1]:
                notes.add("mixed-sibling-order")
            kids[i:j + 1] = s
        i = j + 1
    return "(%s [%s] {%s})" % (n.pct, ";".join(names), ",".join(kids))


def flat(n, alias, depth, out):
    for x in n.names:
        out.append("%s%s %s" % ("  " * depth, n.pct, canon_name(x, alias)))
    for k in n.kids:
        flat(k, alias, depth + 1, out)


alias = {}
if len(sys.argv) > 3:
    for gi, line in enumerate(open(sys.argv[3])):
        for name in line.split():
            alias[name] = gi
ours, theirs = parse(sys.argv[1]), parse(sys.argv[2])
bad = 0
if len(ours) != len(theirs):
    print("entries: ours %d perf %d" % (len(ours), len(theirs)))
    bad += 1
for (orow, otree), (prow, ptree) in zip(ours, theirs):
    if orow != prow:
        print("row differs:\n  ours %s\n  perf %s" % (orow, prow))
        bad += 1
        continue
    if ser(otree, alias) != ser(ptree, alias):
        a, b = [], []
        flat(otree, alias, 0, a)
        flat(ptree, alias, 0, b)
        k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        print("tree of '%s' differs at frame %d:\n  ours %s\n  perf %s" %
              (orow, k, a[k] if k < len(a) else "(end)", b[k] if k < len(b) else "(end)"))
        bad += 1
    if bad > 5:
        break
for n in sorted(notes):
    print("tolerated: %s" % n, file=sys.stderr)
sys.exit(1 if bad else 0)
