// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of `transform` (contract in elementwise.hpp): one SIMD loop per
/// thread over a contiguous range, in blocks that read the inputs ahead when
/// the call's data is past the caches. The functors are branch-free, so gcc
/// vectorizes the whole fused op (tanh included) without -ffast-math.

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/elementwise/checks.hpp>
#include <fusekit/detail/core/numeric.hpp>
#include <fusekit/detail/core/prefetch.hpp>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/tuning.hpp>

#include <cuda/std/span>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace elementwise {

/// Prefetches the lines of in[i + d, i + d + block), d = prefetch_ahead_bytes
/// in elements, when they lie before `end`.
template <class In>
FUSEKIT_FORCEINLINE void prefetch_block_ahead(const In* in, std::int64_t i, std::int64_t end) {
  constexpr std::int64_t block = cpu_stream_tuning::block;
  constexpr std::int64_t ahead = cpu_stream_tuning::prefetch_ahead_bytes / static_cast<std::int64_t>(sizeof(In));
  if (i + ahead + block <= end) { prefetch_bytes(in + i + ahead, block * static_cast<std::int64_t>(sizeof(In))); }
}

template <class Out, class Op, class... Ins>
void cpu_transform(const cpu& policy, std::int64_t n, const Op& op, Out* out, const Ins*... ins) {
  constexpr std::int64_t bytes_per_element = static_cast<std::int64_t>((sizeof(Out) + ... + sizeof(Ins)));
  bool const stream = n > cpu_stream_tuning::prefetch_from_bytes / bytes_per_element;
  cpu_for_ranges(policy, n, [&](int, std::int64_t begin, std::int64_t end) {
    isa_dispatch([&]() FUSEKIT_LAMBDA_INLINE {
      // A copy of the op: the loop's stores could alias the caller's object,
      // so its members (normalize's scale) would be loaded again every step.
      Op const local_op = op;
      auto const loop = [&](std::int64_t b, std::int64_t e) FUSEKIT_LAMBDA_INLINE {
        FUSEKIT_SIMD_LOOP
        for (std::int64_t i = b; i < e; ++i) { out[i] = convert<Out>(local_op(ins[i]...)); }
      };
      std::int64_t i = begin;
      if (stream) {
        // Past the caches: blocks, each input read ahead (tuning.hpp, cpu_stream_tuning).
        for (; i + cpu_stream_tuning::block <= end; i += cpu_stream_tuning::block) {
          (prefetch_block_ahead(ins, i, end), ...);
          loop(i, i + cpu_stream_tuning::block);
        }
      }
      loop(i, end);
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
