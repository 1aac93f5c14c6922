// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The resource interface policy.hpp's references stand on: fusekit's
/// default stream-ordered pool per device, and the traits that recognize a
/// stream-ordered device resource (`allocate_async`, `deallocate_async`) and
/// a pinned host resource (`allocate`, `deallocate`).

#include <fusekit/config.hpp>

#if FUSEKIT_HAS_CUDA_HEADERS
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {
inline namespace base {
/// Bytes fusekit's own pool keeps mapped across synchronizations, per device:
/// room for a host-data pipeline's slots (≤ 4 views × 4 slots × 4 MiB) and
/// cuBLAS's 32 MiB workspace, so repeated calls map nothing anew. The
/// device's default pool keeps nothing (release threshold 0): there, every
/// synchronize unmapped the temporaries and the next call mapped them again.
inline constexpr std::uint64_t default_pool_keep_bytes = std::uint64_t{128} << 20;

/// Sets `pool` to fusekit's own stream-ordered pool on the current device
/// (created on first use, kept for the process): what a policy's default
/// resource draws from. The device's default and current pools, and their
/// settings, are the caller's and stay as they are. Returns the first CUDA
/// error, for policy.hpp to throw.
inline cudaError_t find_default_device_pool(cudaMemPool_t& pool) {
  static std::mutex mutex;
  static auto* pools = new std::map<int, cudaMemPool_t>();  // never destroyed: the driver frees pools at exit
  int device = 0;
  if (cudaError_t const e = cudaGetDevice(&device); e != cudaSuccess) { return e; }
  std::lock_guard<std::mutex> const lock(mutex);
  auto const found = pools->find(device);
  if (found != pools->end()) {
    pool = found->second;
    return cudaSuccess;
  }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t created = nullptr;
  if (cudaError_t const e = cudaMemPoolCreate(&created, &props); e != cudaSuccess) { return e; }
  std::uint64_t keep = default_pool_keep_bytes;
  if (cudaError_t const e = cudaMemPoolSetAttribute(created, cudaMemPoolAttrReleaseThreshold, &keep);
      e != cudaSuccess) {
    cudaMemPoolDestroy(created);
    return e;
  }
  pools->emplace(device, created);
  pool = created;
  return cudaSuccess;
}

template <class R, class = void>
struct is_async_resource : std::false_type {};
template <class R>
struct is_async_resource<
    R, std::enable_if_t<
           std::is_same_v<decltype(std::declval<R&>().allocate_async(std::size_t{}, std::size_t{},
                                                                     std::declval<::cuda::stream_ref>())),
                          void*> &&
           std::is_same_v<decltype(std::declval<R&>().deallocate_async(
                              std::declval<void*>(), std::size_t{}, std::size_t{}, std::declval<::cuda::stream_ref>())),
                          void>>> : std::true_type {};

template <class R, class = void>
struct is_host_resource : std::false_type {};
template <class R>
struct is_host_resource<
    R, std::enable_if_t<
           std::is_same_v<decltype(std::declval<R&>().allocate(std::size_t{}, std::size_t{})), void*> &&
           std::is_same_v<decltype(std::declval<R&>().deallocate(std::declval<void*>(), std::size_t{}, std::size_t{})),
                          void>>> : std::true_type {};
}  // namespace base
}  // namespace detail
}  // namespace fusekit
#endif
