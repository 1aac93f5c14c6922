// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The reductions on the GPU, `fusekit::cuda` (include from nvcc): the calls
/// of reduce_api.hpp with the GPU's backend, and the entry points only the GPU
/// has. The CPU's backend is reduce.hpp's (include both to call both), and
/// `run_to_run` on the GPU, CUB's DeviceReduce, comes with run_to_run.cuh: a
/// translation unit that names neither parses neither (bench/compile/measure.sh).
///
/// Every call that needs temporaries also takes a caller's workspace, and then
/// allocates nothing (the asynchronous ones can then be captured in a CUDA
/// graph).
///
///     std::size_t bytes = fusekit::sum_workspace_bytes<float>(n, fusekit::run_to_run{});
///     // ... bytes of device memory in `ws`, allocated once ...
///     float s = fusekit::sum(fusekit::cuda{stream}, in, fusekit::run_to_run{}, fusekit::accumulate_in<float>{}, ws);
///
/// A workspace must hold at least the bytes its `*_workspace_bytes` function
/// gives (else `fusekit::invalid_argument`, before anything runs) and share no
/// byte with the call's views. Sizes for `deterministic` and the atomic
/// algorithms are arithmetic; for `run_to_run` CUB is asked (a device is needed).
///
/// Each overload has the contract, the algorithms and the error bounds of its
/// counterpart in reduce_api.hpp, and gives the same bits; only where the
/// temporaries come from differs. One workspace serves calls that follow one
/// another on a stream; calls in flight at once on different streams need one
/// workspace each.

#include <fusekit/detail/reduce/cuda.cuh>
#include <fusekit/detail/reduce/reduction.hpp>
#include <fusekit/reduce_api.hpp>

#include <cuda/std/span>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace fusekit {

/// Bytes of workspace `reduce_sum` needs for n values of T summed in Acc with
/// `algorithm` (a tag or a `reduce_algorithm`; 0 for the atomic algorithms).
/// Arithmetic for every algorithm but `run_to_run`, whose size CUB gives
/// (which needs a device).
/// \param n         the number of values the call will sum
/// \param algorithm the algorithm the call will take
/// \throws fusekit::invalid_argument for a `reduce_algorithm` value outside the enum
template <class T, class Acc = accumulator_t<T>, class Algorithm = deterministic>
std::size_t reduce_sum_workspace_bytes(std::size_t n, Algorithm algorithm = {}) {
  detail::check_accumulator<T, Acc>();
  return detail::reduction_workspace_bytes<Acc>("fusekit::reduce_sum_workspace_bytes",
                                                detail::array_source<Acc, std::remove_cv_t<T>>{nullptr}, plus{},
                                                static_cast<std::int64_t>(n), algorithm, false);
}

/// `reduce_sum` on the GPU with a caller-supplied workspace of at least
/// `reduce_sum_workspace_bytes<T, Acc>(in.size(), algorithm)` bytes of device
/// memory: allocates nothing, so it can be captured in a CUDA graph.
/// Asynchronous on the policy's stream, as `reduce_sum` without a workspace.
/// \param in        the values, in device memory
/// \param out       where the sum goes, in device memory
/// \param workspace device memory of at least that size, sharing no byte
///                  with `in` or `out` (else invalid_argument, nothing runs)
template <class T, class Acc, class Algorithm>
void reduce_sum(const cuda& policy, ::cuda::std::span<T> in, Acc* out, Algorithm algorithm,
                ::cuda::std::span<std::byte> workspace) {
  detail::check_accumulator<T, Acc>();
  auto r = detail::array_reduction<false>("fusekit::reduce_sum", in, plus{}, Acc(0), out);
  r.workspace = workspace;
  detail::reduce_on(policy, r, algorithm);
}

/// Bytes of workspace `sum` needs for n values of T summed in Acc with
/// `algorithm`: the temporaries of reduce_sum_workspace_bytes plus the
/// result's slot (256-byte aligned).
template <class T, class Acc = accumulator_t<T>, class Algorithm = deterministic>
std::size_t sum_workspace_bytes(std::size_t n, Algorithm algorithm = {}) {
  detail::check_accumulator<T, Acc>();
  return detail::reduction_workspace_bytes<Acc>("fusekit::sum_workspace_bytes",
                                                detail::array_source<Acc, std::remove_cv_t<T>>{nullptr}, plus{},
                                                static_cast<std::int64_t>(n), algorithm, true);
}

/// `sum` on the GPU allocating nothing: the result's slot and the temporaries
/// come from `workspace` (at least `sum_workspace_bytes<T, Acc>(in.size(), algorithm)`
/// bytes of device memory). Synchronizes the stream, as `sum` does, and
/// returns the sum on the host. The same bits as `sum` without a workspace.
template <class T, class Algorithm, class Acc>
Acc sum(const cuda& policy, ::cuda::std::span<T> in, Algorithm algorithm, accumulate_in<Acc>,
        ::cuda::std::span<std::byte> workspace) {
  detail::check_accumulator<T, Acc>();
  auto r = detail::array_reduction<true>("fusekit::sum", in, plus{}, Acc(0), static_cast<Acc*>(nullptr));
  r.workspace = workspace;
  return detail::reduce_on(policy, r, algorithm);
}

/// Bytes of workspace `transform_reduce_sum` and `transform_reduce` need for
/// these inputs and op, summed in Acc with `algorithm`. The views' sizes are
/// checked (every input the same size) as the call will check them; their
/// contents are not read.
template <class Acc, class Algorithm, class Op, class... Ins>
std::size_t transform_reduce_workspace_bytes(Algorithm algorithm, const Op& op, ::cuda::std::span<Ins>... ins) {
  detail::check_transform_accumulator<Acc>();
  std::int64_t const n =
      detail::check_sum_inputs("fusekit::transform_reduce_workspace_bytes", detail::transform_reduce_inputs(ins...));
  return detail::reduction_workspace_bytes<Acc>("fusekit::transform_reduce_workspace_bytes",
                                                detail::make_transform_source<Acc>(op, ins...), plus{}, n, algorithm,
                                                true);
}

/// `transform_reduce_sum` on the GPU with a caller-supplied workspace (at least
/// `transform_reduce_workspace_bytes`): allocates nothing, so it can be captured
/// in a CUDA graph. `*out` (device memory) = Σ op(ins[i]...), asynchronous on
/// the policy's stream.
template <class Acc, class Algorithm, class Op, class... Ins>
void transform_reduce_sum(const cuda& policy, Acc* out, Algorithm algorithm, Op op,
                          ::cuda::std::span<std::byte> workspace, ::cuda::std::span<Ins>... ins) {
  detail::check_transform_accumulator<Acc>();
  auto r = detail::transform_reduction<false>("fusekit::transform_reduce_sum", op, out, ins...);
  r.workspace = workspace;
  detail::reduce_on(policy, r, algorithm);
}

/// `transform_reduce` on the GPU allocating nothing: the result's slot and the
/// temporaries come from `workspace`. Synchronizes the stream and returns the
/// sum on the host, with the bits of `transform_reduce` without a workspace.
template <class Algorithm, class Acc, class Op, class... Ins>
Acc transform_reduce(const cuda& policy, Algorithm algorithm, accumulate_in<Acc>, Op op,
                     ::cuda::std::span<std::byte> workspace, ::cuda::std::span<Ins>... ins) {
  detail::check_transform_accumulator<Acc>();
  auto r = detail::transform_reduction<true>("fusekit::transform_reduce", op, static_cast<Acc*>(nullptr), ins...);
  r.workspace = workspace;
  return detail::reduce_on(policy, r, algorithm);
}

}  // namespace fusekit
