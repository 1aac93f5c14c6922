#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The user's trainer, per output, the way each stack's users write it:

    for n in range(N):
        w = zeros(L)
        repeat: delta = X @ w - Y[:, n]; grad = X.T @ delta; w = w - lr * grad
        until grad @ grad < tol          # a host value every iteration

NumPy on the CPU; CuPy and PyTorch on the GPU (every array operation its own
kernel, as the user moved it). Same problems as bench/train.cu: X uniform
[0, 1), Y = X W_trueᵀ, automatic learning rate 1/λmax(XᵀX) (inside the timing,
as fusekit's), tol 1e-8 in double and 1e-4 in float, plain gradient descent
capped at 10^6 iterations. A run longer than its time budget stops early and
says so (`finished` = 0); its time per iteration still compares.

And the strongest thing a NumPy user picks instead of any loop: the least
squares solution itself, `np.linalg.lstsq(X, Y)` (LAPACK gelsd, every core
its BLAS has), at the same shapes and at (100000, 256, 32), with its error
against the float64 solution (`rel_error`, float32 rows).

    python3 train.py [--out results.json] [--cpu-only] [--budget SECONDS_PER_FIT]
"""
import sys
import time

import peer_common as pc

SHAPES = [(9, 9, 9), (1000, 100, 10)]
LSTSQ_SHAPES = SHAPES + [(100000, 256, 32)]
MAX_ITERATIONS = 1_000_000
# Per fit: the GPU loops pay a launch and a host read per operation, so they are
# cut sooner (a GPU lease is short); their time per iteration still compares.
BUDGET_SECONDS = {"cpu": 60.0, "gpu": 10.0}


def fit(xp, X, Y, tol, to_host, budget):
    """The loop above in array library xp; returns (seconds, iterations per output, finished)."""
    t0 = time.perf_counter()
    lam = float(to_host(xp.linalg.eigvalsh(X.T @ X)[-1]))
    lr = 1.0 / lam
    K, L = X.shape
    N = Y.shape[1]
    iterations = []
    finished = True
    for n in range(N):
        w = xp.zeros(L, dtype=X.dtype)
        y = Y[:, n]
        it = 0
        while it < MAX_ITERATIONS:
            delta = X @ w - y
            grad = X.T @ delta
            w = w - lr * grad
            it += 1
            if float(to_host(grad @ grad)) < tol:
                break
            if it % 256 == 0 and time.perf_counter() - t0 > budget:
                finished = False
                break
        iterations.append(it)
        if not finished:
            break
    return time.perf_counter() - t0, iterations, finished


def run(report, backend, stack, xp, to_host, sync, dtype_name, X, Y, tol, shape):
    sync()
    fit(xp, X[:2, :2], Y[:2, :1], tol, to_host, 1.0)  # warm-up: libraries, kernels, handles
    sync()
    seconds, iterations, finished = fit(xp, X, Y, tol, to_host, BUDGET_SECONDS[backend])
    K, L, N = shape
    total = sum(iterations)
    report.add(f"{backend}/{stack}_plain/{dtype_name}/{K}x{L}x{N}", K * L * N, seconds, None, None,
               iterations=max(iterations), outputs=N, finished=int(finished),
               us_per_iteration=seconds / total * 1e6 if total else float("nan"))


def run_lstsq(report, np, dtype_name, dtype, shape):
    K, L, N = shape
    X, Y = pc.train_problem(np, K, L, N, dtype)
    big = K * L > 1_000_000
    seconds = pc.time_it(lambda: np.linalg.lstsq(X, Y, rcond=None), repeats=3 if big else 7,
                         min_seconds=0.0 if big else 0.2, warmup=1 if big else 2)
    W = np.linalg.lstsq(X, Y, rcond=None)[0]
    rel_error = None
    if dtype != np.float64:
        X64, Y64 = pc.train_problem(np, K, L, N, np.float64)
        W64 = np.linalg.lstsq(X64, Y64, rcond=None)[0]
        rel_error = float(np.linalg.norm(W.astype(np.float64) - W64) / np.linalg.norm(W64))
    report.add(f"cpu/numpy_lstsq/{dtype_name}/{K}x{L}x{N}", K * L * N, seconds, None, rel_error, outputs=N)


def main(argv):
    args = pc.main_args(argv, lambda p: p.add_argument(
        "--budget", type=float, metavar="SECONDS", help="seconds per fit, for every stack (a short GPU lease)"))
    if args.sizes is not None:
        print("train: --sizes does not apply (the shapes are K x L x N)", file=sys.stderr)
    np = pc.optional("numpy")
    if np is None:
        return 0
    report = pc.Report("train", args.out)
    if args.budget is not None:
        BUDGET_SECONDS.update(cpu=args.budget, gpu=args.budget)
    gpu = []
    if not args.cpu_only:
        cp, torch, _ = pc.gpu_stacks()
        if cp is not None:
            gpu.append(("cupy", cp, cp.asarray, cp.asnumpy, cp.cuda.Device().synchronize))
        if torch is not None:
            class TorchXP:  # the NumPy calls the loop uses, in torch
                linalg = torch.linalg

                @staticmethod
                def zeros(n, dtype):
                    return torch.zeros(n, dtype=dtype, device="cuda")
            gpu.append(("torch", TorchXP, lambda a: torch.from_numpy(a).cuda(),
                        lambda t: t.item() if t.numel() == 1 else t.cpu(), torch.cuda.synchronize))
    for dtype_name, dtype, tol in (("f64", np.float64, 1e-8), ("f32", np.float32, 1e-4)):
        for shape in SHAPES:
            X, Y = pc.train_problem(np, *shape, dtype)
            if not args.gpu_only:
                run(report, "cpu", "numpy", np, lambda a: a, lambda: None, dtype_name, X, Y, tol, shape)
            for name, xp, to_device, to_host, sync in gpu:
                run(report, "gpu", name, xp, to_host, sync, dtype_name, to_device(X), to_device(Y), tol, shape)
        if not args.gpu_only:
            for shape in LSTSQ_SHAPES:
                run_lstsq(report, np, dtype_name, dtype, shape)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
