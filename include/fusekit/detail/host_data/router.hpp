// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The memory router: the one place a GPU backend's call is routed by where
/// its data lives (`route_by_memory`), over the views of the call
/// (`pipeline_view`: bytes per element and memory space). Device memory runs
/// as device memory, in one pass; anything on the host takes the host-data
/// path (detail/host_data/walk.hpp's pipeline, or copies). Plain C++: the CPU
/// tests route fake views.

#include <fusekit/detail/core/memory_space.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace host_data {

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

/// The one place a GPU backend's call is routed by where its data lives:
/// with every view of `ins` and every space of `outs` in device memory,
/// `on_device` runs the call as over device memory, in one pass; otherwise
/// `through_host()` takes the host-data path (the pipeline, or copies). The
/// two return the same type, which this returns. `on_device` takes the
/// inputs' device pointers in order, `on_device(pointers)`, when it accepts
/// them (a call that reads its inputs through type-erased pointers), else no
/// argument (a call that keeps its own typed views).
template <std::size_t I, std::size_t O, class OnDevice, class ThroughHost>
auto route_by_memory(const std::array<pipeline_view, I>& ins, const std::array<memory_space, O>& outs,
                     const OnDevice& on_device, const ThroughHost& through_host) {
  bool const outs_on_device =
      std::all_of(outs.begin(), outs.end(), [](memory_space s) { return s == memory_space::device; });
  if (!outs_on_device || any_on_host(ins)) { return through_host(); }
  if constexpr (std::is_invocable_v<const OnDevice&, const std::array<const std::byte*, I>&>) {
    std::array<const std::byte*, I> pointers{};
    for (std::size_t k = 0; k < I; ++k) { pointers[k] = ins[k].data; }
    return on_device(pointers);
  } else {
    return on_device();
  }
}

}  // namespace host_data
}  // namespace detail
}  // namespace fusekit
