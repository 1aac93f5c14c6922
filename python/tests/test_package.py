# SPDX-License-Identifier: Apache-2.0
"""The package as installed: its public names, its type stubs for editors,
and what the build put in it."""
import os

import fusekit as fk


def test_every_public_name_exists():
    for name in fk.__all__:
        assert hasattr(fk, name), name


def test_stubs_and_the_typed_marker_are_installed():
    folder = os.path.dirname(fk.__file__)
    assert os.path.exists(os.path.join(folder, "py.typed"))
    stub = open(os.path.join(folder, "_core.pyi")).read()  # nanobind.stubgen, at build time
    for name in ("def hidden_layer", "def reduce", "def fit", "def predict", "class GdOptions", "class FitStatus",
                 "def recommended"):
        assert name in stub, name


def test_the_build_says_what_it_holds():
    assert isinstance(fk.has_cuda, bool) and isinstance(fk.has_half_types, bool)
    assert fk.cuda_device_count() >= 0
    if not fk.has_half_types:  # the CPU-only build: float16 is refused with the reason
        import numpy as np
        import pytest
        with pytest.raises(TypeError, match="no half types"):
            fk.hidden_layer(np.zeros(4, np.uint8), np.zeros(4, np.float16))
