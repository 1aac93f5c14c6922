#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that fusekit's includes point down the layers (docs/architecture.md):

    public headers      include/fusekit/*.hpp, *.cuh: may include anything
    backends            detail/<folder>/cpu*.hpp and mpi*.hpp (host backends) and every
                        detail/**.cuh (the CUDA backend): detail/, the
                        foundation, and backends of their own kind (a CUDA
                        backend may also use the CPU's threads)
    detail/             the rest of detail/<folder>/: the bodies both backends
                        share; detail/ and the foundation only, no backend
    foundation          config.hpp, error.hpp, policy.hpp, tuning.hpp and
                        every *_types.hpp: one another and detail/

A header below the public ones that includes a public algorithm header (or a
shared detail header that includes a backend) reaches back up: the cycle the
layers exist to prevent. Prints every such include, with its line, and exits 1
when there is one.

    scripts/check_includes.py [INCLUDE_DIR]   (default: include/ of this repository)
"""
import os
import re
import sys

FOUNDATION = {"config.hpp", "error.hpp", "policy.hpp", "tuning.hpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]fusekit/([^>"]+)[>"]')


def layer(path):
    """The layer of a header, from its path under include/fusekit."""
    if "/" not in path:
        return "foundation" if path in FOUNDATION or path.endswith("_types.hpp") else "public"
    if not path.startswith("detail/"):
        return "public"  # a folder of public headers
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".cuh"):
        return "cuda backend"
    if name.startswith(("cpu", "mpi")):
        return "cpu backend"
    return "detail"


def allowed(source, target):
    """Whether a header in `source`'s layer may include `target`."""
    s, t = layer(source), layer(target)
    if t == "foundation" or s == "public":
        return True
    if s in ("foundation", "detail"):
        return t == "detail"  # the vocabulary types use detail's numeric helpers
    if s == "cpu backend":
        return t in ("detail", "cpu backend")
    return t in ("detail", "cpu backend", "cuda backend")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                               "include")
    base = os.path.join(root, "fusekit")
    bad = 0
    checked = 0
    for folder, _, files in os.walk(base):
        for name in sorted(files):
            if not name.endswith((".hpp", ".cuh")):
                continue
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, base).replace(os.sep, "/")
            checked += 1
            with open(full, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and not allowed(rel, m.group(1)):
                        print(f"{rel}:{number}: includes <fusekit/{m.group(1)}>, a {layer(m.group(1))} header, "
                              f"from the {layer(rel)} layer: includes must point down")
                        bad += 1
    if checked == 0:
        print(f"no headers under {base}")
        return 1
    print(f"{checked} headers checked, {bad} upward includes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
