#!/usr/bin/env python3
# tests/abi/check-include-cycles.py LIB_DIR: no header of the library includes itself,
# directly or through others. Reads every LIB_DIR/**/*.h and follows its includes:
#   - #include "x.h": next to the including header first, then from LIB_DIR and
#     LIB_DIR/include (the library's include path);
#   - #include <x.h>: only when LIB_DIR/include/x.h exists (the public headers).
# A quoted include that names no file of the tree is not followed (system headers found
# through the compiler's path). Fails (exit 1) naming each circle as a chain of headers:
#   lib/a.h -> lib/b.h -> lib/a.h
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def strip_comments(text):
    # an #include inside a comment does not count
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def resolve(header, kind, name, roots, pub):
    cands = [header.parent / name] + [r / name for r in roots] if kind == '"' else [pub / name]
    for c in cands:
        if c.is_file():
            return c.resolve()
    return None


def main():
    if len(sys.argv) != 2:
        print("usage: check-include-cycles.py LIB_DIR", file=sys.stderr)
        return 2
    lib = Path(sys.argv[1]).resolve()
    pub = lib / "include"
    roots = [lib, pub]
    headers = sorted(p.resolve() for p in lib.rglob("*.h"))
    if not headers:
        print(f"check-include-cycles: no headers under {lib}", file=sys.stderr)
        return 2

    edges = {}
    for h in headers:
        text = strip_comments(h.read_text(errors="replace"))
        deps = []
        for kind, name in INCLUDE.findall(text):
            d = resolve(h, kind, name.strip(), roots, pub)
            if d is not None and d.suffix == ".h" and d not in deps:
                deps.append(d)
        edges[h] = deps

    def show(p):
        try:
            return str(p.relative_to(lib.parent))
        except ValueError:
            return str(p)

    # depth-first search; a header met again while still on the path closes a circle
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {h: WHITE for h in edges}
    cycles = set()
    reports = []

    def visit(start):
        path, iters = [start], [iter(edges.get(start, []))]
        colour[start] = GREY
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = BLACK
                iters.pop()
                continue
            if nxt not in colour:       # a header outside LIB_DIR: not followed
                continue
            if colour[nxt] == GREY:
                loop = path[path.index(nxt):]
                # one report per circle, whichever header the search entered it by
                key = frozenset(zip(loop, loop[1:] + loop[:1]))
                if key not in cycles:
                    cycles.add(key)
                    reports.append(" -> ".join(show(p) for p in loop + [nxt]))
            elif colour[nxt] == WHITE:
                colour[nxt] = GREY
                path.append(nxt)
                iters.append(iter(edges.get(nxt, [])))

    for h in headers:
        if colour[h] == WHITE:
            visit(h)

    for r in reports:
        print(f"include circle: {r}")
    if reports:
        print(f"check-include-cycles: {len(reports)} circle(s) among {len(headers)} headers "
              "(move the shared declarations to a header both can include)")
        return 1
    print(f"check-include-cycles: {len(headers)} headers, no include circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
