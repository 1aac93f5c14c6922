#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python package's figures, in one run on one machine:

  overhead   a call's time over the C++ call alone (fusekit._core.cpp_call_seconds,
             timed in C++ on the same arrays), n = 16 ... 1024, CPU
  layer      hidden_layer at 10^6 and 10^7 from NumPy arrays, against JAX's jit
             (inputs already on its device: its best case), numexpr and NumPy
  sum        2^26 float32: fusekit.sum against np.sum, and the bits of the C++ call
  rows       one sum per row of float32 matrices, 10^4 x 10^3 and 10^6 x 8:
             fusekit.sum(X, axis=1) against np.sum(X, axis=1), np.add.reduceat and
             one read of X (the whole-array sum, the faster of fusekit's and
             NumPy's), each call after a 64 MiB write that evicts X from the caches
  fit        GdOptions.recommended() against np.linalg.lstsq, (1000, 100, 10) and
             (10^6, 64, 4), float64; lstsq in a process of its own, with its BLAS's
             default threads and with one (the faster is the one to beat)
  ridge      fusekit.linear_model.Ridge against scikit-learn's Ridge (alpha 1,
             intercept), (1000, 100, 10) float64, scikit-learn in a process of its
             own with its BLAS's default threads and with one, 5 rounds alternating
             between the processes (each stack's best of all); the coefficients'
             largest difference

Each group runs in a process of its own; each time is the best of several runs
after a warm-up. Writes JSON (--out).

    python3 python/benchmarks/targets.py [--out results.json] [--only overhead,layer,sum,rows,fit,ridge]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time
import timeit

import numpy as np

import fusekit as fk
from fusekit import _core


def best(f, repeats=7, number=1):
    f()
    return min(timeit.repeat(f, repeat=repeats, number=number)) / number


def overhead(report):
    rng = np.random.default_rng(0)
    for n in (16, 256, 1024):
        grey = rng.integers(0, 256, n, dtype=np.uint8)
        w = rng.standard_normal(n).astype(np.float32)
        out = np.empty_like(w)
        acc = np.empty((), np.float32)
        X = rng.standard_normal((n // 16, 16))
        W = rng.standard_normal((4, 16))
        Y = np.empty((n // 16, 4))
        number = 20000
        cases = {
            "hidden_layer": (lambda: fk.hidden_layer(grey, w, out=out),
                             lambda: fk.hidden_layer(grey, w), ("hidden_layer", grey, w, out)),
            "sum": (lambda: fk.sum(w, out=acc), lambda: fk.sum(w), ("sum", w, w, acc)),
            "predict": (lambda: fk.predict(X, W, out=Y), lambda: fk.predict(X, W), ("predict", X, W, Y)),
        }
        for name, (with_out, fresh, cpp) in cases.items():
            t_cpp = min(_core.cpp_call_seconds(*cpp, number) for _ in range(7))
            t_out = best(with_out, number=number)
            t_new = best(fresh, number=number)
            report.append({"group": "overhead", "name": name, "n": n, "cpp_us": t_cpp * 1e6,
                           "python_out_us": t_out * 1e6, "python_us": t_new * 1e6,
                           "overhead_out_us": (t_out - t_cpp) * 1e6, "overhead_us": (t_new - t_cpp) * 1e6})


def layer(report):
    """fusekit and NumPy at every size first, then numexpr, then JAX: the peers'
    thread pools keep spinning after their calls and would slow what follows."""
    data = {}
    for n in (10 ** 6, 10 ** 7):
        rng = np.random.default_rng(1)
        data[n] = (rng.integers(0, 256, n, dtype=np.uint8), rng.standard_normal(n).astype(np.float32))
    times = {n: {} for n in data}
    for n, (grey, w) in data.items():
        out = np.empty_like(w)
        times[n]["cpp_call"] = min(_core.cpp_call_seconds("hidden_layer", grey, w, out, 1) for _ in range(8))
        times[n]["fusekit"] = best(lambda: fk.hidden_layer(grey, w))
        times[n]["fusekit_out"] = best(lambda: fk.hidden_layer(grey, w, out=out))
        times[n]["numpy"] = best(lambda: np.tanh(grey / np.float32(255) * w))
    try:
        import numexpr
        numexpr.set_num_threads(os.cpu_count() or 1)
        for n, (grey, w) in data.items():
            times[n]["numexpr"] = best(lambda: numexpr.evaluate("tanh(grey / 255.0 * w)",
                                                                local_dict={"grey": grey, "w": w}))
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp
        layer_jit = jax.jit(lambda g, w: jnp.tanh(g / jnp.float32(255) * w))
        for n, (grey, w) in data.items():
            gj, wj = jax.device_put(grey), jax.device_put(w)
            times[n]["jax_jit"] = best(lambda: layer_jit(gj, wj).block_until_ready())
            times[n]["jax_jit_from_numpy"] = best(lambda: np.asarray(layer_jit(grey, w)))
    except ImportError:
        pass
    for n, rows in times.items():
        for name, s in rows.items():
            report.append({"group": "layer", "name": name, "n": n, "ms": s * 1e3, "gb_s": n * 9 / s / 1e9})


def sums(report):
    n = 1 << 26
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    acc = np.empty((), np.float32)
    _core.cpp_call_seconds("sum", x, x, acc, 1)
    same_bits = fk.sum(x).tobytes() == acc.tobytes()
    rows = {"fusekit_deterministic": best(lambda: fk.sum(x)),
            "fusekit_cub": best(lambda: fk.sum(x, "cub")),
            "fusekit_deterministic_f64": best(lambda: fk.sum(x, dtype=np.float64)),
            "numpy_sum": best(lambda: np.sum(x)),
            "numpy_sum_f64": best(lambda: np.sum(x, dtype=np.float64))}
    for name, s in rows.items():
        report.append({"group": "sum", "name": name, "n": n, "ms": s * 1e3, "gb_s": n * 4 / s / 1e9,
                       "same_bits_as_cpp": same_bits if name == "fusekit_deterministic" else None})


def cold_best(f, repeats=7):
    """f's best time with X out of the caches before each call: a 64 MiB
    write in between (the machine's last-level cache is 32 MiB)."""
    scratch = np.empty(1 << 24, np.float32)
    times = []
    for _ in range(repeats):
        scratch.fill(1.0)
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def per_row(report):
    for K, L in ((10 ** 4, 10 ** 3), (10 ** 6, 8)):
        X = np.random.default_rng(4).random((K, L), dtype=np.float32)
        flat, starts = X.reshape(-1), np.arange(0, K * L, L)
        same_bits = all(fk.sum(X, axis=1)[r].tobytes() == np.asarray(fk.sum(X[r])).tobytes()
                        for r in range(0, K, max(1, K // 1000)))
        t = {"fusekit_rows": cold_best(lambda: fk.sum(X, axis=1)),
             "numpy_sum_axis1": cold_best(lambda: np.sum(X, axis=1)),
             "numpy_reduceat": cold_best(lambda: np.add.reduceat(flat, starts)),
             "read_once": min(cold_best(lambda: fk.sum(X)), cold_best(lambda: np.sum(X)))}
        report.append({"group": "rows", "name": f"{K}x{L}", "ms": {k: v * 1e3 for k, v in t.items()},
                       "fraction_of_read": t["read_once"] / t["fusekit_rows"],
                       "ratio_to_numpy_sum_axis1": t["numpy_sum_axis1"] / t["fusekit_rows"],
                       "ratio_to_reduceat": t["numpy_reduceat"] / t["fusekit_rows"],
                       "same_bits_as_each_rows_sum": same_bits})


def fit_problem(K, L, N):
    rng = np.random.default_rng(3)
    X = rng.random((K, L))
    W_true = rng.random((N, L))
    return X, X @ W_true.T, W_true


def lstsq_seconds(K, L, N, blas_threads, what="lstsq"):
    """lstsq's (or scikit-learn Ridge's) best time in a process of its own
    whose BLAS runs `blas_threads` threads (None: its default, every core),
    so that no thread team of another library shares the cores with it."""
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(var, None)
        if blas_threads:
            env[var] = str(blas_threads)
    out = subprocess.run([sys.executable, __file__, f"--{what}", f"{K},{L},{N}"], env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def fits(report):
    for K, L, N in ((1000, 100, 10), (10 ** 6, 64, 4)):
        X, Y, W_true = fit_problem(K, L, N)
        options = fk.GdOptions.recommended()
        W, r = fk.fit(X, Y, options)
        t_fk = best(lambda: fk.fit(X, Y, options), 20 if K < 10 ** 5 else 3)
        t_ls = {threads or "all": lstsq_seconds(K, L, N, threads) for threads in (None, 1)}
        ls = np.linalg.lstsq(X, Y, rcond=None)[0].T
        fastest = min(t_ls.values())
        report.append({"group": "fit", "name": f"{K}x{L}x{N}", "fusekit_ms": t_fk * 1e3,
                       "lstsq_ms_blas_threads": {k: v * 1e3 for k, v in t_ls.items()},
                       "ratio_to_fastest_lstsq": t_fk / fastest, "converged": r.all_converged(),
                       "iterations": r.most_iterations(),
                       "fusekit_max_error": float(np.max(np.abs(W - W_true))),
                       "lstsq_max_error": float(np.max(np.abs(ls - W_true)))})


def ridge_problem(K, L, N):
    X, Y, _ = fit_problem(K, L, N)
    return X, Y + 0.01 * np.random.default_rng(4).standard_normal(Y.shape) + 5.0


RIDGE_ROUNDS = 5


def ridges(report):
    from fusekit.linear_model import Ridge
    K, L, N = 1000, 100, 10
    X, Y = ridge_problem(K, L, N)
    ours = Ridge(alpha=1.0).fit(X, Y)
    # Rounds alternate between this process and scikit-learn's, each stack's
    # best over all of them: a noisy minute on a shared machine slows one
    # round of each, not one stack.
    t_fk, t_sk = float("inf"), {"all": float("inf"), 1: float("inf")}
    for _ in range(RIDGE_ROUNDS):
        t_fk = min(t_fk, best(lambda: Ridge(alpha=1.0).fit(X, Y), 20))
        for threads in (None, 1):
            t_sk[threads or "all"] = min(t_sk[threads or "all"], lstsq_seconds(K, L, N, threads, "sklearn"))
    from sklearn.linear_model import Ridge as SkRidge
    theirs = SkRidge(alpha=1.0).fit(X, Y)
    report.append({"group": "ridge", "name": f"{K}x{L}x{N}", "rounds": RIDGE_ROUNDS, "fusekit_ms": t_fk * 1e3,
                   "sklearn_ms_blas_threads": {k: v * 1e3 for k, v in t_sk.items()},
                   "ratio_to_fastest_sklearn": t_fk / min(t_sk.values()), "converged": ours.report_.all_converged(),
                   "coef_max_relative_difference": float(np.max(np.abs(ours.coef_ - theirs.coef_)) /
                                                         np.max(np.abs(theirs.coef_))),
                   "intercept_max_difference": float(np.max(np.abs(ours.intercept_ - theirs.intercept_)))})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--only", default="overhead,layer,sum,rows,fit,ridge")
    parser.add_argument("--group", help=argparse.SUPPRESS)  # run one group here
    parser.add_argument("--lstsq", help=argparse.SUPPRESS)  # K,L,N: time lstsq alone (lstsq_seconds)
    parser.add_argument("--sklearn", help=argparse.SUPPRESS)  # K,L,N: time scikit-learn's Ridge alone
    args = parser.parse_args()
    if args.sklearn:
        from sklearn.linear_model import Ridge as SkRidge
        X, Y = ridge_problem(*(int(v) for v in args.sklearn.split(",")))
        print(best(lambda: SkRidge(alpha=1.0).fit(X, Y), 20))
        return
    if args.lstsq:
        X, Y, _ = fit_problem(*(int(v) for v in args.lstsq.split(",")))
        print(best(lambda: np.linalg.lstsq(X, Y, rcond=None), 7 if X.shape[0] < 10 ** 5 else 3))
        return
    groups = {"overhead": overhead, "layer": layer, "sum": sums, "rows": per_row, "fit": fits, "ridge": ridges}
    if args.group:  # one group, in this process: its rows as JSON lines
        rows = []
        groups[args.group](rows)
        for row in rows:
            print(json.dumps(row))
        return
    # Each group in a process of its own: JAX's and OpenBLAS's thread pools,
    # still spinning after their calls, would take the cores from the next group.
    report = []
    for g in args.only.split(","):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, __file__, "--group", g], check=True, capture_output=True,
                             text=True).stdout
        report += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        print(f"{g}: {time.perf_counter() - t0:.1f} s")
    for row in report:
        print(json.dumps(row))
    if args.out:
        meta = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                "numpy": np.__version__, "python": platform.python_version(), "has_cuda": fk.has_cuda}
        with open(args.out, "w") as f:
            json.dump({"context": meta, "rows": report}, f, indent=1)


if __name__ == "__main__":
    main()
