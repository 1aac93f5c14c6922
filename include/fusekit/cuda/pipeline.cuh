// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Host-resident data through the GPU at the speed of the bus: the driver that
/// walks the schedule of detail/pipeline_plan.hpp.
///
/// Every view of a call is classified once (`memory_space_of`, one
/// `cudaPointerGetAttributes` each): device and managed memory is read and
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

#include <fusekit/cuda/buffer.cuh>
#include <fusekit/cuda/launch.cuh>
#include <fusekit/detail/pipeline_plan.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace fusekit {
namespace detail {

/// Where a view's memory lives, as a call on `fusekit::cuda` must treat it.
enum class memory_space : std::uint8_t {
  device,    ///< device or managed memory: kernels read and write it in place
  pinned,    ///< page-locked host memory: copied by DMA
  pageable,  ///< ordinary host memory: staged through pinned buffers
};

/// The memory space of `p` (null, for an empty view: device).
inline memory_space memory_space_of(const void* p) {
  if (p == nullptr) { return memory_space::device; }
  cudaPointerAttributes a{};
  FUSEKIT_CUDA_TRY(cudaPointerGetAttributes(&a, p));
  switch (a.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged: return memory_space::device;
    case cudaMemoryTypeHost: return memory_space::pinned;
    default: return memory_space::pageable;
  }
}

/// One view of a pipelined call: its bytes per element and where it lives.
struct pipeline_view {
  const std::byte* data = nullptr;
  std::size_t element_bytes = 0;
  memory_space space = memory_space::device;
};

template <class T>
pipeline_view pipeline_view_of(::cuda::std::span<T> s) {
  return {reinterpret_cast<const std::byte*>(s.data()), sizeof(T), memory_space_of(s.data())};
}

/// Whether any of the views is host memory (then the call takes the pipeline).
template <std::size_t I>
bool any_on_host(const std::array<pipeline_view, I>& views) {
  auto const on_host = [](const pipeline_view& v) { return v.space != memory_space::device; };
  return std::any_of(views.begin(), views.end(), on_host);
}

/// Chunks of elementwise work start on multiples of this many elements, so that
/// each chunk keeps the vector alignment of a whole view.
inline constexpr std::int64_t pipeline_vector_align = 64;

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
class pinned_staging {
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
  pinned_staging(const pinned_staging&) = delete;
  pinned_staging& operator=(const pinned_staging&) = delete;
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

/// Copies `bytes` on the host; large copies split over a few threads, since
/// one core moves pageable memory at only about a third of the bus's rate.
inline void host_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
  constexpr std::size_t per_thread = std::size_t{1} << 20;
  unsigned const hw = std::thread::hardware_concurrency();
  std::size_t const threads = std::min<std::size_t>({bytes / per_thread, hw > 1 ? hw / 2 : 1, 4});
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  std::size_t const part = (bytes / threads + 63) / 64 * 64;
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    std::size_t const begin = t * part;
    if (begin >= bytes) { break; }
    std::size_t const count = std::min(part, bytes - begin);
    pool.emplace_back([=] { std::memcpy(dst + begin, src + begin, count); });
  }
  std::memcpy(dst, src, std::min(part, bytes));
  for (std::thread& t : pool) { t.join(); }
}

/// Elements per chunk for views at most `widest` bytes wide, a multiple of `align`.
inline std::int64_t pipeline_chunk_for(const cuda& policy, std::size_t widest, std::int64_t align) {
  pipeline_tuning const tune = tuning_of(policy).pipeline;
  FUSEKIT_EXPECTS(tune.chunk_bytes > 0 && tune.depth > 0,
                  "fusekit: tuning.pipeline needs chunk_bytes > 0 and depth > 0");
  return pipeline_chunk(std::max<std::int64_t>(tune.chunk_bytes / static_cast<std::int64_t>(widest), 1), align);
}

/// The widest element of the views (1 for none).
template <std::size_t I>
std::size_t widest_element(const std::array<pipeline_view, I>& ins, const pipeline_view& out) {
  std::size_t widest = out.data != nullptr ? out.element_bytes : 1;
  for (const pipeline_view& v : ins) { widest = std::max(widest, v.element_bytes); }
  return widest;
}

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
  bool const has_out = out.data != nullptr;
  pipeline_shape shape;
  shape.n = n;
  shape.chunk = pipeline_chunk_for(policy, widest_element(ins, out), align);
  shape.align = align;
  shape.depth = tuning_of(policy).pipeline.depth;
  for (const pipeline_view& v : ins) {
    shape.upload = shape.upload || v.space != memory_space::device;
    shape.stage_in = shape.stage_in || v.space == memory_space::pageable;
  }
  shape.download = has_out && out.space != memory_space::device;
  shape.stage_out = has_out && out.space == memory_space::pageable;
  std::int64_t const chunk = pipeline_chunk(shape.chunk, align);
  auto const slot_bytes = [&](const pipeline_view& v) {
    return align_up(static_cast<std::size_t>(chunk) * v.element_bytes);
  };

  // Device slots for every host view, pinned slots for every pageable one.
  std::array<std::size_t, I> device_at{}, pinned_at{};
  std::size_t device_bytes = 0, pinned_bytes = 0;
  for (std::size_t k = 0; k < I; ++k) {
    if (ins[k].space != memory_space::device) {
      device_at[k] = device_bytes;
      device_bytes += slot_bytes(ins[k]) * static_cast<std::size_t>(shape.depth);
    }
    if (ins[k].space == memory_space::pageable) {
      pinned_at[k] = pinned_bytes;
      pinned_bytes += slot_bytes(ins[k]) * static_cast<std::size_t>(shape.depth);
    }
  }
  std::size_t const out_device_at = device_bytes, out_pinned_at = pinned_bytes;
  if (shape.download) { device_bytes += slot_bytes(out) * static_cast<std::size_t>(shape.depth); }
  if (shape.stage_out) { pinned_bytes += slot_bytes(out) * static_cast<std::size_t>(shape.depth); }

  stream_buffer<std::byte> const device_slots(policy, static_cast<std::int64_t>(device_bytes));
  pinned_staging const pinned_slots(policy, pinned_bytes);
  pipeline_streams& streams = pipeline_streams_here();
  std::vector<pipeline_op> const ops = plan_pipeline(shape);
  // Dependencies reach back at most `depth` chunks of at most 5 ops each.
  std::size_t const ring = 5 * (static_cast<std::size_t>(shape.depth) + 2);
  streams.reserve(ring + 1);
  cudaEvent_t const start = streams.events[ring];

  // Start after the work already on the caller's stream.
  FUSEKIT_CUDA_TRY(cudaEventRecord(start, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamWaitEvent(streams.upload, start, 0));
  FUSEKIT_CUDA_TRY(cudaStreamWaitEvent(streams.download, start, 0));
  if (shape.stage_in) { FUSEKIT_CUDA_TRY(cudaEventSynchronize(start)); }

  auto const stream_of = [&](pipeline_op_kind k) {
    switch (queue_of(k)) {
      case pipeline_queue::upload: return streams.upload;
      case pipeline_queue::download: return streams.download;
      default: return policy.stream;
    }
  };
  auto const event_of = [&](std::int64_t op) { return streams.events[static_cast<std::size_t>(op) % ring]; };
  auto const slot_offset = [&](const pipeline_view& v, const pipeline_op& op) {
    return slot_bytes(v) * static_cast<std::size_t>(op.slot);
  };
  auto const bytes_of = [&](const pipeline_view& v, const pipeline_op& op) {
    return static_cast<std::size_t>(op.count) * v.element_bytes;
  };
  auto const at = [&](const pipeline_view& v, const pipeline_op& op) {
    return v.data + static_cast<std::size_t>(op.begin) * v.element_bytes;
  };

  for (std::size_t k = 0; k < ops.size(); ++k) {
    const pipeline_op& op = ops[k];
    bool const on_host = queue_of(op.kind) == pipeline_queue::host;
    cudaStream_t const stream = stream_of(op.kind);
    for (std::int64_t a : op.after) {
      if (a < 0) { continue; }
      pipeline_op_kind const dep = ops[static_cast<std::size_t>(a)].kind;
      if (queue_of(dep) == pipeline_queue::host) { continue; }  // done: the host ran it already
      if (on_host) {
        FUSEKIT_CUDA_TRY(cudaEventSynchronize(event_of(a)));
      } else if (queue_of(dep) != queue_of(op.kind)) {
        FUSEKIT_CUDA_TRY(cudaStreamWaitEvent(stream, event_of(a), 0));
      }
    }
    switch (op.kind) {
      case pipeline_op_kind::stage_in:
        for (std::size_t v = 0; v < I; ++v) {
          if (ins[v].space != memory_space::pageable) { continue; }
          host_copy(pinned_slots.get() + pinned_at[v] + slot_offset(ins[v], op), at(ins[v], op), bytes_of(ins[v], op));
        }
        break;
      case pipeline_op_kind::upload:
        for (std::size_t v = 0; v < I; ++v) {
          if (ins[v].space == memory_space::device) { continue; }
          const std::byte* from = ins[v].space == memory_space::pinned
                                      ? at(ins[v], op)
                                      : pinned_slots.get() + pinned_at[v] + slot_offset(ins[v], op);
          FUSEKIT_CUDA_TRY(cudaMemcpyAsync(device_slots.get() + device_at[v] + slot_offset(ins[v], op), from,
                                           bytes_of(ins[v], op), cudaMemcpyHostToDevice, stream));
        }
        break;
      case pipeline_op_kind::compute: {
        std::array<const std::byte*, I> in_chunk{};
        for (std::size_t v = 0; v < I; ++v) {
          in_chunk[v] = ins[v].space == memory_space::device
                            ? at(ins[v], op)
                            : device_slots.get() + device_at[v] + slot_offset(ins[v], op);
        }
        std::byte* out_chunk = nullptr;
        if (has_out) {
          out_chunk = shape.download ? device_slots.get() + out_device_at + slot_offset(out, op)
                                     : const_cast<std::byte*>(at(out, op));
        }
        compute(stream, op.chunk, op.begin, op.count, in_chunk, out_chunk);
        break;
      }
      case pipeline_op_kind::download: {
        std::byte* to = shape.stage_out ? pinned_slots.get() + out_pinned_at + slot_offset(out, op)
                                        : const_cast<std::byte*>(at(out, op));
        FUSEKIT_CUDA_TRY(cudaMemcpyAsync(to, device_slots.get() + out_device_at + slot_offset(out, op),
                                         bytes_of(out, op), cudaMemcpyDeviceToHost, stream));
        break;
      }
      case pipeline_op_kind::stage_out:
        host_copy(const_cast<std::byte*>(at(out, op)), pinned_slots.get() + out_pinned_at + slot_offset(out, op),
                  bytes_of(out, op));
        break;
    }
    if (!on_host) { FUSEKIT_CUDA_TRY(cudaEventRecord(event_of(static_cast<std::int64_t>(k)), stream)); }
  }

  // The caller's stream goes on after every copy of the call.
  cudaEvent_t const end_upload = streams.events[0], end_download = streams.events[1];
  FUSEKIT_CUDA_TRY(cudaEventRecord(end_upload, streams.upload));
  FUSEKIT_CUDA_TRY(cudaEventRecord(end_download, streams.download));
  FUSEKIT_CUDA_TRY(cudaStreamWaitEvent(policy.stream, end_upload, 0));
  FUSEKIT_CUDA_TRY(cudaStreamWaitEvent(policy.stream, end_download, 0));
}

}  // namespace detail
}  // namespace fusekit
