// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The device buffer `stream_buffer<T>`: the one owner of device temporaries in fusekit. It takes
/// its memory from the policy's resource, and gives it back in stream order
/// when it goes out of scope, or from a caller's workspace through a
/// `workspace_arena`, which also measures what a workspace must hold.

#include <fusekit/detail/core/memory_space.hpp>
#include <fusekit/detail/core/unique_owner.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace core {

/// Alignment of every temporary and of every part of a workspace.
inline constexpr std::size_t workspace_alignment = 256;

constexpr std::size_t align_up(std::size_t bytes) {
  return (bytes + workspace_alignment - 1) / workspace_alignment * workspace_alignment;
}

/// A caller's workspace handed out in aligned pieces, front to back; or, made by
/// `measure()`, a counter of the bytes such a sequence of pieces needs (then
/// every piece is null). `mark`/`release` give back the pieces taken since a mark.
class workspace_arena {
 public:
  workspace_arena(::cuda::std::span<std::byte> bytes, const char* function)
      : base_(bytes.data()), size_(bytes.size()), function_(function) {}

  /// An arena that only counts.
  static workspace_arena measure() { return workspace_arena(); }

  /// `bytes` aligned to workspace_alignment (null when measuring, or for 0 bytes).
  std::byte* take(std::size_t bytes) {
    if (bytes == 0) { return nullptr; }
    std::size_t const at = align_up(used_);
    used_ = at + bytes;
    high_ = used_ > high_ ? used_ : high_;
    if (base_ == nullptr) { return nullptr; }
    auto const p = reinterpret_cast<std::uintptr_t>(base_);
    std::size_t const skip = (workspace_alignment - p % workspace_alignment) % workspace_alignment;
    FUSEKIT_EXPECTS(skip + used_ <= size_, std::string(function_) + ": workspace has " + std::to_string(size_) +
                                               " bytes, too few for its temporaries (ask the matching "
                                               "*_workspace_bytes function)");
    return base_ + skip + at;
  }

  [[nodiscard]] std::size_t mark() const { return used_; }
  void release(std::size_t mark) { used_ = mark; }

  /// Bytes a workspace needs for every piece taken so far, at any alignment of its start.
  [[nodiscard]] std::size_t bytes_needed() const { return high_ == 0 ? 0 : high_ + workspace_alignment; }

 private:
  workspace_arena() = default;
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  const char* function_ = "";
  std::size_t used_ = 0;
  std::size_t high_ = 0;
};

/// n values of T in device memory: from `arena` when one is given (a caller's
/// workspace: nothing is allocated), else from `policy.memory` in stream order.
template <class T>
class stream_buffer : unique_owner {
 public:
  stream_buffer(const cuda& policy, std::int64_t n, workspace_arena* arena = nullptr) : policy_(policy) {
    std::size_t const bytes = static_cast<std::size_t>(n > 0 ? n : 0) * sizeof(T);
    if (arena != nullptr) {
      data_ = reinterpret_cast<T*>(arena->take(bytes));
    } else if (bytes > 0) {
      bytes_ = bytes;
      data_ = static_cast<T*>(policy_.memory.allocate(bytes_, workspace_alignment, policy_.stream));
    }
  }

  ~stream_buffer() {
    if (bytes_ > 0) { policy_.memory.deallocate(data_, bytes_, workspace_alignment, policy_.stream); }
  }

  [[nodiscard]] T* get() const { return data_; }

 private:
  cuda policy_;
  std::size_t bytes_ = 0;  ///< owned bytes; 0 for none or a workspace's
  T* data_ = nullptr;
};

/// Runs `enqueue(d)` with d a device value of type R, then copies it to the
/// host and synchronizes the stream: how a GPU call returns a host value.
template <class R, class Enqueue>
R device_scalar_result(const cuda& policy, const Enqueue& enqueue, workspace_arena* arena = nullptr) {
  R h{};
  {
    stream_buffer<R> const d(policy, 1, arena);
    enqueue(d.get());
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&h, d.get(), sizeof(R), cudaMemcpyDeviceToHost, policy.stream));
  }
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  return h;
}

/// *p (device memory) as a host value: copied on the policy's stream, which
/// this synchronizes.
template <class R>
R device_value(const cuda& policy, const R* p) {
  R h{};
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&h, p, sizeof(R), cudaMemcpyDeviceToHost, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  return h;
}

/// n values of T where the device reads and writes them: `from` itself when
/// it is device memory, else a stream-ordered device copy, filled from `from`
/// when `upload`. `write_back(wait)` copies the copy back to `from` and then
/// synchronizes the stream when `from` is pageable or `wait` is true, so that
/// the host values are written when it returns; for device memory it neither
/// copies nor waits.
template <class T>
struct on_device {
  on_device(const cuda& policy, T* from, std::int64_t n, memory_space space, bool upload = true)
      : copy(policy, space == memory_space::device ? 0 : n),
        data(space == memory_space::device ? from : copy.get()),
        host(space == memory_space::device ? nullptr : from),
        count(n),
        pageable(space == memory_space::pageable),
        stream(policy.stream) {
    if (host != nullptr && upload && n > 0) {
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(copy.get(), from, bytes(), cudaMemcpyHostToDevice, stream));
    }
  }
  void write_back(bool wait = false) const {
    if (host == nullptr || count == 0) { return; }
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(host, data, bytes(), cudaMemcpyDeviceToHost, stream));
    if (pageable || wait) { FUSEKIT_CUDA_TRY(cudaStreamSynchronize(stream)); }
  }
  std::size_t bytes() const { return static_cast<std::size_t>(count) * sizeof(T); }

  stream_buffer<std::remove_const_t<T>> copy;
  T* data;
  T* host;
  std::int64_t count;
  bool pageable;
  cudaStream_t stream;
};

}  // namespace core
}  // namespace detail
}  // namespace fusekit
