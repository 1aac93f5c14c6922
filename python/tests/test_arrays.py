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
    with pytest.raises(ValueError, match=r"fusekit\.hidden_layer: out is read-only"):
        fk.hidden_layer(grey, w, out=out)
    with pytest.raises(ValueError, match=r"fusekit\.sum: out is read-only"):
        fk.sum(w, out=out[:1])
    with pytest.raises(TypeError, match=r"fusekit\.predict: out is a list"):
        fk.predict(np.ones((2, 3)), np.ones((1, 3)), out=[0.0, 0.0])


# Strided inputs, each beside its call on a C-contiguous copy (the reference).
STRIDED = [
    (lambda g, w, X, W, **k: fk.hidden_layer(g[::2], w[::2], **k),
     lambda g, w, X, W: fk.hidden_layer(g[::2].copy(), w[::2].copy())),
    (lambda g, w, X, W, **k: fk.transform(fk.tanh(), w[::-1], **k),
     lambda g, w, X, W: fk.transform(fk.tanh(), w[::-1].copy())),
    (lambda g, w, X, W, **k: fk.sum(w[::3], **k), lambda g, w, X, W: fk.sum(w[::3].copy())),
    (lambda g, w, X, W, **k: fk.reduce(w.reshape(20, 50).T, "max", **k),
     lambda g, w, X, W: fk.reduce(w.reshape(20, 50).T.copy(), "max")),
    (lambda g, w, X, W, **k: fk.fit(X.T, X[:, :2], **k)[0],
     lambda g, w, X, W: fk.fit(X.T.copy(), X[:, :2].copy())[0]),
    (lambda g, w, X, W, **k: fk.predict(X, W.T.copy().T, **k), lambda g, w, X, W: fk.predict(X, W)),
    (lambda g, w, X, W, **k: fk.predict(np.asfortranarray(X), W, **k), lambda g, w, X, W: fk.predict(X, W)),
]


@pytest.mark.parametrize("call,reference", STRIDED)
def test_strided_inputs_are_copied_once_or_refused_with_copy_false(call, reference):
    grey, w = layer_inputs()
    X = np.random.default_rng(1).random((30, 30)) + 3 * np.eye(30)
    W = np.random.default_rng(2).random((4, 30))
    assert np.array_equal(call(grey, w, X, W), reference(grey, w, X, W))
    with pytest.raises(ValueError, match=r"not C-contiguous.*np\.ascontiguousarray"):
        call(grey, w, X, W, copy=False)


def test_a_strided_out_is_refused_it_cannot_be_copied():
    grey, w = layer_inputs()
    with pytest.raises(ValueError, match="not C-contiguous"):
        fk.hidden_layer_unfused(grey, w, out=np.empty(2 * w.size, w.dtype)[::2])


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


def test_a_scalar_w_broadcasts_as_numpy_does():
    grey, _ = layer_inputs(257)
    for w, dtype in ((0.75, np.float32), (np.float64(0.75), np.float64), (np.float32(-2.0), np.float32)):
        y = fk.hidden_layer(grey, w)
        assert y.dtype == dtype and y.shape == grey.shape
        assert np.array_equal(y, fk.hidden_layer(grey, np.full(grey.shape, w, dtype)))
    out = np.empty(grey.shape, np.float64)
    assert fk.hidden_layer(grey, 2, out=out) is out  # out's type
    assert np.array_equal(out, fk.hidden_layer(grey, np.full(grey.shape, 2.0)))
    with pytest.raises(TypeError, match=r"fusekit\.hidden_layer: w is a bool"):
        fk.hidden_layer(grey, True)


def test_sum_takes_axis_none_or_every_axis():
    x = np.random.default_rng(3).random((6, 7))
    whole = fk.sum(x)
    for axis in (None, (0, 1), (1, 0), (-1, -2)):
        assert fk.sum(x, axis=axis) == whole
    assert fk.sum(x[0], axis=0) == fk.sum(x[0]) == fk.sum(x[0], axis=-1)
    assert fk.reduce(x, "max", axis=(0, 1)) == x.max()
    rows = fk.sum(x, axis=1)  # one sum per row: the bits of each row's own sum
    assert rows.shape == (6,) and all(rows[r] == fk.sum(x[r]) for r in range(6))
    assert np.array_equal(fk.sum(x, axis=-1), rows) and np.array_equal(fk.sum(x, axis=(1,)), rows)
    for axis in (0, (0,), (0, 0), 2, "rows", 1.0):
        with pytest.raises(ValueError, match=r"fusekit\.sum: axis is"):
            fk.sum(x, axis=axis)
    with pytest.raises(ValueError, match=r"fusekit\.reduce: axis is"):
        fk.reduce(x, "max", axis=1)  # per-row sums only
