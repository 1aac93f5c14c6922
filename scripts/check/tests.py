#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that tests/ mirrors the code it tests (docs/testing.md):

* no test file (*_test.cpp, *_test.cu) at the root of tests/;
* every folder of tests/ is a folder of include/fusekit/detail/ (base, core,
  team, host_data, elementwise, reduce, train, distributed), bench/ (the
  benchmarks' support code), or a kind of check that tests no one folder
  (common, codegen, compile_fail, consumer, layout, snippets, warnings,
  cmake, scripts; layout holds trees planted to fail the checks);
* every test suite (the first argument of TEST, TEST_F, TYPED_TEST, TEST_P,
  RC_GTEST_PROP) is written in one file, so that a failing test's name
  points to one file.

Prints the test files per folder, then every rule broken, and exits 1 when
one is.

    scripts/check/tests.py [REPOSITORY]   (default: this repository)
"""
import collections
import os
import re
import sys

KINDS = {"bench", "common", "codegen", "compile_fail", "consumer", "layout", "snippets", "warnings", "cmake", "scripts"}
SUITE = re.compile(r"^\s*(?:TEST|TEST_F|TYPED_TEST|TEST_P|RC_GTEST_PROP)\(\s*(\w+)\s*,", re.M)


def main(argv):
    root = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    tests = os.path.join(root, "tests")
    detail = os.path.join(root, "include", "fusekit", "detail")
    mirrored = {d for d in os.listdir(detail) if os.path.isdir(os.path.join(detail, d))}
    broken = []
    per_folder = collections.Counter()
    suites = collections.defaultdict(set)
    for folder, dirs, files in os.walk(tests):
        dirs.sort()
        rel = os.path.relpath(folder, tests).replace(os.sep, "/")
        top = rel.split("/")[0]
        if top == "layout":
            continue  # trees planted for the layout checks, this one's included
        if rel == ".":
            for d in dirs:
                if d not in mirrored and d not in KINDS:
                    broken.append(f"tests/{d}/: mirrors no folder of include/fusekit/detail/ and is no kind of check")
        for name in sorted(files):
            if not name.endswith((".cpp", ".cu")):
                continue
            path = f"tests/{name}" if rel == "." else f"tests/{rel}/{name}"
            if name.endswith(("_test.cpp", "_test.cu")):
                if rel == ".":
                    broken.append(f"{path}: a test at the root of tests/: move it to the folder of what it tests")
                per_folder[top] += 1
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                for suite in SUITE.findall(f.read()):
                    suites[suite].add(path)
    for suite, paths in sorted(suites.items()):
        if len(paths) > 1:
            broken.append(f"suite {suite} is written in {len(paths)} files ({', '.join(sorted(paths))}): "
                          "one suite, one file")
    for top, count in sorted(per_folder.items()):
        print(f"tests/{top}/: {count} test files" if top != "." else f"tests/: {count} test files at the root")
    for line in broken:
        print(line)
    print(f"{sum(per_folder.values())} test files, {len(suites)} suites, {len(broken)} rules broken")
    return 1 if broken or not per_folder else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
