#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fusekit's trainer on every kind of data, beside what a data scientist
picks instead: np.linalg.lstsq (LAPACK gelsd: SVD, the minimum-norm answer),
scikit-learn's LinearRegression (scipy's lstsq) and Ridge (its default
solver), with intercept and sample weights where the kind asks for them.

bench/data_kinds.cpp (data_kinds_bench) writes each kind's X, Y, exact
reference (Householder QR in long double, full-rank kinds) and fusekit's
fits to a folder; this script runs the peers on the same files and prints,
per kind, each fit's relative error ‖W − W_ref‖_F / ‖W_ref‖_F and time:
against the exact reference for the full-rank kinds, against lstsq's W (the
minimum-norm solution) for the rank-deficient ones, and, W and intercepts
together, against the weighted ridge's exact reference for the weighted kind.

    python3 data_kinds.py --binary build/bench/data_kinds_bench [--dir DIR]
                          [--out results.json] [--quick] [--repeat N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="data_kinds_bench (built by the bench preset)")
    ap.add_argument("--dir", help="where the data go (default: a temporary folder)")
    ap.add_argument("--out", help="write the table as JSON here")
    ap.add_argument("--quick", action="store_true", help="smaller shapes")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs per fit (default 3)")
    args = ap.parse_args()
    if not args.binary:
        ap.error("--binary is required")
    import numpy as np

    try:
        import sklearn.linear_model as lm
    except ImportError:
        lm = None
        print("note: scikit-learn is not installed (pip install scikit-learn): its rows are skipped")

    folder = args.dir or tempfile.mkdtemp(prefix="fusekit-data-kinds-")
    os.makedirs(folder, exist_ok=True)
    cmd = [args.binary, "--out", folder, "--repeat", str(args.repeat)] + (["--quick"] if args.quick else [])
    subprocess.run(cmd, check=True)
    with open(os.path.join(folder, "kinds.json")) as f:
        kinds = json.load(f)["kinds"]

    def load(name, *shape):
        return np.fromfile(os.path.join(folder, name), dtype="<f8").reshape(shape)

    def best_of(fn):
        best, value = float("inf"), None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            value = fn()
            best = min(best, time.perf_counter() - t0)
        return best, value

    def rel(W, ref, scale=None):
        """‖W − ref‖_F / ‖ref‖_F, with the columns scaled by `scale` (the
        columns' norms) where the plain one is not finite (weights of 10^158)."""
        with np.errstate(all="ignore"):
            den = float(np.linalg.norm(ref))
            if (np.isfinite(den) and den > 0) or scale is None:
                return float(np.linalg.norm(W - ref) / den)
        return float(np.linalg.norm((W - ref) * scale) / np.linalg.norm(ref * scale))

    rows = []
    for k in kinds:
        K, L, N, name = k["K"], k["L"], k["N"], k["name"]
        X, Y = load(name + ".X.bin", K, L), load(name + ".Y.bin", K, N)
        scale = np.linalg.norm(X, axis=0)
        weighted = any(f["config"].endswith("weights") for f in k["fits"])
        solved = {}  # label -> (seconds, W, b, config)
        if not weighted:
            t, W = best_of(lambda: np.linalg.lstsq(X, Y, rcond=None)[0].T)
            solved["np.linalg.lstsq"] = (t, W, None, None)
        elif lm is not None:
            s = load(name + ".weights.bin", K)
            for fit in k["fits"]:
                model = lm.Ridge(alpha=fit["ridge"]) if fit["ridge"] > 0 else lm.LinearRegression()
                t, m = best_of(lambda: model.fit(X, Y, sample_weight=s))
                solved["sklearn " + type(m).__name__] = (t, m.coef_.copy(), m.intercept_.copy(), fit["config"])
        for fit in k["fits"]:
            b = load(name + "." + fit["config"] + ".b.bin", N) if weighted else None
            solved["fusekit " + fit["config"]] = (fit["seconds"], load(name + "." + fit["config"] + ".W.bin", N, L), b,
                                                  fit["config"] if weighted else None)
        against = "exact" if (k["reference"] or weighted) else "lstsq"
        for label, (t, W, b, config) in solved.items():
            if weighted:
                ref = np.concatenate([load(name + "." + config + ".ref.bin", N * L), load(name + "." + config + ".bref.bin", N)])
                error = rel(np.concatenate([W.ravel(), b]), ref)
            elif k["reference"]:
                error = rel(W, load(name + ".ref.bin", N, L), scale)
            else:
                error = None if label == "np.linalg.lstsq" else rel(W, solved["np.linalg.lstsq"][1], scale)
            fit = next((f for f in k["fits"] if label == "fusekit " + f["config"]), {})
            rows.append({"kind": name, "shape": [K, L, N], "solver": label + (f" ({config})" if weighted and
                         label.startswith("sklearn") else ""), "seconds": t, "error": error, "against": against,
                         "status": fit.get("status", ""), "iterations": fit.get("iterations"),
                         "preconditioner": fit.get("preconditioner"), "formulation": fit.get("formulation")})

    print(f"\n{'kind':26} {'K x L x N':>16} {'solver':44} {'error':>9} {'vs':>7} {'seconds':>9}  status")
    for r in rows:
        err = "-" if r.get("error") is None else f"{r['error']:.1e}"
        shape = "x".join(str(v) for v in r["shape"])
        print(f"{r['kind']:26} {shape:>16} {r['solver']:44} {err:>9} {r['against']:>7} {r['seconds']:9.4f}  "
              f"{r.get('status', '')}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"rows": rows, "numpy": np.__version__,
                       "sklearn": None if lm is None else __import__("sklearn").__version__}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
