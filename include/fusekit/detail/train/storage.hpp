// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The weights' storage, where `linear_association` keeps them: a host vector for the CPU, a
/// device array from the policy's memory resource for the GPU.

#include <fusekit/detail/core/unique_owner.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#if FUSEKIT_HAS_CUDA_HEADERS
#include <cuda_runtime_api.h>
#endif

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

#if FUSEKIT_HAS_CUDA_HEADERS
/// n values of T in device memory from a policy's resource, zeroed in stream
/// order; given back in stream order. An owner like every fusekit resource
/// (unique_owner: taken in the constructor, given back once in the
/// destructor); a model, which must move, holds it through a unique_ptr.
template <class T>
class device_allocation : unique_owner {
 public:
  device_allocation(const cuda& policy, std::size_t n) : policy_(policy), n_(n) {
    if (n_ == 0) { return; }
    data_ =
        static_cast<T*>(policy_.memory.allocate(n_ * sizeof(T), alignof(T) < 256 ? 256 : alignof(T), policy_.stream));
    cudaError_t const zeroed = cudaMemsetAsync(data_, 0, n_ * sizeof(T), policy_.stream);
    if (zeroed != cudaSuccess) {
      release();  // the destructor does not run for a constructor that throws
      FUSEKIT_CUDA_TRY(zeroed);
    }
  }
  ~device_allocation() { release(); }

  [[nodiscard]] T* data() const { return data_; }

 private:
  void release() noexcept {
    if (data_ != nullptr) { policy_.memory.deallocate(data_, n_ * sizeof(T), 256, policy_.stream); }
    data_ = nullptr;
  }
  cuda policy_;
  std::size_t n_ = 0;
  T* data_ = nullptr;
};
#endif

/// Where a model's weights live: a host vector for the CPU, device memory for the GPU.
template <class T, class Policy>
struct weights_storage;
template <class T>
struct weights_storage<T, cpu> {
  std::vector<T> values;
  weights_storage(const cpu&, std::size_t n) : values(n, T(0)) {}
  [[nodiscard]] T* data() { return values.data(); }
  [[nodiscard]] const T* data() const { return values.data(); }
};
#if FUSEKIT_HAS_CUDA_HEADERS
template <class T>
struct weights_storage<T, cuda> {
  std::unique_ptr<device_allocation<T>> values;
  weights_storage(const cuda& policy, std::size_t n) : values(std::make_unique<device_allocation<T>>(policy, n)) {}
  [[nodiscard]] T* data() const { return values ? values->data() : nullptr; }  // null once moved from
  /// The values into `host` (as many as it holds), on the policy's stream (synchronizes).
  void copy_to(std::vector<T>& host, cudaStream_t stream) const {
    if (host.empty()) { return; }
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(host.data(), data(), host.size() * sizeof(T), cudaMemcpyDeviceToHost, stream));
    FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream));
  }
};
#endif

}  // namespace train
}  // namespace detail
}  // namespace fusekit
