#!/usr/bin/env python3
# tests/abi/check-exports.py LIB MAP INCLUDE_DIR: the library's ABI is what its version
# script lists. Fails (exit 1, naming each symbol) when
#   - the shared library exports a symbol the version script does not list, or the script
#     lists one the library does not export (a function removed or no longer PK_API),
#   - a public header declares a PK_API function that is not exported, or the library
#     exports one no public header declares,
#   - a node's global: section uses a wildcard (every symbol is named on purpose),
#   - an exported symbol carries no version (the script was not applied).
import re
import subprocess
import sys
from pathlib import Path

lib, vmap, incdir = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
errors = []

# the version script: node { global: a; b; local: *; } [parent];
text = re.sub(r"/\*.*?\*/", "", vmap.read_text(), flags=re.S)
listed = {}
for node, body in re.findall(r"([A-Za-z0-9_.]+)\s*\{(.*?)\}\s*[A-Za-z0-9_.]*\s*;", text, re.S):
    glob = re.search(r"global:(.*?)(?:local:|$)", body, re.S)
    for name in re.findall(r"([^\s;]+)\s*;", glob.group(1) if glob else ""):
        if any(c in name for c in "*?["):
            errors.append(f"{vmap.name}: node {node}: wildcard '{name}' in global:")
        elif name in listed:
            errors.append(f"{vmap.name}: '{name}' listed twice ({listed[name]}, {node})")
        else:
            listed[name] = node
if not listed:
    errors.append(f"{vmap.name}: no symbol listed")

# what the library exports (defined dynamic symbols, with their version)
nm = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", lib],
                    capture_output=True, text=True, check=True).stdout
exported = {}
for line in nm.splitlines():
    parts = line.split()
    if len(parts) < 3 or parts[1] in ("A",):
        continue
    name, _, ver = parts[2].partition("@")
    exported[name] = ver.lstrip("@")

# what the public headers declare PK_API (the function name before the first '(')
declared = set()
for h in sorted(incdir.glob("*.h")):
    src = re.sub(r"/\*.*?\*/|//[^\n]*", "", h.read_text(), flags=re.S)
    for m in re.finditer(r"\bPK_API\b([^;{(]*)\(", src):
        ident = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.group(1))
        if ident and ident[-1] != "__attribute__":
            declared.add(ident[-1])

for s in sorted(set(exported) - set(listed)):
    errors.append(f"exported but not in {vmap.name}: {s}")
for s in sorted(set(listed) - set(exported)):
    errors.append(f"listed in {vmap.name} but not exported: {s}")
for s in sorted(declared - set(exported)):
    errors.append(f"declared PK_API but not exported: {s}")
for s in sorted(set(exported) - declared):
    errors.append(f"exported but declared PK_API in no public header: {s}")
for s, ver in sorted(exported.items()):
    if s in listed and ver != listed[s]:
        errors.append(f"{s}: version '{ver}', the script says '{listed[s]}'")

for e in errors:
    print(e)
print(f"abi: {len(exported)} exported, {len(listed)} listed, {len(declared)} declared; "
      f"{len(errors)} problem(s)")
sys.exit(1 if errors else 0)
