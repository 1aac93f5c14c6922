#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Planted one-line bugs in the Python package's own layer (python/fusekit/*.py),
each against the package's pytest suite: a mutant is killed when a test fails.
Each runs on a copy of the installed package (its compiled module included),
put first on PYTHONPATH, so the installation itself is never changed. The
compiled calls are the C++ library's, which scripts/check/mutation.py covers.

    python3 scripts/check/mutation_python.py [--python PATH]     (an interpreter with fusekit installed)

Prints one line per mutant and the score (killed / planted)."""
import argparse, os, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (file under python/fusekit, the text, its replacement)
MUTANTS = [
    ("__init__.py", "return _layer(\"hidden_layer_unfused\", grey, w, out, scale, False, copy)",
     "return _layer(\"hidden_layer_unfused\", grey, w, out, scale, True, copy)"),
    ("__init__.py", "_run(function, _core.hidden_layer, grey, w, out, scale, fused, f.stream(w))",
     "_run(function, _core.hidden_layer, grey, w, out, 255.0, fused, f.stream(w))"),
    ("__init__.py", 'self.scale = next((s.scale for s in stages if s.name == "normalize"), 1.0)',
     "self.scale = 255.0"),
    ("__init__.py", "if not stages or order != sorted(set(order)):", "if not stages:"),
    ("__init__.py", "return f.accumulator(f.dtype(x)) if dtype is None else f.native(dtype)",
     "return f.accumulator(f.dtype(x))"),
    ("__init__.py", '_OPS = {"sum": 0, "min": 1, "max": 2}', '_OPS = {"sum": 0, "min": 2, "max": 1}'),
    ("__init__.py", 'return _reduce("sum", x, 0, None, algorithm, dtype, out, axis, copy)',
     'return _reduce("sum", x, 0, None, "deterministic", dtype, out, axis, copy)'),
    ("__init__.py", "    options = GdOptions.recommended() if options is None else options\n    if W is None:",
     "    options = GdOptions() if options is None else options\n    if W is None:"),
    ("__init__.py", "return (W.reshape(-1) if vector and len(W.shape) == 2 else W), report", "return W, report"),
    ("__init__.py", '_run("predict", _core.predict, X, W2, intercept, out2, f.stream(X))',
     '_run("predict", _core.predict, X, W2, None, out2, f.stream(X))'),
    ("__init__.py", "return predict(X, self.weights, self.intercepts, out=out)",
     "return predict(X, self.weights, None, out=out)"),
    ("__init__.py", "W[...] = self.weights", "pass"),
    ("__init__.py", "W = f.zeros((n, X.shape[1] if len(X.shape) == 2 else 1), dtype, X)",
     "W = f.empty((n, X.shape[1] if len(X.shape) == 2 else 1), dtype, X)"),
    ("__init__.py", '_fit("LinearAssociation.fit", X, Y2, self.options, W, sample_weight, b, True, 2)',
     '_fit("LinearAssociation.fit", X, Y2, self.options, W, None, b, True, 2)'),
    ("_frameworks.py", '(("f", "fe"), ("d", "d")', '(("f", "f"), ("d", "de")'),
    ("_frameworks.py", "return out[()]  # a NumPy scalar", "return float(out[()])  # a NumPy scalar"),
    # NumPy's habits, messages, warnings
    ("__init__.py", "return f.contiguous(x) if copy and not f.c_contiguous(x) else x",
     "return f.contiguous(x) if not f.c_contiguous(x) else x"),
    ("__init__.py", "    if not g.writable(out):", "    if False:"),
    ("__init__.py", "fg.native(w.dtype) if isinstance(w, np.floating) else fg.native(\"float32\"))",
     "fg.native(\"float32\"))"),
    ("__init__.py", "d = fg.dtype(out) if out is not None else (", "d = fg.dtype(grey) if False else ("),
    ("__init__.py", "sorted(a % n for a in given) == list(range(n))", "len(given) == n"),
    ("__init__.py", "    if not report.all_converged():\n        warnings.warn",
     "    if not report.outputs[0].status == FitStatus.converged:\n        warnings.warn"),
    ("__init__.py", 'raise type(e)(f"fusekit.{function}: {text}") from None', "raise"),
    ("__init__.py", "Y = _c_order(_framework_of(Y, function, \"Y\"), Y, copy)", "pass"),
    # the sums per row and per segment
    ("__init__.py", "return len(given) == 1 and given[0] in (1, -1)", "return len(given) == 1 and given[0] in (0, 1, -1)"),
    ("__init__.py", "    _run(function, _core.row_sums, x, out)\n    return out", "    _run(function, _core.row_sums, x, out)\n    return x"),
    ("__init__.py", "if op == 0 and init is None and _last_axis_of_a_matrix(x, axis):",
     "if init is None and _last_axis_of_a_matrix(x, axis):"),
    ("__init__.py", "out = f.empty((max(int(offsets.shape[0]) - 1, 0)", "out = f.empty((max(int(offsets.shape[0]), 0)"),
    # fusekit.linear_model
    ("linear_model.py", "copy.ridge = self._alpha()", "copy.ridge = 0.0"),
    ("linear_model.py", "copy.fit_intercept = bool(self.fit_intercept)", "copy.fit_intercept = True"),
    ("linear_model.py", "self.intercept_ = float(b[0]) if b is not None else 0.0",
     "self.intercept_ = float(b[-1]) if b is not None else 1.0"),
    ("linear_model.py", "b = self.intercept_ if len(self.coef_.shape) == 2 else f.full((1,), self.intercept_, d, X)",
     "b = self.intercept_ if len(self.coef_.shape) == 2 else None"),
    ("linear_model.py", "_, report = _fit(f\"{type(self).__name__}.fit\", X, Y, options, W, sample_weight, b, True, 2,",
     "_, report = _fit(f\"{type(self).__name__}.fit\", X, Y, options, W, None, b, True, 2,"),
    ("linear_model.py", "if isinstance(a, bool) or not isinstance(a, numbers.Real) or not np.isfinite(a) or a < 0:",
     "if isinstance(a, bool) or not isinstance(a, numbers.Real):"),
    ("linear_model.py", "tags.target_tags.multi_output = True", "tags.target_tags.multi_output = False"),
    ("linear_model.py", "sample_weight = np.broadcast_to(np.asarray(sample_weight, dtype=X.dtype), (X.shape[0],))",
     "sample_weight = None"),
    ("linear_model.py", "r2 = np.where(total > 0, 1 - residual / np.where(total > 0, total, 1),",
     "r2 = np.where(total > 0, 1 - residual / np.where(total > 0, total + 1, 1),"),
    ("linear_model.py", "state.pop(\"report_\", None)", "pass"),
    ("linear_model.py", "            del estimator.feature_names_in_", "            pass"),
    ("linear_model.py", "        estimator.n_features_in_ = X.shape[1]\n        if sample_weight is not None:\n            sample_weight = (",
     "        estimator.n_features_in_ = X.shape[0]\n        if sample_weight is not None:\n            sample_weight = ("),
    ("linear_model.py", "sample_weight = (_check_sample_weight(sample_weight, X, dtype=X.dtype) if _HAS_SKLEARN else",
     "sample_weight = (sample_weight if _HAS_SKLEARN else"),
    ("linear_model.py", "and y.dtype.kind in \"fiu\")", ")"),
]


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--python", default=sys.executable)
    args = a.parse_args()
    installed = subprocess.run([args.python, "-c", "import fusekit, os; print(os.path.dirname(fusekit.__file__))"],
                               check=True, capture_output=True, text=True).stdout.strip()
    killed = 0
    for i, (name, text, replacement) in enumerate(MUTANTS):
        source = open(os.path.join(ROOT, "python", "fusekit", name)).read()
        if source.count(text) != 1:
            print(f"stale {i}: {text[:60]!r} is not in {name} once")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "fusekit")
            shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
            for own in os.listdir(os.path.join(ROOT, "python", "fusekit")):  # the tree's Python files, then the mutant
                if own.endswith(".py"):
                    shutil.copy(os.path.join(ROOT, "python", "fusekit", own), copy)
            with open(os.path.join(copy, name), "w") as f:
                f.write(source.replace(text, replacement))
            env = dict(os.environ, PYTHONPATH=tmp, PYTHONDONTWRITEBYTECODE="1")
            r = subprocess.run([args.python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "python/tests"],
                               cwd=ROOT, env=env, capture_output=True, text=True)
        dead = r.returncode != 0
        killed += dead
        print(f"{'killed' if dead else 'SURVIVED'} {i}: {name}: {replacement[:70]!r}")
    print(f"{killed} / {len(MUTANTS)} killed")
    return 0 if killed == len(MUTANTS) else 1


if __name__ == "__main__":
    sys.exit(main())
