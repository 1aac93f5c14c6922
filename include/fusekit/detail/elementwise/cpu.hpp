// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of `transform` (contract in elementwise.hpp): one SIMD loop per
/// chunk of contiguous elements (on the caller and the pool's running helpers), in blocks that read the inputs ahead
/// when the call's data is past the caches, and that store an output too large for the caches past them. The functors
/// are branch-free, so gcc vectorizes the whole fused op (tanh included) without -ffast-math.

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/elementwise/checks.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/core/prefetch.hpp>
#include <fusekit/detail/core/stream_store.hpp>
#include <fusekit/detail/team/cpu_simd.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/tuning.hpp>

#include <cuda/std/span>

#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {

// This file is the CPU backend of transform (see detail/core/dispatch.hpp).
template <>
struct backend_available<transform_tag, cpu> : std::true_type {};

inline namespace elementwise {

/// How `transform` is cut into chunks and from how many elements on helpers
/// join (tuning.hpp, cpu_thread_tuning).
inline constexpr cpu_loop cpu_transform_loop{cpu_thread_tuning::transform_grain,
                                             cpu_thread_tuning::transform_parallel_from};

/// Prefetches the lines of in[i + d, i + d + block), d = prefetch_ahead_bytes
/// in elements, when they lie before `end`.
template <class In>
FUSEKIT_FORCEINLINE void prefetch_block_ahead(const In* in, std::int64_t i, std::int64_t end) {
  constexpr std::int64_t block = cpu_stream_tuning::block;
  constexpr std::int64_t ahead = cpu_stream_tuning::prefetch_ahead_bytes / static_cast<std::int64_t>(sizeof(In));
  if (i + ahead + block <= end) { prefetch_bytes(in + i + ahead, block * static_cast<std::int64_t>(sizeof(In))); }
}

/// How a call's loop meets the memory: `prefetch`, its inputs read ahead in
/// blocks (past the L2 caches); `stream`, its output stored past the caches
/// in whole lines (an output past the last-level cache).
struct transform_streaming {
  bool prefetch = false;
  bool stream = false;
};

/// Whether Out can be stored in whole lines: the lines of a block of Out are
/// whole when its address is, and that address is reached in whole elements.
template <class Out>
inline constexpr bool line_storable_v = FUSEKIT_STREAM_STORES&& std::is_trivially_copyable_v<Out>&& stream_line_bytes %
                                            sizeof(Out) ==
                                        0;

/// The streaming of a call over n elements (tuning.hpp, cpu_stream_tuning).
template <class Out, class... Ins>
transform_streaming transform_streaming_for(std::int64_t n) {
  constexpr std::int64_t bytes_per_element = static_cast<std::int64_t>((sizeof(Out) + ... + sizeof(Ins)));
  transform_streaming s;
  s.prefetch = n > cpu_stream_tuning::prefetch_from_bytes / bytes_per_element;
  s.stream =
      line_storable_v<Out> && n >= cpu_stream_tuning::stream_stores_from_bytes / static_cast<std::int64_t>(sizeof(Out));
  return s;
}

/// out[i] = op(ins[i]...) for i < n, streamed as `how` says (a test passes its own).
template <class Out, class Op, class... Ins>
void cpu_transform_streamed(const cpu& policy, transform_streaming how, std::int64_t n, const Op& op, Out* out,
                            const Ins*... ins) {
  constexpr std::int64_t block = cpu_stream_tuning::block;
  cpu_for_chunks(policy, n, cpu_transform_loop, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
    isa_dispatch_wide([&]() FUSEKIT_LAMBDA_INLINE {
      // A copy of the op: the loop's stores could alias the caller's object,
      // so its members (normalize's scale) would be loaded again every step.
      Op const local_op = op;
      auto const loop = [&](std::int64_t b, std::int64_t e) FUSEKIT_LAMBDA_INLINE {
        FUSEKIT_SIMD_LOOP
        for (std::int64_t i = b; i < e; ++i) { out[i] = convert<Out>(local_op(ins[i]...)); }
      };
      std::int64_t i = begin;
      if (how.prefetch && how.stream) {
        if constexpr (line_storable_v<Out>) {
          // Plain stores up to the first whole line, then blocks computed
          // into a staging buffer (in L1) and stored past the caches.
          std::int64_t const first_line = [&] {
            std::int64_t k = begin;
            while (k < end && reinterpret_cast<std::uintptr_t>(out + k) % stream_line_bytes != 0) { ++k; }
            return k;
          }();
          loop(i, first_line);
          i = first_line;
          for (; i + block <= end; i += block) {
            (prefetch_block_ahead(ins, i, end), ...);
            alignas(stream_line_bytes) Out staged[block];
            FUSEKIT_SIMD_LOOP
            for (std::int64_t j = 0; j < block; ++j) { staged[j] = convert<Out>(local_op(ins[i + j]...)); }
            stream_store_lines(out + i, staged, static_cast<std::int64_t>(sizeof staged));
          }
          stream_fence();
        }
      } else if (how.prefetch) {
        // Past the caches: blocks, each input read ahead (tuning.hpp, cpu_stream_tuning).
        for (; i + block <= end; i += block) {
          (prefetch_block_ahead(ins, i, end), ...);
          loop(i, i + block);
        }
      }
      loop(i, end);
    });
  });
}

template <class Out, class Op, class... Ins>
void cpu_transform(const cpu& policy, std::int64_t n, const Op& op, Out* out, const Ins*... ins) {
  cpu_transform_streamed(policy, transform_streaming_for<Out, Ins...>(n), n, op, out, ins...);
}

template <class Out, class Op, class... Ins>
void run_transform(transform_tag, const cpu& policy, const call_site& site, ::cuda::std::span<Out> out, const Op& op,
                   ::cuda::std::span<Ins>... ins) {
  static_assert(!is_host_opaque_v<Op>,
                "fusekit::transform: a __device__ lambda cannot run on the CPU; make it __host__ __device__");
  check_transform<Out, Op>(site, out, ins...);
  cpu_transform(policy, static_cast<std::int64_t>(out.size()), no_throw(op), out.data(), ins.data()...);
}

}  // namespace elementwise
}  // namespace detail
}  // namespace fusekit
