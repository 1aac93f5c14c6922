#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two rules of fusekit's headers (docs/architecture.md):

* every public header (include/fusekit/*.hpp, *.cuh) is at least 40%
  documentation: comment lines among its non-blank lines;
* no header under include/fusekit is over 300 lines: a file holds one idea.

    scripts/check_headers.py [--min PERCENT] [INCLUDE_DIR]   (default 40, include/)

Prints one line per public header, then every header over the line limit,
and exits 1 when a rule is broken."""
import os
import sys

MAX_LINES = 300


def share(path):
    """(non-blank lines, comment lines) of a C++ header."""
    lines = [l.strip() for l in open(path, encoding="utf-8") if l.strip()]
    comments, block = 0, False
    for s in lines:
        if block:
            comments += 1
            block = "*/" not in s
        elif s.startswith("//"):
            comments += 1
        elif s.startswith("/*"):
            comments += 1
            block = "*/" not in s
    return len(lines), comments


def main(argv):
    floor = 40.0
    if len(argv) >= 2 and argv[0] == "--min":
        floor = float(argv[1])
        argv = argv[2:]
    root = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include")
    base = os.path.join(root, "fusekit")
    names = sorted(n for n in os.listdir(base) if n.endswith((".hpp", ".cuh")))
    low = 0
    for name in names:
        total, comments = share(os.path.join(base, name))
        percent = 100.0 * comments / max(total, 1)
        mark = "" if percent >= floor else "  below the floor"
        low += percent < floor
        print(f"{name:28s} {total:4d} lines {comments:4d} documentation {percent:5.1f}%{mark}")
    print(f"{len(names)} public headers, {low} below {floor:g}% documentation")
    long_files = 0
    for folder, _, files in os.walk(base):
        for name in sorted(files):
            full = os.path.join(folder, name)
            with open(full, encoding="utf-8") as f:
                count = sum(1 for _ in f)
            if count > MAX_LINES:
                long_files += 1
                print(f"{os.path.relpath(full, base)}: {count} lines, over {MAX_LINES}")
    print(f"{long_files} headers over {MAX_LINES} lines")
    return 1 if low or long_files or not names else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
