# SPDX-License-Identifier: Apache-2.0
"""What the examples share: the best of a few runs (after one warm-up run that
compiles and faults pages in), a table with each row's speed against the
user's original, and CuPy where a GPU and fusekit's GPU backend are there."""
import time

import fusekit as fk


def cupy_with_a_gpu():
    """CuPy, where it sees a GPU and this fusekit has its GPU backend; else None."""
    try:
        import cupy
        if fk.has_cuda and cupy.cuda.runtime.getDeviceCount() >= 1:
            return cupy
    except Exception:  # no CuPy, or no driver
        pass
    return None


def best_of(f, repeats=7, sync=None):
    """Seconds of the fastest of `repeats` calls of f(), after one warm-up call."""
    f()
    if sync:
        sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        if sync:
            sync()
        times.append(time.perf_counter() - t0)
    return min(times)


def table(title, rows, baseline):
    """rows: (name, seconds, note); the speed-up is against the row named `baseline`."""
    base = next(s for name, s, _ in rows if name == baseline)
    print(f"\n{title}")
    print(f"  {'':50s} {'time':>10s} {'vs original':>12s}  result")
    for name, s, note in rows:
        print(f"  {name:50s} {s * 1e3:8.3f} ms {base / s:11.1f}x  {note}")
