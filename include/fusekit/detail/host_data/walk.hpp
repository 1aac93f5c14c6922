// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The host-data pipeline's walk: it issues the ops of detail/host_data/plan.hpp
/// through a *driver*, in plain C++, so that the CPU tests run it over a fake
/// driver (host memory for every slot, a log of every call) and the GPU runs
/// it over detail/host_data/cuda_pipeline.cuh's driver unchanged. The views
/// it walks, and the route a call takes by where they live, are
/// detail/host_data/router.hpp's.
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

#include <fusekit/detail/host_data/host_copy.hpp>
#include <fusekit/detail/host_data/plan.hpp>
#include <fusekit/detail/host_data/router.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace host_data {

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

/// Bytes of one staging slot of `v` (256-byte aligned, like every temporary).
inline std::size_t pipeline_slot_bytes(const pipeline_view& v, const pipeline_staging& st) {
  std::size_t const bytes = static_cast<std::size_t>(st.elements) * v.element_bytes;
  return (bytes + 255) / 256 * 256;
}

/// Issues the ops of `plan_pipeline(shape)` through `driver`, with `compute(stream,
/// chunk, begin, count, in_pointers, out_pointer)` run on each chunk on the
/// caller's stream with device pointers to the chunk's elements (see
/// detail/host_data/cuda_pipeline.cuh's run_pipeline, its caller). `shape` must come from
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

}  // namespace host_data
}  // namespace detail
}  // namespace fusekit
