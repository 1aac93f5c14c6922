// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What a rank runs on its own: `transform`, `predict` and the sums per
/// segment and per row on a distributed policy (fusekit::mpi, fusekit::nccl)
/// touch no other rank's data, so each rank runs them on its local policy
/// (`policy.local`: its CPU or its GPU) over its own elements, rows or
/// segments. One forwarding entry for both policies (the segmented sums where
/// the local backend exists: detail/reduce/segments.hpp says which).

#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/elementwise/checks.hpp>
#include <fusekit/train_types.hpp>

#include <cuda/std/span>

#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace distributed {

/// Whether P is a distributed policy whose `local` member runs this rank's
/// share (specialized by detail/distributed/mpi.hpp and nccl.cuh).
template <class P>
inline constexpr bool is_distributed_policy_v = false;

template <class P, class Out, class Op, class... Ins, std::enable_if_t<is_distributed_policy_v<P>, int> = 0>
void run_transform(transform_tag, const P& policy, const call_site& site, ::cuda::std::span<Out> out, const Op& op,
                   ::cuda::std::span<Ins>... ins) {
  run_transform(transform_tag{}, policy.local, site, out, op, ins...);  // this rank's elements
}

template <class P, class T, std::enable_if_t<is_distributed_policy_v<P>, int> = 0>
void run_predict(predict_tag, const P& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat,
                 ::cuda::std::span<const T> b = {}) {
  run_predict(predict_tag{}, policy.local, X, W, Y_hat, b);  // this rank's rows
}

template <class P, class Reduction, std::enable_if_t<is_distributed_policy_v<P>, int> = 0>
void run_segmented(segmented_tag, const P& policy, const Reduction& r) {
  run_segmented(segmented_tag{}, policy.local, r);  // this rank's segments
}

}  // namespace distributed
}  // namespace detail
}  // namespace fusekit
