#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that fusekit's includes point down the layers (docs/architecture.md).

A header's layer is its folder. From the bottom up:

    0 configuration   config.hpp: macros only; includes nothing of fusekit's
    1 base            detail/base/: numeric, rounding, extremum, enum_name, the
                      resource interface, the accumulator traits
    2 vocabulary      error.hpp, tuning.hpp, policy.hpp and every *_types.hpp:
                      the public types the detail folders are written in
    3 machinery       detail/core/ (launches, buffers, threads, dispatch,
                      validation) and detail/team/ (the team a body runs on)
    4 data movement   detail/host_data/ (host memory through the GPU)
    5 algorithms      detail/elementwise/, detail/reduce/
    6 trainer         detail/train/ (stands on reduce/)
    7 distributed     detail/distributed/ (stands on all three algorithms)
    8 public          every other header of include/fusekit/

A header may include a header of its own folder or of a lower layer: never a
higher one, and never a folder beside it on the same layer (core and team
know nothing of each other). The root folder holds three layers, told apart
by the list above. Inside a folder, a body both backends share (not cpu.hpp or
mpi.hpp, no cpu_, cuda_, mpi_ or nccl_ prefix, and not .cuh) includes no backend file of
its folder. And the file-level graph has no cycle: `#pragma once` hides one,
but a cycle means no file of it can be read first.

Prints every include that breaks a rule, with its line, and exits 1 when
there is one. `--graph` prints the folder-level graph, with its edges that
point back up.

    scripts/check/includes.py [--graph] [INCLUDE_DIR]   (default: include/ of this repository)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]fusekit/([^>"]+)[>"]')
DETAIL_LAYERS = {"base": 1, "core": 3, "team": 3, "host_data": 4, "elementwise": 5, "reduce": 5, "train": 6,
                 "distributed": 7}
VOCABULARY = {"error.hpp", "tuning.hpp", "policy.hpp"}
LAYER_NAMES = ["configuration", "base", "vocabulary", "machinery", "data movement", "algorithms", "trainer",
               "distributed", "public"]
BACKEND_PREFIXES = ("cpu_", "cuda_", "mpi_", "nccl_")


def folder(path):
    """The folder of a header under include/fusekit: 'detail/<name>', or the
    root's part ('configuration', 'vocabulary', 'public')."""
    parts = path.split("/")
    if parts[0] == "detail":
        return "detail/" + parts[1] if len(parts) > 2 else "detail"
    if len(parts) > 1:
        return "public"  # a folder of public headers
    if path == "config.hpp":
        return "configuration"
    if path in VOCABULARY or path.endswith("_types.hpp"):
        return "vocabulary"
    return "public"


def rank(f):
    """The layer of a folder; an unknown detail folder ranks nowhere (None)."""
    if f.startswith("detail/"):
        return DETAIL_LAYERS.get(f[len("detail/"):])
    return LAYER_NAMES.index(f)


def is_backend(path):
    name = path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0]
    return name.endswith(".cuh") or stem in ("cpu", "mpi", "nccl") or name.startswith(BACKEND_PREFIXES)


def problem(source, target):
    """Why `source` may not include `target`, or None when it may."""
    fs, ft = folder(source), folder(target)
    rs, rt = rank(fs), rank(ft)
    if rs is None or rt is None:
        unknown = fs if rs is None else ft
        return f"{unknown} is in no layer: add it to DETAIL_LAYERS in scripts/check/includes.py"
    if fs == ft:
        if fs.startswith("detail/") and not is_backend(source) and is_backend(target):
            return "a body both backends share includes a backend of its folder"
        return None
    if fs in ("vocabulary", "public") and ft == fs:
        return None
    if rt > rs:
        return f"the {fs} layer ({rs}) reaches up to {ft} ({rt}): includes must point down"
    if rt == rs:
        return f"{fs} and {ft} sit side by side on layer {rs}: neither may include the other"
    return None


def headers(base):
    for root, dirs, files in os.walk(base):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".hpp", ".cuh")):
                full = os.path.join(root, name)
                yield os.path.relpath(full, base).replace(os.sep, "/"), full


def includes_of(full):
    with open(full, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def cycle(graph):
    """One cycle of the file-level graph as a list of files, or None."""
    state = {}
    for start in sorted(graph):
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = "open"
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = "done"
                stack.pop()
                path.pop()
            elif state.get(child) == "open":
                return path[path.index(child):] + [child]
            elif child not in state and child in graph:
                state[child] = "open"
                stack.append((child, iter(sorted(graph[child]))))
                path.append(child)
    return None


def main(argv):
    show_graph = "--graph" in argv
    argv = [a for a in argv if a != "--graph"]
    root = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include")
    base = os.path.join(root, "fusekit")
    bad = 0
    graph = {}
    folders = {}
    for rel, full in headers(base):
        graph[rel] = set()
        for number, target in includes_of(full):
            graph[rel].add(target)
            if folder(rel) != folder(target):
                folders.setdefault(folder(rel), set()).add(folder(target))
            why = problem(rel, target)
            if why:
                print(f"{rel}:{number}: includes <fusekit/{target}>: {why}")
                bad += 1
    if not graph:
        print(f"no headers under {base}")
        return 1
    loop = cycle(graph)
    if loop:
        print("an include cycle: " + " -> ".join(loop))
        bad += 1
    if show_graph:
        up = 0
        for f in sorted(folders, key=lambda f: (rank(f) or 0, f)):
            targets = sorted(folders[f], key=lambda t: (rank(t) or 0, t))
            back = [t for t in targets if (rank(t) or 0) >= (rank(f) or 0)]
            up += len(back)
            print(f"{f} -> {', '.join(targets)}" + (f"   (back up: {', '.join(back)})" if back else ""))
        print(f"{sum(len(t) for t in folders.values())} folder edges, {up} back up")
    print(f"{len(graph)} headers checked, {bad} upward includes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
