# SPDX-License-Identifier: Apache-2.0
"""fusekit.linear_model: scikit-learn's estimator API over the trainer.
Coefficients against the closed form of the weighted ridge problem (centred
normal equations solved by np.linalg.solve, independent of scikit-learn and
of fusekit), scikit-learn's own estimator checks where it is installed, and
the estimators without scikit-learn (a subprocess that cannot import it)."""
import copy
import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import fusekit as fk
from fusekit.linear_model import ConvergenceWarning, LinearRegression, Ridge


def closed_form(X, Y, alpha=0.0, s=None, intercept=True):
    """argmin Σ s_k ‖y_k − W x_k − b‖² + α‖W‖²: the weighted means, then the
    normal equations in columns scaled to unit norm (D), in double:
    (D Xcᵀ S Xc D + α D²) V = D Xcᵀ S Yc, Wᵀ = D V (raw units stay exact)."""
    X = np.asarray(X, np.float64)
    Y2 = np.asarray(Y, np.float64).reshape(len(X), -1)
    s = np.ones(len(X)) if s is None else np.asarray(s, np.float64)
    if intercept:
        mx, my = np.average(X, axis=0, weights=s), np.average(Y2, axis=0, weights=s)
    else:
        mx, my = np.zeros(X.shape[1]), np.zeros(Y2.shape[1])
    Xc, Yc = X - mx, Y2 - my
    d = 1 / np.maximum(np.sqrt((s[:, None] * Xc * Xc).sum(0)), np.finfo(float).tiny)
    Xs = Xc * d
    V = np.linalg.solve(Xs.T @ (s[:, None] * Xs) + alpha * np.diag(d * d), Xs.T @ (s[:, None] * Yc))
    W = (d[:, None] * V).T
    return W, my - W @ mx


def data(K=400, L=12, N=3, seed=0, raw=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((K, L)) + 0.5 * rng.standard_normal((K, 1))  # correlated columns
    if raw:
        X *= np.logspace(-3, 4, L)  # features in their own units
    Y = X @ rng.standard_normal((L, N)) + 3.0 + 0.1 * rng.standard_normal((K, N))
    return X, Y


@pytest.mark.parametrize("alpha", [0.0, 0.3, 50.0])
@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_ridge_is_the_closed_form_to_1e_10(alpha, intercept, weighted):
    X, Y = data(raw=True, seed=int(alpha) + 2 * intercept + weighted)
    s = np.random.default_rng(5).uniform(0, 3, len(X)) if weighted else None
    model = Ridge(alpha=alpha, fit_intercept=intercept).fit(X, Y, sample_weight=s)
    W, b = closed_form(X, Y, alpha, s, intercept)
    assert model.coef_.shape == (3, 12) and model.intercept_.shape == (3,)
    assert np.linalg.norm(model.coef_ - W) <= 1e-10 * np.linalg.norm(W)
    assert np.abs(model.intercept_ - b).max() <= 1e-10 * max(1.0, np.abs(b).max())
    assert model.n_features_in_ == 12 and model.n_iter_.shape == (3,)
    assert model.report_.all_converged()
    Y_hat = model.predict(X)
    assert np.abs(Y_hat - (X @ W.T + b)).max() <= 1e-9 * np.abs(Y).max()


@pytest.mark.parametrize("scale", [1e-310, 1e-200, 1e200, 1e300])
def test_extreme_weights_count_by_their_ratios(scale):
    """A weight counts as that many copies of its row: weights scaled by a
    subnormal or a huge common factor give the fit of the same weights at
    scale 1 with the ridge scaled alike (α·scale against Σ s_k r_k²), also
    with zero weights among them; LinearRegression has no ridge to scale."""
    X, Y = data(raw=True, seed=9)
    s = np.random.default_rng(6).uniform(0.5, 2.0, len(X))
    s[::7] = 0.0
    W, b = closed_form(X, Y, 0.0, s, True)
    model = LinearRegression().fit(X, Y, sample_weight=s * scale)
    assert model.report_.all_converged()
    assert np.linalg.norm(model.coef_ - W) <= 1e-10 * np.linalg.norm(W)
    assert np.abs(model.intercept_ - b).max() <= 1e-10 * max(1.0, np.abs(b).max())
    alpha = 3.0
    W, b = closed_form(X, Y, alpha, s, True)
    model = Ridge(alpha=alpha * scale).fit(X, Y, sample_weight=s * scale)
    assert np.linalg.norm(model.coef_ - W) <= 1e-10 * np.linalg.norm(W)
    assert np.abs(model.intercept_ - b).max() <= 1e-10 * max(1.0, np.abs(b).max())


def test_a_1d_y_gives_1d_coef_and_a_float_intercept_as_scikit_learn_does():
    X, Y = data(N=1)
    y = Y[:, 0]
    model = LinearRegression().fit(X, y)
    W, b = closed_form(X, y)
    assert model.coef_.shape == (12,) and isinstance(model.intercept_, float)
    assert np.linalg.norm(model.coef_ - W[0]) <= 1e-10 * np.linalg.norm(W)
    assert abs(model.intercept_ - b[0]) <= 1e-10 * abs(b[0])
    assert model.predict(X).shape == (400,)
    no_b = LinearRegression(fit_intercept=False).fit(X, y)
    assert no_b.intercept_ == 0.0
    assert np.linalg.norm(no_b.coef_ - closed_form(X, y, intercept=False)[0][0]) <= 1e-10 * np.linalg.norm(W)


def test_score_is_r2():
    X, Y = data(seed=3)
    model = Ridge(alpha=2.0).fit(X, Y)
    P = model.predict(X)
    r2 = np.mean(1 - ((Y - P) ** 2).sum(0) / ((Y - Y.mean(0)) ** 2).sum(0))
    assert model.score(X, Y) == pytest.approx(r2, rel=1e-12)


def test_float32_stays_float32_within_floats_bound():
    X, Y = data(seed=4)
    model = Ridge(alpha=1.0).fit(X.astype(np.float32), Y.astype(np.float32))
    assert model.coef_.dtype == np.float32 and model.predict(X.astype(np.float32)).dtype == np.float32
    W, _ = closed_form(X.astype(np.float32), Y.astype(np.float32), 1.0)
    # the fit runs in double on the prepared (centred) copy, then rounds to float: 1e-5 covers κ·u_float here
    assert np.linalg.norm(model.coef_ - W) <= 1e-5 * np.linalg.norm(W)


def test_an_output_that_does_not_converge_warns():
    X, Y = data(raw=True)
    with pytest.warns(ConvergenceWarning, match="max_iterations"):
        Ridge(options=fk.GdOptions(max_iterations=2)).fit(X, Y)
    Y[:, 0] = 0.0  # output 0 converges at its start (W = 0), output 1 does not: the fit still warns
    with pytest.warns(ConvergenceWarning, match="max_iterations"):
        model = Ridge(fit_intercept=False, options=fk.GdOptions(max_iterations=2)).fit(X, Y[:, :2])
    assert model.report_.outputs[0].status == fk.FitStatus.converged
    assert model.report_.outputs[1].status != fk.FitStatus.converged
    assert issubclass(ConvergenceWarning, fk.ConvergenceWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Ridge().fit(X, Y)  # the recommended fit converges: no warning


def test_options_are_the_callers_and_stay_unchanged():
    X, Y = data()
    o = fk.GdOptions.recommended(relative_tolerance=1e-12)
    model = Ridge(alpha=0.5, options=o).fit(X, Y)
    assert o.ridge == 0 and not o.fit_intercept  # the estimator's alpha and intercept go to a copy
    assert model.options is o
    with pytest.raises(TypeError, match="options is a dict"):
        Ridge(options={"ridge": 1}).fit(X, Y)
    with pytest.raises(ValueError, match="alpha is -1"):
        Ridge(alpha=-1).fit(X, Y)


def test_params_copies_and_pickles():
    model = Ridge(alpha=0.25, fit_intercept=False)
    assert model.get_params() == {"alpha": 0.25, "fit_intercept": False, "options": None}
    assert model.set_params(alpha=3.0) is model and model.alpha == 3.0
    X, Y = data()
    model.fit(X, Y)
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(again.predict(X), model.predict(X)) and not hasattr(again, "report_")
    o = fk.GdOptions.recommended(max_iterations=77)
    assert copy.deepcopy(o) == o and pickle.loads(pickle.dumps(o)).max_iterations == 77


def test_bad_input_is_refused_before_the_fit():
    X, Y = data()
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Ridge().fit(bad, Y)
    with pytest.raises(ValueError):
        Ridge().fit(X, Y[:10])
    model = Ridge().fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :5])


def test_every_form_of_the_same_data_gives_the_same_bits():
    """Plain C-order float arrays go to the fit as they are; every other form
    (Fortran order, lists, integer y, a view) is converted first. Each must
    reach the fit as the same values: the same bits, and the same checks."""
    X, Y = data(K=300, L=7, N=2, seed=3)
    Yi = np.rint(Y * 10)
    reference = Ridge(alpha=0.5).fit(X, Yi)
    padded = np.zeros((300, 9))
    padded[:, 1:8] = X
    for X2, Y2 in ((np.asfortranarray(X), Yi), (X.tolist(), Yi.tolist()), (X, Yi.astype(np.int64)),
                   (padded[:, 1:8], Yi), (X, np.asfortranarray(Yi))):
        model = Ridge(alpha=0.5).fit(X2, Y2)
        assert np.array_equal(model.coef_, reference.coef_) and np.array_equal(model.intercept_, reference.intercept_)
        assert model.n_features_in_ == 7
    y1 = Ridge().fit(X.astype(np.float32), Yi[:, 0].astype(np.float32))
    assert y1.coef_.dtype == np.float32 and y1.coef_.shape == (7,)
    for bad_y, what in ((np.where(np.arange(300) == 5, np.nan, Yi[:, 0]), "NaN"),
                        (np.full((300, 1), np.inf), "inf"), (Yi[:299], ""), (Yi.reshape(300, 2, 1), "")):
        with pytest.raises(ValueError, match=what):
            Ridge().fit(X, bad_y)
    with pytest.raises(ValueError):
        Ridge().fit(X[:0], Yi[:0])
    for odd_y in (Yi[:, 0] + 1j, np.full(300, "a", dtype=object)):  # complex, words: refused, never cast
        with pytest.raises(ValueError):
            Ridge().fit(X, odd_y)


def test_a_refit_on_an_array_forgets_the_data_frames_column_names():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("sklearn")
    X, Y = data(K=100, L=3, N=1, seed=4)
    model = Ridge().fit(pd.DataFrame(X, columns=["a", "b", "c"]), Y[:, 0])
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    model.fit(X, Y[:, 0])
    assert not hasattr(model, "feature_names_in_") and model.n_features_in_ == 3


def test_scikit_learns_estimator_checks_pass():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_estimator
    for estimator in (LinearRegression(), Ridge()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SkipTestWarning for optional frameworks (pandas)
            results = check_estimator(estimator, on_fail=None)
        failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
        assert not failed, failed
        assert len(results) >= 40


def test_the_same_coefficients_as_scikit_learn():
    linear_model = pytest.importorskip("sklearn.linear_model")
    X, Y = data(K=1000, L=100, N=10, seed=7)
    s = np.random.default_rng(8).uniform(0.5, 2, 1000)
    for ours, theirs in ((Ridge(alpha=1.0), linear_model.Ridge(alpha=1.0)),
                         (LinearRegression(), linear_model.LinearRegression())):
        ours.fit(X, Y, sample_weight=s)
        theirs.fit(X, Y, sample_weight=s)
        assert np.linalg.norm(ours.coef_ - theirs.coef_) <= 1e-10 * np.linalg.norm(theirs.coef_)
        assert np.abs(ours.intercept_ - theirs.intercept_).max() <= 1e-10 * np.abs(theirs.intercept_).max()


def test_without_scikit_learn_the_estimators_work_alone():
    code = """
import sys
sys.modules['sklearn'] = None   # as if it were not installed
import numpy as np
from fusekit.linear_model import Ridge, LinearRegression
from fusekit import ConvergenceWarning
rng = np.random.default_rng(1)
X = rng.standard_normal((200, 5)); y = X @ np.arange(1.0, 6.0) + 2.0
m = Ridge(alpha=0.5).fit(X, y)
Xc, yc = X - X.mean(0), y - y.mean()
w = np.linalg.solve(Xc.T @ Xc + 0.5 * np.eye(5), Xc.T @ yc)
assert np.linalg.norm(m.coef_ - w) <= 1e-10 * np.linalg.norm(w), m.coef_
assert abs(m.intercept_ - (y.mean() - X.mean(0) @ w)) <= 1e-10 * 2
assert m.get_params() == {'alpha': 0.5, 'fit_intercept': True, 'options': None}
assert m.set_params(alpha=1.0).alpha == 1.0
assert abs(LinearRegression().fit(X, y).score(X, y) - 1.0) <= 1e-12
noisy = y + rng.standard_normal(200)
p = LinearRegression().fit(X, noisy).predict(X)
r2 = 1 - ((noisy - p) ** 2).sum() / ((noisy - noisy.mean()) ** 2).sum()
assert abs(LinearRegression().fit(X, noisy).score(X, noisy) - r2) <= 1e-12, r2
s = rng.uniform(0.5, 2.0, 200)
mw, yw = np.average(X, axis=0, weights=s), np.average(noisy, weights=s)
Xw = (X - mw) * np.sqrt(s)[:, None]
ww = np.linalg.solve(Xw.T @ Xw + 0.5 * np.eye(5), Xw.T @ ((noisy - yw) * np.sqrt(s)))
mws = Ridge(alpha=0.5).fit(X, noisy, sample_weight=s)
assert np.linalg.norm(mws.coef_ - ww) <= 1e-10 * np.linalg.norm(ww), (mws.coef_, ww)
assert np.array_equal(Ridge(alpha=0.5).fit(np.asfortranarray(X), noisy, sample_weight=s).coef_, mws.coef_)
assert repr(m) == 'Ridge(alpha=1.0, fit_intercept=True, options=None)', repr(m)
try:
    LinearRegression().predict(X)
except ValueError as e:
    assert 'not fitted' in str(e)
else:
    raise AssertionError('an unfitted predict must raise')
try:
    m.set_params(beta=1)
except ValueError as e:
    assert 'beta' in str(e)
print('ok')
"""
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
