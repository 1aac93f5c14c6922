// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU's host-data pipeline: host-resident data through the GPU at the
/// speed of the bus. Its streams, pinned slots and the driver of the walk in
/// detail/host_data/walk.hpp, which issues the schedule of
/// detail/host_data/plan.hpp.
///
/// Every view of a call is classified once (`memory_space_of`,
/// detail/core/memory_space.hpp: one `cudaPointerGetAttributes` each): device and managed memory is read and
/// written where it is; pinned host memory is copied by DMA straight into and
/// out of device slots; pageable host memory goes through pinned slots, which
/// the host thread fills and empties while the DMA engines move the chunks
/// before and after.
///
/// Streams: kernels run on the caller's stream; uploads and downloads on two
/// streams of fusekit's own (non-blocking, one pair per device and host
/// thread), ordered by events after the work already on the caller's stream,
/// and before the work the caller enqueues next. The call is asynchronous
/// unless the memory kinds forbid it:
/// * pageable input: the host waits for the caller's stream before it reads
///   the input (earlier work may write it), and returns once the last chunk is
///   staged;
/// * pageable output: the host copies each chunk out as it arrives, so the
///   call returns with the output written.
/// Pinned views must stay untouched by the host until the stream reaches the
/// call's end, as with `cudaMemcpyAsync`.

#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/host_data/plan.hpp>
#include <fusekit/detail/host_data/walk.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace host_data {

template <class T>
pipeline_view pipeline_view_of(::cuda::std::span<T> s) {
  return {reinterpret_cast<const std::byte*>(s.data()), sizeof(T), memory_space_of(s.data())};
}

/// A row-major matrix of `columns` columns as a view whose elements are its rows.
template <class T>
pipeline_view rows_view_of(T* data, std::int64_t columns) {
  return {reinterpret_cast<const std::byte*>(data), static_cast<std::size_t>(columns) * sizeof(T),
          memory_space_of(data)};
}

inline constexpr std::int64_t pipeline_vector_align = pipeline_tuning::vector_align;

/// The pipeline's streams and a ring of events, per device and host thread.
struct pipeline_streams {
  cudaStream_t upload = nullptr;
  cudaStream_t download = nullptr;
  std::vector<cudaEvent_t> events;

  /// Events for `count` ops in flight.
  void reserve(std::size_t count) {
    while (events.size() < count) {
      cudaEvent_t e = nullptr;
      FUSEKIT_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      events.push_back(e);
    }
  }
};

/// This thread's streams on the current device (created on first use, kept for the thread).
inline pipeline_streams& pipeline_streams_here() {
  thread_local std::map<int, pipeline_streams> per_device;
  int const device = current_device();
  pipeline_streams& s = per_device[device];
  if (s.upload == nullptr) {
    FUSEKIT_CUDA_TRY(cudaStreamCreateWithFlags(&s.upload, cudaStreamNonBlocking));
    FUSEKIT_CUDA_TRY(cudaStreamCreateWithFlags(&s.download, cudaStreamNonBlocking));
  }
  return s;
}

/// fusekit's cache of pinned staging buffers, per device: a buffer goes back
/// with an event that marks the end of its last use, and is handed out again
/// once that event has passed. Kept for the process (never freed: freeing
/// pinned memory synchronizes the device, and at exit the driver may be gone).
class pinned_cache {
 public:
  struct entry {
    std::byte* data = nullptr;
    std::size_t bytes = 0;
    cudaEvent_t free_after = nullptr;
    bool in_use = false;
  };

  static pinned_cache& instance() {
    static auto* cache = new pinned_cache();  // deliberately never destroyed (see above)
    return *cache;
  }

  /// A buffer of at least `bytes` on the current device, free to write now.
  entry* acquire(std::size_t bytes) {
    int const device = current_device();
    entry* found = nullptr;
    {
      std::lock_guard<std::mutex> const lock(mutex_);
      for (entry* e : per_device_[device]) {
        if (!e->in_use && e->bytes >= bytes && (found == nullptr || e->bytes < found->bytes)) { found = e; }
      }
      if (found == nullptr) {
        auto& list = per_device_[device];
        list.push_back(new entry());
        found = list.back();
        found->bytes = bytes;
      }
      found->in_use = true;
    }
    if (found->data == nullptr) {
      void* p = nullptr;
      FUSEKIT_CUDA_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
      found->data = static_cast<std::byte*>(p);
      FUSEKIT_CUDA_TRY(cudaEventCreateWithFlags(&found->free_after, cudaEventDisableTiming));
    } else {
      FUSEKIT_CUDA_TRY(cudaEventSynchronize(found->free_after));
    }
    return found;
  }

  /// Gives `e` back; it may be reused once `stream` reaches this point.
  void release(entry* e, cudaStream_t stream) noexcept {
    FUSEKIT_CUDA_TRY_NO_THROW(cudaEventRecord(e->free_after, stream));
    std::lock_guard<std::mutex> const lock(mutex_);
    e->in_use = false;
  }

 private:
  std::mutex mutex_;
  // Entries are heap-allocated so their addresses survive the list's growth.
  std::map<int, std::vector<entry*>> per_device_;
};

/// Pinned staging memory for one call: from the policy's resource, or from
/// fusekit's cache. Given back in the destructor, after `end` (an event
/// recorded on the caller's stream at the end of the call) for the cache; a
/// caller's resource gets it back after the host waits for `end`.
class pinned_staging : unique_owner {
 public:
  pinned_staging(const cuda& policy, std::size_t bytes) : policy_(policy), bytes_(bytes) {
    if (bytes_ == 0) { return; }
    if (policy_.pinned.is_default()) {
      entry_ = pinned_cache::instance().acquire(bytes_);
      data_ = entry_->data;
    } else {
      data_ = static_cast<std::byte*>(policy_.pinned.allocate(bytes_, workspace_alignment));
    }
  }
  ~pinned_staging() {
    if (bytes_ == 0) { return; }
    if (entry_ != nullptr) {
      pinned_cache::instance().release(entry_, policy_.stream);
    } else {
      FUSEKIT_CUDA_TRY_NO_THROW(cudaStreamSynchronize(policy_.stream));
      policy_.pinned.deallocate(data_, bytes_, workspace_alignment);
    }
  }
  [[nodiscard]] std::byte* get() const { return data_; }

 private:
  cuda policy_;
  std::size_t bytes_ = 0;
  pinned_cache::entry* entry_ = nullptr;
  std::byte* data_ = nullptr;
};

/// Elements per chunk for views at most `widest` bytes wide, a multiple of `align`.
inline std::int64_t pipeline_chunk_for(const cuda& policy, std::size_t widest, std::int64_t align) {
  pipeline_tuning const tune = tuning_of(policy).pipeline;
  FUSEKIT_EXPECTS(tune.chunk_bytes > 0 && tune.depth > 0 && tune.host_copy_threads >= 0,
                  "fusekit: tuning.pipeline needs chunk_bytes > 0, depth > 0 and host_copy_threads >= 0");
  return pipeline_chunk(std::max<std::int64_t>(tune.chunk_bytes / static_cast<std::int64_t>(widest), 1), align);
}

/// The walk's driver on the GPU (detail/host_data/walk.hpp): compute on the
/// caller's stream, copies on this thread's upload and download streams,
/// device slots from the policy's resource, pinned slots from its pinned resource.
class cuda_pipeline_driver {
 public:
  cuda_pipeline_driver(const cuda& policy, pipeline_streams& streams, int copy_threads)
      : policy_(policy), streams_(streams), copy_threads_(copy_threads) {}

  /// Device and pinned slots of one call, given back in stream order on the caller's stream.
  class slots {
   public:
    slots(const cuda& policy, std::size_t device_bytes, std::size_t pinned_bytes)
        : device_(policy, static_cast<std::int64_t>(device_bytes)), pinned_(policy, pinned_bytes) {}
    [[nodiscard]] std::byte* device() const { return device_.get(); }
    [[nodiscard]] std::byte* pinned() const { return pinned_.get(); }

   private:
    stream_buffer<std::byte> device_;
    pinned_staging pinned_;
  };

  [[nodiscard]] slots staging(std::size_t device_bytes, std::size_t pinned_bytes) const {
    return slots(policy_, device_bytes, pinned_bytes);
  }

  [[nodiscard]] cudaStream_t stream(pipeline_queue q) const {
    switch (q) {
      case pipeline_queue::upload:
        return streams_.upload;
      case pipeline_queue::download:
        return streams_.download;
      default:
        return policy_.stream;
    }
  }
  void reserve_events(std::size_t count) {
    streams_.reserve(count + 2);  // two more for join()
    joins_ = count;
  }
  void record(pipeline_queue q, std::size_t e) const {
    FUSEKIT_CUDA_TRY(cudaEventRecord(streams_.events[e], stream(q)));
  }
  void wait(pipeline_queue q, std::size_t e) const {
    FUSEKIT_CUDA_TRY(cudaStreamWaitEvent(stream(q), streams_.events[e], 0));
  }
  void host_wait(std::size_t e) const { FUSEKIT_CUDA_TRY(cudaEventSynchronize(streams_.events[e])); }
  void copy(pipeline_queue q, std::byte* dst, const std::byte* src, std::size_t bytes, bool to_device) const {
    FUSEKIT_CUDA_TRY(
        cudaMemcpyAsync(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream(q)));
  }
  void host_copy(std::byte* dst, const std::byte* src, std::size_t bytes) const {
    detail::host_copy(dst, src, bytes, copy_threads_);
  }
  /// The caller's stream goes on after every copy issued so far (never throws:
  /// it also runs when the walk throws).
  void join() const noexcept {
    if (streams_.events.size() < joins_ + 2) { return; }  // nothing was issued
    for (std::size_t side = 0; side < 2; ++side) {
      cudaEvent_t const e = streams_.events[joins_ + side];
      FUSEKIT_CUDA_TRY_NO_THROW(cudaEventRecord(e, side == 0 ? streams_.upload : streams_.download));
      FUSEKIT_CUDA_TRY_NO_THROW(cudaStreamWaitEvent(policy_.stream, e, 0));
    }
  }

 private:
  cuda policy_;
  pipeline_streams& streams_;
  int copy_threads_;
  std::size_t joins_ = 0;
};

/// Moves n elements of the inputs `ins` (and of `out`, when out.data is not
/// null) through the GPU in chunks of a multiple of `align` elements, and runs
/// `compute(stream, chunk, begin, count, in_pointers, out_pointer)` on each
/// chunk (`chunk`: its index), on the caller's stream, with device pointers to
/// the chunk's elements. Chunks hold `pipeline_chunk_for(policy, widest, align)`
/// elements, the last one fewer.
template <std::size_t I, class Compute>
void run_pipeline(const cuda& policy, std::int64_t n, std::int64_t align, const std::array<pipeline_view, I>& ins,
                  const pipeline_view& out, const Compute& compute) {
  if (n <= 0) { return; }
  pipeline_tuning const tune = tuning_of(policy).pipeline;
  pipeline_shape const shape =
      shape_of(n, pipeline_chunk_for(policy, widest_element(ins, out), align), align, tune.depth, ins, out);
  cuda_pipeline_driver driver(policy, pipeline_streams_here(),
                              tune.host_copy_threads > 0 ? tune.host_copy_threads : default_host_copy_threads());
  walk_pipeline(driver, shape, ins, out, compute);
}

}  // namespace host_data
}  // namespace detail
}  // namespace fusekit
