// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of `transform` (contract in elementwise.hpp): one grid-stride
/// kernel per call on the policy's stream, around the body the CPU tests run
/// over every thread index (detail/elementwise/body.hpp). Device memory only;
/// `fusekit::cuda_staged` runs the same kernel on each chunk of the host-data
/// pipeline (detail/elementwise/cuda_staged.cuh).

#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/core/memory_space.hpp>
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

/// The GPU's transform hook, on `fusekit::cuda` (device memory) and
/// `fusekit::cuda_staged` (views anywhere: `staged_transform`,
/// detail/elementwise/cuda_staged.cuh).
template <class P, class Out, class Op, class... Ins, std::enable_if_t<is_gpu_policy_v<P>, int> = 0>
void run_transform(transform_tag, const P& policy, const call_site& site, ::cuda::std::span<Out> out, const Op& op,
                   ::cuda::std::span<Ins>... ins) {
  if constexpr (std::is_same_v<P, cuda_staged>) {
    staged_transform(transform_tag{}, policy, site, out, op, ins...);
  } else {
    check_transform<Out, Op>(site, out, ins...);
    if (out.empty()) { return; }
    std::size_t k = 1;
    expect_device_memory(site.function, site.names[0], out.data());
    (expect_device_memory(site.function, site.names[k++], ins.data()), ...);
    launch_elementwise(policy, policy.stream, static_cast<std::int64_t>(out.size()), op, out.data(), ins.data()...);
  }
}

}  // namespace elementwise
}  // namespace detail
}  // namespace fusekit
