#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The atomicAdd sum that disagreed with np.sum in the 6th digit, and fusekit's sums.

The user's sum, as written: a Numba CUDA kernel with one atomicAdd per element
into a float32 total. Its additions happen in whatever order the atomics land,
one rounding per element, so its result drifts from the exact sum and changes
from run to run. On the CPU the same lesson runs as fusekit's "naive_atomic"
(one atomic add per element from every thread) and as the float32 loop in
element order; the deterministic tree gives the same bits on every run, on
every thread count, and on the GPU. Every result against the exact sum
(math.fsum).

    python3 sum.py [n]        # default 2^24
"""
import math
import sys

import numpy as np

import fusekit as fk
from _common import best_of, cupy_with_a_gpu, table


def main(n):
    x = np.random.default_rng(0).random(n, dtype=np.float32) * 100
    exact = math.fsum(x.astype(np.float64).tolist())

    def note(s):
        return f"{float(s):.9g}  relative error {abs(float(s) - exact) / exact:.1e}"

    rows = []
    try:
        import numba

        @numba.njit
        def one_add_per_element(v):  # the atomics' arithmetic, in element order, one thread
            total = np.float32(0)
            for e in v:
                total += e
            return total

        rows.append(("float32 total, one add per element", best_of(lambda: one_add_per_element(x)),
                     note(one_add_per_element(x))))
    except ImportError:
        pass
    rows.append(("np.sum (pairwise, one thread)", best_of(lambda: np.sum(x)), note(np.sum(x))))
    for algorithm in fk.ALGORITHMS[::-1]:
        repeats = 2 if algorithm == "naive_atomic" else 7
        rows.append((f"fusekit.sum, {algorithm}", best_of(lambda: fk.sum(x, algorithm), repeats),
                     note(fk.sum(x, algorithm))))
    rows.append(("fusekit.sum, deterministic, float64 accumulator",
                 best_of(lambda: fk.sum(x, dtype=np.float64)), note(fk.sum(x, dtype=np.float64))))
    table(f"sum of {n:,} float32 in [0, 100) (CPU); exact {exact:.9g}", rows, rows[0][0])
    runs = {a: {fk.sum(x, a).tobytes() for _ in range(5)} for a in fk.ALGORITHMS}
    print("  distinct results in 5 runs: " + ", ".join(f"{a} {len(r)}" for a, r in runs.items()))
    gpu_rows(x, exact, note)


def gpu_rows(x, exact, note):
    """On a GPU: the user's Numba CUDA atomicAdd kernel, and fusekit on CuPy
    (its deterministic sum has the CPU's bits)."""
    cupy = cupy_with_a_gpu()
    if cupy is None:
        return
    dx = cupy.asarray(x)
    sync = cupy.cuda.get_current_stream().synchronize
    rows = []
    try:
        from numba import cuda as numba_cuda

        @numba_cuda.jit
        def atomic_sum(v, out):
            i = numba_cuda.grid(1)
            while i < v.shape[0]:
                numba_cuda.atomic.add(out, 0, v[i])
                i += numba_cuda.gridsize(1)

        out = cupy.zeros(1, np.float32)

        def user():
            out[:] = 0
            atomic_sum[1024, 256](dx, out)
        rows.append(("user's Numba CUDA atomicAdd", best_of(user, sync=sync), note(out.get()[0])))
    except Exception as e:
        print(f"  (Numba CUDA unavailable: {e})")
    for algorithm in fk.ALGORITHMS[::-1]:
        rows.append((f"fusekit.sum on CuPy, {algorithm}", best_of(lambda: fk.sum(dx, algorithm), sync=sync),
                     note(fk.sum(dx, algorithm).get())))
    table(f"sum of {x.size:,} float32 (GPU)", rows, rows[0][0])
    same = fk.sum(dx).get().tobytes() == fk.sum(x).tobytes()
    print(f"  deterministic sum: GPU bits {'==' if same else '!='} CPU bits")


if __name__ == "__main__":
    main(int(float(sys.argv[1])) if len(sys.argv) > 1 else 1 << 24)
