// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of `transform` (see elementwise.hpp for the contract): one
/// grid-stride kernel per call, launched on the policy's stream.

#include <fusekit/detail/elementwise_body.hpp>
#include <fusekit/detail/launch.cuh>
#include <fusekit/elementwise.hpp>

#include <cuda_runtime.h>

namespace fusekit {
namespace detail {

template <class Out, class Op, class... Ins>
__global__ void __launch_bounds__(default_block_size)
    elementwise_kernel(elementwise_plan plan, Op op, Out* out, const Ins*... ins) {
  elementwise_thread(global_thread_id(), grid_stride(), plan, op, out, ins...);
}

template <class Out, class Op, class... Ins>
void run_transform(const call_site& site, const cuda& policy, ::cuda::std::span<Out> out, const Op& op,
                   ::cuda::std::span<Ins>... ins) {
  check_transform<Out, Op>(site, out, ins...);
  if (out.empty()) { return; }
  elementwise_plan const plan = plan_for(static_cast<std::int64_t>(out.size()), out.data(), ins.data()...);
  auto const kernel = elementwise_kernel<Out, Op, Ins...>;
  launch(kernel, resident_grid(kernel, plan.items(), default_block_size), default_block_size, 0, policy.stream, plan,
         op, out.data(), ins.data()...);
}

}  // namespace detail
}  // namespace fusekit
