// SPDX-License-Identifier: Apache-2.0
// Compile-cost probe (bench/compile/measure.sh): a translation unit that calls
// only fusekit::sum on the GPU, the default algorithm.
#include <fusekit/reduce.cuh>

#include <cuda/std/span>

float sum_of(cudaStream_t stream, cuda::std::span<const float> x) { return fusekit::sum(fusekit::cuda{stream}, x); }
