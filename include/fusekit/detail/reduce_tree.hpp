// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The fixed summation order of `reduce_algorithm::deterministic`, shared by the
/// GPU kernels and the CPU backend. The order depends on n only — never on the
/// grid, the GPU or the thread count — so every backend gives the same bits.
///
///   level:  n values → ceil(n / 8192) tile sums, until one value is left
///   tile:   256 lanes; lane l adds elements l, l+256, ..., l+31·256 of the tile
///           in that order, starting from 0 (missing elements of the last tile
///           are skipped, which is the same as adding +0: a lane sum is never −0)
///           then lane[l] += lane[l + s] for s = 128, 64, ..., 1
///
/// Each addition is one IEEE round-to-nearest add in the accumulator type
/// (`add_rn`: never fused with a product the source computes), on both sides,
/// so results are bit-identical.
///
/// The GPU runs one tile per block, so a level of `tiles` tiles wants `tiles`
/// blocks, capped at the blocks resident at once (`tree_level_grid`); the grid
/// never changes the order.

#include <fusekit/config.hpp>
#include <fusekit/detail/launch.hpp>
#include <fusekit/detail/rounding.hpp>

#include <cstdint>

namespace fusekit {
namespace detail {

inline constexpr int tree_lanes = 256;
inline constexpr int tree_per_lane = 32;
inline constexpr std::int64_t tree_tile = std::int64_t{tree_lanes} * tree_per_lane;  // 8192

/// Values left after one level of the tree over n values.
FUSEKIT_HD constexpr std::int64_t tree_level_size(std::int64_t n) { return (n + tree_tile - 1) / tree_tile; }

/// Blocks for one level of the tree over n values on a device with `sm_count`
/// multiprocessors holding `blocks_per_sm` tree blocks each: one block per tile,
/// at most the resident blocks (the kernel's tile loop strides over the rest).
constexpr int tree_level_grid(std::int64_t n, int sm_count, int blocks_per_sm) {
  return grid_size(tree_level_size(n), 1, sm_count, blocks_per_sm);
}

/// Levels until one value is left (0 for n ≤ 1).
FUSEKIT_HD constexpr int tree_levels(std::int64_t n) {
  int levels = 0;
  while (n > 1) {
    n = tree_level_size(n);
    ++levels;
  }
  return levels;
}

/// Pairwise combination of the lane sums: lane[l] += lane[l + s], s = 128 ... 1.
template <class Acc>
FUSEKIT_HD inline Acc tree_combine_lanes(Acc (&lane)[tree_lanes]) {
  for (int s = tree_lanes / 2; s >= 1; s /= 2) {
    for (int l = 0; l < s; ++l) { lane[l] = add_rn(lane[l], lane[l + s]); }
  }
  return lane[0];
}

/// Sum of tile `tile` of n values produced by `src(i)`, in the tree's order
/// (the host version; the GPU kernel computes the same additions in parallel).
template <class Acc, class Src>
inline Acc tree_tile_sum(const Src& src, std::int64_t tile, std::int64_t n) {
  Acc lane[tree_lanes];
  for (auto& v : lane) { v = Acc(0); }
  std::int64_t const base = tile * tree_tile;
  if (base + tree_tile <= n) {
    for (int k = 0; k < tree_per_lane; ++k) {
      std::int64_t const row = base + std::int64_t{k} * tree_lanes;
      for (int l = 0; l < tree_lanes; ++l) { lane[l] = add_rn(lane[l], src(row + l)); }  // lanes are independent: vectorizes
    }
  } else {
    for (int k = 0; k < tree_per_lane; ++k) {
      std::int64_t const row = base + std::int64_t{k} * tree_lanes;
      for (int l = 0; l < tree_lanes && row + l < n; ++l) { lane[l] = add_rn(lane[l], src(row + l)); }
    }
  }
  return tree_combine_lanes(lane);
}

}  // namespace detail
}  // namespace fusekit
