#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write synthetic perf.data streams (perf's pipe format: "PERFILE2", size 16, then
records) holding record types this machine cannot produce: AUX, ITRACE_START,
LOST_SAMPLES, KSYMBOL, BPF_EVENT, TEXT_POKE, AUX_OUTPUT_HW_ID, the perf stat records,
TIME_CONV, ID_INDEX, BUILD_ID, AUXTRACE, ... Both perf and perfkit read the result, so a
test compares their text of each record.

    mkperfdata.py OUT SET      SET: kernel | user | aux | hostile | ksym
    mkperfdata.py OUT poke TEXT ADDR

kernel: every kernel side-band type (1-21 but READ) and a sample, after a HEADER_ATTR;
user: the user types perf report processes without an AUX-trace decoder (AUXTRACE_ERROR
and the old EVENT_TYPE too);
aux: AUXTRACE_INFO, AUXTRACE and AUXTRACE_ERROR (perf 6.1 cannot decode an unknown
AUX-trace type: perfkit's text of them is checked on its own);
hostile: records whose counts and lengths lie about their sizes;
ksym: a kernel map, KSYMBOL registers (a BPF program, a BPF trampoline, out-of-line
code; bounds: len 0, an addr+len past 2^64) with samples in them, an unregister and a
sample after it;
poke: a kernel map ([kernel.kallsyms]_text at TEXT, hex: the running kernel's _text), a
TEXT_POKE at ADDR (hex: a kernel function of /proc/kallsyms), whose symbol perf's text
adds, one outside every map and a sample.
The attr is a cpu-clock (exclude_guest, as perf record sets it) with sample_type
IP|TID|TIME|ID|CPU|PERIOD and sample_id_all; its ids are 100 and 101.
"""
import struct
import sys

PID, TID, CPU, ID = 4242, 4243, 1, 100
SAMPLE_TYPE = 0x1 | 0x2 | 0x4 | 0x40 | 0x80 | 0x100
t = [1000000000]


def rec(rtype, body, misc=0, trailer=True):
    """one record: header, body padded to 8 bytes, the sample_id_all trailer"""
    body += b"\0" * (-len(body) % 8)
    if trailer:
        t[0] += 1000
        body += struct.pack("<IIQQII", PID, TID, t[0], ID, CPU, 0)
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def urec(rtype, body, misc=0):
    return rec(rtype, body, misc, trailer=False)


def cstr(s, pad=8):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % pad)


def attr_rec():
    a = struct.pack("<IIQQQQQ", 1, 128, 0, 4000, SAMPLE_TYPE, 0, (1 << 18) | (1 << 20) | (1 << 1))
    a += b"\0" * (128 - len(a))
    return urec(64, a + struct.pack("<QQ", ID, ID + 1))


def sample(ip=0xffffffff81000010):
    t[0] += 1000
    return struct.pack("<IHH", 9, 1, 8 + 48) + struct.pack(
        "<QIIQQIIQ", ip, PID, TID, t[0], ID, CPU, 0, 4000)


def kernel_set():
    out = [attr_rec()]
    out.append(rec(3, struct.pack("<II", PID, TID) + cstr("synth")))
    out.append(rec(10, struct.pack("<IIQQQIIQQII", PID, TID, 0x400000, 0x1000, 0, 8, 1,
                                   1234, 0, 5, 2) + cstr("/usr/bin/synth")))
    out.append(rec(2, struct.pack("<QQ", ID, 17)))                        # LOST
    out.append(rec(5, struct.pack("<QQQ", t[0], ID, ID)))                # THROTTLE
    out.append(rec(6, struct.pack("<QQQ", t[0], ID, ID)))                # UNTHROTTLE
    out.append(rec(11, struct.pack("<QQQ", 0x1000, 0x200, 0x1)))         # AUX truncated
    out.append(rec(11, struct.pack("<QQQ", 0x1200, 0x80, 0x2 | 0x4 | 0x8)))
    out.append(rec(12, struct.pack("<II", PID, TID)))                     # ITRACE_START
    out.append(rec(13, struct.pack("<Q", 3)))                             # LOST_SAMPLES
    out.append(rec(14, b"", misc=0))                                      # SWITCH IN
    out.append(rec(14, b"", misc=0x2000))                                 # SWITCH OUT
    out.append(rec(15, struct.pack("<II", 77, 78), misc=0x2000 | 0x4000))  # OUT preempt
    out.append(rec(15, struct.pack("<II", 79, 80), misc=0))               # IN
    ns = b"".join(struct.pack("<QQ", 4 + i, 0xf0000000 + i) for i in range(7))
    out.append(rec(16, struct.pack("<IIQ", PID, TID, 7) + ns))            # NAMESPACES
    out.append(rec(17, struct.pack("<QIHH", 0xffffffffc0001000, 0x80, 1, 0) + cstr("bpf_prog_1234_synth")))
    out.append(rec(17, struct.pack("<QIHH", 0xffffffffc0001000, 0x80, 1, 1) + cstr("bpf_prog_1234_synth")))
    out.append(rec(18, struct.pack("<HHI", 1, 0, 42) + bytes(range(8))))  # BPF_EVENT load
    out.append(rec(18, struct.pack("<HHI", 2, 0, 42) + bytes(range(8))))  # unload
    out.append(rec(19, struct.pack("<Q", 7) + cstr("/system.slice/synth.service")))
    poke = struct.pack("<QHH", 0xffffffff81000040, 5, 5) + bytes([0x0f, 0x1f, 0x44, 0, 0]) + \
        bytes([0xe9, 0x10, 0x20, 0x30, 0x40])
    out.append(rec(20, poke))                                             # TEXT_POKE
    out.append(rec(20, struct.pack("<QHH", 0xffffffff81000080, 0, 2) + bytes([0x90, 0xcc])))
    out.append(rec(21, struct.pack("<Q", 0x12)))                          # AUX_OUTPUT_HW_ID
    out.append(sample())
    out.append(urec(68, b""))                                             # FINISHED_ROUND
    return out


def cpu_map_cpus(cpus):
    return struct.pack("<HH", 0, len(cpus)) + b"".join(struct.pack("<H", c) for c in cpus)


def user_set():
    out = [attr_rec()]
    # EVENT_UPDATE: unit, scale, name, cpus
    out.append(urec(78, struct.pack("<QQ", 0, ID) + cstr("msec")))
    out.append(urec(78, struct.pack("<QQd", 1, ID, 0.000001)))
    out.append(urec(78, struct.pack("<QQ", 2, ID) + cstr("cpu-clock")))
    out.append(urec(78, struct.pack("<QQ", 3, ID) + cpu_map_cpus([0, 1, 2, 5])))
    # ID_INDEX: id, idx, cpu, tid
    out.append(urec(69, struct.pack("<Q", 2) + struct.pack("<QQqq", ID, 0, 0, TID) +
                    struct.pack("<QQqq", ID + 1, 0, 1, TID)))
    # THREAD_MAP: nr, {pid, comm[16]}
    out.append(urec(73, struct.pack("<Q", 2) + struct.pack("<Q16s", PID, b"synth") +
                    struct.pack("<Q16s", TID, b"synth-2")))
    out.append(urec(74, cpu_map_cpus([0, 1, 3])))                              # list
    out.append(urec(74, struct.pack("<HHH4xQ", 1, 1, 8, 0x2d)))  # mask64
    out.append(urec(74, struct.pack("<HHHI", 1, 1, 4, 0x80000101)))       # mask32
    out.append(urec(74, struct.pack("<HBBHH", 2, 0, 0, 2, 5)))                 # range
    out.append(urec(74, struct.pack("<HBBHH", 2, 1, 0, 0, 1)))                 # range, any cpu
    # STAT_CONFIG: aggr_mode 1, interval 100, scale 1
    out.append(urec(75, struct.pack("<Q", 3) + struct.pack("<QQ", 0, 1) +
                    struct.pack("<QQ", 1, 100) + struct.pack("<QQ", 2, 1)))
    out.append(urec(76, struct.pack("<QIIQQQ", ID, 1, 0, 12345, 2000, 1000)))  # STAT
    out.append(urec(77, struct.pack("<QQ", 0, 5000)))                         # STAT_ROUND interval
    out.append(urec(77, struct.pack("<QQ", 1, 6000)))                         # final
    out.append(urec(79, struct.pack("<QQQQQBB6x", 31, 1 << 31, 123456, 99, 0xffffffffffff, 1, 0)))
    out.append(urec(79, struct.pack("<QQQ", 10, 500, 77)))                   # old short TIME_CONV
    # BUILD_ID: pid, build_id[20] size[1] reserved[3], filename
    out.append(urec(67, struct.pack("<i", -1) + bytes(range(0x10, 0x24)) + b"\x14\0\0\0" +
                    cstr("/usr/bin/synth", 64), misc=1 | (1 << 15)))
    msg = b"synthetic decoder error".ljust(64, b"\0")                       # AUXTRACE_ERROR
    out.append(urec(72, struct.pack("<IIIIIIQQ", 1, 7, CPU, PID, TID, 2, 0x401000, 123) + msg +
                    struct.pack("<II", 0, 0)))
    out.append(urec(65, struct.pack("<Q", 1) + b"x" * 64))                   # EVENT_TYPE (old)
    out.append(urec(82, b""))                                                 # FINISHED_INIT
    out.append(rec(3, struct.pack("<II", PID, TID) + cstr("synth")))
    out.append(sample())
    out.append(urec(68, b""))
    return out


def aux_set():
    out = [attr_rec()]
    out.append(urec(70, struct.pack("<II", 99, 0) + struct.pack("<QQ", 1, 2)))  # AUXTRACE_INFO
    payload = bytes(range(32))
    out.append(urec(71, struct.pack("<QQQIIII", len(payload), 0x40, 0xabc, 0, TID, CPU, 0)) + payload)
    msg = b"synthetic decoder error".ljust(64, b"\0")
    out.append(urec(72, struct.pack("<IIIIIIQQ", 1, 7, CPU, PID, TID, 2, 0x401000, 123) + msg +
                    struct.pack("<II", 0, 0)))
    out.append(sample())
    return out


def hostile_set():
    out = [attr_rec()]
    out.append(urec(69, struct.pack("<Q", 1 << 60)))                         # ID_INDEX nr lies
    out.append(urec(73, struct.pack("<Q", 1 << 40) + struct.pack("<Q16s", 1, b"x" * 16)))
    out.append(urec(74, struct.pack("<HH", 0, 0xffff)))                      # cpu list nr lies
    out.append(urec(74, struct.pack("<HHH4x", 1, 0xffff, 8)))              # mask nr lies
    out.append(urec(74, struct.pack("<HHH4x", 1, 1, 3)))                   # bad long size
    out.append(urec(74, struct.pack("<HBBHH", 2, 1, 0, 9, 2)))               # any cpu, end < start
    out.append(urec(75, struct.pack("<Q", 1 << 50)))                         # STAT_CONFIG nr lies
    out.append(urec(76, b""))                                                 # STAT too short
    out.append(urec(77, b""))
    out.append(urec(78, struct.pack("<QQ", 3, ID) + struct.pack("<HH", 0, 5000)))
    out.append(urec(78, struct.pack("<QQ", 0, ID) + b"unterminated"))
    out.append(urec(78, struct.pack("<QQ", 9, ID)))
    out.append(urec(78, b""))
    out.append(urec(67, struct.pack("<i", 1) + b"\xff" * 24 + b"no-nul-here", misc=1 | (1 << 15)))
    out.append(urec(79, b""))
    out.append(urec(70, b""))
    out.append(urec(72, struct.pack("<II", 1, 2)))
    out.append(urec(80, struct.pack("<Q", 1 << 40)))
    return out


def poke_set(text, addr):
    out = [attr_rec()]
    # MMAP of the kernel, as perf record synthesises it (pid -1, pgoff the address of _text)
    out.append(rec(1, struct.pack("<IIQQQ", 0xffffffff, 0, text, 0x2000000, text) +
                   cstr("[kernel.kallsyms]_text"), misc=1))
    out.append(rec(20, struct.pack("<QHH", addr, 5, 5) + bytes([0x0f, 0x1f, 0x44, 0, 0]) +
                   bytes([0xe8, 0x10, 0x20, 0x30, 0x40]), misc=1))
    out.append(rec(20, struct.pack("<QHH", 0x1000, 0, 1) + bytes([0x90]), misc=1))
    out.append(sample(addr))
    out.append(urec(68, b""))
    return out


def ksym(addr, length, name, ktype=1, unregister=False):
    return rec(17, struct.pack("<QIHH", addr, length, ktype, 1 if unregister else 0) + cstr(name),
               misc=1)


def ksym_set():
    out = [attr_rec()]
    out.append(rec(3, struct.pack("<II", PID, TID) + cstr("synth")))
    out.append(rec(1, struct.pack("<IIQQQ", 0xffffffff, 0, 0xffffffff81000000, 0x1000000,
                                  0xffffffff81000000) + cstr("[kernel.kallsyms]_text"), misc=1))
    bpf, tramp, ool = 0xffffffffc0001000, 0xffffffffc0003000, 0xffffffffc0005000
    out.append(ksym(bpf, 0x80, "bpf_prog_6deef7357e7b4530_synth"))
    out.append(sample(bpf + 0x10))
    out.append(sample(bpf))
    out.append(sample(bpf + 0x7f))
    out.append(sample(bpf + 0x80))                                        # just past it
    out.append(ksym(tramp, 0x40, "bpf_trampoline_6442491454"))
    out.append(sample(tramp + 0x8))
    out.append(ksym(ool, 0x100, "kprobe_insn_page", ktype=2))             # OOL
    out.append(sample(ool + 0x20))
    out.append(ksym(0xffffffffc0007000, 0, "synth_len0"))                 # len 0
    out.append(sample(0xffffffffc0007000))
    out.append(ksym(0xfffffffffffff000, 0x2000, "synth_wraps"))          # addr+len > 2^64
    out.append(sample(0xfffffffffffff800))
    out.append(ksym(bpf + 0x40, 0x20, "synth_nested"))                    # inside bpf_prog
    out.append(sample(bpf + 0x48))
    out.append(ksym(bpf + 0x10, 0x80, "bpf_prog_6deef7357e7b4530_synth", unregister=True))
    out.append(sample(bpf + 0x10))                                        # unregistered
    out.append(sample(tramp + 0x8))
    out.append(ksym(0xffffffffc0009000, 0x80, "synth_gone", unregister=True))   # never registered
    out.append(urec(68, b""))
    return out


def main():
    if len(sys.argv) == 5 and sys.argv[2] == "poke":
        recs = poke_set(int(sys.argv[3], 16), int(sys.argv[4], 16))
    elif len(sys.argv) != 3 or sys.argv[2] not in ("kernel", "user", "aux", "hostile", "ksym"):
        sys.exit(__doc__)
    else:
        recs = globals()[sys.argv[2] + "_set"]()
    with open(sys.argv[1], "wb") as f:
        f.write(b"PERFILE2" + struct.pack("<Q", 16) + b"".join(recs))


if __name__ == "__main__":
    main()
