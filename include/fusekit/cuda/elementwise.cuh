// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of `transform` (contract in elementwise.hpp): one grid-stride
/// kernel per call on the policy's stream, around the body the CPU tests run
/// over every thread index (detail/elementwise_body.hpp).

#include <fusekit/cuda/launch.cuh>
#include <fusekit/detail/dispatch.hpp>
#include <fusekit/detail/elementwise_body.hpp>
#include <fusekit/detail/elementwise_checks.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>
#include <cuda_runtime.h>

#include <cstdint>

namespace fusekit {
namespace detail {

// This file is the GPU backend of these algorithms (see detail/dispatch.hpp).
template <> struct backend_available<transform_tag, cuda> : std::true_type {};

template <class Out, class Op, class... Ins>
__global__ void elementwise_kernel(elementwise_plan plan, Op op, Out* out, const Ins*... ins) {
  elementwise_thread(global_thread_id(), grid_stride(), plan, op, out, ins...);
}

template <class Out, class Op, class... Ins>
void run(transform_tag, const cuda& policy, const call_site& site, ::cuda::std::span<Out> out, const Op& op,
         ::cuda::std::span<Ins>... ins) {
  check_transform<Out, Op>(site, out, ins...);
  if (out.empty()) { return; }
  elementwise_plan const plan = plan_for(static_cast<std::int64_t>(out.size()), out.data(), ins.data()...);
  auto const kernel = elementwise_kernel<Out, Op, Ins...>;
  int const block = tuning_of(policy).elementwise.block_threads;
  launch(kernel, resident_grid(kernel, plan.items(), block), block, 0, policy.stream, plan, op, out.data(),
         ins.data()...);
}

}  // namespace detail
}  // namespace fusekit
