# Keep the frame lines of `script -F ip,sym,symoff,dso` output whose address lies in a
# PLT section (.plt, .plt.sec, .plt.got) of the ELF file named: the address column is the
# file-relative one perf prints, compared with the sections' file offsets.
import re
import subprocess
import sys

elf = sys.argv[1]
spans = []
out = subprocess.run(["readelf", "-SW", elf], capture_output=True, text=True).stdout
for line in out.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\.plt(?:\.sec|\.got)?)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
    if m:
        off, size = int(m.group(3), 16), int(m.group(4), 16)
        spans.append((off, off + size))
for line in sys.stdin:
    f = line.split()
    if len(f) < 2 or not line.rstrip().endswith("(" + elf + ")"):
        continue
    try:
        a = int(f[0], 16)
    except ValueError:
        continue
    if any(lo <= a < hi for lo, hi in spans):
        print(line.strip())
