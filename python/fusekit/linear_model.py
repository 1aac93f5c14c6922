# SPDX-License-Identifier: Apache-2.0
"""scikit-learn's estimator API over fusekit's trainer: LinearRegression and
Ridge, with fit(X, y, sample_weight=None), predict, score, coef_,
intercept_, n_features_in_, get_params and set_params.

    from fusekit.linear_model import Ridge
    model = Ridge(alpha=1.0).fit(X, y)          # y: K values, or K × N
    model.coef_, model.intercept_, model.predict(X), model.score(X, y)

Both minimize Σ_k s_k ‖y_k − W x_k − b‖² + α‖W‖² (α = 0 for
LinearRegression), the intercept unpenalized: scikit-learn's objective, by
fusekit's trainer (GdOptions.recommended() unless `options` says otherwise)
rather than a direct solve. Where the design is rank-deficient the answer is
the one docs/trainer.md documents for the preconditioner, a least-squares
solution, not always lstsq's minimum-norm one.

- NumPy input (and anything np.asarray takes): checked as scikit-learn
  checks it (finite, 2-D, numeric; float32 stays float32, other types become
  float64), then fitted on the CPU backend. A C-order float32 or float64 X
  with a real y skips scikit-learn's validation (about 0.2 ms; nothing in it
  to convert): the fit itself refuses NaN and infinity, naming the element. CuPy arrays and CUDA tensors are
  fitted on the GPU as they are; coef_ and intercept_ are then arrays of
  their framework.
- An output that does not converge warns (ConvergenceWarning: scikit-learn's
  where it is installed, and fusekit.ConvergenceWarning); `report_` is the
  FitReport and `n_iter_` each output's iterations.
- scikit-learn is optional: without it the estimators work alone (their own
  get_params, set_params and score); with it they are scikit-learn
  estimators (BaseEstimator, RegressorMixin), and pass its estimator checks.
"""
from __future__ import annotations

import copy as _copy
import inspect
import numbers
from typing import Any, Dict, Optional

import numpy as np

from . import ConvergenceWarning as _FusekitConvergenceWarning
from . import GdOptions, _fit, predict as _predict
from ._frameworks import framework_of as _framework_of

try:  # scikit-learn: optional
    from sklearn.base import BaseEstimator as _BaseEstimator
    from sklearn.base import RegressorMixin as _RegressorMixin
    from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning
    from sklearn.utils.validation import _check_sample_weight, check_is_fitted

    try:
        from sklearn.utils.validation import validate_data as _validate_data  # scikit-learn ≥ 1.6
    except ImportError:  # pragma: no cover (older scikit-learn)
        def _validate_data(estimator, *args, **kwargs):
            return estimator._validate_data(*args, **kwargs)
    from sklearn.utils.validation import check_array as _check_array

    # The fit's own check finds a NaN or an infinity in X and y (before it
    # writes anything, with the element named), so the fit's validation skips
    # scikit-learn's second pass over them; predict keeps it.
    _NO_FINITE_CHECK = {("ensure_all_finite" if "ensure_all_finite" in inspect.signature(_check_array).parameters
                         else "force_all_finite"): False}
    _HAS_SKLEARN = True
except ImportError:
    _HAS_SKLEARN = False

__all__ = ["LinearRegression", "Ridge", "ConvergenceWarning"]

if _HAS_SKLEARN:
    class ConvergenceWarning(_FusekitConvergenceWarning, _SklearnConvergenceWarning):
        """An output did not converge (scikit-learn's and fusekit's ConvergenceWarning)."""

    _Bases = (_RegressorMixin, _BaseEstimator)
else:
    class ConvergenceWarning(_FusekitConvergenceWarning):  # type: ignore[no-redef]
        """An output did not converge (fusekit.ConvergenceWarning)."""

    class _Estimator:
        """get_params, set_params and score where scikit-learn is absent: the
        same contract as scikit-learn's BaseEstimator and RegressorMixin."""

        @classmethod
        def _get_param_names(cls):
            signature = inspect.signature(cls.__init__)
            return sorted(p.name for p in signature.parameters.values()
                          if p.name != "self" and p.kind != p.VAR_KEYWORD)

        def get_params(self, deep: bool = True) -> Dict[str, Any]:
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params):
            valid = self._get_param_names()
            for name, value in params.items():
                if name not in valid:
                    raise ValueError(f"Invalid parameter {name!r} for estimator {type(self).__name__}; "
                                     f"valid parameters are {valid}")
                setattr(self, name, value)
            return self

        def score(self, X, y, sample_weight=None) -> float:
            """R² of the prediction (uniform average over the outputs)."""
            y = np.asarray(y, dtype=np.float64)
            p = np.asarray(self.predict(X), dtype=np.float64).reshape(y.shape)
            w = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, np.float64)
            w2 = w.reshape((-1,) + (1,) * (y.ndim - 1))
            mean = np.average(y, axis=0, weights=w)
            residual = (w2 * (y - p) ** 2).sum(axis=0)
            total = (w2 * (y - mean) ** 2).sum(axis=0)
            r2 = np.where(total > 0, 1 - residual / np.where(total > 0, total, 1),
                          np.where(residual > 0, 0.0, 1.0))
            return float(np.mean(r2))

        def __repr__(self) -> str:
            args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
            return f"{type(self).__name__}({args})"

    _Bases = (_Estimator,)

    def check_is_fitted(estimator) -> None:  # type: ignore[no-redef]
        if not hasattr(estimator, "coef_"):
            raise ValueError(f"This {type(estimator).__name__} instance is not fitted yet: call fit first")


def _device(x) -> bool:
    """Whether x is a CuPy array or a CUDA tensor (fitted as it is)."""
    module = type(x).__module__.split(".", 1)[0]
    return module == "cupy" or (module == "torch" and x.is_cuda)


def _ready(X, y) -> bool:
    """Whether X and y are plain NumPy arrays that scikit-learn's validation
    would pass as they are: X C-contiguous float32 or float64 with a row and
    a column at least, y 1-D or 2-D with X's rows, of a real number type.
    Their values are checked by the fit itself (NaN and infinity named)."""
    return (type(X) is np.ndarray and type(y) is np.ndarray and X.ndim == 2 and X.dtype in _FIT_DTYPES
            and X.flags.c_contiguous and X.shape[0] >= 1 and X.shape[1] >= 1 and y.ndim in (1, 2)
            and y.shape[0] == X.shape[0] and (y.ndim == 1 or y.shape[1] >= 1) and y.dtype.kind in "fiu")


_FIT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _as_checked(X, y, sample_weight, estimator, reset: bool):
    """X (and y, sample_weight) as the fit takes them: C-contiguous float32 or
    float64 NumPy arrays, checked as scikit-learn checks them."""
    if reset and _ready(X, y):
        # Already what the fit takes: scikit-learn's validation would find
        # nothing to convert, and costs about 0.2 ms (a tenth of a
        # 1000 × 100 × 10 Ridge fit) in its checks for data frames.
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        estimator.n_features_in_ = X.shape[1]
        if sample_weight is not None:
            sample_weight = (_check_sample_weight(sample_weight, X, dtype=X.dtype) if _HAS_SKLEARN else
                             np.broadcast_to(np.asarray(sample_weight, dtype=X.dtype), (X.shape[0],)))
    elif _HAS_SKLEARN:
        dtype = [np.float64, np.float32]
        if y is None and not reset:
            return _validate_data(estimator, X, reset=False, dtype=dtype, order="C"), None, None
        X, y = _validate_data(estimator, X, y, dtype=dtype, order="C", multi_output=True, y_numeric=True,
                              **_NO_FINITE_CHECK)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=X.dtype)
    else:
        X = np.asarray(X)
        X = np.ascontiguousarray(X, dtype=X.dtype if X.dtype == np.float32 else np.float64)
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D array for X, got {X.ndim} dimensions: reshape it (X.reshape(-1, 1) "
                             "for one feature)")
        if not np.isfinite(X).all():
            raise ValueError("Input X contains NaN or infinity")
        if reset:
            estimator.n_features_in_ = X.shape[1]
        elif X.shape[1] != estimator.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
                             f"{estimator.n_features_in_} features as input")
        if y is None:
            return X, None, None
        y = np.asarray(y, dtype=np.float64)
        if y.shape[0] != X.shape[0] or y.ndim > 2:
            raise ValueError(f"y has shape {y.shape}; it needs one row per row of X ({X.shape[0]})")
        if not np.isfinite(y).all():
            raise ValueError("Input y contains NaN or infinity")
        if sample_weight is not None:
            sample_weight = np.broadcast_to(np.asarray(sample_weight, dtype=X.dtype), (X.shape[0],))
    y = np.ascontiguousarray(y, dtype=X.dtype)
    if sample_weight is not None:
        sample_weight = np.ascontiguousarray(sample_weight, dtype=X.dtype)
    return X, y, sample_weight


class _LinearModel(*_Bases):  # type: ignore[misc]
    """fusekit's trainer as a scikit-learn regressor (LinearRegression, Ridge)."""

    def _alpha(self) -> float:
        return 0.0

    def _options(self) -> GdOptions:
        options = GdOptions.recommended() if self.options is None else self.options
        if not isinstance(options, GdOptions):
            raise TypeError(f"{type(self).__name__}: options is a {type(options).__name__}; it must be a "
                            "fusekit.GdOptions or None (GdOptions.recommended())")
        copy = _copy.copy(options)
        copy.ridge = self._alpha()
        copy.fit_intercept = bool(self.fit_intercept)
        return copy

    def fit(self, X, y, sample_weight=None):
        """Fits coef_ and intercept_ to X (K × L) and y (K values, or K × N);
        sample_weight: K non-negative weights (None: all 1). Returns self."""
        options = self._options()
        device = _device(X)
        if device:
            f = _framework_of(X, f"{type(self).__name__}.fit", "X")
            d = f.dtype(X)
            y = y.astype(d) if f.dtype(y) != d else y
            if sample_weight is not None and f.dtype(sample_weight) != d:
                sample_weight = sample_weight.astype(d)
            self.n_features_in_ = X.shape[1]
        else:
            X, y, sample_weight = _as_checked(X, y, sample_weight, self, reset=True)
            f = _framework_of(X)
            d = X.dtype
        Y = y.reshape(-1, 1) if len(y.shape) == 1 else y
        W = f.zeros((Y.shape[1], X.shape[1]), d, X)
        b = f.zeros((Y.shape[1],), d, X) if options.fit_intercept else None
        _, report = _fit(f"{type(self).__name__}.fit", X, Y, options, W, sample_weight, b, True, 2,
                         warning=ConvergenceWarning)
        self.report_ = report
        self.n_iter_ = np.array([o.iterations for o in report.outputs], dtype=np.int64)
        if len(y.shape) == 1:
            self.coef_ = W.reshape(-1)
            self.intercept_ = float(b[0]) if b is not None else 0.0
        else:
            self.coef_ = W
            self.intercept_ = b if b is not None else f.zeros((Y.shape[1],), d, X)
        return self

    def predict(self, X):
        """X coef_ᵀ + intercept_: K values for a 1-D y, else K × N."""
        check_is_fitted(self)
        if _device(X):
            f = _framework_of(X, f"{type(self).__name__}.predict", "X")
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                                 f"{self.n_features_in_} features as input")
        else:
            X, _, _ = _as_checked(X, None, None, self, reset=False)
            f = _framework_of(X)
        W = self.coef_.reshape(1, -1) if len(self.coef_.shape) == 1 else self.coef_
        d = f.dtype(W)
        X = X.astype(d) if f.dtype(X) != d else X
        b = None
        if self.fit_intercept:
            b = self.intercept_ if len(self.coef_.shape) == 2 else f.full((1,), self.intercept_, d, X)
        Y_hat = _predict(X, W, b)
        return Y_hat.reshape(-1) if len(self.coef_.shape) == 1 else Y_hat

    def __getstate__(self):
        state = super().__getstate__() if hasattr(super(), "__getstate__") else self.__dict__.copy()
        state = dict(state)
        state.pop("report_", None)  # a FitReport does not pickle: n_iter_ does
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"multioutput": True}


class LinearRegression(_LinearModel):
    """Ordinary least squares, scikit-learn's LinearRegression, by fusekit's
    trainer: minimizes Σ_k s_k ‖y_k − W x_k − b‖².

    fit_intercept: fit b (the data are centred by their weighted means
    first). options: a fusekit.GdOptions (None: GdOptions.recommended());
    its ridge and fit_intercept are this estimator's.
    """

    def __init__(self, *, fit_intercept: bool = True, options: Optional[GdOptions] = None):
        self.fit_intercept = fit_intercept
        self.options = options


class Ridge(_LinearModel):
    """Ridge regression, scikit-learn's Ridge, by fusekit's trainer:
    minimizes Σ_k s_k ‖y_k − W x_k − b‖² + alpha·‖W‖², b unpenalized.

    alpha: a float ≥ 0. fit_intercept, options: as LinearRegression's.
    """

    def __init__(self, alpha: float = 1.0, *, fit_intercept: bool = True, options: Optional[GdOptions] = None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.options = options

    def _alpha(self) -> float:
        a = self.alpha
        if isinstance(a, bool) or not isinstance(a, numbers.Real) or not np.isfinite(a) or a < 0:
            raise ValueError(f"Ridge: alpha is {a!r}; it must be a finite float at least 0")
        return float(a)

