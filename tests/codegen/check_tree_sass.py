#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Global loads each thread of the deterministic tree's kernel has in flight,
read from its sm_90 SASS (no GPU needed), held to the floors that
include/fusekit/tuning.hpp (reduce_launch) states.

    check_tree_sass.py --nvcc NVCC --source deterministic_sum.cu --include DIR --work DIR [--arch 90]

In flight: the most global loads a thread issues, in program order, before it
first reads a register one of them writes (or branches, or waits at a
barrier). A kernel that loads a batch, adds it up and only then loads the next
batch has its batch in flight; one whose loads the compiler hoisted over the
adds has more. The tree reads a tile's 32 rows per lane (detail/reduce/tree.hpp):
elements of at most 4 bytes keep all 32 in flight, 8-byte elements 24 or more
(the register cap of 64 holds no more), and the floors below say so."""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_sass import compiled_sass  # noqa: E402

# (source in the mangled name, accumulator and op, least loads in flight, least bytes in flight)
FLOORS = [
    ("array_sourceIffEENS_4plus", "float sum of float", 32, 128),
    ("array_sourceIdfEENS_4plus", "double sum of float", 32, 128),
    ("array_sourceIliEENS_4plus", "int64 sum of int32", 32, 128),
    ("array_sourceImhEENS_4plus", "uint64 sum of uint8", 32, 32),
    ("array_sourceIddEENS_4plus", "double sum of double", 24, 192),
    ("array_sourceIllEENS_4plus", "int64 sum of int64", 24, 192),
]
WIDTHS = {".U8": 1, ".S8": 1, ".U16": 2, ".S16": 2, ".64": 8, ".128": 16}
NO_DESTINATION = ("ST", "BRA", "BAR", "EXIT", "CALL", "RET", "ISETP", "FSETP", "DSETP", "RED", "ATOM")


def loads_in_flight(code):
    """(loads, bytes): the most loads issued before the first read of one of their registers."""
    pending = {}  # register -> (load index, bytes)
    best = (0, 0)
    for index, text in enumerate(code):
        m = re.match(r"(?:@!?U?P[T\d]\s+)?(\S+)\s*(.*)", text)
        op, operands = m.group(1), m.group(2)
        registers = re.findall(r"\bR(\d+)\b", operands)
        sources = registers if op.startswith(NO_DESTINATION) else registers[1:]
        barrier = op.startswith(("BRA", "BAR", "EXIT", "CALL", "RET", "WARPSYNC"))
        if pending and (barrier or any(r in pending for r in sources)):
            loads = {at: size for at, size in pending.values()}
            best = max(best, (len(loads), sum(loads.values())))
            pending = {}
        if op.startswith("LDG"):
            size = next((v for k, v in WIDTHS.items() if k in op), 4)
            first = int(registers[0])
            for k in range(max(1, size // 4)):
                pending[str(first + k)] = (index, size)
    return best


def main():
    sass = compiled_sass("tree_sass.cubin")
    if sass is None:
        return 0
    kernels = {}
    for function in re.split(r"\n\s*Function : ", sass)[1:]:
        name = function.split("\n", 1)[0]
        if "tree_level_kernel" in name:
            kernels[name] = [m.group(1).strip() for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", function)]
    failed = 0
    for key, what, least_loads, least_bytes in FLOORS:
        name = next((n for n in kernels if key in n), None)
        if name is None:
            print("FAIL: no tree kernel for the %s (%s) in the SASS" % (what, key))
            failed += 1
            continue
        loads, size = loads_in_flight(kernels[name])
        verdict = "ok" if loads >= least_loads and size >= least_bytes else "FAIL"
        print("%s: %s: %d loads, %d bytes in flight per thread (at least %d and %d)" %
              (verdict, what, loads, size, least_loads, least_bytes))
        failed += verdict != "ok"
    print("PASS" if failed == 0 else "FAILED: %d" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
