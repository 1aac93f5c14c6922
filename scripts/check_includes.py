#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that fusekit's includes point down the layers (README, Architecture):

    public headers      include/fusekit/*.hpp, *.cuh: may include anything
    backends            include/fusekit/cpu/, cuda/: the backends' own folder,
                        detail/, and the foundation below
    detail/             detail/ and the foundation only
    foundation          config.hpp, error.hpp, policy.hpp, tuning.hpp and
                        every *_types.hpp: one another and detail/

A header below the public ones that includes a public algorithm header (or a
detail header that includes a backend) reaches back up: the cycle the layers
exist to prevent. Prints every such include, with its line, and exits 1 when
there is one.

    scripts/check_includes.py [INCLUDE_DIR]   (default: include/ of this repository)
"""
import os
import re
import sys

FOUNDATION = {"config.hpp", "error.hpp", "policy.hpp", "tuning.hpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]fusekit/([^>"]+)[>"]')


def layer(path):
    """The layer of a header, from its path under include/fusekit."""
    top = path.split("/", 1)[0]
    if "/" not in path:
        return "foundation" if path in FOUNDATION or path.endswith("_types.hpp") else "public"
    return top  # "detail", "cpu", "cuda"


def allowed(source, target):
    """Whether a header in `source`'s layer may include `target`."""
    s, t = layer(source), layer(target)
    if t == "foundation":
        return True
    if s == "public":
        return True
    if s == "foundation":
        return t == "detail"  # the vocabulary types use detail's numeric helpers
    if s == "detail":
        return t == "detail"
    return t in ("detail", s)  # a backend: detail and its own folder


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
