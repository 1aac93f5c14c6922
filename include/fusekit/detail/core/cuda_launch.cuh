// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Device-side launch helpers: 64-bit thread indices for grid-stride loops; on
/// the host, the device's attributes (queried once per device), the resident
/// grid of a kernel (from the occupancy calculator, cached per device, kernel
/// and block shape) and the one launch path every fusekit kernel takes.

#include <fusekit/detail/core/grid_size.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/tuning.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace fusekit {
namespace detail {
inline namespace core {

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

/// This thread's index in the grid, 64-bit (no overflow past 2^31 threads·iterations).
__device__ inline std::int64_t global_thread_id() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// Threads in the grid: the step of a grid-stride loop.
__device__ inline std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

/// Blocks of `kernel` (`block_size` threads, `shared_bytes` of dynamic shared
/// memory) resident at once on one multiprocessor of `device`: asked of the
/// occupancy calculator once, then cached for the process.
inline int resident_blocks_per_sm(const void* kernel, int block_size, std::size_t shared_bytes, int device) {
  using key = std::tuple<const void*, int, std::size_t, int>;
  static std::mutex mutex;
  static std::map<key, int> cache;
  key const k{kernel, block_size, shared_bytes, device};
  std::lock_guard<std::mutex> const lock(mutex);
  auto const it = cache.find(k);
  if (it != cache.end()) { return it->second; }
  int blocks = 0;
  FUSEKIT_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block_size, shared_bytes));
  cache.emplace(k, blocks);
  return blocks;
}

/// Grid for `kernel`: enough blocks for `items` work items, `items_per_block`
/// per block and pass (default: one per thread), at most the blocks resident at
/// once. No work: 0, without asking the device anything.
template <class... Params>
int resident_grid(void (*kernel)(Params...), std::int64_t items, int block_size, std::int64_t items_per_block = 0,
                  std::size_t shared_bytes = 0) {
  if (items <= 0) { return 0; }
  int const device = current_device();
  int const per_sm = resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), block_size, shared_bytes, device);
  return grid_size(items, items_per_block > 0 ? items_per_block : block_size, attributes_of(device).sm_count, per_sm);
}

/// kernel<<<grid, block, shared_bytes, stream>>>(args...), then a check of the
/// launch. A grid of 0 blocks (no work) launches nothing: CUDA would reject it
/// as an invalid configuration.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), std::int64_t grid, int block, std::size_t shared_bytes, cudaStream_t stream,
            Args&&... args) {
  if (grid <= 0) { return; }
  FUSEKIT_EXPECTS(grid <= 0x7fffffff, "fusekit: a launch needs " + std::to_string(grid) +
                                          " blocks, more than a CUDA grid holds (2^31 - 1)");
  kernel<<<static_cast<unsigned>(grid), static_cast<unsigned>(block), shared_bytes, stream>>>(
      std::forward<Args>(args)...);
  FUSEKIT_CHECK_LAUNCH();
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
