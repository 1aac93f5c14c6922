# SPDX-License-Identifier: Apache-2.0
# Ridge(alpha=1).fit on targets.py's 1000 x 100 x 10 problem: 8 best-of-20 figures (ms) in one process. Run from the
# repository root.
import sys; sys.path.insert(0, 'python/benchmarks')
import numpy as np, timeit, fusekit as fk
import targets
from fusekit.linear_model import Ridge
X, Y = targets.ridge_problem(1000, 100, 10)
ours = Ridge(alpha=1.0).fit(X, Y)
ts = [targets.best(lambda: Ridge(alpha=1.0).fit(X, Y), 20) * 1e3 for i in range(8)]
print(" ".join(f"{t:.2f}" for t in ts))
