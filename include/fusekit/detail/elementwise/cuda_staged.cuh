// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `transform` on `fusekit::cuda_staged` (staged: views anywhere). With every view in
/// device memory the call is `fusekit::cuda`'s one launch; with a view in host
/// memory the same kernel runs on each chunk of the host-data pipeline
/// (detail/host_data/cuda_pipeline.cuh), the copies of one chunk overlapping
/// the kernel of the one before.

#include <fusekit/detail/elementwise/cuda.cuh>
#include <fusekit/detail/host_data/cuda_pipeline.cuh>
#include <fusekit/detail/host_data/router.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {

// This file is fusekit::cuda_staged's backend of transform (see detail/core/dispatch.hpp).
template <>
struct backend_available<transform_tag, cuda_staged> : std::true_type {};

inline namespace elementwise {

template <class Out, class Op, std::size_t... I, class... Ins>
void pipelined_transform(const cuda& policy, ::cuda::std::span<Out> out, const Op& op,
                         const std::array<pipeline_view, sizeof...(Ins)>& views, const pipeline_view& out_view,
                         std::index_sequence<I...>, ::cuda::std::span<Ins>...) {
  run_pipeline(policy, static_cast<std::int64_t>(out.size()), pipeline_vector_align, views, out_view,
               [&](cudaStream_t stream, std::int64_t, std::int64_t, std::int64_t count,
                   const std::array<const std::byte*, sizeof...(Ins)>& in, std::byte* o) {
                 launch_elementwise(policy, stream, count, op, reinterpret_cast<Out*>(o),
                                    reinterpret_cast<const std::remove_cv_t<Ins>*>(in[I])...);
               });
}

/// `fusekit::cuda_staged`'s route, which the GPU's transform hook
/// (detail/elementwise/cuda.cuh) takes for that policy: views anywhere.
template <class Out, class Op, class... Ins>
void staged_transform(transform_tag, const cuda_staged& policy, const call_site& site, ::cuda::std::span<Out> out,
                      const Op& op, ::cuda::std::span<Ins>... ins) {
  check_transform<Out, Op>(site, out, ins...);
  if (out.empty()) { return; }
  std::array<pipeline_view, sizeof...(Ins)> const views{pipeline_view_of(ins)...};
  pipeline_view const out_view = pipeline_view_of(out);
  route_by_memory(
      views, std::array<memory_space, 1>{out_view.space},
      [&] {
        launch_elementwise(policy, policy.stream, static_cast<std::int64_t>(out.size()), op, out.data(), ins.data()...);
      },
      [&] { pipelined_transform(policy, out, op, views, out_view, std::index_sequence_for<Ins...>{}, ins...); });
}

}  // namespace elementwise
}  // namespace detail
}  // namespace fusekit
