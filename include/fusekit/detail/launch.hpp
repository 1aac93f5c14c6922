// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Host-side launch configuration: grids sized from the device's multiprocessor
/// count, for kernels that grid-stride with 64-bit indices.

#include <fusekit/config.hpp>
#include <fusekit/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace fusekit {
namespace detail {

/// Threads per block of fusekit's streaming kernels.
inline constexpr int default_block_size = 256;

/// Blocks for `items` one-thread work items: enough to cover them, capped at
/// the blocks the device holds at once (`sm_count · blocks_per_sm`); the
/// kernel's grid-stride loop covers the rest. 0 items: 0 blocks (no launch).
constexpr int grid_size(std::int64_t items, int block_size, int sm_count, int blocks_per_sm) {
  if (items <= 0) { return 0; }
  std::int64_t const needed = (items + block_size - 1) / block_size;
  std::int64_t const resident =
      static_cast<std::int64_t>(sm_count > 0 ? sm_count : 1) * (blocks_per_sm > 0 ? blocks_per_sm : 1);
  return static_cast<int>(needed < resident ? needed : resident);
}

/// Multiprocessors of the current device.
inline int current_sm_count() {
  int device = 0;
  FUSEKIT_CUDA_TRY(cudaGetDevice(&device));
  int sms = 0;
  FUSEKIT_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace detail
}  // namespace fusekit
