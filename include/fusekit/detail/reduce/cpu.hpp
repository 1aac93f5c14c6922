// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of the reductions (contract in reduce.hpp). Each algorithm name
/// runs its algorithm here too, so its error and its run-to-run behaviour are
/// what the name promises on both backends:
///
/// * `naive_atomic`: one host atomic per element (cuda::atomic_ref), from every thread.
/// * `block_atomic`: a partial per chunk of 2^15 values in the accumulator type, one atomic each.
/// * `run_to_run` — `cpu_parallel_sum`: chunks of 8 blocks of 4096 values, each block
///   summed 8 lanes wide (SIMD) in double for floating accumulators (in
///   the 64-bit accumulator for integers); the block sums are added in double
///   and the chunks' totals in chunk order (so the bits depend on n alone), and the total is rounded to the
///   accumulator type once: a float sum is the correctly rounded double sum,
///   and costs no more than a float one while memory-bound.
/// * `deterministic` — `cpu_tree_reduce`: the tree, tiles in parallel, each by the
///   tile function the GPU runs (detail/reduce/tree.hpp) on a serial_team whose
///   column pass and pairwise steps run in host vectors (detail/team/cpu_columns.hpp)
///   for arrays: 32-byte vectors where the CPU has AVX2, additions barred from
///   fusing or regrouping, the rows two batches on prefetched; a tile of
///   integers summed into 64 bits, one exact sum (detail/reduce/cpu_exact_tiles.hpp).
///   Sources that compute (transform_reduce) run on the baseline ISA.
/// * `cpu_parallel_reduce`: the parallel reduction for ops other than plus.
///
/// Every loop runs on the calling thread and the pool's running helpers
/// (detail/core/cpu_pool.hpp): chunks, never per-thread ranges.

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/reduce/checks.hpp>
#include <fusekit/detail/reduce/reduction.hpp>
#include <fusekit/detail/reduce/cpu_exact_tiles.hpp>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/detail/reduce/tree.hpp>
#include <fusekit/detail/team/cpu_team.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/tuning.hpp>

#include <cuda/atomic>
#include <cuda/std/span>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace fusekit {
namespace detail {

// This file is the CPU backend of the reductions (see detail/core/dispatch.hpp).
template <>
struct backend_available<reduce_tag, cpu> : std::true_type {};

inline namespace reduce {

inline constexpr std::int64_t cpu_sum_block = 4096;

/// How the CPU reductions are cut into chunks (the parallel sum's in blocks
/// of cpu_sum_block, the tree's in tiles, the others' in values) and from how
/// many values on helpers join (tuning.hpp, cpu_thread_tuning). A chunk's part is added in chunk order, so the
/// `run_to_run` and ordered-op results depend on n alone, not on the thread count.
inline constexpr cpu_loop cpu_sum_loop{cpu_thread_tuning::sum_grain_blocks, cpu_thread_tuning::sum_parallel_from};
inline constexpr cpu_loop cpu_tree_loop{cpu_thread_tuning::tree_grain_tiles, cpu_thread_tuning::tree_parallel_from};
inline constexpr cpu_loop cpu_values_loop{cpu_thread_tuning::values_grain, cpu_thread_tuning::values_parallel_from};

/// The type block sums are carried in: double for floating accumulators, the
/// accumulator's unsigned twin for integers (two's-complement wrap-around is
/// defined for unsigned types only; converting back gives the wrapped value).
template <class Acc>
using cpu_carry_t =
    typename std::conditional_t<std::is_floating_point_v<Acc>, std::common_type<double>, std::make_unsigned<Acc>>::type;

/// The carried total as the accumulator: one rounding for floating types (to
/// ±inf beyond float's range: convert), the wrapped value for integers.
template <class Acc, class Carry>
Acc narrow_sum(Carry total) {
  if constexpr (std::is_floating_point_v<Acc>) {
    return convert<Acc>(total);
  } else {
    return static_cast<Acc>(total);
  }
}

/// Σ src(i) over [begin, end), 8 lanes wide.
template <class Acc, class Src>
FUSEKIT_FORCEINLINE cpu_carry_t<Acc> cpu_block_sum(const Src& src, std::int64_t begin, std::int64_t end) {
  using Carry = cpu_carry_t<Acc>;
  constexpr int width = 8;
  Carry lane[width] = {};
  std::int64_t i = begin;
  for (; i + width <= end; i += width) {
    FUSEKIT_SIMD_LOOP
    for (int l = 0; l < width; ++l) { lane[l] += static_cast<Carry>(src(i + l)); }
  }
  for (; i < end; ++i) { lane[0] += static_cast<Carry>(src(i)); }
  Carry s = Carry(0);
  for (Carry v : lane) { s += v; }
  return s;
}

template <class Acc, class Src>
Acc cpu_parallel_sum(const cpu& policy, const Src& src, std::int64_t n) {
  using Carry = cpu_carry_t<Acc>;
  cpu_chunks const split = cpu_split((n + cpu_sum_block - 1) / cpu_sum_block, cpu_sum_loop.grain);
  std::vector<Carry> parts(static_cast<std::size_t>(split.chunks), Carry(0));
  cpu_for_chunks(policy, split, n, cpu_sum_loop.parallel_from,
                 [&](std::int64_t part, std::int64_t first, std::int64_t last) {
                   parts[static_cast<std::size_t>(part)] = isa_dispatch([&]() FUSEKIT_LAMBDA_INLINE {
                     Carry total = Carry(0);
                     for (std::int64_t b = first; b < last; ++b) {
                       std::int64_t const end = (b + 1) * cpu_sum_block < n ? (b + 1) * cpu_sum_block : n;
                       total += cpu_block_sum<Acc>(src, b * cpu_sum_block, end);
                     }
                     return total;
                   });
                 });
  Carry total = Carry(0);
  for (Carry p : parts) { total += p; }
  return narrow_sum<Acc>(total);
}

/// Chunks of values reduced with op, then the chunks' results in order: the
/// parallel reduction for an op other than plus (n ≥ 1).
template <class Acc, class Src, class Op>
Acc cpu_parallel_reduce(const cpu& policy, const Src& src, std::int64_t n, const Op& op) {
  cpu_chunks const split = cpu_split(n, cpu_values_loop.grain);
  std::vector<Acc> parts(static_cast<std::size_t>(split.chunks));
  cpu_for_chunks(policy, split, n, cpu_values_loop.parallel_from,
                 [&](std::int64_t part, std::int64_t first, std::int64_t last) {
                   Acc a = src(first);
                   for (std::int64_t i = first + 1; i < last; ++i) { a = op(a, src(i)); }
                   parts[static_cast<std::size_t>(part)] = a;
                 });
  Acc total = parts[0];
  for (std::size_t p = 1; p < parts.size(); ++p) { total = op(total, parts[p]); }
  return total;
}

/// Tiles [first, last) of the tree's level over n values: tile t's result into
/// partials[t − first]. (A distributed sum computes the tiles it owns this way.)
template <class Acc, class Src, class Op>
void cpu_tree_tiles(const cpu& policy, const Src& src, const Op& op, std::int64_t n, std::int64_t first,
                    std::int64_t last, Acc* partials) {
  cpu_for_chunks(policy, cpu_split(last - first, cpu_tree_loop.grain), (last - first) * tree_tile,
                 cpu_tree_loop.parallel_from, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
                   auto const tiles = [&](auto width) FUSEKIT_LAMBDA_INLINE {
                     alignas(64) Acc lane[tree_lanes];  // whole cache lines: no vector of lanes straddles two
                     for (std::int64_t t = first + begin; t < first + end; ++t) {
                       partials[t - first] =
                           tree_tile_reduce<Acc>(basic_serial_team<decltype(width)::value>{}, lane, src, op, t, n);
                     }
                     return 0;
                   };
                   // A sum of integers into 64 bits: each tile one exact sum, whose bits
                   // are the tree's. Arrays of plus, min or max: in host vectors, for
                   // AVX2 where the CPU has it (additions barred from fusing and
                   // regrouping: detail/team/cpu_columns.hpp). Anything else on the
                   // baseline ISA: in code built for FMA the compiler may fuse a product
                   // of src into the tree's add (see detail/base/rounding.hpp).
                   if constexpr (exact_tile_sum<Op, Acc, Src>) {
                     cpu_exact_tiles(src, n, first + begin, first + end, partials + begin);
                   } else if constexpr (vector_columns<Op, Acc> && is_array_source_v<Src>) {
                     (void)isa_dispatch_vectors(tiles);
                   } else {
                     (void)tiles(std::integral_constant<int, 0>{});
                   }
                 });
}

/// The tree's levels past the first, over the values of its first level.
template <class Acc, class Op>
Acc cpu_tree_upper(const cpu& policy, std::vector<Acc> level, const Op& op) {
  while (level.size() > 1) {
    std::vector<Acc> next(static_cast<std::size_t>(tree_level_size(static_cast<std::int64_t>(level.size()))));
    cpu_tree_tiles(policy, array_source<Acc, Acc>{level.data()}, op, static_cast<std::int64_t>(level.size()), 0,
                   static_cast<std::int64_t>(next.size()), next.data());
    level.swap(next);
  }
  return level[0];
}

/// The tree's result over n ≥ 1 values.
template <class Acc, class Src, class Op>
Acc cpu_tree_reduce(const cpu& policy, const Src& src, const Op& op, std::int64_t n) {
  std::vector<Acc> level(static_cast<std::size_t>(tree_level_size(n)));
  cpu_tree_tiles(policy, src, op, n, 0, static_cast<std::int64_t>(level.size()), level.data());
  return cpu_tree_upper(policy, std::move(level), op);
}

/// *out = op(*out, v) as one host atomic: cuda::atomic_ref, the host twin of
/// CUDA's atomicAdd/Min/Max (integers add as unsigned: wrap-around, defined).
template <class Op, class Acc>
void cpu_atomic_combine(Acc* out, Acc v, Op) {
  constexpr auto relaxed = ::cuda::std::memory_order_relaxed;
  if constexpr (std::is_same_v<Op, plus> && std::is_integral_v<Acc>) {
    using U = std::make_unsigned_t<Acc>;
    ::cuda::atomic_ref<U, ::cuda::thread_scope_system>(*reinterpret_cast<U*>(out))
        .fetch_add(static_cast<U>(v), relaxed);
  } else if constexpr (std::is_same_v<Op, plus>) {
    ::cuda::atomic_ref<Acc, ::cuda::thread_scope_system>(*out).fetch_add(v, relaxed);
  } else if constexpr (std::is_same_v<Op, minimum>) {
    ::cuda::atomic_ref<Acc, ::cuda::thread_scope_system>(*out).fetch_min(v, relaxed);
  } else {
    ::cuda::atomic_ref<Acc, ::cuda::thread_scope_system>(*out).fetch_max(v, relaxed);
  }
}

/// `naive_atomic` on the CPU: every element is its own atomic on one value,
/// from every thread, as on the GPU (slow by design: the cache line bounces).
template <class Acc, class Src, class Op>
Acc cpu_naive_atomic(const cpu& policy, const Src& src, std::int64_t n, const Op& op, Acc init) {
  Acc result = init;
  cpu_for_chunks(policy, n, cpu_values_loop, [&](std::int64_t, std::int64_t first, std::int64_t last) {
    for (std::int64_t i = first; i < last; ++i) { cpu_atomic_combine(&result, src(i), op); }
  });
  return result;
}

/// `block_atomic` on the CPU: each chunk of values (a GPU block's range) is
/// reduced in the accumulator type, 8 SIMD lanes wide (its threads), and added
/// with one atomic.
template <class Acc, class Src, class Op>
Acc cpu_block_atomic(const cpu& policy, const Src& src, std::int64_t n, const Op& op, Acc init) {
  Acc result = init;
  cpu_for_chunks(policy, n, cpu_values_loop, [&](std::int64_t, std::int64_t first, std::int64_t last) {
    Acc const part = isa_dispatch([&]() FUSEKIT_LAMBDA_INLINE {
      constexpr int width = 8;
      Acc lane[width];
      for (auto& v : lane) { v = atomic_op<Op, Acc>::identity(); }
      std::int64_t i = first;
      for (; i + width <= last; i += width) {
        FUSEKIT_SIMD_LOOP
        for (int l = 0; l < width; ++l) { lane[l] = op(lane[l], src(i + l)); }
      }
      for (; i < last; ++i) { lane[0] = op(lane[0], src(i)); }
      Acc total = lane[0];
      for (int l = 1; l < width; ++l) { total = op(total, lane[l]); }
      return total;
    });
    cpu_atomic_combine(&result, part, op);
  });
  return result;
}

/// init ⊕ the n values of src, by the algorithm the tag names (checked by the
/// caller: the atomic ones only for an op with an atomic): per-element atomics,
/// per-chunk partials with one atomic each, the parallel reduction
/// (`run_to_run`; for plus the double-carried sum), or the tree. Only the
/// named algorithm is compiled.
template <class Acc, class Src, class Op, class A>
Acc cpu_reduce(const cpu& policy, const Src& src, std::int64_t n, A, const Op& op, Acc init) {
  if (n == 0) { return init; }
  if constexpr (std::is_same_v<A, naive_atomic>) {
    return cpu_naive_atomic(policy, src, n, op, init);
  } else if constexpr (std::is_same_v<A, block_atomic>) {
    return cpu_block_atomic(policy, src, n, op, init);
  } else if constexpr (std::is_same_v<A, deterministic>) {
    return op(init, cpu_tree_reduce<Acc>(policy, src, op, n));
  } else if constexpr (std::is_same_v<A, run_to_run> && std::is_same_v<Op, plus>) {
    return op(init, cpu_parallel_sum<Acc>(policy, src, n));
  } else if constexpr (std::is_same_v<A, run_to_run>) {
    return op(init, cpu_parallel_reduce<Acc>(policy, src, n, op));
  } else {
    return init;  // rejected_algorithm: check_reduction has thrown
  }
}

/// The source as the CPU runs it: a caller's op behind no_throw (it runs on
/// helper threads; an exception calls std::terminate, as reduce.hpp says).
template <class Acc, class T>
const array_source<Acc, T>& cpu_source(const array_source<Acc, T>& src) {
  return src;
}

template <class Acc, class F, class... Ins>
auto cpu_source(const transform_source<Acc, F, Ins...>& src) {
  using guarded = decltype(no_throw(src.op));
  return transform_source<Acc, guarded, Ins...>{no_throw(src.op), src.ins};
}

/// The CPU's reduction hook (detail/reduce/reduction.hpp): every public form
/// of the sums and reductions on `fusekit::cpu` arrives here.
template <class R, class A>
auto run_reduce(reduce_tag, const cpu& policy, const R& r, A algorithm) {
  std::int64_t const n = check_reduction(r, algorithm);
  auto const result =
      cpu_reduce<typename R::accumulator>(policy, cpu_source(r.src), n, algorithm, no_throw(r.op), r.init);
  if constexpr (R::returns_value) {
    return result;
  } else {
    *r.out = result;
  }
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
