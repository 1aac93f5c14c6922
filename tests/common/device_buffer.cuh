// SPDX-License-Identifier: Apache-2.0
#pragma once
// Owning device memory for tests, benchmarks and examples.

#include <fusekit/error.hpp>

#include <cuda/std/span>
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace fusekit::test {

template <class T>
class device_buffer {
 public:
  explicit device_buffer(std::size_t n) : n_(n) {
    if (n > 0) { FUSEKIT_CUDA_TRY(cudaMalloc(&data_, n * sizeof(T))); }
  }
  explicit device_buffer(const std::vector<T>& host) : device_buffer(host.size()) { copy_from(host); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() { FUSEKIT_CUDA_TRY_NO_THROW(cudaFree(data_)); }

  T* data() const { return data_; }
  std::size_t size() const { return n_; }
  ::cuda::std::span<T> view(std::size_t offset = 0) const { return {data_ + offset, n_ - offset}; }
  ::cuda::std::span<const T> cview(std::size_t offset = 0) const { return {data_ + offset, n_ - offset}; }

  void copy_from(const std::vector<T>& host, std::size_t offset = 0) {
    FUSEKIT_CUDA_TRY(cudaMemcpy(data_ + offset, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> to_host(std::size_t offset = 0, std::size_t count = static_cast<std::size_t>(-1)) const {
    if (count == static_cast<std::size_t>(-1)) { count = n_ - offset; }
    std::vector<T> host(count);
    FUSEKIT_CUDA_TRY(cudaMemcpy(host.data(), data_ + offset, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace fusekit::test
