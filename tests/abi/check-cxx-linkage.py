#!/usr/bin/env python3
# tests/abi/check-cxx-linkage.py LIB MAP INCLUDE_DIR: a C++ program can call every
# function the library exports. It includes <perfkit/perfkit.h>, takes the address of
# each symbol the version script lists and links against LIB: a declaration outside the
# headers' extern "C" blocks gets a C++ (mangled) name, and the link fails naming it.
# Exits 77 (skipped) without a C++ compiler.
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

lib, vmap, incdir = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
if not cxx:
    print("no C++ compiler: C linkage of the public headers not checked", file=sys.stderr)
    sys.exit(77)
text = re.sub(r"/\*.*?\*/", "", vmap.read_text(), flags=re.S)
names = sorted(set(re.findall(r"^\s*(pk_\w+)\s*;", text, re.M)))
if not names:
    print(f"{vmap}: no pk_ symbol listed", file=sys.stderr)
    sys.exit(1)
with tempfile.TemporaryDirectory() as tmp:
    src = Path(tmp) / "refs.cc"
    body = "".join(f"\t(void *)&{n},\n" for n in names)
    src.write_text("#include <perfkit/perfkit.h>\nvoid *pk_refs[] = {\n" + body +
                   "};\nint main() { return pk_refs[0] == nullptr; }\n")
    r = subprocess.run([cxx, "-std=c++17", "-I", incdir, str(src), "-L", str(lib.parent),
                        "-Wl,-rpath," + str(lib.parent),
                        # what the library itself leaves to others (a sanitizer build's
                        # runtime) is not this check's business: never run, only linked
                        "-Wl,--unresolved-symbols=ignore-in-shared-libs", "-lperfkit", "-o",
                        str(Path(tmp) / "refs")], capture_output=True, text=True)
    if r.returncode:
        missing = re.findall(r"undefined reference to `([^']*)'", r.stderr)
        for m in missing:
            print(f"declared with C++ linkage (outside extern \"C\"): {m}", file=sys.stderr)
        if not missing:
            print(r.stderr, file=sys.stderr)
        sys.exit(1)
print(f"{len(names)} exported functions callable from C++")
