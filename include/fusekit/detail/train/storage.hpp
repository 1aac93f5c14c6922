// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Where `linear_association` keeps its weights: a host vector for the CPU, a
/// device array from the policy's memory resource for the GPU.

#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#if FUSEKIT_HAS_CUDA_HEADERS
#include <cuda_runtime_api.h>
#endif

#include <cstddef>
#include <utility>
#include <vector>

namespace fusekit {
namespace detail {

#if FUSEKIT_HAS_CUDA_HEADERS
/// n values of T in device memory from a policy's resource, zeroed in stream
/// order; given back in stream order. Movable, not copyable.
template <class T>
class device_array {
 public:
  device_array(const cuda& policy, std::size_t n) : policy_(policy), n_(n) {
    if (n_ > 0) {
      data_ =
          static_cast<T*>(policy_.memory.allocate(n_ * sizeof(T), alignof(T) < 256 ? 256 : alignof(T), policy_.stream));
      FUSEKIT_CUDA_TRY(cudaMemsetAsync(data_, 0, n_ * sizeof(T), policy_.stream));
    }
  }
  device_array(device_array&& other) noexcept
      : policy_(other.policy_), n_(std::exchange(other.n_, 0)), data_(std::exchange(other.data_, nullptr)) {}
  device_array& operator=(device_array&& other) noexcept {
    if (this != &other) {
      release();
      policy_ = other.policy_;
      n_ = std::exchange(other.n_, 0);
      data_ = std::exchange(other.data_, nullptr);
    }
    return *this;
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() { release(); }

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
  device_array<T> values;
  weights_storage(const cuda& policy, std::size_t n) : values(policy, n) {}
  [[nodiscard]] T* data() const { return values.data(); }
};
#endif

}  // namespace detail
}  // namespace fusekit
