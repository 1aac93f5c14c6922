// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Host-side launch configuration: grids sized from the device's multiprocessor
/// count, for kernels that grid-stride with 64-bit indices, and the device
/// attributes they need, queried once per device.

#include <fusekit/config.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/tuning.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>

namespace fusekit {
namespace detail {

/// Blocks for `items` work items of which one block takes `items_per_block`
/// per pass (its thread count when each thread takes one item, 1 when each
/// block takes a whole tile): enough to cover them, capped at the blocks the
/// device holds at once (`sm_count · blocks_per_sm`); the kernel's grid-stride
/// loop covers the rest. 0 items: 0 blocks, and `launch` launches nothing.
constexpr int grid_size(std::int64_t items, std::int64_t items_per_block, int sm_count, int blocks_per_sm) {
  if (items <= 0) { return 0; }
  std::int64_t const per_block = items_per_block > 0 ? items_per_block : 1;
  std::int64_t const needed = (items + per_block - 1) / per_block;
  std::int64_t const resident =
      static_cast<std::int64_t>(sm_count > 0 ? sm_count : 1) * (blocks_per_sm > 0 ? blocks_per_sm : 1);
  return static_cast<int>(needed < resident ? needed : resident);
}

/// What fusekit's launches need to know of a device.
struct device_attributes {
  int sm_count = 0;
  int max_shared_per_block_optin = 0;  ///< bytes of shared memory a block may opt in to
  int major = 0;                       ///< compute capability
  int minor = 0;
};

/// The current device's index.
inline int current_device() {
  int device = 0;
  FUSEKIT_CUDA_TRY(cudaGetDevice(&device));
  return device;
}

/// `device`'s attributes, queried on first use and cached for the process.
inline device_attributes attributes_of(int device) {
  static std::mutex mutex;
  static std::map<int, device_attributes> cache;
  std::lock_guard<std::mutex> const lock(mutex);
  auto const it = cache.find(device);
  if (it != cache.end()) { return it->second; }
  device_attributes a;
  FUSEKIT_CUDA_TRY(cudaDeviceGetAttribute(&a.sm_count, cudaDevAttrMultiProcessorCount, device));
  FUSEKIT_CUDA_TRY(
      cudaDeviceGetAttribute(&a.max_shared_per_block_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  FUSEKIT_CUDA_TRY(cudaDeviceGetAttribute(&a.major, cudaDevAttrComputeCapabilityMajor, device));
  FUSEKIT_CUDA_TRY(cudaDeviceGetAttribute(&a.minor, cudaDevAttrComputeCapabilityMinor, device));
  cache.emplace(device, a);
  return a;
}

/// Multiprocessors of the current device.
inline int current_sm_count() { return attributes_of(current_device()).sm_count; }

/// The tuning a GPU call runs with: the caller's, or the current device's row of `tuning_for`.
inline tuning tuning_of(const cuda& policy) {
  if (policy.tuned) { return policy.tune; }
  device_attributes const a = attributes_of(current_device());
  return tuning_for(a.major, a.minor);
}

}  // namespace detail
}  // namespace fusekit
