// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of the reductions (contract, algorithms and error bounds in
/// reduce_api.hpp): the reduction hook `run_reduce` on `fusekit::cuda` and
/// `fusekit::cuda_staged`, which every public form reaches
/// (detail/reduce/reduction.hpp). On cuda it runs `cuda_reduce`
/// (detail/reduce/cuda_device.cuh) over device memory; cuda_staged's views
/// anywhere take `staged_reduce` (detail/reduce/cuda_staged.cuh), which this
/// file does not include: it compiles no staging.
///
/// Temporaries (CUB's, and the deterministic tree's partial sums past 8192
/// values) come from the caller's workspace when one is given — then a call
/// allocates nothing and can be captured in a CUDA graph — and otherwise from
/// the policy's memory resource (detail/core/cuda_buffer.cuh).

#include <fusekit/detail/reduce/cuda_device.cuh>
#include <fusekit/detail/reduce/reduction.hpp>
#include <fusekit/detail/core/memory_space.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {

// This file is the GPU backend of the reductions (see detail/core/dispatch.hpp).
template <>
struct backend_available<reduce_tag, cuda> : std::true_type {};

inline namespace reduce {

/// Bytes a workspace needs for a reduction of n values of src with the
/// algorithm A: the result's slot first when the call returns a host value
/// (`scalar`), then the temporaries.
template <class Acc, class Src, class Op, class A>
std::size_t reduction_workspace_bytes(const Src& src, const Op& op, std::int64_t n, A algorithm, bool scalar) {
  workspace_arena arena = workspace_arena::measure();
  if (scalar) { arena.take(sizeof(Acc)); }
  arena.take(reduce_temp_bytes<Acc>(src, op, n, algorithm));
  return arena.bytes_needed();
}

/// ... for the run-time algorithm `a` (the workspace-size functions take
/// either): one the call would reject is rejected here, naming `function`.
template <class Acc, class Src, class Op>
std::size_t reduction_workspace_bytes(const char* function, const Src& src, const Op& op, std::int64_t n,
                                      reduce_algorithm a, bool scalar) {
  return visit_algorithm<Op, Acc>(a, [&](auto tag) -> std::size_t {
    if constexpr (std::is_same_v<decltype(tag), rejected_algorithm>) {
      check_algorithm(function, tag);  // throws
      return 0;
    } else {
      return reduction_workspace_bytes<Acc>(src, op, n, tag, scalar);
    }
  });
}

/// ... for a tag (`function` unused: a tag is checked at compile time).
template <class Acc, class Src, class Op, class A>
std::size_t reduction_workspace_bytes(const char*, const Src& src, const Op& op, std::int64_t n, A algorithm,
                                      bool scalar) {
  return reduction_workspace_bytes<Acc>(src, op, n, algorithm, scalar);
}

/// A caller's workspace: large enough (checked before anything runs) and
/// sharing no byte with the views of the call.
/// `needed()` is asked last: for `run_to_run` it asks CUB, and so the device.
template <class Needed>
void expect_workspace(const char* function, ::cuda::std::span<std::byte> workspace, const Needed& needed,
                      const char* ask, const sum_views& views, const named_range& out) {
  named_range const w = describe("workspace", workspace);
  for (std::size_t k = 0; k < views.count; ++k) { expect_disjoint(function, w, views.ranges[k]); }
  if (out.begin != 0) { expect_disjoint(function, w, out); }
  std::size_t const bytes = needed();
  FUSEKIT_EXPECTS(workspace.size() >= bytes, std::string(function) + ": workspace has " +
                                                 std::to_string(workspace.size()) + " bytes but needs " +
                                                 std::to_string(bytes) + " (ask " + ask + ")");
}

/// Whether a workspace holds the result's slot too: for a host value, and for
/// every transform_reduce (one size function serves both of its forms).
template <class R>
constexpr bool workspace_has_result_slot() {
  return R::returns_value || !is_array_source_v<typename R::source>;
}

/// The function that sizes a workspace for R, for the message.
template <class R>
constexpr const char* workspace_size_function() {
  if constexpr (!is_array_source_v<typename R::source>) {
    return "transform_reduce_workspace_bytes";
  } else if constexpr (R::returns_value) {
    return "sum_workspace_bytes";
  } else {
    return "reduce_sum_workspace_bytes";
  }
}

/// The views of a reduction on `fusekit::cuda` are device memory: one
/// pointer query per input and for `out`.
template <class R>
void expect_device_views(const R& r) {
  for (std::size_t k = 0; k < r.views.count; ++k) {
    expect_device_memory(r.function, r.views.ranges[k].name, reinterpret_cast<const void*>(r.views.ranges[k].begin));
  }
  if constexpr (!R::returns_value) { expect_device_memory(r.function, "out", r.out); }
}

/// The GPU's reduction hook (detail/reduce/reduction.hpp): every public form
/// of the sums and reductions on `fusekit::cuda` and `fusekit::cuda_staged`
/// arrives here. On cuda, device memory only; cuda_staged takes the staged
/// route (`staged_reduce`, detail/reduce/cuda_staged.cuh), views anywhere.
/// With a caller's workspace (`r.workspace`, cuda only) nothing is allocated.
template <class P, class R, class A, std::enable_if_t<is_gpu_policy_v<P>, int> = 0>
auto run_reduce(reduce_tag, const P& policy, const R& r, A algorithm) {
  if constexpr (std::is_same_v<P, cuda_staged>) {
    return staged_reduce(reduce_tag{}, policy, r, algorithm);
  } else {
    using Acc = typename R::accumulator;
    std::int64_t const n = check_reduction(r, algorithm);
    bool const given = r.workspace.data() != nullptr;
    if (given) {
      expect_workspace(
          r.function, r.workspace,
          [&] { return reduction_workspace_bytes<Acc>(r.src, r.op, n, algorithm, workspace_has_result_slot<R>()); },
          workspace_size_function<R>(), r.views,
          R::returns_value ? named_range{}
                           : named_range{"out", reinterpret_cast<std::uintptr_t>(r.out), 1, sizeof(Acc)});
    }
    expect_device_views(r);
    workspace_arena arena(r.workspace, r.function);
    workspace_arena* const temporaries = given ? &arena : nullptr;
    if constexpr (R::returns_value) {
      return device_scalar_result<Acc>(
          policy, [&](Acc* out) { cuda_reduce(policy, r.src, n, out, algorithm, r.op, r.init, temporaries); },
          temporaries);
    } else {
      cuda_reduce(policy, r.src, n, r.out, algorithm, r.op, r.init, temporaries);
    }
  }
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
