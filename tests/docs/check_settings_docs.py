#!/usr/bin/python3
"""Checks that the settings the library reads are the ones its docs describe (DESIGN.md,
decision 6: one module reads them, one table documents them).

Every WEFT_* variable that src/base/env.cc or src/bootstrap/launch_env.cc reads has a row in
docs/configuration.md, and every variable in the README's table is one the library reads, with
the same default in both tables (where it is a value, not words).

    tests/docs/check_settings_docs.py [SOURCE_ROOT]
"""

import os
import re
import sys

READERS = ["src/base/env.cc", "src/bootstrap/launch_env.cc"]
NAME = re.compile(r"`(WEFT_[A-Z0-9_]+)`")


def rows(path):
    """{variable: default} of the rows of a file's markdown tables that name variables."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not line.startswith("| `WEFT_") or len(cells) < 3:
                continue
            for name in NAME.findall(cells[0]):
                out[name] = cells[1]
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    read = set()
    for path in READERS:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            read |= set(re.findall(r'"(WEFT_[A-Z0-9_]+)"', f.read()))
    full = rows(os.path.join(root, "docs/configuration.md"))
    readme = rows(os.path.join(root, "README.md"))
    problems = []
    for name in sorted(read - set(full)):
        problems.append(f"{name} is read but has no row in docs/configuration.md")
    for name in sorted(set(full) - read):
        problems.append(f"docs/configuration.md describes {name}, which nothing reads")
    for name, default in sorted(readme.items()):
        if name not in read:
            problems.append(f"the README's table has {name}, which nothing reads")
        elif name in full and " " not in default and full[name].split(", ")[0] != default:
            problems.append(f"{name}'s default is '{default}' in the README, "
                            f"'{full[name]}' in docs/configuration.md")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"settings docs: {len(read)} variables read, all described; "
          f"{len(readme)} in the README's table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
