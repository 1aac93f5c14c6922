# SPDX-License-Identifier: Apache-2.0
"""The CPU backend's thread count from Python: set_num_threads, get_num_threads
and the threads context manager, checked arguments, and results that do not
depend on the count (the deterministic sum and the layer give the same bits
on 1, 2 and 3 threads)."""
import numpy as np
import pytest

import fusekit as fk


@pytest.fixture(autouse=True)
def default_count():
    yield
    fk.set_num_threads(0)


def test_set_and_get():
    default = fk.get_num_threads()
    assert default >= 1
    fk.set_num_threads(3)
    assert fk.get_num_threads() == 3
    fk.set_num_threads(0)
    assert fk.get_num_threads() == default


def test_context_manager_restores_also_on_exception():
    fk.set_num_threads(2)
    with fk.threads(1):
        assert fk.get_num_threads() == 1
        with fk.threads(3):
            assert fk.get_num_threads() == 3
        assert fk.get_num_threads() == 1
    assert fk.get_num_threads() == 2
    with pytest.raises(RuntimeError):
        with fk.threads(1):
            raise RuntimeError("inside")
    assert fk.get_num_threads() == 2


@pytest.mark.parametrize("bad", [-1, 1.5, "2", None, True])
def test_bad_counts_are_refused_by_name(bad):
    before = fk.get_num_threads()
    with pytest.raises(ValueError, match=r"fusekit\.set_num_threads: n is"):
        fk.set_num_threads(bad)
    with pytest.raises(ValueError, match=r"fusekit\.threads: n is"):
        with fk.threads(bad):
            pass
    assert fk.get_num_threads() == before


def test_results_do_not_depend_on_the_count():
    rng = np.random.default_rng(4)
    n = (1 << 21) + 77  # past every loop's helper threshold
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-12, 12, n))).astype(np.float32)
    grey = rng.integers(0, 256, n, dtype=np.uint8)
    w = rng.standard_normal(n).astype(np.float32)
    got = []
    for count in (1, 2, 3):
        with fk.threads(count):
            got.append((fk.sum(x).tobytes(), fk.sum(x, "cub").tobytes(), fk.hidden_layer(grey, w).tobytes()))
    assert got[1] == got[0] and got[2] == got[0]
