// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of `transform` (contract in elementwise.hpp): one grid-stride
/// kernel per call on the policy's stream, around the body the CPU tests run
/// over every thread index (detail/elementwise/body.hpp). With a view in host
/// memory the same kernel runs on each chunk of the host-data pipeline
/// (detail/host_data/cuda_pipeline.cuh).

#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/host_data/cuda_pipeline.cuh>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/elementwise/body.hpp>
#include <fusekit/detail/elementwise/checks.hpp>
#include <fusekit/detail/elementwise/stages.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <utility>

namespace fusekit {
namespace detail {

// This file is the GPU backend of these algorithms (see detail/core/dispatch.hpp).
template <>
struct backend_available<transform_tag, cuda> : std::true_type {};

inline namespace elementwise {

template <class Out, class Op, class... Ins>
__global__ void elementwise_kernel(elementwise_plan plan, Op op, Out* out, const Ins*... ins) {
  // The op's prepared form (detail/elementwise/stages.hpp): normalize's
  // reciprocal is computed here, once per thread, not per element.
  elementwise_thread(global_thread_id(), grid_stride(), plan, prepared_stage(op), out, ins...);
}

/// The elementwise kernel over n elements of device views.
template <class Out, class Op, class... Ins>
void launch_elementwise(const cuda& policy, cudaStream_t stream, std::int64_t n, const Op& op, Out* out,
                        const Ins*... ins) {
  elementwise_plan const plan = plan_for(n, out, ins...);
  auto const kernel = elementwise_kernel<Out, Op, Ins...>;
  int const block = tuning_of(policy).elementwise.block_threads;
  launch(kernel, resident_grid(kernel, plan.items(), block), block, 0, stream, plan, op, out, ins...);
}

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

template <class Out, class Op, class... Ins>
void run_transform(transform_tag, const cuda& policy, const call_site& site, ::cuda::std::span<Out> out, const Op& op,
                   ::cuda::std::span<Ins>... ins) {
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
