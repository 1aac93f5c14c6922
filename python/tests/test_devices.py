# SPDX-License-Identifier: Apache-2.0
"""The module's device handling without a GPU: arrays that DLPack labels as
CUDA memory reach the GPU dispatch, which says what is wrong (another device,
no GPU backend, no driver) before any kernel could run."""
import numpy as np
import pytest

import fusekit as fk
from fusekit import _core
from fake_dlpack import FakeDeviceArray

no_device = pytest.mark.skipif(fk.cuda_device_count() > 0, reason="a real GPU would run a kernel on host memory")


def test_arrays_on_two_devices_are_refused_before_anything_runs():
    grey = np.zeros(8, np.uint8)
    w = np.ones(8, np.float32)
    out = np.full(8, 5.0, np.float32)
    with pytest.raises(ValueError, match="w is on cuda:0 but grey is on the CPU: the arrays of one call must be on"):
        _core.hidden_layer(grey, FakeDeviceArray(w), out, 255.0, True, 0)
    with pytest.raises(ValueError, match="cuda:1 but .* cuda:0"):
        _core.hidden_layer(FakeDeviceArray(grey), FakeDeviceArray(w, device_id=1), FakeDeviceArray(out), 255.0,
                           True, 0)
    assert np.all(out == 5.0)  # nothing written


def test_an_unsupported_device_is_named():
    with pytest.raises(ValueError, match="DLPack device type 4"):  # OpenCL
        _core.reduce(FakeDeviceArray(np.ones(4, np.float32), device_type=4), np.zeros((), np.float32), 0, None,
                     "deterministic", 0)


@no_device
def test_cuda_arrays_reach_the_gpu_backend_or_say_it_is_not_built():
    x = FakeDeviceArray(np.ones(64, np.float32))
    out = FakeDeviceArray(np.zeros((), np.float32))
    if fk.has_cuda:  # the GPU path runs until the CUDA runtime finds no driver
        with pytest.raises(RuntimeError, match="cudaError"):
            _core.reduce(x, out, 0, None, "deterministic", 0)
    else:
        with pytest.raises(ValueError, match="no GPU backend"):
            _core.reduce(x, out, 0, None, "deterministic", 0)
