// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The host-data pipeline's walk: it issues the ops of detail/pipeline_plan.hpp
/// through a *driver*, in plain C++, so that the CPU tests run it over a fake
/// driver (host memory for every slot, a log of every call) and the GPU runs
/// it over cuda/pipeline.cuh's driver unchanged. Also the threaded host copy
/// that stages pageable memory.
///
/// A driver offers, with `q` a pipeline_queue and `e` an event index:
///
/// | member                                  | what it does                                      |
/// |-----------------------------------------|---------------------------------------------------|
/// | `stream(q)`                             | the stream the compute callback gets              |
/// | `reserve_events(count)`                 | events 0 … count − 1 exist                        |
/// | `record(q, e)` / `wait(q, e)`           | record e on q's stream / make q wait for e        |
/// | `host_wait(e)`                          | block the host until e has passed                 |
/// | `copy(q, dst, src, bytes, to_device)`   | an asynchronous copy on q's stream                |
/// | `host_copy(dst, src, bytes)`            | a copy on the host, now                           |
/// | `staging(device_bytes, pinned_bytes)`   | an owner of the slots: `device()`, `pinned()`     |
/// | `join()` (noexcept)                     | the caller's stream waits for both copy streams   |
///
/// The staging is released in stream order on the caller's stream, so the walk
/// joins the copy streams into it before the staging's owner goes out of
/// scope, whether the walk ends or throws: no slot is handed back while a copy
/// may still read or write it.

#include <fusekit/detail/pipeline_plan.hpp>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

/// One view of a pipelined call: its bytes per element and where it lives.
struct pipeline_view {
  const std::byte* data = nullptr;
  std::size_t element_bytes = 0;
  memory_space space = memory_space::device;
};

/// Whether any of the views is host memory (then the call takes the pipeline).
template <std::size_t I>
bool any_on_host(const std::array<pipeline_view, I>& views) {
  auto const on_host = [](const pipeline_view& v) { return v.space != memory_space::device; };
  return std::any_of(views.begin(), views.end(), on_host);
}

/// The widest element of the views (1 for none).
template <std::size_t I>
std::size_t widest_element(const std::array<pipeline_view, I>& ins, const pipeline_view& out) {
  std::size_t widest = out.data != nullptr ? out.element_bytes : 1;
  for (const pipeline_view& v : ins) { widest = std::max(widest, v.element_bytes); }
  return widest;
}

/// The shape of a call over these views: n elements in chunks of `chunk`
/// (already a multiple of `align`), and which copies their memory kinds need.
template <std::size_t I>
pipeline_shape shape_of(std::int64_t n, std::int64_t chunk, std::int64_t align, int depth,
                        const std::array<pipeline_view, I>& ins, const pipeline_view& out) {
  pipeline_shape shape;
  shape.n = n;
  shape.chunk = chunk;
  shape.align = align;
  shape.depth = depth;
  for (const pipeline_view& v : ins) {
    shape.upload = shape.upload || v.space != memory_space::device;
    shape.stage_in = shape.stage_in || v.space == memory_space::pageable;
  }
  bool const has_out = out.data != nullptr;
  shape.download = has_out && out.space != memory_space::device;
  shape.stage_out = has_out && out.space == memory_space::pageable;
  return shape;
}

// ---- the threaded host copy ---------------------------------------------------

/// Bytes below which a part of a host copy is not worth a thread of its own.
inline constexpr std::size_t host_copy_min_part = std::size_t{1} << 20;

/// Threads a host copy uses when the tuning leaves it to fusekit: half the
/// processors, at most 4 (one core moves pageable memory at about a third of
/// the bus's rate; more threads than that only contend).
inline int default_host_copy_threads() {
  unsigned const hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::min<unsigned>(hw > 1 ? hw / 2 : 1, 4));
}

/// Helper threads for large host copies: started on first use, as many as
/// the largest copy asked for, and reused by every copy after (a copy per
/// chunk would otherwise start and join threads per chunk). One copy at a
/// time uses them; a host thread that finds them busy copies alone.
class host_copy_pool {
 public:
  static host_copy_pool& instance() {
    static host_copy_pool pool;  // its destructor stops and joins the threads at exit
    return pool;
  }

  /// Copies `bytes` from src to dst in `threads` parts, the calling thread
  /// taking the first; false, with nothing copied, when another copy holds the pool.
  bool try_copy(std::byte* dst, const std::byte* src, std::size_t bytes, int threads) {
    std::unique_lock<std::mutex> const busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) { return false; }
    auto const parts = static_cast<std::size_t>(threads);
    std::size_t const part = ((bytes + parts - 1) / parts + 63) / 64 * 64;  // parts × part ≥ bytes
    {
      std::lock_guard<std::mutex> const lock(mutex_);
      while (workers_.size() + 1 < parts) {
        workers_.emplace_back([this] { work(); });
      }
      jobs_.clear();
      for (std::size_t t = 1; t < parts && t * part < bytes; ++t) {
        jobs_.push_back({dst + t * part, src + t * part, std::min(part, bytes - t * part)});
      }
      next_ = 0;
      pending_ = jobs_.size();
    }
    wake_.notify_all();
    std::memcpy(dst, src, std::min(part, bytes));
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    return true;
  }

  /// Helper threads started so far.
  std::size_t threads_started() {
    std::lock_guard<std::mutex> const lock(mutex_);
    return workers_.size();
  }

  host_copy_pool(const host_copy_pool&) = delete;
  host_copy_pool& operator=(const host_copy_pool&) = delete;

 private:
  struct job {
    std::byte* dst;
    const std::byte* src;
    std::size_t bytes;
  };

  host_copy_pool() = default;
  ~host_copy_pool() {
    {
      std::lock_guard<std::mutex> const lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) { t.join(); }
  }

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || next_ < jobs_.size(); });
      if (stop_) { return; }
      job const j = jobs_[next_++];
      lock.unlock();
      std::memcpy(j.dst, j.src, j.bytes);
      lock.lock();
      if (--pending_ == 0) { done_.notify_all(); }
    }
  }

  std::mutex busy_;   ///< held by the copy that uses the threads
  std::mutex mutex_;  ///< guards everything below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::vector<job> jobs_;
  std::size_t next_ = 0, pending_ = 0;
  bool stop_ = false;
};

/// Copies `bytes` on the host with up to `threads` threads (1 MiB or more per
/// thread; `threads` ≤ 1 or a small copy: memcpy on the calling thread).
inline void host_copy(std::byte* dst, const std::byte* src, std::size_t bytes, int threads) {
  if (bytes == 0) { return; }  // an empty view's pointers may be null, which memcpy may not take
  std::size_t const parts =
      std::min<std::size_t>(threads > 1 ? static_cast<std::size_t>(threads) : 1, bytes / host_copy_min_part);
  if (parts <= 1 || !host_copy_pool::instance().try_copy(dst, src, bytes, static_cast<int>(parts))) {
    std::memcpy(dst, src, bytes);
  }
}

// ---- the walk ---------------------------------------------------------------

/// Bytes of one staging slot of `v` (256-byte aligned, like every temporary).
inline std::size_t pipeline_slot_bytes(const pipeline_view& v, const pipeline_staging& st) {
  std::size_t const bytes = static_cast<std::size_t>(st.elements) * v.element_bytes;
  return (bytes + 255) / 256 * 256;
}

/// Issues the ops of `plan_pipeline(shape)` through `driver`, with `compute(stream,
/// chunk, begin, count, in_pointers, out_pointer)` run on each chunk on the
/// caller's stream with device pointers to the chunk's elements (see
/// cuda/pipeline.cuh's run_pipeline, its caller). `shape` must come from
/// `shape_of` for these views.
template <class Driver, std::size_t I, class Compute>
void walk_pipeline(Driver& driver, const pipeline_shape& shape, const std::array<pipeline_view, I>& ins,
                   const pipeline_view& out, const Compute& compute) {
  if (shape.n <= 0) { return; }
  bool const has_out = out.data != nullptr;
  pipeline_staging const st = staging_for(shape);
  auto const slot_bytes = [&](const pipeline_view& v) { return pipeline_slot_bytes(v, st); };

  // Device slots for every host view, pinned slots for every pageable one.
  std::array<std::size_t, I> device_at{}, pinned_at{};
  std::size_t device_bytes = 0, pinned_bytes = 0;
  auto const slots = static_cast<std::size_t>(st.slots);
  for (std::size_t k = 0; k < I; ++k) {
    if (ins[k].space != memory_space::device) {
      device_at[k] = device_bytes;
      device_bytes += slot_bytes(ins[k]) * slots;
    }
    if (ins[k].space == memory_space::pageable) {
      pinned_at[k] = pinned_bytes;
      pinned_bytes += slot_bytes(ins[k]) * slots;
    }
  }
  std::size_t const out_device_at = device_bytes, out_pinned_at = pinned_bytes;
  if (shape.download) { device_bytes += slot_bytes(out) * slots; }
  if (shape.stage_out) { pinned_bytes += slot_bytes(out) * slots; }

  auto const staging = driver.staging(device_bytes, pinned_bytes);
  std::byte* const device_slots = staging.device();
  std::byte* const pinned_slots = staging.pinned();
  // Declared after the staging, so it runs first: the caller's stream, which
  // the staging goes back on, waits for every copy issued, even on a throw.
  struct joiner {
    Driver& d;
    ~joiner() { d.join(); }
  } const join{driver};

  std::vector<pipeline_op> const ops = plan_pipeline(shape);
  // Dependencies reach back at most `depth` chunks of at most 5 ops each.
  std::size_t const ring = 5 * (static_cast<std::size_t>(shape.depth) + 2);
  std::size_t const start = ring;
  driver.reserve_events(ring + 1);

  // Start after the work already on the caller's stream.
  driver.record(pipeline_queue::compute, start);
  driver.wait(pipeline_queue::upload, start);
  driver.wait(pipeline_queue::download, start);
  if (shape.stage_in) { driver.host_wait(start); }

  auto const event_of = [&](std::int64_t op) { return static_cast<std::size_t>(op) % ring; };
  auto const slot_offset = [&](const pipeline_view& v, const pipeline_op& op) {
    return slot_bytes(v) * static_cast<std::size_t>(op.slot);
  };
  auto const bytes_of = [&](const pipeline_view& v, const pipeline_op& op) {
    return static_cast<std::size_t>(op.count) * v.element_bytes;
  };
  auto const at = [&](const pipeline_view& v, const pipeline_op& op) {
    return const_cast<std::byte*>(v.data) + static_cast<std::size_t>(op.begin) * v.element_bytes;
  };

  for (std::size_t k = 0; k < ops.size(); ++k) {
    const pipeline_op& op = ops[k];
    pipeline_queue const queue = queue_of(op.kind);
    bool const on_host = queue == pipeline_queue::host;
    for (std::int64_t a : op.after) {
      if (a < 0) { continue; }
      pipeline_queue const dep = queue_of(ops[static_cast<std::size_t>(a)].kind);
      if (dep == pipeline_queue::host) { continue; }  // done: the host ran it already
      if (on_host) {
        driver.host_wait(event_of(a));
      } else if (dep != queue) {
        driver.wait(queue, event_of(a));
      }
    }
    switch (op.kind) {
      case pipeline_op_kind::stage_in:
        for (std::size_t v = 0; v < I; ++v) {
          if (ins[v].space != memory_space::pageable) { continue; }
          driver.host_copy(pinned_slots + pinned_at[v] + slot_offset(ins[v], op), at(ins[v], op), bytes_of(ins[v], op));
        }
        break;
      case pipeline_op_kind::upload:
        for (std::size_t v = 0; v < I; ++v) {
          if (ins[v].space == memory_space::device) { continue; }
          const std::byte* from = ins[v].space == memory_space::pinned
                                      ? at(ins[v], op)
                                      : pinned_slots + pinned_at[v] + slot_offset(ins[v], op);
          driver.copy(queue, device_slots + device_at[v] + slot_offset(ins[v], op), from, bytes_of(ins[v], op), true);
        }
        break;
      case pipeline_op_kind::compute: {
        std::array<const std::byte*, I> in_chunk{};
        for (std::size_t v = 0; v < I; ++v) {
          in_chunk[v] = ins[v].space == memory_space::device ? at(ins[v], op)
                                                             : device_slots + device_at[v] + slot_offset(ins[v], op);
        }
        std::byte* out_chunk = nullptr;
        if (has_out) { out_chunk = shape.download ? device_slots + out_device_at + slot_offset(out, op) : at(out, op); }
        compute(driver.stream(queue), op.chunk, op.begin, op.count, in_chunk, out_chunk);
        break;
      }
      case pipeline_op_kind::download: {
        std::byte* to = shape.stage_out ? pinned_slots + out_pinned_at + slot_offset(out, op) : at(out, op);
        driver.copy(queue, to, device_slots + out_device_at + slot_offset(out, op), bytes_of(out, op), false);
        break;
      }
      case pipeline_op_kind::stage_out:
        driver.host_copy(at(out, op), pinned_slots + out_pinned_at + slot_offset(out, op), bytes_of(out, op));
        break;
    }
    if (!on_host) { driver.record(queue, event_of(static_cast<std::int64_t>(k))); }
  }
}

}  // namespace detail
}  // namespace fusekit
