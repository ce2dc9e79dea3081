#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a stand-in for /proc/kcore: an ELF core file (x86-64) whose PT_LOAD segments map
kernel virtual addresses, as /proc/kcore's do: 64 bytes at the running kernel's _text,
and CODE (a file of machine code) at a function of the running kernel chosen here: the
first text symbol after _text that has an address of its own and 64 bytes or more
before the next symbol. Prints "TEXT FUNC NAME" (hex addresses of /proc/kallsyms).

    mkkcore.py OUT CODE [notext]     notext: no segment at _text
"""
import struct
import sys


def main():
    out, code = sys.argv[1], open(sys.argv[2], "rb").read()
    notext = len(sys.argv) > 3 and sys.argv[3] == "notext"
    syms, text = [], None
    with open("/proc/kallsyms") as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or len(p) > 3:
                continue                       # module symbols: "[name]" after the name
            a = int(p[0], 16)
            if p[2] == "_text":
                text = a
            syms.append((a, p[1], p[2]))
    if not text:
        sys.exit("no _text in /proc/kallsyms")
    addrs = sorted(set(a for a, _, _ in syms if a >= text))
    count = {}
    for a, _, _ in syms:
        count[a] = count.get(a, 0) + 1
    func = None
    for i, a in enumerate(addrs[:-1]):
        if a > text and count[a] == 1 and addrs[i + 1] - a >= 64:
            name = [n for b, t, n in syms if b == a and t in "tT"]
            if name:
                func = (a, name[0])
                break
    if not func:
        sys.exit("no function found")
    segs = ([] if notext else [(text, b"\x90" * 64)]) + [(func[0], code)]
    phoff, nph = 64, len(segs)
    data_off = phoff + 56 * nph
    hdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    hdr += struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, 0, 0, 64, 56, nph, 64, 0, 0)
    ph, body = b"", b""
    for vaddr, b in segs:
        ph += struct.pack("<IIQQQQQQ", 1, 7, data_off + len(body), vaddr, 0, len(b), len(b), 4096)
        body += b
    with open(out, "wb") as f:
        f.write(hdr + ph + body)
    print("%x %x %s" % (text, func[0], func[1]))


if __name__ == "__main__":
    main()
