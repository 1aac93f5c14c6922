#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The rules of fusekit's headers (docs/architecture.md):

* every public header (include/fusekit/*.hpp, *.cuh) is at least 40%
  documentation: comment lines among its non-blank lines;
* one concept per file, and its name says which: every header opens with a
  `/// \\file` paragraph that states what it holds, a word of the file's name
  (less a backend prefix: cpu_, cuda_, mpi_, nccl_) appears in that
  paragraph, and no name is a word that says nothing (parts, misc, util,
  helpers, impl, common, ...);
* no header is over 600 lines: a backstop (CUB's dispatch files run to about
  650), not the rule that splits files.

    scripts/check/headers.py [--min PERCENT] [INCLUDE_DIR]   (default 40, include/)

Prints one line per public header, then every header that breaks a rule,
and exits 1 when one does."""
import os
import re
import sys

MAX_LINES = 600
BACKENDS = ("cpu", "cuda", "mpi", "nccl")
VAGUE = {"parts", "part", "misc", "util", "utils", "utility", "utilities", "helper", "helpers", "impl", "common",
         "stuff", "other", "internal", "details", "extra", "extras", "pieces"}


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


def summary(path):
    """The `/// \\file` paragraph of a header, or None when it has none."""
    lines = open(path, encoding="utf-8").read().split("\n")
    start = next((i for i, l in enumerate(lines) if l.strip() == "/// \\file"), None)
    if start is None:
        return None
    words = []
    for line in lines[start + 1:]:
        text = line.strip()
        if not text.startswith("///") or text == "///":
            break
        words.append(text[3:].strip())
    return " ".join(words)


def name_words(name):
    """The words of a header's name that must say what it holds."""
    words = [w for w in re.split(r"[_.]", name.rsplit(".", 1)[0]) if w]
    return [w for w in words if w not in BACKENDS]


def concept_problem(path, name):
    """Why a header's name does not say what it holds, or None."""
    text = summary(path)
    if text is None:
        return "no `/// \\file` paragraph: say what the file holds"
    words = name_words(name)
    vague = [w for w in words if w in VAGUE]
    if vague:
        return f"'{vague[0]}' says nothing of what the file holds: name its concept"
    if not words:
        return None  # cpu.hpp, cuda.cuh: the backend of the folder's algorithm
    lower = text.lower()
    # A word counts when its stem (less up to two letters of ending) starts a word of the paragraph.
    stems = [w if len(w) <= 4 else w[:max(4, len(w) - 2)] for w in words]
    if not any(re.search(r"\b" + re.escape(stem), lower) for stem in stems):
        return f"its \\file paragraph names none of {', '.join(words)}: say what it holds, or rename it"
    return None


def main(argv):
    floor = 40.0
    if len(argv) >= 2 and argv[0] == "--min":
        floor = float(argv[1])
        argv = argv[2:]
    root = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include")
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
    broken = 0
    for folder, dirs, files in os.walk(base):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, base)
            with open(full, encoding="utf-8") as f:
                count = sum(1 for _ in f)
            if count > MAX_LINES:
                broken += 1
                print(f"{rel}: {count} lines, over {MAX_LINES}")
            why = concept_problem(full, name)
            if why:
                broken += 1
                print(f"{rel}: {why}")
    print(f"{broken} headers over {MAX_LINES} lines or without a name that says what they hold")
    return 1 if low or broken or not names else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
