// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `fusekit::run_to_run` on the GPU (`fusekit::cuda`, `fusekit::cuda_staged`,
/// `fusekit::nccl`): CUB's DeviceReduce, two passes with temporary storage,
/// the same bits from run to run on one GPU (contract and bounds in
/// reduce_api.hpp). Include it beside <fusekit/reduce.cuh> to take that
/// algorithm, or the run-time `reduce_algorithm` choice, which compiles all
/// four, on the GPU; <fusekit/fusekit.cuh> includes it. The other algorithms
/// do not need it, and a translation unit without it does not parse CUB's
/// device headers (about a second of `nvcc -c` on the 2-core VM;
/// bench/compile/measure.sh).
///
///     #include <fusekit/reduce.cuh>
///     #include <fusekit/run_to_run.cuh>
///     float s = fusekit::sum(fusekit::cuda{stream}, x, fusekit::run_to_run{});

#include <fusekit/detail/reduce/cuda_cub.cuh>
#include <fusekit/reduce.cuh>
