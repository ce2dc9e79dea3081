#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a synthetic perf.data (perf's pipe format) whose samples fall in the kernel: a
cpu-clock event (mkperfdata.py's attr), the recorded kernel's build-id and release (the
BUILD_ID and OSRELEASE features, and a HEADER_BUILD_ID record for perf), the kernel map
as perf record writes it ([kernel.kallsyms]_text at TEXT, pgoff TEXT), one process and
its samples. Both perf and perfkit read it.

    mkkernel.py OUT TEXT BUILD_ID RELEASE [module=PATH,START,LEN,BUILD_ID]... ADDR:COUNT...

TEXT and ADDR in hex (kernel addresses as recorded, KASLR offset included); BUILD_ID hex
or "none"; RELEASE the recorded `uname -r`; COUNT samples at ADDR, one after another in
the order given. Samples of a user-space address (ADDR below 2^63) are user samples of
the process, outside every map. Each module= argument adds a kernel module's map as perf
record writes it (PATH the module's .ko, START its load address in hex, LEN its length
in hex, pgoff 0) and, unless its BUILD_ID is "none", the module's build-id under PATH.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkperfdata as M  # noqa: E402


def perf_string(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 64)
    return struct.pack("<I", len(b)) + b


def build_id_entry(bid, name):
    fn = M.cstr(name, 64) + b"\0" * 4     # the entry a multiple of 8 bytes
    body = struct.pack("<i", -1) + bid.ljust(20, b"\0") + bytes([len(bid), 0, 0, 0]) + fn
    return struct.pack("<IHH", 0, 1 | (1 << 15), 8 + len(body)) + body


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    out, text, bid, release = sys.argv[1], int(sys.argv[2], 16), sys.argv[3], sys.argv[4]
    mods = [a[7:].split(",") for a in sys.argv[5:] if a.startswith("module=")]
    samples = [a for a in sys.argv[5:] if not a.startswith("module=")]
    recs = [M.attr_rec()]
    recs.append(M.urec(80, struct.pack("<Q", 4) + perf_string(release)))     # OSRELEASE
    ids = [(bid, "[kernel.kallsyms]")] + [(m[3], m[0]) for m in mods]
    ents = [build_id_entry(bytes.fromhex(b), n) for b, n in ids if b != "none"]
    if ents:
        recs.append(M.urec(80, struct.pack("<Q", 2) + b"".join(ents)))
    for e in ents:
        recs.append(M.urec(67, e[8:], misc=1 | (1 << 15)))
    recs.append(M.rec(3, struct.pack("<II", M.PID, M.TID) + M.cstr("kwork")))
    recs.append(M.rec(1, struct.pack("<IIQQQ", 0xffffffff, 0, text, 0x1000000, text) +
                      M.cstr("[kernel.kallsyms]_text"), misc=1))
    for path, start, length, _ in mods:
        recs.append(M.rec(1, struct.pack("<IIQQQ", 0xffffffff, 0, int(start, 16),
                                         int(length, 16), 0) + M.cstr(path), misc=1))
    for arg in samples:
        addr, count = arg.split(":")
        addr = int(addr, 16)
        for _ in range(int(count)):
            s = M.sample(addr)
            if addr < (1 << 63):
                s = s[:6] + struct.pack("<H", 2) + s[8:]    # misc: PERF_RECORD_MISC_USER
            recs.append(s)
    recs.append(M.urec(68, b""))
    with open(out, "wb") as f:
        f.write(b"PERFILE2" + struct.pack("<Q", 16) + b"".join(recs))


if __name__ == "__main__":
    main()
