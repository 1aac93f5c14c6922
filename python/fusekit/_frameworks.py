# SPDX-License-Identifier: Apache-2.0
"""The array frameworks fusekit takes (NumPy, CuPy, PyTorch): how to make an
output array in the input's framework and on its device, what an input's
default accumulator is, the current CUDA stream, and how a scalar result
comes back. Only NumPy is imported eagerly; CuPy and PyTorch are imported
when one of their arrays arrives. Element types stay the framework's own
objects (a NumPy dtype's .name costs microseconds).
"""
from __future__ import annotations

import numpy as np

# The accumulator of a sum, by the input's NumPy type character: float for
# float32 and float16, double for double, 64-bit integers for integers.
_NUMPY_ACCUMULATOR = {c: np.dtype(a) for a, cs in (("f", "fe"), ("d", "d"), ("q", "bhilq"), ("Q", "BHILQ"))
                      for c in cs}
_ACCUMULATOR_NAME = {"float32": "float32", "float16": "float32", "bfloat16": "float32", "float64": "float64",
                     "int8": "int64", "int16": "int64", "int32": "int64", "int64": "int64",
                     "uint8": "uint64", "uint16": "uint64", "uint32": "uint64", "uint64": "uint64"}


def _numpy_dtype(spec):
    """A NumPy dtype from a dtype-like, a name or a torch dtype ("bfloat16": ml_dtypes')."""
    if isinstance(spec, np.dtype):
        return spec
    text = str(spec)
    if text.startswith("torch."):
        spec = text = text[6:]
    if text == "bfloat16":
        import ml_dtypes  # NumPy's bfloat16 (pip install ml_dtypes)
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(spec)


class _NumPy:
    @staticmethod
    def dtype(x):
        return x.dtype

    @staticmethod
    def floating(d) -> bool:
        return d.kind == "f"

    @staticmethod
    def native(spec):
        return _numpy_dtype(spec)

    @staticmethod
    def accumulator(d):
        return _NUMPY_ACCUMULATOR.get(d.char, np.dtype(np.float32))

    @staticmethod
    def empty(shape, d, like):
        return np.empty(shape, d)

    @staticmethod
    def zeros(shape, d, like):
        return np.zeros(shape, d)

    @staticmethod
    def stream(x) -> int:
        return 0

    @staticmethod
    def scalar(out):
        return out[()]  # a NumPy scalar, as np.sum gives

    @staticmethod
    def c_contiguous(x) -> bool:
        return x.flags.c_contiguous

    @staticmethod
    def contiguous(x):
        return np.ascontiguousarray(x)

    @staticmethod
    def writable(x) -> bool:
        return x.flags.writeable

    @staticmethod
    def full(shape, value, d, like):
        return np.full(shape, value, d)


class _CuPy(_NumPy):
    def __init__(self):
        import cupy
        self.cupy = cupy

    def empty(self, shape, d, like):
        with like.device:
            return self.cupy.empty(shape, d)

    def zeros(self, shape, d, like):
        with like.device:
            return self.cupy.zeros(shape, d)

    def stream(self, x) -> int:
        with x.device:
            return self.cupy.cuda.get_current_stream().ptr

    def contiguous(self, x):
        with x.device:
            return self.cupy.ascontiguousarray(x)

    @staticmethod
    def writable(x) -> bool:
        return True

    def full(self, shape, value, d, like):
        with like.device:
            return self.cupy.full(shape, value, d)

    @staticmethod
    def scalar(out):
        return out  # a 0-d device array: reading it would synchronize


class _Torch:
    def __init__(self):
        import torch
        self.torch = torch

    @staticmethod
    def dtype(x):
        return x.dtype

    @staticmethod
    def floating(d) -> bool:
        return d.is_floating_point

    def native(self, spec):
        if isinstance(spec, self.torch.dtype):
            return spec
        return getattr(self.torch, _numpy_dtype(spec).name if str(spec) != "bfloat16" else "bfloat16")

    def accumulator(self, d):
        return getattr(self.torch, _ACCUMULATOR_NAME.get(str(d)[6:], "float32"))

    def empty(self, shape, d, like):
        return self.torch.empty(shape, dtype=d, device=like.device)

    def zeros(self, shape, d, like):
        return self.torch.zeros(shape, dtype=d, device=like.device)

    def stream(self, x) -> int:
        return self.torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else 0

    @staticmethod
    def c_contiguous(x) -> bool:
        return x.is_contiguous()

    @staticmethod
    def contiguous(x):
        return x.contiguous()

    @staticmethod
    def writable(x) -> bool:
        return True

    def full(self, shape, value, d, like):
        return self.torch.full(shape, value, dtype=d, device=like.device)

    @staticmethod
    def scalar(out):
        return out  # a 0-d tensor, as torch.sum gives


_known = {np.ndarray: _NumPy()}


def framework_of(x, function: str = "", name: str = ""):
    """The framework of array `x`, or TypeError for anything else (naming
    `function` and the argument `name` when given)."""
    f = _known.get(type(x))
    if f is not None:
        return f
    module = type(x).__module__.split(".", 1)[0]
    if module == "cupy":
        f = _CuPy()
    elif module == "torch":
        f = _Torch()
    elif isinstance(x, np.ndarray):
        f = _known[np.ndarray]
    else:
        where = f"fusekit.{function}: {name} is a {type(x).__name__}; " if function else ""
        raise TypeError(f"{where}fusekit takes NumPy arrays, CuPy arrays and PyTorch tensors, not "
                        f"{type(x).__name__}: convert it first (np.asarray(x))")
    _known[type(x)] = f
    return f
