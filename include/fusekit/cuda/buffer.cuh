// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `stream_buffer<T>`: the one owner of device temporaries in fusekit. It takes
/// its memory from the policy's resource (or from a caller's workspace) and
/// gives it back in stream order when it goes out of scope.

#include <fusekit/detail/unique_owner.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace fusekit {
namespace detail {

/// Alignment of every temporary and of every part of a workspace.
inline constexpr std::size_t workspace_alignment = 256;

constexpr std::size_t align_up(std::size_t bytes) {
  return (bytes + workspace_alignment - 1) / workspace_alignment * workspace_alignment;
}

/// n values of T in device memory, from `policy.memory` in stream order, or
/// carved out of a caller's workspace (then nothing is allocated).
template <class T>
class stream_buffer : unique_owner {
 public:
  stream_buffer(const cuda& policy, std::int64_t n) : policy_(policy), bytes_(static_cast<std::size_t>(n > 0 ? n : 0) * sizeof(T)) {
    if (bytes_ > 0) { data_ = static_cast<T*>(policy_.memory.allocate(bytes_, workspace_alignment, policy_.stream)); }
  }

  /// From `workspace` when it is given (checked to hold n values, aligned up),
  /// else from the policy's resource.
  stream_buffer(const cuda& policy, std::int64_t n, ::cuda::std::span<std::byte> workspace, const char* function)
      : policy_(policy) {
    std::size_t const bytes = static_cast<std::size_t>(n > 0 ? n : 0) * sizeof(T);
    if (workspace.data() == nullptr) {
      bytes_ = bytes;
      if (bytes_ > 0) { data_ = static_cast<T*>(policy_.memory.allocate(bytes_, workspace_alignment, policy_.stream)); }
      return;
    }
    if (bytes == 0) { return; }
    FUSEKIT_EXPECTS(workspace.size() >= bytes + workspace_alignment,
                    std::string(function) + ": workspace has " + std::to_string(workspace.size()) +
                        " bytes but needs " + std::to_string(bytes + workspace_alignment) +
                        " (ask the matching *_workspace_bytes function)");
    auto const p = reinterpret_cast<std::uintptr_t>(workspace.data());
    data_ = reinterpret_cast<T*>((p + workspace_alignment - 1) / workspace_alignment * workspace_alignment);
  }

  ~stream_buffer() {
    if (bytes_ > 0) { policy_.memory.deallocate(data_, bytes_, workspace_alignment, policy_.stream); }
  }

  [[nodiscard]] T* get() const { return data_; }

 private:
  cuda policy_;
  std::size_t bytes_ = 0;  ///< owned bytes; 0 for none or a workspace
  T* data_ = nullptr;
};

/// Runs `enqueue(d)` with d a device value of type R, then copies it to the
/// host and synchronizes the stream: how a GPU call returns a host value.
template <class R, class Enqueue>
R device_scalar_result(const cuda& policy, const Enqueue& enqueue) {
  R h{};
  {
    stream_buffer<R> const d(policy, 1);
    enqueue(d.get());
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&h, d.get(), sizeof(R), cudaMemcpyDeviceToHost, policy.stream));
  }
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  return h;
}

}  // namespace detail
}  // namespace fusekit
