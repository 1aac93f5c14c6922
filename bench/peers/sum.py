#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sums the way each stack's users write them.

CPU: np.sum (float32, float32 into float64, int32 into int64, float64, uint8
into uint64; one thread), JAX's jitted jnp.sum (XLA's CPU backend) and Numba
@njit with prange (every core). GPU: a Numba CUDA kernel with one atomicAdd per element (the
user's), cupy.sum and torch.sum. Same sizes and data as bench/reduce.cu;
relative error against a float64 (integers: exact) reference.

    python3 sum.py [--out results.json] [--cpu-only]
"""
import sys

import peer_common as pc

CPU_SIZES = [1 << 20, 1 << 24, 1 << 26]
GPU_SIZES = [1 << 20, 1 << 24, 1 << 28]
SERIES = [("f32", "float32", None), ("f32_acc_f64", "float32", "float64"), ("i32", "int32", "int64")]
# The CPU also sums double and uint8 (into uint64), as bench/reduce.cu does.
CPU_SERIES = SERIES + [("f64", "float64", None), ("u8", "uint8", "uint64")]


def rel_error(got, ref):
    return abs(float(got) - ref) / abs(ref) if ref != 0 else abs(float(got))


def reference(np, x):
    return float(np.sum(x, dtype=np.float64)) if x.dtype.kind == "f" else float(np.sum(x, dtype=np.int64))


def cpu_peers(np, report):
    jax = pc.optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)  # int64 and float64 accumulators
        import jax.numpy as jnp
    numba = pc.optional("numba")
    if numba is not None:
        @numba.njit(parallel=True)
        def prange_sum(x, zero):
            s = zero
            for i in numba.prange(x.shape[0]):
                s += x[i]
            return s
    for n in pc.sizes(CPU_SIZES):
        for name, dtype, acc in CPU_SERIES:
            x = pc.sum_inputs(np, n, np.dtype(dtype))
            ref = reference(np, x)
            acc_dtype = np.dtype(acc) if acc else None
            report.add(f"cpu/np_sum/{name}/{n}", n, pc.time_it(lambda: np.sum(x, dtype=acc_dtype)), x.nbytes,
                       rel_error(np.sum(x, dtype=acc_dtype), ref))
            if jax is not None:
                xj = jax.device_put(x)
                jsum = jax.jit(lambda v: jnp.sum(v, dtype=acc_dtype))
                got = jsum(xj).block_until_ready()  # compile outside the timing
                report.add(f"cpu/jax_jit_sum/{name}/{n}", n, pc.time_it(lambda: jsum(xj).block_until_ready()), x.nbytes,
                           rel_error(got, ref))
            if numba is not None:
                zero = (acc_dtype or x.dtype).type(0)
                prange_sum(x, zero)  # compile outside the timing
                report.add(f"cpu/numba_prange/{name}/{n}", n, pc.time_it(lambda: prange_sum(x, zero)), x.nbytes,
                           rel_error(prange_sum(x, zero), ref))


def gpu_peers(np, report):
    cp, torch, numba_cuda = pc.gpu_stacks()
    if cp is None and torch is None and numba_cuda is None:
        return  # no GPU stack: no inputs to make (2^28 on the host would take a minute for nothing)
    if numba_cuda is not None:
        @numba_cuda.jit
        def atomic_sum(x, out):
            i = numba_cuda.grid(1)
            stride = numba_cuda.gridsize(1)
            while i < x.shape[0]:
                numba_cuda.atomic.add(out, 0, x[i])
                i += stride
    for n in pc.sizes(GPU_SIZES):
        for name, dtype, acc in SERIES:
            acc_dtype = np.dtype(acc) if acc else np.dtype(dtype)
            # The inputs are made where they are summed: with CuPy on the GPU
            # (the same hash as bench/reduce.cu, element for element), and the
            # float64 (integers: int64) reference summed there too. Made with
            # NumPy, 2^28 of them took about 20 s each on the host.
            if cp is not None:
                cx = pc.sum_inputs(cp, n, np.dtype(dtype))
                ref = float(cp.sum(cx, dtype=cp.float64 if cx.dtype.kind == "f" else cp.int64))
                nbytes = cx.nbytes
            else:
                cx = pc.sum_inputs(np, n, np.dtype(dtype))
                ref = reference(np, cx)
                nbytes = cx.nbytes
            if numba_cuda is not None and n <= (1 << 24):  # one atomic per element: as in fusekit's bench
                dx = numba_cuda.as_cuda_array(cx) if cp is not None else numba_cuda.to_device(cx)
                out = numba_cuda.device_array(1, dtype=acc_dtype if acc_dtype.kind == "f" else np.int64)
                if acc is not None and acc_dtype.kind == "f":
                    src = numba_cuda.as_cuda_array(cx.astype(acc_dtype)) if cp is not None else \
                        numba_cuda.to_device(cx.astype(acc_dtype))
                else:
                    src = dx

                def run():
                    out[:1] = 0
                    atomic_sum[1024, 256](src, out)
                run()
                report.add(f"gpu/numba_cuda_atomic/{name}/{n}", n, pc.time_it(run, numba_cuda.synchronize), nbytes,
                           rel_error(out.copy_to_host()[0], ref))
                del dx, src, out
            if cp is not None:
                sync = cp.cuda.Device().synchronize
                run = (lambda: cp.sum(cx, dtype=acc_dtype))
                report.add(f"gpu/cupy_sum/{name}/{n}", n, pc.time_it(run, sync), nbytes, rel_error(run(), ref))
            if torch is not None:
                tx = torch.as_tensor(cx, device="cuda") if cp is not None else torch.from_numpy(cx).cuda()
                tdtype = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64}[acc_dtype.name]
                run = (lambda: torch.sum(tx, dtype=tdtype))
                report.add(f"gpu/torch_sum/{name}/{n}", n, pc.time_it(run, torch.cuda.synchronize), nbytes,
                           rel_error(run().item(), ref))
                del tx
                torch.cuda.empty_cache()
            del cx
            if cp is not None:
                cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    sys.exit(pc.run_task("sum", sys.argv, cpu_peers, gpu_peers))
