# SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the package's tests: references in long double, ulp
distances, and the optional frameworks (CuPy and PyTorch tests skip where
they or a GPU are missing)."""
import os

import numpy as np
import pytest

import fusekit as fk

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def ulp(ref, dtype):
    """The spacing of `dtype` at |ref| (the larger of ref's binade and the next)."""
    a = np.abs(np.asarray(ref, np.float64)).astype(dtype)
    return np.maximum(np.spacing(a), np.spacing(np.nextafter(a, np.asarray(np.inf, dtype)))).astype(np.float64)


def layer_reference(grey, w, scale=255.0):
    """tanh((grey / scale) · w) in long double, from the stored values."""
    g = np.asarray(grey).astype(np.longdouble)
    x = np.asarray(w).astype(np.float64).astype(np.longdouble)
    return np.tanh(g / np.longdouble(scale) * x)


def torch_or_skip(cuda=False):
    torch = pytest.importorskip("torch")
    if cuda and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    if cuda and not fk.has_cuda:
        pytest.skip("this build of fusekit has no GPU backend")
    return torch


def cupy_or_skip():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception:  # no driver
        pytest.skip("no CUDA device")
    if not fk.has_cuda:
        pytest.skip("this build of fusekit has no GPU backend")
    return cupy
