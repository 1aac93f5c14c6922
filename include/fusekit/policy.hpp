// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Execution policies. Every fusekit algorithm takes one as its first argument,
/// and the policy carries the resources the call may use.
///
///     fusekit::cuda gpu{stream};                  // temporaries from fusekit's pool, in stream order
///     fusekit::cuda pooled{stream, my_pool};      // any cuda::mr-style async resource, e.g. an rmm pool
///     fusekit::cpu host{4};                       // the calling thread and up to three helpers
///
/// * `fusekit::cuda{stream, memory}` — runs on the current CUDA device,
///   asynchronously on `stream` (a `cudaStream_t` or `cuda::stream_ref`; default:
///   the legacy default stream). Temporaries come from `memory` in stream order
///   (default: a stream-ordered pool of fusekit's own per device, which keeps
///   what calls need mapped between them; the device's default pool is left
///   alone), and the staging buffers of calls on pageable
///   host memory from `pinned` (default: a cache of pinned buffers that calls
///   reuse); a call allocates through nothing else. A call
///   never synchronizes unless it returns a host value and says so. Device
///   attributes and occupancy are queried once per device and kernel, and the
///   trainer's cuBLAS handle is cached per device and host thread. Launch
///   shapes come from `tuning_for(compute capability)`, or from the caller's
///   `policy.with(tuning)` (tuning.hpp).
/// * `fusekit::cpu{threads}` — runs on the host: on the calling thread and up to
///   `threads − 1` helper threads of fusekit's pool that are running; a call
///   never waits for a helper that has not taken a chunk of its work
///   (`threads == 0`: the process default, threads.hpp). Synchronous. A
///   negative count throws `fusekit::invalid_argument`; more than 4 threads per
///   processor are clamped to 4 per processor. Small calls run on the calling
///   thread alone.
///
/// Both policies exist for every compiler. A translation unit compiled by a
/// host compiler can name `fusekit::cuda`, but an algorithm called with it
/// there fails to compile with a message that names the .cuh header (and the
/// nvcc build) it needs; the CPU backend needs CCCL's headers alone.

#include <fusekit/config.hpp>
#include <fusekit/detail/base/resources.hpp>
#include <fusekit/error.hpp>
#include <fusekit/tuning.hpp>

#if FUSEKIT_HAS_CUDA_HEADERS
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>
#else
// The CUDA runtime's own declaration (driver_types.h), repeated so that the
// policy type exists for a host compiler that has CCCL's headers alone.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
#endif

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <type_traits>
#include <utility>

namespace fusekit {

/// A non-owning reference to a stream-ordered device memory resource: any
/// object with the `cuda::mr` async-resource interface
///
///     void* allocate_async(std::size_t bytes, std::size_t alignment, cuda::stream_ref stream);
///     void  deallocate_async(void* p, std::size_t bytes, std::size_t alignment, cuda::stream_ref stream);
///
/// (a CCCL `cuda::mr` resource or `async_resource_ref`, an rmm memory resource
/// or `rmm::device_async_resource_ref`). The resource must outlive the calls
/// that use it. Default-constructed: `cudaMallocFromPoolAsync` from a pool of
/// fusekit's own per device, which keeps up to 128 MiB mapped between calls
/// (`detail::default_pool_keep_bytes`), and `cudaFreeAsync`.
class memory_resource_ref {
 public:
  constexpr memory_resource_ref() noexcept = default;

#if FUSEKIT_HAS_CUDA_HEADERS
  template <class R, std::enable_if_t<detail::is_async_resource<R>::value &&
                                          !std::is_same_v<std::remove_cv_t<R>, memory_resource_ref>,
                                      int> = 0>
  memory_resource_ref(R& resource) noexcept  // NOLINT: implicit, like cuda::mr::async_resource_ref
      : object_(&resource), allocate_(&allocate_with<R>), deallocate_(&deallocate_with<R>) {}

  /// `bytes` of device memory aligned to `alignment`, usable in stream order on `stream`.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment, cudaStream_t stream) const {
    if (object_ != nullptr) { return allocate_(object_, bytes, alignment, stream); }
    cudaMemPool_t pool = nullptr;
    FUSEKIT_CUDA_TRY(detail::find_default_device_pool(pool));
    void* p = nullptr;
    FUSEKIT_CUDA_TRY(cudaMallocFromPoolAsync(&p, bytes, pool, stream));  // ≥ 256-byte aligned
    return p;
  }

  /// Gives back what `allocate` returned, in stream order. Never throws: a
  /// failure is reported on stderr (it runs in destructors).
  void deallocate(void* p, std::size_t bytes, std::size_t alignment, cudaStream_t stream) const noexcept {
    if (object_ == nullptr) {
      FUSEKIT_CUDA_TRY_NO_THROW(cudaFreeAsync(p, stream));
      return;
    }
    try {
      deallocate_(object_, p, bytes, alignment, stream);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fusekit: a memory resource failed to deallocate: %s\n", e.what());
    } catch (...) { std::fprintf(stderr, "fusekit: a memory resource failed to deallocate\n"); }
  }

#endif

  /// Whether this is the default (fusekit's own pool).
  [[nodiscard]] bool is_default() const noexcept { return object_ == nullptr; }

 private:
#if FUSEKIT_HAS_CUDA_HEADERS
  template <class R>
  static void* allocate_with(void* r, std::size_t bytes, std::size_t alignment, cudaStream_t s) {
    return static_cast<R*>(r)->allocate_async(bytes, alignment, ::cuda::stream_ref(s));
  }
  template <class R>
  static void deallocate_with(void* r, void* p, std::size_t bytes, std::size_t alignment, cudaStream_t s) {
    static_cast<R*>(r)->deallocate_async(p, bytes, alignment, ::cuda::stream_ref(s));
  }
#endif

  // The referenced resource, type-erased, and its two operations; a null
  // object is fusekit's own pool.
  void* object_ = nullptr;
  void* (*allocate_)(void*, std::size_t, std::size_t, cudaStream_t) = nullptr;
  void (*deallocate_)(void*, void*, std::size_t, std::size_t, cudaStream_t) = nullptr;
};

/// A non-owning reference to a synchronous resource of page-locked (pinned)
/// host memory: any object with
///
///     void* allocate(std::size_t bytes, std::size_t alignment);
///     void  deallocate(void* p, std::size_t bytes, std::size_t alignment);
///
/// (e.g. `cuda::mr::pinned_memory_resource`, `rmm::mr::pinned_host_memory_resource`).
/// The staging buffers of calls on pageable host memory come from it.
/// Default-constructed: fusekit's own cache of `cudaHostAlloc` buffers, kept for
/// the process and reused from call to call.
class pinned_resource_ref {
 public:
  constexpr pinned_resource_ref() noexcept = default;

#if FUSEKIT_HAS_CUDA_HEADERS
  template <class R, std::enable_if_t<detail::is_host_resource<R>::value &&
                                          !std::is_same_v<std::remove_cv_t<R>, pinned_resource_ref>,
                                      int> = 0>
  pinned_resource_ref(R& resource) noexcept  // NOLINT: implicit, like memory_resource_ref
      : object_(&resource), allocate_(&allocate_with<R>), deallocate_(&deallocate_with<R>) {}

  /// `bytes` of pinned host memory from the caller's resource (not for the default).
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment) const {
    return allocate_(object_, bytes, alignment);
  }
  /// Gives back what `allocate` returned; never throws (a failure goes to stderr).
  void deallocate(void* p, std::size_t bytes, std::size_t alignment) const noexcept {
    try {
      deallocate_(object_, p, bytes, alignment);
    } catch (...) { std::fprintf(stderr, "fusekit: a pinned memory resource failed to deallocate\n"); }
  }
#endif

  /// Whether this is the default (fusekit's cache).
  [[nodiscard]] bool is_default() const noexcept { return object_ == nullptr; }

 private:
#if FUSEKIT_HAS_CUDA_HEADERS
  template <class R>
  static void* allocate_with(void* r, std::size_t bytes, std::size_t alignment) {
    return static_cast<R*>(r)->allocate(bytes, alignment);
  }
  template <class R>
  static void deallocate_with(void* r, void* p, std::size_t bytes, std::size_t alignment) {
    static_cast<R*>(r)->deallocate(p, bytes, alignment);
  }
#endif

  // The referenced resource, type-erased, and its two operations.
  void* object_ = nullptr;
  void* (*allocate_)(void*, std::size_t, std::size_t) = nullptr;
  void (*deallocate_)(void*, void*, std::size_t, std::size_t) = nullptr;
};

/// Run on the current CUDA device, in stream order on `stream`, with
/// temporaries from `memory` and pinned staging buffers from `pinned` (see the
/// file comment).
///
/// A policy is a small value: copy it freely, keep one per stream. It refers to
/// its resources and does not own them; they must outlive every call that
/// uses them (and every call still in flight on the stream).
struct cuda {
  cudaStream_t stream = nullptr;  ///< where calls run; nullptr: the legacy default stream
  memory_resource_ref memory{};   ///< device temporaries; default: fusekit's pool per device
  pinned_resource_ref pinned{};   ///< host-data staging; default: fusekit's pinned cache
  fusekit::tuning tune{};         ///< used when `tuned`; else tuning_for(the device's compute capability)
  bool tuned = false;             ///< whether `tune` replaces the device's tuning (set by `with`)

  /// The legacy default stream, fusekit's pool and pinned cache.
  constexpr cuda() noexcept = default;
  /// Stream `s`, temporaries from `m`, staging from `p` (the defaults when empty).
  constexpr cuda(cudaStream_t s, memory_resource_ref m = {}, pinned_resource_ref p = {}) noexcept  // NOLINT
      : stream(s), memory(m), pinned(p) {}
#if FUSEKIT_HAS_CUDA_HEADERS
  /// As above, from a `cuda::stream_ref` (CCCL's stream type).
  cuda(::cuda::stream_ref s, memory_resource_ref m = {}, pinned_resource_ref p = {}) noexcept  // NOLINT
      : stream(s.get()), memory(m), pinned(p) {}
#endif

  /// This policy with the caller's tuning in place of the device's (tuning.hpp):
  /// `fusekit::cuda{stream}.with(t)`, for a benchmark that sweeps a launch
  /// shape, or for a device whose measured tuning differs from the table's.
  [[nodiscard]] constexpr cuda with(const fusekit::tuning& t) const noexcept {
    cuda c = *this;
    c.tune = t;
    c.tuned = true;
    return c;
  }
};

/// Run on the GPU as `fusekit::cuda` does, with views in host memory as well:
/// an input in host memory is copied in pipelined chunks through pinned
/// buffers while the kernels work on the chunks before it, and an output in
/// host memory is copied back the same way (docs/host-data.md). Device views
/// go straight to the kernels. Include <fusekit/host_data.cuh>.
///
///     std::vector<float> x(n);                                   // host memory
///     float s = fusekit::sum(fusekit::cuda_staged{stream}, x);   // one call, pipelined copies
///
/// `fusekit::cuda` takes device memory only, and compiles no staging: a host
/// pointer passed to it is rejected with a message that names this policy.
struct cuda_staged : cuda {
  using cuda::cuda;
  constexpr cuda_staged() noexcept = default;
  /// The GPU policy `c` (its stream, resources and tuning), staging host memory.
  explicit constexpr cuda_staged(const cuda& c) noexcept : cuda(c) {}
  /// This policy with the caller's tuning (as `cuda::with`).
  [[nodiscard]] constexpr cuda_staged with(const fusekit::tuning& t) const noexcept {
    return cuda_staged(cuda::with(t));
  }
};

/// Run on the host. `threads == 0`: the process default (threads.hpp); see the file comment for the limits.
/// `deterministic` reductions and fits do not depend on the thread count
/// (they add in a fixed order), so `cpu{1}` and `cpu{16}` give the same bits;
/// the other reduction algorithms may change with it, as on the GPU.
struct cpu {
  int threads =
      0;  ///< threads at most, the caller's included; 0: the process default; negative: rejected by every call
};

/// Number of CUDA devices usable by this process; 0 when there is none, when
/// there is no driver (`cudaGetDeviceCount` fails and leaves its output
/// unwritten then), or when the file was compiled without the CUDA toolkit's
/// headers.
inline int cuda_device_count() noexcept {
#if !FUSEKIT_HAS_CUDA_HEADERS
  return 0;  // built without the CUDA runtime: no device is usable from here
#else
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
#endif
}

/// Whether a CUDA device is present (the examples pick their policy with it):
///
///     if (fusekit::has_cuda_device()) { run(fusekit::cuda{stream}); } else { run(fusekit::cpu{}); }
///
/// Never throws: no driver, or a driver too old, is "no device".
inline bool has_cuda_device() noexcept { return cuda_device_count() > 0; }

}  // namespace fusekit
