// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of `transform` (contract in elementwise.hpp): one SIMD loop per
/// thread over a contiguous range. The functors are branch-free, so gcc
/// vectorizes the whole fused op (tanh included) without -ffast-math.

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/elementwise/checks.hpp>
#include <fusekit/detail/core/numeric.hpp>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace elementwise {

template <class Out, class Op, class... Ins>
void cpu_transform(const cpu& policy, std::int64_t n, const Op& op, Out* out, const Ins*... ins) {
  cpu_for_ranges(policy, n, [&](int, std::int64_t begin, std::int64_t end) {
    isa_dispatch([&]() FUSEKIT_LAMBDA_INLINE {
      FUSEKIT_SIMD_LOOP
      for (std::int64_t i = begin; i < end; ++i) { out[i] = convert<Out>(op(ins[i]...)); }
    });
  });
}

template <class Out, class Op, class... Ins>
void run(transform_tag, const cpu& policy, const call_site& site, ::cuda::std::span<Out> out, const Op& op,
         ::cuda::std::span<Ins>... ins) {
  static_assert(!is_host_opaque_v<Op>,
                "fusekit::transform: a __device__ lambda cannot run on the CPU; make it __host__ __device__");
  check_transform<Out, Op>(site, out, ins...);
  cpu_transform(policy, static_cast<std::int64_t>(out.size()), no_throw(op), out.data(), ins.data()...);
}

}  // namespace elementwise
}  // namespace detail
}  // namespace fusekit
