#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The hidden layer that missed its deadline, and the same layer in fusekit.

The user's layer, as written: three Numba @vectorize passes (normalize,
weigh, activate), each its own loop over memory (on a GPU: its own kernel),
tanh spelled through exp. fusekit.hidden_layer runs the three as one pass.
Both are timed in this run on the same data and compared against a float64
reference.

    python3 hidden_layer.py [n ...]        # default: 1000000 10000000
"""
import math
import sys

import numpy as np

import fusekit as fk
from _common import best_of, cupy_with_a_gpu, table


def users_layer(target):
    """The seed's three @vectorize passes (target 'parallel' on the CPU, 'cuda' on a GPU)."""
    import numba

    @numba.vectorize(["float32(uint8)"], target=target)
    def normalize(g):
        return g / numba.float32(255)

    @numba.vectorize(["float32(float32, float32)"], target=target)
    def weigh(a, w):
        return a * w

    @numba.vectorize(["float32(float32)"], target=target)
    def activate(x):
        return (math.exp(x) - math.exp(-x)) / (math.exp(x) + math.exp(-x))

    return lambda grey, w: activate(weigh(normalize(grey), w))


def error(y, grey, w):
    ref = np.tanh(grey.astype(np.float64) / 255 * w.astype(np.float64))
    return f"max |y - tanh| = {np.max(np.abs(np.asarray(y, np.float64) - ref)):.1e}"


def main(sizes):
    try:
        numba_layer = users_layer("parallel")
    except ImportError:
        numba_layer = None
    for n in sizes:
        rng = np.random.default_rng(0)
        grey = rng.integers(0, 256, n, dtype=np.uint8)
        w = rng.standard_normal(n).astype(np.float32)
        out = np.empty_like(w)
        rows = []
        if numba_layer is not None:
            rows.append(("user's Numba @vectorize, three passes", best_of(lambda: numba_layer(grey, w)),
                         error(numba_layer(grey, w), grey, w)))
        numpy_layer = lambda: np.tanh(grey / np.float32(255) * w)  # noqa: E731
        rows.append(("NumPy, np.tanh", best_of(numpy_layer), error(numpy_layer(), grey, w)))
        rows.append(("fusekit.hidden_layer", best_of(lambda: fk.hidden_layer(grey, w)),
                     error(fk.hidden_layer(grey, w), grey, w)))
        rows.append(("fusekit.hidden_layer, out= reused", best_of(lambda: fk.hidden_layer(grey, w, out=out)),
                     error(out, grey, w)))
        rows.append(("fusekit.hidden_layer_unfused (three passes)", best_of(lambda: fk.hidden_layer_unfused(grey, w)),
                     error(fk.hidden_layer_unfused(grey, w), grey, w)))
        table(f"hidden layer, n = {n:,} (CPU)", rows, rows[0][0])
        gpu_rows(grey, w)


def gpu_rows(grey, w):
    """The same on a GPU, where there is one: the user's @vectorize(target='cuda')
    chain against fusekit on CuPy arrays (fusekit synchronizes nothing: the
    timing does)."""
    cupy = cupy_with_a_gpu()
    if cupy is None:
        return
    g, x = cupy.asarray(grey), cupy.asarray(w)
    sync = cupy.cuda.get_current_stream().synchronize
    rows = []
    try:
        from numba import cuda as numba_cuda
        layer = users_layer("cuda")
        dg, dw = numba_cuda.as_cuda_array(g), numba_cuda.as_cuda_array(x)
        rows.append(("user's Numba @vectorize(target='cuda'), 3 kernels", best_of(lambda: layer(dg, dw), sync=sync),
                     error(layer(dg, dw).copy_to_host(), grey, w)))
    except Exception as e:  # no Numba CUDA: fusekit's rows only
        print(f"  (Numba CUDA unavailable: {e})")
    out = cupy.empty_like(x)
    rows.append(("fusekit.hidden_layer on CuPy arrays", best_of(lambda: fk.hidden_layer(g, x, out=out), sync=sync),
                 error(cupy.asnumpy(out), grey, w)))
    rows.append(("fusekit.hidden_layer_unfused on CuPy", best_of(lambda: fk.hidden_layer_unfused(g, x, out=out),
                                                                 sync=sync), error(cupy.asnumpy(out), grey, w)))
    table(f"hidden layer, n = {grey.size:,} (GPU)", rows, rows[0][0])


if __name__ == "__main__":
    main([int(float(a)) for a in sys.argv[1:]] or [1_000_000, 10_000_000])
