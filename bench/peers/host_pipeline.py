#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The hidden layer and the sum on data in host memory (NumPy arrays), host to
host, the way each GPU stack's users write it: CuPy (cp.asarray -> the
per-operation chain -> .get()), PyTorch (.cuda() -> ops -> .cpu()), and Numba
(@vectorize(target='cuda') called on the NumPy arrays, which copies in and out
itself). Same sizes and data as bench/host_pipeline.cu: uint8 greyscales and
float32 weights in, float32 out (9 bytes per element cross the bus); each
result checked against a float64 reference. The inputs are made on the GPU
(CuPy) and copied once into pinned host memory, outside the timings.

    python3 host_pipeline.py [--out results.json] [--cpu-only]

There is no CPU peer: the task is the bus. With --cpu-only nothing runs.
"""
import sys

import peer_common as pc

SIZES = [1 << 20, 1 << 24, 1 << 28]


def check(np, y, grey, w):
    """Relative error against float64 on every 64th element."""
    idx = slice(None, None, 64)
    ref = np.tanh(grey[idx].astype(np.float64) / 255.0 * w[idx].astype(np.float64))
    got = np.asarray(y[idx], dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return float("nan")
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def host_inputs(np, cp, n):
    """The inputs in host memory, made on the GPU when CuPy is there (NumPy takes
    25-40 s for 2^28 elements, most of the peer's time cap) and copied into
    pinned host arrays; with NumPy alone, sizes above 2^24 are skipped."""
    if cp is None:
        if n > 1 << 24:
            print(f"skipped: host_pipeline n={n}: making it with NumPy would use up the time cap (CuPy missing)",
                  file=sys.stderr)
            return None, None
        return pc.layer_inputs(np, n, np.uint8)
    import cupyx
    dg, dw = pc.layer_inputs(cp, n, cp.uint8)
    grey, w = cupyx.empty_pinned((n,), dtype=np.uint8), cupyx.empty_pinned((n,), dtype=np.float32)
    dg.get(out=grey)
    dw.get(out=w)
    del dg, dw
    cp.get_default_memory_pool().free_all_blocks()
    return grey, w


def no_cpu_peers(np, report):
    print("host_pipeline: no CPU peer (the task is moving host data through the GPU)", file=sys.stderr)


def gpu_peers(np, report):
    cp, torch, numba_cuda = pc.gpu_stacks()
    if cp is None and torch is None and numba_cuda is None:
        return
    if numba_cuda is not None:
        import math
        import numba

        @numba.vectorize(["float32(uint8, float32)"], target="cuda")
        def nb_layer(g, w):
            x = g / numba.float32(255) * w
            return (math.exp(x) - math.exp(-x)) / (math.exp(x) + math.exp(-x))
    for n in pc.sizes(SIZES):
        grey, w = host_inputs(np, cp, n)
        if grey is None:
            continue
        layer_bytes, sum_bytes = 9 * n, 4 * n
        ref_sum = float(np.sum(w, dtype=np.float64))
        if cp is not None:
            def cp_layer():
                cg, cw = cp.asarray(grey), cp.asarray(w)
                b = cg / cp.float32(255) * cw
                return ((cp.exp(b) - cp.exp(-b)) / (cp.exp(b) + cp.exp(-b))).get()

            def cp_sum():
                return float(cp.asarray(w).sum())
            report.add(f"host/cupy/layer/{n}", n, pc.time_it(cp_layer), layer_bytes, check(np, cp_layer(), grey, w))
            report.add(f"host/cupy_sum/f32/{n}", n, pc.time_it(cp_sum), sum_bytes, abs(cp_sum() - ref_sum) / abs(ref_sum))
            cp.get_default_memory_pool().free_all_blocks()
        if torch is not None:
            tg_host, tw_host = torch.from_numpy(grey), torch.from_numpy(w)

            def torch_layer():
                return torch.tanh(tg_host.cuda() / 255.0 * tw_host.cuda()).cpu()

            def torch_sum():
                return tw_host.cuda().sum().item()
            report.add(f"host/torch/layer/{n}", n, pc.time_it(torch_layer), layer_bytes,
                       check(np, torch_layer().numpy(), grey, w))
            report.add(f"host/torch_sum/f32/{n}", n, pc.time_it(torch_sum), sum_bytes,
                       abs(torch_sum() - ref_sum) / abs(ref_sum))
            torch.cuda.empty_cache()
        if numba_cuda is not None:
            report.add(f"host/numba_vectorize_cuda/layer/{n}", n, pc.time_it(lambda: nb_layer(grey, w)), layer_bytes,
                       check(np, nb_layer(grey, w), grey, w))


if __name__ == "__main__":
    sys.exit(pc.run_task("host_pipeline", sys.argv, no_cpu_peers, gpu_peers))
