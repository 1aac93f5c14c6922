// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The reductions with both backends (include from nvcc), and the entry points
/// only the GPU has: every call that needs temporaries also takes a caller's
/// workspace, and then allocates nothing (the asynchronous ones can then be
/// captured in a CUDA graph).
///
///     std::size_t bytes = fusekit::sum_workspace_bytes<float>(n, fusekit::reduce_algorithm::cub);
///     // ... bytes of device memory in `ws`, allocated once ...
///     float s = fusekit::sum(fusekit::cuda{stream}, in, fusekit::reduce_algorithm::cub,
///                            fusekit::accumulate_in<float>{}, ws);
///
/// A workspace must hold at least the bytes its `*_workspace_bytes` function
/// gives (else `fusekit::invalid_argument`, before anything runs) and share no
/// byte with the call's views. Sizes for `deterministic` and the atomic
/// algorithms are arithmetic; for `cub` CUB is asked (a device is needed).

#include <fusekit/cuda/reduce.cuh>
#include <fusekit/reduce.hpp>

#include <cuda/std/span>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace fusekit {

/// Bytes of workspace `reduce_sum` needs for n values of T summed in Acc with
/// `algorithm` (0 for the atomic algorithms).
template <class T, class Acc = accumulator_t<T>>
std::size_t reduce_sum_workspace_bytes(std::size_t n, reduce_algorithm algorithm) {
  return detail::array_workspace_bytes<T, Acc>(n, algorithm, false);
}

/// `reduce_sum` on the GPU with a caller-supplied workspace of at least
/// `reduce_sum_workspace_bytes<T, Acc>(in.size(), algorithm)` bytes of device
/// memory: allocates nothing, so it can be captured in a CUDA graph.
template <class T, class Acc>
void reduce_sum(const cuda& policy, ::cuda::std::span<T> in, Acc* out, reduce_algorithm algorithm,
                ::cuda::std::span<std::byte> workspace) {
  detail::run(detail::reduce_sum_tag{}, policy, in, out, algorithm, workspace);
}

/// Bytes of workspace `sum` needs for n values of T summed in Acc with `algorithm`.
template <class T, class Acc = accumulator_t<T>>
std::size_t sum_workspace_bytes(std::size_t n, reduce_algorithm algorithm) {
  return detail::array_workspace_bytes<T, Acc>(n, algorithm, true);
}

/// `sum` on the GPU allocating nothing: the result's slot and the temporaries
/// come from `workspace` (at least `sum_workspace_bytes<T, Acc>(in.size(), algorithm)`
/// bytes of device memory). Synchronizes the stream, as `sum` does.
template <class T, class Acc>
Acc sum(const cuda& policy, ::cuda::std::span<T> in, reduce_algorithm algorithm, accumulate_in<Acc>,
        ::cuda::std::span<std::byte> workspace) {
  const char* const f = "fusekit::sum";
  detail::check_accumulator<T, Acc>();
  detail::check_sum_inputs(f, detail::reduce_input(in));
  detail::check_reduce_algorithm<plus, Acc>(f, algorithm);
  detail::expect_workspace(f, workspace, [&] { return sum_workspace_bytes<T, Acc>(in.size(), algorithm); },
                           "sum_workspace_bytes", detail::reduce_input(in), {});
  detail::workspace_arena arena(workspace, f);
  return detail::device_scalar_result<Acc>(
      policy,
      [&](Acc* out) {
        detail::gpu_reduce(policy, detail::array_source<Acc, std::remove_cv_t<T>>{in.data()},
                           static_cast<std::int64_t>(in.size()), out, algorithm, plus{}, Acc(0), &arena);
      },
      &arena);
}

/// Bytes of workspace `transform_reduce_sum` and `transform_reduce` need for
/// these inputs and op, summed in Acc with `algorithm`.
template <class Acc, class Op, class... Ins>
std::size_t transform_reduce_workspace_bytes(reduce_algorithm algorithm, const Op& op, ::cuda::std::span<Ins>... ins) {
  detail::check_transform_accumulator<Acc>();
  std::int64_t const n =
      detail::check_sum_inputs("fusekit::transform_reduce_workspace_bytes", detail::transform_reduce_inputs(ins...));
  return detail::reduction_workspace_bytes<Acc>(detail::make_transform_source<Acc>(op, ins...), plus{}, n, algorithm,
                                                true);
}

/// `transform_reduce_sum` on the GPU with a caller-supplied workspace (at least
/// `transform_reduce_workspace_bytes`): allocates nothing, so it can be captured
/// in a CUDA graph.
template <class Acc, class Op, class... Ins>
void transform_reduce_sum(const cuda& policy, Acc* out, reduce_algorithm algorithm, Op op,
                          ::cuda::std::span<std::byte> workspace, ::cuda::std::span<Ins>... ins) {
  const char* const f = "fusekit::transform_reduce_sum";
  detail::check_transform_accumulator<Acc>();
  std::int64_t const n = detail::check_transform_reduce(f, out, ins...);
  detail::check_reduce_algorithm<plus, Acc>(f, algorithm);
  detail::expect_workspace(
      f, workspace, [&] { return transform_reduce_workspace_bytes<Acc>(algorithm, op, ins...); },
      "transform_reduce_workspace_bytes", detail::transform_reduce_inputs(ins...), detail::describe_out(out));
  detail::workspace_arena arena(workspace, f);
  detail::gpu_reduce(policy, detail::make_transform_source<Acc>(op, ins...), n, out, algorithm, plus{}, Acc(0), &arena);
}

/// `transform_reduce` on the GPU allocating nothing: the result's slot and the
/// temporaries come from `workspace`. Synchronizes the stream.
template <class Acc, class Op, class... Ins>
Acc transform_reduce(const cuda& policy, reduce_algorithm algorithm, accumulate_in<Acc>, Op op,
                     ::cuda::std::span<std::byte> workspace, ::cuda::std::span<Ins>... ins) {
  const char* const f = "fusekit::transform_reduce";
  detail::check_transform_accumulator<Acc>();
  std::int64_t const n = detail::check_sum_inputs(f, detail::transform_reduce_inputs(ins...));
  detail::check_reduce_algorithm<plus, Acc>(f, algorithm);
  detail::expect_workspace(f, workspace, [&] { return transform_reduce_workspace_bytes<Acc>(algorithm, op, ins...); },
                           "transform_reduce_workspace_bytes", detail::transform_reduce_inputs(ins...), {});
  detail::workspace_arena arena(workspace, f);
  return detail::device_scalar_result<Acc>(
      policy,
      [&](Acc* out) {
        detail::gpu_reduce(policy, detail::make_transform_source<Acc>(op, ins...), n, out, algorithm, plus{}, Acc(0),
                           &arena);
      },
      &arena);
}

}  // namespace fusekit
