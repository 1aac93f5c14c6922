#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The hidden layer tanh((grey / 255) * w) the way each stack's users write it.

CPU: NumPy as the users wrote it (three array passes, tanh spelled through exp)
and with NumPy's own np.tanh, numexpr (one threaded pass), JAX's jit (XLA fuses
the three operations), Numba @vectorize(target='parallel') and @njit with prange. GPU: Numba CUDA (a
chain of three @vectorize(target='cuda') on device arrays), CuPy (the
per-operation chain and a fused ElementwiseKernel), PyTorch (the eager chain and
torch.compile). Same sizes and data as bench/elementwise.cu, float32; each
result checked against a float64 reference (‖y − ref‖ / ‖ref‖ on a sample).

    python3 hidden_layer.py [--out results.json] [--cpu-only | --gpu-only] [--sizes 2^28,...]
"""
import os
import sys
import time

import peer_common as pc

CPU_SIZES = [1 << 20, 10_000_000, 1 << 24]
GPU_SIZES = [1 << 20, 1 << 24, 1 << 28]


def check(np, y, grey, w, stride=64):
    """Relative error against float64 on every `stride`-th element (host arrays;
    stride 1 when they are that sample already)."""
    idx = slice(None, None, stride)
    x = grey[idx].astype(np.float64) / 255.0 * w[idx].astype(np.float64)
    ref = np.tanh(x)
    got = y[idx].astype(np.float64)
    if not np.all(np.isfinite(got)):
        return float("nan")
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def numpy_three_pass(np, grey, w):
    a = grey / np.float32(255)                          # pass 1: normalize
    b = a * w                                           # pass 2: weigh
    return (np.exp(b) - np.exp(-b)) / (np.exp(b) + np.exp(-b))  # pass 3: activate, as written


def cpu_peers(np, report):
    numexpr = pc.optional("numexpr")
    if numexpr is not None:
        numexpr.set_num_threads(os.cpu_count() or 1)
    jax = pc.optional("jax")
    if jax is not None:
        import jax.numpy as jnp

        layer_jit = jax.jit(lambda g, w: jnp.tanh(g / jnp.float32(255) * w))
    numba = pc.optional("numba")
    if numba is not None:
        import math

        @numba.vectorize(["float32(float32, float32)"], target="parallel")
        def layer_vectorize(g, w):
            x = g / numba.float32(255) * w
            return (math.exp(x) - math.exp(-x)) / (math.exp(x) + math.exp(-x))

        @numba.njit(parallel=True, fastmath=False)
        def layer_prange(grey, w, out):
            for i in numba.prange(grey.shape[0]):
                x = grey[i] / numba.float32(255) * w[i]
                out[i] = (math.exp(x) - math.exp(-x)) / (math.exp(x) + math.exp(-x))
    for n in pc.sizes(CPU_SIZES):
        grey, w = pc.layer_inputs(np, n, np.float32)
        nbytes = n * 12
        y = numpy_three_pass(np, grey, w)
        report.add(f"cpu/numpy_three_pass/f32/{n}", n, pc.time_it(lambda: numpy_three_pass(np, grey, w)), nbytes,
                   check(np, y, grey, w))
        scale = np.float32(255)
        report.add(f"cpu/numpy_tanh/f32/{n}", n, pc.time_it(lambda: np.tanh(grey / scale * w)), nbytes,
                   check(np, np.tanh(grey / scale * w), grey, w))
        if numexpr is not None:
            names = {"g": grey, "w": w, "s": scale}
            report.add(f"cpu/numexpr/f32/{n}", n, pc.time_it(lambda: numexpr.evaluate("tanh(g / s * w)", local_dict=names)),
                       nbytes, check(np, numexpr.evaluate("tanh(g / s * w)", local_dict=names), grey, w))
        if jax is not None:
            gj, wj = jax.device_put(grey), jax.device_put(w)
            yj = layer_jit(gj, wj).block_until_ready()  # compile outside the timing
            report.add(f"cpu/jax_jit/f32/{n}", n, pc.time_it(lambda: layer_jit(gj, wj).block_until_ready()), nbytes,
                       check(np, np.asarray(yj), grey, w))
        if numba is not None:
            out = np.empty_like(w)
            layer_prange(grey, w, out)  # compile outside the timing
            report.add(f"cpu/numba_vectorize_parallel/f32/{n}", n, pc.time_it(lambda: layer_vectorize(grey, w)), nbytes,
                       check(np, layer_vectorize(grey, w), grey, w))
            report.add(f"cpu/numba_njit_prange/f32/{n}", n, pc.time_it(lambda: layer_prange(grey, w, out)), nbytes,
                       check(np, out, grey, w))


def gpu_peers(np, report):
    cp, torch, numba_cuda = pc.gpu_stacks()
    if cp is None and torch is None and numba_cuda is None:
        return
    numba = pc.optional("numba") if numba_cuda is not None else None
    if numba_cuda is not None:
        import math

        @numba.vectorize(["float32(float32)"], target="cuda")
        def nb_normalize(g):
            return g / numba.float32(255)

        @numba.vectorize(["float32(float32, float32)"], target="cuda")
        def nb_weigh(a, w):
            return a * w

        @numba.vectorize(["float32(float32)"], target="cuda")
        def nb_activate(x):
            return (math.exp(x) - math.exp(-x)) / (math.exp(x) + math.exp(-x))
    if cp is not None:
        fused = cp.ElementwiseKernel("float32 g, float32 w", "float32 y",
                                     "float x = g / 255.0f * w; y = tanhf(x);", "fusekit_peer_layer")
    if torch is not None:
        def torch_layer(g, w):
            return torch.tanh(g / 255.0 * w)
        compiled = None
        try:
            compiled = torch.compile(torch_layer)
        except Exception as e:
            print(f"skipped: torch.compile ({e})", file=sys.stderr)
    for n in pc.sizes(GPU_SIZES):
        # The inputs are made on the GPU when CuPy is there (2^28 elements take
        # NumPy half a minute) and shared by every stack through the CUDA array
        # interface; the checks read every 64th element back.
        on_gpu = cp is not None
        if on_gpu:
            cg, cw = pc.layer_inputs(cp, n, cp.float32)
            inputs = (cg, cw)
            grey, w = cp.asnumpy(cg[::64]), cp.asnumpy(cw[::64])
        else:
            inputs = pc.layer_inputs(np, n, np.float32)
            grey, w = inputs[0][::64].copy(), inputs[1][::64].copy()

        def sample(y):
            return y[::64]
        nbytes = n * 12
        if numba_cuda is not None:
            dg, dw = (numba_cuda.as_cuda_array(a) if on_gpu else numba_cuda.to_device(a) for a in inputs)
            da, db, dy = (numba_cuda.device_array(n, dtype=np.float32) for _ in range(3))

            def nb_chain():
                nb_normalize(dg, out=da)
                nb_weigh(da, dw, out=db)
                nb_activate(db, out=dy)
            nb_chain()
            report.add(f"gpu/numba_cuda_three_vectorize/f32/{n}", n, pc.time_it(nb_chain, numba_cuda.synchronize), nbytes,
                       check(np, sample(dy.copy_to_host()), grey, w, 1))
            del dg, dw, da, db, dy
        if cp is not None:
            sync = cp.cuda.Device().synchronize

            def cp_chain():
                b = cg / cp.float32(255) * cw
                return (cp.exp(b) - cp.exp(-b)) / (cp.exp(b) + cp.exp(-b))
            report.add(f"gpu/cupy_per_operation/f32/{n}", n, pc.time_it(cp_chain, sync), nbytes,
                       check(np, cp.asnumpy(sample(cp_chain())), grey, w, 1))
            cy = cp.empty_like(cw)
            report.add(f"gpu/cupy_elementwise_kernel/f32/{n}", n, pc.time_it(lambda: fused(cg, cw, cy), sync), nbytes,
                       check(np, cp.asnumpy(sample(fused(cg, cw, cy))), grey, w, 1))
            del cy
        if torch is not None:
            tg, tw = (torch.as_tensor(a, device="cuda") if on_gpu else torch.from_numpy(a).cuda() for a in inputs)
            sync = torch.cuda.synchronize
            report.add(f"gpu/torch_eager/f32/{n}", n, pc.time_it(lambda: torch_layer(tg, tw), sync), nbytes,
                       check(np, sample(torch_layer(tg, tw)).cpu().numpy(), grey, w, 1))
            if compiled is not None:
                t0 = time.perf_counter()
                y = compiled(tg, tw)  # first call compiles: reported apart
                sync()
                first = time.perf_counter() - t0
                report.add(f"gpu/torch_compile/f32/{n}", n, pc.time_it(lambda: compiled(tg, tw), sync), nbytes,
                           check(np, sample(y).cpu().numpy(), grey, w, 1), first_call_seconds=first)
            del tg, tw
            torch.cuda.empty_cache()
        del inputs
        if on_gpu:
            del cg, cw
            cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    sys.exit(pc.run_task("hidden_layer", sys.argv, cpu_peers, gpu_peers))
