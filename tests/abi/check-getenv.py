#!/usr/bin/env python3
# tests/abi/check-getenv.py SRC_DIR: the library takes no configuration from the
# environment (docs/architecture.md, "Configuration"). Fails (exit 1, naming each place)
# when a file under lib/ calls getenv/secure_getenv other than as the allow-list below
# says, with an argument that is not a string literal, or when an allow-list entry is
# stale (no longer used) or not named in docs/architecture.md's "Configuration" section.
import re
import sys
from pathlib import Path

# file under lib/ -> variables it may read, each for a reason the architecture page gives
ALLOWED = {
    "count/workload.c": {"PATH", "LD_PRELOAD"},          # the workload's own exec, valgrind
    "self/region.c": {"PERFKIT_EVENTS", "PERFKIT_REGION_REPORT"},  # implicit set-up
}

src = Path(sys.argv[1])
lib = src / "lib"
errors = []
seen = set()


def strip_comments(text):
    # comments out, string literals kept (the variable names are literals)
    out = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", out)


call = re.compile(r"\b(?:__)?(?:secure_)?getenv\s*\(\s*([^)]*)\)")
for path in sorted(lib.rglob("*")):
    if path.suffix not in (".c", ".h") or not path.is_file():
        continue
    rel = path.relative_to(lib).as_posix()
    text = strip_comments(path.read_text(errors="replace"))
    for m in call.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        arg = m.group(1).strip()
        lit = re.fullmatch(r'"([A-Za-z0-9_]+)"', arg)
        if not lit:
            errors.append(f"lib/{rel}:{line}: getenv({arg}): not a literal variable name")
            continue
        var = lit.group(1)
        if var not in ALLOWED.get(rel, set()):
            errors.append(f"lib/{rel}:{line}: getenv(\"{var}\"): the library reads no "
                          "configuration from the environment; add a field to the options "
                          "struct concerned (or pk_config_opts) and read the variable in "
                          "tool/env.c")
        seen.add((rel, var))

arch = (src / "docs" / "architecture.md").read_text()
sec = re.search(r"^## Configuration\n(.*?)(?=^## |\Z)", arch, re.S | re.M)
for rel, vars_ in ALLOWED.items():
    for var in sorted(vars_):
        if (rel, var) not in seen:
            errors.append(f"allow-list: lib/{rel} no longer reads {var}: remove the entry "
                          "(and its line in docs/architecture.md)")
        if not sec or var not in sec.group(1):
            errors.append(f"docs/architecture.md: the Configuration section does not list "
                          f"{var} (read by lib/{rel})")

for e in errors:
    print(e)
sys.exit(1 if errors else 0)
