#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compiles every header under include/fusekit on its own, as a user's first
`#include` would: each .hpp with the C++ compiler (-fsyntax-only), each .cuh
with nvcc (-c), a translation unit of that one include. A header that needs
another to come first fails here (the MPI headers are skipped without MPI's
include folder). Prints one line per failure and a count.

    python3 scripts/check/headers_alone.py INCLUDE_DIR --cxx g++ [--nvcc nvcc]
        [--cccl DIR] [--cuda-include DIR] [--mpi-include DIR] [--jobs N] [--only hpp|cuh]
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("include")
    a.add_argument("--cxx", default="g++")
    a.add_argument("--nvcc", default="")
    a.add_argument("--cccl", default="")
    a.add_argument("--cuda-include", default="")
    a.add_argument("--mpi-include", default="")
    a.add_argument("--jobs", type=int, default=2)
    a.add_argument("--only", choices=["hpp", "cuh"], default=None)
    args = a.parse_args()
    root = os.path.abspath(args.include)
    headers = []
    for d, _, files in os.walk(os.path.join(root, "fusekit")):
        for f in files:
            if f.endswith((".hpp", ".cuh")) and (args.only is None or f.endswith("." + args.only)):
                headers.append(os.path.relpath(os.path.join(d, f), root))
    headers.sort()
    includes = ["-I", root]
    if args.cccl:
        includes += ["-I", args.cccl]
    if args.cuda_include:
        includes += ["-isystem", args.cuda_include]
    work = tempfile.mkdtemp(prefix="fusekit-alone-")

    def compile_one(i_h):
        i, h = i_h
        needs_mpi = "mpi" in os.path.basename(h)
        if needs_mpi and not args.mpi_include:
            return h, "skipped (no MPI include folder)"
        extra = ["-isystem", args.mpi_include] if needs_mpi else []
        if h.endswith(".cuh"):
            if not args.nvcc:
                return h, "skipped (no nvcc)"
            src = os.path.join(work, "t%d.cu" % i)
            cmd = [args.nvcc, "-std=c++17", "-arch=sm_90", "-c", src, "-o", src + ".o"] + includes + extra
        else:
            src = os.path.join(work, "t%d.cpp" % i)
            cmd = [args.cxx, "-std=c++17", "-fsyntax-only", "-fopenmp", src] + includes + extra
        with open(src, "w") as f:
            f.write("#include <%s>\n" % h)
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            first = next((l for l in r.stdout.splitlines() if "error" in l), r.stdout.strip()[:300])
            return h, "FAILS ALONE: " + first
        return h, None

    failed = skipped = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for h, verdict in pool.map(compile_one, enumerate(headers)):
            if verdict is None:
                continue
            if verdict.startswith("skipped"):
                skipped += 1
                continue
            failed += 1
            print("%s: %s" % (h, verdict))
    print("%d headers compiled alone, %d skipped, %d fail" % (len(headers) - skipped, skipped, failed))
    return 1 if failed or len(headers) == skipped else 0


if __name__ == "__main__":
    sys.exit(main())
