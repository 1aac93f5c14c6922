// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Device-side launch helpers: 64-bit thread indices for grid-stride loops, and
/// the resident grid for a kernel (host side, from the occupancy calculator).

#include <fusekit/detail/launch.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace fusekit {
namespace detail {

/// This thread's index in the grid, 64-bit (no overflow past 2^31 threads·iterations).
__device__ inline std::int64_t global_thread_id() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// Threads in the grid: the step of a grid-stride loop.
__device__ inline std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

/// Grid for `kernel`: one thread per work item, at most the blocks resident at once.
template <class Kernel>
int resident_grid(Kernel kernel, std::int64_t items, int block_size) {
  int blocks_per_sm = 0;
  FUSEKIT_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, block_size, 0));
  return grid_size(items, block_size, current_sm_count(), blocks_per_sm);
}

}  // namespace detail
}  // namespace fusekit
