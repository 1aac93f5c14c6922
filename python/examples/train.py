#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The NumPy gradient-descent trainer (that CuPy made slower), and fusekit.fit.

The user's trainer, as written: per output, w ← w − lr·Xᵀ(Xw − y) until
gradᵀgrad < 1e-8, lr = 1/λmax(XᵀX), a host value read every iteration.
fusekit.fit with GdOptions() runs the same loop in C++ (the same iterates,
the same stopping rule); GdOptions.recommended() runs conjugate gradients
with a Cholesky preconditioner, the one to pick; np.linalg.lstsq is the
closed form a NumPy user would reach for. Every W against the true weights.

    python3 train.py [K L N]        # default 1000 100 10 (the seed's shape)
"""
import sys
import time

import numpy as np

import fusekit as fk
from _common import best_of, cupy_with_a_gpu, table

MAX_ITERATIONS = 1_000_000
BUDGET_SECONDS = 60.0


def users_trainer(X, Y, tol=1e-8):
    """The seed's loop; stops at BUDGET_SECONDS (then says so)."""
    t0 = time.perf_counter()
    lr = 1.0 / np.linalg.eigvalsh(X.T @ X)[-1]
    W = np.zeros((Y.shape[1], X.shape[1]))
    iterations = []
    for n in range(Y.shape[1]):
        w = np.zeros(X.shape[1])
        y = Y[:, n]
        it = 0
        while it < MAX_ITERATIONS:
            grad = X.T @ (X @ w - y)
            w = w - lr * grad
            it += 1
            if grad @ grad < tol:
                break
            if it % 1024 == 0 and time.perf_counter() - t0 > BUDGET_SECONDS:
                break
        W[n] = w
        iterations.append(it)
    return W, iterations, time.perf_counter() - t0


def main(K, L, N):
    rng = np.random.default_rng(0)
    X = rng.random((K, L))
    W_true = rng.random((N, L))
    Y = X @ W_true.T

    def note(W, extra=""):
        return f"max |W - W_true| = {np.max(np.abs(W - W_true)):.1e}{extra}"

    W_user, its, seconds = users_trainer(X, Y)
    rows = [("user's NumPy loop", seconds, note(W_user, f", {sum(its):,} iterations"))]
    plain = fk.GdOptions()
    W, r = fk.fit(X, Y, plain)
    rows.append(("fusekit.fit, GdOptions() (the same loop)", best_of(lambda: fk.fit(X, Y, plain), 3),
                 note(W, f", {sum(o.iterations for o in r.outputs):,} iterations, {r.outputs[0].status.name}")))
    best = fk.GdOptions.recommended()
    W, r = fk.fit(X, Y, best)
    rows.append(("fusekit.fit, GdOptions.recommended()", best_of(lambda: fk.fit(X, Y, best)),
                 note(W, f", all converged: {r.all_converged()}")))
    rows.append(("np.linalg.lstsq", best_of(lambda: np.linalg.lstsq(X, Y, rcond=None)),
                 note(np.linalg.lstsq(X, Y, rcond=None)[0].T)))
    table(f"fit of X ({K} x {L}) to Y ({K} x {N}) (CPU)", rows, rows[0][0])
    if seconds > BUDGET_SECONDS:
        print(f"  (the NumPy loop stopped at its {BUDGET_SECONDS:.0f} s budget)")
    gpu_rows(X, Y, note)


def gpu_rows(X, Y, note):
    """On a GPU: the user's loop moved to CuPy (every operation a kernel and a
    host read per iteration), against fusekit.fit on CuPy arrays."""
    cupy = cupy_with_a_gpu()
    if cupy is None:
        return
    dX, dY = cupy.asarray(X), cupy.asarray(Y)
    sync = cupy.cuda.get_current_stream().synchronize
    t0 = time.perf_counter()
    lr = 1.0 / float(cupy.linalg.eigvalsh(dX.T @ dX)[-1])
    w = cupy.zeros(X.shape[1])
    it = 0
    while it < 20000:  # output 0 only, capped: its time per iteration is the point
        grad = dX.T @ (dX @ w - dY[:, 0])
        w = w - lr * grad
        it += 1
        if float(grad @ grad) < 1e-8:
            break
    per_iteration = (time.perf_counter() - t0) / it
    rows = [(f"user's loop on CuPy ({it} iterations of output 0)", per_iteration * it, f"{per_iteration * 1e6:.0f} µs per iteration")]
    for name, o in (("GdOptions()", fk.GdOptions()), ("GdOptions.recommended()", fk.GdOptions.recommended())):
        W, r = fk.fit(dX, dY, o)
        rows.append((f"fusekit.fit on CuPy, {name}", best_of(lambda: fk.fit(dX, dY, o), 3, sync=sync),
                     note(cupy.asnumpy(W), f", {r.path.name}")))
    table("fit (GPU)", rows, rows[0][0])


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:4]] if len(sys.argv) > 3 else (1000, 100, 10))
