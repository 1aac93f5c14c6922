// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU backend of the sums per segment and per row: each segment is the
/// deterministic tree over that segment alone (detail/reduce/tree.hpp), so
/// out[s] has the bits of `sum(cpu{}, segment s)` on any thread count.
///
/// * Segments of 2^17 values or more (cpu_thread_tuning::tree_parallel_from)
///   run one after another, each on every thread, as the single sum does.
/// * The others are cut into chunks of whole segments, about 2^15 values a
///   chunk, and the chunks run on the pool; each segment on one thread:
///   - up to 256 values (one partly filled tile): the tree's pairwise steps
///     over them alone, without the tile's 32-row pass;
///   - more: the tree itself, on that thread.
///   Integers into 64 bits are exact: any order gives the tree's bits.
///
/// Which thread sums which segment never changes a result: a segment's value
/// depends on its values alone.

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/reduce/cpu.hpp>
#include <fusekit/detail/reduce/segments.hpp>
#include <fusekit/detail/reduce/tree.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/reduce_types.hpp>
#include <fusekit/tuning.hpp>

#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {

// This file is the CPU backend of the segmented sums (see detail/core/dispatch.hpp).
template <>
struct backend_available<segmented_tag, cpu> : std::true_type {};

inline namespace reduce {

/// The tree's sum of n values, 1 ≤ n ≤ tree_lanes (one tile, partly filled):
/// lane l holds value l, then lane[l] += lane[l + s] for s = 128, 64, ..., 1
/// and l < min(s, n − s): tree_tile_reduce's steps for such a tile.
template <class Acc, class Src>
FUSEKIT_FORCEINLINE Acc cpu_short_tree_sum(const Src& src, std::int64_t n) {
  Acc lane[tree_lanes];
  for (std::int64_t l = 0; l < n; ++l) { lane[l] = src(l); }
  std::int64_t s = tree_lanes / 2;
  while (s > 1 && s >= n) { s /= 2; }  // the steps with no pair
  for (; s >= 1; s /= 2) {
    std::int64_t const pairs = n - s < s ? n - s : s;
    for (std::int64_t l = 0; l < pairs; ++l) { lane[l] = plus{}(lane[l], lane[l + s]); }
  }
  return lane[0];
}

/// Σ src(i) over i < n on this thread: `sum(cpu{}, ...)`'s bits (+0 for n = 0).
/// `Width`: the host vectors of the tile's column pass (cpu_tree_tiles' choice).
template <int Width, class Acc, class Src>
FUSEKIT_FORCEINLINE Acc cpu_segment_sum(const Src& src, std::int64_t n) {
  if (n == 0) { return Acc(0); }
  if constexpr (std::is_integral_v<Acc>) {
    cpu_carry_t<Acc> total = 0;  // exact, wrapping as the tree's integer sum does
    for (std::int64_t i = 0; i < n; ++i) { total += static_cast<cpu_carry_t<Acc>>(src(i)); }
    return static_cast<Acc>(total);
  } else if (n <= tree_lanes) {
    return plus{}(Acc(0), cpu_short_tree_sum<Acc>(src, n));
  } else if (n <= tree_tile) {
    alignas(64) Acc lane[tree_lanes];
    return plus{}(Acc(0), tree_tile_reduce<Acc>(basic_serial_team<Width>{}, lane, src, plus{}, 0, n));
  } else {
    return plus{}(Acc(0), cpu_tree_reduce<Acc>(cpu{1}, src, plus{}, n));
  }
}

/// Rows [first, last) of `length` ≤ tree_lanes values each, `Block` rows side
/// by side: each row takes cpu_short_tree_sum's steps, the rows in the lanes
/// of one vector (the same additions per row, so the same bits).
template <int Block, class Acc, class T>
FUSEKIT_FORCEINLINE void cpu_short_rows(const T* x, std::int64_t length, std::int64_t first, std::int64_t last,
                                        Acc* out) {
  std::int64_t r = first;
  for (; r + Block <= last; r += Block) {
    alignas(64) Acc lane[tree_lanes][Block];
    for (std::int64_t l = 0; l < length; ++l) {
      for (int b = 0; b < Block; ++b) { lane[l][b] = convert<Acc>(x[(r + b) * length + l]); }
    }
    std::int64_t s = tree_lanes / 2;
    while (s > 1 && s >= length) { s /= 2; }
    for (; s >= 1; s /= 2) {
      std::int64_t const pairs = length - s < s ? length - s : s;
      for (std::int64_t l = 0; l < pairs; ++l) {
        FUSEKIT_SIMD_LOOP
        for (int b = 0; b < Block; ++b) { lane[l][b] = plus{}(lane[l][b], lane[l + s][b]); }
      }
    }
    for (int b = 0; b < Block; ++b) { out[r + b] = plus{}(Acc(0), lane[0][b]); }
  }
  for (; r < last; ++r) {
    out[r] = plus{}(Acc(0), cpu_short_tree_sum<Acc>(array_source<Acc, T>{x + r * length}, length));
  }
}

template <class Acc, class Src, class Segments>
inline constexpr bool cpu_short_rows_apply =
    std::is_floating_point_v<Acc>&& is_array_source_v<Src>&& std::is_same_v<Segments, row_segments>;

/// out[s] for every segment (see the file comment).
template <class Acc, class Src, class Segments>
void cpu_segmented_sum(const cpu& policy, const Src& src, const Segments& segments, std::int64_t count, Acc* out) {
  if (count == 0) { return; }
  constexpr std::int64_t long_from = cpu_thread_tuning::tree_parallel_from;
  std::int64_t const spanned = segments.end(count - 1) - segments.begin(0);
  std::int64_t const mean = spanned / count + 1;
  std::int64_t const per_chunk = cpu_thread_tuning::values_grain / mean + 1;
  // Work: the values, and a few values' worth per segment (its call and its store).
  cpu_for_chunks(policy, cpu_split(count, per_chunk), spanned + 8 * count, cpu_thread_tuning::values_parallel_from,
                 [&](std::int64_t, std::int64_t first, std::int64_t last) {
                   if constexpr (cpu_short_rows_apply<Acc, Src, Segments>) {
                     if (segments.length >= 1 && segments.length <= tree_lanes) {
                       cpu_short_rows<64 / sizeof(Acc)>(src.data, segments.length, first, last, out);
                       return;
                     }
                   }
                   auto const run = [&](auto width) FUSEKIT_LAMBDA_INLINE {
                     for (std::int64_t s = first; s < last; ++s) {
                       std::int64_t const b = segments.begin(s), n = segments.end(s) - b;
                       if (n < long_from) {
                         out[s] = cpu_segment_sum<decltype(width)::value, Acc>(source_from(src, b), n);
                       }
                     }
                     return 0;
                   };
                   // Arrays in host vectors, AVX2 where the CPU has it, as cpu_tree_tiles.
                   if constexpr (vector_columns<plus, Acc> && is_array_source_v<Src>) {
                     (void)isa_dispatch_vectors(run);
                   } else {
                     (void)run(std::integral_constant<int, 0>{});
                   }
                 });
  for (std::int64_t s = 0; s < count; ++s) {
    std::int64_t const b = segments.begin(s), n = segments.end(s) - b;
    if (n >= long_from) { out[s] = plus{}(Acc(0), cpu_tree_reduce<Acc>(policy, source_from(src, b), plus{}, n)); }
  }
}

/// The CPU's segmented-sum hook: the calls of segmented_api.hpp on
/// `fusekit::cpu` arrive here, checked.
template <class Acc, class Src, class Segments>
void run_segmented(segmented_tag, const cpu& policy, const segmented_reduction<Acc, Src, Segments>& r) {
  cpu_segmented_sum(policy, cpu_source(r.src), r.segments, r.count, r.out);
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
