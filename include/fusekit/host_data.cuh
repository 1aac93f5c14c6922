// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU calls on host memory: `fusekit::cuda_staged{stream}` (policy.hpp).
///
///     std::vector<float> x(n);
///     float s = fusekit::sum(fusekit::cuda_staged{stream}, x);          // staged in pipelined chunks
///     fusekit::transform(fusekit::cuda_staged{stream}, out, op, x, w);  // host in, host out
///
/// `fusekit::cuda` reads device memory only and compiles no staging; this
/// header adds the host-data backend of every algorithm: `transform`, the
/// reductions, `fit` and `predict` (link fusekit::train for these two, as on
/// `fusekit::cuda`). An input in host memory goes through the GPU in chunks,
/// copied through pinned buffers while the kernels work on the chunk before;
/// an output in host memory comes back the same way; the deterministic sum
/// keeps its bits (its chunks hold whole tiles). docs/host-data.md gives the
/// pipeline, its chunk sizes and its measured overlap.

#include <fusekit/detail/elementwise/cuda_staged.cuh>
#include <fusekit/detail/reduce/cuda_staged.cuh>
#include <fusekit/detail/train/cuda_staged.cuh>
#include <fusekit/elementwise.cuh>
#include <fusekit/policy.hpp>
#include <fusekit/reduce.cuh>
#include <fusekit/train.cuh>
