// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of the reductions.
///
/// * `cpu_parallel_sum`: OpenMP threads over blocks of 4096 values; each block
///   is summed 8 lanes wide (SIMD) in double for floating accumulators (in the
///   64-bit accumulator for integers), block sums are added in double, and the
///   total is rounded to the accumulator type once: a float sum is the correctly
///   rounded double sum, and costs no more than a float one while memory-bound.
/// * `cpu_tree_sum`: the deterministic tree of detail/reduce_tree.hpp, tiles in
///   parallel, bit-identical to the GPU.

#include <fusekit/config.hpp>
#include <fusekit/cpu/elementwise.hpp>
#include <fusekit/detail/reduce_tree.hpp>
#include <fusekit/policy.hpp>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {

inline constexpr std::int64_t cpu_sum_block = 4096;

/// The type block sums are carried in: double for floating accumulators, the
/// accumulator's unsigned twin for integers (two's-complement wrap-around is
/// defined for unsigned types only; converting back gives the wrapped value).
template <class Acc>
using cpu_carry_t = typename std::conditional_t<std::is_floating_point_v<Acc>, std::common_type<double>,
                                                std::make_unsigned<Acc>>::type;

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

template <class Acc, class Src>
cpu_carry_t<Acc> cpu_block_sum(const Src& src, std::int64_t begin, std::int64_t end) {
  using Carry = cpu_carry_t<Acc>;
  constexpr int width = 8;
  Carry lane[width] = {};
  std::int64_t i = begin;
  for (; i + width <= end; i += width) {
#if FUSEKIT_HAS_OPENMP
#pragma omp simd
#endif
    for (int l = 0; l < width; ++l) { lane[l] += static_cast<Carry>(src(i + l)); }
  }
  for (; i < end; ++i) { lane[0] += static_cast<Carry>(src(i)); }
  Carry s = Carry(0);
  for (Carry v : lane) { s += v; }
  return s;
}

template <class Acc, class Src>
Acc cpu_parallel_sum_loop(int threads, const Src& src, std::int64_t n) {
  using Carry = cpu_carry_t<Acc>;
  std::int64_t const blocks = (n + cpu_sum_block - 1) / cpu_sum_block;
  Carry total = Carry(0);
  (void)threads;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : total) if (n >= cpu_parallel_threshold)
#endif
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::int64_t const begin = b * cpu_sum_block;
    std::int64_t const end = begin + cpu_sum_block < n ? begin + cpu_sum_block : n;
    total += cpu_block_sum<Acc>(src, begin, end);
  }
  return narrow_sum<Acc>(total);
}

#if FUSEKIT_CPU_DISPATCH
template <class Acc, class Src>
FUSEKIT_TARGET_AVX2 Acc cpu_parallel_sum_loop_avx2(int threads, const Src& src, std::int64_t n) {
  return cpu_parallel_sum_loop<Acc>(threads, src, n);
}
#endif

template <class Acc, class Src>
Acc cpu_parallel_sum(const cpu& policy, const Src& src, std::int64_t n) {
  int const threads = cpu_thread_count(policy);
#if FUSEKIT_CPU_DISPATCH
  if (cpu_has_avx2_fma()) { return cpu_parallel_sum_loop_avx2<Acc>(threads, src, n); }
#endif
  return cpu_parallel_sum_loop<Acc>(threads, src, n);
}

/// One level of the tree: tile sums of n values into `partials`.
template <class Acc, class Src>
void cpu_tree_level(int threads, const Src& src, std::int64_t n, Acc* partials) {
  std::int64_t const tiles = tree_level_size(n);
  (void)threads;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (n >= cpu_parallel_threshold)
#endif
  for (std::int64_t t = 0; t < tiles; ++t) { partials[t] = tree_tile_sum<Acc>(src, t, n); }
}

template <class Acc, class Src>
Acc cpu_tree_sum(const cpu& policy, const Src& src, std::int64_t n) {
  if (n == 0) { return Acc(0); }
  int const threads = cpu_thread_count(policy);
  std::vector<Acc> level(static_cast<std::size_t>(tree_level_size(n)));
  cpu_tree_level(threads, src, n, level.data());
  std::int64_t m = static_cast<std::int64_t>(level.size());
  while (m > 1) {
    std::vector<Acc> next(static_cast<std::size_t>(tree_level_size(m)));
    cpu_tree_level(threads, [&level](std::int64_t i) { return level[static_cast<std::size_t>(i)]; }, m, next.data());
    level.swap(next);
    m = static_cast<std::int64_t>(level.size());
  }
  return level[0];
}

}  // namespace detail
}  // namespace fusekit
