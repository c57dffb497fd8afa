#!/usr/bin/python3
"""Checks the include rules of the layers (../shared/DESIGN.md, "Arrows point down only").

Each folder may include only from the folders its rule names (the public headers, weft/..., are
open to all), and above transports/ only its faces. DEPARTURES lists the includes that still
break a rule, each with the work that removes it: a new break fails the check, and so does a
departure that is gone (strike it here).

    tests/layers/check_layers.py [SOURCE_ROOT]
"""

import os
import re
import sys

# folder: the folders its files may include from (besides their own and weft/).
RULES = {
    "src/base": [],
    "src/bootstrap": ["src/base"],
    "topology": ["src/base"],
    "transports": ["src/base"],
    "collectives": ["src/base", "transports"],
    "src/comm": ["src/base", "src/bootstrap", "topology", "transports", "collectives"],
    "src/enqueue": ["src/base", "src/comm", "transports", "collectives"],
    "src/api": ["src/base", "src/bootstrap", "src/comm", "src/enqueue", "transports"],
    "parallel": [],
    "python": [],
    "tools": [],
    "tools/weft_topo": ["src/base", "topology", "tools"],
    "perf/weft_perf": ["perf", "tools/version.h"],
    "perf/baselines": ["perf", "tools/version.h"],
    "perf/membw": ["perf", "tools/version.h"],
}

# (file, included header): breaks still to mend.
DEPARTURES = set()
# Above transports/, only its faces (the headers at its top), not a transport's insides: only
# src/comm, which creates the transports, reaches them. (loopback/ is the simulator's own.)
TRANSPORT_INSIDES = ("transports/shm/", "transports/tcp/", "transports/ucx/")
SEES_INSIDES = ("transports", "src/comm")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".h", ".hpp", ".cc", ".cpp", ".cu")


def folder_of(path):
    for folder in sorted(RULES, key=len, reverse=True):
        if path.startswith(folder + "/"):
            return folder
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    breaks = []
    seen = set()
    for folder in RULES:
        for base, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(base, name), root)
                own = folder_of(path)
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    text = f.read()
                for header in INCLUDE.findall(text):
                    # A name without a folder is beside the file.
                    if "/" not in header or header.startswith(("weft/", own + "/")):
                        continue
                    allowed = any(header == f or header.startswith(f + "/") for f in RULES[own])
                    if own not in SEES_INSIDES and header.startswith(TRANSPORT_INSIDES):
                        allowed = False
                    if allowed:
                        continue
                    if (path, header) in DEPARTURES:
                        seen.add((path, header))
                        continue
                    breaks.append(f"{path} includes {header}: {own}/ may include only "
                                  f"{', '.join(RULES[own] + [own]) or own}")
    for path, header in sorted(DEPARTURES - seen):
        breaks.append(f"{path} no longer includes {header}: strike it from DEPARTURES")
    for b in breaks:
        print(b)
    if breaks:
        return 1
    print(f"layers: the include rules of {len(RULES)} folders hold "
          f"({len(DEPARTURES)} departures listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
