#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the Markdown tables in Doxygen comments (`/// | a | b |`).

clang-format once reflowed long table rows into the lines below them, and
Doxygen then drew no table. .clang-format's CommentPragmas keeps every row on
its one line; this check fails when a table is broken anyway: a row that does
not start and end with `|`, a row with another number of cells than its
header, or a line next to a row that holds cells but is no row (the remains of
a reflowed one). Usage: doc_tables.py DIR...  (exit 1 and one line per fault)
"""
import pathlib
import re
import sys

ROW = re.compile(r"^\s*/// \|[ -]")
CELL_SPLIT = re.compile(r"(?<!\\)\|")


def cells(text):
    return len(CELL_SPLIT.findall(text))


def check(path):
    faults = []
    lines = path.read_text(encoding="utf-8").splitlines()
    header = None
    for i, line in enumerate(lines):
        if ROW.match(line):
            body = line.split("///", 1)[1].strip()
            if not body.endswith("|"):
                faults.append(f"{path}:{i + 1}: a table row that does not end with '|'")
            if header is None:
                header = cells(body)
            elif cells(body) != header:
                faults.append(f"{path}:{i + 1}: {cells(body) - 1} cells, the header has {header - 1}")
            continue
        near_row = (i > 0 and ROW.match(lines[i - 1])) or (i + 1 < len(lines) and ROW.match(lines[i + 1]))
        stripped = line.strip()
        if near_row and stripped.startswith("///") and CELL_SPLIT.search(stripped[3:]):
            faults.append(f"{path}:{i + 1}: cells outside a row next to a table (a row broken over lines)")
        header = None
    return faults


def main(argv):
    faults = []
    tables = 0
    for root in argv[1:] or ["include"]:
        for path in sorted(pathlib.Path(root).rglob("*")):
            if path.suffix in {".hpp", ".cuh", ".h", ".cu", ".cpp"}:
                text = path.read_text(encoding="utf-8")
                tables += len(re.findall(r"^\s*/// \|[-| ]+\|\s*$", text, re.M))
                faults += check(path)
    for f in faults:
        print(f)
    print(f"doc_tables: {tables} tables, {len(faults)} faults")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
