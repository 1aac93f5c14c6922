# SPDX-License-Identifier: Apache-2.0
# fusekit.linear_model.Ridge(alpha=1).fit against scikit-learn's Ridge(alpha=1).fit on targets.py's 1000 x 100 x 10
# problem, in one process, alternating: 3 rounds of 200 single calls each; min, quartile and median in ms. Run from
# the repository root (OPENBLAS_NUM_THREADS=1 for scikit-learn on one thread).
import sys
import time

import numpy as np

sys.path.insert(0, "python/benchmarks")
import targets  # noqa: E402
from fusekit.linear_model import Ridge  # noqa: E402
from sklearn.linear_model import Ridge as SkRidge  # noqa: E402

X, Y = targets.ridge_problem(1000, 100, 10)


def spread(f, n=200):
    v = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        v.append(time.perf_counter() - t0)
    v = np.array(v) * 1e3
    return f"min {v.min():.3f} q1 {np.percentile(v, 25):.3f} median {np.median(v):.3f}"


for r in range(3):
    print(f"round {r}: fusekit {spread(lambda: Ridge(alpha=1.0).fit(X, Y))} | "
          f"scikit-learn {spread(lambda: SkRidge(alpha=1.0).fit(X, Y))}")
