# SPDX-License-Identifier: Apache-2.0
"""fusekit for Python: the fused hidden layer, sum reductions and the
gradient-descent trainer of the C++ library, over NumPy arrays, CuPy arrays
and PyTorch tensors, without copying them (DLPack).

    import numpy as np, fusekit as fk
    y = fk.hidden_layer(grey, w)                   # tanh((grey / 255) * w), one pass
    s = fk.sum(x)                                  # the deterministic tree: the C++ call's bits
    W, report = fk.fit(X, Y)                       # GdOptions.recommended(): CG, Cholesky
    Y_hat = fk.predict(X, W)

    from fusekit.linear_model import Ridge          # scikit-learn's estimator API
    model = Ridge(alpha=1.0).fit(X, y)

Host arrays run on the CPU backend (fusekit's threads and SIMD; see
set_num_threads), CUDA arrays on
the GPU, on the framework's current stream (CuPy's current stream,
torch.cuda.current_stream()), without synchronizing: results come back in
the input's framework. The GIL is released while C++ runs. Bad arguments
raise ValueError (sizes, devices, options) or TypeError (element types),
with a message that names the function and the argument, before anything
runs. An input that is not C-contiguous (a slice, a transpose, Fortran
order) is copied once into C order (one read and one write of it); with
copy=False it is refused instead.
"""
from __future__ import annotations

import builtins
import contextlib
import numbers
import operator
import warnings
from typing import Any, Iterator, Optional, Tuple

from typing import TYPE_CHECKING


def _load_core():
    """The module with the GPU backend where it was built and loads, else the
    CPU module, with why the GPU one is not there (fusekit.cuda_unavailable)."""
    import importlib
    try:
        return importlib.import_module("._core_cuda", __name__), ""
    except ModuleNotFoundError as e:
        if e.name != __name__ + "._core_cuda":
            why = f"the GPU module cannot load: {e}"
        else:
            why = ""  # a CPU-only build: _core says so
    except ImportError as e:  # e.g. libcublas.so.13 is not on this machine
        why = (f"the GPU module cannot load ({e}): install the CUDA toolkit's libraries it was built with, or "
               "reinstall fusekit here")
    core = importlib.import_module("._core", __name__)
    if why:
        core.set_cuda_unavailable(why)
    return core, core.cuda_unavailable()


_core, cuda_unavailable = _load_core()
if TYPE_CHECKING:
    from ._core import (FitPath, FitProgress, FitReport, FitStatus, GdFormulation, GdInit, GdMethod, GdOptions,
                        GdPreconditioner, OutputReport, StopRule)
else:  # the public enums and option types, from the module that loaded
    FitPath, FitProgress, FitReport, FitStatus = _core.FitPath, _core.FitProgress, _core.FitReport, _core.FitStatus
    GdFormulation, GdInit, GdMethod, GdOptions = _core.GdFormulation, _core.GdInit, _core.GdMethod, _core.GdOptions
    GdPreconditioner, OutputReport, StopRule = _core.GdPreconditioner, _core.OutputReport, _core.StopRule
from ._frameworks import framework_of as _framework_of

import numpy as np

__version__ = "0.1.0"

__all__ = [
    "__version__", "ConvergenceWarning", "hidden_layer", "hidden_layer_unfused", "transform", "fuse", "normalize", "weigh", "tanh", "fast_tanh",
    "COMPOSITIONS", "sum", "reduce", "segmented_sum", "ALGORITHMS", "fit", "predict", "LinearAssociation",
    "GdOptions", "GdMethod", "GdPreconditioner", "GdFormulation", "GdInit", "FitStatus", "StopRule", "FitPath",
    "FitReport", "OutputReport", "FitProgress", "has_cuda", "has_half_types", "cuda_device_count",
    "set_num_threads", "get_num_threads", "threads", "cuda_unavailable",
]

#: Whether the GPU backend is here: built (where a working nvcc was found) and
#: loaded (the CUDA libraries it links are on this machine). When False,
#: `cuda_unavailable` says why, and CUDA arrays are refused with that reason.
has_cuda: bool = _core.has_cuda
#: Whether float16 and bfloat16 are compiled in (they need the CUDA toolkit's headers).
has_half_types: bool = _core.has_half_types
cuda_device_count = _core.cuda_device_count

#: The reduction algorithms (reduce_api.hpp's table). "cub" is the earlier name of
#: C++'s ``run_to_run`` (cub::DeviceReduce on the GPU, fixed blocks in double
#: on the CPU); ``"run_to_run"`` is accepted too and is the same algorithm.
ALGORITHMS = ("deterministic", "cub", "block_atomic", "naive_atomic")


class ConvergenceWarning(UserWarning):
    """A fit returned with an output that did not converge: the message is
    FitReport.summary(), which says how each output ended and what to try.
    (fusekit.linear_model's estimators warn with a subclass that is also
    scikit-learn's ConvergenceWarning.)"""


# ------------------------------------------------------------ argument checks

def _run(function: str, call, *args):
    """call(*args), with the C++ library's ValueError and TypeError in Python's
    words: prefixed by fusekit.<function> (an exception a Python callback
    raised passes unchanged)."""
    try:
        return call(*args)
    except (ValueError, TypeError) as e:
        tb = e.__traceback__
        text = str(e)
        if tb is None or tb.tb_next is not None or text.startswith("fusekit."):
            raise
        if text.startswith("fusekit::") and ": " in text:
            text = text.split(": ", 1)[1]
        raise type(e)(f"fusekit.{function}: {text}") from None


def _c_order(f, x, copy: bool):
    """x, or its copy in C order when it is not C-contiguous (copy=False: x
    itself, which the call then refuses with the reason)."""
    return f.contiguous(x) if copy and not f.c_contiguous(x) else x


def _output(function: str, name: str, out):
    """out, checked to be an array fusekit can write."""
    g = _framework_of(out, function, name)
    if not g.writable(out):
        raise ValueError(f"fusekit.{function}: {name} is read-only: pass a writable array, or {name}=None to get a "
                         "new one")
    return out


#: GdOptions's fields: what a copy and a pickle carry.
_OPTION_FIELDS = ("learning_rate", "tolerance", "relative_tolerance", "max_iterations", "init", "seed", "method",
                  "formulation", "preconditioner", "stall_window", "progress", "progress_every",
                  "refinement_steps", "ridge", "fit_intercept")


def _options_from(fields):
    return GdOptions(**fields)


def _options_fields(o):
    return {name: getattr(o, name) for name in _OPTION_FIELDS}


# copy.copy, copy.deepcopy (the progress callback is shared, not copied) and pickle
GdOptions.__copy__ = lambda self: _options_from(_options_fields(self))
GdOptions.__deepcopy__ = lambda self, memo: _options_from(_options_fields(self))
GdOptions.__reduce__ = lambda self: (_options_from, (_options_fields(self),))
GdOptions.__eq__ = lambda self, other: (isinstance(other, GdOptions)
                                        and _options_fields(self) == _options_fields(other))
GdOptions.__hash__ = None


_cpp_summary = FitReport.summary


def _summary(report) -> str:
    """FitReport.summary() in Python's names."""
    return _cpp_summary(report).replace("fusekit::gd_options::recommended()", "fusekit.GdOptions.recommended()")


FitReport.summary = _summary
FitReport.__repr__ = lambda self: f"FitReport({_summary(self)})"


def _is_scalar(v) -> bool:
    return isinstance(v, (numbers.Number, np.generic)) and not isinstance(v, bool)


# ---------------------------------------------------------------- CPU threads

def _check_thread_count(function: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"fusekit.{function}: n is {n!r}; it must be 0 (the default) or a positive int")
    return n


def set_num_threads(n: int) -> None:
    """Sets how many threads the CPU backend uses, for the whole process (the
    calling thread included; 0: the default, which is FUSEKIT_NUM_THREADS,
    else OMP_NUM_THREADS, else the processors this process may use).

    fusekit's threads are its own: a call works on the calling thread and
    helper threads join it only if they are running, so a busy machine costs
    a call at most its one-thread time. threadpoolctl does not see them: use
    this function, or the `threads` context manager, instead."""
    _core.set_default_threads(_check_thread_count("set_num_threads", n))


def get_num_threads() -> int:
    """The number of threads the CPU backend uses now (set_num_threads)."""
    return _core.default_threads()


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """Within the block, the CPU backend uses `n` threads (0: the default);
    the previous setting comes back after it, also on an exception.

        with fk.threads(1):
            y = fk.hidden_layer(grey, w)      # on the calling thread alone

    The setting is the process's, as set_num_threads's is."""
    before = _core.default_threads_setting()
    _core.set_default_threads(_check_thread_count("threads", n))
    try:
        yield
    finally:
        _core.set_default_threads(before)


# ----------------------------------------------------------------- elementwise

def _layer(function: str, grey, w, out, scale, fused: bool, copy: bool):
    fg = _framework_of(grey, function, "grey")
    if _is_scalar(w):  # broadcast, as NumPy does: one array of grey's shape (a write of it)
        d = fg.dtype(out) if out is not None else (
            fg.native(w.dtype) if isinstance(w, np.floating) else fg.native("float32"))
        w = fg.full(grey.shape, w, d, grey)
    f = _framework_of(w, function, "w")
    grey, w = _c_order(fg, grey, copy), _c_order(f, w, copy)
    out = f.empty(w.shape, f.dtype(w), w) if out is None else _output(function, "out", out)
    _run(function, _core.hidden_layer, grey, w, out, scale, fused, f.stream(w))
    return out


def hidden_layer(grey, w, out=None, scale: float = 255.0, *, copy: bool = True):
    """out = tanh((grey / scale) * w) in one pass (fusekit::hidden_layer).

    grey: uint8 or any integer or floating type; w: float32, float64, float16
    or bfloat16, of grey's shape, or a scalar (broadcast to grey's shape:
    out's type when out is given, else a NumPy scalar's own type, else
    float32); out: w's type and shape (allocated in w's framework when None;
    it may be w itself). Within tanh_float_max_ulp + 1 ulp of the exact layer
    in float32.
    """
    return _layer("hidden_layer", grey, w, out, scale, True, copy)


def hidden_layer_unfused(grey, w, out=None, scale: float = 255.0, *, copy: bool = True):
    """The same layer as three passes (three kernels on the GPU): the shape the
    fused layer replaces, for comparison. grey: uint8 (the comparison's case;
    the package compiles no other); out must not overlap grey or w."""
    return _layer("hidden_layer_unfused", grey, w, out, scale, False, copy)


_NORMALIZE, _WEIGH, _TANH, _FAST_TANH = 1, 2, 4, 8
_STAGE_ORDER = {"normalize": 0, "weigh": 1, "tanh": 2, "fast_tanh": 2}
_STAGE_BIT = {"normalize": _NORMALIZE, "weigh": _WEIGH, "tanh": _TANH, "fast_tanh": _FAST_TANH}


class Stage:
    """One of fusekit's built-in stages; compose them with `>>` or `fuse`."""

    __slots__ = ("name", "scale")

    def __init__(self, name: str, scale: Optional[float] = None):
        self.name = name
        self.scale = scale

    def __rshift__(self, other) -> "Composition":
        return Composition((self,)) >> other

    def __repr__(self) -> str:
        return f"{self.name}({self.scale})" if self.name == "normalize" else f"{self.name}()"


class Composition:
    """A chain of stages run as one pass: one of the compiled compositions
    (`COMPOSITIONS`): normalize, then weigh, then tanh or fast_tanh, each
    optional, in that order."""

    __slots__ = ("stages", "code", "scale")

    def __init__(self, stages):
        stages = tuple(stages)
        names = [s.name for s in stages]
        order = [_STAGE_ORDER[n] for n in names]
        if not stages or order != sorted(set(order)):
            raise ValueError(
                f"fusekit.fuse: {' >> '.join(names) or 'no stage'} is not a compiled composition; "
                f"the compiled ones are {', '.join(COMPOSITIONS)} (normalize, weigh, then one activation, "
                "each at most once, in that order)")
        self.stages = stages
        self.code = builtins.sum(_STAGE_BIT[n] for n in names)
        self.scale = next((s.scale for s in stages if s.name == "normalize"), 1.0)

    @property
    def arity(self) -> int:
        """Inputs the composition takes: 2 when it weighs, else 1."""
        return 2 if self.code & _WEIGH else 1

    def __rshift__(self, other) -> "Composition":
        more = other.stages if isinstance(other, Composition) else (other,)
        return Composition(self.stages + tuple(more))

    def __call__(self, x, w=None, out=None, dtype=None):
        return transform(self, x, w, out=out, dtype=dtype)

    def __repr__(self) -> str:
        return " >> ".join(repr(s) for s in self.stages)


def normalize(scale: float = 255.0) -> Stage:
    """x / scale (fusekit::normalize): the same bits as the division."""
    return Stage("normalize", float(scale))


def weigh() -> Stage:
    """x * w (fusekit::weigh): the composition's second input."""
    return Stage("weigh")


def tanh() -> Stage:
    """tanh(x) within tanh_float_max_ulp (1.6 ulp) in float32 (fusekit::tanh_activate)."""
    return Stage("tanh")


def fast_tanh() -> Stage:
    """tanh(x) to a relative error of about 1e-3, faster (fusekit::fast_tanh_activate)."""
    return Stage("fast_tanh")


def fuse(*stages: Stage) -> Composition:
    """The stages as one pass: fuse(normalize(255), weigh(), tanh()) is the hidden layer."""
    return Composition(stages)


#: The compositions compiled into the package (each for float32, float64,
#: float16 and bfloat16 outputs; the first input uint8 or out's type).
COMPOSITIONS = tuple(
    " >> ".join(n for n, bit in (("normalize", 1), ("weigh", 2), ("tanh", 4), ("fast_tanh", 8)) if code & bit)
    for code in range(1, 16) if code & 12 != 12)


def transform(op, x, w=None, out=None, dtype=None, *, copy: bool = True):
    """out = op(x[, w]) in one pass, for a Composition or Stage `op`.

    out's type: `dtype`, else w's, else x's when floating, else float32; it
    is allocated in x's framework when None. The first input is uint8 or
    out's type; weigh's input has out's type.
    """
    op = op if isinstance(op, Composition) else Composition((op,))
    f = _framework_of(x, "transform", "x")
    x = _c_order(f, x, copy)
    if w is not None:
        w = _c_order(_framework_of(w, "transform", "w"), w, copy)
    if out is not None:
        _output("transform", "out", out)
    else:
        if dtype is not None:
            d = f.native(dtype)
        elif w is not None:
            d = f.dtype(w)
        else:
            d = f.dtype(x) if f.floating(f.dtype(x)) else f.native("float32")
        out = f.empty(x.shape, d, x)
    _run("transform", _core.transform, op.code, x, w, out, op.scale, f.stream(x))
    return out


# ------------------------------------------------------------------ reductions

_OPS = {"sum": 0, "min": 1, "max": 2}


def _whole(function: str, x, axis) -> None:
    """Refuses an axis other than all of x's."""
    if axis is None:
        return
    n = len(x.shape)
    try:
        given = [operator.index(a) for a in (axis if isinstance(axis, tuple) else (axis,))]
    except TypeError:
        given = [n]
    whole = all(-n <= a < n for a in given) and sorted(a % n for a in given) == list(range(n))
    if not whole:
        raise ValueError(f"fusekit.{function}: axis is {axis!r}; fusekit reduces all of x (axis=None, or every "
                         f"axis of its {n}) to one value, or sums each row of a 2-D x (sum with axis=1)")


def _accumulator(f, x, dtype):
    """The sum's accumulator for x: dtype when given, else the default for x's type."""
    return f.accumulator(f.dtype(x)) if dtype is None else f.native(dtype)


def _last_axis_of_a_matrix(x, axis) -> bool:
    """Whether axis asks for one sum per row of a 2-D x (1, -1 or (1,))."""
    if axis is None or len(x.shape) != 2:
        return False
    try:
        given = [operator.index(a) for a in (axis if isinstance(axis, tuple) else (axis,))]
    except TypeError:
        return False
    return len(given) == 1 and given[0] in (1, -1)


def _row_sums(function: str, x, algorithm: str, dtype, out, copy: bool):
    """One sum per row of the 2-D x: the deterministic tree over each row."""
    if algorithm != "deterministic":
        raise ValueError(f"fusekit.{function}: axis=1 sums each row by the deterministic tree; algorithm is "
                         f"{algorithm!r} (pass algorithm='deterministic', or sum all of x)")
    f = _framework_of(x, function, "x")
    x = _c_order(f, x, copy)
    if out is None:
        acc = _accumulator(f, x, dtype)
        out = f.empty((x.shape[0],), acc, x)
    else:
        _output(function, "out", out)
    _run(function, _core.row_sums, x, out)
    return out


def _reduce(function: str, x, op: int, init, algorithm: str, dtype, out, axis, copy: bool):
    if op == 0 and init is None and _last_axis_of_a_matrix(x, axis):
        return _row_sums(function, x, algorithm, dtype, out, copy)
    f = _framework_of(x, function, "x")
    _whole(function, x, axis)
    x = _c_order(f, x, copy)
    if out is None:
        acc = _accumulator(f, x, dtype)
        out = f.empty((), acc, x)
        _run(function, _core.reduce, x, out, op, init, algorithm, f.stream(x))
        return f.scalar(out)
    _run(function, _core.reduce, x, _output(function, "out", out), op, init, algorithm, f.stream(x))
    return out


def sum(x, algorithm: str = "deterministic", dtype=None, out=None, axis=None, *, copy: bool = True):
    """Σ x, by `algorithm` (ALGORITHMS; reduce_api.hpp's table gives each one's
    cost and bound), in the accumulator `dtype`: float32 for float32, float16
    and bfloat16 (or float64 on request), float64 for float64, int64 for
    signed and uint64 for unsigned integers. "deterministic" gives the same
    bits on every GPU and the CPU.

    A NumPy input gives a NumPy scalar; a CuPy or PyTorch input a 0-d array
    of its framework (on the GPU: not synchronized). `out`: one element.
    axis: None (or every axis): the sum of all of x. axis=1 (or -1) for a 2-D
    NumPy x: one sum per row, each with the bits of fk.sum(x[r]) (the
    deterministic tree; CPU only so far); `out` then has x.shape[0] elements.
    """
    return _reduce("sum", x, 0, None, algorithm, dtype, out, axis, copy)


def segmented_sum(values, offsets, dtype=None, out=None, *, copy: bool = True):
    """out[s] = Σ values[offsets[s]:offsets[s + 1]] for s < len(offsets) − 1
    (S + 1 offsets for S segments, as np.add.reduceat's starts plus the end;
    int64 or int32), each with the bits of fk.sum of that slice: the
    deterministic tree over the segment alone, on any thread count. An empty
    segment gives 0. Accumulators as `sum`'s (dtype). The offsets are checked
    before anything is written: the first ≥ 0, none decreasing, the last
    within values. NumPy arrays (the CPU) only so far.
    """
    f = _framework_of(values, "segmented_sum", "values")
    values = _c_order(f, values, copy)
    if isinstance(offsets, (list, tuple, range)):
        offsets = np.asarray(offsets, dtype=np.int64)
    g = _framework_of(offsets, "segmented_sum", "offsets")
    offsets = _c_order(g, offsets, copy)
    if out is None:
        acc = _accumulator(f, values, dtype)
        out = f.empty((max(int(offsets.shape[0]) - 1, 0) if len(offsets.shape) == 1 else 0,), acc, values)
    else:
        _output("segmented_sum", "out", out)
    _run("segmented_sum", _core.segmented_sum, values, offsets, out)
    return out


def reduce(x, op: str = "sum", init=None, algorithm: str = "deterministic", dtype=None, out=None, axis=None, *,
           copy: bool = True):
    """init ⊕ x[0] ⊕ x[1] ⊕ ... for op "sum", "min" or "max" (IEEE minimum and
    maximum: a NaN gives NaN). init: the result for an empty x (default the
    op's identity). "naive_atomic" and "block_atomic" take "sum", and "min"
    and "max" of integers only (ValueError otherwise, on every backend)."""
    if op not in _OPS:
        raise ValueError(f"fusekit.reduce: op is {op!r}; it must be 'sum', 'min' or 'max'")
    return _reduce("reduce", x, _OPS[op], init, algorithm, dtype, out, axis, copy)


# --------------------------------------------------------------------- trainer

def _as_matrix(Y):
    return (Y.reshape(-1, 1), True) if len(Y.shape) == 1 else (Y, False)


def _fit(function: str, X, Y, options, W, sample_weight, intercept, copy: bool, stacklevel: int,
         warning=ConvergenceWarning):
    f = _framework_of(X, function, "X")
    X = _c_order(f, X, copy)
    Y = _c_order(_framework_of(Y, function, "Y"), Y, copy)
    if sample_weight is not None:
        sample_weight = _c_order(_framework_of(sample_weight, function, "sample_weight"), sample_weight, copy)
    Y2, vector = _as_matrix(Y)
    options = GdOptions.recommended() if options is None else options
    if W is None:
        W = f.empty((Y2.shape[1], X.shape[1]) if len(X.shape) == 2 else (1, 1), f.dtype(X), X)
        W2 = W
    else:
        _output(function, "W", W)
        W2 = W.reshape(1, -1) if len(W.shape) == 1 else W
    if options.fit_intercept and intercept is None:
        raise ValueError(f"fusekit.{function}: options.fit_intercept writes N intercepts: pass intercept= (an array "
                         "of Y's columns' count), or use fusekit.LinearAssociation")
    if intercept is not None:
        _output(function, "intercept", intercept)
    report = _run(function, _core.fit, X, Y2, W2, options, sample_weight, intercept, f.stream(X))
    if not report.all_converged():
        warnings.warn(f"fusekit.{function}: {report.summary()}", warning, stacklevel=stacklevel + 1)
    return (W.reshape(-1) if vector and len(W.shape) == 2 else W), report


def fit(X, Y, options: Optional[GdOptions] = None, *, W=None, sample_weight=None, intercept=None, copy: bool = True
        ) -> Tuple[Any, FitReport]:
    """Trains W (N × L) so that X Wᵀ ≈ Y: returns (W, report).

    X: K × L, Y: K × N (or K values: then W has L values), float32 or float64.
    options: GdOptions.recommended() when None (conjugate gradients with the
    Cholesky preconditioner: the method for real data); GdOptions() is the
    seed's plain gradient-descent loop. W: where to write (and, with
    GdInit.warm_start, where to start). With options.fit_intercept, pass
    `intercept` (N values) to receive the intercepts, or use LinearAssociation
    or fusekit.linear_model. Only report.outputs[n].status ==
    FitStatus.converged is a success; any other end warns (ConvergenceWarning,
    with report.summary()). A fit synchronizes (it returns its report).
    """
    return _fit("fit", X, Y, options, W, sample_weight, intercept, copy, 2)


def predict(X, W, intercept=None, out=None, *, copy: bool = True):
    """Y_hat = X Wᵀ (+ intercept): K × N, each sum in l order on every backend.
    W of L values gives K values."""
    f = _framework_of(X, "predict", "X")
    X = _c_order(f, X, copy)
    W = _c_order(_framework_of(W, "predict", "W"), W, copy)
    vector = len(W.shape) == 1
    W2 = W.reshape(1, -1) if vector else W
    if out is None:
        rows = X.shape[0] if len(X.shape) == 2 else 1
        out = f.empty((rows,) if vector else (rows, W2.shape[0]), f.dtype(X), X)
    else:
        _output("predict", "out", out)
    out2 = out.reshape(-1, 1) if len(out.shape) == 1 else out
    _run("predict", _core.predict, X, W2, intercept, out2, f.stream(X))
    return out


class LinearAssociation:
    """A linear association network (fusekit::linear_association): Y ≈ X Wᵀ + b.

        net = fk.LinearAssociation()                 # GdOptions.recommended()
        net.fit(X, Y, sample_weight=None)            # returns the model
        Y_hat = net.predict(X)
        net.report.all_converged(), net.weights, net.intercepts

    inputs (L) and outputs (N) are taken from the first fit unless given.
    options.fit_intercept fits intercepts, on the CPU and the GPU.
    """

    def __init__(self, inputs: Optional[int] = None, outputs: Optional[int] = None,
                 options: Optional[GdOptions] = None):
        for name, v in (("inputs (L)", inputs), ("outputs (N)", outputs)):
            if v is not None and v < 1:
                raise ValueError(f"fusekit.LinearAssociation: {name} is {v}; it must be at least 1")
        self.inputs = inputs
        self.outputs = outputs
        self.options = GdOptions.recommended() if options is None else options
        self.weights = None
        self.intercepts = None
        self.report: Optional[FitReport] = None

    def _expect_columns(self, function: str, name: str, given: int, what: str, symbol: str, want: Optional[int]):
        if want is not None and given != want:
            raise ValueError(
                f"fusekit.LinearAssociation.{function}: {name} has {given} columns but the model has {symbol} = "
                f"{want} {what} (it was built as LinearAssociation({self.inputs}, {self.outputs}))")

    def fit(self, X, Y, sample_weight=None) -> "LinearAssociation":
        f = _framework_of(X, "LinearAssociation.fit", "X")
        Y2, _ = _as_matrix(Y)
        if len(X.shape) == 2:
            self._expect_columns("fit", "X", X.shape[1], "inputs", "L", self.inputs)
        self._expect_columns("fit", "Y", Y2.shape[1], "outputs", "N", self.outputs)
        n = Y2.shape[1]
        dtype = f.dtype(X)
        W = f.zeros((n, X.shape[1] if len(X.shape) == 2 else 1), dtype, X)  # a first warm start starts at 0
        if self.options.init == GdInit.warm_start and self.weights is not None and self.weights.shape == W.shape:
            W[...] = self.weights
        b = f.zeros((n,), dtype, X) if self.options.fit_intercept else None
        _, self.report = _fit("LinearAssociation.fit", X, Y2, self.options, W, sample_weight, b, True, 2)
        self.weights, self.intercepts = W, b
        self.inputs, self.outputs = W.shape[1], W.shape[0]
        return self

    def predict(self, X, out=None):
        if self.weights is None:
            raise ValueError("fusekit.LinearAssociation.predict: the model has not been fitted (call fit first)")
        if len(X.shape) == 2:
            self._expect_columns("predict", "X", X.shape[1], "inputs", "L", self.inputs)
        return predict(X, self.weights, self.intercepts, out=out)

    def __repr__(self) -> str:
        return f"LinearAssociation(inputs={self.inputs}, outputs={self.outputs}, options={self.options!r})"

