# SPDX-License-Identifier: Apache-2.0
"""Arrays in and out: zero-copy DLPack with NumPy, outputs in the input's
framework, strides, read-only arrays, the GIL, and the frameworks fusekit
does not take."""
import threading
import time

import numpy as np
import pytest

import fusekit as fk


def layer_inputs(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, n, dtype=np.uint8), rng.standard_normal(n).astype(np.float32)


def test_results_are_numpy_arrays_that_dlpack_shares_without_a_copy():
    grey, w = layer_inputs()
    y = fk.hidden_layer(grey, w)
    shared = np.from_dlpack(y)
    assert np.shares_memory(shared, y)
    # an input that came through DLPack is read in place, and out= is written in place
    g2 = np.from_dlpack(grey)
    out = np.empty_like(w)
    assert fk.hidden_layer(g2, np.from_dlpack(w), out=np.from_dlpack(out)) is not None
    assert np.array_equal(out, y)


def test_read_only_inputs_are_taken_and_a_read_only_out_is_refused():
    grey, w = layer_inputs()
    grey.setflags(write=False)
    w.setflags(write=False)
    y = fk.hidden_layer(grey, w)
    assert y.flags.writeable
    out = np.empty_like(y)
    out.setflags(write=False)
    with pytest.raises(TypeError):
        fk.hidden_layer(grey, w, out=out)


@pytest.mark.parametrize("call", [
    lambda g, w, X, W: fk.hidden_layer(g[::2], w[::2]),
    lambda g, w, X, W: fk.hidden_layer_unfused(g, w, out=np.empty(2 * w.size, w.dtype)[::2]),
    lambda g, w, X, W: fk.transform(fk.tanh(), w[::-1]),
    lambda g, w, X, W: fk.sum(w[::3]),
    lambda g, w, X, W: fk.reduce(w.reshape(20, 50).T, "max"),
    lambda g, w, X, W: fk.fit(X.T, X[:, :2].copy()),
    lambda g, w, X, W: fk.predict(X, W.T),
    lambda g, w, X, W: fk.predict(np.asfortranarray(X), W),
])
def test_strided_arrays_are_refused_with_what_to_do(call):
    grey, w = layer_inputs()
    X = np.random.default_rng(1).random((30, 30))
    W = np.ones((30, 4))
    with pytest.raises(ValueError, match=r"not C-contiguous.*np\.ascontiguousarray"):
        call(grey, w, X, W)


def test_what_is_not_an_array_is_refused_with_what_to_do():
    with pytest.raises(TypeError, match="np.asarray"):
        fk.sum([1.0, 2.0])
    with pytest.raises(TypeError, match="np.asarray"):
        fk.hidden_layer([1, 2], [0.5, 0.5])


def test_shapes_must_agree():
    grey, w = layer_inputs(12)
    with pytest.raises(ValueError, match="one shape"):
        fk.hidden_layer(grey.reshape(3, 4), w.reshape(4, 3))
    with pytest.raises(ValueError, match="one element|elements"):
        fk.sum(w, out=np.empty(2, np.float32))
    with pytest.raises(ValueError, match="it must have 2"):
        fk.fit(np.ones(5), np.ones(5))


def test_the_gil_is_released_while_cpp_runs():
    """Another Python thread runs while a long call is inside C++."""
    x = np.random.default_rng(2).random(1 << 22).astype(np.float32)
    ticks = []
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    t = threading.Thread(target=counter)
    t.start()
    try:
        time.sleep(0.01)
        inside = 0
        for _ in range(3):  # naive_atomic: the slowest, ~ tens of ms
            start = time.perf_counter()
            fk.sum(x, "naive_atomic")
            end = time.perf_counter()
            inside += sum(1 for v in ticks[-100000:] if start < v < end)
    finally:
        stop.set()
        t.join()
    assert inside > 0


def test_torch_cpu_tensors_come_back_as_tensors():
    torch = pytest.importorskip("torch")
    grey = torch.randint(0, 256, (1000,), dtype=torch.uint8)
    for dt in (torch.float32, torch.float16, torch.bfloat16) if fk.has_half_types else (torch.float32,):
        w = torch.randn(1000, dtype=dt)
        y = fk.hidden_layer(grey, w)
        assert isinstance(y, torch.Tensor) and y.dtype == dt
        ref = torch.tanh(grey.double() / 255 * w.double())
        assert torch.allclose(y.double(), ref, rtol=0, atol=4 * 2.0 ** -8)
    s = fk.sum(torch.ones(100, dtype=torch.float32))
    assert isinstance(s, torch.Tensor) and s.item() == 100
