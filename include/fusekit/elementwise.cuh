// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of `transform` (see elementwise.hpp for the contract): one
/// grid-stride kernel per call, launched on the policy's stream.

#include <fusekit/detail/elementwise_body.hpp>
#include <fusekit/detail/launch.hpp>
#include <fusekit/elementwise.hpp>

#include <cuda_runtime.h>

namespace fusekit {
namespace detail {

template <class Out, class Op, class... Ins>
__global__ void __launch_bounds__(default_block_size)
    elementwise_kernel(elementwise_plan plan, Op op, Out* out, const Ins*... ins) {
  std::int64_t const thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t const threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  elementwise_thread(thread, threads, plan, op, out, ins...);
}

/// Grid for `kernel`: one thread per work item, at most the blocks resident at once.
template <class Kernel>
int resident_grid(Kernel kernel, std::int64_t items, int block_size) {
  int blocks_per_sm = 0;
  FUSEKIT_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, block_size, 0));
  return grid_size(items, block_size, current_sm_count(), blocks_per_sm);
}

template <class Out, class Op, class... Ins>
void run_transform(const call_site& site, const cuda& policy, ::cuda::std::span<Out> out, const Op& op,
                   ::cuda::std::span<Ins>... ins) {
  check_transform<Out, Op>(site, out, ins...);
  if (out.empty()) { return; }
  elementwise_plan const plan = plan_for(static_cast<std::int64_t>(out.size()), out.data(), ins.data()...);
  auto const kernel = elementwise_kernel<Out, Op, Ins...>;
  int const grid = resident_grid(kernel, plan.items(), default_block_size);
  kernel<<<grid, default_block_size, 0, policy.stream>>>(plan, op, out.data(), ins.data()...);
  FUSEKIT_CHECK_LAUNCH();
}

}  // namespace detail
}  // namespace fusekit
