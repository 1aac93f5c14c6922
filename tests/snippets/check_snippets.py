#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every snippet region of a test source appears verbatim in the
file it names (a page of docs/, README.md, or a header's /// comment), so the documentation
cannot drift from the code the test compiles.

    python3 tests/snippets/check_snippets.py SOURCE_ROOT tests/snippets/snippets_test.cu
"""
import argparse
import pathlib
import sys


def regions(test_source):
    """[(file, [lines])] between '// snippet: FILE' and '// end snippet'."""
    out, current = [], None
    for line in test_source.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("// snippet: "):
            current = (stripped[len("// snippet: "):], [])
        elif stripped == "// end snippet":
            out.append(current)
            current = None
        elif current is not None and stripped:
            current[1].append(stripped)
    return out


def doc_lines(path):
    """The file's lines, stripped, with a header's '///' comment prefix removed."""
    lines = []
    for line in path.read_text().splitlines():
        t = line.strip()
        if t.startswith("///"):
            t = t[3:].strip()
        if t:
            lines.append(t)
    return lines


def contains(haystack, needle):
    return any(haystack[i:i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", help="the source tree")
    parser.add_argument("tests", nargs="+", help="test sources with snippet regions")
    args = parser.parse_args(argv[1:])
    root = pathlib.Path(args.root)
    failed = 0
    checked = 0
    for test in args.tests:
        for name, lines in regions(pathlib.Path(test)):
            checked += 1
            if not contains(doc_lines(root / name), lines):
                failed += 1
                print(f"{test}: this snippet is not in {name} as written:\n  " + "\n  ".join(lines))
    print(f"{checked} snippets checked, {failed} not found")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
