# SPDX-License-Identifier: Apache-2.0
"""CuPy arrays and PyTorch CUDA tensors: the GPU backend, on the framework's
current stream, results in the input's framework. Skipped without a GPU or
without the GPU backend."""
import numpy as np
import pytest

import fusekit as fk
from conftest import cupy_or_skip, torch_or_skip


def test_cupy_hidden_layer_runs_on_the_current_stream_and_gives_the_cpu_bits():
    cupy = cupy_or_skip()
    rng = np.random.default_rng(0)
    grey = rng.integers(0, 256, 1 << 20, dtype=np.uint8)
    w = rng.standard_normal(1 << 20).astype(np.float32)
    cpu = fk.hidden_layer(grey, w)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        y = fk.hidden_layer(cupy.asarray(grey), cupy.asarray(w))
        assert isinstance(y, cupy.ndarray)
        stream.synchronize()
    assert np.array_equal(cupy.asnumpy(y), cpu)  # one body for both backends, same functors


@pytest.mark.parametrize("algorithm", fk.ALGORITHMS)
def test_cupy_sums_stay_on_the_device_and_the_tree_gives_the_cpu_bits(algorithm):
    cupy = cupy_or_skip()
    x = np.random.default_rng(1).random(1 << 22).astype(np.float32)
    s = fk.sum(cupy.asarray(x), algorithm)
    assert isinstance(s, cupy.ndarray) and s.shape == ()
    exact = float(np.sum(x, dtype=np.float64))
    assert abs(float(s) - exact) <= (x.size - 1) * 2.0 ** -24 * exact
    if algorithm == "deterministic":
        assert float(s) == float(fk.sum(x))


def test_cupy_fit_and_predict_match_the_cpu():
    cupy = cupy_or_skip()
    rng = np.random.default_rng(2)
    X = rng.random((1000, 100))
    Y = X @ rng.random((10, 100)).T
    W, report = fk.fit(cupy.asarray(X), cupy.asarray(Y), fk.GdOptions.recommended())
    assert isinstance(W, cupy.ndarray) and report.all_converged()
    Wc, _ = fk.fit(X, Y, fk.GdOptions.recommended())
    assert np.allclose(cupy.asnumpy(W), Wc, rtol=0, atol=1e-8)
    Y_hat = fk.predict(cupy.asarray(X), W)
    assert np.allclose(cupy.asnumpy(Y_hat), Y, rtol=0, atol=1e-8)


def test_cupy_recommended_runs_cholesky_on_the_device_as_on_the_cpu():
    cupy = cupy_or_skip()
    rng = np.random.default_rng(6)
    t = np.linspace(0, 1, 2000)
    X = np.stack([t ** d for d in range(8)], axis=1)  # polynomial features: kappa of the scaled columns ~1e5
    Y = X @ rng.standard_normal((2, 8)).T + 0.1 * rng.standard_normal((2000, 2))
    Wc, rc = fk.fit(X, Y, fk.GdOptions.recommended())
    Wg, rg = fk.fit(cupy.asarray(X), cupy.asarray(Y), fk.GdOptions.recommended())
    assert rg.preconditioner == fk.GdPreconditioner.cholesky == rc.preconditioner
    assert rg.all_converged() and rc.all_converged() and rg.formulation == rc.formulation
    W_star = np.linalg.lstsq(X, Y, rcond=None)[0].T
    assert np.max(np.abs(cupy.asnumpy(Wg) - W_star)) <= 1e-8 * np.max(np.abs(W_star))


def test_cupy_unconverged_fit_is_never_worse_than_zero():
    cupy = cupy_or_skip()
    rng = np.random.default_rng(7)
    X = rng.random((300, 6)) * [1, 1e3, 1e-3, 10, 100, 1]
    Y = X @ rng.standard_normal((2, 6)).T
    o = fk.GdOptions()
    o.method = fk.GdMethod.plain
    o.learning_rate = 1e-2  # far above 2/lambda: the iterates grow
    o.max_iterations = 20
    W, r = fk.fit(cupy.asarray(X), cupy.asarray(Y), o)
    assert not r.all_converged()
    res = Y - X @ cupy.asnumpy(W).T
    assert np.all(np.sum(res ** 2, axis=0) <= np.sum(Y ** 2, axis=0) * (1 + 1e-12))


def test_cupy_ridge_intercept_and_weights_match_the_cpu():
    cupy = cupy_or_skip()
    rng = np.random.default_rng(5)
    X = rng.random((400, 6)) * [1, 10, 100, 1e3, 1e-3, 5] + [0, 50, -20, 1e4, 3, 0]  # raw units
    Y = X @ rng.random((2, 6)).T + [3.0, -7.0] + 0.1 * rng.standard_normal((400, 2))
    s = rng.integers(0, 4, 400).astype(np.float64)
    s[0] = 1.0
    o = fk.GdOptions.recommended()
    o.relative_tolerance = 1e-14
    o.fit_intercept = True
    o.ridge = 0.5
    b = np.zeros(2)
    Wc, rc = fk.fit(X, Y, o, sample_weight=s, intercept=b)
    bg = cupy.zeros(2)
    Wg, rg = fk.fit(cupy.asarray(X), cupy.asarray(Y), o, sample_weight=cupy.asarray(s), intercept=bg)
    assert isinstance(Wg, cupy.ndarray) and rg.all_converged() and rc.all_converged()
    assert np.max(np.abs(cupy.asnumpy(Wg) - Wc)) <= 1e-10 * np.max(np.abs(Wc))
    assert np.max(np.abs(cupy.asnumpy(bg) - b)) <= 1e-10 * np.max(np.abs(b))
    # predict adds the intercepts on the device, with the CPU's bits for the same W and b
    Yg = fk.predict(cupy.asarray(X), cupy.asarray(Wc), cupy.asarray(b))
    assert np.array_equal(cupy.asnumpy(Yg), fk.predict(X, Wc, b))


def test_torch_cuda_model_fits_intercepts():
    torch = torch_or_skip(cuda=True)
    rng = np.random.default_rng(6)
    X = rng.random((300, 4))
    Y = X @ rng.random((3, 4)).T + [1.0, 2.0, -3.0]
    o = fk.GdOptions.recommended()
    o.fit_intercept = True
    net = fk.LinearAssociation(4, 3, o).fit(torch.from_numpy(X).cuda(), torch.from_numpy(Y).cuda())
    assert net.report.all_converged()
    assert np.allclose(net.intercepts.cpu().numpy(), [1.0, 2.0, -3.0], rtol=0, atol=1e-8)
    assert np.allclose(net.predict(torch.from_numpy(X).cuda()).cpu().numpy(), Y, rtol=0, atol=1e-8)


def test_torch_cuda_tensors_run_on_the_current_stream():
    torch = torch_or_skip(cuda=True)
    grey = torch.randint(0, 256, (1 << 20,), dtype=torch.uint8, device="cuda")
    w = torch.randn(1 << 20, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = fk.hidden_layer(grey, w)
        total = fk.sum(w, dtype=torch.float64)
    s.synchronize()
    assert y.is_cuda and y.dtype == torch.float32
    assert torch.equal(y.cpu(), fk.hidden_layer(grey.cpu(), w.cpu()))
    assert total.dtype == torch.float64 and total.is_cuda
    assert float(total) == float(fk.sum(w.cpu().numpy(), dtype=np.float64))


def test_arrays_on_two_devices_are_refused():
    torch = torch_or_skip(cuda=True)
    with pytest.raises(ValueError, match="one device"):
        fk.hidden_layer(torch.zeros(4, dtype=torch.uint8), torch.zeros(4, device="cuda"))
