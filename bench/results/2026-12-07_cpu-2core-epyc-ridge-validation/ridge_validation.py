# SPDX-License-Identifier: Apache-2.0
# fusekit.linear_model.Ridge(alpha=1).fit with scikit-learn's validation of X and y (as before: `_ready` forced
# False) and without it for plain C-order float arrays (after), against scikit-learn's Ridge(alpha=1).fit, on
# targets.py's 1000 x 100 x 10 problem, in one process: 3 rounds of 200 single calls each, alternating (min, quartile
# and median in ms), then 600 triples of adjacent calls, one of each in a rotating order, and the medians of the
# ratios within a triple (adjacent calls share the machine's state, so a slow minute cancels).
# Run from the repository root (OPENBLAS_NUM_THREADS=1 for scikit-learn on one thread).
import sys
import time

import numpy as np

sys.path.insert(0, "python/benchmarks")
import targets  # noqa: E402
from fusekit import linear_model  # noqa: E402
from sklearn.linear_model import Ridge as SkRidge  # noqa: E402

X, Y = targets.ridge_problem(1000, 100, 10)
ready = linear_model._ready


def spread(f, n=200):
    v = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        v.append(time.perf_counter() - t0)
    v = np.array(v) * 1e3
    return f"min {v.min():.3f} q1 {np.percentile(v, 25):.3f} median {np.median(v):.3f}"


def validated():
    linear_model._ready = lambda X, y: False
    try:
        return linear_model.Ridge(alpha=1.0).fit(X, Y)
    finally:
        linear_model._ready = ready


assert np.array_equal(validated().coef_, linear_model.Ridge(alpha=1.0).fit(X, Y).coef_)
for r in range(3):
    print(f"round {r}: before {spread(validated)} | after {spread(lambda: linear_model.Ridge(alpha=1.0).fit(X, Y))} | "
          f"scikit-learn {spread(lambda: SkRidge(alpha=1.0).fit(X, Y))}")


def once(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


calls = (validated, lambda: linear_model.Ridge(alpha=1.0).fit(X, Y), lambda: SkRidge(alpha=1.0).fit(X, Y))
t = np.zeros((600, 3))
for i in range(600):
    for j in range(3):
        c = (i + j) % 3
        t[i, c] = once(calls[c])
med = np.median(t, axis=0) * 1e3
print(f"triples: medians before {med[0]:.3f} after {med[1]:.3f} scikit-learn {med[2]:.3f} ms; median ratio "
      f"after/scikit-learn {np.median(t[:, 1] / t[:, 2]):.3f}, after/before {np.median(t[:, 1] / t[:, 0]):.3f}, "
      f"before/scikit-learn {np.median(t[:, 0] / t[:, 2]):.3f}")
