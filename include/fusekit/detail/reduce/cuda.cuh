// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of the sum reductions (contract, algorithms and error bounds in
/// reduce.hpp).
///
/// Temporaries (CUB's, and the deterministic tree's partial sums past 8192
/// values) come from the caller's workspace when one is given — then a call
/// allocates nothing and can be captured in a CUDA graph — and otherwise from
/// the policy's memory resource (detail/core/cuda_buffer.cuh).
///
/// Inputs in host memory go through the host-data pipeline (detail/host_data/cuda_pipeline.cuh)
/// in chunks, each reduced on arrival by the same kernels: `deterministic`
/// chunks hold whole tiles of the tree, so its first level is the same, tile
/// for tile, and the result has the same bits as over device memory; the
/// atomics add each chunk into the result; `cub` reduces each chunk with CUB,
/// then the chunk results with CUB (for plus, minimum and maximum, whose init
/// may be applied twice). A result in host memory is copied there at the end.

#include <fusekit/detail/reduce/cuda_anywhere.cuh>  // and with it cuda_device.cuh, the kernels, the tree, the checks
#include <fusekit/detail/host_data/cuda_pipeline.cuh>
#include <fusekit/policy.hpp>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda/std/span>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {

// This file is the GPU backend of these algorithms (see detail/core/dispatch.hpp).
template <>
struct backend_available<reduce_sum_tag, cuda> : std::true_type {};
template <>
struct backend_available<reduce_tag, cuda> : std::true_type {};
template <>
struct backend_available<transform_reduce_sum_tag, cuda> : std::true_type {};
template <>
struct backend_available<sum_tag, cuda> : std::true_type {};
template <>
struct backend_available<transform_reduce_tag, cuda> : std::true_type {};

inline namespace reduce {

/// Marks the overloads that take a caller's workspace (reduce.cuh).
struct workspace_given {};

/// Bytes a workspace needs for a reduction of n values of src: the result's
/// slot first when the call returns a host value (`scalar`), then the temporaries.
template <class Acc, class Src, class Op>
std::size_t reduction_workspace_bytes(const Src& src, const Op& op, std::int64_t n, reduce_algorithm algorithm,
                                      bool scalar) {
  workspace_arena arena = workspace_arena::measure();
  if (scalar) { arena.take(sizeof(Acc)); }
  arena.take(reduce_temp_bytes<Acc>(src, op, n, algorithm));
  return arena.bytes_needed();
}

/// A caller's workspace: large enough (checked before anything runs) and
/// sharing no byte with the views of the call.
/// `needed()` is asked last: for `cub` it asks CUB, and so the device.
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

/// ... for n values of T in Acc, as `reduce_sum` (scalar = false) or `sum` (true) takes them.
template <class T, class Acc>
std::size_t array_workspace_bytes(std::size_t n, reduce_algorithm algorithm, bool scalar) {
  check_accumulator<T, Acc>();
  return reduction_workspace_bytes<Acc>(array_source<Acc, std::remove_cv_t<T>>{nullptr}, plus{},
                                        static_cast<std::int64_t>(n), algorithm, scalar);
}

template <class Acc>
named_range describe_out(const Acc* out) {
  return {"out", reinterpret_cast<std::uintptr_t>(out), 1, sizeof(Acc)};
}

template <class T, class Acc>
void run_reduce_sum(reduce_sum_tag, const cuda& policy, ::cuda::std::span<T> in, Acc* out, reduce_algorithm algorithm,
                    ::cuda::std::span<std::byte> workspace = {}) {
  const char* const f = "fusekit::reduce_sum";
  check_reduce(f, in, out);
  check_reduce_algorithm<plus, Acc>(f, algorithm);
  using U = std::remove_cv_t<T>;
  array_source<Acc, U> const src{in.data()};
  auto const n = static_cast<std::int64_t>(in.size());
  workspace_arena arena(workspace, f);
  if (workspace.data() != nullptr) {
    expect_workspace(
        f, workspace, [&] { return reduction_workspace_bytes<Acc>(src, plus{}, n, algorithm, false); },
        "reduce_sum_workspace_bytes", reduce_input(in), describe_out(out));
  }
  cuda_reduce_anywhere(
      f, policy, n, out, algorithm, plus{}, Acc(0), std::array<pipeline_view, 1>{pipeline_view_of(in)},
      [](const std::array<const std::byte*, 1>& p) { return array_source<Acc, U>{reinterpret_cast<const U*>(p[0])}; },
      workspace.data() != nullptr ? &arena : nullptr);
}

/// transform_source over the inputs at the pointers `p`.
template <class Acc, class... Us, class Op, std::size_t N, std::size_t... I>
transform_source<Acc, Op, Us...> source_from_pointers(const Op& op, const std::array<const std::byte*, N>& p,
                                                      std::index_sequence<I...>) {
  return {op, ::cuda::std::tuple<const Us*...>(reinterpret_cast<const Us*>(p[I])...)};
}

/// The pipeline views of a transform_reduce's inputs.
template <class... Ins>
std::array<pipeline_view, sizeof...(Ins)> transform_views(::cuda::std::span<Ins>... ins) {
  return {pipeline_view_of(ins)...};
}

/// Makes a transform_reduce's source from its inputs' device pointers.
template <class Acc, class... Ins, class Op>
auto transform_maker(const Op& op) {
  return [op](const std::array<const std::byte*, sizeof...(Ins)>& p) {
    return source_from_pointers<Acc, std::remove_cv_t<Ins>...>(op, p, std::index_sequence_for<Ins...>{});
  };
}

template <class Acc, class Op, class... Ins>
void run_transform_reduce_sum(transform_reduce_sum_tag, const cuda& policy, Acc* out, reduce_algorithm algorithm,
                              const Op& op, ::cuda::std::span<Ins>... ins) {
  const char* const f = "fusekit::transform_reduce_sum";
  std::int64_t const n = check_transform_reduce(f, out, ins...);
  check_reduce_algorithm<plus, Acc>(f, algorithm);
  cuda_reduce_anywhere(f, policy, n, out, algorithm, plus{}, Acc(0), transform_views(ins...),
                       transform_maker<Acc, Ins...>(op));
}

template <class T, class Acc, class Op>
void run_reduce(reduce_tag, const cuda& policy, ::cuda::std::span<T> in, Acc* out, const Op& op, Acc init,
                reduce_algorithm algorithm) {
  check_reduce_views("fusekit::reduce", in, out);
  check_reduce_algorithm<Op, Acc>("fusekit::reduce", algorithm);
  using U = std::remove_cv_t<T>;
  cuda_reduce_anywhere(
      "fusekit::reduce", policy, static_cast<std::int64_t>(in.size()), out, algorithm, op, init,
      std::array<pipeline_view, 1>{pipeline_view_of(in)},
      [](const std::array<const std::byte*, 1>& p) { return array_source<Acc, U>{reinterpret_cast<const U*>(p[0])}; });
}

/// Σ in as a host value: into a device scalar, copied back (synchronizes).
template <class T, class Acc>
Acc run_sum(sum_tag, const cuda& policy, ::cuda::std::span<T> in, reduce_algorithm algorithm, accumulate_in<Acc>) {
  const char* const f = "fusekit::sum";
  std::int64_t const n = check_sum_inputs(f, reduce_input(in));
  check_reduce_algorithm<plus, Acc>(f, algorithm);
  using U = std::remove_cv_t<T>;
  return device_scalar_result<Acc>(policy, [&](Acc* out) {
    cuda_reduce_anywhere(f, policy, n, out, algorithm, plus{}, Acc(0),
                         std::array<pipeline_view, 1>{pipeline_view_of(in)},
                         [](const std::array<const std::byte*, 1>& p) {
                           return array_source<Acc, U>{reinterpret_cast<const U*>(p[0])};
                         });
  });
}

/// `sum` with a caller's workspace: the scalar and the temporaries come from
/// it, and nothing is allocated (synchronizes). Device memory only.
template <class T, class Acc>
Acc run_sum(sum_tag, const cuda& policy, ::cuda::std::span<T> in, reduce_algorithm algorithm, accumulate_in<Acc>,
            ::cuda::std::span<std::byte> workspace, workspace_given) {
  const char* const f = "fusekit::sum";
  using U = std::remove_cv_t<T>;
  std::int64_t const n = check_sum_inputs(f, reduce_input(in));
  check_reduce_algorithm<plus, Acc>(f, algorithm);
  expect_workspace(f, workspace, [&] { return array_workspace_bytes<T, Acc>(in.size(), algorithm, true); },
                   "sum_workspace_bytes", reduce_input(in), {});
  workspace_arena arena(workspace, f);
  return device_scalar_result<Acc>(
      policy,
      [&](Acc* out) {
        cuda_reduce_anywhere(
            f, policy, n, out, algorithm, plus{}, Acc(0), std::array<pipeline_view, 1>{pipeline_view_of(in)},
            [](const std::array<const std::byte*, 1>& p) {
              return array_source<Acc, U>{reinterpret_cast<const U*>(p[0])};
            },
            &arena);
      },
      &arena);
}

/// Bytes of workspace a transform_reduce(_sum) of n values of these inputs
/// needs (the result's slot too when `scalar`); the inputs are checked by the
/// caller.
template <class Acc, class Op, class... Ins>
std::size_t transform_workspace_bytes(std::int64_t n, reduce_algorithm algorithm, const Op& op, bool scalar,
                                      ::cuda::std::span<Ins>... ins) {
  return reduction_workspace_bytes<Acc>(make_transform_source<Acc>(op, ins...), plus{}, n, algorithm, scalar);
}

/// transform_reduce_sum with a caller's workspace: nothing is allocated.
template <class Acc, class Op, class... Ins>
void run_transform_reduce_sum(transform_reduce_sum_tag, const cuda& policy, Acc* out, reduce_algorithm algorithm,
                              const Op& op, ::cuda::std::span<std::byte> workspace, workspace_given,
                              ::cuda::std::span<Ins>... ins) {
  const char* const f = "fusekit::transform_reduce_sum";
  std::int64_t const n = check_transform_reduce(f, out, ins...);
  check_reduce_algorithm<plus, Acc>(f, algorithm);
  expect_workspace(
      f, workspace, [&] { return transform_workspace_bytes<Acc>(n, algorithm, op, true, ins...); },
      "transform_reduce_workspace_bytes", transform_reduce_inputs(ins...), describe_out(out));
  workspace_arena arena(workspace, f);
  cuda_reduce_anywhere(f, policy, n, out, algorithm, plus{}, Acc(0), transform_views(ins...),
                       transform_maker<Acc, Ins...>(op), &arena);
}

/// Σ op(ins[i]...) as a host value (synchronizes); with a workspace
/// (`workspace.data()` not null), nothing is allocated.
template <class Acc, class Op, class... Ins>
Acc run_transform_reduce(transform_reduce_tag, const cuda& policy, reduce_algorithm algorithm, accumulate_in<Acc>,
                         const Op& op, ::cuda::std::span<Ins>... ins) {
  const char* const f = "fusekit::transform_reduce";
  std::int64_t const n = check_sum_inputs(f, transform_reduce_inputs(ins...));
  check_reduce_algorithm<plus, Acc>(f, algorithm);
  return device_scalar_result<Acc>(policy, [&](Acc* out) {
    cuda_reduce_anywhere(f, policy, n, out, algorithm, plus{}, Acc(0), transform_views(ins...),
                         transform_maker<Acc, Ins...>(op));
  });
}

/// transform_reduce with a caller's workspace: the result's slot and the
/// temporaries come from it, nothing is allocated (synchronizes).
template <class Acc, class Op, class... Ins>
Acc run_transform_reduce(transform_reduce_tag, const cuda& policy, reduce_algorithm algorithm, accumulate_in<Acc>,
                         const Op& op, ::cuda::std::span<std::byte> workspace, workspace_given,
                         ::cuda::std::span<Ins>... ins) {
  const char* const f = "fusekit::transform_reduce";
  std::int64_t const n = check_sum_inputs(f, transform_reduce_inputs(ins...));
  check_reduce_algorithm<plus, Acc>(f, algorithm);
  expect_workspace(f, workspace, [&] { return transform_workspace_bytes<Acc>(n, algorithm, op, true, ins...); },
                   "transform_reduce_workspace_bytes", transform_reduce_inputs(ins...), {});
  workspace_arena arena(workspace, f);
  return device_scalar_result<Acc>(
      policy,
      [&](Acc* out) {
        cuda_reduce_anywhere(f, policy, n, out, algorithm, plus{}, Acc(0), transform_views(ins...),
                             transform_maker<Acc, Ins...>(op), &arena);
      },
      &arena);
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
