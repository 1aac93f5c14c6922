# SPDX-License-Identifier: Apache-2.0
"""fit, predict and LinearAssociation on NumPy arrays, against closed-form
least squares (np.linalg.lstsq) and the bounds train.hpp documents, on
friendly and real data (raw units, dependent columns, K < L, weights)."""
import subprocess
import sys

import numpy as np
import pytest

import fusekit as fk


def problem(K, L, N, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((K, L))
    W = rng.random((N, L))
    return X.astype(dtype), (X @ W.T).astype(dtype), W


def gamma(n, dtype):
    u = np.finfo(dtype).eps / 2
    return n * u / (1 - n * u)


def test_recommended_fit_recovers_the_exact_weights_of_a_consistent_problem():
    X, Y, W_true = problem(1000, 100, 10)
    W, report = fk.fit(X, Y, fk.GdOptions.recommended())
    assert W.shape == (10, 100) and W.dtype == np.float64
    assert report.all_converged() and all(o.status == fk.FitStatus.converged for o in report.outputs)
    assert report.method == fk.GdMethod.conjugate_gradient and report.path == fk.FitPath.cpu
    # converged: ‖grad‖_D ≤ 1e-13·‖Xᵀy‖_D, so ‖W − W*‖ ≤ κ(XᵀX)·1e-13·‖W*‖ (plus rounding, 10·κ·u)
    kappa = np.linalg.cond(X) ** 2
    bound = kappa * (1e-13 + 10 * 2.0 ** -53) * np.linalg.norm(W_true)
    assert np.linalg.norm(W - W_true) <= bound


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_predict_sums_within_its_rounding_bound(dtype):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 37)).astype(dtype)
    W = rng.standard_normal((5, 37)).astype(dtype)
    Y = fk.predict(X, W)
    assert Y.shape == (300, 5) and Y.dtype == dtype
    exact = X.astype(np.longdouble) @ W.astype(np.longdouble).T
    bound = 2 * gamma(37, dtype) * (np.abs(X.astype(np.float64)) @ np.abs(W.astype(np.float64)).T)
    assert np.all(np.abs(Y - exact).astype(np.float64) <= bound)
    b = rng.standard_normal(5).astype(dtype)
    Yb = fk.predict(X, W, intercept=b)
    assert np.all(np.abs(Yb - (exact + b.astype(np.longdouble))).astype(np.float64)
                  <= bound + np.spacing(np.abs(Yb)).astype(np.float64))


def test_raw_units_and_dependent_columns_reach_the_least_squares_fit():
    rng = np.random.default_rng(2)
    K, L = 500, 8
    X = rng.random((K, L)) * np.array([1e-3, 1, 10, 1e3, 1e5, 1, 1, 1])
    X[:, 6] = 2 * X[:, 1] - X[:, 2] / 10  # a dependent column
    X[:, 7] = 3.0                          # a constant one
    Y = X @ rng.standard_normal((2, L)).T + rng.standard_normal((K, 2)) * 1e-3
    W, report = fk.fit(X, Y, fk.GdOptions.recommended())
    best = np.linalg.lstsq(X, Y, rcond=None)[0]
    r_fk = np.linalg.norm(X @ W.T - Y)
    r_ls = np.linalg.norm(X @ best - Y)
    assert report.all_converged() or all(o.status == fk.FitStatus.stalled for o in report.outputs)
    assert r_fk <= r_ls * (1 + 1e-6)  # the optimum's residual (W itself is not unique)


def test_k_less_than_l_interpolates():
    X, Y, _ = problem(20, 50, 3, seed=3)
    W, report = fk.fit(X, Y, fk.GdOptions.recommended())
    assert np.linalg.norm(fk.predict(X, W) - Y) <= 1e-8 * np.linalg.norm(Y)


def test_a_learning_rate_too_large_diverges_and_stops():
    X, Y, _ = problem(200, 10, 2, seed=4)
    W, report = fk.fit(X, Y, fk.GdOptions(learning_rate=1e3, max_iterations=10 ** 6))
    assert all(o.status == fk.FitStatus.diverged for o in report.outputs)
    assert report.most_iterations() < 10 ** 6


def test_a_tolerance_below_float_precision_ends():
    X, Y, _ = problem(200, 10, 2, dtype=np.float32, seed=5)
    _, report = fk.fit(X, Y, fk.GdOptions(tolerance=1e-30, max_iterations=200000, stall_window=200))
    for o in report.outputs:  # it ends: at the rounding floor, or (rarely) on a gradient of exactly 0
        assert o.status in (fk.FitStatus.stalled, fk.FitStatus.max_iterations) or (
            o.status == fk.FitStatus.converged and o.grad_norm2 < 1e-30)
        assert o.iterations < 200000 or o.status == fk.FitStatus.max_iterations


def test_the_budget_is_honoured_exactly():
    X, Y, _ = problem(100, 10, 3, seed=6)
    _, report = fk.fit(X, Y, fk.GdOptions(max_iterations=5))
    assert [o.iterations for o in report.outputs] == [5, 5, 5]
    assert all(o.status == fk.FitStatus.max_iterations and o.rule == fk.StopRule.max_iterations
               for o in report.outputs)


def test_a_vector_y_gives_a_vector_of_weights():
    X, Y, W_true = problem(300, 6, 1, seed=7)
    w, report = fk.fit(X, Y[:, 0], fk.GdOptions.recommended())
    assert w.shape == (6,) and report.all_converged()
    assert fk.predict(X, w).shape == (300,)
    assert np.allclose(w, W_true[0], rtol=0, atol=1e-9)


def test_linear_association_fits_weighted_data_with_intercepts_like_weighted_lstsq():
    rng = np.random.default_rng(8)
    K, L, N = 400, 5, 2
    X = rng.standard_normal((K, L)) * 3 + 10
    Y = X @ rng.standard_normal((N, L)).T + np.array([4.0, -2.0]) + rng.standard_normal((K, N)) * 0.1
    sw = rng.random(K) + 0.5
    net = fk.LinearAssociation(options=fk.GdOptions.recommended(fit_intercept=True))
    assert net.fit(X, Y, sample_weight=sw) is net
    assert net.report.all_converged() and net.weights.shape == (N, L) and net.intercepts.shape == (N,)
    A = np.hstack([X, np.ones((K, 1))]) * np.sqrt(sw)[:, None]
    ref = np.linalg.lstsq(A, Y * np.sqrt(sw)[:, None], rcond=None)[0]
    assert np.allclose(net.weights, ref[:L].T, rtol=1e-8, atol=1e-8)
    assert np.allclose(net.intercepts, ref[L], rtol=1e-8, atol=1e-8)
    Y_hat = net.predict(X)
    assert np.allclose(Y_hat, X @ net.weights.T + net.intercepts, rtol=1e-12, atol=1e-12)


def test_linear_association_checks_shapes_like_the_cpp_model():
    net = fk.LinearAssociation(4, 2)
    X, Y, _ = problem(50, 3, 2)
    with pytest.raises(ValueError, match="X has 3 columns but the model has L = 4"):
        net.fit(X, Y)
    with pytest.raises(ValueError, match="not been fitted"):
        net.predict(X)
    with pytest.raises(ValueError, match="at least 1"):
        fk.LinearAssociation(0, 1)


def test_float32_fits_converge_under_the_relative_rule():
    X, Y, W_true = problem(1000, 100, 10, dtype=np.float32, seed=9)
    W, report = fk.fit(X, Y, fk.GdOptions.recommended())
    assert W.dtype == np.float32 and report.all_converged()
    assert np.linalg.norm(fk.predict(X, W) - Y) <= 1e-4 * np.linalg.norm(Y)


def test_bad_input_is_rejected_with_fusekits_message():
    X, Y, _ = problem(50, 4, 2)
    with pytest.raises(ValueError, match="fusekit.fit"):
        fk.fit(X, Y[:40].copy())
    with pytest.raises(ValueError, match="max_iterations"):
        fk.fit(X, Y, fk.GdOptions(max_iterations=0))
    with pytest.raises(ValueError, match="learning_rate"):
        fk.fit(X, Y, fk.GdOptions(learning_rate=-1.0))
    with pytest.raises(TypeError, match="float32 or float64"):
        fk.fit(X.astype(np.float16), Y.astype(np.float16))
    with pytest.raises(TypeError, match="Y has X's type"):
        fk.fit(X, Y.astype(np.float32))
    with pytest.raises(ValueError, match=r"fusekit\.fit: X is not C-contiguous.*np\.ascontiguousarray"):
        fk.fit(np.asfortranarray(X), Y, copy=False)
    with pytest.raises(ValueError, match=r"fusekit\.fit: ridge is -1"):  # Python's name, not C++'s
        fk.fit(X, Y, fk.GdOptions(ridge=-1.0))
    with pytest.raises(ValueError, match="fit_intercept"):
        fk.fit(X, Y, fk.GdOptions(fit_intercept=True))
    with pytest.raises(TypeError, match="no field 'max_iteration'"):
        fk.GdOptions(max_iteration=3)


def test_options_mirror_gd_options():
    o = fk.GdOptions()
    assert o.method == fk.GdMethod.plain and o.learning_rate is None and o.max_iterations == 100000
    r = fk.GdOptions.recommended()
    assert r.method == fk.GdMethod.conjugate_gradient and r.preconditioner == fk.GdPreconditioner.cholesky
    assert r.relative_tolerance == 1e-13 and r.refinement_steps == 2
    assert fk.GdOptions.default_tolerance == 1e-8
    o.learning_rate = 0.5
    o.learning_rate = None
    assert o.learning_rate is None
    assert "conjugate_gradient" in repr(r)


def test_options_are_python_objects():
    seen = []
    keep = seen.append
    o = fk.GdOptions(progress=keep, max_iterations=40, progress_every=10)  # every field by keyword
    assert o.progress is keep and fk.GdOptions().progress is None
    r = fk.GdOptions.recommended(progress=keep)
    assert isinstance(r, fk.GdOptions) and r.progress is keep
    X, Y, _ = problem(80, 6, 1, seed=19)
    with pytest.warns(fk.ConvergenceWarning):
        fk.fit(X, Y, o)
    assert seen and isinstance(seen[0].text, str) and "iterations" in seen[0].text  # a property


def test_a_callback_that_refers_to_its_options_leaks_nothing_at_exit():
    code = ("import numpy as np, fusekit as fk\n"
            "o = fk.GdOptions.recommended()\n"
            "o.progress = lambda p: print(o, p.text)   # a cycle: o -> lambda -> module globals -> o\n"
            "X = np.random.default_rng(0).random((30, 3)); r = fk.fit(X, X[:, :1].copy(), o)\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr
    assert "leak" not in out.stderr, out.stderr


def test_progress_reports_and_an_exception_stops_the_fit():
    X, Y, _ = problem(300, 20, 2, seed=10)
    seen = []
    o = fk.GdOptions(max_iterations=3000, progress_every=500)
    o.progress = lambda p: seen.append((p.iteration, p.running, p.text))
    fk.fit(X, Y, o)
    assert [s[0] for s in seen[:2]] == [500, 1000] and "iterations" in seen[0][2]
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))

    class Stop(Exception):
        pass

    def stop(p):
        raise Stop(p.iteration)

    o.progress = stop
    with pytest.raises(Stop):
        fk.fit(X, Y, o)


def test_every_option_field_is_the_cpp_field_it_names():
    values = {"learning_rate": 0.25, "tolerance": 1e-7, "relative_tolerance": 1e-9, "max_iterations": 777,
              "init": fk.GdInit.uniform, "seed": 99, "method": fk.GdMethod.nesterov,
              "formulation": fk.GdFormulation.direct, "preconditioner": fk.GdPreconditioner.jacobi,
              "stall_window": 55, "progress_every": 33, "refinement_steps": 3, "ridge": 0.5, "fit_intercept": True}
    o = fk.GdOptions(**values)
    for name, v in values.items():
        assert getattr(o, name) == v, name
    # and the fit runs what they say: the plain budget, on the direct formulation
    X, Y, _ = problem(60, 5, 2, seed=11)
    _, report = fk.fit(X, Y, fk.GdOptions(max_iterations=7, formulation=fk.GdFormulation.direct,
                                          method=fk.GdMethod.nesterov))
    assert report.formulation == fk.GdFormulation.direct and report.method == fk.GdMethod.nesterov
    assert report.most_iterations() == 7


def test_enum_values_are_the_cpp_values():
    assert [s.value for s in fk.FitStatus] == [0, 1, 2, 3]  # fit_status: stable values, for code that stores them
    assert fk.FitStatus.converged.name == "converged" and fk.StopRule.rounding_floor.value == 6


def test_ridge_is_scikit_learns_ridge():
    rng = np.random.default_rng(12)
    X = rng.standard_normal((200, 6))
    Y = X @ rng.standard_normal((2, 6)).T + rng.standard_normal((200, 2))
    lam = 3.0
    W, report = fk.fit(X, Y, fk.GdOptions.recommended(ridge=lam))
    exact = np.linalg.solve(X.T @ X + lam * np.eye(6), X.T @ Y).T  # argmin ‖y − Xw‖² + λ‖w‖²
    assert report.all_converged()
    assert np.allclose(W, exact, rtol=1e-9, atol=1e-11)


def test_sample_weights_count_as_copies_of_their_rows():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((40, 3))
    Y = rng.standard_normal((40, 1))
    sw = rng.integers(0, 4, 40).astype(np.float64)
    W, _ = fk.fit(X, Y, fk.GdOptions.recommended(), sample_weight=sw)
    rows = np.repeat(np.arange(40), sw.astype(int))
    W_copies, _ = fk.fit(X[rows], Y[rows], fk.GdOptions.recommended())
    assert np.allclose(W, W_copies, rtol=1e-10, atol=1e-12)


def test_a_warm_start_at_the_answer_needs_no_iterations_and_uniform_starts_are_reproducible():
    X, Y, W_true = problem(300, 8, 2, seed=14)
    W = W_true.copy()
    _, report = fk.fit(X, Y, fk.GdOptions(init=fk.GdInit.warm_start, tolerance=1e-12), W=W)
    assert report.all_converged() and report.most_iterations() <= 1
    o = fk.GdOptions(init=fk.GdInit.uniform, seed=5, max_iterations=3)
    a, _ = fk.fit(X, Y, o)
    b, _ = fk.fit(X, Y, o)
    assert np.array_equal(a, b)
    c, _ = fk.fit(X, Y, fk.GdOptions(init=fk.GdInit.uniform, seed=6, max_iterations=3))
    assert not np.array_equal(a, c)


def test_intercepts_are_written_where_asked():
    rng = np.random.default_rng(15)
    X = rng.standard_normal((100, 3))
    Y = X @ np.array([[1.0, 2.0, 3.0]]).T + 7.0
    b = np.full(1, np.nan)
    W, report = fk.fit(X, Y, fk.GdOptions.recommended(fit_intercept=True), intercept=b)
    assert report.all_converged()
    assert np.allclose(W, [[1, 2, 3]], atol=1e-10) and np.allclose(b, [7.0], atol=1e-10)


def test_fit_without_options_is_recommended_and_the_plain_loop_one_argument_away():
    X, Y, W_true = problem(50, 4, 1, seed=16)
    W, report = fk.fit(X, Y)
    assert report.method == fk.GdMethod.conjugate_gradient and report.preconditioner == fk.GdPreconditioner.cholesky
    assert report.all_converged() and np.linalg.norm(W - W_true) <= 1e-10 * np.linalg.norm(W_true)
    with pytest.warns(fk.ConvergenceWarning, match="max_iterations"):  # the seed's loop: slow, and says so
        _, plain = fk.fit(X, Y, fk.GdOptions(max_iterations=50))
    assert plain.method == fk.GdMethod.plain and plain.preconditioner == fk.GdPreconditioner.none


def test_the_report_names_the_preconditioner_that_ran_and_why():
    X, Y, _ = problem(60, 5, 2, seed=18)
    _, direct = fk.fit(X, Y, fk.GdOptions.recommended(formulation=fk.GdFormulation.direct))
    assert direct.preconditioner == fk.GdPreconditioner.jacobi
    assert "direct formulation" in direct.preconditioner_note and direct.preconditioner_note in direct.summary()
    _, gram = fk.fit(X, Y)
    assert gram.preconditioner == fk.GdPreconditioner.cholesky and gram.preconditioner_note == ""
    assert "::" not in direct.summary() and "::" not in repr(direct)  # Python's names


def test_linear_association_warm_starts_from_its_weights():
    X, Y, _ = problem(300, 8, 2, seed=17)
    net = fk.LinearAssociation(options=fk.GdOptions(init=fk.GdInit.warm_start, tolerance=1e-16,
                                                    method=fk.GdMethod.conjugate_gradient))
    stale = np.full((2, 8), 7.0)  # memory that an uninitialized array of W's size would likely reuse
    del stale
    first = net.fit(X, Y).report.most_iterations()
    from_zeros, _ = fk.fit(X, Y, fk.GdOptions(tolerance=1e-16, method=fk.GdMethod.conjugate_gradient))
    assert np.array_equal(net.weights, from_zeros)  # a model's first warm start starts at 0
    again = net.fit(X, Y).report.most_iterations()
    assert first >= 3 and again <= 1


def test_progress_is_a_field_like_the_others():
    """GdOptions.progress reads None unset, and is set by name in GdOptions(...) and recommended(...)."""
    assert fk.GdOptions().progress is None and fk.GdOptions.recommended().progress is None
    X, Y, _ = problem(300, 20, 2, seed=10)
    seen = []
    for o in (fk.GdOptions(max_iterations=1000, progress_every=500, progress=seen.append),
              fk.GdOptions.recommended(progress=seen.append, progress_every=1)):
        assert o.progress is not None
        fk.fit(X, Y, o)
    assert len(seen) >= 2
    o = fk.GdOptions(progress=None)
    assert o.progress is None


def test_every_output_is_apart_from_every_input():
    """One rule for every call: an output sharing memory with an input or another output is a ValueError
    naming both, and nothing is written."""
    arena = np.abs(np.random.default_rng(5).standard_normal(200)) + 0.5
    X, Y, s = arena[0:18].reshape(6, 3), arena[18:30].reshape(6, 2), arena[30:36]
    W, b = arena[36:42].reshape(2, 3), arena[42:44]
    before = arena.copy()
    o = fk.GdOptions.recommended(fit_intercept=True)
    for kw in (dict(W=arena[1:7].reshape(2, 3), intercept=b),  # W over X
               dict(W=arena[31:37].reshape(2, 3), intercept=b),  # W over the weights
               dict(W=W, intercept=arena[41:43]),  # the intercepts over W
               dict(W=W, intercept=arena[29:31]),  # over Y and the weights
               dict(W=W, intercept=arena[35:37])):  # over the weights and W
        with pytest.raises(ValueError, match="overlaps"):
            fk.fit(X, Y, o, sample_weight=s, **kw)
        assert np.array_equal(arena, before)
    for out in (arena[0:12].reshape(6, 2), arena[37:49].reshape(6, 2), arena[43:55].reshape(6, 2)):
        with pytest.raises(ValueError, match="overlaps"):
            fk.predict(X, W, intercept=b, out=out)
        assert np.array_equal(arena, before)
    with pytest.raises(ValueError, match="overlaps"):
        fk.sum(arena[0:64], out=arena[63:64].reshape(()))
    with pytest.raises(ValueError, match="overlaps"):
        fk.reduce(arena[0:64], "max", out=arena[5:6].reshape(()))
    assert np.array_equal(arena, before)
    layer = np.full(64, 0.5, np.float32)
    grey = np.arange(32, dtype=np.uint8)
    with pytest.raises(ValueError, match="overlap"):
        fk.hidden_layer(grey, layer[0:32], out=layer[16:48])  # a part of an input: refused
    assert np.all(layer == 0.5)
    fk.hidden_layer(grey, layer[0:32], out=layer[0:32])  # exactly an input: in place, allowed
